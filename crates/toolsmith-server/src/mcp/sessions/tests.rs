//! The session book's accounting: per-user eviction of the least recently used session,
//! refusal past the total, open streams protecting a session, idle expiry on a paused clock.

use super::*;

fn book(max_sessions: usize, max_per_user: usize) -> SessionBook {
    SessionBook::new(
        SessionLimits {
            max_sessions,
            max_per_user,
            idle_timeout: Duration::from_secs(60),
            ..SessionLimits::default()
        },
        Arc::default(),
    )
}

fn add(book: &SessionBook, user: &str, id: &str) -> Option<SessionId> {
    let victim = book.reserve(user).expect("room");
    book.record(SessionId::from(id), user, user);
    victim
}

#[tokio::test]
async fn a_session_is_reached_only_by_its_person_in_its_scope() {
    let book = book(100, 10);
    book.reserve("alice").expect("room");
    book.record(SessionId::from("a1"), "alice", "org_00000000000000aa");
    assert!(book.started_as("a1", "alice", "org_00000000000000aa"));
    assert!(!book.started_as("a1", "alice", "alice"), "her own scope");
    assert!(
        !book.started_as("a1", "bob", "org_00000000000000aa"),
        "another member"
    );
    assert!(
        book.started_as("unknown", "bob", "bob"),
        "rmcp answers for those"
    );
}

#[tokio::test(start_paused = true)]
async fn past_the_per_user_cap_the_least_recently_used_session_goes() {
    let book = book(100, 2);
    assert_eq!(add(&book, "alice", "a1"), None);
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(add(&book, "alice", "a2"), None);
    tokio::time::advance(Duration::from_secs(1)).await;
    book.touch(&SessionId::from("a1"));
    assert_eq!(add(&book, "alice", "a3").as_deref(), Some("a2"));
    assert_eq!(
        add(&book, "bob", "b1"),
        None,
        "another user is not affected"
    );
    assert_eq!(book.stats.open.load(Ordering::SeqCst), 3);
    assert_eq!(book.stats.evicted.load(Ordering::SeqCst), 1);
}

/// On a paused clock every session is created and used in the same millisecond: the order of
/// uses still decides (CI once evicted a newer session than the oldest: ties in milliseconds).
#[tokio::test(start_paused = true)]
async fn within_one_millisecond_the_order_of_uses_decides_which_session_goes() {
    let book = book(100, 3);
    for id in ["a1", "a2", "a3"] {
        assert_eq!(add(&book, "alice", id), None);
    }
    book.touch(&SessionId::from("a1"));
    let mut evicted = Vec::new();
    for id in ["a4", "a5", "a6", "a7"] {
        evicted.push(add(&book, "alice", id).expect("one goes").to_string());
    }
    assert_eq!(evicted, ["a2", "a3", "a1", "a4"]);
}

#[tokio::test(start_paused = true)]
async fn sessions_with_open_streams_are_never_evicted() {
    let book = book(100, 1);
    add(&book, "alice", "a1");
    book.stream_opened(&SessionId::from("a1"));
    assert!(matches!(
        book.reserve("alice"),
        Err(SessionError::PerUser { limit: 1 })
    ));
    book.stream_closed(&SessionId::from("a1"));
    assert!(book.reserve("alice").is_ok());
}

#[tokio::test(start_paused = true)]
async fn past_the_total_new_sessions_are_refused() {
    let book = book(2, 10);
    add(&book, "a", "1");
    add(&book, "b", "2");
    assert!(matches!(
        book.reserve("c"),
        Err(SessionError::Total { open: 2, limit: 2 })
    ));
    book.forget(&SessionId::from("1"));
    assert!(book.reserve("c").is_ok());
}

#[tokio::test(start_paused = true)]
async fn unused_sessions_expire_and_free_their_place() {
    let book = book(10, 10);
    add(&book, "a", "idle");
    add(&book, "a", "listening");
    book.stream_opened(&SessionId::from("listening"));
    tokio::time::advance(Duration::from_secs(59)).await;
    assert!(book.take_expired().is_empty());
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(book.take_expired(), vec![SessionId::from("idle")]);
    assert_eq!(book.stats.open.load(Ordering::SeqCst), 1);
    assert!(book.lock().per_user.get("a") == Some(&1));
    book.forget(&SessionId::from("listening"));
    assert!(
        book.lock().per_user.is_empty(),
        "no entry per user is left behind"
    );
}
