//! Tool tasks: a tool call that returns at once and runs on (MCP's tasks, REST's asynchronous
//! execute), its status and result kept in the store (`tool_tasks`) for a bounded time, so any
//! instance on the same store can answer for it.
//!
//! - [`ToolService::start_task`] checks that the caller may call the tool, stores the task
//!   under the per-user cap of running tasks (`task_max_running`, counted by the store in the
//!   insert's transaction, so several instances hold one cap), and runs the call on through
//!   the one pipeline ([`ToolService::execute`]) with a cancellation token of its own.
//! - When the call ends its result is stored (a result larger than `task_max_result_bytes` is
//!   not kept: the task fails and says so); a task already cancelled stays cancelled.
//! - [`ToolService::cancel_task`] cancels through the store (so every instance sees it) and
//!   through the local token; an instance learns that another cancelled a task it runs by
//!   asking the store about its running tasks every second ([`TaskRunner::watch`]).
//! - [`ToolService::stop_tool_tasks`] (at shutdown) fails this instance's running tasks with a
//!   message saying why, then stops their runs: nothing resumes a task elsewhere.
//! - Expired tasks are invisible at once and deleted by a sweep every minute.
//!
//! A task is its caller's alone: every read, wait and cancel names the caller's user and
//! agent, and another's task id is not found. Not the scheduler's *scheduled tasks*.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use chrono::Utc;
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use toolsmith_core::{ErrorKind, ToolContext, ToolResult, ToolTaskRecord, ToolTaskStatus};

use crate::{ServiceError, ToolService};

/// What bounds tool tasks (`task_*` settings).
#[derive(Debug, Clone)]
pub struct TaskSettings {
    /// How long a task and its result are kept when the caller asks for no time (default 1 h).
    pub ttl: Duration,
    /// The longest time a caller may ask a task to be kept (default 24 h); longer asks get it.
    pub max_ttl: Duration,
    /// Tasks one user may have running at once, on all instances together (default 16).
    pub max_running: u32,
    /// The largest result a task keeps, as JSON bytes (default 1 MiB).
    pub max_result_bytes: usize,
}

impl Default for TaskSettings {
    fn default() -> Self {
        TaskSettings {
            ttl: Duration::from_secs(3600),
            max_ttl: Duration::from_secs(24 * 3600),
            max_running: 16,
            max_result_bytes: 1024 * 1024,
        }
    }
}

/// The shortest time a task is kept, whatever the caller asks: ten of the poll intervals the
/// faces advertise (1 s), so a client that honours the interval reads a short task's status
/// and result before it expires. (2025-11-25 lets the receiver override the ttl asked for and
/// answers the one it keeps; a ttl of one interval or less expired before the first poll.)
const MIN_TTL: Duration = Duration::from_secs(10);

/// How often an instance asks the store whether a task it runs was cancelled elsewhere.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// How often expired tasks are deleted.
const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// Why a task fails when its instance stops.
pub const STOPPED_MESSAGE: &str = "the Toolsmith instance running this task stopped before the \
     call ended (its result is lost); call the tool again";

/// The tasks this instance runs, and who is told when a task changes.
pub(crate) struct TaskRunner {
    /// This process's id in `tool_tasks.instance`.
    instance: String,
    settings: TaskSettings,
    /// The running calls of this instance, by task id.
    running: Mutex<HashMap<String, CancellationToken>>,
    /// The call ids of the calls this instance runs as tasks, while they run: a tool may
    /// answer differently when its call is a task ([`ToolService::runs_as_task`]).
    calls: Mutex<HashSet<String>>,
    /// Every status change of a task this instance saw (its own runs, cancels through it).
    changes: broadcast::Sender<ToolTaskRecord>,
    /// Set once the watcher runs.
    watching: std::sync::OnceLock<()>,
}

impl TaskRunner {
    pub(crate) fn new(settings: TaskSettings) -> TaskRunner {
        TaskRunner {
            instance: format!("inst_{}", uuid::Uuid::new_v4().simple()),
            settings,
            running: Mutex::new(HashMap::new()),
            calls: Mutex::new(HashSet::new()),
            changes: broadcast::channel(256).0,
            watching: std::sync::OnceLock::new(),
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn calls(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn announce(&self, task: &ToolTaskRecord) {
        // Nobody listening is fine.
        let _ = self.changes.send(task.clone());
    }

    /// The time a task asked to be kept `requested` (milliseconds) is kept.
    fn ttl(&self, requested: Option<u64>) -> Duration {
        requested
            .map(Duration::from_millis)
            .unwrap_or(self.settings.ttl)
            .clamp(MIN_TTL, self.settings.max_ttl.max(MIN_TTL))
    }

    /// Starts the background work of this instance's tasks once: stopping the local runs of
    /// tasks cancelled through another instance, and deleting expired tasks. It ends when the
    /// service is dropped.
    fn watch(service: &Arc<ToolService>) {
        let runner = &service.tool_tasks;
        if runner.watching.set(()).is_err() {
            return;
        }
        let weak: Weak<ToolService> = Arc::downgrade(service);
        tokio::spawn(async move {
            let mut since_sweep = Duration::ZERO;
            loop {
                tokio::time::sleep(WATCH_EVERY).await;
                let Some(service) = weak.upgrade() else {
                    return;
                };
                service.stop_tasks_ended_elsewhere().await;
                since_sweep += WATCH_EVERY;
                if since_sweep >= SWEEP_EVERY {
                    since_sweep = Duration::ZERO;
                    if let Err(e) = service.store.sweep_tool_tasks(Utc::now()).await {
                        tracing::warn!("deleting expired tool tasks failed: {e}");
                    }
                }
            }
        });
    }
}

fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no task '{id}' of yours (a task is kept only for its ttl, and only its caller sees it); \
         list yours with tasks/list or GET /api/v1/tasks"
    ))
}

impl ToolService {
    /// The settings of tool tasks.
    pub fn task_settings(&self) -> &TaskSettings {
        &self.tool_tasks.settings
    }

    /// Every change of a task's status this instance makes or sees (a run ending, a cancel
    /// through this instance), for the faces that notify callers. A receiver that falls behind
    /// misses changes (`RecvError::Lagged`); the store stays the truth.
    pub fn task_changes(&self) -> broadcast::Receiver<ToolTaskRecord> {
        self.tool_tasks.changes.subscribe()
    }

    /// Runs `name` for the caller of `ctx` as a task: stored as `working` and returned at
    /// once, while the call runs on through the pipeline. `ttl_ms` asks how long the task is
    /// kept (clamped to `task_max_ttl`; none: `task_ttl`).
    ///
    /// Errors: `NotFound` when the caller may not call `name` (as the pipeline would answer);
    /// `LimitReached` when the caller already has `task_max_running` tasks running.
    pub async fn start_task(
        self: &Arc<Self>,
        name: &str,
        args: Value,
        mut ctx: ToolContext,
        ttl_ms: Option<u64>,
    ) -> Result<ToolTaskRecord, ServiceError> {
        let visible = self
            .registry
            .get(&ctx.user_id, name)
            .is_some_and(|tool| self.may_call(&ctx, &tool));
        if !visible {
            return Err(ServiceError::NotFound(format!(
                "no tool named '{name}' you may call; list yours with tools/list or GET \
                 /api/v1/tools"
            )));
        }
        let runner = &self.tool_tasks;
        let ttl = runner.ttl(ttl_ms);
        let now = Utc::now();
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let task = ToolTaskRecord {
            id: format!("task_{}", uuid::Uuid::new_v4().simple()),
            owner: ctx.user_id.clone(),
            agent: ctx.agent_id.clone(),
            tool: name.to_owned(),
            status: ToolTaskStatus::Working,
            status_message: None,
            created_at: now,
            updated_at: now,
            ttl_ms,
            expires_at: now + chrono::Duration::milliseconds(ttl_ms),
            result: None,
            instance: runner.instance.clone(),
        };
        let max = runner.settings.max_running;
        if !self.store.insert_tool_task(&task, max).await? {
            return Err(ServiceError::LimitReached(format!(
                "you already have {max} tasks running, the most task_max_running allows; wait \
                 for one to end (tasks/get, GET /api/v1/tasks/{{id}}), cancel one, or ask the \
                 operator to raise task_max_running"
            )));
        }
        TaskRunner::watch(self);
        // The call's own cancellation: the task's token (a cancel, the shutdown), never the
        // request that started it, which is answered now.
        let token = CancellationToken::new();
        ctx.cancellation = token.clone();
        runner.running().insert(task.id.clone(), token);
        let service = Arc::clone(self);
        let id = task.id.clone();
        let tool = name.to_owned();
        runner.calls().insert(ctx.call_id.clone());
        tokio::spawn(async move {
            let call = ctx.call_id.clone();
            let result = service.execute(&tool, args, ctx).await;
            service.tool_tasks.calls().remove(&call);
            service.finish_task(&id, &result).await;
        });
        runner.announce(&task);
        Ok(task)
    }

    /// Whether the call of `ctx` is the call of a task this instance runs (the task's own
    /// call, not one nested in it): `sessions_spawn` then waits for its subagent, so that the
    /// task follows the subagent.
    pub(crate) fn runs_as_task(&self, ctx: &ToolContext) -> bool {
        ctx.depth == 0 && self.tool_tasks.calls().contains(&ctx.call_id)
    }

    /// Stores how the call of task `id` ended, unless the task ended before (cancelled, or its
    /// instance stopping). A call that ended `cancelled` (what it ran was cancelled by other
    /// means than the task's cancel: a subagent cancelled through `subagents`) ends the task
    /// `cancelled`, with the call's message.
    async fn finish_task(&self, id: &str, result: &ToolResult) {
        let runner = &self.tool_tasks;
        runner.running().remove(id);
        let cancelled = result.error_kind() == Some(ErrorKind::Cancelled);
        let (status, message, kept) = match serde_json::to_value(result) {
            Ok(_) if cancelled => (
                ToolTaskStatus::Cancelled,
                result.error_message().map(str::to_owned),
                None,
            ),
            Ok(value) => {
                let bytes = value.to_string().len();
                let max = runner.settings.max_result_bytes;
                if bytes > max {
                    (
                        ToolTaskStatus::Failed,
                        Some(format!(
                            "the call's result is {bytes} bytes, more than a task keeps \
                             (task_max_result_bytes = {max}); return less, run the call \
                             without a task, or ask the operator to raise \
                             task_max_result_bytes"
                        )),
                        None,
                    )
                } else {
                    (ToolTaskStatus::Completed, None, Some(value))
                }
            }
            Err(e) => (
                ToolTaskStatus::Failed,
                Some(format!("the call's result could not be kept: {e}")),
                None,
            ),
        };
        match self
            .store
            .update_tool_task(id, status, message.as_deref(), kept.as_ref(), Utc::now())
            .await
        {
            Ok(Some(task)) => runner.announce(&task),
            // Ended before: cancelled, or failed by a stopping instance.
            Ok(None) => {}
            Err(e) => tracing::warn!(task = id, "storing a tool task's end failed: {e}"),
        }
    }

    /// The caller's task `id`, as stored now.
    pub async fn get_task(
        &self,
        ctx: &ToolContext,
        id: &str,
    ) -> Result<ToolTaskRecord, ServiceError> {
        self.store
            .get_tool_task(&ctx.user_id, ctx.agent_id.as_deref(), id, Utc::now())
            .await?
            .ok_or_else(|| not_found(id))
    }

    /// The caller's tasks that have not expired, newest first.
    pub async fn list_tasks(
        &self,
        ctx: &ToolContext,
        limit: u32,
        offset: u32,
    ) -> Result<Vec<ToolTaskRecord>, ServiceError> {
        Ok(self
            .store
            .list_tool_tasks(
                &ctx.user_id,
                ctx.agent_id.as_deref(),
                Utc::now(),
                limit,
                offset,
            )
            .await?)
    }

    /// Cancels the caller's task `id`: `cancelled` in the store (every instance sees it) and
    /// its run stopped here, or by its own instance within a second. The task as it is now;
    /// `InvalidState` when it had ended already (it keeps its status and result).
    pub async fn cancel_task(
        &self,
        ctx: &ToolContext,
        id: &str,
    ) -> Result<ToolTaskRecord, ServiceError> {
        let already_ended = |task: &ToolTaskRecord| {
            ServiceError::InvalidState(format!(
                "task '{id}' has already ended ({}); an ended task cannot be cancelled, read its \
                 result instead",
                task.status.as_str()
            ))
        };
        let before = self.get_task(ctx, id).await?;
        if before.status.is_terminal() {
            return Err(already_ended(&before));
        }
        let task = self
            .store
            .cancel_tool_task(
                &ctx.user_id,
                ctx.agent_id.as_deref(),
                id,
                "cancelled by its caller",
                Utc::now(),
            )
            .await?
            .ok_or_else(|| not_found(id))?;
        if task.status != ToolTaskStatus::Cancelled {
            // It ended between the read and the cancel.
            return Err(already_ended(&task));
        }
        let stopped_here = self.tool_tasks.running().remove(id);
        if let Some(token) = stopped_here {
            token.cancel();
        }
        self.tool_tasks.announce(&task);
        Ok(task)
    }

    /// Waits until the caller's task `id` has ended and returns it (MCP's `tasks/result`).
    /// A task run here is awaited on its change; one run by another instance is asked for
    /// every second.
    pub async fn wait_task(
        &self,
        ctx: &ToolContext,
        id: &str,
    ) -> Result<ToolTaskRecord, ServiceError> {
        let mut changes = self.task_changes();
        loop {
            let task = self.get_task(ctx, id).await?;
            if task.status.is_terminal() {
                return Ok(task);
            }
            let ended_here = async {
                loop {
                    match changes.recv().await {
                        Ok(changed) if changed.id == id && changed.status.is_terminal() => return,
                        Ok(_) => {}
                        Err(broadcast::error::RecvError::Lagged(_)) => return,
                        Err(broadcast::error::RecvError::Closed) => {
                            std::future::pending::<()>().await
                        }
                    }
                }
            };
            tokio::select! {
                () = ended_here => {}
                () = tokio::time::sleep(WATCH_EVERY) => {}
                () = ctx.cancellation.cancelled() => {
                    return Err(ServiceError::InvalidState(format!(
                        "the wait for task '{id}' was cancelled; the task runs on"
                    )));
                }
            }
        }
    }

    /// Stops the local runs of tasks that ended through another instance (cancelled there).
    async fn stop_tasks_ended_elsewhere(&self) {
        let ids: Vec<String> = self.tool_tasks.running().keys().cloned().collect();
        if ids.is_empty() {
            return;
        }
        match self.store.ended_tool_tasks(&ids).await {
            Ok(ended) => {
                let mut running = self.tool_tasks.running();
                for id in ended {
                    if let Some(token) = running.remove(&id) {
                        token.cancel();
                    }
                }
            }
            Err(e) => tracing::warn!("reading tool tasks' status failed: {e}"),
        }
    }

    /// At shutdown: fails every task this instance still runs ([`STOPPED_MESSAGE`]), then
    /// stops their runs. How many were failed.
    pub async fn stop_tool_tasks(&self) -> u64 {
        let failed = match self
            .store
            .fail_instance_tool_tasks(&self.tool_tasks.instance, STOPPED_MESSAGE, Utc::now())
            .await
        {
            Ok(n) => n,
            Err(e) => {
                tracing::warn!("marking this instance's tool tasks failed did not work: {e}");
                0
            }
        };
        let running: Vec<CancellationToken> =
            self.tool_tasks.running().drain().map(|(_, t)| t).collect();
        for token in running {
            token.cancel();
        }
        failed
    }
}

#[cfg(test)]
mod tests;
