// The web UI signs a person in through the identity provider, in Chromium (issue 41): a
// certified OpenID provider (`oidc-provider`) with a static public client for the UI, and
// `toolsmith serve` with `[oauth] ui_client_id`. The person opens the UI, chooses "Sign in with
// <provider>", signs in and consents at the provider's pages, and lands back in the UI signed in
// (authorization code with PKCE, the code redeemed through the server). Then the ways it must
// refuse: a return this tab did not start, and a person who cancels at the provider.
//
// Usage: node ui_oauth.mjs <toolsmith binary> <work dir> [chromium]. Prints one JSON line of
// facts for the Rust test to check, and exits non-zero on any failure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

import { startPair } from './oauth_provider.mjs';

const [binary, workDir, chromiumPath = '/usr/bin/chromium'] = process.argv.slice(2);
if (!binary || !workDir) {
  console.error('usage: node ui_oauth.mjs <toolsmith binary> <work dir> [chromium]');
  process.exit(2);
}

const { issuer, resource, shutdown, fail } = await startPair({ binary, workDir, uiClientId: 'toolsmith-ui' });
const profile = mkdtempSync(join(tmpdir(), 'toolsmith-oauth-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: chromiumPath,
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const done = async (code) => {
  await context.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
  shutdown();
  process.exit(code);
};
// Loopback only: the provider's pages import a web font, which is never fetched.
const elsewhere = [];
await context.route('**/*', (route) => {
  const url = route.request().url();
  if (url.startsWith(resource) || url.startsWith(issuer) || url.startsWith('data:')) return route.continue();
  elsewhere.push(url);
  return route.abort();
});
const page = await context.newPage();
const uiErrors = [];
// A CSP refusal or a script error shows here; a 401 of the signed-out page's session read is expected.
page.on('console', (m) => {
  if (m.type() === 'error' && page.url().startsWith(resource) && !m.text().startsWith('Failed to load resource')) uiErrors.push(m.text());
});
page.on('pageerror', (e) => uiErrors.push(String(e)));

const facts = {};
try {
  // Signed out: the sign-in form offers the provider first.
  await page.goto(`${resource}/`);
  const provider = new URL(issuer).host;
  const button = page.getByRole('button', { name: `Sign in with ${provider}` });
  await button.waitFor({ timeout: 15000 });
  facts.offered = true;
  facts.tokenFieldToo = await page.getByLabel('API token').isVisible();

  // To the provider: the authorization request carries PKCE (S256), the state and the resource.
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.url().startsWith(`${issuer}/auth`), { timeout: 15000 }),
    button.click(),
  ]);
  const asked = new URL(request.url());
  facts.challengeMethod = asked.searchParams.get('code_challenge_method');
  facts.challengeLength = (asked.searchParams.get('code_challenge') || '').length;
  facts.askedResource = asked.searchParams.get('resource');
  facts.askedRedirect = asked.searchParams.get('redirect_uri');
  facts.askedClient = asked.searchParams.get('client_id');
  facts.hasState = Boolean(asked.searchParams.get('state'));

  // The provider's own pages: sign in as ann, then consent.
  await page.locator('input[name="login"]').fill('ann');
  await page.locator('input[name="password"]').fill('any');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();

  // Back in the UI, signed in: the tools page, the code gone from the address bar.
  await page.waitForURL((url) => url.href.startsWith(resource) && !url.search.includes('code='), { timeout: 15000 });
  await page.getByRole('heading', { name: 'Tools', level: 1 }).waitFor({ timeout: 15000 });
  facts.addressAfter = page.url();
  facts.signOutShown = await page.getByRole('button', { name: 'Sign out' }).isVisible();
  const session = await page.evaluate(async () => {
    const token = sessionStorage.getItem('toolsmith.token');
    const res = await fetch('/api/v1/session', { headers: { Authorization: `Bearer ${token}` } });
    return { token, body: await res.json() };
  });
  facts.tokenIsJwt = session.token?.split('.').length === 3;
  facts.user = session.body?.data?.userId;
  facts.scopes = session.body?.data?.scopes;
  facts.pendingLeft = await page.evaluate(() => sessionStorage.getItem('toolsmith.signin'));

  // A return this tab did not start (a forged or replayed link) is refused, nothing kept.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.goto(`${resource}/?code=stolen&state=forged`);
  const forged = page.getByRole('alert').filter({ hasText: 'not started from this tab' });
  await forged.waitFor({ timeout: 15000 });
  facts.forgedRefused = await forged.innerText();
  facts.forgedToken = await page.evaluate(() => sessionStorage.getItem('toolsmith.token'));

  // A person who cancels at the provider comes back to the form, told why (signed out at the
  // provider too, so it asks again).
  await context.clearCookies();
  await page.getByRole('button', { name: `Sign in with ${provider}` }).click();
  await page.locator('input[name="login"]').waitFor({ timeout: 15000 });
  await page.getByRole('link', { name: '[ Cancel ]' }).click();
  const cancelled = page.getByRole('alert').filter({ hasText: 'did not sign you in' });
  await cancelled.waitFor({ timeout: 15000 });
  facts.cancelled = await cancelled.innerText();

  facts.uiErrors = uiErrors;
  facts.elsewhere = elsewhere.filter((u) => !u.startsWith('https://fonts.'));
  console.log(JSON.stringify(facts));
  await done(0);
} catch (e) {
  await page.screenshot({ path: join(workDir, 'ui_oauth_failure.png') }).catch(() => {});
  console.log(JSON.stringify(facts));
  fail(`${e?.stack ?? e}\nat ${page.url()}`);
}
