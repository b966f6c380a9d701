//! Converting between rows and core records. Text columns hold JSON and RFC 3339 UTC timestamps
//! (fixed microsecond precision, so they sort as text). A row that cannot be read back is
//! reported as [`StoreError::Corrupt`] naming the table and the row id, never a panic; the
//! database path is filled in by the store (see [`with_path`]).

use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::Row;
use serde_json::Value;
use toolsmith_core::{
    CreatedBy, CustomToolRecord, ExecutionRecord, ExecutionSource, ExecutionStatus, PermissionSet,
    ToolKind, ToolStatus, ToolVersionRecord,
};

use crate::StoreError;
use toolsmith_core::record::ClientRequestCounts;

/// The columns of `custom_tools`, in the order [`tool_from_row`] reads them.
pub(crate) const TOOL_COLUMNS: &str = "id, owner, name, kind, description, parameters, code, \
     category, tags, permissions, status, requires_approval, created_by, version, revision, \
     usage_count, last_used_at, metadata, created_at, updated_at";

pub(crate) const VERSION_COLUMNS: &str =
    "tool_id, version, description, parameters, code, permissions, created_at, metadata";

pub(crate) const EXECUTION_COLUMNS: &str = "id, tool_id, tool_name, tool_version, owner, \
     conversation_id, status, error_kind, error, duration_ms, created_at, agent_id, \
     client_logs, client_progress, client_samples, client_elicitations, client_refused, source";

pub(crate) fn timestamp(at: &DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

pub(crate) fn json_text<T: serde::Serialize>(value: &T) -> String {
    // Serializing plain JSON values, string lists and permission sets cannot fail.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

/// Reads one `custom_tools` row.
pub(crate) fn tool_from_row(row: &Row<'_>) -> Result<CustomToolRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let bad = |what: &str, detail: String| StoreError::Corrupt {
        path: String::new(),
        reason: format!("custom_tools: tool {id} has an unreadable {what}: {detail}"),
    };
    let text = |idx: usize| -> Result<String, StoreError> { row.get(idx).map_err(backend) };
    let kind: ToolKind = text(3)?.parse().map_err(|e| bad("kind", e))?;
    let parameters: Value =
        serde_json::from_str(&text(5)?).map_err(|e| bad("parameters", e.to_string()))?;
    let tags: Vec<String> =
        serde_json::from_str(&text(8)?).map_err(|e| bad("tags", e.to_string()))?;
    let permissions: PermissionSet =
        serde_json::from_str(&text(9)?).map_err(|e| bad("permissions", e.to_string()))?;
    let status: ToolStatus = text(10)?.parse().map_err(|e| bad("status", e))?;
    let created_by: CreatedBy = text(12)?.parse().map_err(|e| bad("created_by", e))?;
    let last_used_at: Option<String> = row.get(16).map_err(backend)?;
    let last_used_at = last_used_at
        .map(|t| parse_time(&t))
        .transpose()
        .map_err(|e| bad("last_used_at", e))?;
    let metadata: Value =
        serde_json::from_str(&text(17)?).map_err(|e| bad("metadata", e.to_string()))?;
    Ok(CustomToolRecord {
        owner: text(1)?,
        name: text(2)?,
        kind,
        description: text(4)?,
        parameters,
        code: text(6)?,
        category: row.get(7).map_err(backend)?,
        tags,
        permissions,
        status,
        requires_approval: row.get(11).map_err(backend)?,
        created_by,
        version: row.get(13).map_err(backend)?,
        revision: row.get(14).map_err(backend)?,
        usage_count: row.get(15).map_err(backend)?,
        last_used_at,
        metadata,
        created_at: parse_time(&text(18)?).map_err(|e| bad("created_at", e))?,
        updated_at: parse_time(&text(19)?).map_err(|e| bad("updated_at", e))?,
        id,
    })
}

pub(crate) fn version_from_row(row: &Row<'_>) -> Result<ToolVersionRecord, StoreError> {
    let tool_id: String = row.get(0).map_err(backend)?;
    let version: i64 = row.get(1).map_err(backend)?;
    let bad = |what: &str, detail: String| StoreError::Corrupt {
        path: String::new(),
        reason: format!(
            "tool_versions: version {version} of tool {tool_id} has an unreadable {what}: {detail}"
        ),
    };
    let text = |idx: usize| -> Result<String, StoreError> { row.get(idx).map_err(backend) };
    Ok(ToolVersionRecord {
        description: text(2)?,
        parameters: serde_json::from_str(&text(3)?)
            .map_err(|e| bad("parameters", e.to_string()))?,
        code: text(4)?,
        permissions: serde_json::from_str(&text(5)?)
            .map_err(|e| bad("permissions", e.to_string()))?,
        created_at: parse_time(&text(6)?).map_err(|e| bad("created_at", e))?,
        metadata: serde_json::from_str(&text(7)?).map_err(|e| bad("metadata", e.to_string()))?,
        tool_id,
        version,
    })
}

pub(crate) fn execution_from_row(row: &Row<'_>) -> Result<ExecutionRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let bad = |what: &str, detail: String| StoreError::Corrupt {
        path: String::new(),
        reason: format!("tool_executions: execution {id} has an unreadable {what}: {detail}"),
    };
    let status: String = row.get(6).map_err(backend)?;
    let created_at: String = row.get(10).map_err(backend)?;
    Ok(ExecutionRecord {
        tool_id: row.get(1).map_err(backend)?,
        tool_name: row.get(2).map_err(backend)?,
        tool_version: row.get(3).map_err(backend)?,
        owner: row.get(4).map_err(backend)?,
        conversation_id: row.get(5).map_err(backend)?,
        agent_id: row.get(11).map_err(backend)?,
        status: status
            .parse::<ExecutionStatus>()
            .map_err(|e| bad("status", e))?,
        error_kind: row.get(7).map_err(backend)?,
        error: row.get(8).map_err(backend)?,
        duration_ms: row.get(9).map_err(backend)?,
        created_at: parse_time(&created_at).map_err(|e| bad("created_at", e))?,
        client_requests: ClientRequestCounts {
            logs: row.get(12).map_err(backend)?,
            progress: row.get(13).map_err(backend)?,
            samples: row.get(14).map_err(backend)?,
            elicitations: row.get(15).map_err(backend)?,
            refused: row.get(16).map_err(backend)?,
        },
        source: {
            let source: String = row.get(17).map_err(backend)?;
            source
                .parse::<ExecutionSource>()
                .map_err(|e| bad("source", e))?
        },
        id,
    })
}

pub(crate) fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| format!("'{text}': {e}"))
}

pub(crate) fn backend(e: rusqlite::Error) -> StoreError {
    match unavailable(&e) {
        Some(why) => StoreError::Unavailable {
            reason: format!("{why} ({e})"),
        },
        None => StoreError::Backend(Box::new(e)),
    }
}

/// What keeps SQLite from working that is the state of the disk or the file, not the request.
fn unavailable(e: &rusqlite::Error) -> Option<&'static str> {
    use rusqlite::ErrorCode;
    Some(match e.sqlite_error_code()? {
        ErrorCode::DiskFull => "the disk is full (free space, then it recovers by itself)",
        ErrorCode::ReadOnly => "the database file is read-only",
        ErrorCode::SystemIoFailure => "an I/O error on the database file",
        ErrorCode::CannotOpen => "the database file cannot be opened",
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
            "the database is locked by another process"
        }
        ErrorCode::OutOfMemory => "out of memory",
        _ => return None,
    })
}

/// Names the database file in a [`StoreError::Corrupt`] raised while reading a row.
pub(crate) fn with_path(e: StoreError, path: &str) -> StoreError {
    match e {
        StoreError::Corrupt { path: p, reason } if p.is_empty() => StoreError::Corrupt {
            path: path.to_owned(),
            reason,
        },
        other => other,
    }
}
