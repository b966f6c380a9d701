//! Run leases (issue 37): a run not ended is held by the instance that runs it
//! (`agent_runs.instance`) until its lease runs out (`agent_runs.lease_until`). The runner
//! renews the lease every third of `agent_run_lease` while it runs (`runner.rs`); every
//! instance looks for runs whose lease ran out every third of it too, and fails them with an
//! error naming the lost instance, so a run whose process died (or lost the store) does not
//! stay `running` forever, holding its places under `maxConcurrentRuns` and
//! `agent_max_running`. The end is conditional on the lease still being out, so a run its
//! instance renewed meanwhile goes on; a runner that finds its run ended elsewhere stops.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::json;
use toolsmith_core::agent::{AgentRunRecord, AgentRunStatus, AgentRunStep};
use toolsmith_core::agent_session::{SessionKind, SessionRecord, SessionStatus};

use crate::{ServiceError, ToolService};

/// How long a lease lasts unless the operator says otherwise.
pub(crate) const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The end of a lease taken or renewed at `now`.
pub(crate) fn until(now: DateTime<Utc>, lease: Duration) -> DateTime<Utc> {
    let lease = chrono::Duration::from_std(lease).unwrap_or(chrono::Duration::seconds(30));
    now.checked_add_signed(lease).unwrap_or(now)
}

/// How often a lease is renewed, and lapsed ones looked for: a third of the lease.
pub(crate) fn every(lease: Duration) -> Duration {
    (lease / 3).max(Duration::from_millis(10))
}

/// Why a run whose lease ran out failed: its instance, and what to do.
fn lapsed_error(run: &AgentRunRecord) -> String {
    let since = run
        .lease_until
        .map_or_else(|| "before".to_owned(), |t| format!("at {}", t.to_rfc3339()));
    format!(
        "the instance running this run ({}) stopped renewing its lease {since} — it stopped, \
         or lost the database — so no instance runs it any more; start the run again (its \
         steps so far are kept)",
        run.instance
    )
}

impl ToolService {
    /// Fails the runs of every owner whose lease ran out (their instance stopped renewing
    /// it); how many.
    pub(crate) async fn end_lapsed_agent_runs(&self) -> Result<usize, ServiceError> {
        let now = Utc::now();
        let mut ended = 0;
        for mut run in self.store.lapsed_agent_runs(now).await? {
            let message = lapsed_error(&run);
            run.status = AgentRunStatus::Failed;
            run.error = Some(message.clone());
            run.updated_at = now;
            // The end and its step in one write, so a reader who sees the run failed finds
            // the step naming the lost instance.
            let seq = self
                .store
                .agent_run_steps(&run.id)
                .await?
                .last()
                .map_or(0, |step| step.seq + 1);
            let step = AgentRunStep {
                run_id: run.id.clone(),
                seq,
                kind: "error".to_owned(),
                detail: json!({"message": message, "lostInstance": run.instance}),
                at: now,
            };
            match self.store.end_lapsed_agent_run(&run, &step, now).await {
                Ok(true) => {}
                // Renewed or ended meanwhile.
                Ok(false) => continue,
                // Say so, and go on with the others (the next sweep tries again).
                Err(e) => {
                    tracing::warn!(run = %run.id, "failing an agent run whose lease ran out failed: {e}");
                    continue;
                }
            }
            ended += 1;
            tracing::warn!(run = %run.id, instance = %run.instance, "an agent run's lease ran out: failed");
            self.telemetry.agents.run_finished(run.status.as_str());
            self.telemetry.agents.step("error");
            self.end_sessions_of_lapsed_run(&run, &message).await;
        }
        Ok(ended)
    }

    /// The session or subagent `run` answered for ends as its run did (a conversation idle
    /// again, a subagent failed, both with the error), so a subagent of a lost instance no
    /// longer counts as running (MaxConcurrent, MaxChildrenPerAgent) nor a session as busy.
    /// Found among the owner's running sessions, however many newer ones the owner has.
    async fn end_sessions_of_lapsed_run(&self, run: &AgentRunRecord, message: &str) {
        let sessions = match self.store.running_sessions(&run.owner).await {
            Ok(sessions) => sessions,
            Err(e) => {
                tracing::warn!(run = %run.id, "reading the sessions of a lapsed run failed: {e}");
                return;
            }
        };
        let answered = |s: &SessionRecord| {
            s.status == SessionStatus::Running && s.last_run.as_deref() == Some(run.id.as_str())
        };
        for mut session in sessions.into_iter().filter(answered) {
            session.status = match session.kind {
                SessionKind::Session => SessionStatus::Idle,
                SessionKind::Subagent => SessionStatus::Failed,
            };
            session.error = Some(message.to_owned());
            session.updated_at = Utc::now();
            if let Err(e) = self.store.update_session(&session).await {
                tracing::warn!(session = %session.id, "recording a session's end failed: {e}");
            }
        }
    }
}

/// Starts this instance's look for runs whose lease ran out, every third of the lease, until
/// the service is dropped. Not in read-only mode (it writes).
pub(crate) fn sweep(service: &Arc<ToolService>) {
    if service.config.read_only {
        return;
    }
    let every = every(service.config.agents.run_lease);
    let weak = Arc::downgrade(service);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(service) = weak.upgrade() else {
                return;
            };
            if let Err(e) = service.end_lapsed_agent_runs().await {
                tracing::warn!("failing agent runs whose lease ran out failed: {e}");
            }
        }
    });
}

#[cfg(test)]
mod tests;
