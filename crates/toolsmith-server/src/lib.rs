//! The faces of Toolsmith: everything that speaks HTTP or MCP.
//!
//! - [`app`] — [`app::router`]: one axum `Router` with REST under `/api/v1`, MCP streamable HTTP
//!   at `/mcp`, `/livez` and `/readyz`, the body limit and the hardened headers; and
//!   [`app::serve`], which binds it and shuts it down gracefully.
//! - [`auth`] — who is calling: the [`auth::Identity`] extractor and scopes.
//! - [`definition`] — the one wire shape of a tool definition that REST, MCP and the CLI read.
//! - [`rest`] — the REST routes, the JSON envelope, API errors, and the OpenAPI document.
//! - [`ui`] — the web UI: static files embedded in the binary, served at `/` and `/ui/…`.
//! - [`mcp`] — the MCP server (tools, control plane, discovery meta-tools, `list_changed`), over
//!   streamable HTTP and stdio.
//!
//! Nothing below this crate knows HTTP or MCP exists; this crate translates requests into
//! `ToolService` calls and `ServiceError`s into statuses and protocol errors, nothing more.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

pub mod app;
pub mod auth;
pub mod connections;
pub mod definition;
pub mod discovery;
pub(crate) mod edge;
pub mod mcp;
pub mod rest;
pub mod ui;

use std::sync::Arc;

use toolsmith_service::ToolService;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub service: Arc<ToolService>,
    pub config: Arc<ServerSettings>,
    /// What the auth middleware remembers of the API tokens.
    pub tokens: Arc<auth::cache::TokenCache>,
    /// Open HTTP connections and those closed or refused by the limits (for `/metrics`).
    pub connections: Arc<connections::ConnectionStats>,
    /// MCP sessions open and those closed or refused by the limits (for `/metrics`).
    pub mcp_sessions: Arc<mcp::SessionStats>,
    /// Validates OAuth bearer tokens, when `config.oauth` is set.
    pub oauth: Option<Arc<auth::oauth::OAuthVerifier>>,
}

impl AppState {
    pub fn new(service: Arc<ToolService>, config: Arc<ServerSettings>) -> AppState {
        AppState {
            service: service.clone(),
            config: config.clone(),
            tokens: Arc::default(),
            connections: Arc::default(),
            mcp_sessions: Arc::default(),
            oauth: config.oauth.clone().map(|settings| {
                Arc::new(auth::oauth::OAuthVerifier::new(
                    settings,
                    service.egress_guard().clone(),
                ))
            }),
        }
    }
}

/// Settings of the HTTP server. `Debug` shows whether an admin token is set, never the token.
#[derive(Clone)]
pub struct ServerSettings {
    /// Largest request body, in bytes (default 1 MB).
    pub body_limit_bytes: usize,
    /// Longest a request may take before 408/503 (default 60 s; tool calls have their own limits).
    pub request_timeout: std::time::Duration,
    /// Host names every route but the health probes answers to (DNS-rebinding protection,
    /// `crate::edge`), e.g. `localhost`, `127.0.0.1`; `name:port` pins the port.
    pub allowed_hosts: Vec<String>,
    /// `--compat dynamic-mcp`: also expose the `dynamic.tool.*` control plane.
    pub compat_dynamic_mcp: bool,
    /// dynamic-mcp's feature profile in compat mode (`--compat-profile`, `MCP_PROFILE`):
    /// `mvp` (the default) or `enterprise` (docs/mcp.md, "Profiles").
    pub compat_profile: crate::mcp::CompatProfile,
    /// dynamic-mcp's `upstream.mcp.attach`/`detach` (`MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH`),
    /// served in the enterprise profile: the most upstreams attached at once, `None` when off.
    pub compat_upstream_attach: Option<usize>,
    /// dynamic-mcp's `MCP_SANDBOX_ALLOWED_IMAGES` in compat mode: the images
    /// `sandbox.initialize` accepts (the first is its default; empty: any valid name). A
    /// session is a folder, so an image is only checked and shown (default `node:lts-slim`).
    pub compat_sandbox_images: Vec<String>,
    /// What MCP `tools/list` carries (`--mcp-listing`; docs/mcp.md): every tool, the
    /// discovery tools and the caller's most used, or the discovery tools alone. The binary's
    /// default is [`McpListing::Compact`] (outside compat mode); this struct's is `Full`.
    pub mcp_listing: McpListing,
    /// The admin token (spec 002): when set, control-plane writes need it (or an `admin` token).
    pub admin_token: Option<String>,
    /// Bearer tokens from these OAuth 2.1 authorization servers are accepted beside the API
    /// tokens (`[oauth]`; docs/auth.md).
    pub oauth: Option<auth::oauth::OAuthSettings>,
    /// Start-up was refused without an admin token (`--require-admin-token`); reported by
    /// the compat mode's `system.runtime_config`.
    pub require_admin_token: bool,
    /// Refuse every write; reads and executions keep working.
    pub read_only: bool,
    /// Most HTTP connections open at once; past it the longest-idle one is closed to make
    /// room, or the new one gets a 503 when all are busy (default 10,000; the binary lowers it
    /// to fit the file-descriptor limit).
    pub max_connections: usize,
    /// Longest a client may take to send a request's headers (default 30 s).
    pub header_read_timeout: std::time::Duration,
    /// A connection with no request in flight for this long is closed (default 120 s).
    pub idle_timeout: std::time::Duration,
    /// MCP sessions (2025-11-25 `Mcp-Session-Id`): most open at once, per user, and how long
    /// an unused one lives.
    pub mcp_sessions: crate::mcp::SessionLimits,
}

/// What MCP `tools/list` carries (`mcp_listing`; docs/mcp.md "What `tools/list` shows").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum McpListing {
    /// Every tool the caller may call, with its schema.
    #[default]
    Full,
    /// The control plane and the discovery meta-tools, plus the caller's own most used
    /// custom tools within a fixed budget (`mcp::catalog::COMPACT_OWN_TOOLS`): a first turn
    /// that costs the same for any catalogue, and the tools the caller works with one step away.
    Compact,
    /// Only the control plane and the discovery meta-tools.
    Discovery,
}

impl std::fmt::Debug for ServerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSettings")
            .field("body_limit_bytes", &self.body_limit_bytes)
            .field("request_timeout", &self.request_timeout)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("compat_dynamic_mcp", &self.compat_dynamic_mcp)
            .field("compat_profile", &self.compat_profile)
            .field("compat_upstream_attach", &self.compat_upstream_attach)
            .field("compat_sandbox_images", &self.compat_sandbox_images)
            .field("mcp_listing", &self.mcp_listing)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "<redacted>"),
            )
            .field("oauth", &self.oauth)
            .field("require_admin_token", &self.require_admin_token)
            .field("read_only", &self.read_only)
            .field("max_connections", &self.max_connections)
            .field("header_read_timeout", &self.header_read_timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("mcp_sessions", &self.mcp_sessions)
            .finish()
    }
}

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            body_limit_bytes: 1024 * 1024,
            request_timeout: std::time::Duration::from_secs(60),
            allowed_hosts: vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
                "::1".to_owned(),
            ],
            compat_dynamic_mcp: false,
            compat_profile: crate::mcp::CompatProfile::Mvp,
            compat_upstream_attach: None,
            compat_sandbox_images: vec!["node:lts-slim".to_owned()],
            mcp_listing: McpListing::Full,
            admin_token: None,
            oauth: None,
            require_admin_token: false,
            read_only: false,
            max_connections: 10_000,
            header_read_timeout: std::time::Duration::from_secs(30),
            idle_timeout: std::time::Duration::from_secs(120),
            mcp_sessions: crate::mcp::SessionLimits::default(),
        }
    }
}
