//! Usage recording: after every call an execution row is written — on success and on failure
//! alike, for custom, built-in and bridged tools (`source`), owned by the custom tool's owner or
//! the built-in's or bridged tool's caller — and a custom tool's `usage_count` and
//! `last_used_at` move. Dry runs are not recorded.
//!
//! Recording is off the call's path: the middleware hands each finished execution to a
//! bounded channel, and one writer task drains it in batches, one store transaction per batch.
//! A batch stays open for [`LINGER`] after its first record (or until [`MAX_BATCH`] records or
//! a flush), so calls arriving together share one commit: under load a commit per call costs
//! more than the call (WAL writes, file locks, a blocking-pool thread woken each time). Nothing
//! is dropped: when the channel is full, callers wait for room (back-pressure) instead of
//! losing records. A batch the store cannot take right now (disk full, read-only, unreachable)
//! waits in a bounded [`spool`] and is retried; what is lost is counted in `/metrics` and
//! logged with its count, and [`WriteHealth`] tells readiness that the store cannot write.
//!
//! Reads that must see every call made before them (`ToolService::get`, `list`, `stats`, the
//! CLI before it exits, `serve` at shutdown) call [`UsageRecorder::flush`], which returns once
//! everything queued before it is committed.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use serde::Deserialize;
use tokio::sync::{mpsc, oneshot};
use toolsmith_core::record::ClientRequestCounts;
use toolsmith_core::{
    Call, ErrorKind, ExecutionRecord, ExecutionSource, ExecutionStatus, Middleware, ToolOrigin,
    ToolResult,
};
use toolsmith_store::Store;

pub mod spool;

use spool::Spool;
pub use spool::{UsageMetrics, WriteHealth};

/// Records waiting to be written, at most; past this, calls wait for the writer.
const QUEUE_CAPACITY: usize = 8192;
/// Most records written in one transaction.
const MAX_BATCH: usize = 512;
/// How long a batch waits for more records after its first one. A flush does not wait.
const LINGER: Duration = Duration::from_millis(10);

enum Message {
    Record(Box<ExecutionRecord>),
    /// Answered once every record queued before it is committed (or failed to commit).
    Flush(oneshot::Sender<()>),
}

/// The last middleware of the pipeline: records every call's execution in the store.
pub struct UsageRecorder {
    queue: mpsc::Sender<Message>,
    health: Arc<WriteHealth>,
}

impl UsageRecorder {
    /// Records waiting to be written.
    pub fn queue_depth(&self) -> usize {
        self.queue.max_capacity() - self.queue.capacity()
    }

    /// Whether the store took the last usage write, and how many records wait for a retry.
    pub fn health(&self) -> &WriteHealth {
        &self.health
    }

    /// Starts the writer task on the current tokio runtime.
    pub fn start(store: Arc<dyn Store>, metrics: UsageMetrics) -> Arc<UsageRecorder> {
        let (queue, inbox) = mpsc::channel(QUEUE_CAPACITY);
        let health = Arc::new(WriteHealth::default());
        let spool = Spool::new(metrics, health.clone());
        tokio::spawn(write_batches(store, inbox, spool));
        Arc::new(UsageRecorder { queue, health })
    }

    /// Waits until every execution recorded before this call is committed to the store.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.queue.send(Message::Flush(done)).await.is_ok() {
            // An error means the writer is gone (runtime shutting down): nothing left to wait for.
            let _ = wait.await;
        }
    }

    async fn enqueue(&self, execution: ExecutionRecord) {
        // The fast path never yields; a full queue waits for room rather than drop a record.
        if let Err(mpsc::error::TrySendError::Full(message)) =
            self.queue.try_send(Message::Record(Box::new(execution)))
            && self.queue.send(message).await.is_err()
        {
            tracing::warn!("usage writer stopped; an execution was not recorded");
        }
    }
}

/// The writer task: writes each batch [`gather`] makes in one transaction (behind what the
/// spool holds from failed writes), answers the flushes that were queued behind its records,
/// and repeats until every sender is gone. While the spool holds records it also wakes up to
/// retry them when their back-off ends.
async fn write_batches(
    store: Arc<dyn Store>,
    mut inbox: mpsc::Receiver<Message>,
    mut spool: Spool,
) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut flushes = Vec::new();
    loop {
        let open = match spool.retry_at() {
            // `gather` is cancel-safe: what it took is already in `batch` and `flushes`.
            Some(at) => tokio::time::timeout_at(at, gather(&mut inbox, &mut batch, &mut flushes))
                .await
                .unwrap_or(true),
            None => gather(&mut inbox, &mut batch, &mut flushes).await,
        };
        if !open {
            break;
        }
        spool.push(&mut batch);
        spool.write(store.as_ref()).await;
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
    spool.abandon();
}

/// Waits for a message, then gathers the batch it opens: what is queued, then what arrives
/// within [`LINGER`], up to [`MAX_BATCH`] records; a flush closes the batch at once. `false`
/// when every sender is gone and nothing came.
async fn gather(
    inbox: &mut mpsc::Receiver<Message>,
    batch: &mut Vec<ExecutionRecord>,
    flushes: &mut Vec<oneshot::Sender<()>>,
) -> bool {
    let Some(first) = inbox.recv().await else {
        return false;
    };
    let closes_at = tokio::time::Instant::now() + LINGER;
    let mut next = Some(first);
    loop {
        while let Some(message) = next.take() {
            match message {
                Message::Record(execution) => batch.push(*execution),
                Message::Flush(done) => flushes.push(done),
            }
            if batch.len() < MAX_BATCH {
                next = inbox.try_recv().ok();
            }
        }
        if !flushes.is_empty() || batch.len() >= MAX_BATCH {
            return true;
        }
        match tokio::time::timeout_at(closes_at, inbox.recv()).await {
            Ok(Some(message)) => next = Some(message),
            // The time is up, or every sender is gone: write what there is.
            Ok(None) | Err(_) => return true,
        }
    }
}

#[async_trait]
impl Middleware for UsageRecorder {
    fn name(&self) -> &'static str {
        "usage"
    }

    async fn after(&self, call: &Call, result: &mut ToolResult) {
        // A custom tool's calls are its owner's, under its id; a built-in's or a bridged
        // tool's are its caller's, under its name (one name for every caller).
        let (source, tool_id, owner) = match &call.tool.origin {
            ToolOrigin::Custom { id, owner } => {
                if crate::service::one_off::is_dry_run(id) {
                    return;
                }
                (ExecutionSource::Custom, id.clone(), owner.clone())
            }
            ToolOrigin::BuiltIn { .. } => (
                ExecutionSource::Builtin,
                call.tool.name().to_owned(),
                call.ctx.user_id.clone(),
            ),
            ToolOrigin::Mcp { .. } => (
                ExecutionSource::Mcp,
                call.tool.name().to_owned(),
                call.ctx.user_id.clone(),
            ),
        };
        let execution_id = format!("exec_{}", uuid::Uuid::new_v4().simple());
        if result.error_kind() == Some(ErrorKind::ResultWithheld) {
            // The tool ran: the caller gets the run's id, to check what it did rather than
            // run it again.
            if let serde_json::Value::Object(content) = &mut result.content {
                content.insert("executionId".to_owned(), serde_json::json!(execution_id));
            }
            result
                .metadata
                .extra
                .insert("executionId".to_owned(), serde_json::json!(execution_id));
        }
        let execution = ExecutionRecord {
            id: execution_id,
            tool_id,
            tool_name: call.tool.name().to_owned(),
            tool_version: call.tool.version.unwrap_or(0),
            owner,
            conversation_id: call.ctx.conversation_id.clone(),
            agent_id: call.ctx.agent_id.clone(),
            status: execution_status(result),
            error_kind: result.error_kind().map(|k| k.as_str().to_owned()),
            error: result.error_message().map(|m| truncate(m, 2000)),
            duration_ms: result.metadata.duration_ms,
            created_at: Utc::now(),
            client_requests: client_requests(result),
            source,
        };
        self.enqueue(execution).await;
    }
}

fn execution_status(result: &ToolResult) -> ExecutionStatus {
    match result.error_kind() {
        None => ExecutionStatus::Success,
        Some(ErrorKind::Timeout | ErrorKind::CpuLimit) => ExecutionStatus::Timeout,
        Some(ErrorKind::Denied) => ExecutionStatus::Denied,
        // A call that waits for a person is not denied: it waits, or its approval expired.
        Some(ErrorKind::ApprovalRequired) => match result.content.get("approvalStatus") {
            Some(serde_json::Value::String(s)) if s == "expired" => ExecutionStatus::Expired,
            _ => ExecutionStatus::AwaitingApproval,
        },
        Some(ErrorKind::RateLimited) => ExecutionStatus::RateLimited,
        Some(ErrorKind::ResultWithheld) => ExecutionStatus::Withheld,
        Some(_) => ExecutionStatus::Error,
    }
}

/// What the run asked of its caller's client, as its executor counted it in the result's
/// metadata (`clientRequests`: the JS executor's `mcp.*` calls); none when it is absent.
fn client_requests(result: &ToolResult) -> ClientRequestCounts {
    result
        .metadata
        .extra
        .get("clientRequests")
        .and_then(|counts| ClientRequestCounts::deserialize(counts).ok())
        .unwrap_or_default()
}

fn truncate(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars).collect()
}

#[cfg(test)]
mod tests;
