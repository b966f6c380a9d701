//! A record store that lets a test run something of its own just before one write goes
//! through: the worst interleaving of two calls, made deterministic (a deletion between an
//! add's read and its insert, a step completed between another step's count and its goal's
//! write).

use std::sync::atomic::{AtomicBool, Ordering};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use toolsmith_builtins::data::{DataError, RecordLimits, Records};
use toolsmith_core::data::{
    DataRecord, PutOutcome, RecordHit, RecordQuery, RecordScope, RecordStats, RecordTally,
};

use crate::ToolService;
use crate::service::records::StoreRecords;

/// Which write the hook waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Write {
    Put,
    Update,
}

/// Runs before a write of the kind asked for, on the service's own records, with the record
/// about to be written; answers whether it acted (it is offered writes until it does once).
type Hook = Box<dyn Fn(StoreRecords, DataRecord) -> BoxFuture<'static, bool> + Send + Sync>;

/// The service's records, with a hook run once before a chosen write.
pub(super) struct Racing {
    inner: StoreRecords,
    records: Box<dyn Fn() -> StoreRecords + Send + Sync>,
    write: Write,
    hook: Hook,
    fired: AtomicBool,
}

impl std::fmt::Debug for Racing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Racing")
            .field("write", &self.write)
            .finish()
    }
}

impl Racing {
    pub(super) fn once(
        service: &std::sync::Arc<ToolService>,
        write: Write,
        hook: impl Fn(StoreRecords, DataRecord) -> BoxFuture<'static, bool> + Send + Sync + 'static,
    ) -> Racing {
        let service = service.clone();
        Racing {
            inner: service.records(),
            records: Box::new(move || service.records()),
            write,
            hook: Box::new(hook),
            fired: AtomicBool::new(false),
        }
    }

    async fn before(&self, write: Write, record: &DataRecord) {
        if write == self.write
            && !self.fired.load(Ordering::SeqCst)
            && (self.hook)((self.records)(), record.clone()).await
        {
            self.fired.store(true, Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl Records for Racing {
    async fn put(&self, record: DataRecord) -> Result<PutOutcome, DataError> {
        self.before(Write::Put, &record).await;
        self.inner.put(record).await
    }
    async fn put_within(&self, record: DataRecord, max: u64) -> Result<PutOutcome, DataError> {
        self.before(Write::Put, &record).await;
        self.inner.put_within(record, max).await
    }
    async fn delete_collection(&self, s: &RecordScope, c: &str) -> Result<u64, DataError> {
        self.inner.delete_collection(s, c).await
    }
    async fn update(&self, record: DataRecord) -> Result<Option<DataRecord>, DataError> {
        self.before(Write::Update, &record).await;
        self.inner.update(record).await
    }
    async fn get(
        &self,
        s: &RecordScope,
        c: &str,
        id: &str,
    ) -> Result<Option<DataRecord>, DataError> {
        self.inner.get(s, c, id).await
    }
    async fn delete(&self, s: &RecordScope, c: &str, id: &str) -> Result<bool, DataError> {
        self.inner.delete(s, c, id).await
    }
    async fn query(&self, q: &RecordQuery) -> Result<Vec<RecordHit>, DataError> {
        self.inner.query(q).await
    }
    async fn stats(&self, s: &RecordScope, c: &str) -> Result<RecordStats, DataError> {
        self.inner.stats(s, c).await
    }
    async fn tally(&self, s: &RecordScope, c: &str) -> Result<RecordTally, DataError> {
        self.inner.tally(s, c).await
    }
    fn limits(&self) -> RecordLimits {
        self.inner.limits()
    }
    async fn due(
        &self,
        c: &str,
        before: DateTime<Utc>,
        n: u32,
    ) -> Result<Vec<DataRecord>, DataError> {
        self.inner.due(c, before, n).await
    }
    async fn claim(&self, r: DataRecord, at: DateTime<Utc>) -> Result<bool, DataError> {
        self.inner.claim(r, at).await
    }
}
