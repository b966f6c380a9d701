//! The web tools (003 §11 "Web and API", 001's `web` group): HTTP requests, JSON APIs, web
//! pages as readable text and downloads into the caller's workspace. Every request leaves
//! through a [`WebClient`] the server passes in [`BuiltinEnv`](crate::BuiltinEnv) — in
//! Toolsmith the egress guard ([`GuardClient`]), which refuses private, loopback and
//! link-local addresses unless allow-listed, re-checks every redirect and narrows to the
//! owner's allowlist. Without a client the tools answer with what is missing.
//!
//! Limits (003 "Web Request Security"): responses up to [`MAX_RESPONSE_BYTES`], at most
//! [`MAX_TIMEOUT`] per request, request bodies up to [`MAX_REQUEST_BODY`], at most
//! [`MAX_HEADERS`] request headers, only `http:` and `https:` URLs.
//!
//! Every tool holds the `network` permission, so a JS tool reaches them through `callTool`
//! only when it holds it too, and the `dangerous` approval setting covers them.

pub mod client;
pub mod download;
pub mod page;
pub mod request;
pub mod search;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{
    ErrorKind, Permission, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor, ToolResult,
};

pub use client::{GuardClient, WebClient, WebError, WebRequest, WebResponse};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Web and API";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    depends_on: &["filesystem"],
    aliases: &["web"],
    ..off(
        "webFetch",
        "Web and API",
        "HTTP requests, web pages as text, JSON APIs, web search and downloads into the workspace.",
        "external HTTP access",
        ResultSource::External,
        &[
            "http_request",
            "fetch_web_page",
            "json_api",
            "search_web",
            "web_search",
            "web_fetch",
            "download_file",
        ],
    )
}];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &["fetch_web_page", "search_web", "web_search", "web_fetch"],
    ),
    (Effect::Changes, &["download_file"]),
    (Effect::Runs, &["http_request", "json_api"]),
];
/// Largest response body a web tool accepts (003: 5 MB).
pub const MAX_RESPONSE_BYTES: usize = 5 * 1024 * 1024;
/// Longest a request may take (003: 30 s); `timeoutMs` may only shorten it.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest request body a web tool sends.
pub const MAX_REQUEST_BODY: usize = 1024 * 1024;
/// Most request headers a web tool sends.
pub const MAX_HEADERS: usize = 50;

/// Why a web tool failed.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("{0}")]
    Args(String),
    #[error(transparent)]
    Web(#[from] WebError),
    #[error(transparent)]
    Workspace(#[from] crate::workspace::WorkspaceError),
    #[error("{0}")]
    NotConfigured(String),
    #[error("{0}")]
    Provider(String),
    /// A rule refused what the tool needs (the policy's `mcp:sampling`, a limit).
    #[error("{0}")]
    Denied(String),
}

impl ToolError {
    pub(crate) fn kind(&self) -> ErrorKind {
        match self {
            ToolError::Args(_) => ErrorKind::InvalidArguments,
            ToolError::Web(e) => e.kind(),
            ToolError::Workspace(e) => e.kind(),
            ToolError::NotConfigured(_) | ToolError::Provider(_) => ErrorKind::ExecutionError,
            ToolError::Denied(_) => ErrorKind::Denied,
        }
    }
}

/// What a web tool's work gets: the client, the environment and the call.
pub struct Call<'a> {
    pub client: &'a dyn WebClient,
    pub env: &'a BuiltinEnv,
    pub ctx: &'a ToolContext,
    pub args: Value,
}

/// The work of one web tool.
pub type WebFn = for<'a> fn(
    Call<'a>,
) -> std::pin::Pin<
    Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>,
>;

struct WebExecutor {
    env: BuiltinEnv,
    run: WebFn,
}

#[async_trait]
impl ToolExecutor for WebExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let client = match client_of(&self.env) {
            Ok(client) => client,
            Err(missing) => return missing,
        };
        let call = Call {
            client: client.as_ref(),
            env: &self.env,
            ctx,
            args,
        };
        match (self.run)(call).await {
            Ok(content) => ToolResult::ok(content),
            Err(e) => ToolResult::error(e.kind(), e.to_string()),
        }
    }
}

/// The way out to the network of `env`, or the answer of a tool that has none.
pub(crate) fn client_of(env: &BuiltinEnv) -> Result<Arc<dyn WebClient>, ToolResult> {
    env.web.clone().ok_or_else(|| {
        ToolResult::error(
            ErrorKind::ExecutionError,
            "the web tools have no way out to the network on this server: the server was \
             started without an HTTP client for built-ins (an embedder must set \
             BuiltinEnv::web; `toolsmith serve` always does)",
        )
    })
}

/// A web tool: category `Web and API`, its group as provider, the `network` permission.
pub fn web_tool(env: &BuiltinEnv, definition: ToolDefinition, run: WebFn) -> RegisteredTool {
    web_tool_in(env, CATEGORY, definition, run)
}

/// A tool of another family that reaches the network the web tools' way (`parse_receipt`):
/// its `category`, its group as provider, the `network` permission.
pub fn web_tool_in(
    env: &BuiltinEnv,
    category: &str,
    definition: ToolDefinition,
    run: WebFn,
) -> RegisteredTool {
    crate::family_tool(
        definition,
        category,
        Permission::Network,
        Arc::new(WebExecutor {
            env: env.clone(),
            run,
        }),
    )
}

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let mut tools = vec![
        web_tool(env, request::http_definition(), |c| {
            Box::pin(request::http_request(c))
        }),
        web_tool(env, request::json_definition(), |c| {
            Box::pin(request::json_api(c))
        }),
        web_tool(env, download::definition(), |c| Box::pin(download::run(c))),
    ];
    tools.extend(page::definitions().map(|d| web_tool(env, d, |c| Box::pin(page::run(c)))));
    tools.extend(search::definitions().map(|d| web_tool(env, d, |c| Box::pin(search::run(c)))));
    tools
}

/// The string argument `key`.
pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::Args(format!("'{key}' must be a string")))
}

/// The `url` argument: an absolute `http:` or `https:` URL.
pub(crate) fn url_arg(args: &Value) -> Result<url::Url, ToolError> {
    let raw = str_arg(args, "url")?;
    let url = url::Url::parse(raw).map_err(|e| {
        ToolError::Args(format!(
            "'url' is not an absolute URL ({e}): pass one like 'https://example.com/page'"
        ))
    })?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(ToolError::Args(format!(
            "'url' uses the scheme '{other}:'; only http: and https: URLs can be fetched \
             (for a workspace file use read_file)"
        ))),
    }
}

/// The `timeoutMs` argument, capped at [`MAX_TIMEOUT`].
pub(crate) fn timeout_arg(args: &Value) -> Duration {
    args.get("timeoutMs")
        .and_then(Value::as_u64)
        .map_or(MAX_TIMEOUT, Duration::from_millis)
        .min(MAX_TIMEOUT)
}
