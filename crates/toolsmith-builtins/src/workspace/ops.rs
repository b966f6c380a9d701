//! The operations of one [`Workspace`]: open and read files, write (a new file renamed into
//! place), status, folders, removal, copy and rename.
//!
//! Hard links: a regular file with more than one link may share its content with a file
//! outside the workspace (a link made by code that could see both), so nothing is ever *read*
//! through it ([`WorkspaceError::HardLinked`]); reading is the only way its content could leak.
//! Writes never write into an existing file: they fill a new file and rename it over the old
//! name, which replaces that name's link and leaves any other link's content unchanged. So no
//! operation reads or changes a file outside the workspace, whatever links point there.

use std::fs::File;
use std::io::{Read, Write};

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::Stat;
use rustix::io::Errno;
use serde::Serialize;

use super::beneath::{self, EntryKind};
use super::error::WorkspaceError;
use super::path::WsPath;
use super::{Workspace, error::shown};

/// What a file or folder is, as the tools report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub kind: EntryKind,
    /// Bytes (of a folder: what the file system reports for the folder itself).
    pub size: u64,
    /// Last change of the content, RFC 3339 in UTC.
    pub modified: Option<String>,
    pub accessed: Option<String>,
    /// Unix permission bits in octal, such as `0644`.
    pub permissions: String,
    /// Hard links to it.
    pub links: u64,
}

impl Metadata {
    #[must_use]
    // The field types of `stat` differ between architectures; the casts are for the others.
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    pub fn from_stat(stat: &Stat) -> Self {
        let time = |secs: i64, nanos: u64| {
            chrono::DateTime::from_timestamp(secs, u32::try_from(nanos).unwrap_or(0))
                .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        };
        Metadata {
            kind: EntryKind::of(stat),
            size: u64::try_from(stat.st_size).unwrap_or(0),
            modified: time(stat.st_mtime as i64, stat.st_mtime_nsec as u64),
            accessed: time(stat.st_atime as i64, stat.st_atime_nsec as u64),
            permissions: format!("{:04o}", stat.st_mode & 0o7777),
            links: u64::from(stat.st_nlink),
        }
    }
}

/// How [`Workspace::write`] treats what is already there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Replace an existing file (otherwise an existing file is an error).
    pub overwrite: bool,
    /// Create missing parent folders (otherwise a missing parent is an error).
    pub create_parents: bool,
}

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteOutcome {
    pub bytes: u64,
    /// No file of that name existed before.
    pub created: bool,
}

/// What a removal removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoveOutcome {
    pub files: u64,
    pub folders: u64,
}

impl Workspace {
    /// Opens the folder `path` below the workspace handle.
    pub(crate) fn open_folder(&self, path: &WsPath) -> Result<OwnedFd, WorkspaceError> {
        beneath::open_dir(&self.dir, &path.as_relative())
            .map_err(|e| WorkspaceError::from_errno("open the folder", &path.to_string(), e))
    }

    /// The parent folder of `path` and its last name; the root has neither.
    fn parent_of<'p>(
        &self,
        path: &'p WsPath,
        what: &str,
    ) -> Result<(OwnedFd, &'p str), WorkspaceError> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(WorkspaceError::invalid(
                ".",
                format!("the workspace root itself cannot be {what}; name something inside it"),
            ));
        };
        Ok((self.open_folder(&parent)?, name))
    }

    /// Opens the regular file `path` for reading: refuses folders, links, devices, FIFOs,
    /// sockets and hard-linked files (module docs).
    pub fn open_file(&self, path: &WsPath) -> Result<(File, Metadata), WorkspaceError> {
        let shown_path = path.to_string();
        if path.is_root() {
            return Err(WorkspaceError::IsADirectory {
                path: shown_path,
                hint: "list it with list_directory",
            });
        }
        let (file, stat) = beneath::open_for_read(&self.dir, &path.as_relative())
            .map_err(|e| WorkspaceError::from_errno("open", &shown_path, e))?;
        let meta = Metadata::from_stat(&stat);
        match meta.kind {
            EntryKind::File if meta.links > 1 => Err(WorkspaceError::HardLinked {
                path: shown_path,
                links: meta.links,
            }),
            EntryKind::File => Ok((file, meta)),
            EntryKind::Directory => Err(WorkspaceError::IsADirectory {
                path: shown_path,
                hint: "list it with list_directory",
            }),
            other => Err(WorkspaceError::NotRegular {
                path: shown_path,
                kind: other.describe(),
            }),
        }
    }

    /// The whole content of the regular file `path`, refused when larger than `max_bytes`.
    pub fn read(&self, path: &WsPath, max_bytes: u64) -> Result<Vec<u8>, WorkspaceError> {
        let (file, meta) = self.open_file(path)?;
        let too_large = |size| WorkspaceError::TooLarge {
            path: path.to_string(),
            size,
            limit: max_bytes,
            hint: "read a part of it (read_file with startLine and endLine)",
        };
        if meta.size > max_bytes {
            return Err(too_large(meta.size));
        }
        let mut bytes = Vec::new();
        // One byte more than allowed: a file that grew since its status was taken is caught.
        file.take(max_bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| WorkspaceError::Io {
                op: "read",
                path: path.to_string(),
                source,
            })?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// The status of `path` itself (a symlink is reported as one, never followed).
    pub fn stat(&self, path: &WsPath) -> Result<Metadata, WorkspaceError> {
        let shown_path = path.to_string();
        let stat = match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => beneath::stat_entry(self.open_folder(&parent)?, name),
            _ => rustix::fs::fstat(&self.dir),
        }
        .map_err(|e| WorkspaceError::from_errno("read the status of", &shown_path, e))?;
        Ok(Metadata::from_stat(&stat))
    }

    /// Refuses every change while the server is in read-only mode
    /// ([`WorkspaceSettings::read_only`](super::WorkspaceSettings::read_only)); every write of
    /// this module, and every tool that mounts the workspace read-write, asks it first.
    pub fn check_writable(&self) -> Result<(), WorkspaceError> {
        if self.config().read_only {
            return Err(WorkspaceError::ReadOnly);
        }
        Ok(())
    }

    /// Writes `bytes` as the file `path`: into a new file in the same folder, then renamed
    /// over the name, so a reader sees the old or the new content and never a mix, and no
    /// existing file's content is ever written into. Counted against the quota first.
    pub fn write(
        &self,
        path: &WsPath,
        bytes: &[u8],
        options: WriteOptions,
    ) -> Result<WriteOutcome, WorkspaceError> {
        self.check_writable()?;
        let shown_path = path.to_string();
        let len = bytes.len() as u64;
        if len > self.limits().max_write_bytes {
            return Err(WorkspaceError::TooLarge {
                path: shown_path,
                size: len,
                limit: self.limits().max_write_bytes,
                hint: "write less at once",
            });
        }
        if path.is_root() {
            return Err(WorkspaceError::invalid(
                ".",
                "the workspace root is a folder; name a file inside it",
            ));
        }
        let _guard = self.lock_changes();
        let (parent, missing) = self.parent_for_create(path, options.create_parents)?;
        let name = path.file_name().unwrap_or_default();
        let old = match &parent {
            Some(dir) => self.existing_file(dir, name, &shown_path, options.overwrite)?,
            None => None,
        };
        let entries = missing + u64::from(old.is_none());
        self.check_quota(len.saturating_sub(old.unwrap_or(0)), entries)?;
        let parent = match parent {
            Some(dir) => dir,
            None => self.make_parents(path)?,
        };
        let (mut file, temp) = beneath::create_temp(&parent, self.config.owner)
            .map_err(|e| WorkspaceError::from_errno("write", &shown_path, e))?;
        let written = file
            .write_all(bytes)
            .map_err(|source| WorkspaceError::Io {
                op: "write",
                path: shown_path.clone(),
                source,
            })
            .and_then(|()| {
                beneath::rename(&parent, &temp, &parent, name, options.overwrite)
                    .map_err(|e| WorkspaceError::from_errno("write", &shown_path, e))
            });
        if let Err(e) = written {
            let _ = beneath::remove_entry(&parent, &temp, false);
            return Err(e);
        }
        self.changed(path, old.is_none());
        Ok(WriteOutcome {
            bytes: len,
            created: old.is_none(),
        })
    }

    /// The size of the regular file `name` of `dir` when it exists and may be replaced;
    /// `None` when there is none. Anything else there is an error.
    fn existing_file(
        &self,
        dir: &OwnedFd,
        name: &str,
        shown_path: &str,
        overwrite: bool,
    ) -> Result<Option<u64>, WorkspaceError> {
        let stat = match beneath::stat_entry(dir, name) {
            Ok(stat) => stat,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(WorkspaceError::from_errno("write", shown_path, e)),
        };
        let meta = Metadata::from_stat(&stat);
        match meta.kind {
            EntryKind::File if overwrite => Ok(Some(meta.size)),
            EntryKind::File => Err(WorkspaceError::AlreadyExists {
                path: shown(shown_path),
                hint: "pass overwrite: true to replace it, or choose another name",
            }),
            EntryKind::Directory => Err(WorkspaceError::IsADirectory {
                path: shown(shown_path),
                hint: "choose a file name",
            }),
            EntryKind::Symlink => Err(WorkspaceError::Symlink {
                path: shown(shown_path),
            }),
            other => Err(WorkspaceError::NotRegular {
                path: shown(shown_path),
                kind: other.describe(),
            }),
        }
    }

    /// The parent folder of `path` if it exists (`None` and the number of folders to create
    /// when some are missing and `create` allows it).
    fn parent_for_create(
        &self,
        path: &WsPath,
        create: bool,
    ) -> Result<(Option<OwnedFd>, u64), WorkspaceError> {
        let parent = path.parent().unwrap_or_else(WsPath::root);
        match self.open_folder(&parent) {
            Ok(dir) => Ok((Some(dir), 0)),
            Err(WorkspaceError::NotFound { .. }) if create => {
                // Count the missing folders from the deepest one that exists.
                let names = parent.names();
                let mut existing = 0;
                let mut dir = self.open_folder(&WsPath::root())?;
                for name in names {
                    match beneath::open_dir(&dir, name) {
                        Ok(next) => {
                            dir = next;
                            existing += 1;
                        }
                        Err(Errno::NOENT) => break,
                        Err(e) => {
                            return Err(WorkspaceError::from_errno(
                                "create the folders of",
                                &path.to_string(),
                                e,
                            ));
                        }
                    }
                }
                Ok((None, (names.len() - existing) as u64))
            }
            Err(WorkspaceError::NotFound { .. }) => Err(WorkspaceError::NotFound {
                path: parent.to_string(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Creates every missing folder above `path` and opens its parent.
    fn make_parents(&self, path: &WsPath) -> Result<OwnedFd, WorkspaceError> {
        let mut dir = self.open_folder(&WsPath::root())?;
        let parent = path.parent().unwrap_or_else(WsPath::root);
        for name in parent.names() {
            match beneath::make_dir(&dir, name, self.config.owner) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => {
                    return Err(WorkspaceError::from_errno(
                        "create the folders of",
                        &path.to_string(),
                        e,
                    ));
                }
            }
            dir = beneath::open_dir(&dir, name).map_err(|e| {
                WorkspaceError::from_errno("create the folders of", &path.to_string(), e)
            })?;
        }
        Ok(dir)
    }

    /// Creates the folder `path` (and its missing parents with `parents`). Returns whether it
    /// was created; an existing folder is fine with `parents`, an error without.
    pub fn create_dir(&self, path: &WsPath, parents: bool) -> Result<bool, WorkspaceError> {
        self.check_writable()?;
        let shown_path = path.to_string();
        let _guard = self.lock_changes();
        let (parent, missing) = self.parent_for_create(path, parents)?;
        let Some(name) = path.file_name() else {
            return if parents {
                Ok(false)
            } else {
                Err(WorkspaceError::AlreadyExists {
                    path: ".".into(),
                    hint: "the workspace root always exists",
                })
            };
        };
        if let Some(dir) = &parent {
            match beneath::stat_entry(dir, name) {
                Ok(stat) if parents && EntryKind::of(&stat) == EntryKind::Directory => {
                    return Ok(false);
                }
                Ok(_) => {
                    return Err(WorkspaceError::AlreadyExists {
                        path: shown_path,
                        hint: "choose another name (or pass parents: true to accept an existing folder)",
                    });
                }
                Err(Errno::NOENT) => {}
                Err(e) => return Err(WorkspaceError::from_errno("create", &shown_path, e)),
            }
        }
        self.check_quota(0, missing + 1)?;
        let dir = match parent {
            Some(dir) => dir,
            None => self.make_parents(path)?,
        };
        beneath::make_dir(&dir, name, self.config.owner)
            .map_err(|e| WorkspaceError::from_errno("create", &shown_path, e))?;
        Ok(true)
    }

    /// Removes `path`: a file, a link (never its target), or a folder (only empty unless
    /// `recursive`). The root and folders holding a denied prefix are refused.
    pub fn remove(&self, path: &WsPath, recursive: bool) -> Result<RemoveOutcome, WorkspaceError> {
        self.check_writable()?;
        let shown_path = path.to_string();
        let (parent, name) = self.parent_of(path, "deleted")?;
        if self.deny.holds_denied(path) {
            return Err(WorkspaceError::Denied { path: shown_path });
        }
        let _guard = self.lock_changes();
        let stat = beneath::stat_entry(&parent, name)
            .map_err(|e| WorkspaceError::from_errno("delete", &shown_path, e))?;
        let mut outcome = RemoveOutcome::default();
        if EntryKind::of(&stat) == EntryKind::Directory {
            if recursive {
                let dir = beneath::open_dir(&parent, name)
                    .map_err(|e| WorkspaceError::from_errno("delete", &shown_path, e))?;
                remove_contents(&dir, 0, &mut outcome)
                    .map_err(|e| WorkspaceError::from_errno("delete", &shown_path, e))?;
            }
            beneath::remove_entry(&parent, name, true)
                .map_err(|e| WorkspaceError::from_errno("delete", &shown_path, e))?;
            outcome.folders += 1;
        } else {
            beneath::remove_entry(&parent, name, false)
                .map_err(|e| WorkspaceError::from_errno("delete", &shown_path, e))?;
            outcome.files += 1;
        }
        self.changed(path, true);
        Ok(outcome)
    }

    /// Copies the regular file `from` to `to` (parents created), read whole: at most the
    /// write limit.
    pub fn copy(&self, from: &WsPath, to: &WsPath, overwrite: bool) -> Result<u64, WorkspaceError> {
        self.check_writable()?;
        let bytes = self
            .read(from, self.limits().max_write_bytes)
            .map_err(|e| e.with_hint("files that large cannot be copied"))?;
        let options = WriteOptions {
            overwrite,
            create_parents: true,
        };
        Ok(self.write(to, &bytes, options)?.bytes)
    }

    /// Renames (moves) `from` to `to`, a file or a folder, creating `to`'s missing parents.
    /// An existing `to` is replaced only with `overwrite` (a folder only by a folder, and only
    /// when empty).
    pub fn rename(
        &self,
        from: &WsPath,
        to: &WsPath,
        overwrite: bool,
    ) -> Result<(), WorkspaceError> {
        self.check_writable()?;
        if from.is_root() || to.is_root() {
            return Err(WorkspaceError::invalid(
                ".",
                "the workspace root itself cannot be moved or replaced; name something inside it",
            ));
        }
        if to.starts_with(from) {
            return Err(WorkspaceError::invalid(
                &to.to_string(),
                "a folder cannot be moved into itself; choose a destination outside it",
            ));
        }
        // Neither what moves nor where it lands may hold a denied prefix below it.
        if let Some(path) = [from, to].into_iter().find(|p| self.deny.holds_denied(p)) {
            return Err(WorkspaceError::Denied {
                path: path.to_string(),
            });
        }
        let _guard = self.lock_changes();
        let (from_dir, from_name) = self.parent_of(from, "moved")?;
        beneath::stat_entry(&from_dir, from_name)
            .map_err(|e| WorkspaceError::from_errno("move", &from.to_string(), e))?;
        let (to_dir, missing) = self.parent_for_create(to, true)?;
        self.check_quota(0, missing)?;
        let to_dir = match to_dir {
            Some(dir) => dir,
            None => self.make_parents(to)?,
        };
        let to_name = to.file_name().unwrap_or_default();
        beneath::rename(&from_dir, from_name, &to_dir, to_name, overwrite).map_err(
            |e| match e {
                Errno::EXIST | Errno::NOTEMPTY if !overwrite => WorkspaceError::AlreadyExists {
                    path: to.to_string(),
                    hint: "pass overwrite: true to replace it, or choose another destination",
                },
                e => WorkspaceError::from_errno("move", &from.to_string(), e),
            },
        )?;
        self.changed(from, true);
        self.changed(to, true);
        Ok(())
    }
}

/// Removes everything in `dir`, depth first, never following a link.
fn remove_contents(dir: &OwnedFd, depth: usize, outcome: &mut RemoveOutcome) -> Result<(), Errno> {
    // Deeper than any path the tools can make: something else built it; refuse, not recurse.
    if depth > 256 {
        return Err(Errno::NAMETOOLONG);
    }
    let entries: Vec<(std::ffi::CString, rustix::fs::FileType)> =
        rustix::fs::Dir::read_from(dir.as_fd())?
            .filter_map(Result::ok)
            .filter(|e| e.file_name() != c"." && e.file_name() != c"..")
            .map(|e| (e.file_name().to_owned(), e.file_type()))
            .collect();
    for (name, file_type) in entries {
        let folder = match file_type {
            rustix::fs::FileType::Directory => true,
            rustix::fs::FileType::Unknown => {
                beneath::stat_entry(dir, name.as_c_str()).map(|s| EntryKind::of(&s))?
                    == EntryKind::Directory
            }
            _ => false,
        };
        if folder {
            let sub = beneath::open_dir(dir, name.as_c_str())?;
            remove_contents(&sub, depth + 1, outcome)?;
            beneath::remove_entry(dir, name.as_c_str(), true)?;
            outcome.folders += 1;
        } else {
            beneath::remove_entry(dir, name.as_c_str(), false)?;
            outcome.files += 1;
        }
    }
    Ok(())
}
