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
mod governance;
mod queries;
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
use toolsmith_core::{
    ConfigEntryRecord, ConfigServiceRecord, CustomToolRecord, ExecutionRecord, ToolVersionRecord,
};

use crate::{
    ApiTokenRecord, ApprovalDecision, ApprovalQuery, ApprovalRecord, AuditQuery, AuditRecord,
    ConfigDependencyChanges, ConfigServiceEntries, ExecutionSample, SealedSample, Store,
    StoreError, StoredPolicy, ToolPage, ToolQuery, ToolStats,
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

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> Result<(), StoreError> {
        self.read(|conn| {
            conn.query_row("SELECT 1", [], |row| row.get::<_, i64>(0))
                .map_err(rows::backend)?;
            Ok(())
        })
        .await
    }

    async fn insert_tool(&self, tool: CustomToolRecord) -> Result<CustomToolRecord, StoreError> {
        self.write(move |conn| queries::insert_tool(conn, tool, None))
            .await
    }

    async fn insert_tool_limited(
        &self,
        tool: CustomToolRecord,
        max_per_owner: u64,
    ) -> Result<CustomToolRecord, StoreError> {
        self.write(move |conn| queries::insert_tool(conn, tool, Some(max_per_owner)))
            .await
    }

    async fn get_tool(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<CustomToolRecord>, StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.read(move |conn| queries::get_tool(conn, &owner, &id))
            .await
    }

    async fn get_tool_by_name(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<CustomToolRecord>, StoreError> {
        let (owner, name) = (owner.to_owned(), name.to_owned());
        self.read(move |conn| queries::get_tool_by_name(conn, &owner, &name))
            .await
    }

    async fn list_tools(&self, query: &ToolQuery) -> Result<ToolPage, StoreError> {
        let query = query.clone();
        self.read(move |conn| queries::list_tools(conn, &query))
            .await
    }

    async fn update_tool(
        &self,
        tool: &CustomToolRecord,
        expected_revision: i64,
    ) -> Result<(), StoreError> {
        let tool = tool.clone();
        self.write(move |conn| queries::update_tool(conn, &tool, expected_revision))
            .await
    }

    async fn delete_tool(
        &self,
        owner: &str,
        id: &str,
        expected_revision: i64,
    ) -> Result<(), StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.write(move |conn| queries::delete_tool(conn, &owner, &id, expected_revision))
            .await
    }

    async fn count_tools(&self, owner: &str) -> Result<u64, StoreError> {
        let owner = owner.to_owned();
        self.read(move |conn| queries::count_tools(conn, &owner))
            .await
    }

    async fn tool_stats(&self, owner: &str) -> Result<ToolStats, StoreError> {
        let owner = owner.to_owned();
        self.read(move |conn| queries::tool_stats(conn, &owner))
            .await
    }

    async fn active_tools(&self) -> Result<Vec<CustomToolRecord>, StoreError> {
        self.read(|conn| queries::active_tools(conn)).await
    }

    async fn record_usage(
        &self,
        owner: &str,
        id: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.write(move |conn| queries::record_usage(conn, &owner, &id, &at))
            .await
    }

    async fn list_versions(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Vec<ToolVersionRecord>, StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.read(move |conn| queries::list_versions(conn, &owner, &id))
            .await
    }

    async fn get_version(
        &self,
        owner: &str,
        id: &str,
        version: i64,
    ) -> Result<Option<ToolVersionRecord>, StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.read(move |conn| queries::get_version(conn, &owner, &id, version))
            .await
    }

    async fn record_execution(&self, execution: &ExecutionRecord) -> Result<(), StoreError> {
        let execution = execution.clone();
        self.write(move |conn| queries::record_execution(conn, &execution))
            .await
    }

    async fn record_executions(&self, batch: &[ExecutionRecord]) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        let batch = batch.to_vec();
        self.write(move |conn| queries::record_executions(conn, &batch))
            .await
    }

    async fn list_executions(
        &self,
        owner: &str,
        tool_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ExecutionRecord>, StoreError> {
        let (owner, tool_id) = (owner.to_owned(), tool_id.map(str::to_owned));
        self.read(move |conn| queries::list_executions(conn, &owner, tool_id.as_deref(), limit))
            .await
    }

    async fn execution_samples(
        &self,
        owner: &str,
        tool_id: Option<&str>,
        since: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ExecutionSample>, StoreError> {
        let (owner, tool_id) = (owner.to_owned(), tool_id.map(str::to_owned));
        self.read(move |conn| {
            analytics::execution_samples(conn, &owner, tool_id.as_deref(), &since, limit)
        })
        .await
    }

    async fn prune_executions(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        self.write(move |conn| analytics::prune_executions(conn, &before))
            .await
    }

    async fn tools_fingerprint(&self) -> Result<String, StoreError> {
        self.read(|conn| tokens::tools_fingerprint(conn)).await
    }

    async fn insert_token(&self, token: &ApiTokenRecord) -> Result<(), StoreError> {
        let token = token.clone();
        self.write(move |conn| tokens::insert_token(conn, &token))
            .await
    }

    async fn find_token(&self, token_hash: &str) -> Result<Option<ApiTokenRecord>, StoreError> {
        let token_hash = token_hash.to_owned();
        self.read(move |conn| tokens::find_token(conn, &token_hash))
            .await
    }

    async fn list_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError> {
        self.read(|conn| tokens::list_tokens(conn)).await
    }

    async fn delete_token(&self, id: &str) -> Result<bool, StoreError> {
        let id = id.to_owned();
        self.write(move |conn| tokens::delete_token(conn, &id))
            .await
    }

    async fn insert_approval(&self, approval: &ApprovalRecord) -> Result<(), StoreError> {
        let approval = approval.clone();
        self.write(move |conn| governance::insert_approval(conn, &approval))
            .await
    }

    async fn get_approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        let id = id.to_owned();
        self.read(move |conn| governance::get_approval(conn, &id))
            .await
    }

    async fn list_approvals(
        &self,
        query: &ApprovalQuery,
        now: DateTime<Utc>,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        let query = query.clone();
        self.read(move |conn| governance::list_approvals(conn, &query, &now))
            .await
    }

    async fn find_pending_approval(
        &self,
        probe: &ApprovalRecord,
        now: DateTime<Utc>,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        let probe = probe.clone();
        self.read(move |conn| governance::find_pending_approval(conn, &probe, &now))
            .await
    }

    async fn decide_approval(
        &self,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        let (id, decided_by) = (id.to_owned(), decided_by.to_owned());
        self.write(move |conn| governance::decide_approval(conn, &id, decision, &decided_by, &now))
            .await
    }

    async fn consume_allowed_approval(
        &self,
        probe: &ApprovalRecord,
    ) -> Result<Option<String>, StoreError> {
        let probe = probe.clone();
        self.write(move |conn| governance::consume_allowed_approval(conn, &probe))
            .await
    }

    async fn has_approval_grant(
        &self,
        owner: &str,
        tool_key: &str,
        caller: &str,
    ) -> Result<bool, StoreError> {
        let (owner, tool_key, caller) = (owner.to_owned(), tool_key.to_owned(), caller.to_owned());
        self.read(move |conn| governance::has_grant(conn, &owner, &tool_key, &caller))
            .await
    }

    async fn revoke_approval_grants(&self, owner: &str, tool_key: &str) -> Result<u64, StoreError> {
        let (owner, tool_key) = (owner.to_owned(), tool_key.to_owned());
        self.write(move |conn| governance::revoke_grants(conn, &owner, &tool_key))
            .await
    }

    async fn prune_approvals(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        self.write(move |conn| governance::prune_approvals(conn, &before))
            .await
    }

    async fn count_pending_approvals(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        self.read(move |conn| governance::count_pending_approvals(conn, &now))
            .await
    }

    async fn insert_audit(&self, entry: &AuditRecord) -> Result<i64, StoreError> {
        let entry = entry.clone();
        self.write(move |conn| governance::insert_audit(conn, &entry))
            .await
    }

    async fn list_audit(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, StoreError> {
        let query = query.clone();
        self.read(move |conn| governance::list_audit(conn, &query))
            .await
    }

    async fn get_policy(&self) -> Result<Option<StoredPolicy>, StoreError> {
        self.read(|conn| governance::get_policy(conn)).await
    }

    async fn put_policy(
        &self,
        document: &serde_json::Value,
        expected_revision: Option<i64>,
        updated_by: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<StoredPolicy, i64>, StoreError> {
        let (document, updated_by) = (document.clone(), updated_by.to_owned());
        self.write(move |conn| {
            governance::put_policy(conn, &document, expected_revision, &updated_by, &now)
        })
        .await
    }

    async fn delete_policy(&self) -> Result<bool, StoreError> {
        self.write(|conn| governance::delete_policy(conn)).await
    }

    async fn touch_token(&self, id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        let id = id.to_owned();
        self.write(move |conn| tokens::touch_token(conn, &id, &at))
            .await
    }

    async fn create_config_service(
        &self,
        service: ConfigServiceRecord,
    ) -> Result<ConfigServiceRecord, StoreError> {
        self.write(move |conn| config::create_service(conn, service))
            .await
    }

    async fn get_config_service(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<ConfigServiceRecord>, StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.read(move |conn| config::get_service(conn, &owner, &id))
            .await
    }

    async fn get_config_service_by_name(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<ConfigServiceRecord>, StoreError> {
        let (owner, name) = (owner.to_owned(), name.to_owned());
        self.read(move |conn| config::get_service_by_name(conn, &owner, &name))
            .await
    }

    async fn list_config_services(
        &self,
        owner: &str,
    ) -> Result<Vec<ConfigServiceRecord>, StoreError> {
        let owner = owner.to_owned();
        self.read(move |conn| config::list_services(conn, &owner))
            .await
    }

    async fn update_config_service(
        &self,
        service: &ConfigServiceRecord,
        expected_revision: i64,
    ) -> Result<ConfigServiceRecord, StoreError> {
        let service = service.clone();
        self.write(move |conn| config::update_service(conn, &service, expected_revision))
            .await
    }

    async fn delete_config_service(
        &self,
        owner: &str,
        id: &str,
        expected_revision: Option<i64>,
    ) -> Result<(), StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.write(move |conn| config::delete_service(conn, &owner, &id, expected_revision))
            .await
    }

    async fn create_config_entry(
        &self,
        owner: &str,
        entry: ConfigEntryRecord,
    ) -> Result<ConfigEntryRecord, StoreError> {
        let owner = owner.to_owned();
        self.write(move |conn| config::create_entry(conn, &owner, entry))
            .await
    }

    async fn get_config_entry(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<ConfigEntryRecord>, StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.read(move |conn| config::get_entry(conn, &owner, &id))
            .await
    }

    async fn list_config_entries(
        &self,
        owner: &str,
        service_id: &str,
    ) -> Result<Vec<ConfigEntryRecord>, StoreError> {
        let (owner, service_id) = (owner.to_owned(), service_id.to_owned());
        self.read(move |conn| config::list_entries(conn, &owner, &service_id))
            .await
    }

    async fn update_config_entry(
        &self,
        owner: &str,
        entry: &ConfigEntryRecord,
        expected_revision: i64,
    ) -> Result<ConfigEntryRecord, StoreError> {
        let (owner, entry) = (owner.to_owned(), entry.clone());
        self.write(move |conn| config::update_entry(conn, &owner, &entry, expected_revision))
            .await
    }

    async fn delete_config_entry(
        &self,
        owner: &str,
        id: &str,
        expected_revision: Option<i64>,
    ) -> Result<(), StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.write(move |conn| config::delete_entry(conn, &owner, &id, expected_revision))
            .await
    }

    async fn set_default_config_entry(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<ConfigEntryRecord, StoreError> {
        let (owner, id) = (owner.to_owned(), id.to_owned());
        self.write(move |conn| config::set_default_entry(conn, &owner, &id))
            .await
    }

    async fn sealed_values(&self, limit: u32) -> Result<SealedSample, StoreError> {
        self.read(move |conn| config::sealed_values(conn, limit))
            .await
    }

    async fn config_snapshot(&self, owner: &str) -> Result<Vec<ConfigServiceEntries>, StoreError> {
        let owner = owner.to_owned();
        self.read(move |conn| config::snapshot(conn, &owner)).await
    }

    async fn sync_config_dependencies(
        &self,
        owner: &str,
        tool_name: &str,
        declared: Vec<ConfigServiceRecord>,
    ) -> Result<ConfigDependencyChanges, StoreError> {
        let (owner, tool_name) = (owner.to_owned(), tool_name.to_owned());
        self.write(move |conn| config::sync_dependencies(conn, &owner, &tool_name, declared))
            .await
    }
}
