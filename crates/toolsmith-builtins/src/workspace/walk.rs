//! Bounded traversal of a workspace folder, for listings, searches and globs: depth first,
//! names sorted within each folder, hidden entries (denied prefixes, writes in progress) left
//! out and never entered, symbolic links reported and never followed, and a cap on what is
//! visited, so a huge or deep tree costs a bounded amount of work.

use rustix::fd::{AsFd, OwnedFd};
use serde::Serialize;

use super::Workspace;
use super::beneath::{self, EntryKind};
use super::error::WorkspaceError;
use super::ops::Metadata;
use super::path::WsPath;

/// How far a walk may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkOptions {
    /// 1: only the entries of the start folder; 2: also those of its sub-folders; …
    pub max_depth: usize,
    /// Most entries visited before the walk stops (`truncated`).
    pub max_visits: usize,
}

/// One entry met on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    pub path: WsPath,
    pub meta: Metadata,
    /// 1 for an entry of the start folder.
    pub depth: usize,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WalkOutcome {
    pub visited: usize,
    /// The visit cap was reached: there is more than was seen.
    pub truncated: bool,
    /// Some folders were not entered because of the depth limit.
    pub depth_limited: bool,
}

impl Workspace {
    /// Visits everything below the folder `start` (see the module docs); `visit` returns
    /// `false` to stop early.
    pub fn walk(
        &self,
        start: &WsPath,
        options: WalkOptions,
        mut visit: impl FnMut(&WalkEntry) -> bool,
    ) -> Result<WalkOutcome, WorkspaceError> {
        let dir = self.open_folder(start)?;
        let mut outcome = WalkOutcome::default();
        self.walk_dir(&dir, start, 1, options, &mut visit, &mut outcome);
        Ok(outcome)
    }

    fn walk_dir(
        &self,
        dir: &OwnedFd,
        at: &WsPath,
        depth: usize,
        options: WalkOptions,
        visit: &mut dyn FnMut(&WalkEntry) -> bool,
        outcome: &mut WalkOutcome,
    ) -> bool {
        let cap = options.max_visits.saturating_sub(outcome.visited) + 64;
        let Ok((names, cut)) = sorted_names(dir, cap) else {
            return true;
        };
        for name in names {
            if outcome.visited >= options.max_visits {
                outcome.truncated = true;
                return false;
            }
            let path = at.join(&name);
            if self.hidden(&path) {
                continue;
            }
            // Gone since the folder was read: nothing to report.
            let Ok(stat) = beneath::stat_entry(dir, name.as_str()) else {
                continue;
            };
            outcome.visited += 1;
            let entry = WalkEntry {
                path,
                meta: Metadata::from_stat(&stat),
                depth,
            };
            if !visit(&entry) {
                return false;
            }
            if entry.meta.kind != EntryKind::Directory {
                continue;
            }
            if depth >= options.max_depth {
                outcome.depth_limited = true;
                continue;
            }
            // Swapped for a link or removed since: skipped, never followed.
            if let Ok(sub) = beneath::open_dir(dir, name.as_str())
                && !self.walk_dir(&sub, &entry.path, depth + 1, options, visit, outcome)
            {
                return false;
            }
        }
        if cut {
            outcome.truncated = true;
        }
        true
    }
}

/// The names in `dir` (at most `cap`; `true` when there were more), sorted. Names that are not
/// UTF-8 cannot be named in a workspace path and are left out.
fn sorted_names(dir: &OwnedFd, cap: usize) -> Result<(Vec<String>, bool), rustix::io::Errno> {
    let mut names = Vec::new();
    let mut cut = false;
    for entry in rustix::fs::Dir::read_from(dir.as_fd())? {
        let entry = entry?;
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        if names.len() >= cap {
            cut = true;
            break;
        }
        names.push(name.to_owned());
    }
    names.sort_unstable();
    Ok((names, cut))
}
