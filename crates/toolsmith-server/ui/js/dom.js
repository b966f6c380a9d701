// DOM helpers. Everything from the server is set as text (textContent, attribute values):
// nothing here parses HTML, so a tool description like <img onerror=…> is shown, never run.

/** Creates an element: h('button', {class: 'x', onclick: fn, 'aria-label': 'Go'}, 'text', child). */
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      el.addEventListener(key.slice(2), value);
    } else if (key === 'text') {
      el.textContent = String(value);
    } else if (key === 'value' && 'value' in el) {
      el.value = String(value);
    } else if (key === 'checked' || key === 'selected' || key === 'disabled' || key === 'hidden') {
      el[key] = Boolean(value);
      if (key === 'hidden' || key === 'disabled') el.setAttribute(key, '');
    } else {
      el.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends children: nodes, strings (as text), arrays, skipping null/false. */
export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** Empties an element and fills it with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

let uid = 0;
/** A fresh id for label/description wiring. */
export function nextId(prefix = 'f') {
  uid += 1;
  return `${prefix}-${uid}`;
}

/**
 * A labelled form field with an error slot: returns {wrap, input, error(msg)}.
 * `input` is an element already created; it gets an id, aria-describedby and aria-invalid.
 */
export function field(label, input, help) {
  const id = input.id || nextId('field');
  input.id = id;
  const errorEl = h('p', { class: 'field-error', id: `${id}-error`, hidden: true });
  const helpEl = help ? h('p', { class: 'help', id: `${id}-help`, text: help }) : null;
  input.setAttribute('aria-describedby', [helpEl && helpEl.id, errorEl.id].filter(Boolean).join(' '));
  const wrap = h('div', { class: 'field' }, h('label', { for: id, text: label }), input, helpEl, errorEl);
  return {
    wrap,
    input,
    error(message) {
      errorEl.textContent = message || '';
      errorEl.hidden = !message;
      if (message) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
    },
  };
}

/** A checkbox with its label after it. */
export function checkbox(label, checked, attrs = {}) {
  const input = h('input', { type: 'checkbox', checked, ...attrs });
  const id = nextId('check');
  input.id = id;
  return { wrap: h('div', { class: 'check' }, input, h('label', { for: id, text: label })), input };
}

/** A modal confirmation; resolves true when confirmed. Esc and Cancel resolve false. */
export function confirmDialog(title, message, confirmLabel, danger = true) {
  return new Promise((resolve) => {
    const titleId = nextId('dlg');
    const cancel = h('button', { type: 'button', class: 'btn', text: 'Cancel' });
    const ok = h('button', { type: 'button', class: danger ? 'btn danger' : 'btn primary', text: confirmLabel });
    const dialog = h('dialog', { 'aria-labelledby': titleId, class: 'dialog' },
      h('h2', { id: titleId, text: title }),
      h('p', { text: message }),
      h('div', { class: 'actions' }, cancel, ok));
    const done = (value) => { dialog.close(); dialog.remove(); resolve(value); };
    cancel.addEventListener('click', () => done(false));
    ok.addEventListener('click', () => done(true));
    dialog.addEventListener('cancel', (e) => { e.preventDefault(); done(false); });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}

/** A short message in the live region. */
export function toast(message, kind = 'info') {
  const region = document.getElementById('toast');
  if (!region) return;
  const item = h('div', { class: `toast ${kind}`, text: message });
  region.append(item);
  setTimeout(() => item.remove(), 5000);
}

/** Tabs with arrow-key navigation (WAI-ARIA tabs pattern). tabs: [{id, label, render(panel)}]. */
export function tabs(label, list, selected, onSelect) {
  const tablist = h('div', { role: 'tablist', 'aria-label': label, class: 'tablist' });
  const panels = h('div', { class: 'tabpanels' });
  const buttons = list.map((t) => h('button', {
    role: 'tab', type: 'button', id: `tab-${t.id}`, 'aria-controls': `panel-${t.id}`, text: t.label,
  }));
  const panel = h('div', { role: 'tabpanel', class: 'tabpanel', tabindex: '0' });
  panels.append(panel);
  function show(index, focus) {
    buttons.forEach((b, i) => {
      b.setAttribute('aria-selected', String(i === index));
      b.tabIndex = i === index ? 0 : -1;
    });
    panel.id = `panel-${list[index].id}`;
    panel.setAttribute('aria-labelledby', buttons[index].id);
    panel.replaceChildren();
    Promise.resolve()
      .then(() => list[index].render(panel))
      .catch((e) => panel.replaceChildren(h('p', { class: 'error', role: 'alert', text: e && e.message ? e.message : String(e) })));
    if (focus) buttons[index].focus();
    if (onSelect) onSelect(list[index].id);
  }
  buttons.forEach((b, i) => {
    b.addEventListener('click', () => show(i, false));
    b.addEventListener('keydown', (e) => {
      let next = null;
      if (e.key === 'ArrowRight') next = (i + 1) % buttons.length;
      if (e.key === 'ArrowLeft') next = (i - 1 + buttons.length) % buttons.length;
      if (e.key === 'Home') next = 0;
      if (e.key === 'End') next = buttons.length - 1;
      if (next !== null) { e.preventDefault(); show(next, true); }
    });
  });
  tablist.append(...buttons);
  const start = Math.max(0, list.findIndex((t) => t.id === selected));
  show(start, false);
  return { el: h('div', { class: 'tabs' }, tablist, panels), show: (id) => show(list.findIndex((t) => t.id === id), false) };
}

/** A simple table: columns [{label, cell(row) → node|string}]. */
/**
 * A table in a horizontally scrolling region. Cells keep their text on one line (a narrow
 * screen scrolls the table rather than breaking words); a column with `wrap: true` wraps.
 */
export function table(caption, columns, rows, empty = 'Nothing to show.') {
  if (!rows.length) return h('p', { class: 'empty', text: empty });
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': caption },
    h('table', {},
      h('caption', { class: 'visually-hidden', text: caption }),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', text: c.label })))),
      h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c) => h('td', { class: c.wrap ? 'wrap' : null }, c.cell(r))))))));
}
