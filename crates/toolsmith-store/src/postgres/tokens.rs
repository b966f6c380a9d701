//! API tokens and the tools fingerprint in PostgreSQL.

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use tokio_postgres::GenericClient;

use super::errors::pg;
use super::notify::notify;
use super::rows::{col, json, json_col, micros};
use crate::{ApiTokenRecord, ChangeKind, StoreError};

const TOKEN_COLUMNS: &str =
    "id, user_id, name, scopes, token_hash, created_at, last_used_at, agent_id";

pub(crate) async fn insert(
    client: &mut Client,
    instance: &str,
    token: &ApiTokenRecord,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    tx.execute(
        &format!(
            "INSERT INTO api_tokens ({TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
        ),
        &[
            &token.id,
            &token.user_id,
            &token.name,
            &json(&token.scopes),
            &token.token_hash,
            &micros(token.created_at),
            &token.last_used_at.map(micros),
            &token.agent_id,
        ],
    )
    .await
    .map_err(pg)?;
    let kind = ChangeKind::Token;
    notify(&*tx, instance, kind, &token.id, &token.user_id, None).await?;
    tx.commit().await.map_err(pg)
}

/// Deletes a token by id; whether it existed.
pub(crate) async fn delete(
    client: &mut Client,
    instance: &str,
    id: &str,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let n = tx
        .execute("DELETE FROM api_tokens WHERE id = $1", &[&id])
        .await
        .map_err(pg)?;
    if n > 0 {
        notify(&*tx, instance, ChangeKind::Token, id, "", None).await?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(n > 0)
}

/// The token with this hash, or every token (oldest first).
pub(crate) async fn select(
    client: &impl GenericClient,
    token_hash: Option<&str>,
) -> Result<Vec<ApiTokenRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {TOKEN_COLUMNS} FROM api_tokens \
                 WHERE $1::text IS NULL OR token_hash = $1 ORDER BY created_at, id COLLATE \"C\""
            ),
            &[&token_hash],
        )
        .await
        .map_err(pg)?;
    rows.iter()
        .map(|row| {
            let id: String = col(row, "id")?;
            Ok(ApiTokenRecord {
                user_id: col(row, "user_id")?,
                name: col(row, "name")?,
                scopes: json_col(row, "scopes", "api_tokens", &id)?,
                token_hash: col(row, "token_hash")?,
                created_at: col(row, "created_at")?,
                last_used_at: col(row, "last_used_at")?,
                agent_id: col(row, "agent_id")?,
                id,
            })
        })
        .collect()
}

/// Row count, revision sum and newest update over all custom tools (see the SQLite one).
pub(crate) async fn tools_fingerprint(client: &impl GenericClient) -> Result<String, StoreError> {
    let row = client
        .query_one(
            "SELECT count(*), coalesce(sum(revision), 0)::bigint, \
             coalesce(to_char(max(updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US'), '') \
             FROM custom_tools",
            &[],
        )
        .await
        .map_err(pg)?;
    Ok(format!(
        "{}:{}:{}",
        row.get::<_, i64>(0),
        row.get::<_, i64>(1),
        row.get::<_, String>(2)
    ))
}

/// The token whose text hashes to `token_hash`, if any.
pub(crate) async fn find(
    client: &impl GenericClient,
    token_hash: &str,
) -> Result<Option<ApiTokenRecord>, StoreError> {
    Ok(select(client, Some(token_hash)).await?.pop())
}

/// Marks a token as used at `at`.
pub(crate) async fn touch(
    client: &impl GenericClient,
    id: &str,
    at: &DateTime<Utc>,
) -> Result<(), StoreError> {
    client
        .execute(
            "UPDATE api_tokens SET last_used_at = $1 WHERE id = $2",
            &[at, &id],
        )
        .await
        .map_err(pg)?;
    Ok(())
}
