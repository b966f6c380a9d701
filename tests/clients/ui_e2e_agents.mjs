// The Agents page of the web UI (issue 37) in a real browser, against a scripted model server
// this file starts: a real HTTP server on 127.0.0.1 speaking OpenAI's Chat Completions, which
// answers each request with the next reply of the script (a call of `calculate`, an answer, or
// no answer at all). Through the UI only (REST sets the scene and checks the outcome): an agent
// created from the definition form; a run started from the page, whose steps (the model's
// turns with their tool calls and tokens, the tool call and its result), tokens, cost and
// status show, live, until it completes; a run cancelled from the page; then every agents page
// screenshotted, audited with axe and checked for a broken layout (ui_layout.mjs) at 1280 and
// 390 px, light and dark.
//
// Run by ui_e2e.mjs (runAgents, with its browser context) on a server of its own, whose
// configuration lets the egress guard reach the model server. Also runs alone:
//
//   node ui_e2e_agents.mjs --bin PATH/toolsmith --out DIR [--chromium PATH] [--ui-from-disk]

import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alone, auditPage, auditsFound, startServer, uiFromDisk, until, visible } from './ui_e2e_pages.mjs';


const log = (...a) => console.error('[ui_e2e_agents]', ...a);

/** The scripted model server: `push(reply)` queues an answer; `seen` every request body. */
async function modelServer(cleanups) {
  const script = [];
  const seen = [];
  const hanging = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      seen.push(JSON.parse(body || 'null'));
      const next = script.shift();
      if (!next) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the test script has no more replies' } }));
      } else if (next === 'hang') {
        hanging.push(res);
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(next));
      }
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => { for (const r of hanging) r.destroy(); server.close(); });
  return { host: `127.0.0.1:${server.address().port}`, push: (r) => script.push(r), seen };
}

const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const callsCalculate = (expression) => ({
  id: 'chatcmpl-1', object: 'chat.completion', usage,
  choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: 'Let me compute.', tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'calculate', arguments: JSON.stringify({ expression }) } }] } }],
});
const answers = (text) => ({
  id: 'chatcmpl-2', object: 'chat.completion', usage,
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: text } }],
});

/** Runs the flows; returns {steps, screenshots, accessibility, layout, …}. */
export async function runAgents({ context, bin, out, fromDisk = false }) {
  const report = { steps: [], screenshots: [] };
  const cleanups = [];
  const pages = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'toolsmith-ui-agents-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  mkdirSync(out, { recursive: true });
  try {
    const model = await modelServer(cleanups);
    const configPath = join(dataDir, 'toolsmith.toml');
    writeFileSync(configPath, `[egress]\nallowed_private_hosts = [${JSON.stringify(model.host)}]\nallow_plain_http = true\n`);
    const BASE = await startServer(bin, join(dataDir, 'data'), configPath, cleanups);
    log(`server at ${BASE}, model server at ${model.host}`);
    if (fromDisk) await uiFromDisk(context, BASE);
    const rest = async (method, path, body, headers = {}) => {
      const res = await fetch(`${BASE}/api/v1${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, json: await res.json() };
    };
    // The provider: a Config Center service of the user.
    assert.equal((await rest('POST', '/config/services', { name: 'local', fields: [
      { name: 'protocol', kind: 'text', required: true }, { name: 'base_url', kind: 'url' }, { name: 'api_key', kind: 'secret' }] })).status, 201);
    assert.equal((await rest('POST', '/config/services/local/entries', { values: {
      protocol: 'openai', base_url: `http://${model.host}/v1`, api_key: 'sk-ui-test' } })).status, 201);

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
    let agentId = null;

    await step('agents: one created from the definition form', async () => {
      await page.goto(`${BASE}/#/agents`);
      await visible(page.getByRole('heading', { name: 'Agents', level: 1 }));
      await visible(page.getByText('No agents yet.'));
      audited.push(['agents-empty', '#/agents']);
      await page.getByRole('link', { name: 'New agent' }).click();
      const definition = await visible(page.getByLabel('Definition (JSON)'));
      audited.push(['agent-new', '#/agents/new']);
      // A definition that breaks a rule is refused beside the field, naming it.
      await definition.fill(JSON.stringify({ name: 'Bad Name', model: { service: 'local', model: 'm' } }));
      await page.getByRole('button', { name: 'Create agent' }).click();
      await visible(page.getByText(/agent name 'Bad Name'/));
      await definition.fill(JSON.stringify({
        name: 'counter', displayName: 'Counter', instructions: 'Compute with your tools, then answer.',
        model: { service: 'local', model: 'test-model', price: { inputPerMillion: 2, outputPerMillion: 10 } },
        toolPolicy: { allow: ['calculate'] },
      }, null, 2));
      await page.getByRole('button', { name: 'Create agent' }).click();
      await visible(page.getByRole('heading', { name: 'Counter', level: 1 }));
      const listed = (await rest('GET', '/agents')).json.data;
      assert.equal(listed.count, 1);
      agentId = listed.agents[0].id;
      assert.equal(listed.agents[0].model.price.outputPerMillion, 10);
    });

    await step('a run started from the page: its steps, tokens and cost, live until it completes', async () => {
      model.push(callsCalculate('6*7'));
      model.push(answers('The answer is 42.'));
      await page.getByLabel('Task').fill('What is six times seven?');
      await page.getByRole('button', { name: 'Start run' }).click();
      await visible(page.getByRole('heading', { name: 'Run', level: 1 }));
      await visible(page.getByText('The answer is 42.'), 20000);
      const steps = page.locator('ol.steps > li');
      await until('the four steps: model, tool call, tool result, model', async () => (await steps.count()) === 4);
      const text = await page.getByRole('list', { name: 'Steps' }).innerText();
      assert.match(text, /model[\s\S]*Let me compute\.[\s\S]*calculate/);
      assert.match(text, /Calls calculate with \{"expression":"6\*7"\}/);
      assert.match(text, /42/);
      // The last model turn is a step before the run is marked completed with its totals: the
      // page, read every second while the run lasts, gets there on its own.
      await until('the run to show completed', async () => /completed/.test(await page.locator('dl.details').innerText()));
      const facts = await page.locator('dl.details').innerText();
      assert.match(facts, /20 input, 10 output \(30\)/);
      // 2 turns × (10 × $2 + 5 × $10) per million tokens.
      assert.match(facts, /\$0\.00014/);
      assert.match(facts, /2 model, 1 tool/);
      const run = (await rest('GET', `/agents/${agentId}/runs`)).json.data.runs[0];
      assert.equal(run.status, 'completed');
      audited.push(['agent-run', `#/agents/${agentId}/runs/${run.id}`]);
      // The agent's page lists it; the list shows what the agent spent.
      await page.getByRole('link', { name: '← The agent' }).click();
      const runs = await visible(page.getByRole('region', { name: 'Runs' }));
      assert.match(await runs.innerText(), /completed[\s\S]*30[\s\S]*\$0\.00014/);
      audited.push(['agent', `#/agents/${agentId}`]);
      await page.getByRole('link', { name: '← Agents' }).click();
      const agents = await visible(page.getByRole('region', { name: 'Your agents' }));
      assert.match(await agents.innerText(), /counter[\s\S]*test-model[\s\S]*1[\s\S]*30/);
      assert.match(await page.locator('.usage-total').innerText(), /All runs: 1 · 20 input and 10 output tokens · cost \$0\.00014/);
      audited.push(['agents', '#/agents']);
    });

    await step('a run cancelled from the page stays cancelled', async () => {
      model.push('hang');
      const asked = model.seen.length;
      await page.goto(`${BASE}/#/agents/${agentId}`);
      await page.getByLabel('Task').fill('Think for a long time.');
      await page.getByRole('button', { name: 'Start run' }).click();
      await visible(page.getByRole('heading', { name: 'Run', level: 1 }));
      await until('the model to be asked', async () => model.seen.length > asked);
      await page.getByRole('button', { name: 'Cancel run' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel run' }).click();
      await until('the run to show cancelled', async () => /cancelled/.test(await page.locator('dl.details').innerText()));
      await until('no Cancel button', async () => (await page.getByRole('button', { name: 'Cancel run' }).count()) === 0);
      const runs = (await rest('GET', `/agents/${agentId}/runs`)).json.data.runs;
      assert.equal(runs[0].status, 'cancelled');
      assert.match(runs[0].error, /cancelled by/);
    });

    await step('a team\'s board and the delegations, read from the agents area', async () => {
      const helper = await rest('POST', '/agents', { name: 'checker', instructions: 'Check the answer.', model: { service: 'local', model: 'test-model' } });
      assert.equal(helper.status, 201, JSON.stringify(helper.json));
      const made = await rest('POST', '/teams', { name: 'crew', description: 'Counts and checks', lead: 'counter', members: ['checker'] });
      assert.equal(made.status, 201, JSON.stringify(made.json));
      // The lead posts a task and a message, as its model would, through the team tools (their
      // group is off by default).
      const on = await rest('PUT', '/tool-groups/teams', { enabled: true });
      assert.equal(on.status, 200, JSON.stringify(on.json));
      const asLead = { 'x-toolsmith-agent': agentId };
      const task = await rest('POST', '/tools/team_tasks/execute', { arguments: { action: 'create', subject: 'Count the words', priority: 5 } }, asLead);
      assert.equal(task.status, 200, JSON.stringify(task.json));
      assert.equal(task.json.data.isError, false, JSON.stringify(task.json));
      // The message wakes the teammate: a run of checker, whose model answers; the answer
      // comes back to the lead as a message of its own (nothing here may fail).
      const checkerId = helper.json.data.id;
      model.push(answers('Your count is right: 3 words.'));
      const said = await rest('POST', '/tools/team_message/execute', { arguments: { action: 'send', to: 'checker', text: 'Check my count, please.' } }, asLead);
      assert.equal(said.json.data.isError, false, JSON.stringify(said.json));
      const wokenRun = said.json.data.result.sent[0].run;
      const woken = await until('the teammate\'s run to end', async () => {
        const run = (await rest('GET', `/agents/${checkerId}/runs/${wokenRun}`, undefined, asLead)).json.data;
        return run && ['completed', 'failed', 'cancelled'].includes(run.status) && run;
      });
      assert.equal(woken.status, 'completed', JSON.stringify(woken));
      assert.match(woken.output || '', /Your count is right/);
      await until('the teammate\'s answer on the board', async () => (await rest('GET', `/teams/${made.json.data.id}/board`)).json.data.messages.some((m) => /Your count is right/.test(m.text)));
      await page.goto(`${BASE}/#/agents`);
      const teams = await visible(page.getByRole('region', { name: 'Your teams' }));
      assert.match(await teams.getByRole('row').filter({ hasText: 'crew' }).innerText(), /crew\s+counter\s+checker\s+Counts and checks/);
      await teams.getByRole('link', { name: 'crew' }).click();
      await visible(page.getByRole('heading', { name: 'Team crew', level: 1 }));
      await visible(page.getByText('Lead counter; members checker.'));
      assert.match(await page.getByRole('region', { name: 'Task list' }).getByRole('row').filter({ hasText: 'Count the words' }).innerText(), /Count the words\s+pending\s+5/);
      const messages = await page.getByRole('region', { name: 'Messages' }).innerText();
      assert.match(messages, /counter\s+checker\s+Check my count, please\./);
      assert.match(messages, /checker\s+counter\s+\[teammate:checker\] Your count is right: 3 words\./);
      audited.push(['team-board', `#/agents/teams/${made.json.data.id}`]);
      // A delegation from the lead to its teammate (a person links them; the lead calls
      // delegate, as its model would): listed on the Delegations page, its Run link opens the
      // teammate's run with the answer.
      await page.getByRole('link', { name: '← Agents' }).click();
      await page.getByRole('link', { name: 'Delegations between your agents' }).click();
      await visible(page.getByRole('heading', { name: 'Delegations', level: 1 }));
      await visible(page.getByText('No delegations yet.'));
      const linked = await rest('POST', '/agent-links', { from: 'counter', to: 'checker', description: 'Checks counts' });
      assert.equal(linked.status, 201, JSON.stringify(linked.json));
      assert.equal((await rest('PUT', '/tool-groups/delegation', { enabled: true })).status, 200);
      model.push(answers('Checked: 42 is right.'));
      const delegated = await rest('POST', '/tools/delegate/execute', { arguments: { agent: 'checker', task: 'Check that six times seven is 42.' } }, asLead);
      assert.equal(delegated.json.data.isError, false, JSON.stringify(delegated.json));
      const row = page.getByRole('region', { name: 'Delegations' }).getByRole('row').filter({ hasText: 'Check that six times seven is 42.' });
      await page.reload();
      assert.match(await (await visible(row)).innerText(), /counter\s+checker\s+sync\s+1\s+completed\s+Check that six times seven is 42\.\s+Checked: 42 is right\./);
      await row.getByRole('link', { name: 'the run' }).click();
      await visible(page.getByRole('heading', { name: 'Run', level: 1 }));
      await visible(page.getByText('Checked: 42 is right.'));
      assert.match(await page.locator('dl.details').innerText(), /completed/);
      await visible(page.getByText('Started by your agent counter (a delegation', { exact: false }));
      audited.push(['delegations', '#/agents/delegations'], ['delegation-run', new URL(page.url()).hash]);
    });

    await step('the runs an agent started (the teammate it woke, its delegation) listed on its page and opened', async () => {
      // Before, the person found these only through the Delegations page (and a woken
      // teammate's run nowhere): each is the agent's, read only as it.
      await page.goto(`${BASE}/#/agents/${agentId}`);
      await visible(page.getByRole('heading', { name: 'Runs it started', level: 2 }));
      const started = await visible(page.getByRole('region', { name: 'Runs it started' }));
      const delegation = started.getByRole('row').filter({ hasText: 'Check that six times seven is 42.' });
      const woken = started.getByRole('row').filter({ hasText: 'Check my count, please.' });
      assert.match(await (await visible(delegation)).innerText(), /checker\s+completed/);
      assert.match(await (await visible(woken)).innerText(), /checker\s+completed/);
      assert.equal(await started.getByRole('row').count(), 3, 'a header and the two runs counter started');
      // The person's own runs of counter are not among them: they are in "Runs".
      assert.equal(await page.getByRole('region', { name: 'Runs', exact: true }).getByRole('row').filter({ hasText: 'Check my count' }).count(), 0);
      await woken.getByRole('link').click();
      await visible(page.getByRole('heading', { name: 'Run', level: 1 }));
      await visible(page.getByText('Your count is right: 3 words.'));
      await visible(page.getByText('Started by your agent counter', { exact: false }));
      // The starter's name leads back to its page.
      await page.locator('main p.muted').getByRole('link', { name: 'counter' }).click();
      await visible(page.getByRole('region', { name: 'Runs it started' }));
      // An agent that started nothing says so.
      const checker = (await rest('GET', '/agents/checker')).json.data.id;
      await page.goto(`${BASE}/#/agents/${checker}`);
      await visible(page.getByText('checker has started no runs.'));
    });

    await step('every agents page: screenshots, layout and axe at 1280 and 390 px, light and dark', async () => {
      const found = { violations: [], problems: [] };
      let audits = 0;
      for (const width of [1280, 390]) {
        const p = await context.newPage();
        pages.push(p);
        await p.setViewportSize({ width, height: 900 });
        for (const theme of ['light', 'dark']) {
          for (const [name, hash] of audited) {
            if (name === 'agents-empty') continue;
            await p.goto(`${BASE}/${hash}`);
            await p.getByRole('heading', { level: 1 }).first().waitFor();
            await auditPage(p, name, theme, out, report, found);
            audits += 1;
          }
        }
      }
      auditsFound(report, found, audits);
    });

    await step('no external requests, no script errors', async () => {
      assert.deepEqual(external, []);
      const unexpected = pageErrors.filter((e) => !/Failed to load resource: the server responded with a status of (404|409|422)/.test(e));
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
  await alone(({ context, opt, argv }) => runAgents({ context, bin: opt('bin'), out: opt('out'), fromDisk: argv.includes('--ui-from-disk') }));
}
