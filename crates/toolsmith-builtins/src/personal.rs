//! The personal data families (003 §1–5: tasks, bookmarks, notes, calendar, contacts): records
//! a person keeps with the agent's help, each family one collection of the per-user record
//! store ([`crate::data`]), scoped to the caller's user and agent.
//!
//! The five families are one design, described once per family as data ([`Family`]: its
//! fields, which of them the store indexes, its filters and sort orders) and run by one set of
//! operations ([`ops`]: add, batch add, list, update, delete, get), so a rule (a limit, an
//! error's wording, the scope) is written once. Each family's module holds its description,
//! its tools' names, descriptions and search tags, and what only it does (`complete_task`).
//!
//! - [`fields`] — what a field accepts, its schema, and a document read from arguments.
//! - [`ops`] — the operations every family shares, for the tools and for REST.
//! - [`rules`] — what a family adds to them: checks against the store, follow-ups of a
//!   change, its own list limits and filters (goals, expenses).
//! - [`tasks`], [`bookmarks`], [`notes`], [`calendar`], [`contacts`] — the families.

pub mod bookmarks;
pub mod calendar;
pub mod contacts;
pub mod fields;
pub mod natural;
pub mod notes;
pub mod ops;
pub mod rules;
pub mod tasks;
pub mod zone;

use toolsmith_core::data::RecordOrder;
use toolsmith_core::{RegisteredTool, ToolDefinition};

use crate::BuiltinEnv;
use crate::data::{Call, DataWork, data_tool, data_tool_with, id_arg};
use crate::groups::{ToolGroup, on};
use crate::utilities::Fail;
use fields::Field;
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// One family of personal records, as data.
#[derive(Debug)]
pub struct Family {
    /// The record store's collection (`task`).
    pub collection: &'static str,
    /// The name REST uses (`tasks`: `/api/v1/data/tasks`).
    pub plural: &'static str,
    /// One record, in messages (`task`, `calendar event`).
    pub noun: &'static str,
    /// The category of the family's tools (`Tasks`).
    pub category: &'static str,
    /// The prefix of new ids (`task` → `task_3f9a…`).
    pub id_prefix: &'static str,
    /// The argument naming a record (`taskId`).
    pub id_param: &'static str,
    /// The key under which replies carry one record (`task`) and lists carry many (`tasks`).
    pub one: &'static str,
    pub many: &'static str,
    /// The batch tool's array argument (`tasks`, `events`).
    pub batch_param: &'static str,
    /// The tool that lists records, named in "not found" errors.
    pub list_tool: &'static str,
    pub fields: &'static [Field],
    /// Which fields the store indexes.
    pub index: Index,
    /// A range filter on the indexed time, when the family has one.
    pub range: Option<Range>,
    /// The `sortBy` choices, the first the default when no `search` is given.
    pub sorts: &'static [Sort],
    /// The family's tools.
    pub tools: &'static [ToolSpec],
    /// A field whose value (compared without case) makes two records the same one: adding it
    /// again finds the first (a bookmark's URL).
    pub dedup: Option<&'static str>,
    /// What must hold of a whole record beyond its fields (an event ends after it starts),
    /// and the fields derived from others (a task's `completedAt` from its status), run when
    /// it is added and whenever it changes.
    pub check: Option<RecordCheck>,
    /// What the family checks against the store and does around a change, and its own list
    /// limits and filters ([`rules::Rules`]); `None` for the families whose fields say it all.
    pub rules: Option<&'static rules::Rules>,
}

/// A family's check of a whole record's document, which may also set the fields derived
/// from the others.
pub type RecordCheck =
    fn(&mut serde_json::Map<String, serde_json::Value>) -> Result<(), crate::utilities::Fail>;

/// Which of a family's fields fill the store's indexed columns; each one indexed is a filter
/// of its list tool.
#[derive(Debug, Clone, Copy)]
pub struct Index {
    /// A choice field stored as `kind` (a task's status).
    pub kind: Option<&'static str>,
    /// A text field stored lower-cased as `category` (filtered without case).
    pub category: Option<&'static str>,
    pub weight: Weight,
    /// A time field stored as `at` (a task's due date, an event's start).
    pub at: Option<&'static str>,
    /// A tags field stored as `tags`.
    pub tags: Option<&'static str>,
}

/// What a family's `weight` is.
#[derive(Debug, Clone, Copy)]
pub enum Weight {
    None,
    /// A choice field, weighted by its position (a task's priority: low 1 … urgent 4).
    Rank(&'static str, &'static [&'static str]),
    /// A flag, 1 when set (a favourite, a pinned note), so favourites sort first.
    Flag(&'static str),
    /// A number the family derives from the document (a goal's priority, an expense's amount
    /// in thousandths); filtered, if at all, by the family's own list filters.
    Computed(fn(&serde_json::Map<String, serde_json::Value>) -> f64),
}

/// A range filter of a list tool on the indexed time.
#[derive(Debug, Clone, Copy)]
pub struct Range {
    /// The argument of the range's start (records at or after it).
    pub from: &'static str,
    /// The argument of its end (records before it; a date alone includes its whole day).
    pub to: &'static str,
    /// Without either argument, list from the start of today (in the user's time zone):
    /// upcoming events, not last year's.
    pub from_today: bool,
}

/// One `sortBy` choice.
#[derive(Debug, Clone, Copy)]
pub struct Sort {
    pub name: &'static str,
    pub order: RecordOrder,
    pub description: &'static str,
}

/// One tool of a family: which operation, under which name, described how.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub op: Op,
    pub description: &'static str,
    /// Words `search_tools` finds the tool by.
    pub tags: &'static [&'static str],
}

/// What a family's tool does.
#[derive(Debug, Clone, Copy)]
pub enum Op {
    Add,
    BatchAdd,
    List,
    Update,
    Delete,
    /// What only this family does: its schema and its work (`complete_task`).
    Own(fn(&Family) -> serde_json::Value, crate::data::DataFn),
}

/// Newest first (`sortBy: created`).
pub const BY_CREATED: Sort = Sort {
    name: "created",
    order: RecordOrder::Newest,
    description: "newest first",
};
/// Last changed first (`sortBy: updated`).
pub const BY_UPDATED: Sort = Sort {
    name: "updated",
    order: RecordOrder::Updated,
    description: "last changed first",
};

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[
    on(
        "tasks",
        "Task Management",
        "The user's to-do list: add tasks with due dates, priorities and categories; list, update, complete and delete them.",
        ResultSource::UserData,
        &[
            "add_task",
            "batch_add_tasks",
            "list_tasks",
            "complete_task",
            "update_task",
            "delete_task",
        ],
    ),
    on(
        "bookmarks",
        "Bookmarks",
        "Saved URLs with titles, descriptions, categories, tags and favorites.",
        ResultSource::UserData,
        &[
            "add_bookmark",
            "batch_add_bookmarks",
            "list_bookmarks",
            "delete_bookmark",
        ],
    ),
    on(
        "notes",
        "Notes",
        "Text notes in Markdown with categories, tags and pins: add, list and search, update, delete.",
        ResultSource::UserData,
        &[
            "add_note",
            "batch_add_notes",
            "list_notes",
            "update_note",
            "delete_note",
        ],
    ),
    on(
        "calendar",
        "Calendar",
        "Events and appointments with start and end times, locations and reminders, listed by date range.",
        ResultSource::UserData,
        &[
            "add_calendar_event",
            "batch_add_calendar_events",
            "list_calendar_events",
            "delete_calendar_event",
        ],
    ),
    on(
        "contacts",
        "Contacts",
        "People: names, emails, phones, companies, relationships, birthdays and addresses.",
        ResultSource::UserData,
        &[
            "add_contact",
            "batch_add_contacts",
            "list_contacts",
            "update_contact",
            "delete_contact",
        ],
    ),
];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &[
            "list_tasks",
            "list_bookmarks",
            "list_notes",
            "list_calendar_events",
            "list_contacts",
        ],
    ),
    (
        Effect::Adds,
        &[
            "add_task",
            "batch_add_tasks",
            "add_bookmark",
            "batch_add_bookmarks",
            "add_note",
            "batch_add_notes",
            "add_calendar_event",
            "batch_add_calendar_events",
            "add_contact",
            "batch_add_contacts",
        ],
    ),
    (Effect::Sets, &["complete_task"]),
    (
        Effect::Changes,
        &["update_task", "update_note", "update_contact"],
    ),
    (
        Effect::Deletes,
        &[
            "delete_task",
            "delete_bookmark",
            "delete_note",
            "delete_calendar_event",
            "delete_contact",
        ],
    ),
];

/// Every family, in the spec's order; expenses and goals (with their steps) are described in
/// their own modules ([`crate::finance`], [`crate::goals`]) and run by the same operations.
pub const FAMILIES: &[&Family] = &[
    &tasks::FAMILY,
    &bookmarks::FAMILY,
    &notes::FAMILY,
    &calendar::FAMILY,
    &contacts::FAMILY,
    &crate::finance::FAMILY,
    &crate::goals::FAMILY,
    &crate::goals::STEPS,
];

/// The family REST names `plural` (`tasks`, `notes` …).
#[must_use]
pub fn family(plural: &str) -> Option<&'static Family> {
    FAMILIES.iter().copied().find(|f| f.plural == plural)
}

/// The tools of the five families of this module, ready to register (expenses and goals
/// register theirs in their own modules, through [`record_tools`]).
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    record_tools(
        env,
        &[
            &tasks::FAMILY,
            &bookmarks::FAMILY,
            &notes::FAMILY,
            &calendar::FAMILY,
            &contacts::FAMILY,
        ],
    )
}

/// Every tool of `families`, ready to register.
pub fn record_tools(env: &BuiltinEnv, families: &[&'static Family]) -> Vec<RegisteredTool> {
    families
        .iter()
        .flat_map(|f| f.tools.iter().map(move |spec| tool(env, f, spec)))
        .collect()
}

/// One family tool: its definition (the schema its operation takes) and its executor.
fn tool(env: &BuiltinEnv, f: &'static Family, spec: &ToolSpec) -> RegisteredTool {
    let schema = match spec.op {
        Op::Add => ops::add_schema(f),
        Op::BatchAdd => ops::batch_schema(f),
        Op::List => ops::list_schema(f),
        Op::Update => ops::update_schema(f),
        Op::Delete => ops::id_schema(f),
        Op::Own(schema, _) => schema(f),
    };
    let definition = ToolDefinition::new(spec.name, spec.description, schema).with_tags(spec.tags);
    match spec.op {
        Op::Own(_, run) => data_tool(env, f.category, definition, run),
        op => data_tool_with(env, f.category, definition, Work { family: f, op }),
    }
}

/// A family's shared operation as a tool's work.
struct Work {
    family: &'static Family,
    op: Op,
}

#[async_trait::async_trait]
impl DataWork for Work {
    async fn run(&self, call: Call<'_>) -> Result<serde_json::Value, Fail> {
        let f = self.family;
        let (records, scope, args) = (call.records, &call.scope, &call.args);
        match self.op {
            Op::Add => ops::add(f, records, scope, args).await,
            Op::BatchAdd => ops::batch_add(f, records, scope, args).await,
            Op::List => ops::list(f, records, scope, args).await,
            Op::Update => {
                let id = id_arg(args, f.id_param)?;
                ops::update(f, records, scope, id, args, f.id_param).await
            }
            Op::Delete => ops::delete(f, records, scope, id_arg(args, f.id_param)?).await,
            Op::Own(_, run) => run(call).await,
        }
    }
}
