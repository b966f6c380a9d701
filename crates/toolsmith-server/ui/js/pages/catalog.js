// One tool of the catalogue that is not a custom tool: a built-in (compiled into Toolsmith) or
// a tool bridged from an upstream MCP server. Its description, group, annotations and
// parameters, and a Test tab that runs it through the normal REST execute
// (POST /api/v1/tools/{name}/execute), so the policy, approvals and records apply as anywhere.

import { ApiError, get, post, seg } from '../api.js';
import { h, replace, tabs } from '../dom.js';
import { codeBlock } from '../highlight.js';
import { describe, schemaForm } from '../schemaform.js';
import { json } from '../format.js';
import { executionResult } from './tool.js';

const SOURCE_LABELS = { builtin: 'Built-in', mcp: 'Bridged MCP', custom: 'Custom' };
const HINTS = [
  ['readOnlyHint', 'Reads only', 'Changes nothing'],
  ['destructiveHint', 'May delete or overwrite', 'Adds only'],
  ['idempotentHint', 'Same call, same effect', 'Repeating it repeats its effect'],
  ['openWorldHint', 'Reaches outside the server', 'Stays inside the server'],
];

export async function render(main, ctx, route) {
  const name = route.parts[1];
  const { tools } = await get('/tools');
  const tool = tools.find((t) => t.name === name);
  if (!tool) {
    replace(main, h('p', {}, h('a', { href: '#/tools', text: '← All tools' })),
      h('h1', { text: name }),
      h('p', { class: 'error', role: 'alert', text: `No tool '${name}' is callable by you: it does not exist, or its group is off (see Tool groups), or the policy hides it.` }));
    return null;
  }
  if (tool.source === 'custom' && tool.id) { ctx.navigate(`#/tools/${seg(tool.id)}`); return null; }
  let group = null;
  if (tool.source === 'builtin') {
    try { group = (await get(`/tool-groups?tool=${seg(name)}`)).groups[0] || null; } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e;
    }
  }
  const tab = ['details', 'test'].includes(route.params.get('tab')) ? route.params.get('tab') : 'details';

  function details(p) {
    const ann = tool.annotations && typeof tool.annotations === 'object' ? tool.annotations : null;
    const rows = [
      ['Source', SOURCE_LABELS[tool.source] || tool.source],
      ['Group', group ? h('a', { href: '#/groups', text: `${group.name} (group:${group.id})` }) : (tool.category || '—')],
      ['Confirmation', tool.requiresConfirmation ? 'yes: each call waits for a person' : 'no'],
    ];
    if (ann) {
      for (const [key, yes, no] of HINTS) {
        if (typeof ann[key] === 'boolean') rows.push([key, ann[key] ? yes : no]);
      }
      if (ann.title) rows.push(['Title', String(ann.title)]);
    }
    p.append(
      h('p', { class: 'description', text: tool.description }),
      h('dl', { class: 'details' }, rows.map(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)])),
      h('h2', { text: 'Parameters' }),
      describe(tool.parameters),
      h('details', {}, h('summary', { text: 'Parameter schema (JSON)' }), codeBlock(json(tool.parameters), 'json', 'Parameter schema')));
  }

  function test(p) {
    const form = schemaForm(tool.parameters);
    const out = h('div', { 'aria-live': 'polite' });
    const run = h('button', { type: 'submit', class: 'btn primary', text: 'Run' });
    const f = h('form', { class: 'test-form', 'aria-label': 'Test run' }, form.el, run);
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      let args;
      try { args = form.read(); } catch (err) { replace(out, h('p', { class: 'error', role: 'alert', text: err.message })); return; }
      run.disabled = true;
      replace(out, h('p', { class: 'loading', text: 'Running…' }));
      try {
        replace(out, executionResult(await post(`/tools/${seg(tool.name)}/execute`, { arguments: args })));
      } catch (err) {
        replace(out, h('p', { class: 'error', role: 'alert', text: err.message }),
          err.details ? h('pre', { class: 'code', text: json(err.details) }) : null);
      } finally {
        run.disabled = false;
      }
    });
    p.append(
      ctx.can('tools:execute') ? null : h('p', { class: 'muted', text: 'Your token may not run tools (tools:execute).' }),
      h('p', { class: 'muted', text: 'Runs the tool for real, as you, through the same rules as any call (policy, approvals, records).' }),
      f, out);
  }

  const view = tabs('Tool', [
    { id: 'details', label: 'Details', render: details },
    { id: 'test', label: 'Test', render: test },
  ], tab);
  replace(main,
    h('p', {}, h('a', { href: '#/tools', text: '← All tools' })),
    h('div', { class: 'page-head' },
      h('h1', { text: tool.name }),
      h('span', { class: 'pill', text: SOURCE_LABELS[tool.source] || tool.source }),
      group ? h('span', { class: 'muted', text: group.name }) : null),
    view.el);
  return null;
}
