//! Runs N executions of one tool (default `return 1`) through `JsSandbox::run`, one at a time,
//! and exits: the per-execution cost of the sandbox alone, for instruction counts (`valgrind
//! --tool=callgrind` or `perf stat -e instructions:u`) at two values of N, whose difference
//! divided by the difference of N removes the process's start-up. It also prints the median
//! wall time of a call as its caller sees it (the runtime is prepared before the call arrives
//! and torn down after the reply, so neither is in it), which only means something on an idle
//! machine.
//!
//! Usage: cargo run --release -p toolsmith-sandbox --example trivial_calls -- N [code]

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

use async_trait::async_trait;
use serde_json::{Value, json};
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

fn main() {
    let mut argv = std::env::args().skip(1);
    let n: usize = argv.next().and_then(|n| n.parse().ok()).unwrap_or(100);
    let code = argv.next().unwrap_or_else(|| "return 1".to_owned());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let sandbox = JsSandbox::new(PoolSettings {
        workers: 1,
        ..PoolSettings::default()
    });
    let host: Arc<dyn HostCalls> = Arc::new(NoHost);
    let mut failed = 0;
    let mut times_us = Vec::with_capacity(n);
    for _ in 0..n {
        let job = JsJob {
            code: code.clone(),
            args: json!({}),
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
        };
        let started = std::time::Instant::now();
        let result = rt.block_on(sandbox.run(job));
        times_us.push(started.elapsed().as_secs_f64() * 1e6);
        // Let the thread tear the runtime down and prepare the next one, as between calls
        // that do not come back to back.
        std::thread::sleep(std::time::Duration::from_micros(500));
        if result.is_error {
            failed += 1;
            if failed == 1 {
                eprintln!("error: {}", result.content);
            }
        }
    }
    times_us.sort_by(f64::total_cmp);
    let median = times_us.get(n / 2).copied().unwrap_or(0.0);
    println!("{n} calls, {failed} failed, median {median:.0} µs a call");
}
