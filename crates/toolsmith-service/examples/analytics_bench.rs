//! Times the server-wide analytics (`ToolService::server_metrics`: what
//! `GET /api/v1/metrics/server` and the web UI's Analytics page read) over N executions of the
//! last week (default 100,000; issue 36 asks the page to be interactive under 1 s with that
//! many), on SQLite, or on PostgreSQL with `--postgres` (the store test kit's private cluster).
//! The executions are written through the store, as `ui_browser.rs` seeds them for the page:
//! 12 tools of three users, two agents and direct calls, a fixed mix of statuses and durations.
//!
//! In the same run and store it times two baselines, so the figures come with ratios:
//! - `read`: the store's read of the same executions alone (`server_execution_samples`), the
//!   floor of any report made above the store;
//! - `hour`: the same report over the last hour (about 600 calls), the route's fixed cost.
//!
//! Usage: cargo build --release -p toolsmith-service --example analytics_bench &&
//!   target/release/examples/analytics_bench [N] [runs] [--postgres]
//! (defaults 100000 and 15); prints one JSON object.

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
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use serde_json::json;
use toolsmith_core::ExecutionRecord;
use toolsmith_service::{Actor, CreateTool, Period, ToolService, ToolServiceSettings};
use toolsmith_store::{PgOptions, PgStore, SqliteStore, Store};

/// Who made each call, in turn: two agents, then a person directly.
const AGENTS: [Option<&str>; 3] = [Some("planner"), Some("researcher"), None];

/// What keeps the store alive: its directory or its cluster.
enum Keep {
    Dir(#[allow(dead_code)] tempfile::TempDir),
    Cluster(#[allow(dead_code)] toolsmith_store::testkit::PgCluster),
}

async fn store(postgres: bool) -> anyhow::Result<(Arc<dyn Store>, Keep)> {
    if postgres {
        let cluster = toolsmith_store::testkit::PgCluster::start()
            .map_err(|e| anyhow::anyhow!("PostgreSQL: {e}"))?;
        let url = cluster
            .create_database()
            .map_err(|e| anyhow::anyhow!("PostgreSQL: {e}"))?;
        let store = PgStore::connect(&url, &PgOptions::default()).await?;
        return Ok((Arc::new(store), Keep::Cluster(cluster)));
    }
    let dir = tempfile::tempdir()?;
    let store = SqliteStore::open(&dir.path().join("bench.db")).await?;
    Ok((Arc::new(store), Keep::Dir(dir)))
}

/// Median, least and most of `times`, in ms.
fn summary(times: &mut [Duration]) -> serde_json::Value {
    times.sort();
    let ms = |d: Duration| (d.as_secs_f64() * 1e5).round() / 100.0;
    json!({
        "p50": ms(times[times.len() / 2]),
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
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let postgres = args.iter().any(|a| a == "--postgres");
    let mut numbers = args.iter().filter(|a| !a.starts_with("--"));
    let n: usize = numbers.next().map_or(Ok(100_000), |a| a.parse())?;
    let runs: usize = numbers.next().map_or(Ok(15), |a| a.parse())?;
    let (store, _keep) = store(postgres).await?;
    let service = ToolService::open(ToolServiceSettings::default(), store.clone()).await?;

    let mut tools = Vec::new();
    for owner in ["default", "alice", "bob"] {
        for t in 0..4 {
            let input: CreateTool = serde_json::from_value(json!({
                "name": format!("seeded_{owner}_{t}"),
                "description": "A tool whose calls were seeded for the analytics benchmark",
                "parameters": {"type": "object", "properties": {}},
                "code": "return 1;",
            }))?;
            let tool = service.create(&Actor::user(owner), input).await?;
            tools.push((tool.id, tool.name, owner));
        }
    }
    let seeding = Instant::now();
    let now = Utc::now();
    let mut batch = Vec::with_capacity(5_000);
    for i in 0..n {
        let (tool_id, tool_name, owner) = &tools[(i * 7 + i / 13) % tools.len()];
        let status = match i % 100 {
            0..=6 => "error",
            7..=8 => "timeout",
            9 => "denied",
            _ => "success",
        };
        // Spread over the last 6.9 days, newest last.
        let ago =
            chrono::Duration::milliseconds(((n - i) as f64 * 596_160_000.0 / n as f64) as i64);
        let record: ExecutionRecord = serde_json::from_value(json!({
            "id": format!("exec_seed_{i:08}"),
            "toolId": tool_id,
            "toolName": tool_name,
            "toolVersion": 1,
            "owner": owner,
            "agentId": AGENTS[i % 3],
            "status": status,
            "errorKind": (status != "success").then_some("runtime"),
            "durationMs": 2.0 + (i % 97) as f64 * 1.5,
            "createdAt": now - ago,
        }))
        .context("an execution record")?;
        batch.push(record);
        if batch.len() == 5_000 {
            store.record_executions(&batch).await?;
            batch.clear();
        }
    }
    store.record_executions(&batch).await?;
    let seeded_in = seeding.elapsed();

    let admin = Actor::user("default").with_admin(true);
    let week = Period::days(7);
    let hour = Period::hours(1);
    // One of each first: warm caches, and check the report counts every call.
    let first = service.server_metrics(&admin, week).await?;
    anyhow::ensure!(
        first.totals.calls == n as u64,
        "the report counts {} calls of {n}",
        first.totals.calls
    );
    service.server_metrics(&admin, hour).await?;
    let (mut report, mut read, mut last_hour) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        // Alternated, so a moment of load from elsewhere falls on all three alike.
        let t = Instant::now();
        std::hint::black_box(service.server_metrics(&admin, week).await?);
        report.push(t.elapsed());
        let t = Instant::now();
        let since = Utc::now() - week.duration();
        std::hint::black_box(store.server_execution_samples(since, 200_000).await?);
        read.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(service.server_metrics(&admin, hour).await?);
        last_hour.push(t.elapsed());
    }
    let ratio_read = p50_ms(&report) / p50_ms(&read);
    let ratio_hour = p50_ms(&report) / p50_ms(&last_hour);
    let out = json!({
        "backend": if postgres { "postgres" } else { "sqlite" },
        "executions": n,
        "runs": runs,
        "seededSeconds": (seeded_in.as_secs_f64() * 10.0).round() / 10.0,
        "report7dMs": summary(&mut report),
        "readOnlyMs": summary(&mut read),
        "report1hMs": summary(&mut last_hour),
        "reportOverRead": (ratio_read * 100.0).round() / 100.0,
        "reportOverHour": (ratio_hour * 10.0).round() / 10.0,
    });
    println!("{out}");
    Ok(())
}
