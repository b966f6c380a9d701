//! The CPU slots: how many executions may run JavaScript at once (one per worker, by default
//! one per core), and who gets a slot next.
//!
//! Every execution has a thread of its own (see `pool.rs`), but it must hold a *slot* while it
//! runs script code. It gives the slot back whenever it waits (for a `fetch`, a nested
//! `callTool`, any host call) and takes one again when the reply arrives, so waiting costs no
//! slot. A slot is also taken back from a script that has run for a [`QUANTUM`] while others
//! wait (the interrupt handler calls [`Ticket::preempt`]), so a CPU-bound script shares the cores
//! instead of holding one for its whole CPU limit.
//!
//! **Fairness.** Waiters queue per owner (the calling user), and a freed slot goes to the owner
//! at the front of a ring of owners, who then moves to its back: one user's fifty busy loops
//! make that user's queue long, not everyone's wait. Within one owner, first come first served.
//!
//! **Finish what was started, then short work, within one owner.** An owner's queue has three
//! [`Level`]s, served in order when that owner's turn comes: a script coming back from a host
//! call ([`Level::Resumed`]), then one that starts ([`Level::Fresh`]), then one that was
//! preempted after a whole quantum ([`Level::Preempted`]). Resumed scripts first: a burst of a
//! thousand calls that each await a `fetch` would otherwise finish only after every one of them
//! had started (each holding its thread and heap all along); served first, each finishes as its
//! reply comes. Preempted last: a user's trivial call never waits behind the next quantum of
//! every one of the user's busy loops. The levels do not cross owners: a flood of short calls
//! from one user cannot starve another user's long script, which still gets every other turn of
//! the ring.
//!
//! **Retired tickets.** A script stuck in native code that QuickJS cannot interrupt keeps its
//! slot. When its caller gives up on it (deadline plus grace, `pool.rs`), [`Ticket::retire`]
//! hands a replacement slot to the next waiter at once, and the stuck thread no longer counts:
//! whatever it frees later is not freed twice, and it never takes a slot again.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long a script may keep its slot while others wait for one.
pub(crate) const QUANTUM: Duration = Duration::from_millis(4);

/// The slots of one sandbox.
pub(crate) struct CpuSlots {
    state: Mutex<State>,
    /// Waiters in all queues: read by every interrupt check, so kept outside the lock.
    waiting: AtomicUsize,
    /// Tickets retired while they held a slot and whose thread has not finished yet.
    stuck: AtomicUsize,
}

#[derive(Default)]
struct State {
    free: usize,
    queues: HashMap<Arc<str>, OwnerQueue>,
    /// Owners with waiters, in the order they are served.
    ring: VecDeque<Arc<str>>,
}

/// One owner's waiters, by [`Level`].
#[derive(Default)]
struct OwnerQueue {
    levels: [VecDeque<Arc<Waiter>>; 3],
}

impl OwnerQueue {
    /// The waiter that came first at the first level that has one.
    fn pop(&mut self) -> Option<Arc<Waiter>> {
        self.levels.iter_mut().find_map(VecDeque::pop_front)
    }

    fn is_empty(&self) -> bool {
        self.levels.iter().all(VecDeque::is_empty)
    }

    fn level_mut(&mut self, level: Level) -> &mut VecDeque<Arc<Waiter>> {
        let [resumed, fresh, preempted] = &mut self.levels;
        match level {
            Level::Resumed => resumed,
            Level::Fresh => fresh,
            Level::Preempted => preempted,
        }
    }
}

/// Which queues a waiter joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// Back from a host call: served first.
    Resumed = 0,
    /// Starting.
    Fresh = 1,
    /// Preempted after a whole quantum: served when no other waiter of its owner is left.
    Preempted = 2,
}

/// An execution waiting for a slot: a thread that sleeps on [`Waiter::wake`], or (before the
/// execution has a thread) the work to start when the slot is granted, kept in its [`Grant`]
/// ([`Ticket::start_in_turn`]). A thread waits until a slot is handed to it, its deadline passes
/// or it is woken on cancellation ([`Ticket::wake`]); waiters never poll, so a thousand of them
/// cost nothing while they wait.
pub(crate) struct Waiter {
    level: Level,
    grant: Mutex<Grant>,
    wake: Condvar,
}

#[derive(Default)]
struct Grant {
    granted: bool,
    /// What to start when the slot is granted, for a waiter without a thread.
    start: Option<Start>,
}

/// Work started by whichever thread grants a waiter its slot.
type Start = Box<dyn FnOnce() + Send>;

impl Waiter {
    fn new(level: Level) -> Waiter {
        Waiter {
            level,
            grant: Mutex::new(Grant::default()),
            wake: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Grant> {
        self.grant.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Why a waiter stopped waiting without a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoSlot {
    /// The execution's wall-clock deadline passed.
    Deadline,
    /// The caller went away.
    Cancelled,
    /// The ticket was retired.
    Retired,
}

impl CpuSlots {
    pub(crate) fn new(slots: usize) -> Arc<CpuSlots> {
        Arc::new(CpuSlots {
            state: Mutex::new(State {
                free: slots.max(1),
                ..State::default()
            }),
            waiting: AtomicUsize::new(0),
            stuck: AtomicUsize::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Executions waiting for a slot.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    /// Threads retired while holding a slot that have not finished yet.
    pub(crate) fn stuck(&self) -> usize {
        self.stuck.load(Ordering::Relaxed)
    }

    /// Gives a slot to the next waiter in turn, or back to the free ones. The grant is recorded
    /// under the lock (so a waiter giving up sees it); the waiter is woken, or its work started,
    /// after the lock is let go.
    fn hand_on(&self) {
        let (waiter, start) = {
            let mut state = self.lock();
            let Some(waiter) = state.next_in_turn() else {
                state.free += 1;
                return;
            };
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            let mut grant = waiter.lock();
            grant.granted = true;
            let start = grant.start.take();
            drop(grant);
            (waiter, start)
        };
        match start {
            Some(start) => start(),
            None => waiter.wake.notify_one(),
        }
    }

    /// Takes a free slot for `owner` if nobody waits for one (`Err(start)`, handing `start` back),
    /// else queues a waiter at `level`, with `start` to run when it is granted, and returns it.
    fn enqueue(
        &self,
        owner: &Arc<str>,
        level: Level,
        start: Option<Start>,
    ) -> Result<Arc<Waiter>, Option<Start>> {
        let mut state = self.lock();
        if state.free > 0 && state.ring.is_empty() {
            state.free -= 1;
            return Err(start);
        }
        let waiter = Arc::new(Waiter::new(level));
        waiter.lock().start = start;
        let queue = state.queues.entry(owner.clone()).or_default();
        queue.level_mut(level).push_back(waiter.clone());
        if queue.levels.iter().map(VecDeque::len).sum::<usize>() == 1 {
            state.ring.push_back(owner.clone());
        }
        self.waiting.fetch_add(1, Ordering::Relaxed);
        // A slot may be free while others queue (they were just woken): serve in turn.
        if state.free > 0 {
            state.free -= 1;
            drop(state);
            self.hand_on();
        }
        Ok(waiter)
    }

    /// Blocks until `owner` is given a slot, the deadline passes or `cancelled` is set (whoever
    /// sets it wakes the waiter parked in `parked`).
    fn acquire(
        &self,
        owner: &Arc<str>,
        level: Level,
        deadline: Instant,
        cancelled: &AtomicBool,
        parked: &Mutex<Option<Arc<Waiter>>>,
    ) -> Result<(), NoSlot> {
        let Ok(waiter) = self.enqueue(owner, level, None) else {
            return Ok(());
        };
        *parked.lock().unwrap_or_else(PoisonError::into_inner) = Some(waiter.clone());
        let outcome = self.wait_for_grant(owner, &waiter, deadline, cancelled);
        *parked.lock().unwrap_or_else(PoisonError::into_inner) = None;
        outcome
    }

    /// Sleeps until `waiter` is granted a slot, the deadline passes or `cancelled` is set.
    fn wait_for_grant(
        &self,
        owner: &Arc<str>,
        waiter: &Arc<Waiter>,
        deadline: Instant,
        cancelled: &AtomicBool,
    ) -> Result<(), NoSlot> {
        let mut grant = waiter.lock();
        loop {
            if grant.granted {
                return Ok(());
            }
            let now = Instant::now();
            let why = if cancelled.load(Ordering::SeqCst) {
                Some(NoSlot::Cancelled)
            } else if now >= deadline {
                Some(NoSlot::Deadline)
            } else {
                None
            };
            if let Some(why) = why {
                drop(grant);
                return self.give_up(owner, waiter, why);
            }
            let wait = deadline.saturating_duration_since(now);
            grant = waiter
                .wake
                .wait_timeout(grant, wait)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Takes `waiter` out of its queue; if a slot reached it meanwhile, passes that slot on.
    fn give_up(&self, owner: &Arc<str>, waiter: &Arc<Waiter>, why: NoSlot) -> Result<(), NoSlot> {
        if !self.withdraw(owner, waiter) {
            self.hand_on();
        }
        Err(why)
    }

    /// Takes `waiter` out of its queue unless it was granted a slot: whether it was. Work it
    /// was to start is dropped (after the lock is let go) without being started.
    fn withdraw(&self, owner: &Arc<str>, waiter: &Arc<Waiter>) -> bool {
        let start = {
            let mut state = self.lock();
            let mut grant = waiter.lock();
            if grant.granted {
                return false;
            }
            let start = grant.start.take();
            drop(grant);
            if let Some(queue) = state.queues.get_mut(owner) {
                queue
                    .level_mut(waiter.level)
                    .retain(|w| !Arc::ptr_eq(w, waiter));
                if queue.is_empty() {
                    state.queues.remove(owner);
                    state.ring.retain(|o| o != owner);
                }
            }
            self.waiting.fetch_sub(1, Ordering::Relaxed);
            start
        };
        drop(start);
        true
    }
}

impl State {
    /// The next waiter in turn: the owner at the front of the ring gives its next waiter and
    /// moves to the back.
    fn next_in_turn(&mut self) -> Option<Arc<Waiter>> {
        while let Some(owner) = self.ring.pop_front() {
            let Some(queue) = self.queues.get_mut(&owner) else {
                continue;
            };
            let next = queue.pop();
            if queue.is_empty() {
                self.queues.remove(&owner);
            } else {
                self.ring.push_back(owner);
            }
            if next.is_some() {
                return next;
            }
        }
        None
    }
}

/// The place in the queue of work waiting for its first slot ([`Ticket::start_in_turn`]):
/// withdrawn (and the work dropped unstarted) if this is dropped before the slot is granted.
pub(crate) struct InTurn {
    slots: Arc<CpuSlots>,
    owner: Arc<str>,
    /// `None` once granted or withdrawn.
    waiter: Option<Arc<Waiter>>,
}

impl InTurn {
    /// Withdraws the work unless its slot was granted: whether it was withdrawn (and will
    /// never start).
    pub(crate) fn withdraw(&mut self) -> bool {
        match self.waiter.take() {
            Some(waiter) => self.slots.withdraw(&self.owner, &waiter),
            None => false,
        }
    }
}

impl Drop for InTurn {
    fn drop(&mut self) {
        self.withdraw();
    }
}

/// One execution's claim on the slots.
pub(crate) struct Ticket {
    slots: Arc<CpuSlots>,
    owner: Arc<str>,
    state: Mutex<TicketState>,
    /// The waiter of this ticket's thread while it waits for a slot.
    parked: Mutex<Option<Arc<Waiter>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TicketState {
    Idle,
    /// Holds a slot, taken at this instant.
    Holding(Instant),
    /// Retired while idle.
    Retired,
    /// Retired while holding a slot (which was replaced).
    RetiredHolding,
}

impl Ticket {
    pub(crate) fn new(slots: Arc<CpuSlots>, owner: &str) -> Arc<Ticket> {
        Arc::new(Ticket {
            slots,
            owner: Arc::from(owner),
            state: Mutex::new(TicketState::Idle),
            parked: Mutex::new(None),
        })
    }

    fn lock(&self) -> MutexGuard<'_, TicketState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes a slot (no-op when this ticket holds one), waiting in turn.
    pub(crate) fn acquire(&self, deadline: Instant, cancelled: &AtomicBool) -> Result<(), NoSlot> {
        self.acquire_at(Level::Fresh, deadline, cancelled)
    }

    /// Takes a slot back after a host call, ahead of the owner's executions that have not
    /// started yet ([`Level::Resumed`]).
    pub(crate) fn resume(&self, deadline: Instant, cancelled: &AtomicBool) -> Result<(), NoSlot> {
        self.acquire_at(Level::Resumed, deadline, cancelled)
    }

    /// [`Ticket::acquire`], waiting at `level`.
    fn acquire_at(
        &self,
        level: Level,
        deadline: Instant,
        cancelled: &AtomicBool,
    ) -> Result<(), NoSlot> {
        if self.holds()? {
            return Ok(());
        }
        self.slots
            .acquire(&self.owner, level, deadline, cancelled, &self.parked)?;
        self.hold()
    }

    /// The first slot of an execution that has no thread yet: `start` runs once this ticket
    /// holds a slot, on whichever thread grants it (here, if one is free). Until then the
    /// execution waits in turn (at [`Level::Fresh`]) as data: no thread, no runtime, and no task
    /// to wake when the slot comes — the thread that gives a slot back hands the work on
    /// itself. Dropping the returned [`InTurn`] before the grant withdraws the work.
    pub(crate) fn start_in_turn(self: &Arc<Self>, start: impl FnOnce() + Send + 'static) -> InTurn {
        let ticket = self.clone();
        let start: Start = Box::new(move || {
            if ticket.hold().is_ok() {
                start();
            }
        });
        let waiter = match self.slots.enqueue(&self.owner, Level::Fresh, Some(start)) {
            Ok(waiter) => Some(waiter),
            Err(start) => {
                if let Some(start) = start {
                    start();
                }
                None
            }
        };
        InTurn {
            slots: self.slots.clone(),
            owner: self.owner.clone(),
            waiter,
        }
    }

    /// Whether this ticket holds a slot; an error when it was retired.
    fn holds(&self) -> Result<bool, NoSlot> {
        match *self.lock() {
            TicketState::Holding(_) => Ok(true),
            TicketState::Retired | TicketState::RetiredHolding => Err(NoSlot::Retired),
            TicketState::Idle => Ok(false),
        }
    }

    /// Records the slot just granted, unless the ticket was retired while it waited: that slot
    /// is not its to keep.
    fn hold(&self) -> Result<(), NoSlot> {
        let mut state = self.lock();
        if *state == TicketState::Idle {
            *state = TicketState::Holding(Instant::now());
            return Ok(());
        }
        drop(state);
        self.slots.hand_on();
        Err(NoSlot::Retired)
    }

    /// Wakes this ticket's thread if it waits for a slot, so that it sees at once the
    /// cancellation flag its caller has just set.
    pub(crate) fn wake(&self) {
        let parked = self.parked.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(waiter) = parked.as_ref() {
            // Taking the waiter's lock orders this wake after its check of the flag.
            let _grant = waiter.lock();
            waiter.wake.notify_one();
        }
    }

    /// Gives the slot back (no-op when this ticket holds none).
    pub(crate) fn release(&self) {
        let mut state = self.lock();
        if let TicketState::Holding(_) = *state {
            *state = TicketState::Idle;
            drop(state);
            self.slots.hand_on();
        }
    }

    /// From the interrupt handler: after a [`QUANTUM`] with others waiting, goes to the back of
    /// the line, at the [`Level::Preempted`] level, and waits for its turn again.
    pub(crate) fn preempt(&self, deadline: Instant, cancelled: &AtomicBool) -> Result<(), NoSlot> {
        if self.slots.waiting() == 0 {
            return Ok(());
        }
        let TicketState::Holding(since) = *self.lock() else {
            return Ok(());
        };
        if since.elapsed() < QUANTUM {
            return Ok(());
        }
        self.release();
        self.acquire_at(Level::Preempted, deadline, cancelled)
    }

    /// The execution's caller gave up on it: a slot it holds is replaced at once, and it never
    /// takes one again. Returns whether it held one.
    pub(crate) fn retire(&self) -> bool {
        let mut state = self.lock();
        match *state {
            TicketState::Holding(_) => {
                *state = TicketState::RetiredHolding;
                drop(state);
                self.slots.stuck.fetch_add(1, Ordering::Relaxed);
                self.slots.hand_on();
                true
            }
            TicketState::Idle => {
                *state = TicketState::Retired;
                false
            }
            TicketState::Retired | TicketState::RetiredHolding => false,
        }
    }

    /// Whether the execution's caller gave up on it as stuck.
    pub(crate) fn is_retired(&self) -> bool {
        matches!(
            *self.lock(),
            TicketState::Retired | TicketState::RetiredHolding
        )
    }

    /// The thread is done with this ticket.
    pub(crate) fn finish(&self) {
        self.release();
        let mut state = self.lock();
        if *state == TicketState::RetiredHolding {
            *state = TicketState::Retired;
            self.slots.stuck.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests;
