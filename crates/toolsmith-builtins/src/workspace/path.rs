//! [`WsPath`]: a path the caller wrote, checked and normalised without touching the disk.
//!
//! Rules: relative to the workspace root (an absolute path is accepted only when it names the
//! workspace's own directory or something under it); no `..` anywhere (even one that would stay
//! inside: a path means what it says); `.` and empty components are dropped; no NUL or other
//! control character; bounded length, name length and depth. What the kernel resolves later
//! ([`super::beneath`]) is exactly these components, with no symlink followed.

use std::path::Path;

use super::error::WorkspaceError;
use super::settings::FileLimits;

/// A checked workspace-relative path: zero or more plain names. The empty path is the root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WsPath {
    names: Vec<String>,
}

impl WsPath {
    /// The workspace root.
    #[must_use]
    pub fn root() -> Self {
        WsPath { names: Vec::new() }
    }

    /// Checks `raw` (as the caller wrote it) against the rules above. `root_path` is the host
    /// path of the workspace, the one absolute prefix accepted.
    pub fn parse(raw: &str, root_path: &Path, limits: &FileLimits) -> Result<Self, WorkspaceError> {
        if raw.len() > limits.max_path_bytes {
            return Err(WorkspaceError::invalid(
                raw,
                format!(
                    "it is {} bytes long, the limit is {}; use a shorter path",
                    raw.len(),
                    limits.max_path_bytes
                ),
            ));
        }
        if raw.contains('\0') {
            return Err(WorkspaceError::invalid(
                raw,
                "it contains a NUL character; remove it",
            ));
        }
        if raw.chars().any(char::is_control) {
            return Err(WorkspaceError::invalid(
                raw,
                "it contains a control character (such as a newline or tab); remove it",
            ));
        }
        let relative = if raw.starts_with('/') {
            strip_root(raw, root_path).ok_or_else(|| {
                WorkspaceError::invalid(
                    raw,
                    "absolute paths outside your workspace are refused; use a path relative to the workspace root, such as 'notes/todo.md' ('.' is the root)",
                )
            })?
        } else {
            raw
        };
        let mut names = Vec::new();
        for name in relative.split('/') {
            match name {
                "" | "." => {}
                ".." => {
                    return Err(WorkspaceError::invalid(
                        raw,
                        "'..' is not allowed in workspace paths; name the file from the workspace root instead",
                    ));
                }
                name if name.len() > limits.max_name_bytes => {
                    return Err(WorkspaceError::invalid(
                        raw,
                        format!(
                            "a name in it is {} bytes long, the limit is {}; use shorter names",
                            name.len(),
                            limits.max_name_bytes
                        ),
                    ));
                }
                name => names.push(name.to_owned()),
            }
        }
        if names.len() > limits.max_depth {
            return Err(WorkspaceError::invalid(
                raw,
                format!(
                    "it is {} levels deep, the limit is {}; use a flatter layout",
                    names.len(),
                    limits.max_depth
                ),
            ));
        }
        Ok(WsPath { names })
    }

    #[must_use]
    pub fn is_root(&self) -> bool {
        self.names.is_empty()
    }

    /// The names from the root down.
    #[must_use]
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The last name; `None` for the root.
    #[must_use]
    pub fn file_name(&self) -> Option<&str> {
        self.names.last().map(String::as_str)
    }

    /// The folder holding this path; `None` for the root.
    #[must_use]
    pub fn parent(&self) -> Option<WsPath> {
        let (_, parent) = self.names.split_last()?;
        Some(WsPath {
            names: parent.to_vec(),
        })
    }

    /// This path with `name` appended (`name` must be one plain name, as directory entries are).
    #[must_use]
    pub fn join(&self, name: &str) -> WsPath {
        let mut names = self.names.clone();
        names.push(name.to_owned());
        WsPath { names }
    }

    /// Whether `self` is `other` or lies under it.
    #[must_use]
    pub fn starts_with(&self, other: &WsPath) -> bool {
        self.names.starts_with(&other.names)
    }

    /// The path as the kernel resolves it below the workspace's handle (`.` for the root).
    #[must_use]
    pub fn as_relative(&self) -> String {
        if self.names.is_empty() {
            ".".to_owned()
        } else {
            self.names.join("/")
        }
    }
}

impl std::fmt::Display for WsPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.as_relative())
    }
}

/// `raw` without the workspace's own absolute path, when it starts with it as whole components.
fn strip_root<'a>(raw: &'a str, root_path: &Path) -> Option<&'a str> {
    let root = root_path.to_str()?.trim_end_matches('/');
    if root.is_empty() {
        return None;
    }
    let rest = raw.strip_prefix(root)?;
    (rest.is_empty() || rest.starts_with('/')).then_some(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> Result<WsPath, WorkspaceError> {
        WsPath::parse(
            raw,
            Path::new("/data/ws/alice/workspace"),
            &FileLimits::default(),
        )
    }

    #[test]
    fn plain_paths_normalise_dots_and_slashes() {
        assert_eq!(parse("a/b.txt").unwrap().as_relative(), "a/b.txt");
        assert_eq!(parse("./a//b/./c/").unwrap().as_relative(), "a/b/c");
        assert!(parse(".").unwrap().is_root());
        assert!(parse("").unwrap().is_root());
        assert_eq!(
            parse("/data/ws/alice/workspace/x").unwrap().as_relative(),
            "x"
        );
        assert!(parse("/data/ws/alice/workspace").unwrap().is_root());
        // Encoded or look-alike dots are names like any other, resolved inside the workspace.
        assert_eq!(parse("%2e%2e/x").unwrap().names(), ["%2e%2e", "x"]);
        assert_eq!(parse("..\\x").unwrap().names(), ["..\\x"]);
    }

    #[test]
    fn escapes_and_hostile_forms_are_refused_with_the_fix() {
        for raw in [
            "..",
            "../x",
            "a/../b",
            "a/..",
            "/etc/passwd",
            "/",
            "/data/ws/alice/workspace2/x",
            "/data/ws/alice/workspace/../bob",
            "a\0b",
            "a\nb",
        ] {
            let err = parse(raw).unwrap_err().to_string();
            assert!(err.starts_with("invalid path"), "{raw}: {err}");
        }
        assert!(
            parse(&"a/".repeat(600))
                .unwrap_err()
                .to_string()
                .contains("shorter path")
        );
        assert!(
            parse(&"n".repeat(256))
                .unwrap_err()
                .to_string()
                .contains("shorter names")
        );
        assert!(
            parse(&"a/".repeat(33))
                .unwrap_err()
                .to_string()
                .contains("flatter")
        );
        assert!(
            parse("../x")
                .unwrap_err()
                .to_string()
                .contains("from the workspace root")
        );
    }

    #[test]
    fn parents_and_prefixes() {
        let p = parse("a/b/c").unwrap();
        assert_eq!(p.parent().unwrap().as_relative(), "a/b");
        assert_eq!(p.file_name(), Some("c"));
        assert!(p.starts_with(&parse("a").unwrap()));
        assert!(!p.starts_with(&parse("a/bb").unwrap()));
        assert!(WsPath::root().parent().is_none());
    }
}
