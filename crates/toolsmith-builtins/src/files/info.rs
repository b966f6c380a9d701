//! `file_info`: what a path of the workspace is (type, size, times, permissions, links); for
//! the root, also how much of the quota the user's workspaces use.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::{FileError, path_arg};
use crate::workspace::Workspace;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "file_info",
        "Get metadata of a file or folder in your workspace: type, size in bytes, modification \
         and access times, permissions, link count. For '.' (the root) also the workspace's \
         quota and how much of it is used.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "default": ".", "description": "The file or folder, relative to the workspace root ('.' for the root)."}
            },
            "required": [],
            "additionalProperties": false
        }),
    )
    .with_tags(&["info", "stat", "metadata", "size", "big", "bytes", "exists", "file", "quota", "modified", "when", "date"])
}

pub fn run(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let path = path_arg(ws, args, "path", Some("."))?;
    let meta = ws.stat(&path)?;
    let mut out = json!({
        "path": path.to_string(),
        "type": meta.kind,
        "size": meta.size,
        "modified": meta.modified,
        "accessed": meta.accessed,
        "permissions": meta.permissions,
        "links": meta.links,
    });
    if path.is_root() {
        object::set(
            &mut out,
            "workspace",
            serde_json::to_value(ws.usage()?).unwrap_or(Value::Null),
        );
    }
    Ok(out)
}
