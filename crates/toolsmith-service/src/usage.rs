//! Usage recording: after every call of a custom tool, its `usage_count` and `last_used_at`
//! move and an execution row is written — on success and on failure alike.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::Utc;
use toolsmith_core::{
    Call, ErrorKind, ExecutionRecord, ExecutionStatus, Middleware, ToolOrigin, ToolResult,
};
use toolsmith_store::Store;

/// The last middleware of the pipeline: records usage of custom tools in the store.
pub struct UsageRecorder {
    store: Arc<dyn Store>,
}

impl UsageRecorder {
    pub fn new(store: Arc<dyn Store>) -> UsageRecorder {
        UsageRecorder { store }
    }
}

#[async_trait]
impl Middleware for UsageRecorder {
    fn name(&self) -> &'static str {
        "usage"
    }

    async fn after(&self, call: &Call, result: &mut ToolResult) {
        let ToolOrigin::Custom { id, owner } = &call.tool.origin else {
            return;
        };
        let now = Utc::now();
        if let Err(e) = self.store.record_usage(owner, id, now).await {
            tracing::warn!(tool = %call.tool.name(), error = %e, "could not record tool usage");
        }
        let execution = ExecutionRecord {
            id: format!("exec_{}", uuid::Uuid::new_v4().simple()),
            tool_id: id.clone(),
            tool_name: call.tool.name().to_owned(),
            tool_version: call.tool.version.unwrap_or(0),
            owner: owner.clone(),
            conversation_id: call.ctx.conversation_id.clone(),
            status: execution_status(result),
            error_kind: result.error_kind().map(|k| k.as_str().to_owned()),
            error: result.error_message().map(|m| truncate(m, 2000)),
            duration_ms: result.metadata.duration_ms,
            created_at: now,
        };
        if let Err(e) = self.store.record_execution(&execution).await {
            tracing::warn!(tool = %call.tool.name(), error = %e, "could not record execution");
        }
    }
}

fn execution_status(result: &ToolResult) -> ExecutionStatus {
    match result.error_kind() {
        None => ExecutionStatus::Success,
        Some(ErrorKind::Timeout | ErrorKind::CpuLimit) => ExecutionStatus::Timeout,
        Some(ErrorKind::Denied) => ExecutionStatus::Denied,
        Some(ErrorKind::RateLimited) => ExecutionStatus::RateLimited,
        Some(_) => ExecutionStatus::Error,
    }
}

fn truncate(text: &str, max_chars: usize) -> String {
    text.chars().take(max_chars).collect()
}
