//! The memory tools (003 §21 "Memory", 001's `memory` group): the agent's persistent memory of
//! its user — facts, preferences, events and skills with an importance from 0 to 1 and tags —
//! kept in the `memory` collection of the per-user record store ([`crate::data`]), so on
//! either backend, scoped to the caller's user and agent.
//!
//! - [`remember`] — `remember`, `batch_remember`; the same memory stored twice is found, not
//!   duplicated (its importance and tags merge into the first).
//! - [`recall`] — `recall` and 001's `memory_search`, ranked by [`rank`]: full-text relevance ×
//!   importance × recency decay that importance slows.
//! - [`manage`] — `forget`, `boost_memory`, `list_memories`, `memory_stats`, 001's `memory_get`.

pub mod manage;
pub mod rank;
pub mod recall;
pub mod remember;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use toolsmith_core::RegisteredTool;
use toolsmith_core::data::DataRecord;
use toolsmith_core::object;

use crate::BuiltinEnv;
use crate::data::{Records, data_tool, data_tool_with};
use crate::groups::{ToolGroup, on};
use crate::utilities::Fail;
use toolsmith_core::ResultSource;
use toolsmith_core::model::Effect;

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Memory";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[on(
    "memory",
    "Memory",
    "The agent's persistent memory of its user: remember facts, preferences, events and skills; recall them by relevance, importance and recency; boost and forget them.",
    ResultSource::UserData,
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
)];

/// What each tool of this family does to the world: its MCP annotations come from here
/// (`crate::Effects`; every tool in exactly one entry).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &[
            "recall",
            "list_memories",
            "memory_stats",
            "memory_search",
            "memory_get",
        ],
    ),
    (
        Effect::Adds,
        &["remember", "batch_remember", "boost_memory"],
    ),
    (Effect::Deletes, &["forget"]),
];
/// The record store's collection of memories.
pub const COLLECTION: &str = "memory";
/// The spec's memory types.
pub const TYPES: &[&str] = &["fact", "preference", "event", "skill"];
/// What each of [`TYPES`] means, for the schemas that name them.
pub const TYPE_MEANINGS: &str = "fact (about the user or the world), preference (likes, dislikes, how they want things done), event (something that happened or will), skill (something the user knows or does)";
/// Longest memory, in bytes ("concise but complete").
pub const MAX_CONTENT_BYTES: usize = 4000;
/// Most tags on one memory.
pub const MAX_TAGS: usize = 20;
/// Importance when the caller gives none.
pub const DEFAULT_IMPORTANCE: f64 = 0.5;

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    vec![
        data_tool(env, CATEGORY, remember::definition(), |c| {
            Box::pin(remember::run(c))
        }),
        data_tool(env, CATEGORY, remember::batch_definition(), |c| {
            Box::pin(remember::run_batch(c))
        }),
        data_tool_with(
            env,
            CATEGORY,
            recall::definition(),
            recall::Recall(env.clone()),
        ),
        data_tool_with(
            env,
            CATEGORY,
            recall::search_definition(),
            recall::Recall(env.clone()),
        ),
        data_tool(env, CATEGORY, manage::forget_definition(), |c| {
            Box::pin(manage::forget(c))
        }),
        data_tool(env, CATEGORY, manage::boost_definition(), |c| {
            Box::pin(manage::boost(c))
        }),
        data_tool(env, CATEGORY, manage::list_definition(), |c| {
            Box::pin(manage::list(c))
        }),
        data_tool(env, CATEGORY, manage::stats_definition(), |c| {
            Box::pin(manage::stats(c))
        }),
        data_tool(env, CATEGORY, manage::get_definition(), |c| {
            Box::pin(manage::get(c))
        }),
    ]
}

/// A memory as the tools return it.
#[must_use]
pub fn view(record: &DataRecord) -> Value {
    let mut view = json!({
        "id": record.id,
        "content": record.document.get("content").and_then(Value::as_str).unwrap_or_default(),
        "type": record.kind.as_deref().unwrap_or("fact"),
        "importance": rounded(record.weight),
        "tags": record.tags,
        "createdAt": record.created_at,
        "updatedAt": record.updated_at,
    });
    // A memory written as a file (an agent's MEMORY.md or memory/*) names it.
    if let Some(path) = record.document.get("path").and_then(Value::as_str) {
        object::set(&mut view, "file", json!(path));
    }
    view
}

/// What full-text search reads of a memory: its content and its tags.
pub(crate) fn search_text(content: &str, tags: &[String]) -> String {
    if tags.is_empty() {
        content.to_owned()
    } else {
        format!("{content}\n{}", tags.join(" "))
    }
}

/// A number for a reply, to 4 places.
pub(crate) fn rounded(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The memory `id` of the caller's scope, or an error that says how to find ids.
pub(crate) async fn existing(
    records: &dyn Records,
    scope: &toolsmith_core::data::RecordScope,
    id: &str,
) -> Result<DataRecord, Fail> {
    records.get(scope, COLLECTION, id).await?.ok_or_else(|| {
        Fail::Args(format!(
            "no memory with id '{id}' in your memory: find ids with recall or list_memories"
        ))
    })
}

/// The optional `importance` argument: a number from 0 to 1.
pub(crate) fn importance_arg(args: &Value, key: &str, default: f64) -> Result<f64, Fail> {
    let value = crate::utilities::opt_num(args, key, default)?;
    if !(0.0..=1.0).contains(&value) {
        return Err(Fail::Args(format!(
            "'{key}' must be a number from 0 to 1 (higher is more important), got {value}"
        )));
    }
    Ok(value)
}

/// How old a memory is, in days, at `now` (never negative).
pub(crate) fn age_days(record: &DataRecord, now: DateTime<Utc>) -> f64 {
    let secs = (now - record.updated_at).num_seconds().max(0);
    secs as f64 / 86_400.0
}
