//! `recall` and 001's `memory_search`: the memories that match a natural-language query, best
//! first. The store's full-text search finds up to [`CANDIDATES`] matches (any word of the
//! query, stemmed, common words ignored); [`super::rank`] orders them by relevance,
//! importance and recency, and the best `limit` are returned with their score. With the
//! caller's embeddings service, the ranking is hybrid ([`crate::vectors::hybrid`]): the most
//! important memories no word matched are candidates too, and each candidate's relevance is its
//! words' plus its meaning's, so a memory is found by what it means as well as by its words.

use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::data::{RecordOrder, RecordQuery};
use toolsmith_core::object;

use super::{COLLECTION, MAX_TAGS, TYPE_MEANINGS, TYPES, age_days, rank, rounded, view};
use crate::BuiltinEnv;
use crate::data::{Call, DataWork, record_text, tags_arg};
use crate::utilities::{Fail, choice, opt_int};
use crate::vectors::hybrid;

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

/// `recall` and `memory_search`, with the built-ins' handles (the embeddings service of the
/// hybrid ranking).
pub struct Recall(pub BuiltinEnv);

#[async_trait::async_trait]
impl DataWork for Recall {
    async fn run(&self, call: Call<'_>) -> Result<Value, Fail> {
        run(&self.0, call).await
    }
}

/// Characters of a memory embedded for the hybrid ranking.
const EMBEDDED_CHARS: usize = 2000;

pub async fn run(env: &BuiltinEnv, call: Call<'_>) -> Result<Value, Fail> {
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
    let query = RecordQuery {
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
    };
    let mut hits = call.records.query(&query).await?;
    // With an embeddings service, the most important memories no word matched are candidates
    // too, ranked by meaning (`vectors::hybrid`); without one, nothing changes.
    let similarity = if hybrid::configured(env, call.ctx).await {
        let more = call
            .records
            .query(&RecordQuery {
                text: None,
                order: RecordOrder::Weight,
                ..query
            })
            .await?;
        for mut hit in more {
            if !hits.iter().any(|h| h.record.id == hit.record.id) {
                hit.relevance = 0.0;
                hits.push(hit);
            }
        }
        let texts: Vec<String> = hits
            .iter()
            .map(|hit| {
                hit.record
                    .search_text
                    .chars()
                    .take(EMBEDDED_CHARS)
                    .collect()
            })
            .collect();
        Some(hybrid::similarity(env, call.ctx, text, &texts, "recall").await)
    } else {
        None
    };
    // Hybrid: the best word match counts as much as a perfect similarity; the sum, relative to
    // the best candidate's, is the relevance the ranking weighs.
    let mut relevance: Vec<Option<f64>> = hits
        .iter()
        .enumerate()
        .map(|(i, hit)| match &similarity {
            Some(similarity) => similarity.rank(i, hit.relevance * hybrid::SIMILARITY_WEIGHT),
            None => Some(hit.relevance),
        })
        .collect();
    if similarity.is_some() {
        let best = relevance.iter().flatten().fold(0.0_f64, |a, b| a.max(*b));
        if best > 0.0 {
            relevance.iter_mut().flatten().for_each(|r| *r /= best);
        }
    }
    let now = Utc::now();
    let mut ranked: Vec<(f64, f64, Option<f64>, _)> = hits
        .into_iter()
        .zip(relevance)
        .enumerate()
        .filter_map(|(i, (hit, relevance))| {
            let relevance = relevance?;
            let r = &hit.record;
            let close = similarity.as_ref().and_then(|s| s.of(i));
            Some((
                rank::score(relevance, r.weight, age_days(r, now)),
                relevance,
                close,
                hit,
            ))
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.3.record.id.cmp(&b.3.record.id))
    });
    ranked.truncate(usize::try_from(limit).unwrap_or(10));
    let memories: Vec<Value> = ranked
        .iter()
        .map(|(score, relevance, close, hit)| {
            let mut v = view(&hit.record);
            object::set(&mut v, "score", json!(rounded(*score)));
            object::set(&mut v, "relevance", json!(rounded(*relevance)));
            if let Some(close) = close {
                object::set(&mut v, "similarity", json!(rounded(*close)));
            }
            v
        })
        .collect();
    let mut out = json!({
        "query": text,
        "count": memories.len(),
        "memories": memories,
    });
    if let Some(similarity) = &similarity {
        similarity.note(&mut out, true);
    }
    if ranked.is_empty() {
        object::set(
            &mut out,
            "message",
            json!("No memory matches. Try other words, or list_memories to see what is stored."),
        );
    }
    Ok(out)
}
