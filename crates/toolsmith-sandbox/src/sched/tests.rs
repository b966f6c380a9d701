//! Unit tests of the CPU slots: the bound, round-robin across owners, giving up, and retired
//! tickets.

use std::sync::mpsc;
use std::thread;

use super::*;

fn far() -> Instant {
    Instant::now() + Duration::from_secs(30)
}

fn never() -> AtomicBool {
    AtomicBool::new(false)
}

/// Starts a thread that takes a slot for `ticket`, reports `name`, and releases it.
fn queued(
    ticket: Arc<Ticket>,
    name: &'static str,
    order: mpsc::Sender<&'static str>,
) -> thread::JoinHandle<()> {
    queued_at(Level::Fresh, ticket, name, order)
}

/// [`queued`], waiting at `level`.
fn queued_at(
    level: Level,
    ticket: Arc<Ticket>,
    name: &'static str,
    order: mpsc::Sender<&'static str>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        ticket.acquire_at(level, far(), &never()).expect("a slot");
        order.send(name).unwrap();
        ticket.release();
    })
}

/// Blocks until `n` waiters are queued.
fn until_waiting(slots: &CpuSlots, n: usize) {
    while slots.waiting() < n {
        thread::yield_now();
    }
}

#[test]
fn no_more_tickets_hold_a_slot_than_there_are_slots() {
    let slots = CpuSlots::new(2);
    let a = Ticket::new(slots.clone(), "a");
    let b = Ticket::new(slots.clone(), "a");
    let c = Ticket::new(slots.clone(), "a");
    a.acquire(far(), &never()).unwrap();
    b.acquire(far(), &never()).unwrap();
    let soon = Instant::now() + Duration::from_millis(50);
    assert_eq!(c.acquire(soon, &never()), Err(NoSlot::Deadline));
    assert_eq!(slots.waiting(), 0, "a waiter that gave up leaves the queue");
    a.release();
    c.acquire(far(), &never()).unwrap();
    // Acquiring twice is one slot; releasing twice frees one.
    c.acquire(far(), &never()).unwrap();
    c.release();
    c.release();
    b.release();
    assert_eq!(slots.lock().free, 2);
}

/// With one slot held, queues one waiter per `(level, owner, name)`, in this order, then frees the
/// slot and returns the names in the order the waiters were served.
fn served_in_turn(waiters: &[(Level, &'static str, &'static str)]) -> Vec<&'static str> {
    let slots = CpuSlots::new(1);
    let holder = Ticket::new(slots.clone(), "holder");
    holder.acquire(far(), &never()).unwrap();
    let (order, served) = mpsc::channel();
    let mut handles = Vec::new();
    for (n, &(level, owner, name)) in waiters.iter().enumerate() {
        let ticket = Ticket::new(slots.clone(), owner);
        handles.push(queued_at(level, ticket, name, order.clone()));
        until_waiting(&slots, n + 1);
    }
    holder.release();
    for handle in handles {
        handle.join().unwrap();
    }
    served.try_iter().collect()
}

#[test]
fn a_freed_slot_goes_to_the_next_owner_in_turn() {
    // The busy user queues three, then another user queues one.
    let seen = served_in_turn(&[
        (Level::Fresh, "busy-user", "busy 1"),
        (Level::Fresh, "busy-user", "busy 2"),
        (Level::Fresh, "busy-user", "busy 3"),
        (Level::Fresh, "quick-user", "quick"),
    ]);
    assert_eq!(
        seen,
        ["busy 1", "quick", "busy 2", "busy 3"],
        "the quick user is served before the busy user's second"
    );
}

#[test]
fn a_fresh_waiter_goes_before_its_owners_preempted_ones_and_owners_keep_their_turns() {
    // Two busy loops were preempted; then a trivial call of the same user starts; another
    // user has a preempted loop, and then a flood of fresh calls.
    let seen = served_in_turn(&[
        (Level::Preempted, "busy-user", "busy 1"),
        (Level::Preempted, "busy-user", "busy 2"),
        (Level::Fresh, "busy-user", "trivial"),
        (Level::Preempted, "other-user", "other busy"),
        (Level::Fresh, "flood-user", "flood 1"),
        (Level::Fresh, "flood-user", "flood 2"),
    ]);
    assert_eq!(
        seen,
        [
            "trivial",
            "other busy",
            "flood 1",
            "busy 1",
            "flood 2",
            "busy 2"
        ],
        "within an owner the fresh call goes first; across owners, turns are kept"
    );
}

#[test]
fn a_script_back_from_a_host_call_goes_before_its_owners_new_and_preempted_ones() {
    // A burst: new calls queue, one is preempted, then two come back from their fetch; another
    // user has one new call.
    let seen = served_in_turn(&[
        (Level::Fresh, "user", "new 1"),
        (Level::Fresh, "user", "new 2"),
        (Level::Preempted, "user", "busy"),
        (Level::Resumed, "user", "back 1"),
        (Level::Fresh, "other", "other new"),
        (Level::Resumed, "user", "back 2"),
    ]);
    assert_eq!(
        seen,
        ["back 1", "other new", "back 2", "new 1", "new 2", "busy"],
        "within an owner: resumed, then new, then preempted; across owners, turns are kept"
    );
}

#[test]
fn a_cancelled_waiter_stops_waiting() {
    let slots = CpuSlots::new(1);
    let holder = Ticket::new(slots.clone(), "a");
    holder.acquire(far(), &never()).unwrap();
    let cancelled = Arc::new(AtomicBool::new(false));
    let waiter = Ticket::new(slots.clone(), "b");
    let handle = {
        let cancelled = cancelled.clone();
        let waiter = waiter.clone();
        thread::spawn(move || waiter.acquire(far(), &cancelled))
    };
    until_waiting(&slots, 1);
    cancelled.store(true, Ordering::SeqCst);
    waiter.wake();
    assert_eq!(handle.join().unwrap(), Err(NoSlot::Cancelled));
    assert_eq!(slots.waiting(), 0);
}

#[test]
fn preempting_hands_the_slot_to_a_waiter_only_after_a_quantum() {
    let slots = CpuSlots::new(1);
    let runner = Ticket::new(slots.clone(), "a");
    runner.acquire(far(), &never()).unwrap();
    // Nobody waits: preempting keeps the slot.
    runner.preempt(far(), &never()).unwrap();
    let (order, served) = mpsc::channel();
    let handle = queued(Ticket::new(slots.clone(), "b"), "b", order);
    until_waiting(&slots, 1);
    // Within its quantum the runner keeps the slot even though someone waits.
    let state = *runner.lock();
    if let TicketState::Holding(since) = state
        && since.elapsed() < QUANTUM
    {
        runner.preempt(far(), &never()).unwrap();
        assert!(served.try_recv().is_err());
    }
    thread::sleep(QUANTUM);
    // After it, the waiter runs first and the runner gets its slot back afterwards.
    runner.preempt(far(), &never()).unwrap();
    assert_eq!(served.try_recv(), Ok("b"));
    handle.join().unwrap();
    let state = *runner.lock();
    assert!(matches!(state, TicketState::Holding(_)));
}

#[test]
fn a_retired_ticket_is_replaced_and_never_frees_twice() {
    let slots = CpuSlots::new(1);
    let stuck = Ticket::new(slots.clone(), "a");
    stuck.acquire(far(), &never()).unwrap();
    let next = Ticket::new(slots.clone(), "b");
    assert!(stuck.retire());
    assert_eq!(slots.stuck(), 1);
    // The replacement slot is there at once.
    next.acquire(far(), &never()).unwrap();
    // The stuck thread finishes later: nothing is freed twice, it takes nothing again.
    stuck.finish();
    assert_eq!(slots.stuck(), 0);
    assert!(stuck.is_retired());
    assert_eq!(stuck.acquire(far(), &never()), Err(NoSlot::Retired));
    next.release();
    assert_eq!(slots.lock().free, 1);
}

#[test]
fn work_waits_for_its_first_slot_in_turn_and_is_dropped_unstarted_when_withdrawn() {
    let slots = CpuSlots::new(1);
    let holder = Ticket::new(slots.clone(), "a");
    holder.acquire(far(), &never()).unwrap();
    let (started, starts) = mpsc::channel();

    // Withdrawn (or dropped) before the grant: never started, the work itself dropped, and
    // the queue left.
    let withdrawn = Ticket::new(slots.clone(), "b");
    let mut in_turn = withdrawn.start_in_turn({
        let started = started.clone();
        move || started.send("b").unwrap()
    });
    assert_eq!(slots.waiting(), 1);
    assert!(in_turn.withdraw());
    assert!(!in_turn.withdraw(), "withdrawing twice withdraws once");
    let (witness, gone) = mpsc::channel::<()>();
    let dropped = Ticket::new(slots.clone(), "c");
    drop(dropped.start_in_turn(move || witness.send(()).unwrap()));
    assert_eq!(
        gone.recv(),
        Err(mpsc::RecvError),
        "the dropped work was dropped unstarted"
    );
    assert_eq!(slots.waiting(), 0);

    // Queued behind the holder: started by the thread that gives the slot back, holding it.
    let next = Ticket::new(slots.clone(), "d");
    let mut in_turn = next.start_in_turn({
        let started = started.clone();
        move || started.send("d").unwrap()
    });
    assert_eq!(starts.try_recv(), Err(mpsc::TryRecvError::Empty));
    holder.release();
    assert_eq!(starts.try_recv(), Ok("d"));
    assert!(matches!(*next.lock(), TicketState::Holding(_)));
    assert!(!in_turn.withdraw(), "granted work cannot be withdrawn");

    // A free slot: started at once, here.
    next.release();
    let free = Ticket::new(slots.clone(), "e");
    let _in_turn = free.start_in_turn(move || started.send("e").unwrap());
    assert_eq!(starts.try_recv(), Ok("e"));
    free.release();
    assert_eq!(slots.lock().free, 1);
    assert_eq!(starts.try_recv(), Err(mpsc::TryRecvError::Disconnected));
}

#[test]
fn withdrawing_while_the_slot_is_handed_over_neither_loses_the_slot_nor_starts_twice() {
    let slots = CpuSlots::new(1);
    let (mut started, mut withdrawn) = (0, 0);
    for _ in 0..500 {
        let holder = Ticket::new(slots.clone(), "a");
        holder.acquire(far(), &never()).unwrap();
        let ticket = Ticket::new(slots.clone(), "b");
        let (ran, runs) = mpsc::channel();
        let mut in_turn = ticket.start_in_turn({
            let ticket = ticket.clone();
            move || {
                ran.send(()).unwrap();
                ticket.release();
            }
        });
        let releaser = thread::spawn(move || holder.release());
        if in_turn.withdraw() {
            withdrawn += 1;
        }
        releaser.join().unwrap();
        match runs.try_recv() {
            Ok(()) => started += 1,
            Err(_) => assert!(ticket.holds() == Ok(false)),
        }
        assert_eq!(slots.lock().free, 1, "the slot came back");
        assert_eq!(slots.waiting(), 0);
    }
    assert_eq!(
        started + withdrawn,
        500,
        "each was started or withdrawn, never both"
    );
}
