//! Running a task, and its history: [`run_task`] calls the task's tool through the server
//! ([`TaskCaller`](super::TaskCaller)) and records the run in the `schedule_run` collection
//! (`category`: the task's id, `kind`: its status, `at`: when it started); `get_task_history`
//! reads them back, `trigger_task` runs a task now.
//!
//! A run's status is `success`, or the error kind of the failed call (`denied`, `not_found`,
//! `approval_required`, `rate_limited`, `execution_error` …), or `skipped` (a missed run under
//! `missedRuns: skip`), or `lost` (claimed by an instance that stopped before the run ended:
//! [`record_lost`]). Only the last [`KEPT_RUNS`](super::KEPT_RUNS) runs of a task are kept.

use std::time::Instant;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::data::{DataRecord, RecordOrder, RecordQuery, RecordScope};

use super::tasks::existing;
use super::{Deps, KEPT_RUNS, RUNS, is_scheduler_tool};
use crate::data::{Call, id_arg, new_id};
use crate::utilities::Fail;

/// Bytes of a run's result kept in its history.
const RESULT_PREVIEW_BYTES: usize = 2000;

/// Why a run happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// At its scheduled time.
    Schedule,
    /// Late: the server was down at its time, and the task's `missedRuns` is `run_once`.
    Missed,
    /// By `trigger_task`.
    Manual,
}

impl Trigger {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Trigger::Schedule => "schedule",
            Trigger::Missed => "missed",
            Trigger::Manual => "manual",
        }
    }
}

pub fn history_definition() -> ToolDefinition {
    ToolDefinition::new(
        "get_task_history",
        "The runs of a scheduled task, newest first: when each started, what triggered it, its \
         status (success, or why it failed or was refused), duration, and a preview of the \
         result.",
        json!({
            "type": "object",
            "properties": {
                "taskId": {"type": "string", "description": "The task's id."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "How many runs to return at most, newest first."},
                "offset": {"type": "integer", "minimum": 0, "maximum": 100_000, "default": 0, "description": "How many runs to skip (for the next page)."}
            },
            "required": ["taskId"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "cron",
        "history",
        "runs",
        "ran",
        "last",
        "past",
        "previous",
        "log",
        "executions",
        "status",
        "results",
    ])
}

pub fn trigger_definition() -> ToolDefinition {
    ToolDefinition::new(
        "trigger_task",
        "Run a scheduled task now, once, without changing its schedule; returns the run (status \
         and result preview), also kept in its history.",
        json!({
            "type": "object",
            "properties": {"taskId": {"type": "string", "description": "The task's id."}},
            "required": ["taskId"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["cron", "trigger", "run", "now", "execute", "fire", "manual"])
}

/// A task's runs, newest first.
pub(crate) fn runs_query(
    scope: &RecordScope,
    task_id: &str,
    limit: u32,
    offset: u32,
) -> RecordQuery {
    RecordQuery {
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        collection: RUNS.to_owned(),
        category: Some(task_id.to_owned()),
        order: RecordOrder::Newest,
        limit,
        offset,
        ..RecordQuery::default()
    }
}

pub(crate) async fn history(call: Call<'_>) -> Result<Value, Fail> {
    let id = id_arg(&call.args, "taskId")?;
    let task = existing(call.records, &call.scope, id).await?;
    let limit = crate::utilities::opt_int(&call.args, "limit", 10, 1, 50)?;
    let offset = crate::utilities::opt_int(&call.args, "offset", 0, 0, 100_000)?;
    let runs = call
        .records
        .query(&runs_query(
            &call.scope,
            id,
            u32::try_from(limit).unwrap_or(10),
            u32::try_from(offset).unwrap_or(0),
        ))
        .await?;
    let runs: Vec<Value> = runs.iter().map(|h| h.record.document.clone()).collect();
    Ok(json!({
        "taskId": id,
        "name": task.document.get("name"),
        "count": runs.len(),
        "runs": runs,
    }))
}

pub(crate) async fn trigger(
    deps: &Deps,
    scope: RecordScope,
    args: &Value,
    now: DateTime<Utc>,
) -> Result<Value, Fail> {
    let id = id_arg(args, "taskId")?;
    let task = existing(deps.records.as_ref(), &scope, id).await?;
    let run = run_task(deps, &task, Trigger::Manual, None, now).await?;
    let success = run.get("status").is_some_and(|s| s == "success");
    Ok(json!({"success": success, "run": run}))
}

/// Runs `task` now (`now` by the scheduler's clock) and records the run; the run as
/// recorded. `scheduled_for` is the time it was due (none for a manual run).
pub(crate) async fn run_task(
    deps: &Deps,
    task: &DataRecord,
    trigger: Trigger,
    scheduled_for: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<Value, Fail> {
    run_task_as(deps, task, trigger, scheduled_for, now, new_id("run")).await
}

/// [`run_task`] recording the run under `run_id` (a scheduled run's, the id of its lease).
pub(crate) async fn run_task_as(
    deps: &Deps,
    task: &DataRecord,
    trigger: Trigger,
    scheduled_for: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    run_id: String,
) -> Result<Value, Fail> {
    let tool = task
        .document
        .get("tool")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let args = task
        .document
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let agent = (!task.agent.is_empty()).then_some(task.agent.as_str());
    let started = Instant::now();
    let stopped = agent_gone(deps, task).await;
    let (status, error, result) = if let Some(why) = &stopped {
        ("denied".to_owned(), Some(why.clone()), Value::Null)
    } else if is_scheduler_tool(&tool) {
        (
            "denied".to_owned(),
            Some(format!(
                "a scheduled task cannot call the scheduler tool '{tool}'"
            )),
            Value::Null,
        )
    } else {
        let res = deps.caller.call(&tool, args, &task.owner, agent).await;
        if res.is_error {
            let kind = res
                .error_kind()
                .map_or_else(|| "execution_error".to_owned(), |k| k.to_string());
            let message = res
                .error_message()
                .map_or_else(|| res.content_text(), str::to_owned);
            (kind, Some(message), Value::Null)
        } else {
            ("success".to_owned(), None, preview(&res.content))
        }
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let run = json!({
        "runId": run_id,
        "taskId": task.id,
        "taskName": task.document.get("name"),
        "tool": tool,
        "trigger": trigger.as_str(),
        "scheduledFor": scheduled_for,
        "startedAt": now,
        "durationMs": duration_ms,
        "status": status,
        "error": error,
        "result": result,
    });
    record(deps, task, &run, &status, now).await?;
    note_run(deps, task, &status, now, stopped.is_none()).await?;
    if let Some(why) = &stopped
        && why.contains(PAUSED_MARK)
    {
        pause(deps, task, why, now).await?;
    }
    Ok(run)
}

/// In what [`agent_gone`] says, the words that make the task paused.
const PAUSED_MARK: &str = "the task is paused";

/// Why `task` may not run because the agent whose token made it has no token any more (its
/// token was revoked, or the agent removed), or `None` when it may. Such a task is paused; a
/// store that cannot answer refuses the run without pausing it.
async fn agent_gone(deps: &Deps, task: &DataRecord) -> Option<String> {
    if task.agent.is_empty() || task.document.get("agentToken") != Some(&json!(true)) {
        return None;
    }
    let agent: String = task.agent.chars().take(100).collect();
    match deps.caller.agent_has_token(&task.owner, &task.agent).await {
        Ok(true) => None,
        Ok(false) => Some(format!(
            "the agent '{agent}' that made this task has no API token any more (revoked, or \
             the agent removed), so its task no longer runs: {PAUSED_MARK}. A person can \
             resume it (enabled: true, as that agent with X-Toolsmith-Agent) once the agent \
             has a token again, or delete it"
        )),
        Err(why) => Some(format!(
            "whether the agent '{agent}' still has an API token could not be checked ({why}), \
             so the run did not happen; the next one tries again"
        )),
    }
}

/// Pauses `task` (`enabled: false`, no next run), saying why in `lastStatus`.
async fn pause(deps: &Deps, task: &DataRecord, why: &str, now: DateTime<Utc>) -> Result<(), Fail> {
    let Some(mut current) = deps
        .records
        .get(&task.scope(), super::COLLECTION, &task.id)
        .await?
    else {
        return Ok(());
    };
    if let Value::Object(doc) = &mut current.document {
        doc.insert("enabled".to_owned(), json!(false));
        doc.insert("lastStatus".to_owned(), json!(format!("paused: {why}")));
    }
    current.at = None;
    current.kind = Some("paused".to_owned());
    current.updated_at = now;
    deps.records.update(current).await?;
    Ok(())
}

/// Records a run that did not happen: a missed run skipped under `missedRuns: skip`.
pub(crate) async fn record_skipped(
    deps: &Deps,
    task: &DataRecord,
    scheduled_for: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), Fail> {
    let run = json!({
        "runId": new_id("run"),
        "taskId": task.id,
        "taskName": task.document.get("name"),
        "tool": task.document.get("tool"),
        "trigger": Trigger::Missed.as_str(),
        "scheduledFor": scheduled_for,
        "startedAt": now,
        "durationMs": 0,
        "status": "skipped",
        "error": "the server was not running at the scheduled time, and the task's missedRuns is \"skip\"",
        "result": Value::Null,
    });
    record(deps, task, &run, "skipped", now).await?;
    note_run(deps, task, "skipped", now, false).await
}

/// Records a claimed run that never finished: its instance stopped (or could not record it)
/// before its lease ran out. `lease` is the run's lease (see [`super::engine`]); the run keeps
/// its id, and is not run again.
pub(crate) async fn record_lost(
    deps: &Deps,
    lease: &DataRecord,
    now: DateTime<Utc>,
) -> Result<(), Fail> {
    let doc = &lease.document;
    let field = |key: &str| doc.get(key).cloned().unwrap_or(Value::Null);
    let started = field("startedAt");
    let run = json!({
        "runId": doc.get("runId").and_then(Value::as_str).map_or_else(|| new_id("run"), str::to_owned),
        "taskId": field("taskId"),
        "taskName": field("taskName"),
        "tool": field("tool"),
        "trigger": field("trigger"),
        "scheduledFor": field("scheduledFor"),
        "startedAt": started,
        "durationMs": 0,
        "status": "lost",
        "error": format!(
            "this run started at {} but never finished: the server running it stopped (or could \
             not record it) before it ended, so whether the tool did its work is unknown — check \
             its effects; the run is not repeated, and the task runs again at its next time",
            started.as_str().unwrap_or("?")
        ),
        "result": Value::Null,
    });
    let task = DataRecord {
        id: doc
            .get("taskId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        ..lease.clone()
    };
    record(deps, &task, &run, "lost", now).await?;
    note_run(deps, &task, "lost", now, false).await
}

/// Sets the task's `lastRunAt`, `lastStatus` and (for a run that happened) `runCount`. Never
/// moves its next run: while it has one, the change is made only if that is still the one
/// read (a claim by the scheduler meanwhile wins, and this note is dropped: the history has
/// the run).
async fn note_run(
    deps: &Deps,
    task: &DataRecord,
    status: &str,
    now: DateTime<Utc>,
    ran: bool,
) -> Result<(), Fail> {
    let Some(mut current) = deps
        .records
        .get(&task.scope(), super::COLLECTION, &task.id)
        .await?
    else {
        return Ok(());
    };
    if let Value::Object(doc) = &mut current.document {
        doc.insert("lastRunAt".to_owned(), json!(now));
        doc.insert("lastStatus".to_owned(), json!(status));
        if ran {
            let count = doc.get("runCount").and_then(Value::as_u64).unwrap_or(0);
            doc.insert("runCount".to_owned(), json!(count + 1));
        }
    }
    current.updated_at = now;
    match current.at {
        Some(at) => {
            deps.records.claim(current, at).await?;
        }
        None => {
            deps.records.update(current).await?;
        }
    }
    Ok(())
}

/// Stores `run` in the task's history and drops its runs past [`KEPT_RUNS`].
async fn record(
    deps: &Deps,
    task: &DataRecord,
    run: &Value,
    status: &str,
    now: DateTime<Utc>,
) -> Result<(), Fail> {
    let record = DataRecord {
        collection: RUNS.to_owned(),
        id: run["runId"].as_str().unwrap_or_default().to_owned(),
        owner: task.owner.clone(),
        agent: task.agent.clone(),
        document: run.clone(),
        search_text: String::new(),
        dedup_key: None,
        kind: Some(status.to_owned()),
        category: Some(task.id.clone()),
        weight: run["durationMs"].as_f64().unwrap_or(0.0),
        at: Some(now),
        tags: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    deps.records.put(record).await?;
    let scope = task.scope();
    let old = deps
        .records
        .query(&runs_query(&scope, &task.id, 100, KEPT_RUNS))
        .await?;
    for hit in old {
        deps.records.delete(&scope, RUNS, &hit.record.id).await?;
    }
    Ok(())
}

/// At most [`RESULT_PREVIEW_BYTES`] of a result: the value itself when its JSON is that
/// short, else the start of its JSON text.
fn preview(content: &Value) -> Value {
    let text = content.to_string();
    if text.len() <= RESULT_PREVIEW_BYTES {
        return content.clone();
    }
    let mut end = RESULT_PREVIEW_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    json!(format!("{}…", text.get(..end).unwrap_or_default()))
}
