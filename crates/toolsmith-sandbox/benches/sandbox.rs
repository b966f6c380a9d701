//! Criterion benchmarks of the JS sandbox, end to end through `JsSandbox::run` (queue, fresh
//! runtime, prelude, tool, result):
//!
//! - `trivial`: `return 1`, one call at a time — the per-execution overhead.
//! - `trivial_throughput`: 256 trivial calls in flight at once on a pool of one worker per core.
//! - `word_frequency_10kb`: the spec's example tool on 10 KB of text.
//! - `loop_1e7`: a 10-million-iteration loop.

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
use toolsmith_sandbox::{HostCalls, JsCallContext, JsJob, JsLimits, JsSandbox, PoolSettings};

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

criterion_group!(sandbox, benches);
criterion_main!(sandbox);
