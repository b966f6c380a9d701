//! `remember` and `batch_remember`: store memories. A memory of the same type whose content
//! is the same once case, spacing and punctuation are set aside is the same memory: storing it
//! again finds the first (dedup key: a SHA-256 of the type and the normalized content), raises
//! its importance to the higher of the two, adds the new tags and refreshes its time.

use chrono::Utc;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolsmith_core::ToolDefinition;
use toolsmith_core::data::{DataRecord, PutOutcome, RecordScope};

use super::{
    COLLECTION, DEFAULT_IMPORTANCE, MAX_CONTENT_BYTES, MAX_TAGS, TYPE_MEANINGS, TYPES,
    importance_arg, search_text, view,
};
use crate::data::{Call, Records, new_id, record_text, tags_arg};
use crate::utilities::{Fail, array_arg, required_choice};

/// Most memories one `batch_remember` stores.
pub const MAX_BATCH: usize = 50;

fn memory_properties() -> Value {
    json!({
        "content": {
            "type": "string",
            "description": "The information to remember, concise but complete (e.g. \"The user's daughter Mia was born on 3 May 2019\").",
            "minLength": 1,
            "maxLength": MAX_CONTENT_BYTES
        },
        "type": {
            "type": "string",
            "enum": TYPES,
            "description": format!("{TYPE_MEANINGS}.")
        },
        "importance": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "0 to 1, higher = more important: recalled first and forgotten slower (default 0.5)."
        },
        "tags": {
            "type": "array",
            "items": { "type": "string", "minLength": 1, "maxLength": 64 },
            "maxItems": MAX_TAGS,
            "description": "Tags for categorization (e.g. [\"work\", \"project-x\"])."
        }
    })
}

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "remember",
        "Store information in persistent memory so it can be recalled in later conversations: \
         facts about the user, their preferences, events and skills. Storing the same thing \
         twice keeps one memory.",
        json!({
            "type": "object",
            "properties": memory_properties(),
            "required": ["content", "type"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "memory",
        "remember",
        "memorize",
        "store",
        "save",
        "fact",
        "preference",
        "persist",
        "keep",
        "learn",
        "recall later",
        "user profile",
    ])
}

pub fn batch_definition() -> ToolDefinition {
    ToolDefinition::new(
        "batch_remember",
        "Store several memories at once (up to 50), each like remember.",
        json!({
            "type": "object",
            "properties": {
                "memories": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_BATCH,
                    "items": {
                        "type": "object",
                        "properties": memory_properties(),
                        "required": ["content", "type"],
                        "additionalProperties": false
                    },
                    "description": "The memories: objects with content, type and optional importance and tags."
                }
            },
            "required": ["memories"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["memory", "remember", "batch", "many", "store", "save", "bulk"])
}

/// One memory to store, read from its arguments.
struct NewMemory {
    content: String,
    kind: String,
    importance: f64,
    tags: Vec<String>,
}

fn read(args: &Value) -> Result<NewMemory, Fail> {
    Ok(NewMemory {
        content: record_text(args, "content", MAX_CONTENT_BYTES)?.to_owned(),
        kind: required_choice(args, "type", TYPES)?.to_owned(),
        importance: importance_arg(args, "importance", DEFAULT_IMPORTANCE)?,
        tags: tags_arg(args, "tags", MAX_TAGS)?,
    })
}

pub async fn run(call: Call<'_>) -> Result<Value, Fail> {
    let memory = read(&call.args)?;
    store(call.records, &call.scope, memory).await
}

pub async fn run_batch(call: Call<'_>) -> Result<Value, Fail> {
    let items = array_arg(&call.args, "memories", MAX_BATCH)?;
    if items.is_empty() {
        return Err(Fail::Args(
            "'memories' must hold at least one memory".to_owned(),
        ));
    }
    // Every item is checked before any is stored: a bad one stores none.
    let memories = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            read(item).map_err(|e| Fail::Args(format!("memories[{i}]: {}", e.message())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut results = Vec::with_capacity(memories.len());
    let (mut stored, mut duplicates) = (0, 0);
    for memory in memories {
        let result = store(call.records, &call.scope, memory).await?;
        if result.get("duplicate") == Some(&Value::Bool(true)) {
            duplicates += 1;
        } else {
            stored += 1;
        }
        results.push(result);
    }
    Ok(json!({
        "success": true,
        "stored": stored,
        "duplicates": duplicates,
        "results": results,
    }))
}

/// Stores one memory, or merges it into the same one stored before.
async fn store(
    records: &dyn Records,
    scope: &RecordScope,
    memory: NewMemory,
) -> Result<Value, Fail> {
    let now = Utc::now();
    let record = DataRecord {
        collection: COLLECTION.to_owned(),
        id: new_id("mem"),
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        document: json!({ "content": memory.content }),
        search_text: search_text(&memory.content, &memory.tags),
        dedup_key: Some(dedup_key(&memory.kind, &memory.content)),
        kind: Some(memory.kind),
        category: None,
        weight: memory.importance,
        at: None,
        tags: memory.tags,
        created_at: now,
        updated_at: now,
    };
    match records.put(record.clone()).await? {
        PutOutcome::Inserted(stored) => Ok(json!({
            "success": true,
            "duplicate": false,
            "memory": view(&stored),
            "message": "Remembered.",
        })),
        PutOutcome::Duplicate(mut found) => {
            found.weight = found.weight.max(record.weight);
            for tag in record.tags {
                if !found.tags.contains(&tag) && found.tags.len() < MAX_TAGS {
                    found.tags.push(tag);
                }
            }
            let content = found
                .document
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            found.search_text = search_text(&content, &found.tags);
            found.updated_at = now;
            let id = found.id.clone();
            // Gone between the two steps (forgotten meanwhile): say so, never store it twice.
            let merged = records.update(found).await?.ok_or_else(|| {
                Fail::Run(format!(
                    "the same memory ('{id}') was being forgotten at the same time; call \
                     remember again to store it"
                ))
            })?;
            Ok(json!({
                "success": true,
                "duplicate": true,
                "memory": view(&merged),
                "message": "Already remembered: the existing memory was kept, with the higher \
                            importance and the tags of both.",
            }))
        }
    }
}

/// The same memory's key: its type and its words, lower-cased, in order.
fn dedup_key(kind: &str, content: &str) -> String {
    let words: Vec<String> = content
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let digest = Sha256::digest(format!("{kind}\u{1f}{}", words.join(" ")).as_bytes());
    format!("{kind}:{}", hex::encode(digest))
}

#[cfg(test)]
mod tests {
    use super::dedup_key;

    #[test]
    fn the_same_memory_differently_written_has_one_key() {
        let a = dedup_key("fact", "The user's cat is called Miso.");
        assert_eq!(a, dedup_key("fact", "  the USER'S cat is called miso "));
        assert_ne!(a, dedup_key("preference", "The user's cat is called Miso."));
        assert_ne!(a, dedup_key("fact", "The user's cat is called Misa."));
    }
}
