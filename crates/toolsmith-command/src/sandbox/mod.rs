//! The OS sandbox for command tools: bubblewrap namespaces, `prlimit` rlimits and, when the
//! server runs as root, `setpriv` to an unprivileged uid first. Owns probing the host
//! ([`CommandSandbox::probe`]) and running one command ([`CommandSandbox::run`]).
//!
//! There is no unsandboxed path: without a working bubblewrap, `probe` fails and no
//! `CommandSandbox` exists to run anything with.

mod args;
mod run;
mod seccomp;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use run::{CommandOutput, EXEC_ARGS, PROGRAM_DIR, PROXY_SOCKET, RunError, RunRequest};

/// The default cap of stdout and of stderr, each.
pub const DEFAULT_OUTPUT_CAP: usize = 1024 * 1024;

/// Where host tools are looked up; `PATH` is deliberately not consulted.
const SYSTEM_BIN_DIRS: &[&str] = &["/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin"];
/// The unprivileged uid and gid the server drops to when it runs as root (`nobody`).
const NOBODY: u32 = 65534;

/// Resource limits applied to every run, on top of the request's timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxLimits {
    /// `RLIMIT_AS`: virtual memory of each process, in bytes.
    pub address_space_bytes: u64,
    /// `RLIMIT_NPROC`: processes (threads included) of the sandbox user, counted per namespace.
    pub max_processes: u64,
    /// `RLIMIT_FSIZE`: the largest file a process may write, in bytes.
    pub max_file_size_bytes: u64,
    /// `RLIMIT_NOFILE`: open file descriptors per process.
    pub max_open_files: u64,
    /// Size of the private tmpfs mounted on `/tmp` (the workspace lives in it).
    pub workspace_bytes: u64,
    /// Size of the private tmpfs mounted on `/dev/shm` (POSIX shared memory and semaphores).
    /// With `workspace_bytes` it bounds the memory a run can keep in files outside its
    /// workspace folder: `/dev` itself is read-only.
    pub shm_bytes: u64,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        Self {
            address_space_bytes: 2 * 1024 * 1024 * 1024,
            max_processes: 64,
            max_file_size_bytes: 64 * 1024 * 1024,
            max_open_files: 256,
            workspace_bytes: 64 * 1024 * 1024,
            shm_bytes: 16 * 1024 * 1024,
        }
    }
}

/// Why command tools cannot run on this host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("command tools are unavailable: {reason}")]
pub struct SandboxUnavailable {
    pub reason: String,
}

impl SandboxUnavailable {
    /// A stable machine code for this error.
    #[must_use]
    pub fn code(&self) -> &'static str {
        "command_sandbox_unavailable"
    }
}

/// util-linux's `unshare` and `mount`: under root, a workspace run first bind-mounts the folder
/// at [`STAGE`] in a private mount namespace of its own, because `nobody` may not walk the
/// server's data dir (mode 0700) to reach it.
#[derive(Debug, Clone)]
struct Stage {
    unshare: PathBuf,
    mount: PathBuf,
}

/// Where, in a run's private mount namespace, a root server puts a fresh tmpfs holding the
/// workspace's bind mount. Exists on every FHS system; what the host mounts there is hidden
/// only from that run, never changed on the host.
const STAGE: &str = "/mnt";

/// A sandbox checked to work on this host; cheap to clone and share.
#[derive(Debug, Clone)]
pub struct CommandSandbox {
    bwrap: PathBuf,
    prlimit: PathBuf,
    /// `Some` when the server runs as root: every run first drops to `nobody` with it.
    setpriv: Option<PathBuf>,
    /// `Some` when the server runs as root: how a workspace folder reaches a sandbox that starts
    /// as `nobody` (see [`args`]'s staging).
    stage: Option<Stage>,
    /// The seccomp filter, when one can be built for this architecture.
    seccomp: Option<Arc<[u8]>>,
    limits: SandboxLimits,
}

impl CommandSandbox {
    /// Finds bubblewrap and its helpers with the default limits and proves they work by running
    /// `true` inside a sandbox built exactly like a real run's.
    pub async fn probe() -> Result<CommandSandbox, SandboxUnavailable> {
        Self::probe_with(SandboxLimits::default()).await
    }

    /// [`CommandSandbox::probe`] with explicit limits.
    pub async fn probe_with(limits: SandboxLimits) -> Result<CommandSandbox, SandboxUnavailable> {
        let bwrap = find_tool("bwrap", "bubblewrap")?;
        let prlimit = find_tool("prlimit", "util-linux")?;
        let (setpriv, stage) = if rustix::process::geteuid().is_root() {
            if !Path::new(STAGE).is_dir() {
                return Err(SandboxUnavailable {
                    reason: format!(
                        "`{STAGE}` is missing; a server running as root stages workspaces there (create the folder)"
                    ),
                });
            }
            let stage = Stage {
                unshare: find_tool("unshare", "util-linux")?,
                mount: find_tool("mount", "mount")?,
            };
            (Some(find_tool("setpriv", "util-linux")?), Some(stage))
        } else {
            (None, None)
        };
        let seccomp = match seccomp::filter_bytes() {
            Ok(bytes) => Some(Arc::from(bytes)),
            Err(reason) => {
                tracing::warn!(%reason, "command sandbox runs without a seccomp filter");
                None
            }
        };
        let sandbox = CommandSandbox {
            bwrap,
            prlimit,
            setpriv,
            stage,
            seccomp,
            limits,
        };
        sandbox.self_test().await?;
        Ok(sandbox)
    }

    /// Whether runs get the seccomp filter (always on x86_64 and aarch64).
    #[must_use]
    pub fn has_seccomp(&self) -> bool {
        self.seccomp.is_some()
    }

    /// Who must own a workspace folder (and everything in it) for a run to write it: `nobody`
    /// (uid, gid) when the server runs as root, `None` otherwise.
    ///
    /// Why ownership, not uid mapping: under root every run drops to `nobody` before bubblewrap
    /// starts, so a kernel or bubblewrap flaw leaves an attacker `nobody`, not root. Mapping the
    /// sandbox's user onto root instead (bubblewrap as root with `--unshare-user`) would make
    /// every root-owned file the sandbox sees its own (`/etc/ssl/private`, set-uid bits on what
    /// it writes); an idmapped bind mount would avoid that but needs a `mount` built with the new
    /// mount API, which Debian's is not. So the workspace belongs to `nobody` (the server,
    /// as root, still reads and writes it), and its parents (the data dir, mode 0700) stay
    /// closed to `nobody`: the folder reaches the sandbox through a bind mount made by root in
    /// the run's private mount namespace. Without root, bubblewrap maps the sandbox's user onto
    /// the server's uid, which owns the workspace already.
    #[must_use]
    pub fn workspace_owner() -> Option<(u32, u32)> {
        rustix::process::geteuid()
            .is_root()
            .then_some((NOBODY, NOBODY))
    }

    /// The limits every run gets.
    #[must_use]
    pub fn limits(&self) -> &SandboxLimits {
        &self.limits
    }

    async fn self_test(&self) -> Result<(), SandboxUnavailable> {
        let request = RunRequest {
            timeout: Duration::from_secs(20),
            stdout_cap: 1024,
            stderr_cap: 4096,
            ..RunRequest::shell("echo toolsmith-sandbox-ok")
        };
        let output = self.run(&request).await.map_err(|err| SandboxUnavailable {
            reason: format!("bubblewrap could not be started: {err}"),
        })?;
        if output.exit_code == Some(0) && output.stdout.trim() == "toolsmith-sandbox-ok" {
            return Ok(());
        }
        Err(SandboxUnavailable {
            reason: format!(
                "bubblewrap failed its self-test (exit {:?}, signal {:?}): {}; user namespaces may be disabled on this kernel",
                output.exit_code,
                output.signal,
                output.stderr.trim()
            ),
        })
    }
}

fn find_tool(name: &str, package: &str) -> Result<PathBuf, SandboxUnavailable> {
    SYSTEM_BIN_DIRS
        .iter()
        .map(|dir| Path::new(dir).join(name))
        .find(|path| path.is_file())
        .ok_or_else(|| SandboxUnavailable {
            reason: format!(
                "`{name}` was not found in {SYSTEM_BIN_DIRS:?}; install the `{package}` package (scripts/install-system-deps.sh)"
            ),
        })
}

#[cfg(test)]
mod tests;
