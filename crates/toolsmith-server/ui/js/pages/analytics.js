// The server-wide analytics (admin): every owner's recorded calls (custom tools, built-ins and
// bridged MCP tools) over a period
// — calls, errors, latency (p50, p95) — over time, and per tool, per user and per agent, as
// charts with the figures in tables beside them, and what the caller's own agent runs spent
// (tokens, cost). REST: GET /api/v1/metrics/server, GET /api/v1/metrics/agents.

import { ApiError, get } from '../api.js';
import { h, replace, table } from '../dom.js';
import { barChart, lineChart, trendChart } from '../chart.js';
import { ms, number, percent } from '../format.js';

const PERIODS = [['24h', 'Last 24 hours'], ['7d', 'Last 7 days'], ['30d', 'Last 30 days']];
const TOP = 10;

export async function render(main, ctx, route) {
  if (!ctx.can('admin')) {
    replace(main, h('h1', { text: 'Analytics' }),
      h('p', { class: 'empty', text: 'The whole server\'s figures are an admin\'s. Each of your tools has its own on its Metrics tab.' }), ctx.adminElsewhere());
    return null;
  }
  let period = PERIODS.some(([p]) => p === route.params.get('period')) ? route.params.get('period') : '7d';
  const body = h('div', { 'aria-live': 'polite', 'aria-busy': 'true' });
  const chips = PERIODS.map(([p, label]) => h('button', {
    type: 'button', class: 'chip', 'aria-pressed': String(p === period), text: label,
    onclick: () => { period = p; for (const c of chips) c.setAttribute('aria-pressed', String(c.textContent === label)); load(); },
  }));
  replace(main,
    h('div', { class: 'page-head' }, h('h1', { text: 'Analytics' })),
    h('p', { class: 'muted', text: 'Every recorded call on this server — of custom tools, built-ins and bridged MCP tools —, whoever made it: calls, errors and latency over time, and per tool, user and agent. Cost is not recorded for tool calls.' }),
    h('div', { role: 'group', 'aria-label': 'Period', class: 'chips' }, chips),
    body);

  function breakdown(title, what, rows, more, empty) {
    const top = rows.slice(0, TOP);
    return h('section', { 'aria-labelledby': `an-${what}` },
      h('h2', { id: `an-${what}`, text: title }),
      top.length ? barChart(top, `${title}: calls`) : null,
      table(title, [
        { label: what === 'tools' ? 'Tool' : what === 'users' ? 'User' : 'Agent', cell: (r) => r.name },
        { label: 'Calls', cell: (r) => number(r.calls) },
        { label: 'Errors', cell: (r) => `${number(r.errors)} (${percent(r.calls ? r.errors / r.calls : 0)})` },
        { label: 'p50', cell: (r) => ms(r.p50Ms) },
        { label: 'p95', cell: (r) => ms(r.p95Ms) },
      ], rows, empty),
      more ? h('p', { class: 'muted', text: `And ${number(more)} more with fewer calls.` }) : null);
  }

  // GET /metrics/agents: the runs of the caller's own user (not the whole server's), per agent.
  function agentRuns(spent) {
    const cost = (r) => (r.cost === null || r.cost === undefined ? '—' : `$${r.cost.toFixed(r.cost < 1 ? 4 : 2)}`);
    return h('section', { 'aria-labelledby': 'an-runs' },
      h('h2', { id: 'an-runs', text: 'Your agent runs: tokens and cost' }),
      h('p', { class: 'muted', text: 'Runs of agents Toolsmith runs for your user (GET /api/v1/metrics/agents). Cost is counted for the runs whose agent names its model\'s price.' }),
      spent.error
        ? h('p', { class: 'error', role: 'alert', text: spent.error })
        : table('Agent runs', [
          { label: 'Agent', cell: (r) => r.name || r.agentId || 'All' },
          { label: 'Runs', cell: (r) => number(r.runs) },
          { label: 'Tokens in', cell: (r) => number(r.inputTokens) },
          { label: 'Tokens out', cell: (r) => number(r.outputTokens) },
          { label: 'Model calls', cell: (r) => number(r.modelCalls) },
          { label: 'Tool calls', cell: (r) => number(r.toolCalls) },
          { label: 'Cost', cell: (r) => `${cost(r)} (${number(r.pricedRuns)} of ${number(r.runs)} priced)` },
        ], spent.agents.length ? [...spent.agents, { ...spent.total, name: 'All' }] : [], 'No agent run of yours in the period.'));
  }

  async function load() {
    body.setAttribute('aria-busy', 'true');
    let m;
    let spent;
    try {
      // What the caller's own agent runs spent (tokens, cost) is read beside the calls; a
      // failure there leaves the rest of the page standing.
      [m, spent] = await Promise.all([
        get(`/metrics/server?period=${period}`),
        get(`/metrics/agents?period=${period}`).catch((e) => ({ error: e instanceof ApiError ? e.message : String(e) })),
      ]);
    } catch (e) {
      replace(body, h('p', { class: 'error', role: 'alert', text: e instanceof ApiError ? e.message : String(e) }));
      body.setAttribute('aria-busy', 'false');
      return;
    }
    performance.mark('toolsmith:analytics-fetched');
    const t = m.totals;
    const hourly = m.bucket === 'hour';
    const labelOf = (b) => (hourly ? `${b.start.slice(5, 10)} ${b.start.slice(11, 13)}:00` : b.start.slice(0, 10));
    const labels = m.overTime.map(labelOf);
    const stat = (label, value) => h('div', { class: 'stat' }, h('span', { class: 'stat-value', text: value }), h('span', { class: 'stat-label', text: label }));
    replace(body,
      h('section', { class: 'stats', 'aria-label': `Totals, ${PERIODS.find(([p]) => p === period)[1].toLowerCase()}` },
        stat('Calls', number(t.calls)),
        stat('Errors', `${number(t.errors)} (${percent(t.calls ? t.errors / t.calls : 0)})`),
        stat('Refused', number(t.refused)),
        stat('p50', ms(t.p50Ms)),
        stat('p95', ms(t.p95Ms)),
        stat('Average', ms(t.avgMs))),
      m.sampled ? h('p', { class: 'muted', text: 'More calls than the analytics read at once: the figures cover the newest of them.' }) : null,
      h('div', { class: 'analytics-grid' },
        h('section', { 'aria-labelledby': 'an-calls' },
          h('h2', { id: 'an-calls', text: `Calls and errors per ${m.bucket}` }),
          h('p', { class: 'legend' }, h('span', {}, h('span', { class: 'key ok' }), 'calls'), h('span', {}, h('span', { class: 'key err' }), 'errors')),
          trendChart(m.overTime.map((b, i) => ({ date: labels[i], executions: b.calls, errors: b.errors })), `Calls per ${m.bucket}`)),
        h('section', { 'aria-labelledby': 'an-latency' },
          h('h2', { id: 'an-latency', text: `Latency per ${m.bucket}` }),
          h('p', { class: 'legend' }, h('span', {}, h('span', { class: 'key p50' }), 'p50'), h('span', {}, h('span', { class: 'key p95' }), 'p95')),
          lineChart(labels, [
            { name: 'p50', cls: 'p50', values: m.overTime.map((b) => b.p50Ms) },
            { name: 'p95', cls: 'p95', values: m.overTime.map((b) => b.p95Ms) },
          ], `Latency per ${m.bucket}`, 'ms'))),
      h('div', { class: 'analytics-grid' },
        breakdown('Per tool', 'tools', m.tools.rows, m.tools.more, 'No calls in the period.'),
        breakdown('Per user', 'users', m.users.rows, m.users.more, 'No calls in the period.'),
        breakdown('Per agent', 'agents', m.agents.rows, m.agents.more, 'No call made by an agent in the period.')),
      agentRuns(spent));
    body.setAttribute('aria-busy', 'false');
    performance.mark('toolsmith:analytics-rendered');
    requestAnimationFrame(() => setTimeout(() => performance.mark('toolsmith:analytics-interactive'), 0));
  }

  await load();
  return null;
}
