// Resources you define (issue 40's user resources, issue 36's page): a stored text or blob under
// a URI, and resource templates whose content a JS function computes — what MCP clients list
// (resources/list, resources/templates/list) and read. Listed, read (a text shown, a blob
// downloaded, a template read for the variables you give: its code runs, as MCP's
// resources/read runs it), written as JSON (the body of POST / PUT /api/v1/resources, with
// `expectedRevision` on an edit) and deleted.
//
//   #/resources              the list, "New resource"
//   #/resources/new          the definition form (?kind=text|blob|template picks the start)
//   #/resources/{id}         one resource or template
//   #/resources/{id}/edit    the definition form for it

import { ApiError, del, get, post, put, seg } from '../api.js';
import { confirmDialog, field, h, replace, table, toast } from '../dom.js';
import { codeEditor, problemLines } from '../code_editor.js';
import { codeBlock } from '../highlight.js';
import { creatorLabel, dateTime, json, number } from '../format.js';

const TEMPLATES = {
  text: {
    name: 'style_guide',
    uri: 'docs://style-guide',
    title: 'Style guide',
    description: 'How we write',
    mimeType: 'text/markdown',
    text: '# Style\nShort sentences.',
  },
  blob: {
    name: 'logo',
    uri: 'img://logo.png',
    description: 'Our logo',
    mimeType: 'image/png',
    blob: 'iVBORw0KGgo=',
  },
  template: {
    name: 'order',
    uriTemplate: 'shop://orders/{id}',
    title: 'An order',
    description: 'One order, by its id',
    mimeType: 'application/json',
    code: "return {id: args.id, status: 'shipped'};",
  },
};
const KIND_LABELS = { text: 'Text', blob: 'Blob', template: 'Template' };

function errorText(e) {
  return e instanceof ApiError ? e.message : String(e && e.message ? e.message : e);
}

function bytes(n) {
  if (typeof n !== 'number') return '—';
  if (n < 1024) return `${n} B`;
  return `${(n / 1024).toFixed(n < 10240 ? 1 : 0)} KiB`;
}

/** The variables of an RFC 6570 template as Toolsmith reads it: [{name, reserved}]. */
export function templateVariables(template) {
  const out = [];
  for (const m of String(template).matchAll(/\{(\+?)([A-Za-z0-9_.]+)\}/g)) {
    if (!out.some((v) => v.name === m[2])) out.push({ name: m[2], reserved: m[1] === '+' });
  }
  return out;
}

/** The URI a template gives for `values`: `{x}` percent-encoded, `{+x}` keeping `/`. */
export function expand(template, values) {
  return String(template).replace(/\{(\+?)([A-Za-z0-9_.]+)\}/g, (_, plus, name) => {
    const v = String(values[name] || '');
    return plus ? encodeURI(v) : encodeURIComponent(v);
  });
}

/** A download link for base64 bytes (a blob: URL, made when clicked). */
function downloadButton(base64, mimeType, filename) {
  return h('button', { type: 'button', class: 'btn', text: `Download ${filename}`, onclick: () => {
    const raw = atob(base64);
    const data = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i += 1) data[i] = raw.charCodeAt(i);
    const url = URL.createObjectURL(new Blob([data], { type: mimeType || 'application/octet-stream' }));
    const a = h('a', { href: url, download: filename, hidden: true });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  } });
}

function fileName(uri) {
  const last = String(uri || '').split(/[/:]/).filter(Boolean).pop() || 'resource';
  return last.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** A read content: its text (highlighted JSON when it is JSON) or its size and a download. */
function contentView(read) {
  if (read.text !== undefined) {
    const label = `Content of ${read.uri}`;
    return [h('p', { class: 'muted', text: `${read.mimeType}, ${bytes(new TextEncoder().encode(read.text).length)}` }),
      /json/.test(read.mimeType || '') ? codeBlock(read.text, 'json', label)
        : h('pre', { class: 'code resource-text', tabindex: '0', 'aria-label': label, text: read.text })];
  }
  return [h('p', { text: `${read.mimeType}, ${bytes(Math.floor((read.blob.length * 3) / 4) - (read.blob.endsWith('==') ? 2 : read.blob.endsWith('=') ? 1 : 0))}` }),
    downloadButton(read.blob, read.mimeType, fileName(read.uri))];
}

export async function render(main, ctx, route) {
  const [, id, third] = route.parts;
  if (id === 'new') return form(main, ctx, null, route.params.get('kind'));
  if (id && third === 'edit') return form(main, ctx, id, null);
  if (id) return resourcePage(main, ctx, id);
  return list(main, ctx);
}

// ----- the list ---------------------------------------------------------------------------

async function list(main, ctx) {
  const out = h('div');
  replace(main, h('h1', { text: 'Resources' }),
    h('p', { class: 'muted', text: 'What your MCP clients may read as context: texts and files under a URI, and templates whose content code computes. (Workspace files and tool sources are offered too, without being listed here.)' }),
    ctx.can('tools:write') ? h('div', { class: 'actions' },
      h('a', { class: 'btn primary', href: '#/resources/new', text: 'New resource' }),
      h('a', { class: 'btn', href: '#/resources/new?kind=template', text: 'New template' })) : null,
    out);
  async function load() {
    const { resources } = await get('/resources');
    replace(out, table('Your resources', [
      { label: 'Name', cell: (r) => h('a', { href: `#/resources/${seg(r.id)}`, text: r.name }) },
      { label: 'Kind', cell: (r) => KIND_LABELS[r.kind] || r.kind },
      { label: 'URI or template', cell: (r) => h('code', { text: r.uri || r.uriTemplate }) },
      { label: 'MIME type', cell: (r) => r.mimeType || '—' },
      { label: 'Size', cell: (r) => bytes(r.size) },
      { label: 'Written by', cell: (r) => creatorLabel(r.createdBy) },
      { label: 'Revision', cell: (r) => String(r.revision) },
    ], resources, 'No resources yet. Make one with "New resource".'));
  }
  await load();
  return null;
}

// ----- the definition form -----------------------------------------------------------------

async function form(main, ctx, id, kind) {
  const resource = id ? await get(`/resources/${seg(id)}`) : null;
  let start;
  if (resource) {
    start = { name: resource.name };
    for (const k of ['uri', 'uriTemplate', 'title', 'description', 'mimeType', 'text', 'blob', 'code']) {
      if (resource[k] !== undefined) start[k] = resource[k];
    }
    start.expectedRevision = resource.revision;
  } else {
    start = TEMPLATES[kind] || TEMPLATES.text;
  }
  const text = h('textarea', { rows: '14', spellcheck: 'false', value: json(start) });
  const f = field('Definition (JSON)', text,
    'name; uri with text or blob (base64), or uriTemplate ({id} one segment, {+path} may hold /) with code (the body of a JS function of args); title, description, mimeType. See docs/resources.md.');
  const next = text.nextSibling;
  const ed = codeEditor(text, 'json');
  f.wrap.insertBefore(ed.wrap, next);
  // A file's bytes as the blob (a resource, not a template).
  const file = h('input', { type: 'file' });
  const fileField = field('Or take a file as the blob', file, 'Sets uri (if empty), blob and mimeType from the file.');
  file.addEventListener('change', async () => {
    const chosen = file.files && file.files[0];
    if (!chosen) return;
    let body;
    try { body = JSON.parse(text.value); } catch { body = { name: 'file' }; }
    const buffer = new Uint8Array(await chosen.arrayBuffer());
    let raw = '';
    for (let i = 0; i < buffer.length; i += 0x8000) raw += String.fromCharCode(...buffer.subarray(i, i + 0x8000));
    delete body.text; delete body.code; delete body.uriTemplate;
    body.uri = body.uri || `file:///${chosen.name}`;
    body.mimeType = chosen.type || 'application/octet-stream';
    body.blob = btoa(raw);
    text.value = json(body);
    text.dispatchEvent(new Event('input'));
  });
  const submit = h('button', { type: 'submit', class: 'btn primary', text: resource ? 'Save resource' : 'Create resource' });
  const formEl = h('form', { class: 'card', 'aria-labelledby': 'resource-form-title' },
    h('h2', { id: 'resource-form-title', text: 'Definition' }), f.wrap,
    !resource || resource.kind !== 'template' ? fileField.wrap : null,
    h('div', { class: 'actions' }, submit,
      h('a', { class: 'btn', href: resource ? `#/resources/${seg(resource.id)}` : '#/resources', text: 'Cancel' })));
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
      const saved = resource ? await put(`/resources/${seg(resource.id)}`, body) : await post('/resources', body);
      toast(resource ? `Saved ${saved.name} (revision ${saved.revision}).` : `Created ${saved.name}.`);
      ctx.navigate(`#/resources/${seg(saved.id)}`);
    } catch (err) {
      problem(errorText(err));
    }
  });
  const title = resource ? `Edit ${resource.name}` : (kind === 'template' ? 'New template' : 'New resource');
  replace(main, h('p', {}, h('a', { href: '#/resources', text: '← Resources' })), h('h1', { text: title }), formEl);
  return null;
}

// ----- one resource -------------------------------------------------------------------------

async function resourcePage(main, ctx, id) {
  const r = await get(`/resources/${seg(id)}`);
  const writer = ctx.can('tools:write');
  const actions = h('div', { class: 'actions' },
    writer ? h('a', { class: 'btn', href: `#/resources/${seg(r.id)}/edit`, text: 'Edit' }) : null,
    writer ? h('button', { type: 'button', class: 'btn danger', text: 'Delete', onclick: async () => {
      if (!(await confirmDialog(`Delete ${r.name}?`, 'MCP clients can no longer list or read it; subscribers are told. This cannot be undone.', 'Delete resource'))) return;
      try {
        await del(`/resources/${seg(r.id)}`);
        toast(`Deleted ${r.name}.`);
        ctx.navigate('#/resources');
      } catch (e) { toast(errorText(e), 'error'); }
    } }) : null);
  const template = r.kind === 'template';
  const details = h('dl', { class: 'details' },
    h('dt', { text: template ? 'URI template' : 'URI' }), h('dd', {}, h('code', { text: r.uri || r.uriTemplate })),
    h('dt', { text: 'Title' }), h('dd', { text: r.title || '—' }),
    h('dt', { text: 'Description' }), h('dd', { class: 'description', text: r.description || '—' }),
    h('dt', { text: 'MIME type' }), h('dd', { text: r.mimeType || (template ? 'by what the code returns' : '—') }),
    h('dt', { text: 'Size' }), h('dd', { text: `${bytes(r.size)} (${number(r.size)} bytes)` }),
    h('dt', { text: 'Written by' }), h('dd', { text: `${r.createdBy === 'llm' ? 'a model' : 'a person'}, revision ${r.revision}, ${dateTime(r.updatedAt)}` }));
  let content;
  if (r.kind === 'text') {
    content = [h('h2', { text: 'Content' }), contentView({ uri: r.uri, mimeType: r.mimeType || 'text/plain', text: r.text })];
  } else if (r.kind === 'blob') {
    content = [h('h2', { text: 'Content' }), contentView({ uri: r.uri, mimeType: r.mimeType || 'application/octet-stream', blob: r.blob || '' })];
  } else {
    content = [h('h2', { text: 'Code' }), codeBlock(r.code || '', 'js', `Code of ${r.name}`), readForm(ctx, r)];
  }
  replace(main, h('p', {}, h('a', { href: '#/resources', text: '← Resources' })),
    h('div', { class: 'page-head' }, h('h1', { text: r.name }), h('span', { class: 'pill', text: KIND_LABELS[r.kind] || r.kind }),
      h('span', { class: `pill creator ${r.createdBy === 'llm' ? 'ai' : 'user'}`, text: creatorLabel(r.createdBy) })),
    actions, details, content);
  return null;
}

/** Reads a template for the variables given: the URI made from them, its content below. */
function readForm(ctx, r) {
  const vars = templateVariables(r.uriTemplate);
  const inputs = vars.map((v) => {
    const input = h('input', { type: 'text', name: v.name, autocomplete: 'off', spellcheck: 'false' });
    return { v, input, f: field(v.name, input, v.reserved ? 'May hold /.' : null) };
  });
  const uriOut = h('p', {}, 'URI: ', h('code', { text: expand(r.uriTemplate, {}) }));
  const update = () => {
    const values = Object.fromEntries(inputs.map(({ v, input }) => [v.name, input.value]));
    replace(uriOut, 'URI: ', h('code', { text: expand(r.uriTemplate, values) }));
  };
  for (const { input } of inputs) input.addEventListener('input', update);
  const out = h('div', { 'aria-live': 'polite' });
  const formEl = h('form', { class: 'card', 'aria-labelledby': 'read-title' },
    h('h2', { id: 'read-title', text: 'Read with variables' }),
    h('p', { class: 'muted', text: 'Runs the code for this URI as an MCP client\'s resources/read would (the sandbox, the policy and approvals apply).' }),
    inputs.map((i) => i.f.wrap), uriOut,
    h('button', { type: 'submit', class: 'btn primary', text: 'Read', disabled: !ctx.can('tools:execute') }));
  formEl.addEventListener('submit', async (e) => {
    e.preventDefault();
    const values = Object.fromEntries(inputs.map(({ v, input }) => [v.name, input.value]));
    const uri = expand(r.uriTemplate, values);
    replace(out, h('p', { class: 'loading', text: `Reading ${uri}…` }));
    try {
      const read = await get(`/resource-contents?uri=${encodeURIComponent(uri)}`);
      replace(out, h('h3', { text: 'Content' }), contentView(read));
    } catch (err) {
      replace(out, h('p', { class: 'error', role: 'alert', text: errorText(err) }));
    }
  });
  return [formEl, out];
}
