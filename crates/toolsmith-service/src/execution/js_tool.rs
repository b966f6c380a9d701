//! Runs stored JS tools: the [`ToolExecutor`] the registry holds for each active JS tool, and
//! [`PipelineHost`], the host side of `utils.callTool` / `utils.listTools`.
//!
//! `utils.listTools` lists what the caller may call (agent scope and policy, as `tools/list`),
//! within the tool's permissions. A nested `callTool` goes through the same pipeline as any
//! other call, as the same user and agent, with the caller's permissions as the ceiling (a tool can only reach tools whose own permissions it holds),
//! one more level of depth, and the caller's deadline.
//!
//! A script's `fs` (permission `filesystem`) and `shell` (permission `shell`) are `callTool`s of
//! the file tools and `execute_shell`, so they meet the same rules; every call of a tool holding
//! `filesystem`, by either way, spends one of the run's `js_max_fs_operations`. A call of a
//! built-in whose tool group is disabled is told which group and how to enable it.
//!
//! A script's `mcp` reaches the caller's client (`ToolContext::client`, `Client::of`):
//! `mcp.log` and `mcp.progress` go, in the order sent, through one forwarding task per run,
//! which the run waits for before it returns, so every message reaches the client before the
//! result; without an MCP client (REST, the CLI, a scheduled run) log messages are kept in the
//! run's console instead and progress goes nowhere. `mcp.sample` and `mcp.elicit` ask
//! [`ClientRequestGate::may_ask`] first (permission, policy, limits) and are audited.
//! How many of each a run made is in its result's metadata (`clientRequests`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use crate::config_center::ConfigCache;
use crate::governance::audit::{AuditLog, AuditTarget};
use crate::governance::client_requests::{ClientRequest, ClientRequestBudget, ClientRequestGate};
use crate::governance::policy::PolicyGate;
use crate::input::Actor;
use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolsmith_core::{
    Client, ConsoleEntry, ConsoleLevel, ErrorKind, LogLevel, Permission, PermissionSet, Pipeline,
    RegisteredTool, ToolContext, ToolExecutor, ToolResult,
};
use toolsmith_egress::{EgressGuard, EgressSession, OutboundRequest};
use toolsmith_sandbox::{
    ClientNote, FetchRequest, FetchResponse, HostCalls, JsCallContext, JsJob, JsLimits, JsSandbox,
};

/// How long a finished run waits for its last `mcp.log` / `mcp.progress` messages to reach the
/// client before it returns anyway.
const NOTES_FLUSH: Duration = Duration::from_secs(5);

/// Runs one JS tool's code in the sandbox.
pub struct JsToolExecutor {
    /// Whose Config Center the runs read (empty for ephemeral code).
    pub(crate) owner: String,
    /// The Config Center services the tool declares: the only ones its `utils` see.
    pub(crate) declared_services: Vec<String>,
    pub(crate) config: Arc<ConfigCache>,
    /// The egress guard, for tools holding `network` (`fetch`); `None` otherwise.
    pub(crate) egress: Option<EgressGuard>,
    pub(crate) sandbox: Arc<JsSandbox>,
    pub(crate) pipeline: Weak<Pipeline>,
    /// Who may see which tool, for `utils.listTools`.
    pub(crate) policy: Arc<PolicyGate>,
    pub(crate) tool_name: String,
    pub(crate) code: Arc<str>,
    pub(crate) permissions: PermissionSet,
    pub(crate) limits: JsLimits,
    /// File operations one run may make (`js_max_fs_operations`).
    pub(crate) max_fs_operations: u32,
    /// The npm packages the tool resolved, found in the cache before each run.
    pub(crate) packages: Option<Arc<crate::packages::PackageLock>>,
    pub(crate) installer: crate::packages::Installer,
    /// `process.env`.
    pub(crate) process_env: Arc<std::collections::BTreeMap<String, String>>,
    /// Whether `mcp.sample` / `mcp.elicit` may ask the caller's client now.
    pub(crate) client_requests: Arc<ClientRequestGate>,
    pub(crate) audit: Arc<AuditLog>,
}

#[async_trait]
impl ToolExecutor for JsToolExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let now = Instant::now();
        let mut limits = self.limits;
        if let Some(deadline) = ctx.deadline {
            let left = deadline.saturating_duration_since(now);
            if left.is_zero() {
                return ToolResult::error(
                    ErrorKind::Timeout,
                    format!(
                        "tool '{}' was called after its caller's time ran out",
                        self.tool_name
                    ),
                );
            }
            limits.wall_time = limits.wall_time.min(left);
        }
        let config = if self.declared_services.is_empty() {
            None
        } else {
            let owner = match self.config.owner(&self.owner).await {
                Ok(owner) => owner,
                Err(e) => {
                    return ToolResult::error(
                        ErrorKind::Internal,
                        format!("cannot read the Config Center: {e}"),
                    );
                }
            };
            let missing: Vec<String> = self
                .declared_services
                .iter()
                .filter_map(|name| {
                    let fields = owner
                        .services
                        .get(name)
                        .map_or_else(|| vec!["api_key".to_owned()], |s| s.missing());
                    (!fields.is_empty()).then(|| format!("{name} ({})", fields.join(", ")))
                })
                .collect();
            if !missing.is_empty() {
                return ToolResult::error(
                    ErrorKind::ExecutionError,
                    format!(
                        "tool '{}' needs configuration that is missing: {}; set it in the Config Center (toolsmith config set, or PUT /api/v1/config/services/<name>/entries)",
                        self.tool_name,
                        missing.join("; ")
                    ),
                );
            }
            Some(owner.js_snapshot(self.declared_services.iter().map(String::as_str)))
        };
        let packages = match &self.packages {
            None => None,
            Some(lock) => match self.installer.packages(lock).await {
                Ok(packages) => Some(Arc::new(packages)),
                Err(e) => {
                    return ToolResult::error(
                        ErrorKind::ExecutionError,
                        format!(
                            "tool '{}' cannot load its npm dependencies: {e}",
                            self.tool_name
                        ),
                    );
                }
            },
        };
        let (note_sender, notes) = Notes::start(ctx, limits.max_console_bytes);
        let host = Arc::new(PipelineHost {
            egress: self.egress.as_ref().map(EgressGuard::session),
            pipeline: self.pipeline.clone(),
            policy: self.policy.clone(),
            ctx: ctx.clone(),
            permissions: self.permissions.clone(),
            deadline: now + limits.wall_time,
            fs_operations_left: AtomicU32::new(self.max_fs_operations),
            max_fs_operations: self.max_fs_operations,
            tool_name: self.tool_name.clone(),
            client: Client::of(ctx),
            notes: Mutex::new(Some(note_sender)),
            client_requests: self.client_requests.clone(),
            budget: ClientRequestBudget::default(),
            refused: AtomicU32::new(0),
            audit: self.audit.clone(),
        });
        let job = JsJob {
            code: self.code.to_string(),
            args,
            context: JsCallContext {
                tool_name: self.tool_name.clone(),
                call_id: ctx.call_id.clone(),
                conversation_id: ctx.conversation_id.clone(),
                user_id: ctx.user_id.clone(),
            },
            permissions: self.permissions.clone(),
            limits,
            host: host.clone(),
            config,
            packages,
            env: Some(self.process_env.clone()),
        };
        let mut result = self.sandbox.run(job).await;
        host.close_notes();
        let (logged, progressed, kept) = notes.finish().await;
        let kept_any = !kept.is_empty();
        result.metadata.console.extend(kept);
        let (samples, elicitations) = (
            host.budget.used(ClientRequest::Sampling),
            host.budget.used(ClientRequest::Elicitation),
        );
        let refused = host.refused.load(Ordering::Relaxed);
        if logged + progressed + samples + elicitations + refused > 0 || kept_any {
            result.metadata.extra.insert(
                "clientRequests".to_owned(),
                json!({
                    "logs": logged,
                    "progress": progressed,
                    "samples": samples,
                    "elicitations": elicitations,
                    "refused": refused,
                }),
            );
        }
        result
    }
}

/// The run's `mcp.log` / `mcp.progress` messages on their way to the client: one task sends
/// them in order. Without an MCP client, log messages are kept for the run's console instead.
struct Notes {
    task: tokio::task::JoinHandle<(u32, u32, Vec<ConsoleEntry>)>,
}

impl Notes {
    /// The sender the run's host passes messages to, and the task sending them on.
    fn start(
        ctx: &ToolContext,
        max_console_bytes: usize,
    ) -> (mpsc::UnboundedSender<ClientNote>, Notes) {
        let (sender, mut receiver) = mpsc::unbounded_channel::<ClientNote>();
        // The sandbox caps the messages of a run (`toolsmith_sandbox::MAX_CLIENT_NOTES`), so
        // the queue is bounded by them.
        // A door with no MCP client (REST, the CLI, a scheduled run) has a client that takes
        // no log messages (`logging: false`): those are kept for the console.
        let client = ctx.client.clone().filter(|c| c.capabilities().logging);
        let task = tokio::spawn(async move {
            let (mut logged, mut progressed) = (0u32, 0u32);
            let mut kept = Vec::new();
            let mut kept_bytes = 0usize;
            while let Some(note) = receiver.recv().await {
                match note {
                    ClientNote::Log {
                        level,
                        logger,
                        data,
                    } => {
                        logged += 1;
                        match &client {
                            Some(client) => {
                                if let Err(e) = client.log(level, logger, data).await {
                                    tracing::debug!(error = %e, "a tool's log message did not reach its client");
                                }
                            }
                            None => {
                                let line = console_line(level, logger.as_deref(), &data);
                                if kept_bytes + line.len() <= max_console_bytes {
                                    kept_bytes += line.len();
                                    kept.push(ConsoleEntry {
                                        level: console_level(level),
                                        message: line,
                                    });
                                }
                            }
                        }
                    }
                    ClientNote::Progress {
                        progress,
                        total,
                        message,
                    } => {
                        progressed += 1;
                        if let Some(client) = &client
                            && let Err(e) = client.progress(progress, total, message).await
                        {
                            tracing::debug!(error = %e, "a tool's progress did not reach its client");
                        }
                    }
                }
            }
            (logged, progressed, kept)
        });
        (sender, Notes { task })
    }

    /// Waits (a bounded time), once the sender is dropped, until every message sent reached
    /// the client; the counts of log and progress messages, and the log lines kept for the
    /// console.
    async fn finish(self) -> (u32, u32, Vec<ConsoleEntry>) {
        match tokio::time::timeout(NOTES_FLUSH, self.task).await {
            Ok(Ok(done)) => done,
            _ => (0, 0, Vec::new()),
        }
    }
}

/// A log message as a console line: `[mcp.log info my-logger] {"step":1}`.
fn console_line(level: LogLevel, logger: Option<&str>, data: &Value) -> String {
    let data = match data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    match logger {
        Some(logger) => format!("[mcp.log {level} {logger}] {data}"),
        None => format!("[mcp.log {level}] {data}"),
    }
}

fn console_level(level: LogLevel) -> ConsoleLevel {
    match level {
        LogLevel::Debug | LogLevel::Info | LogLevel::Notice => ConsoleLevel::Log,
        LogLevel::Warning => ConsoleLevel::Warn,
        _ => ConsoleLevel::Error,
    }
}

/// The host functions a running script may call.
pub struct PipelineHost {
    /// This execution's egress session (one request budget for every `fetch` of the run).
    egress: Option<EgressSession>,
    pipeline: Weak<Pipeline>,
    policy: Arc<PolicyGate>,
    ctx: ToolContext,
    permissions: PermissionSet,
    deadline: Instant,
    /// What is left of the run's file-operation budget.
    fs_operations_left: AtomicU32,
    max_fs_operations: u32,
    tool_name: String,
    /// The caller's client (a refusing one when the call has none).
    client: Client,
    /// Where `mcp.log` / `mcp.progress` messages go, until the run ends.
    notes: Mutex<Option<mpsc::UnboundedSender<ClientNote>>>,
    client_requests: Arc<ClientRequestGate>,
    /// The run's sampling and elicitation requests allowed so far.
    budget: ClientRequestBudget,
    /// Requests refused by the gate.
    refused: AtomicU32,
    audit: Arc<AuditLog>,
}

impl PipelineHost {
    /// No more `mcp.log` / `mcp.progress` messages: the run has ended.
    fn close_notes(&self) {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
    }

    /// Asks the caller's client (`mcp.sample`, `mcp.elicit`) if the gate lets this run do so
    /// now; records the request and its outcome in the audit log.
    async fn ask_client(&self, request: ClientRequest, params: Value) -> Result<Value, String> {
        let allowed = self.client_requests.may_ask(
            &self.policy,
            &self.ctx,
            &self.tool_name,
            request,
            self.permissions.contains(&request.permission()),
            &self.budget,
        );
        let refused = allowed.is_err();
        let outcome = match allowed {
            Err(reason) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                Err(reason)
            }
            Ok(()) => {
                let answer = match request {
                    ClientRequest::Sampling => self.client.sample(params).await,
                    ClientRequest::Elicitation => self.client.elicit(params).await,
                };
                answer.map_err(|e| e.to_string())
            }
        };
        let details = match &outcome {
            Ok(answer) => json!({
                "callId": self.ctx.call_id,
                "outcome": "answered",
                "action": answer.get("action"),
            }),
            Err(reason) => json!({
                "callId": self.ctx.call_id,
                "outcome": if refused { "refused" } else { "failed" },
                "reason": reason,
            }),
        };
        self.audit
            .record(
                &Actor::for_caller(self.ctx.user_id.clone(), self.ctx.agent_id.clone()),
                request.audit_action(),
                AuditTarget::new("tool", self.tool_name.clone(), Some(self.tool_name.clone())),
                (None, None),
                details,
            )
            .await;
        outcome
    }

    /// Takes one file operation from the run's budget if `tool` touches files (holds
    /// `filesystem`); the refusal names the limit and the way around it.
    fn spend_fs_operation(&self, tool: &RegisteredTool) -> Result<(), String> {
        if !tool.permissions.contains(&Permission::Filesystem) {
            return Ok(());
        }
        self.fs_operations_left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| left.checked_sub(1))
            .map(drop)
            .map_err(|_| {
                format!(
                    "this run has used its {} file operations (the `js_max_fs_operations` setting, the spec's maxFsOperations); do the work in fewer, larger reads and writes",
                    self.max_fs_operations
                )
            })
    }
}

#[async_trait]
impl HostCalls for PipelineHost {
    async fn call_tool(&self, name: &str, args: Value) -> Result<Value, String> {
        let Some(pipeline) = self.pipeline.upgrade() else {
            return Err("Toolsmith is shutting down".to_owned());
        };
        let registry = pipeline.registry();
        match registry.get(&self.ctx.user_id, name) {
            Some(tool) => self.spend_fs_operation(&tool)?,
            None if registry.is_hidden_builtin(name) => {
                return Err(toolsmith_builtins::groups::disabled_message(name));
            }
            None => {}
        }
        let nested = self
            .ctx
            .nested(self.permissions.clone(), Some(self.deadline));
        let res = pipeline.execute_value(name, args, nested).await;
        if res.is_error {
            let message = res.error_message().unwrap_or("the tool failed").to_owned();
            return Err(message);
        }
        Ok(res.content)
    }

    async fn fetch(&self, request: FetchRequest) -> Result<FetchResponse, String> {
        let Some(session) = &self.egress else {
            return Err("network access needs the tool's `network` permission".to_owned());
        };
        let response = session
            .send(OutboundRequest {
                method: request.method,
                url: request.url,
                headers: request.headers,
                body: request.body.map(String::into_bytes),
            })
            .await
            .map_err(|e| e.to_string())?;
        Ok(FetchResponse {
            status: response.status,
            status_text: response.status_text,
            headers: response.headers,
            url: response.final_url,
            body: String::from_utf8_lossy(&response.body).into_owned(),
        })
    }

    fn notify(&self, note: ClientNote) {
        if let Some(sender) = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
        {
            let _ = sender.send(note);
        }
    }

    async fn sample(&self, params: Value) -> Result<Value, String> {
        self.ask_client(ClientRequest::Sampling, params).await
    }

    async fn elicit(&self, params: Value) -> Result<Value, String> {
        self.ask_client(ClientRequest::Elicitation, params).await
    }

    fn list_tools(&self) -> Vec<Value> {
        let Some(pipeline) = self.pipeline.upgrade() else {
            return Vec::new();
        };
        // What `tools/list` would show this caller (its agent scope and the policy), less what
        // this tool could not call for lack of permissions.
        pipeline
            .registry()
            .tools(&self.ctx.user_id)
            .iter()
            .filter(|t| t.permissions.is_subset(&self.permissions))
            .filter(|t| t.is_visible_to(self.ctx.agent_id.as_deref()))
            .filter(|t| self.policy.check(&self.ctx, t).is_ok())
            .map(|t| {
                json!({
                    "name": t.definition.name,
                    "description": t.definition.description,
                    "parameters": t.definition.parameters,
                })
            })
            .collect()
    }
}
