use std::time::{Duration, Instant};

use super::*;

fn identity(user: &str) -> Identity {
    Identity {
        user_id: user.to_owned(),
        agent_id: None,
        agent_from_header: false,
        scopes: Vec::new(),
        read_only: false,
        member: None,
        organization: None,
    }
}

#[test]
fn whether_tokens_exist_is_trusted_for_the_ttl_only() {
    let cache = TokenCache::default();
    let t0 = Instant::now();
    assert_eq!(cache.tokens_exist(t0), None, "nothing read yet");
    cache.set_tokens_exist(t0, false);
    assert_eq!(cache.tokens_exist(t0 + TOKEN_CACHE_TTL / 2), Some(false));
    assert_eq!(
        cache.tokens_exist(t0 + TOKEN_CACHE_TTL),
        None,
        "read again once the ttl is over"
    );
}

#[test]
fn a_resolved_token_is_trusted_for_the_ttl_only() {
    let cache = TokenCache::default();
    let t0 = Instant::now();
    assert!(cache.insert("h1".into(), "tok_1".into(), identity("alice"), t0));
    let hit = cache.get("h1", t0 + Duration::from_millis(10)).unwrap();
    assert_eq!(hit.identity.user_id, "alice");
    assert!(cache.get("h2", t0).is_none(), "another token is not known");
    assert!(
        cache.get("h1", t0 + TOKEN_CACHE_TTL).is_none(),
        "a revoked token stops working within the ttl"
    );
}

#[test]
fn last_use_is_written_once_per_interval() {
    let cache = TokenCache::default();
    let t0 = Instant::now();
    assert!(
        cache.insert("h1".into(), "tok_1".into(), identity("alice"), t0),
        "first seen: due"
    );
    assert_eq!(cache.get("h1", t0).unwrap().touch, None);
    // Read again from the store after the ttl, within the interval: not due.
    let t1 = t0 + TOKEN_CACHE_TTL * 2;
    assert!(!cache.insert("h1".into(), "tok_1".into(), identity("alice"), t1));
    // Past the interval, the next hit carries the touch, once.
    let t2 = t0 + TOUCH_INTERVAL;
    assert!(!cache.insert(
        "h1".into(),
        "tok_1".into(),
        identity("alice"),
        t2 - Duration::from_millis(1)
    ));
    assert_eq!(cache.get("h1", t2).unwrap().touch.as_deref(), Some("tok_1"));
    assert_eq!(cache.get("h1", t2).unwrap().touch, None, "not twice");
}

#[test]
fn removed_tokens_are_forgotten() {
    let cache = TokenCache::default();
    let t0 = Instant::now();
    let _ = cache.insert("h1".into(), "tok_1".into(), identity("alice"), t0);
    cache.remove("h1");
    assert!(cache.get("h1", t0).is_none());
}
