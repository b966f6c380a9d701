// A certified OpenID provider (`oidc-provider`) issuing JWT access tokens, and `toolsmith serve`
// trusting it — shared by mcp_oauth.mjs (the MCP client's flow) and ui_oauth.mjs (the web UI's
// sign-in in Chromium).
//
//   const pair = await startPair({ binary, workDir, uiClientId });
//   pair.issuer, pair.resource, pair.log(), pair.fail(why), pair.shutdown()
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import Provider from 'oidc-provider';

export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/**
 * Starts the provider and Toolsmith. `uiClientId`: a static public client for the web UI
 * (redirect URI `<resource>/`), configured in Toolsmith as `ui_client_id`.
 */
export async function startPair({ binary, workDir, uiClientId }) {
  const idpPort = await freePort();
  const issuer = `http://127.0.0.1:${idpPort}`;
  const toolsmithPort = await freePort();
  const resource = `http://127.0.0.1:${toolsmithPort}`;
  const signing = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });

  const clients = uiClientId
    ? [{
      client_id: uiClientId,
      token_endpoint_auth_method: 'none',
      redirect_uris: [`${resource}/`],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }]
    : [];
  const oidc = new Provider(issuer, {
    clients,
    jwks: { keys: [{ ...signing, kid: 'idp-1', alg: 'ES256', use: 'sig' }] },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    // What the authorization server knows; the resource server below grants read and execute only.
    scopes: ['openid', 'offline_access', 'tools:read', 'tools:write', 'tools:execute', 'admin'],
    clientDefaults: { id_token_signed_response_alg: 'ES256', grant_types: ['authorization_code'], response_types: ['code'] },
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => `${resource}/mcp`,
        useGrantedResource: () => true,
        // The resource server's scopes: read and execute, not write or admin.
        getResourceServerInfo: (_ctx, indicator) => ({
          scope: 'tools:read tools:execute',
          audience: indicator,
          accessTokenTTL: 300,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        }),
      },
    },
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    pkce: { required: () => true },
  });
  oidc.proxy = false;
  const idp = oidc.listen(idpPort, '127.0.0.1');

  const config = join(workDir, 'toolsmith.toml');
  writeFileSync(
    config,
    [
      `data_dir = ${JSON.stringify(join(workDir, 'data'))}`,
      'mcp_listing = "full"',
      '[oauth]',
      `resource = "${resource}"`,
      `issuers = ["${issuer}"]`,
      ...(uiClientId ? [`ui_client_id = "${uiClientId}"`] : []),
      '[egress]',
      `allowed_private_hosts = ["127.0.0.1:${idpPort}"]`,
      'allow_plain_http = true',
      '',
    ].join('\n'),
  );
  const server = spawn(binary, ['serve', '--config', config, '--port', String(toolsmithPort)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let serverLog = '';
  server.stderr.on('data', (d) => (serverLog += d));
  const shutdown = () => {
    server.kill('SIGTERM');
    idp.close();
  };
  const fail = (why) => {
    console.error(`${why}\n--- toolsmith stderr ---\n${serverLog}`);
    shutdown();
    process.exit(1);
  };
  process.on('unhandledRejection', (e) => fail(e?.stack ?? String(e)));
  await new Promise((resolve, reject) => {
    const lines = createInterface({ input: server.stdout });
    lines.on('line', (line) => line.includes('listening on') && resolve());
    server.on('exit', (code) => reject(new Error(`toolsmith exited with ${code}`)));
  }).catch((e) => fail(e.message));
  return { issuer, resource, shutdown, fail, log: () => serverLog };
}
