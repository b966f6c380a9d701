// API tokens (admin): create (the secret is shown once, with a copy button), list, revoke.
// While the server has no token it is open on loopback: creating the first one turns
// authentication on. The page says so before (a confirmation), and this tab then signs in with
// the new token, so the page keeps working instead of meeting 401s.

import { del, get, post, seg, setToken } from '../api.js';
import { checkbox, confirmDialog, field, h, replace, table, toast } from '../dom.js';
import { dateTime } from '../format.js';

const SCOPES = ['tools:read', 'tools:write', 'tools:execute', 'admin'];

export async function render(main, ctx) {
  if (!ctx.can('admin')) {
    replace(main, h('h1', { text: 'Tokens' }), h('p', { class: 'empty', text: 'Managing tokens needs an admin token.' }), ctx.adminElsewhere());
    return null;
  }
  const name = h('input', { type: 'text', autocomplete: 'off' });
  const user = h('input', { type: 'text', autocomplete: 'off', value: ctx.session.userId });
  const agent = h('input', { type: 'text', autocomplete: 'off' });
  // The first token is the one this tab will use: admin by default, so the page keeps working.
  const scopes = SCOPES.map((s) => ({ s, box: checkbox(s, s !== 'admin' || !ctx.session.authRequired) }));
  const fName = field('Token name', name);
  const fUser = field('User', user);
  const fAgent = field('Agent (optional)', agent, 'Requests with this token act as this agent.');
  const scopeErr = h('p', { class: 'field-error', id: 'scopes-error', hidden: true });
  const created = h('div', { 'aria-live': 'polite' });
  const listEl = h('div');
  const form = h('form', { class: 'card', 'aria-labelledby': 'new-token-title' },
    h('h2', { id: 'new-token-title', text: 'New token' }),
    fName.wrap, fUser.wrap, fAgent.wrap,
    h('fieldset', { 'aria-describedby': 'scopes-error' }, h('legend', { text: 'Scopes' }), scopes.map((x) => x.box.wrap), scopeErr),
    h('button', { type: 'submit', class: 'btn primary', text: 'Create token' }));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    for (const f of [fName, fUser, fAgent]) f.error('');
    scopeErr.hidden = true;
    const body = { name: name.value.trim(), userId: user.value.trim(), scopes: scopes.filter((x) => x.box.input.checked).map((x) => x.s) };
    if (agent.value.trim()) body.agentId = agent.value.trim();
    const first = !ctx.session.authRequired;
    if (first && !(await confirmDialog('Turn on authentication?',
      'This is the first token: creating it turns authentication on. From then on every request to this server — this page, REST and MCP clients — needs a token. This tab will sign in with the new one.'
        + (body.scopes.includes('admin') ? '' : ' It has no admin scope, so this page could not manage tokens with it: consider checking admin.'),
      'Create and turn on authentication', false))) return;
    let t;
    try {
      t = await post('/tokens', body);
    } catch (err) {
      const fieldName = err.details && err.details.field;
      if (fieldName === 'scopes') { scopeErr.textContent = err.message; scopeErr.hidden = false; }
      else ({ name: fName, userId: fUser, agentId: fAgent }[fieldName] || fName).error(err.message);
      return;
    }
    const secret = h('input', { type: 'text', readonly: true, value: t.token, class: 'mono', 'aria-label': 'The new token', 'data-wrap': 'anywhere' });
    replace(created, h('div', { class: 'card secret-once', role: 'alert' },
      h('h2', { text: `Token ${t.name} created` }),
      first ? h('p', { text: 'Authentication is now on: every request needs a token. This tab signed in with this one.' }) : null,
      h('p', { text: 'Copy it now: it is shown only this once and cannot be recovered.' }),
      h('div', { class: 'token-value' }, secret,
        h('button', { type: 'button', class: 'btn', text: 'Copy token', onclick: async () => { try { await navigator.clipboard.writeText(secret.value); toast('Copied.'); } catch { secret.select(); toast('Selected: press Ctrl+C to copy.'); } } })),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn', text: 'Done', onclick: () => { replace(created); name.focus(); } }))));
    // The keyboard is on the new token, selected: Ctrl+C copies it.
    secret.focus();
    secret.select();
    name.value = '';
    if (first) {
      setToken(t.token);
      await ctx.refreshSession();
      if (!ctx.can('admin')) {
        replace(listEl, h('p', { class: 'empty', text: 'This tab now uses the new token, which has no admin scope: sign in with an admin token to manage tokens.' }));
        return;
      }
    }
    await load();
  });

  async function revoke(t) {
    if (!(await confirmDialog(`Revoke token ${t.name}?`, 'Requests with it are refused from now on.', 'Revoke token'))) return;
    try {
      await del(`/tokens/${seg(t.id)}`);
      toast(`Token ${t.name} revoked.`);
      await load();
    } catch (err) { toast(err.message, 'error'); }
  }

  async function load() {
    const { tokens } = await get('/tokens');
    replace(listEl, table('Tokens', [
      { label: 'Name', cell: (t) => t.name },
      { label: 'Id', cell: (t) => h('code', { text: t.id }) },
      { label: 'User', cell: (t) => t.userId },
      { label: 'Agent', cell: (t) => t.agentId || '—' },
      { label: 'Scopes', wrap: true, cell: (t) => t.scopes.join(', ') },
      { label: 'Created', cell: (t) => dateTime(t.createdAt) },
      { label: 'Last used', cell: (t) => dateTime(t.lastUsedAt) },
      { label: 'Action', cell: (t) => h('button', { type: 'button', class: 'btn small danger', text: `Revoke ${t.name}`, onclick: () => revoke(t) }) },
    ], tokens, 'No tokens: the server is open on loopback without one. Creating the first token turns authentication on.'));
  }

  replace(main, h('h1', { text: 'Tokens' }), created, form, h('h2', { text: 'Existing tokens' }), listEl);
  await load();
  return null;
}
