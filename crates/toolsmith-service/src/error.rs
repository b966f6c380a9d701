//! What can go wrong in a lifecycle operation, one variant per answer a caller gives
//! (REST maps them to statuses, MCP to tool errors, the CLI to exit codes).

use toolsmith_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The request is malformed or breaks a rule (bad name, bad schema, forbidden code …).
    #[error("{0}")]
    Validation(String),
    /// Something is larger than its limit (code size, description length).
    #[error("{0}")]
    TooLarge(String),
    /// Nothing of that id or name is visible to the caller; the message says what was sought.
    #[error("{0}")]
    NotFound(String),
    /// The name is taken by a built-in or another tool of the owner.
    #[error("{0}")]
    NameTaken(String),
    #[error(
        "revision conflict: expected revision {expected}, but the tool is at revision {actual}"
    )]
    RevisionConflict { expected: i64, actual: i64 },
    /// The tool's status does not allow this operation.
    #[error("{0}")]
    InvalidState(String),
    /// The caller may not do this (the LLM approving its own tool, deleting a user's tool …).
    #[error("{0}")]
    Forbidden(String),
    /// The operation needs an explicit `confirm: true`.
    #[error("{0}")]
    ConfirmationRequired(String),
    /// An owner limit (number of tools) is reached.
    #[error("{0}")]
    LimitReached(String),
    #[error(transparent)]
    Store(StoreError),
}

impl ServiceError {
    /// A stable, machine-readable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            ServiceError::Validation(_) => "validation_error",
            ServiceError::TooLarge(_) => "too_large",
            ServiceError::NotFound(_) => "not_found",
            ServiceError::NameTaken(_) => "name_taken",
            ServiceError::RevisionConflict { .. } => "revision_conflict",
            ServiceError::InvalidState(_) => "invalid_state",
            ServiceError::Forbidden(_) => "forbidden",
            ServiceError::ConfirmationRequired(_) => "confirmation_required",
            ServiceError::LimitReached(_) => "limit_reached",
            ServiceError::Store(_) => "store_error",
        }
    }
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::RevisionConflict { expected, actual } => {
                ServiceError::RevisionConflict { expected, actual }
            }
            StoreError::NameTaken { name } => {
                ServiceError::NameTaken(format!("a tool named '{name}' already exists"))
            }
            StoreError::NotFound { id } => {
                ServiceError::NotFound(format!("no custom tool with id {id}"))
            }
            e @ (StoreError::ConfigServiceNotFound { .. }
            | StoreError::ConfigEntryNotFound { .. }) => ServiceError::NotFound(e.to_string()),
            e @ (StoreError::ConfigServiceNameTaken { .. }
            | StoreError::ConfigEntryLabelTaken { .. }) => ServiceError::NameTaken(e.to_string()),
            e @ StoreError::ConfigSingleEntry { .. } => ServiceError::InvalidState(e.to_string()),
            StoreError::ConfigRevisionConflict {
                expected, actual, ..
            } => ServiceError::RevisionConflict { expected, actual },
            other => ServiceError::Store(other),
        }
    }
}
