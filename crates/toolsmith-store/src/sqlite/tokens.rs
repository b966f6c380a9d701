//! API tokens and the tools fingerprint: small queries that serve the access-control and
//! change-feed parts of the server.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::rows::{backend, parse_time, timestamp};
use crate::{ApiTokenRecord, StoreError};

const TOKEN_COLUMNS: &str =
    "id, user_id, name, scopes, token_hash, created_at, last_used_at, agent_id";

pub(crate) fn insert_token(conn: &Connection, token: &ApiTokenRecord) -> Result<(), StoreError> {
    let scopes =
        serde_json::to_string(&token.scopes).map_err(|e| StoreError::Backend(Box::new(e)))?;
    conn.execute(
        &format!(
            "INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        ),
        params![
            token.id,
            token.user_id,
            token.name,
            scopes,
            token.token_hash,
            timestamp(&token.created_at),
            token.last_used_at.as_ref().map(timestamp),
            token.agent_id,
        ],
    )
    .map_err(backend)?;
    Ok(())
}

pub(crate) fn find_token(
    conn: &Connection,
    token_hash: &str,
) -> Result<Option<ApiTokenRecord>, StoreError> {
    let row = conn
        .prepare_cached(&format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens WHERE token_hash = ?1"
        ))
        .and_then(|mut stmt| stmt.query_row(params![token_hash], raw_token).optional())
        .map_err(backend)?;
    row.map(token_from_raw).transpose()
}

pub(crate) fn list_tokens(conn: &Connection) -> Result<Vec<ApiTokenRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {TOKEN_COLUMNS} FROM api_tokens ORDER BY created_at, id"
        ))
        .map_err(backend)?;
    let raws = stmt
        .query_map([], raw_token)
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(backend)?;
    raws.into_iter().map(token_from_raw).collect()
}

pub(crate) fn delete_token(conn: &Connection, id: &str) -> Result<bool, StoreError> {
    let n = conn
        .execute("DELETE FROM api_tokens WHERE id = ?1", params![id])
        .map_err(backend)?;
    Ok(n > 0)
}

pub(crate) fn touch_token(
    conn: &Connection,
    id: &str,
    at: &DateTime<Utc>,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE api_tokens SET last_used_at = ?1 WHERE id = ?2",
        params![timestamp(at), id],
    )
    .map_err(backend)?;
    Ok(())
}

/// Row count, revision sum and newest update over all custom tools: every create, update,
/// status change and delete moves at least one of them (revisions only grow, and a re-created
/// tool starts above its predecessor's revision).
pub(crate) fn tools_fingerprint(conn: &Connection) -> Result<String, StoreError> {
    conn.query_row(
        "SELECT count(*), coalesce(sum(revision), 0), coalesce(max(updated_at), '') FROM custom_tools",
        [],
        |row| Ok(format!("{}:{}:{}", row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, String>(2)?)),
    )
    .map_err(backend)
}

type RawToken = (
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
);

fn raw_token(row: &Row<'_>) -> rusqlite::Result<RawToken> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
    ))
}

fn token_from_raw(raw: RawToken) -> Result<ApiTokenRecord, StoreError> {
    let (id, user_id, name, scopes, token_hash, created_at, last_used_at, agent_id) = raw;
    let bad = |what: &str, detail: String| StoreError::Corrupt {
        path: "api_tokens".to_owned(),
        reason: format!("token {id} has an unreadable {what}: {detail}"),
    };
    Ok(ApiTokenRecord {
        scopes: serde_json::from_str(&scopes).map_err(|e| bad("scopes", e.to_string()))?,
        created_at: parse_time(&created_at).map_err(|e| bad("created_at", e))?,
        last_used_at: last_used_at
            .map(|t| parse_time(&t))
            .transpose()
            .map_err(|e| bad("last_used_at", e))?,
        id: id.clone(),
        user_id,
        name,
        token_hash,
        agent_id,
    })
}
