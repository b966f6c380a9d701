//! The git tools (003 §10): `git_status`, `git_diff`, `git_log`, `git_commit`, `git_add`,
//! `git_branch`, `git_checkout` on a repository in the caller's [`Workspace`].
//!
//! Git runs only inside the command sandbox (bubblewrap), with the caller's workspace mounted
//! read-write and nothing else of the host: a repository's own configuration can name programs
//! (`core.fsmonitor`, hooks, `core.sshCommand`, filters, diff drivers…), and a model can write
//! `.git/config` with `write_file`, so git on the host would run whatever the model wrote.
//! Defence in depth on top ([`runner`]): the known program-running settings are overridden on
//! the command line (hooks to `/dev/null`, no fsmonitor, no pager, no editor, no signing, no
//! transport at all), no system or global configuration is read, arguments go as an argv
//! (never through a shell) with `--end-of-options` before anything a caller named, and there is
//! no network (this group never fetches, pushes or clones). Without a working sandbox every
//! tool answers with the reason and nothing runs.
//!
//! Modules: [`runner`] (the sandboxed git invocation and its errors), [`parse`] (git's
//! machine-readable output), [`inspect`] (status, diff, log), [`change`] (add, commit),
//! [`refs`] (branch, checkout).
//!
//! To add a tool: a `definition()` and an async `run(Git, Value)` in one of those modules, a
//! line in [`tools`], its name in the `git` group (`crate::groups`).

pub mod change;
pub mod inspect;
pub mod parse;
pub mod refs;
pub mod runner;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{
    ErrorKind, Permission, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor, ToolResult,
};

pub use change::parse_author;
pub use runner::{Git, GitError};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use crate::workspace::WorkspaceError;
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Git";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    depends_on: &["filesystem"],
    ..off(
        "git",
        "Git",
        "Version control of a repository in the workspace.",
        "version control operations",
        ResultSource::External,
        &[
            "git_status",
            "git_diff",
            "git_log",
            "git_commit",
            "git_add",
            "git_branch",
            "git_checkout",
        ],
    )
}];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (Effect::Reads, &["git_status", "git_diff", "git_log"]),
    (Effect::Adds, &["git_commit"]),
    (Effect::Sets, &["git_add"]),
    (Effect::Changes, &["git_branch", "git_checkout"]),
];
/// The author of commits when neither the call nor the server names one.
pub const DEFAULT_AUTHOR: &str = "Toolsmith Agent <agent@toolsmith.local>";

/// Where git tools get a command sandbox: probed once, shared; `Err` is why there is none.
#[async_trait]
pub trait SandboxSource: Send + Sync + std::fmt::Debug {
    async fn sandbox(&self) -> Result<Arc<toolsmith_command::CommandSandbox>, String>;
}

/// The git settings a server gives the family.
#[derive(Debug, Clone)]
pub struct GitSettings {
    /// `Name <email>` of commits whose call names no author.
    pub default_author: String,
}

impl Default for GitSettings {
    fn default() -> Self {
        GitSettings {
            default_author: DEFAULT_AUTHOR.to_owned(),
        }
    }
}

/// The work of one git tool.
pub type GitFn =
    fn(Git, Value) -> std::pin::Pin<Box<dyn Future<Output = Result<Value, GitError>> + Send>>;

struct GitExecutor {
    env: BuiltinEnv,
    run: GitFn,
}

#[async_trait]
impl ToolExecutor for GitExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let outcome = async {
            let git = Git::for_call(&self.env, ctx, &args).await?;
            (self.run)(git, args).await
        }
        .await;
        match outcome {
            Ok(content) => ToolResult::ok(content),
            Err(e) => ToolResult::error(e.kind(), e.to_string()),
        }
    }
}

/// A git tool: category `Git`, its group as provider, the `filesystem` permission (it reads
/// and writes the workspace).
fn git_tool(env: &BuiltinEnv, definition: ToolDefinition, run: GitFn) -> RegisteredTool {
    crate::family_tool(
        definition,
        CATEGORY,
        Permission::Filesystem,
        Arc::new(GitExecutor {
            env: env.clone(),
            run,
        }),
    )
}

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    vec![
        git_tool(env, inspect::status_definition(), |g, a| {
            Box::pin(inspect::status(g, a))
        }),
        git_tool(env, inspect::diff_definition(), |g, a| {
            Box::pin(inspect::diff(g, a))
        }),
        git_tool(env, inspect::log_definition(), |g, a| {
            Box::pin(inspect::log(g, a))
        }),
        git_tool(env, change::commit_definition(), |g, a| {
            Box::pin(change::commit(g, a))
        }),
        git_tool(env, change::add_definition(), |g, a| {
            Box::pin(change::add(g, a))
        }),
        git_tool(env, refs::branch_definition(), |g, a| {
            Box::pin(refs::branch(g, a))
        }),
        git_tool(env, refs::checkout_definition(), |g, a| {
            Box::pin(refs::checkout(g, a))
        }),
    ]
}

/// The `path` property every git tool has: the repository's folder.
pub(crate) fn repo_property() -> Value {
    serde_json::json!({
        "type": "string",
        "description": "The repository's folder, relative to the workspace root (default: the workspace root)."
    })
}

/// The string argument `key`, when given.
pub(crate) fn opt_str<'a>(args: &'a Value, key: &str) -> Result<Option<&'a str>, GitError> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(GitError::Args(format!("'{key}' must be a string"))),
    }
}

pub(crate) fn bool_arg(args: &Value, key: &str) -> bool {
    args.get(key).and_then(Value::as_bool).unwrap_or(false)
}

impl From<WorkspaceError> for GitError {
    fn from(e: WorkspaceError) -> Self {
        GitError::Workspace(e)
    }
}

impl GitError {
    fn kind(&self) -> ErrorKind {
        match self {
            GitError::Args(_) => ErrorKind::InvalidArguments,
            GitError::Workspace(e) => e.kind(),
            GitError::Timeout => ErrorKind::Timeout,
            GitError::NoSandbox(_) | GitError::Git(_) | GitError::Sandbox(_) => {
                ErrorKind::ExecutionError
            }
        }
    }
}

/// Longest branch name, revision or file argument.
const MAX_NAME_BYTES: usize = 256;
/// Most files one call names.
const MAX_FILES: usize = 1000;

/// The revision (branch, tag, commit, `HEAD~2`…) in argument `key`, when given: never an
/// option (`-x`), no whitespace or control characters.
pub(crate) fn revision_arg(args: &Value, key: &str) -> Result<Option<String>, GitError> {
    let Some(rev) = opt_str(args, key)? else {
        return Ok(None);
    };
    check_name(rev, key)?;
    Ok(Some(rev.to_owned()))
}

/// Refuses a name git would read as an option, or one no branch or revision can have.
pub(crate) fn check_name(name: &str, key: &str) -> Result<(), GitError> {
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(GitError::Args(format!(
            "'{key}' must be 1 to {MAX_NAME_BYTES} bytes"
        )));
    }
    if name.starts_with('-') {
        return Err(GitError::Args(format!(
            "'{key}' cannot start with '-' (git would read it as an option); name the branch or commit itself"
        )));
    }
    if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(GitError::Args(format!(
            "'{key}' cannot contain spaces or control characters; branch names use letters, digits, '-', '_', '.' and '/'"
        )));
    }
    Ok(())
}

/// A file the caller named, relative to the repository: checked by the workspace's path rules
/// (no `..`, not denied) and required to be inside the repository's folder.
pub(crate) fn repo_relative(git: &Git, file: &str) -> Result<String, GitError> {
    let joined = if git.repo.is_root() {
        file.to_owned()
    } else {
        format!("{}/{file}", git.repo)
    };
    let path = git.workspace.path(&joined)?;
    if !path.starts_with(&git.repo) {
        return Err(GitError::Args(format!(
            "'{file}' is outside the repository; name files relative to the repository's folder"
        )));
    }
    let names = path
        .names()
        .get(git.repo.names().len()..)
        .unwrap_or_default();
    Ok(if names.is_empty() {
        ".".to_owned()
    } else {
        names.join("/")
    })
}

/// The files in argument `key` (an array of strings), each [`repo_relative`].
pub(crate) fn files_arg(git: &Git, args: &Value, key: &str) -> Result<Vec<String>, GitError> {
    let Some(value) = args.get(key).filter(|v| !v.is_null()) else {
        return Ok(Vec::new());
    };
    let items = value
        .as_array()
        .ok_or_else(|| GitError::Args(format!("'{key}' must be an array of file paths")))?;
    if items.len() > MAX_FILES {
        return Err(GitError::Args(format!(
            "'{key}' names {} files, at most {MAX_FILES} at once; name a folder instead",
            items.len()
        )));
    }
    items
        .iter()
        .map(|item| {
            let file = item.as_str().ok_or_else(|| {
                GitError::Args(format!("'{key}' must be an array of file paths (strings)"))
            })?;
            repo_relative(git, file)
        })
        .collect()
}
