//! A small client of the Chrome DevTools Protocol over Chromium's debugging pipe
//! (`--remote-debugging-pipe`): Chromium reads commands from its fd 3 and writes answers and
//! events to its fd 4, each message one JSON text ended by a NUL byte. No port is opened, so no
//! other process of the host can drive the browser (a `--remote-debugging-port` on loopback
//! would let any local process do so).
//!
//! Why not `chromiumoxide`: it generates the whole protocol (every domain, every type) and
//! speaks over a WebSocket port; the browser tool needs a dozen commands, and this is ~150
//! lines over what the workspace already has (tokio, serde_json).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{Mutex, broadcast, oneshot};

/// Largest message read from the browser (a full-page screenshot is the largest).
const MAX_MESSAGE_BYTES: usize = 48 * 1024 * 1024;

/// One event of the browser: its session (`None` for the browser's own) and method.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub session: Option<String>,
    pub method: String,
}

type Pending = Arc<std::sync::Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// The connection to one browser.
pub(crate) struct Cdp {
    writer: Mutex<ChildStdin>,
    pending: Pending,
    next: AtomicU64,
    events: broadcast::Sender<Event>,
    reader: tokio::task::AbortHandle,
}

impl Drop for Cdp {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Cdp {
    /// A connection over the browser's pipe: `writer` is its fd 3, `reader` its fd 4.
    pub(crate) fn new(writer: ChildStdin, reader: ChildStdout) -> Cdp {
        let pending: Pending = Arc::default();
        let (events, _) = broadcast::channel(256);
        let task = tokio::spawn(read_loop(reader, pending.clone(), events.clone()));
        Cdp {
            writer: Mutex::new(writer),
            pending,
            next: AtomicU64::new(1),
            events,
            reader: task.abort_handle(),
        }
    }

    /// The browser's events from now on.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.events.subscribe()
    }

    /// Sends `method` with `params` (to `session`, or the browser) and waits at most `limit`
    /// for its answer.
    pub(crate) async fn call(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
        limit: Duration,
    ) -> Result<Value, String> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            toolsmith_core::object::set(&mut message, "sessionId", json!(session));
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, tx);
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        let written = {
            let mut writer = self.writer.lock().await;
            match writer.write_all(&bytes).await {
                Ok(()) => writer.flush().await,
                Err(e) => Err(e),
            }
        };
        let forget = || {
            if let Ok(mut pending) = self.pending.lock() {
                pending.remove(&id);
            }
        };
        if let Err(e) = written {
            forget();
            return Err(format!("the browser is gone ({e})"));
        }
        match tokio::time::timeout(limit, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err("the browser is gone (its pipe closed)".to_owned()),
            Err(_) => {
                forget();
                Err(format!(
                    "the browser did not answer {method} within {} s",
                    limit.as_secs()
                ))
            }
        }
    }
}

async fn read_loop(reader: ChildStdout, pending: Pending, events: broadcast::Sender<Event>) {
    let mut reader = BufReader::new(reader);
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let read = (&mut reader)
            .take(MAX_MESSAGE_BYTES as u64 + 1)
            .read_until(0, &mut buffer)
            .await;
        match read {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if buffer.last() != Some(&0) {
            // Too large, or cut off: the connection cannot be read on from here.
            break;
        }
        buffer.pop();
        let Ok(message) = serde_json::from_slice::<Value>(&buffer) else {
            continue;
        };
        if let Some(id) = message.get("id").and_then(Value::as_u64) {
            let answer = match message.get("error") {
                Some(error) => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the browser refused the command")
                    .to_owned()),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let waiter = pending.lock().ok().and_then(|mut p| p.remove(&id));
            if let Some(waiter) = waiter {
                let _ = waiter.send(answer);
            }
        } else if let Some(method) = message.get("method").and_then(Value::as_str) {
            let _ = events.send(Event {
                session: message
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                method: method.to_owned(),
            });
        }
    }
    // Every waiter learns the browser is gone.
    if let Ok(mut pending) = pending.lock() {
        pending.clear();
    }
}
