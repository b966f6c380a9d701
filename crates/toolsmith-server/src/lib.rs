//! The faces of Toolsmith: everything that speaks HTTP or MCP.
//!
//! - [`app`] — [`app::router`]: one axum `Router` with REST under `/api/v1`, MCP streamable HTTP
//!   at `/mcp`, `/livez` and `/readyz`, the body limit and the hardened headers; and
//!   [`app::serve`], which binds it and shuts it down gracefully.
//! - [`auth`] — who is calling: the [`auth::Identity`] extractor and scopes.
//! - [`rest`] — the REST routes, the JSON envelope, API errors, and the OpenAPI document.
//! - [`ui`] — the web UI: static files embedded in the binary, served at `/` and `/ui/…`.
//! - [`mcp`] — the MCP server (tools, control plane, discovery meta-tools, `list_changed`), over
//!   streamable HTTP and stdio.
//!
//! Nothing below this crate knows HTTP or MCP exists; this crate translates requests into
//! `ToolService` calls and `ServiceError`s into statuses and protocol errors, nothing more.

pub mod app;
pub mod auth;
pub mod discovery;
pub mod mcp;
pub mod rest;
pub mod ui;

use std::sync::Arc;

use toolsmith_service::ToolService;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub service: Arc<ToolService>,
    pub config: Arc<ServerConfig>,
    /// What the auth middleware remembers of the API tokens.
    pub tokens: Arc<auth::cache::TokenCache>,
}

impl AppState {
    pub fn new(service: Arc<ToolService>, config: Arc<ServerConfig>) -> AppState {
        AppState {
            service,
            config,
            tokens: Arc::default(),
        }
    }
}

/// Settings of the HTTP server.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Largest request body, in bytes (default 1 MB).
    pub body_limit_bytes: usize,
    /// Longest a request may take before 408/503 (default 60 s; tool calls have their own limits).
    pub request_timeout: std::time::Duration,
    /// Host names accepted on `/mcp` (DNS-rebinding protection), e.g. `localhost`, `127.0.0.1`.
    pub allowed_hosts: Vec<String>,
    /// `--compat dynamic-mcp`: also expose the `dynamic.tool.*` control plane.
    pub compat_dynamic_mcp: bool,
    /// The admin token (spec 002): when set, control-plane writes need it (or an `admin` token).
    pub admin_token: Option<String>,
    /// Refuse every write; reads and executions keep working.
    pub read_only: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            body_limit_bytes: 1024 * 1024,
            request_timeout: std::time::Duration::from_secs(60),
            allowed_hosts: vec![
                "localhost".to_owned(),
                "127.0.0.1".to_owned(),
                "::1".to_owned(),
            ],
            compat_dynamic_mcp: false,
            admin_token: None,
            read_only: false,
        }
    }
}
