// The REST client: every call goes to /api/v1 on this origin, with the token of this tab's
// session (sessionStorage, never the URL) and the scope the person chose for this tab (an
// organisation's, sent as X-Toolsmith-Organization; none: their own), and unwraps the
// {success, data|error} envelope.

const KEY = 'toolsmith.token';
const ORG_KEY = 'toolsmith.organization';

export function getToken() {
  return sessionStorage.getItem(KEY);
}

export function setToken(token) {
  if (token) sessionStorage.setItem(KEY, token);
  else sessionStorage.removeItem(KEY);
}

/** The organisation this tab acts in (its id), or null: the person's own scope. */
export function getOrganization() {
  return sessionStorage.getItem(ORG_KEY);
}

export function setOrganization(id) {
  if (id) sessionStorage.setItem(ORG_KEY, id);
  else sessionStorage.removeItem(ORG_KEY);
}

/** A refused call: HTTP status, the envelope's code, message and details. */
export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details || null;
  }
}

/**
 * Calls the API. Resolves with `data`; rejects with ApiError. A 401 of the token the tab still
 * holds also fires the `toolsmith:unauthorized` event so the app can ask for a token.
 * opts.etag: send If-None-Match; resolves {notModified: true} on 304, else {data, etag}.
 */
export async function api(method, path, body, opts = {}) {
  const headers = { Accept: 'application/json' };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  const organization = getOrganization();
  if (organization) headers['X-Toolsmith-Organization'] = organization;
  let payload;
  if (body !== undefined) {
    if (typeof body === 'string') {
      headers['Content-Type'] = opts.contentType || 'application/yaml';
      payload = body;
    } else {
      headers['Content-Type'] = 'application/json';
      payload = JSON.stringify(body);
    }
  }
  if (opts.etag) headers['If-None-Match'] = opts.etag;
  // Acting as one of the caller's agents (X-Toolsmith-Agent): how a person reads a run their
  // agent started (a delegation's), which only that agent sees.
  if (opts.agent) headers['X-Toolsmith-Agent'] = opts.agent;
  let res;
  try {
    res = await fetch(`/api/v1${path}`, { method, headers, body: payload, cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    throw new ApiError(0, 'network', `The server could not be reached (${e.message}).`);
  }
  if (res.status === 304) return { notModified: true };
  let json = null;
  try {
    json = await res.json();
  } catch {
    throw new ApiError(res.status, 'bad_response', `The server answered ${res.status} without JSON.`);
  }
  if (!res.ok || !json || json.success === false) {
    const err = (json && json.error) || {};
    // Only a refusal of the token this tab holds now asks for a token: a request sent before the
    // tab signed in (a poll in flight while the first token turned authentication on) was
    // refused for having none, and says nothing about the new one.
    if (res.status === 401 && getToken() === token) window.dispatchEvent(new CustomEvent('toolsmith:unauthorized'));
    throw new ApiError(res.status, err.code || 'error', err.message || `HTTP ${res.status}`, err.details);
  }
  if (opts.etag !== undefined) return { data: json.data, etag: res.headers.get('ETag') };
  return json.data;
}

export const get = (path, opts) => api('GET', path, undefined, opts);
export const post = (path, body, opts) => api('POST', path, body === undefined ? {} : body, opts);
export const patch = (path, body) => api('PATCH', path, body);
export const put = (path, body) => api('PUT', path, body);
export const del = (path, body) => api('DELETE', path, body);

/** Path segment encoding for ids and names. */
export const seg = (text) => encodeURIComponent(String(text));

/** Every custom tool of the caller (pages of 1000). */
export async function allTools() {
  const tools = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await get(`/custom-tools?limit=1000&offset=${offset}`);
    tools.push(...page.tools);
    if (page.tools.length < 1000 || tools.length >= page.total) return tools;
  }
}
