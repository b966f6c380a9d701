//! `write_file`: creates or replaces a file of the workspace with text or base64 bytes.

use base64::Engine;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{FileError, bool_arg, path_arg, str_arg};
use crate::workspace::{Workspace, WriteOptions, WsPath};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "write_file",
        "Create or replace a file in your workspace (missing folders are created). Up to 10 MB \
         per write, within your workspace quota. Set overwrite to false to refuse replacing an \
         existing file. To change part of a file, use edit_file.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file, relative to the workspace root (e.g. 'reports/summary.md')."},
                "content": {"type": "string", "description": "The new content: text, or base64 with encoding base64."},
                "encoding": {"type": "string", "enum": ["utf8", "base64"], "default": "utf8", "description": "How content is given: utf8 text (default) or base64 bytes."},
                "overwrite": {"type": "boolean", "default": true, "description": "Replace an existing file (default true)."},
                "createParents": {"type": "boolean", "default": true, "description": "Create missing folders on the way (default true)."}
            },
            "required": ["path", "content"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["write", "save", "file", "store", "output"])
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let path = path_arg(ws, args, "path", None)?;
    let content = str_arg(args, "content")?;
    let bytes = match args.get("encoding").and_then(Value::as_str) {
        Some("base64") => base64::engine::general_purpose::STANDARD
            .decode(content)
            .map_err(|e| {
                FileError::Args(format!(
                    "content is not valid base64 ({e}); give standard base64, or encoding utf8 for text"
                ))
            })?,
        _ => content.as_bytes().to_vec(),
    };
    guard_placeholders(ws, &path, &bytes)?;
    let options = WriteOptions {
        overwrite: bool_arg(args, "overwrite", true),
        create_parents: bool_arg(args, "createParents", true),
    };
    let outcome = ws.write(&path, &bytes, options)?;
    Ok(json!({
        "path": path.to_string(),
        "bytes": outcome.bytes,
        "created": outcome.created,
    }))
}

/// Refuses replacing a file with text holding more `[REDACTED]` placeholders than it had
/// (`crate::placeholder`): a file read back with a secret hidden must not be written back over
/// it. A file that does not exist yet, or is not text, has nothing to lose this way.
fn guard_placeholders(ws: &Workspace, path: &WsPath, bytes: &[u8]) -> Result<(), FileError> {
    let Ok(new) = std::str::from_utf8(bytes) else {
        return Ok(());
    };
    if !new.contains(toolsmith_scrub::REDACTED) {
        return Ok(());
    }
    let Ok(old) = ws.read(path, ws.limits().max_write_bytes) else {
        return Ok(());
    };
    crate::placeholder::check_overwrite(&format!("'{path}'"), &String::from_utf8_lossy(&old), new)
        .map_err(FileError::Args)
}
