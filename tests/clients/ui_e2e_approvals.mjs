// The web UI's approval flows and its own pages' layout (issue 36), run by ui_e2e.mjs:
//
//   import { approvalFlows } from './ui_e2e_approvals.mjs';
//   await approvalFlows(t);   // t: { page, context, BASE, bin, step, mcp, rest, visible, until, shot, axeViolations, toolId }
//
// - A call the official Python SDK holds in its own approval form (ui_mcp.py --form hold) is
//   allowed on the Approvals page: the one waiting call runs at once, the form is withdrawn,
//   the approval reads "allowed once: ran".
// - Another is denied there: the client is told who denied it and when, its retry is told the
//   same, no new approval appears, and Executions records `denied`.
// - Executions, Tokens, Approvals and the tool's History and Test tabs at 1280 and 390 px, light
//   and dark: no word split, nothing overflowing (ui_layout.mjs), no axe violation.
// - A server restart: the page shows "Reconnecting to the server…" and comes back by itself,
//   refreshed in place (a typed filter kept).
// - A page whose data comes late never covers the page the person went on to.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { layoutProblems } from './ui_layout.mjs';

/** A loopback port nothing listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => { const { port } = probe.address(); probe.close(() => resolve(port)); });
  });
}

/** `toolsmith serve` on `port` with `dataDir`; resolves once it listens. */
async function serveOn(bin, port, dataDir) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOOLSMITH_') && k !== 'RUST_LOG'));
  env.TOOLSMITH_DATA_DIR = dataDir;
  const child = spawn(bin, ['serve', '--port', String(port)], { env, stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`serve exited (${code})`)));
  });
  return child;
}

/** Lines from a held-form call until `done(lines)` is true. */
async function linesUntil(call, done, timeoutMs = 20000) {
  const lines = [];
  while (!done(lines)) lines.push(await call.next(timeoutMs));
  return lines;
}

const finalOf = (lines) => lines.find((l) => 'final' in l);

export async function approvalFlows(t) {
  const { page, context, BASE, step, mcp, rest, visible, until, shot, axeViolations } = t;

  await step('a call held in its client\'s approval form runs as soon as the UI allows it', async () => {
    await page.goto(`${BASE}/#/approvals`);
    await visible(page.getByRole('heading', { name: 'Approvals', level: 1 }));
    const call = mcp(['call', '--name', 'mcp_greeter', '--args', '{"who": "form"}', '--form', 'hold']);
    const opened = await call.next();
    assert.equal(opened.formOpen, true, JSON.stringify(opened));
    const card = await visible(page.getByRole('listitem').filter({ hasText: opened.approvalId }), 2500);
    // Decided by keyboard, as a person going down the list would.
    await card.getByRole('button', { name: 'Allow once' }).focus();
    await page.keyboard.press('Enter');
    // The page says what happened to the call — it ran (the decision answers "allowed" before
    // the woken call takes it; the page said "not run yet" then) — and the keyboard is not
    // thrown back to the top of the page: the focus is on what is left of the list.
    await visible(page.locator('#toast').getByText('mcp_greeter: allow once — allowed once: ran.'), 10000);
    assert.equal(await page.evaluate(() => document.activeElement && document.activeElement.textContent), 'Waiting (0)');
    // No second call: the one that waits in the form runs, and the form is taken back.
    const lines = await linesUntil(call, (ls) => finalOf(ls) && ls.some((l) => l.formWithdrawn));
    const { final } = finalOf(lines);
    assert.ok(final && !final.isError, JSON.stringify(final));
    assert.match(JSON.stringify(final), /hello form/);
    await call.done();
    const decided = (await rest('GET', `/approvals/${opened.approvalId}`)).json.data;
    assert.equal(decided.status, 'consumed', JSON.stringify(decided));
    await visible(page.getByRole('region', { name: 'Recent decisions' }).getByText('allowed once: ran').first());
  });

  await step('a denial in the UI reaches the waiting call, names who denied, and is final', async () => {
    const call = mcp(['call', '--name', 'mcp_greeter', '--args', '{"who": "nobody"}', '--form', 'hold', '--retry']);
    const opened = await call.next();
    const card = await visible(page.getByRole('listitem').filter({ hasText: opened.approvalId }), 2500);
    await card.getByRole('button', { name: 'Deny' }).click();
    await visible(page.locator('#toast').getByText('mcp_greeter: deny — denied: the call did not run.'));
    const lines = await linesUntil(call, (ls) => ls.some((l) => 'retry' in l));
    const { final } = finalOf(lines);
    assert.ok(final.isError, JSON.stringify(final));
    assert.match(final.text.join(' '), /denied by \S+ at \d{4}-\d\d-\d\dT/);
    const { retry } = lines.find((l) => 'retry' in l);
    assert.ok(retry.isError, JSON.stringify(retry));
    assert.match(retry.text.join(' '), new RegExp(`denied by \\S+ at .*${opened.approvalId}`));
    assert.ok(!lines.some((l) => l.formOpen && l.approvalId !== opened.approvalId), 'the retry opened a new form');
    await call.done();
    await visible(page.getByText('Nothing is waiting for a decision.'));
    const pending = (await rest('GET', '/approvals?status=pending')).json.data.approvals;
    assert.deepEqual(pending, [], 'no new approval after the denial');
    await page.getByRole('link', { name: 'Executions' }).click();
    await page.getByLabel('Status').selectOption('denied');
    const row = await visible(page.getByRole('row').filter({ hasText: 'mcp_greeter' }));
    assert.match(await row.innerText(), /denied/);
    await page.getByLabel('Status').selectOption('');
  });

  await step('the caller filter of Executions applies as you type', async () => {
    await page.goto(`${BASE}/#/executions`);
    await visible(page.getByRole('heading', { name: 'Executions', level: 1 }));
    const rows = () => page.getByRole('row').count();
    await until('executions listed', async () => (await rows()) > 1);
    await page.getByLabel('Caller (agent id)').pressSequentially('no-such-agent', { delay: 20 });
    await visible(page.getByText('No executions match.'));
    await page.getByLabel('Caller (agent id)').fill('');
    await until('every call again', async () => (await rows()) > 1);
  });

  await step('the page reconnects by itself after a server restart, keeping what the person typed', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'toolsmith-ui-restart-'));
    let server = await serveOn(t.bin, port, dataDir);
    const p = await context.newPage();
    try {
      await p.goto(`http://127.0.0.1:${port}/#/executions`);
      await visible(p.getByRole('heading', { name: 'Executions', level: 1 }));
      const caller = p.getByLabel('Caller (agent id)');
      await caller.pressSequentially('no-such-agent', { delay: 20 });
      await visible(p.getByText('No executions match.'));
      // The page's own element: coming back must refresh it in place, not build a new page.
      await caller.evaluate((el) => { el.dataset.before = 'restart'; });
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
      const banner = p.getByRole('status').filter({ hasText: 'Reconnecting to the server' });
      await visible(banner, 5000);
      server = await serveOn(t.bin, port, dataDir);
      await banner.waitFor({ state: 'hidden', timeout: 15000 });
      await visible(p.getByRole('heading', { name: 'Executions', level: 1 }));
      // Came back with the filter as typed, still applied, in the same page (it was rebuilt
      // empty before).
      assert.equal(await caller.inputValue(), 'no-such-agent');
      assert.equal(await caller.getAttribute('data-before'), 'restart');
      await visible(p.getByText('No executions match.'));
    } finally {
      await p.close();
      server.kill('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  await step('a page that loads after the person went on never covers the newer page', async () => {
    const p = await context.newPage();
    try {
      await p.goto(`${BASE}/#/tools`);
      await visible(p.getByRole('heading', { name: 'Tools', level: 1 }));
      // The tool's own read answers late (a loaded server); meanwhile the person opens New tool.
      let released;
      const held = new Promise((resolve) => { released = resolve; });
      let asked;
      const askedSeen = new Promise((resolve) => { asked = resolve; });
      const slow = `${BASE}/api/v1/custom-tools/${t.toolId}`;
      await p.route(slow, async (route) => { asked(); await held; await route.continue(); });
      await p.evaluate((id) => { window.location.hash = `#/tools/${id}`; }, t.toolId);
      await askedSeen;
      await p.evaluate(() => { window.location.hash = '#/tools/new'; });
      await visible(p.getByRole('heading', { name: 'New tool' }));
      released();
      await p.waitForResponse((r) => r.url() === slow);
      await p.waitForTimeout(300);
      // The late answer drew into its own, detached view: New tool is still the page (the
      // tool's page replaced it before).
      assert.deepEqual(await p.locator('main h1').allInnerTexts(), ['New tool']);
      assert.equal(await p.getByRole('tab', { name: 'Details' }).count(), 0);
      await p.unroute(slow);
    } finally {
      await p.close();
    }
  });

  await step('my pages at 1280 and 390 px, light and dark: words whole, nothing overflowing, axe clean', async () => {
    const tool = t.toolId;
    const pages = [
      ['executions', '#/executions'],
      ['tokens', '#/tokens'],
      ['approvals', '#/approvals'],
      ['tool-history', `#/tools/${tool}?tab=history`],
      ['tool-test', `#/tools/${tool}?tab=test`],
    ];
    const found = [];
    for (const width of [1280, 390]) {
      const p = await context.newPage();
      await p.setViewportSize({ width, height: 900 });
      for (const theme of ['light', 'dark']) {
        for (const [name, hash] of pages) {
          await p.goto(`${BASE}/${hash}`);
          await p.getByRole('heading', { level: 1 }).first().waitFor();
          const dark = async () => (await p.getAttribute('html', 'data-theme')) === 'dark';
          if ((await dark()) !== (theme === 'dark')) {
            // The button names the theme it switches to.
            await p.getByRole('button', { name: theme === 'dark' ? 'Dark theme' : 'Light theme' }).click();
          }
          assert.equal(await dark(), theme === 'dark');
          await p.waitForTimeout(200);
          const where = `${name} (${theme}, ${width} px)`;
          found.push(...await layoutProblems(p, where));
          found.push(...await axeViolations(p, where));
          if (name === 'tool-test') {
            await p.getByRole('button', { name: 'Run' }).waitFor();
            assert.doesNotMatch(await p.locator('main').innerText(), /^null/m, `${where}: a literal null`);
          }
          await shot(p, `f-${name}-${theme}`);
        }
      }
      // The theme is kept per browser: leave it to the system's again for the steps after.
      await p.evaluate(() => localStorage.removeItem('toolsmith.theme'));
      await p.close();
    }
    assert.deepEqual(found, [], found.join('\n'));
  });
}
