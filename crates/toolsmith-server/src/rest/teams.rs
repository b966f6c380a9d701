//! Agent teams over REST (spec 001 §8): `/api/v1/teams` — a person's teams (list, create,
//! read, delete; the lead and members are the person's agents, by name or id) — and
//! `/api/v1/teams/{id}/board`, the team's task board and mailbox as a person reads them. The
//! board is written by the team's agents through the `team_tasks` and `team_message` tools.

use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolsmith_builtins::teams::Team;
use toolsmith_service::agents::teams::TeamInput;
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A new team.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeamBody {
    /// Unique among your teams; lowercase letters, digits and `_`.
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z][a-z0-9_]*$")]
    pub name: String,
    /// What the team is for (its lead reads it in `TEAM.md`).
    #[serde(default)]
    #[schema(max_length = 4000)]
    pub description: String,
    /// The lead: one of your agents, by name or id.
    #[schema(min_length = 1, max_length = 128)]
    pub lead: String,
    /// The teammates: your agents, by name or id (the lead not among them).
    #[schema(min_items = 1, max_items = 31)]
    pub members: Vec<String>,
}

/// One agent of a team.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamMember {
    /// `agt_<32 hex>`.
    pub id: String,
    pub name: String,
}

/// A team.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamView {
    /// `team_<16 hex>`.
    pub id: String,
    pub name: String,
    pub description: String,
    pub lead: TeamMember,
    pub members: Vec<TeamMember>,
    pub created_at: DateTime<Utc>,
}

impl TeamView {
    fn new(team: Team) -> TeamView {
        let member = |m: toolsmith_builtins::teams::Member| TeamMember {
            id: m.id,
            name: m.name,
        };
        TeamView {
            id: team.id,
            name: team.name,
            description: team.description,
            lead: member(team.lead),
            members: team.members.into_iter().map(member).collect(),
            created_at: team.created_at,
        }
    }
}

/// Your teams, by name.
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamList {
    pub teams: Vec<TeamView>,
    pub count: usize,
}

/// A team's board: every task (newest first) and the latest 200 messages (newest first).
#[derive(Debug, Serialize, ToSchema)]
pub struct TeamBoard {
    #[schema(value_type = Object)]
    pub team: Value,
    /// Each `{id, subject, description, priority, status, blocked_by, createdBy, claimedBy,
    /// result, createdAt, updatedAt}`; `status` is `pending`, `blocked`, `in_progress` or
    /// `completed`.
    #[schema(value_type = Vec<Object>)]
    pub tasks: Value,
    /// Each `{id, from, to, text, broadcast, read, at}`.
    #[schema(value_type = Vec<Object>)]
    pub messages: Value,
}

pub type TeamEnvelope = Envelope<TeamView>;
pub type TeamListEnvelope = Envelope<TeamList>;
pub type TeamBoardEnvelope = Envelope<TeamBoard>;

/// Your teams
#[utoipa::path(
    get, path = "/api/v1/teams", tag = "teams", operation_id = "listTeams",
    responses((status = 200, description = "`{teams, count}`", body = inline(TeamListEnvelope)))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<TeamList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let teams: Vec<TeamView> = state
        .service
        .list_teams(&identity.tool_context())
        .await?
        .into_iter()
        .map(TeamView::new)
        .collect();
    Ok(ApiOk::ok(TeamList {
        count: teams.len(),
        teams,
    }))
}

/// Create a team
///
/// A lead and teammates, each one of your agents. The lead reads `TEAM.md` (its teammates and
/// how the team works) in every run; the team's agents share the board and the mailbox of the
/// `teams` tool group.
#[utoipa::path(
    post, path = "/api/v1/teams", tag = "teams", operation_id = "createTeam",
    request_body = TeamBody,
    responses(
        (status = 201, description = "The team", body = inline(TeamEnvelope)),
        (status = 404, description = "An agent named is not one of yours", body = super::error::ErrorEnvelope),
        (status = 409, description = "You have a team of that name", body = super::error::ErrorEnvelope),
        (status = 422, description = "The team breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<TeamBody>,
) -> Result<ApiOk<TeamView>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    super::require_person(&identity, "teams are made by a person")?;
    query.check(&[])?;
    let input = TeamInput {
        name: body.name,
        description: body.description,
        lead: body.lead,
        members: body.members,
    };
    let team = state.service.create_team(&actor(&identity), input).await?;
    Ok(ApiOk::created(TeamView::new(team)))
}

/// One team
#[utoipa::path(
    get, path = "/api/v1/teams/{id}", tag = "teams", operation_id = "getTeam",
    params(("id" = String, Path, description = "The team's id or name")),
    responses(
        (status = 200, description = "The team", body = inline(TeamEnvelope)),
        (status = 404, description = "No such team of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<TeamView>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let team = state
        .service
        .get_team(&identity.tool_context(), &id)
        .await?;
    Ok(ApiOk::ok(TeamView::new(team)))
}

/// Delete a team
///
/// The team, its board and its mailbox go; its agents stay.
#[utoipa::path(
    delete, path = "/api/v1/teams/{id}", tag = "teams", operation_id = "deleteTeam",
    params(("id" = String, Path, description = "The team's id or name")),
    responses(
        (status = 200, description = "The team as it was", body = inline(TeamEnvelope)),
        (status = 404, description = "No such team of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<TeamView>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    super::require_person(&identity, "teams are made by a person")?;
    let team = state.service.delete_team(&actor(&identity), &id).await?;
    Ok(ApiOk::ok(TeamView::new(team)))
}

/// A team's board
///
/// Every task of the board and the latest messages of the mailbox, read or not (reading them
/// here marks none as read).
#[utoipa::path(
    get, path = "/api/v1/teams/{id}/board", tag = "teams", operation_id = "getTeamBoard",
    params(("id" = String, Path, description = "The team's id or name")),
    responses(
        (status = 200, description = "`{team, tasks, messages}`", body = inline(TeamBoardEnvelope)),
        (status = 404, description = "No such team of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn board(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<TeamBoard>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let mut board = state
        .service
        .team_board(&identity.tool_context(), &id)
        .await?;
    let mut take = |key: &str| board.get_mut(key).map(Value::take).unwrap_or_default();
    Ok(ApiOk::ok(TeamBoard {
        team: take("team"),
        tasks: take("tasks"),
        messages: take("messages"),
    }))
}
