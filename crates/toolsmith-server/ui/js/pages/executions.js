// Recent executions of every tool the caller called — custom tools, built-ins and bridged MCP
// tools (the Source column) — filtered by tool, source, status and calling agent. The caller
// filter applies as you type (debounced); live updates add the new calls at the top and leave
// the rows already shown alone. A long error (an approval's text) shows its first line, the
// whole text on demand.

import { allTools, get, seg } from '../api.js';
import { field, h, replace } from '../dom.js';
import { dateTime, ms } from '../format.js';

const STATUSES = ['success', 'error', 'timeout', 'denied', 'rate_limited', 'withheld', 'awaiting_approval', 'expired'];
const SOURCES = [['custom', 'Custom'], ['builtin', 'Built-in'], ['mcp', 'Bridged MCP']];
const SOURCE_LABEL = Object.fromEntries(SOURCES);
const TYPING_MS = 300;
/** Errors longer than this show their start, and the whole text on demand. */
const SHORT_ERROR = 80;

const COLUMNS = [
  { label: 'When', cell: (e) => dateTime(e.createdAt) },
  { label: 'Tool', cell: toolCell },
  { label: 'Source', cell: (e) => SOURCE_LABEL[e.source] || e.source || '—' },
  { label: 'Version', cell: (e) => (e.source && e.source !== 'custom' ? '—' : String(e.toolVersion)) },
  { label: 'Status', cell: (e) => h('span', { class: `pill exec-${e.status}`, text: e.status }) },
  { label: 'Caller', cell: (e) => e.caller || '—' },
  { label: 'Duration', cell: (e) => ms(e.durationMs) },
  { label: 'Error', wrap: true, cell: errorCell },
  { label: 'Conversation', cell: (e) => e.conversationId || '—' },
];

/** A custom tool opens its page; a built-in or bridged tool its catalogue page. */
function toolCell(e) {
  const href = e.source && e.source !== 'custom' ? `#/catalog/${seg(e.toolName)}` : `#/tools/${encodeURIComponent(e.toolId)}`;
  return h('a', { href, text: e.toolName });
}

function errorCell(e) {
  if (!e.error) return '—';
  const text = `${e.errorKind ? `${e.errorKind}: ` : ''}${e.error}`;
  if (text.length <= SHORT_ERROR) return text;
  return h('details', { class: 'clip' },
    h('summary', { text: `${text.slice(0, SHORT_ERROR).trimEnd()}…` }),
    h('p', { text }));
}

function row(e) {
  return h('tr', { 'data-id': e.id }, COLUMNS.map((c) => h('td', { class: c.wrap ? 'wrap' : null }, c.cell(e))));
}

export async function render(main) {
  const [tools, catalogue] = await Promise.all([allTools(), get('/tools')]);
  const others = (source) => catalogue.tools.filter((t) => t.source === source).map((t) => t.name).sort();
  const toolSel = h('select', {}, h('option', { value: '', text: 'All tools' }),
    h('optgroup', { label: 'Custom tools' }, tools.map((t) => h('option', { value: t.id, text: t.name }))),
    h('optgroup', { label: 'Built-in tools' }, others('builtin').map((n) => h('option', { value: n, text: n }))),
    others('mcp').length ? h('optgroup', { label: 'Bridged MCP tools' }, others('mcp').map((n) => h('option', { value: n, text: n }))) : null);
  const sourceSel = h('select', {}, h('option', { value: '', text: 'All sources' }), SOURCES.map(([v, label]) => h('option', { value: v, text: label })));
  const statusSel = h('select', {}, h('option', { value: '', text: 'All statuses' }), STATUSES.map((s) => h('option', { value: s, text: s })));
  const callerInput = h('input', { type: 'search', maxlength: '128', placeholder: 'Any caller', spellcheck: 'false' });
  const out = h('div');
  const summary = h('p', { class: 'muted', 'aria-live': 'polite' });
  let typing = null;
  toolSel.addEventListener('change', () => load(true));
  sourceSel.addEventListener('change', () => load(true));
  statusSel.addEventListener('change', () => load(true));
  callerInput.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => load(true), TYPING_MS);
  });
  callerInput.addEventListener('change', () => { clearTimeout(typing); load(true); });
  replace(main, h('h1', { text: 'Executions' }),
    h('div', { class: 'inline-fields' }, field('Tool', toolSel).wrap, field('Source', sourceSel).wrap, field('Status', statusSel).wrap,
      field('Caller (agent id)', callerInput).wrap),
    summary, out);

  let body = null;
  let asked = 0;
  /** Reads the executions; `fresh` rebuilds the table (new filters), else only new rows are added. */
  async function load(fresh) {
    const q = new URLSearchParams({ limit: '200' });
    if (toolSel.value) q.set('tool', toolSel.value);
    if (sourceSel.value) q.set('source', sourceSel.value);
    if (statusSel.value) q.set('status', statusSel.value);
    if (callerInput.value.trim()) q.set('caller', callerInput.value.trim());
    asked += 1;
    const mine = asked;
    const { executions } = await get(`/executions?${q}`);
    if (mine !== asked) return; // a later filter's answer wins
    summary.textContent = `${executions.length} ${executions.length === 1 ? 'execution' : 'executions'} shown.`;
    if (!executions.length) {
      body = null;
      replace(out, h('p', { class: 'empty', text: 'No executions match.' }));
      return;
    }
    if (fresh || !body) {
      body = h('tbody', {}, executions.map(row));
      replace(out, h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Executions' },
        h('table', {},
          h('caption', { class: 'visually-hidden', text: 'Executions' }),
          h('thead', {}, h('tr', {}, COLUMNS.map((c) => h('th', { scope: 'col', text: c.label })))),
          body)));
      return;
    }
    // Live: the rows shown stay as they are (an open error keeps open); new calls go on top,
    // and rows past the list's length leave.
    const shown = new Map([...body.rows].map((tr) => [tr.dataset.id, tr]));
    const keep = new Set(executions.map((e) => e.id));
    let at = body.firstChild;
    for (const e of executions) {
      const existing = shown.get(e.id);
      if (existing) { at = existing.nextSibling; continue; }
      body.insertBefore(row(e), at);
    }
    for (const [id, tr] of shown) if (!keep.has(id)) tr.remove();
  }

  await load(true);
  return {
    refresh: (what) => (what.usage || what.tools ? load(false) : null),
    destroy: () => clearTimeout(typing),
  };
}
