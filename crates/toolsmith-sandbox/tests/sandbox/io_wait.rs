//! Waiting costs no CPU slot: executions awaiting a slow endpoint overlap far beyond the
//! workers, CPU time stays each execution's own, one user's CPU-bound scripts do not starve
//! another's trivial call, and the cap of executions in flight answers every call.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::sync::watch;
use toolsmith_core::{ErrorKind, Permission, ToolResult};
use toolsmith_egress::{EgressGuard, EgressPolicy};
use toolsmith_sandbox::{HostCalls, JsJob, JsLimits, JsSandbox, PoolSettings};

use crate::fetch::NetHost;
use crate::support::*;

/// How many requests are inside the slow endpoint now, and the most there ever were at once.
#[derive(Default)]
struct Inside {
    now: AtomicUsize,
    max: AtomicUsize,
}

/// A local endpoint that answers `/slow?ms=N` after N milliseconds.
struct SlowEndpoint {
    base: String,
    guard: EgressGuard,
    inside: Arc<Inside>,
}

async fn slow(
    State(inside): State<Arc<Inside>>,
    Query(query): Query<HashMap<String, u64>>,
) -> String {
    let now = inside.now.fetch_add(1, Ordering::SeqCst) + 1;
    inside.max.fetch_max(now, Ordering::SeqCst);
    let ms = query.get("ms").copied().unwrap_or(0);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    inside.now.fetch_sub(1, Ordering::SeqCst);
    "{\"ok\":true}".to_owned()
}

async fn slow_endpoint() -> SlowEndpoint {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let inside = Arc::new(Inside::default());
    let app = Router::new()
        .route("/slow", get(slow))
        .with_state(inside.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let guard = EgressGuard::new(EgressPolicy {
        allowed_private_hosts: vec![addr.to_string().parse().unwrap()],
        ..EgressPolicy::default()
    })
    .unwrap();
    SlowEndpoint {
        base: format!("http://{addr}"),
        guard,
        inside,
    }
}

impl SlowEndpoint {
    /// A job with `fetch`, `args.base` set to the endpoint, run as `user`.
    fn job(&self, code: &str, limits: JsLimits, user: &str) -> JsJob {
        let host: Arc<dyn HostCalls> = Arc::new(NetHost {
            session: self.guard.session(),
        });
        let mut job = job_with(code, json!({ "base": self.base }), limits, host);
        job.permissions.insert(Permission::Network);
        job.context.user_id = user.to_owned();
        job
    }
}

fn two_workers(max_in_flight: usize) -> Arc<JsSandbox> {
    Arc::new(JsSandbox::new(PoolSettings {
        workers: 2,
        max_in_flight,
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn executions_awaiting_a_slow_endpoint_overlap_far_beyond_the_workers() {
    let endpoint = slow_endpoint().await;
    let sandbox = two_workers(128);
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..64 {
        let sandbox = sandbox.clone();
        let job = endpoint.job(
            "const r = await fetch(args.base + '/slow?ms=300'); return (await r.json()).ok",
            JsLimits {
                wall_time: Duration::from_secs(20),
                ..small_limits()
            },
            &format!("user_{}", n % 4),
        );
        calls.spawn(async move { sandbox.run(job).await });
    }
    let results = calls.join_all().await;
    for res in &results {
        assert_eq!(res.content, json!(true), "{}", res.content);
    }
    let max = endpoint.inside.max.load(Ordering::SeqCst);
    assert!(
        max > 2,
        "at most {max} executions awaited the endpoint at once: waiting held a worker"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_queued_for_a_slot_hold_no_thread() {
    let sandbox = Arc::new(JsSandbox::new(PoolSettings {
        workers: 1,
        max_in_flight: 1000,
    }));
    let ((), most) = most_sandbox_threads_during(async {
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..300 {
            let sandbox = sandbox.clone();
            calls.spawn(async move { sandbox.run(job("return 1")).await });
        }
        for res in calls.join_all().await {
            assert_eq!(res.content, json!(1), "{}", res.content);
        }
    })
    .await;
    assert!(
        most < 100,
        "300 trivial calls queued on one worker ran on up to {most} threads: a call waiting for its first slot should hold none"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cpu_time_is_each_executions_own_when_they_share_a_slot() {
    let endpoint = slow_endpoint().await;
    let sandbox = Arc::new(JsSandbox::new(PoolSettings {
        workers: 1,
        max_in_flight: 16,
    }));
    let limits = JsLimits {
        cpu_time: Duration::from_millis(150),
        wall_time: Duration::from_secs(20),
        ..small_limits()
    };
    // Waits, then burns: stopped by its own CPU limit after the wait.
    let burner = endpoint.job(
        "await fetch(args.base + '/slow?ms=200'); console.log('waited'); while (true) {}",
        limits,
        "a",
    );
    // Waits 900 ms while the others burn the only slot for 650 ms: charged for none of it.
    let waiter = endpoint.job(
        "const r = await fetch(args.base + '/slow?ms=900'); return r.status",
        limits,
        "b",
    );
    let run = |job| {
        let sandbox = sandbox.clone();
        tokio::spawn(async move { sandbox.run(job).await })
    };
    let burner = run(burner);
    let waiter = run(waiter);
    // Five that each burn 100 ms, under their own limit of 150 ms.
    let busy: Vec<_> = (0..5)
        .map(|_| {
            run(endpoint.job(
                "await fetch(args.base + '/slow?ms=10'); const end = Date.now() + 100; while (Date.now() < end) {} return 'done'",
                limits,
                "c",
            ))
        })
        .collect();
    let burned = burner.await.unwrap();
    failed(&burned, ErrorKind::CpuLimit);
    assert_eq!(burned.metadata.console.len(), 1, "it ran past its wait");
    for res in busy {
        assert_eq!(res.await.unwrap().content, json!("done"));
    }
    let waited = waiter.await.unwrap();
    assert_eq!(waited.content, json!(200), "{}", waited.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_users_busy_loops_do_not_starve_another_users_trivial_call() {
    let sandbox = Arc::new(JsSandbox::new(PoolSettings {
        workers: 1,
        max_in_flight: 64,
    }));
    // 8 × 150 ms of CPU on one slot: small enough to end well within the wall clock on a
    // loaded machine, long enough that the loops are still running when the trivial call comes.
    let limits = JsLimits {
        cpu_time: Duration::from_millis(150),
        wall_time: Duration::from_secs(60),
        ..small_limits()
    };
    let finished = Arc::new(AtomicUsize::new(0));
    let mut loops = Vec::new();
    for _ in 0..8 {
        let sandbox = sandbox.clone();
        let finished = finished.clone();
        let mut job = job_with("while (true) {}", json!({}), limits, Arc::new(NoHost));
        job.context.user_id = "heavy".to_owned();
        loops.push(tokio::spawn(async move {
            let res = sandbox.run(job).await;
            finished.fetch_add(1, Ordering::SeqCst);
            res
        }));
    }
    // The loops share the only slot; the trivial call comes after them.
    while sandbox.in_flight() < 8 {
        tokio::task::yield_now().await;
    }
    let mut trivial = job("return 'answered'");
    trivial.context.user_id = "light".to_owned();
    let res = sandbox.run(trivial).await;
    assert_eq!(res.content, json!("answered"));
    assert!(
        finished.load(Ordering::SeqCst) < 8,
        "the trivial call waited for every busy loop to end"
    );
    for res in loops {
        failed(&res.await.unwrap(), ErrorKind::CpuLimit);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_never_awaited_end_with_the_script() {
    let endpoint = slow_endpoint().await;
    let sandbox = two_workers(16);
    let res = sandbox
        .run(endpoint.job(
            "for (let i = 0; i < 40; i++) { fetch(args.base + '/slow?ms=5000').catch(() => {}); } return 'left'",
            small_limits(),
            "a",
        ))
        .await;
    assert_eq!(res.content, json!("left"), "{}", res.content);
    still_works(&sandbox).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promise_that_never_settles_while_a_fetch_hangs_ends_at_the_wall_clock() {
    let endpoint = slow_endpoint().await;
    let sandbox = two_workers(16);
    let res = sandbox
        .run(endpoint.job(
            "fetch(args.base + '/slow?ms=60000'); await new Promise(() => {}); return 1",
            wall_limits(),
            "a",
        ))
        .await;
    assert_eq!(
        failed(&res, ErrorKind::Timeout),
        "the tool did not finish within its time limit of 300 ms"
    );
    still_works(&sandbox).await;
}

/// A host whose `wait` tool answers once the test opens the gate.
struct Gate(watch::Receiver<bool>);

#[async_trait]
impl HostCalls for Gate {
    async fn call_tool(&self, _name: &str, _args: Value) -> Result<Value, String> {
        let mut open = self.0.clone();
        let _ = open.wait_for(|open| *open).await;
        Ok(json!("through"))
    }

    fn list_tools(&self) -> Vec<Value> {
        Vec::new()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_calls_against_a_cap_of_a_thousand_are_all_answered() {
    let sandbox = two_workers(1000);
    let (open, gate) = watch::channel(false);
    let host: Arc<dyn HostCalls> = Arc::new(Gate(gate));
    let refused = Arc::new(AtomicUsize::new(0));
    let all_refused = Arc::new(tokio::sync::Notify::new());
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..2000 {
        let sandbox = sandbox.clone();
        let refused = refused.clone();
        let all_refused = all_refused.clone();
        let job = job_with(
            "return await utils.callTool('wait', {})",
            json!({}),
            JsLimits {
                wall_time: Duration::from_secs(120),
                ..small_limits()
            },
            host.clone(),
        );
        calls.spawn(async move {
            let res = sandbox.run(job).await;
            if res.error_kind() == Some(ErrorKind::Busy)
                && refused.fetch_add(1, Ordering::SeqCst) + 1 == 1000
            {
                all_refused.notify_one();
            }
            res
        });
    }
    // Nothing is let through until every call past the cap has been refused.
    all_refused.notified().await;
    assert_eq!(sandbox.in_flight(), 1000);
    open.send(true).unwrap();
    let results: Vec<ToolResult> = calls.join_all().await;
    assert_eq!(results.len(), 2000, "every call is answered");
    let through = results
        .iter()
        .filter(|res| res.content == json!("through"))
        .count();
    let busy = results
        .iter()
        .filter(|res| res.error_kind() == Some(ErrorKind::Busy))
        .count();
    assert_eq!((through, busy), (1000, 1000));
    // Each thread gives its place back just after its reply. The sandbox has no event for
    // "nothing in flight", so ask, with a deadline: a place never given back fails here.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while sandbox.in_flight() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} executions still in flight 30 s after their replies",
            sandbox.in_flight()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    still_works(&sandbox).await;
}
