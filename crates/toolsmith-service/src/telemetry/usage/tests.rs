//! The writer's batching, on a paused clock: what shares a commit, and what does not wait.

use chrono::Utc;
use tokio::time::{Duration, Instant, sleep};
use toolsmith_core::ExecutionStatus;

use super::*;

fn record(id: &str) -> Message {
    Message::Record(Box::new(execution(id)))
}

fn execution(id: &str) -> ExecutionRecord {
    ExecutionRecord {
        id: id.to_owned(),
        tool_id: "tool_1".to_owned(),
        tool_name: "t".to_owned(),
        tool_version: 1,
        owner: "alice".to_owned(),
        conversation_id: None,
        agent_id: None,
        status: ExecutionStatus::Success,
        error_kind: None,
        error: None,
        duration_ms: 1.0,
        created_at: Utc::now(),
        client_requests: Default::default(),
        source: Default::default(),
    }
}

fn ids(batch: &[ExecutionRecord]) -> Vec<&str> {
    batch.iter().map(|e| e.id.as_str()).collect()
}

#[tokio::test(start_paused = true)]
async fn calls_close_together_share_one_batch_closed_by_the_linger() {
    let (tx, mut inbox) = mpsc::channel(16);
    tx.send(record("a")).await.unwrap();
    let late = tokio::spawn(async move {
        sleep(LINGER / 2).await;
        tx.send(record("b")).await.unwrap();
        tx
    });
    let started = Instant::now();
    let (mut batch, mut flushes) = (Vec::new(), Vec::new());
    assert!(gather(&mut inbox, &mut batch, &mut flushes).await);
    assert_eq!(ids(&batch), ["a", "b"], "b came within the linger");
    assert_eq!(
        started.elapsed(),
        LINGER,
        "the batch closed when the linger ended"
    );
    let _tx = late.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_record_after_the_linger_opens_the_next_batch() {
    let (tx, mut inbox) = mpsc::channel(16);
    tx.send(record("a")).await.unwrap();
    let late = tokio::spawn(async move {
        sleep(LINGER + Duration::from_millis(1)).await;
        tx.send(record("b")).await.unwrap();
        tx
    });
    let (mut batch, mut flushes) = (Vec::new(), Vec::new());
    assert!(gather(&mut inbox, &mut batch, &mut flushes).await);
    assert_eq!(ids(&batch), ["a"]);
    batch.clear();
    assert!(gather(&mut inbox, &mut batch, &mut flushes).await);
    assert_eq!(ids(&batch), ["b"]);
    let _tx = late.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_flush_closes_the_batch_at_once() {
    let (tx, mut inbox) = mpsc::channel(16);
    tx.send(record("a")).await.unwrap();
    let (done, _wait) = oneshot::channel();
    tx.send(Message::Flush(done)).await.unwrap();
    let started = Instant::now();
    let (mut batch, mut flushes) = (Vec::new(), Vec::new());
    assert!(gather(&mut inbox, &mut batch, &mut flushes).await);
    assert_eq!(ids(&batch), ["a"]);
    assert_eq!(flushes.len(), 1);
    assert_eq!(started.elapsed(), Duration::ZERO, "a flush does not wait");
}

#[tokio::test(start_paused = true)]
async fn a_full_batch_does_not_wait_and_leaves_the_rest_queued() {
    let (tx, mut inbox) = mpsc::channel(MAX_BATCH + 1);
    for i in 0..=MAX_BATCH {
        tx.send(record(&format!("r{i}"))).await.unwrap();
    }
    let started = Instant::now();
    let (mut batch, mut flushes) = (Vec::new(), Vec::new());
    assert!(gather(&mut inbox, &mut batch, &mut flushes).await);
    assert_eq!(batch.len(), MAX_BATCH);
    assert_eq!(
        started.elapsed(),
        Duration::ZERO,
        "a full batch does not wait"
    );
    assert!(
        inbox.try_recv().is_ok(),
        "the record past the batch stays queued"
    );
}

#[tokio::test(start_paused = true)]
async fn the_writer_ends_when_every_sender_is_gone() {
    let (tx, mut inbox) = mpsc::channel(16);
    tx.send(record("a")).await.unwrap();
    drop(tx);
    let (mut batch, mut flushes) = (Vec::new(), Vec::new());
    assert!(
        gather(&mut inbox, &mut batch, &mut flushes).await,
        "what was queued is written"
    );
    assert_eq!(ids(&batch), ["a"]);
    batch.clear();
    assert!(!gather(&mut inbox, &mut batch, &mut flushes).await);
    assert!(batch.is_empty());
}

#[test]
fn a_full_spool_drops_the_oldest_records_and_counts_them() {
    let metrics = UsageMetrics::default();
    let health = Arc::new(WriteHealth::default());
    let mut spool = Spool::with_capacity(3, metrics.clone(), health.clone());
    let mut batch: Vec<ExecutionRecord> = ["a", "b"].map(execution).into();
    spool.push(&mut batch);
    assert!(batch.is_empty(), "the batch moved into the spool");
    assert_eq!((metrics.spooled.get(), metrics.lost.get()), (2, 0));
    let mut more: Vec<ExecutionRecord> = ["c", "d", "e"].map(execution).into();
    spool.push(&mut more);
    assert_eq!(metrics.spooled.get(), 3);
    assert_eq!(metrics.lost.get(), 2, "a and b, the oldest, were dropped");
    assert_eq!(health.spooled(), 3);
    assert!(
        health.writable(),
        "only a failed write makes the store unwritable"
    );
}
