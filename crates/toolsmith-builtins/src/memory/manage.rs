//! `forget`, `boost_memory`, `list_memories`, `memory_stats` and 001's `memory_get`: the
//! memories of the caller's scope by id, listed, and counted.

use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::data::{RecordOrder, RecordQuery};
use toolsmith_core::object;

use super::{COLLECTION, MAX_TAGS, TYPE_MEANINGS, TYPES, existing, importance_arg, rounded, view};
use crate::data::{Call, id_arg, tags_arg};
use crate::utilities::{Fail, choice, opt_int};

/// Most memories one `list_memories` returns (003 "Tool Max Limits": 50, default 20).
pub const MAX_LIST: i64 = 50;
pub const DEFAULT_LIST: i64 = 20;
/// How much `boost_memory` adds when the caller does not say.
pub const DEFAULT_BOOST: f64 = 0.1;

fn id_schema(description: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "memoryId": {
                "type": "string",
                "minLength": 1,
                "maxLength": 100,
                "description": description
            }
        },
        "required": ["memoryId"],
        "additionalProperties": false
    })
}

pub fn forget_definition() -> ToolDefinition {
    ToolDefinition::new(
        "forget",
        "Remove a specific memory from persistent memory, for good.",
        id_schema("The id of the memory to remove (from recall or list_memories)."),
    )
    .with_tags(&["memory", "forget", "delete", "remove", "erase", "unlearn"])
}

pub fn get_definition() -> ToolDefinition {
    ToolDefinition::new(
        "memory_get",
        "Retrieve a specific memory document by its id.",
        id_schema("The id of the memory (from memory_search, recall or list_memories)."),
    )
    .with_tags(&["memory", "get", "read", "retrieve", "fetch", "document"])
}

pub fn boost_definition() -> ToolDefinition {
    let mut schema = id_schema("The id of the memory to boost.");
    if let Some(properties) = schema.get_mut("properties") {
        object::set(
            properties,
            "amount",
            json!({
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": 1,
                "description": "How much importance to add (default 0.1; importance stops at 1)."
            }),
        );
    }
    ToolDefinition::new(
        "boost_memory",
        "Increase a memory's importance, so it is recalled earlier and fades slower.",
        schema,
    )
    .with_tags(&[
        "memory",
        "boost",
        "importance",
        "prioritize",
        "important",
        "reinforce",
    ])
}

pub fn list_definition() -> ToolDefinition {
    ToolDefinition::new(
        "list_memories",
        "List memories, the most recent (or the most important) first, optionally of one type \
         or with some tags.",
        json!({
            "type": "object",
            "properties": {
                "type": { "type": "string", "enum": TYPES, "description": format!("Only memories of this type: {TYPE_MEANINGS}.") },
                "tags": {
                    "type": "array",
                    "items": { "type": "string", "minLength": 1, "maxLength": 64 },
                    "maxItems": MAX_TAGS,
                    "description": "Only memories with any of these tags."
                },
                "orderBy": {
                    "type": "string",
                    "enum": ["recent", "importance"],
                    "description": "recent (default: most recently stored or boosted first) or importance."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_LIST,
                    "description": "Max results (default: 20, max: 50)."
                },
                "offset": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 100000,
                    "description": "Skip this many (for the next page)."
                }
            },
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "memory", "list", "memories", "recent", "browse", "all", "show", "saved", "stored",
        "everything",
    ])
}

pub fn stats_definition() -> ToolDefinition {
    ToolDefinition::new(
        "memory_stats",
        "Get memory system statistics: how many memories are stored, of each type, their \
         average importance, the oldest and newest, and the limit.",
        json!({ "type": "object", "properties": {}, "additionalProperties": false }),
    )
    .with_tags(&[
        "memory",
        "memories",
        "stats",
        "statistics",
        "count",
        "summary",
        "how many",
        "number",
        "total",
        "stored",
    ])
}

pub async fn forget(call: Call<'_>) -> Result<Value, Fail> {
    let id = id_arg(&call.args, "memoryId")?;
    if !call.records.delete(&call.scope, COLLECTION, id).await? {
        return Err(Fail::Args(format!(
            "no memory with id '{id}' in your memory (already forgotten?): find ids with \
             recall or list_memories"
        )));
    }
    Ok(json!({ "success": true, "deleted": true, "memoryId": id }))
}

pub async fn get(call: Call<'_>) -> Result<Value, Fail> {
    let id = id_arg(&call.args, "memoryId")?;
    let record = existing(call.records, &call.scope, id).await?;
    Ok(json!({ "memory": view(&record) }))
}

pub async fn boost(call: Call<'_>) -> Result<Value, Fail> {
    let id = id_arg(&call.args, "memoryId")?;
    let amount = importance_arg(&call.args, "amount", DEFAULT_BOOST)?;
    if amount == 0.0 {
        return Err(Fail::Args(
            "'amount' must be more than 0 (default 0.1)".to_owned(),
        ));
    }
    let mut record = existing(call.records, &call.scope, id).await?;
    let previous = record.weight;
    record.weight = (previous + amount).min(1.0);
    record.updated_at = Utc::now();
    let boosted = call.records.update(record).await?.ok_or_else(|| {
        Fail::Args(format!(
            "the memory '{id}' was forgotten while it was being boosted"
        ))
    })?;
    Ok(json!({
        "success": true,
        "previousImportance": rounded(previous),
        "memory": view(&boosted),
    }))
}

pub async fn list(call: Call<'_>) -> Result<Value, Fail> {
    let args = &call.args;
    let kind = match args.get("type") {
        None | Some(Value::Null) => None,
        Some(_) => Some(choice(args, "type", "", TYPES)?.to_owned()),
    };
    let order = match choice(args, "orderBy", "recent", &["recent", "importance"])? {
        "importance" => RecordOrder::Weight,
        _ => RecordOrder::Updated,
    };
    let limit = opt_int(args, "limit", DEFAULT_LIST, 1, MAX_LIST)?;
    let offset = opt_int(args, "offset", 0, 0, 100_000)?;
    let hits = call
        .records
        .query(&RecordQuery {
            owner: call.scope.owner.clone(),
            agent: call.scope.agent.clone(),
            collection: COLLECTION.to_owned(),
            kind,
            category: None,
            tags: tags_arg(args, "tags", MAX_TAGS)?,
            text: None,
            order,
            limit: u32::try_from(limit).unwrap_or(20),
            offset: u32::try_from(offset).unwrap_or(0),
            ..RecordQuery::default()
        })
        .await?;
    let memories: Vec<Value> = hits.iter().map(|h| view(&h.record)).collect();
    let total = call.records.stats(&call.scope, COLLECTION).await?.total;
    Ok(json!({ "count": memories.len(), "total": total, "memories": memories }))
}

pub async fn stats(call: Call<'_>) -> Result<Value, Fail> {
    let stats = call.records.stats(&call.scope, COLLECTION).await?;
    let by_type: serde_json::Map<String, Value> = TYPES
        .iter()
        .map(|t| {
            (
                (*t).to_owned(),
                json!(stats.by_kind.get(*t).copied().unwrap_or(0)),
            )
        })
        .collect();
    Ok(json!({
        "total": stats.total,
        "byType": by_type,
        "averageImportance": rounded(stats.mean_weight),
        "oldest": stats.oldest,
        "newest": stats.newest,
        "maxMemories": call.records.limits().max_records_per_collection,
    }))
}
