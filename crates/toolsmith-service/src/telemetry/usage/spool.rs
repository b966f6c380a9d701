//! The usage writer's spool: execution records the store could not take yet, kept (bounded) and
//! retried with back-off, and the accounting of what was lost.
//!
//! A write that fails because the database cannot be used right now (disk full, read-only,
//! unreachable: [`StoreError::is_unavailable`]) keeps its records here and marks the store as
//! not writable ([`WriteHealth`], which `/readyz` reads). The spool holds at most
//! [`SPOOL_CAPACITY`] records; past that the oldest are dropped and counted. Any other failure
//! (a record the store refuses as such) cannot pass by retrying: that batch is counted as lost
//! at once. Losses are counted in `/metrics` and logged with their counts: once when the
//! trouble starts, and once when writing works again.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use tokio::time::Instant;
use toolsmith_core::ExecutionRecord;
use toolsmith_store::{Store, StoreError};

use super::MAX_BATCH;

/// Records kept for a retry, at most (about 10 MB of typical records).
pub const SPOOL_CAPACITY: usize = 32_768;
/// The first wait before a retry; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// The usage writer's figures, registered in the service's metrics.
#[derive(Clone, Default)]
pub struct UsageMetrics {
    /// Records given up (spool full, or refused by the store).
    pub lost: Counter,
    /// Failed store writes of usage batches.
    pub write_failures: Counter,
    /// Records waiting in the spool for a retry.
    pub spooled: Gauge,
}

/// Whether the store took the last usage write; read by readiness.
#[derive(Debug)]
pub struct WriteHealth {
    writable: AtomicBool,
    spooled: AtomicU64,
}

impl Default for WriteHealth {
    fn default() -> Self {
        WriteHealth {
            writable: AtomicBool::new(true),
            spooled: AtomicU64::new(0),
        }
    }
}

impl WriteHealth {
    /// `false` from a failed write until a retry succeeds.
    pub fn writable(&self) -> bool {
        self.writable.load(Ordering::Relaxed)
    }

    /// Records waiting for a retry.
    pub fn spooled(&self) -> u64 {
        self.spooled.load(Ordering::Relaxed)
    }
}

/// Records waiting for the store, oldest first.
pub(super) struct Spool {
    records: VecDeque<ExecutionRecord>,
    capacity: usize,
    metrics: UsageMetrics,
    health: Arc<WriteHealth>,
    /// When the next retry is due, while the store is failing.
    retry_at: Option<Instant>,
    backoff: Duration,
    /// Since the trouble started: records lost and failed writes (for the recovery log line).
    lost_in_outage: u64,
    failures_in_outage: u64,
}

impl Spool {
    pub(super) fn new(metrics: UsageMetrics, health: Arc<WriteHealth>) -> Spool {
        Spool::with_capacity(SPOOL_CAPACITY, metrics, health)
    }

    pub(super) fn with_capacity(
        capacity: usize,
        metrics: UsageMetrics,
        health: Arc<WriteHealth>,
    ) -> Spool {
        Spool {
            records: VecDeque::new(),
            capacity,
            metrics,
            health,
            retry_at: None,
            backoff: FIRST_BACKOFF,
            lost_in_outage: 0,
            failures_in_outage: 0,
        }
    }

    /// When the writer must wake up to retry, if something waits.
    pub(super) fn retry_at(&self) -> Option<Instant> {
        self.retry_at
    }

    /// Takes a new batch in, behind what waits; drops the oldest past the capacity.
    pub(super) fn push(&mut self, batch: &mut Vec<ExecutionRecord>) {
        self.records.extend(batch.drain(..));
        let over = self.records.len().saturating_sub(self.capacity);
        if over > 0 {
            self.records.drain(..over);
            self.lose(over as u64);
        }
        self.publish();
    }

    /// Writes what waits, a batch at a time, unless a retry is not due yet. Returns when the
    /// spool is empty or a write failed.
    pub(super) async fn write(&mut self, store: &dyn Store) {
        if self.retry_at.is_some_and(|at| Instant::now() < at) {
            return;
        }
        while !self.records.is_empty() {
            let n = self.records.len().min(MAX_BATCH);
            let chunk: Vec<ExecutionRecord> = self.records.range(..n).cloned().collect();
            match store.record_executions(&chunk).await {
                Ok(()) => {
                    self.records.drain(..n);
                }
                Err(e) if e.is_unavailable() => {
                    self.failed(&e);
                    self.publish();
                    return;
                }
                Err(e) => {
                    self.metrics.write_failures.inc();
                    self.records.drain(..n);
                    self.lose(n as u64);
                    tracing::error!(
                        executions = n,
                        error = %e,
                        "the store refused these usage records; they are lost"
                    );
                }
            }
        }
        self.recovered();
        self.publish();
    }

    fn failed(&mut self, e: &StoreError) {
        self.metrics.write_failures.inc();
        self.failures_in_outage += 1;
        if self.retry_at.is_none() {
            tracing::error!(
                spooled = self.records.len(),
                error = %e,
                "cannot record tool usage; keeping the records and retrying"
            );
            self.health.writable.store(false, Ordering::Relaxed);
        }
        self.retry_at = Some(Instant::now() + self.backoff);
        self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
    }

    fn recovered(&mut self) {
        if self.retry_at.take().is_some() {
            tracing::warn!(
                failed_writes = self.failures_in_outage,
                lost = self.lost_in_outage,
                "tool usage is recorded again"
            );
        }
        self.health.writable.store(true, Ordering::Relaxed);
        self.backoff = FIRST_BACKOFF;
        self.lost_in_outage = 0;
        self.failures_in_outage = 0;
    }

    fn lose(&mut self, n: u64) {
        if self.lost_in_outage == 0 {
            tracing::error!(
                lost = n,
                capacity = self.capacity,
                "usage records dropped: the spool is full or the store refused them"
            );
        }
        self.lost_in_outage += n;
        self.metrics.lost.inc_by(n);
    }

    /// The end of the writer: what could not be written is lost (logged with its count).
    pub(super) fn abandon(&mut self) {
        if !self.records.is_empty() {
            let n = self.records.len() as u64;
            tracing::error!(
                lost = n,
                "usage records still waiting for the store when the service stopped; they are lost"
            );
            self.metrics.lost.inc_by(n);
            self.records.clear();
            self.publish();
        }
    }

    fn publish(&self) {
        let n = self.records.len();
        self.metrics
            .spooled
            .set(i64::try_from(n).unwrap_or(i64::MAX));
        self.health.spooled.store(n as u64, Ordering::Relaxed);
    }
}
