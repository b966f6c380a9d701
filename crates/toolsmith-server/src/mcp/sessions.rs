//! MCP sessions (2025-11-25 clients, `Mcp-Session-Id`) within bounds.
//!
//! rmcp's `LocalSessionManager` keeps every session until its client deletes it or its worker
//! times out, and anyone may open as many as they like: 20,000 `initialize` calls held 1.3 GB.
//! [`SessionBook`] wraps it:
//! - at most [`SessionLimits::max_per_user`] sessions per user: a new one past that takes the
//!   place of that user's least recently used session (closed), unless all of them have a
//!   stream open, in which case the new one is refused;
//! - at most [`SessionLimits::max_sessions`] in total: past that a new session is refused (503,
//!   `Retry-After`), so one user cannot crowd out the others;
//! - a session with no open stream and no request for [`SessionLimits::idle_timeout`] is
//!   closed by [`reap`], which frees its worker, its handler and its place in rmcp's map.
//!
//! Each request gets a [`Gate`]: the shared book plus the caller's user, which is how the
//! per-user count knows whom a new session belongs to. 2026-07-28 requests are stateless and
//! never reach this module.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt as _};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionManager};
use tokio_util::sync::CancellationToken;

/// How many MCP sessions may exist, and for how long an unused one is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Most sessions open at once, all users together (default 10,000).
    pub max_sessions: usize,
    /// Most sessions open at once for one user (default 100).
    pub max_per_user: usize,
    /// A session with no open stream and no request for this long is closed (default 10 min).
    pub idle_timeout: Duration,
    /// Most `subscriptions/listen` streams (2026-07-28) open at once, all users together
    /// (default 1,000; never more than half of `max_connections`; `super::listens`).
    pub max_listens: usize,
    /// Most `subscriptions/listen` streams open at once for one user (default 100).
    pub max_listens_per_user: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            max_sessions: 10_000,
            max_per_user: 100,
            idle_timeout: Duration::from_secs(600),
            max_listens: 1000,
            max_listens_per_user: 100,
        }
    }
}

/// Counts for `/metrics`.
#[derive(Debug, Default)]
pub struct SessionStats {
    pub open: AtomicUsize,
    /// Closed to make room for a newer session of the same user.
    pub evicted: AtomicU64,
    /// Refused: the user's sessions all had open streams, or the total was reached.
    pub refused: AtomicU64,
    /// Closed after `idle_timeout` unused.
    pub expired: AtomicU64,
    /// `subscriptions/listen` streams open now.
    pub listens_open: AtomicUsize,
    /// `subscriptions/listen` requests refused by `max_listens` or `max_listens_per_user`.
    pub listens_refused: AtomicU64,
    /// Sessions created so far.
    pub created: AtomicU64,
    /// `/mcp` requests whose bearer token was accepted, and those refused by authentication
    /// (dynamic-mcp's auth counters in compat mode's `/metrics`).
    pub auth_success: AtomicU64,
    pub auth_denied: AtomicU64,
}

/// Why a session was not created.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(
        "too many MCP sessions: {open} are open, the limit is {limit} (mcp_max_sessions); close unused sessions (HTTP DELETE with Mcp-Session-Id) or retry later"
    )]
    Total { open: usize, limit: usize },
    #[error(
        "too many MCP sessions for this user: all {limit} (mcp_max_sessions_per_user) have an open stream; close unused sessions (HTTP DELETE with Mcp-Session-Id)"
    )]
    PerUser { limit: usize },
    #[error(transparent)]
    Inner(#[from] LocalSessionManagerError),
}

/// Every session of the server, over rmcp's session manager.
pub(crate) struct SessionBook {
    inner: LocalSessionManager,
    limits: SessionLimits,
    stats: Arc<SessionStats>,
    epoch: tokio::time::Instant,
    state: Mutex<BookState>,
}

#[derive(Default)]
struct BookState {
    sessions: HashMap<SessionId, Entry>,
    /// Sessions per user, including those being created.
    per_user: HashMap<String, usize>,
    /// All sessions, including those being created.
    total: usize,
    /// Counts every use of every session: the order of uses, which milliseconds cannot give
    /// (several sessions can be created or used within one).
    uses: u64,
}

impl BookState {
    /// The next use's place in the order of uses.
    fn next_use(&mut self) -> u64 {
        self.uses += 1;
        self.uses
    }
}

struct Entry {
    user: String,
    /// The owner scope the session acts in: the user, or the organisation it was started in
    /// (`X-Toolsmith-Organization`). A request in another scope does not reach it.
    scope: String,
    last_active_ms: u64,
    /// When it was last used, in the order of uses (the least recently used goes first).
    last_use: u64,
    open_streams: usize,
}

impl SessionBook {
    pub(crate) fn new(limits: SessionLimits, stats: Arc<SessionStats>) -> SessionBook {
        let mut inner = LocalSessionManager::default();
        // Idle sessions are closed here (an open stream counts as use); rmcp's own timer
        // would also cut a session whose client only listens on its GET stream.
        inner.session_config.keep_alive = None;
        SessionBook {
            inner,
            limits,
            stats,
            epoch: tokio::time::Instant::now(),
            state: Mutex::new(BookState::default()),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BookState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserves a place for a new session of `user`; returns the session to close first (the
    /// user's least recently used one) when the user is at the limit.
    fn reserve(&self, user: &str) -> Result<Option<SessionId>, SessionError> {
        let mut state = self.lock();
        let mine = state.per_user.get(user).copied().unwrap_or(0);
        let mut victim = None;
        if mine >= self.limits.max_per_user {
            let lru = state
                .sessions
                .iter()
                .filter(|(_, e)| e.user == user && e.open_streams == 0)
                .min_by_key(|(_, e)| e.last_use)
                .map(|(id, _)| id.clone());
            let Some(id) = lru else {
                self.stats.refused.fetch_add(1, Ordering::Relaxed);
                return Err(SessionError::PerUser {
                    limit: self.limits.max_per_user,
                });
            };
            forget_locked(&mut state, &id);
            self.stats.evicted.fetch_add(1, Ordering::Relaxed);
            victim = Some(id);
        } else if state.total >= self.limits.max_sessions {
            self.stats.refused.fetch_add(1, Ordering::Relaxed);
            return Err(SessionError::Total {
                open: state.total,
                limit: self.limits.max_sessions,
            });
        }
        *state.per_user.entry(user.to_owned()).or_insert(0) += 1;
        state.total += 1;
        self.stats.open.store(state.total, Ordering::Relaxed);
        Ok(victim)
    }

    fn unreserve(&self, user: &str) {
        let mut state = self.lock();
        release_locked(&mut state, user);
        self.stats.open.store(state.total, Ordering::Relaxed);
    }

    fn record(&self, id: SessionId, user: &str, scope: &str) {
        self.stats.created.fetch_add(1, Ordering::Relaxed);
        let now = self.now_ms();
        let mut state = self.lock();
        let last_use = state.next_use();
        state.sessions.insert(
            id,
            Entry {
                user: user.to_owned(),
                scope: scope.to_owned(),
                last_active_ms: now,
                last_use,
                open_streams: 0,
            },
        );
    }

    fn touch(&self, id: &SessionId) {
        self.used(id, |_| {});
    }

    fn stream_opened(&self, id: &SessionId) {
        self.used(id, |entry| entry.open_streams += 1);
    }

    fn stream_closed(&self, id: &SessionId) {
        self.used(id, |entry| {
            entry.open_streams = entry.open_streams.saturating_sub(1);
        });
    }

    /// Records a use of session `id` (if it is still in the book), after `change`.
    fn used(&self, id: &SessionId, change: impl FnOnce(&mut Entry)) {
        let now = self.now_ms();
        let mut state = self.lock();
        let last_use = state.next_use();
        if let Some(entry) = state.sessions.get_mut(id) {
            change(entry);
            entry.last_active_ms = now;
            entry.last_use = last_use;
        }
    }

    /// Drops a closed session from the book (its place is free again).
    /// Whether this instance has the session `id` (another instance's, or a closed one, it
    /// has not).
    /// Whether session `id` was started by `user` in `scope` (true for a session this book
    /// does not hold: rmcp answers for those). A session keeps the scope it was started in, so
    /// a request of the same person without the organisation header (or naming another) must
    /// not act through it in the organisation — after the person left it, say.
    pub(crate) fn started_as(&self, id: &str, user: &str, scope: &str) -> bool {
        self.lock()
            .sessions
            .get(id)
            .is_none_or(|entry| entry.user == user && entry.scope == scope)
    }

    pub(crate) async fn knows(&self, id: &str) -> bool {
        self.inner
            .has_session(&SessionId::from(id.to_owned()))
            .await
            .unwrap_or(false)
    }

    fn forget(&self, id: &SessionId) {
        let mut state = self.lock();
        forget_locked(&mut state, id);
        self.stats.open.store(state.total, Ordering::Relaxed);
    }

    /// The sessions unused for the idle timeout, removed from the book.
    fn take_expired(&self) -> Vec<SessionId> {
        let now = self.now_ms();
        let idle = u64::try_from(self.limits.idle_timeout.as_millis()).unwrap_or(u64::MAX);
        let mut state = self.lock();
        let expired: Vec<SessionId> = state
            .sessions
            .iter()
            .filter(|(_, e)| e.open_streams == 0 && now.saturating_sub(e.last_active_ms) >= idle)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            forget_locked(&mut state, id);
        }
        self.stats.open.store(state.total, Ordering::Relaxed);
        expired
    }

    async fn close_quietly(&self, id: &SessionId) {
        if let Err(e) = self.inner.close_session(id).await {
            tracing::debug!(error = %e, "closing an MCP session failed");
        }
    }
}

fn forget_locked(state: &mut BookState, id: &SessionId) {
    if let Some(entry) = state.sessions.remove(id) {
        release_locked(state, &entry.user);
    }
}

fn release_locked(state: &mut BookState, user: &str) {
    if let Some(n) = state.per_user.get_mut(user) {
        *n = n.saturating_sub(1);
        if *n == 0 {
            state.per_user.remove(user);
        }
    }
    state.total = state.total.saturating_sub(1);
}

/// Closes sessions unused for the idle timeout, until `stop` is cancelled or the book is gone.
pub(crate) async fn reap(book: std::sync::Weak<SessionBook>, stop: CancellationToken) {
    let Some(period) = book.upgrade().map(|b| {
        (b.limits.idle_timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(30))
    }) else {
        return;
    };
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(period) => {}
        }
        let Some(book) = book.upgrade() else { return };
        for id in book.take_expired() {
            book.stats.expired.fetch_add(1, Ordering::Relaxed);
            book.close_quietly(&id).await;
        }
    }
}

/// The session manager of one request: the book, and the user a new session belongs to (the
/// person) and the scope it acts in.
pub(crate) struct Gate {
    book: Arc<SessionBook>,
    user: String,
    scope: String,
    /// Set when this request's `initialize` was refused by a limit (the answer becomes 503).
    pub(crate) refused: AtomicBool,
}

impl Gate {
    pub(crate) fn new(book: Arc<SessionBook>, user: &str, scope: &str) -> Gate {
        Gate {
            book,
            user: user.to_owned(),
            scope: scope.to_owned(),
            refused: AtomicBool::new(false),
        }
    }

    /// `stream`, counted as open on session `id` until it is dropped.
    fn counted<S>(
        &self,
        id: &SessionId,
        stream: S,
    ) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static
    where
        S: Stream<Item = ServerSseMessage> + Send + Sync + 'static,
    {
        self.book.stream_opened(id);
        let guard = StreamGuard {
            book: self.book.clone(),
            id: id.clone(),
        };
        stream.map(move |message| {
            let _guard = &guard;
            message
        })
    }
}

struct StreamGuard {
    book: Arc<SessionBook>,
    id: SessionId,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.book.stream_closed(&self.id);
    }
}

impl SessionManager for Gate {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let victim = self.book.reserve(&self.user).inspect_err(|_| {
            self.refused.store(true, Ordering::SeqCst);
        })?;
        if let Some(id) = victim {
            self.book.close_quietly(&id).await;
        }
        match self.book.inner.create_session().await {
            Ok((id, transport)) => {
                self.book.record(id.clone(), &self.user, &self.scope);
                Ok((id, transport))
            }
            Err(e) => {
                self.book.unreserve(&self.user);
                Err(e.into())
            }
        }
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.book.touch(id);
        Ok(self.book.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.book.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.book.forget(id);
        Ok(self.book.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.book.inner.create_stream(id, message).await?;
        Ok(self.counted(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.book.touch(id);
        Ok(self.book.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.book.inner.create_standalone_stream(id).await?;
        Ok(self.counted(id, stream))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.book.inner.resume(id, last_event_id).await?;
        Ok(self.counted(id, stream))
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // No external session store: an unknown session is a 404, never re-created outside
        // the limits.
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests;
