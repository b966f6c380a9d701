//! The calling MCP client as a running tool sees it: [`McpClient`], the
//! [`CallerClient`](toolsmith_core::CallerClient) a `tools/call` puts on its
//! [`ToolContext`](toolsmith_core::ToolContext) (nested calls keep it).
//!
//! - Log messages (`notifications/message`) go to the client at or above the level it asked
//!   for: the request's `_meta["io.modelcontextprotocol/logLevel"]` (how 2026-07-28 sends it,
//!   honoured on any protocol), else `logging/setLevel` on a 2025-11-25 session
//!   ([`SessionLogLevel`], one per session); everything while it asked for none.
//! - Progress (`notifications/progress`) goes out only for a call that carried
//!   `_meta.progressToken`, with that token.
//! - Sampling (`sampling/createMessage`) and elicitation (`elicitation/create`) are requests to
//!   the client, sent only when it declared the capability, on the call's own stream
//!   (the request's id travels as rmcp's `OriginatingRequestId`, since the sandbox's host calls
//!   do not run on the handler's task). They exist only on 2025-11-25: protocol 2026-07-28 has
//!   no server-to-client requests while a call runs, and a tool's code cannot be suspended into
//!   an `InputRequiredResult` and resumed, so there they are refused with
//!   [`Door::McpStateless`], which names the protocol that works.
//!
//! Parameters and results are MCP's JSON as the tool gave them, read into rmcp's types (so a
//! malformed request is refused before it leaves, naming what is wrong) and written back.
//!
//! rmcp marks sampling, roots and logging deprecated for SEP-2577 (2026-07-28 drops them); they
//! are protocol 2025-11-25's, which this server speaks, hence the module's `allow(deprecated)`.
#![allow(
    deprecated,
    reason = "sampling, roots and logging are MCP 2025-11-25's; rmcp marks them for SEP-2577"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use async_trait::async_trait;
use rmcp::RoleServer;
use rmcp::model::{
    ClientResult, CreateMessageRequest, CreateMessageRequestParams, ElicitRequest,
    ElicitRequestParams, ErrorCode, GetExtensions, LoggingLevel, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestId, ServerRequest,
};
use rmcp::service::{OriginatingRequestId, Peer, PeerRequestOptions, RequestContext, ServiceError};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolsmith_core::{
    CallerClient, Capability, Client, ClientCapabilities, ClientError, Door, LogLevel,
};

/// The least severe level a session's client asked for with `logging/setLevel`; unset until it
/// asks (then every message goes out).
#[derive(Debug, Default)]
pub(crate) struct SessionLogLevel(AtomicU8);

impl SessionLogLevel {
    pub fn set(&self, level: LogLevel) {
        // 1 + the level's index; 0 is "not set".
        let index = LogLevel::ALL
            .iter()
            .position(|l| *l == level)
            .map_or(0, |i| i + 1);
        self.0
            .store(u8::try_from(index).unwrap_or(0), Ordering::Relaxed);
    }

    pub fn get(&self) -> Option<LogLevel> {
        let index = usize::from(self.0.load(Ordering::Relaxed));
        index
            .checked_sub(1)
            .and_then(|i| LogLevel::ALL.get(i).copied())
    }
}

/// `logging/setLevel`: the session's level from now on.
pub(crate) fn set_level(session: &SessionLogLevel, request: &rmcp::model::SetLevelRequestParams) {
    session.set(level_of(request.level));
}

/// MCP's name of a level, as rmcp types it.
fn level_of(level: LoggingLevel) -> LogLevel {
    match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    }
}

fn rmcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

/// Where a call's log level comes from.
enum Level {
    /// The session's `logging/setLevel` (2025-11-25).
    Session(Arc<SessionLogLevel>),
    /// The request's own `_meta` (2026-07-28).
    Request(Option<LogLevel>),
}

/// The caller's client of one `tools/call`.
pub(crate) struct McpClient {
    peer: Peer<RoleServer>,
    /// The `tools/call` this client serves: the server's requests go on its stream.
    request_id: RequestId,
    capabilities: ClientCapabilities,
    progress_token: Option<ProgressToken>,
    level: Level,
    /// Protocol 2026-07-28: no requests to the client while a call runs.
    stateless: bool,
    /// The call's cancellation: a question still open when it fires is withdrawn.
    ct: CancellationToken,
}

/// The client of the `tools/call` of `context`, with `session`'s log level.
pub(crate) fn client_for(
    context: &RequestContext<RoleServer>,
    session: &Arc<SessionLogLevel>,
) -> Client {
    let stateless = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    let declared = context.client_capabilities().unwrap_or_default();
    let elicitation = declared.elicitation.as_ref();
    let progress_token = context.meta.get_progress_token();
    let capabilities = ClientCapabilities {
        sampling: declared.sampling.is_some(),
        sampling_tools: declared
            .sampling
            .as_ref()
            .is_some_and(|s| s.tools.is_some()),
        // An elicitation capability without modes means forms (the spec's back-compatibility
        // rule).
        elicitation_form: elicitation.is_some_and(|e| e.form.is_some() || e.url.is_none()),
        elicitation_url: elicitation.is_some_and(|e| e.url.is_some()),
        roots: declared.roots.is_some(),
        progress: progress_token.is_some(),
        logging: true,
    };
    // The level the request carries wins (2026-07-28 sends it with every request); else the
    // session's.
    let level = match context.meta.log_level() {
        Some(level) => Level::Request(Some(level_of(level))),
        None if stateless => Level::Request(None),
        None => Level::Session(session.clone()),
    };
    Client(Arc::new(McpClient {
        peer: context.peer.clone(),
        request_id: context.id.clone(),
        capabilities,
        progress_token,
        level,
        stateless,
        ct: context.ct.clone(),
    }))
}

impl McpClient {
    /// Refuses a request to the client it cannot take.
    fn may_ask(&self, capability: Capability, declared: bool) -> Result<(), ClientError> {
        if self.stateless {
            return Err(ClientError::NoClient {
                door: Door::McpStateless,
                capability,
            });
        }
        if !declared {
            return Err(ClientError::Unsupported { capability });
        }
        Ok(())
    }

    /// Sends `request` to the client on the call's stream and waits for its answer, or for the
    /// call's end (then the question is withdrawn with `notifications/cancelled`).
    async fn ask(&self, mut request: ServerRequest) -> Result<ClientResult, ClientError> {
        request
            .extensions_mut()
            .insert(OriginatingRequestId(self.request_id.clone()));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(failure)?;
        let peer = handle.peer.clone();
        let id = handle.id.clone();
        tokio::select! {
            answer = handle.await_response() => answer.map_err(failure),
            () = self.ct.cancelled() => {
                let withdrawn = rmcp::model::CancelledNotificationParam::new(
                    Some(id),
                    Some("the tool call was cancelled".to_owned()),
                );
                let _ = peer.notify_cancelled(withdrawn).await;
                Err(ClientError::Cancelled)
            }
        }
    }
}

/// The client's failure as the tool reads it. A JSON-RPC error `-1` is the person rejecting the
/// request (as the spec's sampling example shows it).
fn failure(error: ServiceError) -> ClientError {
    match error {
        ServiceError::McpError(e) if e.code == ErrorCode(-1) => {
            ClientError::Declined(e.message.to_string())
        }
        ServiceError::McpError(e) => ClientError::Failed(e.message.to_string()),
        ServiceError::Cancelled { .. } => ClientError::Cancelled,
        ServiceError::Timeout { timeout } => ClientError::Timeout { after: timeout },
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            ClientError::Failed("the client has gone (its connection closed)".to_owned())
        }
        other => ClientError::Failed(other.to_string()),
    }
}

/// `params` read as `T`, or why not.
fn read<T: serde::de::DeserializeOwned>(what: &str, params: Value) -> Result<T, ClientError> {
    serde_json::from_value(params).map_err(|e| {
        ClientError::Invalid(format!(
            "{what}: {e}; see the MCP specification of {what} for its fields"
        ))
    })
}

/// A result written back as JSON.
fn written<T: serde::Serialize>(result: &T) -> Result<Value, ClientError> {
    serde_json::to_value(result).map_err(|e| ClientError::Failed(e.to_string()))
}

#[async_trait]
impl CallerClient for McpClient {
    fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = self.capabilities;
        if self.stateless {
            // Nothing can be asked of a 2026-07-28 client while the call runs.
            capabilities.sampling = false;
            capabilities.sampling_tools = false;
            capabilities.elicitation_form = false;
            capabilities.elicitation_url = false;
            capabilities.roots = false;
        }
        capabilities
    }

    fn log_level(&self) -> Option<LogLevel> {
        Some(match &self.level {
            Level::Session(session) => session.get().unwrap_or(LogLevel::Debug),
            Level::Request(level) => level.unwrap_or(LogLevel::Debug),
        })
    }

    async fn log(
        &self,
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    ) -> Result<(), ClientError> {
        if self.log_level().is_some_and(|least| level < least) {
            return Ok(());
        }
        let mut message = LoggingMessageNotificationParam::new(rmcp_level(level), data);
        message.logger = logger;
        #[allow(
            deprecated,
            reason = "logging is MCP 2025-11-25's; rmcp marks it for SEP-2577"
        )]
        let sent = self.peer.notify_logging_message(message).await;
        sent.map_err(failure)
    }

    async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ClientError> {
        let Some(token) = &self.progress_token else {
            return Ok(());
        };
        if !progress.is_finite() || total.is_some_and(|t| !t.is_finite()) {
            return Err(ClientError::Invalid(
                "progress and total must be finite numbers".to_owned(),
            ));
        }
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        param.total = total;
        param.message = message;
        self.peer.notify_progress(param).await.map_err(failure)
    }

    async fn sample(&self, params: Value) -> Result<Value, ClientError> {
        self.may_ask(Capability::Sampling, self.capabilities.sampling)?;
        let params: CreateMessageRequestParams = read("sampling/createMessage", params)?;
        if (params.tools.is_some() || params.tool_choice.is_some())
            && !self.capabilities.sampling_tools
        {
            return Err(ClientError::Unsupported {
                capability: Capability::SamplingTools,
            });
        }
        params.validate().map_err(ClientError::Invalid)?;
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match self.ask(request).await? {
            ClientResult::CreateMessageResult(result) => written(&result),
            _ => Err(ClientError::Failed(
                "the client answered sampling/createMessage with another kind of result".to_owned(),
            )),
        }
    }

    async fn elicit(&self, params: Value) -> Result<Value, ClientError> {
        let params: ElicitRequestParams = {
            // Ask first whether this client can take any form at all, so the refusal names the
            // capability even for a malformed request.
            let url = params.get("mode").and_then(Value::as_str) == Some("url");
            if url {
                self.may_ask(
                    Capability::ElicitationUrl,
                    self.capabilities.elicitation_url,
                )?;
            } else {
                self.may_ask(Capability::Elicitation, self.capabilities.elicitation_form)?;
            }
            read("elicitation/create", params)?
        };
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match self.ask(request).await? {
            ClientResult::ElicitResult(result) => written(&result),
            _ => Err(ClientError::Failed(
                "the client answered elicitation/create with another kind of result".to_owned(),
            )),
        }
    }

    async fn list_roots(&self) -> Result<Value, ClientError> {
        self.may_ask(Capability::Roots, self.capabilities.roots)?;
        let request = ServerRequest::ListRootsRequest(rmcp::model::ListRootsRequest::default());
        match self.ask(request).await? {
            ClientResult::ListRootsResult(result) => written(&result),
            _ => Err(ClientError::Failed(
                "the client answered roots/list with another kind of result".to_owned(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sessions_level_is_unset_until_set_and_then_kept() {
        let level = SessionLogLevel::default();
        assert_eq!(level.get(), None);
        for each in LogLevel::ALL {
            level.set(each);
            assert_eq!(level.get(), Some(each));
            assert_eq!(level_of(rmcp_level(each)), each);
        }
    }
}
