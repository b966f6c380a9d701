// The code editor of the tool form: the labelled <textarea> stays the control (typing, selection,
// undo, screen readers and form filling are the browser's own), with the highlighted text
// (highlight.js) laid exactly under it, line numbers, problems marked at their line, and
// completion of what the sandbox gives a tool (sandbox_api.js, generated from the sandbox's
// sources). No library, no inline style: positions are set through the CSSOM, which the page's
// CSP allows.

import { h } from './dom.js';
import { highlight } from './highlight.js';
import { SANDBOX_API } from './sandbox_api.js';

const MAX_ITEMS = 12;
let editors = 0;

/** The problems a server message points at: [{line, message}] (1-based lines of `code`). */
export function problemLines(message, code) {
  const text = String(message || '');
  const count = String(code || '').split('\n').length;
  const at = /line (\d+)(?:, column (\d+))?/i.exec(text);
  if (at) return [{ line: Math.min(Math.max(1, Number(at[1])), count), message: text }];
  // A forbidden pattern ('require(', 'eval' …) is marked where it first appears.
  const pattern = /pattern '([^']+)'/.exec(text);
  if (pattern) {
    const index = String(code).indexOf(pattern[1]);
    if (index >= 0) return [{ line: String(code).slice(0, index).split('\n').length, message: text }];
  }
  return [];
}

/**
 * Turns `textarea` into the editor. Returns {wrap (to put where the textarea was), setLanguage,
 * setProblems([{line, message}]), refresh()}. `language`: js, json, yaml or shell.
 */
export function codeEditor(textarea, language) {
  editors += 1;
  const id = `code-editor-${editors}`;
  let lang = language;
  let problems = [];
  const minRows = Number(textarea.getAttribute('rows')) || 8;
  textarea.classList.add('ce-input');
  textarea.setAttribute('wrap', 'off');
  textarea.setAttribute('autocapitalize', 'off');
  textarea.spellcheck = false;
  const code = h('code');
  const pre = h('pre', { class: 'ce-highlight', 'aria-hidden': 'true' }, code);
  const gutter = h('div', { class: 'ce-gutter', 'aria-hidden': 'true' });
  const list = h('ul', { class: 'ce-complete', role: 'listbox', id: `${id}-list`, 'aria-label': 'Completions', hidden: true });
  const status = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const body = h('div', { class: 'ce-body' }, pre, textarea, list);
  const wrap = h('div', { class: `code-editor lang-${lang}` }, gutter, body, status);
  textarea.setAttribute('aria-autocomplete', 'list');
  textarea.setAttribute('aria-controls', list.id);

  let scheduled = false;
  function paint() {
    scheduled = false;
    const text = textarea.value;
    // A trailing newline needs a line of its own under the textarea's last empty line.
    code.replaceChildren(...highlight(text.endsWith('\n') ? `${text} ` : text, lang));
    const count = text.split('\n').length;
    // The editor grows with its text (up to 30 lines; beyond, it scrolls).
    const rows = Math.min(30, Math.max(minRows, count + 1));
    if (textarea.rows !== rows) textarea.rows = rows;
    const bad = new Map(problems.map((p) => [p.line, p.message]));
    const numbers = [];
    for (let i = 1; i <= count; i += 1) {
      numbers.push(h('span', { class: bad.has(i) ? 'ce-line bad' : 'ce-line', title: bad.get(i) || null, text: bad.has(i) ? `! ${i}` : String(i) }));
    }
    gutter.replaceChildren(...numbers);
    for (const p of problems) {
      if (p.line > count) continue;
      const band = h('span', { class: 'ce-band' });
      band.style.top = `calc(${p.line - 1} * var(--ce-line))`;
      code.append(band);
    }
    sync();
  }
  function schedule() {
    if (!scheduled) { scheduled = true; requestAnimationFrame(paint); }
  }
  function sync() {
    pre.scrollTop = textarea.scrollTop;
    pre.scrollLeft = textarea.scrollLeft;
    gutter.scrollTop = textarea.scrollTop;
  }

  // ----- completion -------------------------------------------------------------------------

  let items = [];
  let active = -1;
  let typed = '';
  function close() {
    list.hidden = true;
    items = [];
    active = -1;
    textarea.removeAttribute('aria-activedescendant');
  }
  /** The dotted name just before the caret (`utils.get`), or ''. */
  function wordAtCaret() {
    if (textarea.selectionStart !== textarea.selectionEnd) return '';
    const before = textarea.value.slice(Math.max(0, textarea.selectionStart - 80), textarea.selectionStart);
    const m = /([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\.?)$/.exec(before);
    if (!m) return '';
    const start = textarea.selectionStart - m[1].length;
    const prev = start > 0 ? textarea.value[start - 1] : '';
    return prev === '.' || /[\w$'"`]/.test(prev) ? '' : m[1];
  }
  function show(word) {
    typed = word;
    items = SANDBOX_API.filter((a) => a.name.startsWith(word) && a.name !== word
      && (word.includes('.') || !a.name.includes('.'))).slice(0, MAX_ITEMS);
    if (!items.length || (!word.includes('.') && word.length < 2)) { close(); return; }
    list.replaceChildren(...items.map((a, i) => h('li', {
      role: 'option', id: `${id}-opt-${i}`, 'aria-selected': 'false',
      onmousedown: (e) => { e.preventDefault(); accept(i); },
    }, h('code', { text: a.signature }), a.needs ? h('span', { class: 'muted', text: ` needs ${a.needs}` }) : null,
    a.doc ? h('span', { class: 'ce-doc', text: a.doc }) : null)));
    list.hidden = false;
    place();
    select(0);
    status.textContent = `${items.length} completion${items.length === 1 ? '' : 's'}; arrow keys to choose, Enter or Tab to take, Escape to close.`;
  }
  function select(i) {
    active = i;
    [...list.children].forEach((li, j) => li.setAttribute('aria-selected', String(j === i)));
    const li = list.children[i];
    if (li) { textarea.setAttribute('aria-activedescendant', li.id); li.scrollIntoView({ block: 'nearest' }); }
  }
  function accept(i) {
    const a = items[i];
    if (!a) return;
    const rest = a.name.slice(typed.length) + (a.signature.endsWith(')') ? '(' : '');
    textarea.focus();
    insert(rest);
    close();
  }
  /** Puts the list under the caret: line and column times the monospace cell. */
  function place() {
    const upto = textarea.value.slice(0, textarea.selectionStart).split('\n');
    const line = upto.length;
    const column = upto[upto.length - 1].length;
    const cell = measure();
    const cs = getComputedStyle(textarea);
    list.style.top = `${parseFloat(cs.paddingTop) + line * cell.height - textarea.scrollTop + 2}px`;
    list.style.left = `${Math.max(0, Math.min(parseFloat(cs.paddingLeft) + column * cell.width - textarea.scrollLeft, textarea.clientWidth - 260))}px`;
  }
  function measure() {
    const probe = h('span', { class: 'ce-probe', text: 'MMMMMMMMMM' });
    pre.append(probe);
    const r = probe.getBoundingClientRect();
    probe.remove();
    return { width: r.width / 10, height: r.height || 20 };
  }
  /** Inserts text at the caret as typing would (so undo takes it back). */
  function insert(text) {
    if (!document.execCommand('insertText', false, text)) {
      textarea.setRangeText(text, textarea.selectionStart, textarea.selectionEnd, 'end');
      textarea.dispatchEvent(new Event('input', { bubbles: true }));
    }
  }

  textarea.addEventListener('input', (e) => {
    schedule();
    if (lang === 'js' && e.inputType !== 'insertFromPaste') {
      const word = wordAtCaret();
      if (word) show(word); else close();
    }
  });
  textarea.addEventListener('scroll', () => { sync(); if (!list.hidden) place(); });
  textarea.addEventListener('blur', close);
  textarea.addEventListener('keydown', (e) => {
    if (!list.hidden) {
      if (e.key === 'ArrowDown') { e.preventDefault(); select((active + 1) % items.length); return; }
      if (e.key === 'ArrowUp') { e.preventDefault(); select((active - 1 + items.length) % items.length); return; }
      if (e.key === 'Enter' || e.key === 'Tab') { e.preventDefault(); accept(active); return; }
      if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); close(); return; }
    }
    if (e.key === ' ' && e.ctrlKey && lang === 'js') {
      e.preventDefault();
      const word = wordAtCaret();
      if (word) show(word);
      return;
    }
    // Enter keeps the line's indentation (and adds a level after an opening bracket).
    if (e.key === 'Enter' && !e.shiftKey && !e.ctrlKey && !e.altKey && !e.metaKey) {
      const start = textarea.value.lastIndexOf('\n', textarea.selectionStart - 1) + 1;
      const line = textarea.value.slice(start, textarea.selectionStart);
      const indent = /^[ \t]*/.exec(line)[0] + (/[{[(]\s*$/.test(line) ? '  ' : '');
      if (indent) { e.preventDefault(); insert(`\n${indent}`); }
    }
  });

  paint();
  return {
    wrap,
    setLanguage(next) {
      wrap.classList.remove(`lang-${lang}`);
      lang = next;
      wrap.classList.add(`lang-${lang}`);
      close();
      schedule();
    },
    /** Marks lines with problems ([{line, message}]); [] clears them. */
    setProblems(list2) {
      problems = list2 || [];
      paint();
    },
    refresh: paint,
  };
}
