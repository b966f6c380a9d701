//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663, as rmcp carries it): a
//! `tools/call` of a registry tool from a client that declared the extension, asking for a task
//! in its `_meta` ([`ASK_FOR_TASK`]), runs as a tool
//! task ([`ToolService::start_task`]) and is answered at once with a `CreateTaskResult`; the
//! client reads it with `tasks/get` (status, then the `CallToolResult` inline), cancels it with
//! `tasks/cancel`, and receives `notifications/tasks` on the session while the task changes.
//! `tasks/list` (the caller's tasks) and `tasks/result` (waits until the task ended, then its
//! `CallToolResult`) are served too, as 2025-11-25 named them.
//!
//! A task is its caller's alone (user and agent): another's task id is "not found" (-32602).
//! The server tools (control plane, discovery, compat names) always answer at once.

use std::sync::Arc;

use rmcp::model::{
    CustomNotification, DetailedTask, ErrorData, GetTaskResult, JsonObject, Task, TaskPayload,
    TaskStatus, TaskStatusNotification, TaskStatusNotificationParams,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{RoleServer, model::ServerNotification};
use serde_json::{Value, json};
use toolsmith_core::{ToolContext, ToolResult, ToolTaskRecord, ToolTaskStatus, object};
use toolsmith_service::{ServiceError, ToolService};

use super::catalog::call_result;

/// The suggested time between two `tasks/get`, in milliseconds.
pub(crate) const POLL_INTERVAL_MS: u64 = 1000;

/// Whether the client of this request declared the tasks extension (per request, or at
/// `initialize` for a session).
pub(crate) fn client_takes_tasks(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

/// The request `_meta` key by which a call asks to run as a task. The extension leaves the
/// choice to the server, but a client that declares it and reads only direct results (the MCP
/// Inspector's CLI) must still get its result, so a call becomes a task only when it asks.
pub(crate) const ASK_FOR_TASK: &str = "io.modelcontextprotocol/tasks";

/// Whether this call asked to run as a task (its `_meta` holds [`ASK_FOR_TASK`]).
pub(crate) fn asked_for_task(request: &rmcp::model::CallToolRequestParams) -> bool {
    request
        .meta
        .as_ref()
        .is_some_and(|meta| meta.0.0.contains_key(ASK_FOR_TASK))
}

/// The task as MCP shows it, without its payload.
pub(crate) fn task(record: &ToolTaskRecord) -> Task {
    let status = match record.status {
        ToolTaskStatus::Working => TaskStatus::Working,
        ToolTaskStatus::InputRequired => TaskStatus::InputRequired,
        ToolTaskStatus::Completed => TaskStatus::Completed,
        ToolTaskStatus::Failed => TaskStatus::Failed,
        ToolTaskStatus::Cancelled => TaskStatus::Cancelled,
    };
    let mut task = Task::new(
        record.id.clone(),
        status,
        record.created_at.to_rfc3339(),
        record.updated_at.to_rfc3339(),
    )
    .with_ttl_ms(u64::try_from(record.ttl_ms).unwrap_or(0))
    .with_poll_interval_ms(POLL_INTERVAL_MS);
    if let Some(message) = &record.status_message {
        task = task.with_status_message(message.clone());
    }
    task
}

/// The stored result of a completed task as the `CallToolResult` a direct call would have
/// answered.
fn result_object(record: &ToolTaskRecord) -> Result<JsonObject, ErrorData> {
    let res: ToolResult = record
        .result
        .clone()
        .and_then(|value| serde_json::from_value(value).ok())
        .ok_or_else(|| {
            ErrorData::internal_error(format!("task '{}' has no readable result", record.id), None)
        })?;
    match serde_json::to_value(call_result(res)) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) | Err(_) => Err(ErrorData::internal_error(
            "a task's result could not be shaped as a CallToolResult",
            None,
        )),
    }
}

/// Why a task failed, as the JSON-RPC error `tasks/get` and `tasks/result` carry.
fn failure(record: &ToolTaskRecord) -> ErrorData {
    ErrorData::internal_error(
        record
            .status_message
            .clone()
            .unwrap_or_else(|| "the task failed".to_owned()),
        Some(json!({"taskId": record.id})),
    )
}

/// The task with its payload (`tasks/get`, `notifications/tasks`).
pub(crate) fn detailed(record: &ToolTaskRecord) -> Result<DetailedTask, ErrorData> {
    let payload = match record.status {
        ToolTaskStatus::Working => TaskPayload::Working,
        // Nothing a client can answer through the task yet: shown as working.
        ToolTaskStatus::InputRequired => TaskPayload::Working,
        ToolTaskStatus::Completed => TaskPayload::Completed {
            result: result_object(record)?,
        },
        ToolTaskStatus::Failed => {
            let error = failure(record);
            let Ok(Value::Object(error)) = serde_json::to_value(&error) else {
                return Err(ErrorData::internal_error(
                    "an error could not be shaped",
                    None,
                ));
            };
            TaskPayload::Failed { error }
        }
        ToolTaskStatus::Cancelled => TaskPayload::Cancelled,
    };
    Ok(DetailedTask::new(task(record), payload))
}

/// A service error of a task request as the JSON-RPC error: an unknown (or another's) task is
/// invalid params, as the spec says.
fn refused(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::NotFound(message) | ServiceError::InvalidState(message) => {
            ErrorData::invalid_params(message, None)
        }
        ServiceError::LimitReached(message) => ErrorData::new(
            rmcp::model::ErrorCode::INVALID_REQUEST,
            message,
            Some(json!({"setting": "task_max_running"})),
        ),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// The task as 2025-11-25's experimental tasks show it (`tasks/get`, `tasks/cancel`,
/// `notifications/tasks/status`, a `CreateTaskResult`'s `task`): `ttl` and `pollInterval` in
/// milliseconds.
pub(crate) fn task_2025(record: &ToolTaskRecord) -> Value {
    let status = match record.status {
        // Nothing a client can answer through the task yet: shown as working.
        ToolTaskStatus::InputRequired => ToolTaskStatus::Working,
        other => other,
    };
    let mut task = json!({
        "taskId": record.id,
        "status": status.as_str(),
        "createdAt": record.created_at.to_rfc3339(),
        "lastUpdatedAt": record.updated_at.to_rfc3339(),
        "ttl": record.ttl_ms,
        "pollInterval": POLL_INTERVAL_MS,
    });
    if let Some(message) = &record.status_message {
        object::set(&mut task, "statusMessage", json!(message));
    }
    task
}

/// Which generation a task's notifications are sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// The tasks extension: `notifications/tasks` with the detailed task.
    Extension,
    /// 2025-11-25's experimental tasks: `notifications/tasks/status` with [`task_2025`].
    Experimental2025,
}

/// Starts `name` as a task for the caller of `ctx`, kept `ttl_ms` (the default when `None`);
/// its changes are sent to `peer` in `form` until it ends (the extension's
/// `notifications/tasks`, or 2025-11-25's `notifications/tasks/status`).
pub(crate) async fn launch(
    service: &Arc<ToolService>,
    name: &str,
    args: Value,
    ctx: ToolContext,
    ttl_ms: Option<u64>,
    peer: Peer<RoleServer>,
    form: Form,
) -> Result<ToolTaskRecord, ErrorData> {
    let caller = ctx.clone();
    // Subscribed before the task exists, so no change is missed.
    let mut changes = service.task_changes();
    let record = service
        .start_task(name, args, ctx, ttl_ms)
        .await
        .map_err(refused)?;
    let id = record.id.clone();
    tokio::spawn(async move {
        loop {
            let changed = match changes.recv().await {
                Ok(changed) => changed,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            };
            if changed.id != id
                || changed.owner != caller.user_id
                || changed.agent != caller.agent_id
            {
                continue;
            }
            let notification = match form {
                Form::Extension => {
                    let Ok(task) = detailed(&changed) else {
                        return;
                    };
                    ServerNotification::TaskStatusNotification(TaskStatusNotification::new(
                        TaskStatusNotificationParams::new(task),
                    ))
                }
                Form::Experimental2025 => {
                    ServerNotification::CustomNotification(CustomNotification::new(
                        "notifications/tasks/status",
                        Some(task_2025(&changed)),
                    ))
                }
            };
            // A client gone is fine: the task is in the store.
            if peer.send_notification(notification).await.is_err() || changed.status.is_terminal() {
                return;
            }
        }
    });
    Ok(record)
}

/// `tasks/get`: the caller's task, with its result or error once it ended.
pub(crate) async fn get(
    service: &ToolService,
    ctx: &ToolContext,
    id: &str,
) -> Result<GetTaskResult, ErrorData> {
    let record = service.get_task(ctx, id).await.map_err(refused)?;
    Ok(GetTaskResult::new(detailed(&record)?))
}

/// `tasks/get` of 2025-11-25: the task alone (its result is read with `tasks/result`).
pub(crate) async fn get_2025(
    service: &ToolService,
    ctx: &ToolContext,
    id: &str,
) -> Result<Value, ErrorData> {
    let record = service.get_task(ctx, id).await.map_err(refused)?;
    Ok(task_2025(&record))
}

/// `tasks/cancel`: cancels the caller's running task (an ended one is invalid params).
pub(crate) async fn cancel(
    service: &ToolService,
    ctx: &ToolContext,
    id: &str,
) -> Result<ToolTaskRecord, ErrorData> {
    service.cancel_task(ctx, id).await.map_err(refused)
}

/// `tasks/list` (2025-11-25's name): the caller's tasks that have not expired, newest first,
/// 100 a page, `nextCursor` the offset of the next page.
pub(crate) async fn list(
    service: &ToolService,
    ctx: &ToolContext,
    params: Option<&Value>,
) -> Result<Value, ErrorData> {
    const PAGE: u32 = 100;
    let offset = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => cursor.parse::<u32>().map_err(|_| {
            ErrorData::invalid_params(
                format!("cursor '{cursor}' is not one tasks/list gave; start again without one"),
                None,
            )
        })?,
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "cursor must be the string tasks/list gave as nextCursor",
                None,
            ));
        }
    };
    let records = service
        .list_tasks(ctx, PAGE + 1, offset)
        .await
        .map_err(refused)?;
    let more = records.len() > PAGE as usize;
    let tasks: Vec<Value> = records
        .iter()
        .take(PAGE as usize)
        .map(|record| {
            // Both generations' fields: the extension's `ttlMs`, 2025-11-25's `ttl` …
            let mut shown = serde_json::to_value(task(record)).unwrap_or(Value::Null);
            if let Value::Object(both) = task_2025(record) {
                for (key, value) in both {
                    object::set(&mut shown, &key, value);
                }
            }
            shown
        })
        .collect();
    let mut out = serde_json::Map::new();
    out.insert("tasks".to_owned(), Value::Array(tasks));
    if more {
        out.insert(
            "nextCursor".to_owned(),
            Value::String((offset + PAGE).to_string()),
        );
    }
    Ok(Value::Object(out))
}

/// `tasks/result` (2025-11-25's name): waits until the caller's task ended, then its
/// `CallToolResult` (completed), or the error that ended it (failed, cancelled).
pub(crate) async fn result(
    service: &ToolService,
    ctx: &ToolContext,
    params: Option<&Value>,
) -> Result<Value, ErrorData> {
    let Some(id) = params.and_then(|p| p.get("taskId")).and_then(Value::as_str) else {
        return Err(ErrorData::invalid_params(
            "tasks/result needs {\"taskId\": \"task_…\"}, the id tools/call answered",
            None,
        ));
    };
    let record = service.wait_task(ctx, id).await.map_err(refused)?;
    match record.status {
        ToolTaskStatus::Completed => {
            let mut object = result_object(&record)?;
            object.insert(
                "_meta".to_owned(),
                json!({"io.modelcontextprotocol/related-task": {"taskId": record.id}}),
            );
            Ok(Value::Object(object))
        }
        ToolTaskStatus::Cancelled => Err(ErrorData::invalid_params(
            format!("task '{}' was cancelled; it has no result", record.id),
            Some(json!({"taskId": record.id})),
        )),
        _ => Err(failure(&record)),
    }
}
