//! MCP `tools/list` with 10,000 custom tools over streamable HTTP (acceptance: < 20 ms):
//! the warm list, and the first list after one tool changed (which the cache applies per tool
//! instead of rebuilding). Each sample is one `tools/list` POST on a fresh loopback connection,
//! timed from the request to the last byte of the response (the server's whole cost; the
//! client does not parse the 2 MB answer).
//!
//! `search_tools` over the same 10,000 tools (acceptance: < 5 ms p50): the whole MCP call of a
//! sentence that matches every tool (`tool number 42`, the worst case: every posting is read) and
//! of one that matches a few; and the index alone ([`SearchIndex::search`]) over 10,000 varied
//! tools made from the search corpus (`tests/data/search_corpus.json`) with its requests. A
//! `ping` on the same session is the baseline of the MCP figures, measured in the same run.
//!
//! `cargo bench -p toolsmith-server --bench mcp_list`
//!
//! The 10,000-tool server is made once, on the first benchmark that runs: listing the
//! benchmarks (`--list`, which the test runner does for every target) builds nothing, and the
//! test run of the benchmarks (`cargo test --benches`, one iteration each, no `--bench`) uses
//! 200 tools — it checks the benchmarks work, not how fast.

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

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_core::ToolDefinition;
use toolsmith_server::discovery::{Document, SearchIndex};
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{Actor, CreateTool, ToolPatch, ToolRef, ToolService, ToolServiceSettings};

/// How many tools: 10,000 when benchmarking, 200 in the test run of the benchmarks.
fn tool_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        if std::env::args().any(|a| a == "--bench") {
            10_000
        } else {
            200
        }
    })
}

/// The runtime and the server with its tools, made on first use.
fn shared() -> &'static (tokio::runtime::Runtime, Fixture) {
    static SHARED: OnceLock<(tokio::runtime::Runtime, Fixture)> = OnceLock::new();
    SHARED.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let f = rt.block_on(fixture());
        (rt, f)
    })
}

/// One HTTP/1.1 POST to `/mcp` (`Connection: close`); the raw response.
async fn post(addr: &str, session: Option<&str>, body: &Value) -> String {
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if let Some(id) = session {
        request.push_str(&format!(
            "Mcp-Session-Id: {id}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    String::from_utf8_lossy(&response).into_owned()
}

struct Fixture {
    addr: String,
    session: String,
    service: Arc<ToolService>,
    _dir: tempfile::TempDir,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let config = ToolServiceSettings {
        max_tools_per_owner: 20_000,
        ..Default::default()
    };
    let service = ToolService::open_sqlite(
        config,
        &dir.path().join("bench.db"),
        toolsmith_service::Connectors::default(),
    )
    .await
    .unwrap();
    let user = Actor::user("default");
    for i in 0..tool_count() {
        let input = CreateTool {
            kind: Default::default(),
            name: format!("tool_{i:05}"),
            description: format!("Tool number {i}, for the list benchmark"),
            parameters: json!({"type": "object", "properties": {"text": {"type": "string", "description": "Some text"}, "limit": {"type": "integer"}}, "required": ["text"]}),
            code: "return 1;".to_owned(),
            category: None,
            tags: Vec::new(),
            permissions: Vec::new(),
            requires_approval: None,
            metadata: None,
        };
        service.create(&user, input).await.unwrap();
    }
    let state = AppState::new(service.clone(), Arc::new(ServerSettings::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        toolsmith_server::app::serve(listener, state, std::future::pending())
            .await
            .unwrap();
    });
    let init = post(
        &addr,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}}),
    )
    .await;
    let session = init
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session: {init}"));
    post(
        &addr,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    Fixture {
        addr,
        session,
        service,
        _dir: dir,
    }
}

/// One `tools/list`; checks that every tool came back.
async fn list(f: &Fixture) -> Duration {
    let started = Instant::now();
    let response = post(
        &f.addr,
        Some(&f.session),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    let took = started.elapsed();
    let listed = response.matches("\"inputSchema\"").count();
    assert!(listed > tool_count(), "only {listed} tools listed");
    took
}

/// Times `iters` runs of `one` on the shared server, each measured by `one` itself.
fn timed<F, Fut>(b: &mut criterion::Bencher<'_>, one: F)
where
    F: Fn(&'static Fixture) -> Fut,
    Fut: std::future::Future<Output = Duration>,
{
    let (rt, f) = shared();
    b.iter_custom(|iters| {
        rt.block_on(async {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                total += one(f).await;
            }
            total
        })
    });
}

fn tools_list(c: &mut Criterion) {
    let user = Actor::user("default");
    let mut group = c.benchmark_group("mcp_tools_list_10k");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("warm", |b| timed(b, list));
    let mut revision = 0u64;
    group.bench_function("after_one_change", |b| {
        let (rt, f) = shared();
        b.iter_custom(|iters| {
            rt.block_on(async {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // The change is not timed: only the first list after it.
                    revision += 1;
                    let name = format!("tool_{:05}", revision % tool_count() as u64);
                    let patch = ToolPatch {
                        description: Some(format!("Changed, revision {revision}")),
                        ..Default::default()
                    };
                    f.service
                        .update(&user, &ToolRef::Name(name), patch, None)
                        .await
                        .unwrap();
                    total += list(f).await;
                }
                total
            })
        });
    });
    group.finish();
}

/// One `search_tools` call; checks that its answer holds `expect`.
async fn search(f: &Fixture, query: &str, expect: &str) -> Duration {
    let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "search_tools", "arguments": {"query": query}}});
    let started = Instant::now();
    let response = post(&f.addr, Some(&f.session), &body).await;
    let took = started.elapsed();
    assert!(response.contains(expect), "{expect:?} not in: {response}");
    took
}

/// One MCP `ping` on the same session and the same kind of fresh connection: the floor every
/// request pays (connection, HTTP, rmcp, the session's hop), against which `search_tools` is
/// read as a ratio measured in the same run.
async fn ping(f: &Fixture) -> Duration {
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    let started = Instant::now();
    let response = post(&f.addr, Some(&f.session), &body).await;
    let took = started.elapsed();
    assert!(response.contains("\"result\""), "no answer: {response}");
    took
}

fn search_tools(c: &mut Criterion) {
    let mut group = c.benchmark_group("mcp_search_tools_10k");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("baseline_ping", |b| timed(b, ping));
    // Every tool's name and description hold "tool" and "number", so every tool is scored;
    // none passes the relevance floor (a second word in a name, tag or category), so the
    // worst case ends in an honest miss.
    for (label, query, expect) in [
        (
            "every_tool_matches",
            "Which tool has number 42?",
            "No tool here does that",
        ),
        ("few_match", "tool_00042 tool_00043", "tool_00042"),
    ] {
        group.bench_function(label, |b| timed(b, |f| search(f, query, expect)));
    }
    group.finish();
}

#[derive(serde::Deserialize)]
struct Corpus {
    tools: Vec<ToolDefinition>,
    intents: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    query: String,
}

fn search_index(c: &mut Criterion) {
    let corpus: Corpus =
        serde_json::from_str(include_str!("../tests/data/search_corpus.json")).unwrap();
    let tools: Vec<ToolDefinition> = (0..tool_count())
        .map(|i| {
            let mut def = corpus.tools[i % corpus.tools.len()].clone();
            def.name = format!("{}_{i}", def.name);
            def
        })
        .collect();
    let docs: Vec<Document> = tools.iter().map(Document::of).collect();
    let index = SearchIndex::build(&docs);
    let mut group = c.benchmark_group("search_index_10k");
    group.sample_size(30);
    group.bench_function("build", |b| b.iter(|| SearchIndex::build(&docs).len()));
    group.bench_function("intents", |b| {
        let mut next = 0;
        b.iter(|| {
            let query = &corpus.intents[next % corpus.intents.len()].query;
            next += 1;
            index.search(query, |_| true).len()
        })
    });
    group.finish();
}

criterion_group!(benches, tools_list, search_tools, search_index);
criterion_main!(benches);
