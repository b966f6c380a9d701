//! Tool tasks: one tool call run on after its request was answered (MCP's *tasks*, REST's
//! asynchronous execute), kept in the store with its status and, once it ends, its result, for
//! a bounded time. Plain data; the rules (who may read a task, how many may run, how long a
//! result is kept) live in the service.
//!
//! Not to be confused with the scheduler's *scheduled tasks* (records of the generic record
//! store, `schedule` collection): a tool task is one call, started at once, never repeated.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a tool task is in its life (the names are MCP's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolTaskStatus {
    /// The call runs.
    Working,
    /// The call waits for an answer from the caller (an approval, an elicitation).
    InputRequired,
    /// The call ended with a result (which may be the tool's own error: `isError`).
    Completed,
    /// The call ended without a result of the tool (its instance stopped, the result was too
    /// large to keep); `status_message` says why.
    Failed,
    /// The caller cancelled it.
    Cancelled,
}

impl ToolTaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolTaskStatus::Working => "working",
            ToolTaskStatus::InputRequired => "input_required",
            ToolTaskStatus::Completed => "completed",
            ToolTaskStatus::Failed => "failed",
            ToolTaskStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<ToolTaskStatus> {
        match text {
            "working" => Some(ToolTaskStatus::Working),
            "input_required" => Some(ToolTaskStatus::InputRequired),
            "completed" => Some(ToolTaskStatus::Completed),
            "failed" => Some(ToolTaskStatus::Failed),
            "cancelled" => Some(ToolTaskStatus::Cancelled),
            _ => None,
        }
    }

    /// Whether the task has ended (its status never changes again).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            ToolTaskStatus::Completed | ToolTaskStatus::Failed | ToolTaskStatus::Cancelled
        )
    }
}

/// One tool task as stored (`tool_tasks`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolTaskRecord {
    pub id: String,
    /// The user whose call it is; only this user (and agent) can read or cancel it.
    pub owner: String,
    /// The agent of the call, `None` for a call without one.
    pub agent: Option<String>,
    /// The tool's name as it was called.
    pub tool: String,
    pub status: ToolTaskStatus,
    /// Why it is in its status (a failure's reason, a cancellation's author), for people.
    pub status_message: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// How long the task is kept from its creation, in milliseconds (MCP's `ttl`).
    pub ttl_ms: i64,
    /// `created_at + ttl_ms`: after it the task is deleted (and no longer counts as running).
    pub expires_at: DateTime<Utc>,
    /// The call's result (core's `ToolResult` as JSON) once it completed.
    pub result: Option<Value>,
    /// The instance that runs the call (`ToolService`'s instance id): on a shared store,
    /// another instance cancels it through the store and this one stops it.
    pub instance: String,
}

impl ToolTaskRecord {
    /// Whether the task is gone for its reader at `now` (the sweeper deletes it soon).
    pub fn expired(&self, now: DateTime<Utc>) -> bool {
        self.expires_at <= now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_reads_back_from_its_name() {
        for status in [
            ToolTaskStatus::Working,
            ToolTaskStatus::InputRequired,
            ToolTaskStatus::Completed,
            ToolTaskStatus::Failed,
            ToolTaskStatus::Cancelled,
        ] {
            assert_eq!(ToolTaskStatus::parse(status.as_str()), Some(status));
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                Value::String(status.as_str().to_owned())
            );
        }
        assert_eq!(ToolTaskStatus::parse("done"), None);
        assert!(!ToolTaskStatus::InputRequired.is_terminal());
        assert!(ToolTaskStatus::Cancelled.is_terminal());
    }
}
