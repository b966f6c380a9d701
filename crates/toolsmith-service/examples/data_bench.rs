//! Times `recall` over many memories and `search_custom_records` over many rows of one custom
//! table (issue 19: 100,000 of each, p50 under 20 ms on SQLite), end to end through
//! `ToolService::execute` (pipeline, schema validation, the store's full-text search, ranking),
//! on a temporary SQLite store. In the same run and store it times the same searches for a
//! user with 1,000 memories and rows, and a trivial data call (`list_custom_tables`), so the
//! figures come with ratios against baselines measured beside them.
//!
//! The corpus is generated (a fixed seed): made-up words from syllables, drawn with a skew so
//! some words are common and most are rare, 8 to 14 words a memory or row; queries are three
//! words drawn the same way. Everything is written through the tools themselves
//! (`batch_remember`, `batch_add_custom_records`), 50 a call.
//!
//! Usage: cargo run -p toolsmith-service --example data_bench -- [records] [queries]
//! (defaults 100000 and 300); prints one JSON object.

// Tests, benches and examples fail loudly: a panic is their report. The code they exercise
// is held to the workspace's `unwrap_used`, `expect_used`, `panic`, `string_slice` and
// `indexing_slicing` lints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::string_slice,
    clippy::indexing_slicing
)]

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use serde_json::{Value, json};
use toolsmith_core::ToolContext;
use toolsmith_service::{ToolService, ToolServiceSettings};
use toolsmith_store::{SqliteStore, Store};

/// A small, fixed-seed generator (xorshift64*), so every run searches the same corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// In `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn below(&mut self, n: usize) -> usize {
        (self.unit() * n as f64) as usize
    }
}

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ten", "ra", "so", "vu", "ne", "di", "pa", "ro", "li", "gar", "bel", "tis",
    "mun", "hal", "zor", "fen", "qui", "dro", "wen", "sal", "ith",
];

fn vocabulary() -> Vec<String> {
    let mut words = Vec::new();
    for a in SYLLABLES {
        for b in SYLLABLES {
            words.push(format!("{a}{b}"));
            for c in ["n", "r", "lo", "mar"] {
                words.push(format!("{a}{b}{c}"));
            }
        }
    }
    words
}

/// A word, common ones far more often than rare ones (the index squared).
fn word<'a>(rng: &mut Rng, vocab: &'a [String]) -> &'a str {
    let u = rng.unit();
    &vocab[((u * u) * vocab.len() as f64) as usize]
}

fn sentence(rng: &mut Rng, vocab: &[String], i: usize) -> String {
    let n = 8 + rng.below(7);
    let mut words: Vec<&str> = (0..n).map(|_| word(rng, vocab)).collect();
    let id = format!("n{i}");
    words.push(&id);
    words.join(" ")
}

async fn call(service: &ToolService, user: &str, tool: &str, args: Value) -> anyhow::Result<Value> {
    let res = service.execute(tool, args, ToolContext::new(user)).await;
    if res.is_error {
        bail!("{tool}: {}", res.content);
    }
    Ok(res.content)
}

/// Writes `n` memories and `n` rows of the table `log` for `user`.
async fn fill(
    service: &ToolService,
    user: &str,
    n: usize,
    rng: &mut Rng,
    vocab: &[String],
) -> anyhow::Result<()> {
    call(
        service,
        user,
        "create_custom_table",
        json!({"table": "log", "columns": [
            {"name": "title", "type": "text", "required": true},
            {"name": "body", "type": "text"},
            {"name": "rating", "type": "number"},
            {"name": "done", "type": "boolean", "default": false}
        ]}),
    )
    .await?;
    let started = Instant::now();
    for start in (0..n).step_by(50) {
        let end = (start + 50).min(n);
        let memories: Vec<Value> = (start..end)
            .map(|i| json!({"content": sentence(rng, vocab, i), "type": "fact", "importance": rng.unit()}))
            .collect();
        call(
            service,
            user,
            "batch_remember",
            json!({"memories": memories}),
        )
        .await?;
        let rows: Vec<Value> = (start..end)
            .map(|i| {
                json!({"title": sentence(rng, vocab, i), "body": sentence(rng, vocab, i + n),
                       "rating": rng.below(10), "done": rng.below(2) == 1})
            })
            .collect();
        call(
            service,
            user,
            "batch_add_custom_records",
            json!({"table": "log", "records": rows}),
        )
        .await?;
        if end % 10_000 == 0 {
            eprintln!(
                "{user}: {end} memories and rows in {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}

/// p50, p90, p99 and mean in milliseconds of `tool` called with each of `args`.
async fn time(
    service: &ToolService,
    user: &str,
    tool: &str,
    args: &[Value],
) -> anyhow::Result<Value> {
    for a in args.iter().take(20) {
        call(service, user, tool, a.clone()).await?;
    }
    let mut ms = Vec::with_capacity(args.len());
    let mut hits = 0;
    for a in args {
        let started = Instant::now();
        let out = call(service, user, tool, a.clone()).await?;
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
        hits += out["count"].as_u64().unwrap_or(0);
    }
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    Ok(json!({
        "calls": ms.len(),
        "p50_ms": (at(0.5) * 100.0).round() / 100.0,
        "p90_ms": (at(0.9) * 100.0).round() / 100.0,
        "p99_ms": (at(0.99) * 100.0).round() / 100.0,
        "mean_results": hits as f64 / ms.len() as f64,
    }))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut argv = std::env::args().skip(1);
    let n: usize = argv
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(100_000);
    let queries: usize = argv.next().map(|s| s.parse()).transpose()?.unwrap_or(300);
    let dir = tempfile::tempdir()?;
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("bench.db")).await?);
    let mut settings = ToolServiceSettings::default();
    settings.records.max_records_per_collection = n as u64 + 1;
    let service = ToolService::open(settings, store).await?;
    let vocab = vocabulary();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    fill(&service, "small", 1_000.min(n), &mut rng, &vocab)
        .await
        .context("the 1,000")?;
    let started = Instant::now();
    fill(&service, "large", n, &mut rng, &vocab)
        .await
        .context("the large corpus")?;
    let fill_s = started.elapsed().as_secs_f64();

    let texts: Vec<String> = (0..queries)
        .map(|_| {
            (0..3)
                .map(|_| word(&mut rng, &vocab))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let recall: Vec<Value> = texts.iter().map(|q| json!({"query": q})).collect();
    let search: Vec<Value> = texts
        .iter()
        .map(|q| json!({"table": "log", "query": q}))
        .collect();
    let trivial: Vec<Value> = (0..queries).map(|_| json!({})).collect();
    let mut out = serde_json::Map::new();
    out.insert("records".to_owned(), json!(n));
    out.insert("fill_seconds".to_owned(), json!(fill_s.round()));
    out.insert(
        "list_custom_tables".to_owned(),
        time(&service, "large", "list_custom_tables", &trivial).await?,
    );
    for (user, size) in [("small", 1_000.min(n)), ("large", n)] {
        out.insert(
            format!("recall_{size}"),
            time(&service, user, "recall", &recall).await?,
        );
        out.insert(
            format!("search_custom_records_{size}"),
            time(&service, user, "search_custom_records", &search).await?,
        );
    }
    println!("{}", serde_json::to_string_pretty(&Value::Object(out))?);
    Ok(())
}
