//! 001's `cron` ("Manage scheduled tasks", group `automation`): one tool whose `action` is one
//! of the scheduler tools — `add` (create_scheduled_task), `list`, `update`, `remove`
//! (delete), `run` (trigger_task), `history` (get_task_history) — with the same arguments
//! beside it.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use toolsmith_core::data::RecordScope;
use toolsmith_core::{ToolContext, ToolDefinition};

use super::{Deps, runs, tasks};
use crate::data::Call;
use crate::utilities::Fail;

const ACTIONS: &[&str] = &["add", "list", "update", "remove", "run", "history"];

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "cron",
        "Manage scheduled tasks (GoClaw's cron): action add (name, schedule, tool, arguments, \
         timezone), list, update (taskId + fields), remove (taskId), run (taskId: now), \
         history (taskId). Same as create_scheduled_task, list_scheduled_tasks, \
         update_scheduled_task, delete_scheduled_task, trigger_task and get_task_history.",
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ACTIONS, "description": "add: make a task (name, schedule, tool, arguments); list: your tasks; update: change taskId's fields; remove: delete taskId; run: call taskId's tool now; history: taskId's past runs."},
                "taskId": {"type": "string", "description": "The task's id (from list), for update, remove, run and history."},
                "name": {"type": "string", "description": "add/update: a short name, e.g. \"Morning news digest\"."},
                "schedule": {"type": "string", "description": "Cron (\"0 9 * * 1-5\") or one ISO time."},
                "timezone": {"type": "string", "description": "add/update: IANA time zone the schedule is read in, e.g. \"Europe/Paris\" (default UTC)."},
                "tool": {"type": "string", "description": "add/update: the tool each run calls."},
                "arguments": {"type": "object", "description": "add/update: the arguments each run passes to the tool."},
                "description": {"type": "string", "description": "add/update: what the task is for."},
                "enabled": {"type": "boolean", "description": "add/update: false keeps the task but pauses it."},
                "missedRuns": {"type": "string", "enum": tasks::MISSED_RUNS, "description": "add/update: when the server was down at a run's time, skip it (default) or run_once when it is back."},
                "status": {"type": "string", "enum": ["active", "paused", "finished"], "description": "list: only tasks in this status: active (runs at its times), paused (kept, runs nothing until resumed), finished (a one-off that ran)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "list/history: how many to return at most."},
                "offset": {"type": "integer", "minimum": 0, "description": "list/history: how many to skip (for the next page)."}
            },
            "required": ["action"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["cron", "crontab", "recurring", "automation", "job", "timer"])
}

pub(crate) async fn run(
    deps: &Deps,
    scope: RecordScope,
    ctx: &ToolContext,
    args: Value,
    now: DateTime<Utc>,
) -> Result<Value, Fail> {
    let action = args
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let rest = Value::Object(
        args.as_object()
            .map(|map| {
                map.iter()
                    .filter(|(k, _)| k.as_str() != "action")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default(),
    );
    let call = |args: Value| Call {
        records: deps.records.as_ref(),
        scope: scope.clone(),
        ctx,
        args,
    };
    match action.as_str() {
        "add" => tasks::create(deps, scope.clone(), &rest, now, tasks::agent_token(ctx)).await,
        "list" => tasks::list(call(rest)).await,
        "update" => tasks::update(deps, scope.clone(), &rest, now).await,
        "remove" => tasks::delete(call(rest)).await,
        "run" => runs::trigger(deps, scope.clone(), &rest, now).await,
        "history" => runs::history(call(rest)).await,
        other => Err(Fail::Args(format!(
            "'action' must be one of {}, not '{}'",
            ACTIONS.join(", "),
            other.chars().take(40).collect::<String>()
        ))),
    }
}
