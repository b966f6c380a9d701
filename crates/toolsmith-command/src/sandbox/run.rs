//! One sandboxed run: spawn, read stdout and stderr concurrently under their caps, enforce the
//! timeout by killing the whole sandbox, and report exit code or signal.

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use super::CommandSandbox;
use super::args::{SANDBOX_PATH, WORKSPACE, invocation};
use crate::output::read_capped;
use crate::spec::{MAX_TIMEOUT_SECONDS, env_violation, is_valid_working_dir};

/// How long output may keep flowing after the sandbox was killed before the run is abandoned.
const DRAIN_GRACE: Duration = Duration::from_secs(10);

/// Where [`RunRequest::proxy_socket`] is inside the sandbox.
pub const PROXY_SOCKET: &str = "/run/toolsmith/proxy.sock";

/// The folder inside the sandbox where [`RunRequest::program`] is bound, under its own name.
pub const PROGRAM_DIR: &str = "/run/toolsmith/bin";

/// The command that runs its positional arguments as a program: with it, `args` is an argv.
pub const EXEC_ARGS: &str = "exec \"$@\"";

/// No environment variables beyond the fixed ones.
static NO_ENV: BTreeMap<String, String> = BTreeMap::new();

/// What to run; build it from a validated `CommandToolSpec` and a rendered, deny-checked command
/// ([`RunRequest::for_spec`]), or from a command or an argv with the defaults
/// ([`RunRequest::shell`], [`RunRequest::argv`]) and then set what differs.
/// Its `Debug` names the env variables, never their values.
///
/// A run in a host folder (the built-in code tools and sandbox sessions, git):
///
/// ```ignore
/// let argv = ["git", "status", "--porcelain"];
/// let mut request = RunRequest::argv(&argv);
/// request.workspace = Some(workspace.root_path()); // mounted read-write at /tmp/work
/// let output = sandbox.run(&request).await?;
/// ```
#[derive(Clone)]
pub struct RunRequest<'a> {
    /// The rendered command, run as `/bin/sh -c COMMAND toolsmith-run ARGS…`. Deny-check it
    /// ([`crate::check_denied`]) before running it.
    pub command: &'a str,
    /// Positional parameters of `command` (`$1`, `$2`, …), passed as they are, never parsed by a
    /// shell: with [`EXEC_ARGS`] they are the program and its arguments.
    pub args: &'a [&'a str],
    /// A host folder bind-mounted read-write at `/tmp/work` (the command's `HOME` and working
    /// directory) in place of the private, empty workspace; nothing else of the host is added.
    /// It must be an absolute path of a folder the server created, never one a caller named.
    /// With a workspace, `working_dir` must already exist inside it (it is not created: the
    /// folder's content is the caller's, and the sandbox only ever enters it from inside).
    ///
    /// Ownership: when the server runs as root, the command runs as `nobody` (see
    /// [`super::CommandSandbox::workspace_owner`]), so the folder and everything in it must
    /// belong to `nobody` to be writable; otherwise the sandbox's user is the server's own uid,
    /// which owns the folder already.
    pub workspace: Option<&'a Path>,
    /// Workspace-relative paths the command must not see (the workspace's deny-list): each
    /// one that exists in `workspace` is covered inside the sandbox, a folder by an empty
    /// read-only tmpfs, anything else by an empty read-only file. Plain relative paths only
    /// (no `..`, not absolute); others are refused by [`super::CommandSandbox::run`].
    pub hidden: &'a [String],
    /// A lower ceiling than the sandbox's `max_file_size_bytes` for any one file the command
    /// writes (e.g. what is left of the caller's quota).
    pub max_file_size: Option<u64>,
    /// The only variables the command sees besides `PATH`, `HOME`, `LANG` and `TMPDIR`.
    pub env: &'a BTreeMap<String, String>,
    /// A relative directory inside the private workspace, created empty.
    pub working_dir: Option<&'a str>,
    /// Wall-clock limit; at the end the whole sandbox is killed.
    pub timeout: Duration,
    /// Whether the host network is shared with the command.
    pub network: bool,
    /// A Unix socket of the host bound at [`PROXY_SOCKET`] inside the sandbox: with `network`
    /// false, the run's only way out is whatever listens on it (`package_manager`'s registry
    /// proxy). An absolute path of a socket the server created, never one a caller named; when
    /// the server runs as root, `nobody` must be able to reach it (see
    /// [`super::CommandSandbox::workspace_owner`]).
    pub proxy_socket: Option<&'a Path>,
    /// A program file of the host outside `/usr` (which the sandbox sees anyway), bound
    /// read-only at [`PROGRAM_DIR`]`/<its file name>`: a coding agent's CLI the server found in
    /// a folder the operator named. An absolute path of a file, never one a caller named; when
    /// the server runs as root, `nobody` must be able to reach it.
    pub program: Option<&'a Path>,
    /// Bytes of stdout kept; the rest is discarded and flagged.
    pub stdout_cap: usize,
    /// Bytes of stderr kept; the rest is discarded and flagged.
    pub stderr_cap: usize,
}

impl std::fmt::Debug for RunRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("workspace", &self.workspace)
            .field("hidden", &self.hidden)
            .field("max_file_size", &self.max_file_size)
            .field("env", &crate::spec::EnvNames(self.env))
            .field("working_dir", &self.working_dir)
            .field("timeout", &self.timeout)
            .field("network", &self.network)
            .field("proxy_socket", &self.proxy_socket)
            .field("program", &self.program)
            .field("stdout_cap", &self.stdout_cap)
            .field("stderr_cap", &self.stderr_cap)
            .finish()
    }
}

impl<'a> RunRequest<'a> {
    /// `/bin/sh -c command` with no env, no workspace, no network, a 30 s timeout and the
    /// default output caps.
    #[must_use]
    pub fn shell(command: &'a str) -> RunRequest<'a> {
        RunRequest {
            command,
            args: &[],
            workspace: None,
            hidden: &[],
            max_file_size: None,
            env: &NO_ENV,
            working_dir: None,
            timeout: Duration::from_secs(30),
            network: false,
            proxy_socket: None,
            program: None,
            stdout_cap: super::DEFAULT_OUTPUT_CAP,
            stderr_cap: super::DEFAULT_OUTPUT_CAP,
        }
    }

    /// `argv[0]` run with the arguments `argv[1..]` (looked up on the sandbox's `PATH`), with
    /// the defaults of [`RunRequest::shell`]. Nothing is parsed by a shell.
    #[must_use]
    pub fn argv(argv: &'a [&'a str]) -> RunRequest<'a> {
        RunRequest {
            args: argv,
            ..RunRequest::shell(EXEC_ARGS)
        }
    }

    /// The request for a validated spec and its rendered, deny-checked command, with the
    /// default output caps.
    #[must_use]
    pub fn for_spec(spec: &'a crate::CommandToolSpec, command: &'a str) -> RunRequest<'a> {
        RunRequest {
            command,
            args: &[],
            workspace: None,
            hidden: &[],
            max_file_size: None,
            env: &spec.env,
            working_dir: spec.working_dir.as_deref(),
            timeout: Duration::from_secs(spec.timeout_seconds),
            network: spec.network,
            proxy_socket: None,
            program: None,
            stdout_cap: super::DEFAULT_OUTPUT_CAP,
            stderr_cap: super::DEFAULT_OUTPUT_CAP,
        }
    }
}

/// The outcome of a run that started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutput {
    /// The exit code, when the command exited (a command killed by a signal inside the sandbox
    /// shows as `128 + signal`, as in a shell).
    pub exit_code: Option<i32>,
    /// The signal that ended the command: the host's kill at the timeout, or `exit_code - 128`
    /// when the code is in the shell's signal range 129..=192.
    pub signal: Option<i32>,
    /// Stdout, lossily decoded as UTF-8, at most `stdout_cap` bytes before decoding.
    pub stdout: String,
    /// Stderr, likewise.
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// Whether the run hit its timeout and was killed.
    pub timed_out: bool,
    pub duration: Duration,
}

/// Why a run could not happen, or could not be completed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    #[error("invalid run request: {0}")]
    InvalidRequest(String),
    #[error("the sandbox could not be started")]
    Spawn(#[source] std::io::Error),
    #[error("waiting for the sandbox failed")]
    Wait(#[source] std::io::Error),
    #[error("the sandbox was killed but its output did not close within {0:?}")]
    Stuck(Duration),
}

impl RunError {
    /// A stable machine code for this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidRequest(_) => "invalid_run_request",
            Self::Spawn(_) => "sandbox_spawn_failed",
            Self::Wait(_) => "sandbox_wait_failed",
            Self::Stuck(_) => "sandbox_stuck",
        }
    }
}

impl CommandSandbox {
    /// Runs `request.command` inside a fresh sandbox and collects its output.
    pub async fn run(&self, request: &RunRequest<'_>) -> Result<CommandOutput, RunError> {
        check_request(request)?;
        // The CPU limit is a backstop for the wall-clock timeout, never shorter than it.
        let cpu_seconds = request.timeout.as_secs().saturating_add(1);
        let plan = invocation(self, request, cpu_seconds);
        let mut command = Command::new(&plan.program);
        command
            .args(&plan.args)
            .env_clear()
            .env("PATH", SANDBOX_PATH)
            .env("HOME", WORKSPACE)
            .env("TMPDIR", "/tmp")
            .env("LANG", "C.UTF-8")
            .envs(request.env)
            .current_dir("/")
            .stdin(if self.seccomp.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);

        let started = Instant::now();
        let mut child = command.spawn().map_err(RunError::Spawn)?;
        let pid = child.id();
        if let (Some(filter), Some(mut stdin)) = (&self.seccomp, child.stdin.take()) {
            // A few KiB, far below a pipe's buffer: this write cannot block on the child.
            stdin.write_all(filter).await.map_err(RunError::Spawn)?;
            drop(stdin);
        }
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let readers = async {
            tokio::join!(
                read_capped(stdout, request.stdout_cap),
                read_capped(stderr, request.stderr_cap)
            )
        };
        let waiter = async {
            match tokio::time::timeout(request.timeout, child.wait()).await {
                Ok(status) => (status, false),
                Err(_) => {
                    kill_group(pid);
                    // Killing bwrap takes its PID namespace with it (--die-with-parent makes
                    // the namespace's init die, and the kernel kills everything else in it).
                    let _ = child.start_kill();
                    (child.wait().await, true)
                }
            }
        };
        let bound = request.timeout.saturating_add(DRAIN_GRACE);
        let joined = tokio::time::timeout(bound, async { tokio::join!(readers, waiter) }).await;
        let Ok(((out, err), (status, timed_out))) = joined else {
            kill_group(pid);
            return Err(RunError::Stuck(DRAIN_GRACE));
        };
        let status = status.map_err(RunError::Wait)?;
        let (exit_code, signal) = exit_of(status);
        tracing::debug!(exit_code, signal, timed_out, "command run finished");
        Ok(CommandOutput {
            exit_code,
            signal,
            stdout: String::from_utf8_lossy(&out.bytes).into_owned(),
            stderr: String::from_utf8_lossy(&err.bytes).into_owned(),
            stdout_truncated: out.truncated,
            stderr_truncated: err.truncated,
            timed_out,
            duration: started.elapsed(),
        })
    }
}

fn check_request(request: &RunRequest<'_>) -> Result<(), RunError> {
    if request.command.contains('\0') || request.args.iter().any(|arg| arg.contains('\0')) {
        return Err(RunError::InvalidRequest(
            "the command or an argument contains a NUL byte".into(),
        ));
    }
    if request.command == EXEC_ARGS && request.args.is_empty() {
        return Err(RunError::InvalidRequest(
            "an argv run needs at least the program".into(),
        ));
    }
    if let Some(workspace) = request.workspace
        && !(workspace.is_absolute() && workspace.is_dir())
    {
        return Err(RunError::InvalidRequest(format!(
            "workspace `{}` is not an absolute path of an existing folder",
            workspace.display()
        )));
    }
    if request.timeout.is_zero() || request.timeout > Duration::from_secs(MAX_TIMEOUT_SECONDS) {
        return Err(RunError::InvalidRequest(format!(
            "timeout must be between 1 ms and {MAX_TIMEOUT_SECONDS} s"
        )));
    }
    if let Some(socket) = request.proxy_socket
        && !(socket.is_absolute() && socket.exists())
    {
        return Err(RunError::InvalidRequest(format!(
            "proxy socket `{}` is not an absolute path of an existing socket",
            socket.display()
        )));
    }
    if let Some(program) = request.program
        && !(program.is_absolute() && program.is_file() && program.file_name().is_some())
    {
        return Err(RunError::InvalidRequest(format!(
            "program `{}` is not an absolute path of an existing file",
            program.display()
        )));
    }
    if let Some(dir) = request.working_dir
        && !is_valid_working_dir(dir)
    {
        return Err(RunError::InvalidRequest(format!(
            "working dir `{dir}` is not a relative path of plain names"
        )));
    }
    if let Some(path) = request
        .hidden
        .iter()
        .find(|path| !is_plain_relative(path.trim_end_matches('/')))
    {
        return Err(RunError::InvalidRequest(format!(
            "hidden path `{path}` is not a relative path of plain names"
        )));
    }
    for (name, value) in request.env {
        if let Some(violation) = env_violation(name, value) {
            return Err(RunError::InvalidRequest(violation.to_string()));
        }
    }
    Ok(())
}

/// A relative path of names: not empty, no `.` or `..`, no empty component, no NUL.
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && !path.contains('\0')
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// Sends SIGKILL to the process group the sandbox was started in.
fn kill_group(pid: Option<u32>) {
    let pid = pid
        .and_then(|pid| i32::try_from(pid).ok())
        .and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

fn exit_of(status: ExitStatus) -> (Option<i32>, Option<i32>) {
    match (status.code(), status.signal()) {
        (Some(code), _) if (129..=192).contains(&code) => (Some(code), Some(code - 128)),
        (code, signal) => (code, signal),
    }
}
