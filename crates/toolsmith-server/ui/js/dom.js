// DOM helpers. Everything from the server is set as text (textContent, attribute values):
// nothing here parses HTML, so a tool description like <img onerror=…> is shown, never run.

import { ago } from './format.js';

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

/**
 * A modal choice: a select of `options` ([{value, label}]) under `message`; resolves the value
 * chosen, or null (Esc, Cancel).
 */
export function choiceDialog(title, message, label, options, confirmLabel) {
  return new Promise((resolve) => {
    const titleId = nextId('dlg');
    const select = h('select', {}, options.map((o) => h('option', { value: o.value, text: o.label })));
    const f = field(label, select);
    const cancel = h('button', { type: 'button', class: 'btn', text: 'Cancel' });
    const ok = h('button', { type: 'button', class: 'btn primary', text: confirmLabel });
    const dialog = h('dialog', { 'aria-labelledby': titleId, class: 'dialog' },
      h('h2', { id: titleId, text: title }), h('p', { text: message }), f.wrap,
      h('div', { class: 'actions' }, cancel, ok));
    const done = (value) => { dialog.close(); dialog.remove(); resolve(value); };
    cancel.addEventListener('click', () => done(null));
    ok.addEventListener('click', () => done(select.value));
    dialog.addEventListener('cancel', (e) => { e.preventDefault(); done(null); });
    document.body.append(dialog);
    dialog.showModal();
    select.focus();
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

/**
 * A time shown as how long ago it was ("12 s ago"), kept current by `tickSince` (the page calls
 * it each second): a <time> whose datetime is the instant, whose title is the date and time.
 */
export function since(value) {
  return h('time', { datetime: value, title: new Date(value).toLocaleString(), 'data-since': '', text: ago(value) });
}

/** Brings every `since` element inside `root` up to date. */
export function tickSince(root) {
  for (const el of root.querySelectorAll('time[data-since]')) {
    const text = ago(el.getAttribute('datetime'));
    if (el.textContent !== text) el.textContent = text;
  }
}

/** Where an element is, in words that survive a redraw: its card's (or form's) label and its own. */
function placeOf(el, own) {
  const holder = el.parentElement && el.parentElement.closest('[aria-labelledby], [aria-label]');
  const holderKey = holder ? holder.getAttribute('aria-label') || holder.getAttribute('aria-labelledby') : '';
  return `${holderKey}\u0000${el.tagName}\u0000${own}`;
}

/** A form control's own name: its label's text, else its aria-label, else its text. */
function controlName(el) {
  const label = el.labels && el.labels[0];
  return (label && label.textContent) || el.getAttribute('aria-label') || el.textContent;
}

// What a person typed or chose is marked on the field (data-typed), so a redraw can carry it
// over (redrawKeeping) and never put back a value the page itself filled in. Checkboxes and
// switches are left out: what they show is the server's state.
const TYPED = 'input:not([type=checkbox]):not([type=radio]), textarea, select';
document.addEventListener('input', (e) => { if (e.target.matches && e.target.matches(TYPED)) e.target.dataset.typed = ''; }, true);

/**
 * Redraws `root` with `draw()` (which may be async) keeping what a person holds in it: what
 * they typed in a field or chose, the <details> they opened and the focus — each found again
 * in the new drawing by its card's label and its own (a live update never takes a half-typed
 * value or an open section away).
 */
export async function redrawKeeping(root, draw) {
  const typed = new Map([...root.querySelectorAll('[data-typed]')].map((el) => [placeOf(el, controlName(el)), el.value]));
  const open = new Set([...root.querySelectorAll('details[open] > summary')].map((s) => placeOf(s.parentElement, s.textContent)));
  const active = document.activeElement && root.contains(document.activeElement) ? document.activeElement : null;
  const focused = active ? placeOf(active, controlName(active)) : null;
  await draw();
  for (const s of root.querySelectorAll('details > summary')) {
    if (open.has(placeOf(s.parentElement, s.textContent))) s.parentElement.open = true;
  }
  for (const el of root.querySelectorAll(TYPED)) {
    const key = placeOf(el, controlName(el));
    if (typed.has(key)) { el.value = typed.get(key); el.dataset.typed = ''; }
  }
  if (focused) {
    const again = [...root.querySelectorAll(active.tagName)].find((el) => placeOf(el, controlName(el)) === focused);
    if (again) again.focus({ preventScroll: true });
  }
}
