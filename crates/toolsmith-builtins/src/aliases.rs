//! Built-ins that are another name for a built-in (GoClaw's and 001's names beside 003's):
//! kept callable for the clients written against those names, but left out of MCP
//! `tools/list` ([`RegisteredTool::deferred`]), so a model is not shown the same tool twice
//! (issue 35: six aliases in the default listing, a tool named plain `search` among them, and
//! three JavaScript runners).
//! The REST catalogue, the tool-group views and `search_tools` still name them.

use toolsmith_core::RegisteredTool;

/// Each alias and the tool it stands for (the one listed).
pub const ALIASES: &[(&str, &str)] = &[
    ("list_files", "list_directory"),
    ("search", "search_files"),
    ("web_fetch", "fetch_web_page"),
    ("web_search", "search_web"),
    ("memory_search", "recall"),
    // GoClaw's names of the image and audio families' main tools.
    ("image", "generate_image"),
    ("tts", "text_to_speech"),
    // One tool with an `action` for what the six scheduler tools do one each.
    ("cron", "create_scheduled_task"),
    // The same QuickJS run without permissions; the MCP server's `run_js_ephemeral` runs it
    // with them (and `dependencies`), and `sandbox_run_js` runs JS in a session's folder.
    ("execute_javascript", RUN_JS_EPHEMERAL),
];

/// The MCP server's own JS runner (not a built-in: `toolsmith-server`'s `run_js_ephemeral`).
const RUN_JS_EPHEMERAL: &str = "run_js_ephemeral";

/// The tool `name` stands for, if it is an alias.
#[must_use]
pub fn canonical(name: &str) -> Option<&'static str> {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map(|(_, tool)| *tool)
}

/// `tool`, left out of `tools/list` when it is an alias.
#[must_use]
pub fn defer(tool: RegisteredTool) -> RegisteredTool {
    let alias = canonical(tool.name()).is_some();
    tool.with_deferred(alias)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An alias and its tool are built-ins of the same group, so switching one switches both
    /// (the server's JS runner aside).
    #[test]
    fn every_alias_names_a_built_in_of_its_own_group() {
        for (alias, tool) in ALIASES.iter().filter(|(_, tool)| *tool != RUN_JS_EPHEMERAL) {
            let of = |name: &str| crate::groups::group_of(name).map(|g| g.id);
            assert!(of(alias).is_some(), "{alias} is no built-in");
            assert_eq!(of(alias), of(tool), "{alias} and {tool}");
        }
    }
}
