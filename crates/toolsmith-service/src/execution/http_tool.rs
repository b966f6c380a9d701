//! Runs stored HTTP tools (kind `http`, spec 004): fill the non-explicit parameters from the
//! call's context and the owner's Config Center, render the request, send it through the
//! [`HttpSender`] (the egress guard), and map the answer (`toolsmith-httptool` does each step).
//!
//! Errors keep their class: an egress refusal is `denied`, an upstream timeout `timeout`, a
//! missing parameter `invalid_arguments`; everything else is an `execution_error` whose details
//! carry the definition's error code and the upstream status.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use toolsmith_core::{ErrorKind, ToolContext, ToolExecutor, ToolResult};
use toolsmith_httptool::{
    CallContext, HttpErrorKind, HttpSender, HttpToolDefinition, SecurityRules, execute,
};

/// Where an owner's `store.*` values come from (the Config Center).
#[async_trait]
pub trait StoreValues: Send + Sync {
    /// The owner's values by `store.` key (without the `store.` prefix).
    async fn for_owner(&self, owner: &str) -> BTreeMap<String, String>;
}

/// No `store.*` values at all: what a dry run gets when its caller may not read the Config
/// Center.
pub struct NoStoreValues;

#[async_trait]
impl StoreValues for NoStoreValues {
    async fn for_owner(&self, _owner: &str) -> BTreeMap<String, String> {
        BTreeMap::new()
    }
}

/// Runs one HTTP tool.
pub struct HttpToolExecutor {
    pub(crate) tool_name: String,
    pub(crate) owner: String,
    pub(crate) definition: Arc<HttpToolDefinition>,
    pub(crate) sender: Arc<dyn HttpSender>,
    pub(crate) values: Arc<dyn StoreValues>,
    pub(crate) rules: SecurityRules,
}

#[async_trait]
impl ToolExecutor for HttpToolExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let empty = Map::new();
        let args = args.as_object().unwrap_or(&empty);
        let lookup = self.values.for_owner(&self.owner).await;
        let call = match CallContext::from_caller(ctx.call_context.as_deref(), &lookup) {
            Ok(call) => call,
            Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e.message),
        };
        let run = execute(
            &self.definition,
            args,
            &call,
            self.sender.as_ref(),
            &self.rules,
        );
        let outcome = tokio::select! {
            outcome = run => outcome,
            () = ctx.cancellation.cancelled() => {
                return ToolResult::error(ErrorKind::Cancelled, "the call was cancelled");
            }
        };
        match outcome {
            Ok(output) => ToolResult::ok(json!({
                "text": output.text,
                "data": output.data,
                "status": output.status,
            })),
            Err(e) => {
                let kind = match e.kind {
                    HttpErrorKind::InvalidArguments | HttpErrorKind::MissingParameter => {
                        ErrorKind::InvalidArguments
                    }
                    HttpErrorKind::Refused => ErrorKind::Denied,
                    HttpErrorKind::Timeout => ErrorKind::Timeout,
                    _ => ErrorKind::ExecutionError,
                };
                if let Some(detail) = &e.detail {
                    tracing::debug!(tool = %self.tool_name, code = e.code(), detail, "http tool failed");
                }
                let mut details = Map::new();
                details.insert("code".to_owned(), json!(e.code()));
                if let Some(status) = e.status {
                    details.insert("status".to_owned(), json!(status));
                }
                ToolResult::error_with(kind, e.message, details)
            }
        }
    }
}
