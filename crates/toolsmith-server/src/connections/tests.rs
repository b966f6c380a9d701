//! The book of open connections: the cap, eviction of the longest-idle one, refusal when all
//! are busy, and idle expiry (on a paused clock).

use super::*;

fn book(max: usize) -> Arc<Book> {
    Arc::new(Book::new(max, Arc::default()))
}

#[test]
fn past_the_cap_the_longest_idle_connection_makes_room() {
    let book = book(2);
    let first = book.admit().expect("a free place");
    let second = book.admit().expect("a free place");
    first.state.last_active.store(5, Ordering::SeqCst);
    second.state.last_active.store(1, Ordering::SeqCst);
    let third = book.admit().expect("an idle connection makes room");
    assert!(
        second.state.evict.is_cancelled(),
        "the longest idle one is closed"
    );
    assert!(!first.state.evict.is_cancelled());
    assert_eq!(book.stats.evicted.load(Ordering::SeqCst), 1);
    assert_eq!(book.stats.open.load(Ordering::SeqCst), 2);
    // The evicted connection's place is not freed twice when its task ends.
    drop(second);
    assert_eq!(book.open.lock().unwrap().by_id.len(), 2);
    drop((first, third));
    assert!(book.open.lock().unwrap().by_id.is_empty());
}

#[test]
fn when_every_connection_is_busy_a_new_one_is_refused() {
    let book = book(1);
    let only = book.admit().unwrap();
    let busy = Busy::start(only.state.clone(), book.clone());
    assert!(book.admit().is_none());
    drop(busy);
    assert!(book.admit().is_some(), "idle again, so it makes room");
}

#[tokio::test(start_paused = true)]
async fn an_idle_connection_expires_and_a_busy_one_does_not() {
    let book = book(4);
    let slot = book.admit().unwrap();
    let busy = Busy::start(slot.state.clone(), book.clone());
    let idle = Duration::from_secs(60);
    let expired = idle_expired(&slot, idle);
    tokio::pin!(expired);
    assert!(
        tokio::time::timeout(Duration::from_secs(600), expired.as_mut())
            .await
            .is_err(),
        "a request in flight keeps it open"
    );
    drop(busy);
    tokio::time::timeout(idle + Duration::from_secs(1), expired)
        .await
        .expect("idle for the whole timeout: expired");
}

#[test]
fn past_the_cap_a_newer_waiting_connection_closes_the_oldest() {
    let overflow = Arc::new(Mutex::new(Overflow::default()));
    let places: Vec<OverflowPlace> = (0..OVERFLOW)
        .map(|_| OverflowPlace::take(&overflow))
        .collect();
    assert!(places.iter().all(|p| !p.closed.is_cancelled()));
    let newest = OverflowPlace::take(&overflow);
    assert!(places[0].closed.is_cancelled(), "the oldest makes room");
    assert!(places[1..].iter().all(|p| !p.closed.is_cancelled()));
    assert_eq!(overflow.lock().unwrap().waiting.len(), OVERFLOW);
    drop(places);
    drop(newest);
    assert!(overflow.lock().unwrap().waiting.is_empty());
}
