//! [`ToolService`]: every lifecycle operation on custom tools, with the spec's rules.
//!
//! - Create: user-created tools are `active`; LLM-created tools holding `shell`, `filesystem`
//!   or `email` wait in `pending_approval`; LLM-created tools always `require_approval`.
//! - Update: partial; `version` +1 when code or parameters change; `revision` +1 on every real
//!   change and not at all for an empty or no-op patch; renaming only through `new_name`; an LLM
//!   update that adds a dangerous permission, or changes the code of a tool holding one, sends it
//!   back to `pending_approval`.
//! - Enable only from `disabled`; disable only from `active`; both idempotent. Approve and
//!   reject only from `pending_approval`, and only by a person.
//! - Delete: the LLM may delete only what the LLM created, and only with `confirm: true`.
//!
//! Writes go to the store first; the registry follows only after the commit. One lock orders
//! the writes of this process so the registry never applies them out of order.

use std::sync::Arc;

use chrono::Utc;
use serde_json::{Map, Value};
use tokio::sync::Mutex;
use toolsmith_core::name::validate_custom_name;
use toolsmith_core::pipeline::cap_output;
use toolsmith_core::schema::CompiledSchema;
use toolsmith_core::{
    CustomToolRecord, ErrorKind, PermissionSet, Pipeline, PipelineLimits, RegisteredTool,
    ToolContext, ToolOrigin, ToolRegistry, ToolResult, ToolStatus, ToolVersionRecord,
};
use toolsmith_sandbox::{CodeError, JsLimits, JsSandbox, PoolConfig, check_code};
use toolsmith_store::{Store, ToolPage, ToolQuery, ToolStats};

use crate::error::ServiceError;

mod config;
mod dependencies;
mod http_import;
mod metrics;
mod policies;
use crate::approvals::{ApprovalGate, ApprovalMiddleware, ExecutionApproval};
use crate::audit::{AuditLog, AuditTarget};
use crate::command_tool::CommandRuntime;
use crate::config_center::ConfigCache;
use crate::egress::EgressSender;
use crate::input::{Actor, CreateTool, DeleteOptions, RunCode, ToolPatch, ToolRef};
use crate::js_tool::JsToolExecutor;
use crate::kinds::ExecutorSource;
use crate::limits::{LimitRejections, Limiter, LimitsConfig};
use crate::policy::{PolicyGate, PolicyMiddleware};
use crate::scrubbing::ScrubMiddleware;
use crate::telemetry::Telemetry;
use crate::usage::UsageRecorder;
pub use config::{EntryInput, EntryView, ServiceInput, ServicePatch, ServiceView};
pub use http_import::Suggestion;
pub use metrics::{MetricsReport, ToolMetricsReport, ToolMetricsRow};
pub use policies::PolicyView;

/// Limits and sizes of the service.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Most custom tools one owner may have (default 1,000).
    pub max_tools_per_owner: u64,
    /// Largest tool code, in bytes (default 200 KB).
    pub max_code_bytes: usize,
    /// Longest description, in characters (default 4,000).
    pub max_description_chars: usize,
    pub js_limits: JsLimits,
    pub pipeline_limits: PipelineLimits,
    pub pool: PoolConfig,
    /// Rate limits and concurrency caps on executions (none by default).
    pub limits: LimitsConfig,
    /// Days of execution history kept for analytics (default 30); `None` or 0 keeps it all.
    pub execution_retention_days: Option<u32>,
    /// Let HTTP tools call `http://` endpoints (default: https only).
    pub allow_plain_http: bool,
    /// Who may see and call which tool; `None` allows everything.
    pub policy: Option<toolsmith_policy::PolicyConfig>,
    /// What outbound requests (`fetch`, HTTP tools) may reach (default: any public host).
    pub egress: toolsmith_egress::EgressPolicy,
    /// Per-owner allowlists: an owner listed here reaches only these domains (and only those of
    /// them `egress` allows too).
    pub owner_allowed_domains:
        std::collections::HashMap<String, Vec<toolsmith_egress::DomainPattern>>,
    /// Which executions wait for a person's approval (default: every `requires_approval` tool).
    pub execution_approval: ExecutionApproval,
    /// How long an approval waits for a decision before it counts as denied (default 2 min).
    pub approval_ttl: std::time::Duration,
    /// Also append the audit log to this file, one JSON object per line.
    pub audit_log_file: Option<std::path::PathBuf>,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            max_tools_per_owner: 1000,
            max_code_bytes: 200 * 1024,
            max_description_chars: 4000,
            js_limits: JsLimits::default(),
            pipeline_limits: PipelineLimits::default(),
            pool: PoolConfig::default(),
            limits: LimitsConfig::default(),
            execution_retention_days: Some(30),
            allow_plain_http: false,
            policy: None,
            egress: toolsmith_egress::EgressPolicy::default(),
            owner_allowed_domains: std::collections::HashMap::new(),
            execution_approval: ExecutionApproval::default(),
            approval_ttl: std::time::Duration::from_secs(120),
            audit_log_file: None,
        }
    }
}

/// The service's ways out to the world, supplied by the binary (and by tests).
#[derive(Clone, Default)]
pub struct Connectors {
    /// Sends HTTP tools' requests; by default the egress guard of `ServiceConfig::egress`.
    pub http_sender: Option<Arc<dyn toolsmith_httptool::HttpSender>>,
    /// Encrypts and decrypts Config Center secrets; without it no secret can be stored.
    pub cipher: Option<Arc<toolsmith_secrets::Cipher>>,
}

/// The lifecycle of custom tools, and the pipeline that runs every tool.
pub struct ToolService {
    store: Arc<dyn Store>,
    registry: Arc<ToolRegistry>,
    pipeline: Arc<Pipeline>,
    sandbox: Arc<JsSandbox>,
    usage: Arc<UsageRecorder>,
    limiter: Arc<Limiter>,
    config: ServiceConfig,
    config_cache: Arc<ConfigCache>,
    egress: toolsmith_egress::EgressGuard,
    http_sender: Arc<dyn toolsmith_httptool::HttpSender>,
    /// The guard behind the default `http_sender` (none when the connectors supplied a sender).
    http_guard: Option<toolsmith_egress::EgressGuard>,
    scrub: Arc<ScrubMiddleware>,
    policy: Arc<PolicyGate>,
    approvals: Arc<ApprovalGate>,
    audit: Arc<AuditLog>,
    telemetry: Arc<Telemetry>,
    command_runtime: Arc<CommandRuntime>,
    write_lock: Mutex<()>,
    /// Revision and time of the stored policy in force (`None`: none stored).
    policy_marker: std::sync::Mutex<Option<(i64, chrono::DateTime<Utc>)>>,
    startup_warnings: Vec<String>,
}

impl std::fmt::Debug for ToolService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolService")
            .field("registry", &self.registry)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ToolService {
    /// Builds the registry (built-ins, then every active custom tool in the store) and the
    /// pipeline. A stored tool that can no longer be registered (its name now belongs to a
    /// built-in, its schema no longer compiles) is skipped with a warning, never a crash.
    pub async fn open(
        config: ServiceConfig,
        store: Arc<dyn Store>,
    ) -> Result<Arc<ToolService>, ServiceError> {
        ToolService::open_with(config, store, Connectors::default()).await
    }

    /// [`ToolService::open`] with the given ways out to the world (HTTP sender, config values).
    pub async fn open_with(
        config: ServiceConfig,
        store: Arc<dyn Store>,
        connectors: Connectors,
    ) -> Result<Arc<ToolService>, ServiceError> {
        let registry = Arc::new(ToolRegistry::default());
        toolsmith_builtins::register_all(&registry)
            .map_err(|e| ServiceError::Validation(format!("built-in tools clash: {e}")))?;
        let usage = UsageRecorder::start(store.clone());
        let limiter = Arc::new(Limiter::new(config.limits));
        let policy = Arc::new(
            PolicyGate::new(config.policy.as_ref(), &registry)
                .map_err(|e| ServiceError::Validation(format!("policy: {e}")))?,
        );
        let config_cache = Arc::new(ConfigCache::new(store.clone(), connectors.cipher.clone()));
        let scrub = Arc::new(
            ScrubMiddleware::new(config_cache.clone())
                .map_err(|e| ServiceError::Validation(format!("credential scrubber: {e}")))?,
        );
        // Usage first: its `after` hook then also records the calls the limiter refuses. Scrub
        // last: its `after` hook runs first, so nothing unscrubbed is recorded or returned.
        let telemetry = Arc::new(Telemetry::new());
        let audit = Arc::new(AuditLog::open(
            store.clone(),
            config.audit_log_file.as_deref(),
        )?);
        let approvals = Arc::new(ApprovalGate::new(
            config.execution_approval,
            config.approval_ttl,
            store.clone(),
            scrub.clone(),
            audit.clone(),
        ));
        // Telemetry first: its `after` hook runs last and counts the final result.
        let pipeline = Arc::new(
            Pipeline::new(registry.clone(), config.pipeline_limits)
                .with_middleware(telemetry.clone())
                .with_middleware(usage.clone())
                .with_middleware(Arc::new(PolicyMiddleware(policy.clone())))
                .with_middleware(Arc::new(ApprovalMiddleware(approvals.clone())))
                .with_middleware(limiter.clone())
                .with_middleware(scrub.clone()),
        );
        let sandbox = Arc::new(JsSandbox::new(config.pool));
        let egress = toolsmith_egress::EgressGuard::new(config.egress.clone())
            .map_err(|e| ServiceError::Validation(format!("egress policy: {e}")))?;
        let (http_sender, http_guard): (Arc<dyn toolsmith_httptool::HttpSender>, _) =
            match &connectors.http_sender {
                Some(sender) => (sender.clone(), None),
                None => {
                    let sender = EgressSender::new(&config.egress)
                        .map_err(|e| ServiceError::Validation(format!("egress policy: {e}")))?;
                    let guard = sender.guard().clone();
                    (Arc::new(sender), Some(guard))
                }
            };
        let mut service = ToolService {
            store,
            registry,
            pipeline,
            sandbox,
            usage,
            limiter,
            config,
            config_cache,
            egress,
            http_sender,
            http_guard,
            scrub,
            policy,
            approvals,
            audit,
            telemetry,
            command_runtime: Arc::new(CommandRuntime::default()),
            write_lock: Mutex::new(()),
            policy_marker: std::sync::Mutex::new(None),
            startup_warnings: Vec::new(),
        };
        // A policy stored through the API wins over the configuration file's.
        if let Some(stored) = service.store.get_policy().await? {
            let config: toolsmith_policy::PolicyConfig = serde_json::from_value(stored.document)
                .map_err(|e| ServiceError::Validation(format!("the stored policy: {e}")))?;
            service
                .policy
                .replace(Some(&config), &service.registry)
                .map_err(|e| ServiceError::Validation(format!("the stored policy: {e}")))?;
            *service.policy_marker() = Some((stored.revision, stored.updated_at));
        }
        for tool in service.store.active_tools().await? {
            if let Err(why) = service.register(&tool) {
                let warning = format!(
                    "custom tool '{}' ({}) of owner '{}' was not loaded: {why}",
                    tool.name, tool.id, tool.owner
                );
                tracing::warn!("{warning}");
                service.startup_warnings.push(warning);
            }
        }
        Ok(Arc::new(service))
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    pub fn pipeline(&self) -> &Arc<Pipeline> {
        &self.pipeline
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn config(&self) -> &ServiceConfig {
        &self.config
    }

    /// The Prometheus text exposition of this process's metrics.
    pub async fn metrics_text(&self) -> String {
        let pending = self.approvals.pending_count().await;
        self.telemetry.render(
            self.usage.queue_depth(),
            usize::try_from(pending).unwrap_or(usize::MAX),
        )
    }

    /// The audit log of privileged actions.
    pub fn audit(&self) -> &Arc<AuditLog> {
        &self.audit
    }

    /// Human approvals of executions: listing and deciding them.
    pub fn approvals(&self) -> &Arc<ApprovalGate> {
        &self.approvals
    }

    /// Who may see and call which tool.
    pub fn policy(&self) -> &Arc<PolicyGate> {
        &self.policy
    }

    /// The tools `user` (as `agent`) may see and call: built-ins and the user's active custom
    /// tools, less what the policy hides.
    pub fn visible_tools(
        &self,
        user: &str,
        agent: Option<&str>,
    ) -> Vec<Arc<toolsmith_core::RegisteredTool>> {
        let mut tools = self.registry.tools(user);
        tools.retain(|tool| tool.is_visible_to(agent));
        if !self.policy.is_configured() {
            return tools;
        }
        let mut ctx = ToolContext::new(user);
        ctx.agent_id = agent.map(str::to_owned);
        self.policy.visible(&ctx, tools)
    }

    /// The sender of `owner`'s HTTP tools: the default one, narrowed to the owner's allowlist.
    pub(crate) fn http_sender_for(&self, owner: &str) -> Arc<dyn toolsmith_httptool::HttpSender> {
        match (
            &self.http_guard,
            self.config.owner_allowed_domains.get(owner),
        ) {
            (Some(guard), Some(domains)) => {
                Arc::new(EgressSender::from_guard(guard.for_owner(domains.clone())))
            }
            _ => self.http_sender.clone(),
        }
    }

    /// The egress guard of `owner`'s JS tools, narrowed to the owner's allowlist.
    fn egress_for(&self, owner: &str) -> toolsmith_egress::EgressGuard {
        match self.config.owner_allowed_domains.get(owner) {
            Some(domains) => self.egress.for_owner(domains.clone()),
            None => self.egress.clone(),
        }
    }

    pub(crate) fn config_cache(&self) -> &Arc<ConfigCache> {
        &self.config_cache
    }

    pub(crate) fn policy_marker(
        &self,
    ) -> std::sync::MutexGuard<'_, Option<(i64, chrono::DateTime<Utc>)>> {
        self.policy_marker
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn command_runtime(&self) -> &Arc<CommandRuntime> {
        &self.command_runtime
    }

    /// Waits until the usage of every call finished before now is committed to the store.
    /// Usage is written in the background; the service's own reads flush first, and so must
    /// anything that reads usage straight from the store or is about to exit.
    pub async fn flush_usage(&self) {
        self.usage.flush().await;
    }

    /// How many calls the rate limits and concurrency caps refused so far.
    pub fn limit_rejections(&self) -> LimitRejections {
        self.limiter.rejections()
    }

    /// Stored tools that could not be loaded at start, and why.
    pub fn startup_warnings(&self) -> &[String] {
        &self.startup_warnings
    }

    /// Creates a custom tool.
    pub async fn create(
        &self,
        actor: &Actor,
        input: CreateTool,
    ) -> Result<CustomToolRecord, ServiceError> {
        validate_custom_name(&input.name).map_err(|e| ServiceError::Validation(e.to_string()))?;
        self.check_description(&input.description)?;
        let parameters = normalize_parameters(input.parameters)?;
        let checked = self.check_definition(
            input.kind,
            &input.code,
            parameters,
            input.permissions.into_iter().collect(),
        )?;
        let (parameters, permissions) = (checked.parameters, checked.permissions);
        let metadata = normalize_metadata(input.metadata)?;
        let tags = normalize_tags(input.tags)?;

        let _guard = self.write_lock.lock().await;
        self.check_name_not_taken_by_toolsmith(&input.name)?;
        let n_tools = self.store.count_tools(&actor.user_id).await?;
        if n_tools >= self.config.max_tools_per_owner {
            return Err(ServiceError::LimitReached(format!(
                "owner '{}' already has {n_tools} custom tools, the limit is {}",
                actor.user_id, self.config.max_tools_per_owner
            )));
        }
        let dangerous = permissions.iter().any(|p| p.is_dangerous());
        let status = if actor.is_llm() && dangerous {
            ToolStatus::PendingApproval
        } else {
            ToolStatus::Active
        };
        let requires_approval = actor.is_llm() || input.requires_approval.unwrap_or(false);
        let now = Utc::now();
        let id = CustomToolRecord::new_id();
        let code = self.seal_command_env(input.kind, &actor.user_id, &id, input.code)?;
        let record = CustomToolRecord {
            id,
            owner: actor.user_id.clone(),
            name: input.name,
            kind: input.kind,
            description: input.description,
            parameters,
            code,
            category: normalize_category(input.category),
            tags,
            permissions,
            status,
            requires_approval,
            created_by: actor.kind,
            version: 1,
            revision: 1,
            usage_count: 0,
            last_used_at: None,
            metadata,
            created_at: now,
            updated_at: now,
        };
        dependencies::declared_services(&record)?;
        let stored = self.store.insert_tool(record).await?;
        self.sync(&stored);
        self.sync_dependencies(&stored, None).await;
        self.audit_tool(
            actor,
            "tool.create",
            None,
            &stored,
            serde_json::json!({
                "kind": stored.kind, "status": stored.status, "permissions": stored.permissions,
            }),
        )
        .await;
        Ok(stored)
    }

    /// One tool of the actor's.
    pub async fn get(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.flush_usage().await;
        let found = match tool {
            ToolRef::Id(id) => self.store.get_tool(&actor.user_id, id).await?,
            ToolRef::Name(name) => self.store.get_tool_by_name(&actor.user_id, name).await?,
        };
        found.ok_or_else(|| ServiceError::NotFound(format!("no custom tool {tool}")))
    }

    /// The actor's tools matching `query` (whose owner is replaced by the actor's).
    pub async fn list(
        &self,
        actor: &Actor,
        mut query: ToolQuery,
    ) -> Result<ToolPage, ServiceError> {
        query.owner = actor.user_id.clone();
        query.limit = query.limit.clamp(1, 1000);
        self.flush_usage().await;
        Ok(self.store.list_tools(&query).await?)
    }

    pub async fn stats(&self, actor: &Actor) -> Result<ToolStats, ServiceError> {
        self.flush_usage().await;
        Ok(self.store.tool_stats(&actor.user_id).await?)
    }

    /// Applies a partial update. A patch that changes nothing returns the tool as it is.
    pub async fn update(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        patch: ToolPatch,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let current = self.get(actor, tool).await?;
        check_revision(&current, expected_revision)?;
        let mut next = current.clone();

        if let Some(name) = &patch.name
            && name != &current.name
        {
            return Err(ServiceError::Validation(format!(
                "the patch names '{name}' but the tool is '{}'; to rename a tool, set newName",
                current.name
            )));
        }
        if let Some(new_name) = patch.new_name
            && new_name != current.name
        {
            validate_custom_name(&new_name).map_err(|e| ServiceError::Validation(e.to_string()))?;
            self.check_name_not_taken_by_toolsmith(&new_name)?;
            next.name = new_name;
        }
        if let Some(description) = patch.description {
            self.check_description(&description)?;
            next.description = description;
        }
        if let Some(parameters) = patch.parameters {
            next.parameters = normalize_parameters(parameters)?;
        }
        if let Some(code) = patch.code
            && code != current.code
        {
            next.code = self.seal_command_env(next.kind, &current.owner, &current.id, code)?;
        }
        if let Some(category) = patch.category {
            next.category = normalize_category(Some(category));
        }
        if let Some(tags) = patch.tags {
            next.tags = normalize_tags(tags)?;
        }
        if let Some(permissions) = patch.permissions {
            next.permissions = permissions.into_iter().collect();
        }
        if next.code != current.code
            || next.parameters != current.parameters
            || next.permissions != current.permissions
        {
            let checked = self.check_definition(
                next.kind,
                &next.code,
                next.parameters.clone(),
                next.permissions.clone(),
            )?;
            next.parameters = checked.parameters;
            next.permissions = checked.permissions;
        }
        if let Some(requires_approval) = patch.requires_approval {
            if actor.is_llm() && !requires_approval {
                return Err(ServiceError::Forbidden(
                    "tools created or changed by the model always require approval".to_owned(),
                ));
            }
            next.requires_approval = requires_approval;
        }
        if let Some(metadata) = patch.metadata {
            next.metadata = normalize_metadata(Some(metadata))?;
        }
        self.commit_update(actor, current, next).await
    }

    /// Makes an earlier version current again, as a new version.
    pub async fn rollback(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        version: i64,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let current = self.get(actor, tool).await?;
        check_revision(&current, expected_revision)?;
        let Some(old) = self
            .store
            .get_version(&actor.user_id, &current.id, version)
            .await?
        else {
            return Err(ServiceError::NotFound(format!(
                "tool '{}' has no version {version}",
                current.name
            )));
        };
        let mut next = current.clone();
        next.description = old.description;
        next.parameters = old.parameters;
        next.code = old.code;
        next.permissions = old.permissions;
        self.commit_update(actor, current, next).await
    }

    /// The stored versions of a tool, newest first.
    pub async fn versions(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<Vec<ToolVersionRecord>, ServiceError> {
        let current = self.get(actor, tool).await?;
        Ok(self
            .store
            .list_versions(&actor.user_id, &current.id)
            .await?)
    }

    /// `disabled` → `active`. Enabling an active tool changes nothing; a pending or rejected
    /// tool becomes active only through approval.
    pub async fn enable(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.transition(actor, tool, expected_revision, |current| {
            match current.status {
                ToolStatus::Active => Ok(None),
                ToolStatus::Disabled => Ok(Some(ToolStatus::Active)),
                ToolStatus::PendingApproval | ToolStatus::Rejected => {
                    Err(ServiceError::InvalidState(format!(
                        "tool '{}' is {}; it can become active only by approval",
                        current.name, current.status
                    )))
                }
            }
        })
        .await
    }

    /// `active` → `disabled`. Disabling a disabled tool changes nothing.
    pub async fn disable(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.transition(actor, tool, expected_revision, |current| {
            match current.status {
                ToolStatus::Disabled => Ok(None),
                ToolStatus::Active => Ok(Some(ToolStatus::Disabled)),
                ToolStatus::PendingApproval | ToolStatus::Rejected => {
                    Err(ServiceError::InvalidState(format!(
                        "tool '{}' is {}; approve or reject it instead",
                        current.name, current.status
                    )))
                }
            }
        })
        .await
    }

    /// `pending_approval` → `active`, by a person only.
    pub async fn approve(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.decide(actor, tool, ToolStatus::Active).await
    }

    /// `pending_approval` → `rejected`, by a person only.
    pub async fn reject(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.decide(actor, tool, ToolStatus::Rejected).await
    }

    /// Deletes a tool and its history. Returns the tool as it was.
    pub async fn delete(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        options: DeleteOptions,
    ) -> Result<CustomToolRecord, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let current = self.get(actor, tool).await?;
        check_revision(&current, options.expected_revision)?;
        if actor.is_llm() {
            if current.created_by != toolsmith_core::CreatedBy::Llm {
                return Err(ServiceError::Forbidden(format!(
                    "tool '{}' was created by a user; the model cannot delete it — ask the user to delete it in the UI, the REST API or the CLI",
                    current.name
                )));
            }
            if !options.confirm {
                return Err(ServiceError::ConfirmationRequired(format!(
                    "deleting tool '{}' cannot be undone; call again with confirm: true to delete it",
                    current.name
                )));
            }
        }
        self.store
            .delete_tool(&actor.user_id, &current.id, current.revision)
            .await?;
        self.registry.remove_custom(&current.owner, &current.id);
        self.drop_dependencies(&current).await;
        self.revoke_grants(&current).await;
        self.audit_tool(
            actor,
            "tool.delete",
            Some(current.revision),
            &current,
            serde_json::json!({}),
        )
        .await;
        Ok(current)
    }

    /// Runs any tool the actor can see, through the whole pipeline.
    pub async fn execute(&self, name: &str, args: Value, ctx: ToolContext) -> ToolResult {
        self.pipeline.execute_value(name, args, ctx).await
    }

    /// Runs code once in the sandbox without storing anything (`run_js_ephemeral`).
    pub async fn run_ephemeral(&self, actor: &Actor, run: RunCode) -> ToolResult {
        if let Err(e) = self.check_js_code(&run.code) {
            return ToolResult::error(ErrorKind::InvalidArguments, e.to_string());
        }
        let args = run.args.unwrap_or_else(|| Value::Object(Map::new()));
        if !args.is_object() {
            return ToolResult::error(ErrorKind::InvalidArguments, "args must be a JSON object");
        }
        let executor = self.js_executor(
            "ephemeral",
            run.code.into(),
            run.permissions.into_iter().collect(),
        );
        self.run_unregistered(&executor, args, actor).await
    }

    /// Validates a tool definition as `create` would and runs it once on `args`, storing nothing
    /// (the REST dry run, `testMode: true`).
    pub async fn test_tool(&self, actor: &Actor, input: CreateTool, args: Value) -> ToolResult {
        let checked = (|| {
            validate_custom_name(&input.name)
                .map_err(|e| ServiceError::Validation(e.to_string()))?;
            self.check_description(&input.description)?;
            let parameters = normalize_parameters(input.parameters.clone())?;
            let checked = self.check_definition(
                input.kind,
                &input.code,
                parameters,
                input.permissions.iter().copied().collect(),
            )?;
            let schema = CompiledSchema::compile(&checked.parameters)
                .map_err(|e| ServiceError::Validation(e.to_string()))?;
            let declared = dependencies::services_of(
                &actor.user_id,
                input.kind,
                &input.code,
                input.metadata.as_ref().unwrap_or(&Value::Null),
            )?
            .into_iter()
            .map(|s| s.name)
            .collect();
            let executor = self.executor_for(ExecutorSource {
                kind: input.kind,
                tool_id: "unsaved",
                name: &input.name,
                owner: &actor.user_id,
                code: &input.code,
                permissions: checked.permissions,
                declared,
            })?;
            Ok::<_, ServiceError>((schema, executor))
        })();
        let (schema, executor) = match checked {
            Ok(it) => it,
            Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e.to_string()),
        };
        let violations = schema.violations(&args);
        if !violations.is_empty() {
            return ToolResult::error_with(
                ErrorKind::InvalidArguments,
                format!("invalid arguments for tool '{}'", input.name),
                toolsmith_core::schema::violation_details(&violations, schema.schema()),
            );
        }
        let mut res = self.run_unregistered(executor.as_ref(), args, actor).await;
        res.metadata
            .extra
            .insert("testMode".to_owned(), Value::Bool(true));
        res
    }

    async fn run_unregistered(
        &self,
        executor: &dyn toolsmith_core::ToolExecutor,
        args: Value,
        actor: &Actor,
    ) -> ToolResult {
        let started = std::time::Instant::now();
        let ctx = ToolContext::new(actor.user_id.clone());
        let res = executor.execute(args, &ctx).await;
        let mut res = cap_output(res, self.config.pipeline_limits.max_output_bytes);
        self.scrub.scrub(&actor.user_id, &mut res).await;
        res.metadata.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        res
    }

    async fn transition(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        expected_revision: Option<i64>,
        next_status: impl FnOnce(&CustomToolRecord) -> Result<Option<ToolStatus>, ServiceError>,
    ) -> Result<CustomToolRecord, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let current = self.get(actor, tool).await?;
        check_revision(&current, expected_revision)?;
        let Some(status) = next_status(&current)? else {
            return Ok(current);
        };
        let mut next = current.clone();
        next.status = status;
        next.revision += 1;
        next.updated_at = Utc::now();
        dependencies::declared_services(&next)?;
        self.store.update_tool(&next, current.revision).await?;
        self.sync(&next);
        if next.metadata != current.metadata
            || next.code != current.code
            || next.name != current.name
        {
            self.sync_dependencies(&next, Some(&current.name)).await;
        }
        let action = match next.status {
            ToolStatus::Active if current.status == ToolStatus::PendingApproval => "tool.approve",
            ToolStatus::Active => "tool.enable",
            ToolStatus::Disabled => "tool.disable",
            ToolStatus::Rejected => "tool.reject",
            ToolStatus::PendingApproval => "tool.status",
        };
        self.audit_tool(
            actor,
            action,
            Some(current.revision),
            &next,
            serde_json::json!({
                "from": current.status, "to": next.status,
            }),
        )
        .await;
        Ok(next)
    }

    async fn decide(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        decision: ToolStatus,
    ) -> Result<CustomToolRecord, ServiceError> {
        if actor.is_llm() {
            return Err(ServiceError::Forbidden(
                "only a person can approve or reject a tool; the model cannot decide on tools"
                    .to_owned(),
            ));
        }
        self.transition(actor, tool, None, |current| {
            if current.status == ToolStatus::PendingApproval {
                Ok(Some(decision))
            } else {
                Err(ServiceError::InvalidState(format!(
                    "tool '{}' is {}; only tools pending approval can be approved or rejected",
                    current.name, current.status
                )))
            }
        })
        .await
    }

    /// Stores `next` (derived from `current`) with the version and revision rules, if it differs.
    async fn commit_update(
        &self,
        actor: &Actor,
        current: CustomToolRecord,
        mut next: CustomToolRecord,
    ) -> Result<CustomToolRecord, ServiceError> {
        let definition_changed = next.code != current.code || next.parameters != current.parameters;
        let anything_changed = definition_changed
            || next.name != current.name
            || next.description != current.description
            || next.category != current.category
            || next.tags != current.tags
            || next.permissions != current.permissions
            || next.requires_approval != current.requires_approval
            || next.metadata != current.metadata;
        if !anything_changed {
            return Ok(current);
        }
        if definition_changed {
            next.version = current.version + 1;
        }
        if actor.is_llm() {
            next.requires_approval = true;
            let adds_dangerous = next
                .permissions
                .difference(&current.permissions)
                .any(|p| p.is_dangerous());
            let recodes_dangerous = next.code != current.code && next.has_dangerous_permission();
            if adds_dangerous || recodes_dangerous {
                next.status = ToolStatus::PendingApproval;
            }
        }
        next.revision = current.revision + 1;
        next.updated_at = Utc::now();
        self.store.update_tool(&next, current.revision).await?;
        self.sync(&next);
        self.audit_tool(actor, "tool.update", Some(current.revision), &next, serde_json::json!({
            "changed": changed_fields(&current, &next), "version": next.version, "status": next.status,
        }))
        .await;
        if definition_changed || next.permissions != current.permissions {
            // What a person allowed always was the old code: ask again.
            self.revoke_grants(&next).await;
        }
        Ok(next)
    }

    /// Records an action on a tool in the audit log (`after` is the tool as it is now, or as it
    /// was for a delete).
    async fn audit_tool(
        &self,
        actor: &Actor,
        action: &str,
        before_revision: Option<i64>,
        after: &CustomToolRecord,
        details: Value,
    ) {
        let after_revision = (action != "tool.delete").then_some(after.revision);
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("tool", after.id.clone(), Some(after.name.clone())),
                (before_revision, after_revision),
                details,
            )
            .await;
    }

    /// Removes the `allow_always` grants of a tool (best effort: the write already committed).
    async fn revoke_grants(&self, tool: &CustomToolRecord) {
        if let Err(e) = self
            .store
            .revoke_approval_grants(&tool.owner, &tool.id)
            .await
        {
            tracing::warn!(tool = %tool.name, error = %e, "could not revoke the tool's approval grants");
        }
    }

    /// Brings the registry in line with the store after writes by other processes sharing it
    /// (the CLI while a server runs, another server): registers new and changed active tools
    /// and removes the ones that are no longer active. Tools that already match are left
    /// alone, so catalogue versions move only for real changes. Returns how many tools were
    /// added, replaced or removed.
    pub async fn resync_from_store(&self) -> Result<usize, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let active = self.store.active_tools().await?;
        let wanted: std::collections::HashSet<(&str, &str)> = active
            .iter()
            .map(|t| (t.owner.as_str(), t.id.as_str()))
            .collect();
        let mut changed = 0;
        for (owner, id) in self.registry.custom_ids() {
            if !wanted.contains(&(owner.as_str(), id.as_str()))
                && self.registry.remove_custom(&owner, &id)
            {
                changed += 1;
            }
        }
        for record in &active {
            let current = self.registry.get(&record.owner, &record.name);
            if let Some(tool) = &current
                && tool.custom_id() == Some(record.id.as_str())
                && tool.version == Some(record.version)
                && tool.permissions == record.permissions
                && tool.definition == record.definition()
            {
                continue;
            }
            // Another tool may still hold this name (a rename or swap made elsewhere).
            if let Some(other) = current.as_ref().and_then(|t| t.custom_id())
                && other != record.id
            {
                self.registry.remove_custom(&record.owner, other);
            }
            match self.register(record) {
                Ok(()) => changed += 1,
                Err(why) => {
                    tracing::warn!(tool = %record.name, id = %record.id, owner = %record.owner, error = %why, "stored tool could not be registered");
                    if self.registry.remove_custom(&record.owner, &record.id) {
                        changed += 1;
                    }
                }
            }
        }
        Ok(changed)
    }

    /// Brings the registry in line with a committed record.
    fn sync(&self, record: &CustomToolRecord) {
        if record.status != ToolStatus::Active {
            self.registry.remove_custom(&record.owner, &record.id);
            return;
        }
        if let Err(why) = self.register(record) {
            // The checks before the write make this unreachable; if it happens anyway the tool
            // stays out of the registry rather than half in it.
            tracing::error!(tool = %record.name, error = %why, "committed tool could not be registered");
            self.registry.remove_custom(&record.owner, &record.id);
        }
    }

    fn register(&self, record: &CustomToolRecord) -> Result<(), String> {
        let executor = self
            .executor_for(ExecutorSource {
                kind: record.kind,
                tool_id: &record.id,
                name: &record.name,
                owner: &record.owner,
                code: &record.code,
                permissions: record.permissions.clone(),
                declared: dependencies::declared_names(record),
            })
            .map_err(|e| e.to_string())?;
        let tool = RegisteredTool::new(
            record.definition(),
            ToolOrigin::Custom {
                id: record.id.clone(),
                owner: record.owner.clone(),
            },
            record.permissions.clone(),
            executor,
        )
        .map_err(|e| e.to_string())?
        .with_version(record.version)
        .with_requires_approval(record.requires_approval)
        .with_agent_scope(crate::kinds::agent_scope(record.kind, &record.code));
        self.registry.upsert_custom(tool).map_err(|e| e.to_string())
    }

    pub(crate) fn js_executor(
        &self,
        name: &str,
        code: Arc<str>,
        permissions: PermissionSet,
    ) -> JsToolExecutor {
        self.js_executor_with_config(name, code, permissions, String::new(), Vec::new())
    }

    /// A JS executor whose runs get `owner`'s config of the `declared` services.
    pub(crate) fn js_executor_with_config(
        &self,
        name: &str,
        code: Arc<str>,
        permissions: PermissionSet,
        owner: String,
        declared: Vec<String>,
    ) -> JsToolExecutor {
        let egress = permissions
            .contains(&toolsmith_core::Permission::Network)
            .then(|| self.egress_for(&owner));
        JsToolExecutor {
            owner,
            declared_services: declared,
            config: self.config_cache.clone(),
            egress,
            sandbox: self.sandbox.clone(),
            pipeline: Arc::downgrade(&self.pipeline),
            tool_name: name.to_owned(),
            code,
            permissions,
            limits: self.config.js_limits,
        }
    }

    /// Refuses the names of built-in tools and of Toolsmith's own MCP tools.
    fn check_name_not_taken_by_toolsmith(&self, name: &str) -> Result<(), ServiceError> {
        if self.registry.is_builtin_name(name) {
            return Err(builtin_name_taken(name));
        }
        if toolsmith_core::name::is_reserved(name) {
            return Err(ServiceError::NameTaken(format!(
                "'{name}' is the name of one of Toolsmith's own MCP tools; choose another name"
            )));
        }
        Ok(())
    }

    fn check_description(&self, description: &str) -> Result<(), ServiceError> {
        if description.trim().is_empty() {
            return Err(ServiceError::Validation(
                "description must not be empty".to_owned(),
            ));
        }
        let n_chars = description.chars().count();
        if n_chars > self.config.max_description_chars {
            return Err(ServiceError::TooLarge(format!(
                "description is {n_chars} characters long, over the limit of {}",
                self.config.max_description_chars
            )));
        }
        Ok(())
    }

    pub(crate) fn check_js_code(&self, code: &str) -> Result<(), ServiceError> {
        check_code(code, self.config.max_code_bytes).map_err(|e| match e {
            CodeError::TooLarge { .. } => ServiceError::TooLarge(e.to_string()),
            _ => ServiceError::Validation(e.to_string()),
        })
    }
}

fn check_revision(current: &CustomToolRecord, expected: Option<i64>) -> Result<(), ServiceError> {
    match expected {
        Some(expected) if expected != current.revision => Err(ServiceError::RevisionConflict {
            expected,
            actual: current.revision,
        }),
        _ => Ok(()),
    }
}

fn builtin_name_taken(name: &str) -> ServiceError {
    ServiceError::NameTaken(format!(
        "'{name}' is the name of a built-in tool; choose another name"
    ))
}

/// Accepts a schema object or a JSON string holding one, and checks the shape rule.
fn normalize_parameters(parameters: Value) -> Result<Value, ServiceError> {
    let parameters = match parameters {
        Value::String(text) => serde_json::from_str::<Value>(&text).map_err(|e| {
            ServiceError::Validation(format!("parameters is a string but not valid JSON: {e}"))
        })?,
        it => it,
    };
    CompiledSchema::compile(&parameters).map_err(|e| ServiceError::Validation(e.to_string()))?;
    Ok(parameters)
}

fn normalize_metadata(metadata: Option<Value>) -> Result<Value, ServiceError> {
    match metadata {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(it @ Value::Object(_)) => Ok(it),
        Some(_) => Err(ServiceError::Validation(
            "metadata must be a JSON object".to_owned(),
        )),
    }
}

fn normalize_category(category: Option<String>) -> Option<String> {
    category
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
}

fn normalize_tags(tags: Vec<String>) -> Result<Vec<String>, ServiceError> {
    const MAX_TAGS: usize = 32;
    const MAX_TAG_CHARS: usize = 64;
    if tags.len() > MAX_TAGS {
        return Err(ServiceError::Validation(format!(
            "a tool may have at most {MAX_TAGS} tags, got {}",
            tags.len()
        )));
    }
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let tag = tag.trim().to_owned();
        if tag.is_empty() {
            continue;
        }
        if tag.chars().count() > MAX_TAG_CHARS {
            return Err(ServiceError::Validation(format!(
                "tag '{}…' is longer than {MAX_TAG_CHARS} characters",
                tag.chars().take(16).collect::<String>()
            )));
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

/// The names of the fields an update changed (never their values: code and env may hold
/// secrets).
fn changed_fields(current: &CustomToolRecord, next: &CustomToolRecord) -> Vec<&'static str> {
    let mut changed = Vec::new();
    let pairs: [(&'static str, bool); 9] = [
        ("name", current.name != next.name),
        ("description", current.description != next.description),
        ("parameters", current.parameters != next.parameters),
        ("code", current.code != next.code),
        ("category", current.category != next.category),
        ("tags", current.tags != next.tags),
        ("permissions", current.permissions != next.permissions),
        (
            "requiresApproval",
            current.requires_approval != next.requires_approval,
        ),
        ("metadata", current.metadata != next.metadata),
    ];
    for (name, differs) in pairs {
        if differs {
            changed.push(name);
        }
    }
    changed
}
