//! The records of vector search (003 §17): a user's named collections of embeddings, each
//! with a fixed number of dimensions, and the items in them — an id, the embedding, the text
//! it was made from and metadata to filter on. Similarity is cosine; a hit's `score` is
//! `1 - cosine distance` (1 for the same direction, 0 for orthogonal).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One named collection of one owner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorCollectionRecord {
    pub id: String,
    pub owner: String,
    pub name: String,
    /// Every embedding of the collection has exactly this many numbers.
    pub dimensions: u32,
    pub description: String,
    /// How many items it holds (read, not stored).
    pub count: u64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One item of a collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorItem {
    pub id: String,
    pub embedding: Vec<f32>,
    /// The text the embedding was made from ('' when only numbers were given).
    pub content: String,
    /// A JSON object; `semantic_search`'s filters match its top-level keys.
    pub metadata: Value,
}

/// A top-k search of one collection.
#[derive(Debug, Clone, PartialEq)]
pub struct VectorQuery {
    pub owner: String,
    pub collection: String,
    pub embedding: Vec<f32>,
    pub top_k: u32,
    /// Every pair must hold: the item's metadata has the key with a value equal (as JSON) to
    /// this one. An empty filter searches with the collection's vector index; a filter searches
    /// the matching items exactly.
    pub filter: Vec<(String, Value)>,
}

/// One item found, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorHit {
    pub id: String,
    pub content: String,
    pub metadata: Value,
    /// `1 - cosine distance`.
    pub score: f64,
}

/// Whether `key` may name a metadata key in a filter: letters, digits, `_` and `-`, 1 to 64.
#[must_use]
pub fn is_filter_key(key: &str) -> bool {
    (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}
