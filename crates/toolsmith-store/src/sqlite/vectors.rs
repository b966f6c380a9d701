//! Vector search on SQLite (`vector_collections`, `vector_items`), indexed by sqlite-vec: each
//! collection has a `vec0` virtual table of its own (`vec_index_<id>`, `float[N]` with the
//! cosine metric, rowid = the item's `seq`), kept in step with the items in each write's
//! transaction. A search without filters is a `vec0` KNN query (`MATCH … AND k = …`); a search
//! with metadata filters scans the matching items exactly (`vec_distance_cosine`), so a
//! selective filter never loses hits. A collection whose index is missing (a store filled by
//! `db copy`, which moves the rows, not the derived index) is searched exactly until its next
//! write rebuilds the index.

use std::sync::Once;

use chrono::Utc;
use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};
use serde_json::Value;
use toolsmith_core::vector::{
    VectorCollectionRecord, VectorHit, VectorItem, VectorQuery, is_filter_key,
};

use super::rows::{backend, parse_time, timestamp};
use crate::StoreError;
use crate::agent_rows::corrupt;

store_on_connections! {
    impl VectorStore {
        write fn create_vector_collection(collection: &VectorCollectionRecord, max_per_owner: u64)
            -> bool = create(&collection, max_per_owner);
        read fn list_vector_collections(owner: &str) -> Vec<VectorCollectionRecord>
            = list(&owner);
        read fn get_vector_collection(owner: &str, name: &str) -> Option<VectorCollectionRecord>
            = get(&owner, &name);
        write fn upsert_vectors(owner: &str, name: &str, items: &[VectorItem], max_items: u64)
            -> Option<u64> = upsert(&owner, &name, &items, max_items);
        write fn delete_vectors(owner: &str, name: &str, ids: &[String]) -> Option<u64>
            = delete(&owner, &name, &ids);
        read fn search_vectors(query: &VectorQuery) -> Option<Vec<VectorHit>> = search(&query);
    }
}

/// Makes sqlite-vec's functions and `vec0` part of every connection opened after this call
/// (SQLite's auto-extension list, process-wide, registered once).
#[allow(unsafe_code)]
pub(crate) fn register_sqlite_vec() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        // SAFETY: `sqlite3_vec_init` is sqlite-vec's entry point, compiled with SQLITE_CORE
        // into this binary against the SQLite rusqlite bundles; it has the signature SQLite's
        // auto-extension list calls (`int (*)(sqlite3*, char**, const sqlite3_api_routines*)`),
        // which the crate declares as `fn()`, hence the cast of the function pointer. SQLite
        // copies the pointer into its list; nothing else is shared.
        unsafe {
            rusqlite::ffi::sqlite3_auto_extension(Some(std::mem::transmute::<
                *const (),
                unsafe extern "C" fn(
                    *mut rusqlite::ffi::sqlite3,
                    *mut *mut std::os::raw::c_char,
                    *const rusqlite::ffi::sqlite3_api_routines,
                ) -> std::os::raw::c_int,
            >(
                sqlite_vec::sqlite3_vec_init as *const (),
            )));
        }
    });
}

const COLLECTION_COLUMNS: &str = "c.id, c.owner, c.name, c.dimensions, c.description, \
     c.created_at, c.updated_at, (SELECT count(*) FROM vector_items i WHERE i.collection_id = c.id)";

/// The index table of a collection. Ids are the store's own (uuids); anything else in one is
/// left out, so the name is always a plain identifier.
fn index_table(collection_id: &str) -> String {
    let id: String = collection_id
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    format!("vec_index_{id}")
}

fn collection_from_row(row: &Row<'_>) -> Result<VectorCollectionRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let time = |i: usize, what: &str| -> Result<_, StoreError> {
        let text: String = row.get(i).map_err(backend)?;
        parse_time(&text).map_err(|e| corrupt("vector_collections", &id, what, e))
    };
    let dimensions: i64 = row.get(3).map_err(backend)?;
    let count: i64 = row.get(7).map_err(backend)?;
    Ok(VectorCollectionRecord {
        owner: row.get(1).map_err(backend)?,
        name: row.get(2).map_err(backend)?,
        dimensions: u32::try_from(dimensions)
            .map_err(|e| corrupt("vector_collections", &id, "dimensions", e))?,
        description: row.get(4).map_err(backend)?,
        created_at: time(5, "created_at")?,
        updated_at: time(6, "updated_at")?,
        count: u64::try_from(count).unwrap_or(0),
        id,
    })
}

fn get(
    conn: &mut Connection,
    owner: &str,
    name: &str,
) -> Result<Option<VectorCollectionRecord>, StoreError> {
    conn.query_row(
        &format!(
            "SELECT {COLLECTION_COLUMNS} FROM vector_collections c WHERE c.owner = ?1 AND c.name = ?2"
        ),
        params![owner, name],
        |row| Ok(collection_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

fn list(conn: &mut Connection, owner: &str) -> Result<Vec<VectorCollectionRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {COLLECTION_COLUMNS} FROM vector_collections c WHERE c.owner = ?1 ORDER BY c.name"
        ))
        .map_err(backend)?;
    let rows = stmt
        .query_map([owner], |row| Ok(collection_from_row(row)))
        .map_err(backend)?;
    rows.map(|r| r.map_err(backend)?).collect()
}

fn create_index(conn: &Connection, collection_id: &str, dimensions: u32) -> Result<(), StoreError> {
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {} USING vec0(embedding float[{dimensions}] \
         distance_metric=cosine)",
        index_table(collection_id)
    ))
    .map_err(backend)
}

fn index_exists(conn: &Connection, collection_id: &str) -> Result<bool, StoreError> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE name = ?1",
        [index_table(collection_id)],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
    .map_err(backend)
}

fn create(
    conn: &mut Connection,
    collection: &VectorCollectionRecord,
    max_per_owner: u64,
) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let count: i64 = tx
        .query_row(
            "SELECT count(*) FROM vector_collections WHERE owner = ?1",
            [&collection.owner],
            |r| r.get(0),
        )
        .map_err(backend)?;
    if u64::try_from(count).unwrap_or(0) >= max_per_owner {
        return Err(StoreError::RecordLimit {
            collection: "vector collection".to_owned(),
            limit: max_per_owner,
        });
    }
    let inserted = tx
        .execute(
            "INSERT INTO vector_collections (id, owner, name, dimensions, description, \
             created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
             ON CONFLICT (owner, name) DO NOTHING",
            params![
                collection.id,
                collection.owner,
                collection.name,
                collection.dimensions,
                collection.description,
                timestamp(&collection.created_at),
                timestamp(&collection.updated_at),
            ],
        )
        .map_err(backend)?;
    if inserted == 0 {
        return Ok(false);
    }
    create_index(&tx, &collection.id, collection.dimensions)?;
    tx.commit().map_err(backend)?;
    Ok(true)
}

/// The little-endian bytes of an embedding (sqlite-vec's `float[N]` blob format).
fn blob(embedding: &[f32]) -> Vec<u8> {
    embedding.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The collection's id and dimensions.
fn collection_of(
    conn: &Connection,
    owner: &str,
    name: &str,
) -> Result<Option<(String, u32)>, StoreError> {
    conn.query_row(
        "SELECT id, dimensions FROM vector_collections WHERE owner = ?1 AND name = ?2",
        params![owner, name],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)),
    )
    .optional()
    .map_err(backend)
    .map(|found| found.map(|(id, dims)| (id, u32::try_from(dims).unwrap_or(0))))
}

/// Rebuilds a missing index from the collection's rows (after `db copy`).
fn ensure_index(conn: &Connection, collection_id: &str, dimensions: u32) -> Result<(), StoreError> {
    if index_exists(conn, collection_id)? {
        return Ok(());
    }
    create_index(conn, collection_id, dimensions)?;
    conn.execute(
        &format!(
            "INSERT INTO {} (rowid, embedding) SELECT seq, embedding FROM vector_items \
             WHERE collection_id = ?1",
            index_table(collection_id)
        ),
        [collection_id],
    )
    .map_err(backend)?;
    Ok(())
}

fn upsert(
    conn: &mut Connection,
    owner: &str,
    name: &str,
    items: &[VectorItem],
    max_items: u64,
) -> Result<Option<u64>, StoreError> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let Some((id, dimensions)) = collection_of(&tx, owner, name)? else {
        return Ok(None);
    };
    ensure_index(&tx, &id, dimensions)?;
    let table = index_table(&id);
    let now = timestamp(&Utc::now());
    {
        let mut put = tx
            .prepare(
                "INSERT INTO vector_items (collection_id, item_id, content, metadata, embedding, \
                 created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) \
                 ON CONFLICT (collection_id, item_id) DO UPDATE SET content = excluded.content, \
                 metadata = excluded.metadata, embedding = excluded.embedding, \
                 updated_at = excluded.updated_at RETURNING seq",
            )
            .map_err(backend)?;
        let mut unindex = tx
            .prepare(&format!("DELETE FROM {table} WHERE rowid = ?1"))
            .map_err(backend)?;
        let mut index = tx
            .prepare(&format!(
                "INSERT INTO {table} (rowid, embedding) VALUES (?1, ?2)"
            ))
            .map_err(backend)?;
        for item in items {
            let embedding = blob(&item.embedding);
            let seq: i64 = put
                .query_row(
                    params![
                        id,
                        item.id,
                        item.content,
                        item.metadata.to_string(),
                        embedding,
                        now
                    ],
                    |r| r.get(0),
                )
                .map_err(backend)?;
            unindex.execute([seq]).map_err(backend)?;
            index.execute(params![seq, embedding]).map_err(backend)?;
        }
    }
    let count: i64 = tx
        .query_row(
            "SELECT count(*) FROM vector_items WHERE collection_id = ?1",
            [&id],
            |r| r.get(0),
        )
        .map_err(backend)?;
    let count = u64::try_from(count).unwrap_or(0);
    if count > max_items {
        return Err(StoreError::RecordLimit {
            collection: format!("'{name}' vector"),
            limit: max_items,
        });
    }
    tx.execute(
        "UPDATE vector_collections SET updated_at = ?1 WHERE id = ?2",
        params![now, id],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(Some(count))
}

fn delete(
    conn: &mut Connection,
    owner: &str,
    name: &str,
    ids: &[String],
) -> Result<Option<u64>, StoreError> {
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(backend)?;
    let Some((id, _)) = collection_of(&tx, owner, name)? else {
        return Ok(None);
    };
    let indexed = index_exists(&tx, &id)?;
    let table = index_table(&id);
    let mut gone = 0u64;
    {
        let mut remove = tx
            .prepare(
                "DELETE FROM vector_items WHERE collection_id = ?1 AND item_id = ?2 RETURNING seq",
            )
            .map_err(backend)?;
        let mut unindex = tx
            .prepare(&format!("DELETE FROM {table} WHERE rowid = ?1"))
            .ok()
            .filter(|_| indexed);
        for item in ids {
            let seq: Option<i64> = remove
                .query_row(params![id, item], |r| r.get(0))
                .optional()
                .map_err(backend)?;
            if let Some(seq) = seq {
                gone += 1;
                if let Some(unindex) = unindex.as_mut() {
                    unindex.execute([seq]).map_err(backend)?;
                }
            }
        }
    }
    tx.commit().map_err(backend)?;
    Ok(Some(gone))
}

fn hit_from_row(row: &Row<'_>) -> Result<VectorHit, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let metadata: String = row.get(2).map_err(backend)?;
    let distance: f64 = row.get(3).map_err(backend)?;
    Ok(VectorHit {
        metadata: serde_json::from_str(&metadata)
            .map_err(|e| corrupt("vector_items", &id, "metadata", e))?,
        content: row.get(1).map_err(backend)?,
        score: 1.0 - distance,
        id,
    })
}

fn search(
    conn: &mut Connection,
    query: &VectorQuery,
) -> Result<Option<Vec<VectorHit>>, StoreError> {
    let Some((id, _)) = collection_of(conn, &query.owner, &query.collection)? else {
        return Ok(None);
    };
    let embedding = blob(&query.embedding);
    let k = i64::from(query.top_k.max(1));
    if query.filter.is_empty() && index_exists(conn, &id)? {
        let sql = format!(
            "SELECT i.item_id, i.content, i.metadata, v.distance FROM \
             (SELECT rowid, distance FROM {} WHERE embedding MATCH ?1 AND k = ?2) v \
             JOIN vector_items i ON i.seq = v.rowid ORDER BY v.distance, i.item_id",
            index_table(&id)
        );
        let mut stmt = conn.prepare(&sql).map_err(backend)?;
        let rows = stmt
            .query_map(params![embedding, k], |row| Ok(hit_from_row(row)))
            .map_err(backend)?;
        return rows
            .map(|r| r.map_err(backend)?)
            .collect::<Result<Vec<_>, _>>()
            .map(Some);
    }
    // Exact: every item of the collection that passes the filters.
    let mut sql = String::from(
        "SELECT item_id, content, metadata, vec_distance_cosine(embedding, ?1) AS d \
         FROM vector_items WHERE collection_id = ?2",
    );
    let mut values: Vec<rusqlite::types::Value> = vec![
        rusqlite::types::Value::Blob(embedding),
        rusqlite::types::Value::Text(id),
    ];
    for (key, value) in &query.filter {
        if !is_filter_key(key) {
            continue;
        }
        match value {
            Value::Array(options) => {
                let marks: Vec<String> = options
                    .iter()
                    .map(|option| {
                        values.push(rusqlite::types::Value::Text(option.to_string()));
                        format!("?{}", values.len())
                    })
                    .collect();
                if marks.is_empty() {
                    sql.push_str(" AND 0");
                } else {
                    sql.push_str(&format!(
                        " AND (metadata -> '$.\"{key}\"') IN ({})",
                        marks.join(", ")
                    ));
                }
            }
            other => {
                values.push(rusqlite::types::Value::Text(other.to_string()));
                sql.push_str(&format!(
                    " AND (metadata -> '$.\"{key}\"') = ?{}",
                    values.len()
                ));
            }
        }
    }
    values.push(rusqlite::types::Value::Integer(k));
    sql.push_str(&format!(" ORDER BY d, item_id LIMIT ?{}", values.len()));
    let mut stmt = conn.prepare(&sql).map_err(backend)?;
    let rows = stmt
        .query_map(params_from_iter(values), |row| Ok(hit_from_row(row)))
        .map_err(backend)?;
    rows.map(|r| r.map_err(backend)?)
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}
