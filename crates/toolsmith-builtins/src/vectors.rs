//! Vector search (003 §17, group `vectorSearch`, off by default): embeddings from an
//! OpenAI-compatible embeddings API the caller configures in the Config Center (service
//! [`SERVICE`]: `base_url`, `api_key`, optional `model`), and the caller's own named
//! collections of embeddings in the server's store, with a real vector index on each backend
//! ([`VectorIndex`]; sqlite-vec on SQLite, pgvector on PostgreSQL).
//!
//! - [`embed`] — the embeddings client: `POST {base_url}/embeddings` with `{model, input}`,
//!   through the web tools' client (the egress guard).
//! - [`hybrid`] — the same embeddings as an optional second ranking of `search_tools`, memory
//!   `recall` and `delegate_search` (words plus similarity).
//! - [`tools`](mod@tools) — `create_embedding`, `similarity_score`, `create_vector_collection`,
//!   `list_vector_collections`, `upsert_vectors`, `delete_vectors`, `semantic_search`.

pub mod embed;
pub mod hybrid;
pub mod tools;

use async_trait::async_trait;
use toolsmith_core::model::Effect;
use toolsmith_core::vector::{VectorCollectionRecord, VectorHit, VectorItem, VectorQuery};
use toolsmith_core::{RegisteredTool, ResultSource};

use crate::BuiltinEnv;
use crate::data::DataError;
use crate::groups::{ToolGroup, off};

pub use embed::SERVICE;

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Vector Search";

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    "vectorSearch",
    "Vector Search",
    "Semantic search with embeddings for retrieval (RAG): embed text, keep your own collections of vectors with metadata, and find the nearest by meaning.",
    "Requires an embeddings API (the Config Center service 'embeddings') and a vector store",
    ResultSource::UserData,
    &[
        "create_embedding",
        "semantic_search",
        "upsert_vectors",
        "delete_vectors",
        "list_vector_collections",
        "create_vector_collection",
        "similarity_score",
    ],
)];

/// What each tool of this family does to the world.
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &[
            "semantic_search",
            "list_vector_collections",
            "similarity_score",
        ],
    ),
    // Stores nothing, but its name says "create": it runs the embeddings model.
    (Effect::Runs, &["create_embedding"]),
    (Effect::Adds, &["create_vector_collection"]),
    (Effect::Sets, &["upsert_vectors"]),
    (Effect::Deletes, &["delete_vectors"]),
];

/// Most collections one user may have.
pub const MAX_COLLECTIONS: u64 = 100;
/// Most numbers in one embedding (pgvector's HNSW index takes up to 2,000).
pub const MAX_DIMENSIONS: u32 = 2000;
/// Most vectors in one `upsert_vectors` call.
pub const MAX_VECTORS_PER_CALL: usize = 100;
/// Longest text embedded, in characters.
pub const MAX_TEXT_CHARS: usize = 8000;
/// `semantic_search`'s `topK`: default and most (the spec's limits).
pub const DEFAULT_TOP_K: u64 = 10;
pub const MAX_TOP_K: u64 = 50;

/// Each user's collections, as the server's store keeps them (the service applies the limits
/// and read-only mode). Every method is the owner's alone.
#[async_trait]
pub trait VectorIndex: Send + Sync + std::fmt::Debug {
    /// `false` when the owner already has a collection of that name.
    async fn create(&self, collection: VectorCollectionRecord) -> Result<bool, DataError>;
    async fn list(&self, owner: &str) -> Result<Vec<VectorCollectionRecord>, DataError>;
    async fn get(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<VectorCollectionRecord>, DataError>;
    /// The collection's count after, `None` when it does not exist.
    async fn upsert(
        &self,
        owner: &str,
        name: &str,
        items: Vec<VectorItem>,
    ) -> Result<Option<u64>, DataError>;
    /// How many went, `None` when the collection does not exist.
    async fn delete(
        &self,
        owner: &str,
        name: &str,
        ids: Vec<String>,
    ) -> Result<Option<u64>, DataError>;
    /// Best first, `None` when the collection does not exist.
    async fn search(&self, query: VectorQuery) -> Result<Option<Vec<VectorHit>>, DataError>;
}

/// Every tool of the family, ready to register.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    tools::all(env)
}
