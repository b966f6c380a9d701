// A form generated from a tool's JSON Schema (`type: object` with `properties`), with a raw
// JSON fallback for what a form cannot express. `read()` returns the arguments object or
// throws an Error naming the field that is wrong.

import { checkbox, field, h } from './dom.js';

function kindOf(schema) {
  const t = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  if (Array.isArray(schema.enum)) return 'enum';
  return t || 'any';
}

/** A description of the parameters for people: name, type, required, description. */
export function describe(parameters) {
  const props = (parameters && parameters.properties) || {};
  const required = new Set((parameters && parameters.required) || []);
  const names = Object.keys(props);
  if (!names.length) return h('p', { class: 'muted', text: 'This tool takes no parameters.' });
  return h('dl', { class: 'params' }, names.map((name) => {
    const s = props[name] || {};
    const type = Array.isArray(s.enum) ? `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}` : (Array.isArray(s.type) ? s.type.join(' | ') : s.type || 'any');
    return [
      h('dt', {}, h('code', { text: name }), ' ', h('span', { class: 'muted', text: `${type}${required.has(name) ? ', required' : ', optional'}` })),
      h('dd', { text: s.description || '—' }),
    ];
  }));
}

/** The form. Returns {el, read()}. */
export function schemaForm(parameters, initial = {}) {
  const props = (parameters && parameters.properties) || {};
  const required = new Set((parameters && parameters.required) || []);
  const inputs = [];
  const formFields = h('div', { class: 'schema-fields' });
  for (const [name, schema] of Object.entries(props)) {
    const s = schema || {};
    const kind = kindOf(s);
    const label = `${name}${required.has(name) ? ' (required)' : ''}`;
    const start = initial[name] !== undefined ? initial[name] : s.default;
    let input;
    let f;
    if (kind === 'boolean') {
      const c = checkbox(name, start === true);
      formFields.append(c.wrap);
      if (s.description) c.wrap.append(h('p', { class: 'help', text: s.description }));
      inputs.push({ name, kind, input: c.input, error: () => {} });
      continue;
    } else if (kind === 'enum') {
      input = h('select', {}, required.has(name) ? null : h('option', { value: '', text: '(none)' }),
        s.enum.map((v) => h('option', { value: JSON.stringify(v), text: String(v), selected: JSON.stringify(v) === JSON.stringify(start) })));
    } else if (kind === 'integer' || kind === 'number') {
      input = h('input', { type: 'number', step: kind === 'integer' ? '1' : 'any', value: start !== undefined ? start : '' });
    } else if (kind === 'string') {
      input = s.maxLength && s.maxLength <= 200
        ? h('input', { type: 'text', value: start !== undefined ? start : '' })
        : h('textarea', { rows: '2', value: start !== undefined ? start : '' });
    } else {
      input = h('textarea', { rows: '3', class: 'mono', value: start !== undefined ? JSON.stringify(start, null, 2) : '', spellcheck: 'false' });
    }
    f = field(label, input, s.description || (kind === 'object' || kind === 'array' || kind === 'any' ? `JSON (${kind})` : null));
    formFields.append(f.wrap);
    inputs.push({ name, kind, input, error: f.error });
  }
  if (!inputs.length) formFields.append(h('p', { class: 'muted', text: 'This tool takes no parameters.' }));

  const raw = h('textarea', { rows: '8', class: 'mono', spellcheck: 'false' });
  const rawField = field('Arguments (JSON)', raw);
  rawField.wrap.hidden = true;
  const toggle = checkbox('Edit as raw JSON', false);

  function readForm() {
    const args = {};
    for (const it of inputs) {
      it.error('');
      const v = it.input.value;
      if (it.kind === 'boolean') { args[it.name] = it.input.checked; continue; }
      if (v === '' || v === undefined) {
        if (required.has(it.name)) { it.error(`${it.name} is required`); throw new Error(`${it.name} is required`); }
        continue;
      }
      if (it.kind === 'enum') args[it.name] = JSON.parse(v);
      else if (it.kind === 'integer' || it.kind === 'number') {
        const n = Number(v);
        if (!Number.isFinite(n) || (it.kind === 'integer' && !Number.isInteger(n))) {
          it.error(`${it.name} must be ${it.kind === 'integer' ? 'a whole number' : 'a number'}`);
          throw new Error(`${it.name} must be a number`);
        }
        args[it.name] = n;
      } else if (it.kind === 'string') args[it.name] = v;
      else {
        try { args[it.name] = JSON.parse(v); } catch (e) {
          it.error(`${it.name} must be JSON: ${e.message}`);
          throw new Error(`${it.name} must be JSON`);
        }
      }
    }
    return args;
  }

  function readRaw() {
    rawField.error('');
    let value;
    try { value = JSON.parse(raw.value || '{}'); } catch (e) {
      rawField.error(`Not valid JSON: ${e.message}`);
      throw new Error('The arguments are not valid JSON');
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      rawField.error('The arguments must be a JSON object');
      throw new Error('The arguments must be a JSON object');
    }
    return value;
  }

  toggle.input.addEventListener('change', () => {
    if (toggle.input.checked) {
      try { raw.value = JSON.stringify(readForm(), null, 2); } catch { raw.value = raw.value || '{}'; }
    }
    rawField.wrap.hidden = !toggle.input.checked;
    formFields.hidden = toggle.input.checked;
  });

  return {
    el: h('div', { class: 'schema-form' }, formFields, toggle.wrap, rawField.wrap),
    read: () => (toggle.input.checked ? readRaw() : readForm()),
  };
}
