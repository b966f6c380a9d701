//! Criterion benchmarks of both backends through the `Store` trait — `SqliteStore` on a temp
//! file and `PgStore` on a private PostgreSQL cluster (the test kit's; a missing PostgreSQL
//! fails, or skips with `TOOLSMITH_ALLOW_SKIP=1`) — on stores pre-filled with 1,000 and 10,000 tools of one
//! owner. Group `store` is SQLite (the historical name), `store_postgres` is PostgreSQL:
//!
//! - `create`: `insert_tool` of a new tool (the created tools are deleted, untimed, after each
//!   sample so the store keeps its size).
//! - `list_first_page`: `list_tools` of the owner, first page of 100, with the total.
//! - `search`: `list_tools` with a search term matching one tool (a full scan of the owner).
//! - `get_by_id`: `get_tool`.
//! - `stats`: `tool_stats`.
//! - `record_executions_10`: what executions cost the store — `record_executions` of a batch
//!   of 10 finished calls of one tool (execution rows plus its usage counter, one
//!   transaction), the way the usage recorder commits calls made together.
//!
//! Group `shared_limits` (PostgreSQL only) is what the limits several instances share cost a
//! call: `ping` (`SELECT 1`, one round trip: the baseline), `take_user` (one rate bucket, the
//! usual `rate_per_user`), `take_three` (user, tool and session buckets), `slot_and_release` (a
//! concurrency slot taken and given back: two round trips). Buckets are never empty.

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

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::Utc;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::sync::Arc;
use tokio::runtime::Runtime;
use toolsmith_core::{
    CreatedBy, CustomToolRecord, ExecutionRecord, ExecutionStatus, Permission, ToolKind, ToolStatus,
};

use toolsmith_store::testkit::{PgCluster, pg_or_skip};
use toolsmith_store::{PgOptions, PgStore, SqliteStore, Store, ToolQuery};

/// The size of the smallest store benchmarked.
fn sizes_min() -> usize {
    stores().1.iter().copied().min().unwrap_or(1)
}

/// The stores benchmarked: both backends at 1,000 and 10,000 tools under `cargo bench`; a
/// 10-tool SQLite store when the test runner lists the benchmarks or runs each once (no
/// `--bench`), which checks they work without starting PostgreSQL or filling 22,000 tools.
fn stores() -> (&'static [(&'static str, &'static str)], &'static [usize]) {
    const BACKENDS: [(&str, &str); 2] = [("sqlite", "store"), ("postgres", "store_postgres")];
    if std::env::args().any(|a| a == "--bench") {
        (&BACKENDS, &[1_000, 10_000])
    } else {
        (&BACKENDS[..1], &[10])
    }
}

/// Whether the command line's filter (criterion's positional argument, if any) can select a
/// benchmark of `group`: a group nobody asked for is not filled (22,000 tools take minutes).
fn wanted(group: &str) -> bool {
    let mut filters = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .peekable();
    filters.peek().is_none() || filters.any(|f| group.starts_with(&f) || f.starts_with(group))
}

fn tool(name: &str, i: usize) -> CustomToolRecord {
    let now = Utc::now();
    CustomToolRecord {
        id: CustomToolRecord::new_id(),
        owner: "default".to_owned(),
        name: name.to_owned(),
        kind: ToolKind::Js,
        description: format!("Computes something useful for case number {i} and returns it"),
        parameters: json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["text"]
        }),
        code: "const words = args.text.split(/\\s+/);\nreturn { count: words.length };\n".repeat(8),
        category: Some(["text", "math", "web", "data"][i % 4].to_owned()),
        tags: vec!["bench".to_owned(), format!("group{}", i % 10)],
        permissions: if i.is_multiple_of(3) {
            [Permission::Network].into_iter().collect()
        } else {
            Default::default()
        },
        status: if i.is_multiple_of(5) {
            ToolStatus::Disabled
        } else {
            ToolStatus::Active
        },
        requires_approval: false,
        created_by: if i.is_multiple_of(2) {
            CreatedBy::User
        } else {
            CreatedBy::Llm
        },
        version: 1,
        revision: 1,
        usage_count: 0,
        last_used_at: None,
        metadata: json!({"source": "bench"}),
        created_at: now,
        updated_at: now,
    }
}

/// The `i`-th finished call of tool `tool_id` (`tool_00000`).
fn execution(tool_id: &str, i: usize) -> ExecutionRecord {
    ExecutionRecord {
        id: format!("exec_{i:016x}"),
        tool_id: tool_id.to_owned(),
        tool_name: "tool_00000".to_owned(),
        tool_version: 1,
        owner: "default".to_owned(),
        conversation_id: None,
        agent_id: None,
        status: ExecutionStatus::Success,
        error_kind: None,
        error: None,
        duration_ms: 1.5,
        created_at: Utc::now(),
        client_requests: Default::default(),
        source: Default::default(),
    }
}

/// What keeps a backend alive: its temp dir or its cluster.
enum Keep {
    Dir { _dir: tempfile::TempDir },
    Cluster { _cluster: PgCluster },
}

struct Filled {
    // The store first: it is dropped before its cluster stops.
    store: Arc<dyn Store>,
    _keep: Keep,
    ids: Vec<String>,
}

/// An empty store of `backend` (`sqlite` or `postgres`); `None` when PostgreSQL is missing and
/// skips are allowed.
fn empty(rt: &Runtime, backend: &str) -> Option<(Arc<dyn Store>, Keep)> {
    if backend == "sqlite" {
        let dir = tempfile::tempdir().unwrap();
        let store = rt
            .block_on(SqliteStore::open(&dir.path().join("bench.db")))
            .unwrap();
        return Some((Arc::new(store), Keep::Dir { _dir: dir }));
    }
    // A missing PostgreSQL fails, or skips with TOOLSMITH_ALLOW_SKIP=1 (toolsmith_core::testkit).
    let cluster = pg_or_skip()?;
    let url = cluster.create_database().unwrap();
    let store = rt
        .block_on(PgStore::connect(&url, &PgOptions::default()))
        .unwrap();
    Some((Arc::new(store), Keep::Cluster { _cluster: cluster }))
}

fn filled(rt: &Runtime, backend: &str, n: usize) -> Option<Filled> {
    let (store, keep) = empty(rt, backend)?;
    let started = Instant::now();
    let ids = rt.block_on(async {
        let mut ids = Vec::with_capacity(n);
        for i in 0..n {
            let stored = store
                .insert_tool(tool(&format!("tool_{i:05}"), i))
                .await
                .unwrap();
            ids.push(stored.id);
        }
        ids
    });
    eprintln!(
        "{backend}: filled {n} tools in {:.2?} ({:.1} µs per insert)",
        started.elapsed(),
        started.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    Some(Filled {
        store,
        _keep: keep,
        ids,
    })
}

fn benches(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (backends, sizes) = stores();
    for &(backend, group_name) in backends {
        if !wanted(group_name) {
            continue;
        }
        for &n in sizes {
            let Some(f) = filled(&rt, backend, n) else {
                return;
            };
            bench_backend(c, &rt, group_name, n, &f);
        }
    }
}

fn bench_backend(c: &mut Criterion, rt: &Runtime, group_name: &str, n: usize, f: &Filled) {
    {
        let store = &f.store;

        let mut group = c.benchmark_group(group_name);
        group.measurement_time(Duration::from_secs(4));

        let counter = AtomicUsize::new(0);
        group.bench_with_input(BenchmarkId::new("create", n), &n, |b, _| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut created = Vec::with_capacity(iters as usize);
                    let started = Instant::now();
                    for _ in 0..iters {
                        let i = counter.fetch_add(1, Ordering::Relaxed);
                        let stored = store
                            .insert_tool(tool(&format!("new_{i:08}"), i))
                            .await
                            .unwrap();
                        created.push(stored);
                    }
                    let elapsed = started.elapsed();
                    for t in created {
                        store
                            .delete_tool(&t.owner, &t.id, t.revision)
                            .await
                            .unwrap();
                    }
                    elapsed
                })
            });
        });

        group.bench_with_input(BenchmarkId::new("list_first_page", n), &n, |b, _| {
            let query = ToolQuery::owner("default");
            b.iter(|| {
                let page = rt.block_on(store.list_tools(&query)).unwrap();
                assert_eq!(page.tools.len(), n.min(100));
                black_box(page)
            });
        });

        group.bench_with_input(BenchmarkId::new("search", n), &n, |b, _| {
            let query = ToolQuery {
                // The last tool of the smallest store: one match at every size.
                search: Some(format!("TOOL_{:05}", sizes_min() - 1)),
                ..ToolQuery::owner("default")
            };
            b.iter(|| {
                let page = rt.block_on(store.list_tools(&query)).unwrap();
                assert_eq!(page.total, 1);
                black_box(page)
            });
        });

        let mut next = 0usize;
        group.bench_with_input(BenchmarkId::new("get_by_id", n), &n, |b, _| {
            b.iter(|| {
                next = (next + 7919) % f.ids.len();
                let tool = rt
                    .block_on(store.get_tool("default", &f.ids[next]))
                    .unwrap();
                black_box(tool.unwrap())
            });
        });

        group.bench_with_input(BenchmarkId::new("stats", n), &n, |b, _| {
            b.iter(|| black_box(rt.block_on(store.tool_stats("default")).unwrap()));
        });

        let ran = AtomicUsize::new(0);
        group.bench_with_input(BenchmarkId::new("record_executions_10", n), &n, |b, _| {
            b.iter(|| {
                let batch: Vec<ExecutionRecord> = (0..10)
                    .map(|_| execution(&f.ids[0], ran.fetch_add(1, Ordering::Relaxed)))
                    .collect();
                rt.block_on(store.record_executions(&batch)).unwrap();
            });
        });

        group.finish();
    }
}

fn shared_limits(c: &mut Criterion) {
    use toolsmith_store::{LimitRequest, RateBucketSpend, SlotRequest};
    // PostgreSQL only, and only under `cargo bench` (as the groups above).
    if !std::env::args().any(|a| a == "--bench") || !wanted("shared_limits") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let Some((store, _keep)) = empty(&rt, "postgres") else {
        return;
    };
    let limits = Arc::clone(&store)
        .shared_limits()
        .expect("PostgreSQL shares limits");
    let bucket = |scope: &str, key: &str| RateBucketSpend {
        scope: scope.to_owned(),
        key: key.to_owned(),
        capacity: 1e12,
        per_second: 1e9,
    };
    let user = LimitRequest {
        buckets: vec![bucket("user", "alice")],
        slot: None,
    };
    let three = LimitRequest {
        buckets: vec![
            bucket("user", "alice"),
            bucket("tool", "alice/echo"),
            bucket("session", "conversation-1"),
        ],
        slot: None,
    };
    let slot = LimitRequest {
        buckets: Vec::new(),
        slot: Some(SlotRequest {
            user: "alice".to_owned(),
            cap: 1_000,
            ttl: Duration::from_secs(15),
        }),
    };
    let mut group = c.benchmark_group("shared_limits");
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("ping", |b| {
        b.iter(|| rt.block_on(store.ping()).unwrap());
    });
    group.bench_function("take_user", |b| {
        b.iter(|| black_box(rt.block_on(limits.take_limits(&user)).unwrap()));
    });
    group.bench_function("take_three", |b| {
        b.iter(|| black_box(rt.block_on(limits.take_limits(&three)).unwrap()));
    });
    group.bench_function("slot_and_release", |b| {
        b.iter(|| {
            rt.block_on(async {
                let taken = limits.take_limits(&slot).await.unwrap();
                let toolsmith_store::LimitOutcome::Allowed { lease: Some(lease) } = taken else {
                    panic!("a slot: {taken:?}");
                };
                limits.release_slot(lease).await.unwrap();
            });
        });
    });
    group.finish();
}

criterion_group!(store_benches, benches, shared_limits);
criterion_main!(store_benches);
