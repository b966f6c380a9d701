//! "Did you mean …": the tool names closest to a name that does not exist, for the errors of
//! `tools/call`, `use_tool` and `get_tool_help`.
//!
//! Names a few edits away come first (`calculater` → `calculate`), nearest first; then names
//! that contain the wrong name or are contained in it (`uuid` → `generate_uuid`); then what a
//! search for the name's words finds (`convert_money` → `currency_convert`).

use toolsmith_core::ToolDefinition;

use super::index::search;

/// Most names one suggestion lists.
pub const MAX_SUGGESTIONS: usize = 5;
/// Names longer than this are not compared letter by letter (only searched for).
const MAX_COMPARED_CHARS: usize = 128;

/// Up to [`MAX_SUGGESTIONS`] names of `tools` that `name` was probably meant to be, best first.
pub fn closest_names(name: &str, tools: &[&ToolDefinition]) -> Vec<String> {
    let wanted = name.trim().to_lowercase();
    let mut out: Vec<String> = Vec::new();
    if wanted.is_empty() {
        return out;
    }
    if wanted.chars().count() <= MAX_COMPARED_CHARS {
        let max_edits = (wanted.chars().count() / 3).clamp(1, 3);
        let mut near: Vec<(usize, &str)> = tools
            .iter()
            .filter(|t| t.name.len().abs_diff(wanted.len()) <= max_edits)
            .map(|t| (strsim::levenshtein(&t.name, &wanted), t.name.as_str()))
            .filter(|(distance, _)| *distance <= max_edits)
            .collect();
        near.sort();
        out.extend(near.into_iter().map(|(_, n)| n.to_owned()));
        if wanted.len() >= 3 {
            let mut containing: Vec<&str> = tools
                .iter()
                .map(|t| t.name.as_str())
                .filter(|n| n.contains(wanted.as_str()) || wanted.contains(*n))
                .collect();
            containing.sort_by_key(|n| n.len().abs_diff(wanted.len()));
            push_new(&mut out, containing.into_iter().map(str::to_owned));
        }
    }
    let words = wanted.replace(['_', '-', '.'], " ");
    if out.len() < MAX_SUGGESTIONS && !super::lists_everything(&words) {
        let found = search(tools, &words, None)
            .into_iter()
            .take(MAX_SUGGESTIONS)
            .map(|hit| hit.tool.name.clone());
        push_new(&mut out, found);
    }
    out.truncate(MAX_SUGGESTIONS);
    out
}

fn push_new(out: &mut Vec<String>, names: impl Iterator<Item = String>) {
    for name in names {
        if !out.contains(&name) {
            out.push(name);
        }
    }
}
