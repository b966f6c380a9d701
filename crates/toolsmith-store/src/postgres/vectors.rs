//! Vector search in PostgreSQL (`vector_collections`, `vector_items`), indexed by pgvector:
//! each collection has a partial HNSW index of its own on `embedding::vector(N)` with the cosine
//! operator class (`vec_index_<id>`, `WHERE collection_id = '<id>'`), made with the collection
//! after `CREATE EXTENSION IF NOT EXISTS vector`. The items' embeddings are `REAL[]`, so the
//! schema itself needs no extension: a server without pgvector runs every other part of
//! Toolsmith, and creating a collection there fails naming the package to install.
//!
//! A search without filters orders by `<=>` on the collection's expression, which the planner
//! answers from the HNSW index (`hnsw.ef_search` raised to twice `k`); a search with metadata
//! filters turns index scans off for its transaction and ranks the matching items exactly, so a
//! selective filter never loses hits to the index's post-filtering.

use chrono::Utc;
use deadpool_postgres::Client;
use serde_json::Value;
use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::vector::{
    VectorCollectionRecord, VectorHit, VectorItem, VectorQuery, is_filter_key,
};

use super::errors::pg;
use super::rows::{col, micros};
use crate::StoreError;
use crate::agent_rows::corrupt;

store_on_pool! {
    impl VectorStore |client, this_instance| {
        fn create_vector_collection(collection: &VectorCollectionRecord, max_per_owner: u64)
            -> bool = create(&mut client, collection, max_per_owner);
        fn list_vector_collections(owner: &str) -> Vec<VectorCollectionRecord>
            = list(&**client, owner);
        fn get_vector_collection(owner: &str, name: &str) -> Option<VectorCollectionRecord>
            = get(&**client, owner, name);
        fn upsert_vectors(owner: &str, name: &str, items: &[VectorItem], max_items: u64)
            -> Option<u64> = upsert(&mut client, owner, name, items, max_items);
        fn delete_vectors(owner: &str, name: &str, ids: &[String]) -> Option<u64>
            = delete(&mut client, owner, name, ids);
        fn search_vectors(query: &VectorQuery) -> Option<Vec<VectorHit>>
            = search(&mut client, query);
    }
}

const COLLECTION_COLUMNS: &str = "c.id, c.owner, c.name, c.dimensions, c.description, \
     c.created_at, c.updated_at, \
     (SELECT count(*) FROM vector_items i WHERE i.collection_id = c.id) AS count";

/// What a server without pgvector answers, with the fix.
fn no_pgvector(e: &tokio_postgres::Error) -> StoreError {
    StoreError::Unavailable {
        reason: format!(
            "vector search needs the pgvector extension in this PostgreSQL ({e}): install it \
             on the database server (Debian: build third_party/pgvector with \
             scripts/install-system-deps.sh, or the postgresql-<version>-pgvector package where \
             the distribution has one) and let Toolsmith's role create it (CREATE EXTENSION \
             vector, as a superuser once)"
        ),
    }
}

/// The collection id as a literal of the index's predicate, when it is one of the store's own
/// ids (letters, digits and `-` only); `None` otherwise, and then no index is made or used.
fn literal_id(id: &str) -> Option<String> {
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        .then(|| format!("'{id}'"))
}

fn index_name(id: &str) -> String {
    let id: String = id.chars().filter(char::is_ascii_alphanumeric).collect();
    format!("vec_index_{id}")
}

fn collection_from_row(row: &Row) -> Result<VectorCollectionRecord, StoreError> {
    let id: String = col(row, "id")?;
    let dimensions: i64 = col(row, "dimensions")?;
    let count: i64 = col(row, "count")?;
    Ok(VectorCollectionRecord {
        owner: col(row, "owner")?,
        name: col(row, "name")?,
        dimensions: u32::try_from(dimensions)
            .map_err(|e| corrupt("vector_collections", &id, "dimensions", e))?,
        description: col(row, "description")?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        count: u64::try_from(count).unwrap_or(0),
        id,
    })
}

async fn get(
    client: &impl GenericClient,
    owner: &str,
    name: &str,
) -> Result<Option<VectorCollectionRecord>, StoreError> {
    client
        .query_opt(
            &format!(
                "SELECT {COLLECTION_COLUMNS} FROM vector_collections c \
                 WHERE c.owner = $1 AND c.name = $2"
            ),
            &[&owner, &name],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(collection_from_row)
        .transpose()
}

async fn list(
    client: &impl GenericClient,
    owner: &str,
) -> Result<Vec<VectorCollectionRecord>, StoreError> {
    client
        .query(
            &format!(
                "SELECT {COLLECTION_COLUMNS} FROM vector_collections c WHERE c.owner = $1 \
                 ORDER BY c.name"
            ),
            &[&owner],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(collection_from_row)
        .collect()
}

/// The extension and the collection's index, if either is missing.
async fn ensure_index(
    client: &impl GenericClient,
    id: &str,
    dimensions: u32,
) -> Result<(), StoreError> {
    client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
        .await
        .map_err(|e| no_pgvector(&e))?;
    let Some(literal) = literal_id(id) else {
        return Ok(());
    };
    client
        .batch_execute(&format!(
            "CREATE INDEX IF NOT EXISTS {} ON vector_items USING hnsw \
             ((embedding::vector({dimensions})) vector_cosine_ops) \
             WHERE collection_id = {literal}",
            index_name(id)
        ))
        .await
        .map_err(pg)
}

/// A transaction-scoped lock on one owner's collections.
async fn lock(tx: &impl GenericClient, owner: &str) -> Result<(), StoreError> {
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("toolsmith-vectors:{owner}")],
    )
    .await
    .map_err(pg)?;
    Ok(())
}

async fn create(
    client: &mut Client,
    collection: &VectorCollectionRecord,
    max_per_owner: u64,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &collection.owner).await?;
    let count: i64 = tx
        .query_one(
            "SELECT count(*) FROM vector_collections WHERE owner = $1",
            &[&collection.owner],
        )
        .await
        .map_err(pg)?
        .get(0);
    if u64::try_from(count).unwrap_or(0) >= max_per_owner {
        return Err(StoreError::RecordLimit {
            collection: "vector collection".to_owned(),
            limit: max_per_owner,
        });
    }
    let inserted = tx
        .execute(
            "INSERT INTO vector_collections (id, owner, name, dimensions, description, \
             created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
             ON CONFLICT (owner, name) DO NOTHING",
            &[
                &collection.id,
                &collection.owner,
                &collection.name,
                &i64::from(collection.dimensions),
                &collection.description,
                &micros(collection.created_at),
                &micros(collection.updated_at),
            ],
        )
        .await
        .map_err(pg)?;
    if inserted == 0 {
        return Ok(false);
    }
    ensure_index(&*tx, &collection.id, collection.dimensions).await?;
    tx.commit().await.map_err(pg)?;
    Ok(true)
}

async fn collection_of(
    client: &impl GenericClient,
    owner: &str,
    name: &str,
) -> Result<Option<(String, u32)>, StoreError> {
    let row = client
        .query_opt(
            "SELECT id, dimensions FROM vector_collections WHERE owner = $1 AND name = $2",
            &[&owner, &name],
        )
        .await
        .map_err(pg)?;
    row.map(|row| {
        let id: String = col(&row, "id")?;
        let dimensions: i64 = col(&row, "dimensions")?;
        Ok((id, u32::try_from(dimensions).unwrap_or(0)))
    })
    .transpose()
}

async fn upsert(
    client: &mut Client,
    owner: &str,
    name: &str,
    items: &[VectorItem],
    max_items: u64,
) -> Result<Option<u64>, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, owner).await?;
    let Some((id, dimensions)) = collection_of(&*tx, owner, name).await? else {
        return Ok(None);
    };
    ensure_index(&*tx, &id, dimensions).await?;
    let now = micros(Utc::now());
    let put = tx
        .prepare(
            "INSERT INTO vector_items (collection_id, item_id, content, metadata, embedding, \
             created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6) \
             ON CONFLICT (collection_id, item_id) DO UPDATE SET content = excluded.content, \
             metadata = excluded.metadata, embedding = excluded.embedding, \
             updated_at = excluded.updated_at",
        )
        .await
        .map_err(pg)?;
    for item in items {
        tx.execute(
            &put,
            &[
                &id,
                &item.id,
                &item.content,
                &item.metadata,
                &item.embedding,
                &now,
            ],
        )
        .await
        .map_err(pg)?;
    }
    let count: i64 = tx
        .query_one(
            "SELECT count(*) FROM vector_items WHERE collection_id = $1",
            &[&id],
        )
        .await
        .map_err(pg)?
        .get(0);
    let count = u64::try_from(count).unwrap_or(0);
    if count > max_items {
        return Err(StoreError::RecordLimit {
            collection: format!("'{name}' vector"),
            limit: max_items,
        });
    }
    tx.execute(
        "UPDATE vector_collections SET updated_at = $1 WHERE id = $2",
        &[&now, &id],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(Some(count))
}

async fn delete(
    client: &mut Client,
    owner: &str,
    name: &str,
    ids: &[String],
) -> Result<Option<u64>, StoreError> {
    let Some((id, _)) = collection_of(&***client, owner, name).await? else {
        return Ok(None);
    };
    let gone = client
        .execute(
            "DELETE FROM vector_items WHERE collection_id = $1 AND item_id = ANY($2)",
            &[&id, &ids],
        )
        .await
        .map_err(pg)?;
    Ok(Some(gone))
}

fn hit_from_row(row: &Row) -> Result<VectorHit, StoreError> {
    let distance: f64 = col(row, "distance")?;
    Ok(VectorHit {
        id: col(row, "item_id")?,
        content: col(row, "content")?,
        metadata: col(row, "metadata")?,
        score: 1.0 - distance,
    })
}

/// The cosine distance between an item's embedding (`$1` is the query's), on the expression
/// the collection's index is made on.
fn distance(dimensions: u32) -> String {
    format!("(embedding::vector({dimensions})) <=> ($1::real[]::vector({dimensions}))")
}

/// The `$2` nearest items of the collection whose id is the literal `literal`, by the query
/// embedding `$1`, best first (ties by id). The inner query orders by the distance alone, which
/// is what lets the planner answer it from the collection's HNSW index; ordering by the
/// distance and then the id there makes it scan and sort every item.
pub(crate) fn nearest_sql(dimensions: u32, literal: &str) -> String {
    let distance = distance(dimensions);
    format!(
        "SELECT item_id, content, metadata, distance FROM (SELECT item_id, content, metadata, \
         ({distance})::float8 AS distance FROM vector_items WHERE collection_id = {literal} \
         ORDER BY {distance} LIMIT $2) nearest ORDER BY distance, item_id"
    )
}

async fn search(
    client: &mut Client,
    query: &VectorQuery,
) -> Result<Option<Vec<VectorHit>>, StoreError> {
    let Some((id, dimensions)) = collection_of(&***client, &query.owner, &query.collection).await?
    else {
        return Ok(None);
    };
    let k = i64::from(query.top_k.max(1));
    let tx = client.transaction().await.map_err(pg)?;
    let literal = literal_id(&id);
    let filtered = !query.filter.is_empty() || literal.is_none();
    if filtered {
        tx.batch_execute("SET LOCAL enable_indexscan = off")
            .await
            .map_err(pg)?;
    } else {
        tx.batch_execute(&format!(
            "SET LOCAL hnsw.ef_search = {}",
            (k * 2).clamp(40, 1000)
        ))
        .await
        .map_err(|e| no_pgvector(&e))?;
    }
    let mut params: Vec<Box<dyn ToSql + Sync + Send>> =
        vec![Box::new(query.embedding.clone()), Box::new(k)];
    let sql = match literal {
        Some(literal) if !filtered => nearest_sql(dimensions, &literal),
        _ => {
            params.push(Box::new(id.clone()));
            let mut sql = format!(
                "SELECT item_id, content, metadata, ({})::float8 AS distance FROM vector_items \
                 WHERE collection_id = $3",
                distance(dimensions)
            );
            for (key, value) in &query.filter {
                if !is_filter_key(key) {
                    continue;
                }
                params.push(Box::new(key.clone()));
                let key_at = params.len();
                let options: Vec<Value> = match value {
                    Value::Array(options) => options.clone(),
                    other => vec![other.clone()],
                };
                params.push(Box::new(options));
                sql.push_str(&format!(
                    " AND (metadata -> ${key_at}::text) = ANY(${}::jsonb[])",
                    params.len()
                ));
            }
            sql.push_str(&format!(
                " ORDER BY {}, item_id LIMIT $2",
                distance(dimensions)
            ));
            sql
        }
    };
    let refs: Vec<&(dyn ToSql + Sync)> = params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect();
    let rows = tx.query(&sql, &refs).await.map_err(|e| {
        if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_OBJECT)
            || e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_FUNCTION)
        {
            no_pgvector(&e)
        } else {
            pg(e)
        }
    })?;
    let hits = rows
        .iter()
        .map(hit_from_row)
        .collect::<Result<Vec<_>, _>>()?;
    tx.commit().await.map_err(pg)?;
    Ok(Some(hits))
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use serde_json::json;

    use super::{literal_id, nearest_sql};
    use crate::{
        PgOptions, PgStore, StoreError, VectorCollectionRecord, VectorItem, VectorQuery,
        VectorStore,
    };

    /// A search without filters is answered from the collection's HNSW index, not by scanning
    /// and sorting every item: the plan of the store's own query names the index. (The query
    /// ordered by the distance and then the id once, which no index can answer: every search
    /// read the whole collection, 22 ms for 5,000 vectors, found by `vector_bench`.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_search_without_filters_is_answered_from_the_collections_index() {
        let Some(cluster) = crate::testkit::pg_or_skip() else {
            return;
        };
        let url = cluster.create_database().unwrap();
        let store = PgStore::connect(&url, &PgOptions::default()).await.unwrap();
        let id = "c-knn-1";
        let collection = VectorCollectionRecord {
            id: id.to_owned(),
            owner: "alice".to_owned(),
            name: "docs".to_owned(),
            dimensions: 4,
            description: String::new(),
            count: 0,
            created_at: Utc::now(),
            updated_at: Utc::now(),
        };
        match store.create_vector_collection(&collection, 10).await {
            Ok(created) => assert!(created),
            Err(e @ StoreError::Unavailable { .. }) if e.to_string().contains("pgvector") => {
                toolsmith_core::testkit::missing(
                    "pgvector",
                    format!("{e} (scripts/install-system-deps.sh builds it)"),
                );
                return;
            }
            Err(e) => panic!("{e}"),
        }
        let items: Vec<VectorItem> = (0..2_000u16)
            .map(|i| {
                let a = f32::from(i) * 0.37;
                VectorItem {
                    id: format!("item-{i:04}"),
                    embedding: vec![a.cos(), a.sin(), (2.0 * a).cos(), 1.0],
                    content: String::new(),
                    metadata: json!({}),
                }
            })
            .collect();
        for chunk in items.chunks(500) {
            store
                .upsert_vectors("alice", "docs", chunk, 10_000)
                .await
                .unwrap();
        }
        let hits = store
            .search_vectors(&VectorQuery {
                owner: "alice".to_owned(),
                collection: "docs".to_owned(),
                embedding: vec![1.0, 0.0, 1.0, 1.0],
                top_k: 10,
                filter: Vec::new(),
            })
            .await
            .unwrap()
            .unwrap();
        assert_eq!(hits.len(), 10);
        assert!(
            hits.windows(2).all(|w| w[0].score >= w[1].score),
            "{hits:?}"
        );

        let db = url.rsplit('/').next().unwrap();
        cluster.psql_in(db, "ANALYZE vector_items").unwrap();
        let plan = cluster
            .psql_in(
                db,
                &format!(
                    "PREPARE nearest(real[], bigint) AS {}; \
                     EXPLAIN EXECUTE nearest(ARRAY[1, 0, 1, 1]::real[], 10)",
                    nearest_sql(4, &literal_id(id).unwrap())
                ),
            )
            .unwrap();
        assert!(
            plan.contains("Index Scan using vec_index_cknn1"),
            "the search is not answered from the collection's index:\n{plan}"
        );
    }
}
