//! The file tools (003 §7 and 001's `fs` group) on the caller's [`Workspace`]: every path is
//! checked and resolved by the workspace (`crate::workspace`), never by host path.
//!
//! Each tool is a module with `definition()` (what the model sees) and `run(&Workspace,
//! &args)`; [`file_tool`] wraps the pair into a [`RegisteredTool`] whose executor finds the
//! call's workspace from its `ToolContext` (user, and agent with `workspace_per_agent`) and
//! runs the work on the blocking pool. Every tool holds the `filesystem` permission, so a JS
//! tool reaches them through `callTool` only when it holds it too, and the `dangerous`
//! approval setting covers them.
//!
//! To add a tool: a module here with `definition()` and `run`, a line in [`tools`], and its
//! name in the `filesystem` group (`crate::groups`).

pub mod edit;
pub mod glob;
pub mod info;
pub mod list;
pub mod manage;
pub mod read;
pub mod search;
pub mod write;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{
    ErrorKind, Permission, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor, ToolResult,
};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, on};
use crate::workspace::{Workspace, WorkspaceError, Workspaces, WsPath};
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The category every tool of this family carries.
pub const CATEGORY: &str = "File System";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    aliases: &["fs"],
    ..on(
        "filesystem",
        "File System",
        "Files in the caller's own workspace: read, write, edit, list, search, copy, move, delete.",
        ResultSource::UserData,
        &[
            "read_file",
            "write_file",
            "edit_file",
            "list_directory",
            "list_files",
            "search_files",
            "search",
            "glob",
            "file_info",
            "delete_file",
            "copy_file",
            "move_file",
            "create_folder",
        ],
    )
}];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &[
            "read_file",
            "list_directory",
            "list_files",
            "search_files",
            "search",
            "glob",
            "file_info",
        ],
    ),
    (Effect::Sets, &["create_folder"]),
    (
        Effect::Changes,
        &["write_file", "edit_file", "copy_file", "move_file"],
    ),
    (Effect::Deletes, &["delete_file"]),
];

/// Why a file tool failed: its arguments, or the workspace.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{0}")]
    Args(String),
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
}

impl FileError {
    fn kind(&self) -> ErrorKind {
        match self {
            FileError::Args(_) => ErrorKind::InvalidArguments,
            FileError::Workspace(e) => e.kind(),
        }
    }
}

/// The work of a file tool, on the caller's workspace.
pub type FileFn = fn(&Workspace, &Value) -> Result<Value, FileError>;

/// The tools whose calls [`RoutedFiles`] is asked about.
pub const ROUTED_TOOLS: &[&str] = &["read_file", "write_file", "edit_file"];

/// Where an agent's `read_file` / `write_file` of some names go instead of its workspace
/// (spec 001 §3's interceptors: its context files, its memory): set by the server
/// (`BuiltinEnv::routed_files`). Asked before the workspace, for the tools of
/// [`ROUTED_TOOLS`] only.
#[async_trait]
pub trait RoutedFiles: Send + Sync + std::fmt::Debug {
    /// The answer to `tool` on `args` for the caller of `ctx` when its path is routed
    /// elsewhere; `None` leaves the call to the workspace.
    async fn route(&self, tool: &str, args: &Value, ctx: &ToolContext) -> Option<ToolResult>;
}

struct FileExecutor {
    workspaces: Option<Arc<Workspaces>>,
    run: FileFn,
    /// The routing asked first, for a tool of [`ROUTED_TOOLS`] (with its name).
    routed: Option<(Arc<dyn RoutedFiles>, String)>,
}

#[async_trait]
impl ToolExecutor for FileExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        if let Some((routed, tool)) = &self.routed
            && let Some(answer) = routed.route(tool, &args, ctx).await
        {
            return answer;
        }
        let Some(workspaces) = self.workspaces.clone() else {
            let e = WorkspaceError::NotConfigured;
            return ToolResult::error(e.kind(), e.to_string());
        };
        let (ctx, run) = (ctx.clone(), self.run);
        let outcome = tokio::task::spawn_blocking(move || {
            let workspace = workspaces.for_call(&ctx)?;
            run(&workspace, &args)
        })
        .await;
        match outcome {
            Ok(Ok(content)) => ToolResult::ok(content),
            Ok(Err(e)) => ToolResult::error(e.kind(), e.to_string()),
            Err(e) => ToolResult::error(ErrorKind::Internal, format!("the file tool failed: {e}")),
        }
    }
}

/// A file tool: category `File System`, its group as provider, the `filesystem` permission.
pub fn file_tool(env: &BuiltinEnv, definition: ToolDefinition, run: FileFn) -> RegisteredTool {
    let routed = env
        .routed_files
        .clone()
        .filter(|_| ROUTED_TOOLS.contains(&definition.name.as_str()))
        .map(|routed| (routed, definition.name.to_string()));
    crate::family_tool(
        definition,
        CATEGORY,
        Permission::Filesystem,
        Arc::new(FileExecutor {
            workspaces: env.workspaces.clone(),
            run,
            routed,
        }),
    )
}

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let mut tools = vec![
        file_tool(env, read::definition(), read::run),
        file_tool(env, write::definition(), write::run),
        file_tool(env, edit::definition(), edit::run),
        file_tool(env, glob::definition(), glob::run),
        file_tool(env, info::definition(), info::run),
        file_tool(env, manage::delete_definition(), manage::delete),
        file_tool(env, manage::copy_definition(), manage::copy),
        file_tool(env, manage::move_definition(), manage::move_entry),
        file_tool(
            env,
            manage::create_folder_definition(),
            manage::create_folder,
        ),
    ];
    tools.extend(list::definitions().map(|d| file_tool(env, d, list::run)));
    tools.extend(search::definitions().map(|d| file_tool(env, d, search::run)));
    tools
}

/// The string argument `key` (the schema requires it; a missing one is still an error).
pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, FileError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| FileError::Args(format!("'{key}' must be a string")))
}

/// The workspace path in argument `key` (default `default` when absent).
pub(crate) fn path_arg(
    ws: &Workspace,
    args: &Value,
    key: &str,
    default: Option<&str>,
) -> Result<WsPath, FileError> {
    let raw = match (args.get(key).and_then(Value::as_str), default) {
        (Some(raw), _) => raw,
        (None, Some(default)) => default,
        (None, None) => return Err(FileError::Args(format!("'{key}' must be a string path"))),
    };
    Ok(ws.path(raw)?)
}

pub(crate) fn bool_arg(args: &Value, key: &str, default: bool) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(default)
}

/// The count argument `key`: `default` when absent, capped at `max` (the spec's tool limits
/// cap rather than refuse).
pub(crate) fn count_arg(args: &Value, key: &str, default: usize, max: usize) -> usize {
    args.get(key)
        .and_then(Value::as_u64)
        .map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        .clamp(1, max)
}
