// The built-in tool groups (docs/builtins.md): one switch per group, with what the group holds
// and what it needs (the groups it depends on, why it is off by default), instead of typing the
// policy's JSON. A switch is PUT /api/v1/tool-groups/{id} (admin): the server stores the policy
// with the group switched, and refuses a change that would break a dependency, saying which.

import { ApiError, get, put, seg } from '../api.js';
import { h, redrawKeeping, replace, toast } from '../dom.js';
import { number } from '../format.js';

export async function render(main, ctx) {
  let data = await get('/tool-groups');
  const admin = ctx.can('admin');
  const summary = h('p', { class: 'result-count', role: 'status' });
  const list = h('ul', { class: 'cards grid groups', 'aria-label': 'Tool groups' });

  function names(ids) {
    const byId = new Map(data.groups.map((g) => [g.id, g.name]));
    return ids.map((id) => byId.get(id) || id).join(', ');
  }

  function card(g) {
    const descId = `group-${g.id}-desc`;
    const errorId = `group-${g.id}-error`;
    const box = h('input', {
      type: 'checkbox', role: 'switch', id: `group-${g.id}`, checked: g.enabled, disabled: !admin,
      'aria-describedby': `${descId} ${errorId}`,
    });
    const error = h('p', { class: 'field-error', id: errorId, role: 'alert', hidden: true });
    const dependents = data.groups.filter((o) => o.dependsOn.includes(g.id)).map((o) => o.id);
    const missingTools = g.tools.filter((t) => !g.availableTools.includes(t));
    box.addEventListener('change', async () => {
      const want = box.checked;
      error.hidden = true;
      box.disabled = true;
      try {
        await put(`/tool-groups/${seg(g.id)}`, { enabled: want });
        toast(`${g.name} is ${want ? 'on' : 'off'}: its ${g.availableTools.length} tools are ${want ? 'callable now' : 'gone from every list'}.`);
        data = await get('/tool-groups');
        draw();
        const again = document.getElementById(`group-${g.id}`);
        if (again) again.focus();
      } catch (e) {
        box.checked = !want;
        box.disabled = false;
        error.textContent = e instanceof ApiError ? e.message : String(e);
        error.hidden = false;
      }
    });
    const needs = [];
    if (g.dependsOn.length) needs.push(h('li', {}, `Needs the group${g.dependsOn.length > 1 ? 's' : ''} ${names(g.dependsOn)} on.`));
    if (g.disabledReason) needs.push(h('li', {}, `Off by default: ${g.disabledReason}.`));
    if (dependents.length) needs.push(h('li', {}, `${names(dependents)} ${dependents.length > 1 ? 'need' : 'needs'} it.`));
    if (missingTools.length) needs.push(h('li', {}, `Not in this build: ${missingTools.join(', ')}.`));
    return h('li', { class: `card group-card ${g.enabled ? 'is-on' : 'is-off'}`, 'aria-labelledby': `group-${g.id}-name` },
      h('div', { class: 'card-head' },
        h('h2', { class: 'tool-name', id: `group-${g.id}-name` }, h('label', { for: box.id, text: g.name })),
        h('span', { class: 'switch' }, box,
          h('span', { class: `pill ${g.enabled ? 'status active' : 'status disabled'}`, text: g.enabled ? 'On' : 'Off' }))),
      h('p', { class: 'description', id: descId, text: g.description }),
      h('p', { class: 'meta' },
        h('code', { text: `group:${g.id}` }),
        g.aliases.length ? h('span', { class: 'muted', text: `also ${g.aliases.join(', ')}` }) : null,
        h('span', { class: 'muted', text: `${g.availableTools.length} ${g.availableTools.length === 1 ? 'tool' : 'tools'}` })),
      needs.length ? h('ul', { class: 'needs', 'aria-label': `What ${g.name} needs` }, needs) : null,
      h('details', {},
        h('summary', { text: `Its tools (${g.availableTools.length})` }),
        h('ul', { class: 'builtin-list' }, g.availableTools.map((t) => h('li', {},
          h('a', { href: `#/catalog/${seg(t)}` }, h('code', { text: t })))))),
      error);
  }

  function draw() {
    const s = data.stats;
    summary.textContent = `${number(s.enabled)} of ${number(s.totalGroups)} groups on; ${number(s.enabledTools)} of ${number(s.totalTools)} built-in tools callable.`;
    list.replaceChildren(...data.groups.map(card));
  }

  replace(main,
    h('div', { class: 'page-head' }, h('h1', { text: 'Tool groups' })),
    h('p', { class: 'muted', text: admin
      ? 'Each switch turns a group of built-in tools on or off for every caller (stored in the policy; every instance follows). A group that another needs, or that needs one that is off, says so when switched.'
      : 'Only an admin can switch groups; this is what is on now.' }),
    summary,
    list);
  draw();
  return {
    async refresh() {
      const fresh = await get('/tool-groups');
      // Redrawn with an open "Its tools" list and the focus kept.
      if (JSON.stringify(fresh) !== JSON.stringify(data)) { data = fresh; await redrawKeeping(list, draw); }
    },
  };
}
