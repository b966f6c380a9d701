//! The governance records the store keeps: human approvals of executions (and the standing
//! grants `allow_always` leaves), the audit log of privileged actions, the stored policy, API
//! tokens, and what a call asks of the rate limits and concurrency caps several instances
//! share on one database.
//!
//! Like every record of the store they are plain data; the rules (who needs an approval, what
//! an audit entry may contain) live in the service.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an approval stands. An approval still `Pending` (or `Allowed` and unused) after
/// `expires_at` is expired, which counts as denied ([`ApprovalRecord::state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Pending,
    /// Allowed once and not yet used by the call it allows. Deciding it moves `expires_at` to
    /// the end of the window in which that call may run.
    Allowed,
    /// Allowed once, and the call it allowed has run.
    Consumed,
    /// Allowed always: the decision left a standing grant for the tool and caller.
    Granted,
    Denied,
    Expired,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Allowed => "allowed",
            Self::Consumed => "consumed",
            Self::Granted => "granted",
            Self::Denied => "denied",
            Self::Expired => "expired",
        }
    }
}

impl fmt::Display for ApprovalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "pending" => Self::Pending,
            "allowed" => Self::Allowed,
            "consumed" => Self::Consumed,
            "granted" => Self::Granted,
            "denied" => Self::Denied,
            "expired" => Self::Expired,
            other => return Err(format!("unknown approval status '{other}'")),
        })
    }
}

/// What a person decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// This one call may run.
    AllowOnce,
    /// This call, and every later call of the same tool by the same caller.
    AllowAlways,
    Deny,
}

impl ApprovalDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AllowOnce => "allow_once",
            Self::AllowAlways => "allow_always",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for ApprovalDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalDecision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "allow_once" => Self::AllowOnce,
            "allow_always" => Self::AllowAlways,
            "deny" => Self::Deny,
            other => {
                return Err(format!(
                    "unknown decision '{other}': expected allow_once, allow_always or deny"
                ));
            }
        })
    }
}

/// One execution waiting for (or past) a human decision.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRecord {
    /// `apr_<16 hex>`.
    pub id: String,
    /// The user whose tool call it is.
    pub owner: String,
    pub tool_name: String,
    /// What grants bind to: the custom tool id, or `builtin:<name>`.
    pub tool_key: String,
    /// The agent that called (empty when none was named).
    pub caller: String,
    /// SHA-256 of the canonical arguments: an approval allows exactly the call it was asked for.
    pub args_hash: String,
    /// The arguments, scrubbed and capped, for the person deciding.
    pub args_preview: String,
    pub status: ApprovalStatus,
    pub decision: Option<ApprovalDecision>,
    pub decided_by: Option<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub decided_at: Option<DateTime<Utc>>,
}

impl ApprovalRecord {
    /// The status as of `now`: a pending approval, or an unused allowed one, past its expiry is
    /// expired.
    pub fn state(&self, now: DateTime<Utc>) -> ApprovalStatus {
        let open = matches!(
            self.status,
            ApprovalStatus::Pending | ApprovalStatus::Allowed
        );
        if open && self.expires_at <= now {
            ApprovalStatus::Expired
        } else {
            self.status
        }
    }
}

/// Which approvals to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalQuery {
    /// One owner's approvals, or every owner's (admin).
    pub owner: Option<String>,
    /// Only the calls of this caller (the agent; `""` for calls made without one), or every
    /// caller's. An agent sees only its own calls' approvals; a person all of theirs.
    pub caller: Option<String>,
    /// Only those still waiting for a decision at `now`.
    pub pending_only: bool,
    pub limit: u32,
}

/// One privileged action, as the audit log keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    /// Assigned by the store (increasing); 0 before insertion.
    pub id: i64,
    pub at: DateTime<Utc>,
    /// The user who acted.
    pub actor: String,
    /// `user`, `llm` or `admin`.
    pub actor_kind: String,
    /// `tool.create`, `tool.update`, `approval.decide`, `policy.update`, `config.entry.create` …
    pub action: String,
    /// `tool`, `approval`, `policy`, `config_service`, `config_entry`, `token`.
    pub target_type: String,
    pub target_id: String,
    /// A readable name of the target (tool name, service name …), when it has one.
    pub target_name: Option<String>,
    pub before_revision: Option<i64>,
    pub after_revision: Option<i64>,
    pub request_id: Option<String>,
    /// What changed, never a secret value.
    pub details: Value,
}

/// Which audit entries to list, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AuditQuery {
    pub actor: Option<String>,
    /// An exact action, or a prefix ending in `.` (`tool.`).
    pub action: Option<String>,
    pub target_id: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub limit: u32,
    pub offset: u32,
}

/// The stored policy document (the policy engine's configuration as JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPolicy {
    pub document: Value,
    /// Bumps on every write; `expected_revision` checks it.
    pub revision: i64,
    pub updated_by: String,
    pub updated_at: DateTime<Utc>,
}

/// An API token as stored: its owner, scopes and a SHA-256 of the secret — never the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTokenRecord {
    /// `tok_<12 hex>`: how people refer to a token (to list or revoke it).
    pub id: String,
    pub user_id: String,
    /// A label chosen by whoever created it.
    pub name: String,
    pub scopes: Vec<String>,
    /// Lowercase hex SHA-256 of the token text.
    pub token_hash: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    /// The agent every request with this token acts as (selects the agent's policy).
    pub agent_id: Option<String>,
}

/// One token bucket a call spends from in limits shared by every instance on one database
/// (`rate_per_user`, `rate_per_tool`, `rate_per_session`).
#[derive(Debug, Clone, PartialEq)]
pub struct RateBucketSpend {
    /// What the bucket counts: `user`, `tool` or `session`; at most one bucket per scope.
    pub scope: String,
    /// Whose bucket it is (the user id, `owner/tool`, the session id); any text.
    pub key: String,
    /// The most tokens it holds (the burst).
    pub capacity: f64,
    /// The tokens it regains per second (more than 0).
    pub per_second: f64,
}

/// What one call takes from the shared limits, in one atomic step: a token of each bucket,
/// and then one of the user's concurrency slots.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitRequest {
    pub buckets: Vec<RateBucketSpend>,
    /// A slot of this user's concurrency cap, if one is configured (and the call is not nested).
    pub slot: Option<SlotRequest>,
}

/// One of `cap` slots of `user`, leased for `ttl`: a lease not renewed in time (its instance
/// died) lapses, so no slot leaks.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotRequest {
    pub user: String,
    pub cap: u32,
    pub ttl: std::time::Duration,
}

/// The outcome of a [`LimitRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum LimitOutcome {
    /// Every bucket gave a token; `lease` is the slot's lease when one was asked for.
    Allowed { lease: Option<i64> },
    /// Bucket `index` (of the request's) was empty and the longest to wait for: nothing was
    /// spent. It has a token again after `wait`.
    RateLimited {
        index: usize,
        wait: std::time::Duration,
    },
    /// The tokens were spent, but the user already runs `cap` executions (as in memory, where
    /// a call refused by the concurrency cap has spent its rate tokens).
    ConcurrencyLimited,
}
