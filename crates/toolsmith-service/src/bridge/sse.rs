//! The client side of MCP's legacy HTTP+SSE transport (protocol 2024-11-05), which rmcp 3.11
//! does not have: `GET url` opens an SSE stream whose first `endpoint` event names where the
//! client's messages go (a URL, often relative, that must be on the stream's own origin); each
//! client message is POSTed there as JSON, and the server's messages come back as `message`
//! events on the stream. It is an rmcp client [`Transport`], so the MCP session over it is
//! rmcp's like the other transports'.
//!
//! Every request goes out on the egress guard's `OriginClient` (its DNS hook at every
//! connection, redirects only within the origin), and each event is capped at the guard's
//! response limit. When the stream ends or fails, or an event is too large, the transport ends
//! (rmcp ends the session, the connection task reconnects) and says why in [`Ended`].

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::{Sse, SseStream};
use url::Url;

/// The most of a server's text (an error body, a refused endpoint) kept in an error message.
const QUOTED: usize = 200;

/// Why a connection's stream ended, for the server's status: the transport can only tell rmcp
/// that it ended, not why.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ended(Arc<Mutex<Option<String>>>);

impl Ended {
    fn set(&self, why: String) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert(why);
    }

    /// The reason, if the transport ended on its own (and forgets it).
    pub(crate) fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// What [`connect`] needs: the egress guard's client for the stream's origin, and the rest of
/// the server's configuration, its references resolved.
pub(crate) struct Settings {
    pub(crate) client: reqwest::Client,
    /// The SSE stream's URL, as the egress guard checked it.
    pub(crate) url: Url,
    /// Sent with the `GET` and every `POST` (the configured headers and the bearer token).
    pub(crate) headers: HeaderMap,
    /// The largest event accepted (the guard's `max_response_bytes`).
    pub(crate) max_event_bytes: usize,
    /// How long the stream may take to name its endpoint, and a `POST` to be answered.
    pub(crate) wait: Duration,
}

/// Sending a client message failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PostError {
    #[error("cannot encode the message: {0}")]
    Encode(#[from] serde_json::Error),
    #[error("POST {endpoint} failed: {reason}")]
    Send { endpoint: Url, reason: String },
    #[error("POST {endpoint} was answered {status}: {body}")]
    Refused {
        endpoint: Url,
        status: reqwest::StatusCode,
        body: String,
    },
}

/// Reading the stream failed, before the SSE parser saw the bytes.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error("reading the SSE stream failed: {0}")]
    Read(String),
    #[error(
        "the server sent an SSE event larger than {0} bytes (the egress policy's max_response_bytes)"
    )]
    TooLarge(usize),
}

/// A connected legacy SSE transport: the open stream, and where to POST.
pub(crate) struct SseTransport {
    events: BoxStream<'static, Result<Sse, sse_stream::Error>>,
    post: Arc<Poster>,
    ended: Ended,
    done: bool,
}

/// Sends the client's messages to the endpoint.
struct Poster {
    client: reqwest::Client,
    endpoint: Url,
    headers: HeaderMap,
    wait: Duration,
}

/// Opens the SSE stream and waits (at most `settings.wait`) for its `endpoint` event.
pub(crate) async fn connect(settings: Settings, ended: Ended) -> Result<SseTransport, String> {
    let wait = settings.wait;
    let url = settings.url.clone();
    tokio::time::timeout(wait, open(settings, ended))
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "GET {url}: the server did not name its endpoint (an `endpoint` event) within {} s; \
                 is this the SSE stream of a legacy HTTP+SSE server?",
                wait.as_secs_f64()
            ))
        })
}

async fn open(settings: Settings, ended: Ended) -> Result<SseTransport, String> {
    let Settings {
        client,
        url,
        headers,
        max_event_bytes,
        wait,
    } = settings;
    let response = client
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| format!("GET {url} failed: {}", chain(&e)))?;
    let status = response.status();
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if !status.is_success() || !content_type.starts_with("text/event-stream") {
        return Err(format!(
            "GET {url} was answered {status} ({}), not an SSE stream: give the URL of the \
             server's SSE stream (often …/sse), or transport = \"streamable_http\" for a server \
             that speaks streamable HTTP",
            if content_type.is_empty() {
                "no content type"
            } else {
                content_type.as_str()
            }
        ));
    }
    let mut events = events(response.bytes_stream(), max_event_bytes);
    let endpoint = loop {
        match events.next().await {
            None => {
                return Err(format!(
                    "GET {url}: the SSE stream ended before its endpoint event"
                ));
            }
            Some(Err(e)) => return Err(format!("GET {url}: {}", stream_error(&e))),
            Some(Ok(sse)) if sse.event.as_deref() == Some("endpoint") => {
                break endpoint(&url, sse.data.as_deref().unwrap_or_default())?;
            }
            Some(Ok(_)) => {}
        }
    };
    Ok(SseTransport {
        events,
        post: Arc::new(Poster {
            client,
            endpoint,
            headers,
            wait,
        }),
        ended,
        done: false,
    })
}

/// The URL an `endpoint` event names, resolved against the stream's URL; refused unless it is
/// on the stream's origin (scheme, host and port), so a server cannot send the client's
/// messages — and the headers and token that go with them — anywhere else.
pub(crate) fn endpoint(stream: &Url, data: &str) -> Result<Url, String> {
    let data = data.trim();
    let endpoint = stream.join(data).map_err(|e| {
        format!(
            "the server's endpoint event '{}' is not a URL: {e}",
            quote(data)
        )
    })?;
    if endpoint.origin() != stream.origin() {
        return Err(format!(
            "the server's endpoint event names '{}', on another origin than its SSE stream ({}): \
             refused, messages go only to the origin the server was registered with",
            quote(endpoint.as_str()),
            stream.origin().ascii_serialization()
        ));
    }
    if !endpoint.username().is_empty() || endpoint.password().is_some() {
        return Err("the server's endpoint event names a URL with credentials: refused".to_owned());
    }
    Ok(endpoint)
}

impl Poster {
    async fn send(&self, message: ClientJsonRpcMessage) -> Result<(), PostError> {
        let body = serde_json::to_vec(&message)?;
        let endpoint = &self.endpoint;
        let response = self
            .client
            .post(endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .timeout(self.wait)
            .body(body)
            .send()
            .await
            .map_err(|e| PostError::Send {
                endpoint: endpoint.clone(),
                reason: chain(&e),
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        // The body only to quote it: its first bytes, the rest never read.
        let mut body = Vec::new();
        let mut chunks = response.bytes_stream();
        while body.len() < QUOTED {
            match chunks.next().await {
                Some(Ok(chunk)) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
        Err(PostError::Refused {
            endpoint: endpoint.clone(),
            status,
            body: quote(&String::from_utf8_lossy(&body)),
        })
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = PostError;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), PostError>> + Send + 'static {
        let post = self.post.clone();
        async move { post.send(item).await }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        if self.done {
            return None;
        }
        let why = loop {
            match self.events.next().await {
                None => break "the server closed the SSE stream".to_owned(),
                Some(Err(e)) => break stream_error(&e),
                Some(Ok(sse)) => {
                    if !matches!(sse.event.as_deref(), None | Some("") | Some("message")) {
                        continue;
                    }
                    let Some(data) = sse.data else { continue };
                    match serde_json::from_str(&data) {
                        Ok(message) => return Some(message),
                        // As rmcp's own SSE clients do: a frame that is not a JSON-RPC message
                        // is passed over (a request it answered times out).
                        Err(e) => tracing::warn!(
                            endpoint = %self.post.endpoint,
                            "an SSE message that is not JSON-RPC was passed over: {e}"
                        ),
                    }
                }
            }
        };
        self.done = true;
        self.ended.set(why);
        None
    }

    async fn close(&mut self) -> Result<(), PostError> {
        self.done = true;
        Ok(())
    }
}

/// The stream's events, each capped at `max` bytes: a larger one ends the stream with
/// [`ReadError::TooLarge`] before it is buffered whole.
fn events(
    bytes: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    max: usize,
) -> BoxStream<'static, Result<Sse, sse_stream::Error>> {
    let mut size = EventSize::new(max);
    let capped = bytes.map(move |chunk| match chunk {
        Ok(chunk) => size
            .observe(&chunk)
            .map(|()| chunk)
            .map_err(|()| ReadError::TooLarge(max)),
        Err(e) => Err(ReadError::Read(chain(&e))),
    });
    SseStream::from_bytes_stream(capped).boxed()
}

/// What a failed stream says.
fn stream_error(error: &sse_stream::Error) -> String {
    match error {
        sse_stream::Error::Body(inner) => inner.to_string(),
        other => format!("the server sent a malformed SSE stream ({other})"),
    }
}

/// Counts the bytes of the event being received, as the SSE parser keeps them (field lines
/// and a separator each; comment lines are not kept): over `max`, the stream is refused.
struct EventSize {
    max: usize,
    event: usize,
    line: usize,
    comment: bool,
    after_cr: bool,
}

impl EventSize {
    fn new(max: usize) -> EventSize {
        EventSize {
            max,
            event: 0,
            line: 0,
            comment: false,
            after_cr: false,
        }
    }

    fn observe(&mut self, chunk: &[u8]) -> Result<(), ()> {
        for &byte in chunk {
            let after_cr = std::mem::take(&mut self.after_cr);
            match byte {
                b'\n' if after_cr => {}
                b'\r' | b'\n' => {
                    self.after_cr = byte == b'\r';
                    if self.line == 0 {
                        self.event = 0;
                    } else if !self.comment {
                        self.event += self.line + 1;
                    }
                    self.line = 0;
                }
                _ => {
                    if self.line == 0 {
                        self.comment = byte == b':';
                    }
                    self.line += 1;
                }
            }
            if self.event + self.line > self.max {
                return Err(());
            }
        }
        Ok(())
    }
}

/// An error and its causes, `: `-separated (reqwest's own message leaves the cause out).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

/// `text` cut to [`QUOTED`] characters.
fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or(text)),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_endpoint_must_be_on_the_streams_origin() {
        let stream = Url::parse("http://127.0.0.1:8000/sse").unwrap();
        let same = endpoint(&stream, " /messages?sessionId=abc\n").unwrap();
        assert_eq!(
            same.as_str(),
            "http://127.0.0.1:8000/messages?sessionId=abc"
        );
        let absolute = endpoint(&stream, "http://127.0.0.1:8000/m").unwrap();
        assert_eq!(absolute.path(), "/m");
        for other in [
            "http://127.0.0.1:8001/messages",
            "https://127.0.0.1:8000/messages",
            "http://localhost:8000/messages",
            "//evil.example/messages",
        ] {
            let err = endpoint(&stream, other).unwrap_err();
            assert!(err.contains("another origin"), "{other}: {err}");
        }
        let err = endpoint(&stream, "http://u:p@127.0.0.1:8000/m").unwrap_err();
        assert!(err.contains("credentials"), "{err}");
    }

    #[test]
    fn an_event_is_capped_comments_and_separators_aside() {
        let mut size = EventSize::new(16);
        // Two events of 12 bytes each (`data: ` + 5 + separator), a comment between.
        let text = b"data: hello\n\n: xxxxxxxxxxxx\r\ndata: world\r\n\r\n";
        assert!(size.observe(text).is_ok());
        // A line, even a comment, is buffered whole until it ends: capped too.
        assert!(
            size.observe(format!(": {}", "x".repeat(16)).as_bytes())
                .is_err()
        );
        // One event growing past the cap over several chunks, no separator yet.
        let mut size = EventSize::new(16);
        assert!(size.observe(b"data: 0123").is_ok());
        assert!(size.observe(b"4\ndata: 56789").is_err());
    }
}
