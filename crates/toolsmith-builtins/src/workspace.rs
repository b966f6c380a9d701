//! The per-user workspace: a folder under the data dir that the file tools (and, later, code
//! execution, git, PDF, downloads and JS tools with `filesystem`) read and write, with path
//! security, a deny-list and a quota.
//!
//! Layout under [`WorkspaceSettings::root`] (`<data_dir>/workspaces`):
//!
//! ```text
//! <user>/workspace/          the user's workspace (calls without an agent, or per_agent off)
//! <user>/agents/<agent>/     an agent's workspace (per_agent on)
//! <user>/sessions/<id>/      a sandbox session's folder (removed at its end)
//! ```
//!
//! `<user>` and `<agent>` are [`ids::folder_name`]s of the call's `ToolContext` ids, so a caller
//! can never name another user's folder, and one user's workspaces share one quota.
//!
//! Modules, each one job: [`settings`] (settings and limits), [`error`] (typed errors with the
//! fix), [`path`] (lexical checks), [`deny`] (the deny-list), [`ids`] (folder names),
//! [`beneath`] (the system calls, all relative to a directory handle), [`ops`] (the operations
//! of one [`Workspace`]), [`walk`] (bounded traversal: listings, searches, globs) and [`quota`].

pub mod beneath;
pub mod deny;
pub mod error;
pub mod ids;
pub mod ops;
pub mod path;
pub mod quota;
pub mod settings;
pub mod walk;

use std::collections::HashMap;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fd::OwnedFd;
use toolsmith_core::ToolContext;

pub use beneath::EntryKind;
pub use deny::DenyList;
pub use error::WorkspaceError;
pub use ops::{Metadata, RemoveOutcome, WriteOptions, WriteOutcome};
pub use path::WsPath;
pub use quota::{RunShare, Usage};
pub use settings::{FileLimits, WorkspaceSettings};
pub use walk::{WalkEntry, WalkOptions, WalkOutcome};

/// The folder of a user's own workspace inside their folder.
const USER_WORKSPACE: &str = "workspace";
/// The folder holding a user's agents' workspaces.
const AGENTS: &str = "agents";
/// The folder holding a user's sandbox sessions' folders.
const SESSIONS: &str = "sessions";

/// Every user's workspaces: the root handle, the settings and one lock per user (held by
/// changes, so a quota check and the write it allows are one step).
pub struct Workspaces {
    config: Arc<WorkspaceSettings>,
    deny: Arc<DenyList>,
    root: OwnedFd,
    locks: Mutex<HashMap<String, Arc<UserLocks>>>,
    changes: Changes,
}

/// The change channel and each changed workspace's [`ChangeCount`], kept together so every
/// message carries its workspace's count in the order it was sent.
#[derive(Clone)]
struct Changes {
    sender: tokio::sync::broadcast::Sender<WorkspaceChange>,
    counts: Arc<Mutex<HashMap<PathBuf, ChangeCount>>>,
}

/// How many changes one workspace has had (since the process started), and how many of them
/// changed its listing: what a listener that fell behind compares to learn whether its own
/// workspace changed meanwhile ([`Workspaces::change_count`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChangeCount {
    /// Every change.
    pub changed: u64,
    /// The changes that moved the listing.
    pub listed: u64,
}

/// How many changes a slow listener may fall behind before it is told it lagged
/// ([`Workspaces::subscribe_changes`]).
const CHANGES_BUFFER: usize = 256;

/// A file of one workspace changed through this process's workspace operations (a write, a
/// copy, a rename or a removal; not a command run's own writes in the sandbox), for MCP
/// resource subscriptions (`notifications/resources/updated`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceChange {
    /// The changed workspace's folder on the host ([`Workspace::root_path`]): a listener
    /// compares it with its own caller's workspace, so it never learns of another's files.
    pub root: PathBuf,
    /// The path changed, relative to the workspace root.
    pub path: String,
    /// Whether the workspace's listing changed too (a file created, moved or removed).
    pub listed: bool,
    /// The workspace's count with this change.
    pub count: ChangeCount,
}

/// What one user's workspaces share between calls: the lock every change holds, and the bytes
/// the sandbox runs in flight have reserved of the quota ([`Workspace::reserve_run`]).
#[derive(Debug, Default)]
pub(crate) struct UserLocks {
    changes: Mutex<()>,
    run_reserved: Mutex<u64>,
}

impl std::fmt::Debug for Workspaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspaces")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Workspaces {
    /// Creates the root folder (mode 0700) if missing and opens it. Fails when it cannot.
    /// The root is made absolute, so an absolute path naming a workspace can be recognised.
    pub fn open(mut config: WorkspaceSettings) -> Result<Workspaces, WorkspaceError> {
        let shown = config.root.display().to_string();
        let io = |source| WorkspaceError::Io {
            op: "open the workspace root",
            path: shown.clone(),
            source,
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&config.root)
            .map_err(io)?;
        config.root = std::fs::canonicalize(&config.root).map_err(io)?;
        let root = rustix::fs::open(
            &config.root,
            rustix::fs::OFlags::RDONLY
                | rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .map_err(|e| io(e.into()))?;
        Ok(Workspaces {
            deny: Arc::new(DenyList::new(&config.denied_prefixes)),
            config: Arc::new(config),
            root,
            locks: Mutex::new(HashMap::new()),
            changes: Changes {
                sender: tokio::sync::broadcast::channel(CHANGES_BUFFER).0,
                counts: Arc::default(),
            },
        })
    }

    /// Every later change of any workspace's files made through the workspace operations
    /// ([`WorkspaceChange`]); a listener that falls behind gets `Lagged` and learns from
    /// [`Workspaces::change_count`] whether its own workspace changed meanwhile.
    #[must_use]
    pub fn subscribe_changes(&self) -> tokio::sync::broadcast::Receiver<WorkspaceChange> {
        self.changes.sender.subscribe()
    }

    /// The count of changes of the workspace whose folder is `root`
    /// ([`Workspace::root_path`]) so far.
    #[must_use]
    pub fn change_count(&self, root: &Path) -> ChangeCount {
        self.changes
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(root)
            .copied()
            .unwrap_or_default()
    }

    #[must_use]
    pub fn config(&self) -> &WorkspaceSettings {
        &self.config
    }

    /// The workspace of the call's user (and agent, with `per_agent`), created if missing.
    pub fn for_call(&self, ctx: &ToolContext) -> Result<Workspace, WorkspaceError> {
        let agent = ctx.agent_id.as_deref().filter(|_| self.config.per_agent);
        self.for_owner(&ctx.user_id, agent)
    }

    /// The workspace of `user` (or of that user's `agent`), created if missing.
    pub fn for_owner(&self, user: &str, agent: Option<&str>) -> Result<Workspace, WorkspaceError> {
        match agent {
            Some(agent) => self.open_below(user, &[AGENTS, &ids::folder_name(agent)], true),
            None => self.open_below(user, &[USER_WORKSPACE], true),
        }
    }

    /// The folder of `user`'s sandbox session `id` (`<user>/sessions/<id>`), created if
    /// missing: a workspace of its own, counted in the user's quota.
    pub fn for_session(&self, user: &str, id: &str) -> Result<Workspace, WorkspaceError> {
        self.open_below(user, &[SESSIONS, &ids::folder_name(id)], true)
    }

    /// Removes `user`'s sandbox session folder `id` and everything in it (never following a
    /// link out). Removing one that is gone is not an error.
    pub fn remove_session(&self, user: &str, id: &str) -> Result<(), WorkspaceError> {
        let sessions = self.open_below(user, &[SESSIONS], false)?;
        let path = sessions.path(&ids::folder_name(id))?;
        match sessions.remove(&path, true) {
            Ok(_) | Err(WorkspaceError::NotFound { .. }) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes every user's sandbox session folders: at start, when no session can be live
    /// (sessions live in one process), so a crash or a kill never leaves a session's files
    /// behind. How many were removed; a folder that cannot be removed is logged and left.
    pub fn remove_all_sessions(&self) -> usize {
        let Ok(users) = std::fs::read_dir(&self.config.root) else {
            return 0;
        };
        let mut removed = 0;
        for user in users.flatten() {
            let Some(user_folder) = user.file_name().to_str().map(str::to_owned) else {
                continue;
            };
            let listed = std::fs::read_dir(user.path().join(SESSIONS));
            let Ok(leftovers) = listed else { continue };
            let Ok(sessions) = self.open_in(user_folder, &[SESSIONS], false) else {
                continue;
            };
            for leftover in leftovers.flatten() {
                let name = leftover.file_name().to_string_lossy().into_owned();
                let outcome = sessions
                    .path(&name)
                    .and_then(|path| sessions.remove(&path, true));
                match outcome {
                    Ok(_) => removed += 1,
                    Err(e) => tracing::warn!(
                        session = %name,
                        error = %e,
                        "a sandbox session folder left by an earlier run could not be removed"
                    ),
                }
            }
        }
        removed
    }

    /// Opens (creating if missing) the folder `tail` below `user`'s folder; `give` hands it to
    /// the configured owner (a workspace, not a folder holding workspaces).
    fn open_below(
        &self,
        user: &str,
        tail: &[&str],
        give: bool,
    ) -> Result<Workspace, WorkspaceError> {
        self.open_in(ids::folder_name(user), tail, give)
    }

    /// [`Self::open_below`] for the user whose folder is named `user_name`.
    fn open_in(
        &self,
        user_name: String,
        tail: &[&str],
        give: bool,
    ) -> Result<Workspace, WorkspaceError> {
        let mut rel = vec![user_name.clone()];
        rel.extend(tail.iter().map(|name| (*name).to_owned()));
        let user_dir = ensure_dir(&self.root, std::slice::from_ref(&user_name))?;
        let lock: Arc<UserLocks> = self
            .locks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(user_name)
            .or_default()
            .clone();
        let dir = match beneath::open_dir(&self.root, rel.join("/").as_str()) {
            Ok(dir) => dir,
            Err(_) => {
                // A new workspace (an agent id can be the caller's choice): its folders count
                // against the user's entries like any other.
                let _guard = lock.changes.lock().unwrap_or_else(PoisonError::into_inner);
                quota::check(&user_dir, &self.config, 0, 2)?;
                ensure_dir(&self.root, &rel)?
            }
        };
        if let (Some(owner), true) = (self.config.owner, give) {
            beneath::give_to(&dir, owner).map_err(|e| {
                WorkspaceError::from_errno(
                    "give the workspace to the sandbox user",
                    "your workspace",
                    e,
                )
            })?;
        }
        let root_path = rel.iter().fold(self.config.root.clone(), |p, n| p.join(n));
        Ok(Workspace {
            dir,
            user_dir,
            root_path,
            config: self.config.clone(),
            deny: self.deny.clone(),
            lock,
            changes: self.changes.clone(),
        })
    }
}

/// Opens `names` below `root`, creating each missing folder (mode 0700) on the way.
fn ensure_dir(root: &OwnedFd, names: &[String]) -> Result<OwnedFd, WorkspaceError> {
    let fail = |e| WorkspaceError::from_errno("open the workspace", "your workspace", e);
    let mut dir = beneath::open_dir(root, ".").map_err(fail)?;
    for name in names {
        match rustix::fs::mkdirat(&dir, name.as_str(), rustix::fs::Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
            Err(e) => return Err(fail(e)),
        }
        dir = beneath::open_dir(&dir, name).map_err(fail)?;
    }
    Ok(dir)
}

/// One caller's workspace: a handle on its folder and what bounds it. Every operation
/// ([`ops`], [`walk`]) resolves paths below the handle, never by host path.
pub struct Workspace {
    dir: OwnedFd,
    user_dir: OwnedFd,
    root_path: PathBuf,
    config: Arc<WorkspaceSettings>,
    deny: Arc<DenyList>,
    lock: Arc<UserLocks>,
    changes: Changes,
}

impl std::fmt::Debug for Workspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workspace")
            .field("root_path", &self.root_path)
            .finish_non_exhaustive()
    }
}

impl Workspace {
    /// The workspace's folder on the host: for mounting it into a sandbox. Never resolve a
    /// caller's path against it; use [`Workspace::path`] and the operations.
    #[must_use]
    pub fn root_path(&self) -> &Path {
        &self.root_path
    }

    /// The deny-listed paths of this workspace, for a sandbox that mounts its folder to cover.
    #[must_use]
    pub fn denied_paths(&self) -> Vec<String> {
        self.deny.paths()
    }

    #[must_use]
    pub fn limits(&self) -> &FileLimits {
        &self.config.limits
    }

    #[must_use]
    pub fn config(&self) -> &WorkspaceSettings {
        &self.config
    }

    /// Checks the caller's `raw` path: the lexical rules of [`WsPath::parse`], then the
    /// deny-list (and the names of writes in progress, which are reserved too).
    pub fn path(&self, raw: &str) -> Result<WsPath, WorkspaceError> {
        let path = WsPath::parse(raw, &self.root_path, &self.config.limits)?;
        let in_progress = path
            .names()
            .iter()
            .any(|n| n.starts_with(beneath::TEMP_PREFIX));
        if in_progress || self.deny.denies(&path) {
            return Err(WorkspaceError::Denied {
                path: error::shown(raw),
            });
        }
        Ok(path)
    }

    /// Tells the listeners of [`Workspaces::subscribe_changes`] that `path` changed (nobody
    /// listening is not an error).
    pub(crate) fn changed(&self, path: &WsPath, listed: bool) {
        if self.changes.sender.receiver_count() == 0 {
            return;
        }
        let mut counts = self
            .changes
            .counts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(self.root_path.clone()).or_default();
        count.changed += 1;
        count.listed += u64::from(listed);
        let count = *count;
        // Sent under the lock, so the counts arrive in the order they were made.
        let _ = self.changes.sender.send(WorkspaceChange {
            root: self.root_path.clone(),
            path: path.to_string(),
            listed,
            count,
        });
    }

    /// Whether listings must leave `path` out (denied, or a write in progress).
    #[must_use]
    pub fn hidden(&self, path: &WsPath) -> bool {
        self.deny.denies(path)
            || path
                .file_name()
                .is_some_and(|n| n.starts_with(beneath::TEMP_PREFIX))
    }
}
