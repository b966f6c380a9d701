//! The pool: a flood of calls gets `busy` past the cap of executions in flight (but a call
//! right after an answered one does not), a dropped call is cancelled, and the default
//! configuration.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolsmith_core::ErrorKind;
use toolsmith_sandbox::{HostCalls, JsSandbox, PoolSettings};

use crate::support::*;

/// A host whose only tool reports that it was called, then never answers.
struct Parked(mpsc::UnboundedSender<()>);

#[async_trait]
impl HostCalls for Parked {
    async fn call_tool(&self, _name: &str, _args: Value) -> Result<Value, String> {
        let _ = self.0.send(());
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(Value::Null)
    }

    fn list_tools(&self) -> Vec<Value> {
        Vec::new()
    }
}

#[test]
fn the_default_pool_has_a_slot_per_core_and_room_for_1024_in_flight() {
    let config = PoolSettings::default();
    assert_eq!(
        config.workers,
        std::thread::available_parallelism().map_or(2, |n| n.get())
    );
    assert_eq!(config.max_in_flight, 1024);
}

#[test]
fn the_sandbox_can_be_shared_between_tasks() {
    fn is_send_sync<T: Send + Sync>() {}
    is_send_sync::<JsSandbox>();
}

#[tokio::test]
async fn a_flood_past_the_cap_is_refused_as_busy() {
    let sandbox = Arc::new(JsSandbox::new(PoolSettings {
        workers: 1,
        max_in_flight: 2,
    }));
    let (started, mut running) = mpsc::unbounded_channel();
    let host: Arc<dyn HostCalls> = Arc::new(Parked(started));
    // Two executions are in flight, both awaiting a host call (holding no CPU slot)…
    let mut parked = Vec::new();
    for _ in 0..2 {
        let sandbox = sandbox.clone();
        let job = job_with(
            "await utils.callTool('park'); return 'late'",
            json!({}),
            wall_limits(),
            host.clone(),
        );
        parked.push(tokio::spawn(async move { sandbox.run(job).await }));
        running.recv().await.expect("the call runs");
    }
    assert_eq!(sandbox.in_flight(), 2);
    // …and everything after that is refused at once.
    for _ in 0..5 {
        assert_eq!(
            failed(&sandbox.run(job("return 1")).await, ErrorKind::Busy),
            "the JavaScript sandbox is busy: 2 executions are already in flight (the `js_max_in_flight` setting); try again shortly"
        );
    }
    for call in parked {
        assert_eq!(
            failed(&call.await.unwrap(), ErrorKind::Timeout),
            "the tool did not finish within its time limit of 300 ms"
        );
    }
    still_works(&sandbox).await;
}

/// An answered call counts against the cap until its runtime is freed (that bounds memory),
/// but the caller it answered is not refused because of it: the next call waits for the
/// runtime to be freed instead. With a cap of one, each call here follows one whose runtime
/// holds 50,000 objects to collect.
#[tokio::test]
async fn a_call_after_an_answered_one_is_not_refused_while_its_runtime_is_freed() {
    let sandbox = JsSandbox::new(PoolSettings {
        workers: 1,
        max_in_flight: 1,
    });
    let heavy = "const a = []; for (let i = 0; i < 50000; i++) { a.push({ i }); } return a.length";
    for _ in 0..10 {
        let res = sandbox.run(job(heavy)).await;
        assert_eq!(res.content, json!(50_000), "{res:?}");
        let res = sandbox.run(job("return 1")).await;
        assert_eq!(res.content, json!(1), "{res:?}");
    }
}

/// A host whose only tool reports that the script got that far, and answers at once. The
/// execution holds the host until it ends, so the channel closing says the execution is gone.
struct Reports(mpsc::UnboundedSender<()>);

#[async_trait]
impl HostCalls for Reports {
    async fn call_tool(&self, _name: &str, _args: Value) -> Result<Value, String> {
        let _ = self.0.send(());
        Ok(Value::Null)
    }

    fn list_tools(&self) -> Vec<Value> {
        Vec::new()
    }
}

#[tokio::test]
async fn a_dropped_call_is_cancelled_and_frees_its_worker() {
    let sandbox = JsSandbox::new(PoolSettings {
        workers: 1,
        max_in_flight: 4,
    });
    let (started, mut reports) = mpsc::unbounded_channel();
    let mut endless = job_with(
        "await utils.callTool('started'); while (true) {}",
        json!({}),
        small_limits(),
        Arc::new(Reports(started)),
    );
    endless.limits.cpu_time = Duration::from_secs(60);
    endless.limits.wall_time = Duration::from_secs(60);
    // The caller goes away once the script runs: the call's future is dropped.
    tokio::select! {
        res = sandbox.run(endless) => panic!("an endless script answered: {res:?}"),
        _ = reports.recv() => {}
    }
    // The abandoned script is stopped long before its limits: its execution lets go of its host.
    let ended = tokio::time::timeout(Duration::from_secs(10), reports.recv())
        .await
        .expect("the abandoned script was still running after 10 s");
    assert_eq!(ended, None);
    let next = sandbox.run(job("return 'free'")).await;
    assert_eq!(next.content, json!("free"));
}

#[tokio::test]
async fn many_tasks_share_one_sandbox() {
    let sandbox = Arc::new(sandbox());
    let mut set = tokio::task::JoinSet::new();
    for n in 0..40 {
        let sandbox = sandbox.clone();
        set.spawn(async move {
            let res = sandbox
                .run(job_with(
                    "return args.n * 2",
                    json!({"n": n}),
                    small_limits(),
                    Arc::new(NoHost),
                ))
                .await;
            (n, res.content)
        });
    }
    let mut results = set.join_all().await;
    results.sort_by_key(|(n, _)| *n);
    let expected: Vec<(i64, Value)> = (0..40).map(|n| (n, json!(n * 2))).collect();
    assert_eq!(results, expected);
}

/// Many callers of trivial tools are served by the threads kept ready, one per slot: a thread
/// that has finished its job counts as coming for the next one (which waits for it to prepare a
/// fresh runtime), so no thread is started for a job that arrives meanwhile. An earlier version
/// started one for each such job: six threads, each with its own heap, for two slots.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_callers_of_trivial_tools_are_served_by_the_threads_kept_ready() {
    let sandbox = Arc::new(JsSandbox::new(PoolSettings {
        workers: 2,
        max_in_flight: 1024,
    }));
    let ((), most) = most_sandbox_threads_during(async {
        let callers: Vec<_> = (0..16)
            .map(|_| {
                let sandbox = sandbox.clone();
                tokio::spawn(async move {
                    for _ in 0..60 {
                        let res = sandbox.run(job("return 1")).await;
                        assert!(!res.is_error, "{}", res.content);
                    }
                })
            })
            .collect();
        for caller in callers {
            caller.await.unwrap();
        }
    })
    .await;
    assert!(
        (1..=2).contains(&most),
        "960 trivial calls from 16 callers ran on {most} sandbox threads, for 2 slots"
    );
}
