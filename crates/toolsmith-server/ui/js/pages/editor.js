// Create and edit a tool of any kind (JavaScript, command, HTTP/YAML): the server's validation
// errors are shown next to the field they concern, a dry run tries the definition without
// storing it, and an edit is conditional on the revision it started from (a conflict says
// what changed).

import { ApiError, get, patch, post, seg } from '../api.js';
import { checkbox, field, h, replace, toast } from '../dom.js';
import { KIND_LABELS, json } from '../format.js';
import { executionResult, explain, language } from './tool.js';
import { codeEditor, problemLines } from '../code_editor.js';

const PERMISSIONS = ['network', 'filesystem', 'database', 'shell', 'email', 'scheduling', 'sampling', 'elicitation'];

const TEMPLATES = {
  js: {
    parameters: { type: 'object', properties: { text: { type: 'string', description: 'The input text' } }, required: ['text'] },
    code: 'return { length: args.text.length };',
    args: { text: 'hello' },
  },
  command: {
    parameters: { type: 'object', properties: { phrase: { type: 'string' } }, required: ['phrase'] },
    code: '{"command": "printf \'%s\' {{.phrase}} | wc -w", "timeoutSeconds": 10}',
    args: { phrase: 'one two three' },
  },
  http: {
    parameters: null,
    code: "name: my_http_tool\ndescription: 'Calls an HTTP API'\nparameters:\n  - name: q\n    type: string\n    required: true\n    source: explicit\nendpoint:\n  url: 'https://api.example.com/search?q={{q}}'\n  method: GET\n",
    args: { q: 'test' },
  },
};

const CODE_LABELS = { js: 'Code (JavaScript function body)', command: 'Command spec (JSON)', http: 'HTTP definition (YAML or JSON)' };

/** Which form field a server message concerns. */
export function fieldFor(message) {
  const m = message.toLowerCase();
  if (/^(tool |new )?name\b|^tool name|already (exists|taken|used)|reserved name/.test(m)) return 'name';
  if (/^description/.test(m)) return 'description';
  if (/^categor/.test(m)) return 'category';
  if (/^permission/.test(m)) return 'permissions';
  if (/^parameters|json schema/.test(m)) return 'parameters';
  return 'code';
}

export async function render(main, ctx, route) {
  const editing = route.parts[1] !== 'new' ? route.parts[1] : null;
  const original = editing ? await get(`/custom-tools/${seg(editing)}`) : null;
  let kind = original ? original.kind : 'js';

  const kindSel = h('select', { disabled: Boolean(original) },
    Object.entries(KIND_LABELS).map(([k, label]) => h('option', { value: k, text: label, selected: k === kind })));
  const name = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: original ? original.name : '' });
  const description = h('textarea', { rows: '2', value: original ? original.description : '' });
  const category = h('input', { type: 'text', value: original && original.category ? original.category : '' });
  const parameters = h('textarea', { rows: '8', class: 'mono', spellcheck: 'false', value: json(original ? original.parameters : TEMPLATES.js.parameters) });
  const code = h('textarea', { rows: '12', class: 'mono', spellcheck: 'false', value: original ? original.code : TEMPLATES.js.code });
  const testArgs = h('textarea', { rows: '3', class: 'mono', spellcheck: 'false', value: JSON.stringify(TEMPLATES[kind].args) });
  const approval = checkbox('Requires approval (each call waits for a person)', original ? original.requiresApproval : false);
  const perms = PERMISSIONS.map((p) => ({ p, box: checkbox(p, original ? original.permissions.includes(p) : false) }));

  const fields = {
    kind: field('Kind', kindSel),
    name: field('Name', name, 'Lowercase letters, digits and _; starts with a letter; at most 64 characters.'),
    description: field('Description', description),
    category: field('Category', category),
    parameters: field('Parameters (JSON Schema)', parameters, 'An object schema: {"type": "object", "properties": {…}}.'),
    code: field(CODE_LABELS[kind], code),
    testArgs: field('Test arguments (JSON)', testArgs),
  };
  // The code and the parameters get the code editor (highlighting, line numbers, problems at
  // their line, completion of the sandbox's API); the textareas stay the labelled controls.
  const mount = (textarea, lang) => {
    const parent = textarea.parentNode;
    const next = textarea.nextSibling;
    const ed = codeEditor(textarea, lang);
    parent.insertBefore(ed.wrap, next);
    return ed;
  };
  const codeEd = mount(code, language(kind));
  const paramsEd = mount(parameters, 'json');

  const permsGroup = h('fieldset', { class: 'perms', 'aria-describedby': 'perms-error' },
    h('legend', { text: 'Permissions' }), perms.map((x) => x.box.wrap),
    h('p', { class: 'field-error', id: 'perms-error', hidden: true }));
  const permsError = (msg) => {
    const el = permsGroup.querySelector('#perms-error');
    el.textContent = msg || '';
    el.hidden = !msg;
  };

  // The Config Center services the tool needs (metadata.requiredApiKeys): registered in the
  // caller's Config Center when saved, and named on the Details page while one has no value.
  const declared = original && original.metadata && Array.isArray(original.metadata.requiredApiKeys)
    ? original.metadata.requiredApiKeys.filter((k) => k && typeof k === 'object' && k.name) : [];
  const serviceRows = h('div', { class: 'service-rows' });
  const servicesNote = h('div', { 'aria-live': 'polite' });
  const servicesError = h('p', { class: 'field-error', id: 'services-error', hidden: true });
  let serviceCount = 0;
  function addService(item, focus) {
    serviceCount += 1;
    const n = serviceCount;
    const nameIn = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', value: item ? item.name : '' });
    const descIn = h('input', { type: 'text', autocomplete: 'off', value: item && item.description ? item.description : '' });
    const row = h('div', { class: 'inline-fields service-row' },
      field(`Service ${n} name`, nameIn).wrap,
      field(`Service ${n} description`, descIn).wrap,
      h('button', { type: 'button', class: 'btn small', text: `Remove service ${n}`, onclick: () => { row.remove(); noteUndeclared(); } }));
    row.read = () => {
      const name = nameIn.value.trim();
      if (!name) return null;
      const out = { ...(item || {}), name };
      if (descIn.value.trim()) out.description = descIn.value.trim(); else delete out.description;
      return out;
    };
    nameIn.addEventListener('input', noteUndeclared);
    serviceRows.append(row);
    if (focus) nameIn.focus();
  }
  function services() {
    return [...serviceRows.children].map((r) => r.read()).filter(Boolean);
  }
  /** Services the code reads through utils.getApiKey('x') and its kin but does not declare. */
  function noteUndeclared() {
    const names = new Set(services().map((x) => x.name));
    const used = new Set();
    if (kind === 'js') {
      for (const m of code.value.matchAll(/utils\.(?:getApiKey|getServiceConfig|getConfigEntry|getConfigEntries|getFieldValue)\(\s*(['"`])([^'"`\n]+)\1/g)) used.add(m[2]);
    }
    const missing = [...used].filter((u) => !names.has(u));
    replace(servicesNote, missing.length ? h('p', { class: 'help' },
      `The code reads ${missing.join(', ')} from the Config Center without declaring ${missing.length > 1 ? 'them' : 'it'}: `,
      ...missing.map((m) => h('button', { type: 'button', class: 'btn small', text: `Declare ${m}`, onclick: () => { addService({ name: m }, false); noteUndeclared(); } }))) : null);
  }
  for (const item of declared) addService(item, false);
  noteUndeclared();
  const servicesGroup = h('fieldset', { class: 'services', 'aria-describedby': 'services-help services-error' },
    h('legend', { text: 'Config Center services it needs' }),
    h('p', { class: 'help', id: 'services-help', text: 'The API keys and settings the tool reads with utils.getApiKey(name) and its kin. Declared services are added to your Config Center; the tool\'s Details page says which still have no value, and a call before they are set says what is missing.' }),
    serviceRows, servicesNote, servicesError,
    h('button', { type: 'button', class: 'btn small', text: 'Add a service', onclick: () => addService(null, true) }));
  code.addEventListener('input', noteUndeclared);

  const summary = h('div', { class: 'form-summary', 'aria-live': 'assertive' });
  const dryOut = h('div', { 'aria-live': 'polite' });
  const save = h('button', { type: 'submit', class: 'btn primary', text: original ? 'Save changes' : 'Create tool' });
  const dry = h('button', { type: 'button', class: 'btn', text: 'Dry run' });

  function setKind(next) {
    const fresh = !original && (code.value === TEMPLATES[kind].code || !code.value.trim());
    kind = next;
    fields.code.wrap.querySelector('label').textContent = CODE_LABELS[kind];
    codeEd.setLanguage(language(kind));
    fields.parameters.wrap.hidden = kind === 'http';
    if (fresh) {
      code.value = TEMPLATES[kind].code;
      if (TEMPLATES[kind].parameters) parameters.value = json(TEMPLATES[kind].parameters);
      testArgs.value = JSON.stringify(TEMPLATES[kind].args);
    }
    codeEd.refresh();
    paramsEd.refresh();
  }
  kindSel.addEventListener('change', () => setKind(kindSel.value));
  fields.parameters.wrap.hidden = kind === 'http';

  // Client-side check of the schema as it is typed; the server has the last word.
  function checkSchema() {
    if (kind === 'http') return null;
    let value;
    try { value = JSON.parse(parameters.value); } catch (e) {
      return `Parameters are not valid JSON: ${e.message}`;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value) || value.type !== 'object') {
      return 'Parameters must be a JSON Schema object with "type": "object".';
    }
    return null;
  }
  parameters.addEventListener('input', () => {
    const problem = checkSchema();
    fields.parameters.error(problem);
    paramsEd.setProblems(problem ? problemLines(problem, parameters.value) : []);
  });

  function clearErrors() {
    for (const f of Object.values(fields)) f.error('');
    permsError('');
    servicesError.hidden = true;
    codeEd.setProblems([]);
    paramsEd.setProblems([]);
    replace(summary);
  }

  function showError(e) {
    if (e instanceof ApiError && (e.code === 'validation_error' || e.code === 'name_taken' || e.code === 'too_large' || e.code === 'invalid_body')) {
      const target = e.code === 'name_taken' ? 'name' : fieldFor(e.message);
      if (/requiredapikeys|config center service/i.test(e.message)) {
        servicesError.textContent = e.message;
        servicesError.hidden = false;
        replace(summary, h('p', { class: 'error', role: 'alert', text: `Not saved: ${e.message}` }));
        return;
      }
      if (target === 'permissions') permsError(e.message);
      else fields[target].error(e.message);
      if (target === 'code') codeEd.setProblems(problemLines(e.message, code.value));
      if (target === 'parameters') paramsEd.setProblems(problemLines(e.message, parameters.value));
      replace(summary, h('p', { class: 'error', role: 'alert', text: `Not saved: ${e.message}` }));
      (target === 'permissions' ? perms[0].box.input : fields[target].input).focus();
      return;
    }
    replace(summary, h('p', { class: 'error', role: 'alert', text: explain(e) }));
  }

  function definition() {
    const body = {
      name: name.value.trim(),
      description: description.value,
      code: code.value,
      permissions: perms.filter((x) => x.box.input.checked).map((x) => x.p),
      requiresApproval: approval.input.checked,
    };
    if (category.value.trim()) body.category = category.value.trim();
    const needed = services();
    if (needed.length) body.requiredApiKeys = needed;
    if (kind !== 'http') {
      const problem = checkSchema();
      if (problem) { fields.parameters.error(problem); throw new Error(problem); }
      body.parameters = JSON.parse(parameters.value);
    }
    return body;
  }

  dry.addEventListener('click', async () => {
    clearErrors();
    let body;
    let args;
    try {
      body = definition();
      try { args = JSON.parse(testArgs.value || '{}'); } catch (e) {
        fields.testArgs.error(`Not valid JSON: ${e.message}`);
        return;
      }
    } catch { return; }
    replace(dryOut, h('p', { class: 'loading', text: 'Running…' }));
    try {
      const exec = await post('/custom-tools/test', { ...body, kind, parameters: body.parameters || { type: 'object', properties: {} }, testArgs: args });
      replace(dryOut, h('h2', { text: 'Dry run' }), executionResult(exec));
    } catch (e) {
      replace(dryOut);
      if (e instanceof ApiError && e.code === 'invalid_arguments') fields.testArgs.error(e.message);
      else showError(e);
    }
  });

  async function explainConflict(e) {
    let current;
    try { current = await get(`/custom-tools/${seg(original.id)}`); } catch { showError(e); return; }
    const changed = ['name', 'description', 'category', 'code', 'parameters', 'permissions', 'requiresApproval', 'status']
      .filter((k) => JSON.stringify(current[k]) !== JSON.stringify(original[k]));
    replace(summary, h('div', { class: 'error', role: 'alert' },
      h('p', { text: `Not saved: someone else changed this tool since you opened it (revision ${original.revision} → ${current.revision}, by ${current.createdBy === 'llm' ? 'a model or a person' : 'a person or a model'}). Changed: ${changed.length ? changed.join(', ') : 'nothing visible (status or metadata)'}.` }),
      h('p', { text: 'Your edits are still in the form. Load their version to start again from it, or save again to overwrite it.' }),
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'btn', text: 'Load their version', onclick: () => { ctx.navigate(`#/tools/${seg(original.id)}/edit?t=${Date.now()}`); } }),
        h('button', { type: 'button', class: 'btn', text: 'Keep mine and overwrite', onclick: () => { original.revision = current.revision; Object.assign(original, current); form.requestSubmit(); } }))));
  }

  const form = h('form', { class: 'editor', 'aria-labelledby': 'editor-title', novalidate: true },
    summary,
    fields.kind.wrap, fields.name.wrap, fields.description.wrap, fields.category.wrap,
    fields.parameters.wrap, fields.code.wrap, permsGroup, servicesGroup, approval.wrap,
    h('h2', { text: 'Try it' }), fields.testArgs.wrap,
    h('div', { class: 'actions' }, dry, save),
    dryOut);

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors();
    let body;
    try { body = definition(); } catch { return; }
    save.disabled = true;
    try {
      let tool;
      if (original) {
        const change = {
          description: body.description, code: body.code, permissions: body.permissions,
          requiresApproval: body.requiresApproval, category: body.category || '', expectedRevision: original.revision,
        };
        if (body.parameters) change.parameters = body.parameters;
        if (body.requiredApiKeys || declared.length) change.requiredApiKeys = body.requiredApiKeys || [];
        if (body.name !== original.name) change.newName = body.name;
        tool = await patch(`/custom-tools/${seg(original.id)}`, change);
        toast(`${tool.name} saved: version ${tool.version}.`);
      } else {
        tool = await post('/custom-tools', { ...body, kind });
        toast(`${tool.name} created.`);
      }
      ctx.navigate(`#/tools/${seg(tool.id)}`);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'revision_conflict') await explainConflict(err);
      else showError(err);
    } finally {
      save.disabled = false;
    }
  });

  replace(main,
    h('p', {}, h('a', { href: original ? `#/tools/${seg(original.id)}` : '#/tools', text: original ? `← ${original.name}` : '← All tools' })),
    h('h1', { id: 'editor-title', text: original ? `Edit ${original.name}` : 'New tool' }),
    form);
  name.focus();
}
