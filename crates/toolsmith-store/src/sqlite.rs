//! The SQLite store (placeholder until implemented).

use std::path::Path;

use crate::StoreError;

/// The embedded SQLite backend.
#[derive(Debug)]
pub struct SqliteStore {}

impl SqliteStore {
    /// Opens (creating if needed) the database file at `path` and runs migrations.
    pub async fn open(_path: &Path) -> Result<SqliteStore, StoreError> {
        unimplemented!("sqlite store")
    }
}
