//! Recent executions over REST: `GET /api/v1/executions?tool=&status=&caller=&limit=` (the
//! caller's own, newest first). Error messages are the stored ones, already scrubbed when recorded.

use axum::extract::State;
use serde_json::{Value, json};
use toolsmith_core::ExecutionStatus;
use toolsmith_service::ToolRef;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::QueryPairs;
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// Recent executions
///
/// The caller's executions of custom tools, newest first, optionally of one tool (name or id),
/// of one status (`success`, `error`, `timeout`, `denied`, `rate_limited`, `withheld`,
/// `awaiting_approval`: the call waits for a person; `expired`: its approval expired) and made
/// by one agent (`caller`: the agent id the calls named, through an agent-bound token or the
/// `X-Toolsmith-Agent` header). Dry runs are not executions. Each execution names its `caller` (`null`: no agent named).
#[utoipa::path(
    get, path = "/api/v1/executions", tag = "executions", operation_id = "listExecutions",
    params(
        ("tool" = Option<String>, Query, description = "A tool name or id", min_length = 1, max_length = 128),
        ("status" = Option<String>, Query, description = "One status", pattern = "^(success|error|timeout|denied|rate_limited|withheld|awaiting_approval|expired)$"),
        ("caller" = Option<String>, Query, description = "An agent id: only the calls made by that agent", min_length = 1, max_length = 128),
        ("limit" = Option<u32>, Query, description = "1 to 1000 (default 100)", minimum = 1, maximum = 1000)
    ),
    responses(
        (status = 200, description = "`{executions, count}`", body = Object),
        (status = 400, description = "Bad query", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such tool for this caller", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["tool", "status", "caller", "limit"])?;
    let tool = query
        .text("tool", 128, "a tool name or id")?
        .map(ToolRef::parse);
    let status = match query.get("status") {
        None => None,
        Some(s) => Some(s.parse::<ExecutionStatus>().map_err(|_| {
            ApiError::bad_request(
                "invalid_query",
                "query parameter `status` must be one of success, error, timeout, denied, rate_limited, withheld, awaiting_approval, expired",
            )
        })?),
    };
    let caller = query.text("caller", 128, "an agent id")?;
    let limit = query.integer("limit", 1, 1000)?.unwrap_or(100);
    let rows = state
        .service
        .executions(
            &actor(&identity),
            tool.as_ref(),
            status,
            caller,
            u32::try_from(limit).unwrap_or(1000),
        )
        .await?;
    let executions: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({
                "id": r.id, "toolId": r.tool_id, "toolName": r.tool_name,
                "toolVersion": r.tool_version, "conversationId": r.conversation_id,
                "caller": r.agent_id,
                "status": r.status.as_str(), "errorKind": r.error_kind, "error": r.error,
                "durationMs": r.duration_ms, "createdAt": r.created_at,
            })
        })
        .collect();
    Ok(ApiOk::ok(
        json!({"executions": executions, "count": executions.len()}),
    ))
}
