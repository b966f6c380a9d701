// Recent executions of the caller's tools, filtered by tool, status and calling agent.

import { allTools, get } from '../api.js';
import { field, h, replace, table } from '../dom.js';
import { dateTime, ms } from '../format.js';

const STATUSES = ['success', 'error', 'timeout', 'denied', 'rate_limited'];

export async function render(main) {
  const tools = await allTools();
  const toolSel = h('select', {}, h('option', { value: '', text: 'All tools' }), tools.map((t) => h('option', { value: t.id, text: t.name })));
  const statusSel = h('select', {}, h('option', { value: '', text: 'All statuses' }), STATUSES.map((s) => h('option', { value: s, text: s })));
  const callerInput = h('input', { type: 'search', maxlength: '128', placeholder: 'Any caller', spellcheck: 'false' });
  const out = h('div');
  toolSel.addEventListener('change', load);
  statusSel.addEventListener('change', load);
  callerInput.addEventListener('change', load);
  replace(main, h('h1', { text: 'Executions' }),
    h('div', { class: 'inline-fields' }, field('Tool', toolSel).wrap, field('Status', statusSel).wrap,
      field('Caller (agent id)', callerInput).wrap),
    out);

  async function load() {
    const q = new URLSearchParams({ limit: '200' });
    if (toolSel.value) q.set('tool', toolSel.value);
    if (statusSel.value) q.set('status', statusSel.value);
    if (callerInput.value.trim()) q.set('caller', callerInput.value.trim());
    const { executions } = await get(`/executions?${q}`);
    replace(out, table('Executions', [
      { label: 'When', cell: (e) => dateTime(e.createdAt) },
      { label: 'Tool', cell: (e) => h('a', { href: `#/tools/${encodeURIComponent(e.toolId)}`, text: e.toolName }) },
      { label: 'Version', cell: (e) => String(e.toolVersion) },
      { label: 'Status', cell: (e) => h('span', { class: `pill exec-${e.status}`, text: e.status }) },
      { label: 'Caller', cell: (e) => e.caller || '—' },
      { label: 'Duration', cell: (e) => ms(e.durationMs) },
      { label: 'Error', cell: (e) => (e.error ? `${e.errorKind ? `${e.errorKind}: ` : ''}${e.error}` : '—') },
      { label: 'Conversation', cell: (e) => e.conversationId || '—' },
    ], executions, 'No executions match.'));
  }

  await load();
  return { refresh: (what) => (what.tools ? load() : null) };
}
