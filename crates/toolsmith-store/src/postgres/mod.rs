//! [`PgStore`]: the PostgreSQL backend, for several Toolsmith instances sharing one database.
//!
//! tokio-postgres (async, no blocking pool) behind a deadpool pool. Concurrency is the
//! database's: a revision check is part of the `UPDATE … WHERE revision = $n` that changes the
//! row; names are unique by constraint; counters are `x = x + n` in one statement; a decision
//! on an approval is a conditional update. Writes that read before they write (a tool limit,
//! the one default entry of a service, dependency sync) take a transaction-scoped advisory
//! lock on the owner first, so they are serialized per owner across every instance — what
//! SQLite's single writer gives the embedded backend.

mod config;
mod copy;
mod errors;
mod governance;
mod limits;
mod mcp;
mod notify;
mod records;
mod rows;
pub(crate) mod schema;
#[cfg(test)]
mod schema_tests;
mod tokens;
mod tools;

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::{Client, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
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
use errors::{pg, pool};

/// How [`PgStore::connect`] connects.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Connections in the pool (each instance's most concurrent statements).
    pub max_connections: usize,
    /// How long start-up keeps retrying while the server is not reachable (refused, timed
    /// out, starting up). Authentication failures and a missing database fail at once.
    pub startup_timeout: Duration,
    /// How long one connection attempt may take.
    pub connect_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            max_connections: 16,
            startup_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// The PostgreSQL backend. Cheap to share behind an `Arc`.
pub struct PgStore {
    pool: Pool,
    config: tokio_postgres::Config,
    shown: String,
    /// This handle's id in change notices (so its own notices can be told apart).
    instance: String,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgStore")
            .field("database", &self.shown)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`), retrying while the
    /// server is unreachable for up to `options.startup_timeout` (with backoff), then brings
    /// the schema up to date.
    ///
    /// Errors: [`StoreError::Unreachable`] when the server never answered in time,
    /// [`StoreError::ConnectRefused`] at once for a wrong password or a missing database,
    /// [`StoreError::UnknownSchema`] for a database written by a newer Toolsmith.
    pub async fn connect(url: &str, options: &PgOptions) -> Result<PgStore, StoreError> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| StoreError::ConnectRefused {
                target: PgStore::redact(url),
                reason: format!("the URL is not a valid PostgreSQL URL: {e}"),
            })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        config.application_name("toolsmith");
        let shown = shown(&config);
        wait_until_reachable(&config, &shown, options.startup_timeout).await?;
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(options.max_connections.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(options.connect_timeout))
            .build()
            .map_err(|e| StoreError::Backend(Box::new(e)))?;
        let store = PgStore {
            pool,
            config,
            shown,
            instance: instance_id(),
        };
        let mut client = store.client().await?;
        schema::migrate(&mut client, &store.shown).await?;
        Ok(store)
    }

    /// `url` with any password replaced by `***`: how a database URL may be shown.
    pub fn redact(url: &str) -> String {
        match (url.find("://"), url.rfind('@')) {
            (Some(scheme), Some(at)) if at > scheme => {
                let userinfo = &url[scheme + 3..at];
                match userinfo.split_once(':') {
                    Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                    None => url.to_owned(),
                }
            }
            _ => url.to_owned(),
        }
    }

    /// Checks that `url` is a PostgreSQL URL the driver understands (without connecting).
    /// The message never contains the password.
    pub fn check_url(url: &str) -> Result<(), String> {
        url.parse::<tokio_postgres::Config>()
            .map(drop)
            .map_err(|e| {
                format!(
                    "'{}' is not a valid PostgreSQL URL ({e}); expected \
                 postgres://user:password@host:port/database",
                    PgStore::redact(url)
                )
            })
    }

    /// The database, as shown in messages (no password).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The connection settings (for a dedicated `LISTEN` connection).
    pub fn config(&self) -> &tokio_postgres::Config {
        &self.config
    }

    async fn client(&self) -> Result<Client, StoreError> {
        self.pool.get().await.map_err(pool)
    }
}

/// `postgres://user@host:port/db` — the URL without its password.
fn shown(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".to_owned());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "postgres://{}@{host}:{port}/{}",
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or("")
    )
}

/// A process-unique id for change notices: the process id, the start time and a counter.
fn instance_id() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{nanos:x}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Connects once and disconnects, retrying transient failures with backoff (100 ms doubling
/// to 2 s) until `budget` is spent.
async fn wait_until_reachable(
    config: &tokio_postgres::Config,
    shown: &str,
    budget: Duration,
) -> Result<(), StoreError> {
    let deadline = tokio::time::Instant::now() + budget;
    let mut delay = Duration::from_millis(100);
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        match config.connect(NoTls).await {
            Ok((client, connection)) => {
                drop(client);
                let _ = connection.await;
                return Ok(());
            }
            Err(e) if errors::is_transient_connect(&e) => {
                let now = tokio::time::Instant::now();
                if now >= deadline {
                    return Err(StoreError::Unreachable {
                        target: shown.to_owned(),
                        reason: format!(
                            "{} (tried {attempts} times over {} s; is the server running and \
                             the host and port right? raise --database-startup-timeout to \
                             wait longer)",
                            errors::connect_reason(&e),
                            budget.as_secs()
                        ),
                    });
                }
                tracing::warn!(database = %shown, attempt = attempts, error = %errors::connect_reason(&e), "database not reachable yet; retrying");
                tokio::time::sleep(delay.min(deadline - now)).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
            Err(e) => {
                return Err(StoreError::ConnectRefused {
                    target: shown.to_owned(),
                    reason: errors::connect_reason(&e),
                });
            }
        }
    }
}

#[async_trait]
impl Store for PgStore {
    fn shared_limits(
        self: std::sync::Arc<Self>,
    ) -> Option<std::sync::Arc<dyn crate::SharedLimits>> {
        Some(self)
    }

    fn subscribe_changes(&self) -> Option<tokio::sync::mpsc::Receiver<crate::FeedEvent>> {
        Some(notify::subscribe(
            self.config.clone(),
            self.instance.clone(),
        ))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let client = self.client().await?;
        client.simple_query("SELECT 1").await.map_err(pg)?;
        Ok(())
    }

    async fn insert_tool(&self, tool: CustomToolRecord) -> Result<CustomToolRecord, StoreError> {
        tools::insert(&mut self.client().await?, &self.instance, tool, None).await
    }

    async fn insert_tool_limited(
        &self,
        tool: CustomToolRecord,
        max_per_owner: u64,
    ) -> Result<CustomToolRecord, StoreError> {
        tools::insert(
            &mut self.client().await?,
            &self.instance,
            tool,
            Some(max_per_owner),
        )
        .await
    }

    async fn get_tool(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<CustomToolRecord>, StoreError> {
        tools::get(&**self.client().await?, owner, "id", id).await
    }

    async fn get_tool_by_name(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<CustomToolRecord>, StoreError> {
        tools::get(&**self.client().await?, owner, "name", name).await
    }

    async fn get_tool_of_any_owner(
        &self,
        id: &str,
    ) -> Result<Option<CustomToolRecord>, StoreError> {
        tools::get_of_any_owner(&**self.client().await?, id).await
    }

    async fn list_tools(&self, query: &ToolQuery) -> Result<ToolPage, StoreError> {
        tools::list(&mut self.client().await?, query).await
    }

    async fn update_tool(
        &self,
        tool: &CustomToolRecord,
        expected_revision: i64,
    ) -> Result<(), StoreError> {
        tools::update(
            &mut self.client().await?,
            &self.instance,
            tool,
            expected_revision,
        )
        .await
    }

    async fn delete_tool(
        &self,
        owner: &str,
        id: &str,
        expected_revision: i64,
    ) -> Result<(), StoreError> {
        tools::delete(
            &mut self.client().await?,
            &self.instance,
            owner,
            id,
            expected_revision,
        )
        .await
    }

    async fn count_tools(&self, owner: &str) -> Result<u64, StoreError> {
        tools::count(&**self.client().await?, owner).await
    }

    async fn tool_stats(&self, owner: &str) -> Result<ToolStats, StoreError> {
        tools::stats(&**self.client().await?, owner).await
    }

    async fn active_tools(&self) -> Result<Vec<CustomToolRecord>, StoreError> {
        tools::active(&**self.client().await?).await
    }

    async fn record_usage(
        &self,
        owner: &str,
        id: &str,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let client = self.client().await?;
        if tools::count_usage(&**client, owner, id, 1, &at).await? == 0 {
            return Err(StoreError::NotFound { id: id.to_owned() });
        }
        Ok(())
    }

    async fn list_versions(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Vec<ToolVersionRecord>, StoreError> {
        tools::versions(&**self.client().await?, owner, id, None).await
    }

    async fn get_version(
        &self,
        owner: &str,
        id: &str,
        version: i64,
    ) -> Result<Option<ToolVersionRecord>, StoreError> {
        Ok(
            tools::versions(&**self.client().await?, owner, id, Some(version))
                .await?
                .pop(),
        )
    }

    async fn record_execution(&self, execution: &ExecutionRecord) -> Result<(), StoreError> {
        tools::record_execution(&**self.client().await?, execution).await
    }

    async fn record_executions(&self, batch: &[ExecutionRecord]) -> Result<(), StoreError> {
        if batch.is_empty() {
            return Ok(());
        }
        tools::record_executions(&mut self.client().await?, batch).await
    }

    async fn list_executions(
        &self,
        owner: &str,
        tool_id: Option<&str>,
        agent_id: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ExecutionRecord>, StoreError> {
        tools::list_executions(&**self.client().await?, owner, tool_id, agent_id, limit).await
    }

    async fn execution_samples(
        &self,
        owner: &str,
        tool_id: Option<&str>,
        since: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<ExecutionSample>, StoreError> {
        tools::execution_samples(&**self.client().await?, owner, tool_id, &since, limit).await
    }

    async fn prune_executions(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM tool_executions WHERE created_at < $1",
                &[&before],
            )
            .await
            .map_err(pg)
    }

    async fn tools_fingerprint(&self) -> Result<String, StoreError> {
        tokens::tools_fingerprint(&**self.client().await?).await
    }

    async fn insert_token(&self, token: &ApiTokenRecord) -> Result<(), StoreError> {
        tokens::insert(&mut self.client().await?, &self.instance, token).await
    }

    async fn find_token(&self, token_hash: &str) -> Result<Option<ApiTokenRecord>, StoreError> {
        Ok(tokens::select(&**self.client().await?, Some(token_hash))
            .await?
            .pop())
    }

    async fn list_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError> {
        tokens::select(&**self.client().await?, None).await
    }

    async fn delete_token(&self, id: &str) -> Result<bool, StoreError> {
        tokens::delete(&mut self.client().await?, &self.instance, id).await
    }

    async fn touch_token(&self, id: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2",
                &[&at, &id],
            )
            .await
            .map_err(pg)?;
        Ok(())
    }

    async fn insert_approval(&self, approval: &ApprovalRecord) -> Result<(), StoreError> {
        governance::insert_approval(&mut self.client().await?, &self.instance, approval).await
    }

    async fn get_approval(&self, id: &str) -> Result<Option<ApprovalRecord>, StoreError> {
        governance::get_approval(&**self.client().await?, id).await
    }

    async fn list_approvals(
        &self,
        query: &ApprovalQuery,
        now: DateTime<Utc>,
    ) -> Result<Vec<ApprovalRecord>, StoreError> {
        governance::list_approvals(&**self.client().await?, query, &now).await
    }

    async fn find_pending_approval(
        &self,
        probe: &ApprovalRecord,
        now: DateTime<Utc>,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        governance::find_pending_approval(&**self.client().await?, probe, &now).await
    }

    async fn decide_approval(
        &self,
        id: &str,
        decision: ApprovalDecision,
        decided_by: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<ApprovalRecord>, StoreError> {
        governance::decide_approval(
            &mut self.client().await?,
            &self.instance,
            id,
            decision,
            decided_by,
            &now,
        )
        .await
    }

    async fn consume_allowed_approval(
        &self,
        probe: &ApprovalRecord,
    ) -> Result<Option<String>, StoreError> {
        governance::consume_allowed_approval(&**self.client().await?, probe).await
    }

    async fn has_approval_grant(
        &self,
        owner: &str,
        tool_key: &str,
        caller: &str,
    ) -> Result<bool, StoreError> {
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT 1 FROM approval_grants WHERE owner = $1 AND tool_key = $2 AND caller = $3",
                &[&owner, &tool_key, &caller],
            )
            .await
            .map_err(pg)?;
        Ok(row.is_some())
    }

    async fn revoke_approval_grants(&self, owner: &str, tool_key: &str) -> Result<u64, StoreError> {
        // The approvals still pending or allowed once but unused were asked for the old code.
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        let n = tx
            .execute(
                "DELETE FROM approval_grants WHERE owner = $1 AND tool_key = $2",
                &[&owner, &tool_key],
            )
            .await
            .map_err(pg)?;
        tx.execute(
            "UPDATE execution_approvals SET status = 'expired' WHERE owner = $1 \
             AND tool_key = $2 AND status IN ('pending', 'allowed')",
            &[&owner, &tool_key],
        )
        .await
        .map_err(pg)?;
        tx.commit().await.map_err(pg)?;
        Ok(n)
    }

    async fn prune_approvals(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let client = self.client().await?;
        client
            .execute(
                "DELETE FROM execution_approvals WHERE created_at < $1",
                &[&before],
            )
            .await
            .map_err(pg)
    }

    async fn count_pending_approvals(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let n: i64 = client
            .query_one(
                "SELECT count(*) FROM execution_approvals \
                 WHERE status = 'pending' AND expires_at > $1",
                &[&now],
            )
            .await
            .map_err(pg)?
            .get(0);
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn insert_audit(&self, entry: &AuditRecord) -> Result<i64, StoreError> {
        governance::insert_audit(&**self.client().await?, entry).await
    }

    async fn list_audit(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, StoreError> {
        governance::list_audit(&**self.client().await?, query).await
    }

    async fn get_policy(&self) -> Result<Option<StoredPolicy>, StoreError> {
        governance::get_policy(&**self.client().await?).await
    }

    async fn put_policy(
        &self,
        document: &serde_json::Value,
        expected_revision: Option<i64>,
        updated_by: &str,
        now: DateTime<Utc>,
    ) -> Result<Result<StoredPolicy, i64>, StoreError> {
        governance::put_policy(
            &mut self.client().await?,
            &self.instance,
            document,
            expected_revision,
            updated_by,
            &now,
        )
        .await
    }

    async fn delete_policy(&self) -> Result<bool, StoreError> {
        governance::delete_policy(&mut self.client().await?, &self.instance).await
    }

    async fn create_config_service(
        &self,
        service: ConfigServiceRecord,
    ) -> Result<ConfigServiceRecord, StoreError> {
        config::create_service(&mut self.client().await?, &self.instance, service).await
    }

    async fn get_config_service(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<ConfigServiceRecord>, StoreError> {
        config::get_service(&**self.client().await?, owner, "id", id).await
    }

    async fn get_config_service_by_name(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<ConfigServiceRecord>, StoreError> {
        config::get_service(&**self.client().await?, owner, "name", name).await
    }

    async fn list_config_services(
        &self,
        owner: &str,
    ) -> Result<Vec<ConfigServiceRecord>, StoreError> {
        config::list_services(&**self.client().await?, owner).await
    }

    async fn update_config_service(
        &self,
        service: &ConfigServiceRecord,
        expected_revision: i64,
    ) -> Result<ConfigServiceRecord, StoreError> {
        config::update_service(
            &mut self.client().await?,
            &self.instance,
            service,
            expected_revision,
        )
        .await
    }

    async fn delete_config_service(
        &self,
        owner: &str,
        id: &str,
        expected_revision: Option<i64>,
    ) -> Result<(), StoreError> {
        config::delete_service(
            &mut self.client().await?,
            &self.instance,
            owner,
            id,
            expected_revision,
        )
        .await
    }

    async fn create_config_entry(
        &self,
        owner: &str,
        entry: ConfigEntryRecord,
    ) -> Result<ConfigEntryRecord, StoreError> {
        config::create_entry(&mut self.client().await?, &self.instance, owner, entry).await
    }

    async fn get_config_entry(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<Option<ConfigEntryRecord>, StoreError> {
        config::get_entry(&**self.client().await?, owner, id).await
    }

    async fn list_config_entries(
        &self,
        owner: &str,
        service_id: &str,
    ) -> Result<Vec<ConfigEntryRecord>, StoreError> {
        config::list_entries(&**self.client().await?, owner, service_id).await
    }

    async fn update_config_entry(
        &self,
        owner: &str,
        entry: &ConfigEntryRecord,
        expected_revision: i64,
    ) -> Result<ConfigEntryRecord, StoreError> {
        config::update_entry(
            &mut self.client().await?,
            &self.instance,
            owner,
            entry,
            expected_revision,
        )
        .await
    }

    async fn delete_config_entry(
        &self,
        owner: &str,
        id: &str,
        expected_revision: Option<i64>,
    ) -> Result<(), StoreError> {
        config::delete_entry(
            &mut self.client().await?,
            &self.instance,
            owner,
            id,
            expected_revision,
        )
        .await
    }

    async fn set_default_config_entry(
        &self,
        owner: &str,
        id: &str,
    ) -> Result<ConfigEntryRecord, StoreError> {
        config::set_default_entry(&mut self.client().await?, &self.instance, owner, id).await
    }

    async fn sealed_values(&self, limit: u32) -> Result<SealedSample, StoreError> {
        config::sealed_values(&mut self.client().await?, limit).await
    }

    async fn config_snapshot(&self, owner: &str) -> Result<Vec<ConfigServiceEntries>, StoreError> {
        config::snapshot(&mut self.client().await?, owner).await
    }

    async fn sync_config_dependencies(
        &self,
        owner: &str,
        tool_name: &str,
        declared: Vec<ConfigServiceRecord>,
    ) -> Result<ConfigDependencyChanges, StoreError> {
        config::sync_dependencies(
            &mut self.client().await?,
            &self.instance,
            owner,
            tool_name,
            declared,
        )
        .await
    }

    async fn put_record(
        &self,
        record: DataRecord,
        max_per_collection: u64,
    ) -> Result<PutOutcome, StoreError> {
        records::put(&mut self.client().await?, record, max_per_collection).await
    }

    async fn update_record(&self, record: DataRecord) -> Result<Option<DataRecord>, StoreError> {
        records::update(&self.client().await?, record).await
    }

    async fn get_record(
        &self,
        scope: &RecordScope,
        collection: &str,
        id: &str,
    ) -> Result<Option<DataRecord>, StoreError> {
        records::get(&self.client().await?, scope, collection, id).await
    }

    async fn delete_record(
        &self,
        scope: &RecordScope,
        collection: &str,
        id: &str,
    ) -> Result<bool, StoreError> {
        records::delete(&self.client().await?, scope, collection, id).await
    }

    async fn query_records(&self, query: &RecordQuery) -> Result<Vec<RecordHit>, StoreError> {
        records::query(&self.client().await?, query).await
    }

    async fn record_stats(
        &self,
        scope: &RecordScope,
        collection: &str,
    ) -> Result<RecordStats, StoreError> {
        records::stats(&self.client().await?, scope, collection).await
    }

    async fn record_tally(
        &self,
        scope: &RecordScope,
        collection: &str,
    ) -> Result<RecordTally, StoreError> {
        records::tally(&self.client().await?, scope, collection).await
    }

    async fn export_records(
        &self,
        owner: &str,
        after: Option<&str>,
        limit: u32,
    ) -> Result<Vec<DataRecord>, StoreError> {
        records::export(&self.client().await?, owner, after, limit).await
    }

    async fn delete_collection_records(
        &self,
        scope: &RecordScope,
        collection: &str,
    ) -> Result<u64, StoreError> {
        records::delete_collection(&self.client().await?, scope, collection).await
    }

    async fn delete_owner_records(&self, owner: &str) -> Result<u64, StoreError> {
        records::delete_owner(&self.client().await?, owner).await
    }

    async fn list_mcp_servers(&self) -> Result<Vec<McpServerRecord>, StoreError> {
        mcp::list_servers(&**self.client().await?).await
    }

    async fn create_mcp_server(&self, server: &McpServerRecord) -> Result<bool, StoreError> {
        mcp::create_server(&**self.client().await?, server).await
    }

    async fn update_mcp_server(
        &self,
        server: &McpServerRecord,
        expected_revision: Option<i64>,
    ) -> Result<Result<McpServerRecord, Option<i64>>, StoreError> {
        mcp::update_server(&mut self.client().await?, server, expected_revision).await
    }

    async fn delete_mcp_server(&self, name: &str) -> Result<bool, StoreError> {
        mcp::delete_server(&**self.client().await?, name).await
    }

    async fn list_mcp_grants(&self) -> Result<Vec<McpGrantRecord>, StoreError> {
        mcp::list_grants(&**self.client().await?).await
    }

    async fn put_mcp_grant(&self, grant: &McpGrantRecord) -> Result<McpGrantRecord, StoreError> {
        mcp::put_grant(&**self.client().await?, grant).await
    }

    async fn delete_mcp_grant(&self, id: &str) -> Result<bool, StoreError> {
        mcp::delete_grant(&**self.client().await?, id).await
    }

    async fn create_access_request(&self, request: &AccessRequestRecord) -> Result<(), StoreError> {
        mcp::create_request(&**self.client().await?, request).await
    }

    async fn list_access_requests(
        &self,
        status: Option<AccessRequestStatus>,
    ) -> Result<Vec<AccessRequestRecord>, StoreError> {
        mcp::list_requests(&**self.client().await?, status).await
    }

    async fn decide_access_request(
        &self,
        id: &str,
        approve: bool,
        decided_by: &str,
        now: DateTime<Utc>,
        new_grant: &McpGrantRecord,
    ) -> Result<Option<AccessRequestRecord>, StoreError> {
        mcp::decide_request(
            &mut self.client().await?,
            id,
            approve,
            decided_by,
            now,
            new_grant,
        )
        .await
    }

    async fn due_records(
        &self,
        collection: &str,
        before: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<DataRecord>, StoreError> {
        records::due(&self.client().await?, collection, before, limit).await
    }

    async fn claim_record(
        &self,
        record: DataRecord,
        expected_at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        records::claim(&self.client().await?, record, expected_at).await
    }

    async fn owner_collection_records(
        &self,
        owner: &str,
        collection: &str,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<DataRecord>, StoreError> {
        records::owner_collection(&self.client().await?, owner, collection, limit, offset).await
    }
}

/// A read-only transaction that sees one snapshot (repeatable read): reads that must agree,
/// such as a page and its total.
pub(crate) async fn snapshot(
    client: &mut Client,
) -> Result<deadpool_postgres::Transaction<'_>, StoreError> {
    client
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(pg)
}

/// Takes the transaction-scoped advisory lock of `key` (released at commit or rollback).
pub(crate) async fn lock(
    tx: &impl tokio_postgres::GenericClient,
    key: &str,
) -> Result<(), StoreError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&key],
    )
    .await
    .map_err(pg)?;
    Ok(())
}
