//! The quota: bytes of regular files and the number of files and folders one user's
//! workspaces hold together (their own and their agents'). Counted by walking the user's
//! folder under the per-user lock that every change holds, so a check and the change it
//! allows are one step for the file tools.

use std::sync::{MutexGuard, PoisonError};

use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use serde::Serialize;

use super::beneath::{self, EntryKind};
use super::error::WorkspaceError;
use super::{Workspace, WorkspaceSettings};

/// What a user's workspaces hold, and what they may.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub bytes: u64,
    pub entries: u64,
    pub quota_bytes: u64,
    pub max_entries: u64,
}

/// Deeper than any path the tools can make; a deeper tree was built by something else and
/// is counted only to here.
const MAX_COUNT_DEPTH: usize = 256;

impl Workspace {
    /// What the user's workspaces hold now.
    pub fn usage(&self) -> Result<Usage, WorkspaceError> {
        usage(&self.user_dir, &self.config)
    }

    /// Held by every change of the user's workspaces.
    pub(crate) fn lock_changes(&self) -> MutexGuard<'_, ()> {
        self.lock
            .changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Refuses a change that would add `bytes` and `entries` beyond the quota. Call with
    /// [`Workspace::lock_changes`] held.
    pub(crate) fn check_quota(&self, bytes: u64, entries: u64) -> Result<(), WorkspaceError> {
        check(&self.user_dir, &self.config, bytes, entries)
    }

    /// Reserves, for one sandbox run, a share of what is left of the quota: half of what the
    /// runs already in flight for this user have not reserved. The shares of all runs in flight
    /// add up to at most what was left when each started, so parallel runs cannot multiply the
    /// overshoot (each run's files are limited to its share by `RLIMIT_FSIZE`). Given back
    /// when the [`RunShare`] is dropped.
    ///
    /// Why half: the next run must find something left, and halving leaves it so however many
    /// runs start (1/2 + 1/4 + … < 1); the cost is that one run alone may write files of at
    /// most half of what is left.
    pub fn reserve_run(&self, usage: &Usage) -> RunShare {
        let left = usage.quota_bytes.saturating_sub(usage.bytes);
        let mut reserved = self
            .lock
            .run_reserved
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let bytes = left.saturating_sub(*reserved) / 2;
        *reserved = reserved.saturating_add(bytes);
        RunShare {
            bytes,
            locks: self.lock.clone(),
        }
    }
}

/// A sandbox run's share of the quota ([`Workspace::reserve_run`]), given back on drop.
#[derive(Debug)]
pub struct RunShare {
    bytes: u64,
    locks: std::sync::Arc<super::UserLocks>,
}

impl RunShare {
    /// The largest file the run may write.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for RunShare {
    fn drop(&mut self) {
        let mut reserved = self
            .locks
            .run_reserved
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *reserved = reserved.saturating_sub(self.bytes);
    }
}

/// What the user folder `user_dir` holds.
pub(crate) fn usage(
    user_dir: &OwnedFd,
    config: &WorkspaceSettings,
) -> Result<Usage, WorkspaceError> {
    let mut usage = Usage {
        quota_bytes: config.quota_bytes,
        max_entries: config.max_entries,
        ..Usage::default()
    };
    tally(user_dir, 0, &mut usage)
        .map_err(|e| WorkspaceError::from_errno("measure", "your workspace", e))?;
    Ok(usage)
}

/// Refuses adding `bytes` and `entries` to the user folder `user_dir` beyond the quota.
pub(crate) fn check(
    user_dir: &OwnedFd,
    config: &WorkspaceSettings,
    bytes: u64,
    entries: u64,
) -> Result<(), WorkspaceError> {
    if bytes == 0 && entries == 0 {
        return Ok(());
    }
    let usage = usage(user_dir, config)?;
    if usage.bytes.saturating_add(bytes) > usage.quota_bytes {
        return Err(WorkspaceError::QuotaExceeded {
            used: usage.bytes,
            limit: usage.quota_bytes,
            needed: bytes,
        });
    }
    if usage.entries.saturating_add(entries) > usage.max_entries {
        return Err(WorkspaceError::TooManyEntries {
            count: usage.entries,
            limit: usage.max_entries,
        });
    }
    Ok(())
}

fn tally(dir: &OwnedFd, depth: usize, usage: &mut Usage) -> Result<(), Errno> {
    let names: Vec<std::ffi::CString> = rustix::fs::Dir::read_from(dir.as_fd())?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_owned())
        .filter(|n| n.as_c_str() != c"." && n.as_c_str() != c"..")
        .collect();
    for name in names {
        let Ok(stat) = beneath::stat_entry(dir, name.as_c_str()) else {
            continue;
        };
        usage.entries += 1;
        match EntryKind::of(&stat) {
            EntryKind::File => usage.bytes += u64::try_from(stat.st_size).unwrap_or(0),
            EntryKind::Directory if depth < MAX_COUNT_DEPTH => {
                if let Ok(sub) = beneath::open_dir(dir, name.as_c_str()) {
                    tally(&sub, depth + 1, usage)?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}
