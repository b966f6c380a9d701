//! The code execution tools (003 §9 "Code Execution", 001's `runtime` group) and sandbox
//! sessions (002 "Sandbox Sessions"), group `codeExecution`, off by default.
//!
//! - `execute_shell`, `execute_python`, `compile_code`, `package_manager` and the session tools
//!   run in the command sandbox (`toolsmith-command`, bubblewrap) with the caller's workspace —
//!   or a session's folder — bind-mounted read-write at `/tmp/work` and nothing else of the
//!   host: no data dir, no other user's workspace, no network (`package_manager` reaches the
//!   package registries alone, through [`registry_proxy`], and needs a person's approval).
//!   Python, Node.js and the compilers are the host's own (`/usr/bin`), seen read-only inside
//!   the sandbox.
//! - `execute_javascript` runs in the QuickJS sandbox through the server ([`CodeHost::run_js`]),
//!   under the same limits as any JS tool.
//!
//! 003's rules: the sandbox is mandatory — without a working one every tool answers with the
//! reason and nothing runs on the host ([`unavailable`]); at most [`MAX_TIMEOUT`] per run;
//! output capped ([`STDOUT_CAP`], [`STDERR_CAP`]: together under the pipeline's 1 MB once
//! escaped); shell commands pass the deny patterns (`toolsmith_command::check_denied`).
//!
//! To add a tool: a module here with its `definition()`, a [`Kind`] and its arm in
//! [`ExecExecutor`], a line in [`tools`], and its name in the `codeExecution` group.

pub mod compile;
pub mod javascript;
pub mod offline;
pub mod packages;
pub mod python;
pub mod registry_proxy;
pub mod sessions;
pub mod shell;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_command::{CommandOutput, CommandSandbox, RunRequest, check_denied};
use toolsmith_core::object;
use toolsmith_core::{
    ErrorKind, Permission, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor, ToolResult,
};

pub use registry_proxy::{DEFAULT_REGISTRIES, PackageRegistries, ProxyLabel};
pub use sessions::{SessionSettings, Sessions};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use crate::workspace::{Workspace, WorkspaceError, Workspaces};
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Code Execution";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    depends_on: &["filesystem"],
    aliases: &["runtime"],
    ..off(
        "codeExecution",
        "Code Execution",
        "Run JavaScript, Python and shell commands in a sandbox with the workspace mounted.",
        "runs code the model wrote; needs the command sandbox (bubblewrap)",
        ResultSource::External,
        &[
            "execute_javascript",
            "execute_python",
            "execute_shell",
            "compile_code",
            "package_manager",
            "sandbox_initialize",
            "sandbox_list",
            "sandbox_exec",
            "sandbox_run_js",
            "sandbox_stop",
        ],
    )
}];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (Effect::Reads, &["sandbox_list"]),
    (Effect::Adds, &["sandbox_initialize"]),
    (
        Effect::Runs,
        &[
            "execute_javascript",
            "execute_python",
            "execute_shell",
            "compile_code",
            "package_manager",
            "sandbox_exec",
            "sandbox_run_js",
        ],
    ),
    (Effect::Deletes, &["sandbox_stop"]),
];
/// Longest one run may take (003: 30 s); `timeoutSeconds` may only shorten it.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of stdout a run returns; the rest is dropped and `truncated` set.
pub const STDOUT_CAP: usize = 512 * 1024;
/// Bytes of stderr a run returns.
pub const STDERR_CAP: usize = 128 * 1024;
/// Largest code or command accepted: one argument of a process (Linux caps it at 128 KiB).
pub const MAX_CODE_BYTES: usize = 100 * 1024;

/// What the code tools need from the server: the command sandbox and the JS sandbox.
#[async_trait]
pub trait CodeHost: Send + Sync + std::fmt::Debug {
    /// The command sandbox, or why it cannot run on this host.
    async fn command_sandbox(&self) -> Result<Arc<CommandSandbox>, String>;
    /// Runs `code` once in the JS sandbox for the caller of `ctx`, with no permissions, at most
    /// `timeout`, under the server's JS limits.
    async fn run_js(
        &self,
        code: &str,
        args: Value,
        ctx: &ToolContext,
        timeout: Duration,
    ) -> ToolResult;
}

/// Why a code tool failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("{0}")]
    Args(String),
    #[error("{0}")]
    Denied(String),
    #[error("{0}")]
    Unavailable(String),
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Limit(String),
    /// The caller has the most sandbox sessions allowed (`max` of them).
    #[error("{message}")]
    SessionLimit { max: usize, message: String },
    #[error("{0}")]
    Run(String),
}

impl ExecError {
    pub(crate) fn kind(&self) -> ErrorKind {
        match self {
            ExecError::Args(_) => ErrorKind::InvalidArguments,
            ExecError::Denied(_) => ErrorKind::Denied,
            ExecError::Workspace(e) => e.kind(),
            // `not_found` means "no such tool" to clients; an unknown session is a bad argument.
            ExecError::NotFound(_) => ErrorKind::InvalidArguments,
            ExecError::Limit(_) | ExecError::SessionLimit { .. } => ErrorKind::Denied,
            ExecError::Unavailable(_) | ExecError::Run(_) => ErrorKind::ExecutionError,
        }
    }

    /// What a caller that translates the answer (the compat `sandbox.*` names) reads besides
    /// the message: `reason` `session_not_found` or `session_limit` (with `max`).
    fn details(&self) -> serde_json::Map<String, Value> {
        let mut details = serde_json::Map::new();
        match self {
            ExecError::NotFound(_) => {
                details.insert("reason".to_owned(), json!("session_not_found"));
            }
            ExecError::SessionLimit { max, .. } => {
                details.insert("reason".to_owned(), json!("session_limit"));
                details.insert("max".to_owned(), json!(max));
            }
            _ => {}
        }
        details
    }
}

/// The answer of every code tool when the sandbox cannot run (003's "security error").
#[must_use]
pub fn unavailable(reason: &str) -> ExecError {
    ExecError::Unavailable(format!(
        "Code execution needs the command sandbox (bubblewrap), which does not work on this \
         host: {reason}. Nothing was run: code never runs on the host without it. To fix: \
         install bubblewrap and util-linux (scripts/install-system-deps.sh) and allow \
         unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)."
    ))
}

/// Which tool an [`ExecExecutor`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Shell,
    Python,
    JavaScript,
    Compile,
    Packages,
    SessionInitialize,
    SessionList,
    SessionExec,
    SessionRunJs,
    SessionStop,
}

/// What the family's tools share: the server's handles.
#[derive(Debug, Clone)]
pub(crate) struct Deps {
    pub(crate) workspaces: Option<Arc<Workspaces>>,
    pub(crate) host: Option<Arc<dyn CodeHost>>,
    pub(crate) sessions: Option<Arc<Sessions>>,
    pub(crate) registries: Option<PackageRegistries>,
}

impl Deps {
    pub(crate) async fn sandbox(&self) -> Result<Arc<CommandSandbox>, ExecError> {
        let host = self
            .host
            .as_ref()
            .ok_or_else(|| unavailable("this server has no command sandbox configured"))?;
        host.command_sandbox()
            .await
            .map_err(|why| unavailable(&why))
    }

    pub(crate) fn workspace(&self, ctx: &ToolContext) -> Result<Workspace, ExecError> {
        let workspaces = self
            .workspaces
            .as_ref()
            .ok_or(ExecError::Workspace(WorkspaceError::NotConfigured))?;
        Ok(workspaces.for_call(ctx)?)
    }

    pub(crate) fn sessions(&self) -> Result<&Arc<Sessions>, ExecError> {
        self.sessions.as_ref().ok_or_else(|| {
            ExecError::Unavailable(
                "sandbox sessions need a workspace; set `workspace_dir` (or keep the default \
                 under the data dir) to use them"
                    .to_owned(),
            )
        })
    }
}

struct ExecExecutor {
    kind: Kind,
    deps: Deps,
}

#[async_trait]
impl ToolExecutor for ExecExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let deps = &self.deps;
        let outcome = match self.kind {
            Kind::Shell => shell::run(deps, &args, ctx).await,
            Kind::Python => python::run(deps, &args, ctx).await,
            Kind::JavaScript => return javascript::run(deps, args, ctx).await,
            Kind::Compile => compile::run(deps, &args, ctx).await,
            Kind::Packages => packages::run(deps, &args, ctx).await,
            Kind::SessionInitialize => sessions::initialize(deps, &args, ctx).await,
            Kind::SessionList => sessions::list(deps, ctx),
            Kind::SessionExec => sessions::exec(deps, &args, ctx).await,
            Kind::SessionRunJs => sessions::run_js(deps, &args, ctx).await,
            Kind::SessionStop => sessions::stop(deps, &args, ctx).await,
        };
        match outcome {
            Ok(content) => ToolResult::ok(content),
            Err(e) => ToolResult::error_with(e.kind(), e.to_string(), e.details()),
        }
    }
}

/// A code tool: category `Code Execution`, its group as provider, `shell` (plus whatever
/// `extra` adds), so the `dangerous` approval setting and JS tools' `callTool` rules cover it.
fn exec_tool(
    deps: &Deps,
    definition: ToolDefinition,
    kind: Kind,
    extra: &[Permission],
) -> RegisteredTool {
    let requires_approval = definition.requires_confirmation;
    let executor = Arc::new(ExecExecutor {
        kind,
        deps: deps.clone(),
    });
    let mut permissions = toolsmith_core::PermissionSet::from([Permission::Shell]);
    permissions.extend(extra.iter().copied());
    crate::builtin_tool(definition, CATEGORY, permissions, executor)
        .with_requires_approval(requires_approval)
}

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let deps = Deps {
        workspaces: env.workspaces.clone(),
        host: env.code.clone(),
        sessions: env.sessions.clone(),
        registries: env.registries.clone(),
    };
    vec![
        exec_tool(&deps, javascript::definition(), Kind::JavaScript, &[]),
        exec_tool(
            &deps,
            python::definition(),
            Kind::Python,
            &[Permission::Filesystem],
        ),
        exec_tool(
            &deps,
            shell::definition(),
            Kind::Shell,
            &[Permission::Filesystem],
        ),
        exec_tool(&deps, compile::definition(), Kind::Compile, &[]),
        exec_tool(
            &deps,
            packages::definition(),
            Kind::Packages,
            &[Permission::Filesystem, Permission::Network],
        ),
        exec_tool(
            &deps,
            sessions::initialize_definition(),
            Kind::SessionInitialize,
            &[],
        ),
        exec_tool(&deps, sessions::list_definition(), Kind::SessionList, &[]),
        exec_tool(&deps, sessions::exec_definition(), Kind::SessionExec, &[]),
        exec_tool(
            &deps,
            sessions::run_js_definition(),
            Kind::SessionRunJs,
            &[],
        ),
        exec_tool(&deps, sessions::stop_definition(), Kind::SessionStop, &[]),
    ]
}

/// The string argument `key`, non-empty and at most [`MAX_CODE_BYTES`]; `what` names it in
/// the error (e.g. "the Python code").
pub(crate) fn code_arg<'a>(args: &'a Value, key: &str, what: &str) -> Result<&'a str, ExecError> {
    let code = args
        .get(key)
        .and_then(Value::as_str)
        .filter(|code| !code.trim().is_empty())
        .ok_or_else(|| ExecError::Args(format!("'{key}' must be a non-empty string: {what}")))?;
    if code.len() > MAX_CODE_BYTES {
        return Err(ExecError::Args(format!(
            "'{key}' is {} bytes; the limit is {MAX_CODE_BYTES}. Write longer code to a file \
             with write_file and run it from execute_shell (e.g. `python3 main.py`)",
            code.len()
        )));
    }
    if code.contains('\0') {
        return Err(ExecError::Args(format!(
            "'{key}' contains a NUL byte; remove it"
        )));
    }
    Ok(code)
}

/// The run's time limit: `timeoutSeconds` (1 to 30), else [`MAX_TIMEOUT`]; never past the
/// call's own deadline.
pub(crate) fn timeout_arg(args: &Value, ctx: &ToolContext) -> Result<Duration, ExecError> {
    let max = MAX_TIMEOUT.as_secs();
    let timeout = match args.get("timeoutSeconds") {
        None | Some(Value::Null) => MAX_TIMEOUT,
        Some(value) => match value.as_u64() {
            Some(secs @ 1..) if secs <= max => Duration::from_secs(secs),
            _ => {
                return Err(ExecError::Args(format!(
                    "'timeoutSeconds' must be a whole number from 1 to {max} (the sandbox's limit)"
                )));
            }
        },
    };
    Ok(match ctx.deadline {
        Some(deadline) => timeout.min(
            deadline
                .saturating_duration_since(std::time::Instant::now())
                .max(Duration::from_millis(1)),
        ),
        None => timeout,
    })
}

/// Refuses a shell command the deny patterns match, naming why.
pub(crate) fn check_command(command: &str) -> Result<(), ExecError> {
    check_denied(command).map_err(|denied| {
        ExecError::Denied(format!(
            "the command was refused: {denied}. Run a narrower command inside your workspace"
        ))
    })
}

/// The `timeoutSeconds` property every run tool takes.
pub(crate) fn timeout_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT.as_secs(), "default": MAX_TIMEOUT.as_secs(), "description": "Wall-clock limit of the run in seconds (at most 30); at the end every process of the run is killed."})
}

/// Runs `request` with the family's output caps and shapes the outcome.
pub(crate) async fn run_request(
    deps: &Deps,
    mut request: RunRequest<'_>,
) -> Result<Value, ExecError> {
    let sandbox = deps.sandbox().await?;
    let offline = request.proxy_socket.is_none() && !request.network;
    request.stdout_cap = STDOUT_CAP;
    request.stderr_cap = STDERR_CAP;
    let output = sandbox
        .run(&request)
        .await
        .map_err(|e| ExecError::Run(format!("the sandbox could not run the code: {e}")))?;
    let mut out = output_json(&output);
    if offline {
        offline::explain(&mut out);
    }
    Ok(out)
}

/// Runs `request` in the caller's workspace `ws` (mounted read-write at `/tmp/work`), under
/// the workspace's rules as far as a sandbox can hold them:
/// - the deny-listed paths that exist are covered (empty and read-only inside the sandbox);
/// - the quota: a run is refused while the user's workspaces are at or over it, no one file
///   the run writes may exceed its share of what is left (`RLIMIT_FSIZE`; half of what the
///   user's runs in flight have not reserved, [`Workspace::reserve_run`], so parallel runs
///   share it rather than each getting all of it), and a run that still leaves them over it
///   (many files) says so in `quota`, so the next run or write is refused until files are
///   deleted.
pub(crate) async fn run_in(
    deps: &Deps,
    ws: &Workspace,
    request: RunRequest<'_>,
) -> Result<Value, ExecError> {
    ws.check_writable()?;
    let before = ws.usage()?;
    if before.bytes >= before.quota_bytes || before.entries >= before.max_entries {
        return Err(ExecError::Limit(format!(
            "your workspaces are full ({} of {} bytes, {} of {} files and folders): delete \
             files (delete_file) before running code in them",
            before.bytes, before.quota_bytes, before.entries, before.max_entries
        )));
    }
    let root = ws.root_path().to_path_buf();
    let hidden = ws.denied_paths();
    let mut request: RunRequest<'_> = request;
    request.workspace = Some(&root);
    request.hidden = &hidden;
    // Parallel runs of one user share what is left (issue 31: each got all of it).
    let share = ws.reserve_run(&before);
    request.max_file_size = Some(share.bytes());
    let mut out = run_request(deps, request).await?;
    drop(share);
    let after = ws.usage()?;
    if after.bytes > after.quota_bytes || after.entries > after.max_entries {
        object::set(
            &mut out,
            "quota",
            json!({
                "exceeded": true,
                "usage": after,
                "message": format!(
                    "the run left your workspaces over their quota ({} of {} bytes, {} of {} files \
                     and folders): delete files (delete_file) before the next run or write",
                    after.bytes, after.quota_bytes, after.entries, after.max_entries
                ),
            }),
        );
    }
    Ok(out)
}

/// `{success, exitCode, stdout, stderr, timedOut, truncated, durationMs}` (+ `signal`).
pub(crate) fn output_json(output: &CommandOutput) -> Value {
    let mut out = json!({
        "success": output.exit_code == Some(0) && !output.timed_out,
        "exitCode": output.exit_code,
        "stdout": output.stdout,
        "stderr": output.stderr,
        "timedOut": output.timed_out,
        "truncated": output.stdout_truncated || output.stderr_truncated,
        "durationMs": u64::try_from(output.duration.as_millis()).unwrap_or(u64::MAX),
    });
    if let Some(signal) = output.signal {
        object::set(&mut out, "signal", json!(signal));
    }
    if output.timed_out {
        object::set(
            &mut out,
            "error",
            json!(format!(
                "the run was killed at its time limit ({} s at most); make it faster or split it",
                MAX_TIMEOUT.as_secs()
            )),
        );
    }
    out
}

/// Whether a run's program was missing from the sandbox (`sh`'s exit 127).
pub(crate) fn program_missing(out: &Value) -> bool {
    out["exitCode"] == json!(127)
}
