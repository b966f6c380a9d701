//! `edit_file`: replaces one exact piece of text in a file (or every occurrence with
//! `replaceAll`), refusing with the fix when the text is missing or occurs more than once.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{FileError, bool_arg, path_arg, str_arg};
use crate::workspace::{Workspace, WriteOptions};

/// How many line numbers an "occurs N times" error lists.
const SHOWN_OCCURRENCES: usize = 10;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "edit_file",
        "Edit a text file of your workspace: replace the exact text oldText with newText. \
         oldText must occur exactly once (include surrounding lines to make it unique), or pass \
         replaceAll to replace every occurrence. Whitespace and line breaks must match.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the workspace root."},
                "oldText": {"type": "string", "minLength": 1, "description": "The exact text to replace, as read_file shows it."},
                "newText": {"type": "string", "description": "The replacement (empty to delete oldText)."},
                "replaceAll": {"type": "boolean", "default": false, "description": "Replace every occurrence instead of requiring exactly one."}
            },
            "required": ["path", "oldText", "newText"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["edit", "replace", "modify", "change", "patch", "update", "file"])
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let path = path_arg(ws, args, "path", None)?;
    let old = str_arg(args, "oldText")?;
    let new = str_arg(args, "newText")?;
    if old.is_empty() {
        return Err(FileError::Args(
            "oldText is empty; give the exact text to replace".into(),
        ));
    }
    let limit = ws.limits().max_write_bytes;
    let bytes = ws.read(&path, limit).map_err(|e| {
        e.with_hint("edit_file changes files up to that size; write_file replaces a whole file")
    })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        FileError::Args(format!(
            "'{path}' is not UTF-8 text; edit_file changes text files only (write_file replaces any file)"
        ))
    })?;
    let starts: Vec<usize> = text.match_indices(old).map(|(at, _)| at).collect();
    match starts.len() {
        0 => {
            return Err(FileError::Args(format!(
                "oldText was not found in '{path}'; read_file shows its current content: copy the exact text, including whitespace and line breaks"
            )));
        }
        1 => {}
        n if !bool_arg(args, "replaceAll", false) => {
            let lines: Vec<String> = starts
                .iter()
                .take(SHOWN_OCCURRENCES)
                .map(|&at| (text.get(..at).map_or(0, |t| t.matches('\n').count()) + 1).to_string())
                .collect();
            return Err(FileError::Args(format!(
                "oldText occurs {n} times in '{path}' (at lines {}{}); add surrounding lines to oldText so it occurs once, or pass replaceAll: true",
                lines.join(", "),
                if n > SHOWN_OCCURRENCES { ", …" } else { "" }
            )));
        }
        _ => {}
    }
    let edited = text.replace(old, new);
    let options = WriteOptions {
        overwrite: true,
        create_parents: false,
    };
    let outcome = ws.write(&path, edited.as_bytes(), options)?;
    Ok(json!({
        "path": path.to_string(),
        "replacements": starts.len(),
        "bytes": outcome.bytes,
    }))
}
