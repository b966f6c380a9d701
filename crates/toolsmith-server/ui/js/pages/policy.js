// The policy in force (docs/policy.md): read it; admins replace or clear the stored one.

import { ApiError, del, get, put } from '../api.js';
import { confirmDialog, field, h, replace, toast } from '../dom.js';
import { codeBlock } from '../highlight.js';
import { dateTime, json } from '../format.js';

export async function render(main, ctx) {
  let view;
  try {
    view = await get('/policies');
  } catch (e) {
    if (e instanceof ApiError && e.status === 403) {
      replace(main, h('h1', { text: 'Policy' }), h('p', { class: 'empty', text: `Only an admin can see the policy: ${e.message}.` }));
      return null;
    }
    throw e;
  }
  const source = { store: 'stored (set through the API or CLI)', file: 'the configuration file', none: 'none: every tool is allowed' };
  const editor = h('textarea', { rows: '14', class: 'mono', spellcheck: 'false', value: view.policy ? json(view.policy) : '{\n  "profile": "full"\n}' });
  const f = field('Policy (JSON)', editor, 'Profiles, groups, allow, deny, also_allow, per-user and per-agent rules (docs/policy.md).');
  const summary = h('div', { 'aria-live': 'assertive' });
  const form = h('form', { 'aria-label': 'Edit the policy' }, summary, f.wrap,
    h('div', { class: 'actions' },
      h('button', { type: 'submit', class: 'btn primary', text: 'Save policy' }),
      view.source === 'store' ? h('button', { type: 'button', class: 'btn danger', text: 'Clear stored policy', onclick: clear }) : null));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    f.error('');
    let policy;
    try { policy = JSON.parse(editor.value); } catch (err) { f.error(`Not valid JSON: ${err.message}`); editor.focus(); return; }
    try {
      await put('/policies', { policy, expectedRevision: view.revision });
      toast('Policy saved; it is in force now.');
      await render(main, ctx);
    } catch (err) {
      f.error(err.code === 'revision_conflict' ? 'Someone changed the policy meanwhile; reload the page to see it.' : err.message);
      editor.focus();
    }
  });
  async function clear() {
    if (!(await confirmDialog('Clear the stored policy?', 'The configuration file\'s policy (or none) is in force again.', 'Clear policy'))) return;
    try {
      await del('/policies', { expectedRevision: view.revision });
      toast('Stored policy cleared.');
      await render(main, ctx);
    } catch (err) { replace(summary, h('p', { class: 'error', role: 'alert', text: err.message })); }
  }
  replace(main, h('h1', { text: 'Policy' }),
    h('p', {}, `Source: ${source[view.source] || view.source}`, view.revision ? ` · revision ${view.revision}` : '',
      view.updatedBy ? ` · updated by ${view.updatedBy} ${dateTime(view.updatedAt)}` : ''),
    h('h2', { text: 'In force' }),
    view.policy ? codeBlock(json(view.policy), 'json', 'The policy in force') : h('p', { class: 'empty', text: 'No policy: every tool is allowed.' }),
    ctx.can('admin') ? [h('h2', { text: 'Edit' }), form] : null);
  return null;
}
