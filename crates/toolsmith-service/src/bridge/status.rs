//! What the bridge reports per upstream server: its state, last error, tools, and counters.

use std::sync::atomic::AtomicU64;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Where a server's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    Connecting,
    Connected,
    /// Not connected; retried after a backoff, or on demand once the attempts are spent.
    Down,
    /// `enabled = false` in its configuration.
    Disabled,
}

/// One server's status, as REST and the CLI show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    pub last_error: Option<String>,
    /// Catalogue names of the tools bridged now.
    pub tools: Vec<String>,
    /// Upstream tools not bridged, each with the reason (a name taken, a bad schema).
    pub skipped: Vec<String>,
    pub last_check: Option<DateTime<Utc>>,
    /// Connections made so far (1 after the first; more after reconnects).
    pub connections: u64,
    pub calls: u64,
    pub errors: u64,
}

/// Calls and failed calls of one server's tools.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) calls: AtomicU64,
    pub(crate) errors: AtomicU64,
}
