//! The shared limits ([`SharedLimits`]): on PostgreSQL, token buckets and concurrency slots
//! that two handles on one database (two instances) count together; SQLite has none (one
//! process keeps its counters in memory).

use std::sync::Arc;
use std::time::Duration;

use super::Backend;
use crate::{LimitOutcome, LimitRequest, RateBucketSpend, SharedLimits, SlotRequest};

fn bucket(scope: &str, key: &str, capacity: f64, per_second: f64) -> RateBucketSpend {
    RateBucketSpend {
        scope: scope.to_owned(),
        key: key.to_owned(),
        capacity,
        per_second,
    }
}

fn spend(buckets: Vec<RateBucketSpend>) -> LimitRequest {
    LimitRequest {
        buckets,
        slot: None,
    }
}

fn slot(user: &str, cap: u32, ttl: Duration) -> LimitRequest {
    LimitRequest {
        buckets: Vec::new(),
        slot: Some(SlotRequest {
            user: user.to_owned(),
            cap,
            ttl,
        }),
    }
}

/// Two instances on one PostgreSQL database (`None` on SQLite, or when PostgreSQL is missing).
async fn two(backend: &Backend) -> Option<(Arc<dyn SharedLimits>, Arc<dyn SharedLimits>)> {
    let a = backend.store().shared_limits()?;
    let b: Arc<dyn SharedLimits> = backend.another_instance().await?;
    Some((a, b))
}

fn allowed(outcome: &LimitOutcome) -> bool {
    matches!(outcome, LimitOutcome::Allowed { .. })
}

/// About one token a minute: nothing refills while a test runs.
const SLOW: f64 = 1.0 / 60.0;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_shares_no_limits() {
    let backend = Backend::sqlite().await;
    assert!(backend.store().shared_limits().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_is_one_bucket_across_instances_and_says_how_long_to_wait() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, b) = two(&backend).await.unwrap();
    let take = || spend(vec![bucket("user", "alice", 5.0, SLOW)]);
    for i in 0..5 {
        let by = if i % 2 == 0 { &a } else { &b };
        assert!(allowed(&by.take_limits(&take()).await.unwrap()), "call {i}");
    }
    for by in [&a, &b] {
        let LimitOutcome::RateLimited { index, wait } = by.take_limits(&take()).await.unwrap()
        else {
            panic!("the sixth call must be refused");
        };
        assert_eq!(index, 0);
        // One token a minute: the next comes within a minute, not at once.
        assert!(
            wait > Duration::from_secs(50) && wait <= Duration::from_secs(60),
            "{wait:?}"
        );
    }
    // Another key is another bucket.
    assert!(allowed(
        &a.take_limits(&spend(vec![bucket("user", "bob", 5.0, SLOW)]))
            .await
            .unwrap()
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_by_one_bucket_spends_from_none() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, _) = two(&backend).await.unwrap();
    let both = || {
        spend(vec![
            bucket("user", "alice", 3.0, SLOW),
            bucket("tool", "alice/t", 1.0, SLOW),
        ])
    };
    assert!(allowed(&a.take_limits(&both()).await.unwrap()));
    for _ in 0..3 {
        let refused = a.take_limits(&both()).await.unwrap();
        assert!(
            matches!(refused, LimitOutcome::RateLimited { index: 1, .. }),
            "the tool bucket (index 1 of the request) is the empty one: {refused:?}"
        );
    }
    // The user bucket lost one token, not four.
    let user = || spend(vec![bucket("user", "alice", 3.0, SLOW)]);
    assert!(allowed(&a.take_limits(&user()).await.unwrap()));
    assert!(allowed(&a.take_limits(&user()).await.unwrap()));
    assert!(!allowed(&a.take_limits(&user()).await.unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_refills_on_the_database_clock() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, b) = two(&backend).await.unwrap();
    // Ten tokens a second, one at most.
    let take = || spend(vec![bucket("session", "s1", 1.0, 10.0)]);
    assert!(allowed(&a.take_limits(&take()).await.unwrap()));
    let LimitOutcome::RateLimited { wait, .. } = b.take_limits(&take()).await.unwrap() else {
        panic!("empty right after the first call");
    };
    assert!(wait <= Duration::from_millis(100), "{wait:?}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(allowed(&b.take_limits(&take()).await.unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_takes_on_two_instances_never_exceed_the_bucket() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, b) = two(&backend).await.unwrap();
    let calls = (0..40).map(|i| {
        let by = if i % 2 == 0 { a.clone() } else { b.clone() };
        tokio::spawn(async move {
            by.take_limits(&spend(vec![
                bucket("session", &format!("s{}", i % 3), 100.0, SLOW),
                bucket("tool", "alice/t", 100.0, SLOW),
                bucket("user", "alice", 10.0, SLOW),
            ]))
            .await
            .unwrap()
        })
    });
    let outcomes = futures::future::join_all(calls).await;
    let won = outcomes
        .iter()
        .filter(|o| allowed(o.as_ref().unwrap()))
        .count();
    assert_eq!(won, 10, "{outcomes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slots_are_counted_across_instances_and_given_back() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, b) = two(&backend).await.unwrap();
    let ttl = Duration::from_secs(60);
    let LimitOutcome::Allowed { lease: Some(first) } =
        a.take_limits(&slot("alice", 2, ttl)).await.unwrap()
    else {
        panic!("the first slot");
    };
    assert!(allowed(
        &b.take_limits(&slot("alice", 2, ttl)).await.unwrap()
    ));
    for by in [&a, &b] {
        assert_eq!(
            by.take_limits(&slot("alice", 2, ttl)).await.unwrap(),
            LimitOutcome::ConcurrencyLimited
        );
    }
    // Another user has slots of their own.
    assert!(allowed(&b.take_limits(&slot("bob", 2, ttl)).await.unwrap()));
    a.release_slot(first).await.unwrap();
    a.release_slot(first).await.unwrap();
    assert!(allowed(
        &b.take_limits(&slot("alice", 2, ttl)).await.unwrap()
    ));
    assert_eq!(
        b.take_limits(&slot("alice", 2, ttl)).await.unwrap(),
        LimitOutcome::ConcurrencyLimited
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_for_its_slot_has_spent_its_tokens() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, _) = two(&backend).await.unwrap();
    let call = || LimitRequest {
        buckets: vec![bucket("user", "alice", 3.0, SLOW)],
        slot: Some(SlotRequest {
            user: "alice".to_owned(),
            cap: 1,
            ttl: Duration::from_secs(60),
        }),
    };
    assert!(allowed(&a.take_limits(&call()).await.unwrap()));
    assert_eq!(
        a.take_limits(&call()).await.unwrap(),
        LimitOutcome::ConcurrencyLimited
    );
    assert!(matches!(
        a.take_limits(&spend(vec![bucket("user", "alice", 3.0, SLOW)]))
            .await
            .unwrap(),
        LimitOutcome::Allowed { .. }
    ));
    assert!(matches!(
        a.take_limits(&spend(vec![bucket("user", "alice", 3.0, SLOW)]))
            .await
            .unwrap(),
        LimitOutcome::RateLimited { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slot_of_an_instance_that_stops_renewing_lapses() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, b) = two(&backend).await.unwrap();
    let short = Duration::from_millis(800);
    // A renews its slot; B's slot is never renewed (B "died").
    let LimitOutcome::Allowed { lease: Some(kept) } =
        a.take_limits(&slot("alice", 2, short)).await.unwrap()
    else {
        panic!("A's slot");
    };
    assert!(allowed(
        &b.take_limits(&slot("alice", 2, short)).await.unwrap()
    ));
    assert_eq!(
        a.renew_slots(&[kept, 999_999], Duration::from_secs(60))
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        a.renew_slots(&[], Duration::from_secs(60)).await.unwrap(),
        0
    );
    assert_eq!(
        a.take_limits(&slot("alice", 2, short)).await.unwrap(),
        LimitOutcome::ConcurrencyLimited
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    // B's slot lapsed; A's renewed one still counts.
    assert!(allowed(
        &a.take_limits(&slot("alice", 2, short)).await.unwrap()
    ));
    assert_eq!(
        a.take_limits(&slot("alice", 2, Duration::from_secs(60)))
            .await
            .unwrap(),
        LimitOutcome::ConcurrencyLimited
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_removes_full_buckets_and_lapsed_slots_only() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, _) = two(&backend).await.unwrap();
    // Full again after 100 ms; empty for about a minute.
    assert!(allowed(
        &a.take_limits(&spend(vec![bucket("user", "quick", 1.0, 10.0)]))
            .await
            .unwrap()
    ));
    assert!(allowed(
        &a.take_limits(&spend(vec![bucket("user", "slow", 1.0, SLOW)]))
            .await
            .unwrap()
    ));
    assert!(allowed(
        &a.take_limits(&slot("lapsing", 5, Duration::from_millis(100)))
            .await
            .unwrap()
    ));
    assert!(allowed(
        &a.take_limits(&slot("running", 5, Duration::from_secs(60)))
            .await
            .unwrap()
    ));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(a.sweep_limits().await.unwrap(), 2);
    assert_eq!(backend.count_rows("limit_buckets").await, 1);
    assert_eq!(backend.count_rows("limit_slots").await, 1);
    // The swept bucket is simply full.
    assert!(allowed(
        &a.take_limits(&spend(vec![bucket("user", "quick", 1.0, 10.0)]))
            .await
            .unwrap()
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_keys_are_counted_like_any_other() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let (a, b) = two(&backend).await.unwrap();
    let huge = "x".repeat(100_000);
    for key in [huge.as_str(), "nul\0inside", "back\\slash", "é\u{202e}"] {
        let take = || spend(vec![bucket("session", key, 1.0, SLOW)]);
        assert!(allowed(&a.take_limits(&take()).await.unwrap()), "{key:.20}");
        assert!(
            !allowed(&b.take_limits(&take()).await.unwrap()),
            "{key:.20}"
        );
    }
    // A key whose escaped form another key's text equals is still another bucket.
    let take = |key: &str| spend(vec![bucket("user", key, 1.0, SLOW)]);
    assert!(allowed(&a.take_limits(&take("a\0")).await.unwrap()));
    assert!(allowed(&a.take_limits(&take("a\\0")).await.unwrap()));
}
