//! The agent's own records (`data_records`) in SQLite: one table for every family, its text
//! indexed by an FTS5 table (`data_records_fts`, external content, kept in step by triggers;
//! `porter unicode61` tokens, ranked by `bm25`).

use chrono::{DateTime, SubsecRound, Utc};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params, params_from_iter};
use toolsmith_core::data::{
    DataRecord, FieldSort, FieldValue, PutOutcome, RecordHit, RecordOrder, RecordQuery,
    RecordScope, RecordStats, RecordTally, is_field_name, query_terms,
};

use super::rows::{backend, json_text, parse_time, timestamp};
use crate::StoreError;

store_on_connections! {
    impl RecordStore {
        write fn put_record(record: DataRecord, max_per_collection: u64) -> PutOutcome
            = put(record, max_per_collection);
        write fn update_record(record: DataRecord) -> Option<DataRecord> = update(record);
        read fn get_record(scope: &RecordScope, collection: &str, id: &str) -> Option<DataRecord>
            = get(&scope, &collection, &id);
        write fn delete_record(scope: &RecordScope, collection: &str, id: &str) -> bool
            = delete(&scope, &collection, &id);
        read fn query_records(query: &RecordQuery) -> Vec<RecordHit> = self::query(&query);
        read fn record_stats(scope: &RecordScope, collection: &str) -> RecordStats
            = stats(&scope, &collection);
        read fn record_tally(scope: &RecordScope, collection: &str) -> RecordTally
            = tally(&scope, &collection);
        write fn delete_collection_records(scope: &RecordScope, collection: &str) -> u64
            = delete_collection(&scope, &collection);
        read fn export_records(owner: &str, after: Option<&str>, limit: u32) -> Vec<DataRecord>
            = export(&owner, after.as_deref(), limit);
        write fn delete_owner_records(owner: &str) -> u64 = delete_owner(&owner);
        read fn due_records(collection: &str, before: DateTime<Utc>, limit: u32) -> Vec<DataRecord>
            = due(&collection, &before, limit);
        write fn claim_record(record: DataRecord, expected_at: DateTime<Utc>) -> bool
            = claim(record, &expected_at);
        read fn owner_collection_records(
            owner: &str, collection: &str, limit: u32, offset: u32
        ) -> Vec<DataRecord>
            = owner_collection(&owner, &collection, limit, offset);
    }
}

const COLUMNS: &str = "r.id, r.collection, r.owner, r.agent, r.document, r.search_text, \
     r.dedup_key, r.kind, r.category, r.weight, r.at, r.tags, r.created_at, r.updated_at";

pub(crate) fn put(
    conn: &mut Connection,
    mut record: DataRecord,
    max_per_collection: u64,
) -> Result<PutOutcome, StoreError> {
    truncate(&mut record);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    if let Some(key) = &record.dedup_key {
        let found = tx
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM data_records r WHERE r.owner = ?1 AND r.agent = ?2 \
                 AND r.collection = ?3 AND r.dedup_key = ?4"
            ))
            .and_then(|mut s| {
                s.query_row(
                    params![record.owner, record.agent, record.collection, key],
                    read,
                )
                .optional()
            })
            .map_err(backend)?;
        if let Some(found) = found {
            return Ok(PutOutcome::Duplicate(found?));
        }
    }
    let count: i64 = tx
        .prepare_cached(
            "SELECT coalesce(sum(n), 0) FROM data_record_counts \
             WHERE owner = ?1 AND collection = ?2",
        )
        .and_then(|mut s| s.query_row(params![record.owner, record.collection], |r| r.get(0)))
        .map_err(backend)?;
    if u64::try_from(count).unwrap_or(0) >= max_per_collection {
        return Err(StoreError::RecordLimit {
            collection: record.collection,
            limit: max_per_collection,
        });
    }
    tx.prepare_cached(
        "INSERT INTO data_records (id, collection, owner, agent, document, search_text, \
         dedup_key, kind, category, weight, at, tags, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )
    .and_then(|mut s| {
        s.execute(params![
            record.id,
            record.collection,
            record.owner,
            record.agent,
            json_text(&record.document),
            record.search_text,
            record.dedup_key,
            record.kind,
            record.category,
            record.weight,
            record.at.as_ref().map(timestamp),
            json_text(&record.tags),
            timestamp(&record.created_at),
            timestamp(&record.updated_at),
        ])
    })
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(PutOutcome::Inserted(record))
}

pub(crate) fn update(
    conn: &mut Connection,
    mut record: DataRecord,
) -> Result<Option<DataRecord>, StoreError> {
    truncate(&mut record);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let n = tx
        .prepare_cached(
            "UPDATE data_records SET document = ?5, search_text = ?6, kind = ?7, category = ?8, \
             weight = ?9, at = ?10, tags = ?11, updated_at = ?12 \
             WHERE owner = ?1 AND agent = ?2 AND collection = ?3 AND id = ?4",
        )
        .and_then(|mut s| {
            s.execute(params![
                record.owner,
                record.agent,
                record.collection,
                record.id,
                json_text(&record.document),
                record.search_text,
                record.kind,
                record.category,
                record.weight,
                record.at.as_ref().map(timestamp),
                json_text(&record.tags),
                timestamp(&record.updated_at),
            ])
        })
        .map_err(backend)?;
    if n == 0 {
        return Ok(None);
    }
    let stored = get(&tx, &record.scope(), &record.collection, &record.id)?;
    tx.commit().map_err(backend)?;
    Ok(stored)
}

pub(crate) fn get(
    conn: &Connection,
    scope: &RecordScope,
    collection: &str,
    id: &str,
) -> Result<Option<DataRecord>, StoreError> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM data_records r WHERE r.owner = ?1 AND r.agent = ?2 \
         AND r.collection = ?3 AND r.id = ?4"
    ))
    .and_then(|mut s| {
        s.query_row(params![scope.owner, scope.agent, collection, id], read)
            .optional()
    })
    .map_err(backend)?
    .transpose()
}

pub(crate) fn delete(
    conn: &mut Connection,
    scope: &RecordScope,
    collection: &str,
    id: &str,
) -> Result<bool, StoreError> {
    let n = conn
        .execute(
            "DELETE FROM data_records WHERE owner = ?1 AND agent = ?2 AND collection = ?3 \
             AND id = ?4",
            params![scope.owner, scope.agent, collection, id],
        )
        .map_err(backend)?;
    Ok(n > 0)
}

pub(crate) fn query(conn: &Connection, q: &RecordQuery) -> Result<Vec<RecordHit>, StoreError> {
    let mut args: Vec<SqlValue> = vec![
        SqlValue::Text(q.owner.clone()),
        SqlValue::Text(q.agent.clone()),
        SqlValue::Text(q.collection.clone()),
    ];
    let mut from = "data_records r".to_owned();
    let mut score = "1.0".to_owned();
    let mut filter = String::from("r.owner = ?1 AND r.agent = ?2 AND r.collection = ?3");
    if let Some(text) = &q.text {
        let terms = query_terms(text);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // Each term quoted: FTS5's operators (OR, NEAR, *, ^, columns) never come from input.
        let fts: Vec<String> = terms
            .iter()
            .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
            .collect();
        args.push(SqlValue::Text(fts.join(" OR ")));
        from.push_str(" JOIN data_records_fts f ON f.rowid = r.seq");
        filter.push_str(&format!(" AND data_records_fts MATCH ?{}", args.len()));
        score = "-bm25(data_records_fts)".to_owned();
    }
    if let Some(kind) = &q.kind {
        args.push(SqlValue::Text(kind.clone()));
        filter.push_str(&format!(" AND r.kind = ?{}", args.len()));
    }
    if let Some(category) = &q.category {
        args.push(SqlValue::Text(category.clone()));
        filter.push_str(&format!(" AND r.category = ?{}", args.len()));
    }
    if !q.tags.is_empty() {
        args.push(SqlValue::Text(json_text(&q.tags)));
        filter.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM json_each(r.tags) t WHERE t.value IN \
             (SELECT value FROM json_each(?{})))",
            args.len()
        ));
    }
    if let Some(from) = &q.at_from {
        args.push(SqlValue::Text(timestamp(from)));
        filter.push_str(&format!(" AND r.at >= ?{}", args.len()));
    }
    if let Some(before) = &q.at_before {
        args.push(SqlValue::Text(timestamp(before)));
        filter.push_str(&format!(" AND r.at < ?{}", args.len()));
    }
    if let Some(min) = q.min_weight {
        args.push(SqlValue::Real(min));
        filter.push_str(&format!(" AND r.weight >= ?{}", args.len()));
    }
    if let Some(max) = q.max_weight {
        args.push(SqlValue::Real(max));
        filter.push_str(&format!(" AND r.weight <= ?{}", args.len()));
    }
    // A field's name and value are parameters; its JSON path is built from a checked name.
    let path = |field: &str, args: &mut Vec<SqlValue>| -> Result<usize, StoreError> {
        if !is_field_name(field) {
            return Err(StoreError::Backend(
                format!("'{field}' cannot name a document field").into(),
            ));
        }
        args.push(SqlValue::Text(format!("$.\"{field}\"")));
        Ok(args.len())
    };
    for m in &q.fields {
        let p = path(&m.field, &mut args)?;
        match &m.value {
            FieldValue::Text(text) => {
                args.push(SqlValue::Text(text.clone()));
                filter.push_str(&format!(
                    " AND json_type(r.document, ?{p}) = 'text' \
                     AND json_extract(r.document, ?{p}) = ?{}",
                    args.len()
                ));
            }
            FieldValue::Number(n) => {
                args.push(SqlValue::Real(*n));
                filter.push_str(&format!(
                    " AND json_type(r.document, ?{p}) IN ('integer', 'real') \
                     AND json_extract(r.document, ?{p}) = ?{}",
                    args.len()
                ));
            }
            FieldValue::Bool(b) => {
                args.push(SqlValue::Text(b.to_string()));
                filter.push_str(&format!(
                    " AND json_type(r.document, ?{p}) = ?{}",
                    args.len()
                ));
            }
        }
    }
    let by_field = match &q.field_order {
        Some(o) => {
            let p = path(&o.field, &mut args)?;
            let key = match o.sort {
                FieldSort::Text => format!(
                    "CASE WHEN json_type(r.document, ?{p}) = 'text' \
                     THEN json_extract(r.document, ?{p}) END"
                ),
                FieldSort::Number => format!(
                    "CASE WHEN json_type(r.document, ?{p}) IN ('integer', 'real') \
                     THEN json_extract(r.document, ?{p}) END"
                ),
                FieldSort::Bool => {
                    format!(
                        "CASE json_type(r.document, ?{p}) WHEN 'true' THEN 1 WHEN 'false' THEN 0 END"
                    )
                }
            };
            let dir = if o.descending { "DESC" } else { "ASC" };
            Some(format!(
                "({key}) IS NULL, ({key}) {dir}, r.created_at DESC, r.id DESC"
            ))
        }
        None => None,
    };
    let order = match (q.order, q.text.is_some()) {
        _ if by_field.is_some() => by_field.as_deref().unwrap_or_default(),
        (RecordOrder::Relevance, true) => "score DESC, r.id",
        (RecordOrder::Newest | RecordOrder::Relevance, _) => "r.created_at DESC, r.id DESC",
        (RecordOrder::Updated, _) => "r.updated_at DESC, r.id DESC",
        (RecordOrder::Weight, _) => "r.weight DESC, r.created_at DESC, r.id DESC",
        (RecordOrder::At, _) => "r.at IS NULL, r.at, r.created_at DESC, r.id DESC",
    };
    args.push(SqlValue::Integer(i64::from(q.limit)));
    args.push(SqlValue::Integer(i64::from(q.offset)));
    let sql = format!(
        "SELECT {COLUMNS}, {score} AS score FROM {from} WHERE {filter} ORDER BY {order} \
         LIMIT ?{} OFFSET ?{}",
        args.len() - 1,
        args.len()
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(backend)?;
    let rows = stmt
        .query_map(params_from_iter(args), |row| {
            Ok((read(row)?, row.get::<_, f64>(14)?))
        })
        .map_err(backend)?;
    let mut hits = Vec::new();
    for row in rows {
        let (record, relevance) = row.map_err(backend)?;
        hits.push(RecordHit {
            record: record?,
            relevance,
        });
    }
    Ok(crate::records::normalized(hits))
}

pub(crate) fn stats(
    conn: &Connection,
    scope: &RecordScope,
    collection: &str,
) -> Result<RecordStats, StoreError> {
    let (total, mean, oldest, newest): (i64, f64, Option<String>, Option<String>) = conn
        .prepare_cached(
            "SELECT count(*), coalesce(avg(weight), 0), min(created_at), max(created_at) \
             FROM data_records WHERE owner = ?1 AND agent = ?2 AND collection = ?3",
        )
        .and_then(|mut s| {
            s.query_row(params![scope.owner, scope.agent, collection], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
        })
        .map_err(backend)?;
    let mut stmt = conn
        .prepare_cached(
            "SELECT kind, count(*) FROM data_records WHERE owner = ?1 AND agent = ?2 \
             AND collection = ?3 AND kind IS NOT NULL GROUP BY kind",
        )
        .map_err(backend)?;
    let by_kind = stmt
        .query_map(params![scope.owner, scope.agent, collection], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
        })
        .map_err(backend)?
        .map(|r| r.map(|(k, n)| (k, u64::try_from(n).unwrap_or(0))))
        .collect::<rusqlite::Result<_>>()
        .map_err(backend)?;
    let time = |t: Option<String>| t.as_deref().map(parse_time).transpose().map_err(corrupt);
    Ok(RecordStats {
        total: u64::try_from(total).unwrap_or(0),
        by_kind,
        mean_weight: mean,
        oldest: time(oldest)?,
        newest: time(newest)?,
    })
}

pub(crate) fn tally(
    conn: &Connection,
    scope: &RecordScope,
    collection: &str,
) -> Result<RecordTally, StoreError> {
    let args = params![scope.owner, scope.agent, collection];
    let total: i64 = conn
        .prepare_cached(
            "SELECT coalesce(sum(n), 0) FROM data_record_counts \
             WHERE owner = ?1 AND agent = ?2 AND collection = ?3",
        )
        .and_then(|mut s| s.query_row(args, |r| r.get(0)))
        .map_err(backend)?;
    // One aggregate a statement: SQLite answers a lone min() or max() with one index seek.
    let edge = |sql: &str| -> Result<Option<DateTime<Utc>>, StoreError> {
        let t: Option<String> = conn
            .prepare_cached(sql)
            .and_then(|mut s| s.query_row(args, |r| r.get(0)))
            .map_err(backend)?;
        t.as_deref().map(parse_time).transpose().map_err(corrupt)
    };
    Ok(RecordTally {
        total: u64::try_from(total).unwrap_or(0),
        oldest: edge(
            "SELECT min(created_at) FROM data_records \
             WHERE owner = ?1 AND agent = ?2 AND collection = ?3",
        )?,
        newest: edge(
            "SELECT max(created_at) FROM data_records \
             WHERE owner = ?1 AND agent = ?2 AND collection = ?3",
        )?,
    })
}

pub(crate) fn export(
    conn: &Connection,
    owner: &str,
    after: Option<&str>,
    limit: u32,
) -> Result<Vec<DataRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM data_records r WHERE r.owner = ?1 AND r.id > ?2 \
             ORDER BY r.id LIMIT ?3"
        ))
        .map_err(backend)?;
    stmt.query_map(params![owner, after.unwrap_or(""), limit], read)
        .map_err(backend)?
        .map(|r| r.map_err(backend).and_then(|rec| rec))
        .collect()
}

pub(crate) fn due(
    conn: &Connection,
    collection: &str,
    before: &DateTime<Utc>,
    limit: u32,
) -> Result<Vec<DataRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM data_records r WHERE r.collection = ?1 \
             AND r.at IS NOT NULL AND r.at <= ?2 ORDER BY r.at, r.id LIMIT ?3"
        ))
        .map_err(backend)?;
    stmt.query_map(params![collection, timestamp(before), limit], read)
        .map_err(backend)?
        .map(|r| r.map_err(backend).and_then(|rec| rec))
        .collect()
}

pub(crate) fn owner_collection(
    conn: &Connection,
    owner: &str,
    collection: &str,
    limit: u32,
    offset: u32,
) -> Result<Vec<DataRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM data_records r WHERE r.owner = ?1 AND r.collection = ?2 \
             ORDER BY r.at IS NULL, r.at, r.id LIMIT ?3 OFFSET ?4"
        ))
        .map_err(backend)?;
    stmt.query_map(params![owner, collection, limit, offset], read)
        .map_err(backend)?
        .map(|r| r.map_err(backend).and_then(|rec| rec))
        .collect()
}

pub(crate) fn claim(
    conn: &mut Connection,
    mut record: DataRecord,
    expected_at: &DateTime<Utc>,
) -> Result<bool, StoreError> {
    truncate(&mut record);
    let n = conn
        .prepare_cached(
            "UPDATE data_records SET document = ?4, kind = ?5, at = ?6, updated_at = ?7 \
             WHERE collection = ?1 AND id = ?2 AND at = ?3",
        )
        .and_then(|mut s| {
            s.execute(params![
                record.collection,
                record.id,
                timestamp(&expected_at.trunc_subsecs(6)),
                json_text(&record.document),
                record.kind,
                record.at.as_ref().map(timestamp),
                timestamp(&record.updated_at),
            ])
        })
        .map_err(backend)?;
    Ok(n == 1)
}

pub(crate) fn delete_collection(
    conn: &mut Connection,
    scope: &RecordScope,
    collection: &str,
) -> Result<u64, StoreError> {
    let n = conn
        .execute(
            "DELETE FROM data_records WHERE owner = ?1 AND agent = ?2 AND collection = ?3",
            params![scope.owner, scope.agent, collection],
        )
        .map_err(backend)?;
    Ok(n as u64)
}

pub(crate) fn delete_owner(conn: &mut Connection, owner: &str) -> Result<u64, StoreError> {
    let n = conn
        .execute("DELETE FROM data_records WHERE owner = ?1", params![owner])
        .map_err(backend)?;
    Ok(n as u64)
}

fn truncate(record: &mut DataRecord) {
    record.created_at = record.created_at.trunc_subsecs(6);
    record.updated_at = record.updated_at.trunc_subsecs(6);
    record.at = record.at.map(|t| t.trunc_subsecs(6));
}

fn corrupt(detail: String) -> StoreError {
    StoreError::Corrupt {
        path: String::new(),
        reason: format!("data_records: an unreadable time: {detail}"),
    }
}

/// One row of [`COLUMNS`]; a row that cannot be read back is [`StoreError::Corrupt`].
fn read(row: &Row<'_>) -> rusqlite::Result<Result<DataRecord, StoreError>> {
    let id: String = row.get(0)?;
    let document: String = row.get(4)?;
    let at: Option<String> = row.get(10)?;
    let tags: String = row.get(11)?;
    let created: String = row.get(12)?;
    let updated: String = row.get(13)?;
    let bad = |what: &str, detail: String| StoreError::Corrupt {
        path: String::new(),
        reason: format!("data_records: record {id} has an unreadable {what}: {detail}"),
    };
    let parsed = (|| {
        Ok::<_, StoreError>((
            serde_json::from_str(&document).map_err(|e| bad("document", e.to_string()))?,
            at.as_deref()
                .map(parse_time)
                .transpose()
                .map_err(|e| bad("at", e))?,
            serde_json::from_str::<Vec<String>>(&tags).map_err(|e| bad("tags", e.to_string()))?,
            parse_time(&created).map_err(|e| bad("created_at", e))?,
            parse_time(&updated).map_err(|e| bad("updated_at", e))?,
        ))
    })();
    let (document, at, tags, created_at, updated_at): (_, Option<DateTime<Utc>>, _, _, _) =
        match parsed {
            Ok(p) => p,
            Err(e) => return Ok(Err(e)),
        };
    Ok(Ok(DataRecord {
        collection: row.get(1)?,
        owner: row.get(2)?,
        agent: row.get(3)?,
        document,
        search_text: row.get(5)?,
        dedup_key: row.get(6)?,
        kind: row.get(7)?,
        category: row.get(8)?,
        weight: row.get(9)?,
        at,
        tags,
        created_at,
        updated_at,
        id,
    }))
}
