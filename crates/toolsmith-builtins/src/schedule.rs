//! The scheduler tools (003 §19 "Scheduler", 001's `cron` in the `automation` group): a
//! scheduled task is a call of one tool, with fixed arguments, on a cron schedule or at one
//! time, made by the server itself as the task's owner (and agent) through the full pipeline —
//! policy, approval, limits, scrubbing, usage — exactly as if the owner had made it.
//!
//! Tasks live in the `schedule` collection of the per-user record store, their runs in
//! `schedule_run`; a task record's `at` is its next run (none while paused or once a one-off
//! ran), which is what the server's [`engine::Scheduler`] looks for.
//!
//! - [`when`] — the schedule: cron (croner) or one ISO time, in an IANA time zone.
//! - [`tasks`] — `create_scheduled_task`, `list_scheduled_tasks`, `update_scheduled_task`,
//!   `delete_scheduled_task`.
//! - [`runs`] — running a task and its history: `get_task_history`, `trigger_task`.
//! - [`engine`] — the loop that runs due tasks, exactly once across processes.
//! - [`cron_tool`] — 001's `cron`, one tool with an `action` for all of the above.
//! - [`api`] — the same operations for REST (`/api/v1/scheduled-tasks`).
//!
//! A task cannot call a scheduler tool (a task that triggers tasks could loop forever); its
//! tool must exist and be callable by its owner when it is created, and a run whose tool was
//! since denied, disabled or deleted records the refusal in the history.

pub mod api;
pub mod cron_tool;
pub mod engine;
pub mod runs;
pub mod tasks;
pub mod when;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{RegisteredTool, ToolResult};

use crate::BuiltinEnv;
use crate::data::data_tool;
use crate::groups::{ToolGroup, off};
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Scheduler";
/// The record store's collection of tasks.
pub const COLLECTION: &str = "schedule";
/// The record store's collection of runs (history).
pub const RUNS: &str = "schedule_run";
/// Most tasks one user has, across all their agents.
pub const MAX_TASKS: u64 = 100;
/// Runs kept per task; older ones are deleted as new ones are recorded.
pub const KEPT_RUNS: u32 = 100;
/// Whether `tool` is one of this family's (a task may not call them): the `scheduler`
/// group's tools.
#[must_use]
pub fn is_scheduler_tool(tool: &str) -> bool {
    crate::groups::group_of(tool).is_some_and(|group| group.id == GROUP)
}

/// The tool group of this family.
pub const GROUP: &str = "scheduler";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    aliases: &["automation"],
    ..off(
        GROUP,
        "Scheduler",
        "Scheduled tasks: tool calls the server makes on a cron schedule or at one time, as their owner; their history; trigger one now.",
        "runs tools on its own schedule, with no one watching",
        ResultSource::External,
        &[
            "create_scheduled_task",
            "list_scheduled_tasks",
            "update_scheduled_task",
            "delete_scheduled_task",
            "get_task_history",
            "trigger_task",
            "cron",
        ],
    )
}];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (Effect::Reads, &["list_scheduled_tasks", "get_task_history"]),
    (Effect::Adds, &["create_scheduled_task"]),
    (Effect::Changes, &["update_scheduled_task"]),
    (Effect::Deletes, &["delete_scheduled_task"]),
    (Effect::Runs, &["trigger_task", "cron"]),
];

/// How the scheduler reaches the rest of the server: a task's tool called as its owner.
#[async_trait]
pub trait TaskCaller: Send + Sync + std::fmt::Debug {
    /// Whether `owner` (as `agent`) may call `tool` now: `Err` says why not, in words a model
    /// can act on.
    async fn check(&self, tool: &str, owner: &str, agent: Option<&str>) -> Result<(), String>;
    /// Calls `tool` with `args` as `owner` (and `agent`) through the server's full pipeline.
    async fn call(&self, tool: &str, args: Value, owner: &str, agent: Option<&str>) -> ToolResult;
    /// Whether `owner` still has an API token bound to `agent` (an agent exists through its
    /// tokens: revoking its last one removes it). A task its agent's token made runs only while
    /// this holds. `Err` when it cannot be told (the store is unreachable).
    async fn agent_has_token(&self, owner: &str, agent: &str) -> Result<bool, String>;
    /// Whether the `scheduler` group is on: while it is off, no task runs (due tasks wait,
    /// and count as missed if they are late when it is switched back on).
    fn scheduling_enabled(&self) -> bool;
}

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let caller = env.tasks.clone();
    vec![
        tasks::tool(
            env,
            caller.clone(),
            tasks::create_definition(),
            tasks::Op::Create,
        ),
        data_tool(env, CATEGORY, tasks::list_definition(), |c| {
            Box::pin(tasks::list(c))
        }),
        tasks::tool(
            env,
            caller.clone(),
            tasks::update_definition(),
            tasks::Op::Update,
        ),
        data_tool(env, CATEGORY, tasks::delete_definition(), |c| {
            Box::pin(tasks::delete(c))
        }),
        data_tool(env, CATEGORY, runs::history_definition(), |c| {
            Box::pin(runs::history(c))
        }),
        tasks::tool(
            env,
            caller.clone(),
            runs::trigger_definition(),
            tasks::Op::Trigger,
        ),
        tasks::tool(env, caller, cron_tool::definition(), tasks::Op::Cron),
    ]
}

/// A task's tool and what it needs to run, shared by the tools and the engine.
#[derive(Clone)]
pub(crate) struct Deps {
    pub records: Arc<dyn crate::data::Records>,
    pub caller: Arc<dyn TaskCaller>,
}
