//! The shapes the store answers in besides the records themselves: tool listings and their
//! counts, execution samples for analytics, a Config Center service with its entries, and what
//! a dependency sync changed. Plain data, defined here so that the `Store` trait (in
//! `toolsmith-store`) speaks only in core's types.

use chrono::{DateTime, Utc};

use crate::{
    ConfigEntryRecord, ConfigServiceRecord, CreatedBy, CustomToolRecord, ExecutionStatus,
    ToolStatus,
};

/// Which custom tools to list, always within one owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolQuery {
    pub owner: String,
    pub status: Option<ToolStatus>,
    pub category: Option<String>,
    pub created_by: Option<CreatedBy>,
    /// Case-insensitive substring match over name, description and category.
    pub search: Option<String>,
    pub limit: u32,
    pub offset: u32,
}

impl ToolQuery {
    /// All tools of `owner`, first page of 100.
    pub fn owner(owner: impl Into<String>) -> ToolQuery {
        ToolQuery {
            owner: owner.into(),
            status: None,
            category: None,
            created_by: None,
            search: None,
            limit: 100,
            offset: 0,
        }
    }
}

/// A custom tool moving from one owner to another (a user or an organisation, issue 41):
/// what `ToolStore::move_tool` writes in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolMove {
    pub id: String,
    /// The owner it has now; the move happens only while it still has it.
    pub from: String,
    pub to: String,
    /// The move happens only at this revision.
    pub expected_revision: i64,
    /// The tool's code under its new owner (a command tool's sealed env is bound to its
    /// owner, so it is sealed again), and each stored version's, by version.
    pub code: String,
    pub version_codes: Vec<(i64, String)>,
    pub at: DateTime<Utc>,
    /// The most tools the new owner may have, this one included.
    pub max_per_owner: u64,
}

/// One page of a listing, with the total number of matches.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolPage {
    pub tools: Vec<CustomToolRecord>,
    pub total: u64,
}

/// Counts over one owner's custom tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolStats {
    pub total: u64,
    pub active: u64,
    pub disabled: u64,
    pub pending_approval: u64,
    pub rejected: u64,
    pub created_by_llm: u64,
    pub created_by_user: u64,
    pub total_usage: u64,
}

impl ToolStats {
    /// Adds one group of a `GROUP BY status, created_by` count: `tools` tools with these
    /// stored values, used `usage` times in all. A value neither backend's constraints let in
    /// counts in the totals only.
    pub fn add_group(&mut self, status: &str, created_by: &str, tools: u64, usage: u64) {
        self.total += tools;
        self.total_usage += usage;
        match status.parse::<ToolStatus>() {
            Ok(ToolStatus::Active) => self.active += tools,
            Ok(ToolStatus::Disabled) => self.disabled += tools,
            Ok(ToolStatus::PendingApproval) => self.pending_approval += tools,
            Ok(ToolStatus::Rejected) => self.rejected += tools,
            Err(_) => {}
        }
        match created_by.parse::<CreatedBy>() {
            Ok(CreatedBy::Llm) => self.created_by_llm += tools,
            Ok(CreatedBy::User) => self.created_by_user += tools,
            Err(_) => {}
        }
    }
}

/// One execution as analytics sees it: which tool, how it ended, how long it took, when.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionSample {
    pub tool_id: String,
    pub tool_name: String,
    pub status: ExecutionStatus,
    pub error_kind: Option<String>,
    pub duration_ms: f64,
    pub created_at: DateTime<Utc>,
}

/// One execution as the server-wide analytics see it: the sample, whose it was (the owner)
/// and the agent that made the call, if one did.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerExecutionSample {
    pub sample: ExecutionSample,
    pub owner: String,
    pub agent_id: Option<String>,
}

/// One Config Center service with all its entries (default first, then oldest first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigServiceEntries {
    pub service: ConfigServiceRecord,
    pub entries: Vec<ConfigEntryRecord>,
}

/// A few sealed Config Center values and how many there are, for checking at start-up that
/// the master key opens what the store holds (`ConfigStore::sealed_values`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SealedSample {
    /// Sealed values in the whole store (every owner).
    pub total: u64,
    /// Up to the requested number of them, oldest entries first.
    pub values: Vec<SealedValue>,
}

/// One sealed value and its place (what it is bound to when sealed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedValue {
    pub owner: String,
    pub service_id: String,
    pub entry_id: String,
    pub field: String,
    /// The sealed text (`v1:…`), never plaintext.
    pub sealed: String,
}

/// What `ConfigStore::sync_config_dependencies` changed, by service name (each list sorted).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConfigDependencyChanges {
    /// Services that did not exist and were created (auto-registered) for the tool.
    pub created: Vec<String>,
    /// Existing services that now list the tool in `registered_by`.
    pub attached: Vec<String>,
    /// Services the tool no longer declares, and that stay (still needed by another tool,
    /// created by a person, or holding entries).
    pub detached: Vec<String>,
    /// Auto-registered services that no tool needs any more and that had no entries: deleted.
    pub removed: Vec<String>,
}
