//! The tools that rearrange the workspace: `delete_file`, `copy_file`, `move_file` and
//! `create_folder`, each a thin layer over one workspace operation.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{FileError, bool_arg, path_arg};
use crate::workspace::Workspace;

pub fn delete_definition() -> ToolDefinition {
    let mut d = ToolDefinition::new(
        "delete_file",
        "Delete a file, link or empty folder of your workspace; recursive deletes a folder with \
         everything in it. Cannot be undone.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "What to delete, relative to the workspace root."},
                "recursive": {"type": "boolean", "default": false, "description": "Delete a non-empty folder and everything in it."}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["delete", "remove", "rm", "erase", "file", "folder"]);
    d.requires_confirmation = true;
    d
}

pub fn delete(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let path = path_arg(ws, args, "path", None)?;
    let outcome = ws.remove(&path, bool_arg(args, "recursive", false))?;
    Ok(json!({"path": path.to_string(), "deleted": outcome}))
}

fn source_destination_schema(what: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "source": {"type": "string", "description": format!("The {what} to take, relative to the workspace root.")},
            "destination": {"type": "string", "description": "The new path, relative to the workspace root (missing folders are created)."},
            "overwrite": {"type": "boolean", "default": false, "description": "Replace an existing destination."}
        },
        "required": ["source", "destination"],
        "additionalProperties": false
    })
}

pub fn copy_definition() -> ToolDefinition {
    ToolDefinition::new(
        "copy_file",
        "Copy a file of your workspace to a new path (up to 10 MB, within your quota). An \
         existing destination is replaced only with overwrite.",
        source_destination_schema("file"),
    )
    .with_tags(&["copy", "cp", "duplicate", "file", "backup"])
}

pub fn copy(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let source = path_arg(ws, args, "source", None)?;
    let destination = path_arg(ws, args, "destination", None)?;
    let bytes = ws.copy(&source, &destination, bool_arg(args, "overwrite", false))?;
    Ok(json!({
        "source": source.to_string(),
        "destination": destination.to_string(),
        "bytes": bytes,
    }))
}

pub fn move_definition() -> ToolDefinition {
    ToolDefinition::new(
        "move_file",
        "Move or rename a file or folder within your workspace. An existing destination is \
         replaced only with overwrite.",
        source_destination_schema("file or folder"),
    )
    .with_tags(&["move", "rename", "mv", "file", "folder", "relocate"])
}

pub fn move_entry(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let source = path_arg(ws, args, "source", None)?;
    let destination = path_arg(ws, args, "destination", None)?;
    ws.rename(&source, &destination, bool_arg(args, "overwrite", false))?;
    Ok(json!({
        "source": source.to_string(),
        "destination": destination.to_string(),
    }))
}

pub fn create_folder_definition() -> ToolDefinition {
    ToolDefinition::new(
        "create_folder",
        "Create a folder in your workspace, with its missing parents. An existing folder is \
         fine (created: false) unless parents is false.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The folder, relative to the workspace root (e.g. 'projects/2026')."},
                "parents": {"type": "boolean", "default": true, "description": "Create missing parent folders and accept an existing folder (default true)."}
            },
            "required": ["path"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["mkdir", "folder", "directory", "subfolder"])
}

pub fn create_folder(ws: &Workspace, args: &Value) -> Result<Value, FileError> {
    let path = path_arg(ws, args, "path", None)?;
    let created = ws.create_dir(&path, bool_arg(args, "parents", true))?;
    Ok(json!({"path": path.to_string(), "created": created}))
}
