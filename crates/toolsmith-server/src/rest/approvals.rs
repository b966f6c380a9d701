//! Human approval of executions over REST: `GET /api/v1/approvals`, `GET /api/v1/approvals/{id}`
//! and `POST /api/v1/approvals/{id}/decision`. The rules (what waits, what a decision allows)
//! are the service's ([`toolsmith_service::approvals`]).
//!
//! Listing needs `tools:read`; deciding needs `tools:write` and a caller that is not acting as
//! an agent (a token bound to an agent, or the `X-Toolsmith-Agent` header): an agent never
//! approves its own calls. A person sees their own approvals, an agent only those of its own
//! calls (not its user's other agents'); `admin` sees and decides everyone's.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_core::ApprovalDecision;
use toolsmith_service::ApprovalView;
use toolsmith_service::governance::approvals::{ApprovalScope, Via};
use utoipa::ToSchema;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::require;
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A person's decision on a pending approval.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DecisionBody {
    /// `allow_once` (this call), `allow_always` (this tool for this caller) or `deny`.
    #[schema(pattern = "^(allow_once|allow_always|deny)$")]
    pub decision: String,
}

/// The owner whose approvals the caller may decide: its own, or everyone's for `admin`.
fn owner_scope(identity: &Identity) -> Option<&str> {
    if identity.scopes.contains(&Scope::Admin) && identity.agent_id.is_none() {
        None
    } else {
        Some(&identity.user_id)
    }
}

/// The approvals the caller sees: everyone's for an admin, a person's own, and only its own
/// calls' for an agent.
pub(crate) fn seen_by(identity: &Identity) -> ApprovalScope<'_> {
    ApprovalScope::of_caller(
        &identity.user_id,
        identity.agent_id.as_deref(),
        identity.scopes.contains(&Scope::Admin),
    )
}

/// List approvals
///
/// Newest first. `status=pending` (the default) lists what waits for a decision now;
/// `status=all` includes decided and expired ones.
#[utoipa::path(
    get, path = "/api/v1/approvals", tag = "approvals", operation_id = "listApprovals",
    params(
        ("status" = Option<String>, Query, description = "`pending` (default) or `all`", pattern = "^(pending|all)$"),
        ("limit" = Option<u32>, Query, description = "At most this many (1 to 1000, default 100)", minimum = 1, maximum = 1000)
    ),
    responses(
        (status = 200, description = "The approvals", body = Object),
        (status = 400, description = "Bad query", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["status", "limit"])?;
    let pending_only = match query.get("status") {
        None | Some("pending") => true,
        Some("all") => false,
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_query",
                "query parameter `status` must be `pending` or `all`",
            ));
        }
    };
    let limit = query.integer("limit", 1, 1000)?.unwrap_or(100);
    let approvals = state
        .service
        .approvals()
        .list_in(
            seen_by(&identity),
            pending_only,
            u32::try_from(limit).unwrap_or(1000),
        )
        .await?;
    let views: Vec<ApprovalView> = approvals.iter().map(ApprovalView::of).collect();
    Ok(ApiOk::ok(json!({"approvals": views, "count": views.len()})))
}

/// Get an approval
#[utoipa::path(
    get, path = "/api/v1/approvals/{id}", tag = "approvals", operation_id = "getApproval",
    params(("id" = String, Path, description = "Approval id (`apr_…`)")),
    responses(
        (status = 200, description = "The approval", body = Object),
        (status = 404, description = "No such approval for this caller", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<ApprovalView>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let approval = state
        .service
        .approvals()
        .get_in(seen_by(&identity), &id)
        .await?;
    Ok(ApiOk::ok(ApprovalView::of(&approval)))
}

/// Decide an approval
///
/// Only while it is pending: a decided or expired approval answers 409. After `allow_once` the
/// same call (same tool, caller and arguments) runs once when it is made again; after
/// `allow_always` every call of the tool by that caller runs until the tool's code changes.
#[utoipa::path(
    post, path = "/api/v1/approvals/{id}/decision", tag = "approvals", operation_id = "decideApproval",
    params(("id" = String, Path, description = "Approval id (`apr_…`)")),
    request_body(content = DecisionBody, description = "The decision"),
    responses(
        (status = 200, description = "Decided", body = Object),
        (status = 403, description = "The caller acts as an agent", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such approval for this caller", body = super::error::ErrorEnvelope),
        (status = 409, description = "Not pending any more", body = super::error::ErrorEnvelope),
        (status = 422, description = "Unknown decision", body = super::error::ErrorEnvelope)
    )
)]
pub async fn decide(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<DecisionBody>,
) -> Result<ApiOk<ApprovalView>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    if let Some(why) = identity.approval_denial() {
        return Err(ApiError::new(StatusCode::FORBIDDEN, "forbidden", why));
    }
    let decision: ApprovalDecision = body.decision.parse().map_err(|why: String| {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "validation_error", why)
    })?;
    let decided = state
        .service
        .approvals()
        .decide_as(
            &super::actor(&identity),
            owner_scope(&identity),
            &id,
            decision,
            Via::Api,
        )
        .await?;
    Ok(ApiOk::ok(ApprovalView::of(&decided)))
}
