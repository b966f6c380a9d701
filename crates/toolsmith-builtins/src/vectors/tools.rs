//! The seven tools of vector search. Each is a web tool (it holds `network`: text is embedded
//! by the caller's embeddings service) on the caller's own collections ([`VectorIndex`]).

use chrono::Utc;
use serde_json::{Map, Value, json};
use toolsmith_core::vector::{VectorCollectionRecord, VectorItem, VectorQuery, is_filter_key};
use toolsmith_core::{RegisteredTool, ToolDefinition};

use super::embed::{cosine, embed};
use super::{
    CATEGORY, DEFAULT_TOP_K, MAX_COLLECTIONS, MAX_DIMENSIONS, MAX_TEXT_CHARS, MAX_TOP_K,
    MAX_VECTORS_PER_CALL, VectorIndex,
};
use crate::BuiltinEnv;
use crate::data::DataError;
use crate::web::{Call, ToolError, web_tool_in};

/// Every tool of the family.
pub fn all(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    vec![
        web_tool_in(env, CATEGORY, create_embedding_definition(), |c| {
            Box::pin(create_embedding(c))
        }),
        web_tool_in(env, CATEGORY, semantic_search_definition(), |c| {
            Box::pin(semantic_search(c))
        }),
        web_tool_in(env, CATEGORY, upsert_definition(), |c| Box::pin(upsert(c))),
        web_tool_in(env, CATEGORY, delete_definition(), |c| Box::pin(delete(c))),
        web_tool_in(env, CATEGORY, list_definition(), |c| Box::pin(list(c))),
        web_tool_in(env, CATEGORY, create_collection_definition(), |c| {
            Box::pin(create_collection(c))
        }),
        web_tool_in(env, CATEGORY, similarity_definition(), |c| {
            Box::pin(similarity(c))
        }),
    ]
}

const NAME_RULE: &str = "1 to 64 letters, digits, '_', '-' or '.'";

fn collection_schema() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 64, "pattern": "^[A-Za-z0-9_.-]+$", "description": "The collection's name (see list_vector_collections)."})
}

fn text_schema(what: &str) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS, "description": what})
}

fn create_embedding_definition() -> ToolDefinition {
    ToolDefinition::new(
        "create_embedding",
        "Create a vector embedding of a text (its meaning as numbers) through the embeddings \
         service configured in the Config Center ('embeddings'). To search by meaning, store \
         texts with upsert_vectors and use semantic_search instead.",
        json!({
            "type": "object",
            "properties": {"text": text_schema("The text to embed (at most 8000 characters).")},
            "required": ["text"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "embedding",
        "embed text",
        "vectorize",
        "text to vector",
        "embeddings",
    ])
}

fn semantic_search_definition() -> ToolDefinition {
    ToolDefinition::new(
        "semantic_search",
        "Search one of your vector collections by meaning: the topK items nearest the query \
         (cosine similarity, best first, each with its id, text, metadata and score from -1 to \
         1). 'filter' keeps only items whose metadata has each key equal to the value given \
         (or to any value of a list).",
        json!({
            "type": "object",
            "properties": {
                "query": text_schema("What to look for, in words."),
                "collection": collection_schema(),
                "topK": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "description": "How many results (default 10, at most 50)."},
                "filter": {"type": "object", "maxProperties": 10, "additionalProperties": true, "description": "Metadata to match: {\"key\": value} or {\"key\": [value, ...]} for any of them; every key must match."},
                "minScore": {"type": "number", "minimum": -1, "maximum": 1, "description": "Leave out results scoring below this (default: none)."}
            },
            "required": ["query", "collection"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "semantic search",
        "search by meaning",
        "find similar",
        "similar documents",
        "rag",
        "retrieve",
        "knowledge base",
        "vector search",
        "nearest neighbours",
    ])
}

fn upsert_definition() -> ToolDefinition {
    ToolDefinition::new(
        "upsert_vectors",
        "Insert or replace items of one of your vector collections: each with an id, and the \
         text to embed (through the 'embeddings' service) or its embedding as numbers, and \
         optional metadata to filter on. An id already there is replaced. At most 100 a call.",
        json!({
            "type": "object",
            "properties": {
                "collection": collection_schema(),
                "vectors": {
                    "type": "array", "minItems": 1, "maxItems": MAX_VECTORS_PER_CALL,
                    "description": "The items to store.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The item's id, unique in the collection."},
                            "text": text_schema("The text to embed and keep."),
                            "embedding": {"type": "array", "minItems": 1, "maxItems": MAX_DIMENSIONS, "items": {"type": "number"}, "description": "The embedding itself, instead of a text to embed."},
                            "metadata": {"type": "object", "description": "Fields to filter on in semantic_search (a JSON object)."}
                        },
                        "required": ["id"],
                        "additionalProperties": false
                    }
                }
            },
            "required": ["collection", "vectors"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "index documents",
        "add to knowledge base",
        "store embeddings",
        "insert vectors",
        "add documents to vector store",
    ])
}

fn delete_definition() -> ToolDefinition {
    ToolDefinition::new(
        "delete_vectors",
        "Delete items of one of your vector collections by id; says how many were there.",
        json!({
            "type": "object",
            "properties": {
                "collection": collection_schema(),
                "ids": {"type": "array", "minItems": 1, "maxItems": 1000, "items": {"type": "string", "minLength": 1, "maxLength": 200}, "description": "The ids of the items to delete."}
            },
            "required": ["collection", "ids"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "remove from knowledge base",
        "delete embeddings",
        "remove vectors",
    ])
}

fn list_definition() -> ToolDefinition {
    ToolDefinition::new(
        "list_vector_collections",
        "List your vector collections: name, dimensions, how many items, description.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    )
    .with_tags(&["vector collections", "knowledge bases", "list collections"])
}

fn create_collection_definition() -> ToolDefinition {
    ToolDefinition::new(
        "create_vector_collection",
        "Create a vector collection of your own (a searchable store of texts by meaning). \
         Without 'dimensions' the embeddings service is asked once for its size.",
        json!({
            "type": "object",
            "properties": {
                "name": collection_schema(),
                "dimensions": {"type": "integer", "minimum": 1, "maximum": MAX_DIMENSIONS, "description": "How many numbers each embedding has (default: what the 'embeddings' service makes)."},
                "description": {"type": "string", "maxLength": 500, "description": "What the collection holds."}
            },
            "required": ["name"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "new knowledge base",
        "create vector store",
        "new collection",
        "vector index",
    ])
}

fn similarity_definition() -> ToolDefinition {
    ToolDefinition::new(
        "similarity_score",
        "How similar in meaning two texts are: the cosine similarity of their embeddings \
         (through the 'embeddings' service), from -1 to 1; near 1 means the same meaning.",
        json!({
            "type": "object",
            "properties": {
                "text1": text_schema("The first text."),
                "text2": text_schema("The second text.")
            },
            "required": ["text1", "text2"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "compare texts",
        "how similar",
        "semantic similarity",
        "same meaning",
        "paraphrase",
    ])
}

/// The collections of this server, or the reason there are none.
fn index<'a>(call: &'a Call<'_>) -> Result<&'a dyn VectorIndex, ToolError> {
    call.env.vectors.as_deref().ok_or_else(|| {
        ToolError::NotConfigured(
            "this server keeps no vector collections: it was started without a store for \
             them (an embedder must set BuiltinEnv::vectors; `toolsmith serve` always does)"
                .to_owned(),
        )
    })
}

fn store_error(e: DataError) -> ToolError {
    match e {
        DataError::TooLarge { .. } | DataError::Limit { .. } => ToolError::Args(e.to_string()),
        DataError::Unavailable(_) | DataError::Store(_) | DataError::ReadOnly => {
            ToolError::Provider(e.to_string())
        }
    }
}

fn text<'a>(args: &'a Value, key: &str) -> Result<&'a str, ToolError> {
    let value = args
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| ToolError::Args(format!("'{key}' must be a non-empty text")))?;
    if value.chars().count() > MAX_TEXT_CHARS {
        return Err(ToolError::Args(format!(
            "'{key}' is longer than {MAX_TEXT_CHARS} characters: split it into parts and embed \
             each"
        )));
    }
    Ok(value)
}

fn collection_name(args: &Value, key: &str) -> Result<String, ToolError> {
    let name = args.get(key).and_then(Value::as_str).unwrap_or_default();
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if !ok {
        return Err(ToolError::Args(format!(
            "'{key}' must be a collection name of {NAME_RULE}"
        )));
    }
    Ok(name.to_owned())
}

fn no_collection(name: &str) -> ToolError {
    ToolError::Args(format!(
        "you have no vector collection named '{name}': see yours with list_vector_collections, \
         or make it with create_vector_collection"
    ))
}

fn one(mut vectors: Vec<Vec<f32>>) -> Result<Vec<f32>, ToolError> {
    vectors
        .pop()
        .ok_or_else(|| ToolError::Provider("the embeddings service answered nothing".to_owned()))
}

async fn create_embedding(call: Call<'_>) -> Result<Value, ToolError> {
    let text = text(&call.args, "text")?.to_owned();
    let out = embed(&call, &[text]).await?;
    let embedding = one(out.vectors)?;
    Ok(json!({
        "success": true,
        "dimensions": embedding.len(),
        "model": out.model,
        "embedding": embedding,
    }))
}

async fn similarity(call: Call<'_>) -> Result<Value, ToolError> {
    let texts = vec![
        text(&call.args, "text1")?.to_owned(),
        text(&call.args, "text2")?.to_owned(),
    ];
    let out = embed(&call, &texts).await?;
    let (Some(a), Some(b)) = (out.vectors.first(), out.vectors.get(1)) else {
        return Err(ToolError::Provider(
            "the embeddings service answered fewer than two embeddings".to_owned(),
        ));
    };
    if a.len() != b.len() {
        return Err(ToolError::Provider(format!(
            "the embeddings service answered embeddings of {} and {} numbers: check its model",
            a.len(),
            b.len()
        )));
    }
    let score = (cosine(a, b) * 10_000.0).round() / 10_000.0;
    let meaning = if score >= 0.9 {
        "nearly the same meaning"
    } else if score >= 0.75 {
        "closely related"
    } else if score >= 0.5 {
        "somewhat related"
    } else {
        "unrelated"
    };
    Ok(json!({"success": true, "similarity": score, "interpretation": meaning, "model": out.model}))
}

fn collection_view(c: &VectorCollectionRecord) -> Value {
    json!({
        "name": c.name,
        "dimensions": c.dimensions,
        "count": c.count,
        "description": c.description,
        "createdAt": c.created_at,
        "updatedAt": c.updated_at,
    })
}

async fn create_collection(call: Call<'_>) -> Result<Value, ToolError> {
    let name = collection_name(&call.args, "name")?;
    let description = call
        .args
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .chars()
        .take(500)
        .collect::<String>();
    let index = index(&call)?;
    let dimensions = match call.args.get("dimensions") {
        Some(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| (1..=MAX_DIMENSIONS).contains(n))
            .ok_or_else(|| {
                ToolError::Args(format!(
                    "'dimensions' must be a whole number from 1 to {MAX_DIMENSIONS}"
                ))
            })?,
        None => {
            let probe = embed(&call, std::slice::from_ref(&name)).await?;
            u32::try_from(one(probe.vectors)?.len()).unwrap_or(MAX_DIMENSIONS)
        }
    };
    let now = Utc::now();
    let record = VectorCollectionRecord {
        id: uuid::Uuid::new_v4().to_string(),
        owner: call.ctx.user_id.clone(),
        name: name.clone(),
        dimensions,
        description,
        count: 0,
        created_at: now,
        updated_at: now,
    };
    if !index.create(record.clone()).await.map_err(store_error)? {
        return Err(ToolError::Args(format!(
            "you already have a vector collection named '{name}': use it, or pick another name"
        )));
    }
    Ok(json!({
        "success": true,
        "collection": collection_view(&record),
        "message": format!("Created the vector collection '{name}' ({dimensions} dimensions; at most {MAX_COLLECTIONS} collections each). Add items with upsert_vectors."),
    }))
}

async fn list(call: Call<'_>) -> Result<Value, ToolError> {
    let collections = index(&call)?
        .list(&call.ctx.user_id)
        .await
        .map_err(store_error)?;
    Ok(json!({
        "success": true,
        "count": collections.len(),
        "collections": collections.iter().map(collection_view).collect::<Vec<_>>(),
    }))
}

/// One item of `upsert_vectors`, before its text is embedded.
struct Pending {
    id: String,
    text: Option<String>,
    embedding: Option<Vec<f32>>,
    metadata: Value,
}

fn pending(position: usize, value: &Value) -> Result<Pending, ToolError> {
    let bad = |why: &str| ToolError::Args(format!("vectors[{position}] {why}"));
    let id = value
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= 200)
        .ok_or_else(|| bad("needs an 'id' (a text of 1 to 200 bytes)"))?
        .to_owned();
    let text = match value.get("text") {
        None => None,
        Some(t) => Some(
            t.as_str()
                .filter(|s| !s.trim().is_empty() && s.chars().count() <= MAX_TEXT_CHARS)
                .ok_or_else(|| bad("has a 'text' that is empty or longer than 8000 characters"))?
                .to_owned(),
        ),
    };
    let embedding = match value.get("embedding") {
        None => None,
        Some(e) => Some(
            e.as_array()
                .and_then(|numbers| {
                    numbers
                        .iter()
                        .map(|n| n.as_f64().map(|x| x as f32).filter(|x| x.is_finite()))
                        .collect::<Option<Vec<f32>>>()
                })
                .ok_or_else(|| bad("has an 'embedding' that is not a list of numbers"))?,
        ),
    };
    if text.is_none() && embedding.is_none() {
        return Err(bad("needs a 'text' to embed or an 'embedding'"));
    }
    let metadata = match value.get("metadata") {
        None => Value::Object(Map::new()),
        Some(Value::Object(m)) => Value::Object(m.clone()),
        Some(_) => return Err(bad("has 'metadata' that is not a JSON object")),
    };
    Ok(Pending {
        id,
        text,
        embedding,
        metadata,
    })
}

async fn upsert(call: Call<'_>) -> Result<Value, ToolError> {
    let name = collection_name(&call.args, "collection")?;
    let given = call
        .args
        .get("vectors")
        .and_then(Value::as_array)
        .filter(|v| !v.is_empty() && v.len() <= MAX_VECTORS_PER_CALL)
        .ok_or_else(|| {
            ToolError::Args(format!(
                "'vectors' must be a list of 1 to {MAX_VECTORS_PER_CALL} items"
            ))
        })?;
    let items = given
        .iter()
        .enumerate()
        .map(|(i, v)| pending(i, v))
        .collect::<Result<Vec<_>, _>>()?;
    let index = index(&call)?;
    let collection = index
        .get(&call.ctx.user_id, &name)
        .await
        .map_err(store_error)?
        .ok_or_else(|| no_collection(&name))?;
    // Texts without an embedding are embedded in one request.
    let to_embed: Vec<String> = items
        .iter()
        .filter(|i| i.embedding.is_none())
        .filter_map(|i| i.text.clone())
        .collect();
    let mut embedded = if to_embed.is_empty() {
        Vec::new()
    } else {
        embed(&call, &to_embed).await?.vectors
    }
    .into_iter();
    let mut ready = Vec::with_capacity(items.len());
    for (position, item) in items.into_iter().enumerate() {
        let embedding = match item.embedding {
            Some(e) => e,
            None => embedded.next().ok_or_else(|| {
                ToolError::Provider("the embeddings service answered too few embeddings".to_owned())
            })?,
        };
        if embedding.len() != collection.dimensions as usize {
            return Err(ToolError::Args(format!(
                "vectors[{position}] has an embedding of {} numbers, but the collection '{name}' \
                 takes {}: use the same embeddings model as the collection, or another collection",
                embedding.len(),
                collection.dimensions
            )));
        }
        ready.push(VectorItem {
            id: item.id,
            embedding,
            content: item.text.unwrap_or_default(),
            metadata: item.metadata,
        });
    }
    let stored = ready.len();
    let count = index
        .upsert(&call.ctx.user_id, &name, ready)
        .await
        .map_err(store_error)?
        .ok_or_else(|| no_collection(&name))?;
    Ok(json!({"success": true, "upserted": stored, "count": count, "collection": name}))
}

async fn delete(call: Call<'_>) -> Result<Value, ToolError> {
    let name = collection_name(&call.args, "collection")?;
    let ids: Vec<String> = call
        .args
        .get("ids")
        .and_then(Value::as_array)
        .map(|ids| {
            ids.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .filter(|ids: &Vec<String>| !ids.is_empty() && ids.len() <= 1000)
        .ok_or_else(|| ToolError::Args("'ids' must be a list of 1 to 1000 ids".to_owned()))?;
    let deleted = index(&call)?
        .delete(&call.ctx.user_id, &name, ids)
        .await
        .map_err(store_error)?
        .ok_or_else(|| no_collection(&name))?;
    Ok(json!({"success": true, "deleted": deleted, "collection": name}))
}

async fn semantic_search(call: Call<'_>) -> Result<Value, ToolError> {
    let query = text(&call.args, "query")?.to_owned();
    let name = collection_name(&call.args, "collection")?;
    let top_k = match call.args.get("topK") {
        None => DEFAULT_TOP_K,
        Some(k) => k
            .as_u64()
            .filter(|k| *k >= 1)
            .ok_or_else(|| {
                ToolError::Args("'topK' must be a whole number from 1 to 50".to_owned())
            })?
            .min(MAX_TOP_K),
    };
    let filter: Vec<(String, Value)> = match call.args.get("filter") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                if is_filter_key(k) {
                    Ok((k.clone(), v.clone()))
                } else {
                    Err(ToolError::Args(format!(
                        "filter key '{k}' is not a metadata key: use 1 to 64 letters, digits, \
                         '_' or '-'"
                    )))
                }
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ToolError::Args(
                "'filter' must be an object of metadata keys and values".to_owned(),
            ));
        }
    };
    let min_score = call.args.get("minScore").and_then(Value::as_f64);
    let index = index(&call)?;
    let collection = index
        .get(&call.ctx.user_id, &name)
        .await
        .map_err(store_error)?
        .ok_or_else(|| no_collection(&name))?;
    let embedding = one(embed(&call, std::slice::from_ref(&query)).await?.vectors)?;
    if embedding.len() != collection.dimensions as usize {
        return Err(ToolError::Args(format!(
            "the embeddings service made {} numbers for the query, but the collection '{name}' \
             takes {}: its items were embedded by another model; search it with that model",
            embedding.len(),
            collection.dimensions
        )));
    }
    let hits = index
        .search(VectorQuery {
            owner: call.ctx.user_id.clone(),
            collection: name.clone(),
            embedding,
            top_k: u32::try_from(top_k).unwrap_or(10),
            filter,
        })
        .await
        .map_err(store_error)?
        .ok_or_else(|| no_collection(&name))?;
    let results: Vec<Value> = hits
        .into_iter()
        .filter(|h| min_score.is_none_or(|m| h.score >= m))
        .map(|h| {
            json!({
                "id": h.id,
                "content": h.content,
                "metadata": h.metadata,
                "score": (h.score * 10_000.0).round() / 10_000.0,
            })
        })
        .collect();
    Ok(json!({
        "success": true,
        "query": query,
        "collection": name,
        "count": results.len(),
        "results": results,
    }))
}
