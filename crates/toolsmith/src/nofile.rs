//! The open-file limit of `toolsmith serve`: raised to the hard limit at start, and what it
//! allows of `max_connections`.
//!
//! Every connection is a file descriptor, and so are the store's files, the sandbox's pipes
//! and the egress guard's sockets. The soft limit is often 1024 while the hard limit is much
//! higher; raising the soft one needs no privilege.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Descriptors kept for everything but client connections.
const RESERVED: u64 = 256;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit; returns the soft limit now in force
/// (`None` when unlimited).
pub fn raise() -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let wanted = Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        match setrlimit(Resource::Nofile, wanted) {
            Ok(()) => tracing::debug!(
                from = ?limit.current,
                to = ?limit.maximum,
                "raised the open-file limit to the hard limit"
            ),
            Err(e) => tracing::warn!(
                error = %e,
                soft = ?limit.current,
                hard = ?limit.maximum,
                "could not raise the open-file limit"
            ),
        }
    }
    getrlimit(Resource::Nofile).current
}

/// `configured`, lowered so that connections leave descriptors for the rest: at most the
/// limit less 256, and never below half of it.
pub fn fit_connections(configured: usize, soft_limit: Option<u64>) -> usize {
    let Some(limit) = soft_limit else {
        return configured;
    };
    let room = limit.saturating_sub(RESERVED).max(limit / 2).max(1);
    usize::try_from(room).map_or(configured, |room| configured.min(room))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_leave_room_for_other_descriptors() {
        assert_eq!(fit_connections(10_000, Some(1_048_576)), 10_000);
        assert_eq!(fit_connections(10_000, Some(1024)), 768);
        assert_eq!(fit_connections(10_000, Some(128)), 64);
        assert_eq!(fit_connections(50, Some(1024)), 50);
        assert_eq!(fit_connections(10_000, None), 10_000);
    }
}
