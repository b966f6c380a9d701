// The operator's pages of the web UI (issue 36) in a real browser: tool groups, MCP servers, the
// whole catalogue (built-ins opened and tested), required Config Center services in the tool
// form, the code editor and the diff. Each flow goes through the UI only (REST is used to set
// the scene and to check the outcome), and every page is screenshotted and audited with axe at
// 1280 and 390 px, light and dark.
//
// Run by ui_e2e.mjs (runPages, with its browser context), against a server of its own (its own
// data dir and a configuration that allows the upstream MCP test server as a program), so the
// counts the main flows check are not disturbed. Also runs alone, for work on the pages:
//
//   node ui_e2e_pages.mjs --bin PATH/toolsmith --out DIR [--chromium PATH] [--ui-from-disk]
//                         [--pages-data DIR]
//
// --pages-data: a data dir whose store holds the executions the Analytics page is measured
// with (ui_browser.rs seeds 100,000 through the store); without it the page shows the few
// calls the other flows made.
//
// --ui-from-disk serves /ui/… from crates/toolsmith-server/ui/ (with the server's CSP) instead of
// the binary's copy, so a page can be changed without rebuilding the binary; --ui-dir DIR serves
// another copy (an older commit's, to see a flow fail before its fix); --only TEXT runs only the
// flows whose name holds TEXT (for work on one page; the test runs them all).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { layoutProblems } from './ui_layout.mjs';

const here = dirname(fileURLToPath(import.meta.url));
let UI_DIR = join(here, '../../crates/toolsmith-server/ui');
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'; object-src 'none'";
const AXE_SOURCE = readFileSync(join(here, 'node_modules/axe-core/axe.min.js'), 'utf8');
const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

const log = (...a) => console.error('[ui_e2e_pages]', ...a);

/** Starts `toolsmith serve` on a free loopback port with its own data dir; its base URL. */
export async function startServer(bin, dataDir, configPath, cleanups) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOOLSMITH_') && k !== 'RUST_LOG'));
  env.TOOLSMITH_DATA_DIR = dataDir;
  const child = spawn(bin, ['serve', '--port', '0', '--config', configPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
  return m[1];
}

/** Waits until `fn()` (run in node) is truthy. */
export async function until(what, fn, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${last && last.message ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function visible(locator, timeout = 10000) {
  await locator.first().waitFor({ state: 'visible', timeout });
  return locator.first();
}

/** The error shown for a form control (its aria-describedby error element). */
async function fieldError(control) {
  return control.evaluate((el) => {
    const ids = (el.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
    const err = ids.map((id) => document.getElementById(id)).find((n) => n && n.classList.contains('field-error') && !n.hidden);
    return err ? err.textContent : null;
  });
}

export async function axeViolations(page, where) {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async (tags) => {
    const result = await globalThis.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')), count: v.nodes.length }));
  }, WCAG_AA);
  return violations.map((v) => `${where}: ${v.id} (${v.impact}, ${v.count} element(s), e.g. ${v.targets.join(' | ')}): ${v.help}`);
}

/** Serves /ui/… from `dir` instead of the source tree (an older commit's copy). */
export function setUiDir(dir) { UI_DIR = dir; }

/** Serves /ui/… from the source tree, with the server's headers (development only). */
export async function uiFromDisk(context, base) {
  const types = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', html: 'text/html; charset=utf-8', svg: 'image/svg+xml' };
  const serve = (route, file) => {
    const ext = file.split('.').pop();
    route.fulfill({ status: 200, body: readFileSync(join(UI_DIR, file)), headers: { 'content-type': types[ext] || 'application/octet-stream', 'content-security-policy': CSP, 'cache-control': 'no-store' } });
  };
  await context.route(`${base}/`, (route) => serve(route, 'index.html'));
  await context.route(`${base}/ui/**`, (route) => serve(route, new URL(route.request().url()).pathname.replace(/^\/ui\//, '')));
}

/**
 * Audits the page `p` shows as `name` in `theme` at its width: the theme switched with its
 * button, a full-page screenshot `<name>[-dark]-<width>.png` in `out` (listed in
 * `report.screenshots`), axe's WCAG A/AA violations and ui_layout.mjs's problems added to
 * `found` ({violations, problems}).
 */
export async function auditPage(p, name, theme, out, report, found) {
  const width = p.viewportSize().width;
  const dark = async () => (await p.getAttribute('html', 'data-theme')) === 'dark';
  if ((await dark()) !== (theme === 'dark')) await p.locator('#theme-toggle').click();
  assert.equal(await dark(), theme === 'dark', `${name}: the ${theme} theme did not apply`);
  await p.waitForTimeout(200);
  const file = join(out, `${theme === 'dark' ? `${name}-dark` : name}-${width}.png`);
  await p.screenshot({ path: file, fullPage: true });
  report.screenshots.push(file);
  found.violations.push(...await axeViolations(p, `${name} (${theme}, ${width} px)`));
  found.problems.push(...await layoutProblems(p, `${name} (${theme}, ${width} px)`));
}

/** The audits' outcome in `report` (accessibility, layout); fails naming every problem found. */
export function auditsFound(report, found, audits) {
  report.accessibility = { audits, rules: WCAG_AA, violations: found.violations };
  report.layout = { checks: audits, problems: found.problems };
  assert.deepEqual(found.violations, [], `WCAG violations:\n${found.violations.join('\n')}`);
  assert.deepEqual(found.problems, [], `layout problems:\n${found.problems.join('\n')}`);
}

/**
 * Runs a flows file alone (`node ui_e2e_X.mjs --bin … --out … [--chromium PATH]`): Debian's
 * Chromium launched headless, `run({context, opt, argv})`'s report printed as one JSON line,
 * the exit code 1 when it threw.
 */
export async function alone(run) {
  const argv = process.argv.slice(2);
  const opt = (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : fallback;
  };
  const { chromium } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'toolsmith-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: opt('chromium', '/usr/bin/chromium'),
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const report = await run({ context, opt, argv });
    console.log(JSON.stringify({ ok: true, ...report }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, error: String(e && e.stack ? e.stack : e) }));
    process.exitCode = 1;
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/**
 * Runs the flows. `context`: a playwright browser context; returns
 * {steps, screenshots, accessibility: {audits, violations}, layout: {checks, problems}, …}.
 */
export async function runPages({ context, bin, out, python, dataDir: seeded = null, fromDisk = false, only = null }) {
  const report = { steps: [], screenshots: [] };
  const cleanups = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'toolsmith-ui-pages-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const configPath = join(dataDir, 'toolsmith.toml');
  writeFileSync(configPath, `mcp_allowed_commands = [${JSON.stringify(python)}]\n`);
  mkdirSync(out, { recursive: true });
  const pages = [];
  try {
    // A data dir seeded with 100,000 executions (by ui_browser.rs, through the store), or a
    // fresh one.
    const BASE = await startServer(bin, seeded || join(dataDir, 'data'), configPath, cleanups);
    log(`server at ${BASE}`);
    if (fromDisk) await uiFromDisk(context, BASE);
    const rest = async (method, path, body, headers = {}) => {
      const res = await fetch(`${BASE}/api/v1${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, json: await res.json() };
    };
    const page = await context.newPage();
    pages.push(page);
    const pageErrors = [];
    const external = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
    page.on('request', (r) => { if (!r.url().startsWith(BASE) && !r.url().startsWith('data:')) external.push(r.url()); });

    const step = async (name, fn) => {
      if (only && !only.split('|').some((o) => name.includes(o))) return;
      const t0 = Date.now();
      log(`step: ${name}`);
      try { await fn(); } catch (e) { e.message = `${name}: ${e.message}`; throw e; }
      report.steps.push({ name, ms: Date.now() - t0 });
    };
    const shot = async (p, name) => {
      const file = join(out, `${name}-${p.viewportSize().width}.png`);
      await p.screenshot({ path: file, fullPage: true });
      report.screenshots.push(file);
    };
    /** The pages to audit and screenshot, filled as the flows make them exist. */
    const audited = [];

    await step('tool groups: switched on and off from their cards, a broken dependency explained', async () => {
      await page.goto(`${BASE}/#/groups`);
      await visible(page.getByRole('heading', { name: 'Tool groups', level: 1 }));
      const git = page.getByRole('switch', { name: 'Git' });
      assert.equal(await git.isChecked(), false);
      const gitCard = page.getByRole('listitem').filter({ has: git });
      assert.match(await gitCard.innerText(), /Needs the group File System on/);
      assert.match(await gitCard.innerText(), /Off by default: version control operations/);
      await git.check();
      await until('git to be on', async () => (await rest('GET', '/tool-groups/git')).json.data.enabled === true);
      await visible(page.getByRole('switch', { name: 'Git', checked: true }));
      assert.ok((await rest('GET', '/tools')).json.data.tools.some((t) => t.name === 'git_status' || t.name.startsWith('git')), 'a git tool is callable');
      // Filesystem is needed by Git: switching it off is refused, said next to its switch.
      const fs = page.getByRole('switch', { name: 'File System' });
      await fs.click();
      const why = await until('the dependency error', () => fieldError(fs));
      assert.match(why, /git/i);
      assert.equal(await fs.isChecked(), true, 'the switch went back');
      assert.equal((await rest('GET', '/tool-groups/filesystem')).json.data.enabled, true);
      await shot(page, 'groups');
      await page.getByRole('switch', { name: 'Git' }).uncheck();
      await until('git to be off', async () => (await rest('GET', '/tool-groups/git')).json.data.enabled === false);
      // Git off again: the groups on are those on by default, counted against every group of
      // the catalogue (it grows with each new family, so the count comes from the server).
      const { groups } = (await rest('GET', '/tool-groups')).json.data;
      const on = groups.filter((g) => g.enabled);
      assert.deepEqual(on.map((g) => g.id), groups.filter((g) => g.defaultEnabled).map((g) => g.id), 'the default groups are on');
      assert.equal(on.length, 18, 'the 18 groups on by default');
      await visible(page.getByText(new RegExp(`^${on.length} of ${groups.length} groups on;`)));
      audited.push(['groups', '#/groups']);
    });

    await step('the catalogue: a built-in found by search, opened and run', async () => {
      await page.goto(`${BASE}/#/tools`);
      await visible(page.getByRole('heading', { name: 'Tools', level: 1 }));
      await page.getByLabel('Search tools').fill('arithmetic');
      await visible(page.getByText(/^\d+ of \d+ built-in and bridged tools match\.$/));
      const link = await visible(page.getByRole('link', { name: 'calculate', exact: true }));
      assert.equal(await page.getByRole('link', { name: 'generate_uuid', exact: true }).isVisible(), false, 'a tool that does not match is hidden');
      await link.click();
      await visible(page.getByRole('heading', { name: 'calculate', level: 1 }));
      const details = await page.getByRole('tabpanel').innerText();
      assert.match(details, /Built-in/);
      assert.match(details, /Core \(group:core\)/);
      assert.match(details, /expression/);
      // Its annotations as badges, each with its meaning (a read-only tool shows no
      // destructive or idempotent badge: MCP gives them meaning only for a tool that writes).
      const hints = page.getByRole('region', { name: 'What it does' });
      assert.deepEqual(await hints.locator('.pill.hint').allInnerTexts(), ['Read-only', 'Closed world']);
      assert.match(await hints.innerText(), /Read-only It only reads: it changes nothing\./);
      await shot(page, 'catalog-details');
      await page.getByRole('tab', { name: 'Test' }).click();
      await page.getByLabel('expression (required)').fill('6 * 7');
      await page.getByRole('button', { name: 'Run' }).click();
      await visible(page.getByText('Succeeded'));
      assert.match(await page.locator('pre.output').innerText(), /"result": 42/);
      await shot(page, 'catalog-test');
      // A tool that deletes, flagged for confirmation: every badge says so.
      await page.goto(`${BASE}/#/catalog/delete_file`);
      await visible(page.getByRole('heading', { name: 'delete_file', level: 1 }));
      const deleting = page.getByRole('region', { name: 'What it does' });
      assert.deepEqual(await deleting.locator('.pill.hint').allInnerTexts(), ['Changes things', 'Destructive', 'Idempotent', 'Closed world', 'Needs confirmation']);
      const said = await deleting.innerText();
      assert.match(said, /Destructive It may delete or overwrite what exists\./);
      assert.match(said, /Needs confirmation Marked requiresConfirmation: a person is to confirm each call before it runs\./);
      // Running it asks the person first; Cancel runs nothing.
      await page.getByRole('tab', { name: 'Test' }).click();
      await page.getByLabel('path (required)').fill('nothing-here.txt');
      await page.getByRole('button', { name: 'Run' }).click();
      const confirm = page.getByRole('dialog', { name: 'Run delete_file?' });
      await visible(confirm);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      assert.equal(await page.locator('pre.output').count(), 0, 'nothing ran');
      audited.push(['catalog-details', '#/catalog/calculate'], ['catalog-test', '#/catalog/calculate?tab=test']);
    });

    await step('executions: a built-in call is listed with its source, filtered by source and opened in the catalogue', async () => {
      // The catalogue's Test tab ran calculate above: a built-in call, recorded as every call.
      await page.getByRole('link', { name: 'Executions' }).click();
      await visible(page.getByRole('heading', { name: 'Executions', level: 1 }));
      const table = page.getByRole('region', { name: 'Executions' });
      const builtin = table.getByRole('row').filter({ has: page.getByRole('link', { name: 'calculate', exact: true }) });
      await visible(builtin);
      assert.match(await builtin.first().innerText(), /Built-in/);
      await page.getByLabel('Source', { exact: true }).selectOption('custom');
      if (seeded) {
        // The seeded store holds custom-tool calls of this caller (seeded_default_*): only
        // they are listed, calculate is not.
        await until('only custom calls listed', async () => (await builtin.count()) === 0 && (await table.getByRole('row').count()) > 1);
        const sources = await table.locator('tbody tr td:nth-child(3)').allInnerTexts();
        assert.ok(sources.length > 0 && sources.every((s) => s === 'Custom'), `only custom calls listed: ${[...new Set(sources)].join(', ')}`);
      } else {
        await visible(page.getByText('No executions match.'));
      }
      await page.getByLabel('Source', { exact: true }).selectOption('builtin');
      await visible(builtin);
      await page.getByLabel('Tool', { exact: true }).selectOption('calculate');
      await until('only calculate listed', async () => (await table.getByRole('row').count()) === 2);
      await shot(page, 'executions-builtin');
      await builtin.first().getByRole('link', { name: 'calculate', exact: true }).click();
      await visible(page.getByRole('heading', { name: 'calculate', level: 1 }));
      audited.push(['executions', '#/executions']);
    });

    await step('MCP servers: registered, seen connected with its tools, a tool run, edited, granted, a request approved, removed', async () => {
      await page.goto(`${BASE}/#/mcp`);
      await visible(page.getByRole('heading', { name: 'MCP servers', level: 1 }));
      await visible(page.getByText('No upstream MCP server yet.'));
      await page.getByRole('button', { name: 'Register a server' }).click();
      await page.getByLabel('Server name').fill('upstream');
      await page.getByLabel('Program').fill('/bin/false');
      await page.getByLabel('Arguments (one a line)').fill(join(here, 'mcp_upstream.py'));
      await page.getByRole('button', { name: 'Register', exact: true }).click();
      const refused = await until('the refused program explained', () => fieldError(page.getByLabel('Program')));
      assert.match(refused, /mcp_allowed_commands/);
      await shot(page, 'mcp-register');
      await page.getByLabel('Program').fill(python);
      await page.getByRole('button', { name: 'Register', exact: true }).click();
      const card = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'upstream' }) });
      await visible(card.locator('.pill', { hasText: 'connected' }), 20000);
      // As many tools as the upstream test server offers (its own list grows with the bridge's
      // tests), shown on the card.
      const offered = (await rest('GET', '/mcp-servers/upstream')).json.data.toolCount;
      assert.ok(offered >= 15, `the upstream's tools: ${offered}`);
      assert.match(await card.innerText(), new RegExp(`Tools \\(${offered}\\)`));
      assert.match(await card.innerText(), /Last error\s+none/);
      // The last check counts on by itself ("n s ago"), with nothing read or redrawn: it
      // kept the time of the drawing before.
      const checkedAgo = async () => Number((/Last check\s+[^\n]*\((\d+) s ago\)/.exec(await card.innerText()) || [])[1]);
      const first = await until('the last check in seconds', async () => { const n = await checkedAgo(); return Number.isFinite(n) && { n }; });
      await until('the last check to count on by itself', async () => (await checkedAgo()) >= first.n + 2, 10000);
      await card.getByText(`Tools (${offered})`).click();
      await card.getByRole('link', { name: 'mcp_upstream_echo' }).click();
      await visible(page.getByRole('heading', { name: 'mcp_upstream_echo', level: 1 }));
      await page.getByRole('tab', { name: 'Test' }).click();
      await page.getByLabel('text (required)').fill('through the bridge');
      await page.getByRole('button', { name: 'Run' }).click();
      await visible(page.getByText('Succeeded'));
      assert.match(await page.locator('pre.output').innerText(), /through the bridge/);
      await page.getByRole('link', { name: 'MCP servers' }).click();
      await visible(card.locator('.pill', { hasText: 'connected' }));
      await card.getByRole('button', { name: 'Edit upstream' }).click();
      await page.getByLabel('Never these upstream tools').fill('wipe, die');
      await page.getByRole('button', { name: 'Save server' }).click();
      await until('two tools fewer after the edit', async () => (await rest('GET', '/mcp-servers/upstream')).json.data.toolCount === offered - 2);
      await visible(card.getByText(`Tools (${offered - 2})`));
      assert.equal((await rest('GET', '/mcp-servers/upstream')).json.data.revision, 2);
      // A grant, through the card's form.
      await card.getByLabel('Grant to').selectOption('agent');
      await card.getByLabel('Who (id)').fill('planner');
      await card.getByLabel('Only these tools').fill('echo');
      await card.getByRole('button', { name: 'Grant' }).click();
      await visible(card.getByRole('cell', { name: 'agent planner' }));
      // An agent asks for access (REST, as an agent would); the page shows it by itself (no
      // reload: it showed only after one before), and approves it.
      const asked = await rest('POST', '/mcp-access-requests', { server: 'upstream', tools: ['add'], reason: 'needs sums' }, { 'x-toolsmith-agent': 'helper' });
      assert.equal(asked.status, 201, JSON.stringify(asked.json));
      await visible(card.getByText(/agent helper asks for add/));
      await shot(page, 'mcp');
      await card.getByRole('button', { name: 'Approve the request of helper' }).click();
      await visible(card.getByRole('cell', { name: 'agent helper' }));
      const grants = (await rest('GET', '/mcp-grants')).json.data.grants;
      assert.deepEqual(grants.map((g) => `${g.subject}:${g.toolAllow.join(',')}`).sort(), ['helper:add', 'planner:echo']);
      // A live update keeps what a person holds in the cards: a call of a bridged tool moves the
      // usage digest and the page reads itself again (the card counts the call) while a grant
      // is half-typed, the Tools list open and the focus in the field. Before, the cards were
      // drawn anew: the typed id, the open list and the focus were gone.
      await card.getByText(`Tools (${offered - 2})`).click();
      await card.getByLabel('Who (id)').fill('half-typed');
      const calls = (await rest('GET', '/mcp-servers/upstream')).json.data.calls;
      const ran = await rest('POST', '/tools/mcp_upstream_echo/execute', { arguments: { text: 'live' } });
      assert.equal(ran.status, 200, JSON.stringify(ran.json));
      await until('the card to count the call', async () => new RegExp(`Calls\\s+${calls + 1} \\(`).test(await card.innerText()));
      assert.equal(await card.getByLabel('Who (id)').inputValue(), 'half-typed', 'the half-typed grant was kept');
      assert.equal(await card.locator('details').first().evaluate((d) => d.open), true, 'the Tools list stayed open');
      assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.labels && document.activeElement.labels[0] && document.activeElement.labels[0].textContent), 'Who (id)', 'the focus stayed in the field');
      await card.getByLabel('Who (id)').fill('');
      await card.getByText(`Tools (${offered - 2})`).click();
      audited.push(['mcp', '#/mcp']);
    });

    await step('a tool made in the editor declares the Config Center service it reads; Details says it is missing until it is set', async () => {
      await page.goto(`${BASE}/#/tools`);
      await page.getByRole('link', { name: 'New tool' }).click();
      await visible(page.getByRole('heading', { name: 'New tool' }));
      await page.getByLabel('Name', { exact: true }).fill('weather_now');
      await page.getByLabel('Description').fill('Says whether the weather service is configured');
      await page.getByLabel('Parameters (JSON Schema)').fill('{"type": "object", "properties": {}}');
      await page.getByLabel('Code (JavaScript function body)').fill("const key = utils.getApiKey('weather');\nreturn { configured: key !== undefined };");
      // The editor sees the code read a service it does not declare, and offers to declare it.
      await page.getByRole('button', { name: 'Declare weather' }).click();
      assert.equal(await page.getByLabel('Service 1 name').inputValue(), 'weather');
      await page.getByLabel('Service 1 description').fill('The weather API');
      assert.equal(await page.getByRole('button', { name: 'Declare weather' }).count(), 0);
      await shot(page, 'editor-services');
      await page.getByRole('button', { name: 'Create tool' }).click();
      await visible(page.getByRole('heading', { name: 'weather_now', level: 1 }));
      const stored = (await rest('GET', '/custom-tools/weather_now')).json.data;
      assert.deepEqual(stored.metadata.requiredApiKeys, [{ name: 'weather', description: 'The weather API' }]);
      const needs = await visible(page.locator('.config-needs'));
      assert.match(await needs.innerText(), /weather: missing api_key/);
      await shot(page, 'tool-config-missing');
      // Set it through the Config Center page, from the Details page's link.
      await needs.getByRole('link', { name: 'set it in the Config Center' }).click();
      await visible(page.getByRole('heading', { name: 'Config Center', level: 1 }));
      await page.getByText('Add an entry to weather').click();
      const entry = page.getByRole('form', { name: 'New entry for weather' });
      await entry.getByLabel(/api.?key/i).first().fill('wx-123');
      await entry.getByRole('button', { name: 'Add entry' }).click();
      await until('the key to be stored', async () => (await rest('GET', '/custom-tools/weather_now')).json.data.missingConfig === undefined);
      // Back to the tool's Details (by its address: how many history entries the Config
      // Center's forms add is not what this step checks).
      await page.goto(`${BASE}/#/tools/${stored.id}`);
      await visible(page.getByRole('heading', { name: 'weather_now', level: 1 }));
      assert.match(await (await visible(page.locator('.config-needs'))).innerText(), /weather: set/);
      await page.getByRole('tab', { name: 'Test' }).click();
      await page.getByRole('button', { name: 'Run' }).click();
      await visible(page.getByText('Succeeded'));
      assert.match(await page.locator('pre.output').innerText(), /"configured": true/);
      // An edit keeps the declaration (and can drop it).
      await page.getByRole('link', { name: 'Edit' }).click();
      assert.equal(await page.getByLabel('Service 1 name').inputValue(), 'weather');
      audited.push(['editor-services', `#/tools/${stored.id}/edit`], ['tool-config', `#/tools/${stored.id}`]);
    });

    await step('a half-written tool in New tool survives the server going away and coming back', async () => {
      await page.goto(`${BASE}/#/tools/new`);
      await visible(page.getByRole('heading', { name: 'New tool' }));
      await page.getByLabel('Name', { exact: true }).fill('half_written');
      await page.getByLabel('Description').fill('Not saved yet');
      // The live feed cannot reach the server for a while (as in a restart), then can again.
      const feed = `${BASE}/api/v1/changes`;
      const seen = pageErrors.length;
      await page.route(feed, (route) => route.abort());
      const banner = page.getByRole('status').filter({ hasText: 'Reconnecting to the server' });
      await visible(banner, 5000);
      await page.unroute(feed);
      await banner.waitFor({ state: 'hidden', timeout: 15000 });
      // The reads refused on purpose are no script errors.
      pageErrors.splice(seen, pageErrors.length - seen, ...pageErrors.slice(seen).filter((e) => !/net::ERR_FAILED/.test(e)));
      // Coming back built New tool again before: the name and description typed were gone.
      assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), 'half_written');
      assert.equal(await page.getByLabel('Description').inputValue(), 'Not saved yet');
    });

    await step('the code editor: highlighting, completion of the sandbox API, a problem marked at its line', async () => {
      await page.goto(`${BASE}/#/tools/new`);
      await visible(page.getByRole('heading', { name: 'New tool' }));
      const code = page.getByLabel('Code (JavaScript function body)');
      await code.fill('');
      await code.focus();
      await page.keyboard.type('const key = utils.getA');
      const list = page.getByRole('listbox', { name: 'Completions' });
      const option = await visible(list.getByRole('option', { name: /utils\.getApiKey\(serviceName\)/ }));
      assert.equal(await option.getAttribute('aria-selected'), 'true');
      assert.equal(await code.getAttribute('aria-activedescendant'), await option.getAttribute('id'));
      await shot(page, 'editor-completion');
      await page.keyboard.press('Enter');
      await list.waitFor({ state: 'hidden' });
      await page.keyboard.type("'weather');");
      await page.keyboard.press('Enter');
      await page.keyboard.type('return { words: ');
      assert.equal(await code.inputValue(), "const key = utils.getApiKey('weather');\nreturn { words: ");
      const layer = page.locator('.code-editor').filter({ has: code }).locator('.ce-highlight');
      assert.deepEqual(await layer.locator('.tok-keyword').allInnerTexts(), ['const', 'return']);
      assert.deepEqual(await layer.locator('.tok-global').allInnerTexts(), ['utils']);
      assert.deepEqual(await layer.locator('.tok-string').allInnerTexts(), ["'weather'"]);
      await page.getByLabel('Name', { exact: true }).fill('broken_tool');
      await page.getByLabel('Description').fill('Does not compile');
      await page.getByRole('button', { name: 'Create tool' }).click();
      const error = await until('an error next to Code', () => fieldError(code));
      assert.match(error, /line \d+/);
      const gutter = page.locator('.code-editor').filter({ has: code }).locator('.ce-gutter');
      assert.deepEqual(await gutter.locator('.ce-line.bad').allInnerTexts(), ['! 2'], 'the problem is marked on the last line, where the code stops');
      await shot(page, 'editor-problem');
      // A command tool's spec: JSON, its command highlighted as shell; an HTTP tool's YAML.
      await page.getByLabel('Kind').selectOption('command');
      await page.getByLabel('Command spec (JSON)').fill('{"command": "printf \'%s\' {{.phrase}} | wc -w", "timeoutSeconds": 10}');
      const spec = page.locator('.code-editor').filter({ has: page.getByLabel('Command spec (JSON)') }).locator('.ce-highlight');
      await until('the shell highlighted', async () => (await spec.locator('.tok-global').allInnerTexts()).includes('{{.phrase}}'));
      assert.ok((await spec.locator('.tok-key').allInnerTexts()).includes('printf'));
      assert.ok((await spec.locator('.tok-key').allInnerTexts()).includes('wc'));
      await page.getByLabel('Kind').selectOption('http');
      const yaml = page.locator('.code-editor.lang-yaml .ce-highlight');
      await until('the YAML highlighted', async () => (await yaml.locator('.tok-key').allInnerTexts()).some((t) => t.includes('endpoint')));
      audited.push(['editor-code', '#/tools/new']);
    });

    await step('the diff shows the changes with their context, not the whole document', async () => {
      const body = Array.from({ length: 40 }, (_, i) => `const v${i} = ${i};`).join('\n');
      const made = await rest('POST', '/custom-tools', { name: 'long_tool', description: 'Forty lines', parameters: { type: 'object', properties: {} }, code: `${body}\nreturn v39;` });
      assert.equal(made.status, 201, JSON.stringify(made.json));
      await page.goto(`${BASE}/#/tools/${made.json.data.id}`);
      await page.getByRole('link', { name: 'Edit' }).click();
      const code = page.getByLabel('Code (JavaScript function body)');
      await code.fill((await code.inputValue()).replace('const v20 = 20;', 'const v20 = 2000;'));
      await page.getByRole('button', { name: 'Save changes' }).click();
      await visible(page.getByText('version 2 · revision 2'));
      await page.getByRole('tab', { name: 'History' }).click();
      await page.getByLabel('From version').selectOption('1');
      await page.getByLabel('To version').selectOption('2');
      await page.getByRole('button', { name: 'Show diff' }).click();
      const diff = await visible(page.getByLabel('Diff of version 1 and version 2'));
      const text = await diff.innerText();
      await visible(page.getByText('Version 1 → version 2: 1 line added, 1 removed, in 1 place.'));
      assert.match(text, /@@ -\d+,7 \+\d+,7 @@ code/);
      assert.match(text, /- const v20 = 20;/);
      assert.match(text, /\+ const v20 = 2000;/);
      for (const near of ['v17', 'v18', 'v19', 'v21', 'v22', 'v23']) assert.match(text, new RegExp(`const ${near} = `), `${near} is context`);
      for (const far of ['v0 ', 'v16 ', 'v24 ', 'v39 ', 'Forty lines']) assert.doesNotMatch(text, new RegExp(`const ${far}|${far}$`, 'm'), `${far.trim()} is not shown`);
      assert.match(text, /⋯ \d+ unchanged lines\n[\s\S]*⋯ \d+ unchanged lines/);
      await shot(page, 'tool-diff');
      audited.push(['tool-diff', `#/tools/${made.json.data.id}?tab=history`]);
    });

    await step('analytics: the whole server over time and per tool, user and agent, as charts; measured with the seeded executions', async () => {
      await page.goto(`${BASE}/#/tools`);
      await page.getByRole('link', { name: 'Analytics' }).click();
      await visible(page.getByRole('heading', { name: 'Analytics', level: 1 }));
      const calls = await visible(page.locator('.stat').filter({ hasText: 'Calls' }).locator('.stat-value'));
      const total = Number((await calls.innerText()).replace(/[^0-9]/g, ''));
      if (seeded) assert.ok(total >= 100000, `the seeded executions are counted: ${total}`);
      else assert.ok(total > 0, 'the calls of the other flows are counted');
      await visible(page.getByRole('img', { name: /^Calls per day: / }));
      await visible(page.getByRole('img', { name: /^Latency per day: p50 up to \d+ ms, p95 up to \d+ ms$/ }));
      await visible(page.getByRole('img', { name: /^Per tool: calls: / }));
      // Every source counts (it said "every call of a custom tool" over a table with built-ins):
      // the catalogue step's calculate call is a row of its own.
      assert.match(await page.locator('main').innerText(), /Every recorded call on this server — of custom tools, built-ins and bridged MCP tools —/);
      await visible(page.getByRole('region', { name: 'Per tool' }).first().getByRole('cell', { name: 'calculate', exact: true }));
      const users = page.getByRole('region', { name: 'Per user' }).first();
      const agents = page.getByRole('region', { name: 'Per agent' }).first();
      if (seeded) {
        for (const who of ['default', 'alice', 'bob']) await visible(users.getByRole('cell', { name: who, exact: true }));
        for (const who of ['planner', 'researcher']) await visible(agents.getByRole('cell', { name: who, exact: true }));
      } else {
        await visible(users.getByRole('cell', { name: 'default', exact: true }));
      }
      // What the caller's own agent runs spent, beside the calls (GET /metrics/agents): none here.
      const spent = await visible(page.getByRole('region', { name: 'Your agent runs: tokens and cost' }));
      assert.match(await spent.innerText(), /No agent run of yours in the period\./);
      await page.getByRole('button', { name: 'Last 24 hours' }).click();
      await visible(page.getByRole('img', { name: /^Calls per hour: / }));
      assert.equal(await page.getByRole('button', { name: 'Last 24 hours' }).getAttribute('aria-pressed'), 'true');
      await shot(page, 'analytics-24h');
      // Load times: five fresh loads, ms after navigation start until the page is interactive.
      const runs = [];
      for (let i = 0; i < 5; i += 1) {
        const p = await context.newPage();
        pages.push(p);
        await p.goto(`${BASE}/#/analytics`);
        await p.waitForFunction(() => performance.getEntriesByName('toolsmith:analytics-interactive').length > 0, null, { timeout: 60000 });
        runs.push(await p.evaluate(() => Object.fromEntries(['fetched', 'rendered', 'interactive']
          .map((k) => [k, performance.getEntriesByName(`toolsmith:analytics-${k}`)[0].startTime]))));
        await p.close();
      }
      const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[2];
      report.analytics = { executions: total, seeded: Boolean(seeded), median: { fetched: median('fetched'), rendered: median('rendered'), interactive: median('interactive') }, runs };
      log(`analytics page with ${total} executions, ms after navigation start (median of 5): ${JSON.stringify(report.analytics.median)}`);
      audited.push(['analytics', '#/analytics']);
    });

    await step('prompts: written in the JSON editor (a problem shown at its field), rendered with arguments, edited, diffed, rolled back, switched off, deleted', async () => {
      await page.goto(`${BASE}/#/tools`);
      await page.getByRole('link', { name: 'Prompts' }).click();
      await visible(page.getByRole('heading', { name: 'Prompts', level: 1 }));
      await visible(page.getByText('No prompts yet. Make one with "New prompt".'));
      await page.getByRole('link', { name: 'New prompt' }).click();
      await visible(page.getByRole('heading', { name: 'New prompt', level: 1 }));
      const definition = page.getByLabel('Definition (JSON)');
      const review = {
        name: 'review',
        title: 'Code review',
        description: 'Reviews code in a language',
        arguments: [
          { name: 'language', description: 'The language', required: true, values: ['rust', 'python'] },
          { name: 'focus', description: 'What to look at first' },
        ],
        messages: [{ role: 'user', content: { type: 'text', text: 'Review this {{ language }} code{% if focus %} for {{ focus }}{% endif %}.' } }],
      };
      // A template that uses an argument no one declared is refused, the reason at the field.
      await definition.fill(JSON.stringify({ ...review, messages: [{ role: 'user', content: { type: 'text', text: 'Hello {{ who }}' } }] }, null, 2));
      await page.getByRole('button', { name: 'Create prompt' }).click();
      assert.match(await until('the refusal at the field', () => fieldError(definition)), /who/);
      await definition.fill(JSON.stringify(review, null, 2));
      await page.getByRole('button', { name: 'Create prompt' }).click();
      await visible(page.getByRole('heading', { name: 'review', level: 1 }));
      const stored = (await rest('GET', '/prompts/review')).json.data;
      assert.equal(stored.createdBy, 'user');
      const args = page.getByRole('region', { name: 'Arguments' });
      assert.match(await args.getByRole('row').filter({ hasText: 'language' }).innerText(), /required\s+The language\s+rust, python/);
      assert.match(await page.getByRole('list', { name: 'Messages' }).innerText(), /user Message 1\s+Review this \{\{ language \}\} code/);
      await shot(page, 'prompt');
      // Preview: rendered with arguments; a missing required one is named.
      await page.getByRole('tab', { name: 'Preview' }).click();
      await page.getByRole('button', { name: 'Render' }).click();
      assert.match(await (await visible(page.getByRole('alert'))).innerText(), /needs the argument language/);
      await page.getByLabel('language (required)').fill('rust');
      await page.getByLabel('focus', { exact: true }).fill('safety');
      await page.getByRole('button', { name: 'Render' }).click();
      const rendered = await visible(page.getByRole('list', { name: 'Rendered messages' }));
      assert.match(await rendered.innerText(), /Review this rust code for safety\./);
      await shot(page, 'prompt-preview');
      // Edited (revision 2), compared with revision 1, rolled back (revision 3).
      await page.getByRole('link', { name: 'Edit' }).click();
      await visible(page.getByRole('heading', { name: 'Edit review', level: 1 }));
      await definition.fill((await definition.inputValue()).replace('Review this', 'Please review this'));
      await page.getByRole('button', { name: 'Save prompt' }).click();
      await visible(page.getByText('revision 2', { exact: true }));
      await page.getByRole('tab', { name: 'History' }).click();
      await page.getByLabel('From revision').selectOption('1');
      await page.getByLabel('To revision').selectOption('2');
      await page.getByRole('button', { name: 'Show diff' }).click();
      const diff = await visible(page.getByLabel('Diff of revision 1 and revision 2'));
      assert.match(await diff.innerText(), /- +"text": "Review this/);
      assert.match(await diff.innerText(), /\+ +"text": "Please review this/);
      await visible(page.getByText('Revision 1 → revision 2: 1 line added, 1 removed, in 1 place.'));
      await shot(page, 'prompt-history');
      await page.getByRole('button', { name: 'Roll back to revision 1' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Roll back' }).click();
      await visible(page.getByText('revision 3', { exact: true }));
      const back = (await rest('GET', '/prompts/review')).json.data;
      assert.equal(back.revision, 3);
      assert.match(back.messages[0].content.text, /^Review this/);
      // Switched off: no longer offered over MCP, kept.
      await page.getByRole('button', { name: 'Disable' }).click();
      await visible(page.locator('.page-head .pill', { hasText: 'Disabled' }));
      assert.equal((await rest('GET', '/prompts/review')).json.data.enabled, false);
      await page.getByRole('button', { name: 'Enable' }).click();
      await visible(page.locator('.page-head .pill', { hasText: 'Enabled' }));
      // Another one deleted, with confirmation.
      const scratch = await rest('POST', '/prompts', { name: 'scratch', messages: [{ role: 'user', content: { type: 'text', text: 'Hi' } }] });
      assert.equal(scratch.status, 201, JSON.stringify(scratch.json));
      await page.goto(`${BASE}/#/prompts`);
      await visible(page.getByRole('link', { name: 'scratch' }));
      await shot(page, 'prompts');
      await page.getByRole('link', { name: 'scratch' }).click();
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete prompt' }).click();
      await visible(page.getByRole('heading', { name: 'Prompts', level: 1 }));
      assert.equal((await rest('GET', '/prompts/scratch')).status, 404);
      audited.push(['prompts', '#/prompts'], ['prompt', `#/prompts/${stored.id}`], ['prompt-history', `#/prompts/${stored.id}?tab=history`], ['prompt-edit', `#/prompts/${stored.id}/edit`]);
    });

    await step('resources: a text, a blob and a template written in the JSON editor, read (the template with variables), downloaded, edited, deleted', async () => {
      await page.goto(`${BASE}/#/tools`);
      await page.getByRole('link', { name: 'Resources' }).click();
      await visible(page.getByRole('heading', { name: 'Resources', level: 1 }));
      await visible(page.getByText('No resources yet. Make one with "New resource".'));
      await page.getByRole('link', { name: 'New resource' }).click();
      await visible(page.getByRole('heading', { name: 'New resource', level: 1 }));
      const definition = page.getByLabel('Definition (JSON)');
      // The form starts from a text resource; a toolsmith: URI is refused at the field.
      const start = JSON.parse(await definition.inputValue());
      assert.equal(start.uri, 'docs://style-guide');
      await definition.fill(JSON.stringify({ ...start, uri: 'toolsmith://mine' }, null, 2));
      await page.getByRole('button', { name: 'Create resource' }).click();
      assert.match(await until('the refusal at the field', () => fieldError(definition)), /toolsmith/);
      await definition.fill(JSON.stringify(start, null, 2));
      await page.getByRole('button', { name: 'Create resource' }).click();
      await visible(page.getByRole('heading', { name: 'style_guide', level: 1 }));
      assert.match(await page.getByLabel('Content of docs://style-guide').innerText(), /# Style\nShort sentences\./);
      const text = (await rest('GET', '/resources/style_guide')).json.data;
      await page.getByRole('link', { name: 'Edit' }).click();
      await definition.fill((await definition.inputValue()).replace('Short sentences.', 'Shorter sentences.'));
      await page.getByRole('button', { name: 'Save resource' }).click();
      await visible(page.getByText(/revision 2,/));
      assert.match(await page.getByLabel('Content of docs://style-guide').innerText(), /Shorter sentences\./);
      await shot(page, 'resource');
      // A blob: its size shown, its bytes downloaded as they are.
      const dot = await rest('POST', '/resources', { name: 'dot', uri: 'img://dot.png', mimeType: 'image/png', blob: 'iVBORwABAv8=' });
      assert.equal(dot.status, 201, JSON.stringify(dot.json));
      await page.goto(`${BASE}/#/resources/${dot.json.data.id}`);
      await visible(page.getByRole('heading', { name: 'dot', level: 1 }));
      await visible(page.getByText('image/png, 8 B'));
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download dot.png' }).click()]);
      assert.equal(download.suggestedFilename(), 'dot.png');
      const saved = join(out, 'dot-download.png');
      await download.saveAs(saved);
      assert.equal(readFileSync(saved).toString('base64'), 'iVBORwABAv8=');
      // A template: made from the list's "New template", read for the variables given.
      await page.goto(`${BASE}/#/resources`);
      await page.getByRole('link', { name: 'New template' }).click();
      await visible(page.getByRole('heading', { name: 'New template', level: 1 }));
      assert.equal(JSON.parse(await definition.inputValue()).uriTemplate, 'shop://orders/{id}');
      await page.getByRole('button', { name: 'Create resource' }).click();
      await visible(page.getByRole('heading', { name: 'order', level: 1 }));
      const template = (await rest('GET', '/resources/order')).json.data;
      await page.getByLabel('id', { exact: true }).fill('42');
      await visible(page.getByText('shop://orders/42', { exact: true }));
      await page.getByRole('button', { name: 'Read', exact: true }).click();
      const content = await visible(page.getByLabel('Content of shop://orders/42'));
      assert.deepEqual(JSON.parse(await content.innerText()), { id: '42', status: 'shipped' });
      await shot(page, 'resource-template');
      // The list, then the blob deleted with confirmation.
      await page.goto(`${BASE}/#/resources`);
      const rows = page.getByRole('region', { name: 'Your resources' }).getByRole('row');
      await until('three resources listed', async () => (await rows.count()) === 4);
      await shot(page, 'resources');
      await page.getByRole('link', { name: 'dot' }).click();
      await page.getByRole('button', { name: 'Delete' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete resource' }).click();
      await visible(page.getByRole('heading', { name: 'Resources', level: 1 }));
      assert.equal((await rest('GET', '/resources/dot')).status, 404);
      audited.push(['resources', '#/resources'], ['resource', `#/resources/${text.id}`], ['resource-template', `#/resources/${template.id}`], ['resource-edit', `#/resources/${text.id}/edit`]);
    });

    report.pageErrors = pageErrors;
    report.external = external;

    await step('every new page: screenshots, layout and axe at 1280 and 390 px, light and dark', async () => {
      const found = { violations: [], problems: [] };
      let audits = 0;
      for (const width of [1280, 390]) {
        const p = await context.newPage();
        pages.push(p);
        await p.setViewportSize({ width, height: 900 });
        for (const theme of ['light', 'dark']) {
          for (const [name, hash] of audited) {
            await p.goto(`${BASE}/${hash}`);
            await p.getByRole('heading', { level: 1 }).first().waitFor();
            await auditPage(p, name, theme, out, report, found);
            audits += 1;
          }
        }
      }
      auditsFound(report, found, audits);
    });

    await step('MCP servers: removed with confirmation', async () => {
      await page.goto(`${BASE}/#/mcp`);
      await page.getByRole('button', { name: 'Remove upstream' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Remove server' }).click();
      await visible(page.getByText('No upstream MCP server yet.'));
      assert.equal((await rest('GET', '/mcp-servers/upstream')).status, 404);
    });

    await step('no external requests, no script errors', async () => {
      assert.deepEqual(external, []);
      const unexpected = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of (401|403|404|409|422)/.test(e));
      assert.deepEqual(unexpected, []);
    });
    return report;
  } finally {
    for (const p of pages) { try { await p.close(); } catch { /* closed */ } }
    for (const c of cleanups) { try { await c(); } catch { /* already gone */ } }
  }
}

// ----- alone -----------------------------------------------------------------------------------

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await alone(({ context, opt, argv }) => {
    if (opt('ui-dir')) UI_DIR = opt('ui-dir');
    return runPages({
      context, bin: opt('bin'), out: opt('out'), python: opt('python', join(here, '.venv/bin/python')),
      fromDisk: argv.includes('--ui-from-disk') || argv.includes('--ui-dir'),
      only: opt('only', null),
      dataDir: opt('pages-data', null),
    });
  });
}
