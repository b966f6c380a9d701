//! The audit log over REST: `GET /api/v1/audit` (admin), newest first, filtered by actor,
//! action (exact, or a prefix ending in `.` such as `tool.`), target and time.

use axum::extract::State;
use serde_json::{Value, json};
use toolsmith_core::AuditQuery;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::QueryPairs;
use super::require;
use crate::AppState;
use crate::auth::{Identity, Scope};

/// The audit log
///
/// Every privileged action: tools created, changed, deleted, enabled, disabled, approved or
/// rejected; execution approvals decided; Config Center writes; tokens. Secrets never appear.
#[utoipa::path(
    get, path = "/api/v1/audit", tag = "audit", operation_id = "listAudit",
    params(
        ("actor" = Option<String>, Query, description = "Only this user's actions", min_length = 1, max_length = 128),
        ("action" = Option<String>, Query, description = "An action (`tool.update`) or a prefix ending in `.` (`tool.`)", min_length = 1, max_length = 64),
        ("targetId" = Option<String>, Query, description = "Only actions on this target id", min_length = 1, max_length = 128),
        ("since" = Option<String>, Query, description = "Only actions at or after this RFC 3339 time", format = DateTime),
        ("limit" = Option<u32>, Query, description = "1 to 1000 (default 100)", minimum = 1, maximum = 1000),
        ("offset" = Option<u32>, Query, description = "Skip this many (default 0)", minimum = 0, maximum = 1000000)
    ),
    responses(
        (status = 200, description = "The entries, newest first", body = Object),
        (status = 400, description = "Bad query", body = super::error::ErrorEnvelope),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&["actor", "action", "targetId", "since", "limit", "offset"])?;
    let text = |name: &str, max: usize, what: &str| -> Result<Option<String>, ApiError> {
        Ok(query.text(name, max, what)?.map(str::to_owned))
    };
    let since = match query.get("since") {
        None => None,
        Some(v) => Some(
            chrono::DateTime::parse_from_rfc3339(v)
                .map_err(|_| {
                    ApiError::bad_request(
                        "invalid_query",
                        "query parameter `since` must be an RFC 3339 time, e.g. 2026-01-31T12:00:00Z",
                    )
                })?
                .with_timezone(&chrono::Utc),
        ),
    };
    let limit = query.integer("limit", 1, 1000)?.unwrap_or(100);
    let offset = query.integer("offset", 0, 1_000_000)?.unwrap_or(0);
    let audit_query = AuditQuery {
        actor: text("actor", 128, "a user id")?,
        action: text("action", 64, "an action or a prefix ending in `.`")?,
        target_id: text("targetId", 128, "a target id")?,
        since,
        limit: u32::try_from(limit).unwrap_or(1000),
        offset: u32::try_from(offset).unwrap_or(0),
    };
    let entries = state.service.audit().list(&audit_query).await?;
    Ok(ApiOk::ok(
        json!({"entries": entries, "count": entries.len()}),
    ))
}
