//! The agent's own records (`data_records`) in PostgreSQL: one table for every family, its
//! text searched through a GIN index on `to_tsvector('english', search_text)` and ranked by
//! `ts_rank` (length-normalized). An insert under the per-collection limit holds a
//! transaction-scoped advisory lock on the owner and collection, so instances cannot race
//! past the limit or store a duplicate twice.

use chrono::{DateTime, SubsecRound, Utc};
use deadpool_postgres::Client;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;
use toolsmith_core::data::{
    DataRecord, FieldSort, FieldValue, PutOutcome, RecordHit, RecordOrder, RecordQuery,
    RecordScope, RecordStats, RecordTally, is_field_name, query_terms,
};

use super::errors::pg;
use super::rows::{col, json, json_col};
use crate::StoreError;

store_on_pool! {
    impl RecordStore |client, instance| {
        fn put_record(record: DataRecord, max_per_collection: u64) -> PutOutcome
            = put(&mut client, record, max_per_collection);
        fn update_record(record: DataRecord) -> Option<DataRecord> = update(&client, record);
        fn get_record(scope: &RecordScope, collection: &str, id: &str) -> Option<DataRecord>
            = get(&client, scope, collection, id);
        fn delete_record(scope: &RecordScope, collection: &str, id: &str) -> bool
            = delete(&client, scope, collection, id);
        fn query_records(query: &RecordQuery) -> Vec<RecordHit> = self::query(&client, query);
        fn record_stats(scope: &RecordScope, collection: &str) -> RecordStats
            = stats(&client, scope, collection);
        fn record_tally(scope: &RecordScope, collection: &str) -> RecordTally
            = tally(&client, scope, collection);
        fn delete_collection_records(scope: &RecordScope, collection: &str) -> u64
            = delete_collection(&client, scope, collection);
        fn export_records(owner: &str, after: Option<&str>, limit: u32) -> Vec<DataRecord>
            = export(&client, owner, after, limit);
        fn delete_owner_records(owner: &str) -> u64 = delete_owner(&client, owner);
        fn due_records(collection: &str, before: DateTime<Utc>, limit: u32) -> Vec<DataRecord>
            = due(&client, collection, before, limit);
        fn claim_record(record: DataRecord, expected_at: DateTime<Utc>) -> bool
            = claim(&client, record, expected_at);
        fn owner_collection_records(
            owner: &str, collection: &str, limit: u32, offset: u32
        ) -> Vec<DataRecord>
            = owner_collection(&client, owner, collection, limit, offset);
    }
}

const COLUMNS: &str = "id, collection, owner, agent, document, search_text, dedup_key, kind, \
     category, weight, at, tags, created_at, updated_at";

/// The text-search expression the GIN index is built on (queries must say it the same way).
const VECTOR: &str = "to_tsvector('english'::regconfig, search_text)";

pub(crate) async fn put(
    client: &mut Client,
    mut record: DataRecord,
    max_per_collection: u64,
) -> Result<PutOutcome, StoreError> {
    truncate(&mut record);
    let tx = client.transaction().await.map_err(pg)?;
    let lock_key = format!(
        "toolsmith-records:{}\u{1f}{}",
        record.owner, record.collection
    );
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&lock_key],
    )
    .await
    .map_err(pg)?;
    if let Some(key) = &record.dedup_key {
        let found = tx
            .query_opt(
                &format!(
                    "SELECT {COLUMNS} FROM data_records WHERE owner = $1 AND agent = $2 \
                     AND collection = $3 AND dedup_key = $4"
                ),
                &[&record.owner, &record.agent, &record.collection, key],
            )
            .await
            .map_err(pg)?;
        if let Some(row) = found {
            return Ok(PutOutcome::Duplicate(read(&row)?));
        }
    }
    let count: i64 = tx
        .query_one(
            "SELECT coalesce(sum(n), 0)::bigint FROM data_record_counts \
             WHERE owner = $1 AND collection = $2",
            &[&record.owner, &record.collection],
        )
        .await
        .map_err(pg)?
        .get(0);
    if u64::try_from(count).unwrap_or(0) >= max_per_collection {
        return Err(StoreError::RecordLimit {
            collection: record.collection,
            limit: max_per_collection,
        });
    }
    tx.execute(
        &format!(
            "INSERT INTO data_records ({COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
        ),
        &[
            &record.id,
            &record.collection,
            &record.owner,
            &record.agent,
            &record.document,
            &record.search_text,
            &record.dedup_key,
            &record.kind,
            &record.category,
            &record.weight,
            &record.at,
            &json(&record.tags),
            &record.created_at,
            &record.updated_at,
        ],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(PutOutcome::Inserted(record))
}

pub(crate) async fn update(
    client: &Client,
    mut record: DataRecord,
) -> Result<Option<DataRecord>, StoreError> {
    truncate(&mut record);
    let row = client
        .query_opt(
            &format!(
                "UPDATE data_records SET document = $5, search_text = $6, kind = $7, \
                 category = $8, weight = $9, at = $10, tags = $11, updated_at = $12 \
                 WHERE owner = $1 AND agent = $2 AND collection = $3 AND id = $4 \
                 RETURNING {COLUMNS}"
            ),
            &[
                &record.owner,
                &record.agent,
                &record.collection,
                &record.id,
                &record.document,
                &record.search_text,
                &record.kind,
                &record.category,
                &record.weight,
                &record.at,
                &json(&record.tags),
                &record.updated_at,
            ],
        )
        .await
        .map_err(pg)?;
    row.as_ref().map(read).transpose()
}

pub(crate) async fn get(
    client: &Client,
    scope: &RecordScope,
    collection: &str,
    id: &str,
) -> Result<Option<DataRecord>, StoreError> {
    let row = client
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM data_records WHERE owner = $1 AND agent = $2 \
                 AND collection = $3 AND id = $4"
            ),
            &[&scope.owner, &scope.agent, &collection, &id],
        )
        .await
        .map_err(pg)?;
    row.as_ref().map(read).transpose()
}

pub(crate) async fn delete(
    client: &Client,
    scope: &RecordScope,
    collection: &str,
    id: &str,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            "DELETE FROM data_records WHERE owner = $1 AND agent = $2 AND collection = $3 \
             AND id = $4",
            &[&scope.owner, &scope.agent, &collection, &id],
        )
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

pub(crate) async fn query(client: &Client, q: &RecordQuery) -> Result<Vec<RecordHit>, StoreError> {
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![
        Box::new(q.owner.clone()),
        Box::new(q.agent.clone()),
        Box::new(q.collection.clone()),
    ];
    let mut from = "data_records".to_owned();
    let mut score = "1.0::float8".to_owned();
    let mut filter = String::from("owner = $1 AND agent = $2 AND collection = $3");
    if let Some(text) = &q.text {
        let terms = query_terms(text);
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        // Only letters and digits reach to_tsquery: its operators never come from input.
        args.push(Box::new(terms.join(" | ")));
        from.push_str(&format!(
            ", to_tsquery('english'::regconfig, ${}) AS q",
            args.len()
        ));
        filter.push_str(&format!(" AND {VECTOR} @@ q"));
        score = format!("ts_rank({VECTOR}, q, 1)::float8");
    }
    if let Some(kind) = &q.kind {
        args.push(Box::new(kind.clone()));
        filter.push_str(&format!(" AND kind = ${}", args.len()));
    }
    if let Some(category) = &q.category {
        args.push(Box::new(category.clone()));
        filter.push_str(&format!(" AND category = ${}", args.len()));
    }
    if !q.tags.is_empty() {
        args.push(Box::new(q.tags.clone()));
        filter.push_str(&format!(" AND tags ?| ${}::text[]", args.len()));
    }
    if let Some(from) = q.at_from {
        args.push(Box::new(from));
        filter.push_str(&format!(" AND at >= ${}", args.len()));
    }
    if let Some(before) = q.at_before {
        args.push(Box::new(before));
        filter.push_str(&format!(" AND at < ${}", args.len()));
    }
    if let Some(min) = q.min_weight {
        args.push(Box::new(min));
        filter.push_str(&format!(" AND weight >= ${}", args.len()));
    }
    if let Some(max) = q.max_weight {
        args.push(Box::new(max));
        filter.push_str(&format!(" AND weight <= ${}", args.len()));
    }
    // A field's name and value are parameters, never query text.
    let field = |name: &str, args: &mut Vec<Box<dyn ToSql + Sync + Send>>| {
        if !is_field_name(name) {
            return Err(StoreError::Backend(
                format!("'{name}' cannot name a document field").into(),
            ));
        }
        args.push(Box::new(name.to_owned()));
        Ok(format!("(document -> ${}::text)", args.len()))
    };
    for m in &q.fields {
        let f = field(&m.field, &mut args)?;
        let test = match &m.value {
            FieldValue::Text(text) => {
                args.push(Box::new(text.clone()));
                format!("{f} = to_jsonb(${}::text)", args.len())
            }
            FieldValue::Number(n) => {
                args.push(Box::new(*n));
                format!(
                    "(CASE WHEN jsonb_typeof({f}) = 'number' THEN ({f} #>> '{{}}')::float8 END) \
                     = ${}::float8",
                    args.len()
                )
            }
            FieldValue::Bool(b) => {
                args.push(Box::new(*b));
                format!("{f} = to_jsonb(${}::bool)", args.len())
            }
        };
        filter.push_str(" AND ");
        filter.push_str(&test);
    }
    let by_field = match &q.field_order {
        Some(o) => {
            let f = field(&o.field, &mut args)?;
            let key = match o.sort {
                FieldSort::Text => format!(
                    r#"(CASE WHEN jsonb_typeof({f}) = 'string' THEN {f} #>> '{{}}' END) COLLATE "C""#
                ),
                FieldSort::Number => format!(
                    "CASE WHEN jsonb_typeof({f}) = 'number' THEN ({f} #>> '{{}}')::float8 END"
                ),
                FieldSort::Bool => format!(
                    "CASE WHEN jsonb_typeof({f}) = 'boolean' THEN ({f} #>> '{{}}')::bool END"
                ),
            };
            let dir = if o.descending { "DESC" } else { "ASC" };
            Some(format!(
                r#"{key} {dir} NULLS LAST, created_at DESC, id COLLATE "C" DESC"#
            ))
        }
        None => None,
    };
    let order = match (q.order, q.text.is_some()) {
        _ if by_field.is_some() => by_field.as_deref().unwrap_or_default(),
        (RecordOrder::Relevance, true) => r#"score DESC, id COLLATE "C""#,
        (RecordOrder::Newest | RecordOrder::Relevance, _) => {
            r#"created_at DESC, id COLLATE "C" DESC"#
        }
        (RecordOrder::Updated, _) => r#"updated_at DESC, id COLLATE "C" DESC"#,
        (RecordOrder::Weight, _) => r#"weight DESC, created_at DESC, id COLLATE "C" DESC"#,
        (RecordOrder::At, _) => r#"at ASC NULLS LAST, created_at DESC, id COLLATE "C" DESC"#,
    };
    args.push(Box::new(i64::from(q.limit)));
    args.push(Box::new(i64::from(q.offset)));
    let sql = format!(
        "SELECT {COLUMNS}, {score} AS score FROM {from} WHERE {filter} ORDER BY {order} \
         LIMIT ${} OFFSET ${}",
        args.len() - 1,
        args.len()
    );
    let params: Vec<&(dyn ToSql + Sync)> = args
        .iter()
        .map(|a| a.as_ref() as &(dyn ToSql + Sync))
        .collect();
    let rows = client.query(&sql, &params).await.map_err(pg)?;
    let hits = rows
        .iter()
        .map(|row| {
            Ok(RecordHit {
                record: read(row)?,
                relevance: col(row, "score")?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(crate::records::normalized(hits))
}

pub(crate) async fn stats(
    client: &Client,
    scope: &RecordScope,
    collection: &str,
) -> Result<RecordStats, StoreError> {
    let row = client
        .query_one(
            "SELECT count(*) AS total, coalesce(avg(weight), 0)::float8 AS mean, \
             min(created_at) AS oldest, max(created_at) AS newest \
             FROM data_records WHERE owner = $1 AND agent = $2 AND collection = $3",
            &[&scope.owner, &scope.agent, &collection],
        )
        .await
        .map_err(pg)?;
    let kinds = client
        .query(
            "SELECT kind, count(*) AS n FROM data_records WHERE owner = $1 AND agent = $2 \
             AND collection = $3 AND kind IS NOT NULL GROUP BY kind",
            &[&scope.owner, &scope.agent, &collection],
        )
        .await
        .map_err(pg)?;
    let by_kind = kinds
        .iter()
        .map(|r| {
            let n: i64 = col(r, "n")?;
            Ok((col(r, "kind")?, u64::try_from(n).unwrap_or(0)))
        })
        .collect::<Result<_, StoreError>>()?;
    let total: i64 = col(&row, "total")?;
    Ok(RecordStats {
        total: u64::try_from(total).unwrap_or(0),
        by_kind,
        mean_weight: col(&row, "mean")?,
        oldest: col(&row, "oldest")?,
        newest: col(&row, "newest")?,
    })
}

pub(crate) async fn export(
    client: &Client,
    owner: &str,
    after: Option<&str>,
    limit: u32,
) -> Result<Vec<DataRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM data_records WHERE owner = $1 \
                 AND id COLLATE \"C\" > $2 ORDER BY id COLLATE \"C\" LIMIT $3"
            ),
            &[&owner, &after.unwrap_or(""), &i64::from(limit)],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(read).collect()
}

pub(crate) async fn due(
    client: &Client,
    collection: &str,
    before: chrono::DateTime<chrono::Utc>,
    limit: u32,
) -> Result<Vec<DataRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM data_records WHERE collection = $1 \
                 AND at IS NOT NULL AND at <= $2 ORDER BY at, id COLLATE \"C\" LIMIT $3"
            ),
            &[&collection, &before, &i64::from(limit)],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(read).collect()
}

pub(crate) async fn owner_collection(
    client: &Client,
    owner: &str,
    collection: &str,
    limit: u32,
    offset: u32,
) -> Result<Vec<DataRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM data_records WHERE owner = $1 AND collection = $2 \
                 ORDER BY at IS NULL, at, id COLLATE \"C\" LIMIT $3 OFFSET $4"
            ),
            &[&owner, &collection, &i64::from(limit), &i64::from(offset)],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(read).collect()
}

pub(crate) async fn claim(
    client: &Client,
    mut record: DataRecord,
    expected_at: chrono::DateTime<chrono::Utc>,
) -> Result<bool, StoreError> {
    truncate(&mut record);
    let n = client
        .execute(
            "UPDATE data_records SET document = $4, kind = $5, at = $6, updated_at = $7 \
             WHERE collection = $1 AND id = $2 AND at = $3",
            &[
                &record.collection,
                &record.id,
                &expected_at.trunc_subsecs(6),
                &record.document,
                &record.kind,
                &record.at,
                &record.updated_at,
            ],
        )
        .await
        .map_err(pg)?;
    Ok(n == 1)
}

pub(crate) async fn tally(
    client: &Client,
    scope: &RecordScope,
    collection: &str,
) -> Result<RecordTally, StoreError> {
    let row = client
        .query_one(
            "SELECT (SELECT coalesce(sum(n), 0)::bigint FROM data_record_counts \
                     WHERE owner = $1 AND agent = $2 AND collection = $3) AS total, \
                    (SELECT min(created_at) FROM data_records \
                     WHERE owner = $1 AND agent = $2 AND collection = $3) AS oldest, \
                    (SELECT max(created_at) FROM data_records \
                     WHERE owner = $1 AND agent = $2 AND collection = $3) AS newest",
            &[&scope.owner, &scope.agent, &collection],
        )
        .await
        .map_err(pg)?;
    let total: i64 = col(&row, "total")?;
    Ok(RecordTally {
        total: u64::try_from(total).unwrap_or(0),
        oldest: col(&row, "oldest")?,
        newest: col(&row, "newest")?,
    })
}

pub(crate) async fn delete_collection(
    client: &Client,
    scope: &RecordScope,
    collection: &str,
) -> Result<u64, StoreError> {
    client
        .execute(
            "DELETE FROM data_records WHERE owner = $1 AND agent = $2 AND collection = $3",
            &[&scope.owner, &scope.agent, &collection],
        )
        .await
        .map_err(pg)
}

pub(crate) async fn delete_owner(client: &Client, owner: &str) -> Result<u64, StoreError> {
    client
        .execute("DELETE FROM data_records WHERE owner = $1", &[&owner])
        .await
        .map_err(pg)
}

fn truncate(record: &mut DataRecord) {
    record.created_at = record.created_at.trunc_subsecs(6);
    record.updated_at = record.updated_at.trunc_subsecs(6);
    record.at = record.at.map(|t| t.trunc_subsecs(6));
}

fn read(row: &Row) -> Result<DataRecord, StoreError> {
    let id: String = col(row, "id")?;
    Ok(DataRecord {
        collection: col(row, "collection")?,
        owner: col(row, "owner")?,
        agent: col(row, "agent")?,
        document: col(row, "document")?,
        search_text: col(row, "search_text")?,
        dedup_key: col(row, "dedup_key")?,
        kind: col(row, "kind")?,
        category: col(row, "category")?,
        weight: col(row, "weight")?,
        at: col(row, "at")?,
        tags: json_col(row, "tags", "data_records", &id)?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        id,
    })
}
