// Prompts (issue 40's prompts, issue 36's page): your prompts — reusable instructions with
// arguments that MCP clients offer as slash commands — listed, read, written as JSON (the body of
// POST / PUT /api/v1/prompts, with `expectedRevision` on an edit), switched on and off, deleted,
// rendered with arguments (a preview: what `prompts/get` answers), and their versions compared
// and rolled back.
//
//   #/prompts                 the list, "New prompt"
//   #/prompts/new             the definition form
//   #/prompts/{id}            one prompt: Details, Preview, History
//   #/prompts/{id}/edit       the definition form for it

import { ApiError, del, get, post, put, seg } from '../api.js';
import { confirmDialog, field, h, replace, table, tabs, toast } from '../dom.js';
import { codeEditor, problemLines } from '../code_editor.js';
import { diffLines, hunks } from '../diff.js';
import { creatorLabel, dateTime, json } from '../format.js';

const TABS = ['details', 'preview', 'history'];

const TEMPLATE = {
  name: 'review',
  title: 'Code review',
  description: 'Reviews code in a language',
  arguments: [
    { name: 'language', description: 'The language of the code', required: true, values: ['rust', 'python', 'javascript'] },
    { name: 'focus', description: 'What to look at first (optional)' },
  ],
  messages: [
    { role: 'user', content: { type: 'text', text: 'Review this {{ language }} code{% if focus %} for {{ focus }}{% endif %}.' } },
  ],
};

function errorText(e) {
  return e instanceof ApiError ? e.message : String(e && e.message ? e.message : e);
}

function enabledPill(p) {
  return h('span', { class: `pill status ${p.enabled ? 'active' : 'disabled'}`, text: p.enabled ? 'Enabled' : 'Disabled' });
}

function creatorPill(p) {
  return h('span', { class: `pill creator ${p.createdBy === 'llm' ? 'ai' : 'user'}`, text: creatorLabel(p.createdBy) });
}

/** The definition as written (the body of PUT), from a stored prompt or a version. */
function definition(p) {
  const out = { name: p.name };
  if (p.title) out.title = p.title;
  out.description = p.description;
  out.arguments = p.arguments;
  out.messages = p.messages;
  if (p.agent) out.agent = p.agent;
  return out;
}

/** One message, as a person reads it: its role and its content. */
function messageView(m, index) {
  const c = m.content || {};
  let body;
  if (c.type === 'text') {
    body = h('pre', { class: 'code prompt-text', tabindex: '0', 'aria-label': `Message ${index + 1} text`, text: c.text });
  } else if (c.type === 'resource') {
    const r = c.resource || {};
    body = h('div', {},
      h('p', {}, 'Embedded resource ', h('code', { text: r.uri }), r.mimeType ? ` (${r.mimeType})` : ''),
      r.text !== undefined ? h('pre', { class: 'code prompt-text', tabindex: '0', 'aria-label': `Message ${index + 1} resource text`, text: r.text })
        : h('p', { class: 'muted', text: `A blob of ${Math.floor(((r.blob || '').length * 3) / 4)} bytes` }));
  } else {
    body = h('p', { class: 'muted', text: `${c.type === 'image' ? 'An image' : 'Audio'} (${c.mimeType}), ${Math.floor(((c.data || '').length * 3) / 4)} bytes` });
  }
  return h('li', { class: 'card message' },
    h('p', { class: 'step-head' }, h('span', { class: 'pill', text: m.role }), ` Message ${index + 1}`), body);
}

export async function render(main, ctx, route) {
  const [, id, third] = route.parts;
  if (id === 'new') return form(main, ctx, null);
  if (id && third === 'edit') return form(main, ctx, id);
  if (id) return promptPage(main, ctx, id, route);
  return list(main, ctx);
}

// ----- the list ---------------------------------------------------------------------------

async function list(main, ctx) {
  const out = h('div');
  replace(main, h('h1', { text: 'Prompts' }),
    h('p', { class: 'muted', text: 'Reusable instructions with arguments. MCP clients offer the enabled ones as slash commands (prompts/list, prompts/get).' }),
    ctx.can('tools:write') ? h('div', { class: 'actions' }, h('a', { class: 'btn primary', href: '#/prompts/new', text: 'New prompt' })) : null,
    out);
  async function load() {
    const { prompts } = await get('/prompts');
    replace(out, table('Your prompts', [
      { label: 'Name', cell: (p) => h('a', { href: `#/prompts/${seg(p.id)}`, text: p.name }) },
      { label: 'Title', wrap: true, cell: (p) => p.title || '—' },
      { label: 'Arguments', cell: (p) => (p.arguments.length ? p.arguments.map((a) => `${a.name}${a.required ? '*' : ''}`).join(', ') : 'none') },
      { label: 'Messages', cell: (p) => String(p.messages.length) },
      { label: 'State', cell: (p) => enabledPill(p) },
      { label: 'Written by', cell: (p) => creatorPill(p) },
      { label: 'Revision', cell: (p) => String(p.revision) },
      { label: 'Changed', cell: (p) => dateTime(p.updatedAt) },
    ], prompts, 'No prompts yet. Make one with "New prompt".'));
  }
  await load();
  return { refresh: (what) => (what.tools ? load() : null) };
}

// ----- the definition form -----------------------------------------------------------------

async function form(main, ctx, id) {
  const prompt = id ? await get(`/prompts/${seg(id)}`) : null;
  const start = prompt ? { ...definition(prompt), expectedRevision: prompt.revision } : TEMPLATE;
  const text = h('textarea', { rows: '20', spellcheck: 'false', value: json(start) });
  const f = field('Definition (JSON)', text,
    'name; title and description; arguments [{name, description, required, values (offered by completion)}]; messages [{role: user or assistant, content: {type: text, text}}], the texts being templates over the arguments ({{ language }}); agent (optional). See docs/prompts.md.');
  const next = text.nextSibling;
  const ed = codeEditor(text, 'json');
  f.wrap.insertBefore(ed.wrap, next);
  const submit = h('button', { type: 'submit', class: 'btn primary', text: prompt ? 'Save prompt' : 'Create prompt' });
  const formEl = h('form', { class: 'card', 'aria-labelledby': 'prompt-form-title' },
    h('h2', { id: 'prompt-form-title', text: 'Definition' }), f.wrap,
    h('div', { class: 'actions' }, submit,
      h('a', { class: 'btn', href: prompt ? `#/prompts/${seg(prompt.id)}` : '#/prompts', text: 'Cancel' })));
  const problem = (message) => {
    f.error(message);
    ed.setProblems(message ? problemLines(message, text.value) : []);
  };
  formEl.addEventListener('submit', async (e) => {
    e.preventDefault();
    problem('');
    let body;
    try {
      body = JSON.parse(text.value);
    } catch (err) {
      problem(`Not JSON: ${err.message}`);
      return;
    }
    try {
      const saved = prompt ? await put(`/prompts/${seg(prompt.id)}`, body) : await post('/prompts', body);
      toast(prompt ? `Saved ${saved.name} (revision ${saved.revision}).` : `Created ${saved.name}.`);
      ctx.navigate(`#/prompts/${seg(saved.id)}`);
    } catch (err) {
      problem(errorText(err));
    }
  });
  replace(main, h('p', {}, h('a', { href: '#/prompts', text: '← Prompts' })),
    h('h1', { text: prompt ? `Edit ${prompt.name}` : 'New prompt' }), formEl);
  return null;
}

// ----- one prompt ---------------------------------------------------------------------------

async function promptPage(main, ctx, id, route) {
  let prompt = await get(`/prompts/${seg(id)}`);
  const tab = TABS.includes(route.params.get('tab')) ? route.params.get('tab') : 'details';
  const head = h('div', { class: 'page-head' });
  const actions = h('div', { class: 'actions' });
  const writer = ctx.can('tools:write');

  function renderHead() {
    replace(head, h('h1', { text: prompt.name }), enabledPill(prompt), creatorPill(prompt),
      h('span', { class: 'muted', text: `revision ${prompt.revision}` }));
    replace(actions,
      writer ? h('a', { class: 'btn', href: `#/prompts/${seg(prompt.id)}/edit`, text: 'Edit' }) : null,
      writer ? h('button', { type: 'button', class: 'btn', text: prompt.enabled ? 'Disable' : 'Enable', onclick: () => toggle() }) : null,
      writer ? h('button', { type: 'button', class: 'btn danger', text: 'Delete', onclick: remove }) : null);
  }

  async function toggle() {
    try {
      prompt = await post(`/prompts/${seg(prompt.id)}/${prompt.enabled ? 'disable' : 'enable'}`);
      toast(`${prompt.name}: ${prompt.enabled ? 'enabled, offered over MCP' : 'disabled, no longer offered over MCP'}.`);
      renderHead();
      view.show('details');
    } catch (e) { toast(errorText(e), 'error'); }
  }

  async function remove() {
    if (!(await confirmDialog(`Delete ${prompt.name}?`, 'The prompt and all its versions are deleted. This cannot be undone.', 'Delete prompt'))) return;
    try {
      await del(`/prompts/${seg(prompt.id)}`);
      toast(`Deleted ${prompt.name}.`);
      ctx.navigate('#/prompts');
    } catch (e) { toast(errorText(e), 'error'); }
  }

  function details(p) {
    replace(p,
      h('dl', { class: 'details' },
        h('dt', { text: 'Title' }), h('dd', { text: prompt.title || '—' }),
        h('dt', { text: 'Description' }), h('dd', { class: 'description', text: prompt.description || '—' }),
        h('dt', { text: 'Offered to' }), h('dd', { text: prompt.agent ? `the agent ${prompt.agent} only` : 'you and all your agents' }),
        h('dt', { text: 'Offered over MCP' }), h('dd', { text: prompt.enabled ? 'yes' : 'no (disabled)' }),
        h('dt', { text: 'Written by' }), h('dd', { text: `${prompt.createdBy === 'llm' ? 'a model' : 'a person'}, revision ${prompt.revision}, ${dateTime(prompt.updatedAt)}` })),
      h('h2', { text: 'Arguments' }),
      table('Arguments', [
        { label: 'Name', cell: (a) => h('code', { text: a.name }) },
        { label: 'Required', cell: (a) => (a.required ? 'required' : 'optional') },
        { label: 'Description', wrap: true, cell: (a) => a.description || '—' },
        { label: 'Completion values', wrap: true, cell: (a) => (a.values && a.values.length ? a.values.join(', ') : '—') },
      ], prompt.arguments, 'No arguments.'),
      h('h2', { text: 'Messages' }),
      h('ol', { class: 'cards list messages', 'aria-label': 'Messages' }, prompt.messages.map(messageView)));
  }

  function preview(p) {
    const inputs = prompt.arguments.map((a) => {
      const listId = a.values && a.values.length ? `values-${a.name}` : null;
      const input = h('input', { type: 'text', name: a.name, autocomplete: 'off', list: listId });
      const f = field(`${a.name}${a.required ? ' (required)' : ''}`, input, a.description || null);
      return { a, input, wrap: [f.wrap, listId ? h('datalist', { id: listId }, a.values.map((v) => h('option', { value: v }))) : null] };
    });
    const out = h('div', { 'aria-live': 'polite' });
    const formEl = h('form', { class: 'card', 'aria-labelledby': 'preview-title' },
      h('h2', { id: 'preview-title', text: 'Render with arguments' }),
      h('p', { class: 'muted', text: 'The messages prompts/get answers for these arguments (a disabled prompt renders too). Nothing is sent to a model.' }),
      inputs.map((i) => i.wrap),
      h('button', { type: 'submit', class: 'btn primary', text: 'Render' }));
    formEl.addEventListener('submit', async (e) => {
      e.preventDefault();
      const args = {};
      for (const { a, input } of inputs) if (input.value !== '') args[a.name] = input.value;
      try {
        const rendered = await post(`/prompts/${seg(prompt.id)}/render`, { arguments: args });
        replace(out, h('h2', { text: 'Rendered' }),
          rendered.description ? h('p', { class: 'description', text: rendered.description }) : null,
          h('ol', { class: 'cards list messages', 'aria-label': 'Rendered messages' }, rendered.messages.map(messageView)));
      } catch (err) {
        replace(out, h('p', { class: 'error', role: 'alert', text: errorText(err) }));
      }
    });
    replace(p, formEl, out);
  }

  async function history(p) {
    p.append(h('p', { class: 'loading', text: 'Loading versions…' }));
    const { versions } = await get(`/prompts/${seg(prompt.id)}/versions`);
    const newest = versions.length ? versions[versions.length - 1].revision : null;
    const newestFirst = [...versions].reverse();
    const option = (v, selected) => h('option', { value: v.revision, text: `Revision ${v.revision}`, selected });
    const fromSel = h('select', {}, newestFirst.map((v, i) => option(v, i === 1 || newestFirst.length === 1)));
    const toSel = h('select', {}, newestFirst.map((v, i) => option(v, i === 0)));
    const diffOut = h('div', { 'aria-live': 'polite' });
    const showDiff = () => {
      const a = versions.find((v) => String(v.revision) === fromSel.value);
      const b = versions.find((v) => String(v.revision) === toSel.value);
      if (!a || !b) return;
      const lines = diffLines(json(definition(a)), json(definition(b)));
      const added = lines.filter((l) => l.op === '+').length;
      const removed = lines.filter((l) => l.op === '-').length;
      const parts = hunks(lines, 3, (t) => {
        const m = /^ {2}"(title|description|arguments|messages)":/.exec(t);
        return m ? m[1] : null;
      });
      const skip = (n) => (n > 0 ? h('span', { class: 'skip-lines' }, `⋯ ${n} unchanged line${n === 1 ? '' : 's'}\n`) : null);
      const num = (v) => (v ? String(v) : '').padStart(4, ' ');
      replace(diffOut,
        h('p', { text: added || removed ? `Revision ${a.revision} → revision ${b.revision}: ${added} line${added === 1 ? '' : 's'} added, ${removed} removed, in ${parts.hunks.length} place${parts.hunks.length === 1 ? '' : 's'}.` : 'No differences.' }),
        added || removed ? h('pre', { class: 'code diff', tabindex: '0', 'aria-label': `Diff of revision ${a.revision} and revision ${b.revision}` },
          parts.hunks.map((hk) => [
            skip(hk.skipped),
            h('span', { class: 'hunk' }, `${hk.header}\n`),
            hk.lines.map((l) => h('span', { class: l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'same' },
              h('span', { class: 'ln', 'aria-hidden': 'true' }, `${num(l.old)} ${num(l.new)} `), `${l.op} ${l.text}\n`)),
          ]),
          skip(parts.after)) : null);
    };
    replace(p,
      h('h2', { text: 'Versions' }),
      h('p', { class: 'muted', text: 'Every definition is kept; switching on or off makes a new revision, not a new version.' }),
      table('Versions', [
        { label: 'Revision', cell: (v) => `${v.revision}${v.revision === newest ? ' (current)' : ''}` },
        { label: 'Saved', cell: (v) => dateTime(v.createdAt) },
        { label: 'Written by', cell: (v) => creatorLabel(v.createdBy) },
        { label: 'Changed', wrap: true, cell: (v) => (v.changed.length ? v.changed.join(', ') : 'created') },
        { label: 'Action', cell: (v) => (writer && v.revision !== newest
          ? h('button', { type: 'button', class: 'btn small', text: `Roll back to revision ${v.revision}`, onclick: () => rollback(v.revision) })
          : '—') },
      ], newestFirst),
      versions.length > 1 ? [
        h('h2', { text: 'Compare versions' }),
        h('div', { class: 'inline-fields' }, field('From revision', fromSel).wrap, field('To revision', toSel).wrap,
          h('button', { type: 'button', class: 'btn', text: 'Show diff', onclick: showDiff })),
        diffOut,
      ] : null);
  }

  async function rollback(revision) {
    if (!(await confirmDialog(`Roll back ${prompt.name} to revision ${revision}?`, `Revision ${revision}'s definition becomes current as a new revision.`, 'Roll back', false))) return;
    try {
      prompt = await post(`/prompts/${seg(prompt.id)}/rollback`, { revision });
      toast(`${prompt.name} rolled back to revision ${revision}; now revision ${prompt.revision}.`);
      renderHead();
      view.show('history');
    } catch (e) { toast(errorText(e), 'error'); }
  }

  const view = tabs('Prompt', [
    { id: 'details', label: 'Details', render: details },
    { id: 'preview', label: 'Preview', render: preview },
    { id: 'history', label: 'History', render: history },
  ], tab);
  renderHead();
  replace(main, h('p', {}, h('a', { href: '#/prompts', text: '← Prompts' })), head, actions, view.el);
  return null;
}
