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
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, ErrorData, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
    ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio_util::sync::{CancellationToken, DropGuard};
use toolsmith_core::{
    ApprovalDecision, Approver, Client, ErrorKind, ToolContext, ToolRegistry, ToolResult, json_type,
};
use toolsmith_service::{Actor, ToolService};

use super::McpShared;
use super::catalog::{self, SERVER_TOOLS, ServerOp, call_result, registry_tool};
use super::search_index::OwnerIndex;
use super::{
    approval, client, compat, control_plane, hints, meta_tools, notify, prompts, resources, tasks,
    tasks_2025,
};
use crate::auth::{Identity, Scope};
use crate::{AppState, McpListing};

/// The server's `instructions`, true to what `tools/list` carries under `listing`
/// (`mcp_listing::the_instructions_promise_only_what_each_listing_does` holds each promise).
fn instructions(listing: McpListing) -> &'static str {
    match listing {
        McpListing::Full => {
            "Toolsmith: tools you can grow yourself. Call any listed tool by name, or discover tools with search_tools → get_tool_help → use_tool. Create your own JavaScript tools with create_tool (the code is the body of an async function that receives `args` and returns a JSON value); an active tool appears in tools/list immediately, and notifications/tools/list_changed tells you when the list changes. Manage them with list_custom_tools, get_custom_tool, update_custom_tool, toggle_custom_tool and delete_custom_tool; try code once with run_js_ephemeral."
        }
        McpListing::Compact => {
            "Toolsmith: tools you can grow yourself. tools/list shows the control plane, the discovery tools and up to 8 of your own tools, the most used first (your custom tools, and the built-in or bridged tools you called most in the last 30 days); every other tool (the built-ins too: files, notes, tasks, web, dates …) is found with search_tools, explained by get_tool_help and called with use_tool or by its name. Create your own JavaScript tools with create_tool (the code is the body of an async function that receives `args` and returns a JSON value): an active tool can be called by its name at once, and notifications/tools/list_changed tells you when your tools change. Manage them with list_custom_tools, get_custom_tool, update_custom_tool, toggle_custom_tool and delete_custom_tool; try code once with run_js_ephemeral."
        }
        McpListing::Discovery => {
            "Toolsmith: tools you can grow yourself. tools/list shows only the control plane and the discovery tools, whatever the catalogue holds: every other tool is found with search_tools, explained by get_tool_help and called with use_tool or by its name. Create your own JavaScript tools with create_tool (the code is the body of an async function that receives `args` and returns a JSON value): an active tool is not listed, but can be called by its name (or with use_tool) at once. Manage them with list_custom_tools, get_custom_tool, update_custom_tool, toggle_custom_tool and delete_custom_tool; try code once with run_js_ephemeral."
        }
    }
}

/// Versions recorded for `subscriptions/listen` requests whose acknowledgment is on its way;
/// a few at most are ever pending, more means some listens failed before the handler ran.
const MAX_PENDING_LISTENS: usize = 16;

/// How a call of a registry tool ended.
enum Called {
    /// The tool ran (or its arguments were refused): the result, to be shaped for the name
    /// it was called by.
    Ran(ToolResult),
    /// An answer already in its final form (a denial, an approval round).
    Answered(CallToolResponse),
}

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
    /// The least severe level this session's client wants log messages at (`logging/setLevel`).
    log_level: Arc<client::SessionLogLevel>,
    /// The resources this session subscribed to (`resources/subscribe`, [`resources`]).
    resource_subscriptions: Arc<resources::Subscriptions>,
    /// The prompt-list version this session's client last saw ([`prompts`]).
    prompts_seen: Arc<AtomicU64>,
    /// Prompt-list versions recorded beside `pending_listens`, oldest first.
    pending_prompt_listens: Mutex<VecDeque<u64>>,
    /// What each listen's resource side starts from, recorded beside `pending_listens`.
    pending_resource_listens: Mutex<VecDeque<resources::ListenStart>>,
}

impl ToolsmithMcp {
    /// The caller's most used tools for the compact listing: its own active custom tools and
    /// the built-in and bridged tools it called in the last 30 days, ranked by its recent calls
    /// of each whatever the source (then a custom tool's own count, the most recently used, the
    /// newest), at most [`catalog::COMPACT_OWN_TOOLS`] and [`catalog::COMPACT_OWN_BYTES`] of
    /// JSON, each one the caller may call.
    async fn most_used_own_tools(&self, ctx: &ToolContext) -> Vec<rmcp::model::Tool> {
        let query = toolsmith_service::ToolQuery {
            status: Some(toolsmith_core::ToolStatus::Active),
            limit: 1000,
            ..toolsmith_service::ToolQuery::owner(self.owner())
        };
        let identity = &self.inner.identity;
        let actor = Actor::llm(identity.user_id.clone())
            .with_agent(identity.agent_id.clone())
            .with_member(identity.member.clone());
        let records = match self.service().list(&actor, query).await {
            Ok(page) => page.tools,
            Err(e) => {
                // The listing stays the discovery tools; a search still finds every tool.
                tracing::warn!(error = %e, "could not read the caller's tools for tools/list");
                return Vec::new();
            }
        };
        let mut recent = match self.service().recent_calls_by_tool(self.owner()).await {
            Ok(counts) => counts,
            Err(e) => {
                // The custom tools are still ranked by their own counts.
                tracing::warn!(error = %e, "could not read the caller's recent calls for tools/list");
                std::collections::HashMap::new()
            }
        };
        let mut candidates: Vec<catalog::UsedTool> = records
            .into_iter()
            .map(|record| catalog::UsedTool {
                recent_calls: recent.remove(&record.name).unwrap_or(0),
                name: record.name,
                usage_count: record.usage_count,
                last_used_at: record.last_used_at,
                created_at: Some(record.created_at),
            })
            .collect();
        // What is left are built-in and bridged tools (and custom tools renamed or gone since,
        // which `listed` drops).
        candidates.extend(
            recent
                .into_iter()
                .map(|(name, recent_calls)| catalog::UsedTool {
                    name,
                    recent_calls,
                    usage_count: 0,
                    last_used_at: None,
                    created_at: None,
                }),
        );
        let registry = self.registry();
        catalog::most_used(candidates, |name| {
            registry
                .get(self.owner(), name)
                .filter(|tool| self.service().may_call(ctx, tool))
                .filter(|tool| self.server_tool(&tool.definition.name).is_none())
                .map(|tool| registry_tool(&tool.definition))
        })
    }

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
        let prompts_seen = shared
            .state
            .service
            .prompt_catalog()
            .version(&identity.user_id);
        ToolsmithMcp {
            _stop_on_drop: stop.clone().drop_guard(),
            inner: Arc::new(Inner {
                shared,
                identity,
                seen: Arc::new(AtomicU64::new(seen)),
                watching: AtomicBool::new(false),
                pending_listens: Mutex::new(VecDeque::new()),
                stop,
                log_level: Arc::default(),
                resource_subscriptions: Arc::default(),
                prompts_seen: Arc::new(AtomicU64::new(prompts_seen)),
                pending_prompt_listens: Mutex::new(VecDeque::new()),
                pending_resource_listens: Mutex::new(VecDeque::new()),
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

    /// The server tool `name`, if this server serves it (in compat mode, its profile's).
    fn server_tool(&self, name: &str) -> Option<&'static super::catalog::ServerTool> {
        SERVER_TOOLS
            .find(name, self.compat())
            .filter(|t| t.served_in(self.inner.shared.catalog.surface()))
    }

    /// Whether this caller may read its workspace's files as resources: a `read_file` call
    /// over MCP needs the `tools:execute` scope (the error says so).
    fn files_readable(&self) -> Result<(), String> {
        match self.inner.identity.denial(Scope::ToolsExecute) {
            None => Ok(()),
            Some(why) => Err(why),
        }
    }

    /// The `instructions` this caller gets: Toolsmith's own, then (outside compat mode) those
    /// of the bridged servers it may see, all of it at most
    /// [`toolsmith_service::bridge::MAX_INSTRUCTIONS_CHARS`] characters.
    fn instructions(&self) -> String {
        let own = instructions(self.inner.shared.state.config.mcp_listing);
        if self.compat() {
            return own.to_owned();
        }
        let bridged = self
            .service()
            .bridged_instructions(&self.inner.identity.tool_context());
        if bridged.is_empty() {
            return own.to_owned();
        }
        format!("{own}\n\nBridged MCP servers' own instructions:\n\n{bridged}")
            .chars()
            .take(toolsmith_service::bridge::MAX_INSTRUCTIONS_CHARS)
            .collect()
    }

    /// Whether this server serves dynamic-mcp's enterprise resources and prompt.
    fn serves_resources(&self) -> bool {
        self.compat() && self.inner.shared.catalog.surface().enterprise()
    }

    fn caller(
        &self,
        ct: CancellationToken,
        approver: Option<Approver>,
        subagent_depth: u32,
    ) -> Caller<'_> {
        Caller {
            shared: &self.inner.shared,
            identity: &self.inner.identity,
            ct,
            approver,
            client: None,
            subagent_depth,
        }
    }

    fn pending_listens(&self) -> std::sync::MutexGuard<'_, VecDeque<u64>> {
        self.inner
            .pending_listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Runs a `tools/call`. `approver` asks the person behind a 2025-11-25 client during the
    /// call; `client` is the calling client as the tool sees it ([`client`]); `input_required`
    /// is `Ok` when a call waiting for approval turns into an
    /// `InputRequiredResult` for a 2026-07-28 client, or says why not (see [`super::approval`]).
    async fn call(
        &self,
        request: CallToolRequestParams,
        ct: CancellationToken,
        approver: Option<Approver>,
        client: Option<Client>,
        input_required: Result<(), String>,
    ) -> Result<CallToolResponse, ErrorData> {
        // In compat mode, what dynamic-mcp's execution guard counts is counted for
        // `system.guard_metrics` (compat/system.rs).
        let counted = self.compat() && self.guard_counts(&request.name);
        let active = counted.then(|| self.inner.shared.profile.guard.enter(&request.name));
        let answer = self
            .call_uncounted(request, ct, approver, client, input_required)
            .await;
        if let Some(active) = active {
            active.finish(&answer);
        }
        answer
    }

    /// Whether dynamic-mcp's guard counts calls of `name`: its dynamic tools (this owner's
    /// custom tools), `run_js_ephemeral`, the sandbox sessions and upstream attach.
    fn guard_counts(&self, name: &str) -> bool {
        match self.server_tool(name) {
            Some(server_tool) => compat::profile::guarded(server_tool.op),
            None => self
                .registry()
                .get(self.owner(), name)
                .is_some_and(|tool| tool.custom_id().is_some()),
        }
    }

    async fn call_uncounted(
        &self,
        request: CallToolRequestParams,
        ct: CancellationToken,
        approver: Option<Approver>,
        client: Option<Client>,
        input_required: Result<(), String>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name: &str = &request.name;
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        let depth = subagent_depth(request.meta.as_ref().map(|m| &m.0.0))?;
        let mut caller = self.caller(ct, approver, depth);
        caller.client = client;

        if let Some(server_tool) = self.server_tool(name) {
            if let Some(why) = self.inner.identity.denial(server_tool.op.scope()) {
                // The dynamic-mcp names answer in dynamic-mcp's words, even here.
                return Ok(match server_tool.op {
                    ServerOp::Compat(op) => compat::denied(op, self.inner.identity.read_only, why),
                    _ => call_result(ToolResult::error(ErrorKind::Denied, why)),
                }
                .into());
            }
            if let Err(invalid) = check_args(name, &server_tool.schema, &args) {
                return Ok(match server_tool.op {
                    ServerOp::Compat(op) => compat::invalid_arguments(op, name, invalid),
                    _ => call_result(invalid),
                }
                .into());
            }
            if let ServerOp::Compat(compat::Op::Sandbox(op)) = server_tool.op {
                return self
                    .call_as_builtin(&caller, op, &args, &request, input_required)
                    .await;
            }
            let outcome = match server_tool.op {
                ServerOp::Control(op) => control_plane::call(&caller, op, args).await,
                ServerOp::Manage(op) => super::manage::call(&caller, op, args).await,
                ServerOp::Meta(op) => meta_tools::call(&caller, op, args).await,
                ServerOp::Compat(op) => compat::call(&caller, op, args).await,
                ServerOp::Profile(op) => compat::profile::call(&caller, op, args).await,
            };
            return outcome.map(CallToolResponse::from).map_err(|why| {
                ErrorData::invalid_params(
                    format!("invalid arguments for tool '{name}': {why}"),
                    Some(json!({"schema": server_tool.schema.schema()})),
                )
            });
        }

        let Some(tool) = caller.find_tool(name) else {
            return Err(unknown_tool(name, hints::unknown_tool(&caller, name).await));
        };
        let compat_shape = self.compat() && tool.custom_id().is_some();
        // dynamic-mcp's clients send a dynamic tool's arguments as `{"args": {…}}`.
        let args = if compat_shape {
            compat::invocation_args(tool.schema.schema(), args)
        } else {
            args
        };
        Ok(
            match self
                .call_registered(&caller, &tool, args, &request, input_required)
                .await?
            {
                Called::Answered(response) => response,
                Called::Ran(res) if compat_shape => compat::invocation_result(res).into(),
                Called::Ran(res) => call_result(res).into(),
            },
        )
    }

    /// A `tools/call` of a client that takes tasks, run as a task ([`tasks::start`]) when it
    /// calls a registry tool it may call with valid arguments; `None` leaves every other case
    /// (server tools, compat mode, unknown tools, refusals) to the direct call, which answers
    /// them as it always does.
    async fn call_as_task(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        let started = self
            .start_task(request, context, None, tasks::Form::Extension)
            .await?;
        Some(started.map(|record| {
            CallToolResponse::Task(rmcp::model::CreateTaskResult::new(tasks::task(&record)))
        }))
    }

    /// Starts the call of `request` as a task ([`tasks::launch`]) when it is a registry tool
    /// the caller may call with valid arguments; `None` for every other case.
    async fn start_task(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        ttl_ms: Option<u64>,
        form: tasks::Form,
    ) -> Option<Result<toolsmith_core::ToolTaskRecord, ErrorData>> {
        if self.compat() || self.server_tool(&request.name).is_some() {
            return None;
        }
        if self.inner.identity.denial(Scope::ToolsExecute).is_some() {
            return None;
        }
        let depth = match subagent_depth(request.meta.as_ref().map(|m| &m.0.0)) {
            Ok(depth) => depth,
            Err(e) => return Some(Err(e)),
        };
        let caller = self.caller(context.ct.clone(), None, depth);
        let tool = caller.find_tool(&request.name)?;
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        if check_args(tool.name(), &tool.schema, &args).is_err() {
            return None;
        }
        let mut ctx = caller.tool_context();
        ctx.call_context = request
            .meta
            .as_ref()
            .and_then(|meta| meta.0.0.get("context"))
            .filter(|c| c.is_object())
            .map(|c| std::sync::Arc::new(c.clone()));
        Some(
            tasks::launch(
                self.service(),
                tool.name(),
                args,
                ctx,
                ttl_ms,
                context.peer.clone(),
                form,
            )
            .await,
        )
    }

    /// A method of 2025-11-25's tasks, renamed at the edge ([`tasks_2025`]): `tools/list`
    /// with `execution.taskSupport`, a `tools/call` asking for a task with its `task` field,
    /// `tasks/get` and `tasks/cancel` in that revision's shape (or the extension's, for a
    /// client that declared it).
    async fn serve_2025(
        &self,
        method: &str,
        params: Option<Value>,
        context: RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let ctx = self.inner.identity.tool_context();
        let task_id = |params: &Option<Value>| {
            params
                .as_ref()
                .and_then(|p| p.get("taskId"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| {
                    ErrorData::invalid_params(
                        format!(
                            "{method} needs {{\"taskId\": \"task_…\"}}, the id tools/call answered"
                        ),
                        None,
                    )
                })
        };
        let shaped = |result: rmcp::model::ServerResult| {
            let mut result = result;
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            serde_json::to_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))
        };
        match method {
            "tools/list" => {
                let request = params
                    .map(serde_json::from_value::<PaginatedRequestParams>)
                    .transpose()
                    .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
                let listed = self.list_tools(request, context).await?;
                let mut listed = shaped(rmcp::model::ServerResult::ListToolsResult(listed))?;
                if !self.compat()
                    && let Some(tools) = listed.get_mut("tools").and_then(Value::as_array_mut)
                {
                    for tool in tools {
                        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
                        if self.server_tool(name).is_none() {
                            tasks_2025::with_task_support(tool);
                        }
                    }
                }
                Ok(listed)
            }
            "tools/call" => {
                let ttl_ms = tasks_2025::asked_ttl(params.as_ref())?;
                let mut params = params.unwrap_or_default();
                if let Some(map) = params.as_object_mut() {
                    map.remove("task");
                }
                let mut request: CallToolRequestParams = serde_json::from_value(params)
                    .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
                if request.meta.is_none() && !context.meta.0.0.is_empty() {
                    request.meta = Some(context.meta.clone());
                }
                if let Some(started) = self
                    .start_task(&request, &context, ttl_ms, tasks::Form::Experimental2025)
                    .await
                {
                    return Ok(json!({"task": tasks::task_2025(&started?)}));
                }
                // Not a tool that runs as a task (a server tool, an unknown name, arguments
                // that break its schema): answered as a direct call.
                let response = self.call_tool(request, context).await?;
                shaped(rmcp::model::ServerResult::from(response))
            }
            "tasks/get" => {
                let id = task_id(&params)?;
                if tasks_2025::takes_extension(&context) {
                    tasks_2025::extension_answer(tasks::get(self.service(), &ctx, &id).await?)
                } else {
                    tasks::get_2025(self.service(), &ctx, &id).await
                }
            }
            "tasks/cancel" => {
                let id = task_id(&params)?;
                let record = tasks::cancel(self.service(), &ctx, &id).await?;
                if tasks_2025::takes_extension(&context) {
                    Ok(json!({}))
                } else {
                    Ok(tasks::task_2025(&record))
                }
            }
            _ => Err(method_not_found()),
        }
    }

    /// A compat name for a built-in (`sandbox.exec` …): its arguments translated, then the
    /// built-in called through the same door as by its own name ([`Self::call_registered`]),
    /// and its result answered in dynamic-mcp's shape.
    async fn call_as_builtin(
        &self,
        caller: &Caller<'_>,
        op: compat::sandbox::SandboxOp,
        args: &Value,
        request: &CallToolRequestParams,
        input_required: Result<(), String>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = caller.find_tool(op.builtin()) else {
            // Not listed either (`ServerTool::held_by`); a client that calls it anyway is
            // told why, in the compat shape.
            return Ok(compat::sandbox::unavailable(op).into());
        };
        // dynamic-mcp's rule: with an admin token configured, every sandbox call carries it.
        let mut checked = args.clone();
        if let compat::AdminCheck::Refused(refused) =
            compat::check_admin_token(caller, &mut checked)
        {
            return Ok(refused.into());
        }
        let translated = match compat::sandbox::builtin_args(caller, op, &checked) {
            Ok(translated) => translated,
            Err(refused) => return Ok(refused.into()),
        };
        let builtin_args = translated.args.clone();
        Ok(
            match self
                .call_registered(caller, &tool, builtin_args, request, input_required)
                .await?
            {
                Called::Answered(response) => response,
                Called::Ran(res) => compat::sandbox::answer(op, res, translated).into(),
            },
        )
    }

    /// Runs the registry's `tool` for `caller`: the execute scope, the schema, the approval
    /// answer a retry brings, then the engine pipeline (`ToolService::execute`).
    async fn call_registered(
        &self,
        caller: &Caller<'_>,
        tool: &toolsmith_core::RegisteredTool,
        args: Value,
        request: &CallToolRequestParams,
        input_required: Result<(), String>,
    ) -> Result<Called, ErrorData> {
        let name = tool.name();
        if let Some(why) = self.inner.identity.denial(Scope::ToolsExecute) {
            return Ok(Called::Answered(
                call_result(ToolResult::error(ErrorKind::Denied, why)).into(),
            ));
        }
        if let Err(invalid) = check_args(name, &tool.schema, &args) {
            return Ok(Called::Ran(invalid));
        }
        let mut ask_in_result = input_required.is_ok();
        if let Some(retry) = approval::retry_of(request) {
            match self.record_answer(name, &args, retry, input_required).await {
                Err(refused) => return Ok(Called::Answered(call_result(refused).into())),
                // Cancelled: the call ends as "awaiting approval", never asks again.
                Ok(None) => ask_in_result = false,
                Ok(Some(_)) => {}
            }
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
        if ask_in_result
            && res.error_kind() == Some(ErrorKind::ApprovalRequired)
            && let Some(approval_id) = res.content.get("approvalId").and_then(Value::as_str)
            && let Ok(approval) = self
                .service()
                .approvals()
                .get(Some(self.owner()), approval_id)
                .await
        {
            let ttl = (approval.expires_at - chrono::Utc::now())
                .to_std()
                .unwrap_or_default();
            let ticket = self.inner.shared.tickets.issue(
                approval::Round {
                    approval_id: approval.id.clone(),
                    user: self.owner().to_owned(),
                    agent: self.inner.identity.agent_id.clone(),
                    tool: name.to_owned(),
                    args_hash: approval.args_hash.clone(),
                },
                ttl,
            );
            return Ok(Called::Answered(
                approval::input_required(name, &approval.args_preview, approval_id, &ticket).into(),
            ));
        }
        Ok(Called::Ran(res))
    }

    /// Records the answer a 2026-07-28 client brought back with its retry, if the retry may
    /// carry one: a ticket this server issued for exactly this call (same user, agent, tool
    /// and arguments; used once), from a client that can show forms, for a caller that may
    /// decide approvals. `Err` is the result that ends the call (a refused answer, a denial);
    /// `Ok(None)` a cancelled form; `Ok(Some(decision))` a recorded (or already made) decision.
    async fn record_answer(
        &self,
        name: &str,
        args: &Value,
        retry: approval::Retry,
        input_required: Result<(), String>,
    ) -> Result<Option<ApprovalDecision>, ToolResult> {
        let doors = &self.service().config().approval_doors;
        let refuse = |why: String| {
            ToolResult::error(
                ErrorKind::Denied,
                format!(
                    "the approval answer in this call was not accepted: {why}. Make the call again without requestState and inputResponses; a person can decide the approval in the client's form, or {}",
                    doors.describe("<approval id>")
                ),
            )
        };
        if let Err(why) = input_required {
            return Err(refuse(why));
        }
        let round = retry
            .ticket
            .as_deref()
            .and_then(|ticket| self.inner.shared.tickets.take(ticket))
            .ok_or_else(|| {
                refuse(
                    "requestState names no approval round this server opened (unknown, already used, or expired)"
                        .to_owned(),
                )
            })?;
        let same_call = round.user == self.owner()
            && round.agent == self.inner.identity.agent_id
            && round.tool == name
            && round.args_hash == toolsmith_service::governance::approvals::args_hash(args);
        if !same_call {
            return Err(refuse(
                "the approval round was opened for another call (another caller, tool or arguments)"
                    .to_owned(),
            ));
        }
        let Some(answer) = retry.answer else {
            return Ok(None);
        };
        let decision = toolsmith_service::governance::approvals::decision_of(answer);
        // The person answering (only a caller not acting as an agent is offered the form; the
        // service refuses the model's decisions whatever the door).
        let actor = Actor::for_caller(
            self.owner().to_owned(),
            self.inner.identity.agent_id.clone(),
        )
        .with_member(self.inner.identity.member.clone());
        let outcome = self
            .service()
            .approvals()
            .decide_as(
                &actor,
                Some(self.owner()),
                &round.approval_id,
                decision,
                toolsmith_service::governance::approvals::Via::Client,
            )
            .await;
        if let Err(e) = &outcome {
            // Decided elsewhere or expired: the retried call meets that state.
            tracing::debug!(approval = %round.approval_id, error = %e, "the client's answer was not recorded");
        }
        if decision == ApprovalDecision::Deny {
            return Err(ToolResult::error(
                ErrorKind::Denied,
                format!(
                    "the user did not approve this call (approval {})",
                    round.approval_id
                ),
            ));
        }
        Ok(Some(decision))
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

/// `-32602` for a tool the caller cannot see (a protocol error, as the MCP spec has it); the
/// message says why and what to call instead ([`hints::unknown_tool`]).
fn unknown_tool(name: &str, message: String) -> ErrorData {
    ErrorData::invalid_params(message, Some(json!({"tool": name})))
}

/// `-32601` for a method this server does not serve (resources and prompts outside
/// dynamic-mcp's enterprise profile), in the words of the MCP SDKs.
fn method_not_found() -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        "Method not found",
        None,
    )
}

/// The `_meta` keys an agent runner declares the caller's subagent depth under.
const SUBAGENT_DEPTH_KEYS: [&str; 2] = ["subagentDepth", "toolsmith/subagentDepth"];
/// The deepest subagent depth accepted (far beyond any policy's `max_depth`).
const MAX_SUBAGENT_DEPTH: u64 = 64;

/// The subagent depth of a `tools/call` or `tools/list` (`_meta.subagentDepth`; 0 without it).
fn subagent_depth(meta: Option<&serde_json::Map<String, Value>>) -> Result<u32, ErrorData> {
    let Some(value) = meta.and_then(|m| SUBAGENT_DEPTH_KEYS.iter().find_map(|k| m.get(*k))) else {
        return Ok(0);
    };
    value
        .as_u64()
        .filter(|d| *d <= MAX_SUBAGENT_DEPTH)
        .and_then(|d| u32::try_from(d).ok())
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "_meta.subagentDepth must be a whole number from 0 to {MAX_SUBAGENT_DEPTH} (0 = a top-level agent, 1 = its subagent …), got {value}"
                ),
                None,
            )
        })
}

/// A tool execution error (`isError: true`, as MCP 2025-11-25 wants for arguments that break
/// the schema) whose text names every offending path and the expected shape.
/// The spec's tool limits are applied first, as the pipeline applies them before its own check,
/// so a direct call and `use_tool` judge the same arguments (`limit: 500` is capped, not refused).
fn check_args(
    name: &str,
    schema: &toolsmith_core::schema::CompiledSchema,
    args: &Value,
) -> Result<(), ToolResult> {
    let limited;
    let args = if toolsmith_core::tool_limits::tool_limit(name).is_some() {
        limited = toolsmith_core::tool_limits::apply_tool_limits(name, args);
        &limited
    } else {
        args
    };
    schema.check_call(name, args, |v| object_as_text(schema.schema(), args, v))
}

/// The fix for the commonest type mistake of models: an object sent as its JSON text.
fn object_as_text(
    schema: &Value,
    args: &Value,
    violation: &toolsmith_core::schema::Violation,
) -> Option<String> {
    let expected = schema.pointer(&violation.schema_path)?;
    let text = args.pointer(&violation.instance_path)?.as_str()?;
    (violation.schema_path.ends_with("/type") && expected == "object").then(|| {
        let parses = serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object());
        if parses {
            "must be a JSON object, got a string (it holds JSON text: send the object itself, not a string)".to_owned()
        } else {
            "must be a JSON object, got a string".to_owned()
        }
    })
}

/// The reply to a `tools/call` whose params rmcp could not read (it hands those to
/// `on_custom_request`): `arguments` that are not an object — a JSON string, most often — or a
/// missing name. A tool execution error, so the model reads what to fix.
fn malformed_call(params: Option<&Value>) -> rmcp::model::CallToolResult {
    let name = params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .map(|n| crate::discovery::text::truncate(n, 100).to_owned());
    let arguments = params.and_then(|p| p.get("arguments"));
    let message = match (&name, arguments) {
        (None, _) => "tools/call needs params {\"name\": \"<tool name>\", \"arguments\": {…}}: the tool name is missing or not a string".to_owned(),
        (Some(name), Some(Value::String(text))) => {
            let parses = serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object());
            let fix = if parses {
                "the string holds JSON text: send that object itself as arguments, not a string"
            } else {
                "send the arguments as a JSON object, e.g. {\"text\": \"hello\"}"
            };
            format!("arguments must be a JSON object, got a string; {fix} (tool '{name}')")
        }
        (Some(name), Some(other)) => format!(
            "arguments must be a JSON object, got {}; send them as an object of named arguments, e.g. {{\"text\": \"hello\"}} (tool '{name}')",
            json_type(other)
        ),
        (Some(name), None) => format!("tools/call for '{name}' could not be read; send {{\"name\": \"{name}\", \"arguments\": {{…}}}}"),
    };
    call_result(ToolResult::error(ErrorKind::InvalidArguments, message))
}

/// What a control-plane or meta-tool call needs to know about its caller.
pub(crate) struct Caller<'a> {
    shared: &'a McpShared,
    identity: &'a Identity,
    /// Cancelled when the client cancels the request.
    ct: CancellationToken,
    /// Asks the person behind the client to approve a call (clients with elicitation).
    approver: Option<Approver>,
    /// The calling client as the tools this caller runs see it (log, progress, sampling,
    /// elicitation: [`client`]).
    client: Option<Client>,
    /// The caller's subagent depth (`_meta.subagentDepth`).
    subagent_depth: u32,
}

impl Caller<'_> {
    pub fn service(&self) -> &ToolService {
        &self.shared.state.service
    }

    /// What every session of this server shares (its state, the compat profiles' counters).
    pub fn shared(&self) -> &McpShared {
        self.shared
    }

    /// Who this caller is for the rule of what it may see and call: its user, agent and
    /// subagent depth (`ToolService::may_call`, the one rule every listing, search and call
    /// of this face applies).
    fn seer(&self) -> ToolContext {
        let mut ctx = self.identity.tool_context();
        ctx.subagent_depth = self.subagent_depth;
        ctx
    }

    /// Who this caller is, for the service's reads and writes of its own records (user,
    /// agent, subagent depth).
    pub fn who(&self) -> ToolContext {
        self.seer()
    }

    /// The service, shared (what starting an agent run takes).
    pub fn service_arc(&self) -> &Arc<ToolService> {
        &self.shared.state.service
    }

    /// Why this caller may not act with `scope`, or `None`: the token's scopes and read-only
    /// mode, as for every server tool (`manage_*` check each action's own).
    pub fn denial(&self, scope: Scope) -> Option<String> {
        self.identity.denial(scope)
    }

    /// The tools this caller may see and call (the policy applied).
    pub fn visible_tools(&self) -> Vec<Arc<toolsmith_core::RegisteredTool>> {
        self.service().visible_tools(&self.seer())
    }

    pub fn registry(&self) -> &ToolRegistry {
        self.shared.state.service.registry()
    }

    /// The search index of this caller's owner (every agent's tools: filter with
    /// [`Caller::can_see`]).
    pub fn search_index(&self) -> Arc<OwnerIndex> {
        self.shared.search.index(self.registry(), self.owner())
    }

    /// Whether this caller may see and call `tool` (its agent, its subagent depth, and the
    /// policy): [`Caller::may_call`], under the name the search code reads better.
    pub fn can_see(&self, tool: &toolsmith_core::RegisteredTool) -> bool {
        self.may_call(tool)
    }

    /// The registered tool `name` if it exists for this caller (a per-agent tool exists only
    /// for its agent).
    pub fn find_tool(&self, name: &str) -> Option<Arc<toolsmith_core::RegisteredTool>> {
        self.registry()
            .get(self.owner(), name)
            .filter(|tool| tool.is_visible_to(self.identity.agent_id.as_deref()))
    }

    /// Whether this caller may call `tool` (agent scope, subagent depth and policy, as
    /// `tools/list`).
    pub fn may_call(&self, tool: &toolsmith_core::RegisteredTool) -> bool {
        self.service().may_call(&self.seer(), tool)
    }

    /// Whether this caller may be shown its stored tool `record` (it could call it).
    pub fn may_see_stored(&self, record: &toolsmith_core::CustomToolRecord) -> bool {
        self.service().may_see_stored(&self.seer(), record)
    }

    /// MCP callers are models (acting as the identity's agent, if any; in an organisation, for
    /// the person named in the audit log).
    pub fn actor(&self) -> Actor {
        Actor::llm(self.identity.user_id.clone())
            .with_agent(self.identity.agent_id.clone())
            .with_member(self.identity.member.clone())
    }

    /// The person acting in an organisation (the owner is then the organisation), if any.
    pub fn member(&self) -> Option<String> {
        self.identity.member.clone()
    }

    pub fn owner(&self) -> &str {
        &self.identity.user_id
    }

    pub fn compat(&self) -> bool {
        self.shared.catalog.compat()
    }

    /// The server tool `name`, if this server serves it (in compat mode, its profile's).
    pub fn server_tool(&self, name: &str) -> Option<&'static super::catalog::ServerTool> {
        SERVER_TOOLS
            .find(name, self.compat())
            .filter(|t| t.served_in(self.shared.catalog.surface()))
    }

    /// What this caller may do beyond running code once (see [`Identity::run_rights`]).
    pub fn run_rights(&self) -> toolsmith_service::RunRights {
        self.identity.run_rights()
    }

    /// The server's admin token, if one is configured.
    pub fn admin_token(&self) -> Option<&str> {
        self.shared.state.config.admin_token.as_deref()
    }

    /// The context of one tool call made for this caller.
    pub fn tool_context(&self) -> ToolContext {
        let mut ctx = self.identity.tool_context();
        ctx.cancellation = self.ct.child_token();
        ctx.approver = self.approver.clone();
        ctx.client = self.client.clone();
        ctx.subagent_depth = self.subagent_depth;
        // MCP callers are models: a built-in flagged `requires_confirmation` waits for a person.
        ctx.model_caller = true;
        ctx
    }
}

impl ServerHandler for ToolsmithMcp {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            // MCP tasks (mcp/tasks.rs): a client that declares them gets registry tools'
            // calls as tasks.
            .enable_tasks()
            .build();
        // `logging/setLevel` and the log messages of running tools (mcp/client.rs).
        #[allow(
            deprecated,
            reason = "logging is MCP 2025-11-25's; rmcp marks it for SEP-2577"
        )]
        {
            capabilities.logging = Some(Default::default());
        }
        if self.serves_resources() {
            // dynamic-mcp's enterprise profile: its resources and prompt (compat/resources.rs).
            capabilities.resources = Some(Default::default());
            capabilities.prompts = Some(Default::default());
        } else if !self.compat() {
            // Toolsmith's own resources (mcp/resources.rs): workspace files and tool sources.
            let mut resources = rmcp::model::ResourcesCapability::default();
            resources.subscribe = Some(true);
            resources.list_changed = Some(true);
            capabilities.resources = Some(resources);
        }
        if !self.compat() {
            // Toolsmith's own prompts (mcp/prompts.rs) and completions of their arguments
            // and of resource templates' variables.
            let mut prompts = rmcp::model::PromptsCapability::default();
            prompts.list_changed = Some(true);
            capabilities.prompts = Some(prompts);
            capabilities.completions = Some(Default::default());
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("toolsmith", env!("CARGO_PKG_VERSION"))
                    .with_title("Toolsmith")
                    .with_description(
                        "Runtime tools for AI agents: create, discover and run JavaScript tools.",
                    ),
            )
            .with_instructions(self.instructions())
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
        self.inner.prompts_seen.store(
            self.service().prompt_catalog().version(self.owner()),
            Ordering::SeqCst,
        );
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.inner.watching.swap(true, Ordering::SeqCst) {
            return;
        }
        if !self.compat() {
            tokio::spawn(resources::watch_session(
                self.service().clone(),
                self.inner.identity.tool_context(),
                self.inner.resource_subscriptions.clone(),
                context.peer.clone(),
                self.inner.stop.clone(),
            ));
            tokio::spawn(prompts::watch_session(
                self.service().clone(),
                self.inner.identity.tool_context(),
                self.inner.prompts_seen.clone(),
                context.peer.clone(),
                self.inner.stop.clone(),
            ));
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
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // A subagent's list hides what the subagent policy denies at its depth, as its calls do.
        // (rmcp hands a request's `_meta` over in the context.)
        let meta = request
            .as_ref()
            .and_then(|r| r.meta.as_ref())
            .unwrap_or(&context.meta);
        let depth = subagent_depth(Some(&meta.0.0))?;
        let registry = self.registry();
        // Recorded before the list is built: a change racing with it is still notified.
        self.inner
            .seen
            .store(registry.catalog_version(self.owner()), Ordering::SeqCst);
        let gate = self.service().policy();
        let mut ctx = self.inner.identity.tool_context();
        ctx.subagent_depth = depth;
        // `run_js_ephemeral` is listed only to a caller the policy lets call it (by that name).
        let may_run_once = gate.allows_custom(&ctx, toolsmith_service::EPHEMERAL_TOOL);
        let listed_server_tool = |name: &str| {
            self.server_tool(name)
                .is_none_or(|server_tool| may_run_once || !server_tool.runs_code_once())
        };
        let listing_mode = self.inner.shared.state.config.mcp_listing;
        if listing_mode != McpListing::Full {
            let mut listing = SERVER_TOOLS.discovery_listing(self.compat(), registry, self.owner());
            // Only what this server serves (a compat profile's tools).
            listing.retain(|tool| {
                self.server_tool(&tool.name).is_some() && listed_server_tool(&tool.name)
            });
            if listing_mode == McpListing::Compact {
                listing.extend(self.most_used_own_tools(&ctx).await);
            }
            return Ok(ListToolsResult::with_all_items(listing));
        }
        let tools = self.inner.shared.catalog.tools(registry, self.owner());
        if !gate.filters() && !registry.has_agent_scoped(self.owner()) {
            return Ok(ListToolsResult::with_all_items(tools));
        }
        // A policy or per-agent tools: keep the server tools, and the tools this caller may call.
        let visible = tools
            .into_iter()
            .filter(|tool| {
                // A server tool is kept, unless it stands for a built-in this caller may not
                // call (then it goes with that built-in) or runs code the policy denies.
                let name = match self.server_tool(&tool.name) {
                    Some(server_tool) => match server_tool.builtin() {
                        Some(builtin) => builtin,
                        None => return listed_server_tool(&tool.name),
                    },
                    None => &tool.name,
                };
                registry
                    .get(self.owner(), name)
                    .is_some_and(|registered| self.service().may_call(&ctx, &registered))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(visible))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if let Some(server_tool) = self.server_tool(name) {
            return server_tool
                .held_by(self.registry(), self.owner())
                .then(|| server_tool.tool.clone());
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
        if tasks::client_takes_tasks(&context)
            && tasks::asked_for_task(&request)
            && let Some(answer) = self.call_as_task(&request, &context).await
        {
            return answer;
        }
        let identity = &self.inner.identity;
        let approver = approval::approver_for(&context, identity);
        let client = client::client_for(&context, &self.inner.log_level);
        let input_required = match approval::input_required_denial(&context, identity) {
            None => Ok(()),
            Some(why) => Err(why),
        };
        // What the log may hold of a call: its name, its id and sizes, never the arguments
        // (rmcp's own debug lines with the payload are redacted by the binary's log format).
        let tool = request.name.to_string();
        let argument_bytes = request
            .arguments
            .as_ref()
            .map_or(0, |a| serde_json::to_vec(a).map_or(0, |v| v.len()));
        let answer = self
            .call(
                request,
                context.ct.clone(),
                approver,
                Some(client),
                input_required,
            )
            .await;
        match &answer {
            Ok(CallToolResponse::Complete(result)) => tracing::debug!(
                id = %context.id,
                tool,
                argument_bytes,
                is_error = result.is_error.unwrap_or(false),
                "tools/call answered"
            ),
            Ok(_) => tracing::debug!(
                id = %context.id,
                tool,
                argument_bytes,
                "tools/call waits for input"
            ),
            Err(e) => tracing::debug!(
                id = %context.id,
                tool,
                argument_bytes,
                code = e.code.0,
                "tools/call refused"
            ),
        }
        answer
    }

    #[allow(
        deprecated,
        reason = "logging is MCP 2025-11-25's; rmcp marks it for SEP-2577"
    )]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Per session: the level applies to the log messages of this session's later calls.
        client::set_level(&self.inner.log_level, &request);
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if !self.compat() {
            let ctx = self.inner.identity.tool_context();
            let files = self.inner.identity.denial(Scope::ToolsExecute).is_none();
            return resources::list(self.service(), &ctx, request.as_ref(), files).await;
        }
        if !self.serves_resources() {
            return Err(method_not_found());
        }
        Ok(ListResourcesResult::with_all_items(
            compat::resources::list(),
        ))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, ErrorData> {
        if !self.compat() {
            let ctx = self.inner.identity.tool_context();
            let files = self.inner.identity.denial(Scope::ToolsExecute).is_none();
            return resources::templates(self.service(), &ctx, files).await;
        }
        if !self.serves_resources() {
            // What rmcp answers without the capability, as before Toolsmith's own resources.
            return Err(ErrorData::method_not_found::<
                rmcp::model::ListResourceTemplatesRequestMethod,
            >());
        }
        Ok(rmcp::model::ListResourceTemplatesResult::default())
    }

    #[allow(
        deprecated,
        reason = "resources/subscribe is MCP 2025-11-25's; rmcp marks it legacy-only"
    )]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.compat() {
            // What rmcp answers by default: compat mode's answers are unchanged.
            return Err(ErrorData::method_not_found::<
                rmcp::model::SubscribeRequestMethod,
            >());
        }
        let ctx = self.inner.identity.tool_context();
        self.inner
            .resource_subscriptions
            .subscribe(self.service(), &ctx, &request.uri, self.files_readable())
            .await
    }

    #[allow(
        deprecated,
        reason = "resources/unsubscribe is MCP 2025-11-25's; rmcp marks it legacy-only"
    )]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if self.compat() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::UnsubscribeRequestMethod,
            >());
        }
        self.inner.resource_subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if !self.compat() {
            let approver = approval::approver_for(&context, &self.inner.identity);
            let ctx = self.caller(context.ct.clone(), approver, 0).tool_context();
            return resources::read(self.service(), ctx, &request.uri, self.files_readable())
                .await
                .map(ReadResourceResponse::from);
        }
        if !self.serves_resources() {
            return Err(method_not_found());
        }
        let caller = self.caller(context.ct.clone(), None, 0);
        compat::resources::read(&caller, &request)
            .await
            .map(ReadResourceResponse::from)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        if !self.compat() {
            // Listed now: a change racing with the list is still notified.
            self.inner.prompts_seen.store(
                self.service().prompt_catalog().version(self.owner()),
                Ordering::SeqCst,
            );
            let ctx = self.inner.identity.tool_context();
            return prompts::list(self.service(), &ctx, request.as_ref()).await;
        }
        if !self.serves_resources() {
            return Err(method_not_found());
        }
        Ok(ListPromptsResult::with_all_items(
            compat::resources::prompts(),
        ))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if !self.compat() {
            let ctx = self.inner.identity.tool_context();
            return prompts::get(self.service(), &ctx, &request)
                .await
                .map(GetPromptResponse::from);
        }
        if !self.serves_resources() {
            return Err(method_not_found());
        }
        compat::resources::get_prompt(&request).map(GetPromptResponse::from)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        if self.compat() {
            return Err(method_not_found());
        }
        let ctx = self.inner.identity.tool_context();
        prompts::complete(
            self.service(),
            &ctx,
            &request,
            self.files_readable().is_ok(),
        )
        .await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let ctx = self.inner.identity.tool_context();
        tasks::get(self.service(), &ctx, &request.task_id).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let ctx = self.inner.identity.tool_context();
        tasks::cancel(self.service(), &ctx, &request.task_id)
            .await
            .map(|_| ())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if let Some(method) = request.method.strip_prefix(tasks_2025::PREFIX) {
            return self
                .serve_2025(method, request.params, context)
                .await
                .map(CustomResult::new);
        }
        // 2025-11-25's task methods rmcp does not know (mcp/tasks.rs).
        if matches!(request.method.as_str(), "tasks/list" | "tasks/result") {
            let mut ctx = self.inner.identity.tool_context();
            ctx.cancellation = context.ct.clone();
            let params = request.params.as_ref();
            let answer = if request.method == "tasks/list" {
                tasks::list(self.service(), &ctx, params).await
            } else {
                tasks::result(self.service(), &ctx, params).await
            };
            return answer.map(CustomResult::new);
        }
        if request.method != "tools/call" {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            ));
        }
        let result = malformed_call(request.params.as_ref());
        serde_json::to_value(result)
            .map(CustomResult::new)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp acknowledges the listen right after this returns and only then calls `listen`:
        // record the version now so a change in between is caught up after the acknowledgment.
        let version = self.registry().catalog_version(self.owner());
        let mut pending = self.pending_listens();
        if pending.len() >= MAX_PENDING_LISTENS {
            pending.pop_front();
        }
        pending.push_back(version);
        drop(pending);
        if self.compat() {
            return Some(SubscriptionFilter::builder().tools_list_changed().build());
        }
        let prompts = self.service().prompt_catalog().version(self.owner());
        let mut pending = self
            .inner
            .pending_prompt_listens
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if pending.len() >= MAX_PENDING_LISTENS {
            pending.pop_front();
        }
        pending.push_back(prompts);
        drop(pending);
        let mut pending = self
            .inner
            .pending_resource_listens
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if pending.len() >= MAX_PENDING_LISTENS {
            pending.pop_front();
        }
        let ctx = self.inner.identity.tool_context();
        pending.push_back(resources::ListenStart::now(self.service(), &ctx));
        let uris = resources::accepted_uris(
            requested
                .resource_subscriptions
                .as_deref()
                .unwrap_or_default(),
            self.files_readable().is_ok(),
        );
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .resource_subscriptions(uris)
                .build(),
        )
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let recorded = self.pending_listens().pop_front();
        let baseline = recorded.unwrap_or_else(|| self.registry().catalog_version(self.owner()));
        let tools = notify::listen(
            self.registry().clone(),
            self.owner().to_owned(),
            baseline,
            &subscription,
            self.inner.stop.clone(),
        );
        if self.compat() {
            tools.await;
            return Ok(());
        }
        let recorded = self
            .inner
            .pending_prompt_listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front();
        let prompt_baseline =
            recorded.unwrap_or_else(|| self.service().prompt_catalog().version(self.owner()));
        let ctx = self.inner.identity.tool_context();
        let resource_start = self
            .inner
            .pending_resource_listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
            .unwrap_or_else(|| resources::ListenStart::now(self.service(), &ctx));
        tokio::join!(
            tools,
            prompts::listen(
                self.service().clone(),
                ctx.clone(),
                prompt_baseline,
                &subscription,
                self.inner.stop.clone(),
            ),
            resources::listen(
                self.service().clone(),
                ctx,
                resource_start,
                &subscription,
                self.inner.stop.clone(),
            )
        );
        Ok(())
    }
}
