//! [`SqliteStore`]: the embedded backend, one SQLite file in WAL mode.
//!
//! rusqlite is synchronous, so every operation runs on tokio's blocking pool. Writes go through
//! one writer connection (behind an async mutex: writers queue without occupying threads);
//! reads use a small pool of reader connections, which WAL lets run while a write is under way.
//!
//! Durability: WAL with `synchronous = NORMAL`. Every write is committed to the WAL before the
//! call returns, so killing the process at any point loses no acknowledged write. A power loss
//! or OS crash may lose the last commits before the next checkpoint (never corrupt the file).

/// Writes this backend's impl of one area trait of the store (`impl ToolStore { … }`, in the
/// area's module) or of `Store` itself: each method [`Carry`]s its arguments onto the blocking
/// pool and runs one function of this backend there, on a reader connection (`read`) or the
/// writer (`write`), with the connection as its first argument. Every method of this backend is
/// one such line, so the rules live in those functions and the impls hold no logic of their
/// own. The PostgreSQL backend writes its impls the same way (`postgres::store_on_pool!`).
macro_rules! store_on_connections {
    ($(impl $area:ident {$(
        $mode:ident fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty
            = $($func:ident)::+($($call:expr),* $(,)?);
    )*})*) => {$(
        #[::async_trait::async_trait]
        impl $crate::$area for $crate::SqliteStore {
            $(
                async fn $name(&self, $($arg: $ty),*) -> Result<$ret, $crate::StoreError> {
                    $(let $arg = $crate::sqlite::Carry::carry($arg);)*
                    self.$mode(move |conn| $($func)::+(conn, $($call),*)).await
                }
            )*
        }
    )*};
}

mod agents;
mod analytics;
mod config;
#[cfg(test)]
mod config_tests;
mod copy;
mod delegation;
mod governance;
mod mcp;
mod orgs;
#[cfg(test)]
mod orgs_tests;
mod prompts;
mod records;
mod rows;
mod schema;
mod sessions;
mod tasks;
#[cfg(test)]
mod tests;
mod tokens;
mod tools;
mod vectors;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};
use rusqlite::Connection;
use tokio::sync::Semaphore;
use toolsmith_core::mcp_bridge::AccessRequestStatus;
use toolsmith_core::{ConfigEntryRecord, ConfigServiceRecord, CustomToolRecord};

use crate::{ApprovalDecision, DataRecord, StoreError};

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

/// What an argument of a store method becomes to cross onto the blocking connection thread:
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

impl Carry for Option<&serde_json::Value> {
    type Carried = Option<serde_json::Value>;
    fn carry(self) -> Option<serde_json::Value> {
        self.cloned()
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
    Option<toolsmith_core::ExecutionSource>,
    DateTime<Utc>,
    ApprovalDecision,
    CustomToolRecord,
    ConfigServiceRecord,
    ConfigEntryRecord,
    Vec<ConfigServiceRecord>,
    DataRecord,
    toolsmith_core::ToolTaskStatus,
);

store_on_connections! {
    impl Store {
        read fn ping() -> () = tools::ping();
    }
}
