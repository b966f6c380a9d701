//! The caller's scheduled tasks over REST, so people (the web UI, scripts) can see and manage
//! the automation their agents set up: `/api/v1/scheduled-tasks` (list, create),
//! `/api/v1/scheduled-tasks/{id}` (read, change, delete), `…/{id}/runs` (history) and
//! `…/{id}/trigger` (run now) — the scheduler tools' operations, checks and replies
//! ([`toolsmith_builtins::schedule::api`]).
//!
//! A task runs tools as its owner, so making, changing or triggering one needs both
//! `tools:write` and `tools:execute`: a token that may not call tools may not set up calls
//! for later either.

use axum::extract::State;
use serde_json::{Map, Value};
use toolsmith_builtins::schedule::api::TaskOp;
use utoipa::ToSchema;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::require;
use crate::AppState;
use crate::auth::{Identity, Scope};

const ID_DOC: &str = "The task's id";

/// A new task: `create_scheduled_task`'s arguments. (The document's view of the body; the
/// handler checks it against the tool's own schema, so both doors give the same answers.)
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // Read as the tool's arguments, not through this type.
pub struct NewScheduledTask {
    /// A short name.
    #[schema(min_length = 1, max_length = 200)]
    name: String,
    /// A 5-field cron expression in the task's time zone (`0 9 * * 1-5`, `@daily`) or one
    /// ISO 8601 time (`2026-12-01T09:00`).
    #[schema(min_length = 1, max_length = 200)]
    schedule: String,
    /// The tool each run calls (any you may call, except the scheduler's own).
    #[schema(min_length = 1, max_length = 200)]
    tool: String,
    /// The arguments each run passes to the tool.
    #[schema(value_type = Option<Object>, nullable = false)]
    arguments: Option<Value>,
    /// An IANA time zone (default `UTC`).
    #[schema(nullable = false)]
    timezone: Option<String>,
    #[schema(max_length = 2000, nullable = false)]
    description: Option<String>,
    /// `false` makes it paused.
    #[schema(nullable = false)]
    enabled: Option<bool>,
    /// What a run missed while the server was down becomes.
    #[schema(nullable = false)]
    missed_runs: Option<MissedRuns>,
}

/// `missedRuns`.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // Documentation of the body, as above.
pub enum MissedRuns {
    Skip,
    RunOnce,
}

async fn run(
    state: &AppState,
    identity: &Identity,
    needs: &[Scope],
    op: TaskOp<'_>,
    body: &Value,
) -> Result<Value, ApiError> {
    for scope in needs {
        require(identity, *scope)?;
    }
    Ok(state
        .service
        .scheduled_task_op(&identity.tool_context(), op, body)
        .await?)
}

/// The query's `known` parameters as a tool's arguments: `limit` and `offset` whole numbers,
/// the others text.
fn query_args(query: &QueryPairs, known: &[&str]) -> Result<Value, ApiError> {
    query.check(known)?;
    let mut args = Map::new();
    for (name, raw) in &query.0 {
        let value = if name == "limit" || name == "offset" {
            raw.parse::<i64>().map(Value::from).map_err(|_| {
                ApiError::bad_request("invalid_query", format!("`{name}` must be a whole number"))
            })?
        } else {
            Value::from(raw.as_str())
        };
        if args.insert(name.clone(), value).is_some() {
            return Err(ApiError::bad_request(
                "invalid_query",
                format!("query parameter `{name}` is given more than once"),
            ));
        }
    }
    Ok(Value::Object(args))
}

/// List your scheduled tasks
///
/// Soonest first, as `list_scheduled_tasks` answers: `{count, total, tasks}`; `status`
/// (`active`, `paused`, `finished`), `limit` (default 20, at most 50) and `offset` filter.
/// A person (a token bound to no agent, without `X-Toolsmith-Agent`) sees their own tasks and
/// every one of their agents', each with its `agent` (`null` for their own); an admin acting
/// as a person sees any user's with `user`; an agent sees its own.
#[utoipa::path(
    get, path = "/api/v1/scheduled-tasks", tag = "scheduled-tasks", operation_id = "listScheduledTasks",
    params(
        ("status" = Option<String>, Query, description = "`active`, `paused` or `finished`", pattern = "^(active|paused|finished)$"),
        ("limit" = Option<u32>, Query, description = "Tasks a page (1 to 50, default 20)", minimum = 1, maximum = 50),
        ("offset" = Option<u32>, Query, description = "Tasks to skip", maximum = 100_000),
        ("user" = Option<String>, Query, description = "Another user whose tasks (of every agent) to list: `admin` only")
    ),
    responses(
        (status = 200, description = "The tasks", body = Object),
        (status = 403, description = "`user` without `admin`", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad filter, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    let mut args = query_args(&query, &["status", "limit", "offset", "user"])?;
    let user = args
        .as_object_mut()
        .and_then(|map| map.remove("user"))
        .and_then(|v| v.as_str().map(str::to_owned));
    require(&identity, Scope::ToolsRead)?;
    let owner = match user {
        // An admin acting as a person sees any user's automation.
        Some(user) => {
            require(&identity, Scope::Admin)?;
            if !identity.is_admin_person() {
                return Err(ApiError::new(
                    axum::http::StatusCode::FORBIDDEN,
                    "forbidden",
                    "`user` lists another user's tasks, for an admin acting as a person: an \
                     agent's token cannot",
                ));
            }
            user
        }
        // A person sees their own tasks and every one of their agents'.
        None if identity.agent_id.is_none() => identity.user_id.clone(),
        None => {
            let out = run(&state, &identity, &[Scope::ToolsRead], TaskOp::List, &args).await?;
            return Ok(ApiOk::ok(out));
        }
    };
    let out = state
        .service
        .every_agents_scheduled_tasks(&owner, &args)
        .await?;
    Ok(ApiOk::ok(out))
}

/// Schedule a task
///
/// The body is `create_scheduled_task`'s arguments: `name`, `schedule` (cron or one ISO
/// time), `tool`, and optionally `arguments`, `timezone`, `description`, `enabled`,
/// `missedRuns`. The tool must exist and be one you may call.
#[utoipa::path(
    post, path = "/api/v1/scheduled-tasks", tag = "scheduled-tasks", operation_id = "createScheduledTask",
    request_body(content = NewScheduledTask, description = "The task"),
    responses(
        (status = 201, description = "The task as stored, with its next run", body = Object),
        (status = 422, description = "A bad field, a tool you cannot call, or a limit, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let needs = [Scope::ToolsWrite, Scope::ToolsExecute];
    let out = run(&state, &identity, &needs, TaskOp::Create, &body).await?;
    Ok(ApiOk::created(out))
}

/// One scheduled task
#[utoipa::path(
    get, path = "/api/v1/scheduled-tasks/{id}", tag = "scheduled-tasks", operation_id = "getScheduledTask",
    params(("id" = String, Path, description = ID_DOC)),
    responses(
        (status = 200, description = "The task", body = Object),
        (status = 404, description = "No such task of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let out = run(
        &state,
        &identity,
        &[Scope::ToolsRead],
        TaskOp::Get(&id),
        &Value::Null,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// Change a scheduled task
///
/// The body holds the fields of `update_scheduled_task` to change (`enabled: false` pauses
/// it, `true` resumes it).
#[utoipa::path(
    patch, path = "/api/v1/scheduled-tasks/{id}", tag = "scheduled-tasks", operation_id = "updateScheduledTask",
    params(("id" = String, Path, description = ID_DOC)),
    request_body(content = Object, description = "The fields to change"),
    responses(
        (status = 200, description = "The task now", body = Object),
        (status = 404, description = "No such task of yours", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad field, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn update(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let needs = [Scope::ToolsWrite, Scope::ToolsExecute];
    let out = run(&state, &identity, &needs, TaskOp::Update(&id), &body).await?;
    Ok(ApiOk::ok(out))
}

/// Delete a scheduled task
///
/// The task and its run history go; it never runs again.
#[utoipa::path(
    delete, path = "/api/v1/scheduled-tasks/{id}", tag = "scheduled-tasks", operation_id = "deleteScheduledTask",
    params(("id" = String, Path, description = ID_DOC)),
    responses(
        (status = 200, description = "Deleted, with how many runs went", body = Object),
        (status = 404, description = "No such task of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let out = run(
        &state,
        &identity,
        &[Scope::ToolsWrite],
        TaskOp::Delete(&id),
        &Value::Null,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// A scheduled task's runs
///
/// Newest first, as `get_task_history` answers: each run's status (`success`, `skipped`, or
/// why it failed or was refused), start, duration and a preview of the result; `limit`
/// (default 10, at most 50) and `offset` page.
#[utoipa::path(
    get, path = "/api/v1/scheduled-tasks/{id}/runs", tag = "scheduled-tasks", operation_id = "listScheduledTaskRuns",
    params(
        ("id" = String, Path, description = ID_DOC),
        ("limit" = Option<u32>, Query, description = "Runs a page (1 to 50, default 10)", minimum = 1, maximum = 50),
        ("offset" = Option<u32>, Query, description = "Runs to skip", maximum = 100_000)
    ),
    responses(
        (status = 200, description = "The runs", body = Object),
        (status = 404, description = "No such task of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn runs(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    let args = query_args(&query, &["limit", "offset"])?;
    let out = run(
        &state,
        &identity,
        &[Scope::ToolsRead],
        TaskOp::History(&id),
        &args,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// Run a scheduled task now
///
/// Once, as its owner, through the full pipeline (policy, approval, limits), without changing
/// its schedule; the run is kept in its history. Refused while the `scheduler` group is off.
#[utoipa::path(
    post, path = "/api/v1/scheduled-tasks/{id}/trigger", tag = "scheduled-tasks", operation_id = "triggerScheduledTask",
    params(("id" = String, Path, description = ID_DOC)),
    responses(
        (status = 200, description = "The run: `{success, run}`", body = Object),
        (status = 404, description = "No such task of yours", body = super::error::ErrorEnvelope),
        (status = 409, description = "The scheduler group is off", body = super::error::ErrorEnvelope)
    )
)]
pub async fn trigger(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let needs = [Scope::ToolsWrite, Scope::ToolsExecute];
    let out = run(
        &state,
        &identity,
        &needs,
        TaskOp::Trigger(&id),
        &Value::Null,
    )
    .await?;
    Ok(ApiOk::ok(out))
}
