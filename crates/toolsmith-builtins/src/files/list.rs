//! `list_directory` (003's name) and `list_files` (GoClaw's): one tool under two names,
//! listing a folder of the workspace, optionally recursively, bounded in depth and entries.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{FileError, bool_arg, count_arg, path_arg};
use crate::workspace::{WalkOptions, Workspace};

/// Entries returned when the caller does not say.
const DEFAULT_ENTRIES: usize = 200;
/// Depth of a recursive listing when the caller does not say.
const DEFAULT_RECURSIVE_DEPTH: usize = 5;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "default": ".", "description": "The folder, relative to the workspace root ('.' for the root, the default)."},
            "recursive": {"type": "boolean", "default": false, "description": "Also list what is inside sub-folders."},
            "maxDepth": {"type": "integer", "minimum": 1, "description": "How many levels a recursive listing descends (default 5, at most 32)."},
            "maxEntries": {"type": "integer", "minimum": 1, "description": "Most entries returned (default 200, at most 1000)."}
        },
        "required": [],
        "additionalProperties": false
    })
}

const TAGS: &[&str] = &[
    "list",
    "ls",
    "dir",
    "folder",
    "directory",
    "files",
    "browse",
    "tree",
];

/// The tool's two definitions: `list_directory` and its GoClaw name `list_files`.
pub fn definitions() -> impl Iterator<Item = ToolDefinition> {
    [
        ToolDefinition::new(
            "list_directory",
            "List the files and folders in a folder of your workspace, with type, size and \
             modification time; recursive lists sub-folders too (bounded depth and count). \
             list_files is the same tool under GoClaw's name.",
            schema(),
        ),
        ToolDefinition::new(
            "list_files",
            "GoClaw's name for list_directory: list the files and folders in a folder of your \
             workspace, with the same parameters and result.",
            schema(),
        ),
    ]
    .into_iter()
    .map(|d| d.with_tags(TAGS))
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let path = path_arg(ws, args, "path", Some("."))?;
    let limits = *ws.limits();
    let max_entries = count_arg(args, "maxEntries", DEFAULT_ENTRIES, limits.max_list_entries);
    let max_depth = if bool_arg(args, "recursive", false) {
        count_arg(args, "maxDepth", DEFAULT_RECURSIVE_DEPTH, limits.max_depth)
    } else {
        1
    };
    let mut entries = Vec::new();
    let mut more = false;
    let options = WalkOptions {
        max_depth,
        max_visits: limits.max_walk_entries,
    };
    let outcome = ws.walk(&path, options, |entry| {
        if entries.len() == max_entries {
            more = true;
            return false;
        }
        entries.push(json!({
            "path": entry.path.to_string(),
            "name": entry.path.file_name().unwrap_or_default(),
            "type": entry.meta.kind,
            "size": entry.meta.size,
            "modified": entry.meta.modified,
        }));
        true
    })?;
    Ok(json!({
        "path": path.to_string(),
        "count": entries.len(),
        "entries": entries,
        "truncated": more || outcome.truncated,
        "depthLimited": outcome.depth_limited,
    }))
}
