//! Copying a whole store to another one, across backends (`toolsmith db copy`): every row of
//! every table in [`TABLES`], as plain values, with ids, revisions, timestamps, token hashes and
//! sealed secrets exactly as stored (nothing is decrypted: a sealed value is bound to its
//! owner, service, entry and field, which keep their ids, so it opens with the same key).
//!
//! Each backend implements [`RawTables`] once, generically over the table list: the source
//! streams its rows in one read snapshot, the destination writes them all in one transaction
//! (so a failed copy leaves it as it was), and the copy is then verified by counting the rows
//! of each table on both sides.

mod tables;

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::sync::mpsc;

use crate::StoreError;
pub use tables::{Kind, NOT_COPIED, TABLES, Table, VECTOR_INDEX_PREFIX, check_catalog};

/// Rows are moved in batches of this many.
pub(crate) const BATCH: usize = 500;

/// One value of one column, as both backends can read and write it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Text(String),
    Int(i64),
    Real(f64),
    Bool(bool),
    Json(serde_json::Value),
    Time(DateTime<Utc>),
    /// An embedding: SQLite little-endian f32 `BLOB`, PostgreSQL `REAL[]`.
    Floats(Vec<f32>),
}

/// One row: the values of [`Table::columns`], in order.
pub type Row = Vec<Value>;

/// What flows from the source to the destination.
#[derive(Debug)]
pub enum Piece {
    /// Rows of one table (a table's batches come together, tables in [`TABLES`] order).
    Rows(&'static Table, Vec<Row>),
    /// Everything was read: the destination may commit. A stream that ends without it was cut
    /// short, and the destination rolls back.
    End,
}

/// A store's tables as rows: what `db copy` reads from one backend and writes to another.
#[async_trait]
pub trait RawTables: Send + Sync {
    /// The database as shown in messages (no password).
    fn shown(&self) -> String;

    /// What tells two handles on the same database apart from handles on two databases, however
    /// their URLs spell it (the canonical file path; the server's start time and the database).
    async fn identity(&self) -> Result<String, StoreError>;

    /// Every table of the database with its column names.
    async fn catalog(&self) -> Result<Vec<(String, Vec<String>)>, StoreError>;

    async fn count_rows(&self, table: &Table) -> Result<u64, StoreError>;

    /// Sends every row of `tables`, read in one consistent snapshot, then [`Piece::End`];
    /// returns how many rows of each table were sent.
    async fn export(
        &self,
        tables: &'static [Table],
        out: mpsc::Sender<Piece>,
    ) -> Result<BTreeMap<&'static str, u64>, StoreError>;

    /// Writes what arrives in one transaction, committed only on [`Piece::End`]; with `clear`
    /// it first deletes every row of every table in [`TABLES`] (in the same transaction).
    async fn import(&self, clear: bool, input: mpsc::Receiver<Piece>) -> Result<(), StoreError>;
}

/// Why a copy did not happen or did not check out.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error("reading the source {database} failed: {error}")]
    Source {
        database: String,
        #[source]
        error: StoreError,
    },
    #[error("writing the destination {database} failed (nothing was committed): {error}")]
    Destination {
        database: String,
        #[source]
        error: StoreError,
    },
    #[error("the source and the destination are the same database ({database})")]
    SameDatabase { database: String },
    #[error(
        "the destination {database} already holds data ({tables}); refusing to copy into a \
         database that is not empty"
    )]
    NotEmpty { database: String, tables: String },
    #[error(
        "{database} has a table this build does not know, '{table}' (written by a newer \
         toolsmith?); nothing was copied"
    )]
    UnknownTable { database: String, table: String },
    #[error(
        "{database}: table '{table}' has columns [{found}], but this build copies [{expected}] \
         (written by another toolsmith version?); nothing was copied"
    )]
    Columns {
        database: String,
        table: String,
        expected: String,
        found: String,
    },
    #[error(
        "verification failed for table '{table}': the source has {source_rows} rows, the \
         destination {destination_rows}"
    )]
    Mismatch {
        table: String,
        source_rows: u64,
        destination_rows: u64,
    },
}

/// Rows per table on each side, after a verified copy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TableCount {
    pub table: &'static str,
    pub source_rows: u64,
    pub destination_rows: u64,
}

/// Copies every table of `from` into `to` and verifies the row counts. `to` must be empty
/// unless `replace` is set, in which case what it held is deleted in the copy's transaction.
/// Both stores must be open (so both schemas are this build's).
pub async fn copy_database(
    from: &dyn RawTables,
    to: &dyn RawTables,
    replace: bool,
) -> Result<Vec<TableCount>, CopyError> {
    let source = |error| CopyError::Source {
        database: from.shown(),
        error,
    };
    let destination = |error| CopyError::Destination {
        database: to.shown(),
        error,
    };
    if from.identity().await.map_err(source)? == to.identity().await.map_err(destination)? {
        return Err(CopyError::SameDatabase {
            database: from.shown(),
        });
    }
    check_catalog(&from.shown(), &from.catalog().await.map_err(source)?)?;
    check_catalog(&to.shown(), &to.catalog().await.map_err(destination)?)?;
    if !replace {
        let mut held = Vec::new();
        for table in TABLES {
            let n = to.count_rows(table).await.map_err(destination)?;
            if n > 0 {
                held.push(format!("{}: {n} rows", table.name));
            }
        }
        if !held.is_empty() {
            return Err(CopyError::NotEmpty {
                database: to.shown(),
                tables: held.join(", "),
            });
        }
    }
    let (tx, rx) = mpsc::channel(4);
    let (sent, written) = tokio::join!(from.export(TABLES, tx), to.import(replace, rx));
    // When both sides failed, one failed first and the other only saw the channel close.
    let sent = match (sent, written) {
        (Ok(sent), Ok(())) => sent,
        (Err(e), Err(cut)) if cut.to_string() == cut_short().to_string() => return Err(source(e)),
        (_, Err(e)) => return Err(destination(e)),
        (Err(e), Ok(())) => return Err(source(e)),
    };
    let mut counts = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let source_rows = sent.get(table.name).copied().unwrap_or(0);
        let destination_rows = to.count_rows(table).await.map_err(destination)?;
        if source_rows != destination_rows {
            return Err(CopyError::Mismatch {
                table: table.name.to_owned(),
                source_rows,
                destination_rows,
            });
        }
        counts.push(TableCount {
            table: table.name,
            source_rows,
            destination_rows,
        });
    }
    Ok(counts)
}

/// The error of a stream that ended before [`Piece::End`].
pub(crate) fn cut_short() -> StoreError {
    StoreError::Backend(
        "the source stopped before every row was read; the destination was rolled back".into(),
    )
}

/// The error of a value whose kind does not fit its column.
pub(crate) fn bad_value(table: &Table, column: &str, value: &Value) -> StoreError {
    StoreError::Backend(
        format!(
            "{}.{column}: cannot store {value:?} in this column",
            table.name
        )
        .into(),
    )
}
