//! `compare_text`: the differences between two texts (by lines, words or characters) and how
//! similar they are, with the `similar` crate's Myers diff.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{Value, json};
use similar::{ChangeTag, TextDiff};
use toolsmith_core::ToolDefinition;

use super::{Fail, check_size, choice, round, str_arg};

const MODES: &[&str] = &["lines", "words", "chars"];
/// Largest text compared by lines or words, in bytes.
pub const MAX_BYTES: usize = 200_000;
/// Largest text compared character by character (a character diff is far more work).
pub const MAX_CHAR_BYTES: usize = 20_000;
/// Most added and removed parts listed.
pub const MAX_LISTED: usize = 50;
/// Longest `diff` text returned, in bytes.
pub const MAX_DIFF_BYTES: usize = 100_000;
/// A safety net for the diff: past it, `similar` finishes with a coarser (still correct) diff.
const DEADLINE: Duration = Duration::from_secs(1);

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "compare_text",
        "Compare two texts: are they identical, how similar are they (0-100%), what was added \
         and removed, and a diff (unified diff for lines; [-removed-]{+added+} marks for words \
         and characters). Compare two versions of a document, find what changed.",
        json!({
            "type": "object",
            "properties": {
                "text1": {"type": "string", "description": "The first (old) text. At most 200 KB (20 KB in chars mode)."},
                "text2": {"type": "string", "description": "The second (new) text, same limit."},
                "mode": {"type": "string", "enum": MODES, "default": "lines", "description": "Compare by lines (default), words or chars."}
            },
            "required": ["text1", "text2"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "compare", "diff", "difference", "differences", "similarity", "similar", "changes",
        "changed", "versions", "match", "text", "delta",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let mode = choice(args, "mode", "lines", MODES)?;
    let max = if mode == "chars" {
        MAX_CHAR_BYTES
    } else {
        MAX_BYTES
    };
    let text1 = str_arg(args, "text1")?;
    let text2 = str_arg(args, "text2")?;
    check_size("text1", text1.len(), max)?;
    check_size("text2", text2.len(), max)?;
    let mut config = TextDiff::configure();
    config.timeout(DEADLINE);
    let diff = match mode {
        "words" => config.diff_words(text1, text2),
        "chars" => config.diff_chars(text1, text2),
        _ => config.diff_lines(text1, text2),
    };
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    let (mut added_count, mut removed_count, mut unchanged) = (0, 0, 0);
    let mut marked = String::new();
    for change in diff.iter_all_changes() {
        let value = change.value();
        let shown = value.strip_suffix('\n').unwrap_or(value);
        let countable = mode == "lines" || !value.trim().is_empty();
        match change.tag() {
            ChangeTag::Equal => {
                unchanged += usize::from(countable);
                marked.push_str(value);
            }
            ChangeTag::Delete => {
                removed_count += usize::from(countable);
                if countable && removed.len() < MAX_LISTED {
                    removed.push(shown.to_owned());
                }
                let _ = write!(marked, "[-{value}-]");
            }
            ChangeTag::Insert => {
                added_count += usize::from(countable);
                if countable && added.len() < MAX_LISTED {
                    added.push(shown.to_owned());
                }
                let _ = write!(marked, "{{+{value}+}}");
            }
        }
    }
    let mut text = if mode == "lines" {
        diff.unified_diff()
            .context_radius(3)
            .header("text1", "text2")
            .to_string()
    } else {
        marked
    };
    let truncated = text.len() > MAX_DIFF_BYTES;
    if truncated {
        let cut = (0..=MAX_DIFF_BYTES)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(cut);
    }
    let count = |t: &str| match mode {
        "words" => t.split_whitespace().count(),
        "chars" => t.chars().count(),
        _ => t.lines().count(),
    };
    Ok(json!({
        "identical": text1 == text2,
        "similarity": round(f64::from(diff.ratio()) * 100.0, 2),
        "mode": mode,
        "text1Stats": {"count": count(text1)},
        "text2Stats": {"count": count(text2)},
        "addedCount": added_count,
        "removedCount": removed_count,
        "unchangedCount": unchanged,
        "added": added,
        "removed": removed,
        "diff": text,
        "diffTruncated": truncated,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_words_and_chars() {
        let got = run(&json!({"text1": "a\nb\nc\n", "text2": "a\nB\nc\nd\n"})).unwrap();
        assert_eq!(got["identical"], false);
        assert_eq!(
            (
                got["addedCount"].as_u64(),
                got["removedCount"].as_u64(),
                got["unchangedCount"].as_u64()
            ),
            (Some(2), Some(1), Some(2))
        );
        assert_eq!(got["added"], json!(["B", "d"]));
        assert_eq!(got["removed"], json!(["b"]));
        assert_eq!(
            got["diff"],
            "--- text1\n+++ text2\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"
        );
        assert_eq!(got["similarity"], 57.14);

        let words = run(&json!({"text1": "the quick brown fox", "text2": "the slow brown fox", "mode": "words"})).unwrap();
        assert_eq!(words["diff"], "the [-quick-]{+slow+} brown fox");
        assert_eq!(
            (words["added"].clone(), words["removed"].clone()),
            (json!(["slow"]), json!(["quick"]))
        );
        assert_eq!(words["text1Stats"]["count"], 4);

        let chars = run(&json!({"text1": "kitten", "text2": "sitting", "mode": "chars"})).unwrap();
        assert_eq!(chars["diff"], "[-k-]{+s+}itt[-e-]{+i+}n{+g+}");

        let same = run(&json!({"text1": "x\ny", "text2": "x\ny"})).unwrap();
        assert_eq!(
            (
                same["identical"].as_bool(),
                same["similarity"].as_f64(),
                same["diff"].as_str()
            ),
            (Some(true), Some(100.0), Some(""))
        );
        let empty = run(&json!({"text1": "", "text2": ""})).unwrap();
        assert_eq!(empty["similarity"], 100.0);
    }

    #[test]
    fn limits_and_bad_arguments() {
        let big = "x\n".repeat(MAX_BYTES / 2);
        let other = "y\n".repeat(MAX_BYTES / 2);
        let got = run(&json!({"text1": big, "text2": other})).unwrap();
        assert_eq!(got["similarity"], 0.0);
        assert_eq!(got["diffTruncated"], true);
        assert!(got["diff"].as_str().unwrap().len() <= MAX_DIFF_BYTES);
        assert_eq!(got["added"].as_array().unwrap().len(), MAX_LISTED);
        let err = run(&json!({"text1": "a".repeat(MAX_BYTES + 1), "text2": ""})).unwrap_err();
        assert!(
            err.message()
                .contains("'text1' is 200001 bytes; the limit is 200000"),
            "{err:?}"
        );
        let err =
            run(&json!({"text1": "", "text2": "a".repeat(MAX_CHAR_BYTES + 1), "mode": "chars"}))
                .unwrap_err();
        assert!(
            err.message().contains("'text2'") && err.message().contains("20000"),
            "{err:?}"
        );
        let err = run(&json!({"text1": "a", "text2": "b", "mode": "sentences"})).unwrap_err();
        assert_eq!(err.message(), "'mode' must be one of: lines, words, chars");
        let err = run(&json!({"text1": "a"})).unwrap_err();
        assert!(err.message().contains("'text2' is required"), "{err:?}");
    }
}
