// The organisation scope in the web UI (issue 41) in a real browser, against a server of its own
// with authentication on: bob owns a tool of his own, is a viewer of Acme Support and an editor
// of Beta, each owning a tool (made by alice, their owner, through REST). Through the UI only:
// bob signs in and sees his own tool; the "Acting in" switcher offers Personal and his two
// organisations; in Acme he sees Acme's tool only, the header says plainly "Acme Support … as
// viewer", and no write control is offered (no New tool, no Edit, Delete or Move on the tool's
// page; an admin's page says why it is closed); the choice survives a reload (the tab's
// sessionStorage, like the token); in Beta he sees Beta's tool and may write; back to Personal
// he sees his own again. A tool moves to Beta and back ("Move to…", audited). The Organisations
// page lists his organisations with his role, makes a new one (bob its owner), adds a member and
// changes a role; removed from the organisation the tab acts in, the tab goes back to his own
// scope by itself (the live feed), saying so. Every page screenshotted, audited with axe and
// checked for a broken layout at 1280 and 390 px, light and dark.
//
// Run by ui_e2e.mjs (runOrgs, with its browser context). Also runs alone:
//
//   node ui_e2e_orgs.mjs --bin PATH/toolsmith --out DIR [--chromium PATH] [--ui-from-disk]

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alone, auditPage, auditsFound, startServer, uiFromDisk, until, visible } from './ui_e2e_pages.mjs';

const log = (...a) => console.error('[ui_e2e_orgs]', ...a);
const SCOPES = ['tools:read', 'tools:write', 'tools:execute'];

const tool = (name, description) => ({
  name, description, parameters: { type: 'object', properties: { text: { type: 'string' } } }, code: 'return args.text;',
});

/** Runs the flows; returns {steps, screenshots, accessibility, layout}. */
export async function runOrgs({ context, bin, out, fromDisk = false }) {
  const report = { steps: [], screenshots: [] };
  const cleanups = [];
  const pages = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'toolsmith-ui-orgs-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  mkdirSync(out, { recursive: true });
  try {
    const configPath = join(dataDir, 'toolsmith.toml');
    writeFileSync(configPath, '');
    const BASE = await startServer(bin, join(dataDir, 'data'), configPath, cleanups);
    log(`server at ${BASE}`);
    if (fromDisk) await uiFromDisk(context, BASE);
    const rest = async (method, path, body, headers = {}) => {
      const res = await fetch(`${BASE}/api/v1${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, json: await res.json() };
    };
    const ok = (answer, status) => {
      assert.equal(answer.status, status, JSON.stringify(answer.json));
      return answer.json.data;
    };
    // The tokens (the first turns authentication on), then the scene, as alice and bob.
    const tokenOf = async (user, scopes, auth = {}) => ok(await rest('POST', '/tokens', { name: user, userId: user, scopes }, auth), 201).token;
    const admin = await tokenOf('operator', ['admin']);
    const alice = await tokenOf('alice', SCOPES, { authorization: `Bearer ${admin}` });
    const bob = await tokenOf('bob', SCOPES, { authorization: `Bearer ${admin}` });
    const as = (token, org) => ({ authorization: `Bearer ${token}`, ...(org ? { 'x-toolsmith-organization': org } : {}) });
    ok(await rest('POST', '/organizations', { name: 'acme', displayName: 'Acme Support' }, as(alice)), 201);
    ok(await rest('POST', '/organizations', { name: 'beta', displayName: 'Beta' }, as(alice)), 201);
    ok(await rest('PUT', '/organizations/acme/members/bob', { role: 'viewer' }, as(alice)), 201);
    ok(await rest('PUT', '/organizations/beta/members/bob', { role: 'editor' }, as(alice)), 201);
    ok(await rest('POST', '/custom-tools', tool('acme_lookup', 'Looks a customer up'), as(alice, 'acme')), 201);
    ok(await rest('POST', '/custom-tools', tool('beta_report', 'Writes the weekly report'), as(alice, 'beta')), 201);
    ok(await rest('POST', '/custom-tools', tool('bobs_notes', 'Bob\'s own notes'), as(bob)), 201);

    const page = await context.newPage();
    pages.push(page);
    const pageErrors = [];
    const external = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => { if (m.type() === 'error') pageErrors.push(m.text()); });
    page.on('request', (r) => { if (!r.url().startsWith(BASE) && !r.url().startsWith('data:')) external.push(r.url()); });
    const step = async (name, fn) => {
      const t0 = Date.now();
      log(`step: ${name}`);
      try { await fn(); } catch (e) { e.message = `${name}: ${e.message}`; throw e; }
      report.steps.push({ name, ms: Date.now() - t0 });
    };
    const audited = [];
    const cards = page.locator('.tool-card .tool-name');
    const toolNames = async () => (await cards.allInnerTexts()).map((t) => t.trim()).sort();
    const scope = page.getByLabel('Acting in');
    const note = page.locator('#scope-note');

    await step('signed in, a person sees their own tools and a switcher offering their organisations', async () => {
      await page.goto(`${BASE}/#/tools`);
      await page.getByLabel('API token').fill(bob);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await visible(page.getByRole('heading', { name: 'Tools', level: 1 }));
      await until('bob\'s own tool', async () => JSON.stringify(await toolNames()) === JSON.stringify(['bobs_notes']));
      await visible(scope);
      const options = await scope.locator('option').allInnerTexts();
      assert.deepEqual(options, ['Personal', 'Acme Support (viewer)', 'Beta (editor)']);
      assert.equal(await scope.inputValue(), '');
      assert.equal(await note.isHidden(), true, 'no organisation named while acting as himself');
      await visible(page.getByRole('link', { name: 'New tool' }));
    });

    await step('in an organisation as viewer: its tools only, said plainly, and no write control', async () => {
      await scope.selectOption({ label: 'Acme Support (viewer)' });
      await until('Acme\'s tool only', async () => JSON.stringify(await toolNames()) === JSON.stringify(['acme_lookup']));
      assert.match(await note.innerText(), /Organisation Acme Support \(acme\), as viewer: you may read and run what it holds, not change it/);
      assert.equal(await page.getByRole('link', { name: 'New tool' }).count(), 0, 'a viewer is offered New tool');
      await page.getByRole('link', { name: 'acme_lookup' }).click();
      await visible(page.getByRole('heading', { name: 'acme_lookup', level: 1 }));
      for (const control of ['Edit', 'Delete', 'Disable', 'Move to…']) {
        assert.equal(await page.getByRole('main').getByRole('button', { name: control, exact: true }).or(page.getByRole('main').getByRole('link', { name: control, exact: true })).count(), 0, `a viewer is offered ${control}`);
      }
      // What a viewer may do, they do: the tool runs.
      await page.getByRole('tab', { name: 'Test' }).click();
      await page.getByLabel('text').fill('hello acme');
      await page.getByRole('button', { name: 'Run' }).click();
      await visible(page.getByText('Succeeded'));
      audited.push(['org-tool', new URL(page.url()).hash]);
      // An admin's page says why it is closed here, and where it opens.
      await page.getByRole('link', { name: 'Audit log' }).click();
      await visible(page.getByText('This tab acts in Acme Support, where no one holds the admin scope', { exact: false }));
      // The choice is the tab's: a reload keeps it (sessionStorage, like the token).
      await page.goto(`${BASE}/#/tools`);
      await page.reload();
      await until('Acme\'s tool after a reload', async () => JSON.stringify(await toolNames()) === JSON.stringify(['acme_lookup']));
      assert.equal(await scope.locator('option:checked').innerText(), 'Acme Support (viewer)');
      audited.push(['org-tools', '#/tools']);
    });

    await step('in another organisation as editor: its tools, and writing offered; back to Personal shows his own', async () => {
      await scope.selectOption({ label: 'Beta (editor)' });
      await until('Beta\'s tool only', async () => JSON.stringify(await toolNames()) === JSON.stringify(['beta_report']));
      assert.match(await note.innerText(), /Organisation Beta \(beta\), as editor: you may read, run and change what it holds/);
      await visible(page.getByRole('link', { name: 'New tool' }));
      await page.getByRole('link', { name: 'beta_report' }).click();
      await visible(page.getByRole('main').getByRole('link', { name: 'Edit', exact: true }));
      // A page of one thing belongs to its scope: switching lands on the list.
      await scope.selectOption({ label: 'Personal' });
      await visible(page.getByRole('heading', { name: 'Tools', level: 1 }));
      await until('bob\'s own tool again', async () => JSON.stringify(await toolNames()) === JSON.stringify(['bobs_notes']));
      assert.equal(await note.isHidden(), true);
      // And the server saw each scope: the tool written in Beta is Beta's, not bob's.
      const own = ok(await rest('GET', '/custom-tools', undefined, as(bob)), 200);
      assert.deepEqual(own.tools.map((t) => t.name), ['bobs_notes']);
    });

    await step('a tool moved from his own to an organisation he edits in, and back', async () => {
      await page.getByRole('link', { name: 'bobs_notes' }).click();
      await page.getByRole('button', { name: 'Move to…' }).click();
      const dialog = page.getByRole('dialog');
      // Only where he may write: Beta (editor), not Acme (viewer).
      assert.deepEqual(await dialog.getByLabel('Move to').locator('option').allInnerTexts(), ['Beta (editor)']);
      await dialog.getByRole('button', { name: 'Move tool' }).click();
      await visible(page.getByRole('heading', { name: 'Tools', level: 1 }));
      await until('his own list without it', async () => (await toolNames()).length === 0);
      await scope.selectOption({ label: 'Beta (editor)' });
      await until('Beta holding it', async () => JSON.stringify(await toolNames()) === JSON.stringify(['beta_report', 'bobs_notes']));
      await page.getByRole('link', { name: 'bobs_notes' }).click();
      await page.getByRole('button', { name: 'Move to…' }).click();
      assert.deepEqual(await dialog.getByLabel('Move to').locator('option').allInnerTexts(), ['Personal (your own)']);
      await dialog.getByRole('button', { name: 'Move tool' }).click();
      await until('Beta without it', async () => JSON.stringify(await toolNames()) === JSON.stringify(['beta_report']));
      await scope.selectOption({ label: 'Personal' });
      await until('his own again', async () => JSON.stringify(await toolNames()) === JSON.stringify(['bobs_notes']));
      // Audited as his moves.
      const moves = ok(await rest('GET', '/audit?action=tool.move', undefined, { authorization: `Bearer ${admin}` }), 200).entries;
      assert.equal(moves.length, 2, JSON.stringify(moves));
      assert.ok(moves.every((e) => e.actor === 'bob'), JSON.stringify(moves));
    });

    await step('the organisations page: his organisations with his role, one made, a member added and their role changed', async () => {
      await page.getByRole('link', { name: 'Organisations' }).click();
      await visible(page.getByRole('heading', { name: 'Organisations', level: 1 }));
      const listed = page.getByRole('region', { name: 'Your organisations' });
      assert.match(await (await visible(listed.getByRole('row').filter({ hasText: 'Acme Support' }))).innerText(), /acme\s+viewer/);
      assert.match(await listed.getByRole('row').filter({ hasText: 'Beta' }).innerText(), /beta\s+editor/);
      audited.push(['organizations', '#/organizations']);
      await page.getByLabel('Name', { exact: true }).fill('Bad Name');
      await page.getByRole('button', { name: 'Create organisation' }).click();
      await until('the bad name refused', async () => (await page.locator('.field-error:not([hidden])').count()) > 0);
      await page.getByLabel('Name', { exact: true }).fill('gamma');
      await page.getByLabel('Display name').fill('Gamma Team');
      await page.getByRole('button', { name: 'Create organisation' }).click();
      await visible(page.getByRole('heading', { name: 'Gamma Team', level: 1 }));
      await visible(page.getByText('gamma · your role: owner', { exact: false }));
      // The switcher offers it at once.
      await until('Gamma in the switcher', async () => (await scope.locator('option').allInnerTexts()).includes('Gamma Team (owner)'));
      await page.getByLabel('User id').fill('alice');
      await page.getByLabel('Role', { exact: true }).selectOption('viewer');
      await page.getByRole('button', { name: 'Add member' }).click();
      const members = page.getByRole('region', { name: 'Members of gamma' });
      await visible(members.getByRole('row').filter({ hasText: 'alice' }));
      await members.getByLabel('Role of alice').selectOption('editor');
      await until('alice made editor', async () => {
        const m = ok(await rest('GET', '/organizations/gamma/members', undefined, as(alice)), 200);
        return m.members.some((x) => x.userId === 'alice' && x.role === 'editor');
      });
      await visible(members.getByRole('row').filter({ hasText: 'bob (you)' }));
      assert.equal(await members.getByLabel('Role of bob').inputValue(), 'owner');
      audited.push(['organization', '#/organizations/gamma']);
      // Act in it from its page: the header says so.
      await page.getByRole('button', { name: 'Act in Gamma Team' }).click();
      await until('acting in Gamma', async () => /Organisation Gamma Team \(gamma\), as owner/.test(await note.innerText()));
    });

    await step('removed from the organisation the tab acts in: back to his own scope, told why', async () => {
      await scope.selectOption({ label: 'Acme Support (viewer)' });
      await page.getByRole('link', { name: 'Tools', exact: true }).click();
      await until('Acme\'s tool', async () => JSON.stringify(await toolNames()) === JSON.stringify(['acme_lookup']));
      ok(await rest('DELETE', '/organizations/acme/members/bob', undefined, as(alice)), 200);
      // The live feed's next read (a second) is refused: the tab notices without a reload.
      await visible(page.getByText('You are no longer a member of the organisation this tab acted in', { exact: false }));
      await until('bob\'s own tool', async () => JSON.stringify(await toolNames()) === JSON.stringify(['bobs_notes']));
      assert.deepEqual(await scope.locator('option').allInnerTexts(), ['Personal', 'Beta (editor)', 'Gamma Team (owner)']);
    });

    await step('every organisation page: screenshots, layout and axe at 1280 and 390 px, light and dark', async () => {
      const found = { violations: [], problems: [] };
      let audits = 0;
      for (const width of [1280, 390]) {
        const p = await context.newPage();
        pages.push(p);
        await p.setViewportSize({ width, height: 900 });
        // A tab of its own: signed in, acting in Beta (an organisation is named in the header).
        await p.goto(`${BASE}/#/tools`);
        // Once the page has asked for a token (it forgets one refused meanwhile), this tab's.
        await p.getByLabel('API token').waitFor();
        await p.evaluate(([token]) => { sessionStorage.setItem('toolsmith.token', token); }, [bob]);
        for (const theme of ['light', 'dark']) {
          for (const [name, hash] of audited) {
            const org = name === 'org-tool' || name === 'org-tools' ? 'beta' : null;
            await p.evaluate((id) => { if (id) sessionStorage.setItem('toolsmith.organization', id); else sessionStorage.removeItem('toolsmith.organization'); }, org);
            // The tool audited was Acme's, which bob left: Beta's stands in for it.
            await p.goto(`${BASE}/${name === 'org-tool' ? '#/tools' : hash}`);
            await p.reload();
            if (name === 'org-tool') await p.getByRole('link', { name: 'beta_report' }).click();
            await p.getByRole('heading', { level: 1 }).first().waitFor();
            if (org) await p.locator('#scope-note').waitFor();
            await auditPage(p, name, theme, out, report, found);
            audits += 1;
          }
        }
      }
      auditsFound(report, found, audits);
    });

    await step('no external requests, no script errors', async () => {
      assert.deepEqual(external, []);
      const unexpected = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of (401|404|422)/.test(e));
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
  await alone(({ context, opt, argv }) => runOrgs({ context, bin: opt('bin'), out: opt('out'), fromDisk: argv.includes('--ui-from-disk') }));
}
