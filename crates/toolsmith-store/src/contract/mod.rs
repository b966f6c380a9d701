//! One test suite, two backends: the behaviour every [`Store`] promises, written once against
//! `Arc<dyn Store>` and run on SQLite (a temp file) and on PostgreSQL (a private cluster from
//! [`crate::testkit`], one per test).
//!
//! Each topic module defines its tests as plain `async fn name(backend: &Backend)` and lists
//! them in [`on_both_backends!`], which instantiates `on_sqlite::name` and `on_postgres::name`.
//! A test left out of the list is dead code, which the build refuses (`-D warnings`).
//! What only one backend has (SQLite's file checks, PostgreSQL's connection handling) is
//! tested beside that backend.

pub(crate) mod agents;
pub(crate) mod config;
mod delegation;
mod governance;
mod limits;
mod mcp;
mod orgs;
mod postgres;
pub(crate) mod prompts;
mod records;
mod sessions;
mod tasks;
mod tool_moves;
pub(crate) mod tools;
mod vectors;

use std::path::PathBuf;
use std::sync::Arc;

use crate::testkit::PgCluster;
use crate::{PgOptions, PgStore, SqliteStore, Store};

/// A store under test and what keeps it alive (its temp dir or its cluster).
pub(crate) struct Backend {
    store: Arc<dyn Store>,
    kind: Kind,
}

enum Kind {
    Sqlite {
        path: PathBuf,
        _dir: tempfile::TempDir,
    },
    Postgres {
        url: String,
        cluster: PgCluster,
    },
}

impl Backend {
    /// A fresh SQLite store in a temp dir.
    pub(crate) async fn sqlite() -> Backend {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolsmith.db");
        let store = SqliteStore::open(&path).await.unwrap();
        Backend {
            store: Arc::new(store),
            kind: Kind::Sqlite { path, _dir: dir },
        }
    }

    /// A fresh PostgreSQL store on its own cluster; `None` (skipped, with the reason printed)
    /// when PostgreSQL is not installed, a panic instead under `CI=true`.
    pub(crate) async fn postgres() -> Option<Backend> {
        let cluster = crate::testkit::pg_or_skip()?;
        let url = cluster.create_database().unwrap();
        let store = PgStore::connect(&url, &PgOptions::default()).await.unwrap();
        Some(Backend {
            store: Arc::new(store),
            kind: Kind::Postgres { url, cluster },
        })
    }

    pub(crate) fn store(&self) -> Arc<dyn Store> {
        Arc::clone(&self.store)
    }

    /// Another handle on the same PostgreSQL database (another instance), when this is the
    /// PostgreSQL backend.
    pub(crate) async fn another_instance(&self) -> Option<Arc<PgStore>> {
        match &self.kind {
            Kind::Postgres { url, .. } => Some(Arc::new(
                PgStore::connect(url, &PgOptions::default()).await.unwrap(),
            )),
            Kind::Sqlite { .. } => None,
        }
    }

    /// Another instance's change feed, past its first `Resync`, when this is the PostgreSQL
    /// backend.
    pub(crate) async fn another_instances_feed(
        &self,
    ) -> Option<tokio::sync::mpsc::Receiver<crate::FeedEvent>> {
        use crate::Store as _;
        let other = self.another_instance().await?;
        let mut feed = other.subscribe_changes().unwrap();
        assert_eq!(next_change(&mut feed).await, crate::FeedEvent::Resync);
        Some(feed)
    }

    /// Another store on the same database, as a second process would open it: a second
    /// SQLite connection pool on the same file, or another PostgreSQL instance.
    pub(crate) async fn another_process(&self) -> Arc<dyn Store> {
        match &self.kind {
            Kind::Postgres { url, .. } => {
                Arc::new(PgStore::connect(url, &PgOptions::default()).await.unwrap())
            }
            Kind::Sqlite { path, .. } => Arc::new(crate::SqliteStore::open(path).await.unwrap()),
        }
    }

    /// The PostgreSQL cluster, when this is the PostgreSQL backend.
    pub(crate) fn cluster(&self) -> Option<&PgCluster> {
        match &self.kind {
            Kind::Postgres { cluster, .. } => Some(cluster),
            Kind::Sqlite { .. } => None,
        }
    }

    /// The number of rows in `table`, read behind the store's back (to check that rows are
    /// really gone, not only unreachable).
    pub(crate) async fn count_rows(&self, table: &str) -> i64 {
        let sql = format!("SELECT count(*) FROM {table}");
        match &self.kind {
            Kind::Sqlite { path, .. } => rusqlite::Connection::open(path)
                .unwrap()
                .query_row(&sql, [], |r| r.get(0))
                .unwrap(),
            Kind::Postgres { url, .. } => {
                let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .unwrap();
                let driver = tokio::spawn(connection);
                let n: i64 = client.query_one(&sql, &[]).await.unwrap().get(0);
                drop(client);
                let _ = driver.await;
                n
            }
        }
    }
}

/// Instantiates every listed `async fn name(backend: &Backend)` of the calling module once per
/// backend: `on_sqlite::name` and `on_postgres::name`.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let backend = $crate::contract::Backend::sqlite().await;
                    super::$name(&backend).await;
                }
            )*
        }
        mod on_postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(backend) = $crate::contract::Backend::postgres().await else {
                        return;
                    };
                    super::$name(&backend).await;
                }
            )*
        }
    };
}
pub(crate) use on_both_backends;

/// The next event of a change feed, within 10 s.
pub(crate) async fn next_change(
    feed: &mut tokio::sync::mpsc::Receiver<crate::FeedEvent>,
) -> crate::FeedEvent {
    tokio::time::timeout(std::time::Duration::from_secs(10), feed.recv())
        .await
        .expect("no change notice within 10 s")
        .expect("the feed ended")
}
