//! What a model is told when it names a tool it cannot call: the fix, in the message text
//! itself (clients show the text to the model and drop `error.data`).
//!
//! - a custom tool of the caller that exists but is not active: which state it is in and what
//!   to do (`toggle_custom_tool`, a person's approval and where it is given, `update_custom_tool`);
//! - a built-in whose tool group is switched off on this server: that it exists, its group, and
//!   how an admin switches the group on (never "Did you mean", never `create_tool`: the name is
//!   reserved);
//! - any other name: the closest names the caller can call, by spelling and by meaning
//!   ([`crate::discovery::closest_names`]), and `search_tools`.

use toolsmith_core::{ToolDefinition, ToolStatus};
use toolsmith_service::ToolRef;

use super::catalog::SERVER_TOOLS;
use super::handler::Caller;
use super::search_index::server_definitions;
use crate::discovery::closest_names;

/// Why `name` cannot be called by this caller, and what to do instead.
pub(crate) async fn unknown_tool(caller: &Caller<'_>, name: &str) -> String {
    if let Some(message) = not_active(caller, name).await {
        return message;
    }
    if let Some(message) = group_off(caller, name) {
        return message;
    }
    let tools = caller.visible_tools();
    let mut candidates: Vec<&ToolDefinition> = tools.iter().map(|t| &t.definition).collect();
    let meta: Vec<ToolDefinition> = SERVER_TOOLS
        .core
        .iter()
        .filter(|t| !server_definitions(false).any(|d| d.name == t.name))
        .map(|t| ToolDefinition::new(t.name, "", serde_json::json!({"type": "object"})))
        .collect();
    for def in server_definitions(caller.compat()).filter(|d| caller.server_tool(&d.name).is_some())
    {
        candidates.push(def);
    }
    candidates.extend(meta.iter());
    let suggestions = closest_names(name, &candidates);
    let shown = crate::discovery::text::truncate(name, 100);
    if suggestions.is_empty() {
        format!(
            "Unknown tool: {shown}. No tool has a similar name; call search_tools with words for what you need (e.g. {{\"query\": \"convert currency\"}}), or create_tool to make one."
        )
    } else {
        format!(
            "Unknown tool: {shown}. Did you mean {}? (search_tools finds tools by what they do)",
            suggestions
                .iter()
                .map(|s| format!("'{s}'"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The message for a built-in whose group is switched off here, if `name` is one.
fn group_off(caller: &Caller<'_>, name: &str) -> Option<String> {
    let group = toolsmith_builtins::groups::group_of(name)?;
    let on = caller
        .service()
        .tool_group(group.id)
        .is_ok_and(|view| view.enabled);
    (!on).then(|| {
        format!(
            "The built-in {} Ask an admin to switch the group on, or use another tool until then (search_tools finds what is on).",
            toolsmith_builtins::groups::disabled_message(name)
        )
    })
}

/// The message for a custom tool of the caller that is stored but not active, if `name` is one.
async fn not_active(caller: &Caller<'_>, name: &str) -> Option<String> {
    let record = caller
        .service()
        .get(&caller.actor(), &ToolRef::Name(name.to_owned()))
        .await
        .ok()?;
    let name = &record.name;
    Some(match record.status {
        ToolStatus::Active => return None,
        // In dynamic-mcp mode the client knows the control plane's names.
        ToolStatus::Disabled if caller.compat() => format!(
            "Tool '{name}' is disabled. Enable it with dynamic.tool.enable {{\"name\": \"{name}\", \"enabled\": true}}, then call it again."
        ),
        ToolStatus::Disabled => format!(
            "Tool '{name}' is disabled. Enable it with toggle_custom_tool {{\"name\": \"{name}\", \"enabled\": true}}, then call it again."
        ),
        ToolStatus::PendingApproval => format!(
            "Tool '{name}' waits for a person's approval before it can be called (it declares {}). You cannot approve it yourself: ask the user to approve it {}. Until then, use another tool, or drop that permission with update_custom_tool.",
            dangerous(&record),
            caller
                .service()
                .config()
                .approval_doors
                .describe_tool_approval(name, &record.id)
        ),
        ToolStatus::Rejected => format!(
            "Tool '{name}' was rejected by a person and cannot be called. Delete it with delete_custom_tool {{\"name\": \"{name}\", \"confirm\": true}} and create another without {}, or use another tool.",
            dangerous(&record)
        ),
    })
}

/// The dangerous permissions a tool declares, as words.
pub(crate) fn dangerous(record: &toolsmith_core::CustomToolRecord) -> String {
    let dangerous: Vec<&str> = record
        .permissions
        .iter()
        .filter(|p| p.is_dangerous())
        .map(|p| p.as_str())
        .collect();
    if dangerous.is_empty() {
        "permissions that need approval".to_owned()
    } else {
        format!("the {} permission", dangerous.join(", "))
    }
}
