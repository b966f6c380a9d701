//! `search_files` (003's name) and `search` (GoClaw's): one tool under two names, a regular
//! expression over file names and file contents below a folder of the workspace.
//!
//! The `regex` crate matches in linear time, so no pattern can hang a worker; files that are
//! not text (a NUL byte in the first 8 KiB), larger than the write limit, or hard-linked are
//! skipped and counted; a search reads at most `max_search_bytes` in all.

use globset::GlobBuilder;
use regex::RegexBuilder;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{FileError, bool_arg, count_arg, path_arg, str_arg};
use crate::workspace::{EntryKind, WalkOptions, Workspace};

/// The spec's tool limit for `search_files.maxResults`: default 50.
pub const DEFAULT_RESULTS: usize = 50;
/// Longest line text returned per match, in characters.
const MAX_LINE_CHARS: usize = 300;
/// The compiled pattern's size limit (bytes of the regex program).
const REGEX_SIZE_LIMIT: usize = 1 << 20;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "A regular expression (Rust regex syntax; plain words work as they are) matched against file names and each line of text files."},
            "path": {"type": "string", "default": ".", "description": "The folder to search, relative to the workspace root (default the root)."},
            "include": {"type": "string", "description": "Only files whose path (relative to 'path') matches this glob, e.g. '**/*.md'."},
            "caseSensitive": {"type": "boolean", "default": false, "description": "Match case exactly (default: ignore case)."},
            "maxResults": {"type": "integer", "minimum": 1, "description": "Most matches returned (default 50, at most 100)."}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

const TAGS: &[&str] = &[
    "search", "grep", "find", "regex", "text", "content", "files", "lookup",
];

/// The tool's two definitions: `search_files` and its GoClaw name `search`.
pub fn definitions() -> impl Iterator<Item = ToolDefinition> {
    [
        ToolDefinition::new(
            "search_files",
            "Search your workspace for a regular expression in file names and in the lines of \
             text files; returns each match with its file and line number. search is the same \
             tool under GoClaw's name.",
            schema(),
        ),
        ToolDefinition::new(
            "search",
            "GoClaw's name for search_files: search file names and the contents of text files \
             in your workspace with a regular expression, with the same parameters and result.",
            schema(),
        ),
    ]
    .into_iter()
    .map(|d| d.with_tags(TAGS))
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let query = str_arg(args, "query")?;
    let regex = RegexBuilder::new(query)
        .case_insensitive(!bool_arg(args, "caseSensitive", false))
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            FileError::Args(format!(
                "invalid regular expression: {e}; escape special characters (\\. \\( \\[) or search for plain words"
            ))
        })?;
    let include = match args.get("include").and_then(Value::as_str) {
        Some(glob) => Some(
            GlobBuilder::new(glob.trim_start_matches("./"))
                .literal_separator(true)
                .build()
                .map_err(|e| FileError::Args(format!("invalid include glob: {e}; e.g. '**/*.md'")))?
                .compile_matcher(),
        ),
        None => None,
    };
    let base = path_arg(ws, args, "path", Some("."))?;
    let limits = *ws.limits();
    let max = count_arg(
        args,
        "maxResults",
        DEFAULT_RESULTS,
        limits.max_search_results,
    );
    let skip = base.names().len();
    let mut results = Vec::new();
    let mut more = false;
    let mut budget = limits.max_search_bytes;
    let mut skipped = 0u64;
    let mut files = 0u64;
    let options = WalkOptions {
        max_depth: limits.max_depth,
        max_visits: limits.max_walk_entries,
    };
    let outcome = ws.walk(&base, options, |entry| {
        if entry.meta.kind != EntryKind::File {
            return true;
        }
        let relative = entry.path.names().get(skip..).unwrap_or_default().join("/");
        if include.as_ref().is_some_and(|g| !g.is_match(&relative)) {
            return true;
        }
        files += 1;
        let shown = entry.path.to_string();
        if regex.is_match(entry.path.file_name().unwrap_or_default()) {
            if results.len() == max {
                more = true;
                return false;
            }
            results.push(json!({"path": shown, "match": "name"}));
        }
        if entry.meta.size > budget || entry.meta.size > limits.max_write_bytes {
            skipped += 1;
            return true;
        }
        let Ok(bytes) = ws.read(&entry.path, limits.max_write_bytes) else {
            skipped += 1;
            return true;
        };
        budget = budget.saturating_sub(bytes.len() as u64);
        if bytes.iter().take(8192).any(|&b| b == 0) {
            skipped += 1;
            return true;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (number, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                if results.len() == max {
                    more = true;
                    return false;
                }
                results.push(json!({
                    "path": shown,
                    "match": "content",
                    "line": number + 1,
                    "text": clip(line),
                }));
            }
        }
        true
    })?;
    Ok(json!({
        "query": query,
        "path": base.to_string(),
        "count": results.len(),
        "results": results,
        "filesSearched": files,
        "filesSkipped": skipped,
        "truncated": more || outcome.truncated,
    }))
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}…", line.get(..at).unwrap_or(line)),
        None => line.to_owned(),
    }
}
