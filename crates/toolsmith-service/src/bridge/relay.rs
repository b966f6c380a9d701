//! What an upstream asks or tells during a call, relayed to the client that made the call.
//!
//! Toolsmith declares the client capabilities sampling, elicitation (forms and URLs) and roots
//! to every upstream ([`client_capabilities`]). During a call of a bridged tool the upstream's
//! `sampling/createMessage`, `elicitation/create` and `roots/list` requests, and its
//! `notifications/progress` and `notifications/message`, go to the calling client through the
//! call's [`ToolContext::client`] — under the same rule as a JS tool's `mcp.sample` and
//! `mcp.elicit` ([`ClientRequestGate::may_ask`]: the policy's `mcp:sampling` /
//! `mcp:elicitation` deny entries, the per-call and per-user limits, an audit entry for each),
//! with the registration of the server standing for the tool's declared permission. A caller
//! that cannot answer (REST, the CLI, a scheduled run, a client without the capability) gets the
//! upstream an error that says why; the upstream decides what its tool does with it.
//!
//! Which call a request belongs to: a streamable HTTP upstream sends it on the call's own
//! response stream (rmcp's `InboundStreamOrigin`); a stdio or SSE upstream does not say, so it
//! is the call in flight when there is exactly one, and refused (naming why) when there are
//! several. Progress is matched by the progress token rmcp gave the call; log messages go to the
//! one call in flight, and are dropped (logged here) when there are none or several.
//!
//! A call cancelled on Toolsmith's side (its caller cancelled, its time ran out) is cancelled on
//! the upstream too (`notifications/cancelled`, or `tasks/cancel` for a call run as a task).
//!
//! A tool whose upstream requires it to run as a task (2025-11-25's `execution.taskSupport:
//! "required"`; the specification has the server answer a plain call of it `-32601`, Method not
//! found) is called as a task: `tools/call` with `task: {ttl}`, then `tasks/result`, which the
//! upstream answers once the task has ended; what it asks or tells meanwhile is relayed as
//! above (its requests come on the stream of `tasks/result` over streamable HTTP). rmcp 3.11
//! drops a listed tool's `execution`, so the relay learns it from that answer, once per tool
//! and connection, and calls the tool as a task from then on.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientRequest as RmcpRequest, CustomRequest, ErrorCode, ErrorData,
    Extensions, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{InboundStreamOrigin, Peer, PeerRequestOptions, ServiceError};
use serde_json::{Value, json};
use toolsmith_core::{Client, LogLevel, ToolContext};

use crate::governance::audit::{AuditLog, AuditTarget};
use crate::governance::client_requests::{ClientRequest, ClientRequestBudget, ClientRequestGate};
use crate::governance::policy::PolicyGate;
use crate::input::Actor;

/// What Toolsmith tells an upstream it can do as its client: the calling client answers.
pub(crate) fn client_capabilities() -> ClientCapabilities {
    #[allow(
        deprecated,
        reason = "sampling and roots are MCP 2025-11-25's; rmcp marks them for SEP-2577"
    )]
    let capabilities = ClientCapabilities::builder()
        .enable_roots()
        .enable_sampling()
        .enable_elicitation()
        .build();
    capabilities
}

/// The service's rule for requests to a caller's client, shared with JS tools.
pub(crate) struct Asks {
    pub(crate) gate: Arc<ClientRequestGate>,
    pub(crate) policy: Arc<PolicyGate>,
    pub(crate) audit: Arc<AuditLog>,
}

/// One call of a bridged tool in flight.
struct InFlight {
    /// The `tools/call` request's id and progress token on the upstream connection, once it is
    /// sent. The call is listed before it is sent: an upstream may ask its caller something
    /// before `send_request` returns, and must find the call then.
    sent: OnceLock<Sent>,
    ctx: ToolContext,
    client: Client,
    /// The catalogue name of the tool called.
    tool: String,
    budget: ClientRequestBudget,
    /// For a call run as a task upstream: the upstream's task id, and the id of the
    /// `tasks/result` request whose stream carries the task's requests.
    task: OnceLock<String>,
    waiting: OnceLock<RequestId>,
}

/// The calls in flight on one upstream connection, and the rule for asking their callers.
/// What identifies a sent call on the upstream connection.
struct Sent {
    request_id: RequestId,
    progress_token: ProgressToken,
}

pub(crate) struct Relay {
    server: String,
    asks: Option<Arc<Asks>>,
    calls: Mutex<Vec<Arc<InFlight>>>,
    /// The upstream tools (remote names) this connection learned must run as tasks.
    task_tools: Mutex<HashSet<String>>,
}

impl Relay {
    pub(crate) fn new(server: String, asks: Option<Arc<Asks>>) -> Relay {
        Relay {
            server,
            asks,
            calls: Mutex::new(Vec::new()),
            task_tools: Mutex::new(HashSet::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<InFlight>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Calls `remote` on the upstream for the call of `ctx` (catalogue name `tool`), with its
    /// requests and notifications relayed to the caller's client while it runs; as a task
    /// when the upstream requires it (see the module's doc), kept for `ttl`. Dropping the
    /// future cancels the upstream's call.
    pub(crate) async fn call(
        self: &Arc<Self>,
        peer: &Peer<RoleClient>,
        params: CallToolRequestParams,
        ctx: &ToolContext,
        tool: &str,
        ttl: Duration,
    ) -> Result<CallToolResult, ServiceError> {
        let remote = params.name.to_string();
        if !self.runs_as_task(&remote) {
            let answer = self.call_once(peer, params.clone(), ctx, tool, None).await;
            if !needs_task(&answer) {
                return answer;
            }
            tracing::info!(server = %self.server, tool = %remote, "the upstream requires the tool to run as a task: called as one from now on");
            self.task_tools
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(remote);
        }
        self.call_once(peer, params, ctx, tool, Some(ttl)).await
    }

    fn runs_as_task(&self, remote: &str) -> bool {
        self.task_tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(remote)
    }

    /// One call of the tool, plainly or (with `task`'s ttl) as a task.
    async fn call_once(
        self: &Arc<Self>,
        peer: &Peer<RoleClient>,
        params: CallToolRequestParams,
        ctx: &ToolContext,
        tool: &str,
        task: Option<Duration>,
    ) -> Result<CallToolResult, ServiceError> {
        let request = match task {
            None => RmcpRequest::CallToolRequest(CallToolRequest::new(params)),
            Some(ttl) => {
                let mut params = serde_json::to_value(params)
                    .map_err(|e| invalid(format!("the call cannot be written: {e}")))?;
                let ttl = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
                toolsmith_core::object::set(&mut params, "task", json!({ "ttl": ttl }));
                RmcpRequest::CustomRequest(CustomRequest::new("tools/call", Some(params)))
            }
        };
        let call = Arc::new(InFlight {
            sent: OnceLock::new(),
            ctx: ctx.clone(),
            client: Client::of(ctx),
            tool: tool.to_owned(),
            budget: ClientRequestBudget::default(),
            task: OnceLock::new(),
            waiting: OnceLock::new(),
        });
        self.lock().push(call.clone());
        let mut ending = Ending {
            relay: self.clone(),
            call: call.clone(),
            peer: peer.clone(),
            answered: false,
        };
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        let _ = call.sent.set(Sent {
            request_id: handle.id.clone(),
            progress_token: handle.progress_token.clone(),
        });
        let answer = handle.await_response().await;
        let created = match answer {
            Ok(ServerResult::CustomResult(created)) if task.is_some() => created.0,
            answer => {
                ending.answered = true;
                return match answer? {
                    ServerResult::CallToolResult(result) => Ok(result),
                    _ => Err(ServiceError::UnexpectedResponse),
                };
            }
        };
        // 2025-11-25's `CreateTaskResult`: `{task: {taskId, status, …}}`.
        let Some(task_id) = created
            .get("task")
            .and_then(|t| t.get("taskId"))
            .and_then(Value::as_str)
        else {
            ending.answered = true;
            return Err(invalid(format!(
                "the upstream answered a call made as a task without a task: {created}"
            )));
        };
        let _ = call.task.set(task_id.to_owned());
        let request = RmcpRequest::CustomRequest(CustomRequest::new(
            "tasks/result",
            Some(json!({ "taskId": task_id })),
        ));
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        let _ = call.waiting.set(handle.id.clone());
        let answer = handle.await_response().await;
        ending.answered = true;
        match answer? {
            ServerResult::CallToolResult(mut result) => {
                // The upstream's task is its own affair: its id is not the caller's.
                if let Some(meta) = result.meta.as_mut() {
                    meta.0.remove(RELATED_TASK);
                    if meta.0.is_empty() {
                        result.meta = None;
                    }
                }
                Ok(result)
            }
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }

    /// The call a request from the upstream belongs to (see the module's doc), or why none.
    fn call_of(&self, extensions: &Extensions) -> Result<Arc<InFlight>, String> {
        let calls = self.lock();
        if let Some(InboundStreamOrigin::OutboundRequest(id)) =
            extensions.get::<InboundStreamOrigin>()
            && let Some(call) = calls.iter().find(|c| {
                c.sent.get().is_some_and(|sent| &sent.request_id == id)
                    || c.waiting.get() == Some(id)
            })
        {
            return Ok(call.clone());
        }
        match calls.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(format!(
                "no call of a tool of '{}' is running through Toolsmith, so there is no caller to ask",
                self.server
            )),
            several => Err(format!(
                "{} calls of tools of '{}' are running through Toolsmith and the request does not say which one it belongs to (send it on the call's own stream over streamable HTTP, or make one call at a time)",
                several.len(),
                self.server
            )),
        }
    }

    /// Relays a request of the upstream (`sampling/createMessage`, `elicitation/create`) to the
    /// caller of the call it belongs to, if the rule allows; the caller's answer, or the error
    /// the upstream gets.
    pub(crate) async fn ask(
        &self,
        request: ClientRequest,
        params: Value,
        extensions: &Extensions,
    ) -> Result<Value, ErrorData> {
        let call = self.call_of(extensions).map_err(refused)?;
        let allowed = match &self.asks {
            Some(asks) => asks.gate.may_ask(
                &asks.policy,
                &call.ctx,
                &call.tool,
                request,
                // The operator registered the server: its requests are the tool's own.
                true,
                &call.budget,
            ),
            None => Ok(()),
        };
        let refusal = allowed.is_err();
        let outcome = match allowed {
            Err(reason) => Err(reason),
            Ok(()) => match request {
                ClientRequest::Sampling => call.client.sample(params).await,
                ClientRequest::Elicitation => call.client.elicit(params).await,
            }
            .map_err(|e| e.to_string()),
        };
        if let Some(asks) = &self.asks {
            let details = match &outcome {
                Ok(answer) => json!({
                    "callId": call.ctx.call_id,
                    "server": self.server,
                    "outcome": "answered",
                    "action": answer.get("action"),
                }),
                Err(reason) => json!({
                    "callId": call.ctx.call_id,
                    "server": self.server,
                    "outcome": if refusal { "refused" } else { "failed" },
                    "reason": reason,
                }),
            };
            let actor = Actor::for_caller(call.ctx.user_id.clone(), call.ctx.agent_id.clone());
            let target = AuditTarget::new("tool", call.tool.clone(), Some(call.tool.clone()));
            asks.audit
                .record(
                    &actor,
                    request.audit_action(),
                    target,
                    (None, None),
                    details,
                )
                .await;
        }
        outcome.map_err(refused)
    }

    /// Relays `roots/list` to the caller of the call it belongs to.
    pub(crate) async fn list_roots(&self, extensions: &Extensions) -> Result<Value, ErrorData> {
        let call = self.call_of(extensions).map_err(refused)?;
        call.client
            .list_roots()
            .await
            .map_err(|e| refused(e.to_string()))
    }

    /// Relays progress for the call rmcp gave `token` to.
    pub(crate) async fn progress(
        &self,
        token: &ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) {
        let call = self
            .lock()
            .iter()
            .find(|c| {
                c.sent
                    .get()
                    .is_some_and(|sent| &sent.progress_token == token)
            })
            .cloned();
        if let Some(call) = call
            && let Err(e) = call.client.progress(progress, total, message).await
        {
            tracing::debug!(server = %self.server, error = %e, "an upstream's progress did not reach its caller");
        }
    }

    /// Relays a log message to the one call in flight (named after the upstream when it names
    /// no logger).
    pub(crate) async fn log(&self, level: LogLevel, logger: Option<String>, data: Value) {
        let call = match self.lock().as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        };
        let Some(call) = call else {
            tracing::debug!(server = %self.server, %level, "an upstream's log message belongs to no single call; not relayed");
            return;
        };
        let logger = logger.or_else(|| Some(self.server.clone()));
        if let Err(e) = call.client.log(level, logger, data).await {
            tracing::debug!(server = %self.server, error = %e, "an upstream's log message did not reach its caller");
        }
    }
}

/// The upstream's view of a refusal: an error it can read and show.
fn refused(reason: String) -> ErrorData {
    ErrorData::invalid_request(reason, None)
}

/// Whether a plain call's answer is the refusal the specification has a server give a plain
/// call of a tool that requires to run as a task: `-32601` (Method not found) — as a JSON-RPC
/// error, or as the tool error the TypeScript SDK's `McpServer` makes of it ("MCP error -32601:
/// Tool … requires task augmentation (taskSupport: 'required')").
fn needs_task(answer: &Result<CallToolResult, ServiceError>) -> bool {
    match answer {
        Err(ServiceError::McpError(e)) => e.code == ErrorCode::METHOD_NOT_FOUND,
        Ok(result) if result.is_error == Some(true) => match result.content.as_slice() {
            [only] => only.as_text().is_some_and(|t| {
                t.text.starts_with("MCP error -32601:") && t.text.contains("task")
            }),
            _ => false,
        },
        _ => false,
    }
}

/// A failure of the relay's own, as rmcp's error.
fn invalid(reason: String) -> ServiceError {
    ServiceError::McpError(ErrorData::internal_error(reason, None))
}

/// The `_meta` key of 2025-11-25's tasks naming the task a message belongs to.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// Takes a call off the list when it ends, and cancels it on the upstream when it ended
/// without an answer (its caller went away, its time ran out).
struct Ending {
    relay: Arc<Relay>,
    call: Arc<InFlight>,
    peer: Peer<RoleClient>,
    answered: bool,
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.relay.lock().retain(|c| !Arc::ptr_eq(c, &self.call));
        let Some(sent) = self.call.sent.get().filter(|_| !self.answered) else {
            return;
        };
        let peer = self.peer.clone();
        if let Some(task_id) = self.call.task.get() {
            // A task is cancelled with `tasks/cancel`, not `notifications/cancelled`.
            let request = RmcpRequest::CustomRequest(CustomRequest::new(
                "tasks/cancel",
                Some(json!({ "taskId": task_id })),
            ));
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let _ = peer.send_request(request).await;
                });
            }
            return;
        }
        let cancelled = CancelledNotificationParam::new(
            Some(sent.request_id.clone()),
            Some("the call was cancelled by its caller".to_owned()),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(cancelled).await;
            });
        }
    }
}
