//! Errors a store returns; callers branch on the variants (each has a stable `code()`).

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("no tool with id {id}")]
    NotFound { id: String },
    #[error("a tool named '{name}' already exists for this owner")]
    NameTaken { name: String },
    #[error(
        "revision conflict: expected revision {expected}, but the tool is at revision {actual}"
    )]
    RevisionConflict { expected: i64, actual: i64 },
    /// No Config Center service of that id belongs to the owner.
    #[error("no config service with id {id}")]
    ConfigServiceNotFound { id: String },
    /// No Config Center entry of that id belongs to the owner.
    #[error("no config entry with id {id}")]
    ConfigEntryNotFound { id: String },
    #[error("a config service named '{name}' already exists for this owner")]
    ConfigServiceNameTaken { name: String },
    #[error("the service already has an entry labelled '{label}'")]
    ConfigEntryLabelTaken { label: String },
    /// The service is single-entry (`multiEntry` off) and already has its entry.
    #[error("service '{name}' takes a single entry (multiEntry is off) and already has one")]
    ConfigSingleEntry { name: String },
    /// A compare-and-swap on a config service or entry found another revision.
    #[error(
        "revision conflict on {id}: expected revision {expected}, but it is at revision {actual}"
    )]
    ConfigRevisionConflict {
        id: String,
        expected: i64,
        actual: i64,
    },
    #[error("the database at {path} is not a usable Toolsmith store: {reason}")]
    Corrupt { path: String, reason: String },
    #[error(
        "the database at {path} has schema version {found}, but this build knows versions up to {supported}; use a newer toolsmith"
    )]
    UnknownSchema {
        path: String,
        found: i64,
        supported: i64,
    },
    /// [`ToolStore::insert_tool_limited`](crate::ToolStore::insert_tool_limited): the owner
    /// already has `limit` tools.
    #[error("the owner already has {limit} tools, the most allowed")]
    ToolLimit { limit: u64 },
    /// [`RecordStore::put_record`](crate::RecordStore::put_record): the owner already has
    /// `limit` records in the collection.
    #[error("the owner already has {limit} {collection} records, the most allowed")]
    RecordLimit { collection: String, limit: u64 },
    /// The database server could not be reached (refused, timed out, starting up) for as long
    /// as start-up was allowed to wait.
    #[error("cannot reach the database {target}: {reason}")]
    Unreachable { target: String, reason: String },
    /// The database server answered but refused: wrong password, unknown user or database.
    /// Retrying cannot help.
    #[error("the database {target} refused the connection: {reason}")]
    ConnectRefused { target: String, reason: String },
    /// The database cannot be used right now, for a reason outside Toolsmith that may pass:
    /// the disk is full, the file or the server is read-only, an I/O error, the server went
    /// away, no connection could be had in time. Nothing was changed; retrying later may work.
    #[error("the database cannot be used right now: {reason}")]
    Unavailable { reason: String },
    #[error("database backend failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl StoreError {
    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::NotFound { .. } => "not_found",
            StoreError::NameTaken { .. } => "name_taken",
            StoreError::RevisionConflict { .. } => "revision_conflict",
            StoreError::ConfigServiceNotFound { .. } => "config_service_not_found",
            StoreError::ConfigEntryNotFound { .. } => "config_entry_not_found",
            StoreError::ConfigServiceNameTaken { .. } => "config_service_name_taken",
            StoreError::ConfigEntryLabelTaken { .. } => "config_entry_label_taken",
            StoreError::ConfigSingleEntry { .. } => "config_single_entry",
            StoreError::ConfigRevisionConflict { .. } => "config_revision_conflict",
            StoreError::Corrupt { .. } => "store_corrupt",
            StoreError::UnknownSchema { .. } => "store_schema_unknown",
            StoreError::ToolLimit { .. } => "tool_limit",
            StoreError::RecordLimit { .. } => "record_limit",
            StoreError::Unreachable { .. } => "store_unreachable",
            StoreError::ConnectRefused { .. } => "store_connect_refused",
            StoreError::Unavailable { .. } => "store_unavailable",
            StoreError::Backend(_) => "store_backend",
        }
    }

    /// Whether the failure is the database's state rather than the request (see
    /// [`StoreError::Unavailable`]): worth a retry, answered `503` rather than `500`.
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            StoreError::Unavailable { .. } | StoreError::Unreachable { .. }
        )
    }
}
