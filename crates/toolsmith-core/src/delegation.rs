//! Agents working together (issue 38, spec 001 §7, §10): an *agent link* ([`AgentLinkRecord`]),
//! the permission a person gives one agent to hand tasks to another (outbound A→B, or
//! bidirectional A↔B); a *delegation* ([`DelegationRecord`]), one task handed over a link and
//! run by the target agent as itself; a *handoff route* ([`HandoffRoute`]), a session whose
//! next messages go to another agent. Plain data; the rules live in the service.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Which way a link lets tasks go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkDirection {
    /// Only the source delegates to the target.
    Outbound,
    /// Either delegates to the other.
    Bidirectional,
}

impl LinkDirection {
    pub fn as_str(self) -> &'static str {
        match self {
            LinkDirection::Outbound => "outbound",
            LinkDirection::Bidirectional => "bidirectional",
        }
    }

    pub fn parse(text: &str) -> Option<LinkDirection> {
        match text {
            "outbound" => Some(LinkDirection::Outbound),
            "bidirectional" => Some(LinkDirection::Bidirectional),
            _ => None,
        }
    }
}

/// A link between two agents of one user, made by a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentLinkRecord {
    /// `lnk_<32 hex>`.
    pub id: String,
    pub owner: String,
    /// The agent (definition id) that delegates.
    pub source_agent: String,
    /// The agent (definition id) delegated to.
    pub target_agent: String,
    pub direction: LinkDirection,
    /// Delegations running over this link at once (in either direction).
    pub max_concurrent: u32,
    /// What the link is for, as the person wrote it.
    #[serde(default)]
    pub description: String,
    pub created_at: DateTime<Utc>,
}

impl AgentLinkRecord {
    /// Whether this link lets `from` delegate to `to`.
    pub fn allows(&self, from: &str, to: &str) -> bool {
        (self.source_agent == from && self.target_agent == to)
            || (self.direction == LinkDirection::Bidirectional
                && self.source_agent == to
                && self.target_agent == from)
    }
}

/// Where a delegation is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelegationStatus {
    Running,
    Completed,
    Failed,
    Cancelled,
}

impl DelegationStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            DelegationStatus::Running => "running",
            DelegationStatus::Completed => "completed",
            DelegationStatus::Failed => "failed",
            DelegationStatus::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<DelegationStatus> {
        match text {
            "running" => Some(DelegationStatus::Running),
            "completed" => Some(DelegationStatus::Completed),
            "failed" => Some(DelegationStatus::Failed),
            "cancelled" => Some(DelegationStatus::Cancelled),
            _ => None,
        }
    }
}

/// One task handed from one agent to another over a link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DelegationRecord {
    /// `dlg_<32 hex>`.
    pub id: String,
    pub owner: String,
    /// The delegating agent (definition id).
    pub source_agent: String,
    /// The agent that does the task (definition id); its run is `run_id`.
    pub target_agent: String,
    pub link_id: String,
    /// `sync` (the caller waited), `async` (announced when done) or `evaluate` (a round of
    /// an evaluate loop).
    pub mode: String,
    /// 1 for a delegation by an agent no delegation started, 2 for one its target made …
    pub depth: u32,
    /// The run that delegated, when a run did.
    #[serde(default)]
    pub parent_run: Option<String>,
    /// The target's run, once started.
    #[serde(default)]
    pub run_id: Option<String>,
    pub status: DelegationStatus,
    pub task: String,
    #[serde(default)]
    pub result: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What the store's `insert_delegation_within` did with a new delegation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelegationAdmission {
    Started,
    /// The link already has this many delegations running (its `max_concurrent`).
    LinkAtCap(u32),
    /// The target already runs this many delegations from all sources (its load limit).
    AgentAtCap(u32),
}

/// Which delegations a listing returns (always one owner's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DelegationQuery {
    /// Only those this agent made, or was given.
    pub agent: Option<String>,
    /// Only running ones.
    pub active: bool,
    pub limit: u32,
}

/// A session whose next messages go to another agent (spec 001 §10).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffRoute {
    /// The session handed off (its key, `ses_…`).
    pub session_id: String,
    pub owner: String,
    /// The agent that answered the session before.
    pub from_agent: String,
    /// The agent that answers it now.
    pub to_agent: String,
    /// The target's own session, where the conversation goes on.
    pub target_session: String,
    pub reason: String,
    pub created_at: DateTime<Utc>,
}
