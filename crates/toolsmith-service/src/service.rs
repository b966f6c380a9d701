//! [`ToolService`]: the service core — the wiring of every part (`open_with`), the accessors
//! the faces use, and the lifecycle of custom tools in its submodules.
//!
//! - [`lifecycle`] — create, read, update, roll back, enable, disable, approve, reject and
//!   delete custom tools, with the spec's rules.
//! - [`registry_sync`] — keeping the registry in step with the store.
//! - [`run`] — running tools, stored or not.
//! - [`validation`] — the kind-independent checks of a tool's fields.
//! - [`http_import`] — importing spec-004 HTTP definitions, and trigger suggestions.
//! - [`activity`] — recent executions and the change token the web UI polls.
//! - [`records`] — the per-user record store (memory …) as the built-ins reach it.
//! - [`data_api`] — the same records as people reach them (REST): per family, export, erasure.
//!
//! The parts it wires live in their own trees: [`crate::governance`], [`crate::execution`],
//! [`crate::config_center`] and [`crate::telemetry`]. Writes go to the store first; the
//! registry follows only after the commit. One lock orders the writes of this process so the
//! registry never applies them out of order.

use std::sync::Arc;

use chrono::Utc;
use tokio::sync::Mutex;
use toolsmith_core::{Pipeline, PipelineLimits, ToolContext, ToolRegistry};
use toolsmith_sandbox::{JsLimits, JsSandbox, PoolSettings};
use toolsmith_store::Store;

use crate::config_center::ConfigCache;
use crate::error::ServiceError;
use crate::execution::code_host::ServiceCodeHost;
use crate::execution::command_tool::CommandRuntime;
use crate::execution::egress::EgressSender;
use crate::execution::task_caller::ServiceTaskCaller;
use crate::governance::approvals::{ApprovalGate, ApprovalMiddleware, ExecutionApproval};
use crate::governance::audit::AuditLog;
use crate::governance::limits::{LimitRejections, Limiter, LimitsSettings};
use crate::governance::policy::{PolicyGate, PolicyMiddleware};
use crate::governance::scrubbing::ScrubMiddleware;
use crate::telemetry::Telemetry;
use crate::telemetry::usage::UsageRecorder;

mod activity;
pub mod custom_data_api;
pub mod data_api;
mod http_import;
pub mod lifecycle;
pub mod npm;
pub mod one_off;
mod records;
pub mod registry_sync;
pub mod run;
pub mod schedule_api;
pub(crate) mod validation;
mod vectors;

pub use http_import::Suggestion;
pub use one_off::{EPHEMERAL_TOOL, RunRights};

/// The default of [`ToolServiceSettings::js_max_fs_operations`] (the spec's `maxFsOperations`).
pub const DEFAULT_JS_MAX_FS_OPERATIONS: u32 = 100;

/// The tool service's settings: limits, sizes and switches (not the Config Center's records,
/// `ServiceInput` / `ServicePatch` / `ServiceView`, which describe external APIs).
#[derive(Debug, Clone)]
pub struct ToolServiceSettings {
    /// Most custom tools one owner may have (default 1,000).
    pub max_tools_per_owner: u64,
    /// Largest tool code, in bytes (default 200 KB).
    pub max_code_bytes: usize,
    /// Longest description, in characters (default 4,000).
    pub max_description_chars: usize,
    pub js_limits: JsLimits,
    /// File operations one JS execution may make: calls of tools holding `filesystem`, whether
    /// through `fs` or `utils.callTool` (default 100, the spec's `maxFsOperations`).
    pub js_max_fs_operations: u32,
    pub pipeline_limits: PipelineLimits,
    pub pool: PoolSettings,
    /// Rate limits and concurrency caps on executions (none by default).
    pub limits: LimitsSettings,
    /// Days of execution history kept for analytics (default 30); `None` or 0 keeps it all.
    pub execution_retention_days: Option<u32>,
    /// Let HTTP tools call `http://` endpoints (default: https only).
    pub allow_plain_http: bool,
    /// Who may see and call which tool; `None` allows everything.
    pub policy: Option<toolsmith_policy::PolicyDocument>,
    /// What outbound requests (`fetch`, HTTP tools) may reach (default: any public host).
    pub egress: toolsmith_egress::EgressPolicy,
    /// Per-owner allowlists: an owner listed here reaches only these domains (and only those of
    /// them `egress` allows too).
    pub owner_allowed_domains:
        std::collections::HashMap<String, Vec<toolsmith_egress::DomainPattern>>,
    /// The only hosts a `package_manager` install reaches, through the registry proxy (default
    /// `toolsmith_builtins::exec::DEFAULT_REGISTRIES`: PyPI and the npm registry), each
    /// resolved by the egress guard under `egress`'s address rules.
    pub package_registries: Vec<String>,
    /// Which executions wait for a person's approval (default: every `requires_approval` tool).
    pub execution_approval: ExecutionApproval,
    /// How long an approval waits for a decision before it counts as denied (default 2 min).
    pub approval_ttl: std::time::Duration,
    /// Built-ins flagged `requires_confirmation` that a model's call runs without a person's
    /// confirmation (`confirmation_off`; `*`: every one). Default: none.
    pub confirmation_off: Vec<String>,
    /// Also append the audit log to this file, one JSON object per line.
    pub audit_log_file: Option<std::path::PathBuf>,
    /// Which custom tool names are accepted (default strict; wide with `--compat dynamic-mcp`).
    pub name_rule: toolsmith_core::name::NameRule,
    /// Where a person decides approvals, as replies name it (default: the HTTP server's doors;
    /// `toolsmith mcp` sets the CLI on its store).
    pub approval_doors: crate::governance::approvals::ApprovalDoors,
    /// Where the per-user workspaces of the file tools live and what bounds them; `None`
    /// leaves the file tools answering that no workspace is configured.
    pub workspace: Option<toolsmith_builtins::workspace::WorkspaceSettings>,
    /// The git tools' settings (the default commit author, `git_author`).
    pub git: toolsmith_builtins::git::GitSettings,
    /// What bounds each user's own records (memory …): the largest record and the most
    /// records of one collection.
    pub records: toolsmith_builtins::data::RecordLimits,
    /// External MCP servers whose tools are bridged into the catalogue (none by default).
    pub mcp_servers: Vec<crate::bridge::McpServerRegistration>,
    /// The bridge's other settings: the programs servers registered at run time may start, the
    /// deferred threshold.
    pub mcp_bridge: crate::bridge::BridgeSettings,
    /// Sandbox sessions' idle timeout and per-user cap (sessions need a workspace).
    pub sandbox_sessions: toolsmith_builtins::exec::SessionSettings,
    /// Read-only mode (`--read-only`, `TOOLSMITH_READ_ONLY`): tool calls still run, but no
    /// built-in changes stored data — the record families (notes, tables, memories,
    /// scheduled tasks …) refuse writes, workspace files cannot change and no code runs in a
    /// workspace, and the scheduler does not start. The faces refuse their own writes
    /// (REST's scopes, the MCP control plane, the CLI's commands).
    pub read_only: bool,
    /// The directory of the embedded store (SQLite) whose free space readiness watches;
    /// `None` (PostgreSQL, tests) checks none.
    pub data_dir: Option<std::path::PathBuf>,
    /// `/readyz` answers 503 while the data directory's file system has less free space than
    /// this (default 16 MiB): a full disk is seen before a write fails on it.
    pub ready_min_free_bytes: u64,
    /// JS tools' npm dependencies: the registry, the cache, the limits and lists, and the
    /// environment variables `process.env` passes.
    pub npm: crate::packages::NpmSettings,
    /// Tool tasks (MCP tasks, REST's asynchronous execute): how long they are kept, how many
    /// run per user, the largest result kept.
    pub tasks: crate::tool_tasks::TaskSettings,
    /// How many sampling and elicitation requests a running tool may make of the caller's
    /// client, per call and per user per minute.
    pub client_requests: crate::governance::client_requests::ClientRequestLimits,
    /// Sessions with agents and subagents: how large a session grows, and spec 001 §6's
    /// subagent limits.
    pub sessions: crate::agents::sessions::SessionSettings,
    /// Agents Toolsmith runs: how many definitions and concurrent runs one user may have.
    pub agents: crate::agents::AgentSettings,
    /// Where the coding agents' programs are (`coding_agent_dirs`).
    pub coding_agents: toolsmith_builtins::coding_agents::CodingAgentSettings,
}

/// The default of [`ToolServiceSettings::ready_min_free_bytes`].
pub const DEFAULT_READY_MIN_FREE_BYTES: u64 = 16 * 1024 * 1024;

impl Default for ToolServiceSettings {
    fn default() -> Self {
        ToolServiceSettings {
            max_tools_per_owner: 1000,
            max_code_bytes: 200 * 1024,
            max_description_chars: 4000,
            js_limits: JsLimits::default(),
            js_max_fs_operations: DEFAULT_JS_MAX_FS_OPERATIONS,
            pipeline_limits: PipelineLimits::default(),
            pool: PoolSettings::default(),
            limits: LimitsSettings::default(),
            execution_retention_days: Some(30),
            allow_plain_http: false,
            policy: None,
            egress: toolsmith_egress::EgressPolicy::default(),
            owner_allowed_domains: std::collections::HashMap::new(),
            package_registries: toolsmith_builtins::exec::DEFAULT_REGISTRIES
                .iter()
                .map(|host| (*host).to_owned())
                .collect(),
            execution_approval: ExecutionApproval::default(),
            confirmation_off: Vec::new(),
            approval_ttl: std::time::Duration::from_secs(120),
            audit_log_file: None,
            name_rule: toolsmith_core::name::NameRule::Strict,
            approval_doors: Default::default(),
            workspace: None,
            git: toolsmith_builtins::git::GitSettings::default(),
            records: toolsmith_builtins::data::RecordLimits::default(),
            mcp_servers: Vec::new(),
            mcp_bridge: crate::bridge::BridgeSettings::default(),
            sandbox_sessions: toolsmith_builtins::exec::SessionSettings::default(),
            read_only: false,
            data_dir: None,
            ready_min_free_bytes: DEFAULT_READY_MIN_FREE_BYTES,
            npm: crate::packages::NpmSettings::default(),
            tasks: crate::tool_tasks::TaskSettings::default(),
            client_requests: Default::default(),
            sessions: Default::default(),
            agents: crate::agents::AgentSettings::default(),
            coding_agents: Default::default(),
        }
    }
}

/// The service's ways out to the world, supplied by the binary (and by tests).
#[derive(Clone, Default)]
pub struct Connectors {
    /// Sends HTTP tools' requests; by default the egress guard of `ToolServiceSettings::egress`.
    pub http_sender: Option<Arc<dyn toolsmith_httptool::HttpSender>>,
    /// Encrypts and decrypts Config Center secrets; without it no secret can be stored.
    pub cipher: Option<Arc<toolsmith_secrets::Cipher>>,
}

/// The lifecycle of custom tools, and the pipeline that runs every tool.
pub struct ToolService {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) pipeline: Arc<Pipeline>,
    pub(crate) sandbox: Arc<JsSandbox>,
    pub(crate) usage: Arc<UsageRecorder>,
    pub(crate) limiter: Arc<Limiter>,
    pub(crate) config: ToolServiceSettings,
    pub(crate) config_cache: Arc<ConfigCache>,
    pub(crate) egress: toolsmith_egress::EgressGuard,
    /// Installs JS tools' npm dependencies and finds them for runs.
    pub(crate) installer: crate::packages::Installer,
    /// `process.env` of every JS run: the variables `npm.process_env` names that are set.
    pub(crate) process_env: Arc<std::collections::BTreeMap<String, String>>,
    pub(crate) http_sender: Arc<dyn toolsmith_httptool::HttpSender>,
    /// The guard behind the default `http_sender` (none when the connectors supplied a sender).
    pub(crate) http_guard: Option<toolsmith_egress::EgressGuard>,
    pub(crate) policy: Arc<PolicyGate>,
    pub(crate) approvals: Arc<ApprovalGate>,
    pub(crate) audit: Arc<AuditLog>,
    /// Whether a running tool may ask the caller's client (sampling, elicitation) now: the
    /// one rule the sandbox's `mcp` and the bridge's relay both ask.
    pub(crate) client_requests: Arc<crate::governance::client_requests::ClientRequestGate>,
    pub(crate) telemetry: Arc<Telemetry>,
    pub(crate) command_runtime: Arc<CommandRuntime>,
    /// What the built-ins were given (the workspaces).
    pub(crate) builtins: toolsmith_builtins::BuiltinEnv,
    pub(crate) write_lock: Mutex<()>,
    /// Revision and time of the stored policy in force (`None`: none stored).
    pub(crate) policy_marker: std::sync::Mutex<Option<(i64, chrono::DateTime<Utc>)>>,
    pub(crate) startup_warnings: Vec<String>,
    /// The upstream MCP servers' connections (started last, once the custom tools hold their
    /// names).
    pub(crate) bridge: Option<crate::bridge::Bridge>,
    /// Made on first use ([`ToolService::scheduler`]).
    pub(crate) scheduler: std::sync::OnceLock<Arc<toolsmith_builtins::schedule::engine::Scheduler>>,
    /// The tool tasks this instance runs (`tool_tasks.rs`).
    pub(crate) tool_tasks: crate::tool_tasks::TaskRunner,
    /// The agent runs this instance drives (`agents.rs`).
    pub(crate) agent_runs: crate::agents::AgentRuns,
    /// The subagents' announcements to the runs this instance drives (`agents/subagents.rs`).
    pub(crate) subagents: crate::agents::subagents::Subagents,
    /// The versions of every user's prompt list (`prompts.rs`).
    pub(crate) prompt_catalog: crate::prompts::PromptCatalog,
    /// The versions of every user's user-defined resources (`resources/user.rs`).
    pub(crate) resource_catalog: crate::prompts::PromptCatalog,
}

impl std::fmt::Debug for ToolService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolService")
            .field("registry", &self.registry)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The built-ins' handles from the settings: the workspaces' root is created and opened here,
/// so a root that cannot be made stops start-up with the reason.
fn builtin_env(
    config: &ToolServiceSettings,
    config_cache: &Arc<ConfigCache>,
    command_runtime: &Arc<CommandRuntime>,
    store: &Arc<dyn Store>,
    code: Arc<dyn toolsmith_builtins::exec::CodeHost>,
    chat_asks: Arc<std::sync::OnceLock<crate::bridge::relay::Asks>>,
) -> Result<toolsmith_builtins::BuiltinEnv, ServiceError> {
    let workspaces = config
        .workspace
        .clone()
        .map(|mut workspace| {
            // Under root, code runs in the command sandbox as `nobody`: the workspaces are its.
            workspace.owner = toolsmith_command::CommandSandbox::workspace_owner();
            workspace.read_only = config.read_only;
            toolsmith_builtins::workspace::Workspaces::open(workspace)
        })
        .transpose()
        .map_err(|e| ServiceError::Validation(format!("workspace: {e}")))?
        .map(Arc::new);
    let egress = toolsmith_egress::EgressGuard::new(config.egress.clone())
        .map_err(|e| ServiceError::Validation(format!("egress policy: {e}")))?;
    let web: Arc<dyn toolsmith_builtins::web::WebClient> =
        Arc::new(toolsmith_builtins::web::GuardClient::new(
            egress.clone(),
            config.owner_allowed_domains.clone(),
        ));
    // The browser tool's pages reach the network through the same guard, per owner.
    let browsers = toolsmith_builtins::browser::Browsers::new(
        toolsmith_builtins::browser::BrowserSettings::default(),
        egress.clone(),
        config.owner_allowed_domains.clone(),
    );
    // A coding agent's run reaches its provider's API host through this guard, per owner.
    let coding_agents = toolsmith_builtins::coding_agents::CodingAgents {
        settings: config.coding_agents.clone(),
        guard: egress.clone(),
        owner_domains: config.owner_allowed_domains.clone(),
    };
    let chat: Arc<dyn toolsmith_builtins::chat::ChatModel> =
        Arc::new(crate::builtin_chat::BuiltinChat {
            config: config_cache.clone(),
            egress,
            owner_domains: config.owner_allowed_domains.clone(),
            asks: chat_asks,
        });
    let sessions = workspaces.as_ref().map(|workspaces| {
        toolsmith_builtins::exec::Sessions::new(workspaces.clone(), config.sandbox_sessions)
    });
    // The installs' one allowlist is `package_registries`; the guard adds its address rules
    // (and the operator's `allowed_private_hosts`), not the web tools' domain list.
    let registry_guard = toolsmith_egress::EgressGuard::new(toolsmith_egress::EgressPolicy {
        allowed_domains: Vec::new(),
        ..config.egress.clone()
    })
    .map_err(|e| ServiceError::Validation(format!("egress policy: {e}")))?;
    let registries = toolsmith_builtins::exec::PackageRegistries::new(
        config.package_registries.clone(),
        registry_guard,
    )
    .map_err(|e| ServiceError::Validation(format!("package_registries: {e}")))?;
    Ok(toolsmith_builtins::BuiltinEnv {
        workspaces,
        web: Some(web),
        config: Some(Arc::new(BuiltinConfig(config_cache.clone()))),
        sandbox: Some(command_runtime.clone()),
        git: config.git.clone(),
        data: Some(Arc::new(records::StoreRecords {
            store: store.clone(),
            limits: config.records,
            read_only: config.read_only,
        })),
        vectors: Some(Arc::new(vectors::StoreVectors {
            store: store.clone(),
            limits: config.records,
            read_only: config.read_only,
        })),
        code: Some(code),
        sessions,
        registries: Some(registries),
        // Set by `open_with` once it has the caller (which needs the service).
        tasks: None,
        team_wake: None,
        agent_sessions: None,
        routed_files: None,
        chat: Some(chat),
        browsers: Some(browsers),
        coding_agents: Some(Arc::new(coding_agents)),
    })
}

/// The Config Center as the built-ins see it: an owner's default entry of one service.
struct BuiltinConfig(Arc<ConfigCache>);

impl std::fmt::Debug for BuiltinConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BuiltinConfig")
    }
}

#[async_trait::async_trait]
impl toolsmith_builtins::ConfigValues for BuiltinConfig {
    async fn values(
        &self,
        owner: &str,
        service: &str,
    ) -> Option<std::collections::BTreeMap<String, serde_json::Value>> {
        let config = self.0.owner(owner).await.ok()?;
        let entry = config.services.get(service)?.default_entry()?;
        Some(entry.values.clone())
    }
}

impl ToolService {
    /// Every user's workspace (the file tools'), when one is configured: for the parts that
    /// reach a caller's files from outside the built-ins (a JS tool's `filesystem` API).
    #[must_use]
    pub fn workspaces(&self) -> Option<&Arc<toolsmith_builtins::workspace::Workspaces>> {
        self.builtins.workspaces.as_ref()
    }

    /// Builds the registry (built-ins, then every active custom tool in the store) and the
    /// pipeline. A stored tool that can no longer be registered (its name now belongs to a
    /// built-in, its schema no longer compiles) is skipped with a warning, never a crash.
    pub async fn open(
        config: ToolServiceSettings,
        store: Arc<dyn Store>,
    ) -> Result<Arc<ToolService>, ServiceError> {
        ToolService::open_with(config, store, Connectors::default()).await
    }

    /// [`ToolService::open_with`] on the SQLite file at `path` (created if missing): for tests,
    /// benchmarks and embedders, which then never touch the store crate. `toolsmith serve`
    /// chooses the backend itself.
    pub async fn open_sqlite(
        config: ToolServiceSettings,
        path: &std::path::Path,
        connectors: Connectors,
    ) -> Result<Arc<ToolService>, ServiceError> {
        let store = toolsmith_store::SqliteStore::open(path).await?;
        ToolService::open_with(config, Arc::new(store), connectors).await
    }

    /// [`ToolService::open`] with the given ways out to the world (HTTP sender, config values).
    pub async fn open_with(
        config: ToolServiceSettings,
        store: Arc<dyn Store>,
        connectors: Connectors,
    ) -> Result<Arc<ToolService>, ServiceError> {
        crate::bridge::Bridge::validate(&config.mcp_servers).map_err(ServiceError::Validation)?;
        let launch = crate::bridge::LaunchPolicy::new(&config.mcp_bridge.allowed_commands)
            .and_then(|l| l.with_env(&config.mcp_bridge.allowed_env))
            .map_err(ServiceError::Validation)?;
        let mut bridge_warnings = Vec::new();
        let mut bridged: Vec<(crate::bridge::McpServerRegistration, crate::bridge::Origin)> =
            config
                .mcp_servers
                .iter()
                .map(|c| (c.clone(), crate::bridge::Origin::Config))
                .collect();
        for record in store.list_mcp_servers().await? {
            if bridged.iter().any(|(c, _)| c.name == record.name) {
                bridge_warnings.push(format!(
                    "the registered MCP server '{}' is not started: the configuration file defines a server of that name",
                    record.name
                ));
                continue;
            }
            match crate::bridge::manage::stored_config(&record) {
                Ok(server) => bridged.push((
                    server,
                    crate::bridge::Origin::Registered {
                        owner: record.owner.clone(),
                        revision: record.revision,
                    },
                )),
                Err(why) => bridge_warnings.push(why),
            }
        }
        let registry = Arc::new(ToolRegistry::default());
        let config_cache = Arc::new(ConfigCache::new(store.clone(), connectors.cipher.clone()));
        let command_runtime = Arc::new(CommandRuntime::default());
        let code_host = Arc::new(ServiceCodeHost::new(command_runtime.clone()));
        let task_caller = Arc::new(ServiceTaskCaller::default());
        // The built-ins' chat model asks a caller's client under the service's rule, bound
        // below once the policy and the audit log exist.
        let chat_asks = Arc::new(std::sync::OnceLock::new());
        let mut builtins = builtin_env(
            &config,
            &config_cache,
            &command_runtime,
            &store,
            code_host.clone(),
            chat_asks.clone(),
        )?;
        builtins.tasks = Some(task_caller.clone());
        let session_host = Arc::new(crate::agents::sessions::ServiceSessions::default());
        builtins.agent_sessions = Some(session_host.clone());
        let team_host = Arc::new(crate::agents::teams::ServiceTeams::default());
        builtins.team_wake = Some(team_host.clone());
        let routed_files = Arc::new(crate::agents::context_files::ServiceFiles::default());
        builtins.routed_files = Some(routed_files.clone());
        if let Some(sessions) = &builtins.sessions {
            // Often enough that a session outlives its idle timeout by at most a quarter of it.
            let every = (sessions.settings().idle_timeout / 4).clamp(
                std::time::Duration::from_secs(1),
                std::time::Duration::from_secs(60),
            );
            sessions.spawn_scavenger(every);
        }
        toolsmith_builtins::register_all(&registry, &builtins)
            .map_err(|e| ServiceError::Validation(format!("built-in tools clash: {e}")))?;
        let telemetry = Arc::new(Telemetry::new());
        let usage = UsageRecorder::start(store.clone(), telemetry.usage_metrics());
        let limiter =
            Arc::new(Limiter::new(config.limits).with_shared(store.clone().shared_limits()));
        let policy = Arc::new(
            PolicyGate::new(
                config.policy.as_ref(),
                &registry,
                bridged.iter().map(|(c, _)| c.name.clone()).collect(),
            )
            .map_err(|e| ServiceError::Validation(format!("policy: {e}")))?
            .with_grants(config.mcp_bridge.grants),
        );
        let scrub = Arc::new(
            ScrubMiddleware::new(config_cache.clone())
                .map_err(|e| ServiceError::Validation(format!("credential scrubber: {e}")))?,
        );
        // Usage first: its `after` hook then also records the calls the limiter refuses. Scrub
        // last: its `after` hook runs first, so nothing unscrubbed is recorded or returned.
        let audit = Arc::new(AuditLog::open(
            store.clone(),
            config.audit_log_file.as_deref(),
        )?);
        let approvals = Arc::new(
            ApprovalGate::new(
                config.execution_approval,
                config.approval_ttl,
                store.clone(),
                scrub.clone(),
                audit.clone(),
            )
            .with_doors(config.approval_doors.clone())
            .with_confirmation_off(config.confirmation_off.clone()),
        );
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
        let installer = crate::packages::Installer::new(config.npm.clone(), &config.egress);
        let process_env = Arc::new(installer.process_env());
        let tasks_settings = config.tasks.clone();
        let client_requests = Arc::new(crate::governance::client_requests::ClientRequestGate::new(
            config.client_requests,
        ));
        let _ = chat_asks.set(crate::bridge::relay::Asks {
            gate: client_requests.clone(),
            policy: policy.clone(),
            audit: audit.clone(),
        });
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
            installer,
            process_env,
            http_sender,
            http_guard,
            policy,
            approvals,
            audit,
            client_requests,
            telemetry,
            command_runtime,
            builtins,
            write_lock: Mutex::new(()),
            policy_marker: std::sync::Mutex::new(None),
            startup_warnings: bridge_warnings
                .into_iter()
                .inspect(|w| tracing::warn!("{w}"))
                .collect(),
            bridge: None,
            scheduler: std::sync::OnceLock::new(),
            tool_tasks: crate::tool_tasks::TaskRunner::new(tasks_settings),
            agent_runs: crate::agents::AgentRuns::new(),
            subagents: Default::default(),
            prompt_catalog: crate::prompts::PromptCatalog::default(),
            resource_catalog: crate::prompts::PromptCatalog::default(),
        };
        // A policy stored through the API wins over the configuration file's.
        if let Some(stored) = service.store.get_policy().await? {
            let config: toolsmith_policy::PolicyDocument = serde_json::from_value(stored.document)
                .map_err(|e| ServiceError::Validation(format!("the stored policy: {e}")))?;
            service
                .policy
                .replace(Some(&config), &service.registry)
                .map_err(|e| ServiceError::Validation(format!("the stored policy: {e}")))?;
            *service.policy_marker() = Some((stored.revision, stored.updated_at));
            let file_groups = service.config.policy.as_ref().map(|p| &p.tool_groups);
            if file_groups.is_some_and(|g| !g.is_empty() && *g != config.tool_groups) {
                let warning = "the configuration's tool group switches ([policy.tool_groups], \
                    --enable-group, --disable-group) are not in force: a policy stored through \
                    the API wins over them; switch groups with `toolsmith groups` or \
                    PUT /api/v1/tool-groups/{id}, or clear the stored policy"
                    .to_owned();
                tracing::warn!("{warning}");
                service.startup_warnings.push(warning);
            }
        }
        service
            .policy
            .grants()
            .replace(service.store.list_mcp_grants().await?);
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
        service.bridge = Some(crate::bridge::Bridge::start(
            bridged,
            service.registry.clone(),
            crate::bridge::Launcher {
                launch,
                egress: service.egress.clone(),
                config: service.config_cache.clone(),
                deferred_threshold: service.config.mcp_bridge.deferred_threshold,
                autostart: service.config.mcp_bridge.autostart,
                asks: Some(Arc::new(crate::bridge::relay::Asks {
                    gate: service.client_requests.clone(),
                    policy: service.policy.clone(),
                    audit: service.audit.clone(),
                })),
            },
        ));
        let service = Arc::new(service);
        code_host.bind(&service);
        task_caller.bind(&service);
        session_host.bind(&service);
        team_host.bind(&service);
        routed_files.bind(&service);
        crate::agents::leases::sweep(&service);
        Ok(service)
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    pub fn pipeline(&self) -> &Arc<Pipeline> {
        &self.pipeline
    }

    /// The store, for this crate only: the faces reach it through the operations of the service.
    pub(crate) fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    /// Whether the store answers (the server's `/readyz`).
    /// Whether the store answers and, for the embedded store, its disk has room
    /// ([`ToolServiceSettings::ready_min_free_bytes`]).
    pub async fn ping_store(&self) -> Result<(), ServiceError> {
        self.store.ping().await?;
        let Some(dir) = self.config.data_dir.clone() else {
            return Ok(());
        };
        let free = tokio::task::spawn_blocking(move || free_bytes(&dir))
            .await
            .map_err(|e| ServiceError::InvalidState(format!("the free-space check failed: {e}")))?
            .map_err(|e| {
                ServiceError::InvalidState(format!("the data directory cannot be checked: {e}"))
            })?;
        if free < self.config.ready_min_free_bytes {
            return Err(ServiceError::InvalidState(format!(
                "the data directory's disk has {free} bytes free, less than the {} \
                 ready_min_free_bytes: free space before writes fail",
                self.config.ready_min_free_bytes
            )));
        }
        Ok(())
    }

    /// Committed changes of other processes sharing the store, pushed as they commit; `None`
    /// when the backend cannot push them (SQLite): poll [`ToolService::tools_fingerprint`].
    pub fn subscribe_changes(
        &self,
    ) -> Option<tokio::sync::mpsc::Receiver<toolsmith_store::FeedEvent>> {
        self.store.subscribe_changes()
    }

    /// A value that changes whenever any stored tool changes, whichever process wrote it (the
    /// change feed of `toolsmith serve` polls it).
    pub async fn tools_fingerprint(&self) -> Result<String, ServiceError> {
        Ok(self.store.tools_fingerprint().await?)
    }

    pub fn config(&self) -> &ToolServiceSettings {
        &self.config
    }

    /// The operator's egress guard: what the server itself fetches from outside (an OAuth
    /// issuer's keys) goes through the same policy as the tools' requests.
    pub fn egress_guard(&self) -> &toolsmith_egress::EgressGuard {
        &self.egress
    }

    /// The Prometheus text exposition of this process's metrics.
    pub async fn metrics_text(&self) -> String {
        let pending = self.approvals.pending_count().await;
        self.telemetry
            .agents
            .set_active(self.agent_runs.running().len());
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

    /// The tools the caller of `ctx` (its user, as its agent) may see and call: built-ins and
    /// the user's active custom tools, less what the policy hides.
    pub fn visible_tools(&self, ctx: &ToolContext) -> Vec<Arc<toolsmith_core::RegisteredTool>> {
        let mut tools = self.registry.tools(&ctx.user_id);
        tools.retain(|tool| tool.is_visible_to(ctx.agent_id.as_deref()));
        if let Some(narrowing) = &ctx.narrowing {
            tools.retain(|tool| narrowing.check(ctx, tool).is_ok());
        }
        if !self.policy.filters() {
            return tools;
        }
        self.policy.visible(ctx, tools)
    }

    /// Whether the caller of `ctx` may see and call `tool` (its agent scope and the policy).
    pub fn may_call(&self, ctx: &ToolContext, tool: &toolsmith_core::RegisteredTool) -> bool {
        tool.is_visible_to(ctx.agent_id.as_deref()) && self.policy.check(ctx, tool).is_ok()
    }

    /// Whether the caller of `ctx` may be shown its stored tool `record` (in any status): only
    /// if it could call it, as `tools/list` decides.
    pub fn may_see_stored(
        &self,
        ctx: &ToolContext,
        record: &toolsmith_core::CustomToolRecord,
    ) -> bool {
        let scope = crate::execution::kinds::agent_scope(record.kind, &record.code);
        let in_scope = scope.is_none_or(|scope| ctx.agent_id.as_deref() == Some(scope.as_str()));
        in_scope && self.policy.allows_custom(ctx, &record.name)
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

    /// Whether the store took the last write of usage records (`false` while records wait in
    /// the spool for a store that cannot write: disk full, read-only, unreachable), and how
    /// many wait. Readiness reads it.
    pub fn store_write_health(&self) -> (bool, u64) {
        let health = self.usage.health();
        (health.writable(), health.spooled())
    }

    /// Waits until the usage of every call finished before now is committed to the store.
    /// Usage is written in the background; the service's own reads flush first, and so must
    /// anything that reads usage straight from the store or is about to exit.
    /// Ends every sandbox session and deletes its files (at shutdown); how many ended.
    pub async fn end_sandbox_sessions(&self) -> usize {
        let Some(sessions) = self.builtins.sessions.clone() else {
            return 0;
        };
        tokio::task::spawn_blocking(move || sessions.stop_all())
            .await
            .unwrap_or(0)
    }

    /// The scheduler of this server's tasks: ticked by [`ToolService::start_scheduler`] (in
    /// `toolsmith serve`), or by hand with any clock (tests). `None` without a record store.
    pub fn scheduler(&self) -> Option<Arc<toolsmith_builtins::schedule::engine::Scheduler>> {
        let records = self.builtins.data.clone()?;
        let caller = self.builtins.tasks.clone()?;
        Some(
            self.scheduler
                .get_or_init(|| {
                    Arc::new(toolsmith_builtins::schedule::engine::Scheduler::new(
                        records, caller,
                    ))
                })
                .clone(),
        )
    }

    /// Runs due scheduled tasks every second by the system clock until the service is
    /// dropped. Every process that does this on one store shares the work: each due run
    /// happens once.
    /// Not in read-only mode: a run would change stored data (its claim, its history).
    pub fn start_scheduler(&self) -> Option<tokio::task::JoinHandle<()>> {
        if self.config.read_only {
            return None;
        }
        let scheduler = self.scheduler()?;
        Some(scheduler.spawn(
            Arc::new(toolsmith_builtins::schedule::engine::SystemClock),
            std::time::Duration::from_secs(1),
        ))
    }

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
}

#[cfg(test)]
mod tests;

/// Bytes an unprivileged process may still write on the file system holding `dir`.
fn free_bytes(dir: &std::path::Path) -> std::io::Result<u64> {
    let stat = rustix::fs::statvfs(dir)?;
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}
