//! Custom Data (003 §6): tables the user (through the agent) defines — typed columns, required
//! flags, defaults — and their rows, kept in the per-user record store ([`crate::data`]) and
//! scoped to the caller's user and agent like every data family. No SQL comes from a call: a
//! table is a record, its rows a collection of records, and a filter or an order on a column
//! is a store query with the column's name and value as parameters.
//!
//! - [`columns`] — names, column types, a table's definition, a row checked against it.
//! - [`ops`] — the eleven operations, for the tools and for REST.
//!
//! Bounds: [`ops::MAX_TABLES`] tables per user, [`columns::MAX_COLUMNS`] columns per table,
//! [`ops::MAX_BATCH`] rows per batch, a row at most `max_record_bytes` (a text value
//! [`columns::MAX_TEXT`] bytes, a JSON value [`columns::MAX_JSON`]), rows per table
//! `max_records_per_collection`, names of at most [`columns::MAX_NAME`] lower-case letters,
//! digits and underscores.

pub mod columns;
pub mod ops;

use serde_json::{Value, json};
use toolsmith_core::data::RecordScope;
use toolsmith_core::{RegisteredTool, ToolDefinition};

use crate::BuiltinEnv;
use crate::data::{Call, DataWork, Records, data_tool_with};
use crate::groups::{ToolGroup, on};
use crate::utilities::Fail;
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The category of the family's tools.
const CATEGORY: &str = "Custom Data";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[on(
    "customData",
    "Custom Data",
    "The user's own tables with typed columns for data no other tool keeps: create, describe and delete tables; add, list, filter, sort, search, update and delete their records.",
    ResultSource::UserData,
    &[
        "list_custom_tables",
        "describe_custom_table",
        "create_custom_table",
        "delete_custom_table",
        "add_custom_record",
        "batch_add_custom_records",
        "list_custom_records",
        "search_custom_records",
        "get_custom_record",
        "update_custom_record",
        "delete_custom_record",
    ],
)];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &[
            "list_custom_tables",
            "describe_custom_table",
            "list_custom_records",
            "search_custom_records",
            "get_custom_record",
        ],
    ),
    (
        Effect::Adds,
        &[
            "create_custom_table",
            "add_custom_record",
            "batch_add_custom_records",
        ],
    ),
    (Effect::Changes, &["update_custom_record"]),
    (
        Effect::Deletes,
        &["delete_custom_table", "delete_custom_record"],
    ),
];

/// One Custom Data operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CustomOp {
    ListTables,
    DescribeTable,
    CreateTable,
    DeleteTable,
    AddRow,
    BatchAddRows,
    ListRows,
    SearchRows,
    GetRow,
    UpdateRow,
    DeleteRow,
}

/// Runs `op` with `args` (the tool's arguments) in `scope`; the reply is the tool's.
pub async fn run(
    op: CustomOp,
    records: &dyn Records,
    scope: &RecordScope,
    args: &Value,
) -> Result<Value, Fail> {
    if !args.is_object() && !args.is_null() {
        return Err(Fail::Args("the arguments must be a JSON object".to_owned()));
    }
    match op {
        CustomOp::ListTables => ops::list_tables(records, scope).await,
        CustomOp::DescribeTable => ops::describe_table(records, scope, args).await,
        CustomOp::CreateTable => ops::create_table(records, scope, args).await,
        CustomOp::DeleteTable => ops::delete_table(records, scope, args).await,
        CustomOp::AddRow => ops::add_row(records, scope, args).await,
        CustomOp::BatchAddRows => ops::batch_add_rows(records, scope, args).await,
        CustomOp::ListRows => ops::list_rows(records, scope, args).await,
        CustomOp::SearchRows => ops::search_rows(records, scope, args).await,
        CustomOp::GetRow => ops::get_row(records, scope, args).await,
        CustomOp::UpdateRow => ops::update_row(records, scope, args).await,
        CustomOp::DeleteRow => ops::delete_row(records, scope, args).await,
    }
}

struct Work(CustomOp);

#[async_trait::async_trait]
impl DataWork for Work {
    async fn run(&self, call: Call<'_>) -> Result<Value, Fail> {
        run(self.0, call.records, &call.scope, &call.args).await
    }
}

/// Every Custom Data tool, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    TOOLS
        .iter()
        .map(|(name, op, description, tags)| {
            let definition = ToolDefinition::new(*name, *description, schema(*op)).with_tags(tags);
            data_tool_with(env, CATEGORY, definition, Work(*op))
        })
        .collect()
}

type Spec = (
    &'static str,
    CustomOp,
    &'static str,
    &'static [&'static str],
);

const TOOLS: &[Spec] = &[
    (
        "list_custom_tables",
        CustomOp::ListTables,
        "List the user's custom data tables with their column and record counts.",
        &[
            "custom",
            "table",
            "tables",
            "database",
            "list",
            "schema",
            "collections",
        ],
    ),
    (
        "describe_custom_table",
        CustomOp::DescribeTable,
        "Show a custom table's columns (name, type, required, default) and figures. Call it before adding or filtering rows to learn the column names.",
        &[
            "custom",
            "table",
            "describe",
            "columns",
            "structure",
            "schema",
            "fields",
        ],
    ),
    (
        "create_custom_table",
        CustomOp::CreateTable,
        "Create a custom data table with typed columns (text, number, boolean, date, datetime, json) for structured data that has no dedicated tool: a reading list, workouts, recipes, a collection. \
         Do NOT create custom tables for data that has dedicated tools: tasks and to-dos (add_task), notes (add_note), bookmarks and links (add_bookmark), calendar events (add_calendar_event), contacts (add_contact), memories and facts about the user (remember), goals, expenses and scheduled tasks — use those tools instead.",
        &[
            "custom",
            "table",
            "create",
            "database",
            "track",
            "structured",
            "spreadsheet",
            "collection",
            "log",
        ],
    ),
    (
        "delete_custom_table",
        CustomOp::DeleteTable,
        "Delete a custom table and all of its records, for good (needs confirm: true).",
        &["custom", "table", "delete", "drop", "remove"],
    ),
    (
        "add_custom_record",
        CustomOp::AddRow,
        "Add a record (row) to a custom table: data is an object of column values.",
        &[
            "custom", "table", "record", "row", "add", "insert", "log", "entry",
        ],
    ),
    (
        "batch_add_custom_records",
        CustomOp::BatchAddRows,
        "Add up to 50 records (rows) to a custom table at once; all are checked before any is added.",
        &[
            "custom", "table", "records", "rows", "batch", "bulk", "import", "insert",
        ],
    ),
    (
        "list_custom_records",
        CustomOp::ListRows,
        "List the records of a custom table, filtered by exact column values, sorted by a column, paged.",
        &[
            "custom", "table", "records", "rows", "list", "filter", "sort", "show",
        ],
    ),
    (
        "search_custom_records",
        CustomOp::SearchRows,
        "Search the records of a custom table for words in their text columns, best matches first.",
        &[
            "custom", "table", "records", "rows", "search", "find", "lookup",
        ],
    ),
    (
        "get_custom_record",
        CustomOp::GetRow,
        "Get one record of a custom table by its id.",
        &["custom", "table", "record", "row", "get", "read"],
    ),
    (
        "update_custom_record",
        CustomOp::UpdateRow,
        "Change columns of a record of a custom table (only those given; null clears an optional one).",
        &[
            "custom", "table", "record", "row", "update", "edit", "change",
        ],
    ),
    (
        "delete_custom_record",
        CustomOp::DeleteRow,
        "Delete a record of a custom table.",
        &["custom", "table", "record", "row", "delete", "remove"],
    ),
];

fn table_property() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 100,
           "description": "The table's name (like \"books\") or id, from list_custom_tables."})
}

fn record_id_property() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 100,
           "description": "The record's id (from list_custom_records or search_custom_records)."})
}

fn data_property(what: &str) -> Value {
    json!({"type": "object", "maxProperties": columns::MAX_COLUMNS,
           "description": format!("{what}: an object of column values, like {{\"title\": \"Dune\", \"rating\": 9}}.")})
}

fn filter_property() -> Value {
    json!({"type": "object", "maxProperties": ops::MAX_FILTERS,
           "description": "Only records whose columns equal these values (exact match, each of them), like {\"genre\": \"sci-fi\"}."})
}

fn page_properties(props: &mut serde_json::Map<String, Value>) {
    props.insert(
        "limit".to_owned(),
        json!({"type": "integer", "minimum": 1, "maximum": ops::MAX_LIST, "description": "Max results (default: 20, max: 50)."}),
    );
    props.insert(
        "offset".to_owned(),
        json!({"type": "integer", "minimum": 0, "maximum": ops::MAX_OFFSET, "description": "Skip this many (for the next page)."}),
    );
}

fn object(props: serde_json::Map<String, Value>, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The JSON Schema of an operation's arguments.
#[must_use]
pub fn schema(op: CustomOp) -> Value {
    let mut props = serde_json::Map::new();
    let table = |props: &mut serde_json::Map<String, Value>| {
        props.insert("table".to_owned(), table_property());
    };
    match op {
        CustomOp::ListTables => object(props, &[]),
        CustomOp::DescribeTable => {
            table(&mut props);
            object(props, &["table"])
        }
        CustomOp::CreateTable => {
            props.insert("table".to_owned(), json!({"type": "string", "minLength": 1, "maxLength": columns::MAX_NAME,
                "pattern": "^[a-z][a-z0-9_]*$",
                "description": "The table's name: lower-case letters, digits and underscores, starting with a letter (like \"reading_list\")."}));
            props.insert("displayName".to_owned(), json!({"type": "string", "minLength": 1, "maxLength": columns::MAX_DISPLAY_NAME,
                "description": "How people see the table (like \"My Reading List\"); the name when left out."}));
            props.insert(
                "description".to_owned(),
                json!({"type": "string", "minLength": 1, "maxLength": columns::MAX_DESCRIPTION,
                "description": "What the table holds."}),
            );
            props.insert("columns".to_owned(), json!({
                "type": "array", "minItems": 1, "maxItems": columns::MAX_COLUMNS,
                "description": "The columns (1 to 50).",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": columns::MAX_NAME, "pattern": "^[a-z][a-z0-9_]*$",
                                 "description": "Column name: lower-case letters, digits and underscores (not 'id')."},
                        "type": {"type": "string", "enum": columns::TYPES,
                                 "description": "text, number, boolean, date (YYYY-MM-DD), datetime (ISO 8601) or json."},
                        "required": {"type": "boolean", "description": "Every record must have it (default false)."},
                        "default": {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "object"}, {"type": "array"}],
                                    "description": "The value a record without this column gets (of the column's type)."},
                        "description": {"type": "string", "maxLength": columns::MAX_COLUMN_DESCRIPTION, "description": "What the column holds."},
                        "displayName": {"type": "string", "maxLength": columns::MAX_DISPLAY_NAME, "description": "How people see the column."}
                    },
                    "required": ["name", "type"],
                    "additionalProperties": false
                }
            }));
            object(props, &["table", "columns"])
        }
        CustomOp::DeleteTable => {
            table(&mut props);
            props.insert("confirm".to_owned(), json!({"type": "boolean",
                "description": "Must be true: the table and all its records are deleted for good."}));
            object(props, &["table", "confirm"])
        }
        CustomOp::AddRow => {
            table(&mut props);
            props.insert("data".to_owned(), data_property("The record"));
            object(props, &["table", "data"])
        }
        CustomOp::BatchAddRows => {
            table(&mut props);
            props.insert("records".to_owned(), json!({"type": "array", "minItems": 1, "maxItems": ops::MAX_BATCH,
                "items": data_property("One record"),
                "description": "The records to add (at most 50), each an object of column values."}));
            object(props, &["table", "records"])
        }
        CustomOp::ListRows => {
            table(&mut props);
            props.insert("filter".to_owned(), filter_property());
            props.insert("sortBy".to_owned(), json!({"type": "string", "minLength": 1, "maxLength": 64,
                "description": "A column to sort by, or createdAt (default, newest first) or updatedAt."}));
            props.insert("sortOrder".to_owned(), json!({"type": "string", "enum": ["asc", "desc"],
                "description": "For a column: asc (default) or desc; records without a value come last."}));
            page_properties(&mut props);
            object(props, &["table"])
        }
        CustomOp::SearchRows => {
            table(&mut props);
            props.insert("query".to_owned(), json!({"type": "string", "minLength": 1, "maxLength": ops::MAX_QUERY,
                "description": "Words to look for in the text columns (any may match; best matches first)."}));
            props.insert("filter".to_owned(), filter_property());
            page_properties(&mut props);
            object(props, &["table", "query"])
        }
        CustomOp::GetRow | CustomOp::DeleteRow => {
            table(&mut props);
            props.insert("recordId".to_owned(), record_id_property());
            object(props, &["table", "recordId"])
        }
        CustomOp::UpdateRow => {
            table(&mut props);
            props.insert("recordId".to_owned(), record_id_property());
            props.insert(
                "data".to_owned(),
                data_property("The columns to change (null clears an optional one)"),
            );
            object(props, &["table", "recordId", "data"])
        }
    }
}
