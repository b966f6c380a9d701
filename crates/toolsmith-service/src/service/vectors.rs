//! Vector collections as the built-ins see them ([`toolsmith_builtins::vectors::VectorIndex`]):
//! the service's store, with the per-user limits applied (at most
//! [`MAX_COLLECTIONS`](toolsmith_builtins::vectors::MAX_COLLECTIONS) collections, at most
//! `max_records_per_collection` items in one), read-only mode, and store errors said in words a
//! model can act on.

use std::sync::Arc;

use async_trait::async_trait;
use toolsmith_builtins::data::{DataError, RecordLimits};
use toolsmith_builtins::vectors::{MAX_COLLECTIONS, VectorIndex};
use toolsmith_core::vector::{VectorCollectionRecord, VectorHit, VectorItem, VectorQuery};
use toolsmith_store::{Store, StoreError};

/// [`VectorIndex`] on the service's store.
pub(crate) struct StoreVectors {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) limits: RecordLimits,
    pub(crate) read_only: bool,
}

impl std::fmt::Debug for StoreVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreVectors")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl StoreVectors {
    fn check_writable(&self) -> Result<(), DataError> {
        if self.read_only {
            return Err(DataError::ReadOnly);
        }
        Ok(())
    }
}

fn vector_error(e: StoreError) -> DataError {
    match e {
        StoreError::RecordLimit { collection, limit } => DataError::Limit { collection, limit },
        // The words of an unavailable backend name the fix (pgvector missing, a full disk).
        e if e.is_unavailable() => DataError::Unavailable(e.to_string()),
        e => {
            tracing::error!(error = %e, "the vector store failed");
            DataError::Store(e.code().to_owned())
        }
    }
}

#[async_trait]
impl VectorIndex for StoreVectors {
    async fn create(&self, collection: VectorCollectionRecord) -> Result<bool, DataError> {
        self.check_writable()?;
        self.store
            .create_vector_collection(&collection, MAX_COLLECTIONS)
            .await
            .map_err(vector_error)
    }

    async fn list(&self, owner: &str) -> Result<Vec<VectorCollectionRecord>, DataError> {
        self.store
            .list_vector_collections(owner)
            .await
            .map_err(vector_error)
    }

    async fn get(
        &self,
        owner: &str,
        name: &str,
    ) -> Result<Option<VectorCollectionRecord>, DataError> {
        self.store
            .get_vector_collection(owner, name)
            .await
            .map_err(vector_error)
    }

    async fn upsert(
        &self,
        owner: &str,
        name: &str,
        items: Vec<VectorItem>,
    ) -> Result<Option<u64>, DataError> {
        self.check_writable()?;
        for item in &items {
            let bytes = item.content.len()
                + item.embedding.len() * 4
                + serde_json::to_vec(&item.metadata).map_or(usize::MAX, |v| v.len());
            if bytes > self.limits.max_record_bytes {
                return Err(DataError::TooLarge {
                    collection: format!("'{name}' vector"),
                    bytes,
                    max: self.limits.max_record_bytes,
                });
            }
        }
        self.store
            .upsert_vectors(owner, name, &items, self.limits.max_records_per_collection)
            .await
            .map_err(vector_error)
    }

    async fn delete(
        &self,
        owner: &str,
        name: &str,
        ids: Vec<String>,
    ) -> Result<Option<u64>, DataError> {
        self.check_writable()?;
        self.store
            .delete_vectors(owner, name, &ids)
            .await
            .map_err(vector_error)
    }

    async fn search(&self, query: VectorQuery) -> Result<Option<Vec<VectorHit>>, DataError> {
        self.store
            .search_vectors(&query)
            .await
            .map_err(vector_error)
    }
}

impl crate::ToolService {
    /// The similarity of `query` to each of `texts` by the caller's embeddings service: the
    /// optional second ranking of `search_tools` (its server side has no built-ins' handles),
    /// as `delegate_search` and `recall` rank
    /// ([`toolsmith_builtins::vectors::hybrid::similarity`]).
    pub async fn text_similarity(
        &self,
        ctx: &toolsmith_core::ToolContext,
        query: &str,
        texts: &[String],
        used_by: &str,
    ) -> toolsmith_builtins::vectors::hybrid::Similarity {
        toolsmith_builtins::vectors::hybrid::similarity(&self.builtins, ctx, query, texts, used_by)
            .await
    }
}
