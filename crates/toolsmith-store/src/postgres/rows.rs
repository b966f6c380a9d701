//! Converting PostgreSQL rows into core records. JSONB columns arrive as JSON values and are
//! decoded into their types here; a row that cannot be read back is a [`StoreError::Corrupt`]
//! naming the table and the row id, never a panic.

use chrono::{DateTime, SubsecRound, Utc};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_postgres::Row;
use tokio_postgres::types::FromSql;
use toolsmith_core::record::ClientRequestCounts;
use toolsmith_core::{CustomToolRecord, ExecutionRecord, ToolVersionRecord};

use super::errors::pg;
use crate::StoreError;

/// The columns of `custom_tools`, in the order of [`tool_params`].
pub(crate) const TOOL_COLUMNS: &str = "id, owner, name, kind, description, parameters, code, \
     category, tags, permissions, status, requires_approval, created_by, version, revision, \
     usage_count, last_used_at, metadata, created_at, updated_at";

pub(crate) const VERSION_COLUMNS: &str = "v.tool_id, v.version, v.description, v.parameters, v.code, v.permissions, v.created_at, \
     v.metadata";

pub(crate) const EXECUTION_COLUMNS: &str = "id, tool_id, tool_name, tool_version, owner, \
     conversation_id, status, error_kind, error, duration_ms, created_at, agent_id, \
     client_logs, client_progress, client_samples, client_elicitations, client_refused, source";

/// Reads column `name`; a type mismatch is a backend error.
pub(crate) fn col<'a, T: FromSql<'a>>(row: &'a Row, name: &str) -> Result<T, StoreError> {
    row.try_get(name).map_err(pg)
}

/// A corrupt-row error for `table`, row `id`.
pub(crate) fn corrupt(
    table: &str,
    id: &str,
    what: &str,
    detail: impl std::fmt::Display,
) -> StoreError {
    StoreError::Corrupt {
        path: String::new(),
        reason: format!("{table}: row {id} has an unreadable {what}: {detail}"),
    }
}

/// Decodes a JSONB column into `T`.
pub(crate) fn json_col<T: DeserializeOwned>(
    row: &Row,
    name: &str,
    table: &str,
    id: &str,
) -> Result<T, StoreError> {
    let value: Value = col(row, name)?;
    serde_json::from_value(value).map_err(|e| corrupt(table, id, name, e))
}

/// Parses a text column with `FromStr` (statuses, kinds).
pub(crate) fn parsed<T: std::str::FromStr<Err = String>>(
    row: &Row,
    name: &str,
    table: &str,
    id: &str,
) -> Result<T, StoreError> {
    let text: String = col(row, name)?;
    text.parse()
        .map_err(|e: String| corrupt(table, id, name, e))
}

/// A value as JSON (serializing plain records cannot fail).
pub(crate) fn json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Timestamps are kept to the microsecond, like SQLite's text.
pub(crate) fn micros(t: DateTime<Utc>) -> DateTime<Utc> {
    t.trunc_subsecs(6)
}

pub(crate) fn tool_from_row(row: &Row) -> Result<CustomToolRecord, StoreError> {
    let id: String = col(row, "id")?;
    let t = "custom_tools";
    Ok(CustomToolRecord {
        owner: col(row, "owner")?,
        name: col(row, "name")?,
        kind: parsed(row, "kind", t, &id)?,
        description: col(row, "description")?,
        parameters: col(row, "parameters")?,
        code: col(row, "code")?,
        category: col(row, "category")?,
        tags: json_col(row, "tags", t, &id)?,
        permissions: json_col(row, "permissions", t, &id)?,
        status: parsed(row, "status", t, &id)?,
        requires_approval: col(row, "requires_approval")?,
        created_by: parsed(row, "created_by", t, &id)?,
        version: col(row, "version")?,
        revision: col(row, "revision")?,
        usage_count: col(row, "usage_count")?,
        last_used_at: col(row, "last_used_at")?,
        metadata: col(row, "metadata")?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        id,
    })
}

pub(crate) fn version_from_row(row: &Row) -> Result<ToolVersionRecord, StoreError> {
    let tool_id: String = col(row, "tool_id")?;
    let version: i64 = col(row, "version")?;
    let shown = format!("{tool_id} v{version}");
    Ok(ToolVersionRecord {
        description: col(row, "description")?,
        parameters: col(row, "parameters")?,
        code: col(row, "code")?,
        permissions: json_col(row, "permissions", "tool_versions", &shown)?,
        created_at: col(row, "created_at")?,
        metadata: col(row, "metadata")?,
        tool_id,
        version,
    })
}

pub(crate) fn execution_from_row(row: &Row) -> Result<ExecutionRecord, StoreError> {
    let id: String = col(row, "id")?;
    Ok(ExecutionRecord {
        tool_id: col(row, "tool_id")?,
        tool_name: col(row, "tool_name")?,
        tool_version: col(row, "tool_version")?,
        owner: col(row, "owner")?,
        conversation_id: col(row, "conversation_id")?,
        agent_id: col(row, "agent_id")?,
        status: parsed(row, "status", "tool_executions", &id)?,
        error_kind: col(row, "error_kind")?,
        error: col(row, "error")?,
        duration_ms: col(row, "duration_ms")?,
        created_at: col(row, "created_at")?,
        client_requests: ClientRequestCounts {
            logs: count_col(row, "client_logs")?,
            progress: count_col(row, "client_progress")?,
            samples: count_col(row, "client_samples")?,
            elicitations: count_col(row, "client_elicitations")?,
            refused: count_col(row, "client_refused")?,
        },
        source: parsed(row, "source", "tool_executions", &id)?,
        id,
    })
}

/// Reads a `BIGINT` count column as the `u32` the record holds (saturating: the counts are
/// capped far below it per run).
fn count_col(row: &Row, name: &str) -> Result<u32, StoreError> {
    let count: i64 = col(row, name)?;
    Ok(u32::try_from(count.max(0)).unwrap_or(u32::MAX))
}
