//! Tool groups over REST (003 "Tool Groups and Configuration"): `GET /api/v1/tool-groups`
//! (every group, its state and the spec's stats; `?tool=NAME` finds a tool's group),
//! `GET /api/v1/tool-groups/enabled-tools`, `GET /api/v1/tool-groups/{id}`, and
//! `PUT /api/v1/tool-groups/{id}` (admin) to switch one on or off. The switches are the policy's
//! `tool_groups` (`toolsmith_service::governance::tool_groups`).

use axum::extract::State;
use serde::{Deserialize, Serialize};
use toolsmith_service::governance::tool_groups::{ToolGroupStats, ToolGroupView};
use utoipa::ToSchema;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// The groups and their stats.
#[derive(Debug, Serialize)]
pub struct GroupList {
    groups: Vec<ToolGroupView>,
    stats: ToolGroupStats,
}

/// Switch a group on or off.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GroupSwitch {
    /// `true` to enable the group, `false` to disable it.
    pub enabled: bool,
}

/// The tool groups
///
/// Every group in the spec's `ToolGroupConfig` shape with `enabled` and the tools this build
/// has (`availableTools`); `stats` is the spec's `getToolStats()`. With `?tool=NAME`, only the
/// group holding that tool (the spec's `getGroupForTool`).
#[utoipa::path(
    get, path = "/api/v1/tool-groups", tag = "tool-groups", operation_id = "listToolGroups",
    params(("tool" = Option<String>, Query, description = "Only the group of this built-in tool", min_length = 1, max_length = 256)),
    responses(
        (status = 200, description = "The groups", body = Object),
        (status = 404, description = "The tool is in no group", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<GroupList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["tool"])?;
    let mut groups = state.service.tool_groups();
    if let Some(tool) = query.text("tool", 256, "a tool name")? {
        groups.retain(|g| g.group.tools.contains(&tool));
        if groups.is_empty() {
            return Err(ApiError::new(
                axum::http::StatusCode::NOT_FOUND,
                "not_found",
                format!("'{tool}' is in no tool group: only built-in tools belong to groups"),
            ));
        }
    }
    Ok(ApiOk::ok(GroupList {
        groups,
        stats: state.service.tool_group_stats(),
    }))
}

/// The enabled built-in tools
///
/// The spec's `getEnabledTools()`: every built-in tool of an enabled group, sorted.
#[utoipa::path(
    get, path = "/api/v1/tool-groups/enabled-tools", tag = "tool-groups", operation_id = "enabledTools",
    responses((status = 200, description = "Tool names", body = Object))
)]
pub async fn enabled_tools(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Vec<&'static str>>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    Ok(ApiOk::ok(state.service.enabled_builtin_tools()))
}

/// One tool group
#[utoipa::path(
    get, path = "/api/v1/tool-groups/{id}", tag = "tool-groups", operation_id = "getToolGroup",
    params(("id" = String, Path, description = "Group id or alias (`filesystem`, `fs` …)")),
    responses(
        (status = 200, description = "The group", body = Object),
        (status = 404, description = "No such group", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<ToolGroupView>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    Ok(ApiOk::ok(state.service.tool_group(&id)?))
}

/// Switch a tool group on or off
///
/// Stores the policy in force with the group switched (audited as `policy.update`; every
/// instance sharing the store follows). Enabling a group whose dependency is off, or disabling
/// one another enabled group depends on, is a 422 naming the fix. A disabled group's tools
/// disappear from every list and search, and calling one answers 404.
#[utoipa::path(
    put, path = "/api/v1/tool-groups/{id}", tag = "tool-groups", operation_id = "switchToolGroup",
    params(("id" = String, Path, description = "Group id or alias")),
    request_body(content = GroupSwitch, description = "The new state"),
    responses(
        (status = 200, description = "The group now", body = Object),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such group", body = super::error::ErrorEnvelope),
        (status = 422, description = "A dependency would break", body = super::error::ErrorEnvelope)
    )
)]
pub async fn switch(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<GroupSwitch>,
) -> Result<ApiOk<ToolGroupView>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&[])?;
    Ok(ApiOk::ok(
        state
            .service
            .set_tool_group(&actor(&identity), &id, body.enabled)
            .await?,
    ))
}
