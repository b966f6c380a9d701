//! A task as a record (`schedule` collection) and the tools that manage it:
//! `create_scheduled_task`, `list_scheduled_tasks`, `update_scheduled_task`,
//! `delete_scheduled_task`; also the executor of the family's tools that need the server
//! ([`tool`]: creating and changing a task checks its tool, triggering runs it).
//!
//! A task record: `document` holds `{name, description, tool, arguments, schedule, timezone,
//! enabled, missedRuns, runCount, lastRunAt, lastStatus}`, `at` its next run, `kind` its
//! status (`active`, `paused`, `finished`).

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use toolsmith_core::data::{DataRecord, PutOutcome, RecordOrder, RecordQuery, RecordScope};
use toolsmith_core::{
    ErrorKind, PermissionSet, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor, ToolResult,
};

use super::when::When;
use super::{COLLECTION, Deps, MAX_TASKS, RUNS, TaskCaller, is_scheduler_tool};
use crate::BuiltinEnv;
use crate::data::{Call, DataError, Records, id_arg, new_id};
use crate::utilities::Fail;

/// Longest task name, in bytes.
const MAX_NAME_BYTES: usize = 200;
/// Longest description, in bytes.
const MAX_DESCRIPTION_BYTES: usize = 2000;

/// What a missed run (the server was down at its time) becomes.
pub const MISSED_RUNS: &[&str] = &["skip", "run_once"];

/// The family's tools that need the server, not only the record store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Create,
    Update,
    Trigger,
    Cron,
}

impl Op {
    /// Whether the call makes, changes or runs tasks (`cron`: by its `action`).
    fn changes_tasks(self, args: &Value) -> bool {
        match self {
            Op::Create | Op::Update | Op::Trigger => true,
            Op::Cron => !matches!(
                args.get("action").and_then(Value::as_str),
                Some("list" | "history" | "remove")
            ),
        }
    }
}

/// Why a scheduled run (or a tool it called) may not make, change or trigger tasks.
pub(crate) const FROM_A_RUN: &str = "a scheduled task's run cannot create, change or trigger \
     scheduled tasks (tasks that make tasks would multiply without end): schedule the tasks \
     you need yourself, outside a scheduled run; listing, reading history and deleting still work";

struct ScheduleExecutor {
    records: Option<Arc<dyn Records>>,
    caller: Option<Arc<dyn TaskCaller>>,
    op: Op,
}

#[async_trait]
impl ToolExecutor for ScheduleExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let (Some(records), Some(caller)) = (self.records.clone(), self.caller.clone()) else {
            return ToolResult::error(
                ErrorKind::ExecutionError,
                "this server runs no scheduled tasks: it was started without a record store \
                 or a way to call tools for built-ins (an embedder must set BuiltinEnv::data \
                 and BuiltinEnv::tasks; `toolsmith serve` always does)",
            );
        };
        if ctx.scheduled_run && self.op.changes_tasks(&args) {
            return ToolResult::error(ErrorKind::Denied, FROM_A_RUN);
        }
        let deps = Deps { records, caller };
        let scope = RecordScope::new(ctx.user_id.clone(), ctx.agent_id.as_deref());
        let now = Utc::now();
        let outcome = match self.op {
            Op::Create => create(&deps, scope, &args, now, agent_token(ctx)).await,
            Op::Update => update(&deps, scope, &args, now).await,
            Op::Trigger => super::runs::trigger(&deps, scope, &args, now).await,
            Op::Cron => super::cron_tool::run(&deps, scope, ctx, args, now).await,
        };
        match outcome {
            Ok(content) => ToolResult::ok(content),
            Err(Fail::Args(message)) => ToolResult::error(ErrorKind::InvalidArguments, message),
            Err(Fail::Run(message)) => ToolResult::error(ErrorKind::ExecutionError, message),
        }
    }
}

/// A tool of the family that needs the server's [`TaskCaller`].
pub(crate) fn tool(
    env: &BuiltinEnv,
    caller: Option<Arc<dyn TaskCaller>>,
    definition: ToolDefinition,
    op: Op,
) -> RegisteredTool {
    crate::builtin_tool(
        definition,
        super::CATEGORY,
        PermissionSet::new(),
        Arc::new(ScheduleExecutor {
            records: env.data.clone(),
            caller,
            op,
        }),
    )
}

fn task_properties() -> Value {
    json!({
        "name": {"type": "string", "description": "A short name, e.g. \"Morning news digest\"."},
        "schedule": {"type": "string", "description": "A 5-field cron expression in the task's time zone (\"0 9 * * 1-5\": 9:00 on weekdays; \"*/15 * * * *\": every 15 minutes; \"@daily\") or one time in ISO 8601 (\"2026-12-01T09:00\") for a one-off."},
        "timezone": {"type": "string", "description": "IANA time zone the schedule is read in, e.g. \"Europe/Paris\" (default UTC)."},
        "tool": {"type": "string", "description": "The tool each run calls (any tool you can call except the scheduler's own)."},
        "arguments": {"type": "object", "description": "The arguments each run passes to the tool."},
        "description": {"type": "string", "description": "What the task is for."},
        "enabled": {"type": "boolean", "default": true, "description": "false: kept but paused."},
        "missedRuns": {"type": "string", "enum": MISSED_RUNS, "default": "skip", "description": "When the server was down at a run's time: skip (default: that run is left out) or run_once (one run when it is back, however many were missed)."}
    })
}

pub fn create_definition() -> ToolDefinition {
    ToolDefinition::new(
        "create_scheduled_task",
        "Schedule a tool call: run `tool` with `arguments` on a cron schedule (\"0 9 * * 1-5\") \
         or once at a time (\"2026-12-01T09:00\"), in a time zone. The server runs it as you, \
         with your permissions. Use it for recurring reports and automation; it reminds no one \
         by itself (a reminder to keep is add_task). Returns the task with its id and when it first runs (nextRunAt).",
        json!({
            "type": "object",
            "properties": task_properties(),
            "required": ["name", "schedule", "tool"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "schedule",
        "scheduled",
        "cron",
        "recurring",
        "remind",
        "reminder",
        "automation",
        "automate",
        "timer",
        "every",
        "daily",
        "weekly",
        "later",
        "periodic",
        "job",
        "every morning",
        "run a tool",
    ])
}

pub fn update_definition() -> ToolDefinition {
    let mut props = task_properties();
    if let Value::Object(map) = &mut props {
        map.insert(
            "taskId".to_owned(),
            json!({"type": "string", "description": "The task's id (from list_scheduled_tasks)."}),
        );
    }
    ToolDefinition::new(
        "update_scheduled_task",
        "Change a scheduled task: its schedule, time zone, tool, arguments, name, description, \
         missedRuns, or pause and resume it (enabled). Only the fields given change.",
        json!({"type": "object", "properties": props, "required": ["taskId"], "additionalProperties": false}),
    )
    .with_tags(&["cron", "update", "change", "pause", "resume", "edit", "reschedule", "recurring", "job"])
}

pub fn list_definition() -> ToolDefinition {
    ToolDefinition::new(
        "list_scheduled_tasks",
        "List your scheduled tasks, soonest first: each one's cron or time, tool, when it \
         runs again, when it last ran and how that went.",
        json!({
            "type": "object",
            "properties": {
                "status": {"type": "string", "enum": ["active", "paused", "finished"], "description": "Only tasks in this status: active (runs at its times), paused (kept, runs nothing until resumed), finished (a one-off that ran)."},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 20, "description": "How many tasks to return at most."},
                "offset": {"type": "integer", "minimum": 0, "maximum": 100_000, "default": 0, "description": "How many tasks to skip (for the next page)."}
            },
            "additionalProperties": false
        }),
    )
    .with_tags(&["cron", "list", "tasks", "jobs", "reminders", "automation", "upcoming"])
}

pub fn delete_definition() -> ToolDefinition {
    ToolDefinition::new(
        "delete_scheduled_task",
        "Delete a scheduled task and its run history; it never runs again.",
        json!({
            "type": "object",
            "properties": {"taskId": {"type": "string", "description": "The task's id."}},
            "required": ["taskId"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["cron", "delete", "remove", "cancel", "stop", "unschedule"])
}

/// A task as the tools return it.
#[must_use]
pub fn view(record: &DataRecord) -> Value {
    let doc = &record.document;
    let field = |key: &str| doc.get(key).cloned().unwrap_or(Value::Null);
    json!({
        "id": record.id,
        "name": field("name"),
        "description": field("description"),
        "tool": field("tool"),
        "arguments": field("arguments"),
        "schedule": field("schedule"),
        "timezone": field("timezone"),
        "enabled": field("enabled"),
        "status": record.kind,
        "missedRuns": field("missedRuns"),
        "nextRunAt": record.at,
        "lastRunAt": field("lastRunAt"),
        "lastStatus": field("lastStatus"),
        "runCount": field("runCount"),
        "createdAt": record.created_at,
        "updatedAt": record.updated_at,
    })
}

/// The task's schedule as stored.
pub(crate) fn when_of(record: &DataRecord) -> Result<When, String> {
    let schedule = record
        .document
        .get("schedule")
        .and_then(Value::as_str)
        .unwrap_or("");
    let timezone = record.document.get("timezone").and_then(Value::as_str);
    When::parse(schedule, timezone)
}

/// Sets `record`'s next run (`at`) and status (`kind`) from its schedule and `enabled`.
fn plan(record: &mut DataRecord, when: &When, after: DateTime<Utc>) {
    let enabled = record.document.get("enabled").and_then(Value::as_bool) != Some(false);
    record.at = if enabled {
        when.next_after(after)
    } else {
        None
    };
    record.kind = Some(
        match (enabled, record.at) {
            (false, _) => "paused",
            (true, Some(_)) => "active",
            (true, None) => "finished",
        }
        .to_owned(),
    );
}

/// A string argument that, when given, is a non-empty string of at most `max` bytes.
fn text_arg(args: &Value, key: &str, max: usize) -> Result<Option<String>, Fail> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.trim().is_empty() && s.len() <= max => {
            Ok(Some(s.trim().to_owned()))
        }
        Some(_) => Err(Fail::Args(format!(
            "'{key}' must be a non-empty string of at most {max} bytes"
        ))),
    }
}

/// Copies the fields of `args` a task has onto `doc`, checking each; returns whether the
/// schedule (or its zone) changed.
async fn apply_fields(
    deps: &Deps,
    scope: &RecordScope,
    doc: &mut Map<String, Value>,
    args: &Value,
) -> Result<bool, Fail> {
    for (key, max) in [
        ("name", MAX_NAME_BYTES),
        ("description", MAX_DESCRIPTION_BYTES),
    ] {
        if let Some(value) = text_arg(args, key, max)? {
            doc.insert(key.to_owned(), json!(value));
        }
    }
    if let Some(tool) = text_arg(args, "tool", 200)? {
        check_tool(deps, scope, &tool).await?;
        doc.insert("tool".to_owned(), json!(tool));
    }
    match args.get("arguments") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            doc.insert("arguments".to_owned(), Value::Object(map.clone()));
        }
        Some(_) => {
            return Err(Fail::Args(
                "'arguments' must be an object: the arguments the tool is called with, e.g. \
                 {\"text\": \"hello\"}"
                    .into(),
            ));
        }
    }
    match args.get("enabled") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(on)) => {
            doc.insert("enabled".to_owned(), json!(on));
        }
        Some(_) => return Err(Fail::Args("'enabled' must be true or false".into())),
    }
    if let Some(missed) = text_arg(args, "missedRuns", 20)? {
        if !MISSED_RUNS.contains(&missed.as_str()) {
            return Err(Fail::Args(format!(
                "'missedRuns' must be \"skip\" (a run missed while the server was down is \
                 skipped) or \"run_once\" (it runs once when the server is back), not '{missed}'"
            )));
        }
        doc.insert("missedRuns".to_owned(), json!(missed));
    }
    let mut rescheduled = false;
    for key in ["schedule", "timezone"] {
        if let Some(value) = text_arg(args, key, 200)? {
            doc.insert(key.to_owned(), json!(value));
            rescheduled = true;
        }
    }
    Ok(rescheduled || args.get("enabled").is_some_and(Value::is_boolean))
}

/// Refuses a task's tool that is a scheduler tool, or one its owner cannot call now.
async fn check_tool(deps: &Deps, scope: &RecordScope, tool: &str) -> Result<(), Fail> {
    if is_scheduler_tool(tool) {
        return Err(Fail::Args(format!(
            "a scheduled task cannot call '{tool}' (a scheduler tool): tasks that schedule or \
             trigger tasks could run without end; schedule the tool that does the work"
        )));
    }
    let agent = (!scope.agent.is_empty()).then_some(scope.agent.as_str());
    deps.caller
        .check(tool, &scope.owner, agent)
        .await
        .map_err(Fail::Args)
}

/// Whether the call acts as an agent through a token bound to it (not an agent named by a
/// header, which only labels a person's call): such an agent's tasks run only while it keeps a
/// token ([`TaskCaller::agent_has_token`]).
pub(crate) fn agent_token(ctx: &ToolContext) -> bool {
    ctx.agent_id.is_some() && !ctx.agent_chosen_by_caller
}

pub(crate) async fn create(
    deps: &Deps,
    scope: RecordScope,
    args: &Value,
    now: DateTime<Utc>,
    agent_token: bool,
) -> Result<Value, Fail> {
    for key in ["name", "schedule", "tool"] {
        if text_arg(args, key, 200.max(MAX_NAME_BYTES))?.is_none() {
            return Err(Fail::Args(format!(
                "'{key}' is required: a task needs a name, a schedule (cron such as \"0 9 * * \
                 *\", or a time such as \"2026-12-01T09:00\") and the tool it calls"
            )));
        }
    }
    let mut doc = Map::new();
    doc.insert("description".to_owned(), json!(""));
    doc.insert("arguments".to_owned(), json!({}));
    doc.insert("timezone".to_owned(), json!("UTC"));
    doc.insert("enabled".to_owned(), json!(true));
    doc.insert("missedRuns".to_owned(), json!("skip"));
    doc.insert("runCount".to_owned(), json!(0));
    doc.insert("lastRunAt".to_owned(), Value::Null);
    doc.insert("lastStatus".to_owned(), Value::Null);
    if agent_token {
        // Made by an agent's own token: the task stops when the agent has none left.
        doc.insert("agentToken".to_owned(), json!(true));
    }
    apply_fields(deps, &scope, &mut doc, args).await?;
    let mut record = DataRecord {
        collection: COLLECTION.to_owned(),
        id: new_id("task"),
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        document: Value::Object(doc),
        search_text: String::new(),
        dedup_key: None,
        kind: None,
        category: None,
        weight: 0.0,
        at: None,
        tags: Vec::new(),
        created_at: now,
        updated_at: now,
    };
    let when = when_of(&record).map_err(Fail::Args)?;
    plan(&mut record, &when, now);
    if record.at.is_none() && record.kind.as_deref() == Some("finished") {
        return Err(Fail::Args(format!(
            "'schedule' {} is in the past (it is now {}): give a future time, or a cron \
             expression for a repeating task",
            record.document.get("schedule").unwrap_or(&Value::Null),
            now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        )));
    }
    record.search_text = search_text(&record.document);
    // Counted across all the user's agents inside the insert's transaction, so neither agents
    // (any header value) nor concurrent creates get past it.
    let put = match deps.records.put_within(record, MAX_TASKS).await {
        Err(DataError::Limit { limit, .. }) => {
            return Err(Fail::Args(format!(
                "you have {limit} scheduled tasks across all your agents, the most allowed: \
                 delete ones you no longer need with delete_scheduled_task (a person sees every \
                 agent's tasks in GET /api/v1/scheduled-tasks)"
            )));
        }
        other => other?,
    };
    match put {
        PutOutcome::Inserted(stored) | PutOutcome::Duplicate(stored) => Ok(json!({
            "success": true,
            "task": view(&stored),
            "message": message_for(&stored),
        })),
    }
}

/// "Next run at …" for a reply.
fn message_for(record: &DataRecord) -> String {
    match (record.kind.as_deref(), record.at) {
        (Some("paused"), _) => "the task is paused; enable it to run it on schedule".to_owned(),
        (_, Some(at)) => format!(
            "next run at {}",
            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        ),
        _ => "the task will not run again".to_owned(),
    }
}

fn search_text(doc: &Value) -> String {
    ["name", "description", "tool"]
        .iter()
        .filter_map(|k| doc.get(*k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The task `id` of the caller's scope, or an error that says how to find ids.
pub(crate) async fn existing(
    records: &dyn Records,
    scope: &RecordScope,
    id: &str,
) -> Result<DataRecord, Fail> {
    records.get(scope, COLLECTION, id).await?.ok_or_else(|| {
        Fail::Args(format!(
            "no scheduled task with id '{}' of yours: find ids with list_scheduled_tasks",
            id.chars().take(100).collect::<String>()
        ))
    })
}

pub(crate) async fn update(
    deps: &Deps,
    scope: RecordScope,
    args: &Value,
    now: DateTime<Utc>,
) -> Result<Value, Fail> {
    let id = id_arg(args, "taskId")?;
    let mut record = existing(deps.records.as_ref(), &scope, id).await?;
    let mut doc = match record.document.clone() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let replan = apply_fields(deps, &scope, &mut doc, args).await?;
    record.document = Value::Object(doc);
    if replan {
        let when = when_of(&record).map_err(Fail::Args)?;
        plan(&mut record, &when, now);
    }
    record.search_text = search_text(&record.document);
    record.updated_at = now;
    let stored = deps.records.update(record).await?.ok_or_else(|| {
        Fail::Args(format!(
            "the scheduled task '{id}' was deleted meanwhile: create it again"
        ))
    })?;
    Ok(json!({"success": true, "task": view(&stored), "message": message_for(&stored)}))
}

pub(crate) async fn list(call: Call<'_>) -> Result<Value, Fail> {
    let status = match call.args.get("status").and_then(Value::as_str) {
        None => None,
        Some(s @ ("active" | "paused" | "finished")) => Some(s.to_owned()),
        Some(other) => {
            return Err(Fail::Args(format!(
                "'status' must be \"active\", \"paused\" or \"finished\", not '{}'",
                other.chars().take(40).collect::<String>()
            )));
        }
    };
    let limit = crate::utilities::opt_int(&call.args, "limit", 20, 1, 50)?;
    let offset = crate::utilities::opt_int(&call.args, "offset", 0, 0, 100_000)?;
    let query = RecordQuery {
        owner: call.scope.owner.clone(),
        agent: call.scope.agent.clone(),
        collection: COLLECTION.to_owned(),
        kind: status,
        order: RecordOrder::At,
        limit: u32::try_from(limit).unwrap_or(20),
        offset: u32::try_from(offset).unwrap_or(0),
        ..RecordQuery::default()
    };
    let hits = call.records.query(&query).await?;
    let total = call.records.stats(&call.scope, COLLECTION).await?.total;
    let tasks: Vec<Value> = hits.iter().map(|h| view(&h.record)).collect();
    Ok(json!({"count": tasks.len(), "total": total, "tasks": tasks}))
}

pub(crate) async fn delete(call: Call<'_>) -> Result<Value, Fail> {
    let id = id_arg(&call.args, "taskId")?;
    existing(call.records, &call.scope, id).await?;
    call.records.delete(&call.scope, COLLECTION, id).await?;
    // Its history goes with it.
    let mut removed_runs = 0;
    loop {
        let runs = call
            .records
            .query(&super::runs::runs_query(&call.scope, id, 100, 0))
            .await?;
        let before = removed_runs;
        for run in &runs {
            if call
                .records
                .delete(&call.scope, RUNS, &run.record.id)
                .await?
            {
                removed_runs += 1;
            }
        }
        if runs.is_empty() || removed_runs == before {
            break;
        }
    }
    Ok(json!({"success": true, "deleted": true, "taskId": id, "deletedRuns": removed_runs}))
}
