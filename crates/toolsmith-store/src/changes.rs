//! Change notices: what a backend that can push changes ([`crate::PgStore`], with PostgreSQL's
//! `LISTEN`/`NOTIFY`) tells the other processes sharing the store, so they reload what changed
//! without polling.

use serde::{Deserialize, Serialize};

/// What kind of record changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Tool,
    Policy,
    Config,
    Token,
    Approval,
    /// A prompt was created, changed, switched or deleted (its owner's prompt list moved).
    Prompt,
    /// A user-defined MCP resource or template was created, changed or deleted (its owner's
    /// resource list moved): sent by [`crate::Store::announce_change`] after the write.
    Resource,
}

/// One committed change, as sent inside the writing transaction (so it is delivered exactly
/// when, and only if, the write commits).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub kind: ChangeKind,
    /// The record's id (tool id, service or entry id, token id, approval id; `1` for the policy).
    pub id: String,
    /// The owner of the record (empty when it has none, like the policy).
    pub owner: String,
    /// The record's revision after the change, when it has one (absent for deletes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<i64>,
    /// The process that made it (each store handle has its own id), so a process can ignore
    /// its own notices.
    pub instance: String,
}

/// What a change subscription delivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedEvent {
    /// Another process committed this change.
    Changed(Change),
    /// The subscription was (re)established: notices sent meanwhile may be lost, so reload
    /// everything once.
    Resync,
}
