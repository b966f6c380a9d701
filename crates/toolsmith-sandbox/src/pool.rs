//! Where executions run: a thread per execution in flight, at most `max_in_flight` of them,
//! and [`CpuSlots`] that let at most `workers` of them run JavaScript at once.
//!
//! **Why a thread each.** An execution that awaits a host call (`fetch`, a nested `callTool`)
//! must not hold a core while it waits, yet everything the sandbox promises rests on a
//! runtime having a thread to itself while it runs: the thread's CPU clock is that execution's
//! CPU time, and the interrupt handler can simply *block* to hand the core to someone else
//! (preemption, `sched.rs`). So every execution gets a thread, and the thread gives its CPU
//! slot back whenever it waits. An execution gets its thread only once it holds its first slot
//! (until then it is a job waiting in turn, `Ticket::start_in_turn`, that the thread giving the
//! slot back hands to a thread itself, with no task woken), so the threads and runtimes alive
//! follow what runs and waits on host calls, not how many calls are queued: 256 trivial calls
//! in flight run on a handful of threads whose runtimes stay in cache, not on 256. Threads are
//! kept: one that finished its job prepares a fresh runtime (never a used one) and waits for the
//! next job; `workers` of them stay ready with a prepared runtime, the others exit after
//! [`IDLE_EXIT`] without work. docs/design/sandbox-performance.md has the
//! alternative we measured (many runtimes driven as futures on each worker) and why not.
//!
//! **Bounds.** A call past `max_in_flight` executions (running, waiting for a slot, or awaiting
//! host calls) is refused at once with `busy`; nested executions count like any other, and
//! since a waiting parent holds no slot they cannot deadlock the pool. An execution counts
//! against the cap from its admission until its thread has *freed its runtime*, which happens
//! after the reply, so at most `max_in_flight` runtimes with their heaps (each at most its
//! memory limit) exist at once: the memory of the cap is `max_in_flight` × (memory limit +
//! stack); see docs/configuration.md. A caller that meets the cap only because answered
//! executions are still freeing their runtimes (they count, but are no longer in flight for
//! anyone) waits for one of them to finish, which takes a garbage collection, instead of being
//! refused: a caller whose previous call has answered is never refused because of it.
//!
//! **The async side.** `run` hands the job over and awaits a oneshot reply. It measures the
//! wall-clock deadline from the moment it is called (waiting for a slot counts), and has its own
//! timeout at the deadline plus [`REPLY_GRACE`], in case a script is stuck in native code that
//! QuickJS does not interrupt: then the execution's slot is replaced at once and its thread is
//! retired (it exits when the native code returns, and never serves again). Dropping the `run`
//! future cancels the job: a waiting job is skipped, a running one is interrupted.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::{Notify, oneshot};
use toolsmith_core::{ErrorKind, ToolResult};

use crate::compile::Compiler;
use crate::engine::{self, Execution, Job};
use crate::host::Event;
use crate::limits::{Limit, WORKER_STACK_BYTES};
use crate::sched::{CpuSlots, NoSlot, Ticket};
use crate::{JsJob, PoolSettings};

/// How long `run` waits past the deadline for a reply before it gives up on the execution.
pub(crate) const REPLY_GRACE: Duration = Duration::from_secs(1);
/// A thread beyond the `workers` kept ready exits after this long without a job.
pub(crate) const IDLE_EXIT: Duration = Duration::from_secs(10);

/// The executions of a `JsSandbox`.
pub(crate) struct Pool {
    threads: Arc<Threads>,
    slots: Arc<CpuSlots>,
    counts: Arc<Counts>,
    max_in_flight: usize,
}

/// What the cap counts.
#[derive(Default)]
struct Counts {
    /// Executions admitted whose runtime is not freed yet (what bounds memory).
    alive: AtomicUsize,
    /// Executions admitted whose reply is not sent yet (what a caller sees in flight).
    unanswered: AtomicUsize,
    /// Told whenever an execution's runtime is freed.
    freed: Notify,
}

/// The threads and the jobs handed to them.
struct Threads {
    state: Mutex<ThreadState>,
    work: Condvar,
    /// Threads kept ready even when idle.
    ready: usize,
}

#[derive(Default)]
struct ThreadState {
    jobs: VecDeque<Job>,
    /// Threads waiting for a job, with a prepared runtime.
    waiting: usize,
    /// Threads preparing a runtime, that will wait for a job next.
    coming: usize,
    total: usize,
    closed: bool,
}

/// Counts an execution against the cap: unanswered until [`InFlight::answered`] (or the drop),
/// alive until it is dropped, after its thread has freed the runtime.
pub(crate) struct InFlight {
    counts: Arc<Counts>,
    answered: AtomicBool,
}

impl InFlight {
    /// The execution's reply is about to be sent.
    pub(crate) fn answered(&self) {
        if !self.answered.swap(true, Ordering::SeqCst) {
            self.counts.unanswered.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // Alive first: a waiting caller never sees an execution answered that is not.
        self.counts.alive.fetch_sub(1, Ordering::SeqCst);
        self.answered();
        self.counts.freed.notify_waiters();
    }
}

impl Pool {
    pub(crate) fn new(config: PoolSettings) -> Pool {
        let ready = config.workers.max(1);
        let threads = Arc::new(Threads {
            state: Mutex::new(ThreadState::default()),
            work: Condvar::new(),
            ready,
        });
        for _ in 0..ready {
            {
                let mut state = threads.lock();
                state.coming += 1;
                state.total += 1;
            }
            threads.spawn();
        }
        Pool {
            threads,
            slots: CpuSlots::new(config.workers),
            counts: Arc::new(Counts::default()),
            max_in_flight: config.max_in_flight.max(1),
        }
    }

    /// Executions in flight now (admitted, and their runtimes not yet freed).
    pub(crate) fn in_flight(&self) -> usize {
        self.counts.alive.load(Ordering::SeqCst)
    }

    pub(crate) async fn run(&self, job: JsJob) -> ToolResult {
        let started = Instant::now();
        let limits = job.limits;
        let deadline = started + limits.wall_time;
        let Some(in_flight) = self.admit(deadline).await else {
            let mut refused = ToolResult::error(
                ErrorKind::Busy,
                format!(
                    "the JavaScript sandbox is busy: {} executions are already in flight (the `js_max_in_flight` setting); try again shortly",
                    self.max_in_flight
                ),
            );
            refused.metadata.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            return refused;
        };
        let ticket = Ticket::new(self.slots.clone(), &job.context.user_id);
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
            packages: job.packages,
            env: job.env,
            permissions: job.permissions,
            limits,
            deadline,
            cancelled: cancelled.clone(),
            events,
            events_tx: events_tx.clone(),
            host: job.host,
            handle: tokio::runtime::Handle::try_current().ok(),
            ticket: ticket.clone(),
            in_flight,
        };
        let (reply, mut replied) = oneshot::channel();
        // No thread until the execution can run: until its first slot it is a job waiting in
        // turn, handed to a thread by whoever gives that slot back.
        let threads = self.threads.clone();
        let job = Job { exec, reply };
        let mut in_turn = ticket.start_in_turn(move || threads.submit(job));
        let mut cancel = CancelOnDrop {
            cancelled,
            ticket: ticket.clone(),
            events: events_tx,
            armed: true,
        };
        let reply = match tokio::time::timeout_at(deadline.into(), &mut replied).await {
            Ok(reply) => Some(reply),
            // Still waiting for its first slot at the deadline: it never starts.
            Err(_) if in_turn.withdraw() => {
                cancel.armed = false;
                let mut result = engine::no_slot_limit(NoSlot::Deadline).result(&limits);
                result.metadata.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
                return result;
            }
            Err(_) => None,
        };
        let wait_until = tokio::time::Instant::from_std(deadline + REPLY_GRACE);
        let reply = match reply {
            Some(reply) => Ok(reply),
            None => tokio::time::timeout_at(wait_until, replied).await,
        };
        let mut result = match reply {
            Ok(Ok(result)) => {
                cancel.armed = false;
                result
            }
            Ok(Err(_)) => {
                cancel.armed = false;
                ToolResult::error(
                    ErrorKind::Internal,
                    "the sandbox thread stopped without an answer",
                )
            }
            // `cancel` stays armed: should the native code ever return, the script is stopped.
            Err(_) => {
                let held = ticket.retire();
                tracing::error!(
                    held_slot = held,
                    stuck = self.slots.stuck(),
                    "a JS execution did not stop at its deadline; its thread is retired and its CPU slot replaced"
                );
                Limit::Wall.result(&limits)
            }
        };
        drop(cancel);
        result.metadata.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        result
    }

    /// Counts one more execution in flight, unless the cap is reached by executions not yet
    /// answered. While some of those that fill it have answered and are only freeing their
    /// runtimes, waits (at most until `deadline`) for one to be freed.
    async fn admit(&self, deadline: Instant) -> Option<InFlight> {
        let counts = &self.counts;
        loop {
            let freed = counts.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            // Unanswered first and alive second, undone in the other order, so `alive` is never
            // below `unanswered` for long enough to make a caller wait for nothing.
            counts.unanswered.fetch_add(1, Ordering::SeqCst);
            if counts.alive.fetch_add(1, Ordering::SeqCst) < self.max_in_flight {
                return Some(InFlight {
                    counts: counts.clone(),
                    answered: AtomicBool::new(false),
                });
            }
            counts.alive.fetch_sub(1, Ordering::SeqCst);
            let unanswered = counts.unanswered.fetch_sub(1, Ordering::SeqCst) - 1;
            if unanswered >= self.max_in_flight {
                return None;
            }
            let until = tokio::time::Instant::from_std(deadline);
            if tokio::time::timeout_at(until, freed).await.is_err() {
                return None;
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.threads.lock().closed = true;
        self.threads.work.notify_all();
    }
}

impl Threads {
    fn lock(&self) -> MutexGuard<'_, ThreadState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a job for a waiting thread, starting one if none is waiting or coming. A thread
    /// that is coming (preparing a runtime) takes it without being woken.
    fn submit(self: &Arc<Self>, job: Job) {
        let mut state = self.lock();
        state.jobs.push_back(job);
        if state.jobs.len() > state.waiting + state.coming {
            state.coming += 1;
            state.total += 1;
            drop(state);
            self.spawn();
        } else if state.waiting > 0 {
            drop(state);
            self.work.notify_one();
        }
    }

    /// Starts a thread, already counted in `coming` and `total`.
    fn spawn(self: &Arc<Self>) {
        let threads = self.clone();
        let spawned = thread::Builder::new()
            .name("toolsmith-js".to_owned())
            .stack_size(WORKER_STACK_BYTES)
            .spawn(move || threads.serve());
        if let Err(e) = spawned {
            let mut state = self.lock();
            state.coming -= 1;
            state.total -= 1;
            let orphaned = state.waiting + state.coming == 0;
            drop(state);
            // The job stays queued for the next thread; its caller times out if none comes.
            tracing::error!(error = %e, orphaned, "could not start a sandbox thread");
        }
    }

    /// A thread's life: prepare a runtime, take a job, run it, and again, until the sandbox is
    /// dropped, the thread is idle too long, or its job was abandoned as stuck.
    fn serve(&self) {
        let mut compiler = Compiler::new();
        loop {
            let taken: RefCell<Option<Arc<Ticket>>> = RefCell::new(None);
            let next = || {
                let job = self.next_job()?;
                *taken.borrow_mut() = Some(job.exec.ticket.clone());
                Some(job)
            };
            // From the end of its job on, the thread counts as coming: it frees its runtime and
            // prepares the next one, and a job queued meanwhile (the next one to take the slot it
            // gives back) waits for it rather than for a new thread.
            let counted = Cell::new(false);
            let done = || {
                self.lock().coming += 1;
                counted.set(true);
            };
            let served = match panic::catch_unwind(AssertUnwindSafe(|| {
                engine::serve(&mut compiler, next, done)
            })) {
                Ok(served) => served,
                Err(_) => {
                    // The job is lost (its caller gets an `internal` error when the reply
                    // channel closes), not the thread.
                    compiler = Compiler::new();
                    tracing::error!("a sandbox execution panicked");
                    true
                }
            };
            if !served {
                return;
            }
            let mut state = self.lock();
            if counted.get() {
                state.coming -= 1;
            }
            if taken.borrow().as_ref().is_some_and(|t| t.is_retired()) {
                state.total -= 1;
                return;
            }
            state.coming += 1;
        }
    }

    /// The next job someone still waits for; `None` when this thread should exit.
    fn next_job(&self) -> Option<Job> {
        let mut state = self.lock();
        state.coming -= 1;
        state.waiting += 1;
        loop {
            if let Some(job) = state.jobs.pop_front() {
                if job.reply.is_closed() {
                    continue;
                }
                state.waiting -= 1;
                return Some(job);
            }
            if state.closed {
                state.waiting -= 1;
                state.total -= 1;
                return None;
            }
            let (next, timeout) = self
                .work
                .wait_timeout(state, IDLE_EXIT)
                .unwrap_or_else(PoisonError::into_inner);
            state = next;
            if timeout.timed_out() && state.jobs.is_empty() && state.total > self.ready {
                state.waiting -= 1;
                state.total -= 1;
                return None;
            }
        }
    }
}

/// Cancels the job if `run` is dropped before the reply arrives.
struct CancelOnDrop {
    cancelled: Arc<AtomicBool>,
    ticket: Arc<Ticket>,
    events: mpsc::Sender<Event>,
    armed: bool,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.cancelled.store(true, Ordering::SeqCst);
            self.ticket.wake();
            let _ = self.events.send(Event::Cancelled);
        }
    }
}
