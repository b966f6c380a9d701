//! `transform_text`: change a text's case or naming convention (camelCase, snake_case, …),
//! slugify, trim, reverse, normalize white space, remove diacritics, or truncate.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use unicode_normalization::UnicodeNormalization as _;
use unicode_normalization::char::is_combining_mark;

use super::{Fail, MAX_TEXT_BYTES, opt_int, opt_str_arg, required_choice, text_arg};

const OPERATIONS: &[&str] = &[
    "uppercase",
    "lowercase",
    "capitalize",
    "title_case",
    "sentence_case",
    "camel_case",
    "pascal_case",
    "snake_case",
    "kebab_case",
    "constant_case",
    "slugify",
    "trim",
    "trim_start",
    "trim_end",
    "reverse",
    "remove_whitespace",
    "normalize_whitespace",
    "remove_diacritics",
    "truncate",
];

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "transform_text",
        "Transform text: uppercase, lowercase, capitalize, Title Case, Sentence case, \
         camelCase, PascalCase, snake_case, kebab-case, CONSTANT_CASE, URL slug, trim, \
         reverse, remove or normalize white space, remove accents (diacritics), or truncate to \
         a length.",
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text to transform (at most 1 MB)."},
                "operation": {"type": "string", "enum": OPERATIONS, "description": "uppercase, lowercase, capitalize (first letter), title_case (Every Word), sentence_case (First word only), camel_case (helloWorld), pascal_case (HelloWorld), snake_case (hello_world), kebab_case (hello-world), constant_case (HELLO_WORLD), slugify (url-safe-slug), trim / trim_start / trim_end (white space at both ends, the start, the end), reverse, remove_whitespace (all of it), normalize_whitespace (runs become one space), remove_diacritics (é → e), truncate (to length)."},
                "options": {
                    "type": "object",
                    "description": "For truncate: maxLength (characters, default 100) and suffix (default \"...\").",
                    "properties": {
                        "maxLength": {"type": "integer", "minimum": 0, "description": "Longest result in characters, suffix included."},
                        "suffix": {"type": "string", "maxLength": 100, "description": "Appended when the text is cut."}
                    },
                    "additionalProperties": false
                }
            },
            "required": ["text", "operation"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "transform", "case", "uppercase", "lowercase", "capitalize", "title", "camelcase", "snake", "kebab", "slug", "slugify", "friendly", "permalink", "trim", "reverse", "accents", "diacritics", "truncate", "text", "rename",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let text = text_arg(args, "text", MAX_TEXT_BYTES)?;
    let operation = required_choice(args, "operation", OPERATIONS)?;
    let none = json!({});
    let options = args.get("options").unwrap_or(&none);
    let output = match operation {
        "uppercase" => text.to_uppercase(),
        "lowercase" => text.to_lowercase(),
        "capitalize" | "sentence_case" => capitalize(&text.to_lowercase()),
        "title_case" => text
            .split(' ')
            .map(|w| capitalize(&w.to_lowercase()))
            .collect::<Vec<_>>()
            .join(" "),
        "camel_case" => {
            let words = words(text);
            let mut out = String::new();
            for (i, w) in words.iter().enumerate() {
                let w = w.to_lowercase();
                out.push_str(&if i == 0 { w } else { capitalize(&w) });
            }
            out
        }
        "pascal_case" => words(text)
            .iter()
            .map(|w| capitalize(&w.to_lowercase()))
            .collect(),
        "snake_case" => join_lower(text, "_"),
        "kebab_case" => join_lower(text, "-"),
        "constant_case" => join_lower(text, "_").to_uppercase(),
        "slugify" => {
            let plain = strip_diacritics(text).to_lowercase();
            plain
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join("-")
        }
        "trim" => text.trim().to_owned(),
        "trim_start" => text.trim_start().to_owned(),
        "trim_end" => text.trim_end().to_owned(),
        "reverse" => text.nfc().collect::<Vec<_>>().into_iter().rev().collect(),
        "remove_whitespace" => text.chars().filter(|c| !c.is_whitespace()).collect(),
        "normalize_whitespace" => text.split_whitespace().collect::<Vec<_>>().join(" "),
        "remove_diacritics" => strip_diacritics(text),
        _ => {
            let max = usize::try_from(opt_int(options, "maxLength", 100, 0, i64::MAX)?)
                .unwrap_or(usize::MAX);
            truncate(text, max, opt_str_arg(options, "suffix", "..."))
        }
    };
    Ok(json!({
        "operation": operation,
        "output": output,
        "inputLength": text.chars().count(),
        "outputLength": output.chars().count(),
    }))
}

/// The first character in upper case, the rest as they are.
fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// The words of an identifier or phrase: split at anything not a letter or digit, at a
/// lower-to-upper change (`camelCase`) and before the last capital of an acronym
/// (`HTTPServer` → `HTTP`, `Server`).
fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if let Some(&prev) = i.checked_sub(1).and_then(|p| chars.get(p)) {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = c.is_uppercase()
                && ((prev.is_lowercase() || prev.is_ascii_digit())
                    || (prev.is_uppercase() && next_lower));
            if boundary && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        }
        current.push(c);
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

fn join_lower(text: &str, separator: &str) -> String {
    words(text)
        .iter()
        .map(|w| w.to_lowercase())
        .collect::<Vec<_>>()
        .join(separator)
}

/// The text without combining marks (é → e, ñ → n), recomposed.
fn strip_diacritics(text: &str) -> String {
    text.nfd()
        .filter(|c| !is_combining_mark(*c))
        .nfc()
        .collect()
}

/// At most `max` characters: the start of the text and `suffix`, or the text when it fits.
fn truncate(text: &str, max: usize, suffix: &str) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let suffix_len = suffix.chars().count();
    if suffix_len >= max {
        return text.chars().take(max).collect();
    }
    let mut out: String = text.chars().take(max - suffix_len).collect();
    out.push_str(suffix);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(text: &str, operation: &str) -> String {
        run(&json!({"text": text, "operation": operation})).unwrap()["output"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn every_operation() {
        let cases = [
            ("hello wörld", "uppercase", "HELLO WÖRLD"),
            ("HeLLo", "lowercase", "hello"),
            ("hELLO there", "capitalize", "Hello there"),
            ("the QUICK brown fox", "title_case", "The Quick Brown Fox"),
            (
                "parseHTTPServer v2 config_file",
                "camel_case",
                "parseHttpServerV2ConfigFile",
            ),
            ("user-id number", "pascal_case", "UserIdNumber"),
            (
                "parseHTTPServer2Now",
                "snake_case",
                "parse_http_server2_now",
            ),
            ("Hello World_again", "kebab_case", "hello-world-again"),
            ("max retry count", "constant_case", "MAX_RETRY_COUNT"),
            (
                "  Crème Brûlée: 10% off!  ",
                "slugify",
                "creme-brulee-10-off",
            ),
            ("  a b  ", "trim", "a b"),
            ("  a b  ", "trim_start", "a b  "),
            ("  a b  ", "trim_end", "  a b"),
            ("abc é", "reverse", "é cba"),
            (" a \t b\nc ", "remove_whitespace", "abc"),
            (" a \t b\nc ", "normalize_whitespace", "a b c"),
            (
                "Ångström façade naïve",
                "remove_diacritics",
                "Angstrom facade naive",
            ),
        ];
        for (text, op, expected) in cases {
            assert_eq!(t(text, op), expected, "{op}");
        }
        let got = run(&json!({"text": "The quick brown fox", "operation": "truncate", "options": {"maxLength": 10}})).unwrap();
        assert_eq!(
            got,
            json!({"operation": "truncate", "output": "The qui...", "inputLength": 19, "outputLength": 10})
        );
        let got = run(&json!({"text": "héllo wörld", "operation": "truncate", "options": {"maxLength": 6, "suffix": "…"}})).unwrap();
        assert_eq!(got["output"], "héllo…");
        assert_eq!(t("short", "truncate"), "short");
    }

    #[test]
    fn bad_arguments_and_limits() {
        let err = run(&json!({"text": "a", "operation": "shout"})).unwrap_err();
        assert!(
            err.message()
                .starts_with("'operation' must be one of: uppercase, lowercase"),
            "{err:?}"
        );
        let err = run(&json!({"text": "a"})).unwrap_err();
        assert!(
            err.message()
                .starts_with("'operation' is required; use one of:"),
            "{err:?}"
        );
        let err = run(&json!({"text": "a", "operation": "truncate", "options": {"maxLength": -1}}))
            .unwrap_err();
        assert!(
            err.message()
                .contains("'maxLength' must be an integer from 0"),
            "{err:?}"
        );
        let err =
            run(&json!({"text": "a".repeat(MAX_TEXT_BYTES + 1), "operation": "trim"})).unwrap_err();
        assert!(
            err.message().contains("the limit is 1000000 bytes"),
            "{err:?}"
        );
    }
}
