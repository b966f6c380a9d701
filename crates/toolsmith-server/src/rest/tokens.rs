//! API tokens over REST (`admin`): `GET /api/v1/tokens` (never the secrets), `POST
//! /api/v1/tokens` (the secret is in this one answer and nowhere else) and `DELETE
//! /api/v1/tokens/{id}`. The same records `toolsmith token` manages; both are audited.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_core::ApiTokenRecord;
use toolsmith_core::object;
use utoipa::ToSchema;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope, new_token};

/// A new token.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTokenBody {
    /// A label to recognise it by (1–64 characters).
    #[schema(min_length = 1, max_length = 64)]
    pub name: String,
    /// The user it acts as (default: the caller's user).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 128)]
    pub user_id: Option<String>,
    /// `tools:read`, `tools:write`, `tools:execute`, `admin`; at least one.
    pub scopes: Vec<String>,
    /// The agent every request with it acts as.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 128)]
    pub agent_id: Option<String>,
}

fn view(t: &ApiTokenRecord) -> Value {
    json!({
        "id": t.id, "userId": t.user_id, "name": t.name, "scopes": t.scopes,
        "agentId": t.agent_id, "createdAt": t.created_at, "lastUsedAt": t.last_used_at,
    })
}

fn plain(name: &str, value: &str, max: usize) -> Result<(), ApiError> {
    let ok = !value.is_empty()
        && value.chars().count() <= max
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '@' | ' '));
    if ok {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
            format!("`{name}` must be 1 to {max} letters, digits, spaces or _ - . : @"),
        )
        .with_details(json!({"field": name})))
    }
}

/// List tokens
#[utoipa::path(
    get, path = "/api/v1/tokens", tag = "tokens", operation_id = "listTokens",
    responses(
        (status = 200, description = "`{tokens, count}`, oldest first, without secrets", body = Object),
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
    let tokens = state.service.list_tokens().await?;
    let tokens: Vec<Value> = tokens.iter().map(view).collect();
    Ok(ApiOk::ok(json!({"count": tokens.len(), "tokens": tokens})))
}

/// Create a token
///
/// The answer's `token` is the secret: it is shown this once and only its SHA-256 is kept.
#[utoipa::path(
    post, path = "/api/v1/tokens", tag = "tokens", operation_id = "createToken",
    request_body(content = CreateTokenBody, description = "The token"),
    responses(
        (status = 201, description = "The token record and, once, its secret as `token`", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope),
        (status = 422, description = "Bad name, user, agent or scope", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<CreateTokenBody>,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    plain("name", &body.name, 64)?;
    let user = body.user_id.unwrap_or_else(|| identity.user_id.clone());
    plain("userId", &user, 128)?;
    if let Some(agent) = &body.agent_id {
        plain("agentId", agent, 128)?;
    }
    if body.scopes.is_empty() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
            "`scopes` needs at least one of tools:read, tools:write, tools:execute, admin",
        )
        .with_details(json!({"field": "scopes"})));
    }
    let scopes = body
        .scopes
        .iter()
        .map(|s| Scope::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|why| {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "validation_error", why)
                .with_details(json!({"field": "scopes"}))
        })?;
    let (record, secret) = new_token(&user, &body.name, &scopes, body.agent_id.as_deref());
    state
        .service
        .create_token(&actor(&identity), &record)
        .await?;
    state.tokens.clear();
    let mut answer = view(&record);
    object::set(&mut answer, "token", Value::String(secret));
    Ok(ApiOk::created(answer))
}

/// Revoke a token
#[utoipa::path(
    delete, path = "/api/v1/tokens/{id}", tag = "tokens", operation_id = "revokeToken",
    params(("id" = String, Path, description = "Token id (`tok_…`)")),
    responses(
        (status = 200, description = "`{revoked: id}`", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such token", body = super::error::ErrorEnvelope)
    )
)]
pub async fn revoke(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    if !state.service.revoke_token(&actor(&identity), &id).await? {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no API token with id {id}"),
        ));
    }
    state.tokens.clear();
    Ok(ApiOk::ok(json!({"revoked": id})))
}
