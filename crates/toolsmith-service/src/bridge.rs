//! The MCP bridge: external MCP servers' tools in the catalogue, governed like Toolsmith's own.
//!
//! Each configured server (`[[mcp_servers]]`, [`McpServerRegistration`]) gets one task
//! (`upstream.rs`) that starts the program (stdio) or reaches its URL (streamable HTTP, or the
//! legacy HTTP+SSE transport, on a client the egress guard built), speaks MCP to it with rmcp's
//! client, lists its tools
//! and registers them as `ToolOrigin::Mcp` tools named `<prefix><tool>`. From then on a bridged
//! call is a call like any other: the pipeline checks the schema, the policy (`group:mcp`,
//! `group:mcp:<server>`), approvals, rate limits, scrubs the upstream's answer and records it.
//! A name already taken (a built-in, a custom tool, another server's tool) is refused and shown
//! in the server's status; nothing is shadowed.
//!
//! The task keeps the set true over time: the upstream's `list_changed` re-lists; a health check
//! every 30 s re-lists too (a failed one ends the connection); when the connection ends the
//! server's tools are removed and it reconnects with exponential backoff (2 s doubling to 60 s,
//! 10 attempts, then it waits for [`Bridge::retry`]), re-listing on every reconnect. Each change
//! moves the registry's version, so Toolsmith's own MCP clients get `list_changed`.
//!
//! Servers come from the configuration file (`[[mcp_servers]]`) or are registered at run time
//! through REST or the CLI (kept in the store, `manage.rs`); the latter may start only programs
//! the operator allowed (`launch.rs`), and their `env` holds Config Center references, read at
//! each launch, instead of secret values.
//!
//! - `registration.rs`: one server's registration (file or REST) and its checks.
//! - `launch.rs`: the allowlist of programs servers registered at run time may start.
//! - `upstream.rs`: the connection task.
//! - `http.rs`: the client rmcp's streamable HTTP transport drives (a lost session answered
//!   with `400` recognised like a `404`).
//! - `sse.rs`: the legacy HTTP+SSE client transport (rmcp has none).
//! - `tool.rs`: an upstream tool as a registered tool, and the call forwarding.
//! - `surface.rs`: the servers' prompts, resources, templates, completions and `instructions`,
//!   offered beside their tools, and the forwarding of `prompts/get`, `resources/read` and
//!   `completion/complete`; the changes of what they offer, counted per server.
//! - `subscriptions.rs`: `resources/subscribe` of a bridged resource, forwarded once per URI
//!   and server however many callers hold it, and again after a reconnect.
//! - `status.rs`: what REST and the CLI show.
//! - `manage.rs`: registering, changing and removing servers (the service's operations).
//! - `grants.rs`: who may use which server's tools (grants, switched on by `mcp_grants`), and
//!   the access-request workflow.

mod grants;
mod http;
mod launch;
pub(crate) mod manage;
mod registration;
pub(crate) mod relay;
mod sse;
mod status;
mod subscriptions;
mod surface;
mod tool;
mod upstream;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::task::JoinHandle;
use toolsmith_core::ToolRegistry;

use crate::config_center::ConfigCache;

pub use grants::{AccessRequestInput, GrantInput, Grants};
pub use launch::LaunchPolicy;
pub use manage::ServerInput;
pub use registration::{
    DEFAULT_CALL_TIMEOUT, MAX_CALL_TIMEOUT, McpServerRegistration, Transport, env_references,
    resolve_env,
};
pub use status::{RegistrationView, ServerSource, ServerState, ServerStatus};
pub use subscriptions::BridgedSubscription;
pub use surface::{
    BridgedNews, BridgedWatch, MAX_INSTRUCTIONS_CHARS, Missed, ServerCounts, SurfaceChange,
    SurfaceCounts,
};

/// The bridge's settings beyond the servers themselves.
#[derive(Debug, Clone)]
pub struct BridgeSettings {
    /// `mcp_allowed_commands`: the programs (files) and directories servers registered through
    /// REST or the CLI may start. Empty: registering stdio servers that way is refused.
    pub allowed_commands: Vec<PathBuf>,
    /// `mcp_allowed_env`: the `env` names (exact, or a prefix ending in `*`) servers registered
    /// through REST or the CLI may set besides the credential-like ones (`…_TOKEN`,
    /// `…_API_KEY`, `…_SECRET`, `…_PASSWORD`, which must be Config Center references).
    pub allowed_env: Vec<String>,
    /// `mcp_deferred_threshold`: a server offering more tools than this has them left out of
    /// MCP `tools/list` (unless its `deferred` says otherwise).
    pub deferred_threshold: usize,
    /// `mcp_grants`: bridged tools are visible and callable for non-admins only through a
    /// grant of their server.
    pub grants: bool,
    /// Whether every enabled server is connected as soon as the service opens (`serve`, `mcp`).
    /// A CLI command that needs no upstream opens the service without (`false`): nothing is
    /// started until it asks ([`crate::ToolService::connect_mcp_servers`]).
    pub autostart: bool,
}

impl Default for BridgeSettings {
    fn default() -> Self {
        BridgeSettings {
            allowed_commands: Vec::new(),
            allowed_env: Vec::new(),
            deferred_threshold: DEFAULT_DEFERRED_THRESHOLD,
            grants: false,
            autostart: true,
        }
    }
}

/// Tools per server above which they are deferred, by default.
pub const DEFAULT_DEFERRED_THRESHOLD: usize = 50;

/// Where a server's configuration comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The configuration file.
    Config,
    /// The store, at this revision, registered by `owner`.
    Registered { owner: String, revision: i64 },
}

impl Origin {
    /// Whose Config Center the server's `env` references read.
    pub(crate) fn owner(&self) -> &str {
        match self {
            Origin::Config => "default",
            Origin::Registered { owner, .. } => owner,
        }
    }
}

/// What every connection task needs besides its server.
pub(crate) struct Launcher {
    pub(crate) launch: LaunchPolicy,
    /// The egress guard (the operator's policy) that HTTP upstreams are reached through.
    pub(crate) egress: toolsmith_egress::EgressGuard,
    pub(crate) config: Arc<ConfigCache>,
    pub(crate) deferred_threshold: usize,
    /// [`BridgeSettings::autostart`].
    pub(crate) autostart: bool,
    /// The rule for relaying an upstream's requests to a caller's client ([`relay`]).
    pub(crate) asks: Option<Arc<relay::Asks>>,
}

/// One server and its connection task.
struct Running {
    upstream: Arc<upstream::Upstream>,
    task: Option<JoinHandle<()>>,
}

/// Every upstream server and its connection task.
pub struct Bridge {
    registry: Arc<ToolRegistry>,
    launcher: Arc<Launcher>,
    servers: Mutex<BTreeMap<String, Running>>,
    /// Changes of what the servers offer besides their tools (`surface.rs`).
    changes: surface::SurfaceChanges,
    /// The subscriptions held at each server, by name (`subscriptions.rs`): kept when a
    /// server's registration changes, so its new connection subscribes to them again.
    subscribed: Mutex<BTreeMap<String, Arc<subscriptions::Subscribed>>>,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("servers", &self.lock().keys().cloned().collect::<Vec<_>>())
            .finish()
    }
}

impl Bridge {
    /// Checks every entry (names unique, each valid); nothing is started.
    pub fn validate(configs: &[McpServerRegistration]) -> Result<(), String> {
        let mut seen = std::collections::BTreeSet::new();
        for config in configs {
            config.validate()?;
            if !seen.insert(config.name.as_str()) {
                return Err(format!(
                    "mcp_servers: the name '{}' is used twice; each server needs its own",
                    config.name
                ));
            }
        }
        Ok(())
    }

    /// Starts a connection task per enabled server (on the current tokio runtime); returns at
    /// once, so a slow or broken upstream never delays start-up.
    pub(crate) fn start(
        servers: Vec<(McpServerRegistration, Origin)>,
        registry: Arc<ToolRegistry>,
        launcher: Launcher,
    ) -> Bridge {
        let bridge = Bridge {
            registry,
            launcher: Arc::new(launcher),
            servers: Mutex::new(BTreeMap::new()),
            changes: surface::SurfaceChanges::default(),
            subscribed: Mutex::default(),
        };
        for (config, origin) in servers {
            bridge.insert(config, origin);
        }
        bridge
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Running>> {
        self.servers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a server (no server of that name may be running: [`Bridge::remove`] it first) and
    /// starts its task when it is enabled.
    fn insert(&self, config: McpServerRegistration, origin: Origin) {
        let subscribed = self.subscribed(&config.name);
        let upstream = Arc::new(upstream::Upstream::new(
            config,
            origin,
            self.changes.clone(),
            subscribed,
        ));
        let task = if !upstream.config.enabled {
            None
        } else if self.launcher.autostart {
            Some(self.spawn(&upstream))
        } else {
            upstream.set_state(ServerState::NotStarted);
            None
        };
        let name = upstream.config.name.clone();
        self.lock().insert(name, Running { upstream, task });
    }

    fn spawn(&self, upstream: &Arc<upstream::Upstream>) -> JoinHandle<()> {
        tokio::spawn(upstream::run(
            upstream.clone(),
            self.registry.clone(),
            self.launcher.clone(),
        ))
    }

    /// Starts the connection of each enabled server not started yet (all, or those `wanted`
    /// names); the names started.
    pub(crate) fn connect(&self, wanted: Option<&[String]>) -> Vec<String> {
        let mut started = Vec::new();
        for (name, running) in self.lock().iter_mut() {
            let asked = wanted.is_none_or(|w| w.iter().any(|n| n == name));
            if asked && running.task.is_none() && running.upstream.config.enabled {
                running.upstream.set_state(ServerState::Connecting);
                running.task = Some(self.spawn(&running.upstream));
                started.push(name.clone());
            }
        }
        started
    }

    /// The longest call timeout of the servers that would bridge a tool named `tool`.
    pub(crate) fn call_timeout_of_tool(&self, tool: &str) -> Option<std::time::Duration> {
        self.lock()
            .values()
            .filter(|r| bridges_tool(&r.upstream.config, tool))
            .map(|r| r.upstream.config.call_timeout())
            .max()
    }

    /// The servers whose prefix and allow and deny lists would bridge a tool named `tool`.
    pub(crate) fn servers_of_tool(&self, tool: &str) -> Vec<String> {
        self.lock()
            .values()
            .filter(|r| bridges_tool(&r.upstream.config, tool))
            .map(|r| r.upstream.config.name.clone())
            .collect()
    }

    /// Stops a server's task, ends its program and takes its tools out of the catalogue;
    /// whether there was one.
    async fn remove(&self, name: &str) -> bool {
        let Some(running) = self.lock().remove(name) else {
            return false;
        };
        if let Some(task) = running.task {
            task.abort();
            // Wait until it has stopped, so it registers nothing after the removal below.
            let _ = task.await;
        }
        self.registry.unregister_mcp_server(name);
        running.upstream.surface.clear(name, &self.changes);
        true
    }

    /// Every server's name, prefix and what it offers besides its tools, by name.
    pub(crate) fn surfaces(&self) -> Vec<(String, String, Arc<surface::Offered>)> {
        self.lock()
            .iter()
            .map(|(name, r)| {
                (
                    name.clone(),
                    r.upstream.config.prefix(),
                    r.upstream.surface.get(),
                )
            })
            .collect()
    }

    /// Where changes of what the servers offer are announced.
    pub(crate) fn changes(&self) -> &surface::SurfaceChanges {
        &self.changes
    }

    /// The subscriptions held at the server `name` (made when first asked for).
    pub(crate) fn subscribed(&self, name: &str) -> Arc<subscriptions::Subscribed> {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(name.to_owned())
            .or_insert_with(|| Arc::new(subscriptions::Subscribed::new(name)))
            .clone()
    }

    /// Replaces a server's configuration (its task is restarted).
    async fn replace(&self, config: McpServerRegistration, origin: Origin) {
        self.remove(&config.name).await;
        self.insert(config, origin);
    }

    /// Where the server `name` comes from, if there is one.
    pub(crate) fn origin(&self, name: &str) -> Option<Origin> {
        self.lock().get(name).map(|r| r.upstream.origin.clone())
    }

    /// The configured servers' names (the policy's `mcp:<server>` groups).
    pub fn server_names(configs: &[McpServerRegistration]) -> std::collections::BTreeSet<String> {
        configs.iter().map(|c| c.name.clone()).collect()
    }

    /// Every server's status, by name.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.lock().values().map(|r| r.upstream.status()).collect()
    }

    /// One server's status.
    pub fn status_of(&self, name: &str) -> Option<ServerStatus> {
        self.lock().get(name).map(|r| r.upstream.status())
    }

    /// Makes a server that is down try again now. `false` if no server has that name.
    pub fn retry(&self, name: &str) -> bool {
        self.lock().get(name).is_some_and(|r| {
            r.upstream.retry_now.notify_one();
            true
        })
    }
}

/// Whether `config`'s prefix and allow and deny lists would bridge a tool named `tool`.
fn bridges_tool(config: &McpServerRegistration, tool: &str) -> bool {
    tool.strip_prefix(config.prefix().as_str())
        .is_some_and(|remote| !remote.is_empty() && config.bridges(remote))
}

impl Drop for Bridge {
    fn drop(&mut self) {
        for running in self.lock().values_mut() {
            if let Some(task) = running.task.take() {
                task.abort();
            }
        }
    }
}
