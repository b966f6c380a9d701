//! What the auth middleware remembers of the API tokens between requests, so that a request
//! costs no store read: whether any token exists, and the tokens already resolved.
//!
//! Tokens are created and revoked by `toolsmith token`, which may be another process writing
//! the same store, so nothing here is told of a change: every answer is re-read from the store
//! once it is older than [`TOKEN_CACHE_TTL`]. A token created or revoked while the server runs
//! therefore takes effect within that time. A token's `last_used_at` is written at most once per
//! [`TOUCH_INTERVAL`].

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::Identity;

/// How long what was read of the tokens is trusted.
pub const TOKEN_CACHE_TTL: Duration = Duration::from_secs(1);
/// How often a token's `last_used_at` is written, at most.
pub const TOUCH_INTERVAL: Duration = Duration::from_secs(60);
/// Resolved tokens remembered at most; past this the cache starts over.
const MAX_RESOLVED: usize = 10_000;

/// The cache of one server (one [`crate::AppState`]).
#[derive(Default)]
pub struct TokenCache {
    tokens_exist: Mutex<Option<(Instant, bool)>>,
    resolved: Mutex<HashMap<String, Resolved>>,
}

struct Resolved {
    read_at: Instant,
    touched_at: Instant,
    token_id: String,
    identity: Identity,
}

/// A token found in the cache.
pub struct Cached {
    pub identity: Identity,
    /// The token's id when its `last_used_at` is due to be written.
    pub touch: Option<String>,
}

impl TokenCache {
    /// Whether tokens exist, if that was read less than [`TOKEN_CACHE_TTL`] ago.
    pub fn tokens_exist(&self, now: Instant) -> Option<bool> {
        let known = *self
            .tokens_exist
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        known.and_then(|(at, exist)| (now.duration_since(at) < TOKEN_CACHE_TTL).then_some(exist))
    }

    pub fn set_tokens_exist(&self, now: Instant, exist: bool) {
        *self
            .tokens_exist
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((now, exist));
    }

    /// The identity of the token with this hash, if it was resolved less than
    /// [`TOKEN_CACHE_TTL`] ago.
    pub fn get(&self, token_hash: &str, now: Instant) -> Option<Cached> {
        let mut resolved = self.resolved.lock().unwrap_or_else(PoisonError::into_inner);
        // An expired entry stays (for its `touched_at`) until it is read again or removed.
        let entry = resolved
            .get_mut(token_hash)
            .filter(|e| now.duration_since(e.read_at) < TOKEN_CACHE_TTL)?;
        let touch = (now.duration_since(entry.touched_at) >= TOUCH_INTERVAL).then(|| {
            entry.touched_at = now;
            entry.token_id.clone()
        });
        Some(Cached {
            identity: entry.identity.clone(),
            touch,
        })
    }

    /// Remembers a token just read from the store; whether its `last_used_at` is due to be
    /// written (first seen, or not written for [`TOUCH_INTERVAL`]).
    #[must_use]
    pub fn insert(
        &self,
        token_hash: String,
        token_id: String,
        identity: Identity,
        now: Instant,
    ) -> bool {
        let mut resolved = self.resolved.lock().unwrap_or_else(PoisonError::into_inner);
        if resolved.len() >= MAX_RESOLVED && !resolved.contains_key(&token_hash) {
            resolved.clear();
        }
        let recent_touch = resolved
            .get(&token_hash)
            .map(|e| e.touched_at)
            .filter(|at| now.duration_since(*at) < TOUCH_INTERVAL);
        resolved.insert(
            token_hash,
            Resolved {
                read_at: now,
                touched_at: recent_touch.unwrap_or(now),
                token_id,
                identity,
            },
        );
        recent_touch.is_none()
    }

    /// Forgets everything: a token created or revoked by this process takes effect at once.
    pub fn clear(&self) {
        *self
            .tokens_exist
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
        self.resolved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// Forgets a token that the store no longer has.
    pub fn remove(&self, token_hash: &str) {
        self.resolved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(token_hash);
    }
}

#[cfg(test)]
mod tests;
