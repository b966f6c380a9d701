//! One git invocation in the command sandbox: the caller's workspace mounted read-write at
//! [`MOUNT`], git run as an argv with the overrides below, no network, 30 s, capped output.
//!
//! What a repository's configuration cannot make git do here, whatever `.git/config` says:
//! run hooks (`core.hooksPath=/dev/null`), start an fsmonitor daemon, a pager or an editor,
//! ask for credentials or sign with gpg, or use any transport (`protocol.allow=never`); the
//! system and global configuration files are not read (`GIT_CONFIG_NOSYSTEM`,
//! `GIT_CONFIG_GLOBAL=/dev/null`: a model could write `~/.gitconfig` — the workspace is
//! `HOME` in the sandbox). Every file a caller names is a `:(literal)` pathspec (no magic of
//! the caller's), and the workspace's denied prefixes inside the repository are excluded from
//! every status, diff, add and restore ([`Git::pathspecs`]), so git cannot show, stage or
//! overwrite what the file tools hide.
//! Anything else a configuration can name (filters, diff drivers) runs inside the sandbox only.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use toolsmith_command::{CommandOutput, CommandSandbox, RunRequest};
use toolsmith_core::ToolContext;

use crate::BuiltinEnv;
use crate::workspace::{EntryKind, Workspace, WorkspaceError, WsPath};

/// Where the command sandbox mounts a run's workspace (`RunRequest::workspace`).
pub const MOUNT: &str = "/tmp/work";
/// Longest one git run may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// Most bytes of git's output read (more is cut and reported as truncated).
pub const OUTPUT_CAP: usize = 1024 * 1024;

/// Configuration given on the command line, which outranks every configuration file.
const OVERRIDES: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=true",
    "sequence.editor=true",
    "core.askPass=",
    "credential.helper=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "protocol.allow=never",
    "safe.directory=*",
    "core.quotePath=false",
    "color.ui=false",
    "advice.detachedHead=false",
    "init.defaultBranch=main",
];

/// Why a git tool failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{0}")]
    Args(String),
    #[error(transparent)]
    Workspace(WorkspaceError),
    #[error(
        "the git tools are unavailable: {0}. Git runs only inside the command sandbox \
         (bubblewrap), never on the host; the operator installs bubblewrap and util-linux \
         (scripts/install-system-deps.sh) for them to work"
    )]
    NoSandbox(String),
    /// Git refused or failed; the message says what to do.
    #[error("{0}")]
    Git(String),
    #[error("git could not be run in the sandbox: {0}")]
    Sandbox(String),
    #[error(
        "git took longer than 30 s and was stopped; the repository is too large for the git tools"
    )]
    Timeout,
}

/// What one git run printed.
#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub ok: bool,
    pub truncated: bool,
}

impl Output {
    /// The first line of git's complaint (`fatal: …`, `error: …`), bounded.
    #[must_use]
    pub fn complaint(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("hint:"))
            .take(5)
            .collect();
        let joined = lines.join(" ");
        joined.chars().take(600).collect()
    }
}

/// A call's repository: the sandbox, the workspace it is in and where it is.
pub struct Git {
    sandbox: Arc<CommandSandbox>,
    pub(crate) workspace: Arc<Workspace>,
    /// The repository's folder in the workspace.
    pub(crate) repo: WsPath,
    /// Its folder inside the sandbox.
    inside: String,
    root: PathBuf,
    pub(crate) default_author: String,
}

impl Git {
    /// The caller's workspace and the repository folder in `args.path` (the root by default),
    /// and the sandbox to run git in.
    pub async fn for_call(
        env: &BuiltinEnv,
        ctx: &ToolContext,
        args: &Value,
    ) -> Result<Git, GitError> {
        let workspaces = env
            .workspaces
            .clone()
            .ok_or(GitError::Workspace(WorkspaceError::NotConfigured))?;
        let raw = super::opt_str(args, "path")?.unwrap_or(".").to_owned();
        let (ctx, shown) = (ctx.clone(), raw.clone());
        let (workspace, repo) = tokio::task::spawn_blocking(move || {
            let workspace = workspaces.for_call(&ctx)?;
            let repo = workspace.path(&raw)?;
            let meta = workspace.stat(&repo)?;
            if meta.kind != EntryKind::Directory {
                return Err(GitError::Args(format!(
                    "'{shown}' is not a folder; 'path' names the repository's folder (the one \
                     holding .git), not a file"
                )));
            }
            Ok((Arc::new(workspace), repo))
        })
        .await
        .map_err(|e| GitError::Sandbox(format!("the workspace check failed: {e}")))??;
        let Some(source) = env.sandbox.clone() else {
            return Err(GitError::NoSandbox(
                "this server gave the built-ins no command sandbox".into(),
            ));
        };
        let sandbox = source.sandbox().await.map_err(GitError::NoSandbox)?;
        let inside = if repo.is_root() {
            MOUNT.to_owned()
        } else {
            format!("{MOUNT}/{repo}")
        };
        Ok(Git {
            sandbox,
            root: workspace.root_path().to_path_buf(),
            workspace,
            repo,
            inside,
            default_author: env.git.default_author.clone(),
        })
    }

    /// The repository's path as callers see it.
    #[must_use]
    pub fn shown(&self) -> String {
        self.repo.to_string()
    }

    /// Refuses a change when the user's workspaces are already at their quota: git writes
    /// into the workspace beside the file tools (objects, checked-out files), so it may not
    /// grow a workspace that is full. (What one git run writes is not known before it runs.)
    pub async fn check_room(&self) -> Result<(), GitError> {
        let workspace = self.workspace.clone();
        let usage = tokio::task::spawn_blocking(move || workspace.usage())
            .await
            .map_err(|e| GitError::Sandbox(format!("the quota check failed: {e}")))??;
        if usage.bytes >= usage.quota_bytes || usage.entries >= usage.max_entries {
            return Err(GitError::Git(format!(
                "your workspace is full ({} of {} bytes, {} of {} files and folders) and git \
                 writes into it; delete files you no longer need (delete_file) and try again",
                usage.bytes, usage.quota_bytes, usage.entries, usage.max_entries
            )));
        }
        Ok(())
    }

    /// `files` (relative to the repository) as literal pathspecs, then an exclusion of each
    /// denied prefix of the workspace that lies inside the repository. With no files, the
    /// exclusions alone mean "everything else".
    #[must_use]
    pub fn pathspecs(&self, files: &[String]) -> Vec<String> {
        let repo: Vec<&str> = self.repo.names().iter().map(String::as_str).collect();
        let excluded = self
            .workspace
            .config()
            .denied_prefixes
            .iter()
            .map(|p| {
                p.split('/')
                    .filter(|n| !n.is_empty() && *n != ".")
                    .collect::<Vec<_>>()
            })
            .filter_map(|names| {
                let inside = names.strip_prefix(repo.as_slice())?;
                (!inside.is_empty()).then(|| format!(":(exclude,literal){}", inside.join("/")))
            });
        files
            .iter()
            .map(|f| format!(":(literal){f}"))
            .chain(excluded)
            .collect()
    }

    /// The repository's status (`git status --porcelain=v2`, denied prefixes left out) as
    /// [`parse::status`] gives it.
    pub async fn status(&self) -> Result<Value, GitError> {
        let specs = self.pathspecs(&[]);
        let mut argv = vec!["status", "--porcelain=v2", "--branch", "-z", "--"];
        argv.extend(specs.iter().map(String::as_str));
        let out = self.run_ok(&argv, &BTreeMap::new(), generic).await?;
        Ok(super::parse::status(&out.stdout))
    }

    /// Runs `git <args>` in the repository with the fixed environment and `extra_env`.
    pub async fn run(
        &self,
        args: &[&str],
        extra_env: &BTreeMap<String, String>,
    ) -> Result<Output, GitError> {
        // Git mounts the workspace read-write (even `status` refreshes the index).
        self.workspace
            .check_writable()
            .map_err(GitError::Workspace)?;
        let mut argv: Vec<&str> = vec!["git", "--no-pager", "-C", &self.inside];
        for setting in OVERRIDES {
            argv.extend(["-c", setting]);
        }
        argv.extend_from_slice(args);
        let mut env: BTreeMap<String, String> = [
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("GIT_CEILING_DIRECTORIES", "/tmp"),
            ("GIT_OPTIONAL_LOCKS", "0"),
            ("GIT_ATTR_NOSYSTEM", "1"),
            ("GIT_PAGER", "cat"),
            ("GIT_EDITOR", "true"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        env.extend(extra_env.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut request = RunRequest::argv(&argv);
        request.workspace = Some(&self.root);
        request.env = &env;
        request.timeout = TIMEOUT;
        request.stdout_cap = OUTPUT_CAP;
        request.stderr_cap = 64 * 1024;
        let out: CommandOutput = self
            .sandbox
            .run(&request)
            .await
            .map_err(|e| GitError::Sandbox(e.to_string()))?;
        if out.timed_out {
            return Err(GitError::Timeout);
        }
        Ok(Output {
            ok: out.exit_code == Some(0),
            stdout: out.stdout,
            stderr: out.stderr,
            truncated: out.stdout_truncated,
        })
    }

    /// Runs git and fails with the common errors named (not a repository, no commits), or
    /// `other`'s message for the rest.
    pub async fn run_ok(
        &self,
        args: &[&str],
        extra_env: &BTreeMap<String, String>,
        other: impl FnOnce(&str) -> String,
    ) -> Result<Output, GitError> {
        let out = self.run(args, extra_env).await?;
        if out.ok {
            return Ok(out);
        }
        Err(self.failure(&out, other))
    }

    /// The error for a failed run.
    pub fn failure(&self, out: &Output, other: impl FnOnce(&str) -> String) -> GitError {
        let complaint = out.complaint();
        if complaint.contains("not a git repository") {
            return GitError::Git(format!(
                "'{}' is not a git repository (no .git there or in a folder above it within \
                 your workspace); give the repository's folder in 'path'",
                self.shown()
            ));
        }
        GitError::Git(other(&complaint))
    }
}

/// The message for a git failure no tool handles specially.
#[must_use]
pub fn generic(complaint: &str) -> String {
    format!("git failed: {complaint}")
}
