//! Agents working together, over REST (issue 38, spec 001 §7): `/api/v1/agent-links` — the
//! links a person makes between two of their agents, the permission to delegate (list,
//! create, delete; a token bound to an agent may read them, never write them) — and
//! `GET /api/v1/delegations`, the delegations made over them (a person's all, an agent's its
//! own).

use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use toolsmith_core::delegation::{AgentLinkRecord, DelegationRecord, LinkDirection};
use toolsmith_service::agents::delegation::LinkInput;
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A new link between two of your agents.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentLinkBody {
    /// The agent that delegates (name or id).
    #[schema(min_length = 1, max_length = 64)]
    pub from: String,
    /// The agent delegated to (name or id).
    #[schema(min_length = 1, max_length = 64)]
    pub to: String,
    /// `outbound` (the default: only `from` delegates to `to`) or `bidirectional` (either to
    /// the other).
    #[serde(default)]
    #[schema(pattern = "^(outbound|bidirectional)$")]
    pub direction: Option<String>,
    /// Delegations over this link at once (default 3, at most 64).
    #[serde(default, deserialize_with = "super::types::optional_unsigned")]
    #[schema(minimum = 1, maximum = 64)]
    pub max_concurrent: Option<u64>,
    /// What the link is for (DELEGATION.md and delegate_search show it).
    #[serde(default)]
    #[schema(max_length = 500)]
    pub description: String,
}

/// A link between two of your agents.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentLink {
    /// `lnk_<32 hex>`.
    pub id: String,
    /// The agent that delegates (its id).
    pub from: String,
    /// The agent delegated to (its id).
    pub to: String,
    #[schema(pattern = "^(outbound|bidirectional)$")]
    pub direction: String,
    pub max_concurrent: u32,
    pub description: String,
    pub created_at: DateTime<Utc>,
}

impl AgentLink {
    pub fn new(link: AgentLinkRecord) -> AgentLink {
        AgentLink {
            id: link.id,
            from: link.source_agent,
            to: link.target_agent,
            direction: link.direction.as_str().to_owned(),
            max_concurrent: link.max_concurrent,
            description: link.description,
            created_at: link.created_at,
        }
    }
}

/// Your agent links, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentLinkList {
    pub links: Vec<AgentLink>,
    pub count: usize,
}

/// One task handed from one agent to another.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delegation {
    /// `dlg_<32 hex>` (announced as `delegate:<id>`).
    pub id: String,
    /// The delegating agent's id.
    pub from: String,
    /// The id of the agent that does the task.
    pub to: String,
    #[schema(pattern = "^(sync|async|evaluate|gate)$")]
    pub mode: String,
    /// 1 for a delegation no delegation started, 2 for one its target made …
    pub depth: u32,
    #[schema(pattern = "^(running|completed|failed|cancelled)$")]
    pub status: String,
    pub task: String,
    pub result: Option<String>,
    pub error: Option<String>,
    /// The target's run (`GET /api/v1/agents/{from}/runs/{run}` as the delegating agent).
    pub run: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Delegation {
    fn new(d: DelegationRecord) -> Delegation {
        Delegation {
            id: d.id,
            from: d.source_agent,
            to: d.target_agent,
            mode: d.mode,
            depth: d.depth,
            status: d.status.as_str().to_owned(),
            task: d.task,
            result: d.result,
            error: d.error,
            run: d.run_id,
            created_at: d.created_at,
            updated_at: d.updated_at,
        }
    }
}

/// Delegations, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct DelegationList {
    pub delegations: Vec<Delegation>,
    pub count: usize,
}

pub type AgentLinkEnvelope = Envelope<AgentLink>;
pub type AgentLinkListEnvelope = Envelope<AgentLinkList>;
pub type DelegationListEnvelope = Envelope<DelegationList>;

/// List your agent links
#[utoipa::path(
    get, path = "/api/v1/agent-links", tag = "agents", operation_id = "listAgentLinks",
    responses((status = 200, description = "`{links, count}`", body = inline(AgentLinkListEnvelope)))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<AgentLinkList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let links: Vec<AgentLink> = state
        .service
        .list_agent_links(&identity.tool_context())
        .await?
        .into_iter()
        .map(AgentLink::new)
        .collect();
    Ok(ApiOk::ok(AgentLinkList {
        count: links.len(),
        links,
    }))
}

/// Link two of your agents
///
/// The permission to delegate (spec 001 §7): without a link, no delegation.
#[utoipa::path(
    post, path = "/api/v1/agent-links", tag = "agents", operation_id = "createAgentLink",
    request_body = AgentLinkBody,
    responses(
        (status = 201, description = "The link", body = inline(AgentLinkEnvelope)),
        (status = 404, description = "No such agent of yours", body = super::error::ErrorEnvelope),
        (status = 409, description = "The two agents are linked already", body = super::error::ErrorEnvelope),
        (status = 422, description = "The link breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<AgentLinkBody>,
) -> Result<ApiOk<AgentLink>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    super::require_person(
        &identity,
        "agent links are made by a person, never by a model",
    )?;
    query.check(&[])?;
    let direction = match body.direction.as_deref() {
        None => LinkDirection::Outbound,
        Some(word) => LinkDirection::parse(word).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_body",
                format!("direction: 'outbound' or 'bidirectional', not '{word}'"),
            )
        })?,
    };
    let max_concurrent = body
        .max_concurrent
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    let link = state
        .service
        .create_agent_link_as(
            &actor(&identity),
            LinkInput {
                from: body.from,
                to: body.to,
                direction,
                max_concurrent,
                description: body.description,
            },
        )
        .await?;
    Ok(ApiOk::created(AgentLink::new(link)))
}

/// Delete an agent link
///
/// Delegations over it stop being possible; those running go on.
#[utoipa::path(
    delete, path = "/api/v1/agent-links/{id}", tag = "agents", operation_id = "deleteAgentLink",
    params(("id" = String, Path, description = "The link's id")),
    responses(
        (status = 200, description = "The link as it was", body = inline(AgentLinkEnvelope)),
        (status = 404, description = "No such link of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<AgentLink>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    super::require_person(
        &identity,
        "agent links are made by a person, never by a model",
    )?;
    let link = state
        .service
        .delete_agent_link_as(&actor(&identity), &id)
        .await?;
    Ok(ApiOk::ok(AgentLink::new(link)))
}

/// List delegations
///
/// A person's all (or those one agent made or was given: `agent`); a token bound to an agent,
/// that agent's.
#[utoipa::path(
    get, path = "/api/v1/delegations", tag = "agents", operation_id = "listDelegations",
    params(
        ("agent" = Option<String>, Query, description = "Only those this agent (name or id) made or was given", min_length = 1, max_length = 64),
        ("active" = Option<bool>, Query, description = "Only running ones"),
        ("limit" = Option<u32>, Query, minimum = 1, maximum = 200, description = "At most this many (default 50)")
    ),
    responses(
        (status = 200, description = "`{delegations, count}`", body = inline(DelegationListEnvelope)),
        (status = 404, description = "No such agent of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delegations(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<DelegationList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["agent", "active", "limit"])?;
    let agent = query.text("agent", 64, "an agent's name or id")?;
    let active = match query.get("active") {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => {
            return Err(ApiError::bad_request(
                "invalid_query",
                "query parameter `active` must be true or false",
            ));
        }
    };
    let limit = query.integer("limit", 1, 200)?.unwrap_or(50);
    let all: Vec<Delegation> = state
        .service
        .list_delegations(
            &identity.tool_context(),
            agent,
            active,
            u32::try_from(limit).unwrap_or(50),
        )
        .await?
        .into_iter()
        .map(Delegation::new)
        .collect();
    Ok(ApiOk::ok(DelegationList {
        count: all.len(),
        delegations: all,
    }))
}
