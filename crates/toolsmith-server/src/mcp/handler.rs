//! [`ToolsmithMcp`]: the rmcp `ServerHandler` of one MCP session (or of one stateless
//! 2026-07-28 request), acting for one identity.
//!
//! - `tools/list` — the cached catalogue of the caller ([`super::catalog`]).
//! - `tools/call` — server tools (control plane, meta-tools, compat) run here; every other name
//!   goes through the engine pipeline (`ToolService::execute`). A name nobody can see is a
//!   JSON-RPC `-32602` ("Unknown tool: …", as the MCP spec shows it); arguments that break the
//!   tool's schema are `-32602` with `data: {violations, schema}`; everything that goes wrong
//!   while running (the tool threw, a limit hit, a lifecycle rule refused) is a result with
//!   `isError: true` the model can read.
//! - list changes — [`super::notify`]: a watcher per session from `notifications/initialized`,
//!   and `subscriptions/listen` for 2026-07-28 clients.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::{CancellationToken, DropGuard};
use toolsmith_core::{ApprovalAnswer, Approver, ErrorKind, ToolContext, ToolRegistry, ToolResult};
use toolsmith_service::{Actor, ToolService};
use toolsmith_store::ApprovalDecision;

use super::McpShared;
use super::catalog::{SERVER_TOOLS, ServerOp, call_result, registry_tool};
use super::{approval, compat, control_plane, meta_tools, notify};
use crate::AppState;
use crate::auth::{Identity, Scope};

const INSTRUCTIONS: &str = "Toolsmith: tools you can grow yourself. Call any listed tool by name, or discover tools with search_tools → get_tool_help → use_tool. Create your own JavaScript tools with create_tool (the code is the body of an async function that receives `args` and returns a JSON value); an active tool appears in tools/list immediately. Manage them with list_custom_tools, get_custom_tool, update_custom_tool, toggle_custom_tool and delete_custom_tool; try code once with run_js_ephemeral.";

/// Versions recorded for `subscriptions/listen` requests whose acknowledgment is on its way;
/// a few at most are ever pending, more means some listens failed before the handler ran.
const MAX_PENDING_LISTENS: usize = 16;

/// The MCP server of one session (or one stateless request), acting for one identity.
pub struct ToolsmithMcp {
    inner: Arc<Inner>,
    /// Ends this session's background work (the list-change watcher) when the session ends.
    _stop_on_drop: DropGuard,
}

struct Inner {
    shared: Arc<McpShared>,
    identity: Identity,
    /// The catalogue version this session's client last saw (listed or was notified of).
    seen: Arc<AtomicU64>,
    watching: AtomicBool,
    /// Versions recorded just before rmcp acknowledges a `subscriptions/listen`, oldest first.
    pending_listens: Mutex<VecDeque<u64>>,
    stop: CancellationToken,
}

impl ToolsmithMcp {
    /// The MCP server of one session acting for `identity`, over any rmcp transport
    /// (`ServiceExt::serve`). Sessions made this way share nothing with other servers but
    /// the service (each has its own `tools/list` cache).
    pub fn new(state: AppState, identity: Identity) -> ToolsmithMcp {
        ToolsmithMcp::with_shared(McpShared::new(state), identity)
    }

    pub(crate) fn with_shared(shared: Arc<McpShared>, identity: Identity) -> ToolsmithMcp {
        let stop = CancellationToken::new();
        let seen = shared
            .state
            .service
            .registry()
            .catalog_version(&identity.user_id);
        ToolsmithMcp {
            _stop_on_drop: stop.clone().drop_guard(),
            inner: Arc::new(Inner {
                shared,
                identity,
                seen: Arc::new(AtomicU64::new(seen)),
                watching: AtomicBool::new(false),
                pending_listens: Mutex::new(VecDeque::new()),
                stop,
            }),
        }
    }

    fn service(&self) -> &Arc<ToolService> {
        &self.inner.shared.state.service
    }

    fn registry(&self) -> &Arc<ToolRegistry> {
        self.service().registry()
    }

    fn owner(&self) -> &str {
        &self.inner.identity.user_id
    }

    fn compat(&self) -> bool {
        self.inner.shared.catalog.compat()
    }

    fn caller(&self, ct: CancellationToken, approver: Option<Approver>) -> Caller<'_> {
        Caller {
            shared: &self.inner.shared,
            identity: &self.inner.identity,
            ct,
            approver,
        }
    }

    fn pending_listens(&self) -> std::sync::MutexGuard<'_, VecDeque<u64>> {
        self.inner
            .pending_listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Runs a `tools/call`. `approver` asks the person behind a 2025-11-25 client during the
    /// call; `input_required` turns a call waiting for approval into an `InputRequiredResult`
    /// for a 2026-07-28 client (see [`super::approval`]).
    async fn call(
        &self,
        request: CallToolRequestParams,
        ct: CancellationToken,
        approver: Option<Approver>,
        input_required: bool,
    ) -> Result<CallToolResponse, ErrorData> {
        let name: &str = &request.name;
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let caller = self.caller(ct, approver);

        if let Some(server_tool) = SERVER_TOOLS.find(name, self.compat()) {
            if let Some(why) = self.inner.identity.denial(server_tool.op.scope()) {
                return Ok(call_result(ToolResult::error(ErrorKind::Denied, why)).into());
            }
            check_args(name, &server_tool.schema, &args)?;
            let outcome = match server_tool.op {
                ServerOp::Control(op) => control_plane::call(&caller, op, args).await,
                ServerOp::Meta(op) => meta_tools::call(&caller, op, args).await,
                ServerOp::Compat(op) => compat::call(&caller, op, args).await,
            };
            return outcome.map(CallToolResponse::from).map_err(|why| {
                ErrorData::invalid_params(
                    format!("invalid arguments for tool '{name}': {why}"),
                    Some(json!({"schema": server_tool.schema.schema()})),
                )
            });
        }

        let Some(tool) = caller.find_tool(name) else {
            return Err(unknown_tool(name));
        };
        if let Some(why) = self.inner.identity.denial(Scope::ToolsExecute) {
            return Ok(call_result(ToolResult::error(ErrorKind::Denied, why)).into());
        }
        check_args(name, &tool.schema, &args)?;
        if let Some((approval_id, answer)) = approval::retry_answer(&request)
            && let Some(refused) = self.record_answer(&approval_id, answer).await
        {
            return Ok(call_result(refused).into());
        }
        let mut ctx = caller.tool_context();
        // `_meta.context`: what the client knows of the conversation, for HTTP tools.
        ctx.call_context = request
            .meta
            .as_ref()
            .and_then(|meta| meta.0.0.get("context"))
            .filter(|c| c.is_object())
            .map(|c| std::sync::Arc::new(c.clone()));
        let res = self.service().execute(name, args, ctx).await;
        if res.error_kind() == Some(ErrorKind::RateLimited) {
            return Err(rate_limited(&res));
        }
        if input_required
            && res.error_kind() == Some(ErrorKind::ApprovalRequired)
            && let Some(approval_id) = res.content.get("approvalId").and_then(Value::as_str)
        {
            let preview = self
                .service()
                .approvals()
                .get(Some(self.owner()), approval_id)
                .await
                .map(|a| a.args_preview)
                .unwrap_or_default();
            return Ok(approval::input_required(name, &preview, approval_id).into());
        }
        Ok(call_result(res).into())
    }

    /// Records the answer a 2026-07-28 client brought back with its retry. A denial ends the
    /// call (the result to return); an allowance lets the retried call run.
    async fn record_answer(
        &self,
        approval_id: &str,
        answer: Option<ApprovalAnswer>,
    ) -> Option<ToolResult> {
        let decision = match answer? {
            ApprovalAnswer::AllowOnce => ApprovalDecision::AllowOnce,
            ApprovalAnswer::AllowAlways => ApprovalDecision::AllowAlways,
            ApprovalAnswer::Deny => ApprovalDecision::Deny,
        };
        let decided_by = format!("{} (asked in the client)", self.owner());
        let outcome = self
            .service()
            .approvals()
            .decide(Some(self.owner()), approval_id, decision, &decided_by)
            .await;
        if let Err(e) = &outcome {
            // Decided elsewhere or expired: the retried call meets that state.
            tracing::debug!(approval = %approval_id, error = %e, "the client's answer was not recorded");
        }
        (decision == ApprovalDecision::Deny).then(|| {
            ToolResult::error(
                ErrorKind::Denied,
                format!("the user did not approve this call (approval {approval_id})"),
            )
        })
    }
}

/// JSON-RPC error code of a call refused by a rate limit or concurrency cap (a server-defined
/// code, `-32000` to `-32099`); `data.retryAfterSeconds` says when to try again.
pub(crate) const RATE_LIMITED_CODE: i32 = -32029;

/// The protocol error for a call the limits refused: the caller learns when to retry.
fn rate_limited(res: &ToolResult) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode(RATE_LIMITED_CODE),
        res.error_message().unwrap_or("rate limited").to_owned(),
        Some(json!({
            "kind": "rate_limited",
            "limit": res.content.get("limit"),
            "retryAfterSeconds": res.content.get("retryAfterSeconds").and_then(Value::as_u64).unwrap_or(1),
        })),
    )
}

/// `-32602` for a tool the caller cannot see.
fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("Unknown tool: {name}"),
        Some(
            json!({"tool": name, "hint": "call tools/list or search_tools to see the tools you can call"}),
        ),
    )
}

/// `-32602` with every violation and the schema when `args` break a tool's schema.
fn check_args(
    name: &str,
    schema: &toolsmith_core::schema::CompiledSchema,
    args: &Value,
) -> Result<(), ErrorData> {
    let violations = schema.violations(args);
    if violations.is_empty() {
        return Ok(());
    }
    let summary: Vec<String> = violations
        .iter()
        .map(|v| {
            let at = if v.instance_path.is_empty() {
                "/"
            } else {
                &v.instance_path
            };
            format!("{at}: {}", v.message)
        })
        .collect();
    let details = toolsmith_core::schema::violation_details(&violations, schema.schema());
    Err(ErrorData::invalid_params(
        format!(
            "invalid arguments for tool '{name}': {}",
            summary.join("; ")
        ),
        Some(Value::Object(details)),
    ))
}

/// What a control-plane or meta-tool call needs to know about its caller.
pub(crate) struct Caller<'a> {
    shared: &'a McpShared,
    identity: &'a Identity,
    /// Cancelled when the client cancels the request.
    ct: CancellationToken,
    /// Asks the person behind the client to approve a call (clients with elicitation).
    approver: Option<Approver>,
}

impl Caller<'_> {
    pub fn service(&self) -> &ToolService {
        &self.shared.state.service
    }

    /// The tools this caller may see and call (the policy applied).
    pub fn visible_tools(&self) -> Vec<Arc<toolsmith_core::RegisteredTool>> {
        self.service()
            .visible_tools(&self.identity.user_id, self.identity.agent_id.as_deref())
    }

    pub fn registry(&self) -> &ToolRegistry {
        self.shared.state.service.registry()
    }

    /// The registered tool `name` if it exists for this caller (a per-agent tool exists only
    /// for its agent).
    pub fn find_tool(&self, name: &str) -> Option<Arc<toolsmith_core::RegisteredTool>> {
        self.registry()
            .get(self.owner(), name)
            .filter(|tool| tool.is_visible_to(self.identity.agent_id.as_deref()))
    }

    /// MCP callers are models.
    pub fn actor(&self) -> Actor {
        Actor::llm(self.identity.user_id.clone())
    }

    pub fn owner(&self) -> &str {
        &self.identity.user_id
    }

    pub fn compat(&self) -> bool {
        self.shared.catalog.compat()
    }

    /// The context of one tool call made for this caller.
    pub fn tool_context(&self) -> ToolContext {
        let mut ctx = ToolContext::new(self.identity.user_id.clone());
        ctx.agent_id = self.identity.agent_id.clone();
        ctx.cancellation = self.ct.child_token();
        ctx.approver = self.approver.clone();
        ctx
    }
}

impl ServerHandler for ToolsmithMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(
            Implementation::new("toolsmith", env!("CARGO_PKG_VERSION"))
                .with_title("Toolsmith")
                .with_description(
                    "Runtime tools for AI agents: create, discover and run JavaScript tools.",
                ),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        // The client's first view of the catalogue is now.
        self.inner.seen.store(
            self.registry().catalog_version(self.owner()),
            Ordering::SeqCst,
        );
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.inner.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        tokio::spawn(notify::watch_session(
            self.registry().clone(),
            self.owner().to_owned(),
            self.inner.seen.clone(),
            context.peer,
            self.inner.stop.clone(),
        ));
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let registry = self.registry();
        // Recorded before the list is built: a change racing with it is still notified.
        self.inner
            .seen
            .store(registry.catalog_version(self.owner()), Ordering::SeqCst);
        let tools = self.inner.shared.catalog.tools(registry, self.owner());
        let gate = self.service().policy();
        if !gate.is_configured() && !registry.has_agent_scoped(self.owner()) {
            return Ok(ListToolsResult::with_all_items(tools));
        }
        // A policy or per-agent tools: keep the server tools, and the tools this caller may call.
        let mut ctx = ToolContext::new(self.owner());
        ctx.agent_id = self.inner.identity.agent_id.clone();
        let visible = tools
            .into_iter()
            .filter(|tool| {
                SERVER_TOOLS.find(&tool.name, self.compat()).is_some()
                    || registry
                        .get(self.owner(), &tool.name)
                        .is_some_and(|registered| {
                            registered.is_visible_to(ctx.agent_id.as_deref())
                                && gate.check(&ctx, &registered).is_ok()
                        })
            })
            .collect();
        Ok(ListToolsResult::with_all_items(visible))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if let Some(server_tool) = SERVER_TOOLS.find(name, self.compat()) {
            return Some(server_tool.tool.clone());
        }
        self.registry()
            .get(self.owner(), name)
            .filter(|tool| tool.is_visible_to(self.inner.identity.agent_id.as_deref()))
            .map(|tool| registry_tool(&tool.definition))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // rmcp moves the request's `_meta` into the context; `call` reads it from the request.
        if request.meta.is_none() && !context.meta.0.0.is_empty() {
            request.meta = Some(context.meta.clone());
        }
        let approver = approval::approver_for(&context);
        let input_required = approval::wants_input_required(&context);
        self.call(request, context.ct.clone(), approver, input_required)
            .await
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp acknowledges the listen right after this returns and only then calls `listen`:
        // record the version now so a change in between is caught up after the acknowledgment.
        let version = self.registry().catalog_version(self.owner());
        let mut pending = self.pending_listens();
        if pending.len() >= MAX_PENDING_LISTENS {
            pending.pop_front();
        }
        pending.push_back(version);
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let recorded = self.pending_listens().pop_front();
        let baseline = recorded.unwrap_or_else(|| self.registry().catalog_version(self.owner()));
        notify::listen(
            self.registry().clone(),
            self.owner().to_owned(),
            baseline,
            subscription,
            self.inner.stop.clone(),
        )
        .await;
        Ok(())
    }
}
