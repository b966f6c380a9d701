//! `regex`: test, match, match all, replace or split text with a regular expression, on the
//! linear-time engine of [`super::pattern`] (no pattern can hang a worker).
//!
//! Positions are character (Unicode scalar value) offsets, not bytes. Replacements use `$1`,
//! `${name}` and `$0` (the whole match); `$$` is a literal `$`.

use regex::{Captures, Regex};
use serde_json::{Map, Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::pattern::{MAX_PATTERN_BYTES, compile};
use super::{Fail, MAX_TEXT_BYTES, check_size, opt_str_arg, required_choice, str_arg, text_arg};

const OPERATIONS: &[&str] = &["test", "match", "match_all", "replace", "split"];
/// Most matches (or split parts) one call returns.
pub const MAX_MATCHES: usize = 1000;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "regex",
        "Apply a regular expression to text: test whether it matches, get the first match or all \
         matches (with groups and positions), replace matches, or split the text. Rust regex \
         syntax (like JavaScript's, without look-around and backreferences), on a linear-time \
         engine. Replacements use $1, ${name} and $0 for the whole match.",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "The regular expression, e.g. \"(\\\\d{4})-(\\\\d{2})\". At most 1000 bytes."},
                "text": {"type": "string", "description": "The text to search (at most 1 MB)."},
                "operation": {"type": "string", "enum": OPERATIONS, "default": "match_all", "description": "test, match (first), match_all (default), replace, or split."},
                "replacement": {"type": "string", "description": "For replace: the replacement, with $1 / ${name} / $0 for groups."},
                "flags": {"type": "string", "description": "Any of g (replace every match; match_all is always global), i (ignore case), m (^ and $ at line ends), s (. matches newline), x (verbose)."}
            },
            "required": ["pattern", "text"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "regex", "regexp", "regular", "expression", "pattern", "match", "replace", "find",
        "search", "split", "test", "grep", "substitute",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let pattern = str_arg(args, "pattern")?;
    let text = text_arg(args, "text", MAX_TEXT_BYTES)?;
    let operation = if args.get("operation").is_some() {
        required_choice(args, "operation", OPERATIONS)?
    } else {
        "match_all"
    };
    let flags = opt_str_arg(args, "flags", "");
    check_size("flags", flags.len(), 16)?;
    let compiled = compile(pattern, flags)?;
    let re = &compiled.regex;
    let result = match operation {
        "test" => json!(re.is_match(text)),
        "match" => re.captures(text).map_or(Value::Null, |c| {
            describe(re, &c, text, &mut Offsets::default())
        }),
        "replace" => {
            let replacement = args
                .get("replacement")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    Fail::Args(
                        "'replacement' is required for replace (use \"\" to delete the matches)"
                            .to_owned(),
                    )
                })?;
            check_size("replacement", replacement.len(), MAX_PATTERN_BYTES)?;
            let replaced = if compiled.global {
                re.replace_all(text, replacement)
            } else {
                re.replace(text, replacement)
            };
            check_size("result", replaced.len(), 2 * MAX_TEXT_BYTES)
                .map_err(|e| Fail::Run(e.message().to_owned()))?;
            json!(replaced)
        }
        "split" => {
            let parts: Vec<&str> = re.splitn(text, MAX_MATCHES + 1).collect();
            if parts.len() > MAX_MATCHES {
                return Err(too_many());
            }
            json!(parts)
        }
        _ => {
            let mut offsets = Offsets::default();
            let mut all = Vec::new();
            for c in re.captures_iter(text) {
                if all.len() == MAX_MATCHES {
                    return Err(too_many());
                }
                all.push(describe(re, &c, text, &mut offsets));
            }
            json!(all)
        }
    };
    let count = result.as_array().map_or(0, Vec::len);
    let mut out = json!({"operation": operation, "pattern": pattern, "result": result});
    if operation == "match_all" {
        object::set(&mut out, "count", json!(count));
    }
    Ok(out)
}

fn too_many() -> Fail {
    Fail::Args(format!(
        "more than {MAX_MATCHES} matches: make the pattern more specific or send a shorter text"
    ))
}

/// Character offsets of byte positions, counted incrementally (matches come in order).
#[derive(Default)]
struct Offsets {
    byte: usize,
    chars: usize,
}

impl Offsets {
    fn at(&mut self, text: &str, byte: usize) -> usize {
        if byte < self.byte {
            self.byte = 0;
            self.chars = 0;
        }
        self.chars += text.get(self.byte..byte).map_or(0, |s| s.chars().count());
        self.byte = byte;
        self.chars
    }
}

/// One match: its text, its character index, its groups (null where a group did not take
/// part) and its named groups.
fn describe(re: &Regex, c: &Captures<'_>, text: &str, offsets: &mut Offsets) -> Value {
    let whole = c.get(0).map_or(0..0, |m| m.range());
    let groups: Vec<Value> = c
        .iter()
        .skip(1)
        .map(|g| g.map_or(Value::Null, |g| json!(g.as_str())))
        .collect();
    let mut named = Map::new();
    for name in re.capture_names().flatten() {
        named.insert(
            name.to_owned(),
            c.name(name).map_or(Value::Null, |g| json!(g.as_str())),
        );
    }
    let mut out = json!({
        "match": c.get(0).map_or("", |m| m.as_str()),
        "index": offsets.at(text, whole.start),
        "groups": groups,
    });
    if !named.is_empty() {
        object::set(&mut out, "namedGroups", Value::Object(named));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(args: Value) -> Result<Value, Fail> {
        run(&args)
    }

    #[test]
    fn every_operation() {
        let text = "Order 2024-01-15 shipped, 2024-02-03 delivered. Ünïcode 2025-12-31";
        let pattern = r"(?<y>\d{4})-(\d{2})-(\d{2})";
        let all = re(json!({"pattern": pattern, "text": text})).unwrap();
        assert_eq!(all["count"], 3);
        assert_eq!(
            all["result"][0],
            json!({"match": "2024-01-15", "index": 6, "groups": ["2024", "01", "15"], "namedGroups": {"y": "2024"}})
        );
        assert_eq!(
            all["result"][2]["index"], 56,
            "character, not byte, offsets"
        );
        let first = re(json!({"pattern": pattern, "text": text, "operation": "match"})).unwrap();
        assert_eq!(first["result"]["match"], "2024-01-15");
        let none = re(json!({"pattern": "xyz", "text": text, "operation": "match"})).unwrap();
        assert_eq!(none["result"], Value::Null);
        assert_eq!(
            re(json!({"pattern": "SHIPPED", "text": text, "operation": "test", "flags": "i"}))
                .unwrap()["result"],
            true
        );
        assert_eq!(
            re(json!({"pattern": "SHIPPED", "text": text, "operation": "test"})).unwrap()["result"],
            false
        );
        let one = re(json!({"pattern": pattern, "text": text, "operation": "replace", "replacement": "$3/$2/${y}"})).unwrap();
        assert_eq!(
            one["result"],
            "Order 15/01/2024 shipped, 2024-02-03 delivered. Ünïcode 2025-12-31"
        );
        let every = re(json!({"pattern": pattern, "text": text, "operation": "replace", "replacement": "[$0]", "flags": "g"})).unwrap();
        assert_eq!(
            every["result"],
            "Order [2024-01-15] shipped, [2024-02-03] delivered. Ünïcode [2025-12-31]"
        );
        let parts =
            re(json!({"pattern": r"\s*,\s*", "text": "a, b,c ,d", "operation": "split"})).unwrap();
        assert_eq!(parts["result"], json!(["a", "b", "c", "d"]));
        let optional = re(json!({"pattern": "(a)|(b)", "text": "b"})).unwrap();
        assert_eq!(optional["result"][0]["groups"], json!([null, "b"]));
    }

    #[test]
    fn catastrophic_patterns_answer_correctly() {
        // (a+)+$ backtracks exponentially on "aaaa…b" in a backtracking engine; here it is one
        // linear pass. The answers are what a correct engine says.
        let text = format!("{}b", "a".repeat(100_000));
        for (pattern, expected) in [
            ("(a+)+$", false),
            ("(a|aa)+$", false),
            ("^(a*)*$", false),
            ("(.*a){20}$", false),
            ("(a|a)*$", true), // zero repetitions match at the end
            ("^(a+)+b$", true),
        ] {
            let got = re(json!({"pattern": pattern, "text": text, "operation": "test"})).unwrap();
            assert_eq!(got["result"], expected, "{pattern}");
        }
        let got = re(json!({"pattern": "(a+)+b", "text": text, "operation": "match"})).unwrap();
        assert_eq!(got["result"]["index"], 0);
        assert_eq!(got["result"]["match"].as_str().map(str::len), Some(100_001));
    }

    #[test]
    fn bad_arguments_and_limits() {
        let msg = |args: Value| re(args).unwrap_err().message().to_owned();
        assert!(msg(json!({"pattern": "(?<=\\$)\\d+", "text": "$5"})).contains("look-around"));
        assert_eq!(
            msg(json!({"pattern": "a", "text": "a", "operation": "find"})),
            "'operation' must be one of: test, match, match_all, replace, split"
        );
        assert!(
            msg(json!({"pattern": "a", "text": "a", "operation": "replace"}))
                .contains("'replacement' is required")
        );
        assert!(
            msg(json!({"pattern": "a", "text": "a".repeat(MAX_TEXT_BYTES + 1)}))
                .contains("the limit is 1000000 bytes")
        );
        assert!(
            msg(json!({"pattern": "a", "text": "a".repeat(MAX_MATCHES + 1)}))
                .contains("more than 1000 matches")
        );
        assert!(
            msg(json!({"pattern": "a", "text": "a".repeat(MAX_MATCHES + 1), "operation": "split"}))
                .contains("more than 1000 matches")
        );
        assert_eq!(
            re(json!({"pattern": "a", "text": "a".repeat(MAX_MATCHES)})).unwrap()["count"],
            MAX_MATCHES
        );
        assert!(msg(json!({"text": "a"})).contains("'pattern' is required"));
    }
}
