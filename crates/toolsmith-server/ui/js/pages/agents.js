// Agents Toolsmith runs (issue 37): your agent definitions with what their runs spent, one
// agent's definition (edited as JSON, the body of PUT /api/v1/agents/{id}) and its runs, a
// run started from the page, and one run with every step (each model turn with its text, tool
// calls and tokens; each tool call and result; approvals, retries, errors), its tokens, cost
// and duration, cancelled from the page. A run that has not ended is read again every second
// until it ends (live, like the Executions page).
//
//   #/agents               the list, usage totals, "New agent"
//   #/agents/new           the definition form
//   #/agents/{id}          one agent: its definition, Edit, Delete, Start a run, your runs of
//                          it, and the runs it started (its delegations, the teammates its
//                          messages woke, its sessions' runs: GET /api/v1/agent-runs as it)
//   #/agents/{id}/edit     the definition form for it
//   #/agents/{id}/runs/{r} one run with its steps (?by={agent}: a run that agent started — a
//                          delegation's, a woken teammate's —, read as it: only the starter
//                          sees a run)
//   #/agents/teams/{id}    a team's board (issue 38): its members, task list and messages (read-only)
//   #/agents/delegations   the delegations between your agents (issue 38): who asked whom, what, how it ended

import { ApiError, del, get, post, put, seg } from '../api.js';
import { confirmDialog, field, h, replace, table, toast } from '../dom.js';
import { dateTime, json, number } from '../format.js';

const LIVE_MS = 1000;
const ENDED = ['completed', 'failed', 'cancelled'];

const TEMPLATE = {
  name: 'helper',
  displayName: 'Helper',
  instructions: 'You answer questions. Use your tools.',
  model: { service: 'openai', model: 'gpt-4o-mini', price: { inputPerMillion: 0.15, outputPerMillion: 0.6 } },
  toolPolicy: { allow: ['group:core'] },
  contextFiles: [],
  limits: { maxIterations: 20, wallTimeSecs: 600, maxConcurrentRuns: 4 },
};

/** Dollars, to the cent or finer for small sums; '—' when not known. */
function dollars(cost) {
  if (typeof cost !== 'number') return '—';
  if (cost === 0) return '$0';
  return cost >= 0.01 ? `$${cost.toFixed(2)}` : `$${cost.toPrecision(2)}`;
}

function seconds(from, to) {
  const s = (new Date(to).getTime() - new Date(from).getTime()) / 1000;
  return Number.isFinite(s) ? `${s < 10 ? s.toFixed(1) : Math.round(s)} s` : '—';
}

function statusPill(status) {
  const kind = status === 'completed' ? 'exec-success' : status === 'failed' ? 'exec-error' : 'run-live';
  return h('span', { class: `pill ${kind}`, text: status });
}

function errorText(e) {
  return e instanceof ApiError ? e.message : String(e && e.message ? e.message : e);
}

export async function render(main, ctx, { parts, params }) {
  const [, id, third, run] = parts;
  if (id === 'teams' && third) return teamBoard(main, third);
  if (id === 'delegations') return delegations(main);
  if (id === 'new') return form(main, ctx, null);
  if (id && third === 'edit') return form(main, ctx, id);
  if (id && third === 'runs' && run) return runPage(main, ctx, id, run, params && params.get('by'));
  if (id) return agentPage(main, ctx, id);
  return list(main, ctx);
}

// ----- the list ---------------------------------------------------------------------------

async function list(main, ctx) {
  const out = h('div');
  const teamsEl = h('div');
  const totals = h('div', { 'aria-live': 'polite' });
  replace(main, h('h1', { text: 'Agents' }),
    h('p', { class: 'muted', text: 'Agents Toolsmith runs: instructions, a model and the tools they may call. Each run is recorded step by step.' }),
    ctx.can('tools:write') && !ctx.session.agentId
      ? h('div', { class: 'actions' }, h('a', { class: 'btn primary', href: '#/agents/new', text: 'New agent' }))
      : null,
    totals, out,
    h('h2', { text: 'Teams' }), teamsEl,
    h('p', {}, h('a', { href: '#/agents/delegations', text: 'Delegations between your agents' })));

  async function load() {
    const [{ agents }, usage, { teams }] = await Promise.all([get('/agents'), get('/metrics/agents'), get('/teams')]);
    replace(teamsEl, table('Your teams', [
      { label: 'Team', cell: (t) => h('a', { href: `#/agents/teams/${seg(t.id)}`, text: t.name }) },
      { label: 'Lead', cell: (t) => t.lead.name },
      { label: 'Members', wrap: true, cell: (t) => t.members.map((m) => m.name).join(', ') },
      { label: 'Description', wrap: true, cell: (t) => t.description || '—' },
    ], teams, 'No teams yet (a team is made over REST, POST /api/v1/teams, or by an agent).'));
    const byId = new Map(usage.agents.map((u) => [u.agentId, u]));
    const t = usage.total;
    replace(totals, h('p', { class: 'usage-total', text:
      `All runs: ${number(t.runs)} · ${number(t.inputTokens)} input and ${number(t.outputTokens)} output tokens · cost ${dollars(t.cost)}${t.pricedRuns < t.runs && t.runs ? ` (${t.runs - t.pricedRuns} without a price)` : ''}` }));
    replace(out, table('Your agents', [
      { label: 'Name', cell: (a) => h('a', { href: `#/agents/${seg(a.id)}`, text: a.name }) },
      { label: 'Model', cell: (a) => `${a.model.service} / ${a.model.model}` },
      { label: 'Revision', cell: (a) => `${a.revision}${a.writtenByModel ? ' (by a model)' : ''}` },
      { label: 'Runs', cell: (a) => number((byId.get(a.id) || {}).runs || 0) },
      { label: 'Tokens', cell: (a) => number((byId.get(a.id) || {}).totalTokens || 0) },
      { label: 'Cost', cell: (a) => dollars((byId.get(a.id) || {}).cost) },
      { label: 'Changed', cell: (a) => dateTime(a.updatedAt) },
    ], agents, 'No agents yet. Make one with "New agent".'));
  }
  await load();
  return { refresh: (what) => (what.usage ? load() : null) };
}

// ----- the definition form -----------------------------------------------------------------

async function form(main, ctx, id) {
  const agent = id ? await get(`/agents/${seg(id)}`) : null;
  const start = agent
    ? {
      name: agent.name, displayName: agent.displayName, instructions: agent.instructions, model: agent.model,
      toolPolicy: agent.toolPolicy, contextFiles: agent.contextFiles, limits: agent.limits, expectedRevision: agent.revision,
    }
    : TEMPLATE;
  const text = h('textarea', { rows: '22', class: 'mono', spellcheck: 'false', value: json(start) });
  const f = field('Definition (JSON)', text,
    'name, displayName, instructions, model {service, model, price?}, toolPolicy {allow, deny, …}, contextFiles [{name, text}], limits. See docs/agents.md.');
  const title = agent ? `Edit ${agent.name}` : 'New agent';
  const submit = h('button', { type: 'submit', class: 'btn primary', text: agent ? 'Save' : 'Create agent' });
  const formEl = h('form', { class: 'card', 'aria-labelledby': 'agent-form-title' },
    h('h2', { id: 'agent-form-title', text: 'Definition' }), f.wrap,
    h('div', { class: 'actions' }, submit,
      h('a', { class: 'btn', href: agent ? `#/agents/${seg(agent.id)}` : '#/agents', text: 'Cancel' })));
  formEl.addEventListener('submit', async (e) => {
    e.preventDefault();
    f.error('');
    let body;
    try {
      body = JSON.parse(text.value);
    } catch (err) {
      f.error(`Not JSON: ${err.message}`);
      return;
    }
    try {
      const saved = agent ? await put(`/agents/${seg(agent.id)}`, body) : await post('/agents', body);
      toast(agent ? `Saved ${saved.name} (revision ${saved.revision}).` : `Created ${saved.name}.`);
      ctx.navigate(`#/agents/${seg(saved.id)}`);
    } catch (err) {
      f.error(errorText(err));
    }
  });
  replace(main, h('h1', { text: title }), formEl);
  text.focus();
  return null;
}

// ----- one agent ----------------------------------------------------------------------------

async function agentPage(main, ctx, id) {
  const agent = await get(`/agents/${seg(id)}`);
  const runsEl = h('div');
  const startedEl = h('div');
  const input = h('textarea', { rows: '3', spellcheck: 'true' });
  const fInput = field('Task', input, 'What the agent should do: its first message.');
  const startForm = h('form', { class: 'card', 'aria-labelledby': 'start-run-title' },
    h('h2', { id: 'start-run-title', text: 'Start a run' }), fInput.wrap,
    h('button', { type: 'submit', class: 'btn primary', text: 'Start run' }));
  startForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    fInput.error('');
    try {
      const started = await post(`/agents/${seg(agent.id)}/runs`, { input: input.value });
      ctx.navigate(`#/agents/${seg(agent.id)}/runs/${seg(started.id)}`);
    } catch (err) {
      fInput.error(errorText(err));
    }
  });
  const writer = ctx.can('tools:write') && !ctx.session.agentId;
  const actions = h('div', { class: 'actions' },
    writer ? h('a', { class: 'btn', href: `#/agents/${seg(agent.id)}/edit`, text: 'Edit' }) : null,
    writer ? h('button', { type: 'button', class: 'btn danger', text: 'Delete', onclick: async () => {
      if (!(await confirmDialog(`Delete ${agent.name}?`, 'Its definition and revisions go; its runs stay readable.', 'Delete agent'))) return;
      try {
        await del(`/agents/${seg(agent.id)}`);
        toast(`Deleted ${agent.name}.`);
        ctx.navigate('#/agents');
      } catch (err) { toast(errorText(err), 'error'); }
    } }) : null);
  replace(main,
    h('p', {}, h('a', { href: '#/agents', text: '← Agents' })),
    h('h1', { text: agent.displayName || agent.name }),
    h('p', { class: 'muted', text: `${agent.name} · ${agent.model.service} / ${agent.model.model} · revision ${agent.revision}${agent.writtenByModel ? ', written by a model' : ''}` }),
    actions,
    h('details', { class: 'card' }, h('summary', { text: 'Definition' }),
      h('pre', { class: 'code', text: json({
        instructions: agent.instructions, model: agent.model, toolPolicy: agent.toolPolicy,
        contextFiles: agent.contextFiles, limits: agent.limits,
      }) })),
    ctx.can('tools:execute') ? startForm : null,
    h('h2', { text: 'Runs' }), runsEl,
    h('h2', { text: 'Runs it started' }),
    h('p', { class: 'muted', text: `Runs ${agent.name} started: its delegations, the teammates its messages woke, its sessions' runs. Each is read as ${agent.name}, the only one who sees it.` }),
    startedEl);

  // The columns both tables share: the run's task, its turns, tokens, cost and duration.
  const figures = [
    { label: 'Task', wrap: true, cell: (r) => (r.input.length > 80 ? `${r.input.slice(0, 80)}…` : r.input) },
    { label: 'Turns', cell: (r) => String(r.iterations) },
    { label: 'Tokens', cell: (r) => number(r.usage.totalTokens) },
    { label: 'Cost', cell: (r) => dollars(r.usage.cost) },
    { label: 'Duration', cell: (r) => seconds(r.createdAt, r.updatedAt) },
  ];
  async function load() {
    const [{ runs }, { runs: started }, { agents }] = await Promise.all([
      get(`/agents/${seg(agent.id)}/runs?limit=100`),
      get('/agent-runs?limit=100', { agent: agent.id }),
      get('/agents'),
    ]);
    const names = new Map(agents.map((a) => [a.id, a.name]));
    replace(runsEl, table('Runs', [
      { label: 'Started', cell: (r) => h('a', { href: `#/agents/${seg(agent.id)}/runs/${seg(r.id)}`, text: dateTime(r.createdAt) }) },
      { label: 'Status', cell: (r) => statusPill(r.status) },
      ...figures,
    ], runs, 'No runs yet.'));
    replace(startedEl, table('Runs it started', [
      { label: 'Started', cell: (r) => h('a', { href: `#/agents/${seg(r.agentId)}/runs/${seg(r.id)}?by=${seg(agent.id)}`, text: dateTime(r.createdAt) }) },
      { label: 'Agent', cell: (r) => names.get(r.agentId) || r.agentId },
      { label: 'Status', cell: (r) => statusPill(r.status) },
      ...figures,
    ], started, `${agent.name} has started no runs.`));
    return [...runs, ...started].some((r) => !ENDED.includes(r.status));
  }
  let timer = null;
  async function tick() {
    let live = false;
    try { live = await load(); } catch { /* the next tick retries */ }
    timer = live ? setTimeout(tick, LIVE_MS) : null;
  }
  await tick();
  return {
    refresh: (what) => (what.usage && !timer ? tick() : null),
    destroy: () => clearTimeout(timer),
  };
}

// ----- one run ------------------------------------------------------------------------------

function stepView(step) {
  const d = step.detail || {};
  const head = h('p', { class: 'step-head' }, h('span', { class: 'pill', text: step.kind }), ` ${dateTime(step.at)}`);
  let body = null;
  switch (step.kind) {
    case 'model':
      body = h('div', {},
        d.text ? h('p', { class: 'description', text: d.text }) : null,
        (d.toolCalls || []).length
          ? h('ul', {}, d.toolCalls.map((c) => h('li', {}, h('code', { text: c.name }), ' ', h('code', { text: JSON.stringify(c.arguments) }))))
          : null,
        h('p', { class: 'muted', text: `Turn ${d.iteration} · ${number(d.inputTokens)} input, ${number(d.outputTokens)} output tokens` }));
      break;
    case 'tool_call':
      body = h('p', {}, 'Calls ', h('code', { text: d.name }), ' with ', h('code', { text: JSON.stringify(d.arguments) }));
      break;
    case 'tool_result':
      body = h('div', {}, h('p', { text: `${d.name || d.id}: ${d.isError ? 'error' : 'ok'}` }),
        h('pre', { class: 'code', text: typeof d.content === 'string' ? d.content : json(d.content) }));
      break;
    case 'approval':
      body = h('p', {}, 'Waits for a person to decide ', h('code', { text: d.tool || '' }), ' — ',
        h('a', { href: '#/approvals', text: 'Approvals' }));
      break;
    default:
      body = h('pre', { class: 'code', text: json(d) });
  }
  return h('li', { class: `card step step-${step.kind}` }, head, body);
}

async function runPage(main, ctx, agentId, runId, by) {
  const path = `/agents/${seg(agentId)}/runs/${seg(runId)}`;
  // A run one of your agents started (a delegation) is read, and cancelled, as that agent.
  const as = by ? { agent: by } : {};
  const starter = by ? await get(`/agents/${seg(by)}`).then((a) => a.name, () => by) : null;
  const top = h('div', { 'aria-live': 'polite' });
  const stepsEl = h('ol', { class: 'cards list steps', 'aria-label': 'Steps' });
  replace(main,
    h('p', {}, by
      ? h('a', { href: '#/agents/delegations', text: '← Delegations' })
      : h('a', { href: `#/agents/${seg(agentId)}`, text: '← The agent' })),
    h('h1', { text: 'Run' }),
    by ? h('p', { class: 'muted' }, 'Started by your agent ', h('a', { href: `#/agents/${seg(by)}`, text: starter }),
      ' (a delegation, a teammate it woke or a session of it): read as that agent, the only one who sees it.') : null,
    top, h('h2', { text: 'Steps' }), stepsEl);
  let shown = 0;
  async function load() {
    const r = await get(path, as);
    const ended = ENDED.includes(r.status);
    const cancel = !ended && ctx.can('tools:execute')
      ? h('button', { type: 'button', class: 'btn danger', text: 'Cancel run', onclick: async () => {
        if (!(await confirmDialog('Cancel this run?', 'The model request or tool call in flight is stopped; the run stays cancelled.', 'Cancel run'))) return;
        try { await post(`${path}/cancel`, {}, as); toast('Cancelled.'); await tick(); } catch (err) { toast(errorText(err), 'error'); }
      } })
      : null;
    replace(top,
      h('dl', { class: 'details' },
        h('dt', { text: 'Status' }), h('dd', {}, statusPill(r.status)),
        h('dt', { text: 'Task' }), h('dd', { class: 'description', text: r.input }),
        r.output ? [h('dt', { text: 'Answer' }), h('dd', { class: 'description', text: r.output })] : null,
        r.error ? [h('dt', { text: 'Error' }), h('dd', { class: 'description error', text: r.error })] : null,
        h('dt', { text: 'Tokens' }), h('dd', { text: `${number(r.usage.inputTokens)} input, ${number(r.usage.outputTokens)} output (${number(r.usage.totalTokens)})` }),
        h('dt', { text: 'Cost' }), h('dd', { text: dollars(r.usage.cost) }),
        h('dt', { text: 'Calls' }), h('dd', { text: `${r.usage.modelCalls} model, ${r.usage.toolCalls} tool` }),
        h('dt', { text: 'Duration' }), h('dd', { text: seconds(r.createdAt, r.updatedAt) }),
        h('dt', { text: 'Revision' }), h('dd', { text: String(r.agentRevision) })),
      cancel ? h('div', { class: 'actions' }, cancel) : null);
    // Steps only grow: the ones shown stay, new ones are added.
    for (const step of (r.steps || []).slice(shown)) stepsEl.append(stepView(step));
    shown = Math.max(shown, (r.steps || []).length);
    return !ended;
  }
  let timer = null;
  async function tick() {
    clearTimeout(timer);
    let live = false;
    try { live = await load(); } catch (e) { replace(top, h('p', { class: 'error', role: 'alert', text: errorText(e) })); }
    timer = live ? setTimeout(tick, LIVE_MS) : null;
  }
  await tick();
  return { destroy: () => clearTimeout(timer) };
}

// ----- teams and delegations (issue 38, read-only) -------------------------------------------

async function teamBoard(main, id) {
  const board = await get(`/teams/${seg(id)}/board`);
  const team = board.team || {};
  const names = new Map([[team.lead && team.lead.id, team.lead && team.lead.name],
    ...(team.members || []).map((m) => [m.id, m.name])]);
  const who = (agent) => names.get(agent) || agent || '—';
  replace(main,
    h('p', {}, h('a', { href: '#/agents', text: '← Agents' })),
    h('h1', { text: `Team ${team.name}` }),
    team.description ? h('p', { class: 'description', text: team.description }) : null,
    h('p', { class: 'muted', text: `Lead ${team.lead ? team.lead.name : '—'}; members ${(team.members || []).map((m) => m.name).join(', ') || '—'}.` }),
    h('h2', { text: 'Task list' }),
    table('Task list', [
      { label: 'Task', wrap: true, cell: (t) => t.subject },
      { label: 'Status', cell: (t) => h('span', { class: `pill ${t.status === 'completed' ? 'exec-success' : t.status === 'blocked' ? 'exec-error' : 'run-live'}`, text: t.status.replace('_', ' ') }) },
      { label: 'Priority', cell: (t) => String(t.priority ?? '—') },
      { label: 'Claimed by', cell: (t) => who(t.claimedBy) },
      { label: 'Blocked by', cell: (t) => ((t.blocked_by || t.blockedBy || []).length ? (t.blocked_by || t.blockedBy).join(', ') : '—') },
      { label: 'Result', wrap: true, cell: (t) => t.result || '—' },
    ], board.tasks || [], 'No tasks on the board.'),
    h('h2', { text: 'Messages' }),
    table('Messages', [
      { label: 'At', cell: (m) => dateTime(m.at) },
      { label: 'From', cell: (m) => who(m.from) },
      { label: 'To', cell: (m) => (m.broadcast ? 'everyone' : who(m.to)) },
      { label: 'Text', wrap: true, cell: (m) => m.text },
    ], board.messages || [], 'No messages.'));
  return null;
}

async function delegations(main) {
  const [{ delegations: list }, { agents }] = await Promise.all([get('/delegations'), get('/agents')]);
  const names = new Map(agents.map((a) => [a.id, a.name]));
  const who = (id) => names.get(id) || id;
  replace(main,
    h('p', {}, h('a', { href: '#/agents', text: '← Agents' })),
    h('h1', { text: 'Delegations' }),
    h('p', { class: 'muted', text: 'Tasks your agents handed to one another (delegate, handoff, evaluate), newest first.' }),
    table('Delegations', [
      { label: 'Started', cell: (d) => dateTime(d.createdAt) },
      { label: 'From', cell: (d) => who(d.from) },
      { label: 'To', cell: (d) => who(d.to) },
      { label: 'Mode', cell: (d) => d.mode },
      { label: 'Depth', cell: (d) => String(d.depth) },
      { label: 'Status', cell: (d) => statusPill(d.status) },
      { label: 'Task', wrap: true, cell: (d) => d.task },
      { label: 'Outcome', wrap: true, cell: (d) => d.error || d.result || '—' },
      { label: 'Run', cell: (d) => (d.run ? h('a', { href: `#/agents/${seg(d.to)}/runs/${seg(d.run)}?by=${seg(d.from)}`, text: 'the run' }) : '—') },
    ], list, 'No delegations yet.'));
  return null;
}
