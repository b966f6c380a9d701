//! The settings of `toolsmith serve` and `toolsmith mcp` (the CLI's configuration, not the
//! Config Center), resolved once.
//!
//! Three sources, merged key by key with this precedence: command-line flag, then environment
//! variable (`TOOLSMITH_*`; clap reads both, so a flag beats its variable), then the TOML file
//! of `--config` / `TOOLSMITH_CONFIG`, then the built-in default. [`Settings::resolve`] merges
//! the low-level options ([`GlobalArgs`], [`ServeArgs`], [`RuntimeArgs`] and [`FileSettings`])
//! and validates every value, so the commands only ever see a [`Settings`] that makes sense.
//! Every key is documented in `docs/configuration.md`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toolsmith_server::ServerSettings;
use toolsmith_service::{LimitsSettings, Rate, ToolServiceSettings, WorkspaceSettings};

mod oauth;

use crate::cli::{GlobalArgs, RuntimeArgs, ServeArgs};
use crate::database::{self, Database, DatabaseUrl};

pub const DEFAULT_DATA_DIR: &str = "./toolsmith-data";
pub const DEFAULT_BIND: &str = "127.0.0.1";
pub const DEFAULT_PORT: u16 = 8787;
pub const DEFAULT_MAX_TOOLS_PER_OWNER: u64 = 1000;
pub const DEFAULT_SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
pub const DEFAULT_EXECUTION_RETENTION_DAYS: u32 = 30;
/// The longest execution retention (`execution_retention_days`); 0 keeps the history forever.
pub const MAX_EXECUTION_RETENTION_DAYS: u32 = 36_500;
/// The longest `approval_timeout`: a week.
pub const MAX_APPROVAL_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// A configuration error: a bad file, key or value. Exit code 2, like a usage error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

fn bad(text: impl Into<String>) -> ConfigError {
    ConfigError(text.into())
}

/// `--compat`: the MCP compatibility mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compat {
    /// Only Toolsmith's own control-plane names.
    None,
    /// Also the `dynamic.tool.*` names and argument shapes of dynamic-mcp.
    DynamicMcp,
}

/// `--compat-profile`: dynamic-mcp's feature profile in its compatibility mode (docs/mcp.md,
/// "Profiles").
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompatProfileArg {
    /// `system.health`, the `dynamic.tool.*` control plane and `run_js_ephemeral`.
    Mvp,
    /// Also `dev.echo`, `time.now`, `system.guard_metrics`, `system.runtime_config`, the
    /// `sandbox.*` sessions, 3 resources and 1 prompt.
    Enterprise,
}

/// `--mcp-listing`: what MCP `tools/list` carries (docs/mcp.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum McpListing {
    /// Every tool the caller may call, with its schema.
    Full,
    /// The control plane, the discovery meta-tools and the caller's most used own tools (the
    /// default outside compat mode); the rest through `search_tools`.
    Compact,
    /// Only the control plane and the discovery meta-tools; the rest through `search_tools`.
    Discovery,
}

impl McpListing {
    /// The server's setting; none given is `compact`, or `full` in dynamic-mcp's compat mode
    /// (whose clients expect their tools listed).
    fn resolve(listing: Option<McpListing>, compat: Compat) -> toolsmith_server::McpListing {
        match listing {
            Some(McpListing::Full) => toolsmith_server::McpListing::Full,
            Some(McpListing::Compact) => toolsmith_server::McpListing::Compact,
            Some(McpListing::Discovery) => toolsmith_server::McpListing::Discovery,
            None if compat == Compat::DynamicMcp => toolsmith_server::McpListing::Full,
            None => toolsmith_server::McpListing::Compact,
        }
    }
}

/// The TOML file, as written. Every key is optional; an unknown key is an error that names it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    pub bind: Option<String>,
    pub port: Option<u16>,
    pub data_dir: Option<PathBuf>,
    pub database_url: Option<crate::redacted::Redacted>,
    pub database_startup_timeout: Option<Value>,
    pub max_tools_per_owner: Option<u64>,
    pub body_limit: Option<Value>,
    pub request_timeout: Option<Value>,
    pub shutdown_timeout: Option<Value>,
    pub allowed_hosts: Option<Vec<String>>,
    pub admin_token: Option<crate::redacted::Redacted>,
    /// Refuse to start without an admin token.
    pub require_admin_token: Option<bool>,
    pub read_only: Option<bool>,
    pub max_connections: Option<usize>,
    pub header_read_timeout: Option<Value>,
    pub idle_timeout: Option<Value>,
    pub mcp_max_sessions: Option<usize>,
    pub mcp_max_sessions_per_user: Option<usize>,
    pub mcp_max_listens: Option<usize>,
    pub mcp_max_listens_per_user: Option<usize>,
    pub mcp_session_idle_timeout: Option<Value>,
    pub compat: Option<Compat>,
    pub compat_profile: Option<CompatProfileArg>,
    pub mcp_listing: Option<McpListing>,
    pub js_memory: Option<Value>,
    pub js_cpu_time: Option<Value>,
    pub js_wall_time: Option<Value>,
    pub js_max_output: Option<Value>,
    pub js_max_in_flight: Option<usize>,
    pub js_max_fs_operations: Option<u32>,
    pub poll_interval: Option<Value>,
    pub rate_per_user: Option<String>,
    pub rate_per_tool: Option<String>,
    pub rate_per_session: Option<String>,
    pub max_concurrent: Option<usize>,
    pub max_concurrent_per_user: Option<usize>,
    pub execution_retention_days: Option<u32>,
    /// `llm_tools`, `dangerous` or `off` (docs/approvals.md).
    pub execution_approval: Option<String>,
    /// Built-ins flagged `requiresConfirmation` whose calls by a model run unconfirmed
    /// (`"*"`: every one; docs/approvals.md).
    pub confirmation_off: Option<Vec<String>>,
    pub approval_timeout: Option<Value>,
    /// A JSONL file the audit log is also appended to.
    pub audit_log: Option<PathBuf>,
    /// `[policy]`: who may see and call which tool (docs/policy.md).
    pub policy: Option<toolsmith_policy::PolicyDocument>,
    /// `[egress]`: what `fetch` and HTTP tools may reach (docs/egress.md).
    pub egress: Option<EgressFile>,
    /// `[oauth]`: bearer tokens from the organisation's authorization server (docs/auth.md).
    pub oauth: Option<oauth::OAuthFile>,
    /// The folder of the per-user workspaces (default `<data_dir>/workspaces`).
    pub workspace_dir: Option<PathBuf>,
    /// Bytes one user's workspaces may hold together.
    pub workspace_quota: Option<Value>,
    /// Files and folders one user's workspaces may hold together.
    pub workspace_max_entries: Option<u64>,
    /// A workspace per agent of a user.
    pub workspace_per_agent: Option<bool>,
    /// Workspace path prefixes the file tools refuse and hide (default `[".toolsmith"]`).
    pub workspace_denied_paths: Option<Vec<String>>,
    /// The git tools' default commit author, `Name <email>`.
    pub git_author: Option<String>,
    /// Largest record of a user's own data (memory …): its document and searched text.
    pub max_record_bytes: Option<Value>,
    /// `/readyz` is 503 while the data directory's disk has less free space (default 16MB).
    pub ready_min_free: Option<Value>,
    /// Most records of one collection (memories, tasks …) one user may have.
    pub max_records_per_collection: Option<u64>,
    /// How long a tool task (MCP tasks, REST's asynchronous execute) and its result are kept
    /// when its caller asks for no time (default 1h).
    pub task_ttl: Option<Value>,
    /// The longest time a caller may ask a tool task to be kept (default 24h).
    pub task_max_ttl: Option<Value>,
    /// Tool tasks one user may have running at once, all instances together (default 16).
    pub task_max_running: Option<u32>,
    /// The largest result a tool task keeps (default 1MB).
    pub task_max_result_bytes: Option<Value>,
    /// Agent definitions one user may own (default 100).
    pub agent_max_definitions: Option<u32>,
    /// Agent runs one user may have going at once, across their agents and every instance
    /// (default 16).
    pub agent_max_running: Option<u32>,
    /// How long an agent run's lease lasts (default 30s, from 3s to 1h): the instance running
    /// it renews it every third of this; any instance fails a run whose lease ran out.
    pub agent_run_lease: Option<Value>,
    /// Messages a session with an agent keeps, oldest trimmed past it (default 200).
    pub session_max_messages: Option<u32>,
    /// Bytes of message text a session keeps, oldest trimmed past it (default 1MiB).
    pub session_max_bytes: Option<Value>,
    /// Running subagents of one user across all parents (spec 001 §6 MaxConcurrent, 8).
    pub subagent_max_concurrent: Option<u32>,
    /// The deepest a subagent may be (MaxSpawnDepth, default 1: a subagent spawns none).
    pub subagent_max_spawn_depth: Option<u32>,
    /// Running children of one parent (MaxChildrenPerAgent, default 5).
    pub subagent_max_children: Option<u32>,
    /// Model turns of a subagent's run (default 20; its agent's own limit when lower).
    pub subagent_max_iterations: Option<u32>,
    /// How long an ended subagent stays listed before it is archived (default 60m).
    pub subagent_archive_after: Option<Value>,
    /// `[[mcp_servers]]`: external MCP servers whose tools are bridged (docs/mcp-bridge.md).
    #[serde(default)]
    pub mcp_servers: Vec<toolsmith_service::bridge::McpServerRegistration>,
    /// Programs (files) and directories the MCP servers registered through REST or the CLI
    /// may start; empty (the default): registering stdio servers that way is refused.
    #[serde(default)]
    pub mcp_allowed_commands: Vec<PathBuf>,
    /// `env` names (exact, or a prefix ending in `*`) those servers may set besides the
    /// credential-like ones; every other variable is refused (docs/mcp-bridge.md).
    #[serde(default)]
    pub mcp_allowed_env: Vec<String>,
    /// Tools per MCP server above which they are left out of MCP `tools/list` (default 50).
    pub mcp_deferred_threshold: Option<usize>,
    /// Bridged tools are visible and callable for non-admins only through a grant.
    pub mcp_grants: Option<bool>,
    /// Idle time after which a sandbox session ends (default 15m).
    pub sandbox_session_timeout: Option<Value>,
    /// Most sandbox sessions of one user at once (default 5).
    pub sandbox_sessions_per_user: Option<usize>,
    /// The only hosts `package_manager` installs reach, through the registry proxy (default
    /// PyPI's `pypi.org` and `files.pythonhosted.org`, and `registry.npmjs.org`).
    pub package_registries: Option<Vec<String>>,
    /// The folders searched, in order, for the coding agents' programs (`claude`, `codex`,
    /// `gemini` …; default `/usr/local/bin`, `/usr/bin`, `/bin`).
    pub coding_agent_dirs: Option<Vec<std::path::PathBuf>>,
    /// JS tools' npm dependencies: the registry they resolve from.
    pub npm_registry: Option<String>,
    /// The content-addressed package cache (default `<data_dir>/npm-cache`).
    pub npm_cache_dir: Option<PathBuf>,
    /// Extra trusted roots for the registry's TLS (a PEM bundle, npm's `cafile`).
    pub npm_ca_file: Option<PathBuf>,
    /// Only these packages (`name` or `@scope/*`) may be installed, when given.
    pub npm_allow: Option<Vec<String>>,
    /// These packages (`name` or `@scope/*`) are never installed.
    pub npm_block: Option<Vec<String>>,
    /// Server environment variables a JS tool reads in `process.env`.
    pub npm_process_env: Option<Vec<String>>,
    /// Declared dependencies of one tool (default 32).
    pub npm_max_dependencies: Option<usize>,
    /// Packages in one tool's tree (default 200).
    pub npm_max_packages: Option<usize>,
    /// Largest tarball, compressed, in bytes (default 16 MiB).
    pub npm_max_tarball_bytes: Option<u64>,
    /// Bytes one tool's packages unpack to (default 64 MiB).
    pub npm_max_unpacked_bytes: Option<u64>,
    /// Files one tool's packages hold (default 10,000).
    pub npm_max_files: Option<usize>,
    /// Sampling requests (`mcp.sample`) one tool call may make of the caller's client
    /// (default 10).
    pub mcp_max_samples_per_call: Option<u32>,
    /// Sampling requests one user's calls may make in a minute (default 30).
    pub mcp_max_samples_per_user_per_minute: Option<u32>,
    /// Elicitation requests (`mcp.elicit`) one tool call may make (default 5).
    pub mcp_max_elicitations_per_call: Option<u32>,
    /// Elicitation requests one user's calls may make in a minute (default 10).
    pub mcp_max_elicitations_per_user_per_minute: Option<u32>,
}

/// The `[egress]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EgressFile {
    /// Only these domains (`api.example.com`, `*.example.com`); empty = any public host.
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    /// Private or loopback `host[:port]`s that may be reached anyway (on-prem APIs).
    #[serde(default)]
    pub allowed_private_hosts: Vec<String>,
    /// Allow `http://` (default: `fetch` yes, HTTP tools no).
    #[serde(default)]
    pub allow_plain_http: Option<bool>,
    /// `[egress.owners.<user>]`: a narrower allowlist for one owner's tools.
    #[serde(default)]
    pub owners: std::collections::BTreeMap<String, EgressOwnerFile>,
}

/// One owner's `[egress.owners.<user>]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EgressOwnerFile {
    /// Only these domains for this owner's tools (within what `allowed_domains` allows).
    pub allowed_domains: Vec<String>,
}

/// A size or a duration in the file: a number (bytes, seconds) or a string with a unit.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Value {
    Number(u64),
    Text(String),
}

impl FileSettings {
    /// Reads and parses the file; the error names the file, and the key when one is wrong.
    pub fn load(path: &Path) -> Result<FileSettings, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            bad(format!(
                "cannot read the configuration file {}: {e}",
                path.display()
            ))
        })?;
        toml::from_str(&text).map_err(|e| {
            let message = e.message().to_owned();
            let at = e
                .span()
                .map(|span| {
                    let before = text.get(..span.start.min(text.len())).unwrap_or_default();
                    let line = before.matches('\n').count() + 1;
                    format!(" (line {line})")
                })
                .unwrap_or_default();
            let hint = if message.starts_with("unknown field") {
                "; see docs/configuration.md for the keys"
            } else {
                ""
            };
            bad(format!(
                "invalid configuration file {}{at}: {message}{hint}",
                path.display()
            ))
        })
    }
}

/// Everything `serve` and `mcp` need, validated.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The SQLite file or the PostgreSQL database.
    pub database: Database,
    /// How long start-up waits for an unreachable PostgreSQL server.
    pub database_startup_timeout: Duration,
    pub service: ToolServiceSettings,
    pub server: ServerSettings,
    /// Host of the listening address: an IP address or `localhost`.
    pub bind: String,
    pub port: u16,
    pub shutdown_timeout: Duration,
    pub poll_interval: Duration,
}

impl Settings {
    /// Merges flags/environment (`global`, `serve`, `runtime`) over the file named by
    /// `runtime.config` over the defaults. `serve` is `None` for `toolsmith mcp`.
    pub fn resolve(
        global: &GlobalArgs,
        serve: Option<&ServeArgs>,
        runtime: &RuntimeArgs,
    ) -> Result<Settings, ConfigError> {
        let file = match &runtime.config {
            Some(path) => FileSettings::load(path)?,
            None => FileSettings::default(),
        };
        Settings::merge(global, serve, runtime, file)
    }

    fn merge(
        global: &GlobalArgs,
        serve: Option<&ServeArgs>,
        runtime: &RuntimeArgs,
        file: FileSettings,
    ) -> Result<Settings, ConfigError> {
        // The database: a URL (flag/env, then file) beats a data directory from the same level
        // or below; a data directory given on a higher level beats a URL from the file.
        let url = match (&global.database_url, &global.data_dir, &file.database_url) {
            (Some(text), _, _) => Some(DatabaseUrl::parse(text).map_err(|e| {
                bad(format!(
                    "invalid --database-url / TOOLSMITH_DATABASE_URL: {e}"
                ))
            })?),
            (None, Some(_), _) => None,
            (None, None, Some(text)) => {
                Some(DatabaseUrl::parse(text).map_err(|e| bad(format!("database_url: {e}")))?)
            }
            (None, None, None) => None,
        };
        let data_dir = global
            .data_dir
            .clone()
            .or(file.data_dir)
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR));
        let database = database::database_location(&data_dir, url.as_ref());
        let database_startup_timeout = pick_duration(
            global.database_startup_timeout,
            file.database_startup_timeout,
            "database_startup_timeout",
        )?
        .unwrap_or(database::DEFAULT_STARTUP_TIMEOUT);

        let max_tools_per_owner = global
            .max_tools_per_owner
            .or(file.max_tools_per_owner)
            .unwrap_or(DEFAULT_MAX_TOOLS_PER_OWNER);
        if max_tools_per_owner == 0 {
            return Err(bad("max_tools_per_owner must be at least 1"));
        }

        toolsmith_service::bridge::Bridge::validate(&file.mcp_servers).map_err(bad)?;
        let mut service = ToolServiceSettings {
            max_tools_per_owner,
            mcp_servers: file.mcp_servers.clone(),
            mcp_bridge: toolsmith_service::bridge::BridgeSettings {
                allowed_commands: file.mcp_allowed_commands.clone(),
                allowed_env: file.mcp_allowed_env.clone(),
                deferred_threshold: file
                    .mcp_deferred_threshold
                    .unwrap_or(toolsmith_service::bridge::DEFAULT_DEFERRED_THRESHOLD),
                grants: file.mcp_grants.unwrap_or(false),
                autostart: true,
            },
            ..ToolServiceSettings::default()
        };
        // Which of dynamic-mcp's sandbox variables Toolsmith's own settings override.
        let sandbox_given = SandboxGiven {
            wall_time: runtime.js_wall_time.is_some() || file.js_wall_time.is_some(),
            max_output: runtime.js_max_output.is_some() || file.js_max_output.is_some(),
            session_timeout: runtime.sandbox_session_timeout.is_some()
                || file.sandbox_session_timeout.is_some(),
            sessions: runtime.sandbox_sessions_per_user.is_some()
                || file.sandbox_sessions_per_user.is_some(),
        };
        let js = &mut service.js_limits;
        if let Some(bytes) = pick_size(runtime.js_memory, file.js_memory, "js_memory")? {
            js.memory_bytes = in_range(bytes, 1 << 20, 4 << 30, "js_memory")?;
        }
        if let Some(max) = pick_size(runtime.js_max_output, file.js_max_output, "js_max_output")? {
            js.max_output_bytes = in_range(max, 1, 1 << 30, "js_max_output")?;
        }
        if let Some(cpu) = pick_duration(runtime.js_cpu_time, file.js_cpu_time, "js_cpu_time")? {
            js.cpu_time = positive(cpu, "js_cpu_time")?;
        }
        if let Some(wall) = pick_duration(runtime.js_wall_time, file.js_wall_time, "js_wall_time")?
        {
            js.wall_time = positive(wall, "js_wall_time")?;
        }
        if let Some(max) = runtime.js_max_in_flight.or(file.js_max_in_flight) {
            if !(1..=1 << 20).contains(&max) {
                return Err(bad(format!(
                    "js_max_in_flight: {max} is out of range (1 to {})",
                    1 << 20
                )));
            }
            service.pool.max_in_flight = max;
        }
        if let Some(max) = runtime.js_max_fs_operations.or(file.js_max_fs_operations) {
            if !(1..=1_000_000).contains(&max) {
                return Err(bad(format!(
                    "js_max_fs_operations: {max} is out of range (1 to 1000000)"
                )));
            }
            service.js_max_fs_operations = max;
        }
        let asks = &mut service.client_requests;
        for (given, slot, key) in [
            (
                file.mcp_max_samples_per_call,
                &mut asks.samples_per_call,
                "mcp_max_samples_per_call",
            ),
            (
                file.mcp_max_samples_per_user_per_minute,
                &mut asks.samples_per_user_minute,
                "mcp_max_samples_per_user_per_minute",
            ),
            (
                file.mcp_max_elicitations_per_call,
                &mut asks.elicitations_per_call,
                "mcp_max_elicitations_per_call",
            ),
            (
                file.mcp_max_elicitations_per_user_per_minute,
                &mut asks.elicitations_per_user_minute,
                "mcp_max_elicitations_per_user_per_minute",
            ),
        ] {
            if let Some(max) = given {
                if max > 100_000 {
                    return Err(bad(format!(
                        "{key}: {max} is out of range (0 to 100000; 0 refuses every request)"
                    )));
                }
                *slot = max;
            }
        }

        let rate = |flag: Option<Rate>, key: Option<String>, name: &str| match flag {
            Some(rate) => Ok(Some(rate)),
            None => key
                .map(|text| parse_rate(&text).map_err(|e| bad(format!("{name}: {e}"))))
                .transpose(),
        };
        service.limits = LimitsSettings {
            per_user: rate(runtime.rate_per_user, file.rate_per_user, "rate_per_user")?,
            per_tool: rate(runtime.rate_per_tool, file.rate_per_tool, "rate_per_tool")?,
            per_session: rate(
                runtime.rate_per_session,
                file.rate_per_session,
                "rate_per_session",
            )?,
            max_concurrent: runtime.max_concurrent.or(file.max_concurrent).unwrap_or(0),
            max_concurrent_per_user: runtime
                .max_concurrent_per_user
                .or(file.max_concurrent_per_user)
                .unwrap_or(0),
        };

        service.policy = file.policy;
        switch_groups(&mut service.policy, runtime);
        if let Some(egress) = file.egress {
            let policy = &mut service.egress;
            for domain in egress.allowed_domains {
                policy.allowed_domains.push(
                    domain
                        .parse()
                        .map_err(|e| bad(format!("egress.allowed_domains: {e}")))?,
                );
            }
            for host in egress.allowed_private_hosts {
                policy.allowed_private_hosts.push(
                    host.parse()
                        .map_err(|e| bad(format!("egress.allowed_private_hosts: {e}")))?,
                );
            }
            if let Some(plain) = egress.allow_plain_http {
                policy.allow_plain_http = plain;
                service.allow_plain_http = plain;
            }
            for (owner, table) in egress.owners {
                let domains = table
                    .allowed_domains
                    .iter()
                    .map(|domain| {
                        domain
                            .parse()
                            .map_err(|e| bad(format!("egress.owners.{owner}.allowed_domains: {e}")))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if domains.is_empty() {
                    return Err(bad(format!(
                        "egress.owners.{owner}.allowed_domains is empty; list at least one domain or remove the table"
                    )));
                }
                service.owner_allowed_domains.insert(owner, domains);
            }
        }
        service.execution_approval = match (runtime.execution_approval, file.execution_approval) {
            (Some(mode), _) => mode,
            (None, Some(text)) => text
                .parse()
                .map_err(|e: String| bad(format!("execution_approval: {e}")))?,
            (None, None) => toolsmith_service::ExecutionApproval::default(),
        };
        if let Some(ttl) = pick_duration(
            runtime.approval_timeout,
            file.approval_timeout,
            "approval_timeout",
        )? {
            service.approval_ttl = positive(ttl, "approval_timeout")?;
            if ttl > MAX_APPROVAL_TIMEOUT {
                return Err(bad(format!(
                    "approval_timeout: {}s is longer than the most allowed, {}s (7 days): an \
                     approval nobody decides within a week is better asked again",
                    ttl.as_secs(),
                    MAX_APPROVAL_TIMEOUT.as_secs()
                )));
            }
        }
        service.audit_log_file = runtime.audit_log.clone().or(file.audit_log);
        let retention = runtime
            .execution_retention_days
            .or(file.execution_retention_days)
            .unwrap_or(DEFAULT_EXECUTION_RETENTION_DAYS);
        if retention > MAX_EXECUTION_RETENTION_DAYS {
            return Err(bad(format!(
                "execution_retention_days: {retention} is more than the most allowed, \
                 {MAX_EXECUTION_RETENTION_DAYS} (100 years); use 0 to keep the history forever"
            )));
        }
        service.execution_retention_days = Some(retention);

        service.workspace = Some(workspace_config(
            runtime,
            &data_dir,
            WorkspaceFile {
                dir: file.workspace_dir,
                quota: file.workspace_quota,
                max_entries: file.workspace_max_entries,
                per_agent: file.workspace_per_agent,
                denied_paths: file.workspace_denied_paths,
            },
        )?);

        if let Some(author) = runtime.git_author.clone().or(file.git_author) {
            toolsmith_service::parse_git_author(&author)
                .map_err(|e| bad(format!("git_author: {e}")))?;
            service.git.default_author = author.trim().to_owned();
        }
        if let Some(bytes) = pick_size(None, file.ready_min_free, "ready_min_free")? {
            service.ready_min_free_bytes = bytes;
        }
        tool_task_settings(
            &mut service.tasks,
            TaskFile {
                ttl: file.task_ttl,
                max_ttl: file.task_max_ttl,
                max_running: file.task_max_running,
                max_result_bytes: file.task_max_result_bytes,
            },
        )?;
        if let Some(bytes) = pick_size(None, file.max_record_bytes, "max_record_bytes")? {
            if !(256..=16 << 20).contains(&bytes) {
                return Err(bad("max_record_bytes must be from 256 bytes to 16MB"));
            }
            service.records.max_record_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        }
        for (value, key, target) in [
            (
                file.agent_max_definitions,
                "agent_max_definitions",
                &mut service.agents.max_definitions,
            ),
            (
                file.agent_max_running,
                "agent_max_running",
                &mut service.agents.max_running,
            ),
        ] {
            match value {
                Some(0) => return Err(bad(format!("{key} must be at least 1"))),
                Some(max) => *target = max,
                None => {}
            }
        }
        if let Some(lease) = pick_duration(None, file.agent_run_lease, "agent_run_lease")? {
            if !(Duration::from_secs(3)..=Duration::from_secs(3600)).contains(&lease) {
                return Err(bad(
                    "agent_run_lease must be from 3s to 1h (a run's instance renews it every \
                     third of it)",
                ));
            }
            service.agents.run_lease = lease;
        }
        session_settings(
            &mut service,
            SessionFile {
                max_messages: file.session_max_messages,
                max_bytes: file.session_max_bytes,
                max_concurrent: file.subagent_max_concurrent,
                max_spawn_depth: file.subagent_max_spawn_depth,
                max_children: file.subagent_max_children,
                max_iterations: file.subagent_max_iterations,
                archive_after: file.subagent_archive_after,
            },
        )?;
        if let Some(max) = file.max_records_per_collection {
            if max == 0 {
                return Err(bad("max_records_per_collection must be at least 1"));
            }
            service.records.max_records_per_collection = max;
        }
        if let Some(idle) = pick_duration(
            runtime.sandbox_session_timeout,
            file.sandbox_session_timeout,
            "sandbox_session_timeout",
        )? {
            if idle < Duration::from_secs(1) {
                return Err(bad("sandbox_session_timeout must be at least 1s"));
            }
            service.sandbox_sessions.idle_timeout = idle;
        }
        if let Some(max) = runtime
            .sandbox_sessions_per_user
            .or(file.sandbox_sessions_per_user)
        {
            if max == 0 {
                return Err(bad("sandbox_sessions_per_user must be at least 1"));
            }
            service.sandbox_sessions.max_per_user = max;
        }
        if let Some(tools) = file.confirmation_off {
            if let Some(bad_name) = tools.iter().find(|t| t.trim().is_empty()) {
                return Err(bad(format!(
                    "confirmation_off holds {bad_name:?}: name built-in tools (\"delete_file\") or \"*\" for every one"
                )));
            }
            service.confirmation_off = tools;
        }
        if let Some(hosts) = file.package_registries {
            service.package_registries = hosts;
        }
        if let Some(dirs) = file.coding_agent_dirs {
            if let Some(relative) = dirs.iter().find(|d| !d.is_absolute()) {
                return Err(bad(format!(
                    "coding_agent_dirs holds {relative:?}: name absolute folders, e.g. \"/opt/agents/bin\""
                )));
            }
            service.coding_agents.dirs = dirs;
        }
        // dynamic-mcp's variables stand in for these two when neither flag, variable nor
        // file gives them (`dynamic_mcp_npm_variables`).
        let npm_given = NpmGiven {
            max_dependencies: runtime.npm_max_dependencies.is_some()
                || file.npm_max_dependencies.is_some(),
            block: !runtime.npm_block.is_empty() || file.npm_block.is_some(),
        };
        let npm = &mut service.npm;
        if let Some(registry) = runtime.npm_registry.clone().or(file.npm_registry) {
            if !(registry.starts_with("https://") || registry.starts_with("http://")) {
                return Err(bad(format!(
                    "npm_registry must be an http(s) URL, got '{registry}'"
                )));
            }
            npm.registry = registry.trim_end_matches('/').to_owned();
        }
        npm.cache_dir = Some(
            runtime
                .npm_cache_dir
                .clone()
                .or(file.npm_cache_dir)
                .unwrap_or_else(|| data_dir.join("npm-cache")),
        );
        npm.ca_file = runtime.npm_ca_file.clone().or(file.npm_ca_file);
        let listed = |flag: &[String], file: Option<Vec<String>>| {
            if flag.is_empty() {
                file.unwrap_or_default()
            } else {
                flag.to_vec()
            }
        };
        npm.allow = listed(&runtime.npm_allow, file.npm_allow);
        npm.block = listed(&runtime.npm_block, file.npm_block);
        npm.process_env = listed(&runtime.npm_process_env, file.npm_process_env);
        if let Some(max) = runtime.npm_max_dependencies.or(file.npm_max_dependencies) {
            npm.max_dependencies = max;
        }
        if let Some(max) = runtime.npm_max_packages.or(file.npm_max_packages) {
            npm.max_packages = max;
        }
        if let Some(max) = runtime.npm_max_tarball_bytes.or(file.npm_max_tarball_bytes) {
            npm.max_tarball_bytes = max;
        }
        if let Some(max) = runtime
            .npm_max_unpacked_bytes
            .or(file.npm_max_unpacked_bytes)
        {
            npm.max_unpacked_bytes = max;
        }
        if let Some(max) = runtime.npm_max_files.or(file.npm_max_files) {
            npm.max_files = max;
        }

        let compat = runtime.compat.or(file.compat).unwrap_or(Compat::None);
        if compat == Compat::DynamicMcp {
            service.name_rule = toolsmith_core::name::NameRule::Wide;
            dynamic_mcp_sandbox_variables(&sandbox_given, &mut service)?;
            dynamic_mcp_npm_variables(&npm_given, &mut service.npm)?;
        }
        let poll_interval =
            pick_duration(runtime.poll_interval, file.poll_interval, "poll_interval")?
                .unwrap_or(DEFAULT_POLL_INTERVAL);
        if poll_interval < Duration::from_millis(10) {
            return Err(bad("poll_interval must be at least 10ms"));
        }

        let mut server = ServerSettings {
            compat_dynamic_mcp: compat == Compat::DynamicMcp,
            mcp_listing: McpListing::resolve(runtime.mcp_listing.or(file.mcp_listing), compat),
            ..ServerSettings::default()
        };
        let defaults = ServeArgs::default_ref();
        let serve = serve.unwrap_or(&defaults);

        let bind = serve
            .bind
            .clone()
            .or(file.bind)
            .unwrap_or_else(|| DEFAULT_BIND.to_owned());
        let bind = normalize_host(&bind)?;
        let port = serve.port.or(file.port).unwrap_or(DEFAULT_PORT);

        if let Some(limit) = pick_size(serve.body_limit, file.body_limit, "body_limit")? {
            server.body_limit_bytes = in_range(limit, 1024, 1 << 30, "body_limit")?;
        }
        if let Some(timeout) = pick_duration(
            serve.request_timeout,
            file.request_timeout,
            "request_timeout",
        )? {
            server.request_timeout = positive(timeout, "request_timeout")?;
        }
        if let Some(max) = serve.max_connections.or(file.max_connections) {
            server.max_connections = at_least_one(max, "max_connections")?;
        }
        if let Some(timeout) = pick_duration(
            serve.header_read_timeout,
            file.header_read_timeout,
            "header_read_timeout",
        )? {
            server.header_read_timeout = positive(timeout, "header_read_timeout")?;
        }
        if let Some(timeout) = pick_duration(serve.idle_timeout, file.idle_timeout, "idle_timeout")?
        {
            server.idle_timeout = positive(timeout, "idle_timeout")?;
        }
        if let Some(max) = serve.mcp_max_sessions.or(file.mcp_max_sessions) {
            server.mcp_sessions.max_sessions = at_least_one(max, "mcp_max_sessions")?;
        }
        if let Some(max) = serve
            .mcp_max_sessions_per_user
            .or(file.mcp_max_sessions_per_user)
        {
            server.mcp_sessions.max_per_user = at_least_one(max, "mcp_max_sessions_per_user")?;
        }
        if let Some(max) = serve.mcp_max_listens.or(file.mcp_max_listens) {
            server.mcp_sessions.max_listens = at_least_one(max, "mcp_max_listens")?;
        }
        if let Some(max) = serve
            .mcp_max_listens_per_user
            .or(file.mcp_max_listens_per_user)
        {
            server.mcp_sessions.max_listens_per_user =
                at_least_one(max, "mcp_max_listens_per_user")?;
        }
        if let Some(timeout) = pick_duration(
            serve.mcp_session_idle_timeout,
            file.mcp_session_idle_timeout,
            "mcp_session_idle_timeout",
        )? {
            server.mcp_sessions.idle_timeout = positive(timeout, "mcp_session_idle_timeout")?;
        }
        let shutdown_timeout = pick_duration(
            serve.shutdown_timeout,
            file.shutdown_timeout,
            "shutdown_timeout",
        )?
        .unwrap_or(DEFAULT_SHUTDOWN_TIMEOUT);

        let explicit_hosts = if serve.allowed_hosts.is_empty() {
            file.allowed_hosts
        } else {
            Some(serve.allowed_hosts.clone())
        };
        match explicit_hosts {
            Some(hosts) => {
                let hosts: Vec<String> = hosts
                    .iter()
                    .map(|h| h.trim().to_owned())
                    .filter(|h| !h.is_empty())
                    .collect();
                if hosts.is_empty() {
                    return Err(bad("allowed_hosts: at least one host name is needed"));
                }
                server.allowed_hosts = hosts;
            }
            None => {
                let unspecified = bind
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_unspecified());
                if !unspecified && !server.allowed_hosts.contains(&bind) {
                    server.allowed_hosts.push(bind.clone());
                }
            }
        }

        server.oauth = file.oauth.map(oauth::resolve).transpose()?;
        server.admin_token = runtime
            .admin_token
            .clone()
            .or(file.admin_token)
            .map(crate::redacted::Redacted::into_inner);
        let mut require_admin_token =
            runtime.require_admin_token || file.require_admin_token.unwrap_or(false);
        if compat == Compat::DynamicMcp {
            // dynamic-mcp's own variables, honoured in its compatibility mode.
            if server.admin_token.is_none() {
                server.admin_token = env_text("MCP_ADMIN_TOKEN");
            }
            require_admin_token |= env_flag("MCP_REQUIRE_ADMIN_TOKEN")?;
        }
        // dynamic-mcp takes an admin token of any length; so does its compatibility mode.
        if let Some(token) = &server.admin_token
            && token.trim().len() < 16
            && compat != Compat::DynamicMcp
        {
            return Err(bad(
                "admin_token must be at least 16 characters (use a long random string)",
            ));
        }
        if require_admin_token && server.admin_token.is_none() {
            return Err(bad(
                "require_admin_token is set but no admin token is configured: set TOOLSMITH_ADMIN_TOKEN (or MCP_ADMIN_TOKEN with --compat dynamic-mcp, or admin_token in the file) to a long random string",
            ));
        }
        server.require_admin_token = require_admin_token;
        if compat == Compat::DynamicMcp {
            dynamic_mcp_profile(
                runtime.compat_profile.or(file.compat_profile),
                &mut server,
                &mut service,
            )?;
        }
        // Read-only holds on every door: the HTTP faces refuse their writes (scopes), the
        // service refuses the built-ins' (records, workspaces, the scheduler).
        let mut read_only = global.read_only || file.read_only.unwrap_or(false);
        if compat == Compat::DynamicMcp {
            // dynamic-mcp's read-only registry is Toolsmith's read-only mode; its tool limit
            // is the per-owner limit, unless Toolsmith's own setting gives one.
            read_only |= env_flag("MCP_DYNAMIC_READ_ONLY")?;
            if global.max_tools_per_owner.is_none()
                && file.max_tools_per_owner.is_none()
                && let Some(max) = env_text("MCP_DYNAMIC_MAX_TOOLS")
            {
                service.max_tools_per_owner = match max.trim().parse::<u64>() {
                    Ok(max) if max >= 1 => max,
                    _ => {
                        return Err(bad(format!(
                            "MCP_DYNAMIC_MAX_TOOLS must be a whole number of at least 1, got '{max}'"
                        )));
                    }
                };
            }
        }
        server.read_only = read_only;
        service.read_only = read_only;
        // Readiness watches the embedded store's disk.
        if let Database::Sqlite(path) = &database {
            let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
            service.data_dir = Some(dir.unwrap_or(Path::new(".")).to_path_buf());
        }

        Ok(Settings {
            database,
            database_startup_timeout,
            service,
            server,
            bind,
            port,
            shutdown_timeout,
            poll_interval,
        })
    }
}

/// The file's `workspace_*` keys.
struct WorkspaceFile {
    dir: Option<PathBuf>,
    quota: Option<Value>,
    max_entries: Option<u64>,
    per_agent: Option<bool>,
    denied_paths: Option<Vec<String>>,
}

/// The workspaces' settings: flags and environment over the file over the defaults.
fn workspace_config(
    runtime: &RuntimeArgs,
    data_dir: &Path,
    file: WorkspaceFile,
) -> Result<WorkspaceSettings, ConfigError> {
    let root = runtime
        .workspace_dir
        .clone()
        .or(file.dir)
        .unwrap_or_else(|| data_dir.join("workspaces"));
    let mut config = WorkspaceSettings::new(root);
    if let Some(quota) = pick_size(runtime.workspace_quota, file.quota, "workspace_quota")? {
        if quota == 0 {
            return Err(bad("workspace_quota must be more than 0 bytes"));
        }
        config.quota_bytes = quota;
    }
    if let Some(max) = file.max_entries {
        if max == 0 {
            return Err(bad("workspace_max_entries must be at least 1"));
        }
        config.max_entries = max;
    }
    config.per_agent = runtime
        .workspace_per_agent
        .or(file.per_agent)
        .unwrap_or(false);
    if let Some(denied) = file.denied_paths {
        if let Some(bad_path) = denied.iter().find(|p| p.split('/').any(|n| n == "..")) {
            return Err(bad(format!(
                "workspace_denied_paths: '{bad_path}' contains '..'; list paths relative to a workspace root, such as '.toolsmith'"
            )));
        }
        config.denied_prefixes = denied;
    }
    Ok(config)
}

/// Applies `--enable-group` / `--disable-group` (and their variables) over the file's
/// `[policy.tool_groups]`: a flag wins over the file for the group it names.
fn switch_groups(policy: &mut Option<toolsmith_policy::PolicyDocument>, runtime: &RuntimeArgs) {
    let named = |list: &[String]| -> Vec<String> {
        list.iter()
            .map(|g| g.trim().to_owned())
            .filter(|g| !g.is_empty())
            .collect()
    };
    let (enable, disable) = (
        named(&runtime.enable_groups),
        named(&runtime.disable_groups),
    );
    if enable.is_empty() && disable.is_empty() {
        return;
    }
    let switches = &mut policy.get_or_insert_with(Default::default).tool_groups;
    switches.disable.retain(|g| !enable.contains(g));
    switches.enable.retain(|g| !disable.contains(g));
    switches.enable.extend(enable);
    switches.disable.extend(disable);
}

/// dynamic-mcp's profile settings in its compatibility mode (docs/mcp.md, "Profiles"): the
/// profile (`--compat-profile`, `compat_profile`, else its `MCP_PROFILE`; default `mvp`; the
/// enterprise profile switches the `codeExecution` group on unless the operator named it),
/// the images of its sandbox sessions (`MCP_SANDBOX_ALLOWED_IMAGES`), upstream attach
/// (`MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH`, `…_MAX`, which needs an admin
/// token in the enterprise profile), and its execution guard's limits where Toolsmith's own
/// are not set (`MCP_TOOL_MAX_CONCURRENCY` → `max_concurrent`; `MCP_TOOL_MAX_CALLS_PER_WINDOW`
/// calls per `MCP_TOOL_RATE_WINDOW_MS` → `rate_per_tool`).
fn dynamic_mcp_profile(
    profile: Option<CompatProfileArg>,
    server: &mut ServerSettings,
    service: &mut ToolServiceSettings,
) -> Result<(), ConfigError> {
    use toolsmith_server::mcp::CompatProfile;
    server.compat_profile = match profile {
        Some(CompatProfileArg::Mvp) => CompatProfile::Mvp,
        Some(CompatProfileArg::Enterprise) => CompatProfile::Enterprise,
        None => match env_text("MCP_PROFILE") {
            Some(value) => value.parse().map_err(bad)?,
            None => CompatProfile::Mvp,
        },
    };
    if server.compat_profile == CompatProfile::Enterprise {
        // dynamic-mcp's enterprise profile serves its sandbox sessions: the group of the
        // built-ins they stand for is on, unless the operator switched it either way.
        const CODE: &str = "codeExecution";
        let named = service.policy.as_ref().is_some_and(|p| {
            let switches = &p.tool_groups;
            switches
                .enable
                .iter()
                .chain(&switches.disable)
                .any(|g| g == CODE)
        });
        if !named {
            let switches = &mut service
                .policy
                .get_or_insert_with(Default::default)
                .tool_groups;
            switches.enable.push(CODE.to_owned());
        }
    }
    let number = |name: &str, default: u64, max: u64| -> Result<u64, ConfigError> {
        let Some(text) = env_text(name) else {
            return Ok(default);
        };
        match text.trim().parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => Ok(n),
            _ => Err(bad(format!("Invalid {name} \"{text}\". Expected 1-{max}."))),
        }
    };
    // Its images for sandbox sessions: unset, its default (`node:lts-slim`); set, the list
    // given (empty: any valid name), comma-separated.
    if let Ok(text) = std::env::var("MCP_SANDBOX_ALLOWED_IMAGES") {
        server.compat_sandbox_images = text
            .split(',')
            .map(str::trim)
            .filter(|image| !image.is_empty())
            .map(str::to_owned)
            .collect();
    }
    let attach = match env_text("MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH") {
        None => false,
        Some(text) => match text.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => true,
            "0" | "false" | "no" | "off" => false,
            _ => {
                return Err(bad(format!(
                    "Invalid boolean value \"{text}\" of MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH."
                )));
            }
        },
    };
    let attach_max = number("MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH_MAX", 8, 256)?;
    if attach {
        if server.compat_profile == CompatProfile::Enterprise && server.admin_token.is_none() {
            return Err(bad(
                "Missing required config: MCP_ADMIN_TOKEN (required when MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH=true); set MCP_ADMIN_TOKEN or TOOLSMITH_ADMIN_TOKEN to a long random string",
            ));
        }
        server.compat_upstream_attach = Some(attach_max as usize);
    }
    if service.limits.max_concurrent == 0 && env_text("MCP_TOOL_MAX_CONCURRENCY").is_some() {
        service.limits.max_concurrent = number("MCP_TOOL_MAX_CONCURRENCY", 8, 10_000)? as usize;
    }
    if service.limits.per_tool.is_none() && env_text("MCP_TOOL_MAX_CALLS_PER_WINDOW").is_some() {
        let calls = number("MCP_TOOL_MAX_CALLS_PER_WINDOW", 300, 1_000_000)?;
        let window = number("MCP_TOOL_RATE_WINDOW_MS", 60_000, 86_400_000)?;
        let per_minute = (calls * 60_000)
            .div_ceil(window)
            .clamp(1, u64::from(u32::MAX));
        service.limits.per_tool = Some(Rate {
            per_minute: per_minute as u32,
            burst: calls.min(u64::from(u32::MAX)) as u32,
        });
    }
    Ok(())
}

/// A non-empty environment variable.
fn env_text(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Which settings of the JS sandbox and the sandbox sessions were given (flag, environment or
/// file), so dynamic-mcp's variables do not override them.
struct SandboxGiven {
    wall_time: bool,
    max_output: bool,
    session_timeout: bool,
    sessions: bool,
}

/// dynamic-mcp's `MCP_SANDBOX_*` variables that have a Toolsmith setting, read in its
/// compatibility mode where Toolsmith's own setting is not given (docs/mcp.md): the longest
/// run (`MCP_SANDBOX_MAX_TIMEOUT_MS` → `js_wall_time`), the largest output
/// (`MCP_SANDBOX_MAX_OUTPUT_BYTES` → `js_max_output`), and the sandbox sessions' idle time and
/// number (`MCP_SANDBOX_SESSION_TIMEOUT_SECONDS` → `sandbox_session_timeout`,
/// `MCP_SANDBOX_MAX_SESSIONS` → `sandbox_sessions_per_user`). Each is checked against
/// dynamic-mcp's own range.
fn dynamic_mcp_sandbox_variables(
    given: &SandboxGiven,
    service: &mut ToolServiceSettings,
) -> Result<(), ConfigError> {
    let number = |name: &str, max: u64| -> Result<Option<u64>, ConfigError> {
        let Some(text) = env_text(name) else {
            return Ok(None);
        };
        match text.trim().parse::<u64>() {
            Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
            _ => Err(bad(format!(
                "{name} must be a whole number from 1 to {max}, got '{text}'"
            ))),
        }
    };
    if !given.wall_time
        && let Some(ms) = number("MCP_SANDBOX_MAX_TIMEOUT_MS", 300_000)?
    {
        service.js_limits.wall_time = Duration::from_millis(ms);
    }
    if !given.max_output
        && let Some(bytes) = number("MCP_SANDBOX_MAX_OUTPUT_BYTES", 10_000_000)?
    {
        service.js_limits.max_output_bytes = bytes as usize;
    }
    if !given.session_timeout
        && let Some(seconds) = number("MCP_SANDBOX_SESSION_TIMEOUT_SECONDS", 172_800)?
    {
        service.sandbox_sessions.idle_timeout = Duration::from_secs(seconds);
    }
    if !given.sessions
        && let Some(max) = number("MCP_SANDBOX_MAX_SESSIONS", 1_000)?
    {
        service.sandbox_sessions.max_per_user = max as usize;
    }
    Ok(())
}

/// dynamic-mcp's default `MCP_SANDBOX_BLOCKED_PACKAGES` (`src/config/runtime.ts`).
const DYNAMIC_MCP_BLOCKED_PACKAGES: &str = "child_process,node-pty,npm,pm2";

/// Which npm settings dynamic-mcp's variables may not override (given by flag, variable or
/// file).
struct NpmGiven {
    max_dependencies: bool,
    block: bool,
}

/// dynamic-mcp's dependency variables, read in its compatibility mode where Toolsmith's own
/// setting is not given (docs/mcp.md): `MCP_SANDBOX_MAX_DEPENDENCIES` → `npm_max_dependencies`
/// (dynamic-mcp's range, 1 to 256) and `MCP_SANDBOX_BLOCKED_PACKAGES` (comma-separated) →
/// `npm_block` (unset: dynamic-mcp's default list, `child_process,node-pty,npm,pm2`).
fn dynamic_mcp_npm_variables(
    given: &NpmGiven,
    npm: &mut toolsmith_service::packages::NpmSettings,
) -> Result<(), ConfigError> {
    if !given.max_dependencies
        && let Some(text) = env_text("MCP_SANDBOX_MAX_DEPENDENCIES")
    {
        npm.max_dependencies = match text.trim().parse::<usize>() {
            Ok(n) if (1..=256).contains(&n) => n,
            _ => {
                return Err(bad(format!(
                    "MCP_SANDBOX_MAX_DEPENDENCIES must be a whole number from 1 to 256, got '{text}'"
                )));
            }
        };
    }
    if !given.block {
        // Unset is dynamic-mcp's own default list; set (even empty) is the list given.
        let text = std::env::var("MCP_SANDBOX_BLOCKED_PACKAGES")
            .unwrap_or_else(|_| DYNAMIC_MCP_BLOCKED_PACKAGES.to_owned());
        npm.block = text
            .split(',')
            .map(str::trim)
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
    }
    Ok(())
}

/// A boolean variable as dynamic-mcp reads one (`true`/`1`/`yes`/`on`, `false`/`0`/`no`/`off`;
/// unset is false); anything else is refused with the variable's name.
fn env_flag(name: &str) -> Result<bool, ConfigError> {
    let Some(value) = env_text(name) else {
        return Ok(false);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(bad(format!(
            "{name} must be true or false (also 1/0, yes/no, on/off), got '{value}'"
        ))),
    }
}

impl ServeArgs {
    /// No serve options given (for `toolsmith mcp`, which shares the resolution).
    fn default_ref() -> ServeArgs {
        ServeArgs {
            bind: None,
            port: None,
            body_limit: None,
            request_timeout: None,
            shutdown_timeout: None,
            allowed_hosts: Vec::new(),
            max_connections: None,
            header_read_timeout: None,
            idle_timeout: None,
            mcp_max_sessions: None,
            mcp_max_sessions_per_user: None,
            mcp_max_listens: None,
            mcp_max_listens_per_user: None,
            mcp_session_idle_timeout: None,
            runtime: RuntimeArgs {
                config: None,
                compat: None,
                compat_profile: None,
                mcp_listing: None,
                admin_token: None,
                require_admin_token: false,
                js_memory: None,
                js_cpu_time: None,
                js_wall_time: None,
                js_max_output: None,
                js_max_in_flight: None,
                js_max_fs_operations: None,
                enable_groups: Vec::new(),
                disable_groups: Vec::new(),
                poll_interval: None,
                rate_per_user: None,
                rate_per_tool: None,
                rate_per_session: None,
                max_concurrent: None,
                max_concurrent_per_user: None,
                execution_retention_days: None,
                execution_approval: None,
                approval_timeout: None,
                audit_log: None,
                workspace_dir: None,
                workspace_quota: None,
                workspace_per_agent: None,
                git_author: None,
                sandbox_session_timeout: None,
                sandbox_sessions_per_user: None,
                npm_registry: None,
                npm_cache_dir: None,
                npm_ca_file: None,
                npm_allow: Vec::new(),
                npm_block: Vec::new(),
                npm_process_env: Vec::new(),
                npm_max_dependencies: None,
                npm_max_packages: None,
                npm_max_tarball_bytes: None,
                npm_max_unpacked_bytes: None,
                npm_max_files: None,
            },
        }
    }
}

/// `localhost`, an IPv4 address or an IPv6 address (brackets allowed), as the listener's host.
fn normalize_host(text: &str) -> Result<String, ConfigError> {
    let host = text.trim();
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if host.eq_ignore_ascii_case("localhost") {
        return Ok("localhost".to_owned());
    }
    host.parse::<std::net::IpAddr>()
        .map(|ip| ip.to_string())
        .map_err(|_| {
            bad(format!(
                "bind: '{text}' is not an IP address or 'localhost' (e.g. 127.0.0.1, ::1, 0.0.0.0)"
            ))
        })
}

/// The file's keys of the sessions' and subagents' limits.
struct SessionFile {
    max_messages: Option<u32>,
    max_bytes: Option<Value>,
    max_concurrent: Option<u32>,
    max_spawn_depth: Option<u32>,
    max_children: Option<u32>,
    max_iterations: Option<u32>,
    archive_after: Option<Value>,
}

/// The sessions' and subagents' limits (spec 001 §2 Sessions, §6) from the file.
fn session_settings(
    service: &mut ToolServiceSettings,
    file: SessionFile,
) -> Result<(), ConfigError> {
    let sessions = &mut service.sessions;
    let counts = [
        (
            file.max_messages,
            "session_max_messages",
            1,
            100_000,
            &mut sessions.max_messages,
        ),
        (
            file.max_concurrent,
            "subagent_max_concurrent",
            1,
            1_000,
            &mut sessions.subagents.max_concurrent,
        ),
        (
            file.max_spawn_depth,
            "subagent_max_spawn_depth",
            0,
            5,
            &mut sessions.subagents.max_spawn_depth,
        ),
        (
            file.max_children,
            "subagent_max_children",
            1,
            100,
            &mut sessions.subagents.max_children_per_agent,
        ),
        (
            file.max_iterations,
            "subagent_max_iterations",
            1,
            200,
            &mut sessions.subagents.max_iterations,
        ),
    ];
    for (value, key, min, max, target) in counts {
        match value {
            Some(n) if !(min..=max).contains(&n) => {
                return Err(bad(format!("{key} must be from {min} to {max}, not {n}")));
            }
            Some(n) => *target = n,
            None => {}
        }
    }
    if let Some(bytes) = pick_size(None, file.max_bytes, "session_max_bytes")? {
        if !(1024..=64 << 20).contains(&bytes) {
            return Err(bad("session_max_bytes must be from 1KB to 64MB"));
        }
        sessions.max_bytes = bytes;
    }
    let archive = pick_duration(None, file.archive_after, "subagent_archive_after")?;
    if let Some(after) = archive {
        if !(Duration::from_secs(1)..=Duration::from_secs(30 * 24 * 3600)).contains(&after) {
            return Err(bad("subagent_archive_after must be from 1s to 30 days"));
        }
        sessions.subagents.archive_after = after;
    }
    Ok(())
}

fn pick_size(
    flag: Option<u64>,
    file: Option<Value>,
    key: &str,
) -> Result<Option<u64>, ConfigError> {
    if flag.is_some() {
        return Ok(flag);
    }
    file.map(|v| match v {
        Value::Number(n) => Ok(n),
        Value::Text(t) => parse_size(&t),
    })
    .transpose()
    .map_err(|e| bad(format!("{key}: {e}")))
}

fn pick_duration(
    flag: Option<Duration>,
    file: Option<Value>,
    key: &str,
) -> Result<Option<Duration>, ConfigError> {
    if flag.is_some() {
        return Ok(flag);
    }
    file.map(|v| match v {
        Value::Number(n) => Ok(Duration::from_secs(n)),
        Value::Text(t) => parse_duration(&t),
    })
    .transpose()
    .map_err(|e| bad(format!("{key}: {e}")))
}

fn in_range(value: u64, min: u64, max: u64, key: &str) -> Result<usize, ConfigError> {
    if value < min || value > max {
        return Err(bad(format!(
            "{key}: {value} bytes is out of range ({min} to {max} bytes)"
        )));
    }
    usize::try_from(value).map_err(|_| bad(format!("{key}: {value} bytes is too large")))
}

fn at_least_one(value: usize, key: &str) -> Result<usize, ConfigError> {
    if value == 0 {
        return Err(bad(format!("{key} must be at least 1")));
    }
    Ok(value)
}

/// The `task_*` keys of the file.
struct TaskFile {
    ttl: Option<Value>,
    max_ttl: Option<Value>,
    max_running: Option<u32>,
    max_result_bytes: Option<Value>,
}

/// The `task_*` keys: how long tool tasks are kept, how many run per user, the largest result.
fn tool_task_settings(
    tasks: &mut toolsmith_service::TaskSettings,
    file: TaskFile,
) -> Result<(), ConfigError> {
    if let Some(ttl) = pick_duration(None, file.ttl, "task_ttl")? {
        tasks.ttl = positive(ttl, "task_ttl")?;
    }
    if let Some(ttl) = pick_duration(None, file.max_ttl, "task_max_ttl")? {
        tasks.max_ttl = positive(ttl, "task_max_ttl")?;
    }
    if tasks.ttl > tasks.max_ttl {
        return Err(bad(format!(
            "task_ttl ({}s) is longer than task_max_ttl ({}s): raise task_max_ttl or lower \
             task_ttl",
            tasks.ttl.as_secs(),
            tasks.max_ttl.as_secs()
        )));
    }
    if let Some(n) = file.max_running {
        if n == 0 {
            return Err(bad(
                "task_max_running must be at least 1 (tool tasks cannot be switched off this way)",
            ));
        }
        tasks.max_running = n;
    }
    if let Some(bytes) = pick_size(None, file.max_result_bytes, "task_max_result_bytes")? {
        if !(1024..=64 << 20).contains(&bytes) {
            return Err(bad("task_max_result_bytes must be from 1KB to 64MB"));
        }
        tasks.max_result_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    }
    Ok(())
}

fn positive(value: Duration, key: &str) -> Result<Duration, ConfigError> {
    if value.is_zero() {
        return Err(bad(format!("{key} must be longer than zero")));
    }
    Ok(value)
}

/// `1048576`, `512KB`, `1MB`, `1 MiB`, `2G`: bytes, with K/M/G (and KB/MB/GB, KiB/MiB/GiB)
/// meaning powers of 1024.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (number, unit) = split_number(text);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not a size (e.g. 65536, 512KB, 1MB)"))?;
    let factor: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "'{text}' has an unknown size unit '{unit}' (use B, KB, MB or GB)"
            ));
        }
    };
    n.checked_mul(factor)
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// `30s`, `500ms`, `2m`, `1h`, `1.5s`, or a bare number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = split_number(text);
    let n: f64 = number
        .parse()
        .ok()
        .filter(|n: &f64| n.is_finite() && *n >= 0.0)
        .ok_or_else(|| format!("'{text}' is not a duration (e.g. 30s, 500ms, 2m)"))?;
    let seconds = match unit.to_ascii_lowercase().as_str() {
        "ms" => n / 1000.0,
        "" | "s" | "sec" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        _ => {
            return Err(format!(
                "'{text}' has an unknown duration unit '{unit}' (use ms, s, m or h)"
            ));
        }
    };
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("'{text}' is too long"))
}

/// Splits `12.5 MB` into `("12.5", "MB")`.
fn split_number(text: &str) -> (&str, &str) {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at_checked(end).unwrap_or((text, ""));
    (number, unit.trim())
}

/// `PER_MINUTE[:BURST]`, e.g. `600` or `600:50`.
pub fn parse_rate(text: &str) -> Result<Rate, String> {
    let (rate, burst) = match text.trim().split_once(':') {
        Some((rate, burst)) => (rate, Some(burst)),
        None => (text.trim(), None),
    };
    let number = |what: &str, value: &str| {
        value.trim().parse::<u32>().map_err(|_| {
            format!("'{text}' is not a rate: {what} must be a whole number (PER_MINUTE[:BURST], e.g. 600:50)")
        })
    };
    let per_minute = number("the per-minute rate", rate)?;
    if per_minute == 0 {
        return Err(format!("'{text}': the per-minute rate must be at least 1"));
    }
    let burst = burst
        .map(|b| number("the burst", b))
        .transpose()?
        .unwrap_or(per_minute);
    if burst == 0 {
        return Err(format!("'{text}': the burst must be at least 1"));
    }
    Ok(Rate { per_minute, burst })
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command};

    fn settings(argv: &[&str], file: &str) -> Result<Settings, ConfigError> {
        let cli = Cli::try_parse_from(argv).unwrap();
        let Command::Serve(serve) = &cli.command else {
            panic!("not serve")
        };
        let file: FileSettings = toml::from_str(file).map_err(|e| bad(e.to_string()))?;
        Settings::merge(&cli.global, Some(&**serve), &serve.runtime, file)
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_size("65536"), Ok(65536));
        assert_eq!(parse_size("1MB"), Ok(1 << 20));
        assert_eq!(parse_size("512 KiB"), Ok(512 << 10));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert!(parse_size("1TB").unwrap_err().contains("unknown size unit"));
        assert!(parse_size("lots").is_err());
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("3 days").is_err());
    }

    #[test]
    fn the_git_author_defaults_and_is_checked() {
        let author =
            |args: &[&str], file: &str| settings(args, file).map(|s| s.service.git.default_author);
        assert_eq!(
            author(&["toolsmith", "serve"], "").unwrap(),
            "Toolsmith Agent <agent@toolsmith.local>"
        );
        let file = "git_author = \"Build Bot <bot@example.org>\"";
        assert_eq!(
            author(&["toolsmith", "serve"], file).unwrap(),
            "Build Bot <bot@example.org>"
        );
        assert_eq!(
            author(
                &["toolsmith", "serve", "--git-author", "Ada <ada@x.org>"],
                file
            )
            .unwrap(),
            "Ada <ada@x.org>"
        );
        let e = author(&["toolsmith", "serve"], "git_author = \"nobody\"")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("git_author") && e.contains("Name <email>"),
            "{e}"
        );
    }

    #[test]
    fn workspace_settings_default_to_the_data_dir_and_are_checked() {
        let s = settings(&["toolsmith", "serve"], "data_dir = \"/srv/ts\"").unwrap();
        let ws = s.service.workspace.unwrap();
        assert_eq!(ws.root, PathBuf::from("/srv/ts/workspaces"));
        assert_eq!(ws.quota_bytes, 100 << 20);
        assert!(!ws.per_agent);
        assert_eq!(ws.denied_prefixes, [".toolsmith"]);
        let file = "workspace_dir = \"/w\"\nworkspace_quota = \"5MB\"\nworkspace_max_entries = 10\nworkspace_per_agent = true\nworkspace_denied_paths = [\".git\", \"secrets/keys\"]";
        let ws = settings(&["toolsmith", "serve"], file)
            .unwrap()
            .service
            .workspace
            .unwrap();
        assert_eq!(ws.root, PathBuf::from("/w"));
        assert_eq!(
            (ws.quota_bytes, ws.max_entries, ws.per_agent),
            (5 << 20, 10, true)
        );
        assert_eq!(ws.denied_prefixes, [".git", "secrets/keys"]);
        let ws = settings(
            &[
                "toolsmith",
                "serve",
                "--workspace-quota",
                "1KB",
                "--workspace-per-agent",
                "false",
            ],
            file,
        )
        .unwrap()
        .service
        .workspace
        .unwrap();
        assert_eq!((ws.quota_bytes, ws.per_agent), (1024, false));
        for (file, error) in [
            ("workspace_quota = 0", "workspace_quota must be more than 0"),
            (
                "workspace_max_entries = 0",
                "workspace_max_entries must be at least 1",
            ),
            ("workspace_denied_paths = [\"../x\"]", "contains '..'"),
        ] {
            let e = settings(&["toolsmith", "serve"], file)
                .unwrap_err()
                .to_string();
            assert!(e.contains(error), "{file}: {e}");
        }
    }

    #[test]
    fn record_limits_come_from_the_file_and_are_checked() {
        let s = settings(&["toolsmith", "serve"], "").unwrap();
        let records = s.service.records;
        assert_eq!(
            (records.max_record_bytes, records.max_records_per_collection),
            (64 << 10, 100_000)
        );
        let file = "max_record_bytes = \"8KB\"\nmax_records_per_collection = 500";
        let records = settings(&["toolsmith", "serve"], file)
            .unwrap()
            .service
            .records;
        assert_eq!(
            (records.max_record_bytes, records.max_records_per_collection),
            (8 << 10, 500)
        );
        for (file, error) in [
            ("max_record_bytes = 10", "from 256 bytes"),
            ("max_records_per_collection = 0", "at least 1"),
        ] {
            let e = settings(&["toolsmith", "serve"], file)
                .unwrap_err()
                .to_string();
            assert!(e.contains(error), "{file}: {e}");
        }
    }

    #[test]
    fn tool_task_limits_come_from_the_file_and_are_checked() {
        let tasks = settings(&["toolsmith", "serve"], "").unwrap().service.tasks;
        assert_eq!(
            (
                tasks.ttl,
                tasks.max_ttl,
                tasks.max_running,
                tasks.max_result_bytes
            ),
            (
                Duration::from_secs(3600),
                Duration::from_secs(86_400),
                16,
                1 << 20
            )
        );
        let file = "task_ttl = \"10m\"\ntask_max_ttl = \"2h\"\ntask_max_running = 3\n\
                    task_max_result_bytes = \"64KB\"";
        let tasks = settings(&["toolsmith", "serve"], file)
            .unwrap()
            .service
            .tasks;
        assert_eq!(
            (
                tasks.ttl,
                tasks.max_ttl,
                tasks.max_running,
                tasks.max_result_bytes
            ),
            (
                Duration::from_secs(600),
                Duration::from_secs(7200),
                3,
                64 << 10
            )
        );
        for (file, error) in [
            ("task_ttl = \"48h\"", "longer than task_max_ttl"),
            ("task_max_ttl = 0", "longer than zero"),
            ("task_max_running = 0", "at least 1"),
            ("task_max_result_bytes = 10", "from 1KB"),
        ] {
            let e = settings(&["toolsmith", "serve"], file)
                .unwrap_err()
                .to_string();
            assert!(e.contains(error), "{file}: {e}");
        }
    }

    #[test]
    fn the_per_user_agent_caps_come_from_the_file_and_are_at_least_one() {
        let agents = settings(&["toolsmith", "serve"], "")
            .unwrap()
            .service
            .agents;
        assert_eq!((agents.max_definitions, agents.max_running), (100, 16));
        let file = "agent_max_definitions = 3\nagent_max_running = 2";
        let agents = settings(&["toolsmith", "serve"], file)
            .unwrap()
            .service
            .agents;
        assert_eq!((agents.max_definitions, agents.max_running), (3, 2));
        assert_eq!(agents.run_lease, Duration::from_secs(30));
        let file = "agent_run_lease = \"90s\"";
        let agents = settings(&["toolsmith", "serve"], file)
            .unwrap()
            .service
            .agents;
        assert_eq!(agents.run_lease, Duration::from_secs(90));
        for lease in ["\"1s\"", "\"2h\""] {
            let e = settings(
                &["toolsmith", "serve"],
                &format!("agent_run_lease = {lease}"),
            )
            .unwrap_err()
            .to_string();
            assert!(e.contains("agent_run_lease must be from 3s to 1h"), "{e}");
        }
        for key in ["agent_max_definitions", "agent_max_running"] {
            let e = settings(&["toolsmith", "serve"], &format!("{key} = 0"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(key) && e.contains("at least 1"), "{e}");
        }
    }

    #[test]
    fn the_session_and_subagent_limits_come_from_the_file() {
        let sessions = settings(&["toolsmith", "serve"], "")
            .unwrap()
            .service
            .sessions;
        let limits = &sessions.subagents;
        assert_eq!((sessions.max_messages, sessions.max_bytes), (200, 1 << 20));
        assert_eq!(
            (
                limits.max_concurrent,
                limits.max_spawn_depth,
                limits.max_children_per_agent,
                limits.max_iterations,
                limits.archive_after
            ),
            (8, 1, 5, 20, Duration::from_secs(3600))
        );
        let file = "session_max_messages = 50\nsession_max_bytes = \"64KB\"\n\
                    subagent_max_concurrent = 3\nsubagent_max_spawn_depth = 2\n\
                    subagent_max_children = 4\nsubagent_max_iterations = 9\n\
                    subagent_archive_after = \"10m\"";
        let sessions = settings(&["toolsmith", "serve"], file)
            .unwrap()
            .service
            .sessions;
        let limits = &sessions.subagents;
        assert_eq!((sessions.max_messages, sessions.max_bytes), (50, 64 * 1024));
        assert_eq!(
            (
                limits.max_concurrent,
                limits.max_spawn_depth,
                limits.max_children_per_agent,
                limits.max_iterations,
                limits.archive_after
            ),
            (3, 2, 4, 9, Duration::from_secs(600))
        );
        for (line, error) in [
            (
                "session_max_messages = 0",
                "session_max_messages must be from 1",
            ),
            (
                "subagent_max_concurrent = 0",
                "subagent_max_concurrent must be",
            ),
            (
                "subagent_max_spawn_depth = 6",
                "subagent_max_spawn_depth must be",
            ),
            (
                "subagent_max_iterations = 500",
                "subagent_max_iterations must be",
            ),
            (
                "session_max_bytes = 10",
                "session_max_bytes must be from 1KB",
            ),
            (
                "subagent_archive_after = \"0s\"",
                "subagent_archive_after must be",
            ),
        ] {
            let e = settings(&["toolsmith", "serve"], line)
                .unwrap_err()
                .to_string();
            assert!(e.contains(error), "{line}: {e}");
        }
    }

    #[test]
    fn the_limits_on_asking_the_callers_client_are_read_from_the_file() {
        let defaults = settings(&["toolsmith", "serve"], "")
            .unwrap()
            .service
            .client_requests;
        assert_eq!(
            defaults,
            toolsmith_service::governance::client_requests::ClientRequestLimits::default()
        );
        let file = "mcp_max_samples_per_call = 2\nmcp_max_samples_per_user_per_minute = 0\n\
                    mcp_max_elicitations_per_call = 7\nmcp_max_elicitations_per_user_per_minute = 8";
        let asks = settings(&["toolsmith", "serve"], file)
            .unwrap()
            .service
            .client_requests;
        assert_eq!(
            (
                asks.samples_per_call,
                asks.samples_per_user_minute,
                asks.elicitations_per_call,
                asks.elicitations_per_user_minute
            ),
            (2, 0, 7, 8)
        );
        let e = settings(&["toolsmith", "serve"], "mcp_max_samples_per_call = 100001")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mcp_max_samples_per_call: 100001 is out of range"),
            "{e}"
        );
    }

    #[test]
    fn flags_beat_the_file_which_beats_the_defaults() {
        let s = settings(&["toolsmith", "serve"], "").unwrap();
        assert_eq!((s.bind.as_str(), s.port), ("127.0.0.1", 8787));
        assert_eq!(s.server.body_limit_bytes, 1 << 20);
        assert_eq!(
            s.database,
            Database::Sqlite(PathBuf::from("./toolsmith-data/toolsmith.db"))
        );
        assert_eq!(s.database_startup_timeout, Duration::from_secs(30));
        assert!(!s.server.compat_dynamic_mcp);

        let file = "port = 9000\nbody_limit = \"2MB\"\ndata_dir = \"/srv/ts\"\ncompat = \"dynamic-mcp\"\njs_cpu_time = 2";
        let s = settings(&["toolsmith", "serve"], file).unwrap();
        assert_eq!(s.port, 9000);
        assert_eq!(s.server.body_limit_bytes, 2 << 20);
        assert_eq!(
            s.database,
            Database::Sqlite(PathBuf::from("/srv/ts/toolsmith.db"))
        );
        assert!(s.server.compat_dynamic_mcp);
        assert_eq!(
            s.server.mcp_listing,
            toolsmith_server::McpListing::Full,
            "compat mode lists every tool"
        );
        assert_eq!(s.service.js_limits.cpu_time, Duration::from_secs(2));
        let plain = settings(&["toolsmith", "serve"], "").unwrap();
        assert_eq!(
            plain.server.mcp_listing,
            toolsmith_server::McpListing::Compact,
            "the default listing"
        );
        let listing = settings(&["toolsmith", "serve"], "mcp_listing = \"discovery\"").unwrap();
        assert_eq!(
            listing.server.mcp_listing,
            toolsmith_server::McpListing::Discovery
        );
        let listing = settings(
            &["toolsmith", "serve", "--mcp-listing", "full"],
            "mcp_listing = \"discovery\"",
        )
        .unwrap();
        assert_eq!(
            listing.server.mcp_listing,
            toolsmith_server::McpListing::Full,
            "the flag beats the file"
        );

        let s = settings(
            &[
                "toolsmith",
                "serve",
                "--port",
                "9100",
                "--body-limit",
                "64KB",
                "--compat",
                "none",
                "--data-dir",
                "here",
            ],
            file,
        )
        .unwrap();
        assert_eq!(s.port, 9100);
        assert_eq!(s.server.body_limit_bytes, 64 << 10);
        assert_eq!(
            s.database,
            Database::Sqlite(PathBuf::from("here/toolsmith.db"))
        );
        assert!(!s.server.compat_dynamic_mcp);
    }

    /// dynamic-mcp's profile (issue 33): `mvp` by default; `enterprise` from the flag or the
    /// file switches the `codeExecution` group on, unless the operator's switches name it.
    #[test]
    fn compat_profile_from_flag_and_file_and_enterprise_switches_the_code_tools_on() {
        use toolsmith_server::mcp::CompatProfile;
        let code_on = |s: &Settings| {
            s.service
                .policy
                .as_ref()
                .is_some_and(|p| p.tool_groups.enable.iter().any(|g| g == "codeExecution"))
        };
        let s = settings(&["toolsmith", "serve"], "compat = \"dynamic-mcp\"").unwrap();
        assert_eq!(s.server.compat_profile, CompatProfile::Mvp);
        assert!(!code_on(&s));
        let s = settings(
            &["toolsmith", "serve", "--compat-profile", "enterprise"],
            "compat = \"dynamic-mcp\"",
        )
        .unwrap();
        assert_eq!(s.server.compat_profile, CompatProfile::Enterprise);
        assert!(code_on(&s));
        let file = "compat = \"dynamic-mcp\"\ncompat_profile = \"enterprise\"\n[policy.tool_groups]\ndisable = [\"codeExecution\"]";
        let s = settings(&["toolsmith", "serve"], file).unwrap();
        assert_eq!(s.server.compat_profile, CompatProfile::Enterprise);
        assert!(!code_on(&s), "the operator's switch stays");
    }

    #[test]
    fn rate_limits_from_flags_and_file() {
        assert_eq!(
            parse_rate("600"),
            Ok(Rate {
                per_minute: 600,
                burst: 600
            })
        );
        assert_eq!(
            parse_rate(" 60:5 "),
            Ok(Rate {
                per_minute: 60,
                burst: 5
            })
        );
        for bad in ["", "0", "10:0", "ten", "10:x", "-5", "1:2:3"] {
            assert!(parse_rate(bad).is_err(), "{bad} should be refused");
        }
        let s = settings(&["toolsmith", "serve"], "").unwrap();
        assert_eq!(
            s.service.limits,
            LimitsSettings::default(),
            "no limits unless asked"
        );
        let file = "rate_per_user = \"120:10\"\nmax_concurrent = 64\nmax_concurrent_per_user = 8";
        let s = settings(&["toolsmith", "serve", "--rate-per-user", "30"], file).unwrap();
        assert_eq!(
            s.service.limits.per_user,
            Some(Rate {
                per_minute: 30,
                burst: 30
            })
        );
        assert_eq!(s.service.limits.max_concurrent, 64);
        assert_eq!(s.service.limits.max_concurrent_per_user, 8);
        let err = settings(&["toolsmith", "serve"], "rate_per_tool = \"fast\"").unwrap_err();
        assert!(err.0.starts_with("rate_per_tool: "), "{err}");
    }

    #[test]
    fn values_are_validated() {
        let err = settings(&["toolsmith", "serve"], "body_limit = \"1XB\"").unwrap_err();
        assert!(err.0.starts_with("body_limit: "), "{err}");
        let err = settings(&["toolsmith", "serve", "--bind", "example.com"], "").unwrap_err();
        assert!(err.0.contains("not an IP address"), "{err}");
        let err = settings(&["toolsmith", "serve", "--admin-token", "short"], "").unwrap_err();
        assert!(err.0.contains("at least 16"), "{err}");
        let err = settings(&["toolsmith", "serve"], "database_url = \"mysql://x/y\"").unwrap_err();
        assert!(err.0.contains("unsupported database URL scheme"), "{err}");
        let s = settings(
            &["toolsmith", "serve"],
            "database_url = \"postgres://ts:pw@db:5432/ts\"\ndatabase_startup_timeout = \"2m\"",
        )
        .unwrap();
        assert_eq!(
            s.database,
            Database::Postgres {
                url: "postgres://ts:pw@db:5432/ts".to_owned(),
                key_dir: PathBuf::from("./toolsmith-data"),
            }
        );
        assert_eq!(s.database_startup_timeout, Duration::from_secs(120));
        let s = settings(&["toolsmith", "serve", "--bind", "[::1]"], "").unwrap();
        assert_eq!(s.bind, "::1");

        let fs_ops = |argv: &[&str], file: &str| {
            settings(argv, file)
                .map(|s| s.service.js_max_fs_operations)
                .ok()
        };
        assert_eq!(fs_ops(&["toolsmith", "serve"], ""), Some(100));
        assert_eq!(
            fs_ops(&["toolsmith", "serve"], "js_max_fs_operations = 20"),
            Some(20)
        );
        assert_eq!(
            fs_ops(
                &["toolsmith", "serve", "--js-max-fs-operations", "7"],
                "js_max_fs_operations = 20"
            ),
            Some(7)
        );
        let err = settings(&["toolsmith", "serve"], "js_max_fs_operations = 0").unwrap_err();
        assert!(
            err.0.contains("js_max_fs_operations: 0 is out of range"),
            "{err}"
        );
    }

    /// Issue 31: values past these ranges panicked a background task (pruning, approvals),
    /// after which pruning silently stopped. They are refused at start, naming the range.
    #[test]
    fn duration_settings_are_bounded() {
        let err = settings(
            &[
                "toolsmith",
                "serve",
                "--execution-retention-days",
                "4000000000",
            ],
            "",
        )
        .unwrap_err();
        assert!(err.0.starts_with("execution_retention_days: "), "{err}");
        assert!(err.0.contains("36500"), "{err}");
        let err =
            settings(&["toolsmith", "serve"], "approval_timeout = \"10000000h\"").unwrap_err();
        assert!(err.0.starts_with("approval_timeout: "), "{err}");
        let s = settings(
            &["toolsmith", "serve", "--execution-retention-days", "0"],
            "approval_timeout = \"168h\"",
        )
        .unwrap();
        assert_eq!(s.service.execution_retention_days, Some(0));
        assert_eq!(s.service.approval_ttl, Duration::from_secs(604_800));
    }

    /// Issue 31: installs reach only the package registries, an operator's list.
    #[test]
    fn package_registries_default_to_pypi_and_npm_and_come_from_the_file() {
        let s = settings(&["toolsmith", "serve"], "").unwrap();
        assert_eq!(
            s.service.package_registries,
            ["pypi.org", "files.pythonhosted.org", "registry.npmjs.org"]
        );
        let s = settings(
            &["toolsmith", "serve"],
            "package_registries = [\"pypi.org\", \"files.pythonhosted.org\"]\n",
        )
        .unwrap();
        assert_eq!(
            s.service.package_registries,
            ["pypi.org", "files.pythonhosted.org"]
        );
    }

    #[test]
    fn coding_agent_dirs_default_to_the_system_folders_and_come_from_the_file() {
        let s = settings(&["toolsmith", "serve"], "").unwrap();
        assert_eq!(
            s.service.coding_agents.dirs,
            [
                PathBuf::from("/usr/local/bin"),
                PathBuf::from("/usr/bin"),
                PathBuf::from("/bin")
            ]
        );
        let s = settings(
            &["toolsmith", "serve"],
            "coding_agent_dirs = [\"/opt/agents/bin\"]\n",
        )
        .unwrap();
        assert_eq!(
            s.service.coding_agents.dirs,
            [PathBuf::from("/opt/agents/bin")]
        );
        let e = settings(&["toolsmith", "serve"], "coding_agent_dirs = [\"bin\"]\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("coding_agent_dirs") && e.contains("absolute"),
            "{e}"
        );
    }

    /// The npm settings come from flags (and their `TOOLSMITH_NPM_*` variables) as from the
    /// file, a flag winning over the file key by key.
    #[test]
    fn npm_settings_come_from_flags_and_the_file() {
        let file = "npm_registry = \"https://file.example/\"\nnpm_cache_dir = \"/file/cache\"\n\
                    npm_block = [\"left-pad\"]\nnpm_allow = [\"csv-parse\"]\nnpm_max_files = 7\n";
        let npm = settings(&["toolsmith", "serve"], file).unwrap().service.npm;
        assert_eq!(npm.registry, "https://file.example");
        assert_eq!(npm.cache_dir, Some(PathBuf::from("/file/cache")));
        assert_eq!(
            (npm.block.clone(), npm.allow.clone()),
            (vec!["left-pad".to_owned()], vec!["csv-parse".to_owned()])
        );
        assert_eq!(npm.max_files, 7);
        let npm = settings(
            &[
                "toolsmith",
                "serve",
                "--npm-registry",
                "https://flag.example",
                "--npm-cache-dir",
                "/flag/cache",
                "--npm-ca-file",
                "/flag/ca.pem",
                "--npm-block",
                "a,@evil/*",
                "--npm-process-env",
                "TZ",
                "--npm-max-dependencies",
                "3",
                "--npm-max-packages",
                "40",
                "--npm-max-tarball-bytes",
                "1MB",
                "--npm-max-unpacked-bytes",
                "2MB",
                "--npm-max-files",
                "99",
            ],
            file,
        )
        .unwrap()
        .service
        .npm;
        assert_eq!(npm.registry, "https://flag.example");
        assert_eq!(npm.cache_dir, Some(PathBuf::from("/flag/cache")));
        assert_eq!(npm.ca_file, Some(PathBuf::from("/flag/ca.pem")));
        assert_eq!(npm.block, ["a", "@evil/*"]);
        assert_eq!(npm.allow, ["csv-parse"]);
        assert_eq!(npm.process_env, ["TZ"]);
        assert_eq!(
            (npm.max_dependencies, npm.max_packages, npm.max_files),
            (3, 40, 99)
        );
        assert_eq!(
            (npm.max_tarball_bytes, npm.max_unpacked_bytes),
            (1 << 20, 2 << 20)
        );
        let e = settings(&["toolsmith", "serve", "--npm-registry", "ftp://x"], "")
            .unwrap_err()
            .to_string();
        assert!(e.contains("npm_registry must be an http(s) URL"), "{e}");
    }

    #[test]
    fn listen_limits_come_from_flags_and_the_file() {
        let s = settings(
            &["toolsmith", "serve", "--mcp-max-listens", "7"],
            "mcp_max_listens_per_user = 3\n",
        )
        .unwrap();
        let limits = s.server.mcp_sessions;
        assert_eq!((limits.max_listens, limits.max_listens_per_user), (7, 3));
        let defaults = settings(&["toolsmith", "serve"], "")
            .unwrap()
            .server
            .mcp_sessions;
        assert_eq!(
            (defaults.max_listens, defaults.max_listens_per_user),
            (1000, 100)
        );
        let err = settings(
            &["toolsmith", "serve", "--mcp-max-listens-per-user", "0"],
            "",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("mcp_max_listens_per_user"), "{err}");
    }

    #[test]
    fn allowed_hosts_default_to_loopback_and_the_bind_address() {
        let s = settings(&["toolsmith", "serve", "--bind", "10.1.2.3"], "").unwrap();
        assert!(s.server.allowed_hosts.contains(&"10.1.2.3".to_owned()));
        assert!(s.server.allowed_hosts.contains(&"localhost".to_owned()));
        let s = settings(&["toolsmith", "serve", "--bind", "0.0.0.0"], "").unwrap();
        assert!(!s.server.allowed_hosts.contains(&"0.0.0.0".to_owned()));
        let s = settings(
            &[
                "toolsmith",
                "serve",
                "--allowed-host",
                "tools.example.com",
                "--allowed-host",
                "localhost",
            ],
            "allowed_hosts = [\"ignored\"]",
        )
        .unwrap();
        assert_eq!(s.server.allowed_hosts, ["tools.example.com", "localhost"]);
    }

    #[test]
    fn egress_owner_allowlists_come_from_the_file() {
        let file = "[egress]\nallowed_domains = [\"*.example.com\"]\n[egress.owners.alice]\nallowed_domains = [\"api.example.com\"]\n";
        let s = settings(&["toolsmith", "serve"], file).unwrap();
        let alice = &s.service.owner_allowed_domains["alice"];
        assert_eq!(alice.len(), 1);
        assert!(alice[0].matches("api.example.com") && !alice[0].matches("www.example.com"));
        assert!(!s.service.owner_allowed_domains.contains_key("bob"));
        let err = settings(
            &["toolsmith", "serve"],
            "[egress.owners.bob]\nallowed_domains = []\n",
        )
        .unwrap_err();
        assert!(
            err.0.contains("egress.owners.bob.allowed_domains is empty"),
            "{err}"
        );
        let err = settings(
            &["toolsmith", "serve"],
            "[egress.owners.bob]\nallowed_domains = [\"http://x\"]\n",
        )
        .unwrap_err();
        assert!(
            err.0.starts_with("egress.owners.bob.allowed_domains: "),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolsmith.toml");
        std::fs::write(&path, "port = 1\nbind_adress = \"0.0.0.0\"\n").unwrap();
        let err = FileSettings::load(&path).unwrap_err();
        assert!(err.0.contains("unknown field `bind_adress`"), "{err}");
        assert!(err.0.contains("line 2"), "{err}");
    }
}
