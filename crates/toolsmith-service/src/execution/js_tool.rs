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

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Weak};
use std::time::Instant;

use crate::config_center::ConfigCache;
use crate::governance::policy::PolicyGate;
use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_core::{
    ErrorKind, Permission, PermissionSet, Pipeline, RegisteredTool, ToolContext, ToolExecutor,
    ToolResult,
};
use toolsmith_egress::{EgressGuard, EgressSession, OutboundRequest};
use toolsmith_sandbox::{
    FetchRequest, FetchResponse, HostCalls, JsCallContext, JsJob, JsLimits, JsSandbox,
};

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
        let host = PipelineHost {
            egress: self.egress.as_ref().map(EgressGuard::session),
            pipeline: self.pipeline.clone(),
            policy: self.policy.clone(),
            ctx: ctx.clone(),
            permissions: self.permissions.clone(),
            deadline: now + limits.wall_time,
            fs_operations_left: AtomicU32::new(self.max_fs_operations),
            max_fs_operations: self.max_fs_operations,
        };
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
            host: Arc::new(host),
            config,
            packages,
            env: Some(self.process_env.clone()),
        };
        self.sandbox.run(job).await
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
}

impl PipelineHost {
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
