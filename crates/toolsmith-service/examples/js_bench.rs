//! Times the three benchmark JS tools of `bench/cases.json` end to end through `ToolService`
//! (pipeline, schema validation, fresh sandbox, usage recording in a temp SQLite store) and
//! prints per-case p50/p99 in microseconds as JSON — the same shape `bench/node_vm.js` prints,
//! so `bench/compare.sh` can put both side by side from one run.
//!
//! It also measures throughput: trivial executions per second with as many concurrent callers
//! as cores × 8.
//!
//! Usage: cargo run --release -p toolsmith-service --example js_bench -- bench/cases.json [iterations]

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

use anyhow::Context;
use serde_json::{Value, json};
use toolsmith_core::ToolContext;
use toolsmith_service::{Actor, CreateTool, ToolService, ToolServiceSettings};
use toolsmith_store::{SqliteStore, Store};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut argv = std::env::args().skip(1);
    let cases_path = argv.next().unwrap_or_else(|| "bench/cases.json".to_owned());
    let iterations: usize = argv.next().map(|n| n.parse()).transpose()?.unwrap_or(2000);
    let cases: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(&cases_path).with_context(|| format!("reading {cases_path}"))?,
    )?;

    let dir = tempfile::tempdir()?;
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("bench.db")).await?);
    let service = ToolService::open(ToolServiceSettings::default(), store).await?;
    let actor = Actor::user("default");

    let mut out = serde_json::Map::new();
    for case in &cases {
        let name = case["name"].as_str().context("case name")?;
        let input = CreateTool {
            kind: Default::default(),
            name: name.to_owned(),
            description: format!("benchmark case {name}"),
            parameters: json!({"type": "object"}),
            code: case["code"].as_str().context("case code")?.to_owned(),
            category: None,
            tags: Vec::new(),
            permissions: Vec::new(),
            requires_approval: None,
            metadata: None,
        };
        service.create(&actor, input).await?;
        let heavy = case.get("heavy").and_then(Value::as_bool).unwrap_or(false);
        let n = if heavy {
            (iterations / 200).max(5)
        } else {
            iterations
        };
        let args = case["args"].clone();
        for _ in 0..n.min(20) {
            run(&service, name, &args).await?;
        }
        let mut times_us = Vec::with_capacity(n);
        for _ in 0..n {
            let started = Instant::now();
            run(&service, name, &args).await?;
            times_us.push(started.elapsed().as_secs_f64() * 1e6);
        }
        times_us.sort_by(f64::total_cmp);
        out.insert(
            name.to_owned(),
            json!({"n": n, "p50_us": percentile(&times_us, 50.0), "p99_us": percentile(&times_us, 99.0)}),
        );
    }

    let callers = std::thread::available_parallelism().map_or(2, |n| n.get()) * 8;
    let per_caller = iterations.max(100);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..callers {
        let service = service.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..per_caller {
                run(&service, "trivial", &json!({})).await?;
            }
            anyhow::Ok(())
        }));
    }
    for task in tasks {
        task.await??;
    }
    let total = callers * per_caller;
    let per_sec = total as f64 / started.elapsed().as_secs_f64();
    out.insert(
        "trivial_throughput".to_owned(),
        json!({"calls": total, "callers": callers, "per_sec": per_sec}),
    );
    println!("{}", Value::Object(out));
    Ok(())
}

async fn run(service: &ToolService, name: &str, args: &Value) -> anyhow::Result<()> {
    let res = service
        .execute(name, args.clone(), ToolContext::new("default"))
        .await;
    anyhow::ensure!(!res.is_error, "{name} failed: {}", res.content);
    Ok(())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let idx = ((p / 100.0) * sorted.len() as f64) as usize;
    sorted[idx.min(sorted.len() - 1)]
}
