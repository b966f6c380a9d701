//! The limits through a real pipeline: 200 concurrent callers, exact counts of what ran and
//! what was refused, permits released however a call ends, nested calls not double-counted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;
use toolsmith_core::{
    Pipeline, PipelineLimits, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor,
    ToolRegistry,
};

use super::*;

/// Sleeps `ms` (a tool that takes its time), counting how many of its calls run at once (and
/// the most ever seen). A call with `{"hold": true}` instead counts itself in `held` and runs
/// until `release` is sent, so a test knows a call is inside its permit without guessing a time.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    peak: AtomicUsize,
    held: watch::Sender<usize>,
    release: watch::Sender<bool>,
}

impl Gauge {
    /// Waits until `n` held calls are running (inside the limiter's permits).
    async fn holding(&self, n: usize) {
        let mut held = self.held.subscribe();
        held.wait_for(|held| *held >= n)
            .await
            .expect("the gauge lives");
    }
}

#[async_trait]
impl ToolExecutor for Gauge {
    async fn execute(&self, args: serde_json::Value, _ctx: &ToolContext) -> ToolResult {
        let running = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(running, Ordering::SeqCst);
        if args.get("hold") == Some(&Value::Bool(true)) {
            let mut release = self.release.subscribe();
            self.held.send_modify(|held| *held += 1);
            let _ = release.wait_for(|released| *released).await;
        } else {
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(50);
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        self.now.fetch_sub(1, Ordering::SeqCst);
        ToolResult::ok(json!("done"))
    }
}

fn pipeline(config: LimitsSettings, gauge: Arc<Gauge>) -> (Arc<Pipeline>, Arc<Limiter>) {
    let registry = Arc::new(ToolRegistry::default());
    for name in ["gauge", "other"] {
        registry
            .register_builtin(
                RegisteredTool::new(
                    ToolDefinition::new(name, name, json!({"type": "object"})),
                    ToolOrigin::BuiltIn {
                        provider: "test".into(),
                    },
                    Default::default(),
                    gauge.clone(),
                )
                .unwrap(),
            )
            .unwrap();
    }
    let limiter = Arc::new(Limiter::new(config));
    let pipeline =
        Pipeline::new(registry, PipelineLimits::default()).with_middleware(limiter.clone());
    (Arc::new(pipeline), limiter)
}

/// Runs `n` calls at once; returns (successes, refusals), asserting nothing else came back.
async fn flood(
    pipeline: &Arc<Pipeline>,
    n: usize,
    ctx: impl Fn(usize) -> ToolContext,
) -> (usize, usize) {
    let calls = (0..n).map(|i| {
        let pipeline = pipeline.clone();
        let ctx = ctx(i);
        tokio::spawn(async move {
            pipeline
                .execute_value("gauge", json!({"ms": 100}), ctx)
                .await
        })
    });
    let results = futures::future::join_all(calls).await;
    let (mut ok, mut refused) = (0, 0);
    for result in results {
        let result = result.unwrap();
        match result.error_kind() {
            None => ok += 1,
            Some(ErrorKind::RateLimited) => {
                assert!(result.content["retryAfterSeconds"].as_u64().unwrap() >= 1);
                refused += 1;
            }
            Some(other) => panic!("unexpected {other:?}: {result:?}"),
        }
    }
    (ok, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_global_cap_holds_exactly_under_200_concurrent_callers() {
    let gauge = Arc::new(Gauge::default());
    let (pipeline, limiter) = pipeline(
        LimitsSettings {
            max_concurrent: 8,
            ..LimitsSettings::default()
        },
        gauge.clone(),
    );
    let (ok, refused) = flood(&pipeline, 200, |i| ToolContext::new(format!("u{i}"))).await;
    assert_eq!(ok + refused, 200, "every call gets a result or a refusal");
    assert!(ok >= 8, "at least the cap ran: {ok}");
    assert!(refused > 0, "200 calls of 100 ms cannot all fit 8 slots");
    assert!(
        gauge.peak.load(Ordering::SeqCst) <= 8,
        "never more than 8 at once"
    );
    assert_eq!(limiter.rejections().concurrency, refused as u64);
    // Every permit came back: a full set of 8 runs again.
    let (ok, refused) = flood(&pipeline, 8, |_| ToolContext::new("again")).await;
    assert_eq!((ok, refused), (8, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_per_user_cap_leaves_other_users_alone() {
    let gauge = Arc::new(Gauge::default());
    let (pipeline, _) = pipeline(
        LimitsSettings {
            max_concurrent_per_user: 3,
            ..LimitsSettings::default()
        },
        gauge,
    );
    let (ok, refused) = flood(&pipeline, 100, |_| ToolContext::new("greedy")).await;
    assert_eq!(ok + refused, 100);
    assert_eq!(ok, 3, "exactly the per-user cap ran");
    let (ok, refused) = flood(&pipeline, 6, |i| {
        ToolContext::new(format!("polite{}", i % 2))
    })
    .await;
    assert_eq!((ok, refused), (6, 0), "two other users, three each");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_burst_is_counted_exactly_and_users_are_independent() {
    let (pipeline, limiter) = pipeline(
        LimitsSettings {
            per_user: Some(Rate {
                per_minute: 1,
                burst: 50,
            }),
            ..LimitsSettings::default()
        },
        Arc::new(Gauge::default()),
    );
    let (ok, refused) = flood(&pipeline, 200, |_| ToolContext::new("alice")).await;
    assert_eq!((ok, refused), (50, 150));
    assert_eq!(limiter.rejections().rate, 150);
    let (ok, _) = flood(&pipeline, 10, |_| ToolContext::new("bob")).await;
    assert_eq!(ok, 10, "bob has his own bucket");
}

#[tokio::test]
async fn per_tool_and_per_session_buckets() {
    let (pipeline, _) = pipeline(
        LimitsSettings {
            per_tool: Some(Rate {
                per_minute: 1,
                burst: 2,
            }),
            per_session: Some(Rate {
                per_minute: 1,
                burst: 1,
            }),
            ..LimitsSettings::default()
        },
        Arc::new(Gauge::default()),
    );
    let in_session = |session: &str| {
        let mut ctx = ToolContext::new("u");
        ctx.conversation_id = Some(session.to_owned());
        ctx
    };
    let run = |name: &'static str, ctx: ToolContext| {
        let pipeline = pipeline.clone();
        async move { pipeline.execute_value(name, json!({"ms": 1}), ctx).await }
    };
    assert!(!run("gauge", in_session("s1")).await.is_error);
    let second = run("gauge", in_session("s1")).await;
    assert_eq!(second.error_kind(), Some(ErrorKind::RateLimited));
    assert_eq!(second.content["limit"], "session");
    assert!(!run("gauge", in_session("s2")).await.is_error);
    let third = run("gauge", in_session("s3")).await;
    assert_eq!(third.content["limit"], "tool", "gauge spent its burst of 2");
    assert!(
        !run("other", in_session("s4")).await.is_error,
        "tools are independent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_gives_its_permit_back() {
    let gauge = Arc::new(Gauge::default());
    let (pipeline, _) = pipeline(
        LimitsSettings {
            max_concurrent: 1,
            ..LimitsSettings::default()
        },
        gauge.clone(),
    );
    // The caller goes away mid-call, inside its permit: the pipeline future is dropped.
    let call = pipeline.execute_value("gauge", json!({"hold": true}), ToolContext::new("u"));
    tokio::select! {
        res = call => panic!("a held call cannot end on its own: {res:?}"),
        () = gauge.holding(1) => {}
    }
    let next = pipeline
        .execute_value("gauge", json!({"ms": 1}), ToolContext::new("u"))
        .await;
    assert!(!next.is_error, "{next:?}");
}

#[tokio::test]
async fn nested_calls_run_inside_their_callers_permit() {
    let gauge = Arc::new(Gauge::default());
    let (pipeline, _) = pipeline(
        LimitsSettings {
            max_concurrent: 1,
            ..LimitsSettings::default()
        },
        gauge.clone(),
    );
    let outer = pipeline.clone();
    let holder = tokio::spawn(async move {
        outer
            .execute_value("gauge", json!({"hold": true}), ToolContext::new("u"))
            .await
    });
    // The caller is running, holding the only permit.
    gauge.holding(1).await;
    let mut nested = ToolContext::new("u");
    nested.depth = 1;
    let inner = pipeline
        .execute_value("gauge", json!({"ms": 1}), nested)
        .await;
    assert!(!inner.is_error, "{inner:?}");
    let outside = pipeline
        .execute_value("gauge", json!({"ms": 1}), ToolContext::new("u"))
        .await;
    assert_eq!(outside.error_kind(), Some(ErrorKind::RateLimited));
    gauge.release.send_replace(true);
    assert!(!holder.await.unwrap().is_error);
}

#[tokio::test]
async fn idle_users_semaphores_are_removed() {
    let (pipeline, limiter) = pipeline(
        LimitsSettings {
            max_concurrent_per_user: 2,
            ..LimitsSettings::default()
        },
        Arc::new(Gauge::default()),
    );
    // One user's call stays in flight all along: its semaphore must survive every sweep.
    let (release, held) = tokio::sync::oneshot::channel::<()>();
    let busy = {
        let pipeline = pipeline.clone();
        let (started, running) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let call =
                pipeline.execute_value("gauge", json!({"ms": 60_000}), ToolContext::new("busy"));
            tokio::select! {
                biased;
                _ = call => {}
                _ = async { let _ = started.send(()); let _ = held.await; } => {}
            }
        });
        running.await.unwrap();
        task
    };
    for i in 0..5_000 {
        let done = pipeline
            .execute_value("gauge", json!({"ms": 0}), ToolContext::new(format!("u{i}")))
            .await;
        assert!(!done.is_error, "{done:?}");
    }
    let count = limiter.user_slot_count();
    assert!(
        count <= 2 * USER_SLOTS_SWEEP_AT,
        "{count} semaphores kept for 5,001 users of whom one is busy"
    );
    // Its semaphore is the one it holds a permit of: one more call fits, not two.
    let (ok, refused) = flood(&pipeline, 2, |_| ToolContext::new("busy")).await;
    assert_eq!(
        (ok, refused),
        (1, 1),
        "busy's semaphore was replaced while in use"
    );
    release.send(()).unwrap();
    busy.await.unwrap();
}

/// On PostgreSQL the buckets are the database's; when it is gone, a call is decided by this
/// instance's own counters (which the shared ones never spent), so the limit still holds, per
/// instance, instead of being off.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_database_gone_the_limits_hold_on_this_instances_own_counters() {
    let Some(cluster) = toolsmith_store::testkit::pg_or_skip() else {
        return;
    };
    let url = cluster.create_database().unwrap();
    let store = toolsmith_store::PgStore::connect(&url, &toolsmith_store::PgOptions::default())
        .await
        .unwrap();
    let settings = crate::ToolServiceSettings {
        limits: LimitsSettings {
            per_user: Some(Rate {
                per_minute: 1,
                burst: 2,
            }),
            ..LimitsSettings::default()
        },
        ..crate::ToolServiceSettings::default()
    };
    let service = crate::ToolService::open(settings, Arc::new(store))
        .await
        .unwrap();
    let call = || service.execute("generate_uuid", json!({}), ToolContext::new("alice"));
    let refused = |res: &ToolResult| res.error_kind() == Some(ErrorKind::RateLimited);
    // From the database's bucket: two, then refused.
    for _ in 0..2 {
        let res = call().await;
        assert!(!res.is_error, "{res:?}");
    }
    assert!(refused(&call().await));

    cluster.stop().unwrap();
    for _ in 0..2 {
        let res = call().await;
        assert!(
            !res.is_error,
            "the instance's own bucket is still full: {res:?}"
        );
    }
    let res = call().await;
    assert!(refused(&res), "{res:?}");
}

/// Issue 31: a fan-out of `callTool`s ran 256 sandboxes at once under `max_concurrent = 1`,
/// because nested calls took no permit. Each level of nesting now has caps of its own: a
/// second sibling at a level is refused while the first runs, a call one level deeper still
/// runs (a chain never waits for its own caller's permit).
#[tokio::test]
async fn nested_calls_at_one_level_share_that_levels_caps() {
    for config in [
        LimitsSettings {
            max_concurrent: 1,
            ..LimitsSettings::default()
        },
        LimitsSettings {
            max_concurrent_per_user: 1,
            ..LimitsSettings::default()
        },
    ] {
        let gauge = Arc::new(Gauge::default());
        let (pipeline, _) = pipeline(config, gauge.clone());
        let at = |depth: u32| {
            let mut ctx = ToolContext::new("u");
            ctx.depth = depth;
            ctx
        };
        let mut holders = Vec::new();
        for depth in [0, 1] {
            let pipeline = pipeline.clone();
            let ctx = at(depth);
            holders.push(tokio::spawn(async move {
                pipeline
                    .execute_value("gauge", json!({"hold": true}), ctx)
                    .await
            }));
            gauge.holding(depth as usize + 1).await;
        }
        let sibling = pipeline
            .execute_value("gauge", json!({"ms": 1}), at(1))
            .await;
        assert_eq!(
            sibling.error_kind(),
            Some(ErrorKind::RateLimited),
            "{config:?}: {sibling:?}"
        );
        assert!(
            sibling
                .error_message()
                .is_some_and(|m| m.contains("depth 1") && m.contains("one after another")),
            "{sibling:?}"
        );
        let deeper = pipeline
            .execute_value("gauge", json!({"ms": 1}), at(2))
            .await;
        assert!(!deeper.is_error, "{config:?}: {deeper:?}");
        gauge.release.send_replace(true);
        for holder in holders {
            assert!(!holder.await.unwrap().is_error);
        }
    }
}
