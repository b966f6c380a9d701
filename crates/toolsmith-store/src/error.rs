//! Errors a store returns; callers branch on the variants.

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
    #[error("database backend failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}
