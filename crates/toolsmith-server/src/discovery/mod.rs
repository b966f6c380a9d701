//! Tool discovery, as the discovery meta-tools (`search_tools`, `get_tool_help`, `use_tool`,
//! `batch_use_tool`) and the errors of the MCP server need it: pure functions over tool
//! definitions, no I/O.
//!
//! - [`text`] — words, stop words, stems and synonyms: a request as a person phrases it
//!   becomes the terms worth searching for.
//! - [`index`] — [`SearchIndex`]: BM25 over any matching term, fields weighted, with synonyms,
//!   prefixes and typos as weaker alternatives; [`search`] for a one-off query.
//! - [`suggest`] — the names closest to a name that does not exist (edit distance, then search).
//! - [`docs`] — a tool's parameters as text ([`parameter_docs`], [`expected_shape`]).
//! - the tool max limits table of the spec ([`TOOL_LIMITS`], [`apply_tool_limits`]) lives in
//!   `toolsmith_core::tool_limits`: the pipeline applies it to every call.

pub mod docs;
pub mod index;
pub mod suggest;
pub mod text;

pub use docs::{expected_shape, parameter_docs};
pub use index::{Document, Evidence, Hit, Ranked, SearchIndex, search};
pub use suggest::closest_names;
pub use toolsmith_core::tool_limits::{TOOL_LIMITS, ToolLimit, apply_tool_limits, tool_limit};

/// Whether a query asks for every tool rather than a search.
pub fn lists_everything(query: &str) -> bool {
    let q = query.trim();
    q.is_empty() || q == "*" || q.eq_ignore_ascii_case("all")
}

/// Whether a tool of `category` passes a category filter (none, or the same case-insensitively).
pub fn in_category(category: Option<&str>, filter: Option<&str>) -> bool {
    match filter.map(str::trim).filter(|f| !f.is_empty()) {
        None => true,
        Some(filter) => category.is_some_and(|c| c.eq_ignore_ascii_case(filter)),
    }
}

#[cfg(test)]
mod tests;
