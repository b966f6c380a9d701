//! Notes (003 §3): text notes with a title, Markdown content, a category, tags and a pinned
//! flag. Indexed: category, pinned as `weight` (pinned first), tags; title, content,
//! category and tags are searched.

use toolsmith_core::data::RecordOrder;

use super::fields::{Field, FieldKind};
use super::{BY_CREATED, BY_UPDATED, Family, Index, Op, Sort, ToolSpec, Weight};

/// Longest note content, in bytes.
pub const MAX_CONTENT_BYTES: usize = 32_000;

static FIELDS: &[Field] = &[
    Field::new("title", FieldKind::Text(500), "Note title.")
        .required()
        .searched(),
    Field::new(
        "content",
        FieldKind::Text(MAX_CONTENT_BYTES),
        "Note content (supports markdown).",
    )
    .required()
    .searched(),
    Field::new(
        "category",
        FieldKind::Text(100),
        "Category (e.g. \"ideas\", \"meeting-notes\").",
    )
    .searched(),
    Field::new("tags", FieldKind::Tags, "Tags for the note.").searched(),
    Field::new("isPinned", FieldKind::Flag, "Whether to pin the note."),
];

pub static FAMILY: Family = Family {
    collection: "note",
    plural: "notes",
    noun: "note",
    category: "Notes",
    id_prefix: "note",
    id_param: "noteId",
    one: "note",
    many: "notes",
    batch_param: "notes",
    list_tool: "list_notes",
    fields: FIELDS,
    index: Index {
        kind: None,
        category: Some("category"),
        weight: Weight::Flag("isPinned"),
        at: None,
        tags: Some("tags"),
    },
    range: None,
    sorts: &[
        Sort {
            name: "pinned",
            order: RecordOrder::Weight,
            description: "pinned first, then newest",
        },
        BY_CREATED,
        BY_UPDATED,
    ],
    tools: TOOLS,
    dedup: None,
    check: None,
    rules: None,
};

pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "add_note",
        op: Op::Add,
        description: "Create a new note with a title and Markdown content (write down an idea, meeting \
         minutes, a recipe), with an optional category, tags and pin.",
        tags: &["note", "write down", "add", "create", "markdown", "idea"],
    },
    ToolSpec {
        name: "batch_add_notes",
        op: Op::BatchAdd,
        description: "Add multiple notes at once (up to 50), each like add_note.",
        tags: &["batch", "many", "bulk", "add"],
    },
    ToolSpec {
        name: "list_notes",
        op: Op::List,
        description: "List and search the user's notes (what they wrote down before) with filtering by \
         category, tags, pinned, and words in their title or content; pinned first by default.",
        tags: &[
            "notes", "noted", "my notes", "list", "search", "find", "show", "read", "written",
        ],
    },
    ToolSpec {
        name: "update_note",
        op: Op::Update,
        description: "Update an existing note: its title, content, category, tags or pin (null clears an \
         optional field).",
        tags: &["update", "edit", "change", "pin", "rewrite"],
    },
    ToolSpec {
        name: "delete_note",
        op: Op::Delete,
        description: "Delete a note permanently.",
        tags: &["delete", "remove"],
    },
];
