// Syntax highlighting by tokenizing into <span class="tok-…"> text nodes (never HTML):
// JavaScript, JSON (command specs) and YAML (HTTP definitions).

import { h } from './dom.js';

const JS_KEYWORDS = new Set(('async await break case catch class const continue default delete do else export extends '
  + 'false finally for function if import in instanceof let new null of return switch this throw true try typeof '
  + 'undefined var void while yield').split(' '));

const JS_TOKEN = /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b)|([A-Za-z_$][\w$]*)/g;
const YAML_TOKEN = /(#[^\n]*)|("(?:\\.|[^"\\\n])*"|'(?:[^'\n]|'')*')|(\b\d+(?:\.\d+)?\b)|(^[ \t-]*[A-Za-z_][\w.-]*(?=:))/gm;

function tokens(code, re, classify) {
  const out = [];
  let last = 0;
  for (const m of code.matchAll(re)) {
    if (m.index > last) out.push(code.slice(last, m.index));
    const cls = classify(m);
    out.push(cls ? h('span', { class: `tok-${cls}`, text: m[0] }) : m[0]);
    last = m.index + m[0].length;
  }
  if (last < code.length) out.push(code.slice(last));
  return out;
}

/** A <pre><code> block of `code` in `language` (js, json, yaml). */
export function codeBlock(code, language, label) {
  const text = String(code || '');
  let parts;
  if (text.length > 200_000) parts = [text];
  else if (language === 'yaml') {
    parts = tokens(text, YAML_TOKEN, (m) => (m[1] ? 'comment' : m[2] ? 'string' : m[3] ? 'number' : m[4] ? 'key' : null));
  } else {
    parts = tokens(text, JS_TOKEN, (m) => {
      if (m[1]) return 'comment';
      if (m[2]) return 'string';
      if (m[3]) return 'number';
      if (m[4] && JS_KEYWORDS.has(m[4])) return 'keyword';
      return null;
    });
  }
  return h('pre', { class: 'code', tabindex: '0', 'aria-label': label || 'Code' }, h('code', {}, parts));
}
