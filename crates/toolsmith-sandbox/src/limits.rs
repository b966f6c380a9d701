//! The limits of one execution while it runs: the [`Watchdog`] that QuickJS's interrupt handler
//! consults, which remembers *which* limit stopped the script, and the messages and error kinds
//! each limit turns into.
//!
//! Why a flag of our own: QuickJS reports every stop the same way (an uncatchable
//! `InternalError: interrupted`, or inside an async function a plain rejection), and memory
//! exhaustion is an ordinary, catchable `out of memory` error. The watchdog records the first
//! limit that fired, and from then on the interrupt handler keeps answering "stop", so a
//! `catch` or `finally` block cannot keep the script alive; results are classified by the flag,
//! never by the message the script saw.
//!
//! CPU time is the thread's own CPU clock (`CLOCK_THREAD_CPUTIME_ID` through `rustix`,
//! `thread_cpu_time`): every execution has a thread to itself (`pool.rs`), so the thread's CPU
//! time since the start of the execution is the script's, and time spent waiting (for a host call, or for a
//! CPU slot) is not counted. The interrupt handler is also where a script that has had its
//! quantum while others wait hands its CPU slot on (`sched.rs`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use toolsmith_core::{ErrorKind, ToolResult};

use crate::JsLimits;
use crate::sched::{NoSlot, Ticket};

/// The smallest and largest native stack a script may be given. QuickJS treats a stack limit of
/// zero (or above 16 MiB, in rquickjs) as "no limit", and the threads that run scripts have a stack of
/// [`WORKER_STACK_BYTES`], so the configured value is clamped into this range.
pub(crate) const MIN_STACK_BYTES: usize = 64 * 1024;
pub(crate) const MAX_STACK_BYTES: usize = 8 * 1024 * 1024;
/// Stack of every thread that runs scripts: the script's share plus room for Rust and QuickJS
/// frames around it.
pub(crate) const WORKER_STACK_BYTES: usize = MAX_STACK_BYTES + 4 * 1024 * 1024;

/// A limit that stopped a script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    Memory,
    Cpu,
    Wall,
    Cancelled,
}

/// Watches the execution in one runtime; shared by the interrupt handler, the allocator and
/// the code driving the script.
///
/// A runtime is made ready before its job arrives; until [`Watchdog::arm`] is called nothing
/// is stopped (only our own prelude runs then) and the memory limit is [`PREPARE_MEMORY_BYTES`].
pub(crate) struct Watchdog {
    armed: Cell<bool>,
    deadline: Cell<Option<Instant>>,
    cpu_start: Cell<Option<Duration>>,
    cpu_limit: Cell<Duration>,
    fired: Cell<Option<Limit>>,
    memory_hit: Rc<Cell<bool>>,
    memory_limit: Rc<Cell<usize>>,
    cancelled: RefCell<Option<Arc<AtomicBool>>>,
    ticket: RefCell<Option<Arc<Ticket>>>,
}

/// Memory a runtime may use while it is prepared, before a job with its own limit arrives.
pub(crate) const PREPARE_MEMORY_BYTES: usize = 32 * 1024 * 1024;

impl Watchdog {
    pub(crate) fn new() -> Self {
        Watchdog {
            armed: Cell::new(false),
            deadline: Cell::new(None),
            cpu_start: Cell::new(None),
            cpu_limit: Cell::new(Duration::MAX),
            fired: Cell::new(None),
            memory_hit: Rc::new(Cell::new(false)),
            memory_limit: Rc::new(Cell::new(PREPARE_MEMORY_BYTES)),
            cancelled: RefCell::new(None),
            ticket: RefCell::new(None),
        }
    }

    /// Starts watching a job: its limits apply from now on.
    pub(crate) fn arm(
        &self,
        limits: &JsLimits,
        deadline: Instant,
        cancelled: Arc<AtomicBool>,
        ticket: Arc<Ticket>,
    ) {
        self.deadline.set(Some(deadline));
        // Without a thread CPU clock the CPU limit cannot be measured; the wall clock still
        // bounds the run.
        self.cpu_start.set(thread_cpu_time());
        self.cpu_limit.set(limits.cpu_time);
        self.memory_limit.set(limits.memory_bytes);
        *self.cancelled.borrow_mut() = Some(cancelled);
        *self.ticket.borrow_mut() = Some(ticket);
        self.armed.set(true);
    }

    /// The flag the allocator raises when it refuses an allocation.
    pub(crate) fn memory_flag(&self) -> Rc<Cell<bool>> {
        self.memory_hit.clone()
    }

    /// The limit the allocator enforces.
    pub(crate) fn memory_limit(&self) -> Rc<Cell<usize>> {
        self.memory_limit.clone()
    }

    /// The interrupt handler's question: must the script stop now?
    pub(crate) fn should_stop(&self) -> bool {
        if !self.armed.get() {
            return false;
        }
        if self.fired().is_some() {
            return true;
        }
        let cancelled = self
            .cancelled
            .borrow()
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed));
        if cancelled {
            self.fire(Limit::Cancelled);
        } else if self.deadline.get().is_some_and(|d| Instant::now() >= d) {
            self.fire(Limit::Wall);
        } else {
            self.check_cpu();
        }
        if self.fired().is_none() {
            self.share_the_core();
        }
        self.fired().is_some()
    }

    /// Fires the CPU limit if the script has used more than its share.
    pub(crate) fn check_cpu(&self) {
        if self.armed.get()
            && let Some(start) = self.cpu_start.get()
            && let Some(now) = thread_cpu_time()
            && now.saturating_sub(start) > self.cpu_limit.get()
        {
            self.fire(Limit::Cpu);
        }
    }

    /// Hands the CPU slot on when the script has had its quantum and others wait (the thread
    /// blocks here until its turn comes again; that time is neither CPU time nor free of the
    /// wall clock).
    fn share_the_core(&self) {
        let ticket = self.ticket.borrow();
        let (Some(ticket), Some(deadline)) = (ticket.as_ref(), self.deadline.get()) else {
            return;
        };
        let cancelled = self.cancelled.borrow();
        let Some(cancelled) = cancelled.as_ref() else {
            return;
        };
        match ticket.preempt(deadline, cancelled) {
            Ok(()) => {}
            Err(NoSlot::Cancelled) => self.fire(Limit::Cancelled),
            Err(NoSlot::Deadline | NoSlot::Retired) => self.fire(Limit::Wall),
        }
    }

    /// Records `limit` unless another one fired first.
    pub(crate) fn fire(&self, limit: Limit) {
        if self.fired.get().is_none() {
            self.fired.set(Some(limit));
        }
    }

    /// The limit that stopped the script, if any. Memory wins: once an allocation has been
    /// refused, whatever happened next is a consequence of it.
    pub(crate) fn fired(&self) -> Option<Limit> {
        if self.armed.get() && self.memory_hit.get() {
            return Some(Limit::Memory);
        }
        self.fired.get()
    }
}

impl Limit {
    pub(crate) fn result(self, limits: &JsLimits) -> ToolResult {
        match self {
            Limit::Memory => ToolResult::error(
                ErrorKind::MemoryLimit,
                format!(
                    "the tool used more memory than its limit of {}",
                    fmt_bytes(limits.memory_bytes)
                ),
            ),
            Limit::Cpu => ToolResult::error(
                ErrorKind::CpuLimit,
                format!(
                    "the tool used more CPU time than its limit of {}",
                    fmt_duration(limits.cpu_time)
                ),
            ),
            Limit::Wall => ToolResult::error(
                ErrorKind::Timeout,
                format!(
                    "the tool did not finish within its time limit of {}",
                    fmt_duration(limits.wall_time)
                ),
            ),
            Limit::Cancelled => {
                ToolResult::error(ErrorKind::Cancelled, "the call was cancelled by its caller")
            }
        }
    }
}

/// The stack size QuickJS is given for a configured limit.
pub(crate) fn clamp_stack(max_stack_bytes: usize) -> usize {
    max_stack_bytes.clamp(MIN_STACK_BYTES, MAX_STACK_BYTES)
}

/// `1.5 s`, `200 ms`.
pub(crate) fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms} ms");
    }
    let secs = d.as_secs_f64();
    let text = format!("{secs:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} s")
}

/// `50 MB`, `512 KB`, `1000 bytes` (binary units, exact when the value allows it).
pub(crate) fn fmt_bytes(n: usize) -> String {
    const KB: usize = 1024;
    const MB: usize = 1024 * 1024;
    if n >= MB && n.is_multiple_of(MB) {
        format!("{} MB", n / MB)
    } else if n >= MB {
        format!("{:.1} MB", n as f64 / MB as f64)
    } else if n >= KB && n.is_multiple_of(KB) {
        format!("{} KB", n / KB)
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod tests;

/// The CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`), or `None` where the
/// clock cannot be read.
pub(crate) fn thread_cpu_time() -> Option<std::time::Duration> {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Some(std::time::Duration::new(
        u64::try_from(now.tv_sec).ok()?,
        u32::try_from(now.tv_nsec).ok()?,
    ))
}
