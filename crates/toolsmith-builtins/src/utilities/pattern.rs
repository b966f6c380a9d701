//! Compiling a caller's regular expression for `regex` and `extract_from_text`: the `regex`
//! crate's linear-time engine (no backtracking, so no pattern can hang a worker), capped in
//! pattern length and compiled size, with JavaScript-style flags and errors that say what to
//! write instead of what the engine lacks.

use regex::{Regex, RegexBuilder};

use super::Fail;

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1000;
/// Largest compiled program (and lazy DFA cache) a pattern may need.
pub const SIZE_LIMIT: usize = 1 << 20;

/// The flags understood: `i` (ignore case), `m` (`^`/`$` at line ends), `s` (`.` matches a
/// newline), `x` (ignore white space and `#` comments in the pattern), `g` (global: every
/// match), and `u` (Unicode, always on; accepted for JavaScript habits).
pub const FLAGS: &str = "gimsux";

/// The compiled pattern and whether `g` was given.
#[derive(Debug)]
pub struct Compiled {
    pub regex: Regex,
    pub global: bool,
}

/// Compiles `pattern` with `flags`.
pub fn compile(pattern: &str, flags: &str) -> Result<Compiled, Fail> {
    if pattern.len() > MAX_PATTERN_BYTES {
        return Err(Fail::Args(format!(
            "'pattern' is {} bytes; the limit is {MAX_PATTERN_BYTES}: write a shorter pattern",
            pattern.len()
        )));
    }
    if let Some(bad) = flags.chars().find(|c| !FLAGS.contains(*c)) {
        return Err(Fail::Args(format!(
            "unknown flag '{bad}' in 'flags': use any of g (all matches), i (ignore case), m (multi-line), s (dot matches newline), x (verbose)"
        )));
    }
    let regex = RegexBuilder::new(pattern)
        .case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .dot_matches_new_line(flags.contains('s'))
        .ignore_whitespace(flags.contains('x'))
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(SIZE_LIMIT)
        .nest_limit(100)
        .build()
        .map_err(|e| Fail::Args(explain(&e, pattern)))?;
    Ok(Compiled {
        regex,
        global: flags.contains('g'),
    })
}

/// The engine's error, with what to do about the features it does not have.
fn explain(error: &regex::Error, pattern: &str) -> String {
    let text = error.to_string();
    let named_backreference = pattern.contains("\\k<") || pattern.contains("\\k{");
    if text.contains("look-around") {
        return "look-around ((?=...), (?!...), (?<=...), (?<!...)) is not supported: this tool uses a linear-time engine that cannot hang. Match the surrounding text too and keep what you need with a capture group, e.g. \"price: (\\\\d+)\" instead of \"(?<=price: )\\\\d+\"".to_owned();
    }
    if text.contains("backreferences") || named_backreference {
        return "backreferences (\\1, \\k<name>) are not supported: this tool uses a linear-time engine that cannot hang. Capture the parts with groups and compare them yourself, or list the alternatives explicitly".to_owned();
    }
    if matches!(error, regex::Error::CompiledTooBig(_)) {
        return format!(
            "the pattern compiles to more than {SIZE_LIMIT} bytes (large counted repetitions such as {{1000}} multiply its size): use smaller repetition counts or a simpler pattern"
        );
    }
    format!("invalid regular expression: {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_work_and_unknown_ones_are_named() {
        let c = compile("^b.C$", "ims").unwrap();
        assert!(c.regex.is_match("a\nB\nc"));
        assert!(!c.global);
        assert!(compile("a b # comment", "xg").unwrap().regex.is_match("ab"));
        let err = compile("a", "gy").unwrap_err();
        assert!(err.message().starts_with("unknown flag 'y'"), "{err:?}");
    }

    #[test]
    fn unsupported_features_say_what_to_do_instead() {
        for pattern in ["(?<=a)b", "a(?=b)", "a(?!b)", "(?<!a)b"] {
            let err = compile(pattern, "").unwrap_err();
            assert!(
                err.message().contains("look-around") && err.message().contains("capture group"),
                "{pattern}: {err:?}"
            );
        }
        for pattern in [r"(a)\1", r"(?<x>a)\k<x>"] {
            let err = compile(pattern, "").unwrap_err();
            assert!(
                err.message().contains("backreferences") && err.message().contains("groups"),
                "{pattern}: {err:?}"
            );
        }
        let err = compile("(", "").unwrap_err();
        assert!(
            err.message().starts_with("invalid regular expression"),
            "{err:?}"
        );
    }

    #[test]
    fn limits() {
        let err = compile(&"a".repeat(MAX_PATTERN_BYTES + 1), "").unwrap_err();
        assert!(err.message().contains("the limit is 1000"), "{err:?}");
        let err = compile(r"(\w{100}){100}", "").unwrap_err();
        assert!(
            err.message().contains("smaller repetition counts"),
            "{err:?}"
        );
        let err = compile(&format!("{}a{}", "(".repeat(200), ")".repeat(200)), "").unwrap_err();
        assert!(
            err.message().starts_with("invalid regular expression"),
            "{err:?}"
        );
    }
}
