//! Persistence: the [`Store`] trait every backend implements (one trait per area —
//! [`ToolStore`], [`GovernanceStore`], [`ConfigStore`], [`RecordStore`], [`McpStore`] — with
//! `Store` over them all), [`SqliteStore`] (the embedded default) and [`PgStore`] (PostgreSQL,
//! for several instances on one database).
//!
//! The traits speak only in domain records from `toolsmith-core`; nothing in them is specific
//! to one backend, and one test suite (`contract/`) runs against both. Every write is one
//! transaction: it is committed before the call returns, or nothing of it is.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod agent_rows;
mod approval_rows;
mod changes;
#[cfg(test)]
mod contract;
pub mod copy;
mod delegation_rows;
mod error;
mod postgres;
mod records;
mod session_rows;
mod sqlite;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use toolsmith_core::{
    ConfigEntryRecord, ConfigServiceRecord, CustomToolRecord, ExecutionRecord, ToolVersionRecord,
};

pub use changes::{Change, ChangeKind, FeedEvent};
pub use error::StoreError;
pub use postgres::{PgOptions, PgStore};
pub use sqlite::SqliteStore;
// The records and shapes the trait speaks in live in core; they are re-exported here so that
// `toolsmith_store::X` keeps working for the store's users.
pub use toolsmith_core::agent::{
    AgentInsert, AgentRecord, AgentRunRecord, AgentRunStatus, AgentRunStep, AgentUpdate,
    AgentUsageQuery, AgentUsageRow, AgentVersionRecord, RunAdmission,
};
pub use toolsmith_core::agent_session::{
    SessionKind, SessionMessage, SessionQuery, SessionRecord, SessionStatus, SpawnOutcome,
};
pub use toolsmith_core::data::{
    DataRecord, PutOutcome, RecordHit, RecordOrder, RecordQuery, RecordScope, RecordStats,
    RecordTally,
};
pub use toolsmith_core::delegation::{
    AgentLinkRecord, DelegationAdmission, DelegationQuery, DelegationRecord, DelegationStatus,
    HandoffRoute, LinkDirection,
};
pub use toolsmith_core::governance::{
    ApiTokenRecord, ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, AuditQuery,
    AuditRecord, LimitOutcome, LimitRequest, RateBucketSpend, SlotRequest, StoredPolicy,
};
pub use toolsmith_core::mcp_bridge::{
    AccessRequestRecord, AccessRequestStatus, GrantSubject, McpGrantRecord, McpServerRecord,
};
pub use toolsmith_core::organization::{MemberWrite, OrgMemberRecord, OrgRole, OrganizationRecord};
pub use toolsmith_core::prompt::{PromptRecord, PromptUpdate, PromptVersionRecord};
pub use toolsmith_core::query::{
    ConfigDependencyChanges, ConfigServiceEntries, ExecutionSample, SealedSample, SealedValue,
    ServerExecutionSample, ToolMove, ToolPage, ToolQuery, ToolStats,
};
pub use toolsmith_core::tool_task::{ToolTaskRecord, ToolTaskStatus};
pub use toolsmith_core::vector::{VectorCollectionRecord, VectorHit, VectorItem, VectorQuery};

/// Rate-limit buckets and concurrency slots kept in the database, so that several instances
/// on one database enforce one limit between them. Each [`SharedLimits::take_limits`] is one
/// round trip and one atomic step, on the database's clock (instances' clocks never meet).
/// The rows are transient counters, not data: dropping them all resets the limits.
#[async_trait]
pub trait SharedLimits: Send + Sync + 'static {
    /// Spends one token of every bucket of the request, or of none of them (and says which
    /// was empty and for how long), then, if asked, takes one of the user's slots: a lease of
    /// `ttl` that [`SharedLimits::renew_slots`] extends and [`SharedLimits::release_slot`] ends.
    async fn take_limits(&self, request: &LimitRequest) -> Result<LimitOutcome, StoreError>;

    /// Gives a slot back (nothing if it is gone already).
    async fn release_slot(&self, lease: i64) -> Result<(), StoreError>;

    /// Extends the given slots (the ones its instance still holds: it is alive) to `ttl` from
    /// now; how many were still there. A slot nobody renews lapses after its `ttl`, so the
    /// slots of an instance that died, or a lease whose answer was lost, free themselves.
    async fn renew_slots(
        &self,
        leases: &[i64],
        ttl: std::time::Duration,
    ) -> Result<u64, StoreError>;

    /// Deletes the buckets that are full again (a full bucket is the same as none) and the
    /// lapsed slots; how many rows went.
    async fn sweep_limits(&self) -> Result<u64, StoreError>;
}

/// The whole store: every area's trait, and what concerns the backend as a whole. Callers hold
/// an `Arc<dyn Store>`; the methods of the area traits are callable on it directly (a trait
/// object has its supertraits' methods), while code generic over a backend, or holding a
/// concrete [`SqliteStore`] or [`PgStore`], imports the area trait it calls.
///
/// The areas, one trait each, mirror the contract suite's topics (`contract/`) and each
/// backend's modules (`sqlite/`, `postgres/`), where each backend implements them:
/// [`ToolStore`] (custom tools, their versions and executions), [`GovernanceStore`] (API
/// tokens, approvals, the audit log, the stored policy), [`ConfigStore`] (the Config Center),
/// [`RecordStore`] (the agents' own records), [`McpStore`] (the MCP bridge's registry) and
/// [`TaskStore`] (tool calls run on as tasks), [`AgentStore`] (agents Toolsmith runs) and
/// [`PromptStore`] (prompts made at runtime).
/// Rate limits shared between instances are [`SharedLimits`], which only PostgreSQL has.
#[async_trait]
pub trait Store:
    ToolStore
    + GovernanceStore
    + ConfigStore
    + RecordStore
    + McpStore
    + TaskStore
    + AgentStore
    + PromptStore
    + SessionStore
    + DelegationStore
    + VectorStore
    + OrgStore
    + Send
    + Sync
    + 'static
{
    /// Checks that the backend answers (for readiness probes).
    async fn ping(&self) -> Result<(), StoreError>;

    /// Committed changes of *other* processes sharing this store, pushed as they commit (this
    /// handle's own changes are left out), with a [`FeedEvent::Resync`] first and after every
    /// reconnection. `None` when the backend cannot push changes (SQLite): poll
    /// [`ToolStore::tools_fingerprint`] instead.
    fn subscribe_changes(&self) -> Option<tokio::sync::mpsc::Receiver<FeedEvent>> {
        None
    }

    /// Tells the other processes sharing this store of a change this process committed
    /// outside the writes that announce themselves (the user-defined resources kept in the
    /// record store: [`ChangeKind::Resource`]); they get it from [`Store::subscribe_changes`].
    /// Nothing to do where no change is pushed (SQLite). A failed notice is the caller's to
    /// log: the write stands, and other processes catch up at their next resync.
    async fn announce_change(
        &self,
        _kind: ChangeKind,
        _id: &str,
        _owner: &str,
    ) -> Result<(), StoreError> {
        Ok(())
    }

    /// The rate-limit and concurrency counters every process on this store shares
    /// (PostgreSQL). `None` when one process is all there is (SQLite): the service keeps its
    /// counters in memory.
    fn shared_limits(self: std::sync::Arc<Self>) -> Option<std::sync::Arc<dyn SharedLimits>> {
        None
    }
}

/// Custom tools, every version of their code and parameters, and every execution of them.
#[async_trait]
pub trait ToolStore: Send + Sync + 'static {
    /// Inserts a new tool and its first history row. The name must be free for the owner
    /// ([`StoreError::NameTaken`] otherwise). The returned record is what was stored: its
    /// `revision` may be raised above the one given so that it is higher than any revision an
    /// earlier, deleted tool of the same owner and name ever had (a stale `expectedRevision`
    /// can then never match the new tool).
    async fn insert_tool(&self, tool: CustomToolRecord) -> Result<CustomToolRecord, StoreError>;

    /// [`ToolStore::insert_tool`], but only while the owner has fewer than `max_per_owner` tools
    /// ([`StoreError::ToolLimit`] otherwise). The count and the insert are one atomic step:
    /// concurrent inserts, from any number of processes sharing the store, never exceed it.
    async fn insert_tool_limited(
        &self,
        tool: CustomToolRecord,
        max_per_owner: u64,
    ) -> Result<CustomToolRecord, StoreError>;

    async fn get_tool(&self, owner: &str, id: &str)
    -> Result<Option<CustomToolRecord>, StoreError>;

    async fn get_tool_by_name(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<CustomToolRecord>, StoreError>;

    /// The tool with id `id`, whoever owns it (ids are unique across owners): only for an
    /// admin's decision on another user's pending tool, never for a caller's own lookups.
    async fn get_tool_of_any_owner(&self, id: &str)
    -> Result<Option<CustomToolRecord>, StoreError>;

    /// Tools matching the query, ordered by name.
    async fn list_tools(&self, query: &ToolQuery) -> Result<ToolPage, StoreError>;

    /// Replaces the definition fields of a stored tool (everything but id, owner, created_at,
    /// usage_count and last_used_at) if its stored revision is `expected_revision`;
    /// [`StoreError::RevisionConflict`] otherwise. When `tool.version` differs from the stored
    /// version, a history row for the new version is appended in the same transaction.
    async fn update_tool(
        &self,
        tool: &CustomToolRecord,
        expected_revision: i64,
    ) -> Result<(), StoreError>;

    /// Deletes a tool (and its history) if its stored revision is `expected_revision`.
    async fn delete_tool(
        &self,
        owner: &str,
        id: &str,
        expected_revision: i64,
    ) -> Result<(), StoreError>;

    /// Moves a tool to another owner, with its versions (their code replaced by
    /// [`ToolMove::version_codes`]), in one transaction: only while it is `from`'s at
    /// `expected_revision` ([`StoreError::NotFound`], [`StoreError::RevisionConflict`]), its
    /// name is free at `to` ([`StoreError::NameTaken`]) and `to` has fewer than
    /// `max_per_owner` tools ([`StoreError::ToolLimit`]). The tool's revision goes up (above
    /// any a tool of that name ever had at `to`), its name is retired at `from`; its
    /// executions stay with `from` as history. The tool as stored after.
    async fn move_tool(&self, change: &ToolMove) -> Result<CustomToolRecord, StoreError>;

    async fn count_tools(&self, owner: &str) -> Result<u64, StoreError>;

    async fn tool_stats(&self, owner: &str) -> Result<ToolStats, StoreError>;

    /// Every active tool of every owner (to fill the registry at start).
    async fn active_tools(&self) -> Result<Vec<CustomToolRecord>, StoreError>;

    /// Counts one execution: `usage_count + 1`, `last_used_at = at`. Does not change the revision.
    async fn record_usage(
        &self,
        owner: &str,
        id: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError>;

    /// Every stored version of a tool, newest first.
    async fn list_versions(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Vec<ToolVersionRecord>, StoreError>;

    async fn get_version(
        &self,
        owner: &str,
        id: &str,
        version: i64,
    ) -> Result<Option<ToolVersionRecord>, StoreError>;

    async fn record_execution(&self, execution: &ExecutionRecord) -> Result<(), StoreError>;

    /// Records a batch of finished executions in one transaction: every execution row, and for
    /// each tool still stored, `usage_count + n` and `last_used_at` = the latest of the batch
    /// (never moving backwards), counting only executions that ran
    /// ([`ExecutionStatus::ran`](toolsmith_core::ExecutionStatus::ran): not the refused ones). A tool deleted meanwhile keeps its execution rows and is
    /// otherwise skipped. Built-in and bridged calls (`source` other than `custom`) are rows
    /// only. All of the batch is committed, or none of it.
    async fn record_executions(&self, batch: &[ExecutionRecord]) -> Result<(), StoreError>;

    /// Recent executions of one owner, newest first, optionally of one tool, of one agent
    /// (the calls that named it) and of one source (custom, built-in or bridged).
    async fn list_executions(
        &self,
        owner: &str,
        tool_id: Option<&str>,
        agent_id: Option<&str>,
        source: Option<toolsmith_core::ExecutionSource>,
        limit: u32,
    ) -> Result<Vec<ExecutionRecord>, StoreError>;

    /// The owner's executions since `since`, newest first, at most `limit`, optionally of one
    /// tool: the raw material of execution analytics.
    async fn execution_samples(
        &self,
        owner: &str,
        tool_id: Option<&str>,
        since: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ExecutionSample>, StoreError>;

    /// Every owner's executions since `since`, newest first, at most `limit`, with their owner
    /// and agent: the raw material of the server-wide analytics (an admin's view).
    async fn server_execution_samples(
        &self,
        since: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ServerExecutionSample>, StoreError>;

    /// Deletes every execution row older than `before` (retention); the number removed.
    /// Usage counters on the tools are kept.
    async fn prune_executions(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;

    /// A value that changes whenever any custom tool of any owner is created, changed or
    /// deleted — by this process or another one sharing the store. Cheap enough to poll.
    async fn tools_fingerprint(&self) -> Result<String, StoreError>;
}

/// Governance: API tokens, approvals of executions (and their `allow_always` grants), the
/// audit log and the one stored policy document.
#[async_trait]
pub trait GovernanceStore: Send + Sync + 'static {
    async fn insert_token(&self, token: &ApiTokenRecord) -> Result<(), StoreError>;

    /// The token whose text hashes to `token_hash`, if any.
    async fn find_token(&self, token_hash: &str) -> Result<Option<ApiTokenRecord>, StoreError>;

    /// Every token, oldest first.
    async fn list_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError>;

    /// Deletes a token by id. Returns whether it existed.
    async fn delete_token(&self, id: &str) -> Result<bool, StoreError>;

    /// Marks a token as used now (best effort, for `list_tokens`).
    async fn touch_token(&self, id: &str, at: DateTime<Utc>) -> Result<(), StoreError>;

    async fn insert_approval(&self, approval: &ApprovalRecord) -> Result<(), StoreError>;

    async fn get_approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError>;

    /// Approvals, newest first.
    async fn list_approvals(
        &self,
        query: &ApprovalQuery,
        now: DateTime<Utc>,
    ) -> Result<Vec<ApprovalRecord>, StoreError>;

    /// The approval already waiting for exactly the call `probe` describes (owner, tool key,
    /// caller, arguments hash), if any.
    async fn find_pending_approval(
        &self,
        probe: &ApprovalRecord,
        now: DateTime<Utc>,
    ) -> Result<Option<ApprovalRecord>, StoreError>;

    /// The approval a person denied for exactly the call `probe` describes, while it would
    /// still be in its time (`expires_at` after `now`): a denial is final for its call.
    async fn find_denied_approval(
        &self,
        probe: &ApprovalRecord,
        now: DateTime<Utc>,
    ) -> Result<Option<ApprovalRecord>, StoreError>;

    /// Decides a pending, unexpired approval; `None` if it is not pending (any more). An
    /// `allow_always` decision also stores the grant for the tool and caller, atomically.
    async fn decide_approval(
        &self,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ApprovalRecord>, StoreError>;

    /// Uses up one allowed (`allow_once`) approval of exactly the call `probe` describes.
    async fn consume_allowed_approval(
        &self,
        probe: &ApprovalRecord,
    ) -> Result<Option<String>, StoreError>;

    /// Whether `caller` holds an `allow_always` grant for the tool.
    async fn has_approval_grant(
        &self,
        owner: &str,
        tool_key: &str,
        caller: &str,
    ) -> Result<bool, StoreError>;

    /// Removes every grant of a tool and expires its approvals still pending or allowed but
    /// unused (asked for code that changed); how many grants went.
    async fn revoke_approval_grants(&self, owner: &str, tool_key: &str) -> Result<u64, StoreError>;

    /// Deletes every approval created before `before` (decided, used or long expired by then;
    /// `allow_always` grants are kept); the number removed.
    async fn prune_approvals(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;

    /// How many approvals are waiting for a decision now (every owner).
    async fn count_pending_approvals(&self, now: DateTime<Utc>) -> Result<u64, StoreError>;

    /// Appends to the audit log; the entry's id.
    async fn insert_audit(&self, entry: &AuditRecord) -> Result<i64, StoreError>;

    /// Audit entries, newest first.
    async fn list_audit(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, StoreError>;

    /// The stored policy document, if one was stored.
    async fn get_policy(&self) -> Result<Option<StoredPolicy>, StoreError>;

    /// Stores the policy document if the stored revision is `expected_revision` (0 when none is
    /// stored; `None` skips the check). `Ok(Err(actual))` on a revision conflict.
    async fn put_policy(
        &self,
        document: &serde_json::Value,
        expected_revision: Option<i64>,
        updated_by: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<StoredPolicy, i64>, StoreError>;

    /// Removes the stored policy; whether there was one.
    async fn delete_policy(&self) -> Result<bool, StoreError>;
}

/// The Config Center: each owner's services and their entries.
///
/// Every method is scoped to one owner: a service or entry of another owner is "not found".
/// The store never sees a plaintext secret: secret values arrive sealed in `StoredValue::Secret`.
/// Records are stored as given (validation is the caller's: `ConfigServiceRecord::validate`,
/// `ConfigEntryRecord::validate`); timestamps are kept to the microsecond.
#[async_trait]
pub trait ConfigStore: Send + Sync + 'static {
    /// has one of that name). Returns the record as stored.
    async fn create_config_service(
        &self,
        service: ConfigServiceRecord,
    ) -> Result<ConfigServiceRecord, StoreError>;

    async fn get_config_service(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<ConfigServiceRecord>, StoreError>;

    async fn get_config_service_by_name(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<ConfigServiceRecord>, StoreError>;

    /// Every service of `owner`, ordered by name.
    async fn list_config_services(
        &self,
        owner: &str,
    ) -> Result<Vec<ConfigServiceRecord>, StoreError>;

    /// Replaces a service's fields (all but `id`, `owner`, `created_at`) if its stored revision
    /// is `expected_revision` ([`StoreError::ConfigRevisionConflict`] otherwise), storing
    /// revision `expected_revision + 1`. Renaming onto a taken name gives
    /// [`StoreError::ConfigServiceNameTaken`]. Returns the record as stored.
    async fn update_config_service(
        &self,
        service: &ConfigServiceRecord,
        expected_revision: i64,
    ) -> Result<ConfigServiceRecord, StoreError>;

    /// Deletes a service and all its entries, if its revision is `expected_revision` (when
    /// given). [`StoreError::ConfigServiceNotFound`] when there is none.
    async fn delete_config_service(
        &self,
        owner: &str,
        id: &str,
        expected_revision: Option<i64>,
    ) -> Result<(), StoreError>;

    /// Inserts an entry into one of `owner`'s services. The first entry of a service becomes
    /// its default whatever `is_default` says; a later entry with `is_default` takes the
    /// default over. Errors: [`StoreError::ConfigServiceNotFound`],
    /// [`StoreError::ConfigEntryLabelTaken`], [`StoreError::ConfigSingleEntry`] (a second entry
    /// for a service whose `multi_entry` is off).
    async fn create_config_entry(
        &self,
        owner: &str,
        entry: ConfigEntryRecord,
    ) -> Result<ConfigEntryRecord, StoreError>;

    async fn get_config_entry(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<ConfigEntryRecord>, StoreError>;

    /// The entries of one service: the default first, then oldest first.
    /// [`StoreError::ConfigServiceNotFound`] when the owner has no such service.
    async fn list_config_entries(
        &self,
        owner: &str,
        service_id: &str,
    ) -> Result<Vec<ConfigEntryRecord>, StoreError>;

    /// Replaces an entry's `label`, `values` and `updated_at` if its stored revision is
    /// `expected_revision`, storing revision `expected_revision + 1`. `is_default` is left as
    /// stored (see [`ConfigStore::set_default_config_entry`]); `service_id` must be the stored one
    /// (entries never move, since their secrets are bound to the service).
    async fn update_config_entry(
        &self,
        owner: &str,
        entry: &ConfigEntryRecord,
        expected_revision: i64,
    ) -> Result<ConfigEntryRecord, StoreError>;

    /// Deletes an entry (if its revision is `expected_revision`, when given). When it was the
    /// default, the oldest remaining entry becomes the default.
    async fn delete_config_entry(
        &self,
        owner: &str,
        id: &str,
        expected_revision: Option<i64>,
    ) -> Result<(), StoreError>;

    /// Makes an entry its service's default (the previous default loses the flag; each entry
    /// whose flag changes gets revision + 1). Returns the entry as stored.
    async fn set_default_config_entry(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<ConfigEntryRecord, StoreError>;

    /// How many sealed secret values the store holds across all owners, and up to `limit` of
    /// them with their places: what start-up checks the master key against, so a lost or
    /// wrong key is refused instead of being replaced.
    async fn sealed_values(&self, limit: u32) -> Result<SealedSample, StoreError>;

    /// Every service of `owner` with its entries, read in one consistent snapshot (what a tool
    /// execution's `utils.getApiKey` & co. and the `missing_config` listing read).
    async fn config_snapshot(&self, owner: &str) -> Result<Vec<ConfigServiceEntries>, StoreError>;

    /// Makes the Config Center match what tool `tool_name` of `owner` declares, in one
    /// transaction (call it on tool create and update with its declared services, and on
    /// delete with none):
    /// - each declared service that is missing is created from its template (as given, with
    ///   `registered_by = [tool_name]` and `auto_registered = true`); one that exists keeps its
    ///   definition and gains `tool_name` in `registered_by`;
    /// - every other service of the owner listing `tool_name` loses it; an auto-registered
    ///   service left with no tool and no entries is deleted.
    ///
    /// Each changed service gets revision + 1. Templates must be of `owner`.
    async fn sync_config_dependencies(
        &self,
        owner: &str,
        tool_name: &str,
        declared: Vec<ConfigServiceRecord>,
    ) -> Result<ConfigDependencyChanges, StoreError>;
}

/// The agents' own records (memory, tasks, notes …), every family in one table.
///
/// Every method but the whole-owner and across-owner ones is scoped to one owner and agent
/// ([`RecordScope`]): a record of another scope is "not found". Times are kept to the
/// microsecond.
#[async_trait]
pub trait RecordStore: Send + Sync + 'static {
    /// Inserts a record, unless one with the same `dedup_key` is in its scope and collection
    /// already ([`PutOutcome::Duplicate`], the stored one, unchanged), or the owner has
    /// `max_per_collection` records of the collection (across all their agents;
    /// [`StoreError::RecordLimit`]). The check and the insert are one atomic step, across
    /// every process sharing the store.
    async fn put_record(
        &self,
        record: DataRecord,
        max_per_collection: u64,
    ) -> Result<PutOutcome, StoreError>;

    /// Replaces a stored record's fields (all but `id`, `collection`, `owner`, `agent`,
    /// `dedup_key` and `created_at`); the record as stored, `None` when the scope has no such
    /// record.
    async fn update_record(&self, record: DataRecord) -> Result<Option<DataRecord>, StoreError>;

    async fn get_record(
        &self,
        scope: &RecordScope,
        collection: &str,
        id: &str,
    ) -> Result<Option<DataRecord>, StoreError>;

    /// Deletes a record; whether the scope had it.
    async fn delete_record(
        &self,
        scope: &RecordScope,
        collection: &str,
        id: &str,
    ) -> Result<bool, StoreError>;

    /// The records of one scope and collection that match the query, in its order; with
    /// `text`, only those matching a word of it, with their relevance.
    async fn query_records(&self, query: &RecordQuery) -> Result<Vec<RecordHit>, StoreError>;

    /// Counts of one scope's records of a collection.
    async fn record_stats(
        &self,
        scope: &RecordScope,
        collection: &str,
    ) -> Result<RecordStats, StoreError>;

    /// How many records one scope holds in a collection and the span of their creation times,
    /// without reading them (the count is kept by the store's triggers as records come and go).
    async fn record_tally(
        &self,
        scope: &RecordScope,
        collection: &str,
    ) -> Result<RecordTally, StoreError>;

    /// Deletes every record of one scope's collection (a custom table's rows); how many went.
    async fn delete_collection_records(
        &self,
        scope: &RecordScope,
        collection: &str,
    ) -> Result<u64, StoreError>;

    /// Every record of `owner` (all agents, all collections) with an id after `after`, in id
    /// order, at most `limit`: a person's data, page by page.
    async fn export_records(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<DataRecord>, StoreError>;

    /// Deletes every record of `owner` (all agents, all collections); how many went.
    async fn delete_owner_records(&self, owner: &str) -> Result<u64, StoreError>;

    // ----- Across owners: for the server's scheduler only, never reachable by a tool -----

    /// The records of `collection`, of every owner, whose `at` is set and not after
    /// `before`, earliest first, at most `limit`.
    async fn due_records(
        &self,
        collection: &str,
        before: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<DataRecord>, StoreError>;

    /// Sets a record's `document`, `kind`, `at` and `updated_at` only if its `at` is still
    /// `expected_at`: whether this call made the change. Of several processes claiming the
    /// same due record, exactly one succeeds.
    async fn claim_record(
        &self,
        record: DataRecord,
        expected_at: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// The records of one owner's `collection` made as any of its agents (or as none),
    /// soonest `at` first (records without one last, then by id), at most `limit` after
    /// `offset`. For a person's and an admin's view of every agent's scheduled tasks; no tool
    /// reaches it (a tool's scope is its caller's user and agent).
    async fn owner_collection_records(
        &self,
        owner: &str,
        collection: &str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<DataRecord>, StoreError>;
}

/// The MCP bridge: registered upstream servers, grants, access requests.
#[async_trait]
pub trait McpStore: Send + Sync + 'static {
    /// Every server registered through REST or the CLI, by name.
    async fn list_mcp_servers(&self) -> Result<Vec<McpServerRecord>, StoreError>;

    /// Stores a new server at revision 1; `false` (and nothing written) when the name is taken.
    async fn create_mcp_server(&self, server: &McpServerRecord) -> Result<bool, StoreError>;

    /// Replaces a server's `config`, `updated_at` and `updated_by` (revision + 1) if its stored
    /// revision is `expected_revision` (when given). `Err(None)`: no such server;
    /// `Err(Some(actual))`: a revision conflict.
    async fn update_mcp_server(
        &self,
        server: &McpServerRecord,
        expected_revision: Option<i64>,
    ) -> Result<Result<McpServerRecord, Option<i64>>, StoreError>;

    /// Removes a registered server; whether there was one. Its grants and requests stay (a
    /// server registered again under the name finds them).
    async fn delete_mcp_server(&self, name: &str) -> Result<bool, StoreError>;

    /// Every grant, by server, subject kind and subject.
    async fn list_mcp_grants(&self) -> Result<Vec<McpGrantRecord>, StoreError>;

    /// Writes the grant of its (server, subject kind, subject): created with the given id, or
    /// the existing one's fields replaced (its id and `created_at` stay). The grant as stored.
    async fn put_mcp_grant(&self, grant: &McpGrantRecord) -> Result<McpGrantRecord, StoreError>;

    /// Removes a grant by id; whether there was one.
    async fn delete_mcp_grant(&self, id: &str) -> Result<bool, StoreError>;

    async fn create_access_request(&self, request: &AccessRequestRecord) -> Result<(), StoreError>;

    /// Requests, newest first, optionally of one status.
    async fn list_access_requests(
        &self,
        status: Option<AccessRequestStatus>,
    ) -> Result<Vec<AccessRequestRecord>, StoreError>;

    /// Decides a pending request (a conditional update: of concurrent deciders exactly one
    /// wins); on approval the subject's grant for the server is created (from `new_grant`: its
    /// id, times and author) or widened ([`McpGrantRecord::widened`]) in the same transaction.
    /// The decided request, `None` when no request with that id is pending.
    async fn decide_access_request(
        &self,
        id: &str,
        approve: bool,
        decided_by: &str,
        now: DateTime<Utc>,
        new_grant: &McpGrantRecord,
    ) -> Result<Option<AccessRequestRecord>, StoreError>;
}

/// Tool tasks (`tool_tasks`): tool calls run on after their request was answered (MCP tasks,
/// REST's asynchronous execute), each with its status and, once ended, its result, until it
/// expires. A task belongs to one owner and agent (`None`: calls without an agent): every read
/// and cancel names them, so another's task id is simply not found. An expired task is never
/// returned and no longer counts as running, whether or not the sweeper deleted it yet.
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task unless its owner already has `max_running` tasks running (`working`
    /// or `input_required`, not expired at the task's `created_at`), counted in the insert's
    /// transaction (on PostgreSQL under a per-owner advisory lock, so instances cannot race
    /// past the cap). `false`, and nothing written, at the cap.
    async fn insert_tool_task(
        &self,
        task: &ToolTaskRecord,
        max_running: u32,
    ) -> Result<bool, StoreError>;

    /// The task `id` of `owner` and `agent`, unless it expired at `now`.
    async fn get_tool_task(
        &self,
        owner: &str,
        agent: Option<&str>,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ToolTaskRecord>, StoreError>;

    /// The tasks of `owner` and `agent` not expired at `now`, newest first.
    async fn list_tool_tasks(
        &self,
        owner: &str,
        agent: Option<&str>,
        now: DateTime<Utc>,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<ToolTaskRecord>, StoreError>;

    /// Moves a task that has not ended to `status` (with its message and, for an ended one,
    /// its result): a conditional update, so a task cancelled meanwhile stays cancelled. The
    /// task as stored after, `None` when no task `id` is still running.
    async fn update_tool_task(
        &self,
        id: &str,
        status: ToolTaskStatus,
        message: Option<&str>,
        result: Option<&serde_json::Value>,
        now: DateTime<Utc>,
    ) -> Result<Option<ToolTaskRecord>, StoreError>;

    /// Cancels the task `id` of `owner` and `agent` if it has not ended (status `cancelled`,
    /// `message`). The task as stored after — cancelled now, or ended before as it was —,
    /// `None` when there is no such task (or it expired at `now`).
    async fn cancel_tool_task(
        &self,
        owner: &str,
        agent: Option<&str>,
        id: &str,
        message: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ToolTaskRecord>, StoreError>;

    /// Of `ids`, those that are no longer running (ended, or gone): how the instance that
    /// runs a task learns that another cancelled it.
    async fn ended_tool_tasks(&self, ids: &[String]) -> Result<Vec<String>, StoreError>;

    /// Ends every task `instance` still runs as `failed` with `message` (the instance stops);
    /// how many.
    async fn fail_instance_tool_tasks(
        &self,
        instance: &str,
        message: &str,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError>;

    /// Deletes the tasks expired at `now`; how many.
    async fn sweep_tool_tasks(&self, now: DateTime<Utc>) -> Result<u64, StoreError>;
}

/// Agents Toolsmith runs (`agents`, `agent_versions`, `agent_runs`, `agent_run_steps`): their
/// definitions, owned by one user and kept at every revision, and their runs with each step.
/// Every read of a definition names its owner, and every read of a run its owner and the
/// caller's agent (`None`: a person), so another's id is simply not found.
#[async_trait]
pub trait AgentStore: Send + Sync + 'static {
    /// Stores a new agent and its first version; `false`, and nothing written, when its owner
    /// already has an agent of that name.
    async fn insert_agent(&self, agent: &AgentRecord) -> Result<bool, StoreError> {
        Ok(self.insert_agent_within(agent, u32::MAX).await? == AgentInsert::Inserted)
    }

    /// Stores a new agent and its first version unless its owner already has an agent of
    /// that name, or `max_per_owner` agents (counted in the insert's transaction, on
    /// PostgreSQL under a per-owner advisory lock, so the cap holds across instances).
    async fn insert_agent_within(
        &self,
        agent: &AgentRecord,
        max_per_owner: u32,
    ) -> Result<AgentInsert, StoreError>;

    /// Replaces the agent `agent.id` of `agent.owner` by `agent`, whose `revision` is the one
    /// after the stored one (a compare-and-swap in one transaction), and keeps the version.
    async fn update_agent(&self, agent: &AgentRecord) -> Result<AgentUpdate, StoreError>;

    /// The agent of `owner` whose id, or else name, is `id_or_name`.
    async fn get_agent(
        &self,
        owner: &str,
        id_or_name: &str,
    ) -> Result<Option<AgentRecord>, StoreError>;

    /// The agents of `owner`, by name.
    async fn list_agents(&self, owner: &str) -> Result<Vec<AgentRecord>, StoreError>;

    /// Deletes the agent `id` of `owner` and its versions (its runs stay, as a record of
    /// what ran) — with `revision`, only while it is at that revision (one conditional write,
    /// so a change made since it was read is never lost); whether it was deleted.
    async fn delete_agent(
        &self,
        owner: &str,
        id: &str,
        revision: Option<i64>,
    ) -> Result<bool, StoreError>;

    /// Every revision of the agent `id` of `owner`, oldest first (empty when it is not theirs).
    async fn agent_versions(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Vec<AgentVersionRecord>, StoreError>;

    /// Stores a new run unless its agent already has `max_running` runs not ended, counted
    /// in the insert's transaction (on PostgreSQL under a per-agent advisory lock). `false`,
    /// and nothing written, at the cap.
    async fn insert_agent_run(
        &self,
        run: &AgentRunRecord,
        max_running: u32,
    ) -> Result<bool, StoreError> {
        let admitted = self
            .insert_agent_run_within(run, max_running, u32::MAX)
            .await?;
        Ok(admitted == RunAdmission::Started)
    }

    /// Stores a new run unless its agent already has `max_running` runs not ended, or its
    /// owner `max_per_owner` across all their agents: both counted in the insert's
    /// transaction (on PostgreSQL under a per-owner advisory lock), so the caps hold across
    /// instances. Nothing is written at a cap.
    async fn insert_agent_run_within(
        &self,
        run: &AgentRunRecord,
        max_running: u32,
        max_per_owner: u32,
    ) -> Result<RunAdmission, StoreError>;

    /// Writes `run` over the stored run of its id if that has not ended: a conditional
    /// update, so a run cancelled meanwhile stays cancelled. Whether it was written.
    async fn update_agent_run(&self, run: &AgentRunRecord) -> Result<bool, StoreError>;

    /// Extends the lease of the run `id` held by `instance` to `until`, if it has not ended;
    /// whether it did (`false`: it ended, here or through another instance).
    async fn renew_agent_run_lease(
        &self,
        id: &str,
        instance: &str,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// Runs of every owner not ended whose lease ran out before `now` (their instance stopped
    /// renewing it), oldest lease first, at most 100: for [`AgentStore::end_lapsed_agent_run`].
    async fn lapsed_agent_runs(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Vec<AgentRunRecord>, StoreError>;

    /// Writes `run` (ended) over the stored run if that has not ended and its lease still ran
    /// out before `now` (so a run its instance renewed meanwhile goes on), and with it, in the
    /// same transaction, `step` (the end, naming the lost instance), so a reader who sees the
    /// run ended finds its last step; whether it was written.
    async fn end_lapsed_agent_run(
        &self,
        run: &AgentRunRecord,
        step: &AgentRunStep,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError>;

    /// The run `id` of `owner` started by `caller_agent`.
    async fn get_agent_run(
        &self,
        owner: &str,
        caller_agent: Option<&str>,
        id: &str,
    ) -> Result<Option<AgentRunRecord>, StoreError>;

    /// The status of run `id`, whoever's (how the instance running it learns of a cancel).
    async fn agent_run_status(&self, id: &str) -> Result<Option<AgentRunStatus>, StoreError>;

    /// The runs of `owner` started by `caller_agent` (of the agent `agent_id` when given),
    /// newest first.
    async fn list_agent_runs(
        &self,
        owner: &str,
        caller_agent: Option<&str>,
        agent_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<AgentRunRecord>, StoreError>;

    /// Cancels the run `id` of `owner` and `caller_agent` if it has not ended (status
    /// `cancelled`, `error` = `message`). The run as stored after — cancelled now, or ended
    /// before as it was —, `None` when there is no such run.
    async fn cancel_agent_run(
        &self,
        owner: &str,
        caller_agent: Option<&str>,
        id: &str,
        message: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<AgentRunRecord>, StoreError>;

    /// Appends a step to its run.
    async fn add_agent_run_step(&self, step: &AgentRunStep) -> Result<(), StoreError>;

    /// The steps of run `run_id`, in order (the caller checked the run is the reader's).
    async fn agent_run_steps(&self, run_id: &str) -> Result<Vec<AgentRunStep>, StoreError>;

    /// What the runs `query` names spent, one row per agent (by id), summed in the store.
    async fn agent_usage(&self, query: &AgentUsageQuery) -> Result<Vec<AgentUsageRow>, StoreError>;
}

/// Agents working together (spec 001 §7, §10): the links a person makes between two agents,
/// the delegations made over them, and sessions handed off to another agent.
#[async_trait]
pub trait DelegationStore: Send + Sync + 'static {
    /// Stores a new link; `false` when `owner` already links the two agents (either way).
    async fn insert_agent_link(&self, link: &AgentLinkRecord) -> Result<bool, StoreError>;

    /// The links of `owner`, oldest first.
    async fn list_agent_links(&self, owner: &str) -> Result<Vec<AgentLinkRecord>, StoreError>;

    /// Deletes the link `id` of `owner`; whether there was one.
    async fn delete_agent_link(&self, owner: &str, id: &str) -> Result<bool, StoreError>;

    /// Stores a new delegation unless its link already has `link_max` delegations running or
    /// its target `agent_max` (from every source), counted in the insert's transaction (on
    /// PostgreSQL under a per-owner advisory lock, so instances cannot race past either). A
    /// delegation whose run has ended counts no more, whatever its own row says.
    async fn insert_delegation_within(
        &self,
        delegation: &DelegationRecord,
        link_max: u32,
        agent_max: u32,
    ) -> Result<DelegationAdmission, StoreError>;

    /// Writes the status, run, result, error and time of `delegation` over the stored one if
    /// that is still running; whether it was written.
    async fn update_delegation(&self, delegation: &DelegationRecord) -> Result<bool, StoreError>;

    /// The delegation `id` of `owner`.
    async fn get_delegation(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<DelegationRecord>, StoreError>;

    /// The delegations of `owner` that `query` asks for, newest first.
    async fn list_delegations(
        &self,
        owner: &str,
        query: &DelegationQuery,
    ) -> Result<Vec<DelegationRecord>, StoreError>;

    /// The delegation whose target run is `run_id`, if one is.
    async fn delegation_of_run(
        &self,
        owner: &str,
        run_id: &str,
    ) -> Result<Option<DelegationRecord>, StoreError>;

    /// Stores (or replaces) the handoff route of its session.
    async fn put_handoff_route(&self, route: &HandoffRoute) -> Result<(), StoreError>;

    /// The route of `owner`'s session `session_id`, when it is handed off.
    async fn get_handoff_route(
        &self,
        owner: &str,
        session_id: &str,
    ) -> Result<Option<HandoffRoute>, StoreError>;

    /// The route of `owner` whose target session is `target_session`.
    async fn handoff_route_to(
        &self,
        owner: &str,
        target_session: &str,
    ) -> Result<Option<HandoffRoute>, StoreError>;

    /// Deletes the route of `owner`'s session `session_id`; whether there was one.
    async fn delete_handoff_route(&self, owner: &str, session_id: &str)
    -> Result<bool, StoreError>;

    /// The session of `owner` whose last run is `run_id` (its id and the agent identity that
    /// began it), if one is.
    async fn session_of_run(
        &self,
        owner: &str,
        run_id: &str,
    ) -> Result<Option<(String, Option<String>)>, StoreError>;
}

/// Sessions with agents Toolsmith runs, and subagents (spec 001 §2 "Sessions", §6): a session's
/// record and its messages, which are the model's history on its next run.
#[async_trait]
pub trait SessionStore: Send + Sync + 'static {
    /// Stores a new session (a conversation; a subagent goes through
    /// [`SessionStore::spawn_subagent`]).
    async fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError>;

    /// Stores a new subagent unless its owner already has `max_running` running subagents or
    /// its parent `max_children` running children, counted in the insert's transaction (on
    /// PostgreSQL under a per-owner advisory lock, so instances cannot race past either).
    async fn spawn_subagent(
        &self,
        session: &SessionRecord,
        max_running: u32,
        max_children: u32,
    ) -> Result<SpawnOutcome, StoreError>;

    /// The session `id` of `owner` made by `caller_agent`.
    async fn get_session(
        &self,
        owner: &str,
        caller_agent: Option<&str>,
        id: &str,
    ) -> Result<Option<SessionRecord>, StoreError>;

    /// The sessions of `owner` made by `caller_agent` that `query` asks for, newest change
    /// first.
    async fn list_sessions(
        &self,
        owner: &str,
        caller_agent: Option<&str>,
        query: &SessionQuery,
    ) -> Result<Vec<SessionRecord>, StoreError>;

    /// Writes the status, result, error, last run and time of `session` over the stored one if
    /// that has not ended (a conditional update, so a cancelled subagent stays cancelled);
    /// whether it was written.
    async fn update_session(&self, session: &SessionRecord) -> Result<bool, StoreError>;

    /// Archives the ended subagents of `owner` last changed before `before`; how many.
    async fn archive_sessions(&self, owner: &str, before: DateTime<Utc>)
    -> Result<u64, StoreError>;

    /// Appends `messages` to the session `session_id` (numbered after its last, their own
    /// `seq` ignored), then deletes its oldest messages until at most `max_messages` of at
    /// most `max_bytes` in all remain — the newest is always kept. The session as stored
    /// after, `None` when there is no such session.
    async fn append_session_messages(
        &self,
        session_id: &str,
        messages: &[SessionMessage],
        max_messages: u32,
        max_bytes: u64,
    ) -> Result<Option<SessionRecord>, StoreError>;

    /// The last `limit` messages of the session `session_id`, oldest first (the caller checked
    /// the session is the reader's).
    async fn session_messages(
        &self,
        session_id: &str,
        limit: u32,
    ) -> Result<Vec<SessionMessage>, StoreError>;

    /// Every session and subagent of `owner` still running (whoever began it), newest change
    /// first: what a run that ended elsewhere may have left running. Bounded by the caps on
    /// running runs, not by a listing's window.
    async fn running_sessions(&self, owner: &str) -> Result<Vec<SessionRecord>, StoreError>;
}

/// Prompts made at runtime (`prompts`, `prompt_versions`): owned by one user, every revision of
/// a definition kept. Every read names its owner, so another's id or name is simply not found.
/// On PostgreSQL every write sends a [`ChangeKind::Prompt`] notice inside its transaction.
#[async_trait]
pub trait PromptStore: Send + Sync + 'static {
    /// Stores a new prompt and its first version; `false`, and nothing written, when its owner
    /// already has a prompt of that name.
    async fn insert_prompt(&self, prompt: &PromptRecord) -> Result<bool, StoreError>;

    /// Writes `prompt` over the stored prompt of its id and owner, whose `revision` must be the
    /// one after the stored one (a compare-and-swap in one transaction); with `new_version`,
    /// keeps its definition as a version too (a switch on or off is not one).
    async fn update_prompt(
        &self,
        prompt: &PromptRecord,
        new_version: bool,
    ) -> Result<PromptUpdate, StoreError>;

    /// The prompt of `owner` whose id, or else name, is `id_or_name`.
    async fn get_prompt(
        &self,
        owner: &str,
        id_or_name: &str,
    ) -> Result<Option<PromptRecord>, StoreError>;

    /// Every prompt of `owner` (enabled or not, of every agent scope), by name.
    async fn list_prompts(&self, owner: &str) -> Result<Vec<PromptRecord>, StoreError>;

    /// Deletes the prompt `id` of `owner` and its versions; whether there was one.
    async fn delete_prompt(&self, owner: &str, id: &str) -> Result<bool, StoreError>;

    /// Every revision of the prompt `id` of `owner`, oldest first (empty when it is not theirs).
    async fn prompt_versions(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Vec<PromptVersionRecord>, StoreError>;

    /// Per owner, a fingerprint of their prompts (how many, the sum of their revisions and the
    /// newest change), by owner: what changes whenever a prompt of theirs does.
    async fn prompt_fingerprints(&self) -> Result<Vec<(String, String)>, StoreError>;
}

/// Organisations and their members (`organizations`, `organization_members`; issue 41). An
/// organisation owns things as a user does (its id in their `owner` column), so this area only
/// says who belongs to which organisation with which role. A change of membership never leaves
/// an organisation without an owner (checked inside the write's transaction; PostgreSQL locks
/// the organisation's row).
#[async_trait]
pub trait OrgStore: Send + Sync + 'static {
    /// Stores a new organisation with `creator` as its first owner, in one transaction;
    /// `false`, and nothing written, when its name (or id) is taken.
    async fn insert_organization(
        &self,
        org: &OrganizationRecord,
        creator: &OrgMemberRecord,
    ) -> Result<bool, StoreError>;

    /// The organisation whose id, or else name, is `id_or_name`.
    async fn get_organization(
        &self,
        id_or_name: &str,
    ) -> Result<Option<OrganizationRecord>, StoreError>;

    /// Sets the display name of organisation `id`; the organisation after, `None` when gone.
    async fn rename_organization(
        &self,
        id: &str,
        display_name: &str,
    ) -> Result<Option<OrganizationRecord>, StoreError>;

    /// Deletes organisation `id` and its memberships (not what it owns); whether there was one.
    async fn delete_organization(&self, id: &str) -> Result<bool, StoreError>;

    /// The organisations `user_id` is a member of, with their role, by name.
    async fn user_organizations(
        &self,
        user_id: &str,
    ) -> Result<Vec<(OrganizationRecord, OrgRole)>, StoreError>;

    /// The members of organisation `org_id`, by user id.
    async fn org_members(&self, org_id: &str) -> Result<Vec<OrgMemberRecord>, StoreError>;

    /// The role of `user_id` in organisation `org_id`, `None` when not a member.
    async fn org_role(&self, org_id: &str, user_id: &str) -> Result<Option<OrgRole>, StoreError>;

    /// Adds a member or sets a member's role (`added_at` kept for a member); refused
    /// ([`MemberWrite::LastOwner`]) when it would demote the last owner, and
    /// [`MemberWrite::NotMember`] when the organisation is gone.
    async fn put_org_member(&self, member: &OrgMemberRecord) -> Result<MemberWrite, StoreError>;

    /// Removes a member; refused ([`MemberWrite::LastOwner`]) for the last owner.
    async fn remove_org_member(
        &self,
        org_id: &str,
        user_id: &str,
    ) -> Result<MemberWrite, StoreError>;
}

/// Vector search's collections (003 §17), each owner's own, with a real vector index on each
/// backend: sqlite-vec's `vec0` table per collection on SQLite, a pgvector HNSW index per
/// collection on PostgreSQL (`CREATE EXTENSION vector` when the first collection is made).
#[async_trait]
pub trait VectorStore: Send + Sync + 'static {
    /// Creates the collection and its index while the owner has fewer than `max_per_owner`;
    /// `false` when the owner already has one of that name.
    async fn create_vector_collection(
        &self,
        collection: &VectorCollectionRecord,
        max_per_owner: u64,
    ) -> Result<bool, StoreError>;

    /// The owner's collections by name, each with its item count.
    async fn list_vector_collections(
        &self,
        owner: &str,
    ) -> Result<Vec<VectorCollectionRecord>, StoreError>;

    /// The owner's collection `name`, with its item count.
    async fn get_vector_collection(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<VectorCollectionRecord>, StoreError>;

    /// Inserts or replaces (by id) items of the owner's collection `name`, whose embeddings
    /// the caller checked against its dimensions; the collection's count after, or `None` when
    /// it does not exist. [`StoreError::RecordLimit`] when the count would pass `max_items`.
    async fn upsert_vectors(
        &self,
        owner: &str,
        name: &str,
        items: &[VectorItem],
        max_items: u64,
    ) -> Result<Option<u64>, StoreError>;

    /// Deletes the items with these ids; how many went (`None`: no such collection).
    async fn delete_vectors(
        &self,
        owner: &str,
        name: &str,
        ids: &[String],
    ) -> Result<Option<u64>, StoreError>;

    /// The `top_k` items nearest the query's embedding, best first (`None`: no such
    /// collection).
    async fn search_vectors(
        &self,
        query: &VectorQuery,
    ) -> Result<Option<Vec<VectorHit>>, StoreError>;
}
