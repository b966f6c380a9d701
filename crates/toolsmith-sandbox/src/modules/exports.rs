//! The names a CommonJS file exports, found without running it (what Node's
//! `cjs-module-lexer` does, for the common shapes): `exports.x = …`, `module.exports.x = …`,
//! `exports["x"] = …`, `Object.defineProperty(exports, "x", …)`, the keys of
//! `module.exports = {a, b: …}`, and the re-exports `module.exports = require("…")`,
//! `__exportStar(require("…"))` and `__export(require("…"))`, which the caller follows.
//!
//! `import('cjs-package')` then has these names besides `default` (which is `module.exports`).
//! A name missed here is still reachable as `default.name`.

/// Named exports and re-exported specifiers of a CommonJS source.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct CjsExports {
    pub(crate) names: Vec<String>,
    pub(crate) reexports: Vec<String>,
}

/// Scans `source` for the names it exports.
pub(crate) fn scan(source: &str) -> CjsExports {
    let mut found = CjsExports::default();
    for (at, _) in source.match_indices("exports") {
        let before = source.get(..at).unwrap_or("");
        if before.ends_with(|c: char| is_ident(c) && c != '.') {
            continue;
        }
        let rest = source.get(at + "exports".len()..).unwrap_or("");
        if let Some(name) = rest
            .strip_prefix('.')
            .map(ident_prefix)
            .filter(|n| !n.is_empty())
            && assigns(rest.get(1 + name.len()..).unwrap_or(""))
        {
            push(&mut found.names, name);
        } else if let Some(inner) = rest.strip_prefix('[')
            && let Some(name) = quoted_prefix(inner)
            && let Some(after) = inner.get(name.len() + 2..)
            && let Some(after) = after.trim_start().strip_prefix(']')
            && assigns(after)
        {
            push(&mut found.names, name);
        } else if before.ends_with("module.") && rest.trim_start().starts_with('=') {
            let value = rest.trim_start().get(1..).unwrap_or("").trim_start();
            if !value.starts_with('=') {
                if let Some(object) = value.strip_prefix('{') {
                    for key in object_keys(object) {
                        push(&mut found.names, key);
                    }
                } else if let Some(specifier) = require_call(value) {
                    found.reexports.push(specifier.to_owned());
                }
            }
        }
    }
    for marker in [
        "Object.defineProperty(exports,",
        "Object.defineProperty(module.exports,",
    ] {
        for (at, _) in source.match_indices(marker) {
            let rest = source.get(at + marker.len()..).unwrap_or("").trim_start();
            if let Some(name) = quoted_prefix(rest) {
                push(&mut found.names, name);
            }
        }
    }
    for marker in ["__exportStar(", "__export("] {
        for (at, _) in source.match_indices(marker) {
            let rest = source.get(at + marker.len()..).unwrap_or("").trim_start();
            if let Some(specifier) = require_call(rest) {
                found.reexports.push(specifier.to_owned());
            }
        }
    }
    found.names.retain(|name| usable(name));
    found
}

/// Whether `name` can be a named export of the facade module.
fn usable(name: &str) -> bool {
    name != "default" && name != "__esModule" && !RESERVED.contains(&name)
}

const RESERVED: &[&str] = &[
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "implements",
    "import",
    "in",
    "instanceof",
    "interface",
    "let",
    "new",
    "null",
    "package",
    "private",
    "protected",
    "public",
    "return",
    "static",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    "arguments",
    "eval",
];

fn push(names: &mut Vec<String>, name: &str) {
    if !names.iter().any(|n| n == name) {
        names.push(name.to_owned());
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.'
}

fn ident_prefix(text: &str) -> &str {
    let end = text
        .char_indices()
        .find(|(i, c)| {
            !(c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
                || (*i == 0 && c.is_ascii_digit())
        })
        .map_or(text.len(), |(i, _)| i);
    text.get(..end).unwrap_or("")
}

/// `= …` but not `==`.
fn assigns(rest: &str) -> bool {
    let rest = rest.trim_start();
    rest.starts_with('=') && !rest.starts_with("==")
}

/// The identifier inside a leading `"…"` or `'…'`.
fn quoted_prefix(text: &str) -> Option<&str> {
    let quote = text.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = text.get(1..)?;
    let end = inner.find(quote)?;
    let name = inner.get(..end)?;
    (!name.is_empty() && ident_prefix(name) == name).then_some(name)
}

/// The specifier of a leading `require("…")`.
fn require_call(text: &str) -> Option<&str> {
    let inner = text.strip_prefix("require(")?.trim_start();
    let quote = inner.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = inner.get(1..)?;
    let end = body.find(quote)?;
    body.get(..end)
}

/// The top-level keys of an object literal whose `{` was just read.
fn object_keys(object: &str) -> Vec<&str> {
    let mut keys = Vec::new();
    let mut depth = 0usize;
    let mut expect_key = true;
    let mut rest = object;
    while let Some(c) = rest.chars().next() {
        let step = c.len_utf8();
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            ',' if depth == 0 => expect_key = true,
            '"' | '\'' | '`' => {
                // Skip the string.
                let body = rest.get(1..).unwrap_or("");
                let end = body.find(c).map_or(body.len(), |e| e + 1);
                rest = body.get(end..).unwrap_or("");
                continue;
            }
            _ if depth == 0 && expect_key && (c.is_ascii_alphabetic() || c == '_' || c == '$') => {
                let key = ident_prefix(rest);
                let after = rest.get(key.len()..).unwrap_or("").trim_start();
                if after.starts_with(':')
                    || after.starts_with(',')
                    || after.starts_with('}')
                    || after.starts_with('(')
                {
                    keys.push(key);
                }
                expect_key = false;
                rest = rest.get(key.len().max(1)..).unwrap_or("");
                continue;
            }
            _ if !c.is_whitespace() && depth == 0 => expect_key = false,
            _ => {}
        }
        rest = rest.get(step..).unwrap_or("");
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_common_shapes() {
        let found = scan(
            r#""use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.parse = parse;
exports['stringify'] = x;
module.exports.extra = 1;
if (exports.parse == null) {}
Object.defineProperty(exports, 'lazy', { get() {} });
__exportStar(require("./more"), exports);
"#,
        );
        assert_eq!(found.names, ["parse", "stringify", "extra", "lazy"]);
        assert_eq!(found.reexports, ["./more"]);
        let object = scan("module.exports = { a, b: 1, c() {}, 'd': 2, e: { f: 1 } };");
        assert_eq!(object.names, ["a", "b", "c", "e"]);
        let again = scan("module.exports = require('./impl');");
        assert_eq!(again.reexports, ["./impl"]);
    }
}
