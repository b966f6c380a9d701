//! [`SqliteStore`]: the embedded backend, one SQLite file in WAL mode.
//!
//! rusqlite is synchronous, so every operation runs on tokio's blocking pool. Writes go through
//! one writer connection (behind an async mutex: writers queue without occupying threads);
//! reads use a small pool of reader connections, which WAL lets run while a write is under way.
//!
//! Durability: WAL with `synchronous = NORMAL`. Every write is committed to the WAL before the
//! call returns, so killing the process at any point loses no acknowledged write. A power loss
//! or OS crash may lose the last commits before the next checkpoint (never corrupt the file).

mod analytics;
mod config;
#[cfg(test)]
mod config_tests;
mod copy;
mod governance;
mod mcp;
mod queries;
mod records;
mod rows;
mod schema;
#[cfg(test)]
mod tests;
mod tokens;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use rusqlite::Connection;
use tokio::sync::Semaphore;
use toolsmith_core::mcp_bridge::{
    AccessRequestRecord, AccessRequestStatus, McpGrantRecord, McpServerRecord,
};
use toolsmith_core::{
    ConfigEntryRecord, ConfigServiceRecord, CustomToolRecord, ExecutionRecord, ToolVersionRecord,
};

use crate::{
    ApiTokenRecord, ApprovalDecision, ApprovalQuery, ApprovalRecord, AuditQuery, AuditRecord,
    ConfigDependencyChanges, ConfigServiceEntries, DataRecord, ExecutionSample, PutOutcome,
    RecordHit, RecordQuery, RecordScope, RecordStats, RecordTally, SealedSample, Store, StoreError,
    StoredPolicy, ToolPage, ToolQuery, ToolStats,
};

/// At most this many reads run at once (each on its own connection).
const MAX_READERS: usize = 4;

/// The embedded SQLite backend. Cheap to share behind an `Arc`; dropping the last handle closes
/// the file.
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    shown: String,
    writer: Arc<tokio::sync::Mutex<Connection>>,
    readers: Mutex<Vec<Connection>>,
    read_permits: Arc<Semaphore>,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if needed, with its parent directories) the database file at `path` and
    /// brings its schema up to date.
    ///
    /// An existing file is never replaced or truncated: a file that is not a SQLite database,
    /// is damaged, or belongs to another program gives [`StoreError::Corrupt`]; a schema newer
    /// than this build knows gives [`StoreError::UnknownSchema`]. Both leave the file as it was.
    pub async fn open(path: &Path) -> Result<SqliteStore, StoreError> {
        let path = path.to_path_buf();
        blocking(move || {
            let writer = schema::open_checked(&path)?;
            let reader = schema::open_reader(&path)?;
            Ok(SqliteStore {
                inner: Arc::new(Inner {
                    shown: path.display().to_string(),
                    path,
                    writer: Arc::new(tokio::sync::Mutex::new(writer)),
                    readers: Mutex::new(vec![reader]),
                    read_permits: Arc::new(Semaphore::new(MAX_READERS)),
                }),
            })
        })
        .await
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// Runs `f` on the writer connection.
    async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let mut conn = Arc::clone(&self.inner.writer).lock_owned().await;
        let shown = self.inner.shown.clone();
        blocking(move || f(&mut conn).map_err(|e| rows::with_path(e, &shown))).await
    }

    /// Runs `f` on a reader connection.
    async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let permit = Arc::clone(&self.inner.read_permits)
            .acquire_owned()
            .await
            .map_err(|e| StoreError::Backend(Box::new(e)))?;
        let inner = Arc::clone(&self.inner);
        blocking(move || {
            let _permit = permit;
            let mut conn = inner.take_reader()?;
            let res = f(&mut conn).map_err(|e| rows::with_path(e, &inner.shown));
            inner.put_reader(conn);
            res
        })
        .await
    }
}

impl Inner {
    fn take_reader(&self) -> Result<Connection, StoreError> {
        let pooled = self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match pooled {
            Some(conn) => Ok(conn),
            None => schema::open_reader(&self.path),
        }
    }

    fn put_reader(&self, conn: Connection) {
        // A connection left inside a transaction (cannot happen; transactions roll back on
        // drop) would pin an old snapshot: close it instead.
        if !conn.is_autocommit() {
            return;
        }
        let mut readers = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if readers.len() < MAX_READERS {
            readers.push(conn);
        }
    }
}

/// Runs blocking database work off the async threads.
async fn blocking<T, F>(f: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, StoreError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError::Backend(Box::new(e)))?
}

/// What an argument of a [`Store`] method becomes to cross onto the blocking connection thread:
/// borrowed values are copied into owned ones (`&str` into a `String`, `&[T]` into a `Vec<T>`),
/// owned ones move as they are.
trait Carry {
    type Carried: Send + 'static;
    fn carry(self) -> Self::Carried;
}

impl<T: ToOwned + ?Sized> Carry for &T
where
    T::Owned: Send + 'static,
{
    type Carried = T::Owned;
    fn carry(self) -> T::Owned {
        self.to_owned()
    }
}

impl Carry for Option<&str> {
    type Carried = Option<String>;
    fn carry(self) -> Option<String> {
        self.map(str::to_owned)
    }
}

/// Owned arguments move onto the connection thread unchanged.
macro_rules! carried_as_is {
    ($($ty:ty),* $(,)?) => {$(
        impl Carry for $ty {
            type Carried = $ty;
            fn carry(self) -> $ty {
                self
            }
        }
    )*};
}

carried_as_is!(
    bool,
    i64,
    u32,
    u64,
    Option<AccessRequestStatus>,
    Option<i64>,
    DateTime<Utc>,
    ApprovalDecision,
    CustomToolRecord,
    ConfigServiceRecord,
    ConfigEntryRecord,
    Vec<ConfigServiceRecord>,
    DataRecord,
);

/// Writes the `Store` impl: each method [`Carry`]s its arguments onto the blocking pool and runs
/// one function of this backend's modules there, on a reader connection (`read`) or the writer
/// (`write`), with the connection as its first argument. Every method of this backend is one
/// such call, so the rules live in those functions and this impl holds no logic of its own.
macro_rules! store_on_connections {
    ($(
        $mode:ident fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
            = $($func:ident)::+($($call:expr),* $(,)?);
    )*) => {
        #[async_trait]
        impl Store for SqliteStore {
            $(
                async fn $name(&self, $($arg: $ty),*) -> Result<$ret, StoreError> {
                    $(let $arg = Carry::carry($arg);)*
                    self.$mode(move |conn| $($func)::+(conn, $($call),*)).await
                }
            )*
        }
    };
}

store_on_connections! {
    read fn ping() -> () = queries::ping();
    write fn insert_tool(tool: CustomToolRecord) -> CustomToolRecord
        = queries::insert_tool(tool, None);
    write fn insert_tool_limited(tool: CustomToolRecord, max_per_owner: u64) -> CustomToolRecord
        = queries::insert_tool(tool, Some(max_per_owner));
    read fn get_tool(owner: &str, id: &str) -> Option<CustomToolRecord>
        = queries::get_tool(&owner, &id);
    read fn get_tool_by_name(owner: &str, name: &str) -> Option<CustomToolRecord>
        = queries::get_tool_by_name(&owner, &name);
    read fn get_tool_of_any_owner(id: &str) -> Option<CustomToolRecord>
        = queries::get_tool_of_any_owner(&id);
    read fn list_tools(query: &ToolQuery) -> ToolPage = queries::list_tools(&query);
    write fn update_tool(tool: &CustomToolRecord, expected_revision: i64) -> ()
        = queries::update_tool(&tool, expected_revision);
    write fn delete_tool(owner: &str, id: &str, expected_revision: i64) -> ()
        = queries::delete_tool(&owner, &id, expected_revision);
    read fn count_tools(owner: &str) -> u64 = queries::count_tools(&owner);
    read fn tool_stats(owner: &str) -> ToolStats = queries::tool_stats(&owner);
    read fn active_tools() -> Vec<CustomToolRecord> = queries::active_tools();
    write fn record_usage(owner: &str, id: &str, at: DateTime<Utc>) -> ()
        = queries::record_usage(&owner, &id, &at);
    read fn list_versions(owner: &str, id: &str) -> Vec<ToolVersionRecord>
        = queries::list_versions(&owner, &id);
    read fn get_version(owner: &str, id: &str, version: i64) -> Option<ToolVersionRecord>
        = queries::get_version(&owner, &id, version);
    write fn record_execution(execution: &ExecutionRecord) -> ()
        = queries::record_execution(&execution);
    write fn record_executions(batch: &[ExecutionRecord]) -> ()
        = queries::record_executions(&batch);
    read fn list_executions(
        owner: &str, tool_id: Option<&str>, agent_id: Option<&str>, limit: u32
    ) -> Vec<ExecutionRecord>
        = queries::list_executions(&owner, tool_id.as_deref(), agent_id.as_deref(), limit);
    read fn execution_samples(
        owner: &str, tool_id: Option<&str>, since: DateTime<Utc>, limit: u32
    ) -> Vec<ExecutionSample>
        = analytics::execution_samples(&owner, tool_id.as_deref(), &since, limit);
    write fn prune_executions(before: DateTime<Utc>) -> u64 = analytics::prune_executions(&before);
    read fn tools_fingerprint() -> String = tokens::tools_fingerprint();
    write fn insert_token(token: &ApiTokenRecord) -> () = tokens::insert_token(&token);
    read fn find_token(token_hash: &str) -> Option<ApiTokenRecord>
        = tokens::find_token(&token_hash);
    read fn list_tokens() -> Vec<ApiTokenRecord> = tokens::list_tokens();
    write fn delete_token(id: &str) -> bool = tokens::delete_token(&id);
    write fn insert_approval(approval: &ApprovalRecord) -> ()
        = governance::insert_approval(&approval);
    read fn get_approval(id: &str) -> Option<ApprovalRecord> = governance::get_approval(&id);
    read fn list_approvals(query: &ApprovalQuery, now: DateTime<Utc>) -> Vec<ApprovalRecord>
        = governance::list_approvals(&query, &now);
    read fn find_pending_approval(
        probe: &ApprovalRecord, now: DateTime<Utc>
    ) -> Option<ApprovalRecord>
        = governance::find_pending_approval(&probe, &now);
    write fn decide_approval(
        id: &str, decision: ApprovalDecision, decided_by: &str, now: DateTime<Utc>
    ) -> Option<ApprovalRecord>
        = governance::decide_approval(&id, decision, &decided_by, &now);
    write fn consume_allowed_approval(probe: &ApprovalRecord) -> Option<String>
        = governance::consume_allowed_approval(&probe);
    read fn has_approval_grant(owner: &str, tool_key: &str, caller: &str) -> bool
        = governance::has_grant(&owner, &tool_key, &caller);
    write fn revoke_approval_grants(owner: &str, tool_key: &str) -> u64
        = governance::revoke_grants(&owner, &tool_key);
    write fn prune_approvals(before: DateTime<Utc>) -> u64 = governance::prune_approvals(&before);
    read fn count_pending_approvals(now: DateTime<Utc>) -> u64
        = governance::count_pending_approvals(&now);
    write fn insert_audit(entry: &AuditRecord) -> i64 = governance::insert_audit(&entry);
    read fn list_audit(query: &AuditQuery) -> Vec<AuditRecord> = governance::list_audit(&query);
    read fn get_policy() -> Option<StoredPolicy> = governance::get_policy();
    write fn put_policy(
        document: &serde_json::Value,
        expected_revision: Option<i64>,
        updated_by: &str,
        now: DateTime<Utc>,
    ) -> Result<StoredPolicy, i64>
        = governance::put_policy(&document, expected_revision, &updated_by, &now);
    write fn delete_policy() -> bool = governance::delete_policy();
    write fn touch_token(id: &str, at: DateTime<Utc>) -> () = tokens::touch_token(&id, &at);
    write fn create_config_service(service: ConfigServiceRecord) -> ConfigServiceRecord
        = config::create_service(service);
    read fn get_config_service(owner: &str, id: &str) -> Option<ConfigServiceRecord>
        = config::get_service(&owner, &id);
    read fn get_config_service_by_name(owner: &str, name: &str) -> Option<ConfigServiceRecord>
        = config::get_service_by_name(&owner, &name);
    read fn list_config_services(owner: &str) -> Vec<ConfigServiceRecord>
        = config::list_services(&owner);
    write fn update_config_service(
        service: &ConfigServiceRecord, expected_revision: i64
    ) -> ConfigServiceRecord
        = config::update_service(&service, expected_revision);
    write fn delete_config_service(owner: &str, id: &str, expected_revision: Option<i64>) -> ()
        = config::delete_service(&owner, &id, expected_revision);
    write fn create_config_entry(owner: &str, entry: ConfigEntryRecord) -> ConfigEntryRecord
        = config::create_entry(&owner, entry);
    read fn get_config_entry(owner: &str, id: &str) -> Option<ConfigEntryRecord>
        = config::get_entry(&owner, &id);
    read fn list_config_entries(owner: &str, service_id: &str) -> Vec<ConfigEntryRecord>
        = config::list_entries(&owner, &service_id);
    write fn update_config_entry(
        owner: &str, entry: &ConfigEntryRecord, expected_revision: i64
    ) -> ConfigEntryRecord
        = config::update_entry(&owner, &entry, expected_revision);
    write fn delete_config_entry(owner: &str, id: &str, expected_revision: Option<i64>) -> ()
        = config::delete_entry(&owner, &id, expected_revision);
    write fn set_default_config_entry(owner: &str, id: &str) -> ConfigEntryRecord
        = config::set_default_entry(&owner, &id);
    read fn sealed_values(limit: u32) -> SealedSample = config::sealed_values(limit);
    read fn config_snapshot(owner: &str) -> Vec<ConfigServiceEntries> = config::snapshot(&owner);
    write fn sync_config_dependencies(
        owner: &str, tool_name: &str, declared: Vec<ConfigServiceRecord>
    ) -> ConfigDependencyChanges
        = config::sync_dependencies(&owner, &tool_name, declared);
    write fn put_record(record: DataRecord, max_per_collection: u64) -> PutOutcome
        = records::put(record, max_per_collection);
    write fn update_record(record: DataRecord) -> Option<DataRecord> = records::update(record);
    read fn get_record(scope: &RecordScope, collection: &str, id: &str) -> Option<DataRecord>
        = records::get(&scope, &collection, &id);
    write fn delete_record(scope: &RecordScope, collection: &str, id: &str) -> bool
        = records::delete(&scope, &collection, &id);
    read fn query_records(query: &RecordQuery) -> Vec<RecordHit> = records::query(&query);
    read fn record_stats(scope: &RecordScope, collection: &str) -> RecordStats
        = records::stats(&scope, &collection);
    read fn record_tally(scope: &RecordScope, collection: &str) -> RecordTally
        = records::tally(&scope, &collection);
    read fn export_records(owner: &str, after: Option<&str>, limit: u32) -> Vec<DataRecord>
        = records::export(&owner, after.as_deref(), limit);
    write fn delete_collection_records(scope: &RecordScope, collection: &str) -> u64
        = records::delete_collection(&scope, &collection);
    write fn delete_owner_records(owner: &str) -> u64 = records::delete_owner(&owner);
    read fn list_mcp_servers() -> Vec<McpServerRecord> = mcp::list_servers();
    write fn create_mcp_server(server: &McpServerRecord) -> bool = mcp::create_server(&server);
    write fn update_mcp_server(
        server: &McpServerRecord, expected_revision: Option<i64>
    ) -> Result<McpServerRecord, Option<i64>>
        = mcp::update_server(&server, expected_revision);
    write fn delete_mcp_server(name: &str) -> bool = mcp::delete_server(&name);
    read fn list_mcp_grants() -> Vec<McpGrantRecord> = mcp::list_grants();
    write fn put_mcp_grant(grant: &McpGrantRecord) -> McpGrantRecord = mcp::put_grant(&grant);
    write fn delete_mcp_grant(id: &str) -> bool = mcp::delete_grant(&id);
    write fn create_access_request(request: &AccessRequestRecord) -> ()
        = mcp::create_request(&request);
    read fn list_access_requests(status: Option<AccessRequestStatus>) -> Vec<AccessRequestRecord>
        = mcp::list_requests(status);
    write fn decide_access_request(
        id: &str, approve: bool, decided_by: &str, now: DateTime<Utc>, new_grant: &McpGrantRecord
    ) -> Option<AccessRequestRecord>
        = mcp::decide_request(&id, approve, &decided_by, &now, &new_grant);
    read fn due_records(collection: &str, before: DateTime<Utc>, limit: u32) -> Vec<DataRecord>
        = records::due(&collection, &before, limit);
    write fn claim_record(record: DataRecord, expected_at: DateTime<Utc>) -> bool
        = records::claim(record, &expected_at);
    read fn owner_collection_records(
        owner: &str, collection: &str, limit: u32, offset: u32
    ) -> Vec<DataRecord>
        = records::owner_collection(&owner, &collection, limit, offset);
}
