//! `extract_from_text`: pull URLs, e-mail addresses, phone numbers, dates, numbers, hashtags,
//! mentions, IP addresses or the matches of the caller's own regular expression out of a text.
//! Every pattern runs on the linear-time engine of [`super::pattern`].

use std::collections::HashSet;

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::pattern::compile;
use super::{Fail, MAX_TEXT_BYTES, opt_bool, opt_str_arg, str_arg, text_arg};

/// Most matches one call returns.
pub const MAX_MATCHES: usize = 1000;

/// The named patterns. Anything else in `pattern` is a regular expression.
const PRESETS: &[(&str, &str)] = &[
    (
        "urls",
        r#"https?://[^\s<>"'{}|\\^`\[\]]+[^\s<>"'{}|\\^`\[\].,;:!?)]"#,
    ),
    ("emails", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"),
    ("phones", r"\+?\(?\d{1,4}\)?(?:[-.\s]?\(?\d{2,4}\)?){2,5}"),
    (
        "dates",
        r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}\b|\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4}\b",
    ),
    ("numbers", r"-?\d+(?:[.,]\d+)*(?:[eE][+-]?\d+)?"),
    ("hashtags", r"#\w+"),
    ("mentions", r"(?:^|[^\w.])@(\w+)"),
    (
        "ips",
        r"\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b",
    ),
];

pub fn definition() -> ToolDefinition {
    let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
    ToolDefinition::new(
        "extract_from_text",
        "Extract data from text: URLs (links), e-mail addresses, phone numbers, dates, numbers, \
         hashtags, @mentions, IP addresses, or the matches of your own regular expression. \
         Returns the distinct matches in order of appearance and how often they occurred.",
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text to extract from (at most 1 MB)."},
                "pattern": {"type": "string", "description": format!("One of {} — or a regular expression of your own (Rust syntax; the first capture group is extracted if there is one).", names.join(", "))},
                "flags": {"type": "string", "description": "For your own expression: i (ignore case), m, s, x."},
                "unique": {"type": "boolean", "default": true, "description": "Return each distinct match once (default true)."}
            },
            "required": ["text", "pattern"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "extract", "find", "urls", "links", "emails", "phone", "numbers", "dates", "hashtags", "mentions", "ip", "pull", "scrape", "document",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let text = text_arg(args, "text", MAX_TEXT_BYTES)?;
    let pattern = str_arg(args, "pattern")?;
    let unique = opt_bool(args, "unique", true)?;
    let preset = PRESETS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(pattern.trim()));
    let compiled = match preset {
        Some((_, regex)) => compile(regex, "")?,
        None => compile(pattern, opt_str_arg(args, "flags", ""))?,
    };
    let re = &compiled.regex;
    let mut seen = HashSet::new();
    let mut matches = Vec::new();
    let mut total = 0;
    for c in re.captures_iter(text) {
        // The first group when the pattern has one (mentions: the name without the '@').
        let Some(m) = c.get(1).or_else(|| c.get(0)) else {
            continue;
        };
        if preset.is_some_and(|(name, _)| *name == "phones") && !phone_like(m.as_str()) {
            continue;
        }
        total += 1;
        if !unique || seen.insert(m.as_str()) {
            if matches.len() == MAX_MATCHES {
                return Err(Fail::Args(format!(
                    "more than {MAX_MATCHES} matches: send a shorter text or a more specific pattern"
                )));
            }
            matches.push(m.as_str());
        }
    }
    Ok(json!({
        "pattern": preset.map_or(pattern, |(name, _)| name),
        "matches": matches,
        "count": matches.len(),
        "totalOccurrences": total,
    }))
}

/// A phone-number candidate that is not a date, an IP address or a short number: 7 to 15
/// digits, and not shaped like `2024-01-15` or `1.2.3.4`.
fn phone_like(candidate: &str) -> bool {
    let digits = candidate.chars().filter(char::is_ascii_digit).count();
    let groups: Vec<&str> = candidate.split(['-', '.', '/']).collect();
    let date = matches!(groups.as_slice(), [year, _, _] if year.len() == 4)
        && groups.iter().all(|g| g.chars().all(|c| c.is_ascii_digit()));
    let dotted = candidate.split('.').count() == 4;
    (7..=15).contains(&digits) && !date && !dotted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extract(text: &str, pattern: &str) -> Value {
        run(&json!({"text": text, "pattern": pattern})).unwrap()
    }

    #[test]
    fn presets_find_what_people_mean() {
        let text = "Mail bob@example.com or ALICE@mail.co.uk (again: bob@example.com). See https://example.com/a?b=1, \
                    and http://x.org/path). Call +1 (555) 123-4567 or 0212 555 12 34. Met on 2024-01-15 and \
                    March 3rd, 2024; paid 1,234.50 and -7. #rust #Rust2024 thanks @ferris, not me@home.net. Host 192.168.1.20, not 999.1.1.1.";
        let emails = extract(text, "emails");
        assert_eq!(
            emails["matches"],
            json!(["bob@example.com", "ALICE@mail.co.uk", "me@home.net"])
        );
        assert_eq!(
            (
                emails["count"].as_u64(),
                emails["totalOccurrences"].as_u64()
            ),
            (Some(3), Some(4))
        );
        assert_eq!(
            extract(text, "urls")["matches"],
            json!(["https://example.com/a?b=1", "http://x.org/path"])
        );
        assert_eq!(
            extract(text, "phones")["matches"],
            json!(["+1 (555) 123-4567", "0212 555 12 34"])
        );
        assert_eq!(
            extract(text, "dates")["matches"],
            json!(["2024-01-15", "March 3rd, 2024"])
        );
        assert_eq!(
            extract(text, "hashtags")["matches"],
            json!(["#rust", "#Rust2024"])
        );
        assert_eq!(extract(text, "mentions")["matches"], json!(["ferris"]));
        assert_eq!(extract(text, "IPs")["matches"], json!(["192.168.1.20"]));
        let numbers = extract("paid 1,234.50 and -7", "numbers");
        assert_eq!(numbers["matches"], json!(["1,234.50", "-7"]));
    }

    #[test]
    fn own_expressions_with_a_group() {
        let got = run(&json!({"text": "id=7; ID=9; id=7", "pattern": r"id=(\d+)", "flags": "i", "unique": false})).unwrap();
        assert_eq!(
            got,
            json!({"pattern": r"id=(\d+)", "matches": ["7", "9", "7"], "count": 3, "totalOccurrences": 3})
        );
        // Catastrophic in a backtracking engine, prompt and correct here.
        let text = format!("{}!", "a".repeat(50_000));
        let got = run(&json!({"text": text, "pattern": "(a+)+$"})).unwrap();
        assert_eq!(got["count"], 0);
    }

    #[test]
    fn bad_arguments_and_limits() {
        let err = run(&json!({"text": "x", "pattern": r"(\w)\1"})).unwrap_err();
        assert!(err.message().contains("backreferences"), "{err:?}");
        let err = run(&json!({"text": "x"})).unwrap_err();
        assert!(err.message().contains("'pattern' is required"), "{err:?}");
        let many = (0..=MAX_MATCHES)
            .map(|i| format!("#t{i}"))
            .collect::<Vec<_>>()
            .join(" ");
        let err = run(&json!({"text": many, "pattern": "hashtags"})).unwrap_err();
        assert!(err.message().contains("more than 1000 matches"), "{err:?}");
        let err =
            run(&json!({"text": "a".repeat(MAX_TEXT_BYTES + 1), "pattern": "urls"})).unwrap_err();
        assert!(
            err.message().contains("the limit is 1000000 bytes"),
            "{err:?}"
        );
    }
}
