//! `recall` and 001's `memory_search`: the memories that match a natural-language query, best
//! first. The store's full-text search finds up to [`CANDIDATES`] matches (any word of the
//! query, stemmed, common words ignored); [`super::rank`] orders them by relevance,
//! importance and recency, and the best `limit` are returned with their score.

use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::data::{RecordOrder, RecordQuery};
use toolsmith_core::object;

use super::{COLLECTION, MAX_TAGS, TYPE_MEANINGS, TYPES, age_days, rank, rounded, view};
use crate::data::{Call, record_text, tags_arg};
use crate::utilities::{Fail, choice, opt_int};

/// Most matches ranked per query.
pub const CANDIDATES: u32 = 200;
/// Longest query, in bytes.
pub const MAX_QUERY_BYTES: usize = 1000;
/// Most results (003 "Tool Max Limits": `recall` 50, default 10).
pub const MAX_LIMIT: i64 = 50;
pub const DEFAULT_LIMIT: i64 = 10;

fn query_property() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_QUERY_BYTES,
        "description": "Natural language search query (e.g. \"what does the user like to drink\")."
    })
}

fn limit_property() -> Value {
    json!({
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_LIMIT,
        "description": "Max results (default: 10, max: 50)."
    })
}

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "recall",
        "Search persistent memory for what is known about the user or a topic (\"what do you \
         know about me\", \"what did I tell you about …\"): the best matches first, ranked by \
         relevance, importance and how recent they are.",
        json!({
            "type": "object",
            "properties": {
                "query": query_property(),
                "type": {
                    "type": "string",
                    "enum": TYPES,
                    "description": format!("Only memories of this type: {TYPE_MEANINGS}.")
                },
                "tags": {
                    "type": "array",
                    "items": { "type": "string", "minLength": 1, "maxLength": 64 },
                    "maxItems": MAX_TAGS,
                    "description": "Filter by tags (memories with any of them)."
                },
                "limit": limit_property()
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "memory",
        "recall",
        "remember",
        "retrieve",
        "search",
        "lookup",
        "know",
        "about me",
        "user",
        "preference",
        "fact",
        "what do you know",
        "told",
        "mentioned",
        "said",
        "do you remember",
    ])
}

pub fn search_definition() -> ToolDefinition {
    ToolDefinition::new(
        "memory_search",
        "Search memory documents (the agent's persistent memories) by a query; the same \
         ranking as recall.",
        json!({
            "type": "object",
            "properties": {
                "query": query_property(),
                "limit": limit_property()
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "memory",
        "search",
        "recall",
        "find",
        "documents",
        "retrieve",
    ])
}

pub async fn run(call: Call<'_>) -> Result<Value, Fail> {
    let args = &call.args;
    let text = record_text(args, "query", MAX_QUERY_BYTES)?;
    let kind = match args.get("type") {
        None | Some(Value::Null) => None,
        Some(_) => Some(choice(args, "type", "", TYPES)?.to_owned()),
    };
    let tags = tags_arg(args, "tags", MAX_TAGS)?;
    let limit = opt_int(args, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)?;
    if toolsmith_core::data::query_terms(text).is_empty() {
        return Err(Fail::Args(format!(
            "the query '{text}' has no word to search for (only very common words): name what \
             to look for, such as \"favourite food\" or \"daughter's birthday\""
        )));
    }
    let hits = call
        .records
        .query(&RecordQuery {
            owner: call.scope.owner.clone(),
            agent: call.scope.agent.clone(),
            collection: COLLECTION.to_owned(),
            kind,
            category: None,
            tags,
            text: Some(text.to_owned()),
            order: RecordOrder::Relevance,
            limit: CANDIDATES,
            offset: 0,
            ..RecordQuery::default()
        })
        .await?;
    let now = Utc::now();
    let mut ranked: Vec<(f64, _)> = hits
        .into_iter()
        .map(|hit| {
            let r = &hit.record;
            (rank::score(hit.relevance, r.weight, age_days(r, now)), hit)
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.record.id.cmp(&b.1.record.id))
    });
    ranked.truncate(usize::try_from(limit).unwrap_or(10));
    let memories: Vec<Value> = ranked
        .iter()
        .map(|(score, hit)| {
            let mut v = view(&hit.record);
            object::set(&mut v, "score", json!(rounded(*score)));
            object::set(&mut v, "relevance", json!(rounded(hit.relevance)));
            v
        })
        .collect();
    let mut out = json!({
        "query": text,
        "count": memories.len(),
        "memories": memories,
    });
    if ranked.is_empty() {
        object::set(
            &mut out,
            "message",
            json!("No memory matches. Try other words, or list_memories to see what is stored."),
        );
    }
    Ok(out)
}
