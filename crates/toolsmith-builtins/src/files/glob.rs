//! `glob`: the workspace paths matching a glob pattern (`*`, `?`, `[...]`, `{a,b}`, `**`),
//! below a folder, bounded in depth and results. Patterns are relative to that folder: an
//! absolute pattern or one with a `..` component is refused, naming the rule.

use globset::GlobBuilder;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{FileError, count_arg, path_arg, str_arg};
use crate::workspace::{WalkOptions, Workspace};

const DEFAULT_RESULTS: usize = 200;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "glob",
        "Find files and folders of your workspace whose path matches a glob pattern, such as \
         '**/*.md' or 'src/*.{rs,toml}'. '*' and '?' stay within one folder, '**' crosses \
         folders. Paths are matched relative to 'path' (default the root).",
        json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "minLength": 1, "description": "The glob, e.g. '**/*.json'."},
                "path": {"type": "string", "default": ".", "description": "The folder to search from, relative to the workspace root."},
                "maxResults": {"type": "integer", "minimum": 1, "description": "Most paths returned (default 200, at most 1000)."}
            },
            "required": ["pattern"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["glob", "find", "files", "pattern", "match", "wildcard", "locate"])
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let pattern = str_arg(args, "pattern")?;
    if pattern.len() > ws.limits().max_path_bytes {
        return Err(FileError::Args(format!(
            "the pattern is longer than {} bytes; use a shorter one",
            ws.limits().max_path_bytes
        )));
    }
    check_relative(pattern)?;
    let matcher = GlobBuilder::new(pattern.trim_start_matches("./"))
        .literal_separator(true)
        .build()
        .map_err(|e| {
            FileError::Args(format!(
                "invalid glob pattern: {e}; use *, ?, [abc], {{a,b}} and ** (e.g. '**/*.md')"
            ))
        })?
        .compile_matcher();
    let base = path_arg(ws, args, "path", Some("."))?;
    let limits = *ws.limits();
    let max = count_arg(args, "maxResults", DEFAULT_RESULTS, limits.max_list_entries);
    let skip = base.names().len();
    let mut matches = Vec::new();
    let mut more = false;
    let options = WalkOptions {
        max_depth: limits.max_depth,
        max_visits: limits.max_walk_entries,
    };
    let outcome = ws.walk(&base, options, |entry| {
        let relative = entry.path.names().get(skip..).unwrap_or_default().join("/");
        if matcher.is_match(&relative) {
            if matches.len() == max {
                more = true;
                return false;
            }
            matches.push(json!({"path": entry.path.to_string(), "type": entry.meta.kind}));
        }
        true
    })?;
    Ok(json!({
        "pattern": pattern,
        "path": base.to_string(),
        "count": matches.len(),
        "matches": matches,
        "truncated": more || outcome.truncated,
    }))
}

/// Refuses a pattern that could only match outside the folder searched (issue 31: `../**` and
/// `/etc/*` answered an empty list, as if nothing matched): patterns are relative to `path`.
fn check_relative(pattern: &str) -> Result<(), FileError> {
    if pattern.starts_with('/') {
        return Err(FileError::Args(format!(
            "the pattern '{pattern}' is absolute; glob patterns are relative to 'path' (a folder \
             of your workspace, default the root) and never reach outside the workspace: write \
             e.g. '**/*.conf', and set 'path' to the folder to search from"
        )));
    }
    if pattern.split('/').any(|part| part == "..") {
        return Err(FileError::Args(format!(
            "the pattern '{pattern}' has a '..' component; glob patterns are relative to 'path' \
             (a folder of your workspace, default the root) and never reach outside the \
             workspace: set 'path' to the folder to search from instead of going up"
        )));
    }
    Ok(())
}
