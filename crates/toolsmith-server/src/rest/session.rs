//! What a client needs to know about itself and to stay current, for the web UI above all:
//!
//! - `GET /api/v1/session` — who the caller is (user, agent, scopes, and the organisation it
//!   acts in with the person's role) and whether the server requires a token, so a page can
//!   show what the caller may do;
//! - `GET /api/v1/changes` — a small digest that moves whenever the caller's tools, their
//!   usage or the caller's pending approvals change. It carries an `ETag`; a poll with
//!   `If-None-Match` answers `304 Not Modified` with no body while nothing moved.

use axum::extract::State;
use axum::http::header::{ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::QueryPairs;
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// The caller of the request.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// Whom the request acts as: the user, or in an organisation the organisation's id.
    pub user_id: String,
    /// The agent the caller acts as, if any.
    pub agent_id: Option<String>,
    /// `tools:read`, `tools:write`, `tools:execute`, `admin` (in an organisation: the token's
    /// narrowed by the role).
    pub scopes: Vec<String>,
    /// Whether requests need a token (false: the server is open on loopback).
    pub auth_required: bool,
    /// The server refuses every write.
    pub read_only: bool,
    /// The organisation the request acts in (`X-Toolsmith-Organization` or the token's
    /// organisation claim), `null` when it acts for the user.
    #[schema(inline)]
    pub organization: Option<SessionOrganization>,
}

/// The organisation a request acts in, and the person acting.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionOrganization {
    /// `org_` and 16 hex digits (the request's `userId`).
    pub id: String,
    /// Its handle, what `X-Toolsmith-Organization` may name.
    pub name: String,
    pub display_name: String,
    /// The person's role: `owner`, `admin`, `editor` or `viewer`.
    pub role: String,
    /// The person's own user id.
    pub member: String,
}

/// The change digest.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// Moves when a tool is created, changed or deleted.
    pub tools: String,
    /// Moves when the caller made a call (of a custom tool, a built-in or a bridged tool), so a
    /// page that shows executions or usage reloads them, and one that shows the catalogue does
    /// not.
    pub usage: String,
    /// Moves when the caller's set of pending approvals changes.
    pub approvals: String,
    /// The caller's tools awaiting approval.
    pub pending_tools: u64,
    /// The caller's executions awaiting a decision.
    pub pending_approvals: u64,
}

/// Who am I
#[utoipa::path(
    get, path = "/api/v1/session", tag = "session", operation_id = "getSession",
    responses(
        (status = 200, description = "The caller", body = inline(super::openapi::SessionEnvelope)),
        (status = 401, description = "A token is required", body = super::error::ErrorEnvelope)
    )
)]
pub async fn session(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Session>, ApiError> {
    query.check(&[])?;
    let organization = match (&identity.organization, &identity.member) {
        (Some(org), Some(member)) => Some(SessionOrganization {
            id: identity.user_id.clone(),
            name: org.name.clone(),
            display_name: org.display_name.clone(),
            role: org.role.as_str().to_owned(),
            member: member.clone(),
        }),
        _ => None,
    };
    Ok(ApiOk::ok(Session {
        organization,
        scopes: identity
            .scopes
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect(),
        user_id: identity.user_id,
        agent_id: identity.agent_id,
        auth_required: crate::auth::auth_configured(&state).await,
        read_only: identity.read_only,
    }))
}

/// What changed
///
/// Poll it (the UI does, every second) and re-read what you show when a field moves. Send the
/// last `ETag` in `If-None-Match` to get `304` while nothing changed.
#[utoipa::path(
    get, path = "/api/v1/changes", tag = "session", operation_id = "getChanges",
    responses(
        (status = 200, description = "The digest", body = inline(super::openapi::ChangesEnvelope),
            headers(("ETag" = String, description = "The digest, quoted"))),
        (status = 304, description = "Nothing changed since the `If-None-Match` tag")
    )
)]
pub async fn changes(
    State(state): State<AppState>,
    identity: Identity,
    headers: HeaderMap,
    query: QueryPairs,
) -> Result<Response, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let service = &state.service;
    let who = actor(&identity);
    let stats = service.stats(&who).await?;
    let fingerprint = service.tools_change_token().await?;
    let pending = service
        .approvals()
        .list_in(super::approvals::seen_by(&identity), true, 1000)
        .await?;
    let mut approvals = Sha256::new();
    for a in &pending {
        approvals.update(a.id.as_bytes());
        approvals.update(b"\n");
    }
    // The fingerprint covers every owner's tools; only its digest leaves the server.
    let tools = digest(&format!("{fingerprint}|{}|{}", who.user_id, stats.total));
    // The newest execution covers built-in and bridged calls, which move no tool's counter.
    let newest = service.executions(&who, None, None, None, None, 1).await?;
    let newest = newest.first().map(|e| e.id.as_str()).unwrap_or("");
    let usage = digest(&format!("{}|{}|{newest}", who.user_id, stats.total_usage));
    let changes = Changes {
        tools,
        usage,
        approvals: hex::encode(approvals.finalize().get(..8).unwrap_or_default()),
        pending_tools: stats.pending_approval,
        pending_approvals: pending.len() as u64,
    };
    let tag = format!(
        "\"{}\"",
        digest(&format!(
            "{}|{}|{}|{}|{}",
            changes.tools,
            changes.usage,
            changes.approvals,
            changes.pending_tools,
            changes.pending_approvals
        ))
    );
    let unchanged = headers
        .get(IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let etag = HeaderValue::from_str(&tag).map_err(|e| ApiError::internal(e.to_string()))?;
    if unchanged {
        return Ok((StatusCode::NOT_MODIFIED, [(ETAG, etag)]).into_response());
    }
    Ok(ApiOk::ok(changes).header(ETAG, etag).into_response())
}

fn digest(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()).get(..8).unwrap_or_default())
}
