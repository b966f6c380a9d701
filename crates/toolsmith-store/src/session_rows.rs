//! What both backends share of the sessions' tables: a session's fields that no query filters
//! on, kept as one JSON document (`agent_sessions.document`), a message's content as a JSON
//! string, and how many of the oldest messages to trim.

use serde::{Deserialize, Serialize};
use toolsmith_core::agent_session::SessionRecord;

/// The statuses of a session that has not ended, as an SQL list.
pub(crate) const OPEN: &str = "('idle', 'running')";
/// The statuses of a subagent that has ended but is not archived, as an SQL list.
pub(crate) const ENDED: &str = "('completed', 'failed', 'cancelled')";

/// The fields of a session that no query filters on.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SessionDocument {
    pub task: Option<String>,
    pub result: Option<String>,
    pub error: Option<String>,
    pub last_run: Option<String>,
}

impl SessionDocument {
    pub(crate) fn of(session: &SessionRecord) -> SessionDocument {
        SessionDocument {
            task: session.task.clone(),
            result: session.result.clone(),
            error: session.error.clone(),
            last_run: session.last_run.clone(),
        }
    }

    pub(crate) fn text(session: &SessionRecord) -> String {
        serde_json::to_string(&SessionDocument::of(session)).unwrap_or_else(|_| "{}".to_owned())
    }
}

/// A message's content as stored: a JSON string.
pub(crate) fn content_text(content: &str) -> String {
    serde_json::to_string(content).unwrap_or_else(|_| "\"\"".to_owned())
}

/// How many of the oldest messages (`bytes`, oldest first) to delete so that at most
/// `max_messages` of at most `max_bytes` remain; the newest always stays.
pub(crate) fn to_trim(bytes: &[u64], max_messages: u32, max_bytes: u64) -> usize {
    let mut count = bytes.len();
    let mut total: u64 = bytes.iter().sum();
    let mut drop = 0;
    for size in bytes {
        if count <= 1 || (count <= max_messages as usize && total <= max_bytes) {
            break;
        }
        count -= 1;
        total = total.saturating_sub(*size);
        drop += 1;
    }
    drop
}

#[cfg(test)]
mod tests {
    use super::to_trim;

    #[test]
    fn the_oldest_go_first_and_the_newest_always_stays() {
        assert_eq!(to_trim(&[1, 1, 1], 5, 100), 0);
        assert_eq!(to_trim(&[1, 1, 1], 2, 100), 1);
        assert_eq!(to_trim(&[50, 40, 30], 5, 70), 1);
        assert_eq!(to_trim(&[50, 40, 300], 5, 70), 2);
        assert_eq!(to_trim(&[], 5, 70), 0);
    }
}
