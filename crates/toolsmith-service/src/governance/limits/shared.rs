//! The limits several instances share on one database ([`SharedLimits`], PostgreSQL): how the
//! [`Limiter`](super::Limiter) asks the database instead of its own memory.
//!
//! - One round trip per call that has a shared limit configured: the rate buckets of the call
//!   and, for a call that is not nested, a slot of its user's concurrency cap, taken in one
//!   atomic step. A call with no shared limit configured never touches the database.
//! - A slot is a lease of [`SLOT_TTL`]: released in the limiter's `after` hook (awaited, so the
//!   caller's next call finds it free), or, when the call is dropped mid-way, by a task the
//!   lease's `Drop` spawns. While held it is renewed every [`RENEW_EVERY`] by one maintenance
//!   task per instance; a lease nobody renews (its instance died, its answer was lost) lapses,
//!   so the cap never leaks slots for longer than [`SLOT_TTL`].
//! - When the database does not answer within [`TAKE_TIMEOUT`], or fails, the call falls back
//!   to this instance's own counters (the in-memory limits) with a warning, and so do the calls
//!   of the next [`BACK_OFF`] without asking it: limits then hold per instance until the
//!   database is back, never not at all.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use toolsmith_core::{LimitOutcome, LimitRequest};
use toolsmith_store::SharedLimits;

/// How long a slot lease lasts without renewal.
pub(super) const SLOT_TTL: Duration = Duration::from_secs(15);
/// How often an instance renews the slots it holds.
const RENEW_EVERY: Duration = Duration::from_secs(5);
/// How often an instance that took anything deletes full buckets and lapsed slots.
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// How long a call waits for the database before it falls back to the in-memory limits (and
/// for a slot's release before it leaves the slot to lapse).
const TAKE_TIMEOUT: Duration = Duration::from_secs(2);
/// After the database failed a take, how long calls use the in-memory limits without asking
/// it (so a hung database costs one call the timeout, not every call).
const BACK_OFF: Duration = Duration::from_secs(5);
/// At most one warning about an unavailable database per this time.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// What the database said of one call.
pub(super) enum Taken {
    /// Allowed; the slot's lease when one was taken.
    Allowed(Option<SlotLease>),
    /// Bucket `index` of the request was empty (nothing spent); a token comes after `wait`.
    RateLimited { index: usize, wait: Duration },
    /// The user's slots are all taken (the call's tokens are spent).
    ConcurrencyLimited,
    /// No answer: use the in-memory limits.
    Unavailable,
}

/// This instance's door to the shared counters.
pub(super) struct SharedCounters {
    store: Arc<dyn SharedLimits>,
    /// The leases this instance holds (what the maintenance task renews).
    held: Mutex<HashSet<i64>>,
    /// Whether anything was taken since the last sweep.
    used: AtomicBool,
    maintenance: OnceLock<()>,
    warned: Mutex<Option<Instant>>,
    /// Until when the database is not asked (it failed a take).
    down_until: Mutex<Option<Instant>>,
}

impl SharedCounters {
    pub(super) fn new(store: Arc<dyn SharedLimits>) -> Arc<SharedCounters> {
        Arc::new(SharedCounters {
            store,
            held: Mutex::new(HashSet::new()),
            used: AtomicBool::new(false),
            maintenance: OnceLock::new(),
            warned: Mutex::new(None),
            down_until: Mutex::new(None),
        })
    }

    /// Takes what `request` asks for, in one round trip.
    pub(super) async fn take(self: &Arc<Self>, request: &LimitRequest) -> Taken {
        self.start_maintenance();
        if self
            .down_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some_and(|until| Instant::now() < until)
        {
            return Taken::Unavailable;
        }
        self.used.store(true, Ordering::Relaxed);
        let answer = tokio::time::timeout(TAKE_TIMEOUT, self.store.take_limits(request)).await;
        match answer {
            Ok(Ok(LimitOutcome::Allowed { lease })) => Taken::Allowed(lease.map(|id| {
                self.lock_held().insert(id);
                SlotLease {
                    id,
                    counters: Arc::clone(self),
                    released: AtomicBool::new(false),
                }
            })),
            Ok(Ok(LimitOutcome::RateLimited { index, wait })) => Taken::RateLimited { index, wait },
            Ok(Ok(LimitOutcome::ConcurrencyLimited)) => Taken::ConcurrencyLimited,
            Ok(Err(e)) => {
                self.failed(&e.to_string());
                Taken::Unavailable
            }
            Err(_) => {
                self.failed(&format!(
                    "no answer within {} s",
                    TAKE_TIMEOUT.as_secs_f64()
                ));
                Taken::Unavailable
            }
        }
    }

    fn lock_held(&self) -> std::sync::MutexGuard<'_, HashSet<i64>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Marks the database down for [`BACK_OFF`] and says so (at most every [`WARN_EVERY`]).
    fn failed(&self, reason: &str) {
        *self
            .down_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Instant::now() + BACK_OFF);
        self.warn(reason);
    }

    fn warn(&self, reason: &str) {
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        if warned.is_none_or(|at| at.elapsed() >= WARN_EVERY) {
            *warned = Some(Instant::now());
            tracing::warn!(
                reason,
                "the shared rate limits and concurrency caps cannot be read from the database; \
                 this instance enforces them on its own counters until it answers"
            );
        }
    }

    /// Starts the task that renews this instance's leases and sweeps stale rows (once; it
    /// ends when the limiter is dropped).
    fn start_maintenance(self: &Arc<Self>) {
        self.maintenance.get_or_init(|| {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                return;
            };
            runtime.spawn(maintain(Arc::downgrade(self)));
        });
    }
}

async fn maintain(counters: Weak<SharedCounters>) {
    let mut last_sweep = Instant::now();
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        let Some(counters) = counters.upgrade() else {
            return;
        };
        let leases: Vec<i64> = counters.lock_held().iter().copied().collect();
        if !leases.is_empty()
            && let Err(e) = counters.store.renew_slots(&leases, SLOT_TTL).await
        {
            counters.warn(&format!("renewing concurrency slots: {e}"));
        }
        if last_sweep.elapsed() >= SWEEP_EVERY && counters.used.swap(false, Ordering::Relaxed) {
            last_sweep = Instant::now();
            if let Err(e) = counters.store.sweep_limits().await {
                tracing::debug!(error = %e, "sweeping the shared limits failed; retried later");
            }
        }
    }
}

/// One slot of a user's concurrency cap, held in the database for as long as its call runs.
pub(super) struct SlotLease {
    id: i64,
    counters: Arc<SharedCounters>,
    released: AtomicBool,
}

impl SlotLease {
    /// Gives the slot back now (once; later calls and the drop do nothing).
    pub(super) async fn release(&self) {
        if self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        // No longer renewed from here on: if the delete does not get through (in time), the
        // lease lapses on its own and the answer is not held back for it.
        self.counters.lock_held().remove(&self.id);
        let released =
            tokio::time::timeout(TAKE_TIMEOUT, self.counters.store.release_slot(self.id)).await;
        if let Err(reason) = released
            .map_err(|_| "no answer in time".to_owned())
            .and_then(|done| done.map_err(|e| e.to_string()))
        {
            tracing::warn!(error = %reason, lease = self.id, "a concurrency slot was not given back; it lapses on its own");
        }
    }
}

impl Drop for SlotLease {
    /// A call dropped before its `after` hook (its caller went away): the slot is given back
    /// by a task of its own, or lapses if there is no runtime to run one.
    fn drop(&mut self) {
        if self.released.swap(true, Ordering::AcqRel) {
            return;
        }
        self.counters.lock_held().remove(&self.id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (store, id) = (Arc::clone(&self.counters.store), self.id);
            runtime.spawn(async move {
                let _ = store.release_slot(id).await;
            });
        }
    }
}
