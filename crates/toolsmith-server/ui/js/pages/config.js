// The Config Center: services, their entries (secret values masked by the server: a secret
// is typed here once and never comes back in clear) and the tools that need each service.

import { del, get, patch, post, seg } from '../api.js';
import { checkbox, confirmDialog, field, h, redrawKeeping, replace, toast } from '../dom.js';

export async function render(main, ctx) {
  const admin = ctx.can('admin');
  const listEl = h('div', { class: 'services' });

  function valueInputs(service, entry) {
    return service.fields.map((f) => {
      const input = h('input', {
        type: f.kind === 'secret' ? 'password' : f.kind === 'number' ? 'number' : f.kind === 'url' ? 'url' : 'text',
        autocomplete: f.kind === 'secret' ? 'new-password' : 'off',
        spellcheck: 'false',
        placeholder: entry ? 'unchanged' : '',
      });
      if (f.kind === 'boolean') { input.type = 'text'; input.placeholder = 'true or false'; }
      const label = `${f.label || f.name}${f.required ? ' (required)' : ''}${entry ? ` for ${entry.label}` : ''}`;
      return { f, input, field: field(label, input, f.description || null) };
    });
  }

  function readValues(inputs) {
    const values = {};
    for (const { f, input } of inputs) {
      if (input.value === '') continue;
      if (f.kind === 'number') values[f.name] = Number(input.value);
      else if (f.kind === 'boolean') values[f.name] = input.value.trim() === 'true';
      else values[f.name] = input.value;
    }
    return values;
  }

  function entryForm(service, entry) {
    const inputs = valueInputs(service, entry);
    const label = h('input', { type: 'text', value: entry ? entry.label : (service.entries.length ? '' : 'default') });
    const labelField = entry ? null : field('Entry label', label);
    const makeDefault = checkbox(entry ? `Make ${entry.label} the default` : 'Default entry', !entry && !service.entries.length);
    const summary = h('div', { 'aria-live': 'assertive' });
    const form = h('form', { class: 'entry-form', 'aria-label': entry ? `Update ${entry.label} of ${service.name}` : `New entry for ${service.name}` },
      summary, labelField && labelField.wrap, inputs.map((x) => x.field.wrap), entry && entry.isDefault ? null : makeDefault.wrap,
      h('button', { type: 'submit', class: 'btn primary', text: entry ? 'Save values' : 'Add entry' }));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      for (const x of inputs) x.field.error('');
      const values = readValues(inputs);
      try {
        if (entry) {
          const body = { values };
          if (makeDefault.input.checked) body.isDefault = true;
          await patch(`/config/services/${seg(service.name)}/entries/${seg(entry.id)}`, body);
        } else {
          await post(`/config/services/${seg(service.name)}/entries`, { label: label.value.trim() || 'default', isDefault: makeDefault.input.checked, values });
        }
        for (const x of inputs) x.input.value = '';
        toast(`Saved ${service.name}.`);
        await load();
      } catch (err) {
        const hit = inputs.find((x) => err.message.includes(`'${x.f.name}'`));
        if (hit) { hit.field.error(err.message); hit.input.focus(); }
        else replace(summary, h('p', { class: 'error', role: 'alert', text: err.message }));
      }
    });
    return form;
  }

  function serviceCard(s) {
    const entries = s.entries.map((en) => h('li', { class: 'entry' },
      h('h4', {}, en.label, en.isDefault ? h('span', { class: 'pill', text: 'default' }) : null),
      h('dl', { class: 'details' }, Object.entries(en.values).map(([k, v]) => [h('dt', { text: k }), h('dd', {}, h('code', { text: typeof v === 'string' ? v : JSON.stringify(v) }))])),
      en.missing.length ? h('p', { class: 'error', text: `Missing: ${en.missing.join(', ')}` }) : null,
      admin ? h('details', {}, h('summary', { text: `Change values of ${en.label}` }), entryForm(s, en)) : null,
      admin ? h('button', { type: 'button', class: 'btn small danger', text: `Delete entry ${en.label}`, onclick: async () => {
        if (!(await confirmDialog(`Delete entry ${en.label} of ${s.name}?`, 'Its values are deleted.', 'Delete entry'))) return;
        try { await del(`/config/services/${seg(s.name)}/entries/${seg(en.id)}`); await load(); } catch (err) { toast(err.message, 'error'); }
      } }) : null));
    return h('li', { class: 'card service' },
      h('div', { class: 'card-head' },
        h('h2', { class: 'tool-name', text: s.displayName || s.name }),
        h('span', { class: `pill status ${s.configured ? 'active' : 'pending_approval'}`, text: s.configured ? 'Configured' : 'Not configured' })),
      h('p', {}, h('code', { text: s.name }), s.category ? ` · ${s.category}` : '', s.autoRegistered ? ' · registered by a tool' : ''),
      s.description ? h('p', { class: 'description', text: s.description }) : null,
      h('p', {}, 'Needed by: ', s.registeredBy.length ? s.registeredBy.join(', ') : 'no tool'),
      s.docsUrl && /^https?:\/\//.test(s.docsUrl) ? h('p', {}, h('a', { href: s.docsUrl, rel: 'noopener noreferrer', target: '_blank', text: 'Provider documentation' })) : null,
      h('p', { class: 'muted', text: `Fields: ${s.fields.map((f) => `${f.name} (${f.kind}${f.required ? ', required' : ''})`).join(', ')}` }),
      entries.length ? h('ul', { class: 'entries', 'aria-label': `Entries of ${s.name}` }, entries) : h('p', { class: 'empty', text: 'No entries yet.' }),
      admin && (s.multiEntry || !s.entries.length) ? h('details', {}, h('summary', { text: `Add an entry to ${s.name}` }), entryForm(s, null)) : null,
      admin ? h('button', { type: 'button', class: 'btn small danger', text: `Delete service ${s.name}`, onclick: async () => {
        if (!(await confirmDialog(`Delete ${s.name}?`, 'The service and all its entries are deleted.', 'Delete service'))) return;
        try { await del(`/config/services/${seg(s.name)}`); await load(); } catch (err) { toast(err.message, 'error'); }
      } }) : null);
  }

  function newServiceForm() {
    const name = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' });
    const display = h('input', { type: 'text' });
    const multi = checkbox('Several entries (e.g. accounts)', false);
    const fName = field('Service name', name, 'What tool code asks for: lowercase letters, digits and _.');
    const fDisplay = field('Display name', display);
    const form = h('form', { class: 'card', 'aria-labelledby': 'new-service-title' },
      h('h2', { id: 'new-service-title', text: 'New service' }), fName.wrap, fDisplay.wrap, multi.wrap,
      h('p', { class: 'muted', text: 'It gets the fields api_key (secret) and base_url.' }),
      h('button', { type: 'submit', class: 'btn primary', text: 'Add service' }));
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      fName.error('');
      fDisplay.error('');
      const body = { name: name.value.trim(), multiEntry: multi.input.checked };
      if (display.value.trim()) body.displayName = display.value.trim();
      try {
        await post('/config/services', body);
        name.value = '';
        display.value = '';
        await load();
      } catch (err) {
        (/display/i.test(err.message) ? fDisplay : fName).error(err.message);
      }
    });
    return form;
  }

  // A refresh that finds nothing changed leaves the page as it is; one that finds a change
  // (a tool registered a service) redraws it with what the person holds kept: a value being
  // typed, an open form, the focus.
  let shown = null;
  async function load(keeping = false) {
    const data = await get('/config/services');
    const json = JSON.stringify(data);
    if (json === shown) return;
    shown = json;
    const services = Array.isArray(data) ? data : data.services || [];
    const draw = () => replace(listEl, services.length ? h('ul', { class: 'cards list', 'aria-label': 'Services' }, services.map(serviceCard)) : h('p', { class: 'empty', text: 'No services yet.' }));
    if (keeping) await redrawKeeping(listEl, draw);
    else draw();
  }

  replace(main, h('h1', { text: 'Config Center' }),
    h('p', { class: 'muted', text: 'Values your tools need. Secrets are stored encrypted and are only ever shown masked.' }),
    listEl, admin ? newServiceForm() : null);
  await load();
  return { refresh: (what) => (what.tools ? load(true) : null) };
}
