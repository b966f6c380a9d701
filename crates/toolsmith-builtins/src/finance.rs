//! Finance (003 §18): the user's expenses, one family of the personal-data design
//! ([`crate::personal::Family`], collection `expense`), with the spec's categories, amounts in
//! any ISO 4217 currency kept as exact decimals ([`money`]), queries by date range, category,
//! currency, amount and words, a CSV or JSON export and per-currency summaries ([`report`]),
//! and `parse_receipt`, which reads a receipt image through the vision service the caller
//! configured in the Config Center ([`receipt`]).
//!
//! Indexed: the category as `kind`, the currency as `category`, the amount in thousandths as
//! `weight`, the date as `at`, the tags as `tags`.

pub mod money;
pub mod receipt;
pub mod report;

use toolsmith_core::RegisteredTool;
use toolsmith_core::data::RecordOrder;

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, on};
use crate::personal::fields::{Field, FieldKind};
use crate::personal::rules::{ListFilters, Rules};
use crate::personal::{BY_CREATED, BY_UPDATED, Family, Index, Op, Range, Sort, ToolSpec, Weight};
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The spec's expense categories.
pub const CATEGORIES: &[&str] = &[
    "food",
    "transport",
    "utilities",
    "entertainment",
    "shopping",
    "health",
    "education",
    "travel",
    "subscription",
    "housing",
    "other",
];

static FIELDS: &[Field] = &[
    Field::new(
        "amount",
        FieldKind::Decimal,
        "The amount spent: a positive number with at most the currency's decimals (12.5 or \
         12.50 USD, 1200 JPY).",
    )
    .required(),
    Field::new(
        "currency",
        FieldKind::Text(3),
        "ISO 4217 currency code (default USD).",
    )
    .default(money::DEFAULT_CURRENCY),
    Field::new(
        "category",
        FieldKind::Choice(CATEGORIES),
        "food, transport, utilities, entertainment, shopping, health, education, travel, \
         subscription, housing or other.",
    )
    .required(),
    Field::new(
        "description",
        FieldKind::Text(500),
        "What it was for (e.g. \"Lunch at Luigi's\").",
    )
    .required()
    .searched(),
    Field::new(
        "date",
        FieldKind::Date,
        "The day of the expense, YYYY-MM-DD (default today, UTC).",
    ),
    Field::new(
        "paymentMethod",
        FieldKind::Text(100),
        "How it was paid (e.g. \"card\", \"cash\").",
    ),
    Field::new("tags", FieldKind::Tags, "Tags (at most 20).").searched(),
    Field::new("notes", FieldKind::Text(2_000), "Additional details.").searched(),
];

static RULES: Rules = Rules {
    list_limit: (50, 100),
    filters: Some(ListFilters {
        schema: money::filter_schema,
        apply: money::apply_filters,
    }),
    ..Rules::new()
};

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[on(
    "finance",
    "Finance",
    "The user's expenses: record them with categories and currencies, query, summarise and export them; read receipts through a configured vision service.",
    ResultSource::UserData,
    &[
        "add_expense",
        "batch_add_expenses",
        "parse_receipt",
        "query_expenses",
        "export_expenses",
        "expense_summary",
        "delete_expense",
    ],
)];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &[
            "parse_receipt",
            "query_expenses",
            "export_expenses",
            "expense_summary",
        ],
    ),
    (Effect::Adds, &["add_expense", "batch_add_expenses"]),
    (Effect::Deletes, &["delete_expense"]),
];

pub static FAMILY: Family = Family {
    collection: "expense",
    plural: "expenses",
    noun: "expense",
    category: "Finance",
    id_prefix: "exp",
    id_param: "expenseId",
    one: "expense",
    many: "expenses",
    batch_param: "expenses",
    list_tool: "query_expenses",
    fields: FIELDS,
    index: Index {
        kind: Some("category"),
        category: Some("currency"),
        weight: Weight::Computed(money::weight),
        at: Some("date"),
        tags: Some("tags"),
    },
    range: Some(Range {
        from: "startDate",
        to: "endDate",
        from_today: false,
    }),
    sorts: &[
        BY_CREATED,
        Sort {
            name: "date",
            order: RecordOrder::At,
            description: "earliest first",
        },
        Sort {
            name: "amount",
            order: RecordOrder::Weight,
            description: "largest first",
        },
        BY_UPDATED,
    ],
    tools: TOOLS,
    dedup: None,
    check: Some(money::settle),
    rules: Some(&RULES),
};

pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "add_expense",
        op: Op::Add,
        description: "Record an expense the user made: amount, category, description, and \
         optionally currency (default USD), date (default today), payment method, tags, notes.",
        tags: &[
            "expense",
            "track expense",
            "spent",
            "spend",
            "paid",
            "cost",
            "purchase",
            "bought",
            "money",
            "record",
            "log",
        ],
    },
    ToolSpec {
        name: "batch_add_expenses",
        op: Op::BatchAdd,
        description: "Record several expenses at once (up to 50), each like add_expense.",
        tags: &["expense", "batch", "many", "bulk", "add", "import"],
    },
    ToolSpec {
        name: "query_expenses",
        op: Op::List,
        description: "List the user's expenses filtered by date range (startDate, endDate), \
         category, currency, amount range (minAmount, maxAmount), tags or words in them.",
        tags: &[
            "expense",
            "expenses",
            "list",
            "find",
            "show",
            "transactions",
            "purchases",
            "spending",
        ],
    },
    ToolSpec {
        name: "export_expenses",
        op: Op::Own(report::export_schema, |c| Box::pin(report::export(c))),
        description: "Export the user's expenses as CSV (for a spreadsheet) or JSON, with the \
         same filters as query_expenses.",
        tags: &[
            "expense",
            "export",
            "csv",
            "json",
            "spreadsheet",
            "download",
        ],
    },
    ToolSpec {
        name: "expense_summary",
        op: Op::Own(report::summary_schema, |c| Box::pin(report::summary(c))),
        description: "How much was spent: totals by category and by day, week, month or year, \
         per currency, over a date range (e.g. how much on food this month).",
        tags: &[
            "expense",
            "summary",
            "how much did i spend",
            "spent",
            "spending",
            "total",
            "budget",
            "analytics",
            "this month",
            "per category",
        ],
    },
    ToolSpec {
        name: "delete_expense",
        op: Op::Delete,
        description: "Delete an expense record permanently.",
        tags: &["expense", "delete", "remove"],
    },
];

/// Every tool of the family: the record operations and `parse_receipt`.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let mut tools = crate::personal::record_tools(env, &[&FAMILY]);
    tools.push(receipt::tool(env));
    tools
}
