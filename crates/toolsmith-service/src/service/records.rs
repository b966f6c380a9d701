//! The per-user record store as the built-ins see it ([`toolsmith_builtins::data::Records`]):
//! the service's store, with the size and count limits of [`RecordLimits`] applied and store
//! errors said in words a model can act on.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use toolsmith_builtins::data::{DataError, RecordLimits, Records};
use toolsmith_core::data::{
    DataRecord, PutOutcome, RecordHit, RecordQuery, RecordScope, RecordStats, RecordTally,
};
use toolsmith_store::{Store, StoreError};

/// [`Records`] on the service's store.
pub(crate) struct StoreRecords {
    pub(crate) store: Arc<dyn Store>,
    pub(crate) limits: RecordLimits,
    /// Read-only mode (`ToolServiceSettings::read_only`): every write is refused, whichever
    /// tool or route asks.
    pub(crate) read_only: bool,
}

impl std::fmt::Debug for StoreRecords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreRecords")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl StoreRecords {
    /// Refuses every change in read-only mode.
    fn check_writable(&self) -> Result<(), DataError> {
        if self.read_only {
            return Err(DataError::ReadOnly);
        }
        Ok(())
    }

    /// Refuses a record larger than `max_record_bytes` (its document and its searched text).
    fn check_size(&self, record: &DataRecord) -> Result<(), DataError> {
        let bytes = serde_json::to_vec(&record.document).map_or(usize::MAX, |v| v.len())
            + record.search_text.len();
        if bytes > self.limits.max_record_bytes {
            return Err(DataError::TooLarge {
                collection: record.collection.clone(),
                bytes,
                max: self.limits.max_record_bytes,
            });
        }
        Ok(())
    }
}

fn data_error(e: StoreError) -> DataError {
    match e {
        StoreError::RecordLimit { collection, limit } => DataError::Limit { collection, limit },
        e if e.is_unavailable() => DataError::Unavailable(e.to_string()),
        e => {
            tracing::error!(error = %e, "the record store failed");
            DataError::Store(e.code().to_owned())
        }
    }
}

#[async_trait]
impl Records for StoreRecords {
    async fn put(&self, record: DataRecord) -> Result<PutOutcome, DataError> {
        self.check_writable()?;
        self.check_size(&record)?;
        self.store
            .put_record(record, self.limits.max_records_per_collection)
            .await
            .map_err(data_error)
    }

    async fn put_within(&self, record: DataRecord, max: u64) -> Result<PutOutcome, DataError> {
        self.check_writable()?;
        self.check_size(&record)?;
        self.store
            .put_record(record, max.min(self.limits.max_records_per_collection))
            .await
            .map_err(data_error)
    }

    async fn delete_collection(
        &self,
        scope: &RecordScope,
        collection: &str,
    ) -> Result<u64, DataError> {
        self.check_writable()?;
        self.store
            .delete_collection_records(scope, collection)
            .await
            .map_err(data_error)
    }

    async fn update(&self, record: DataRecord) -> Result<Option<DataRecord>, DataError> {
        self.check_writable()?;
        self.check_size(&record)?;
        self.store.update_record(record).await.map_err(data_error)
    }

    async fn get(
        &self,
        scope: &RecordScope,
        collection: &str,
        id: &str,
    ) -> Result<Option<DataRecord>, DataError> {
        self.store
            .get_record(scope, collection, id)
            .await
            .map_err(data_error)
    }

    async fn delete(
        &self,
        scope: &RecordScope,
        collection: &str,
        id: &str,
    ) -> Result<bool, DataError> {
        self.check_writable()?;
        self.store
            .delete_record(scope, collection, id)
            .await
            .map_err(data_error)
    }

    async fn query(&self, query: &RecordQuery) -> Result<Vec<RecordHit>, DataError> {
        self.store.query_records(query).await.map_err(data_error)
    }

    async fn stats(&self, scope: &RecordScope, collection: &str) -> Result<RecordStats, DataError> {
        self.store
            .record_stats(scope, collection)
            .await
            .map_err(data_error)
    }

    async fn tally(&self, scope: &RecordScope, collection: &str) -> Result<RecordTally, DataError> {
        self.store
            .record_tally(scope, collection)
            .await
            .map_err(data_error)
    }

    fn limits(&self) -> RecordLimits {
        self.limits
    }

    async fn due(
        &self,
        collection: &str,
        before: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<DataRecord>, DataError> {
        self.store
            .due_records(collection, before, limit)
            .await
            .map_err(data_error)
    }

    async fn claim(
        &self,
        record: DataRecord,
        expected_at: DateTime<Utc>,
    ) -> Result<bool, DataError> {
        self.check_writable()?;
        self.check_size(&record)?;
        self.store
            .claim_record(record, expected_at)
            .await
            .map_err(data_error)
    }
}
