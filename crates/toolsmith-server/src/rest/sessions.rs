//! Sessions with agents and subagents, over REST (issue 37, spec 001 §2 Sessions, §6): reads
//! only — `GET /api/v1/sessions` (the caller's sessions, newest change first) and
//! `GET /api/v1/sessions/{key}` (one, with its last messages: its status and history). A
//! session is its starter's alone (the user and the agent identity that began it); another's
//! key is 404. Sending, spawning and cancelling stay the `sessions` tools' (they run models).

use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::Serialize;
use toolsmith_core::agent_session::{SessionKind, SessionMessage, SessionQuery, SessionRecord};
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiPath, QueryPairs};
use super::require;
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A conversation with an agent, or a subagent.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSession {
    /// `ses_…` for a conversation, `sub_…` for a subagent.
    pub session_key: String,
    /// `session` or `subagent`.
    pub kind: String,
    pub label: String,
    /// The id of the agent that answers.
    pub agent: String,
    /// `idle`, `running`, `completed`, `failed`, `cancelled` or `archived`.
    pub status: String,
    /// A subagent's parent: `run:<id>` or `client:<caller>`.
    pub parent: Option<String>,
    /// The subagent depth of its runs (0 for a conversation).
    pub depth: u32,
    /// A subagent's task.
    pub task: Option<String>,
    /// The last answer.
    pub result: Option<String>,
    /// Why the last run failed or was cancelled.
    pub error: Option<String>,
    /// The run that answers now, or answered last.
    pub last_run: Option<String>,
    /// Messages kept, and their bytes.
    pub messages: u32,
    pub bytes: u64,
    /// Messages trimmed (oldest first) since the session began.
    pub trimmed: u32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl AgentSession {
    fn new(s: SessionRecord) -> AgentSession {
        AgentSession {
            session_key: s.id,
            kind: s.kind.as_str().to_owned(),
            label: s.label,
            agent: s.agent_id,
            status: s.status.as_str().to_owned(),
            parent: s.parent,
            depth: s.depth,
            task: s.task,
            result: s.result,
            error: s.error,
            last_run: s.last_run,
            messages: s.message_count,
            bytes: s.message_bytes,
            trimmed: s.trimmed,
            created_at: s.created_at,
            updated_at: s.updated_at,
        }
    }
}

/// One message of a session's history.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSessionMessage {
    /// 0, 1, 2 … in the order written (a trimmed message's number is never reused).
    pub seq: i64,
    /// `user` (what was sent, or a subagent's task) or `assistant` (the agent's answer).
    pub role: String,
    pub content: String,
    /// The run that answered, or that the message started.
    pub run: Option<String>,
    pub at: DateTime<Utc>,
}

/// The caller's sessions.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSessionList {
    pub sessions: Vec<AgentSession>,
    pub count: usize,
}

/// A session with its last messages, oldest first.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSessionHistory {
    pub session: AgentSession,
    pub messages: Vec<AgentSessionMessage>,
}

pub type AgentSessionListEnvelope = Envelope<AgentSessionList>;
pub type AgentSessionHistoryEnvelope = Envelope<AgentSessionHistory>;

/// Your sessions
///
/// Your conversations with agents and your subagents (those the agent you call as began),
/// newest change first; ended subagents past their archive time are archived first.
#[utoipa::path(
    get, path = "/api/v1/sessions", tag = "agents", operation_id = "listAgentSessions",
    params(
        ("kind" = Option<String>, Query, description = "`session` or `subagent`", pattern = "^(session|subagent)$"),
        ("includeArchived" = Option<bool>, Query, description = "Archived subagents too (default false)"),
        ("limit" = Option<u32>, Query, description = "1 to 200 (default 50)", minimum = 1, maximum = 200)
    ),
    responses(
        (status = 200, description = "`{sessions, count}`", body = inline(AgentSessionListEnvelope)),
        (status = 400, description = "A query parameter is wrong (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<AgentSessionList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["kind", "includeArchived", "limit"])?;
    let kind = match query.get("kind") {
        None => None,
        Some(text) => Some(SessionKind::parse(text).ok_or_else(|| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_query",
                format!("kind: 'session' or 'subagent', not '{text}'"),
            )
        })?),
    };
    let archived = match query.get("includeArchived") {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_query",
                format!("includeArchived: true or false, not '{other}'"),
            ));
        }
    };
    let limit = query.integer("limit", 1, 200)?.unwrap_or(50);
    let sessions: Vec<AgentSession> = state
        .service
        .list_sessions(
            &identity.tool_context(),
            SessionQuery {
                kind,
                parent: None,
                archived,
                limit: u32::try_from(limit).unwrap_or(200),
            },
        )
        .await?
        .into_iter()
        .map(AgentSession::new)
        .collect();
    Ok(ApiOk::ok(AgentSessionList {
        count: sessions.len(),
        sessions,
    }))
}

/// One session with its history
///
/// The session (its status, last result or error, the run answering) and its last messages,
/// oldest first. Another user's or agent's session is 404.
#[utoipa::path(
    get, path = "/api/v1/sessions/{key}", tag = "agents", operation_id = "getAgentSession",
    params(
        ("key" = String, Path, description = "The session's key (`ses_…` or `sub_…`)"),
        ("limit" = Option<u32>, Query, description = "Messages, 1 to 500 (default 50)", minimum = 1, maximum = 500)
    ),
    responses(
        (status = 200, description = "`{session, messages}`", body = inline(AgentSessionHistoryEnvelope)),
        (status = 400, description = "A query parameter is wrong (named)", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such session of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiPath(key): ApiPath<String>,
) -> Result<ApiOk<AgentSessionHistory>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["limit"])?;
    let limit = query.integer("limit", 1, 500)?.unwrap_or(50);
    let (session, messages) = state
        .service
        .session_history(
            &identity.tool_context(),
            &key,
            u32::try_from(limit).unwrap_or(500),
        )
        .await?;
    Ok(ApiOk::ok(AgentSessionHistory {
        session: AgentSession::new(session),
        messages: messages.into_iter().map(message).collect(),
    }))
}

fn message(m: SessionMessage) -> AgentSessionMessage {
    AgentSessionMessage {
        seq: m.seq,
        role: m.role,
        content: m.content,
        run: m.run_id,
        at: m.at,
    }
}
