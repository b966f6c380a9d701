//! [`PgStore`]: the PostgreSQL backend, for several Toolsmith instances sharing one database.
//!
//! tokio-postgres (async, no blocking pool) behind a deadpool pool. Concurrency is the
//! database's: a revision check is part of the `UPDATE … WHERE revision = $n` that changes the
//! row; names are unique by constraint; counters are `x = x + n` in one statement; a decision
//! on an approval is a conditional update. Writes that read before they write (a tool limit,
//! the one default entry of a service, dependency sync) take a transaction-scoped advisory
//! lock on the owner first, so they are serialized per owner across every instance — what
//! SQLite's single writer gives the embedded backend.

/// Writes this backend's impl of one area trait of the store (`impl ToolStore |client,
/// instance| { … }`, in the area's module): each method takes a pooled connection (`client`,
/// a `deadpool_postgres::Client`), names this handle's id in change notices (`instance`), and
/// awaits one function of this backend with them and its arguments. Every method of this
/// backend is one such line, so the rules live in those functions and the impls hold no logic
/// of their own. The SQLite backend writes its impls the same way
/// (`sqlite::store_on_connections!`).
macro_rules! store_on_pool {
    ($(impl $area:ident |$client:ident, $instance:ident| {$(
        fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
            = $($func:ident)::+($($call:expr),* $(,)?);
    )*})*) => {$(
        #[::async_trait::async_trait]
        impl $crate::$area for $crate::PgStore {
            $(
                #[allow(unused_mut, unused_variables)]
                async fn $name(&self, $($arg: $ty),*) -> Result<$ret, $crate::StoreError> {
                    let mut $client = self.client().await?;
                    let $instance: &str = &self.instance;
                    $($func)::+($($call),*).await
                }
            )*
        }
    )*};
}

mod agents;
mod config;
mod copy;
mod delegation;
mod errors;
mod governance;
mod limits;
mod mcp;
mod notify;
mod orgs;
mod prompts;
mod records;
mod rows;
pub(crate) mod schema;
#[cfg(test)]
mod schema_tests;
mod sessions;
mod tasks;
mod tls;
mod tokens;
mod tools;
mod vectors;

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Client, ManagerConfig, Pool, RecyclingMethod, Runtime};

use crate::{Store, StoreError};
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
    /// TLS for every connection: the pool's and the change feed's.
    tls: tls::PgTls,
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
        let refused = |reason: String| StoreError::ConnectRefused {
            target: PgStore::redact(url),
            reason,
        };
        let (driver_url, tls_parameters) = tls::split_url(url).map_err(refused)?;
        let mut config: tokio_postgres::Config = driver_url
            .parse()
            .map_err(|e| refused(format!("the URL is not a valid PostgreSQL URL: {e}")))?;
        let tls = tls::PgTls::new(&tls_parameters).map_err(refused)?;
        tls.configure(&mut config);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.connect_timeout);
        }
        config.application_name("toolsmith");
        let shown = shown(&config);
        wait_until_reachable(&config, &tls, &shown, options.startup_timeout).await?;
        let manager = tls.manager(
            config.clone(),
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
            tls,
            shown,
            instance: instance_id(),
        };
        let mut client = store.client().await?;
        schema::migrate(&mut client, &store.shown).await?;
        Ok(store)
    }

    /// `url` with any password replaced by `***`: how a database URL may be shown.
    pub fn redact(url: &str) -> String {
        let Some((scheme, rest)) = url.split_once("://") else {
            return url.to_owned();
        };
        match rest.rsplit_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
                None => url.to_owned(),
            },
            None => url.to_owned(),
        }
    }

    /// Checks that `url` is a PostgreSQL URL the driver understands (without connecting).
    /// The message never contains the password.
    pub fn check_url(url: &str) -> Result<(), String> {
        let (driver_url, _) =
            tls::split_url(url).map_err(|e| format!("'{}': {e}", PgStore::redact(url)))?;
        driver_url
            .parse::<tokio_postgres::Config>()
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
    tls: &tls::PgTls,
    shown: &str,
    budget: Duration,
) -> Result<(), StoreError> {
    let deadline = tokio::time::Instant::now() + budget;
    let mut delay = Duration::from_millis(100);
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        match tls.connect(config).await {
            Ok(direct) => {
                drop(direct.client);
                let _ = direct.driver.await;
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
            self.tls.clone(),
            self.instance.clone(),
        ))
    }

    async fn ping(&self) -> Result<(), StoreError> {
        let client = self.client().await?;
        client.simple_query("SELECT 1").await.map_err(pg)?;
        Ok(())
    }

    async fn announce_change(
        &self,
        kind: crate::ChangeKind,
        id: &str,
        owner: &str,
    ) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        notify::notify(&*tx, &self.instance, kind, id, owner, None).await?;
        tx.commit().await.map_err(pg)
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
