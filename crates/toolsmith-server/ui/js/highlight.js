// Syntax highlighting by tokenizing into <span class="tok-…"> text nodes (never HTML):
// JavaScript, JSON (a command tool's spec, whose "command" is highlighted as shell), shell and
// YAML (HTTP definitions). Used by the read-only code blocks and by the code editor
// (code_editor.js), which lays the highlighted text under its textarea.

import { h } from './dom.js';

const JS_KEYWORDS = new Set(('async await break case catch class const continue default delete do else export extends '
  + 'false finally for function if import in instanceof let new null of return switch this throw true try typeof '
  + 'undefined var void while yield').split(' '));
/** What the sandbox gives a tool (ARCHITECTURE.md, toolsmith-sandbox): shown apart from other names. */
const JS_GLOBALS = new Set(['args', 'context', 'utils', 'console', 'fetch', 'fs', 'shell', 'mcp']);
const SHELL_KEYWORDS = new Set('if then else elif fi for while until do done case esac in function select time'.split(' '));

const JS_TOKEN = /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(\b\d[\d_]*(?:\.\d+)?(?:e[+-]?\d+)?\b)|([A-Za-z_$][\w$]*)/g;
const YAML_TOKEN = /(#[^\n]*)|("(?:\\.|[^"\\\n])*"|'(?:[^'\n]|'')*')|(\b\d+(?:\.\d+)?\b)|(^[ \t-]*[A-Za-z_][\w.-]*(?=:))|(\{\{[^}\n]*\}\})/gm;
const SHELL_TOKEN = /((?:^|(?<=\s))#[^\n]*)|('[^']*'|"(?:\\.|[^"\\])*")|(\{\{[^}\n]*\}\})|(\$\{[^}\n]*\}|\$[A-Za-z_][\w]*|\$[0-9#?@*$!-])|([A-Za-z_][\w-]*)|(\|\||&&|[|;&<>])/g;
const JSON_STRING_AFTER_COMMAND = /("command"\s*:\s*)("(?:\\.|[^"\\\n])*")/g;

/** Parts (text and spans) of `code` split by `re`, each match classed by `classify`. */
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

function js(code) {
  return tokens(code, JS_TOKEN, (m) => {
    if (m[1]) return 'comment';
    if (m[2]) return 'string';
    if (m[3]) return 'number';
    if (m[4] && JS_KEYWORDS.has(m[4])) return 'keyword';
    if (m[4] && JS_GLOBALS.has(m[4])) return 'global';
    return null;
  });
}

function yaml(code) {
  return tokens(code, YAML_TOKEN, (m) => (m[1] ? 'comment' : m[2] ? 'string' : m[3] ? 'number' : m[4] ? 'key' : m[5] ? 'global' : null));
}

function shell(code) {
  let first = true;
  return tokens(code, SHELL_TOKEN, (m) => {
    if (m[1]) return 'comment';
    if (m[2]) return 'string';
    if (m[3]) return 'global';
    if (m[4]) return 'number';
    if (m[6]) { first = true; return 'keyword'; }
    if (m[5]) {
      if (SHELL_KEYWORDS.has(m[5])) { first = true; return 'keyword'; }
      if (first) { first = false; return 'key'; }
    }
    return null;
  });
}

/** JSON, with the string of a "command" key highlighted as the shell line it is. */
function json(code) {
  const out = [];
  let last = 0;
  for (const m of code.matchAll(JSON_STRING_AFTER_COMMAND)) {
    const start = m.index + m[1].length;
    out.push(...js(code.slice(last, start)));
    const quoted = m[2];
    out.push(h('span', { class: 'tok-string', text: '"' }), ...shell(quoted.slice(1, -1)), h('span', { class: 'tok-string', text: '"' }));
    last = start + quoted.length;
  }
  out.push(...js(code.slice(last)));
  return out;
}

const LANGUAGES = { js, json, yaml, shell };

/** `code` as highlighted parts (text nodes' strings and spans) in `language` (js, json, yaml, shell). */
export function highlight(code, language) {
  const text = String(code || '');
  if (text.length > 200_000) return [text];
  return (LANGUAGES[language] || js)(text);
}

/** A <pre><code> block of `code` in `language` (js, json, yaml, shell). */
export function codeBlock(code, language, label) {
  return h('pre', { class: 'code', tabindex: '0', 'aria-label': label || 'Code' }, h('code', {}, highlight(code, language)));
}
