//! Tool tasks over REST — the asynchronous execute: `POST /api/v1/tasks` starts a call of a tool
//! and answers 202 with the task at once, while the call runs on; `GET /api/v1/tasks` and
//! `GET /api/v1/tasks/{id}` read the caller's tasks (with the result once completed), and
//! `POST /api/v1/tasks/{id}/cancel` cancels one. The same tasks MCP clients get with `tasks/*`.
//! Not the scheduler's scheduled tasks (`/api/v1/scheduled-tasks`).

use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolsmith_core::{ToolResult, ToolTaskRecord};
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::require;
use super::types::Execution;
use crate::AppState;
use crate::auth::{Identity, Scope};

/// The suggested time between two reads of a running task.
pub const POLL_INTERVAL_MS: u64 = 1000;

/// Starts a tool call as a task.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StartTaskBody {
    /// The tool to call: a built-in or one of your active custom tools.
    #[schema(min_length = 1, max_length = 128)]
    pub tool: String,
    /// The arguments, checked against the tool's `parameters` (default `{}`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub arguments: Option<Map<String, Value>>,
    /// Groups calls of one conversation in the execution records.
    #[serde(default)]
    #[schema(max_length = 200)]
    pub conversation_id: Option<String>,
    /// What the caller knows of the conversation, for HTTP tools (as the synchronous execute).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub context: Option<Map<String, Value>>,
    /// How long the task and its result are kept, in milliseconds (default `task_ttl`, 1 hour;
    /// at most `task_max_ttl`, 24 hours: a longer ask gets that).
    #[serde(default)]
    #[schema(minimum = 0)]
    pub ttl_ms: Option<u64>,
}

/// A tool call run as a task.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// `task_<32 hex>`.
    pub id: String,
    /// The tool called.
    pub tool: String,
    /// `working` (runs), `input_required`, `completed` (see `result`; the tool's own failure
    /// is a completed task whose result has `isError: true`), `failed` (no result: see
    /// `statusMessage`) or `cancelled`.
    #[schema(pattern = "^(working|input_required|completed|failed|cancelled)$")]
    pub status: String,
    /// Why the task is in its status (a failure's reason, a cancellation).
    pub status_message: Option<String>,
    /// The agent the call was made as (`null`: none).
    pub caller: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// How long the task is kept from its creation, in milliseconds.
    pub ttl_ms: i64,
    /// When the task and its result are deleted.
    pub expires_at: DateTime<Utc>,
    /// How long to wait between two reads of a running task, in milliseconds.
    pub poll_interval_ms: u64,
    /// The call's result, once `completed` (the synchronous execute's answer).
    #[schema(value_type = Option<super::types::Execution>)]
    pub result: Option<Execution>,
}

impl Task {
    pub fn new(task: ToolTaskRecord) -> Task {
        let result = task
            .result
            .and_then(|value| serde_json::from_value::<ToolResult>(value).ok())
            .map(|res| Execution::new(&task.tool, res));
        Task {
            id: task.id,
            tool: task.tool,
            status: task.status.as_str().to_owned(),
            status_message: task.status_message,
            caller: task.agent,
            created_at: task.created_at,
            updated_at: task.updated_at,
            ttl_ms: task.ttl_ms,
            expires_at: task.expires_at,
            poll_interval_ms: POLL_INTERVAL_MS,
            result,
        }
    }
}

/// The caller's tasks, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct TaskList {
    pub tasks: Vec<Task>,
    pub count: usize,
}

pub type TaskEnvelope = Envelope<Task>;
pub type TaskListEnvelope = Envelope<TaskList>;

/// Run a tool as a task
///
/// Starts a call of `tool` and answers at once (202) with the task, while the call runs on
/// through the same pipeline as `POST /api/v1/tools/{name}/execute` (policy, approvals, limits,
/// records). Read it with `GET /api/v1/tasks/{id}` until its status is `completed`, `failed` or
/// `cancelled`. A user may have `task_max_running` tasks running at once (409 past it).
#[utoipa::path(
    post, path = "/api/v1/tasks", tag = "tasks", operation_id = "startTask",
    request_body = StartTaskBody,
    responses(
        (status = 202, description = "The task, `working`", body = inline(TaskEnvelope)),
        (status = 404, description = "No such tool for this caller", body = super::error::ErrorEnvelope),
        (status = 409, description = "Too many tasks running (`limit_reached`, naming task_max_running)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn start(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    headers: axum::http::HeaderMap,
    ApiJson(body): ApiJson<StartTaskBody>,
) -> Result<ApiOk<Task>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    query.check(&[])?;
    let ctx = super::tools::call_context(&identity, &headers, body.conversation_id, body.context)?;
    let args = Value::Object(body.arguments.unwrap_or_default());
    let task = state
        .service
        .start_task(&body.tool, args, ctx, body.ttl_ms)
        .await?;
    Ok(ApiOk::with_status(StatusCode::ACCEPTED, Task::new(task)))
}

/// Your tasks
///
/// Your tool tasks that have not expired, newest first (those of the agent you call as).
#[utoipa::path(
    get, path = "/api/v1/tasks", tag = "tasks", operation_id = "listTasks",
    params(
        ("limit" = Option<u32>, Query, description = "1 to 1000 (default 100)", minimum = 1, maximum = 1000),
        ("offset" = Option<u32>, Query, description = "Tasks to skip (default 0)", minimum = 0, maximum = 1000000)
    ),
    responses(
        (status = 200, description = "`{tasks, count}`", body = inline(TaskListEnvelope)),
        (status = 400, description = "Bad query", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<TaskList>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    query.check(&["limit", "offset"])?;
    let limit = query.integer("limit", 1, 1000)?.unwrap_or(100);
    let offset = query.integer("offset", 0, 1_000_000)?.unwrap_or(0);
    let tasks = state
        .service
        .list_tasks(
            &identity.tool_context(),
            u32::try_from(limit).unwrap_or(1000),
            u32::try_from(offset).unwrap_or(0),
        )
        .await?;
    let tasks: Vec<Task> = tasks.into_iter().map(Task::new).collect();
    Ok(ApiOk::ok(TaskList {
        count: tasks.len(),
        tasks,
    }))
}

/// One task
///
/// The task's status and, once `completed`, its result. Another caller's task is 404.
#[utoipa::path(
    get, path = "/api/v1/tasks/{id}", tag = "tasks", operation_id = "getTask",
    params(("id" = String, Path, description = "The task's id")),
    responses(
        (status = 200, description = "The task", body = inline(TaskEnvelope)),
        (status = 404, description = "No such task of yours (or it expired)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<Task>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    let task = state
        .service
        .get_task(&identity.tool_context(), &id)
        .await?;
    Ok(ApiOk::ok(Task::new(task)))
}

/// Cancel a task
///
/// Cancels a running task: its call is stopped (on whichever instance runs it) and the task
/// stays `cancelled` with no result. A task that has ended already is 409 (`invalid_state`).
#[utoipa::path(
    post, path = "/api/v1/tasks/{id}/cancel", tag = "tasks", operation_id = "cancelTask",
    params(("id" = String, Path, description = "The task's id")),
    responses(
        (status = 200, description = "The task, `cancelled`", body = inline(TaskEnvelope)),
        (status = 404, description = "No such task of yours (or it expired)", body = super::error::ErrorEnvelope),
        (status = 409, description = "The task has ended already", body = super::error::ErrorEnvelope)
    )
)]
pub async fn cancel(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
) -> Result<ApiOk<Task>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    let task = state
        .service
        .cancel_task(&identity.tool_context(), &id)
        .await?;
    Ok(ApiOk::ok(Task::new(task)))
}
