//! Times vector search's top-10 (`VectorStore::search_vectors`, what `semantic_search` asks)
//! over N vectors of D dimensions in one collection (defaults 100,000 and 384, the size of the
//! common small sentence-embedding models), on SQLite (sqlite-vec's `vec0`), or on PostgreSQL
//! with `--postgres` (the store test kit's private cluster, pgvector's HNSW index). Issue 39 asks
//! for this benchmark on each backend.
//!
//! The vectors are seeded through the store (`upsert_vectors`, 500 a call, as the tool writes
//! them), made from a fixed seed: 1,000 topics, each item its topic's direction plus noise, so
//! neighbours are as clustered as real embeddings are (uniform random vectors have no near
//! neighbours and tell nothing about an index). Each query is a topic's direction plus fresh
//! noise, not a stored item.
//!
//! In the same run it measures two baselines:
//! - `exact`: the same top-10 answered by the store's exact scan of the collection (a metadata
//!   filter every item matches takes the exact path on both backends: `vec_distance_cosine`
//!   over every row on SQLite, a sequential scan with `<=>` on PostgreSQL);
//! - `inMemory`: a brute-force scan of the same vectors in this process (the floor of any
//!   exact answer, and the truth recall@10 is measured against).
//!
//! Usage: cargo build --release -p toolsmith-store --example vector_bench &&
//!   target/release/examples/vector_bench [N] [queries] [dimensions] [--postgres]
//! (defaults 100000, 200 and 384; the exact scan runs for a quarter of the queries); prints one
//! JSON object.

// Tests, benches and examples fail loudly: a panic is their report. The code they exercise
// is held to the workspace's `unwrap_used`, `expect_used`, `panic`, `string_slice` and
// `indexing_slicing` lints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::string_slice,
    clippy::indexing_slicing,
    clippy::cast_precision_loss
)]

use std::collections::HashSet;
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::json;
use toolsmith_store::{
    PgOptions, PgStore, SqliteStore, Store, VectorCollectionRecord, VectorItem, VectorQuery,
};

type Res<T> = Result<T, Box<dyn Error>>;

const TOPICS: usize = 1_000;
const TOP_K: usize = 10;
const BATCH: usize = 500;
/// How far an item lies from its topic's direction (per dimension, before normalising): at
/// 384 dimensions an item's cosine to its topic is about 0.7, to its topic's other items about
/// 0.5, to another topic's about 0 — the spread of sentence embeddings of one subject.
const NOISE: f32 = 0.05;

/// What keeps the store alive: its directory or its cluster.
enum Keep {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Cluster(#[allow(dead_code)] toolsmith_store::testkit::PgCluster),
}

async fn store(postgres: bool) -> Res<(Arc<dyn Store>, Keep)> {
    if postgres {
        let cluster =
            toolsmith_store::testkit::PgCluster::start().map_err(|e| format!("PostgreSQL: {e}"))?;
        let url = cluster
            .create_database()
            .map_err(|e| format!("PostgreSQL: {e}"))?;
        let store = PgStore::connect(&url, &PgOptions::default()).await?;
        return Ok((Arc::new(store), Keep::Cluster(cluster)));
    }
    let dir = tempfile::tempdir()?;
    let store = SqliteStore::open(&dir.path().join("bench.db")).await?;
    Ok((Arc::new(store), Keep::Dir(dir)))
}

/// splitmix64: a fixed, seedable stream with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f32 {
        let (u, v) = (self.unit(), self.unit());
        ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()) as f32
    }
}

fn normalise(v: &mut [f32]) {
    let norm = v
        .iter()
        .map(|x| x * x)
        .sum::<f32>()
        .sqrt()
        .max(f32::MIN_POSITIVE);
    v.iter_mut().for_each(|x| *x /= norm);
}

/// A unit vector near `topic`.
fn near(rng: &mut Rng, topic: &[f32], noise: f32) -> Vec<f32> {
    let mut v: Vec<f32> = topic.iter().map(|t| t + noise * rng.normal()).collect();
    normalise(&mut v);
    v
}

/// The ids of the `TOP_K` stored vectors nearest `query` (all unit vectors: the dot product is
/// the cosine), by a scan of every one.
fn brute_force(vectors: &[Vec<f32>], query: &[f32]) -> Vec<usize> {
    let mut best: Vec<(f32, usize)> = Vec::with_capacity(TOP_K + 1);
    for (i, v) in vectors.iter().enumerate() {
        let dot: f32 = v.iter().zip(query).map(|(a, b)| a * b).sum();
        if best.len() < TOP_K || dot > best[best.len() - 1].0 {
            let at = best.partition_point(|(d, _)| *d >= dot);
            best.insert(at, (dot, i));
            best.truncate(TOP_K);
        }
    }
    best.into_iter().map(|(_, i)| i).collect()
}

fn item_id(i: usize) -> String {
    format!("item_{i:06}")
}

/// Median, 95th percentile, least and most of `times`, in ms.
fn summary(times: &mut [Duration]) -> serde_json::Value {
    times.sort();
    let ms = |d: Duration| (d.as_secs_f64() * 1e5).round() / 100.0;
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    json!({
        "p50": ms(at(0.5)),
        "p95": ms(at(0.95)),
        "min": ms(times[0]),
        "max": ms(times[times.len() - 1]),
    })
}

fn p50_ms(times: &[Duration]) -> f64 {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2].as_secs_f64() * 1e3
}

#[tokio::main]
async fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let postgres = args.iter().any(|a| a == "--postgres");
    let mut numbers = args.iter().filter(|a| !a.starts_with("--"));
    let n: usize = numbers.next().map_or(Ok(100_000), |a| a.parse())?;
    let queries: usize = numbers.next().map_or(Ok(200), |a| a.parse())?;
    let dims: usize = numbers.next().map_or(Ok(384), |a| a.parse())?;
    let (store, _keep) = store(postgres).await?;

    let mut rng = Rng(0x7001_5317);
    let topics: Vec<Vec<f32>> = (0..TOPICS)
        .map(|_| {
            let mut t: Vec<f32> = (0..dims).map(|_| rng.normal()).collect();
            normalise(&mut t);
            t
        })
        .collect();
    let noise = NOISE * (384.0 / dims as f32).sqrt();
    let vectors: Vec<Vec<f32>> = (0..n)
        .map(|i| near(&mut rng, &topics[(i * 7919) % TOPICS], noise))
        .collect();

    let now = Utc::now();
    let collection = VectorCollectionRecord {
        id: "0b9e3c1a-6f7d-4c59-9a51-00000000bec7".to_owned(),
        owner: "bench".to_owned(),
        name: "documents".to_owned(),
        dimensions: u32::try_from(dims)?,
        description: "vector_bench".to_owned(),
        count: 0,
        created_at: now,
        updated_at: now,
    };
    assert!(store.create_vector_collection(&collection, 10).await?);
    let seeding = Instant::now();
    for (start, chunk) in vectors.chunks(BATCH).enumerate() {
        let items: Vec<VectorItem> = chunk
            .iter()
            .enumerate()
            .map(|(j, v)| {
                let i = start * BATCH + j;
                VectorItem {
                    id: item_id(i),
                    embedding: v.clone(),
                    content: format!("document {i} of topic {}", (i * 7919) % TOPICS),
                    metadata: json!({"bench": true, "topic": (i * 7919) % TOPICS}),
                }
            })
            .collect();
        store
            .upsert_vectors("bench", "documents", &items, n as u64)
            .await?;
    }
    let seeded_in = seeding.elapsed();

    let query_vectors: Vec<Vec<f32>> = (0..queries)
        .map(|_| {
            let topic = &topics[(rng.next() % TOPICS as u64) as usize];
            near(&mut rng, topic, noise)
        })
        .collect();
    let ask = |embedding: &[f32], exact: bool| VectorQuery {
        owner: "bench".to_owned(),
        collection: "documents".to_owned(),
        embedding: embedding.to_vec(),
        top_k: TOP_K as u32,
        filter: if exact {
            vec![("bench".to_owned(), json!(true))]
        } else {
            Vec::new()
        },
    };
    // One of each first: warm caches and the plan, and check both answer ten.
    for exact in [false, true] {
        let hits = store
            .search_vectors(&ask(&query_vectors[0], exact))
            .await?
            .ok_or("the collection is gone")?;
        assert_eq!(hits.len(), TOP_K, "exact: {exact}");
    }

    let (mut indexed, mut exact, mut in_memory) = (Vec::new(), Vec::new(), Vec::new());
    let (mut found, mut exact_found) = (0usize, 0usize);
    for (q, query) in query_vectors.iter().enumerate() {
        // Alternated, so a moment of load from elsewhere falls on each alike.
        let t = Instant::now();
        let truth = std::hint::black_box(brute_force(&vectors, query));
        in_memory.push(t.elapsed());
        let truth: HashSet<String> = truth.into_iter().map(item_id).collect();

        let t = Instant::now();
        let hits = store
            .search_vectors(&ask(query, false))
            .await?
            .ok_or("the collection is gone")?;
        indexed.push(t.elapsed());
        found += hits.iter().filter(|h| truth.contains(&h.id)).count();

        if q % 4 == 0 {
            let t = Instant::now();
            let hits = store
                .search_vectors(&ask(query, true))
                .await?
                .ok_or("the collection is gone")?;
            exact.push(t.elapsed());
            exact_found += hits.iter().filter(|h| truth.contains(&h.id)).count();
        }
    }
    let recall = found as f64 / (queries * TOP_K) as f64;
    let exact_recall = exact_found as f64 / (exact.len() * TOP_K) as f64;
    let out = json!({
        "backend": if postgres { "postgres (pgvector HNSW)" } else { "sqlite (sqlite-vec vec0)" },
        "vectors": n,
        "dimensions": dims,
        "queries": queries,
        "topK": TOP_K,
        "seededSeconds": (seeded_in.as_secs_f64() * 10.0).round() / 10.0,
        "indexMs": summary(&mut indexed),
        "exactScanMs": summary(&mut exact),
        "inMemoryScanMs": summary(&mut in_memory),
        "exactOverIndex": (p50_ms(&exact) / p50_ms(&indexed) * 100.0).round() / 100.0,
        "recallAt10": (recall * 1000.0).round() / 1000.0,
        "exactRecallAt10": (exact_recall * 1000.0).round() / 1000.0,
    });
    println!("{out}");
    Ok(())
}
