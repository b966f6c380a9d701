// Signing in through the identity provider (when the server has `[oauth] ui_client_id`): the
// authorization code flow with PKCE. This tab makes the verifier and the state and keeps them
// in sessionStorage, goes to the provider, and on the way back hands the code and the verifier
// to this server (POST /api/v1/sign-in/token), which redeems them at the provider and answers
// the access token. Nothing of it is ever put in the URL but what the protocol puts there, and
// the code is removed from the address bar at once.

const PENDING = 'toolsmith.signin';

const base64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

const randomText = (n) => base64url(crypto.getRandomValues(new Uint8Array(n)));

/** Calls a sign-in route without a token; resolves `data`, rejects with the server's message. */
async function call(method, path, body) {
  const res = await fetch(`/api/v1${path}`, {
    method,
    headers: body ? { 'Content-Type': 'application/json', Accept: 'application/json' } : { Accept: 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
    cache: 'no-store',
    credentials: 'omit',
  });
  let json = null;
  try { json = await res.json(); } catch { /* answered below */ }
  if (!res.ok || !json || json.success === false) {
    const message = (json && json.error && json.error.message) || `HTTP ${res.status}`;
    const error = new Error(message);
    error.status = res.status;
    throw error;
  }
  return json.data;
}

/** How this server's UI signs in through a provider, or null when it does not. */
export async function signInOptions() {
  try {
    return await call('GET', '/sign-in');
  } catch (e) {
    if (e.status === 404) return null;
    throw e;
  }
}

/** Sends the browser to the provider's sign-in page. */
export async function startSignIn(options) {
  const verifier = randomText(48); // 64 characters
  const state = randomText(24);
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, issuer: options.issuer, redirectUri: options.redirectUri }));
  const url = new URL(options.authorizationEndpoint);
  const params = {
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope: options.scopes,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: options.resource,
  };
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  window.location.assign(url.href);
}

/**
 * When the provider sent the person back here (`?code=…&state=…` or `?error=…`): finishes
 * signing in and resolves the access token, or rejects with what went wrong. Resolves null when
 * this page load is not a return from the provider.
 */
export async function finishSignIn() {
  const params = new URLSearchParams(window.location.search);
  if (!params.has('code') && !params.has('error')) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  // The code leaves the address bar (and the history) whatever happens next.
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.hash}`);
  if (params.has('error')) {
    throw new Error(`The identity provider did not sign you in: ${params.get('error_description') || params.get('error')}.`);
  }
  if (!pending || params.get('state') !== pending.state) {
    throw new Error('This sign-in was not started from this tab (its state does not match). Sign in again.');
  }
  // RFC 9207: a provider that names itself must be the one this tab went to.
  if (params.has('iss') && params.get('iss') !== pending.issuer) {
    throw new Error('The answer came from another identity provider than the one this tab went to. Sign in again.');
  }
  const signedIn = await call('POST', '/sign-in/token', {
    code: params.get('code'),
    codeVerifier: pending.verifier,
    redirectUri: pending.redirectUri,
  });
  return signedIn.accessToken;
}
