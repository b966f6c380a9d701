//! The system calls behind every workspace operation, each relative to a directory handle and
//! never outside it.
//!
//! Paths are opened with `openat2(2)` and `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV`: the kernel refuses, atomically with the lookup,
//! any component that is a symbolic link (inside the workspace or not, swapped in or not), any
//! escape from the handle's directory, `/proc` magic links and mount crossings. Changes
//! (create, rename, unlink, mkdir) open the *parent* folder that way and then act on one plain
//! name relative to it, with calls that never follow a final symlink. Files are opened
//! non-blocking and without a controlling terminal, so naming a FIFO or a device cannot hang
//! or take over anything before its type is checked on the open handle.

use std::fs::File;

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;
use rustix::path::Arg;

/// How every path below a workspace handle is resolved.
pub const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS)
    .union(ResolveFlags::NO_XDEV);

/// Names of files being written (a write goes to one of these, then is renamed into place):
/// left out of listings, searches and globs.
pub const TEMP_PREFIX: &str = ".toolsmith-write-";

fn openat2<P: Arg + Copy>(
    base: impl AsFd,
    rel: P,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    // EAGAIN: a concurrent rename made the kernel unsure the lookup stayed beneath; retry.
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(&base, rel, flags | OFlags::CLOEXEC, mode, RESOLVE) {
            Err(Errno::AGAIN) if tries < 8 => tries += 1,
            other => return other,
        }
    }
}

/// Opens the folder `rel` (`.` for the handle's own) below `base`, readable for listings.
pub fn open_dir<P: Arg + Copy>(base: impl AsFd, rel: P) -> Result<OwnedFd, Errno> {
    openat2(
        base,
        rel,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW,
        Mode::empty(),
    )
}

/// Opens `rel` below `base` for reading, with its status taken from the open handle.
/// Whatever it is (the caller checks the type): opening never blocks and never takes a tty.
pub fn open_for_read(base: impl AsFd, rel: &str) -> Result<(File, Stat), Errno> {
    let fd = openat2(
        base,
        rel,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::NOFOLLOW,
        Mode::empty(),
    )?;
    let stat = rustix::fs::fstat(&fd)?;
    Ok((File::from(fd), stat))
}

/// The status of the entry `name` of the folder `dir`, not following a symlink.
pub fn stat_entry<P: Arg>(dir: impl AsFd, name: P) -> Result<Stat, Errno> {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
}

/// A new, empty, uniquely named file in `dir` for writing, and its name; given to `owner`
/// (uid, gid) when set.
pub fn create_temp(dir: impl AsFd, owner: Option<(u32, u32)>) -> Result<(File, String), Errno> {
    let dir = dir.as_fd();
    loop {
        let name = format!("{TEMP_PREFIX}{}", uuid::Uuid::new_v4().simple());
        match rustix::fs::openat(
            dir,
            name.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        ) {
            Ok(fd) => {
                if let Some(owner) = owner {
                    rustix::fs::fchown(&fd, Some(uid(owner.0)), Some(gid(owner.1)))?;
                }
                return Ok((File::from(fd), name));
            }
            Err(Errno::EXIST) => {}
            Err(e) => return Err(e),
        }
    }
}

/// Creates the folder `name` in `dir`, given to `owner` (uid, gid) when set.
pub fn make_dir(dir: impl AsFd, name: &str, owner: Option<(u32, u32)>) -> Result<(), Errno> {
    let dir = dir.as_fd();
    rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o755))?;
    if let Some(owner) = owner {
        // Never follows a link: whatever took the name meanwhile is not changed beyond itself.
        rustix::fs::chownat(
            dir,
            name,
            Some(uid(owner.0)),
            Some(gid(owner.1)),
            AtFlags::SYMLINK_NOFOLLOW,
        )?;
    }
    Ok(())
}

/// Gives the open file or folder `fd` to `owner` (uid, gid).
pub fn give_to(fd: impl AsFd, owner: (u32, u32)) -> Result<(), Errno> {
    rustix::fs::fchown(fd, Some(uid(owner.0)), Some(gid(owner.1)))
}

fn uid(raw: u32) -> rustix::fs::Uid {
    rustix::fs::Uid::from_raw(raw)
}

fn gid(raw: u32) -> rustix::fs::Gid {
    rustix::fs::Gid::from_raw(raw)
}

/// Removes the entry `name` of `dir` (a folder when `folder`, which must be empty). A symlink
/// is removed itself, never its target.
pub fn remove_entry<P: Arg>(dir: impl AsFd, name: P, folder: bool) -> Result<(), Errno> {
    let flags = if folder {
        AtFlags::REMOVEDIR
    } else {
        AtFlags::empty()
    };
    rustix::fs::unlinkat(dir, name, flags)
}

/// Renames `from_dir/from` to `to_dir/to`; refuses to replace an existing entry unless
/// `replace`. Neither final name is followed if it is a symlink.
pub fn rename(
    from_dir: impl AsFd,
    from: &str,
    to_dir: impl AsFd,
    to: &str,
    replace: bool,
) -> Result<(), Errno> {
    if replace {
        rustix::fs::renameat(from_dir, from, to_dir, to)
    } else {
        rustix::fs::renameat_with(
            from_dir,
            from,
            to_dir,
            to,
            rustix::fs::RenameFlags::NOREPLACE,
        )
    }
}

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    File,
    Directory,
    Symlink,
    Fifo,
    Socket,
    CharDevice,
    BlockDevice,
    Unknown,
}

impl EntryKind {
    #[must_use]
    pub fn of(stat: &Stat) -> Self {
        Self::from_type(FileType::from_raw_mode(stat.st_mode))
    }

    #[must_use]
    pub fn from_type(t: FileType) -> Self {
        match t {
            FileType::RegularFile => EntryKind::File,
            FileType::Directory => EntryKind::Directory,
            FileType::Symlink => EntryKind::Symlink,
            FileType::Fifo => EntryKind::Fifo,
            FileType::Socket => EntryKind::Socket,
            FileType::CharacterDevice => EntryKind::CharDevice,
            FileType::BlockDevice => EntryKind::BlockDevice,
            FileType::Unknown => EntryKind::Unknown,
        }
    }

    /// How a message names it.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            EntryKind::File => "regular file",
            EntryKind::Directory => "folder",
            EntryKind::Symlink => "symbolic link",
            EntryKind::Fifo => "named pipe (FIFO)",
            EntryKind::Socket => "socket",
            EntryKind::CharDevice => "character device",
            EntryKind::BlockDevice => "block device",
            EntryKind::Unknown => "special file",
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    #[test]
    fn lookups_stay_beneath_the_handle_and_never_follow_links() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(tmp.path().join("outside.txt"), "out").unwrap();
        std::fs::write(ws.join("sub/in.txt"), "in").unwrap();
        symlink("in.txt", ws.join("sub/inner-link")).unwrap();
        symlink("../outside.txt", ws.join("escape")).unwrap();
        let dir = rustix::fs::open(&ws, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let (_, stat) = open_for_read(&dir, "sub/in.txt").unwrap();
        assert_eq!(EntryKind::of(&stat), EntryKind::File);
        // Even a link that stays inside is refused: one rule, no resolution to reason about.
        assert_eq!(
            open_for_read(&dir, "sub/inner-link").unwrap_err(),
            Errno::LOOP
        );
        assert_eq!(open_for_read(&dir, "escape").unwrap_err(), Errno::LOOP);
        // Escapes the kernel sees (the text checks never let these through).
        assert_eq!(
            open_for_read(&dir, "../outside.txt").unwrap_err(),
            Errno::XDEV
        );
        assert_eq!(open_dir(&dir, "/").unwrap_err(), Errno::XDEV);
        assert!(open_dir(&dir, "sub").is_ok());
        assert_eq!(open_dir(&dir, "sub/in.txt").unwrap_err(), Errno::NOTDIR);
    }

    #[test]
    fn temp_files_renames_and_removals_act_on_names() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = rustix::fs::open(
            tmp.path(),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .unwrap();
        let (_, name) = create_temp(&dir, None).unwrap();
        assert!(name.starts_with(TEMP_PREFIX));
        std::fs::write(tmp.path().join("taken"), "x").unwrap();
        assert_eq!(
            rename(&dir, name.as_str(), &dir, "taken", false).unwrap_err(),
            Errno::EXIST
        );
        rename(&dir, name.as_str(), &dir, "taken", true).unwrap();
        assert_eq!(std::fs::read(tmp.path().join("taken")).unwrap(), b"");
        make_dir(&dir, "d", None).unwrap();
        assert_eq!(
            EntryKind::of(&stat_entry(&dir, "d").unwrap()),
            EntryKind::Directory
        );
        remove_entry(&dir, "d", true).unwrap();
        remove_entry(&dir, "taken", false).unwrap();
        assert_eq!(stat_entry(&dir, "taken").unwrap_err(), Errno::NOENT);
    }
}
