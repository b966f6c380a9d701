//! `count_text`: characters, words, sentences, lines and paragraphs of a text, and a reading
//! time at 200 words a minute.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Fail, MAX_TEXT_BYTES, text_arg};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "count_text",
        "Count the characters (with and without spaces), bytes, words, sentences, lines and \
         paragraphs of a text, and estimate its reading time. A word count, character count \
         or length check.",
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text to count (at most 1 MB)."}
            },
            "required": ["text"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "count",
        "words",
        "characters",
        "letters",
        "length",
        "sentences",
        "lines",
        "paragraphs",
        "reading",
        "time",
        "wordcount",
        "chars",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let text = text_arg(args, "text", MAX_TEXT_BYTES)?;
    Ok(count(text))
}

/// The counts of `text`. Characters are Unicode scalar values; a sentence ends at `.`, `!`,
/// `?` or `…` (runs count once) and must contain a letter or digit; paragraphs are separated by
/// blank lines.
pub fn count(text: &str) -> Value {
    let words = text.split_whitespace().count();
    let sentences = sentences(text);
    let mut paragraphs = 0;
    let mut in_paragraph = false;
    for line in text.lines() {
        let blank = line.trim().is_empty();
        if !blank && !in_paragraph {
            paragraphs += 1;
        }
        in_paragraph = !blank;
    }
    json!({
        "characters": text.chars().count(),
        "charactersNoSpaces": text.chars().filter(|c| !c.is_whitespace()).count(),
        "bytes": text.len(),
        "words": words,
        "sentences": sentences,
        "lines": if text.is_empty() { 0 } else { text.lines().count() },
        "paragraphs": paragraphs,
        "readingTimeMinutes": words.div_ceil(200),
    })
}

/// Sentences: runs of text holding a letter or digit, ended by `.`, `!`, `?` or `…` (or the
/// end); a `.` between two digits (`3.5`) ends nothing.
fn sentences(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut count = 0;
    let mut has_words = false;
    for (i, &c) in chars.iter().enumerate() {
        if c.is_alphanumeric() {
            has_words = true;
            continue;
        }
        let decimal_point = c == '.'
            && i.checked_sub(1)
                .and_then(|before| chars.get(before))
                .is_some_and(char::is_ascii_digit)
            && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if matches!(c, '.' | '!' | '?' | '…') && !decimal_point {
            count += usize::from(has_words);
            has_words = false;
        }
    }
    count + usize::from(has_words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let text = "Hello wörld! How are you?\nFine...\n\n  Second paragraph, 3.5 words\n";
        assert_eq!(
            count(text),
            json!({
                "characters": 65, "charactersNoSpaces": 52, "bytes": 66, "words": 10,
                "sentences": 4, "lines": 4, "paragraphs": 2, "readingTimeMinutes": 1
            })
        );
        assert_eq!(count("")["words"], 0);
        assert_eq!(count("")["lines"], 0);
        assert_eq!(count(&"word ".repeat(401))["readingTimeMinutes"], 3);
    }

    #[test]
    fn limits() {
        let err = run(&json!({"text": "a".repeat(MAX_TEXT_BYTES + 1)})).unwrap_err();
        assert!(
            err.message().contains("the limit is 1000000 bytes"),
            "{err:?}"
        );
        let err = run(&json!({"text": 5})).unwrap_err();
        assert_eq!(err.message(), "'text' is required and must be a string");
    }
}
