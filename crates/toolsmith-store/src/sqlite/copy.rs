//! [`RawTables`] for SQLite: rows read in one read transaction on a reader connection and
//! written in one `BEGIN IMMEDIATE` transaction on the writer, each on the blocking pool (the
//! channel to the other side is used with its blocking calls there).

use std::collections::BTreeMap;

use async_trait::async_trait;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, TransactionBehavior};
use tokio::sync::mpsc;

use super::SqliteStore;
use super::rows::{backend, parse_time, timestamp};
use crate::StoreError;
use crate::copy::{BATCH, Kind, Piece, RawTables, Row, TABLES, Table, Value, cut_short};

#[async_trait]
impl RawTables for SqliteStore {
    fn shown(&self) -> String {
        self.inner.shown.clone()
    }

    async fn identity(&self) -> Result<String, StoreError> {
        let path = &self.inner.path;
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        Ok(format!("sqlite:{}", canonical.display()))
    }

    async fn catalog(&self) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        self.read(|conn| catalog(conn).map_err(backend)).await
    }

    async fn count_rows(&self, table: &Table) -> Result<u64, StoreError> {
        let sql = format!("SELECT count(*) FROM {}", table.name);
        self.read(move |conn| {
            let n: i64 = conn.query_row(&sql, [], |r| r.get(0)).map_err(backend)?;
            Ok(u64::try_from(n).unwrap_or(0))
        })
        .await
    }

    async fn export(
        &self,
        tables: &'static [Table],
        out: mpsc::Sender<Piece>,
    ) -> Result<BTreeMap<&'static str, u64>, StoreError> {
        self.read(move |conn| {
            let tx = conn.transaction().map_err(backend)?;
            let mut sent = BTreeMap::new();
            for table in tables {
                let mut stmt = tx.prepare(&table.select_all()).map_err(backend)?;
                let mut rows = stmt.query([]).map_err(backend)?;
                let mut batch = Vec::with_capacity(BATCH);
                let mut n = 0u64;
                while let Some(row) = rows.next().map_err(backend)? {
                    batch.push(read_row(table, row)?);
                    n += 1;
                    if batch.len() == BATCH {
                        send(&out, Piece::Rows(table, std::mem::take(&mut batch)))?;
                    }
                }
                if !batch.is_empty() {
                    send(&out, Piece::Rows(table, batch))?;
                }
                sent.insert(table.name, n);
            }
            send(&out, Piece::End)?;
            Ok(sent)
        })
        .await
    }

    async fn import(
        &self,
        clear: bool,
        mut input: mpsc::Receiver<Piece>,
    ) -> Result<(), StoreError> {
        self.write(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(backend)?;
            if clear {
                for table in TABLES.iter().rev() {
                    tx.execute(&format!("DELETE FROM {}", table.name), [])
                        .map_err(backend)?;
                }
            }
            loop {
                match input.blocking_recv() {
                    None => return Err(cut_short()),
                    Some(Piece::End) => break,
                    Some(Piece::Rows(table, rows)) => {
                        let mut stmt = tx.prepare_cached(&insert_sql(table)).map_err(backend)?;
                        for row in rows {
                            stmt.execute(rusqlite::params_from_iter(row.into_iter().map(to_sql)))
                                .map_err(backend)?;
                        }
                    }
                }
            }
            tx.commit().map_err(backend)
        })
        .await
    }
}

/// Every table (SQLite's own left out) with its column names.
fn catalog(conn: &Connection) -> rusqlite::Result<Vec<(String, Vec<String>)>> {
    let names: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             ORDER BY name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut columns = conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
    names
        .into_iter()
        .map(|name| {
            let cols = columns
                .query_map([&name], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok((name, cols))
        })
        .collect()
}

fn send(out: &mpsc::Sender<Piece>, piece: Piece) -> Result<(), StoreError> {
    out.blocking_send(piece)
        .map_err(|_| StoreError::Backend("the destination stopped reading".into()))
}

fn insert_sql(table: &Table) -> String {
    let params: Vec<String> = (1..=table.columns.len()).map(|i| format!("?{i}")).collect();
    format!(
        "INSERT INTO {} ({}) VALUES ({})",
        table.name,
        table.column_list(),
        params.join(", ")
    )
}

fn read_row(table: &Table, row: &rusqlite::Row<'_>) -> Result<Row, StoreError> {
    table
        .columns
        .iter()
        .enumerate()
        .map(|(i, (column, kind))| {
            let raw = row.get_ref(i).map_err(backend)?;
            read_value(*kind, raw).map_err(|detail| StoreError::Corrupt {
                path: String::new(),
                reason: format!(
                    "{}.{column} holds an unreadable value: {detail}",
                    table.name
                ),
            })
        })
        .collect()
}

fn read_value(kind: Kind, raw: ValueRef<'_>) -> Result<Value, String> {
    let text = |raw: ValueRef<'_>| -> Result<String, String> {
        raw.as_str().map(str::to_owned).map_err(|e| e.to_string())
    };
    Ok(match (kind, raw) {
        (_, ValueRef::Null) => Value::Null,
        (Kind::Text, raw) => Value::Text(text(raw)?),
        (Kind::Int, raw) => Value::Int(raw.as_i64().map_err(|e| e.to_string())?),
        (Kind::Real, ValueRef::Integer(i)) => Value::Real(i as f64),
        (Kind::Real, raw) => Value::Real(raw.as_f64().map_err(|e| e.to_string())?),
        (Kind::Bool, raw) => Value::Bool(raw.as_i64().map_err(|e| e.to_string())? != 0),
        (Kind::Json, raw) => {
            Value::Json(serde_json::from_str(&text(raw)?).map_err(|e| e.to_string())?)
        }
        (Kind::Time, raw) => Value::Time(parse_time(&text(raw)?)?),
        (Kind::Floats, raw) => Value::Floats(
            raw.as_blob()
                .map_err(|e| e.to_string())?
                .chunks_exact(4)
                .map(|b| <[u8; 4]>::try_from(b).map_or(0.0, f32::from_le_bytes))
                .collect(),
        ),
    })
}

fn to_sql(value: Value) -> SqlValue {
    match value {
        Value::Null => SqlValue::Null,
        Value::Text(s) => SqlValue::Text(s),
        Value::Int(i) => SqlValue::Integer(i),
        Value::Real(r) => SqlValue::Real(r),
        Value::Bool(b) => SqlValue::Integer(i64::from(b)),
        Value::Json(j) => SqlValue::Text(super::rows::json_text(&j)),
        Value::Time(t) => SqlValue::Text(timestamp(&t)),
        Value::Floats(f) => SqlValue::Blob(f.iter().flat_map(|x| x.to_le_bytes()).collect()),
    }
}
