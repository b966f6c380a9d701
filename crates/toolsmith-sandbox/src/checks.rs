//! Registration-time checks of tool code: not empty, not too large, none of the forbidden
//! patterns, and it compiles as the body of an async function.
//!
//! The patterns are a speed bump with friendly hints, not the security boundary (that is the
//! engine, see `engine.rs`): `globalThis['ev' + 'al']` or `\u0065val` pass here and fail at
//! run time. They are matched as JavaScript *tokens* rather than substrings, to keep false
//! positives away from honest code:
//!
//! - Text inside string literals, template text, comments and regex literals is ignored:
//!   `return "could not process the file"` is fine.
//! - Names match whole identifiers only: `processText`, `preprocess` and `evaluate(` are fine.
//! - Member access does not count for the names of globals (`job.process`, `arr.with(0, 1)`,
//!   `this.require(x)` reach no global); it does for `__proto__` and `constructor[`, which are
//!   dangerous precisely as members. Nor does an object key (`{ process: 1 }`). A method named
//!   like a global (`{ process() {} }`) is still caught: telling it from a call would take a
//!   parser, and renaming it is easy.
//! - Whitespace before `(`, `.` or `[` does not hide a pattern: `eval (x)` is `eval(`.

use crate::CodeError;
use crate::compile::{CompileError, Compiler};

/// One forbidden pattern: an identifier, what must follow it, and the hint shown.
struct Pattern {
    /// As reported in [`CodeError::Forbidden`].
    text: &'static str,
    word: &'static str,
    /// What must follow (after optional whitespace), if anything.
    then: Option<&'static str>,
    /// Whether `x.word` counts too.
    as_member: bool,
    hint: &'static str,
}

const PATTERNS: &[Pattern] = &[
    Pattern {
        text: "process.exit",
        word: "process",
        then: Some(".exit"),
        as_member: false,
        hint: "a tool cannot exit the process; return a value, or throw an Error to fail",
    },
    Pattern {
        text: "require(",
        word: "require",
        then: Some("("),
        as_member: false,
        hint: "tool code has no require(). For files: declare permissions: [\"filesystem\"] and use the fs global (`await fs.readFile('notes.txt')`, in the caller's workspace), or call the file tools (read_file, write_file) with utils.callTool(); for HTTP: permissions: [\"network\"] and fetch(); for an npm package: declare it in the tool's dependencies and load it with `await import('name')`",
    },
    Pattern {
        text: "__dirname",
        word: "__dirname",
        then: None,
        as_member: false,
        hint: "there are no files in the sandbox; pass what the tool needs in its arguments",
    },
    Pattern {
        text: "__filename",
        word: "__filename",
        then: None,
        as_member: false,
        hint: "there are no files in the sandbox; pass what the tool needs in its arguments",
    },
    Pattern {
        text: "global.",
        word: "global",
        then: Some("."),
        as_member: false,
        hint: "there is no global object to reach into; use args, context and utils",
    },
    Pattern {
        text: "globalThis.",
        word: "globalThis",
        then: Some("."),
        as_member: false,
        hint: "there is no global object to reach into; use args, context and utils",
    },
    Pattern {
        text: "eval(",
        word: "eval",
        then: Some("("),
        as_member: false,
        hint: "code cannot be generated from strings; write the code directly, or use utils.parseJson() for data",
    },
    Pattern {
        text: "Function(",
        word: "Function",
        then: Some("("),
        as_member: false,
        hint: "functions cannot be built from strings; write the function directly",
    },
    Pattern {
        text: "__proto__",
        word: "__proto__",
        then: None,
        as_member: true,
        hint: "prototypes cannot be changed this way; use plain objects, or Object.create()",
    },
    Pattern {
        text: "constructor[",
        word: "constructor",
        then: Some("["),
        as_member: true,
        hint: "computed access to constructors is not allowed; call the functions you need directly",
    },
    Pattern {
        text: "with(",
        word: "with",
        then: Some("("),
        as_member: false,
        hint: "'with' statements are not allowed (tool code runs in strict mode); name the object explicitly",
    },
];

pub(crate) fn check_code(code: &str, max_bytes: usize) -> Result<(), CodeError> {
    if code.trim().is_empty() {
        return Err(CodeError::Empty);
    }
    if code.len() > max_bytes {
        return Err(CodeError::TooLarge {
            len: code.len(),
            max: max_bytes,
        });
    }
    if let Some(pattern) = forbidden(code) {
        return Err(CodeError::Forbidden {
            pattern: pattern.text,
            hint: pattern.hint,
        });
    }
    match Compiler::new().tool(code) {
        Ok(_) => Ok(()),
        Err(CompileError::Syntax(message) | CompileError::Internal(message)) => {
            Err(CodeError::Syntax(message))
        }
    }
}

/// The first pattern (in the order of [`PATTERNS`]) that the code contains.
fn forbidden(code: &str) -> Option<&'static Pattern> {
    let tokens = code_only(code);
    PATTERNS.iter().find(|p| contains(&tokens, p))
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn contains(code: &[u8], pattern: &Pattern) -> bool {
    let word = pattern.word.as_bytes();
    let mut from = 0;
    while let Some(found) = code.get(from..).and_then(|tail| find(tail, word)) {
        let at = from + found;
        from = at + 1;
        let ident_at = |i: usize| code.get(i).is_some_and(|b| is_ident(*b));
        if at.checked_sub(1).is_some_and(ident_at) {
            continue;
        }
        let end = at + word.len();
        if ident_at(end) {
            continue;
        }
        let before = previous_significant(code, at);
        if !pattern.as_member && before == Some(b'.') {
            continue;
        }
        let rest = code.get(end..).unwrap_or_default().trim_ascii_start();
        // `{ process: 1 }` names a key, not the global.
        if matches!(before, Some(b'{' | b',')) && rest.first() == Some(&b':') {
            continue;
        }
        match pattern.then {
            None => return true,
            Some(next) => {
                let next = next.as_bytes();
                let ends_in_name = next.last().copied().is_some_and(is_ident);
                let whole = rest.get(next.len()).is_none_or(|b| !is_ident(*b));
                if rest.starts_with(next) && (whole || !ends_in_name) {
                    return true;
                }
            }
        }
    }
    false
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn previous_significant(code: &[u8], at: usize) -> Option<u8> {
    code.get(..at)
        .unwrap_or_default()
        .trim_ascii_end()
        .last()
        .copied()
}

/// Words after which a `/` starts a regex literal rather than a division.
const REGEX_AFTER_WORDS: &[&str] = &[
    "return",
    "typeof",
    "case",
    "do",
    "else",
    "in",
    "of",
    "new",
    "delete",
    "void",
    "throw",
    "instanceof",
    "yield",
    "await",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    Single,
    Double,
    Template,
    LineComment,
    BlockComment,
    Regex { in_class: bool },
}

/// The code with the insides of strings, template text, comments and regex literals blanked
/// out (same length, so positions still match).
fn code_only(src: &str) -> Vec<u8> {
    let bytes = src.as_bytes();
    let mut out = bytes.to_vec();
    let mut state = State::Code;
    // Brace depths at which a `${` of an enclosing template literal was opened.
    let mut templates: Vec<usize> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let next = bytes.get(i + 1).copied();
        match state {
            State::Code => match b {
                b'\'' => state = State::Single,
                b'"' => state = State::Double,
                b'`' => state = State::Template,
                b'/' if next == Some(b'/') => {
                    state = State::LineComment;
                    blank(&mut out, i);
                }
                b'/' if next == Some(b'*') => {
                    state = State::BlockComment;
                    blank(&mut out, i);
                }
                b'/' if regex_may_start(&out, i) => state = State::Regex { in_class: false },
                b'{' => depth += 1,
                b'}' => {
                    if templates.last() == Some(&depth) {
                        templates.pop();
                        state = State::Template;
                    } else {
                        depth = depth.saturating_sub(1);
                    }
                }
                _ => {}
            },
            State::Single | State::Double => {
                let quote = if state == State::Single { b'\'' } else { b'"' };
                if b == b'\\' {
                    blank(&mut out, i);
                    blank(&mut out, i + 1);
                    i += 2;
                    continue;
                }
                if b == quote || b == b'\n' {
                    state = State::Code;
                } else {
                    blank(&mut out, i);
                }
            }
            State::Template => {
                if b == b'\\' {
                    blank(&mut out, i);
                    blank(&mut out, i + 1);
                    i += 2;
                    continue;
                }
                if b == b'`' {
                    state = State::Code;
                } else if b == b'$' && next == Some(b'{') {
                    templates.push(depth);
                    state = State::Code;
                    i += 2;
                    continue;
                } else {
                    blank(&mut out, i);
                }
            }
            State::LineComment => {
                if b == b'\n' {
                    state = State::Code;
                } else {
                    blank(&mut out, i);
                }
            }
            State::BlockComment => {
                blank(&mut out, i);
                if b == b'*' && next == Some(b'/') {
                    blank(&mut out, i + 1);
                    state = State::Code;
                    i += 2;
                    continue;
                }
            }
            State::Regex { in_class } => {
                if b == b'\\' {
                    blank(&mut out, i);
                    blank(&mut out, i + 1);
                    i += 2;
                    continue;
                }
                if b == b'\n' || (b == b'/' && !in_class) {
                    state = State::Code;
                } else {
                    state = State::Regex {
                        in_class: match b {
                            b'[' => true,
                            b']' => false,
                            _ => in_class,
                        },
                    };
                    blank(&mut out, i);
                }
            }
        }
        i += 1;
    }
    out
}

/// Blanks out the byte at `i` (nothing past the end).
fn blank(out: &mut [u8], i: usize) {
    if let Some(o) = out.get_mut(i) {
        *o = b' ';
    }
}

/// Whether a `/` at `at` starts a regex literal, judged by what precedes it.
fn regex_may_start(code: &[u8], at: usize) -> bool {
    let before = code.get(..at).unwrap_or_default().trim_ascii_end();
    let Some(&prev) = before.last() else {
        return true;
    };
    if prev == b')' || prev == b']' || prev == b'}' {
        return false;
    }
    if !is_ident(prev) {
        return true;
    }
    let start = before
        .iter()
        .rposition(|b| !is_ident(*b))
        .map_or(0, |p| p + 1);
    let word = before.get(start..).unwrap_or_default();
    REGEX_AFTER_WORDS.iter().any(|w| w.as_bytes() == word)
}

#[cfg(test)]
mod tests;
