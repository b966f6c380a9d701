//! Where executions run: a bounded pool of worker threads fed by a bounded queue, plus a
//! separate lane for nested executions.
//!
//! **The pool.** `workers` plain OS threads (each with a big enough stack for the script's
//! share, see `limits.rs`) take jobs from one bounded channel of `queue_capacity` places. A job
//! that finds the queue full is refused at once with `busy`. A worker runs one job at a time,
//! start to finish, so the thread's CPU clock measures that job alone. Each worker keeps a
//! [`Compiler`] whose cache lets a tool called again skip parsing.
//!
//! **Nested executions.** A JS tool that calls another JS tool through `utils.callTool` waits
//! for it on its worker. If nested jobs queued for the same workers, a handful of such tools
//! could occupy every worker while their nested jobs wait behind them: a deadlock until the
//! timeouts. So a job submitted from inside a host call (the `HOST_CALL` task-local of
//! `host.rs` is set on the task that runs `HostCalls::call_tool`) does not queue: it runs on a
//! thread of its own, started for it. Depth is bounded elsewhere (the service allows 4 hops) and
//! the number of such threads running at once is capped at [`MAX_NESTED`]; past that, `busy`.
//! This relies on the host awaiting the nested execution inside the task that runs
//! `call_tool` (a plain `.await`, as the service's pipeline does); a host that moves it to
//! another task with `tokio::spawn` makes it queue like any outside call.
//!
//! **The async side.** `run` enqueues and awaits a oneshot reply. It measures the wall-clock
//! deadline from the moment it is called (queueing counts), and has its own timeout at the
//! deadline plus [`REPLY_GRACE`], in case a worker is stuck in native code that QuickJS does not
//! interrupt. Dropping the `run` future cancels the job: a queued job is skipped, a running one
//! is interrupted.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::oneshot;
use toolsmith_core::{ErrorKind, Permission, ToolResult};

use crate::compile::Compiler;
use crate::engine::{self, Execution, Job};
use crate::host::{Event, HOST_CALL};
use crate::limits::{Limit, WORKER_STACK_BYTES};
use crate::{JsJob, PoolConfig};

/// Nested executions that may run at once, outside the pool.
pub(crate) const MAX_NESTED: usize = 64;
/// How long `run` waits past the deadline for a worker's reply before it gives up on it.
pub(crate) const REPLY_GRACE: Duration = Duration::from_secs(1);

/// The worker pool behind a `JsSandbox`.
pub(crate) struct Pool {
    queue: mpsc::SyncSender<Job>,
    queue_capacity: usize,
    nested: Arc<AtomicUsize>,
}

impl Pool {
    pub(crate) fn new(config: PoolConfig) -> Pool {
        let (queue, jobs) = mpsc::sync_channel::<Job>(config.queue_capacity);
        let jobs = Arc::new(Mutex::new(jobs));
        for n in 0..config.workers.max(1) {
            let jobs = jobs.clone();
            let spawned = thread::Builder::new()
                .name(format!("toolsmith-js-{n}"))
                .stack_size(WORKER_STACK_BYTES)
                .spawn(move || worker(&jobs));
            if let Err(e) = spawned {
                tracing::error!(error = %e, worker = n, "could not start a sandbox worker thread");
            }
        }
        Pool {
            queue,
            queue_capacity: config.queue_capacity,
            nested: Arc::new(AtomicUsize::new(0)),
        }
    }

    pub(crate) async fn run(&self, job: JsJob) -> ToolResult {
        let started = Instant::now();
        let limits = job.limits;
        let deadline = started + limits.wall_time;
        let (events_tx, events) = mpsc::channel();
        let cancelled = Arc::new(AtomicBool::new(false));
        let exec = Execution {
            args_json: job.args.to_string(),
            context_json: json!({
                "toolName": job.context.tool_name,
                "callId": job.context.call_id,
                "conversationId": job.context.conversation_id,
                "userId": job.context.user_id,
            })
            .to_string(),
            code: job.code,
            config_json: job.config.map(|config| config.to_string()),
            network: job.permissions.contains(&Permission::Network),
            limits,
            deadline,
            cancelled: cancelled.clone(),
            events,
            events_tx: events_tx.clone(),
            host: job.host,
            handle: tokio::runtime::Handle::try_current().ok(),
        };
        let (reply, replied) = oneshot::channel();
        let nested = HOST_CALL.try_with(|_| ()).is_ok();
        let submitted = if nested {
            self.start_nested(exec, reply)
        } else {
            self.enqueue(exec, reply)
        };
        let mut result = match submitted {
            Err(refused) => refused,
            Ok(()) => {
                let mut cancel = CancelOnDrop {
                    cancelled,
                    events: events_tx,
                    armed: true,
                };
                let wait_until = tokio::time::Instant::from_std(deadline + REPLY_GRACE);
                let result = match tokio::time::timeout_at(wait_until, replied).await {
                    Ok(Ok(result)) => result,
                    Ok(Err(_)) => ToolResult::error(
                        ErrorKind::Internal,
                        "the sandbox worker stopped without an answer",
                    ),
                    Err(_) => {
                        tracing::warn!("a sandbox worker did not stop at the deadline");
                        Limit::Wall.result(&limits)
                    }
                };
                cancel.armed = false;
                result
            }
        };
        result.metadata.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        result
    }

    fn enqueue(
        &self,
        exec: Execution,
        reply: oneshot::Sender<ToolResult>,
    ) -> Result<(), ToolResult> {
        match self.queue.try_send(Job { exec, reply }) {
            Ok(()) => Ok(()),
            Err(mpsc::TrySendError::Full(_)) => Err(ToolResult::error(
                ErrorKind::Busy,
                format!(
                    "the JavaScript sandbox is busy: all workers are running and {} calls are already waiting; try again shortly",
                    self.queue_capacity
                ),
            )),
            Err(mpsc::TrySendError::Disconnected(_)) => Err(ToolResult::error(
                ErrorKind::Internal,
                "the JavaScript sandbox has no running workers",
            )),
        }
    }

    fn start_nested(
        &self,
        exec: Execution,
        reply: oneshot::Sender<ToolResult>,
    ) -> Result<(), ToolResult> {
        let busy = || {
            ToolResult::error(
                ErrorKind::Busy,
                format!(
                    "the JavaScript sandbox is busy: {MAX_NESTED} nested tool calls are already running; try again shortly"
                ),
            )
        };
        if self.nested.fetch_add(1, Ordering::SeqCst) >= MAX_NESTED {
            self.nested.fetch_sub(1, Ordering::SeqCst);
            return Err(busy());
        }
        let nested = self.nested.clone();
        let spawned = thread::Builder::new()
            .name("toolsmith-js-nested".to_owned())
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || {
                let mut compiler = Compiler::new();
                let job = Job { exec, reply };
                serve_guarded(&mut compiler, move || Some(job));
                nested.fetch_sub(1, Ordering::SeqCst);
            });
        match spawned {
            Ok(_) => Ok(()),
            Err(e) => {
                self.nested.fetch_sub(1, Ordering::SeqCst);
                tracing::error!(error = %e, "could not start a thread for a nested execution");
                Err(busy())
            }
        }
    }
}

/// Cancels the job if `run` is dropped before the reply arrives.
struct CancelOnDrop {
    cancelled: Arc<AtomicBool>,
    events: mpsc::Sender<Event>,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.cancelled.store(true, Ordering::Relaxed);
            let _ = self.events.send(Event::Cancelled);
        }
    }
}

fn worker(jobs: &Mutex<mpsc::Receiver<Job>>) {
    let mut compiler = Compiler::new();
    // Each round prepares a fresh runtime, then waits for the next job to run in it.
    while serve_guarded(&mut compiler, || next_job(jobs)) {}
}

/// The next job someone still waits for; `None` once the sandbox is dropped.
fn next_job(jobs: &Mutex<mpsc::Receiver<Job>>) -> Option<Job> {
    loop {
        let job = jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv()
            .ok()?;
        if !job.reply.is_closed() {
            return Some(job);
        }
    }
}

/// [`engine::serve`]; a panic loses that job (its caller gets an `internal` error when the
/// reply channel closes) but not the worker.
fn serve_guarded(compiler: &mut Compiler, next: impl FnOnce() -> Option<Job>) -> bool {
    match panic::catch_unwind(AssertUnwindSafe(|| engine::serve(compiler, next))) {
        Ok(served) => served,
        Err(_) => {
            *compiler = Compiler::new();
            tracing::error!("a sandbox execution panicked");
            true
        }
    }
}
