// Upstream MCP servers (docs/mcp-bridge.md), admin only: register, edit and remove a server,
// see its status (state, last error, last check — "n s ago", counting on —, calls and errors)
// and the tools it brought, its grants to users and agents, and the access requests waiting for
// a decision.
// REST: /api/v1/mcp-servers…, /api/v1/mcp-grants…, /api/v1/mcp-access-requests….

import { ApiError, del, get, post, put, seg } from '../api.js';
import { checkbox, confirmDialog, field, h, redrawKeeping, replace, since, table, tickSince, toast } from '../dom.js';
import { dateTime, number } from '../format.js';

const STATE_CLASS = { connected: 'status active', connecting: 'status pending_approval', disabled: 'status disabled' };

/** `NAME=value` lines as an object; a line without `=` is an error naming it. */
function pairs(text, what) {
  const out = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf(what === 'headers' ? ':' : '=');
    if (at <= 0) throw new Error(`${what}: "${line}" is not ${what === 'headers' ? 'Name: value' : 'NAME=value'}`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return out;
}
const lines = (text) => text.split('\n').map((l) => l.trim()).filter(Boolean);
const words = (text) => text.split(/[\s,]+/).map((l) => l.trim()).filter(Boolean);

export async function render(main, ctx, route) {
  if (!ctx.can('admin')) {
    replace(main, h('h1', { text: 'MCP servers' }),
      h('p', { class: 'empty', text: 'Only an admin can manage upstream MCP servers. To use one\'s tools, ask an admin for access (POST /api/v1/mcp-access-requests).' }), ctx.adminElsewhere());
    return null;
  }
  const selected = route.parts[1] || null;
  const statusEl = h('div', { 'aria-live': 'polite' });
  const body = h('div');
  replace(main,
    h('div', { class: 'page-head' }, h('h1', { text: 'MCP servers' }),
      h('button', { type: 'button', class: 'btn primary', text: 'Register a server', onclick: () => showForm(null) })),
    h('p', { class: 'muted', text: 'Upstream MCP servers whose tools are bridged into the catalogue (as mcp_<server>_<tool>), every call through the same pipeline, policy and approvals.' }),
    statusEl, body);

  let servers = [];
  let grants = [];
  let requests = [];
  let formOpen = false;

  async function load() {
    const [s, g, r] = await Promise.all([get('/mcp-servers'), get('/mcp-grants'), get('/mcp-access-requests?status=pending')]);
    servers = s.servers;
    grants = g.grants;
    requests = r.requests;
    return g.enforced;
  }

  function serverCard(s) {
    const c = s.config || {};
    const where = c.transport === 'stdio' ? [c.command, ...(c.args || [])].join(' ') : (c.url || '');
    const its = grants.filter((g) => g.server === s.name);
    const asks = requests.filter((r) => r.server === s.name);
    const actions = [];
    if (s.source === 'api') {
      actions.push(h('button', { type: 'button', class: 'btn small', 'aria-label': `Edit ${s.name}`, text: 'Edit', onclick: () => showForm(s) }));
      actions.push(h('button', { type: 'button', class: 'btn small', 'aria-label': `Reconnect ${s.name}`, text: 'Reconnect', onclick: () => retry(s) }));
      actions.push(h('button', { type: 'button', class: 'btn small danger', 'aria-label': `Remove ${s.name}`, text: 'Remove', onclick: () => remove(s) }));
    } else {
      actions.push(h('button', { type: 'button', class: 'btn small', 'aria-label': `Reconnect ${s.name}`, text: 'Reconnect', onclick: () => retry(s) }));
    }
    return h('li', { class: 'card server-card', 'aria-labelledby': `server-${s.name}` },
      h('div', { class: 'card-head' },
        h('h2', { class: 'tool-name', id: `server-${s.name}`, text: s.name }),
        h('span', { class: `pill ${STATE_CLASS[s.state] || 'status rejected'}`, text: s.state })),
      h('dl', { class: 'details' },
        h('dt', { text: 'Transport' }), h('dd', {}, `${c.transport}${c.enabled === false ? ' (disabled)' : ''}`),
        h('dt', { text: c.transport === 'stdio' ? 'Program' : 'URL' }), h('dd', {}, h('code', { text: where })),
        h('dt', { text: 'Source' }), h('dd', { text: s.source === 'api' ? `registered through the API (revision ${s.revision})` : 'the configuration file (changed only there)' }),
        h('dt', { text: 'Last check' }), lastCheck(h('dd', { 'data-last-check': s.name }), s),
        h('dt', { text: 'Last error' }), h('dd', { class: s.lastError ? 'error' : '', text: s.lastError || 'none' }),
        h('dt', { text: 'Calls' }), h('dd', { text: `${number(s.calls)} (${number(s.errors)} failed)` }),
        c.envNames && c.envNames.length ? [h('dt', { text: 'Environment' }), h('dd', { text: c.envNames.join(', ') })] : null),
      h('details', {},
        h('summary', { text: `Tools (${s.toolCount})` }),
        s.tools && s.tools.length
          ? h('ul', { class: 'builtin-list' }, s.tools.map((t) => h('li', {}, h('a', { href: `#/catalog/${seg(t)}` }, h('code', { text: t })))))
          : h('p', { class: 'empty', text: 'No tools yet.' }),
        s.skipped && s.skipped.length ? h('p', { class: 'muted', text: `Left out: ${s.skipped.map((x) => (typeof x === 'string' ? x : x.name || JSON.stringify(x))).join(', ')}` }) : null),
      h('h3', { text: 'Grants' }),
      table(`Grants of ${s.name}`, [
        { label: 'Who', cell: (g) => `${g.subjectKind} ${g.subject}` },
        { label: 'Tools', cell: (g) => `${g.toolAllow.length ? g.toolAllow.join(', ') : 'all'}${g.toolDeny.length ? `; never ${g.toolDeny.join(', ')}` : ''}${g.enabled ? '' : ' (off)'}` },
        { label: 'Action', cell: (g) => h('button', { type: 'button', class: 'btn small danger', 'aria-label': `Remove the grant to ${g.subject}`, text: 'Remove', onclick: () => removeGrant(g) }) },
      ], its, 'No grants: nobody is granted this server\'s tools by name.'),
      grantForm(s),
      asks.length ? [h('h3', { text: `Access requests (${asks.length})` }),
        h('ul', { class: 'entries' }, asks.map((r) => h('li', { class: 'entry' },
          h('p', {}, h('strong', { text: `${r.subjectKind} ${r.subject}` }), ` asks for ${r.tools.length ? r.tools.join(', ') : 'every tool'}`,
            r.reason ? ` — “${r.reason}”` : '', h('span', { class: 'muted' }, ' (', since(r.createdAt), `, by ${r.requestedBy})`)),
          h('div', { class: 'actions' },
            h('button', { type: 'button', class: 'btn small approve', 'aria-label': `Approve the request of ${r.subject}`, text: 'Approve', onclick: () => decide(r, 'approve') }),
            h('button', { type: 'button', class: 'btn small danger', 'aria-label': `Reject the request of ${r.subject}`, text: 'Reject', onclick: () => decide(r, 'reject') })))))] : null,
      h('div', { class: 'card-actions' }, actions));
  }

  /** A server's last check in `dd`: its date and time, and how long ago (ticking). */
  function lastCheck(dd, s) {
    return s.lastCheck ? replace(dd, `${dateTime(s.lastCheck)} (`, since(s.lastCheck), ')') : replace(dd, 'not yet');
  }

  function grantForm(s) {
    const kind = h('select', {}, h('option', { value: 'agent', text: 'agent' }), h('option', { value: 'user', text: 'user' }));
    const subject = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' });
    const allow = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'all' });
    const f = { kind: field('Grant to', kind), subject: field('Who (id)', subject), allow: field('Only these tools', allow) };
    const form = h('form', { class: 'inline-fields', 'aria-label': `Grant ${s.name}'s tools` },
      f.kind.wrap, f.subject.wrap, f.allow.wrap, h('button', { type: 'submit', class: 'btn', text: 'Grant' }));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      f.subject.error('');
      if (!subject.value.trim()) { f.subject.error('Say whom: a user id or an agent id.'); subject.focus(); return; }
      try {
        await post('/mcp-grants', { server: s.name, subjectKind: kind.value, subject: subject.value.trim(), toolAllow: words(allow.value) });
        toast(`${s.name}: granted to ${kind.value} ${subject.value.trim()}.`);
        await draw();
      } catch (err) { f.subject.error(err.message); subject.focus(); }
    });
    return form;
  }

  async function retry(s) {
    try { await post(`/mcp-servers/${seg(s.name)}/retry`); toast(`${s.name}: reconnecting.`); await draw(); } catch (e) { toast(e.message, 'error'); }
  }

  async function remove(s) {
    if (!(await confirmDialog(`Remove ${s.name}?`, 'Its program ends and its tools leave the catalogue. Its grants stay until removed.', 'Remove server'))) return;
    try { await del(`/mcp-servers/${seg(s.name)}`); toast(`${s.name} removed.`); await draw(); } catch (e) { toast(e.message, 'error'); }
  }

  async function removeGrant(g) {
    try { await del(`/mcp-grants/${seg(g.id)}`); toast(`Grant to ${g.subject} removed.`); await draw(); } catch (e) { toast(e.message, 'error'); }
  }

  async function decide(r, decision) {
    try {
      await post(`/mcp-access-requests/${seg(r.id)}/decision`, { decision });
      toast(`Request of ${r.subject} ${decision === 'approve' ? 'approved: the grant is written' : 'rejected'}.`);
      await draw();
    } catch (e) { toast(e.message, 'error'); }
  }

  /** The register / edit form; `s` null registers a new server. */
  function showForm(s) {
    formOpen = true;
    const c = (s && s.config) || { transport: 'stdio', args: [], envNames: [], toolAllow: [], toolDeny: [], enabled: true };
    const name = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: s ? s.name : '', disabled: Boolean(s) });
    const transport = h('select', {}, ['stdio', 'streamable_http', 'sse'].map((t) => h('option', { value: t, text: t, selected: t === c.transport })));
    const command = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: c.command || '' });
    const args = h('textarea', { rows: '3', class: 'mono', spellcheck: 'false', value: (c.args || []).join('\n') });
    const env = h('textarea', { rows: '2', class: 'mono', spellcheck: 'false', value: (c.envNames || []).map((n) => `${n}=`).join('\n') });
    const url = h('input', { type: 'url', autocomplete: 'off', spellcheck: 'false', value: c.url || '' });
    const headers = h('textarea', { rows: '2', class: 'mono', spellcheck: 'false', value: '' });
    const bearer = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: '{{config.<service>.<field>}}' });
    const allow = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: (c.toolAllow || []).join(', ') });
    const deny = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: (c.toolDeny || []).join(', ') });
    const enabled = checkbox('Enabled', c.enabled !== false);
    const f = {
      name: field('Server name', name, 'Lower-case letters, digits, _ or -; its tools are named mcp_<name>_<tool>.'),
      transport: field('Transport', transport),
      command: field('Program', command, 'An absolute path or a name in PATH, among the operator\'s mcp_allowed_commands.'),
      args: field('Arguments (one a line)', args),
      env: field('Environment (NAME=value, one a line)', env, 'Credentials as {{config.<service>.<field>}} references to your Config Center, never in clear.'),
      url: field('URL', url, 'The MCP endpoint (streamable_http) or the SSE stream (sse).'),
      headers: field('Headers (Name: value, one a line)', headers),
      bearer: field('Bearer token (a Config Center reference)', bearer),
      allow: field('Only these upstream tools (empty: all)', allow),
      deny: field('Never these upstream tools', deny),
    };
    const showFor = () => {
      const stdio = transport.value === 'stdio';
      for (const k of ['command', 'args', 'env']) f[k].wrap.hidden = !stdio;
      for (const k of ['url', 'headers', 'bearer']) f[k].wrap.hidden = stdio;
    };
    transport.addEventListener('change', showFor);
    showFor();
    const summary = h('div', { 'aria-live': 'assertive' });
    const title = s ? `Edit ${s.name}` : 'Register a server';
    const form = h('form', { class: 'card editor', 'aria-label': title, novalidate: true },
      h('h2', { text: title }), summary,
      f.name.wrap, f.transport.wrap, f.command.wrap, f.args.wrap, f.env.wrap, f.url.wrap, f.headers.wrap, f.bearer.wrap,
      f.allow.wrap, f.deny.wrap, enabled.wrap,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn', text: 'Cancel', onclick: () => { formOpen = false; draw(); } }),
        h('button', { type: 'submit', class: 'btn primary', text: s ? 'Save server' : 'Register' })));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      for (const x of Object.values(f)) x.error('');
      replace(summary);
      const bodyOut = { transport: transport.value, enabled: enabled.input.checked, toolAllow: words(allow.value), toolDeny: words(deny.value) };
      try {
        if (transport.value === 'stdio') {
          bodyOut.command = command.value.trim();
          bodyOut.args = lines(args.value);
          bodyOut.env = pairs(env.value, 'environment');
        } else {
          bodyOut.url = url.value.trim();
          bodyOut.headers = pairs(headers.value, 'headers');
          if (bearer.value.trim()) bodyOut.bearerToken = bearer.value.trim();
        }
      } catch (err) {
        const which = err.message.startsWith('headers') ? 'headers' : 'env';
        f[which].error(err.message);
        f[which].input.focus();
        return;
      }
      try {
        if (s) {
          await put(`/mcp-servers/${seg(s.name)}`, { ...bodyOut, expectedRevision: s.revision });
          toast(`${s.name} saved; it reconnects.`);
        } else {
          bodyOut.name = name.value.trim();
          await post('/mcp-servers', bodyOut);
          toast(`${bodyOut.name} registered; connecting.`);
        }
        formOpen = false;
        await draw();
      } catch (err) {
        const m = (err.message || '').toLowerCase();
        const target = /name/.test(m) && !s ? 'name' : /url|egress|host/.test(m) ? 'url' : /env/.test(m) ? 'env' : /header/.test(m) ? 'headers' : /bearer|token/.test(m) ? 'bearer' : /program|command|mcp_allowed_commands/.test(m) ? 'command' : null;
        const message = err instanceof ApiError && err.code === 'revision_conflict' ? 'Someone changed this server meanwhile; cancel and open it again.' : err.message;
        if (target && !f[target].wrap.hidden) { f[target].error(message); f[target].input.focus(); }
        replace(summary, h('p', { class: 'error', role: 'alert', text: `Not saved: ${message}` }));
      }
    });
    replace(statusEl, form);
    (s ? transport : name).focus();
  }

  async function draw(known) {
    const enforced = known === undefined ? await load() : known;
    if (!formOpen) replace(statusEl);
    replace(body,
      h('p', { class: 'result-count', text: `${servers.length} ${servers.length === 1 ? 'server' : 'servers'}; grants are ${enforced ? 'enforced (a caller needs one)' : 'not enforced: every caller may use every bridged tool the policy allows'}.` }),
      servers.length
        ? h('ul', { class: 'cards list servers', 'aria-label': 'MCP servers' }, servers.map(serverCard))
        : h('p', { class: 'empty', text: 'No upstream MCP server yet.' }));
    if (selected && known === undefined) {
      const el = document.getElementById(`server-${selected}`);
      if (el) el.scrollIntoView();
    }
  }

  // What a person waits to see change: a server's state, error or tools, a grant, an access
  // request an agent sent. Times ("1 s ago") and counters do not count.
  const signature = () => JSON.stringify([
    servers.map((s) => [s.name, s.state, s.lastError || '', s.toolCount]),
    grants.map((g) => [g.server, g.subject, g.toolAllow, g.enabled]),
    requests.map((r) => r.id)]);
  // Nothing is redrawn under a person's hands: not while a form is open, a grant being typed
  // or the focus inside a card; a Tools list left open stays open.
  const busy = () => formOpen
    || (body.contains(document.activeElement) && document.activeElement.matches('input, select, textarea'))
    || [...body.querySelectorAll('input')].some((i) => i.value);
  /** The focused control, to find again in the redrawn page (by its card, tag and name). */
  const focusKey = () => {
    const a = document.activeElement;
    if (!a || !body.contains(a)) return null;
    const card = a.closest('li[aria-labelledby]');
    return [card && card.getAttribute('aria-labelledby'), a.tagName, a.getAttribute('aria-label') || a.textContent];
  };
  const refocus = (key) => {
    if (!key) return;
    const again = [...body.querySelectorAll(key[1])].find((el) => {
      const card = el.closest('li[aria-labelledby]');
      return (card && card.getAttribute('aria-labelledby')) === key[0] && (el.getAttribute('aria-label') || el.textContent) === key[2];
    });
    if (again) again.focus();
  };

  // A server that is connecting is looked at again each second until it settles; the page is
  // read again every 3 s and redrawn when something a person waits for changed (an access
  // request shows without a reload).
  let timer = null;
  let gone = false;
  let ticks = 0;
  async function watch() {
    timer = null;
    if (gone) return;
    ticks += 1;
    // "12 s ago" counts on between reads (text only: nothing a person holds is touched).
    tickSince(body);
    if (!busy() && (servers.some((s) => s.state === 'connecting') || ticks % 3 === 0)) {
      try {
        const before = signature();
        const open = new Set([...body.querySelectorAll('details[open]')].map((d) => d.closest('li') && d.closest('li').getAttribute('aria-labelledby')));
        const enforced = await load();
        if (!gone && !busy() && signature() !== before) {
          const key = focusKey();
          await draw(enforced);
          for (const d of body.querySelectorAll('details')) if (open.has(d.closest('li') && d.closest('li').getAttribute('aria-labelledby'))) d.open = true;
          refocus(key);
        } else if (!gone) {
          // Nothing to redraw, but a server checked again since shows its new time.
          for (const s of servers) {
            const dd = [...body.querySelectorAll('dd[data-last-check]')].find((el) => el.dataset.lastCheck === s.name);
            const shown = dd && dd.querySelector('time');
            if (dd && (shown ? shown.getAttribute('datetime') : null) !== (s.lastCheck || null)) lastCheck(dd, s);
          }
        }
      } catch { /* the next tick retries */ }
    }
    if (!gone) timer = setTimeout(watch, 1000);
  }
  await draw();
  timer = setTimeout(watch, 1000);
  return {
    // A live update (a call counted, the server back online) redraws the cards with what a
    // person holds in them kept: a half-typed grant, an open Tools list, the focus. The
    // register or edit form above them is not touched.
    async refresh() {
      const enforced = await load();
      if (!gone) await redrawKeeping(body, () => draw(enforced));
    },
    destroy() { gone = true; if (timer) clearTimeout(timer); },
  };
}
