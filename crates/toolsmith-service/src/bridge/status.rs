//! What the bridge reports per upstream server: its state, last error, tools, and counters.

use std::sync::atomic::AtomicU64;

use chrono::{DateTime, Utc};
use serde::Serialize;

/// Where a server's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    Connecting,
    Connected,
    /// Not connected; retried after a backoff, or on demand once the attempts are spent.
    Down,
    /// `enabled = false` in its configuration.
    Disabled,
    /// Not connected by this process: a CLI command that needs no upstream opened the service
    /// (`toolsmith serve` and `toolsmith mcp` connect every enabled server).
    NotStarted,
}

/// Where a server's configuration comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerSource {
    /// `[[mcp_servers]]` of the configuration file (changed only there).
    Config,
    /// Registered through REST or the CLI, kept in the store.
    Api,
}

/// What a server is configured as, without its `env` and header values (names only: a value
/// of the configuration file may be a secret).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistrationView {
    pub transport: super::Transport,
    pub command: String,
    pub args: Vec<String>,
    pub env_names: Vec<String>,
    /// streamable_http: the endpoint; sse: the SSE stream's URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// streamable_http, sse: the names of its headers (values may be secrets).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub header_names: Vec<String>,
    /// streamable_http, sse: whether a bearer token (a Config Center reference) is sent.
    pub bearer_token: bool,
    pub prefix: String,
    pub enabled: bool,
    pub tool_allow: Vec<String>,
    pub tool_deny: Vec<String>,
    pub call_timeout_seconds: u64,
    pub deferred: Option<bool>,
}

impl RegistrationView {
    pub fn of(config: &super::McpServerRegistration) -> RegistrationView {
        RegistrationView {
            transport: config.transport,
            command: config.command.clone(),
            args: config.args.clone(),
            env_names: config.env.keys().cloned().collect(),
            url: config.url.clone(),
            header_names: config.headers.keys().cloned().collect(),
            bearer_token: config.bearer_token.is_some(),
            prefix: config.prefix(),
            enabled: config.enabled,
            tool_allow: config.tool_allow.clone(),
            tool_deny: config.tool_deny.clone(),
            call_timeout_seconds: config.call_timeout().as_secs(),
            deferred: config.deferred,
        }
    }
}

/// One server's status, as REST and the CLI show it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub name: String,
    pub source: ServerSource,
    /// Who registered it (`None` for the configuration file's).
    pub owner: Option<String>,
    /// Its stored revision (`None` for the configuration file's).
    pub revision: Option<i64>,
    pub config: RegistrationView,
    pub state: ServerState,
    pub last_error: Option<String>,
    pub tool_count: usize,
    /// Whether its tools are left out of MCP `tools/list` now.
    pub deferred: bool,
    /// Catalogue names of the tools bridged now.
    pub tools: Vec<String>,
    /// Upstream tools not bridged, each with the reason (a name taken, a bad schema).
    pub skipped: Vec<String>,
    pub last_check: Option<DateTime<Utc>>,
    /// Connections made so far (1 after the first; more after reconnects).
    pub connections: u64,
    pub calls: u64,
    pub errors: u64,
}

/// Calls and failed calls of one server's tools.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) calls: AtomicU64,
    pub(crate) errors: AtomicU64,
}
