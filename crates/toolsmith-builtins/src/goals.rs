//! Goals (003 §22): long-term objectives with a priority (1–10), a due date, a progress
//! (0–100) and a status lifecycle, in a hierarchy (a sub-goal names its parent with
//! `parentId`), broken into ordered steps. Two families of the personal-data design
//! ([`crate::personal::Family`], run by its shared operations): goals (collection `goal`) and
//! their steps (collection `goal_step`), so REST, export and erasure see them like the rest.
//!
//! Indexed: a goal's status as `kind`, its parent's id as `category` (the sub-goals of a goal
//! are one query), its priority as `weight`, its due date as `at`; a step's status as `kind`,
//! its goal's id as `category`, its position as `weight` (negated: the first step sorts first).
//!
//! - [`lifecycle`] — the rules a goal's changes follow: the status transitions, the parent
//!   (one of the caller's goals, never a descendant), the progress that follows the steps.
//! - [`steps`] — `decompose_goal`, `complete_step` and the steps' own rules.
//! - [`report`] — `get_next_actions`, `get_goal_details`, `goal_stats`.

pub mod lifecycle;
pub mod report;
pub mod steps;

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, on};
use serde_json::{Map, Value};
use toolsmith_core::RegisteredTool;
use toolsmith_core::ResultSource;
use toolsmith_core::data::RecordOrder;
use toolsmith_core::model::Effect;

use crate::personal::fields::{Field, FieldKind};
use crate::personal::rules::Rules;
use crate::personal::{BY_CREATED, BY_UPDATED, Family, Index, Op, Sort, ToolSpec, Weight, ops};

/// A goal's statuses; `active` when created.
pub const STATUSES: &[&str] = &["active", "paused", "completed", "abandoned"];
/// A step's statuses; `pending` when added.
pub const STEP_STATUSES: &[&str] = &["pending", "completed"];
/// Most steps one goal has.
pub const MAX_STEPS: usize = 100;
/// Deepest a goal may sit under top-level goals (a sub-goal of a top-level goal is at 1).
pub const MAX_DEPTH: usize = 10;
/// Most active goals `get_next_actions` and `goal_stats` read.
pub const MAX_SCANNED: usize = 10_000;

static FIELDS: &[Field] = &[
    Field::new(
        "title",
        FieldKind::Text(500),
        "Clear, actionable goal title (e.g. \"Learn Spanish basics\").",
    )
    .required()
    .searched(),
    Field::new(
        "description",
        FieldKind::Text(5_000),
        "What success looks like.",
    )
    .searched(),
    Field::new(
        "priority",
        FieldKind::Int(1, 10),
        "Priority from 1 to 10 (10 = most important; default 5).",
    )
    .default("5"),
    Field::new(
        "dueDate",
        FieldKind::Time,
        "Target date in ISO format (YYYY-MM-DD, or a date and time).",
    ),
    Field::new(
        "parentId",
        FieldKind::Text(100),
        "The id of the parent goal (from list_goals): makes this a sub-goal of it.",
    ),
    Field::new(
        "status",
        FieldKind::Choice(STATUSES),
        "active, paused, completed or abandoned. Allowed moves: active → paused, completed or \
         abandoned; paused → active or abandoned; completed or abandoned → active (reopen).",
    )
    .default("active")
    .not_on_add(),
    Field::new(
        "progress",
        FieldKind::Int(0, 100),
        "Progress in percent (0–100). A goal with steps takes its progress from them.",
    )
    .default("0")
    .not_on_add(),
];

static RULES: Rules = Rules {
    list_limit: (10, 30),
    before_add: Some(|r, s, doc| Box::pin(lifecycle::before_add(r, s, doc))),
    before_change: Some(|r, s, old, doc| Box::pin(lifecycle::before_change(r, s, old, doc))),
    after_delete: Some(|r, s, goal| Box::pin(lifecycle::after_delete(r, s, goal))),
    ..Rules::new()
};

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[on(
    "goals",
    "Goals",
    "Long-term objectives with priorities, due dates and progress, in a hierarchy of sub-goals, broken into steps; what to work on next.",
    ResultSource::UserData,
    &[
        "create_goal",
        "list_goals",
        "update_goal",
        "decompose_goal",
        "get_next_actions",
        "complete_step",
        "get_goal_details",
        "goal_stats",
    ],
)];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &[
            "list_goals",
            "get_next_actions",
            "get_goal_details",
            "goal_stats",
        ],
    ),
    (Effect::Adds, &["create_goal", "decompose_goal"]),
    (Effect::Sets, &["complete_step"]),
    (Effect::Changes, &["update_goal"]),
];

pub static FAMILY: Family = Family {
    collection: "goal",
    plural: "goals",
    noun: "goal",
    category: "Goals",
    id_prefix: "goal",
    id_param: "goalId",
    one: "goal",
    many: "goals",
    batch_param: "goals",
    list_tool: "list_goals",
    fields: FIELDS,
    index: Index {
        kind: Some("status"),
        category: Some("parentId"),
        weight: Weight::Computed(priority),
        at: Some("dueDate"),
        tags: None,
    },
    range: None,
    sorts: &[
        Sort {
            name: "priority",
            order: RecordOrder::Weight,
            description: "most important first",
        },
        Sort {
            name: "dueDate",
            order: RecordOrder::At,
            description: "soonest due first, undated last",
        },
        BY_CREATED,
        BY_UPDATED,
    ],
    tools: TOOLS,
    dedup: None,
    check: None,
    rules: Some(&RULES),
};

/// A goal's priority as its weight.
fn priority(goal: &Map<String, Value>) -> f64 {
    goal.get("priority").and_then(Value::as_f64).unwrap_or(5.0)
}

pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "create_goal",
        op: Op::Add,
        description: "Create a new goal to track a long-term objective: when the user wants to \
         achieve or learn something, sets a target or a deadline, or starts a project. Priority \
         1-10 (10 = most important); a sub-goal names its parent with parentId.",
        tags: &[
            "goal",
            "objective",
            "aim",
            "target",
            "ambition",
            "resolution",
            "achieve",
            "want to",
            "learn",
            "this year",
            "plan",
            "create",
            "new",
        ],
    },
    ToolSpec {
        name: "list_goals",
        op: Op::List,
        description: "List the user's goals, optionally by status (active, paused, completed, \
         abandoned), parent goal or words in them; most important first by default.",
        tags: &["goal", "objective", "list", "show", "review", "my goals"],
    },
    ToolSpec {
        name: "update_goal",
        op: Op::Update,
        description: "Update a goal: its status (pause, complete, abandon, reopen), progress, \
         title, description, priority, due date or parent (null clears an optional field).",
        tags: &[
            "goal", "update", "progress", "pause", "abandon", "complete", "reopen", "edit",
        ],
    },
    ToolSpec {
        name: "decompose_goal",
        op: Op::Own(steps::decompose_schema, |c| Box::pin(steps::decompose(c))),
        description: "Break a goal down into ordered, actionable steps (added after its existing \
         ones); its progress then follows its steps.",
        tags: &[
            "goal",
            "break down",
            "break into steps",
            "decompose",
            "steps",
            "plan",
            "roadmap",
            "milestones",
            "split",
        ],
    },
    ToolSpec {
        name: "get_next_actions",
        op: Op::Own(report::next_actions_schema, |c| {
            Box::pin(report::next_actions(c))
        }),
        description: "What to work on next: the next pending step of each active goal, most \
         important goal first, then soonest due.",
        tags: &[
            "next",
            "next action",
            "what next",
            "work on next",
            "what should i do",
            "focus",
            "prioritize",
            "goal",
            "step",
        ],
    },
    ToolSpec {
        name: "complete_step",
        op: Op::Own(steps::complete_schema, |c| Box::pin(steps::complete(c))),
        description: "Mark a step of a goal as completed (optionally with notes on what was \
         done); the goal's progress follows.",
        tags: &[
            "step", "complete", "done", "finish", "goal", "progress", "tick off",
        ],
    },
    ToolSpec {
        name: "get_goal_details",
        op: Op::Own(ops::id_schema, |c| Box::pin(report::details(c))),
        description: "Everything about one goal: its fields, its steps in order, its sub-goals \
         and its parent.",
        tags: &["goal", "details", "steps", "sub-goals", "show", "progress"],
    },
    ToolSpec {
        name: "goal_stats",
        op: Op::Own(report::stats_schema, |c| Box::pin(report::stats(c))),
        description: "Statistics of the user's goals: how many of each status, completion rate, \
         average progress of active goals, overdue and due soon, steps done.",
        tags: &[
            "goal",
            "statistics",
            "stats",
            "progress report",
            "completion rate",
            "review",
            "overview",
        ],
    },
];

static STEP_FIELDS: &[Field] = &[
    Field::new(
        "goalId",
        FieldKind::Text(100),
        "The goal the step belongs to (from list_goals).",
    )
    .required(),
    Field::new(
        "title",
        FieldKind::Text(500),
        "Step title (an actionable verb phrase).",
    )
    .required()
    .searched(),
    Field::new(
        "description",
        FieldKind::Text(2_000),
        "Details of the step.",
    )
    .searched(),
    Field::new(
        "status",
        FieldKind::Choice(STEP_STATUSES),
        "pending or completed.",
    )
    .default("pending")
    .not_on_add(),
    Field::new(
        "result",
        FieldKind::Text(2_000),
        "Notes on what was accomplished.",
    )
    .not_on_add()
    .searched(),
];

static STEP_RULES: Rules = Rules {
    list_limit: (20, 100),
    before_add: Some(|r, s, doc| Box::pin(steps::before_add(r, s, doc))),
    before_change: Some(|r, s, old, doc| Box::pin(steps::before_change(r, s, old, doc))),
    after_write: Some(|r, s, step| Box::pin(steps::settle_goal(r, s, step))),
    after_delete: Some(|r, s, step| Box::pin(steps::settle_goal(r, s, step))),
    ..Rules::new()
};

/// The steps of goals: no tools of their own (`decompose_goal` adds them, `complete_step`
/// completes them), REST's `goal-steps`.
pub static STEPS: Family = Family {
    collection: "goal_step",
    plural: "goal-steps",
    noun: "step",
    category: "Goals",
    id_prefix: "step",
    id_param: "stepId",
    one: "step",
    many: "steps",
    batch_param: "steps",
    list_tool: "get_goal_details",
    fields: STEP_FIELDS,
    index: Index {
        kind: Some("status"),
        category: Some("goalId"),
        weight: Weight::Computed(steps::weight),
        at: None,
        tags: None,
    },
    range: None,
    sorts: &[
        Sort {
            name: "position",
            order: RecordOrder::Weight,
            description: "in the goal's order",
        },
        BY_CREATED,
        BY_UPDATED,
    ],
    tools: &[],
    dedup: None,
    check: Some(steps::settle),
    rules: Some(&STEP_RULES),
};

/// Every tool of the family: the goals' and their steps' (both families of records).
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    crate::personal::record_tools(env, &[&FAMILY, &STEPS])
}
