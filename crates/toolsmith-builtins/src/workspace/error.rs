//! [`WorkspaceError`]: every way a workspace operation fails, each message naming the fix (a
//! language model reads them), and the [`ErrorKind`] a tool result carries for it.

use toolsmith_core::ErrorKind;

/// A refused or failed workspace operation. Paths in messages are workspace-relative, as the
/// caller wrote them; no host path ever appears.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error(
        "the server is in read-only mode (--read-only): workspace files can be read, listed and searched, but not changed, and no code runs in a workspace; nothing was changed"
    )]
    ReadOnly,
    #[error(
        "the file tools are not configured on this server: the operator sets the workspace directory (the `workspace_dir` setting, by default `<data_dir>/workspaces`)"
    )]
    NotConfigured,
    #[error("invalid path '{path}': {reason}")]
    InvalidPath { path: String, reason: String },
    #[error("'{path}' is reserved and cannot be used by the file tools; choose another path")]
    Denied { path: String },
    #[error("'{path}' does not exist in your workspace; list_directory shows what is there")]
    NotFound { path: String },
    #[error("'{path}' already exists; {hint}")]
    AlreadyExists { path: String, hint: &'static str },
    #[error(
        "'{path}' is or goes through a symbolic link; the file tools never follow links, so name the file or folder itself"
    )]
    Symlink { path: String },
    #[error(
        "'{path}' is a {kind}, not a regular file; the file tools read and write regular files only"
    )]
    NotRegular { path: String, kind: &'static str },
    #[error("'{path}' is a folder; {hint}")]
    IsADirectory { path: String, hint: &'static str },
    #[error("'{path}' is not a folder (a part of it is a file); check the path with file_info")]
    NotADirectory { path: String },
    #[error(
        "'{path}' has {links} hard links, so its content may belong to a file outside your workspace; the file tools refuse to read it (write a new file instead)"
    )]
    HardLinked { path: String, links: u64 },
    #[error(
        "the folder '{path}' is not empty; pass recursive: true to delete it with everything in it"
    )]
    NotEmpty { path: String },
    #[error(
        "workspace quota exceeded: your workspace uses {used} of {limit} bytes and this needs {needed} more; delete files you no longer need (delete_file) and try again"
    )]
    QuotaExceeded { used: u64, limit: u64, needed: u64 },
    #[error(
        "your workspace holds {count} files and folders, the most it may hold is {limit}; delete some (delete_file) and try again"
    )]
    TooManyEntries { count: u64, limit: u64 },
    #[error("'{path}' is {size} bytes, more than {limit} bytes; {hint}")]
    TooLarge {
        path: String,
        size: u64,
        limit: u64,
        hint: &'static str,
    },
    #[error("cannot {op} '{path}': {source}")]
    Io {
        op: &'static str,
        path: String,
        source: std::io::Error,
    },
}

impl WorkspaceError {
    /// The result's error kind: the caller's path or request was wrong (`invalid_arguments`),
    /// or the workspace's state or limits refused it (`execution_error`).
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        match self {
            WorkspaceError::InvalidPath { .. } | WorkspaceError::Denied { .. } => {
                ErrorKind::InvalidArguments
            }
            _ => ErrorKind::ExecutionError,
        }
    }

    /// A [`WorkspaceError::TooLarge`] with `hint` as its fix (other errors unchanged): for an
    /// operation whose fix differs from reading by line range.
    #[must_use]
    pub fn with_hint(self, hint: &'static str) -> Self {
        match self {
            WorkspaceError::TooLarge {
                path, size, limit, ..
            } => WorkspaceError::TooLarge {
                path,
                size,
                limit,
                hint,
            },
            other => other,
        }
    }

    pub(crate) fn invalid(path: &str, reason: impl Into<String>) -> Self {
        WorkspaceError::InvalidPath {
            path: shown(path),
            reason: reason.into(),
        }
    }

    /// Maps an error of a system call on `path` to the error a caller can act on.
    pub(crate) fn from_errno(op: &'static str, path: &str, errno: rustix::io::Errno) -> Self {
        use rustix::io::Errno;
        let path = shown(path);
        match errno {
            Errno::NOENT => WorkspaceError::NotFound { path },
            // RESOLVE_NO_SYMLINKS and O_NOFOLLOW answer ELOOP for any link on the way.
            Errno::LOOP => WorkspaceError::Symlink { path },
            // RESOLVE_BENEATH / RESOLVE_NO_XDEV: the path would have left the workspace.
            Errno::XDEV => WorkspaceError::InvalidPath {
                path,
                reason: "it leads outside your workspace; use a path inside it".into(),
            },
            Errno::NOTDIR => WorkspaceError::NotADirectory { path },
            Errno::EXIST => WorkspaceError::AlreadyExists {
                path,
                hint: "choose another name, or pass overwrite: true where the tool offers it",
            },
            Errno::ISDIR => WorkspaceError::IsADirectory {
                path,
                hint: "name a file inside it",
            },
            Errno::NOTEMPTY => WorkspaceError::NotEmpty { path },
            Errno::NAMETOOLONG => WorkspaceError::InvalidPath {
                path,
                reason: "a name in it is too long; use shorter names".into(),
            },
            other => WorkspaceError::Io {
                op,
                path,
                source: std::io::Error::from(other),
            },
        }
    }
}

/// A path as it appears in a message: at most 200 characters, control characters escaped,
/// so a hostile path cannot flood or forge the reply.
pub(crate) fn shown(path: &str) -> String {
    let mut out: String = path
        .chars()
        .take(200)
        .flat_map(char::escape_debug)
        .collect();
    if path.chars().nth(200).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use rustix::io::Errno;

    use super::*;

    #[test]
    fn system_errors_become_errors_with_the_fix() {
        let msg = |e| WorkspaceError::from_errno("read", "a/b", e).to_string();
        assert!(msg(Errno::NOENT).contains("list_directory"));
        assert!(msg(Errno::LOOP).contains("never follow links"));
        assert!(msg(Errno::XDEV).contains("outside your workspace"));
        assert!(msg(Errno::NOTEMPTY).contains("recursive: true"));
        assert!(msg(Errno::ACCESS).starts_with("cannot read 'a/b'"));
        assert_eq!(
            WorkspaceError::invalid("..", "no").kind(),
            ErrorKind::InvalidArguments
        );
        assert_eq!(
            WorkspaceError::NotConfigured.kind(),
            ErrorKind::ExecutionError
        );
    }

    #[test]
    fn shown_paths_are_bounded_and_escaped() {
        assert_eq!(shown("a\nb"), "a\\nb");
        let long = shown(&"x".repeat(500));
        assert_eq!(long.chars().count(), 201);
    }
}
