//! `subscriptions/listen` streams (2026-07-28) within bounds.
//!
//! A listen is one request whose answer is a stream that stays open until the client lets go,
//! holding a connection the whole time; 2025-11-25 sessions are capped ([`super::sessions`]),
//! and so are these: at most [`SessionLimits::max_listens_per_user`] open for one user and
//! [`SessionLimits::max_listens`] for all users together (never more than half of
//! `max_connections`, so listens alone cannot fill the connection cap). A listen past either
//! is answered at once with a JSON-RPC error naming the limit (`429` for the user's, `503`
//! with `Retry-After` for the total), and no stream is opened.
//!
//! [`ListenBook::open`] is asked before rmcp sees the request; the [`ListenPlace`] it gives is
//! held by the response body, so the place is free again the moment the stream ends or its
//! client goes away.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use super::sessions::{SessionLimits, SessionStats};

/// Every open listen stream of the server.
pub(crate) struct ListenBook {
    max_total: usize,
    max_per_user: usize,
    stats: Arc<SessionStats>,
    state: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    total: usize,
    per_user: HashMap<String, usize>,
}

/// Why a listen was not opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ListenRefused {
    PerUser { limit: usize },
    Total { limit: usize },
}

impl ListenBook {
    /// The book for `limits`, with the total kept at or below half of `max_connections`.
    pub(crate) fn new(
        limits: &SessionLimits,
        max_connections: usize,
        stats: Arc<SessionStats>,
    ) -> Arc<ListenBook> {
        Arc::new(ListenBook {
            max_total: limits.max_listens.min((max_connections / 2).max(1)).max(1),
            max_per_user: limits.max_listens_per_user.max(1),
            stats,
            state: Mutex::new(Open::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for one more listen of `user`, or why there is none.
    pub(crate) fn open(self: &Arc<Self>, user: &str) -> Result<ListenPlace, ListenRefused> {
        let mut open = self.lock();
        let mine = open.per_user.get(user).copied().unwrap_or(0);
        let refused = if mine >= self.max_per_user {
            Some(ListenRefused::PerUser {
                limit: self.max_per_user,
            })
        } else if open.total >= self.max_total {
            Some(ListenRefused::Total {
                limit: self.max_total,
            })
        } else {
            None
        };
        if let Some(refused) = refused {
            self.stats.listens_refused.fetch_add(1, Ordering::Relaxed);
            return Err(refused);
        }
        *open.per_user.entry(user.to_owned()).or_insert(0) += 1;
        open.total += 1;
        self.stats.listens_open.store(open.total, Ordering::Relaxed);
        Ok(ListenPlace {
            book: self.clone(),
            user: user.to_owned(),
        })
    }
}

/// One open listen's place; dropping it frees the place.
pub(crate) struct ListenPlace {
    book: Arc<ListenBook>,
    user: String,
}

impl Drop for ListenPlace {
    fn drop(&mut self) {
        let mut open = self.book.lock();
        if let Some(n) = open.per_user.get_mut(&self.user) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.per_user.remove(&self.user);
            }
        }
        open.total = open.total.saturating_sub(1);
        self.book
            .stats
            .listens_open
            .store(open.total, Ordering::Relaxed);
    }
}

impl ListenRefused {
    /// The answer to the refused listen request `id`.
    pub(crate) fn into_response(self, id: Value) -> Response {
        let (status, message) = match self {
            ListenRefused::PerUser { limit } => (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many subscriptions/listen streams for this user: {limit} are open, the \
                     limit (mcp_max_listens_per_user); one listen per client is enough — end an \
                     unused one before opening another"
                ),
            ),
            ListenRefused::Total { limit } => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "too many subscriptions/listen streams on this server: {limit} are open, the \
                     limit (mcp_max_listens, at most half of max_connections); retry later"
                ),
            ),
        };
        let mut response = super::body::error(status, id, message);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: usize, per_user: usize) -> SessionLimits {
        SessionLimits {
            max_listens: total,
            max_listens_per_user: per_user,
            ..SessionLimits::default()
        }
    }

    #[test]
    fn listens_are_capped_per_user_and_in_total_and_freed_when_dropped() {
        let stats = Arc::new(SessionStats::default());
        let book = ListenBook::new(&limits(3, 2), 10_000, stats.clone());
        let a1 = book.open("alice").unwrap();
        let _a2 = book.open("alice").unwrap();
        assert_eq!(
            book.open("alice").err(),
            Some(ListenRefused::PerUser { limit: 2 })
        );
        let _b1 = book.open("bob").unwrap();
        assert_eq!(
            book.open("carol").err(),
            Some(ListenRefused::Total { limit: 3 })
        );
        assert_eq!(stats.listens_open.load(Ordering::SeqCst), 3);
        assert_eq!(stats.listens_refused.load(Ordering::SeqCst), 2);
        drop(a1);
        assert!(book.open("carol").is_ok(), "a place was freed");
    }

    #[test]
    fn the_total_never_passes_half_the_connection_cap() {
        let book = ListenBook::new(&limits(1000, 1000), 10, Arc::default());
        let held: Vec<_> = (0..5)
            .map(|i| book.open(&format!("u{i}")).unwrap())
            .collect();
        assert_eq!(
            book.open("u9").err(),
            Some(ListenRefused::Total { limit: 5 })
        );
        drop(held);
    }
}
