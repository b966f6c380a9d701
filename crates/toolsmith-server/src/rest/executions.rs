//! Recent executions over REST: `GET /api/v1/executions?tool=&status=&caller=&source=&limit=`
//! (the caller's own, newest first). Error messages are the stored ones, already scrubbed when recorded.

use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::Serialize;
use toolsmith_core::record::ClientRequestCounts;
use toolsmith_core::{ExecutionRecord, ExecutionSource, ExecutionStatus};
use toolsmith_service::ToolRef;
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::QueryPairs;
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// Recent executions
///
/// The caller's executions of every tool — custom, built-in and bridged (`source`: `custom`,
/// `builtin`, `mcp`) — newest first, optionally of one tool (a custom tool's name or id, a
/// built-in's or bridged tool's name), of one source,
/// of one status (`success`, `error`, `timeout`, `denied`, `rate_limited`, `withheld`,
/// `awaiting_approval`: the call waits for a person; `expired`: its approval expired) and made
/// by one agent (`caller`: the agent id the calls named, through an agent-bound token or the
/// `X-Toolsmith-Agent` header). Dry runs are not executions. Each execution names its `caller` (`null`: no agent named)
/// and what the run asked of its caller's client (`clientRequests`: `mcp.log` and `mcp.progress`
/// messages, sampling and elicitation requests, and the requests refused).
#[utoipa::path(
    get, path = "/api/v1/executions", tag = "executions", operation_id = "listExecutions",
    params(
        ("tool" = Option<String>, Query, description = "A tool name or id", min_length = 1, max_length = 128),
        ("status" = Option<String>, Query, description = "One status", pattern = "^(success|error|timeout|denied|rate_limited|withheld|awaiting_approval|expired)$"),
        ("caller" = Option<String>, Query, description = "An agent id: only the calls made by that agent", min_length = 1, max_length = 128),
        ("source" = Option<String>, Query, description = "Where the tool comes from: `custom`, `builtin` or `mcp` (a bridged upstream's tool)", pattern = "^(custom|builtin|mcp)$"),
        ("limit" = Option<u32>, Query, description = "1 to 1000 (default 100)", minimum = 1, maximum = 1000)
    ),
    responses(
        (status = 200, description = "`{executions, count}`", body = inline(ExecutionListEnvelope)),
        (status = 400, description = "Bad query", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such tool for this caller", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<RecordedExecutionList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["tool", "status", "caller", "source", "limit"])?;
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
    let source = match query.get("source") {
        None => None,
        Some(s) => Some(s.parse::<ExecutionSource>().map_err(|_| {
            ApiError::bad_request(
                "invalid_query",
                "query parameter `source` must be one of custom, builtin, mcp",
            )
        })?),
    };
    let limit = query.integer("limit", 1, 1000)?.unwrap_or(100);
    let rows = state
        .service
        .executions(
            &actor(&identity),
            tool.as_ref(),
            status,
            caller,
            source,
            u32::try_from(limit).unwrap_or(1000),
        )
        .await?;
    let executions: Vec<RecordedExecution> =
        rows.into_iter().map(RecordedExecution::from).collect();
    Ok(ApiOk::ok(RecordedExecutionList {
        count: executions.len(),
        executions,
    }))
}

/// One recorded execution of a tool (custom, built-in or bridged).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedExecution {
    /// `exec_<32 hex>`.
    pub id: String,
    /// A custom tool's id; a built-in's or bridged tool's name.
    pub tool_id: String,
    pub tool_name: String,
    /// A custom tool's version (0 for a built-in or bridged tool).
    pub tool_version: i64,
    /// Where the tool comes from: `custom`, `builtin`, or `mcp` (a bridged upstream's tool).
    #[schema(pattern = "^(custom|builtin|mcp)$")]
    pub source: String,
    pub conversation_id: Option<String>,
    /// The agent that made the call (`null`: none named).
    pub caller: Option<String>,
    #[schema(
        pattern = "^(success|error|timeout|denied|rate_limited|withheld|awaiting_approval|expired)$"
    )]
    pub status: String,
    /// Why the call failed (`timeout`, `cpu_limit`, …).
    pub error_kind: Option<String>,
    pub error: Option<String>,
    pub duration_ms: f64,
    pub created_at: DateTime<Utc>,
    /// What the run asked of its caller's client.
    pub client_requests: ClientRequests,
}

/// What one run asked of its caller's client (all zero when it asked nothing). Over MCP these
/// reach the calling client; on a door without one, log messages go to the run's console and
/// sampling and elicitation are refused (counted in `refused`).
#[derive(Debug, Serialize, ToSchema)]
pub struct ClientRequests {
    /// `mcp.log` messages (and a bridged upstream's relayed log notifications).
    pub logs: u32,
    /// `mcp.progress` notifications.
    pub progress: u32,
    /// Sampling requests (`mcp.sample`) the caller's client was asked.
    pub samples: u32,
    /// Elicitation requests (`mcp.elicit`) the caller's client was asked.
    pub elicitations: u32,
    /// Sampling or elicitation requests refused before they reached the client (permission,
    /// policy, limits, or a door without a client that can answer).
    pub refused: u32,
}

impl From<ClientRequestCounts> for ClientRequests {
    fn from(c: ClientRequestCounts) -> Self {
        ClientRequests {
            logs: c.logs,
            progress: c.progress,
            samples: c.samples,
            elicitations: c.elicitations,
            refused: c.refused,
        }
    }
}

impl From<ExecutionRecord> for RecordedExecution {
    fn from(r: ExecutionRecord) -> Self {
        RecordedExecution {
            status: r.status.as_str().to_owned(),
            source: r.source.as_str().to_owned(),
            client_requests: r.client_requests.into(),
            id: r.id,
            tool_id: r.tool_id,
            tool_name: r.tool_name,
            tool_version: r.tool_version,
            conversation_id: r.conversation_id,
            caller: r.agent_id,
            error_kind: r.error_kind,
            error: r.error,
            duration_ms: r.duration_ms,
            created_at: r.created_at,
        }
    }
}

/// `GET /api/v1/executions`'s answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct RecordedExecutionList {
    pub executions: Vec<RecordedExecution>,
    pub count: usize,
}

pub type ExecutionListEnvelope = Envelope<RecordedExecutionList>;
