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

use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::runs::{Trigger, record_skipped, run_task};
use super::tasks::when_of;
use super::{COLLECTION, Deps, TaskCaller};
use crate::core::Fail;
use crate::data::Records;

/// How late a run may start and still count as on time.
pub const GRACE: chrono::Duration = chrono::Duration::seconds(60);
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
            if !self.deps.records.claim(claimed.clone(), at).await? {
                continue; // Another process (or a change by its owner) got there first.
            }
            if when.is_none() {
                continue;
            }
            let late = now - at > GRACE;
            let skip = late
                && claimed.document.get("missedRuns").and_then(Value::as_str) != Some("run_once");
            let deps = self.deps.clone();
            started.push(tokio::spawn(async move {
                let outcome = if skip {
                    record_skipped(&deps, &claimed, at, now).await
                } else {
                    let trigger = if late { Trigger::Missed } else { Trigger::Schedule };
                    run_task(&deps, &claimed, trigger, Some(at), now).await.map(drop)
                };
                if let Err(e) = outcome {
                    tracing::warn!(task = %claimed.id, error = %e.message(), "a scheduled run could not be recorded");
                }
            }));
        }
        Ok(started)
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
