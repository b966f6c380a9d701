//! The MCP bridge's upstream servers over REST (`admin`): `GET /api/v1/mcp-servers` (every
//! server's status), `POST` (register a stdio server — only a program the operator allowed in
//! `mcp_allowed_commands` — or a streamable HTTP one — a URL the egress guard allows),
//! `GET|PUT|DELETE /api/v1/mcp-servers/{name}` and
//! `POST /api/v1/mcp-servers/{name}/retry`. The configuration file's servers are listed but
//! changed only there. Env and header values are shown by name only.

use std::collections::BTreeMap;

use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_service::bridge::{McpServerRegistration, Transport};
use utoipa::ToSchema;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// An MCP server to register or its new configuration: a stdio server (`command`, `args`,
/// `env`) or an HTTP one (`transport: "streamable_http"` or the legacy `"sse"`, `url`,
/// `headers`, `bearerToken`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerBody {
    /// 1–32 lower-case letters, digits, `_` or `-` (required to register; on `PUT` the path's).
    #[serde(default)]
    pub name: Option<String>,
    /// `stdio` (default), `streamable_http`, or `sse` (the legacy HTTP+SSE transport of MCP
    /// 2024-11-05).
    #[serde(default)]
    #[schema(value_type = Option<String>, example = "streamable_http")]
    pub transport: Option<String>,
    /// stdio: the program, an absolute path or a name found in `PATH`, among
    /// `mcp_allowed_commands`.
    #[serde(default)]
    pub command: String,
    /// Its arguments, each one as it is passed (no shell reads them).
    #[serde(default)]
    pub args: Vec<String>,
    /// Its environment: credential-like names (`…_TOKEN`, `…_API_KEY`, `…_SECRET`,
    /// `…_PASSWORD`), whose values must be `{{config.<service>.<field>}}` references to your
    /// Config Center (read at each launch), and the names the operator lists in
    /// `mcp_allowed_env`; any other name is refused (403).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// streamable_http: the MCP endpoint; sse: the URL of the SSE stream (its `endpoint` event
    /// must name a URL on the same origin). A private or loopback host must be in
    /// `allowed_private_hosts`.
    #[serde(default)]
    pub url: Option<String>,
    /// streamable_http, sse: headers sent with every request; values may hold Config Center
    /// references.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// streamable_http, sse: the bearer token as a Config Center reference only
    /// (`{{config.<service>.<field>}}`); a token in clear is refused.
    #[serde(default)]
    pub bearer_token: Option<String>,
    /// Prefix of its tools' names (default `mcp_<name>_`).
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Only these upstream tools are bridged (empty: all).
    #[serde(default)]
    pub tool_allow: Vec<String>,
    /// These upstream tools are never bridged (wins over `toolAllow`).
    #[serde(default)]
    pub tool_deny: Vec<String>,
    /// Seconds one call may take (default 60, at most 300).
    #[serde(default, deserialize_with = "super::types::optional_unsigned")]
    #[schema(minimum = 1, maximum = 300)]
    pub call_timeout_seconds: Option<u64>,
    /// Leave its tools out of MCP `tools/list` (found with `search_tools`); unset: when it
    /// offers more than `mcp_deferred_threshold` tools.
    #[serde(default)]
    pub deferred: Option<bool>,
    /// `PUT` only: the revision the change is based on.
    #[serde(default, deserialize_with = "super::types::optional_integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

fn yes() -> bool {
    true
}

impl McpServerBody {
    fn into_config(self, name: String) -> Result<McpServerRegistration, ApiError> {
        let transport = match self.transport.as_deref() {
            None | Some("stdio") => Transport::Stdio,
            Some("streamable_http") => Transport::StreamableHttp,
            Some("sse") => Transport::Sse,
            Some(other) => {
                return Err(invalid(&format!(
                    "`transport` '{other}' is not one of stdio, streamable_http, sse"
                )));
            }
        };
        Ok(McpServerRegistration {
            name,
            transport,
            command: self.command,
            args: self.args,
            env: self.env,
            url: self.url,
            headers: self.headers,
            bearer_token: self.bearer_token,
            prefix: self.prefix,
            enabled: self.enabled,
            tool_allow: self.tool_allow,
            tool_deny: self.tool_deny,
            call_timeout_seconds: self.call_timeout_seconds,
            deferred: self.deferred,
        })
    }
}

/// A field that breaks a rule (422, as the routes document it).
pub(super) fn invalid(message: &str) -> ApiError {
    ApiError::new(
        axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        "validation_error",
        message,
    )
}

/// A serializable status or record as the answer's `data`.
pub(super) fn view<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// List MCP servers
#[utoipa::path(
    get, path = "/api/v1/mcp-servers", tag = "mcp-servers", operation_id = "listMcpServers",
    responses(
        (status = 200, description = "`{servers, count}`: each server's configuration (env names only) and status: state, lastError, toolCount, lastCheck, calls, errors", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    let servers = state.service.mcp_servers();
    Ok(ApiOk::ok(
        json!({"count": servers.len(), "servers": view(&servers)}),
    ))
}

/// Register an MCP server
///
/// A stdio server whose program the operator allowed (`mcp_allowed_commands`), or a
/// streamable HTTP server whose URL the egress guard allows; it connects in the background
/// (poll its status).
#[utoipa::path(
    post, path = "/api/v1/mcp-servers", tag = "mcp-servers", operation_id = "registerMcpServer",
    request_body(content = McpServerBody, description = "The server"),
    responses(
        (status = 201, description = "Its status (state `connecting`)", body = Object),
        (status = 403, description = "Needs admin, the program is not allowed (the message names `mcp_allowed_commands`), an `env` name is not allowed (the message names it and `mcp_allowed_env`), or the egress guard refuses the URL", body = super::error::ErrorEnvelope),
        (status = 409, description = "The name is taken", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad field (the message names it), or a credential-like `env` or header value in clear instead of a Config Center reference", body = super::error::ErrorEnvelope)
    )
)]
pub async fn register(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<McpServerBody>,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    let Some(name) = body.name.clone() else {
        return Err(invalid("`name` is required to register a server"));
    };
    if body.expected_revision.is_some() {
        return Err(invalid(
            "`expectedRevision` belongs to PUT /api/v1/mcp-servers/{name}",
        ));
    }
    let status = state
        .service
        .register_mcp_server(&actor(&identity), body.into_config(name)?)
        .await?;
    Ok(ApiOk::created(view(&status)))
}

/// Get an MCP server
#[utoipa::path(
    get, path = "/api/v1/mcp-servers/{name}", tag = "mcp-servers", operation_id = "getMcpServer",
    params(("name" = String, Path, description = "Server name")),
    responses(
        (status = 200, description = "Its configuration (env names only) and status", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such server", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    Ok(ApiOk::ok(view(&state.service.mcp_server(&name)?)))
}

/// Change an MCP server
///
/// Replaces a registered server's configuration and restarts it.
#[utoipa::path(
    put, path = "/api/v1/mcp-servers/{name}", tag = "mcp-servers", operation_id = "updateMcpServer",
    params(("name" = String, Path, description = "Server name")),
    request_body(content = McpServerBody, description = "The whole new configuration"),
    responses(
        (status = 200, description = "Its status", body = Object),
        (status = 403, description = "Needs admin, a program not allowed, or a server of the configuration file", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such server", body = super::error::ErrorEnvelope),
        (status = 409, description = "`expectedRevision` is not the stored revision", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad field", body = super::error::ErrorEnvelope)
    )
)]
pub async fn update(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<McpServerBody>,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    if body.name.as_ref().is_some_and(|n| *n != name) {
        return Err(invalid(
            "`name` differs from the path's: a server cannot be renamed (register it anew and remove this one)",
        ));
    }
    let expected = body.expected_revision;
    let status = state
        .service
        .update_mcp_server(&actor(&identity), body.into_config(name)?, expected)
        .await?;
    Ok(ApiOk::ok(view(&status)))
}

/// Remove an MCP server
#[utoipa::path(
    delete, path = "/api/v1/mcp-servers/{name}", tag = "mcp-servers", operation_id = "removeMcpServer",
    params(("name" = String, Path, description = "Server name")),
    responses(
        (status = 200, description = "`{removed: name}`; its program ended and its tools left the catalogue", body = Object),
        (status = 403, description = "Needs admin, or a server of the configuration file", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such server", body = super::error::ErrorEnvelope),
        (status = 409, description = "The policy in force names its group", body = super::error::ErrorEnvelope)
    )
)]
pub async fn remove(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    state
        .service
        .remove_mcp_server(&actor(&identity), &name)
        .await?;
    Ok(ApiOk::ok(json!({"removed": name})))
}

/// Retry an MCP server now
///
/// A server that is down (or gave up after its attempts) connects again at once.
#[utoipa::path(
    post, path = "/api/v1/mcp-servers/{name}/retry", tag = "mcp-servers", operation_id = "retryMcpServer",
    params(("name" = String, Path, description = "Server name")),
    responses(
        (status = 200, description = "Its status", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such server", body = super::error::ErrorEnvelope)
    )
)]
pub async fn retry(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    if !state.service.retry_mcp_server(&name) {
        return Err(toolsmith_service::ServiceError::NotFound(format!(
            "no MCP server named '{name}'"
        ))
        .into());
    }
    Ok(ApiOk::ok(view(&state.service.mcp_server(&name)?)))
}
