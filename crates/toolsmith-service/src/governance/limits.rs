//! Rate limits and the concurrency guard: the middleware that refuses a call, with a
//! `rate_limited` result and a retry-after, before it costs anything.
//!
//! - Token buckets per user, per tool (per owner and name) and per session (the call's
//!   conversation id), each with its own rate and burst, each off unless configured. The three
//!   buckets of a call are checked and spent together under one lock: a call refused by one
//!   bucket spends nothing from the others (which `governor`'s independent keyed limiters
//!   cannot promise, hence the few lines of bucket arithmetic here).
//! - Concurrency: a global cap on executions running at once and a per-user cap. A call past a
//!   cap is refused at once (never queued without bound); its permit is held in the
//!   [`Call`] and released when the call ends, however it ends.
//!
//! Nested calls (`callTool` from tool code) never take a permit of their caller's level, so a
//! tool that calls tools can never deadlock against its own cap: each level of `callTool`
//! (depth 1, 2, … up to the pipeline's `max_call_depth`) has caps of its own, of the same
//! sizes as the outer ones (`max_concurrent`, and per user `max_concurrent_per_user`), taken
//! at once or refused like an outer call (issue 31: a fan-out of 256 `callTool`s ran 256
//! command sandboxes under `max_concurrent = 1`). A chain of calls, one level each, always
//! fits (its caller holds a permit of another level); siblings running at once at one level
//! share that level's cap; so one user runs at most `(1 + max_call_depth) ×
//! max_concurrent_per_user` executions at once. These per-level caps are this instance's own
//! (a nested call runs in its caller's process), on PostgreSQL too. Nested calls also spend
//! rate tokens. Only executions pass here: control-plane reads never wait for a permit.
//!
//! Counters are in memory on a store one process has to itself (SQLite). On a store several
//! instances share (PostgreSQL) the rate buckets and the per-user cap live in the database
//! ([`shared`]), so they hold across every instance; the global cap (`max_concurrent`)
//! protects one instance's CPU and stays per instance, and is taken first there, so a call
//! this instance cannot run spends nothing of the user's shared budget.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Map, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use toolsmith_core::{
    Call, ErrorKind, Held, LimitRequest, Middleware, RateBucketSpend, SlotRequest, ToolOrigin,
    ToolResult,
};
use toolsmith_store::SharedLimits;

use shared::{SLOT_TTL, SharedCounters, SlotLease, Taken};

mod shared;

/// Idle buckets are forgotten once this many are kept (a full bucket carries no state).
const MAX_BUCKETS: usize = 100_000;

/// The per-user semaphore map is swept of idle users (no call in flight) when it reaches
/// this many entries, or twice what the last sweep kept, whichever is larger: memory follows
/// the users with calls in flight, not every user ever seen, at an amortised O(1) per call.
const USER_SLOTS_SWEEP_AT: usize = 256;

/// A token bucket: `per_minute` calls refill evenly over a minute, up to `burst` at once
/// (`burst` 0 means `per_minute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub per_minute: u32,
    pub burst: u32,
}

impl Rate {
    fn capacity(self) -> f64 {
        f64::from(if self.burst == 0 {
            self.per_minute
        } else {
            self.burst
        })
    }

    fn refill_per_sec(self) -> f64 {
        f64::from(self.per_minute) / 60.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Scope {
    User,
    Tool,
    Session,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Tool => "tool",
            Scope::Session => "session",
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    /// The bucket as it is at `now`.
    fn refilled(self, rate: Rate, now: Instant) -> Bucket {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        Bucket {
            tokens: (self.tokens + elapsed * rate.refill_per_sec()).min(rate.capacity()),
            updated: now,
        }
    }

    /// How long until one token is there.
    fn wait(self, rate: Rate) -> Duration {
        let missing = (1.0 - self.tokens).max(0.0);
        let per_sec = rate.refill_per_sec();
        if per_sec <= 0.0 {
            return Duration::from_secs(3600);
        }
        Duration::from_secs_f64((missing / per_sec).min(3600.0))
    }
}

/// Every limit; `None` or 0 means no limit of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LimitsSettings {
    pub per_user: Option<Rate>,
    pub per_tool: Option<Rate>,
    pub per_session: Option<Rate>,
    /// Executions running at once, all users together.
    pub max_concurrent: usize,
    /// Executions running at once for one user.
    pub max_concurrent_per_user: usize,
}

/// Counts of refusals, by limit, for metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LimitRejections {
    pub rate: u64,
    pub concurrency: u64,
}

/// The middleware enforcing [`LimitsSettings`].
pub struct Limiter {
    config: LimitsSettings,
    buckets: Mutex<HashMap<(Scope, String), Bucket>>,
    global: Option<Arc<Semaphore>>,
    /// The global cap of each level of nested calls (depth ≥ 1), made on first use.
    nested_global: Mutex<HashMap<u32, Arc<Semaphore>>>,
    user_slots: Mutex<UserSlots>,
    rejections: Mutex<LimitRejections>,
    /// The database's counters, when instances share them and a shared limit is configured.
    shared: Option<Arc<SharedCounters>>,
}

/// The buckets of one call: scope, rate (if configured) and key (if the call has one).
type BucketKeys = [(Scope, Option<Rate>, Option<String>); 3];

/// One semaphore per user with calls in flight (and, until the next sweep, recently).
struct UserSlots {
    by_user: HashMap<String, Arc<Semaphore>>,
    sweep_at: usize,
}

impl UserSlots {
    /// The semaphore of `user`, created with `permits`; sweeps idle users first when due.
    fn of(&mut self, user: &str, permits: usize) -> Arc<Semaphore> {
        if self.by_user.len() >= self.sweep_at {
            // A permit holds a clone of its semaphore, and a caller clones it here, under
            // this lock, before acquiring: one reference means no call holds or awaits it.
            self.by_user
                .retain(|_, semaphore| Arc::strong_count(semaphore) > 1);
            self.sweep_at = (self.by_user.len() * 2).max(USER_SLOTS_SWEEP_AT);
        }
        Arc::clone(
            self.by_user
                .entry(user.to_owned())
                .or_insert_with(|| Arc::new(Semaphore::new(permits))),
        )
    }
}

impl Limiter {
    pub fn new(config: LimitsSettings) -> Limiter {
        Limiter {
            config,
            buckets: Mutex::new(HashMap::new()),
            global: (config.max_concurrent > 0)
                .then(|| Arc::new(Semaphore::new(config.max_concurrent))),
            nested_global: Mutex::new(HashMap::new()),
            user_slots: Mutex::new(UserSlots {
                by_user: HashMap::new(),
                sweep_at: USER_SLOTS_SWEEP_AT,
            }),
            rejections: Mutex::new(LimitRejections::default()),
            shared: None,
        }
    }

    /// Keeps the rate buckets and the per-user cap in `shared` (the counters every instance on
    /// one database shares) when there is one and any of them is configured.
    #[must_use]
    pub fn with_shared(mut self, shared: Option<Arc<dyn SharedLimits>>) -> Limiter {
        let config = self.config;
        let rated = [config.per_user, config.per_tool, config.per_session]
            .iter()
            .any(|rate| rate.is_some_and(|rate| rate.per_minute > 0));
        if rated || config.max_concurrent_per_user > 0 {
            self.shared = shared.map(SharedCounters::new);
        }
        self
    }

    /// Refusals so far.
    pub fn rejections(&self) -> LimitRejections {
        *self
            .rejections
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Spends one token from each configured bucket of the call, or from none of them.
    fn spend(&self, keys: &BucketKeys) -> Result<(), ToolResult> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let mut refilled = Vec::with_capacity(keys.len());
        let mut refused: Option<(Scope, Duration)> = None;
        for (scope, rate, key) in keys {
            let (Some(rate), Some(key)) = (rate, key) else {
                continue;
            };
            if rate.per_minute == 0 {
                continue;
            }
            let bucket = buckets
                .get(&(*scope, key.clone()))
                .copied()
                .unwrap_or(Bucket {
                    tokens: rate.capacity(),
                    updated: now,
                })
                .refilled(*rate, now);
            if bucket.tokens < 1.0 {
                let wait = bucket.wait(*rate);
                if refused.is_none_or(|(_, longest)| wait > longest) {
                    refused = Some((*scope, wait));
                }
            }
            refilled.push(((*scope, key.clone()), bucket));
        }
        if let Some((scope, wait)) = refused {
            drop(buckets);
            self.count(|r| r.rate += 1);
            return Err(refusal(
                format!("rate limit per {} reached", scope.as_str()),
                scope.as_str(),
                wait,
            ));
        }
        if buckets.len() + refilled.len() > MAX_BUCKETS {
            let config = self.config;
            buckets.retain(|(scope, _), bucket| {
                let rate = match scope {
                    Scope::User => config.per_user,
                    Scope::Tool => config.per_tool,
                    Scope::Session => config.per_session,
                };
                rate.is_some_and(|rate| bucket.refilled(rate, now).tokens < rate.capacity())
            });
        }
        for (key, mut bucket) in refilled {
            bucket.tokens -= 1.0;
            buckets.insert(key, bucket);
        }
        Ok(())
    }

    fn count(&self, f: impl FnOnce(&mut LimitRejections)) {
        f(&mut self
            .rejections
            .lock()
            .unwrap_or_else(PoisonError::into_inner));
    }

    fn acquire(&self, call: &mut Call) -> Result<(), ToolResult> {
        self.acquire_global(call)?;
        self.acquire_user(call)
    }

    fn acquire_global(&self, call: &mut Call) -> Result<(), ToolResult> {
        if let Some(global) = &self.global {
            let permit = Arc::clone(global).try_acquire_owned().map_err(|_| {
                self.concurrency_refused("too many executions are running on this server")
            })?;
            call.held.push(Held::new(permit));
        }
        Ok(())
    }

    fn acquire_user(&self, call: &mut Call) -> Result<(), ToolResult> {
        if self.config.max_concurrent_per_user > 0 {
            let slots = self
                .user_slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .of(&call.ctx.user_id, self.config.max_concurrent_per_user);
            let permit: OwnedSemaphorePermit = slots
                .try_acquire_owned()
                .map_err(|_| self.concurrency_refused("too many of your executions are running"))?;
            call.held.push(Held::new(permit));
        }
        Ok(())
    }

    /// The caps of a nested call's level (`call.ctx.depth` ≥ 1): this instance's global cap of
    /// that level and the user's, taken at once or refused. Never a permit of another level,
    /// so a caller holding its own permit never waits for its callees.
    fn acquire_nested(&self, call: &mut Call) -> Result<(), ToolResult> {
        let depth = call.ctx.depth;
        if self.config.max_concurrent > 0 {
            let level = Arc::clone(
                self.nested_global
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .entry(depth)
                    .or_insert_with(|| Arc::new(Semaphore::new(self.config.max_concurrent))),
            );
            let permit = level.try_acquire_owned().map_err(|_| {
                self.concurrency_refused(&format!(
                    "too many tool calls made by tools are running on this server at depth \
                     {depth} (at most {} per level of callTool); make them one after another",
                    self.config.max_concurrent
                ))
            })?;
            call.held.push(Held::new(permit));
        }
        if self.config.max_concurrent_per_user > 0 {
            // A NUL never appears in a user id, so a level's key is never a user's.
            let key = format!("{}\0{depth}", call.ctx.user_id);
            let slots = self
                .user_slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .of(&key, self.config.max_concurrent_per_user);
            let permit = slots.try_acquire_owned().map_err(|_| {
                self.concurrency_refused(&format!(
                    "too many of your tool calls made by tools are running at depth {depth} (at \
                     most {} per level of callTool); make them one after another",
                    self.config.max_concurrent_per_user
                ))
            })?;
            call.held.push(Held::new(permit));
        }
        Ok(())
    }

    /// How many users have a semaphore now.
    #[cfg(test)]
    fn user_slot_count(&self) -> usize {
        self.user_slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_user
            .len()
    }

    /// The call's limits from the shared counters: `None` when the database did not answer
    /// (the caller falls back to the in-memory counters; the global permit is taken already).
    async fn shared_before(
        &self,
        shared: &Arc<SharedCounters>,
        call: &mut Call,
        keys: &BucketKeys,
    ) -> Option<Result<(), ToolResult>> {
        let outer = call.ctx.depth == 0;
        if outer && let Err(refused) = self.acquire_global(call) {
            return Some(Err(refused));
        }
        let mut scopes = Vec::with_capacity(keys.len());
        let mut request = LimitRequest {
            buckets: Vec::with_capacity(keys.len()),
            slot: None,
        };
        for (scope, rate, key) in keys {
            let (Some(rate), Some(key)) = (rate, key) else {
                continue;
            };
            if rate.per_minute == 0 {
                continue;
            }
            scopes.push(*scope);
            request.buckets.push(RateBucketSpend {
                scope: scope.as_str().to_owned(),
                key: key.clone(),
                capacity: rate.capacity(),
                per_second: rate.refill_per_sec(),
            });
        }
        if outer && self.config.max_concurrent_per_user > 0 {
            request.slot = Some(SlotRequest {
                user: call.ctx.user_id.clone(),
                cap: u32::try_from(self.config.max_concurrent_per_user).unwrap_or(u32::MAX),
                ttl: SLOT_TTL,
            });
        }
        if request.buckets.is_empty() && request.slot.is_none() {
            return Some(Ok(()));
        }
        Some(match shared.take(&request).await {
            Taken::Allowed(lease) => {
                if let Some(lease) = lease {
                    call.held.push(Held::new(lease));
                }
                Ok(())
            }
            Taken::RateLimited { index, wait } => {
                let scope = scopes.get(index).copied().unwrap_or(Scope::User);
                self.count(|r| r.rate += 1);
                Err(refusal(
                    format!("rate limit per {} reached", scope.as_str()),
                    scope.as_str(),
                    wait,
                ))
            }
            Taken::ConcurrencyLimited => {
                Err(self.concurrency_refused("too many of your executions are running"))
            }
            Taken::Unavailable => return None,
        })
    }

    fn concurrency_refused(&self, message: &str) -> ToolResult {
        self.count(|r| r.concurrency += 1);
        refusal(message.to_owned(), "concurrency", Duration::from_secs(1))
    }
}

fn refusal(message: String, limit: &str, wait: Duration) -> ToolResult {
    let retry_after = wait.as_secs_f64().ceil().max(1.0) as u64;
    let mut details = Map::new();
    details.insert("limit".to_owned(), json!(limit));
    details.insert("retryAfterSeconds".to_owned(), json!(retry_after));
    ToolResult::error_with(
        ErrorKind::RateLimited,
        format!("{message}; retry in {retry_after} s"),
        details,
    )
}

#[async_trait]
impl Middleware for Limiter {
    fn name(&self) -> &'static str {
        "limits"
    }

    async fn before(&self, call: &mut Call) -> Result<(), ToolResult> {
        let tool_key = match &call.tool.origin {
            ToolOrigin::Custom { owner, .. } => format!("{owner}/{}", call.tool.name()),
            ToolOrigin::BuiltIn { .. } | ToolOrigin::Mcp { .. } => call.tool.name().to_owned(),
        };
        let keys: BucketKeys = [
            (
                Scope::User,
                self.config.per_user,
                Some(call.ctx.user_id.clone()),
            ),
            (Scope::Tool, self.config.per_tool, Some(tool_key)),
            (
                Scope::Session,
                self.config.per_session,
                call.ctx.conversation_id.clone(),
            ),
        ];
        if let Some(shared) = &self.shared {
            if let Some(decided) = self.shared_before(shared, call, &keys).await {
                decided?;
                if call.ctx.depth > 0 {
                    self.acquire_nested(call)?;
                }
                return Ok(());
            }
            // The database did not answer: this instance's own counters decide.
            self.spend(&keys)?;
            if call.ctx.depth == 0 {
                self.acquire_user(call)?;
            } else {
                self.acquire_nested(call)?;
            }
            return Ok(());
        }
        self.spend(&keys)?;
        if call.ctx.depth == 0 {
            self.acquire(call)
        } else {
            self.acquire_nested(call)
        }
    }

    async fn after(&self, call: &Call, _result: &mut ToolResult) {
        if self.shared.is_none() {
            return;
        }
        for held in &call.held {
            if let Some(lease) = held.get::<SlotLease>() {
                lease.release().await;
            }
        }
    }
}

#[cfg(test)]
mod tests;
