//! [`Scheduler`]: runs due tasks. Each [`Scheduler::tick`] asks the store for the tasks of
//! every owner whose next run (`at`) has come, and *claims* each one before running it: it
//! moves the task's `at` to its following run only if `at` is still the time it read
//! ([`Records::claim`], a compare-and-set in the database). Of several processes on one
//! store that see the same due task, exactly one claim succeeds, so each due time runs once.
//!
//! A run more than [`GRACE`] late was missed (the server was down): the task's `missedRuns`
//! decides — `skip` records a `skipped` run, `run_once` runs it once now; either way the next
//! run is the first one after now, so a long downtime never causes a burst of runs.
//! While the `scheduler` group is off no task runs: switching it off stops the automation.
//! The clock is a parameter ([`Clock`]), so tests drive time themselves.
//!
//! A claimed run is never lost without a trace. Before claiming, the scheduler writes the
//! run's *lease* (a record of the `schedule_lease` collection, [`LEASES`]: the run's id, its
//! task and due time, `at` the lease's end, [`LEASE`] ahead); while the run goes on, its
//! process moves the lease's end on every [`RENEW_EVERY`]; the run's history entry takes the
//! run id the lease names, and the lease is deleted once that entry is written. A lease whose end has
//! passed belongs to a run whose process stopped (a crash, `kill -9`, a power cut) or could not
//! record it: every tick of every instance looks for such leases first, takes each with a
//! compare-and-set (so one instance records it) and writes the run into the history as `lost`,
//! unless its entry exists already. A lost run is not run again (it may have done part of its
//! work); the task goes on at its next time. A lease whose task still waits for the same due
//! time was never claimed (its process stopped between the two writes) and is dropped.

use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Duration as TimeDelta, Utc};
use serde_json::{Value, json};
use toolsmith_core::data::{DataRecord, PutOutcome};

use super::runs::{Trigger, record_lost, record_skipped, run_task_as};
use super::tasks::when_of;
use super::{COLLECTION, Deps, TaskCaller};
use crate::data::{Records, new_id};
use crate::utilities::Fail;

/// How late a run may start and still count as on time.
pub const GRACE: chrono::Duration = chrono::Duration::seconds(60);
/// The record store's collection of the leases of runs under way.
pub const LEASES: &str = "schedule_lease";
/// How long a run's lease lasts before it is renewed: a run whose process stopped is recorded
/// as lost within this time (plus a tick).
pub const LEASE: TimeDelta = TimeDelta::seconds(120);
/// How often a run under way moves its lease's end on (by as much).
pub const RENEW_EVERY: TimeDelta = TimeDelta::seconds(30);
/// Most due tasks claimed in one tick (the rest wait for the next).
const BATCH: u32 = 100;

/// Where the scheduler reads the time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Runs due tasks (see the module doc).
#[derive(Clone)]
pub struct Scheduler {
    deps: Deps,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scheduler")
    }
}

impl Scheduler {
    #[must_use]
    pub fn new(records: Arc<dyn Records>, caller: Arc<dyn TaskCaller>) -> Scheduler {
        Scheduler {
            deps: Deps { records, caller },
        }
    }

    /// Claims every task due at `now` and starts its run (or records its skip); the runs
    /// started, to wait for if the caller wants to.
    pub async fn tick(&self, now: DateTime<Utc>) -> Result<Vec<tokio::task::JoinHandle<()>>, Fail> {
        if !self.deps.caller.scheduling_enabled() {
            return Ok(Vec::new());
        }
        self.sweep(now).await?;
        let due = self.deps.records.due(COLLECTION, now, BATCH).await?;
        let mut started = Vec::new();
        for task in due {
            let Some(at) = task.at else { continue };
            let mut claimed = task.clone();
            claimed.updated_at = now;
            let when = match when_of(&task) {
                Ok(when) => Some(when),
                Err(why) => {
                    // Stored before a rule changed, or edited outside the tools: pause it and
                    // say why, rather than retry it every second.
                    if let Value::Object(doc) = &mut claimed.document {
                        doc.insert("enabled".to_owned(), json!(false));
                        doc.insert("lastStatus".to_owned(), json!(format!("paused: {why}")));
                    }
                    None
                }
            };
            claimed.at = when.as_ref().and_then(|w| w.next_after(now));
            claimed.kind = Some(
                match (&when, claimed.at) {
                    (None, _) => "paused",
                    (Some(_), Some(_)) => "active",
                    (Some(_), None) => "finished",
                }
                .to_owned(),
            );
            let late = now - at > GRACE;
            let skip = late
                && claimed.document.get("missedRuns").and_then(Value::as_str) != Some("run_once");
            let trigger = if late {
                Trigger::Missed
            } else {
                Trigger::Schedule
            };
            // A run gets its lease before its claim, so no claimed run is ever without one.
            let lease = match (&when, skip) {
                (Some(_), false) => Some(self.lease(&claimed, trigger, at, now).await?),
                _ => None,
            };
            if !self.deps.records.claim(claimed.clone(), at).await? {
                // Another process (or a change by its owner) got there first.
                if let Some(lease) = &lease {
                    self.deps
                        .records
                        .delete(&lease.scope(), LEASES, &lease.id)
                        .await?;
                }
                continue;
            }
            if when.is_none() {
                continue;
            }
            let deps = self.deps.clone();
            started.push(tokio::spawn(async move {
                let outcome = match lease {
                    None => record_skipped(&deps, &claimed, at, now).await,
                    Some(lease) => run_leased(&deps, &claimed, trigger, at, now, lease).await,
                };
                if let Err(e) = outcome {
                    tracing::warn!(task = %claimed.id, error = %e.message(), "a scheduled run could not be recorded");
                }
            }));
        }
        Ok(started)
    }

    /// Writes the lease of `task`'s run due at `at`, starting `now`.
    async fn lease(
        &self,
        task: &DataRecord,
        trigger: Trigger,
        at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<DataRecord, Fail> {
        let mut lease = DataRecord::new(
            &task.scope(),
            LEASES,
            new_id("lease"),
            json!({
                "runId": new_id("run"),
                "taskId": task.id,
                "taskName": task.document.get("name"),
                "tool": task.document.get("tool"),
                "trigger": trigger.as_str(),
                "scheduledFor": at,
                "startedAt": now,
            }),
            String::new(),
        );
        lease.category = Some(task.id.clone());
        lease.kind = Some("running".to_owned());
        lease.at = Some(now + LEASE);
        lease.created_at = now;
        lease.updated_at = now;
        match self.deps.records.put(lease).await? {
            PutOutcome::Inserted(stored) | PutOutcome::Duplicate(stored) => Ok(stored),
        }
    }

    /// Records as `lost` every run whose lease ended by `now` (see the module doc).
    async fn sweep(&self, now: DateTime<Utc>) -> Result<(), Fail> {
        let records = &self.deps.records;
        for lease in records.due(LEASES, now, BATCH).await? {
            let Some(end) = lease.at else { continue };
            let mut taken = lease.clone();
            taken.at = None;
            taken.kind = Some("lost".to_owned());
            taken.updated_at = now;
            if !records.claim(taken, end).await? {
                continue; // Renewed meanwhile, or taken by another instance.
            }
            let scope = lease.scope();
            let task_id = lease.document.get("taskId").and_then(Value::as_str);
            let due_for = lease
                .document
                .get("scheduledFor")
                .and_then(Value::as_str)
                .and_then(|s| s.parse::<DateTime<Utc>>().ok());
            let task = match task_id {
                Some(id) => records.get(&scope, COLLECTION, id).await?,
                None => None,
            };
            let never_claimed = task
                .as_ref()
                .is_some_and(|t| t.at.is_some() && t.at == due_for);
            let run_id = lease.document.get("runId").and_then(Value::as_str);
            let recorded = match run_id {
                Some(run) => records.get(&scope, super::RUNS, run).await?.is_some(),
                None => false,
            };
            if task.is_some() && !never_claimed && !recorded {
                record_lost(&self.deps, &lease, now).await?;
                tracing::warn!(
                    task = task_id.unwrap_or_default(),
                    run = run_id.unwrap_or_default(),
                    "a scheduled run never finished (its server stopped); recorded as lost"
                );
            }
            records.delete(&scope, LEASES, &lease.id).await?;
        }
        Ok(())
    }

    /// Ticks every `every` by `clock` until the scheduler is dropped.
    pub fn spawn(
        self: &Arc<Self>,
        clock: Arc<dyn Clock>,
        every: Duration,
    ) -> tokio::task::JoinHandle<()> {
        let weak: Weak<Scheduler> = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(scheduler) = weak.upgrade() else {
                    return;
                };
                if let Err(e) = scheduler.tick(clock.now()).await {
                    tracing::warn!(error = %e.message(), "the scheduler could not read due tasks");
                }
            }
        })
    }
}

/// Runs `task` under `lease`, moving the lease's end on every [`RENEW_EVERY`] while the run
/// goes on, and deletes the lease once the run is recorded.
async fn run_leased(
    deps: &Deps,
    task: &DataRecord,
    trigger: Trigger,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
    lease: DataRecord,
) -> Result<(), Fail> {
    let run_id = lease
        .document
        .get("runId")
        .and_then(Value::as_str)
        .map_or_else(|| new_id("run"), str::to_owned);
    let run = run_task_as(deps, task, trigger, Some(at), now, run_id);
    tokio::pin!(run);
    let every = RENEW_EVERY.to_std().unwrap_or(Duration::from_secs(30));
    let mut renew = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut current = lease.clone();
    let outcome = loop {
        tokio::select! {
            outcome = &mut run => break outcome,
            _ = renew.tick() => {
                let Some(end) = current.at else { continue };
                let mut renewed = current.clone();
                renewed.at = Some(end + RENEW_EVERY);
                match deps.records.claim(renewed.clone(), end).await {
                    Ok(true) => current = renewed,
                    Ok(false) => {}
                    Err(e) => tracing::warn!(run = %lease.id, error = %e, "a scheduled run's lease could not be renewed"),
                }
            }
        }
    };
    outcome?;
    deps.records
        .delete(&lease.scope(), LEASES, &lease.id)
        .await?;
    Ok(())
}
