//! The agent's own data as the built-ins reach it: [`Records`], the per-user record store the
//! server passes in [`BuiltinEnv`](crate::BuiltinEnv) (in Toolsmith, the service's view of its
//! store, with the size and count limits applied), and what every data family (memory; later
//! tasks, notes …) shares: the executor that hands a call its scope and the store, and the
//! record ids.
//!
//! Every family keeps its records in one collection of the same generic store
//! ([`toolsmith_core::data::DataRecord`]); a call's scope is its user and, when the call has
//! one, its agent ([`RecordScope`]), so one user's (or agent's) records are never visible to
//! another through any tool.

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;
use toolsmith_core::data::{
    DataRecord, PutOutcome, RecordHit, RecordQuery, RecordScope, RecordStats, RecordTally,
};
use toolsmith_core::{
    ErrorKind, PermissionSet, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor, ToolResult,
};

use crate::BuiltinEnv;
use crate::utilities::Fail;

/// The per-user record store. Every method is scoped ([`RecordScope`], or the query's owner
/// and agent); what one scope stored is "not found" from any other.
#[async_trait]
pub trait Records: Send + Sync + std::fmt::Debug {
    /// Stores a new record, or finds the one with the same `dedup_key` in its scope.
    async fn put(&self, record: DataRecord) -> Result<PutOutcome, DataError>;
    /// [`Records::put`] with a tighter per-collection limit than the store's (custom tables
    /// per user): the smaller of `max` and `max_records_per_collection` holds.
    async fn put_within(&self, record: DataRecord, max: u64) -> Result<PutOutcome, DataError>;
    /// Deletes every record of the scope's `collection` (a custom table's rows); how many.
    async fn delete_collection(
        &self,
        scope: &RecordScope,
        collection: &str,
    ) -> Result<u64, DataError>;
    /// Replaces a record's fields (not its id, scope, collection, dedup key or creation
    /// time); `None` when the scope has no such record.
    async fn update(&self, record: DataRecord) -> Result<Option<DataRecord>, DataError>;
    async fn get(
        &self,
        scope: &RecordScope,
        collection: &str,
        id: &str,
    ) -> Result<Option<DataRecord>, DataError>;
    async fn delete(
        &self,
        scope: &RecordScope,
        collection: &str,
        id: &str,
    ) -> Result<bool, DataError>;
    async fn query(&self, query: &RecordQuery) -> Result<Vec<RecordHit>, DataError>;
    async fn stats(&self, scope: &RecordScope, collection: &str) -> Result<RecordStats, DataError>;
    /// How many records the scope holds in `collection` and when the first and last were
    /// made, without reading them (what a listing shows beside a page).
    async fn tally(&self, scope: &RecordScope, collection: &str) -> Result<RecordTally, DataError>;
    /// The limits the store applies.
    fn limits(&self) -> RecordLimits;
    /// Across every owner: the records of `collection` due by `before` (`at` set and not
    /// after it), earliest first. For the server's scheduler only; no tool reaches it.
    async fn due(
        &self,
        collection: &str,
        before: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<DataRecord>, DataError>;
    /// Stores `record`'s `document`, `kind` and `at` only if its stored `at` is still
    /// `expected_at`: whether this call did (of several claiming one due record, exactly one
    /// does, across processes). For the server's scheduler only.
    async fn claim(
        &self,
        record: DataRecord,
        expected_at: DateTime<Utc>,
    ) -> Result<bool, DataError>;
}

/// What bounds one user's data (settings `max_record_bytes`, `max_records_per_collection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLimits {
    /// Largest record: its JSON document plus its searched text, in bytes.
    pub max_record_bytes: usize,
    /// Most records of one collection (memories, tasks …) one user may have, across agents.
    pub max_records_per_collection: u64,
}

impl Default for RecordLimits {
    fn default() -> Self {
        RecordLimits {
            max_record_bytes: 64 * 1024,
            max_records_per_collection: 100_000,
        }
    }
}

/// Why the record store refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error(
        "the {collection} record is {bytes} bytes; the limit is {max} bytes \
         (max_record_bytes): store less text in one record, or split it into several"
    )]
    TooLarge {
        collection: String,
        bytes: usize,
        max: usize,
    },
    #[error(
        "you already have {limit} {collection} records, the most allowed \
         (max_records_per_collection): delete ones you no longer need first"
    )]
    Limit { collection: String, limit: u64 },
    #[error("the data store is unavailable right now; try again later ({0})")]
    Unavailable(String),
    #[error("the data store failed: {0}")]
    Store(String),
    #[error(
        "the server is in read-only mode (--read-only): records can be listed and read, but \
         not added, changed or deleted; nothing was changed"
    )]
    ReadOnly,
}

impl From<DataError> for Fail {
    fn from(e: DataError) -> Fail {
        match e {
            DataError::TooLarge { .. } | DataError::Limit { .. } => Fail::Args(e.to_string()),
            DataError::Unavailable(_) | DataError::Store(_) | DataError::ReadOnly => {
                Fail::Run(e.to_string())
            }
        }
    }
}

/// What a data tool's work gets: the store, the caller's scope and the arguments.
pub struct Call<'a> {
    pub records: &'a dyn Records,
    pub scope: RecordScope,
    pub ctx: &'a ToolContext,
    pub args: Value,
}

/// The work of one data tool.
pub type DataFn =
    for<'a> fn(
        Call<'a>,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Value, Fail>> + Send + 'a>>;

/// The work of a data tool that carries what it works on (a family's description and which
/// of its operations), where a [`DataFn`] cannot.
#[async_trait]
pub trait DataWork: Send + Sync {
    async fn run(&self, call: Call<'_>) -> Result<Value, Fail>;
}

struct FnWork(DataFn);

#[async_trait]
impl DataWork for FnWork {
    async fn run(&self, call: Call<'_>) -> Result<Value, Fail> {
        (self.0)(call).await
    }
}

struct DataExecutor {
    records: Option<Arc<dyn Records>>,
    work: Box<dyn DataWork>,
}

#[async_trait]
impl ToolExecutor for DataExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let Some(records) = self.records.as_deref() else {
            return ToolResult::error(
                ErrorKind::ExecutionError,
                "this server keeps no data for its users: it was started without a record \
                 store for built-ins (an embedder must set BuiltinEnv::data; `toolsmith serve` \
                 always does)",
            );
        };
        let call = Call {
            records,
            scope: RecordScope::new(ctx.user_id.clone(), ctx.agent_id.as_deref()),
            ctx,
            args,
        };
        match self.work.run(call).await {
            Ok(content) => ToolResult::ok(content),
            Err(Fail::Args(message)) => ToolResult::error(ErrorKind::InvalidArguments, message),
            Err(Fail::Run(message)) => ToolResult::error(ErrorKind::ExecutionError, message),
        }
    }
}

/// A data tool: the family's category, its group as provider, no permissions (it reaches
/// nothing but its caller's own records).
pub fn data_tool(
    env: &BuiltinEnv,
    category: &str,
    definition: ToolDefinition,
    run: DataFn,
) -> RegisteredTool {
    data_tool_with(env, category, definition, FnWork(run))
}

/// [`data_tool`] for work that carries its own data.
pub fn data_tool_with(
    env: &BuiltinEnv,
    category: &str,
    definition: ToolDefinition,
    work: impl DataWork + 'static,
) -> RegisteredTool {
    crate::builtin_tool(
        definition,
        category,
        PermissionSet::new(),
        Arc::new(DataExecutor {
            records: env.data.clone(),
            work: Box::new(work),
        }),
    )
}

/// A new record id: the family's prefix and 16 random hex digits (`mem_3f9a…`).
#[must_use]
pub fn new_id(prefix: &str) -> String {
    // The first 64 bits of a random UUID: 16 hex digits.
    format!("{prefix}_{:016x}", ::uuid::Uuid::new_v4().as_u64_pair().0)
}

/// Where a family keeps what people call its records by: the collection, the document field
/// holding a record's title (`title`, a contact's `name`), and the words of the messages.
#[derive(Debug, Clone, Copy)]
pub struct Titled<'a> {
    pub collection: &'a str,
    pub field: &'a str,
    /// One record, in messages (`task`).
    pub noun: &'a str,
    /// The argument naming a record (`taskId`).
    pub id_param: &'a str,
    /// The tool that lists the records (`list_tasks`).
    pub list_tool: &'a str,
}

/// The refusal of `id`, which names no record of the scope. When it is the exact title of
/// records of the scope, the reply says so and gives their ids (a model passes the title it
/// read or was told more often than the id); otherwise it says where ids are found.
pub async fn not_an_id(
    records: &dyn Records,
    scope: &RecordScope,
    of: &Titled<'_>,
    id: &str,
) -> Fail {
    const MOST: u32 = 5;
    let shown: String = id.chars().take(100).collect();
    let query = RecordQuery {
        owner: scope.owner.clone(),
        agent: scope.agent.clone(),
        collection: of.collection.to_owned(),
        fields: vec![toolsmith_core::data::FieldMatch {
            field: of.field.to_owned(),
            value: toolsmith_core::data::FieldValue::Text(id.trim().to_owned()),
        }],
        limit: MOST,
        ..RecordQuery::default()
    };
    let titled: Vec<String> = match records.query(&query).await {
        Ok(hits) => hits.into_iter().map(|hit| hit.record.id).collect(),
        Err(_) => Vec::new(),
    };
    let (noun, key, list) = (of.noun, of.id_param, of.list_tool);
    Fail::Args(match titled.as_slice() {
        [] => format!("no {noun} with id '{shown}' among yours: find ids with {list}"),
        [one] => format!(
            "'{shown}' is the title of {noun} {one}, not its id: pass {{\"{key}\": \"{one}\"}}"
        ),
        many => format!(
            "{}{} {noun}s have the title '{shown}': pass the id of the one you mean as '{key}': {} (see them with {list})",
            many.len(),
            if many.len() as u32 >= MOST {
                " or more"
            } else {
                ""
            },
            many.join(", ")
        ),
    })
}

/// The string argument `key` as a record id: non-empty, at most 100 bytes.
pub(crate) fn id_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, Fail> {
    let id = crate::utilities::str_arg(args, key)?.trim();
    if id.is_empty() || id.len() > 100 {
        return Err(Fail::Args(format!(
            "'{key}' must be the id of a record (like 'mem_3f9a0c1d2e4b5a6c')"
        )));
    }
    Ok(id)
}

/// The optional list of tags `key`: at most `max` strings of at most 64 bytes, trimmed,
/// lower-cased, duplicates removed.
pub(crate) fn tags_arg(args: &Value, key: &str, max: usize) -> Result<Vec<String>, Fail> {
    let items = match args.get(key) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(Fail::Args(format!(
                "'{key}' must be an array of strings such as [\"work\", \"project-x\"]"
            )));
        }
    };
    if items.len() > max {
        return Err(Fail::Args(format!(
            "'{key}' has {} tags; the limit is {max}: keep the most useful ones",
            items.len()
        )));
    }
    let mut tags: Vec<String> = Vec::new();
    for item in items {
        let tag = item.as_str().map(str::trim).unwrap_or_default();
        if tag.is_empty() || tag.len() > 64 || tag.contains('\0') {
            return Err(Fail::Args(format!(
                "every entry of '{key}' must be a non-empty string of at most 64 bytes"
            )));
        }
        let tag = tag.to_lowercase();
        if !tags.contains(&tag) {
            tags.push(tag);
        }
    }
    Ok(tags)
}

/// A required text argument for a record: trimmed, non-empty, at most `max_bytes`, without
/// NUL characters (which PostgreSQL cannot store, so neither backend accepts them).
pub(crate) fn record_text<'a>(
    args: &'a Value,
    key: &str,
    max_bytes: usize,
) -> Result<&'a str, Fail> {
    let text = crate::utilities::text_arg(args, key, max_bytes)?.trim();
    if text.is_empty() {
        return Err(Fail::Args(format!("'{key}' must not be empty")));
    }
    if text.contains('\0') {
        return Err(Fail::Args(format!(
            "'{key}' contains a NUL character (\\u0000); remove it"
        )));
    }
    Ok(text)
}

/// Every record `query` selects (its own `limit` and `offset` ignored), page by page, at most
/// `cap` of them.
pub async fn scan(
    records: &dyn Records,
    mut query: RecordQuery,
    cap: usize,
) -> Result<Vec<DataRecord>, Fail> {
    const PAGE: u32 = 500;
    let mut out = Vec::new();
    query.offset = 0;
    loop {
        query.limit = PAGE.min(u32::try_from(cap - out.len()).unwrap_or(PAGE));
        let page = records.query(&query).await?;
        let n = page.len();
        out.extend(page.into_iter().map(|hit| hit.record));
        if n < query.limit as usize || out.len() >= cap {
            return Ok(out);
        }
        query.offset += query.limit;
    }
}
