//! [`RawTables`] for PostgreSQL: rows read in one `REPEATABLE READ READ ONLY` transaction (one
//! snapshot, even while instances write) and written in one transaction, each batch's inserts
//! pipelined on the connection. Values are converted by the column's server-side type, so a
//! value of the wrong kind is an error, never a silent cast.

use std::collections::BTreeMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::{StreamExt as _, TryStreamExt as _};
use tokio::sync::mpsc;
use tokio_postgres::types::{ToSql, Type};

use super::PgStore;
use super::errors::pg;
use crate::StoreError;
use crate::copy::{BATCH, Piece, RawTables, Row, TABLES, Table, Value, bad_value, cut_short};

type Param = Box<dyn ToSql + Sync + Send>;

#[async_trait]
impl RawTables for PgStore {
    fn shown(&self) -> String {
        self.shown.clone()
    }

    async fn identity(&self) -> Result<String, StoreError> {
        // The server as it knows itself (its start time, to the microsecond, and port), not as
        // a URL names it: `localhost`, `127.0.0.1` and a unix socket reach the same server.
        let client = self.client().await?;
        let row = client
            .query_one(
                "SELECT pg_postmaster_start_time()::text, current_setting('port'), \
                        current_database()::text",
                &[],
            )
            .await
            .map_err(pg)?;
        let (started, port, db): (String, String, String) = (row.get(0), row.get(1), row.get(2));
        Ok(format!("postgres:{started}:{port}/{db}"))
    }

    async fn catalog(&self) -> Result<Vec<(String, Vec<String>)>, StoreError> {
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT t.table_name::text, \
                        array_agg(c.column_name::text ORDER BY c.ordinal_position) \
                 FROM information_schema.tables t \
                 JOIN information_schema.columns c \
                   ON c.table_schema = t.table_schema AND c.table_name = t.table_name \
                 WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE' \
                 GROUP BY t.table_name ORDER BY t.table_name",
                &[],
            )
            .await
            .map_err(pg)?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    async fn count_rows(&self, table: &Table) -> Result<u64, StoreError> {
        let client = self.client().await?;
        let n: i64 = client
            .query_one(&format!("SELECT count(*) FROM {}", table.name), &[])
            .await
            .map_err(pg)?
            .get(0);
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn export(
        &self,
        tables: &'static [Table],
        out: mpsc::Sender<Piece>,
    ) -> Result<BTreeMap<&'static str, u64>, StoreError> {
        let mut client = self.client().await?;
        let tx = client
            .build_transaction()
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(pg)?;
        let mut sent = BTreeMap::new();
        for table in tables {
            let rows = tx
                .query_raw(
                    &table.select_all(),
                    std::iter::empty::<&(dyn ToSql + Sync)>(),
                )
                .await
                .map_err(pg)?;
            let mut batches = std::pin::pin!(rows.map_err(pg).try_chunks(BATCH));
            let mut n = 0u64;
            while let Some(chunk) = batches.next().await {
                let chunk = chunk.map_err(|e| e.1)?;
                let batch = chunk
                    .iter()
                    .map(|row| read_row(table, row))
                    .collect::<Result<Vec<Row>, _>>()?;
                n += batch.len() as u64;
                send(&out, Piece::Rows(table, batch)).await?;
            }
            sent.insert(table.name, n);
        }
        tx.commit().await.map_err(pg)?;
        send(&out, Piece::End).await?;
        Ok(sent)
    }

    async fn import(
        &self,
        clear: bool,
        mut input: mpsc::Receiver<Piece>,
    ) -> Result<(), StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg)?;
        if clear {
            for table in TABLES.iter().rev() {
                tx.execute(&format!("DELETE FROM {}", table.name), &[])
                    .await
                    .map_err(pg)?;
            }
        }
        loop {
            match input.recv().await {
                None => return Err(cut_short()),
                Some(Piece::End) => break,
                Some(Piece::Rows(table, rows)) => {
                    let stmt = tx.prepare_cached(&insert_sql(table)).await.map_err(pg)?;
                    let params = rows
                        .into_iter()
                        .map(|row| to_params(table, row, stmt.params()))
                        .collect::<Result<Vec<_>, _>>()?;
                    // One round trip per batch: the inserts are pipelined on the connection.
                    futures::future::try_join_all(params.iter().map(|row| {
                        let refs: Vec<&(dyn ToSql + Sync)> = row
                            .iter()
                            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
                            .collect();
                        let tx = &tx;
                        let stmt = &stmt;
                        async move { tx.execute(stmt, &refs).await }
                    }))
                    .await
                    .map_err(pg)?;
                }
            }
        }
        for table in TABLES {
            if let Some(column) = table.identity {
                // The next id the database gives must come after the copied ones.
                tx.execute(
                    &format!(
                        "SELECT setval(pg_get_serial_sequence('{0}', '{column}'), \
                         coalesce(max({column}), 0) + 1, false) FROM {0}",
                        table.name
                    ),
                    &[],
                )
                .await
                .map_err(pg)?;
            }
        }
        tx.commit().await.map_err(pg)
    }
}

async fn send(out: &mpsc::Sender<Piece>, piece: Piece) -> Result<(), StoreError> {
    out.send(piece)
        .await
        .map_err(|_| StoreError::Backend("the destination stopped reading".into()))
}

fn insert_sql(table: &Table) -> String {
    let params: Vec<String> = (1..=table.columns.len()).map(|i| format!("${i}")).collect();
    let overriding = if table.identity.is_some() {
        " OVERRIDING SYSTEM VALUE"
    } else {
        ""
    };
    format!(
        "INSERT INTO {} ({}){overriding} VALUES ({})",
        table.name,
        table.column_list(),
        params.join(", ")
    )
}

fn read_row(table: &Table, row: &tokio_postgres::Row) -> Result<Row, StoreError> {
    (0..table.columns.len())
        .map(|i| read_value(row, i).map_err(|e| column_error(table, i, &e.to_string())))
        .collect()
}

fn column_error(table: &Table, i: usize, detail: &str) -> StoreError {
    let column = table.columns.get(i).map_or("?", |c| c.0);
    StoreError::Backend(format!("{}.{column}: {detail}", table.name).into())
}

fn read_value(row: &tokio_postgres::Row, i: usize) -> Result<Value, tokio_postgres::Error> {
    // A missing column reads as text, and `try_get` then names the bad index.
    let ty = row
        .columns()
        .get(i)
        .map_or(Type::TEXT, |c| c.type_().clone());
    Ok(if ty == Type::INT8 {
        row.try_get::<_, Option<i64>>(i)?
            .map_or(Value::Null, Value::Int)
    } else if ty == Type::INT4 {
        row.try_get::<_, Option<i32>>(i)?
            .map_or(Value::Null, |v| Value::Int(v.into()))
    } else if ty == Type::FLOAT8 {
        row.try_get::<_, Option<f64>>(i)?
            .map_or(Value::Null, Value::Real)
    } else if ty == Type::BOOL {
        row.try_get::<_, Option<bool>>(i)?
            .map_or(Value::Null, Value::Bool)
    } else if ty == Type::JSONB || ty == Type::JSON {
        row.try_get::<_, Option<serde_json::Value>>(i)?
            .map_or(Value::Null, Value::Json)
    } else if ty == Type::TIMESTAMPTZ {
        row.try_get::<_, Option<DateTime<Utc>>>(i)?
            .map_or(Value::Null, Value::Time)
    } else if ty == Type::FLOAT4_ARRAY {
        row.try_get::<_, Option<Vec<f32>>>(i)?
            .map_or(Value::Null, Value::Floats)
    } else {
        row.try_get::<_, Option<String>>(i)?
            .map_or(Value::Null, Value::Text)
    })
}

/// The row's values as parameters of the types the server expects for them.
fn to_params(table: &Table, row: Row, types: &[Type]) -> Result<Vec<Param>, StoreError> {
    row.into_iter()
        .zip(types)
        .zip(table.columns)
        .map(|((value, ty), (column, _))| {
            to_param(&value, ty).ok_or_else(|| bad_value(table, column, &value))
        })
        .collect()
}

fn to_param(value: &Value, ty: &Type) -> Option<Param> {
    let param: Param = match value {
        Value::Null if *ty == Type::INT8 => Box::new(None::<i64>),
        Value::Null if *ty == Type::INT4 => Box::new(None::<i32>),
        Value::Null if *ty == Type::FLOAT8 => Box::new(None::<f64>),
        Value::Null if *ty == Type::BOOL => Box::new(None::<bool>),
        Value::Null if *ty == Type::JSONB || *ty == Type::JSON => {
            Box::new(None::<serde_json::Value>)
        }
        Value::Null if *ty == Type::TIMESTAMPTZ => Box::new(None::<DateTime<Utc>>),
        Value::Null => Box::new(None::<String>),
        Value::Int(v) if *ty == Type::INT8 => Box::new(*v),
        Value::Int(v) if *ty == Type::INT4 => Box::new(i32::try_from(*v).ok()?),
        Value::Real(v) if *ty == Type::FLOAT8 => Box::new(*v),
        Value::Bool(v) if *ty == Type::BOOL => Box::new(*v),
        Value::Json(v) if *ty == Type::JSONB || *ty == Type::JSON => Box::new(v.clone()),
        Value::Time(v) if *ty == Type::TIMESTAMPTZ => Box::new(*v),
        Value::Floats(v) if *ty == Type::FLOAT4_ARRAY => Box::new(v.clone()),
        Value::Text(v) if *ty == Type::TEXT || *ty == Type::VARCHAR => Box::new(v.clone()),
        _ => return None,
    };
    Some(param)
}
