//! The tool groups of the spec (003 "Tool Groups and Configuration"): which built-in tool
//! belongs to which group, which groups are on out of the box, and what a group needs.
//!
//! A built-in tool's provider (`ToolOrigin::BuiltIn { provider }`) is the id of its group, so
//! the policy's `group:<id>` names the same tools. GoClaw's groups (001 §5: `fs`, `runtime`,
//! `web`) are aliases of the groups they match.
//!
//! To add a tool: implement it in its family's module, then list its name in the group here;
//! `every_builtin_belongs_to_the_group_its_provider_names` fails until both agree.

use serde::Serialize;

/// One group, in the spec's `ToolGroupConfig` shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolGroup {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// Whether the group is on when the configuration says nothing about it.
    pub default_enabled: bool,
    pub tools: &'static [&'static str],
    /// Groups that must be on for this one to be enabled.
    pub depends_on: &'static [&'static str],
    /// Other names of this group (GoClaw's), accepted wherever a group id is.
    pub aliases: &'static [&'static str],
    /// Why the group is off by default; `None` for the default-enabled ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<&'static str>,
}

const fn on(
    id: &'static str,
    name: &'static str,
    description: &'static str,
    tools: &'static [&'static str],
) -> ToolGroup {
    ToolGroup {
        id,
        name,
        description,
        default_enabled: true,
        tools,
        depends_on: &[],
        aliases: &[],
        disabled_reason: None,
    }
}

/// Every group, in the order the spec lists them.
pub const TOOL_GROUPS: &[ToolGroup] = &[
    on(
        "core",
        "Core",
        "Essential utilities: time, arithmetic, identifiers, hashing, encodings, the host's description.",
        &[
            "get_current_datetime",
            "calculate",
            "generate_uuid",
            "hash_text",
            "encode_decode",
            "system_info",
        ],
    ),
    ToolGroup {
        aliases: &["fs"],
        ..on(
            "filesystem",
            "File System",
            "Files in the caller's own workspace: read, write, edit, list, search, copy, move, delete.",
            &[
                "read_file",
                "write_file",
                "edit_file",
                "list_directory",
                "list_files",
                "search_files",
                "search",
                "glob",
                "file_info",
                "delete_file",
                "copy_file",
                "move_file",
                "create_folder",
            ],
        )
    },
    on(
        "tasks",
        "Task Management",
        "The user's to-do list: add tasks with due dates, priorities and categories; list, update, complete and delete them.",
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
        &[
            "add_contact",
            "batch_add_contacts",
            "list_contacts",
            "update_contact",
            "delete_contact",
        ],
    ),
    on(
        "customData",
        "Custom Data",
        "The user's own tables with typed columns for data no other tool keeps: create, describe and delete tables; add, list, filter, sort, search, update and delete their records.",
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
    ),
    on(
        "memory",
        "Memory",
        "The agent's persistent memory of its user: remember facts, preferences, events and skills; recall them by relevance, importance and recency; boost and forget them.",
        &[
            "remember",
            "batch_remember",
            "recall",
            "forget",
            "list_memories",
            "boost_memory",
            "memory_stats",
            "memory_search",
            "memory_get",
        ],
    ),
    on(
        "finance",
        "Finance",
        "The user's expenses: record them with categories and currencies, query, summarise and export them; read receipts through a configured vision service.",
        &[
            "add_expense",
            "batch_add_expenses",
            "parse_receipt",
            "query_expenses",
            "export_expenses",
            "expense_summary",
            "delete_expense",
        ],
    ),
    on(
        "goals",
        "Goals",
        "Long-term objectives with priorities, due dates and progress, in a hierarchy of sub-goals, broken into steps; what to work on next.",
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
    ),
    on(
        "textUtils",
        "Text Utilities",
        "Count, extract, transform, compare and match text; format JSON.",
        &[
            "count_text",
            "extract_from_text",
            "transform_text",
            "compare_text",
            "regex",
            "format_json",
        ],
    ),
    on(
        "dateTime",
        "Date and Time",
        "Differences between dates and date arithmetic.",
        &["date_diff", "date_add"],
    ),
    on(
        "conversion",
        "Conversion",
        "Units of measurement, CSV to and from structured data.",
        &["convert_units", "parse_csv", "generate_csv"],
    ),
    on(
        "generation",
        "Generation",
        "Random passwords and numbers.",
        &["generate_password", "random_number"],
    ),
    on(
        "validation",
        "Validation",
        "Check that a value is a valid email, URL, phone number, UUID and more.",
        &["validate"],
    ),
    on(
        "listOps",
        "List Operations",
        "Sort, filter, deduplicate and chunk arrays.",
        &["array_operations"],
    ),
    on(
        "mathStats",
        "Math and Statistics",
        "Statistical measures of a list of numbers.",
        &["statistics"],
    ),
    ToolGroup {
        id: "codeExecution",
        name: "Code Execution",
        description: "Run JavaScript, Python and shell commands in a sandbox with the workspace mounted.",
        default_enabled: false,
        tools: &[
            "execute_javascript",
            "execute_python",
            "execute_shell",
            "compile_code",
            "package_manager",
            "sandbox_initialize",
            "sandbox_exec",
            "sandbox_run_js",
            "sandbox_stop",
        ],
        depends_on: &["filesystem"],
        aliases: &["runtime"],
        disabled_reason: Some("runs code the model wrote; needs the command sandbox (bubblewrap)"),
    },
    ToolGroup {
        id: "webFetch",
        name: "Web and API",
        description: "HTTP requests, web pages as text, JSON APIs, web search and downloads into the workspace.",
        default_enabled: false,
        tools: &[
            "http_request",
            "fetch_web_page",
            "json_api",
            "search_web",
            "web_search",
            "web_fetch",
            "download_file",
        ],
        depends_on: &["filesystem"],
        aliases: &["web"],
        disabled_reason: Some("external HTTP access"),
    },
    ToolGroup {
        id: "git",
        name: "Git",
        description: "Version control of a repository in the workspace.",
        default_enabled: false,
        tools: &[
            "git_status",
            "git_diff",
            "git_log",
            "git_commit",
            "git_add",
            "git_branch",
            "git_checkout",
        ],
        depends_on: &["filesystem"],
        aliases: &[],
        disabled_reason: Some("version control operations"),
    },
    ToolGroup {
        id: "pdf",
        name: "PDF",
        description: "Read, create and describe PDF documents in the workspace.",
        default_enabled: false,
        tools: &["read_pdf", "create_pdf", "pdf_info"],
        depends_on: &["filesystem"],
        aliases: &[],
        disabled_reason: Some("PDF processing libraries"),
    },
    ToolGroup {
        id: "scheduler",
        name: "Scheduler",
        description: "Scheduled tasks: tool calls the server makes on a cron schedule or at one time, as their owner; their history; trigger one now.",
        default_enabled: false,
        tools: &[
            "create_scheduled_task",
            "list_scheduled_tasks",
            "update_scheduled_task",
            "delete_scheduled_task",
            "get_task_history",
            "trigger_task",
            "cron",
        ],
        depends_on: &[],
        aliases: &["automation"],
        disabled_reason: Some("runs tools on its own schedule, with no one watching"),
    },
];

/// The group with this id or alias (`fs` is `filesystem`).
#[must_use]
pub fn find(id_or_alias: &str) -> Option<&'static ToolGroup> {
    TOOL_GROUPS
        .iter()
        .find(|g| g.id == id_or_alias || g.aliases.contains(&id_or_alias))
}

/// The group a built-in tool belongs to.
#[must_use]
pub fn group_of(tool: &str) -> Option<&'static ToolGroup> {
    TOOL_GROUPS.iter().find(|g| g.tools.contains(&tool))
}

/// What a caller of the built-in `tool` is told while its group is disabled: which group, and
/// how an admin enables it.
#[must_use]
pub fn disabled_message(tool: &str) -> String {
    let group = group_of(tool).map_or("its", |g| g.id);
    format!(
        "tool '{tool}' is in the tool group '{group}', which is disabled on this server; an admin enables it with `toolsmith groups enable {group}` (or PUT /api/v1/tool-groups/{group})"
    )
}

/// The groups whose tools answer with the user's own data or with values made from the call's
/// own arguments (results of [`ResultSource::UserData`](toolsmith_core::ResultSource)): only
/// the exact platform secrets are scrubbed from them, so a note, a file or a generated password
/// round-trips unchanged. Every other group (code execution, the web, git, the scheduler's run
/// history) brings back text from outside, where the credential patterns apply too. A new
/// group is outside until it is listed here.
pub const USER_DATA_GROUPS: &[&str] = &[
    "core",
    "filesystem",
    "tasks",
    "bookmarks",
    "notes",
    "calendar",
    "contacts",
    "customData",
    "memory",
    "finance",
    "goals",
    "textUtils",
    "dateTime",
    "conversion",
    "generation",
    "validation",
    "listOps",
    "mathStats",
    "pdf",
];

/// Where the results of the built-in `tool` come from ([`USER_DATA_GROUPS`]).
#[must_use]
pub fn result_source_of(tool: &str) -> toolsmith_core::ResultSource {
    match group_of(tool) {
        Some(group) if USER_DATA_GROUPS.contains(&group.id) => {
            toolsmith_core::ResultSource::UserData
        }
        _ => toolsmith_core::ResultSource::External,
    }
}

/// The provider a built-in tool registers under: its group's id. A tool in no group is a
/// programming error of this crate, caught by its tests.
#[must_use]
#[allow(clippy::panic)] // A constant of this crate; the test named above catches it.
pub fn provider_of(tool: &str) -> &'static str {
    group_of(tool).map_or_else(
        || panic!("built-in tool '{tool}' is in no group of groups::TOOL_GROUPS"),
        |g| g.id,
    )
}
