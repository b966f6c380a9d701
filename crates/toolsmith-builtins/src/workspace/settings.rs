//! [`WorkspaceSettings`]: where the workspaces live and every limit the file tools enforce.

use std::path::PathBuf;

/// The default quota of one user's workspaces, in bytes (100 MiB).
pub const DEFAULT_QUOTA_BYTES: u64 = 100 * 1024 * 1024;
/// The default cap on files and folders in one user's workspaces.
pub const DEFAULT_MAX_ENTRIES: u64 = 20_000;
/// The prefix denied by default: where Toolsmith may keep its own state in a workspace.
pub const DEFAULT_DENIED_PREFIX: &str = ".toolsmith";

/// Where the workspaces live and what bounds them. One user's workspaces (their own and, with
/// `per_agent`, each agent's) share one quota.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceSettings {
    /// The directory holding every user's workspaces (`<data_dir>/workspaces` by default).
    pub root: PathBuf,
    /// Bytes of regular files one user's workspaces may hold.
    pub quota_bytes: u64,
    /// Files and folders one user's workspaces may hold.
    pub max_entries: u64,
    /// Give each agent of a user a workspace of its own (calls without an agent use the user's).
    pub per_agent: bool,
    /// Workspace-relative path prefixes (whole components: `.toolsmith` denies `.toolsmith/x`,
    /// not `.toolsmithy`) the file tools refuse and leave out of listings, searches and globs.
    pub denied_prefixes: Vec<String>,
    pub limits: FileLimits,
    /// Who owns each workspace folder and everything the server creates in it, as (uid, gid);
    /// `None` leaves them the server's. The service sets it to the command sandbox's user when
    /// it runs as root (`CommandSandbox::workspace_owner`: `nobody`), so code run in the
    /// sandbox can change the files the file tools wrote. The folders above a workspace (the
    /// root, a user's folder, `agents`) stay the server's, mode 0700.
    pub owner: Option<(u32, u32)>,
    /// The server is in read-only mode (`--read-only`): files can be read, listed and searched,
    /// but nothing in a workspace changes — the file tools' writes, and every tool that mounts
    /// a workspace read-write (the code tools, sandbox sessions, git), answer
    /// [`WorkspaceError::ReadOnly`](super::WorkspaceError::ReadOnly).
    pub read_only: bool,
}

impl WorkspaceSettings {
    /// The defaults, with the workspaces under `root`.
    #[must_use]
    pub fn new(root: impl Into<PathBuf>) -> Self {
        WorkspaceSettings {
            root: root.into(),
            quota_bytes: DEFAULT_QUOTA_BYTES,
            max_entries: DEFAULT_MAX_ENTRIES,
            per_agent: false,
            denied_prefixes: vec![DEFAULT_DENIED_PREFIX.to_owned()],
            limits: FileLimits::default(),
            owner: None,
            read_only: false,
        }
    }
}

/// The per-call limits of the file tools. Each is a ceiling an argument cannot raise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimits {
    /// Longest workspace path, in bytes.
    pub max_path_bytes: usize,
    /// Longest name of one file or folder, in bytes (Linux's `NAME_MAX`).
    pub max_name_bytes: usize,
    /// Most components in a path, and deepest a listing, search or glob descends.
    pub max_depth: usize,
    /// Most bytes `read_file` returns at once; larger files are read by line ranges. Half the
    /// pipeline's 1 MB output cap, so the content fits once escaped or base64-encoded.
    pub max_read_bytes: u64,
    /// Largest file a write, edit or copy may produce.
    pub max_write_bytes: u64,
    /// Most entries one listing or glob returns.
    pub max_list_entries: usize,
    /// Most matches one search returns (the spec's `search_files.maxResults` ceiling).
    pub max_search_results: usize,
    /// Most files and folders one listing, search or glob visits before it stops.
    pub max_walk_entries: usize,
    /// Most bytes one search reads across all files.
    pub max_search_bytes: u64,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_path_bytes: 1024,
            max_name_bytes: 255,
            max_depth: 32,
            max_read_bytes: 512 * 1024,
            max_write_bytes: 10 * 1024 * 1024,
            max_list_entries: 1000,
            max_search_results: 100,
            max_walk_entries: 20_000,
            max_search_bytes: 64 * 1024 * 1024,
        }
    }
}
