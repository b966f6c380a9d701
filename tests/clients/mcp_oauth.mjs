// The MCP authorization flow end to end (issue 41): a certified OpenID provider (`oidc-provider`)
// issues JWT access tokens; Toolsmith, configured to trust it, is the protected resource; the
// official TypeScript SDK's OAuth support finds the provider from Toolsmith's metadata,
// registers itself, signs a person in (authorization code with PKCE, the `resource` indicator)
// and calls a tool with the token it got.
//
// Usage: node mcp_oauth.mjs <toolsmith binary> <work dir>. Prints one JSON line of facts for
// the Rust test to check, and exits non-zero on any failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

import { startPair } from './oauth_provider.mjs';

const [binary, workDir] = process.argv.slice(2);
if (!binary || !workDir) {
  console.error('usage: node mcp_oauth.mjs <toolsmith binary> <work dir>');
  process.exit(2);
}

// --- The identity provider, and Toolsmith trusting it ------------------------------------------
const { resource, shutdown, fail } = await startPair({ binary, workDir });

// --- The person's browser: signs in and consents at the provider's pages ------------------------
async function signIn(authorizationUrl, redirectUrl) {
  const cookies = new Map();
  const send = async (url, init = {}) => {
    const headers = { ...(init.headers ?? {}) };
    if (cookies.size) headers.cookie = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
    return res;
  };
  const form = (fields) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  let url = new URL(authorizationUrl);
  for (let step = 0; step < 12; step++) {
    if (url.href.startsWith(redirectUrl)) {
      const code = url.searchParams.get('code');
      if (!code) throw new Error(`no code at the redirect: ${url.href}`);
      return code;
    }
    const res = await send(url);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location'), url);
      continue;
    }
    const page = await res.text();
    if (res.status !== 200) throw new Error(`${url.href} answered ${res.status}: ${page.slice(0, 300)}`);
    // A dev interaction page: the login form, then the consent form.
    const prompt = page.includes('name="login"') ? { prompt: 'login', login: 'ann', password: 'any' } : { prompt: 'consent' };
    const submitted = await send(url, form(prompt));
    if (submitted.status < 300 || submitted.status >= 400) {
      throw new Error(`submitting ${prompt.prompt} answered ${submitted.status}: ${(await submitted.text()).slice(0, 300)}`);
    }
    url = new URL(submitted.headers.get('location'), url);
  }
  throw new Error('the sign-in did not reach the redirect');
}

// --- The MCP client with the SDK's OAuth support -----------------------------------------------
const redirectUrl = 'http://127.0.0.1:9/callback';
const state = { client: undefined, tokens: undefined, verifier: undefined, authorizationUrl: undefined };
const authProvider = {
  get redirectUrl() {
    return redirectUrl;
  },
  get clientMetadata() {
    return {
      client_name: 'toolsmith oauth test',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  },
  clientInformation: () => state.client,
  saveClientInformation: (info) => (state.client = info),
  tokens: () => state.tokens,
  saveTokens: (tokens) => (state.tokens = tokens),
  redirectToAuthorization: (url) => (state.authorizationUrl = url),
  saveCodeVerifier: (v) => (state.verifier = v),
  codeVerifier: () => state.verifier,
};

const mcpUrl = new URL(`${resource}/mcp`);
const facts = {};
// Without a token: the SDK meets the 401, reads the metadata, registers and asks to redirect.
let transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider });
let client = new Client({ name: 'oauth-test', version: '1.0.0' });
try {
  await client.connect(transport);
  fail('connected without signing in');
} catch (e) {
  if (!(e instanceof UnauthorizedError)) fail(`expected UnauthorizedError, got ${e?.stack ?? e}`);
}
facts.registered = Boolean(state.client?.client_id);
facts.authorizationHasResource = state.authorizationUrl?.searchParams.get('resource');
facts.authorizationHasPkce = state.authorizationUrl?.searchParams.get('code_challenge_method');
const code = await signIn(state.authorizationUrl, redirectUrl);
await transport.finishAuth(code);
facts.tokenType = state.tokens?.token_type;

// Signed in: connect again with the token and work.
transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider });
client = new Client({ name: 'oauth-test', version: '1.0.0' });
await client.connect(transport);
const tools = await client.listTools();
facts.listed = tools.tools.some((t) => t.name === 'calculate');
const result = await client.callTool({ name: 'calculate', arguments: { expression: '6*7' } });
facts.calculated = JSON.stringify(result.content);
facts.calculateIsError = Boolean(result.isError);
// The token holds read and execute, not write: creating a tool is refused naming the scope.
const created = await client
  .callTool({
    name: 'create_tool',
    arguments: { name: 'shout', description: 'Shouts', code: 'return 1;', parameters: { type: 'object' } },
  })
  .then((r) => JSON.stringify(r))
  .catch((e) => String(e?.message ?? e));
facts.createRefused = created;
await client.close();

// The access token itself, as Toolsmith saw it (a JWT for this resource).
const [, payload] = (state.tokens?.access_token ?? '').split('.');
const claims = payload ? JSON.parse(Buffer.from(payload, 'base64url').toString()) : {};
facts.audience = claims.aud;
facts.subject = claims.sub;
facts.scope = claims.scope;
console.log(JSON.stringify(facts));
shutdown();
process.exit(0);
