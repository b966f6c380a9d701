//! The scheduled tasks as people reach them outside tool calls (REST, the web UI): the same
//! operations, checks and replies as the family's tools, on the caller's own tasks.
//!
//! A task made or changed here is checked as a tool call would check it (its tool must exist
//! and be callable by the owner); a manual run goes through the full pipeline as the owner.
//! While the `scheduler` group is off, tasks can still be read, written and deleted (a person
//! tidying their automation), but none runs: not on schedule, and not by [`TaskOp::Trigger`].

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use toolsmith_core::data::RecordScope;
use toolsmith_core::object;
use toolsmith_core::schema::CompiledSchema;
use toolsmith_core::{ToolContext, ToolDefinition};

use super::{Deps, TaskCaller, runs, tasks};
use crate::data::{Call, Records};
use crate::utilities::Fail;

/// One operation on a caller's scheduled tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskOp<'a> {
    /// The tasks `list_scheduled_tasks`'s arguments select (`status`, `limit`, `offset`).
    List,
    Get(&'a str),
    /// A new task from `create_scheduled_task`'s arguments.
    Create,
    /// The fields of `update_scheduled_task`'s arguments changed on the task.
    Update(&'a str),
    /// The task and its history.
    Delete(&'a str),
    /// A page of its runs (`limit`, `offset`), newest first.
    History(&'a str),
    /// Runs it now, once.
    Trigger(&'a str),
}

/// What a [`run`] needs of the server.
#[derive(Debug, Clone)]
pub struct TaskApi {
    records: Arc<dyn Records>,
    caller: Arc<dyn TaskCaller>,
}

/// Why an operation did not happen.
#[derive(Debug)]
pub enum TaskApiError {
    /// No task with that id among the caller's.
    NotFound(String),
    /// The scheduler group is off, so no task runs.
    Off(String),
    /// The operation's own answer (bad arguments named, a store failure).
    Fail(Fail),
}

impl From<Fail> for TaskApiError {
    fn from(fail: Fail) -> Self {
        TaskApiError::Fail(fail)
    }
}

impl TaskApi {
    #[must_use]
    pub fn new(records: Arc<dyn Records>, caller: Arc<dyn TaskCaller>) -> TaskApi {
        TaskApi { records, caller }
    }

    /// Runs `op` on `scope`'s tasks with `body` as the tool's arguments; the reply is what
    /// the tool replies.
    pub async fn run(
        &self,
        scope: RecordScope,
        ctx: &ToolContext,
        op: TaskOp<'_>,
        body: &Value,
        now: DateTime<Utc>,
    ) -> Result<Value, TaskApiError> {
        let id = match op {
            TaskOp::List | TaskOp::Create => None,
            TaskOp::Get(id)
            | TaskOp::Update(id)
            | TaskOp::Delete(id)
            | TaskOp::History(id)
            | TaskOp::Trigger(id) => Some(id),
        };
        let mut args = body.clone();
        let mut found = None;
        if let Some(id) = id {
            let Ok(task) = tasks::existing(self.records.as_ref(), &scope, id).await else {
                return Err(TaskApiError::NotFound(format!(
                    "no scheduled task with id '{}' among yours",
                    id.chars().take(100).collect::<String>()
                )));
            };
            found = Some(task);
            match &mut args {
                Value::Object(map) => {
                    map.insert("taskId".to_owned(), json!(id));
                }
                _ => args = json!({"taskId": id}),
            }
        }
        if let Some(definition) = definition_of(op) {
            check_args(&definition, &args)?;
        }
        let deps = Deps {
            records: self.records.clone(),
            caller: self.caller.clone(),
        };
        let call = |args: Value| Call {
            records: self.records.as_ref(),
            scope: scope.clone(),
            ctx,
            args,
        };
        Ok(match op {
            TaskOp::List => tasks::list(call(args)).await?,
            TaskOp::Get(_) => json!({"task": found.as_ref().map(tasks::view)}),
            TaskOp::Create => {
                tasks::create(&deps, scope.clone(), &args, now, tasks::agent_token(ctx)).await?
            }
            TaskOp::Update(_) => tasks::update(&deps, scope.clone(), &args, now).await?,
            TaskOp::Delete(_) => tasks::delete(call(args)).await?,
            TaskOp::History(_) => runs::history(call(args)).await?,
            TaskOp::Trigger(_) => {
                if !self.caller.scheduling_enabled() {
                    return Err(TaskApiError::Off(format!(
                        "the '{group}' tool group is off, so no scheduled task runs: an admin \
                         switches it on (PUT /api/v1/tool-groups/{group} with \
                         {{\"enabled\": true}}, or `toolsmith serve --enable-group {group}`)",
                        group = super::GROUP
                    )));
                }
                runs::trigger(&deps, scope.clone(), &args, now).await?
            }
        })
    }
}

/// The page `args` (`list_scheduled_tasks`'s arguments: `status`, `limit`, `offset`) selects
/// of `tasks`, one owner's tasks made as every agent (or as none), each shown with its
/// `agent` (`null` for the person's own): what a person and an admin see of an owner's
/// automation ([`TaskOp::List`] shows one agent's).
pub fn every_agents_tasks(
    tasks: &[toolsmith_core::data::DataRecord],
    args: &Value,
) -> Result<Value, TaskApiError> {
    check_args(&tasks::list_definition(), args)?;
    let status = args.get("status").and_then(Value::as_str);
    let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(20);
    let offset = args.get("offset").and_then(Value::as_u64).unwrap_or(0);
    let selected: Vec<&toolsmith_core::data::DataRecord> = tasks
        .iter()
        .filter(|t| status.is_none_or(|s| t.kind.as_deref() == Some(s)))
        .collect();
    let page: Vec<Value> = selected
        .iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(usize::try_from(limit).unwrap_or(20))
        .map(|t| {
            let mut view = tasks::view(t);
            object::set(
                &mut view,
                "agent",
                if t.agent.is_empty() {
                    Value::Null
                } else {
                    json!(t.agent)
                },
            );
            view
        })
        .collect();
    Ok(json!({"count": page.len(), "total": selected.len(), "tasks": page}))
}

/// The tool whose arguments `op` takes, to check them as a tool call's are checked.
fn definition_of(op: TaskOp<'_>) -> Option<ToolDefinition> {
    match op {
        TaskOp::List => Some(tasks::list_definition()),
        TaskOp::Create => Some(tasks::create_definition()),
        TaskOp::Update(_) => Some(tasks::update_definition()),
        TaskOp::History(_) => Some(runs::history_definition()),
        TaskOp::Get(_) | TaskOp::Delete(_) | TaskOp::Trigger(_) => None,
    }
}

/// `args` against `definition`'s parameters, with the message a tool call would get.
fn check_args(definition: &ToolDefinition, args: &Value) -> Result<(), Fail> {
    let schema = CompiledSchema::compile(&definition.parameters)
        .map_err(|e| Fail::Run(format!("the {} schema: {e}", definition.name)))?;
    schema
        .check_call(&definition.name, args, |_| None)
        .map_err(|refused| {
            let message = refused
                .content
                .get("error")
                .and_then(Value::as_str)
                .map_or_else(|| refused.content.to_string(), str::to_owned);
            Fail::Args(message)
        })
}
