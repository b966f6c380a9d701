//! The stored policy over REST: `GET /api/v1/policies` (the policy in force and where it comes
//! from), `PUT /api/v1/policies` (replace it) and `DELETE /api/v1/policies` (back to the
//! configuration file's). All need `admin`. The rules are the service's
//! (`toolsmith_service::governance::stored_policy`); the format is docs/policy.md's.

use axum::extract::State;
use serde::Deserialize;
use serde_json::Value;
use toolsmith_service::PolicyView;
use utoipa::ToSchema;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, OptionalApiJson, QueryPairs};
use super::types::RevisionBody;
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A new policy.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyBody {
    /// The policy (docs/policy.md): `profile`, `allow`, `deny`, `also_allow`, `agents`, `users`,
    /// `groups`, `profiles`, `subagents`.
    #[schema(value_type = Object)]
    pub policy: Value,
    /// Apply only if the stored policy is at this revision (0: none stored yet); 409 otherwise.
    #[serde(default, deserialize_with = "super::types::optional_integer")]
    #[schema(minimum = 0, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

/// The policy in force
#[utoipa::path(
    get, path = "/api/v1/policies", tag = "policies", operation_id = "getPolicy",
    responses(
        (status = 200, description = "The policy, its source (`store`, `file`, `none`) and revision", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_policy(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<PolicyView>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    Ok(ApiOk::ok(state.service.policy_view().await?))
}

/// Replace the policy
///
/// Compiled before it is stored: an unknown profile or group is a 422 and nothing changes. It
/// takes effect at once; MCP sessions are sent `list_changed`.
#[utoipa::path(
    put, path = "/api/v1/policies", tag = "policies", operation_id = "putPolicy",
    request_body(content = PolicyBody, description = "The new policy"),
    responses(
        (status = 200, description = "In force", body = Object),
        (status = 409, description = "Stale revision", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid policy", body = super::error::ErrorEnvelope)
    )
)]
pub async fn put_policy(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<PolicyBody>,
) -> Result<ApiOk<PolicyView>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    let view = state
        .service
        .set_policy(&actor(&identity), body.policy, body.expected_revision)
        .await?;
    Ok(ApiOk::ok(view))
}

/// Clear the stored policy
///
/// The configuration file's policy (or none) is in force again.
#[utoipa::path(
    delete, path = "/api/v1/policies", tag = "policies", operation_id = "deletePolicy",
    request_body(content = Option<RevisionBody>, description = "Optional"),
    responses(
        (status = 200, description = "The policy now in force", body = Object),
        (status = 404, description = "No policy is stored", body = super::error::ErrorEnvelope),
        (status = 409, description = "Stale revision", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete_policy(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    OptionalApiJson(body): OptionalApiJson<RevisionBody>,
) -> Result<ApiOk<PolicyView>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    let expected = body.and_then(|b| b.expected_revision);
    Ok(ApiOk::ok(
        state
            .service
            .clear_policy(&actor(&identity), expected)
            .await?,
    ))
}
