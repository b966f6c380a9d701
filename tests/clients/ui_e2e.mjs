// End-to-end tests of the web UI in a real browser: Debian's Chromium driven by playwright-core,
// against the real `toolsmith` binary on a loopback port, with the MCP side played by the
// official Python SDK (ui_mcp.py). Controls are found by role and accessible name.
//
//   node ui_e2e.mjs --bin PATH/toolsmith --out DIR [--chromium /usr/bin/chromium] [--ui-from-disk]
//
// --ui-from-disk serves /ui/… from crates/toolsmith-server/ui/ instead of the binary's copy (for
// work on the pages without a rebuild; the test runs the binary's); --ui-dir DIR serves another
// copy (an older commit's, to see a step fail before its fix).
// Run by crates/toolsmith/tests/cli/ui_browser.rs. Writes screenshots of every page at 1280 and
// 390 px wide into DIR, prints progress on stderr and one JSON report on the last stdout line;
// exits non-zero with the failing step's message when a check fails.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { runPages, setUiDir, uiFromDisk } from './ui_e2e_pages.mjs';
import { approvalFlows } from './ui_e2e_approvals.mjs';
import { layoutProblems } from './ui_layout.mjs';
import { runAgents } from './ui_e2e_agents.mjs';
import { runOrgs } from './ui_e2e_orgs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const BIN = opt('bin');
const OUT = opt('out');
const CHROMIUM = opt('chromium', '/usr/bin/chromium');
const PYTHON = opt('python', join(here, '.venv/bin/python'));
const FROM_DISK = argv.includes('--ui-from-disk') || argv.includes('--ui-dir');
if (opt('ui-dir')) setUiDir(opt('ui-dir'));
assert.ok(BIN && OUT, 'usage: ui_e2e.mjs --bin PATH --out DIR');
mkdirSync(OUT, { recursive: true });

const report = { steps: [], screenshots: [] };
const log = (...a) => console.error('[ui_e2e]', ...a);
const cleanups = [];

// ----- the server ----------------------------------------------------------------------------

async function startServer(dataDir) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOOLSMITH_') && k !== 'RUST_LOG'));
  env.TOOLSMITH_DATA_DIR = dataDir;
  const child = spawn(BIN, ['serve', '--port', '0', '--max-tools-per-owner', '1100'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  cleanups.push(() => child.kill('SIGTERM'));
  const line = await new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`serve exited (${code}): ${stderr}`)));
  });
  const m = /toolsmith listening on (http:\/\/\S+)/.exec(line);
  assert.ok(m, `no listening line: ${line}`);
  return { base: m[1], child, stderr: () => stderr };
}

let BASE;
let TOKEN = null;
async function rest(method, path, body) {
  const headers = { 'content-type': 'application/json' };
  if (TOKEN) headers.authorization = `Bearer ${TOKEN}`;
  const res = await fetch(`${BASE}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await res.json();
  return { status: res.status, json };
}

function mcp(args) {
  const child = spawn(PYTHON, [join(here, 'ui_mcp.py'), '--url', `${BASE}/mcp`, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  cleanups.push(() => child.kill('SIGTERM'));
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const lines = [];
  const waiters = [];
  const wake = () => { for (const w of waiters.splice(0)) w(); };
  let closed = false;
  createInterface({ input: child.stdout }).on('line', (l) => {
    lines.push(JSON.parse(l));
    wake();
  });
  // 'close' comes after the last line of stdout, so a line is never taken for silence.
  child.once('close', () => { closed = true; wake(); });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let taken = 0;
  return {
    /** The next JSON line not yet taken: waits for it (or the script's end), at most `timeoutMs`. */
    next(timeoutMs = 30000) {
      const seen = taken;
      taken += 1;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`ui_mcp.py said nothing for ${timeoutMs} ms: ${stderr}`)), timeoutMs);
        const check = () => {
          if (lines.length > seen) {
            clearTimeout(timer);
            resolve(lines[seen]);
          } else if (closed) {
            clearTimeout(timer);
            reject(new Error(`ui_mcp.py exited ${child.exitCode}: ${stderr}`));
          } else {
            waiters.push(check);
          }
        };
        check();
      });
    },
    /** Tells the script the person has decided (it makes its call once more). */
    decided() {
      child.stdin.end('decided\n');
    },
    async done() {
      const code = await exited;
      assert.equal(code, 0, `ui_mcp.py failed: ${stderr}`);
      return lines[lines.length - 1];
    },
  };
}

// ----- helpers ---------------------------------------------------------------------------------

async function step(name, fn) {
  const t0 = Date.now();
  log(`step: ${name}`);
  try {
    await fn();
  } catch (e) {
    e.message = `${name}: ${e.message}`;
    throw e;
  }
  report.steps.push({ name, ms: Date.now() - t0 });
}

/** Waits until `fn()` (run in node) is truthy. */
async function until(what, fn, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last && last.message ? last.message : last})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function visible(locator, timeout = 5000) {
  await locator.first().waitFor({ state: 'visible', timeout });
  return locator.first();
}

/** What has the keyboard: the element's tag and accessible name (label, aria-label or text). */
async function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return 'the page body';
    const label = el.getAttribute('aria-label') || (el.labels && el.labels[0] && el.labels[0].textContent) || el.textContent || '';
    return `${el.tagName.toLowerCase()} ${label.trim()}`;
  });
}

/** The error shown for a form control (its aria-describedby error element). */
async function fieldError(page, control) {
  return control.evaluate((el) => {
    const ids = (el.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
    const err = ids.map((id) => document.getElementById(id)).find((n) => n && n.classList.contains('field-error') && !n.hidden);
    return err ? { text: err.textContent, invalid: el.getAttribute('aria-invalid') === 'true' } : null;
  });
}

async function shot(page, name) {
  const width = page.viewportSize().width;
  const file = join(OUT, `${name}-${width}.png`);
  await page.screenshot({ path: file, fullPage: true });
  report.screenshots.push(file);
}

/** axe-core's WCAG 2.0 and 2.1 A and AA rules. */
const AXE_SOURCE = readFileSync(join(here, 'node_modules/axe-core/axe.min.js'), 'utf8');
const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Runs axe-core's WCAG A/AA rules on the page as it is and returns the violations, one line each.
 * The script goes in through the DevTools protocol, which the page's CSP does not govern (an
 * injected <script> tag would be refused, as it should be).
 */
async function axeViolations(page, where) {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async (tags) => {
    const result = await globalThis.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')), count: v.nodes.length }));
  }, WCAG_AA);
  return violations.map((v) => `${where}: ${v.id} (${v.impact}, ${v.count} element(s), e.g. ${v.targets.join(' | ')}): ${v.help}`);
}

/** The pages of the UI, by name and hash, for a tool whose id is `toolId`. */
function uiPages(toolId) {
  return [
    ['tools', '#/tools'],
    ['tool-details', `#/tools/${toolId}`],
    ['tool-code', `#/tools/${toolId}?tab=code`],
    ['tool-test', `#/tools/${toolId}?tab=test`],
    ['tool-history', `#/tools/${toolId}?tab=history`],
    ['tool-metrics', `#/tools/${toolId}?tab=metrics`],
    ['editor', '#/tools/new'],
    ['approvals', '#/approvals'],
    ['executions', '#/executions'],
    ['config', '#/config'],
    ['audit', '#/audit'],
    ['policy', '#/policy'],
    ['tokens', '#/tokens'],
  ];
}

// ----- the run ---------------------------------------------------------------------------------

const dataDir = mkdtempSync(join(tmpdir(), 'toolsmith-ui-'));
const profile = mkdtempSync(join(tmpdir(), 'toolsmith-chromium-'));
cleanups.push(() => rmSync(profile, { recursive: true, force: true }));
cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));

let browser;
try {
  const server = await startServer(dataDir);
  BASE = server.base;
  log(`server at ${BASE}`);
  // A fresh profile directory (Playwright passes it as --user-data-dir).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  browser = context;
  if (FROM_DISK) await uiFromDisk(context, BASE);
  cleanups.unshift(() => context.close());
  const page = await context.newPage();
  const external = [];
  const pageErrors = [];
  const dialogs = [];
  const bodies = [];
  page.on('request', (r) => { if (!r.url().startsWith(BASE) && !r.url().startsWith('data:')) external.push(r.url()); });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
  page.on('response', async (r) => {
    if (r.url().includes('/api/v1/')) { try { bodies.push(await r.text()); } catch { /* redirects, 304 */ } }
  });

  await step('the page is served with a strict CSP and no auth', async () => {
    const res = await fetch(`${BASE}/`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy');
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    const js = await fetch(`${BASE}/ui/js/app.js`);
    assert.match(js.headers.get('content-type'), /javascript/);
  });

  await step('create a JS tool through the form, with server validation errors next to fields', async () => {
    await page.goto(`${BASE}/#/tools`);
    await visible(page.getByRole('heading', { name: 'Tools', level: 1 }));
    await page.getByRole('link', { name: 'New tool' }).click();
    await visible(page.getByRole('heading', { name: 'New tool' }));
    // The keyboard starts in the form's first field (it was on the page's body: the first keys
    // a keyboard user typed were lost).
    await until('the keyboard in the first field', async () => (await focused(page)) === 'select Kind');
    const name = page.getByLabel('Name', { exact: true });
    await name.fill('Word Count');
    await page.getByLabel('Description').fill('Counts the words of a text');
    await page.getByLabel('Category').fill('Text');
    const code = page.getByLabel('Code (JavaScript function body)');
    await code.fill('return { words: args.text.split(/\\s+/).filter(Boolean).length };');
    await page.getByRole('button', { name: 'Create tool' }).click();
    const nameErr = await until('an error next to Name', () => fieldError(page, name));
    assert.ok(nameErr.invalid, 'Name is marked invalid');
    assert.match(nameErr.text, /name/i);
    report.nameError = nameErr.text;
    await shot(page, 'editor-errors');

    await name.fill('word_count');
    await code.fill('return { words: ');
    await page.getByRole('button', { name: 'Create tool' }).click();
    const codeErr = await until('an error next to Code', () => fieldError(page, code));
    report.codeError = codeErr.text;
    assert.equal(await fieldError(page, name), null, 'the Name error is gone');

    const params = page.getByLabel('Parameters (JSON Schema)');
    const good = await params.inputValue();
    await params.fill('{"type": "string"}');
    const paramErr = await until('an error next to Parameters', () => fieldError(page, params));
    assert.match(paramErr.text, /type.*object/);
    await params.fill(good);

    await code.fill('return { words: args.text.split(/\\s+/).filter(Boolean).length };');
    await page.getByLabel('Test arguments (JSON)').fill('{"text": "a b c d"}');
    await page.getByRole('button', { name: 'Dry run' }).click();
    await visible(page.getByText('Succeeded'));
    assert.match(await page.locator('pre.output').innerText(), /"words": 4/);
    assert.equal((await rest('GET', '/custom-tools/stats')).json.data.total, 0, 'a dry run stores nothing');
    assert.equal((await rest('GET', '/executions')).json.data.executions.length, 0, 'a dry run is no execution (it was one, of version 0)');
    await shot(page, 'editor');
    await page.getByRole('button', { name: 'Create tool' }).click();
    await visible(page.getByRole('heading', { name: 'word_count', level: 1 }));
  });

  await step('test-run it from the Test tab', async () => {
    await page.getByRole('tab', { name: 'Details' }).click();
    await shot(page, 'tool-details');
    await page.getByRole('tab', { name: 'Code' }).click();
    await shot(page, 'tool-code');
    await page.getByRole('tab', { name: 'Test' }).click();
    await page.getByLabel('text (required)').fill('one two three');
    await page.getByRole('button', { name: 'Run' }).click();
    await visible(page.getByText('Succeeded'));
    assert.match(await page.locator('pre.output').innerText(), /"words": 3/);
    await shot(page, 'tool-test');
  });

  await step('see it in the list', async () => {
    await page.getByRole('link', { name: '← All tools' }).click();
    const card = await visible(page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'word_count' }) }));
    const text = await card.innerText();
    assert.match(text, /Active/);
    assert.match(text, /User Created/);
    assert.match(text, /Text/);
    assert.match(text, /v1/);
    assert.match(text, /\b1 use\b/);
  });

  await step('edit it and see the version bump', async () => {
    await page.getByRole('link', { name: 'word_count' }).click();
    await page.getByRole('link', { name: 'Edit' }).click();
    await until('the keyboard in the edit form\'s first field', async () => /^(select Kind|input Name)/.test(await focused(page)));
    await page.getByLabel('Code (JavaScript function body)').fill('return { words: args.text.split(/\\s+/).filter(Boolean).length, v: 2 };');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await visible(page.getByText('version 2 · revision 2'));
  });

  await step('diff two versions and roll back', async () => {
    await page.getByRole('tab', { name: 'History' }).click();
    await page.getByLabel('From version').selectOption('1');
    await page.getByLabel('To version').selectOption('2');
    await page.getByRole('button', { name: 'Show diff' }).click();
    const diff = await visible(page.getByLabel('Diff of version 1 and version 2'));
    assert.match(await diff.innerText(), /\+ return \{ words: .*v: 2 \};/);
    assert.match(await diff.innerText(), /- return \{ words: .*length \};/);
    await shot(page, 'tool-history');
    await page.getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
    await visible(page.getByText('version 3 · revision 3'));
    // The button pressed is gone with the old list; the keyboard goes on from the History tab
    // (it was thrown back to the page's body).
    assert.equal(await focused(page), 'button History');
    await page.getByRole('tab', { name: 'Code' }).click();
    assert.doesNotMatch(await page.getByLabel('word_count code').innerText(), /v: 2/);
  });

  await step('disable and enable', async () => {
    await page.getByRole('button', { name: 'Disable' }).click();
    await visible(page.locator('.page-head .pill.status', { hasText: 'Disabled' }));
    await page.getByRole('button', { name: 'Enable' }).click();
    await visible(page.locator('.page-head .pill.status', { hasText: 'Active' }));
    await page.getByRole('tab', { name: 'Metrics' }).click();
    await visible(page.getByRole('img', { name: /Daily executions/ }));
    await shot(page, 'tool-metrics');
  });

  await step('a conflicting edit is explained', async () => {
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByLabel('Description').fill('Mine');
    const r = await rest('PATCH', '/custom-tools/word_count', { description: 'Theirs' });
    assert.equal(r.status, 200);
    await page.getByRole('button', { name: 'Save changes' }).click();
    const alert = await visible(page.getByRole('alert').filter({ hasText: 'someone else changed' }));
    assert.match(await alert.innerText(), /Changed: description/);
    await page.getByRole('link', { name: '← word_count' }).click();
  });

  await step('descriptions with markup stay inert text', async () => {
    const payloads = ['<script>window.__xss = 1</script>', '<img src=x onerror="window.__xss = 2">'];
    for (const [i, description] of payloads.entries()) {
      const r = await rest('POST', '/custom-tools', { name: `xss_${i}`, description, parameters: { type: 'object', properties: {} }, code: 'return 1;' });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    }
    await page.goto(`${BASE}/#/tools`);
    for (const p of payloads) await visible(page.getByText(p, { exact: true }));
    await page.getByRole('link', { name: 'xss_1' }).click();
    await visible(page.getByText(payloads[1], { exact: true }));
    assert.equal(await page.evaluate(() => window.__xss), undefined);
    assert.equal(await page.locator('main img').count(), 0);
    assert.equal(await page.locator('main script').count(), 0);
  });

  await step('live: a call updates the card it changed and rebuilds nothing else', async () => {
    // Every call used to reload the whole list while an agent worked. Mark what is shown, let
    // an agent call a built-in and then word_count, and wait for word_count's card to count it.
    await page.goto(`${BASE}/#/tools`);
    await visible(page.getByRole('link', { name: 'xss_1' }));
    const kept = () => page.evaluate(() => ({
      cards: [...document.querySelectorAll('.tool-card')].filter((c) => c.dataset.kept).map((c) => c.querySelector('.tool-name').textContent).sort(),
      builtins: document.querySelectorAll('.builtin-list li[data-kept]').length,
      all: document.querySelectorAll('.builtin-list li').length,
    }));
    await page.evaluate(() => { for (const el of document.querySelectorAll('.tool-card, .builtin-list li')) el.dataset.kept = '1'; });
    // A keyboard user is on another tool's card meanwhile: the update leaves the focus there
    // (every card was taken out and put back, and the focus fell to the page's body).
    await page.getByRole('link', { name: 'xss_0' }).focus();
    const agent = { 'content-type': 'application/json', 'x-toolsmith-agent': 'e2e-worker' };
    for (const [path, args] of [['/tools/calculate/execute', { expression: '1+1' }], ['/custom-tools/word_count/execute', { text: 'live update' }]]) {
      const r = await fetch(`${BASE}/api/v1${path}`, { method: 'POST', headers: agent, body: JSON.stringify({ arguments: args }) });
      assert.equal(r.status, 200, await r.text());
    }
    const card = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'word_count' }) });
    await until('word_count\'s card to count the call', async () => /\b2 uses\b/.test(await card.innerText()), 5000);
    const after = await kept();
    assert.deepEqual(after.cards, ['xss_0', 'xss_1'], 'only the card that changed was rebuilt');
    assert.ok(after.all > 0 && after.builtins === after.all, `the built-in list was rebuilt: ${JSON.stringify(after)}`);
    assert.equal(await focused(page), 'a xss_0', 'the focus stays on the card a person is on');
  });

  await step('a model-created pending tool gets the badge live and is approved from its card', async () => {
    await page.goto(`${BASE}/#/tools`);
    await visible(page.getByRole('link', { name: 'word_count' }));
    const created = await mcp(['create', '--name', 'mcp_greeter', '--description', 'Greets (made through MCP)']).done();
    assert.ok(!created.isError && !created.error, JSON.stringify(created));
    const t0 = Date.now();
    const badge = await visible(page.getByRole('link', { name: '1 tool pending approval' }), 2500);
    report.pendingBadgeMs = Date.now() - t0;
    const card = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'mcp_greeter' }) });
    await visible(card);
    assert.match(await card.innerText(), /Pending Approval/);
    assert.match(await card.innerText(), /AI Created/);
    await page.getByRole('button', { name: 'Pending Approval' }).click();
    await visible(page.getByText('Showing 1 of 4 tools.'));
    await shot(page, 'tools-pending');
    await card.getByRole('button', { name: 'Approve mcp_greeter' }).click();
    await visible(page.getByText('Showing 0 of 4 tools.'));
    // The approved card left the filtered list: the keyboard is on the filter, not thrown back
    // to the page's body.
    await until('the keyboard on the status filter', async () => (await focused(page)) === 'button Pending Approval');
    await badge.waitFor({ state: 'hidden', timeout: 2500 });
    await page.getByRole('button', { name: 'All', exact: true }).click();
    assert.match(await (await visible(card)).innerText(), /Active/);
  });

  await step('an MCP call waiting for approval is allowed from the Approvals page and completes', async () => {
    await page.getByRole('link', { name: /^Approvals/ }).click();
    await visible(page.getByRole('heading', { name: 'Approvals', level: 1 }));
    const call = mcp(['call', '--name', 'mcp_greeter', '--args', '{"who": "browser"}']);
    const first = await call.next();
    assert.match(first.approvalId || '', /^apr_/, JSON.stringify(first));
    const t0 = Date.now();
    const card = await visible(page.getByRole('listitem').filter({ hasText: first.approvalId }), 2500);
    report.approvalShownMs = Date.now() - t0;
    assert.match(await card.innerText(), /mcp_greeter/);
    assert.match(await card.innerText(), /"who"/);
    assert.match(await card.innerText(), /expires in \d+:\d\d/);
    await shot(page, 'approvals');
    await card.getByRole('button', { name: 'Allow once' }).click();
    // The page reloads the list once the decision is stored: from then on the call runs.
    await visible(page.getByText('Nothing is waiting for a decision.'));
    // No call waits in a form here (this client retries once told): the page says it runs
    // when the same call is made, not that it ran.
    await visible(page.locator('#toast').getByText('mcp_greeter: allow once — allowed once: no call was waiting; it runs when the same call is made.'), 10000);
    call.decided();
    const final = await call.done();
    assert.ok(final.final && !final.final.isError, JSON.stringify(final));
    assert.match(JSON.stringify(final.final), /hello browser/);
    assert.equal(final.waited, true);
  });

  // Issue 36: decisions that reach the call waiting in its client's form; F's pages' layout.
  await approvalFlows({
    page, context, BASE, bin: BIN, step, mcp, rest, visible, until, shot, axeViolations,
    toolId: (await rest('GET', '/custom-tools/mcp_greeter')).json.data.id,
  });

  await step('executions, audit log and policy pages', async () => {
    await page.getByRole('link', { name: 'Executions' }).click();
    await visible(page.getByRole('heading', { name: 'Executions', level: 1 }));
    await visible(page.getByRole('cell', { name: 'word_count' }));
    await page.getByLabel('Status').selectOption('success');
    await visible(page.getByRole('cell', { name: 'mcp_greeter' }));
    // A call that waited for a person is recorded as waiting, not as denied (it was).
    await page.getByLabel('Status').selectOption('awaiting_approval');
    await visible(page.getByRole('row').filter({ hasText: 'mcp_greeter' }).filter({ hasText: 'awaiting_approval' }));
    // A call an agent made (REST with X-Toolsmith-Agent): the caller filter finds it alone.
    const made = await fetch(`${BASE}/api/v1/custom-tools/word_count/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-toolsmith-agent': 'e2e-planner' },
      body: JSON.stringify({ arguments: { text: 'called by an agent' } }),
    });
    assert.equal(made.status, 200, await made.text());
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Caller (agent id)').fill('e2e-planner');
    await page.getByLabel('Caller (agent id)').press('Enter');
    await visible(page.getByRole('cell', { name: 'e2e-planner' }));
    await until('only the agent\'s call to be listed', async () => (await page.getByRole('row').count()) === 2);
    await page.getByLabel('Caller (agent id)').fill('');
    await page.getByLabel('Caller (agent id)').press('Enter');
    await until('every call again', async () => (await page.getByRole('row').count()) > 2);
    await shot(page, 'executions');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await visible(page.getByRole('cell', { name: 'tool.create' }));
    await shot(page, 'audit');
    await page.getByRole('link', { name: 'Policy' }).click();
    await visible(page.getByRole('heading', { name: 'Policy', level: 1 }));
    await page.getByLabel('Policy (JSON)').fill('{"profile": "no_such_profile"}');
    await page.getByRole('button', { name: 'Save policy' }).click();
    const err = await until('a policy error', () => fieldError(page, page.getByLabel('Policy (JSON)')));
    assert.match(err.text, /profile/);
    await page.getByLabel('Policy (JSON)').fill('{"profile": "full"}');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await visible(page.getByText(/Source: stored/));
    await shot(page, 'policy');
  });

  await step('a Config Center secret is never shown again in clear', async () => {
    const secret = 'sk-uitest-9f8e7d6c5b4a39281706';
    await page.getByRole('link', { name: 'Config Center' }).click();
    await page.getByLabel('Service name').fill('weatherapi');
    await page.getByLabel('Display name').fill('WeatherAPI');
    await page.getByRole('button', { name: 'Add service' }).click();
    await page.getByText('Add an entry to weatherapi').click();
    const keyInput = page.getByLabel(/^(API key|api_key)/);
    assert.equal(await keyInput.getAttribute('type'), 'password');
    const before = bodies.length;
    await keyInput.fill(secret);
    await page.getByRole('button', { name: 'Add entry' }).click();
    await visible(page.getByRole('heading', { name: /^default/ }));
    await visible(page.getByText('Configured', { exact: true }));
    assert.ok(!(await page.content()).includes(secret), 'the page holds the secret');
    assert.ok(!(await page.content()).includes(secret.slice(0, 20)), 'the page holds most of the secret');
    await page.reload();
    await visible(page.getByRole('heading', { name: /^default/ }));
    assert.ok(!(await page.content()).includes(secret));
    const answers = bodies.slice(before).join('\n');
    assert.ok(answers.length > 0);
    assert.ok(!answers.includes(secret), 'an API answer carried the secret');
    await shot(page, 'config');
  });

  await step('delete with confirmation', async () => {
    await page.goto(`${BASE}/#/tools`);
    await page.getByRole('link', { name: 'word_count' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete word_count?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await visible(page.getByRole('heading', { name: 'word_count', level: 1 }));
    await page.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete tool' }).click();
    await visible(page.getByRole('heading', { name: 'Tools', level: 1 }));
    await until('the card to go', async () => (await page.getByRole('link', { name: 'word_count' }).count()) === 0);
    assert.equal((await rest('GET', '/custom-tools/word_count')).status, 404);
  });

  await step('screenshots at 1280 and 390 px, light and dark', async () => {
    await page.goto(`${BASE}/#/tools`);
    await visible(page.getByRole('link', { name: 'mcp_greeter' }));
    await shot(page, 'tools');
    await page.getByRole('button', { name: 'List view' }).click();
    await shot(page, 'tools-list');
    await page.getByRole('button', { name: 'Grid view' }).click();
    await page.getByRole('button', { name: 'Dark theme' }).click();
    await shot(page, 'tools-dark');
    // The button names the theme it switches to.
    await page.getByRole('button', { name: 'Light theme' }).click();
    await page.goto(`${BASE}/#/tokens`);
    await visible(page.getByRole('heading', { name: 'Tokens', level: 1 }));
    await shot(page, 'tokens');
    const mobile = await context.newPage();
    await mobile.setViewportSize({ width: 390, height: 844 });
    const greeter = (await rest('GET', '/custom-tools/mcp_greeter')).json.data.id;
    for (const [name, hash] of uiPages(greeter)) {
      await mobile.goto(`${BASE}/${hash}`);
      await mobile.getByRole('heading', { level: 1 }).first().waitFor();
      await mobile.waitForTimeout(150);
      const overflow = await mobile.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${name} scrolls sideways at 390 px (${overflow} px)`);
      await shot(mobile, name);
    }
    await mobile.getByRole('button', { name: 'Menu' }).click();
    await visible(mobile.getByRole('link', { name: 'Config Center' }));
    await shot(mobile, 'menu');
    await mobile.close();
  });

  await step('accessibility and layout: no WCAG 2.1 A/AA violation (axe-core) and no broken layout on any page, light and dark, 1280 and 390 px', async () => {
    const greeter = (await rest('GET', '/custom-tools/mcp_greeter')).json.data.id;
    const found = [];
    const layout = [];
    let audits = 0;
    for (const width of [1280, 390]) {
      const p = await context.newPage();
      await p.setViewportSize({ width, height: 900 });
      for (const theme of ['light', 'dark']) {
        for (const [name, hash] of uiPages(greeter)) {
          await p.goto(`${BASE}/${hash}`);
          await p.getByRole('heading', { level: 1 }).first().waitFor();
          const dark = async () => (await p.getAttribute('html', 'data-theme')) === 'dark';
          if ((await dark()) !== (theme === 'dark')) {
            await p.getByRole('button', { name: theme === 'dark' ? 'Dark theme' : 'Light theme' }).click();
          }
          assert.equal(await dark(), theme === 'dark', `${name}: the ${theme} theme did not apply`);
          // Let loaded data and transitions settle before the contrast rules read colours.
          await p.waitForTimeout(200);
          found.push(...await axeViolations(p, `${name} (${theme}, ${width} px)`));
          // The layout check too (no word split, nothing past the edge, the header's rows whole),
          // and a screenshot of each page in each theme.
          layout.push(...await layoutProblems(p, `${name} (${theme}, ${width} px)`));
          if (theme === 'dark') await shot(p, `${name}-dark`);
          audits += 1;
        }
      }
      await p.close();
    }
    report.accessibility = { audits, rules: WCAG_AA, violations: found };
    report.layout = { checks: audits, problems: layout };
    assert.deepEqual(found, [], `WCAG violations:\n${found.join('\n')}`);
    assert.deepEqual(layout, [], `layout problems:\n${layout.join('\n')}`);
  });

  await step('keyboard: every control reached by Tab shows its focus, and Enter opens a tool', async () => {
    const p = await context.newPage();
    await p.goto(`${BASE}/#/tools`);
    await visible(p.getByRole('link', { name: 'mcp_greeter' }));
    const reached = [];
    for (let i = 0; i < 40; i += 1) {
      await p.keyboard.press('Tab');
      const focused = await p.evaluate(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const style = getComputedStyle(el);
        const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
        const ring = style.boxShadow && style.boxShadow !== 'none';
        return {
          what: `${el.tagName.toLowerCase()} "${(el.getAttribute('aria-label') || el.textContent || el.getAttribute('placeholder') || '').trim().slice(0, 40)}"`,
          visibleFocus: el.matches(':focus-visible') && (outline || ring),
        };
      });
      if (focused) reached.push(focused);
    }
    const unseen = reached.filter((f) => !f.visibleFocus).map((f) => f.what);
    assert.deepEqual(unseen, [], 'controls focused without a visible focus indicator');
    const names = reached.map((f) => f.what).join(', ');
    assert.ok(reached.some((f) => f.what.startsWith('input')), `Tab never reached the search box: ${names}`);
    // Straight to the tool's card link, then Enter.
    await p.getByRole('link', { name: 'mcp_greeter' }).focus();
    await p.keyboard.press('Enter');
    await visible(p.getByRole('heading', { name: 'mcp_greeter', level: 1 }));
    report.keyboard = { tabStops: reached.length };
    await p.close();
  });

  /** Five loads of the tools page with `count` tools: marks (ms after navigation start) and the search filter's cost. */
  async function measureToolsPage(count, search) {
    const runs = [];
    for (let i = 0; i < 5; i += 1) {
      const p = await context.newPage();
      await p.goto(`${BASE}/#/tools`);
      await p.waitForFunction(() => performance.getEntriesByName('toolsmith:tools-interactive').length > 0, null, { timeout: 60000 });
      const at = await p.evaluate(() => Object.fromEntries(['fetched', 'rendered', 'interactive']
        .map((k) => [k, performance.getEntriesByName(`toolsmith:tools-${k}`)[0].startTime])));
      assert.equal(await p.locator('.tool-card').count(), Math.min(count, 100));
      if (count > 100 && i === 0) {
        // A live-feed blip on a loaded machine (the page reconnecting reads it again) can put the
        // list back to its first 100 right after the click: then the click is made again.
        let cards = 0;
        for (let attempt = 0; attempt < 3 && cards !== 200; attempt += 1) {
          await p.getByRole('button', { name: 'Show 100 more' }).click();
          await p.waitForFunction(() => document.querySelectorAll('.tool-card').length === 200, null, { timeout: 5000 }).catch(() => {});
          cards = await p.locator('.tool-card').count();
        }
        assert.equal(cards, 200);
        await p.reload();
        await p.waitForFunction(() => performance.getEntriesByName('toolsmith:tools-interactive').length > 0, null, { timeout: 60000 });
      }
      // Typing into the search box: the filter runs and the layout settles, measured in the page.
      const filterMs = await p.evaluate((text) => {
        const input = document.getElementById('tool-search');
        const t0 = performance.now();
        input.value = text;
        input.dispatchEvent(new Event('input'));
        void document.body.offsetHeight;
        return performance.now() - t0;
      }, search);
      await p.getByText(`Showing 1 of ${count} tools.`).waitFor();
      runs.push({ ...at, filterMs });
      await p.close();
    }
    const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[2];
    return { runs, median: { fetched: median('fetched'), rendered: median('rendered'), interactive: median('interactive'), filterMs: median('filterMs') } };
  }

  await step('1,000 tools: rendered and interactive, against 3 tools in the same run', async () => {
    const existing = (await rest('GET', '/custom-tools/stats')).json.data.total;
    assert.equal(existing, 3);
    report.threeTools = await measureToolsPage(3, 'mcp_greeter');
    const batch = [];
    for (let i = 0; i < 1000 - existing; i += 1) {
      batch.push(rest('POST', '/custom-tools', {
        name: `bulk_${String(i).padStart(4, '0')}`,
        description: `Bulk tool number ${i} for the page-load measurement`,
        category: `Group ${i % 10}`,
        parameters: { type: 'object', properties: { x: { type: 'number' } } },
        code: 'return args.x;',
      }));
      if (batch.length === 50) { await Promise.all(batch.splice(0)); }
    }
    await Promise.all(batch);
    assert.equal((await rest('GET', '/custom-tools/stats')).json.data.total, 1000);
    report.thousandTools = await measureToolsPage(1000, 'bulk_0500');
    log(`tools page, ms after navigation start (median of 5): 3 tools ${JSON.stringify(report.threeTools.median)}; 1,000 tools ${JSON.stringify(report.thousandTools.median)}`);
  });

  await step('a page of another origin acts for no one: its fetches and form posts change nothing', async () => {
    // The no-auth quick start: a page the user opens elsewhere (another loopback port, and
    // another site name for the same machine) tries what a browser sends without a preflight.
    const created = await mcp(['create', '--name', 'cross_pending', '--description', 'Waits for a person (made through MCP)']).done();
    assert.ok(!created.isError && !created.error, JSON.stringify(created));
    const tool = async (name) => (await rest('GET', `/custom-tools/${name}`)).json.data;
    const pending = (await tool('cross_pending')).id;
    assert.equal((await tool('cross_pending')).status, 'pending_approval');
    const made = await rest('POST', '/custom-tools', { name: 'cross_upper', description: 'Upper-cases a text', parameters: { type: 'object', properties: { text: { type: 'string' } } }, code: 'return args.text.toUpperCase();' });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const upper = made.json.data.id;
    const off = (await rest('POST', '/custom-tools', { name: 'cross_off', description: 'Stays off', parameters: { type: 'object', properties: {} }, code: 'return 1;' })).json.data.id;
    assert.equal((await rest('POST', `/custom-tools/${off}/disable`)).status, 200);
    const T = `${BASE}/api/v1/custom-tools`;
    const imported = "name: cross_planted\ndescription: Planted by another page\nendpoint:\n  url: 'https://evil.example/x'\n  method: GET\n";
    const script = `
      const T = ${JSON.stringify(T)};
      const send = (url, init) => fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include', ...init }).then(() => 'sent', (e) => String(e));
      window.done = Promise.all([
        send(T + '/${pending}/approve'),
        send(T + '/${pending}/approve', { body: '{}' }),
        send(T + '/${off}/enable'),
        send(T + '/${upper}/execute', { body: JSON.stringify({ arguments: { text: 'owned' } }) }),
        send(T + '/import', { body: ${JSON.stringify(imported)} }),
        send(T, { body: new Blob([JSON.stringify({ name: 'cross_blob', description: 'x', parameters: { type: 'object' }, code: 'return 1;' })]) }),
        send(${JSON.stringify(`${BASE}/mcp`)}, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }) }),
        send(T + '/${upper}/disable'),
      ]);`;
    const form = `<form id="f" method="POST" enctype="text/plain" action="${T}/${pending}/approve"><input name='{"a":"' value='"}'></form>`;
    const { createServer } = await import('node:http');
    const evil = createServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (req.url === '/fetch') res.end(`<!doctype html><title>elsewhere</title><script>${script}</script>`);
      else if (req.url === '/form') res.end(`<!doctype html><title>elsewhere</title>${form}<script>document.getElementById('f').submit()</script>`);
      else { res.statusCode = 404; res.end(); }
    });
    await new Promise((resolve) => evil.listen(0, '127.0.0.1', resolve));
    cleanups.unshift(() => new Promise((resolve) => evil.close(resolve)));
    const port = evil.address().port;
    const statuses = [];
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const p = await context.newPage();
      p.on('response', (r) => { if (r.url().startsWith(BASE)) statuses.push(`${r.request().method()} ${r.url().slice(BASE.length)} ${r.status()}`); });
      await p.goto(`${origin}/fetch`);
      const sent = await p.evaluate(() => window.done);
      assert.deepEqual(sent, Array(8).fill('sent'), `${origin}: ${sent}`);
      const posted = p.waitForResponse((r) => r.url().startsWith(`${T}/${pending}/approve`));
      await p.goto(`${origin}/form`);
      await posted;
      await p.close();
    }
    log(`from another origin: ${statuses.join(', ')}`);
    assert.equal(statuses.length, 18, statuses.join('\n'));
    for (const s of statuses) assert.match(s, / (403|415)$/, `a request of another origin's page was served: ${s}`);
    assert.equal((await tool('cross_pending')).status, 'pending_approval');
    assert.equal((await tool('cross_off')).status, 'disabled');
    assert.equal((await tool('cross_upper')).status, 'active');
    assert.equal((await tool('cross_upper')).usageCount, 0);
    for (const name of ['cross_planted', 'cross_blob']) assert.equal((await rest('GET', `/custom-tools/${name}`)).status, 404, name);
    // The UI itself, same origin, still changes things: approve the pending tool from its card.
    await page.goto(`${BASE}/#/tools`);
    const card = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'cross_pending' }) });
    await page.getByRole('button', { name: 'Pending Approval' }).click();
    await (await visible(card)).getByRole('button', { name: 'Approve cross_pending' }).click();
    await until('cross_pending to be approved', async () => (await tool('cross_pending')).status === 'active');
    await page.getByRole('button', { name: 'All', exact: true }).click();
  });

  await step('tokens: created once, required afterwards, revoked', async () => {
    await page.goto(`${BASE}/#/tokens`);
    await page.getByLabel('Token name').fill('browser');
    await page.getByLabel('admin').check();
    await page.getByRole('button', { name: 'Create token' }).click();
    // The first token turns authentication on: the page says so before.
    const confirm = await visible(page.getByRole('dialog', { name: 'Turn on authentication?' }));
    assert.match(await confirm.innerText(), /turns authentication on/);
    await confirm.getByRole('button', { name: 'Create and turn on authentication' }).click();
    const tokenBox = await visible(page.getByRole('textbox', { name: 'The new token' }));
    const token = await tokenBox.inputValue();
    assert.match(token, /^tsk_/);
    // The keyboard is on the token, selected for Ctrl+C (it was left on the page's body).
    assert.equal(await focused(page), 'input The new token');
    await visible(page.getByRole('button', { name: 'Copy token' }));
    await visible(page.getByText('Authentication is now on'));
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.getByRole('textbox', { name: 'The new token' }).count(), 0);
    assert.equal(await focused(page), 'input Token name', 'Done leaves the keyboard in the form, ready for another');
    assert.ok(!(await page.content()).includes(token), 'the token is shown only once');
    // The page keeps working with the new token: the list shows it, no 401 under Token name.
    await visible(page.getByRole('button', { name: 'Revoke browser' }));
    assert.equal(await fieldError(page, page.getByLabel('Token name')), null);
    await page.getByRole('button', { name: 'Sign out' }).click();
    const input = await visible(page.getByLabel('API token'));
    await input.fill('tsk_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await visible(page.getByText('That token is not valid.'));
    await shot(page, 'signin');
    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await visible(page.getByRole('heading', { name: 'Tokens', level: 1 }));
    assert.ok(!page.url().includes(token), 'the token is in the URL');
    TOKEN = token;
    await page.getByLabel('Token name').fill('spare');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('button', { name: 'Revoke spare' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token' }).click();
    await until('spare to go', async () => (await page.getByRole('button', { name: 'Revoke spare' }).count()) === 0);
    assert.equal((await rest('GET', '/tokens')).json.data.count, 1);
  });

  await step('no external requests, no script errors, no dialogs', async () => {
    assert.deepEqual(external, []);
    assert.deepEqual(dialogs, []);
    const unexpected = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of (401|404|409|422)/.test(e));
    assert.deepEqual(unexpected, []);
  });

  // The operator's pages (issue 36), against a server of their own: ui_e2e_pages.mjs.
  report.pages = await runPages({ context, bin: BIN, out: OUT, python: PYTHON, dataDir: opt('pages-data'), fromDisk: FROM_DISK });
  // The Agents page (issue 37), against a server of its own and a scripted model server:
  // ui_e2e_agents.mjs.
  report.agents = await runAgents({ context, bin: BIN, out: OUT, fromDisk: FROM_DISK });
  // The organisation scope (issue 41), against a server of its own with tokens: ui_e2e_orgs.mjs.
  report.orgs = await runOrgs({ context, bin: BIN, out: OUT, fromDisk: FROM_DISK });

  console.log(JSON.stringify({ ok: true, ...report }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e && e.stack ? e.stack : e), ...report }));
  process.exitCode = 1;
} finally {
  for (const c of cleanups) { try { await c(); } catch { /* already gone */ } }
}
