// One tool of the catalogue that is not a custom tool: a built-in (compiled into Toolsmith) or
// a tool bridged from an upstream MCP server. Its description, group, annotations and
// parameters, and a Test tab that runs it through the normal REST execute
// (POST /api/v1/tools/{name}/execute), so the policy, approvals and records apply as anywhere.

import { ApiError, get, post, seg } from '../api.js';
import { confirmDialog, h, replace, tabs } from '../dom.js';
import { codeBlock } from '../highlight.js';
import { describe, schemaForm } from '../schemaform.js';
import { json } from '../format.js';
import { executionResult } from './tool.js';

const SOURCE_LABELS = { builtin: 'Built-in', mcp: 'Bridged MCP', custom: 'Custom' };
// MCP's tool annotations, each as a badge with what it means. A hint a tool does not declare
// takes MCP's default (not read-only, destructive, not idempotent, open world); the destructive
// and idempotent hints mean something only for a tool that is not read-only.
const HINTS = [
  { key: 'readOnlyHint', fallback: false, yes: ['Read-only', 'It only reads: it changes nothing.', 'ok'],
    no: ['Changes things', 'It may change stored data or the world.', 'plain'] },
  { key: 'destructiveHint', fallback: true, unlessReadOnly: true, yes: ['Destructive', 'It may delete or overwrite what exists.', 'danger'],
    no: ['Additive', 'It only adds: it never deletes or overwrites.', 'plain'] },
  { key: 'idempotentHint', fallback: false, unlessReadOnly: true, yes: ['Idempotent', 'Calling it again with the same arguments has no further effect.', 'info'],
    no: ['Not idempotent', 'Each repeated call has its effect again.', 'plain'] },
  { key: 'openWorldHint', fallback: true, yes: ['Open world', 'It reaches outside the server (the network, other systems).', 'world'],
    no: ['Closed world', 'It stays inside the server (its store and your workspace).', 'plain'] },
];

/** The annotation badges of `tool`: a list of {label, meaning, tone, declared}. */
export function hintBadges(tool) {
  const ann = tool.annotations && typeof tool.annotations === 'object' ? tool.annotations : {};
  const declared = (key) => typeof ann[key] === 'boolean';
  const value = (hint) => (declared(hint.key) ? ann[hint.key] : hint.fallback);
  const readOnly = value(HINTS[0]);
  const badges = [];
  for (const hint of HINTS) {
    if (hint.unlessReadOnly && readOnly) continue;
    const [label, meaning, tone] = value(hint) ? hint.yes : hint.no;
    badges.push({ label, meaning, tone, declared: declared(hint.key), key: hint.key });
  }
  if (tool.requiresConfirmation) {
    badges.push({ label: 'Needs confirmation', meaning: 'Marked requiresConfirmation: a person is to confirm each call before it runs.', tone: 'warn', declared: true, key: 'requiresConfirmation' });
  }
  return badges;
}

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
    ];
    if (ann && ann.title) rows.push(['Title', String(ann.title)]);
    const badges = hintBadges(tool);
    p.append(
      h('p', { class: 'description', text: tool.description }),
      h('dl', { class: 'details' }, rows.map(([k, v]) => [h('dt', { text: k }), h('dd', {}, v)])),
      h('section', { 'aria-labelledby': 'hints-heading' },
        h('h2', { id: 'hints-heading', text: 'What it does' }),
        h('ul', { class: 'hints' }, badges.map((b) => h('li', {},
          h('span', { class: `pill hint ${b.tone}`, text: b.label }),
          h('span', { text: ` ${b.meaning}` }),
          b.declared ? null : h('span', { class: 'muted', text: ' (not declared: MCP\'s default)' })))),
        tool.source === 'mcp'
          ? h('p', { class: 'muted', text: 'These are the upstream server\'s own hints, as it declares them: Toolsmith does not check them.' })
          : null),
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
      // A tool marked requiresConfirmation (delete_file …) runs for a person only once they
      // confirm here: the server asks models, never a person's own call.
      if (tool.requiresConfirmation && !(await confirmDialog(`Run ${tool.name}?`,
        `${tool.name} is marked requiresConfirmation: it may delete or change what exists, and runs for real with these arguments.`, 'Run it'))) {
        return;
      }
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
