//! The tool max limits table of the spec (003 "Tool Max Limits"): the default of a count
//! parameter is injected when it is missing and a larger value is capped. The pipeline applies
//! it to every call before the schema check, so it holds on every path (REST, MCP, `use_tool`,
//! `batch_use_tool`, `utils.callTool`).

use serde_json::Value;

/// A cap on a count parameter of a list-returning tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimit {
    pub tool: &'static str,
    /// The argument that controls how many items come back.
    pub param: &'static str,
    /// Absolute ceiling.
    pub max: u64,
    /// Injected when the argument is missing.
    pub default: u64,
}

const fn limit(tool: &'static str, param: &'static str, max: u64, default: u64) -> ToolLimit {
    ToolLimit {
        tool,
        param,
        max,
        default,
    }
}

/// The tool max limits table of the spec, keyed by tool name. Most of these tools do not exist
/// yet; the table is data, so a tool gets its limit the day a tool of that name appears.
pub const TOOL_LIMITS: &[ToolLimit] = &[
    limit("list_emails", "limit", 50, 20),
    limit("search_emails", "limit", 100, 50),
    limit("list_tasks", "limit", 50, 20),
    limit("list_notes", "limit", 50, 20),
    limit("list_calendar_events", "limit", 50, 20),
    limit("list_contacts", "limit", 50, 20),
    limit("list_bookmarks", "limit", 50, 20),
    limit("query_expenses", "limit", 100, 50),
    limit("recall", "limit", 50, 10),
    limit("list_memories", "limit", 50, 20),
    limit("list_goals", "limit", 30, 10),
    limit("get_next_actions", "limit", 20, 5),
    limit("list_custom_records", "limit", 50, 20),
    limit("search_custom_records", "limit", 50, 20),
    limit("git_log", "limit", 50, 10),
    limit("get_task_history", "limit", 50, 10),
    limit("search_files", "maxResults", 100, 50),
    limit("search_web", "maxResults", 20, 10),
    limit("semantic_search", "topK", 50, 10),
];

/// The limit of a tool, if the table has one.
pub fn tool_limit(tool: &str) -> Option<&'static ToolLimit> {
    TOOL_LIMITS.iter().find(|l| l.tool == tool)
}

/// `applyToolLimits`: the arguments with the tool's limit applied — the default injected when
/// the parameter is missing (or `null`), a number above the maximum capped to it. Returns a new
/// value; `args` is never changed. Tools without a limit, non-object arguments and non-numeric
/// values (left for schema validation to refuse) come back as they were.
pub fn apply_tool_limits(tool: &str, args: &Value) -> Value {
    let mut out = args.clone();
    limit_in_place(tool, &mut out);
    out
}

/// [`apply_tool_limits`] on the arguments themselves: what the pipeline does to every call (a
/// tool without a limit costs one lookup and no copy).
pub fn limit_in_place(tool: &str, args: &mut Value) {
    let (Some(limit), Some(obj)) = (tool_limit(tool), args.as_object_mut()) else {
        return;
    };
    match obj.get(limit.param) {
        None | Some(Value::Null) => {
            obj.insert(limit.param.to_owned(), Value::from(limit.default));
        }
        Some(Value::Number(n)) if n.as_f64().is_some_and(|v| v > limit.max as f64) => {
            obj.insert(limit.param.to_owned(), Value::from(limit.max));
        }
        Some(_) => {}
    }
}
