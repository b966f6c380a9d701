//! Tasks (003 §1): to-do items with a due date, a priority, a category and a status
//! (`pending` when added; `in_progress`, `completed`, `cancelled` by `update_task` or
//! `complete_task`). Indexed: status as `kind`, category, priority as `weight` (low 1 …
//! urgent 4), due date as `at`.

use chrono::Utc;
use serde_json::{Map, Value, json};
use toolsmith_core::data::RecordOrder;
use toolsmith_core::object;

use super::fields::{Field, FieldKind};
use super::{BY_CREATED, BY_UPDATED, Family, Index, Op, Range, Sort, ToolSpec, Weight, ops};
use crate::data::{Call, id_arg};
use crate::utilities::Fail;

pub const PRIORITIES: &[&str] = &["low", "normal", "high", "urgent"];
pub const STATUSES: &[&str] = &["pending", "in_progress", "completed", "cancelled"];

static FIELDS: &[Field] = &[
    Field::new("title", FieldKind::Text(500), "Task title/description.")
        .required()
        .searched(),
    Field::new(
        "dueDate",
        FieldKind::Time,
        "Due date in ISO format (YYYY-MM-DD or YYYY-MM-DDTHH:mm:ss; UTC unless it ends with an offset).",
    ),
    Field::new(
        "priority",
        FieldKind::Choice(PRIORITIES),
        "low, normal, high or urgent (default normal).",
    )
    .default("normal"),
    Field::new(
        "category",
        FieldKind::Text(100),
        "Category name (e.g. \"work\", \"personal\", \"shopping\").",
    )
    .searched(),
    Field::new("notes", FieldKind::Text(10_000), "Additional details.").searched(),
    Field::new(
        "status",
        FieldKind::Choice(STATUSES),
        "pending, in_progress, completed or cancelled.",
    )
    .default("pending")
    .not_on_add(),
];

pub static FAMILY: Family = Family {
    collection: "task",
    plural: "tasks",
    noun: "task",
    category: "Tasks",
    id_prefix: "task",
    id_param: "taskId",
    one: "task",
    many: "tasks",
    batch_param: "tasks",
    list_tool: "list_tasks",
    fields: FIELDS,
    index: Index {
        kind: Some("status"),
        category: Some("category"),
        weight: Weight::Rank("priority", PRIORITIES),
        at: Some("dueDate"),
        tags: None,
    },
    range: Some(Range {
        from: "dueFrom",
        to: "dueTo",
        from_today: false,
    }),
    sorts: &[
        Sort {
            name: "dueDate",
            order: RecordOrder::At,
            description: "soonest due first, undated last",
        },
        Sort {
            name: "priority",
            order: RecordOrder::Weight,
            description: "most urgent first",
        },
        BY_CREATED,
        BY_UPDATED,
    ],
    tools: TOOLS,
    dedup: None,
    check: Some(settle_completion),
    rules: None,
};

/// A task's `completedAt` follows its status: set when it becomes `completed` (kept if it
/// was already), removed when it is reopened.
fn settle_completion(task: &mut Map<String, Value>) -> Result<(), Fail> {
    if task.get("status").and_then(Value::as_str) == Some("completed") {
        if !task.contains_key("completedAt") {
            task.insert("completedAt".to_owned(), json!(Utc::now()));
        }
    } else {
        task.remove("completedAt");
    }
    Ok(())
}

pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "add_task",
        op: Op::Add,
        description: "Add a new task/todo item to the user's task list, with an optional due date, priority \
         and category. Use it for \"remind me to …\" and \"I need to …\": the task is kept and listed \
         (list_tasks); nothing is sent when it is due.",
        tags: &[
            "task", "todo", "to-do", "add", "create", "remind", "reminder", "deadline", "due",
            "chore",
        ],
    },
    ToolSpec {
        name: "batch_add_tasks",
        op: Op::BatchAdd,
        description: "Add multiple tasks at once (up to 50), each like add_task.",
        tags: &["task", "todo", "batch", "many", "bulk", "add", "checklist"],
    },
    ToolSpec {
        name: "list_tasks",
        op: Op::List,
        description: "List the user's tasks with optional filtering by status, priority, category, due date \
         range and words in their titles; soonest due first by default.",
        tags: &[
            "task", "todo", "list", "show", "pending", "due", "overdue", "agenda", "open",
        ],
    },
    ToolSpec {
        name: "complete_task",
        op: Op::Own(ops::id_schema, |c| Box::pin(complete(c))),
        description: "Mark a task as completed (done).",
        tags: &[
            "task",
            "todo",
            "complete",
            "done",
            "finish",
            "check off",
            "tick",
        ],
    },
    ToolSpec {
        name: "update_task",
        op: Op::Update,
        description: "Update a task's details: title, due date, priority, category, details or status \
         (null clears an optional field).",
        tags: &[
            "task",
            "todo",
            "update",
            "edit",
            "change",
            "reschedule",
            "status",
            "priority",
        ],
    },
    ToolSpec {
        name: "delete_task",
        op: Op::Delete,
        description: "Delete a task permanently.",
        tags: &["task", "todo", "delete", "remove"],
    },
];

/// `complete_task`: the status `completed` and the time it was completed.
async fn complete(call: Call<'_>) -> Result<Value, Fail> {
    let id = id_arg(&call.args, FAMILY.id_param)?;
    let mut reply = ops::modify(&FAMILY, call.records, &call.scope, id, |doc| {
        // `settle_completion` sets `completedAt` (keeping the first one on a second call).
        doc.insert("status".to_owned(), json!("completed"));
        Ok(())
    })
    .await?;
    object::set(&mut reply, "message", json!("Task completed."));
    Ok(reply)
}
