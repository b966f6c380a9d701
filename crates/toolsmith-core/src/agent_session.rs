//! Sessions and subagents of agents Toolsmith runs (issue 37, spec 001 §2 "Sessions", §6):
//! a [`SessionRecord`] is a conversation with a stored agent whose messages
//! ([`SessionMessage`]) are the model's history on the session's next run; a *subagent* is a
//! session too — an anonymous child of a run (or of an MCP client) given one task and a label,
//! whose life follows §6's states. Plain data; the rules (who may read, how many may run, how
//! large a session grows) live in the service.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What a session is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    /// A conversation: each message sent gets an answer through a run.
    Session,
    /// A child run given one task (spec 001 §6).
    Subagent,
}

impl SessionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Session => "session",
            SessionKind::Subagent => "subagent",
        }
    }

    pub fn parse(text: &str) -> Option<SessionKind> {
        match text {
            "session" => Some(SessionKind::Session),
            "subagent" => Some(SessionKind::Subagent),
            _ => None,
        }
    }
}

/// Where a session is in its life. A conversation goes `idle` → `running` → `idle` …; a
/// subagent `running` → `completed` | `failed` | `cancelled` → `archived` (spec 001 §6; its
/// `spawning` and `rejected` are the moment of the spawn, never stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Idle,
    Running,
    Completed,
    Failed,
    Cancelled,
    Archived,
}

impl SessionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStatus::Idle => "idle",
            SessionStatus::Running => "running",
            SessionStatus::Completed => "completed",
            SessionStatus::Failed => "failed",
            SessionStatus::Cancelled => "cancelled",
            SessionStatus::Archived => "archived",
        }
    }

    pub fn parse(text: &str) -> Option<SessionStatus> {
        match text {
            "idle" => Some(SessionStatus::Idle),
            "running" => Some(SessionStatus::Running),
            "completed" => Some(SessionStatus::Completed),
            "failed" => Some(SessionStatus::Failed),
            "cancelled" => Some(SessionStatus::Cancelled),
            "archived" => Some(SessionStatus::Archived),
            _ => None,
        }
    }

    /// Whether the session has ended: it never runs again (only archiving changes it).
    pub fn is_ended(self) -> bool {
        !matches!(self, SessionStatus::Idle | SessionStatus::Running)
    }
}

/// A session: a conversation with one of its owner's stored agents, or a subagent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// `ses_…` for a conversation, `sub_…` for a subagent.
    pub id: String,
    pub owner: String,
    /// The agent identity that made it (`None`: a person), which alone, with the owner, may
    /// read, use or cancel it.
    pub caller_agent: Option<String>,
    /// The stored agent that answers.
    pub agent_id: String,
    pub kind: SessionKind,
    /// For people and models (a subagent's label; a conversation's title).
    pub label: String,
    /// A subagent's parent: `run:<id>` for a run of Toolsmith's, `client:<caller>` for a caller
    /// from outside (an MCP client, REST).
    pub parent: Option<String>,
    /// The subagent depth its runs have (0 for a top-level conversation).
    pub depth: u32,
    pub status: SessionStatus,
    /// A subagent's task.
    pub task: Option<String>,
    /// The last answer (a subagent's result).
    pub result: Option<String>,
    /// Why the last run failed or was cancelled.
    pub error: Option<String>,
    /// The run that answers now, or answered last.
    pub last_run: Option<String>,
    /// Messages kept, and their bytes (oldest trimmed past the service's bounds).
    pub message_count: u32,
    pub message_bytes: u64,
    /// Messages trimmed, oldest first, since the session began.
    pub trimmed: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One message of a session's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessage {
    pub session_id: String,
    /// 0, 1, 2 … in the order written (a trimmed message's number is never reused).
    pub seq: i64,
    /// `user` (what was sent, or a subagent's task) or `assistant` (the agent's answer).
    pub role: String,
    pub content: String,
    /// The run that answered (for `assistant`), or that the message started.
    pub run_id: Option<String>,
    pub at: DateTime<Utc>,
}

/// Which sessions a listing returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionQuery {
    /// Only sessions of this kind.
    pub kind: Option<SessionKind>,
    /// Only subagents of this parent.
    pub parent: Option<String>,
    /// Archived subagents too.
    pub archived: bool,
    /// At most this many (the service bounds it).
    pub limit: u32,
}

/// What a bounded insert found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnOutcome {
    Inserted,
    /// The owner already has this many running subagents.
    TooManyRunning(u32),
    /// The parent already has this many running children.
    TooManyChildren(u32),
}
