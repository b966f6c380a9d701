//! Accepting HTTP connections so that idle or slow ones cannot take the server down.
//!
//! [`serve_connections`] is the accept loop of [`crate::app::serve`] (hyper's connection API,
//! HTTP/1.1 and h2c):
//! - at most [`ConnectionLimits::max_connections`] connections are open at once. A connection
//!   past the cap takes the place of the one idle the longest (no request in flight, no
//!   response streaming). So a flood of connections that never finish a request cannot exhaust
//!   file descriptors, and a new client still gets in;
//! - when every open connection is busy, a new one is served one request outside the cap
//!   ([`serve_overflow`]): a health probe (`/livez`, `/readyz`) is answered, anything else gets
//!   a 503 naming the limit. At most [`OVERFLOW`] such connections wait for their request at
//!   once, each for at most [`OVERFLOW_HEADER_TIMEOUT`], and a newer one closes the oldest: so
//!   busy streams (MCP, listens) or a flood of silent connections never keep a probe out;
//! - a request's headers must arrive within [`ConnectionLimits::header_read_timeout`] (hyper's
//!   HTTP/1 header timer, which also bounds how long a kept-alive connection waits for its next
//!   request);
//! - a connection with nothing in flight for [`ConnectionLimits::idle_timeout`] is closed
//!   (both protocols; an open SSE stream is in flight, so MCP streams are not cut).
//!
//! On shutdown the loop stops accepting, asks every connection to finish gracefully, and
//! returns when the last one has closed (the caller bounds the wait).

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

/// Most connections past the cap, while every open one is busy, waiting at once for the one
/// request they are served ([`serve_overflow`]).
pub const OVERFLOW: usize = 32;

/// How long a connection past the cap may take to send its request's headers.
pub const OVERFLOW_HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// Paths answered on a connection past the cap: they hold no data and must always answer.
const PROBES: [&str; 2] = ["/livez", "/readyz"];

/// The limits of [`serve_connections`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Most connections open at once (at least 1).
    pub max_connections: usize,
    /// Longest a client may take to send a request's headers, and an HTTP/1.1 connection may
    /// wait for its next request.
    pub header_read_timeout: Duration,
    /// A connection with no request in flight for this long is closed.
    pub idle_timeout: Duration,
}

/// Connections open now and what happened to the others, for `/metrics`.
#[derive(Debug, Default)]
pub struct ConnectionStats {
    pub open: AtomicUsize,
    /// Idle connections closed to make room for a new one.
    pub evicted: AtomicU64,
    /// Connections refused because every open one was busy.
    pub refused: AtomicU64,
    /// Connections closed after `idle_timeout` with nothing in flight.
    pub idle_closed: AtomicU64,
}

/// Serves `app` on `listener` until `stop` is cancelled and every connection has closed.
pub async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    stats: Arc<ConnectionStats>,
    stop: CancellationToken,
) {
    let book = Arc::new(Book::new(limits.max_connections.max(1), stats));
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    builder.http2().timer(TokioTimer::new());
    let builder = Arc::new(builder);
    let overflow = Arc::new(Mutex::new(Overflow::default()));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                // Out of file descriptors (EMFILE/ENFILE) or a connection reset before it was
                // accepted: wait a moment instead of spinning, then go on.
                tracing::warn!(error = %e, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY on an accepted connection");
        }
        match book.admit() {
            Some(slot) => {
                tokio::spawn(serve_one(
                    tcp,
                    slot,
                    app.clone(),
                    builder.clone(),
                    limits.idle_timeout,
                    stop.clone(),
                ));
            }
            None => {
                let place = OverflowPlace::take(&overflow);
                tokio::spawn(serve_overflow(
                    tcp,
                    place,
                    app.clone(),
                    book.stats.clone(),
                    stop.clone(),
                ));
            }
        }
    }
    book.wait_until_empty().await;
}

/// Serves one request of a connection past the cap (every open one busy): a health probe is
/// answered by the app, anything else gets a 503 naming the limit; then the connection closes.
async fn serve_overflow(
    tcp: TcpStream,
    place: OverflowPlace,
    app: Router,
    stats: Arc<ConnectionStats>,
    stop: CancellationToken,
) {
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let app = app.clone();
        let stats = stats.clone();
        async move {
            if PROBES.contains(&request.uri().path()) {
                let response = app
                    .oneshot(request.map(Body::new))
                    .await
                    .unwrap_or_else(|never| match never {});
                return Ok::<_, Infallible>(response);
            }
            stats.refused.fetch_add(1, Ordering::Relaxed);
            Ok(too_many_connections())
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(OVERFLOW_HEADER_TIMEOUT)
        .keep_alive(false);
    let conn = builder.serve_connection(TokioIo::new(tcp), service);
    tokio::select! {
        res = conn => {
            if let Err(e) = res {
                tracing::debug!(error = %e, "a connection past the cap ended with an error");
            }
        }
        () = place.closed.cancelled() => {}
        () = stop.cancelled() => {}
    }
}

/// The 503 of a request on a connection past the cap.
fn too_many_connections() -> axum::response::Response {
    let body = r#"{"success":false,"error":{"code":"too_many_connections","message":"the server is at its connection limit (max_connections) and every connection is busy; retry in a second"}}"#;
    let mut response = axum::response::Response::new(Body::from(body));
    *response.status_mut() = axum::http::StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    use axum::http::{HeaderValue, header};
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The connections past the cap waiting for their request, oldest first.
#[derive(Default)]
struct Overflow {
    next_id: u64,
    waiting: std::collections::VecDeque<(u64, CancellationToken)>,
}

/// A connection's place among those past the cap; dropping it frees the place.
struct OverflowPlace {
    id: u64,
    /// Cancelled when a newer connection needs the place.
    closed: CancellationToken,
    overflow: Arc<Mutex<Overflow>>,
}

impl OverflowPlace {
    /// A place for a new connection past the cap, closing the oldest one when all are taken.
    fn take(overflow: &Arc<Mutex<Overflow>>) -> OverflowPlace {
        let mut o = overflow.lock().unwrap_or_else(PoisonError::into_inner);
        if o.waiting.len() >= OVERFLOW
            && let Some((_, oldest)) = o.waiting.pop_front()
        {
            oldest.cancel();
        }
        let id = o.next_id;
        o.next_id += 1;
        let closed = CancellationToken::new();
        o.waiting.push_back((id, closed.clone()));
        OverflowPlace {
            id,
            closed,
            overflow: overflow.clone(),
        }
    }
}

impl Drop for OverflowPlace {
    fn drop(&mut self) {
        let mut o = self.overflow.lock().unwrap_or_else(PoisonError::into_inner);
        o.waiting.retain(|(id, _)| *id != self.id);
    }
}

async fn serve_one(
    tcp: TcpStream,
    slot: Slot,
    app: Router,
    builder: Arc<auto::Builder<TokioExecutor>>,
    idle_timeout: Duration,
    stop: CancellationToken,
) {
    let conn_state = slot.state.clone();
    let book = slot.book.clone();
    let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        let busy = Busy::start(conn_state.clone(), book.clone());
        let app = app.clone();
        async move {
            let response = app
                .oneshot(request.map(Body::new))
                .await
                .unwrap_or_else(|never| match never {});
            // The request stays in flight until its response body is done or dropped (an SSE
            // stream stays in flight while it is open).
            Ok::<_, Infallible>(response.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    let _busy = &busy;
                    frame
                }))
            }))
        }
    });
    let conn = builder.serve_connection(TokioIo::new(tcp), service);
    let mut conn = std::pin::pin!(conn);
    let mut draining = false;
    loop {
        tokio::select! {
            res = conn.as_mut() => {
                if let Err(e) = res {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                break;
            }
            () = slot.state.evict.cancelled() => break,
            () = idle_expired(&slot, idle_timeout) => {
                slot.book.stats.idle_closed.fetch_add(1, Ordering::Relaxed);
                break;
            }
            () = stop.cancelled(), if !draining => {
                conn.as_mut().graceful_shutdown();
                draining = true;
            }
        }
    }
}

/// Completes once `slot` has had nothing in flight for `idle`.
async fn idle_expired(slot: &Slot, idle: Duration) {
    loop {
        let wait = if slot.state.in_flight.load(Ordering::SeqCst) > 0 {
            idle
        } else {
            let since = slot.book.elapsed().saturating_sub(Duration::from_millis(
                slot.state.last_active.load(Ordering::SeqCst),
            ));
            if since >= idle {
                return;
            }
            idle - since
        };
        tokio::time::sleep(wait).await;
    }
}

/// The open connections.
struct Book {
    max: usize,
    epoch: tokio::time::Instant,
    stats: Arc<ConnectionStats>,
    open: Mutex<Open>,
    emptied: Notify,
}

#[derive(Default)]
struct Open {
    next_id: u64,
    by_id: HashMap<u64, Arc<ConnState>>,
}

/// One connection as the book sees it.
struct ConnState {
    id: u64,
    in_flight: AtomicUsize,
    /// Milliseconds since the book's epoch when the last request ended (or it connected).
    last_active: AtomicU64,
    /// Cancelled to close the connection at once (it was idle and its place is needed).
    evict: CancellationToken,
}

/// A connection's place in the book; dropping it frees the place.
struct Slot {
    state: Arc<ConnState>,
    book: Arc<Book>,
}

impl Book {
    fn new(max: usize, stats: Arc<ConnectionStats>) -> Book {
        Book {
            max,
            epoch: tokio::time::Instant::now(),
            stats,
            open: Mutex::new(Open::default()),
            emptied: Notify::new(),
        }
    }

    fn elapsed(&self) -> Duration {
        self.epoch.elapsed()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A place for a new connection: a free one, or the place of the connection idle the
    /// longest (which is closed). `None` when all are busy.
    fn admit(self: &Arc<Book>) -> Option<Slot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.by_id.len() >= self.max {
            let victim = open
                .by_id
                .values()
                .filter(|c| c.in_flight.load(Ordering::SeqCst) == 0)
                .min_by_key(|c| c.last_active.load(Ordering::SeqCst))
                .map(|c| c.id)?;
            if let Some(evicted) = open.by_id.remove(&victim) {
                evicted.evict.cancel();
                self.stats.evicted.fetch_add(1, Ordering::Relaxed);
            }
        }
        let id = open.next_id;
        open.next_id += 1;
        let state = Arc::new(ConnState {
            id,
            in_flight: AtomicUsize::new(0),
            last_active: AtomicU64::new(self.now_ms()),
            evict: CancellationToken::new(),
        });
        open.by_id.insert(id, state.clone());
        self.stats.open.store(open.by_id.len(), Ordering::Relaxed);
        Some(Slot {
            state,
            book: self.clone(),
        })
    }

    async fn wait_until_empty(&self) {
        loop {
            let emptied = self.emptied.notified();
            if self
                .open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .by_id
                .is_empty()
            {
                return;
            }
            emptied.await;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .book
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // An evicted connection's place was already given away.
        if open
            .by_id
            .get(&self.state.id)
            .is_some_and(|c| Arc::ptr_eq(c, &self.state))
        {
            open.by_id.remove(&self.state.id);
        }
        self.book
            .stats
            .open
            .store(open.by_id.len(), Ordering::Relaxed);
        if open.by_id.is_empty() {
            self.book.emptied.notify_waiters();
        }
    }
}

/// One request in flight on a connection, from its headers to the end of its response body.
struct Busy {
    state: Arc<ConnState>,
    book: Arc<Book>,
}

impl Busy {
    fn start(state: Arc<ConnState>, book: Arc<Book>) -> Busy {
        state.in_flight.fetch_add(1, Ordering::SeqCst);
        Busy { state, book }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.state
            .last_active
            .store(self.book.now_ms(), Ordering::SeqCst);
        self.state.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests;
