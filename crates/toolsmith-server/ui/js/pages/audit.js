// The audit log (admin): who did what to which target, newest first. Values never appear in it.

import { ApiError, get } from '../api.js';
import { field, h, replace, table } from '../dom.js';
import { dateTime } from '../format.js';

export async function render(main, ctx) {
  if (!ctx.can('admin')) {
    replace(main, h('h1', { text: 'Audit log' }), h('p', { class: 'empty', text: 'The audit log needs an admin token.' }), ctx.adminElsewhere());
    return null;
  }
  const actor = h('input', { type: 'text' });
  const action = h('input', { type: 'text', placeholder: 'tool. or tool.update' });
  const out = h('div');
  const form = h('form', { class: 'inline-fields', 'aria-label': 'Filter the audit log' },
    field('Actor', actor).wrap, field('Action', action).wrap,
    h('button', { type: 'submit', class: 'btn', text: 'Filter' }));
  form.addEventListener('submit', (e) => { e.preventDefault(); load(); });
  replace(main, h('h1', { text: 'Audit log' }), form, out);

  async function load() {
    const q = new URLSearchParams({ limit: '200' });
    if (actor.value.trim()) q.set('actor', actor.value.trim());
    if (action.value.trim()) q.set('action', action.value.trim());
    try {
      const { entries } = await get(`/audit?${q}`);
      replace(out, table('Audit entries', [
        { label: 'When', cell: (e) => dateTime(e.at) },
        { label: 'Actor', cell: (e) => `${e.actor} (${e.actorKind})` },
        { label: 'Action', cell: (e) => h('code', { text: e.action }) },
        { label: 'Target', cell: (e) => `${e.targetType} ${e.targetName || ''} ${e.targetId}`.trim() },
        { label: 'Revision', cell: (e) => (e.beforeRevision || e.afterRevision ? `${e.beforeRevision ?? '–'} → ${e.afterRevision ?? '–'}` : '—') },
        { label: 'Details', wrap: true, cell: (e) => (e.details && Object.keys(e.details).length ? h('code', { text: JSON.stringify(e.details) }) : '—') },
      ], entries, 'No entries match.'));
    } catch (e) {
      replace(out, h('p', { class: 'error', role: 'alert', text: e instanceof ApiError ? e.message : String(e) }));
    }
  }

  await load();
  return { refresh: (what) => (what.tools || what.approvals ? load() : null) };
}
