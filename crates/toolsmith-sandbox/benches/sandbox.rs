//! Criterion benchmarks of the JS sandbox, end to end through `JsSandbox::run` (queue, fresh
//! runtime, prelude, tool, result):
//!
//! - `trivial`: `return 1`, one call at a time — the per-execution overhead.
//! - `trivial_throughput`: 256 trivial calls in flight at once on a pool of one worker per core.
//! - `word_frequency_10kb`: the spec's example tool on 10 KB of text.
//! - `loop_1e7`: a 10-million-iteration loop.
//! - `npm_import`: a call that imports a real npm package, `csv-parse/sync` (csv-parse 5.6.0,
//!   MIT, the files of its tarball that `import('csv-parse/sync')` loads, in
//!   `benches/fixtures/csv-parse/`: no network) and parses a small CSV: `cold` is the first
//!   import of the package's files in the process (every iteration on a fresh copy of them, as
//!   a new process or a new tarball finds them: each file compiled to bytecode), `warm` a later
//!   call (the bytecode kept per process), `no_import` the same call's code without the import,
//!   for the ratio.

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
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use tokio::task::JoinSet;
use toolsmith_core::PermissionSet;
use toolsmith_sandbox::{
    HostCalls, JsCallContext, JsJob, JsLimits, JsPackage, JsPackages, JsSandbox, PoolSettings,
};

struct NoHost;

#[async_trait]
impl HostCalls for NoHost {
    async fn call_tool(&self, _name: &str, _args: Value) -> Result<Value, String> {
        Err("no tools".to_owned())
    }

    fn list_tools(&self) -> Vec<Value> {
        Vec::new()
    }
}

const WORD_FREQUENCY: &str = r#"const words = args.text.toLowerCase().match(/\b\w+\b/g) || [];
const freq = {};
for (const word of words) {
  freq[word] = (freq[word] || 0) + 1;
}
const sorted = Object.entries(freq)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 20);
return { totalWords: words.length, uniqueWords: Object.keys(freq).length, top20: sorted };"#;

const LOOP: &str = "let n = 0; for (let i = 0; i < 1e7; i++) { n += i & 1 } return n";

fn job(code: &str, args: Value, host: &Arc<dyn HostCalls>) -> JsJob {
    JsJob {
        code: code.to_owned(),
        args,
        context: JsCallContext {
            tool_name: "bench".to_owned(),
            call_id: "call_bench".to_owned(),
            conversation_id: None,
            user_id: "default".to_owned(),
        },
        permissions: PermissionSet::new(),
        limits: JsLimits::default(),
        host: host.clone(),
        config: None,
        packages: None,
        env: None,
    }
}

fn text_10kb() -> String {
    let words = [
        "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "sandbox", "tool", "agent",
        "runtime", "limits", "memory", "script", "value",
    ];
    let mut text = String::new();
    let mut i = 0usize;
    while text.len() < 10 * 1024 {
        text.push_str(words[(i * 7 + i / 3) % words.len()]);
        text.push(if i % 11 == 10 { '.' } else { ' ' });
        i += 1;
    }
    text
}

fn benches(c: &mut Criterion) {
    let rt = Runtime::new().expect("tokio runtime");
    let sandbox = Arc::new(JsSandbox::new(PoolSettings::default()));
    let host: Arc<dyn HostCalls> = Arc::new(NoHost);

    let res = rt.block_on(sandbox.run(job("return 1", json!({}), &host)));
    assert_eq!(res.content, json!(1));
    c.bench_function("trivial", |b| {
        b.iter(|| black_box(rt.block_on(sandbox.run(job("return 1", json!({}), &host)))))
    });

    let mut group = c.benchmark_group("trivial_throughput");
    const IN_FLIGHT: u64 = 256;
    group.throughput(Throughput::Elements(IN_FLIGHT));
    group.bench_function("256_in_flight", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut set = JoinSet::new();
                for _ in 0..IN_FLIGHT {
                    let sandbox = sandbox.clone();
                    let job = job("return 1", json!({}), &host);
                    set.spawn(async move { sandbox.run(job).await });
                }
                while let Some(res) = set.join_next().await {
                    let res = res.expect("task");
                    assert!(!res.is_error);
                }
            })
        })
    });
    group.finish();

    let args = json!({ "text": text_10kb() });
    let res = rt.block_on(sandbox.run(job(WORD_FREQUENCY, args.clone(), &host)));
    assert!(!res.is_error, "{}", res.content);
    c.bench_function("word_frequency_10kb", |b| {
        b.iter(|| black_box(rt.block_on(sandbox.run(job(WORD_FREQUENCY, args.clone(), &host)))))
    });

    let res = rt.block_on(sandbox.run(job(LOOP, json!({}), &host)));
    assert_eq!(res.content, json!(5_000_000));
    let mut group = c.benchmark_group("loop");
    group.sample_size(10);
    group.bench_function("loop_1e7", |b| {
        b.iter(|| black_box(rt.block_on(sandbox.run(job(LOOP, json!({}), &host)))))
    });
    group.finish();
}

const CSV: &str = "a,b,c\n1,2,3\n4,5,6\n7,8,9\n";

const PARSE_CSV: &str = "const { parse } = await import('csv-parse/sync');\n\
    const rows = parse(args.csv, { columns: true });\n\
    return { count: rows.length, first: rows[0] };";

/// The same work without the package: what the import adds is the difference.
const SPLIT_CSV: &str = "const [head, ...lines] = args.csv.trim().split('\\n');\n\
    const keys = head.split(',');\n\
    const rows = lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [keys[i], v])));\n\
    return { count: rows.length, first: rows[0] };";

/// Copies the csv-parse fixture into `dir`, as the npm cache would hold it.
fn copy_fixture(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_fixture(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A fresh copy of the package, never seen by this process: its first import is cold.
fn csv_parse(scratch: &std::path::Path) -> Arc<JsPackages> {
    let fixture =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/fixtures/csv-parse");
    let dir = tempfile::tempdir_in(scratch).unwrap().keep();
    copy_fixture(&fixture, &dir);
    Arc::new(JsPackages {
        root: [("csv-parse".to_owned(), 0)].into_iter().collect(),
        packages: vec![JsPackage {
            name: "csv-parse".to_owned(),
            version: "5.6.0".to_owned(),
            dir,
            dependencies: Default::default(),
        }],
    })
}

fn npm_import(c: &mut Criterion) {
    let rt = Runtime::new().expect("tokio runtime");
    let sandbox = Arc::new(JsSandbox::new(PoolSettings::default()));
    let host: Arc<dyn HostCalls> = Arc::new(NoHost);
    let scratch = tempfile::tempdir().unwrap();
    let with = |code: &str, packages: Option<Arc<JsPackages>>| {
        let mut job = job(code, json!({ "csv": CSV }), &host);
        job.packages = packages;
        job
    };
    let expected = json!({"count": 3, "first": {"a": "1", "b": "2", "c": "3"}});
    let warm = csv_parse(scratch.path());
    let res = rt.block_on(sandbox.run(with(PARSE_CSV, Some(warm.clone()))));
    assert_eq!(res.content, expected, "{res:?}");
    let res = rt.block_on(sandbox.run(with(SPLIT_CSV, None)));
    assert_eq!(res.content, expected, "{res:?}");

    let mut group = c.benchmark_group("npm_import");
    group.sample_size(30);
    group.bench_function("cold", |b| {
        b.iter_batched(
            || with(PARSE_CSV, Some(csv_parse(scratch.path()))),
            |job| {
                let res = rt.block_on(sandbox.run(job));
                assert!(!res.is_error, "{res:?}");
                res
            },
            criterion::BatchSize::PerIteration,
        )
    });
    group.bench_function("warm", |b| {
        b.iter(|| black_box(rt.block_on(sandbox.run(with(PARSE_CSV, Some(warm.clone()))))))
    });
    group.bench_function("no_import", |b| {
        b.iter(|| black_box(rt.block_on(sandbox.run(with(SPLIT_CSV, None)))))
    });
    group.finish();
}

criterion_group!(sandbox, benches, npm_import);
criterion_main!(sandbox);
