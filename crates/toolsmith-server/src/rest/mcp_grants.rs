//! Grants of bridged MCP servers and the access-request workflow over REST.
//!
//! - `GET /api/v1/mcp-grants`, `POST /api/v1/mcp-grants` (create or replace the grant of a
//!   server to a user or agent), `DELETE /api/v1/mcp-grants/{id}`: `admin`.
//! - `POST /api/v1/mcp-access-requests`: any caller asks for a server's tools, for their user or
//!   (as a person, or as that agent) an agent; `GET /api/v1/mcp-access-requests`: an admin sees
//!   every request, others their own; `POST /api/v1/mcp-access-requests/{id}/decision`: `admin`
//!   approves (the grant is written in the same transaction) or rejects.
//!
//! The rules (who a grant binds, deny wins, no grant no access) are the service's
//! (`toolsmith_service::bridge::grants`).

use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_core::mcp_bridge::{AccessRequestStatus, GrantSubject};
use toolsmith_service::bridge::{AccessRequestInput, GrantInput};
use utoipa::ToSchema;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::mcp_servers::{invalid, view};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A grant of one server's tools to a user or an agent (replaces theirs).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrantBody {
    pub server: String,
    /// `user` or `agent`.
    #[schema(pattern = "^(user|agent)$")]
    pub subject_kind: String,
    pub subject: String,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Upstream tool names; empty: every tool of the server.
    #[serde(default)]
    pub tool_allow: Vec<String>,
    /// Upstream tool names never allowed (wins over any allow).
    #[serde(default)]
    pub tool_deny: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A request for a server's tools.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccessRequestBody {
    pub server: String,
    /// `user` or `agent` (default: `agent` when you act as one, else `user`).
    #[serde(default)]
    #[schema(pattern = "^(user|agent)$")]
    pub subject_kind: Option<String>,
    /// Default: your agent, or your user.
    #[serde(default)]
    pub subject: Option<String>,
    /// Upstream tool names; empty: the whole server.
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub reason: String,
}

/// An admin's decision on a request.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccessDecisionBody {
    #[schema(pattern = "^(approve|reject)$")]
    pub decision: String,
}

fn subject_kind(text: &str) -> Result<GrantSubject, ApiError> {
    GrantSubject::parse(text).ok_or_else(|| invalid("`subjectKind` must be `user` or `agent`"))
}

/// List MCP grants
#[utoipa::path(
    get, path = "/api/v1/mcp-grants", tag = "mcp-servers", operation_id = "listMcpGrants",
    responses(
        (status = 200, description = "`{grants, count, enforced}`", body = Object),
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
    let grants = state.service.mcp_grants().await?;
    Ok(ApiOk::ok(json!({
        "count": grants.len(),
        "enforced": state.service.policy().grants().is_on(),
        "grants": view(&grants),
    })))
}

/// Grant an MCP server
///
/// Creates the grant of a server to a user or agent, or replaces theirs.
#[utoipa::path(
    post, path = "/api/v1/mcp-grants", tag = "mcp-servers", operation_id = "putMcpGrant",
    request_body(content = GrantBody, description = "The grant"),
    responses(
        (status = 200, description = "The grant as stored", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such server", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad field", body = super::error::ErrorEnvelope)
    )
)]
pub async fn put(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<GrantBody>,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    let input = GrantInput {
        server: body.server,
        subject_kind: subject_kind(&body.subject_kind)?,
        subject: body.subject,
        enabled: body.enabled,
        tool_allow: body.tool_allow,
        tool_deny: body.tool_deny,
    };
    let grant = state
        .service
        .put_mcp_grant(&actor(&identity), input)
        .await?;
    Ok(ApiOk::ok(view(&grant)))
}

/// Remove an MCP grant
#[utoipa::path(
    delete, path = "/api/v1/mcp-grants/{id}", tag = "mcp-servers", operation_id = "deleteMcpGrant",
    params(("id" = String, Path, description = "Grant id")),
    responses(
        (status = 200, description = "`{deleted: id}`", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such grant", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    state
        .service
        .delete_mcp_grant(&actor(&identity), &id)
        .await?;
    Ok(ApiOk::ok(json!({"deleted": id})))
}

/// Whether the caller decides for everyone (an admin acting as a person).
fn is_admin(identity: &Identity) -> bool {
    identity.has(Scope::Admin) && identity.agent_id.is_none()
}

/// List MCP access requests
#[utoipa::path(
    get, path = "/api/v1/mcp-access-requests", tag = "mcp-servers", operation_id = "listMcpAccessRequests",
    params(("status" = Option<String>, Query, description = "`pending`, `approved`, `rejected` (default: all)", pattern = "^(pending|approved|rejected)$")),
    responses(
        (status = 200, description = "`{requests, count}`, newest first: every request for an admin, your own otherwise", body = Object),
        (status = 400, description = "Bad query", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list_requests(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["status"])?;
    let status = match query.get("status") {
        None => None,
        Some(text) => Some(AccessRequestStatus::parse(text).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_query",
                "query parameter `status` must be `pending`, `approved` or `rejected`",
            )
        })?),
    };
    let requests = state
        .service
        .mcp_access_requests(&actor(&identity), status, !is_admin(&identity))
        .await?;
    Ok(ApiOk::ok(
        json!({"count": requests.len(), "requests": view(&requests)}),
    ))
}

/// Ask for access to an MCP server
#[utoipa::path(
    post, path = "/api/v1/mcp-access-requests", tag = "mcp-servers", operation_id = "requestMcpAccess",
    request_body(content = AccessRequestBody, description = "What you ask for"),
    responses(
        (status = 201, description = "The request, `pending`", body = Object),
        (status = 403, description = "A request for another user, or another agent than yours", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such server", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad field", body = super::error::ErrorEnvelope)
    )
)]
pub async fn request(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<AccessRequestBody>,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    // It stores a request: a write, although a reader may make it.
    super::require_writable(&identity)?;
    query.check(&[])?;
    let kind = match body.subject_kind.as_deref() {
        Some(text) => subject_kind(text)?,
        None if identity.agent_id.is_some() => GrantSubject::Agent,
        None => GrantSubject::User,
    };
    let subject = match (body.subject, kind) {
        (Some(subject), _) => subject,
        (None, GrantSubject::Agent) => identity
            .agent_id
            .clone()
            .ok_or_else(|| invalid("`subject` names the agent to ask for"))?,
        (None, GrantSubject::User) => identity.user_id.clone(),
    };
    let input = AccessRequestInput {
        server: body.server,
        subject_kind: kind,
        subject,
        tools: body.tools,
        reason: body.reason,
    };
    let request = state
        .service
        .request_mcp_access(&actor(&identity), input)
        .await?;
    Ok(ApiOk::created(view(&request)))
}

/// Decide an MCP access request
#[utoipa::path(
    post, path = "/api/v1/mcp-access-requests/{id}/decision", tag = "mcp-servers", operation_id = "decideMcpAccessRequest",
    params(("id" = String, Path, description = "Request id")),
    request_body(content = AccessDecisionBody, description = "`approve` or `reject`"),
    responses(
        (status = 200, description = "The decided request (with `grantId` when approved)", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope),
        (status = 404, description = "No pending request with that id", body = super::error::ErrorEnvelope),
        (status = 422, description = "A decision other than `approve` or `reject`", body = super::error::ErrorEnvelope)
    )
)]
pub async fn decide(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<AccessDecisionBody>,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    let approve = match body.decision.as_str() {
        "approve" => true,
        "reject" => false,
        _ => {
            return Err(invalid("`decision` must be `approve` or `reject`"));
        }
    };
    let decided = state
        .service
        .decide_mcp_access(&actor(&identity), &id, approve)
        .await?;
    Ok(ApiOk::ok(view(&decided)))
}
