//! The MCP bridge's tables in PostgreSQL: registered servers, grants and access requests.
//!
//! Deciding a request is one conditional `UPDATE … WHERE status = 'pending'` in the transaction
//! that writes the grant, so of many deciders on any number of instances exactly one wins, and
//! an approval never exists without its grant.

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::mcp_bridge::{
    AccessRequestRecord, AccessRequestStatus, GrantSubject, McpGrantRecord, McpServerRecord,
};

use super::errors::pg;
use super::rows::{col, corrupt, json, json_col, micros};
use crate::StoreError;

store_on_pool! {
    impl McpStore |client, instance| {
        fn list_mcp_servers() -> Vec<McpServerRecord> = list_servers(&**client);
        fn create_mcp_server(server: &McpServerRecord) -> bool = create_server(&**client, server);
        fn update_mcp_server(
            server: &McpServerRecord, expected_revision: Option<i64>
        ) -> Result<McpServerRecord, Option<i64>>
            = update_server(&mut client, server, expected_revision);
        fn delete_mcp_server(name: &str) -> bool = delete_server(&**client, name);
        fn list_mcp_grants() -> Vec<McpGrantRecord> = list_grants(&**client);
        fn put_mcp_grant(grant: &McpGrantRecord) -> McpGrantRecord = put_grant(&**client, grant);
        fn delete_mcp_grant(id: &str) -> bool = delete_grant(&**client, id);
        fn create_access_request(request: &AccessRequestRecord) -> ()
            = create_request(&**client, request);
        fn list_access_requests(
            status: Option<AccessRequestStatus>
        ) -> Vec<AccessRequestRecord>
            = list_requests(&**client, status);
        fn decide_access_request(
            id: &str,
            approve: bool,
            decided_by: &str,
            now: DateTime<Utc>,
            new_grant: &McpGrantRecord,
        ) -> Option<AccessRequestRecord>
            = decide_request(&mut client, id, approve, decided_by, now, new_grant);
    }
}

const SERVER_COLUMNS: &str = "name, owner, config, revision, created_at, updated_at, updated_by";

fn server_from_row(row: &Row) -> Result<McpServerRecord, StoreError> {
    Ok(McpServerRecord {
        name: col(row, "name")?,
        owner: col(row, "owner")?,
        config: col(row, "config")?,
        revision: col(row, "revision")?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        updated_by: col(row, "updated_by")?,
    })
}

fn subject(row: &Row, table: &str, id: &str) -> Result<GrantSubject, StoreError> {
    let text: String = col(row, "subject_kind")?;
    GrantSubject::parse(&text).ok_or_else(|| corrupt(table, id, "subject_kind", text))
}

pub(crate) async fn list_servers(
    client: &impl GenericClient,
) -> Result<Vec<McpServerRecord>, StoreError> {
    client
        .query(
            &format!("SELECT {SERVER_COLUMNS} FROM mcp_servers ORDER BY name COLLATE \"C\""),
            &[],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(server_from_row)
        .collect()
}

pub(crate) async fn create_server(
    client: &impl GenericClient,
    server: &McpServerRecord,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            "INSERT INTO mcp_servers (name, owner, config, revision, created_at, updated_at, \
             updated_by) VALUES ($1, $2, $3, 1, $4, $5, $6) ON CONFLICT (name) DO NOTHING",
            &[
                &server.name,
                &server.owner,
                &server.config,
                &micros(server.created_at),
                &micros(server.updated_at),
                &server.updated_by,
            ],
        )
        .await
        .map_err(pg)?;
    Ok(n == 1)
}

pub(crate) async fn update_server(
    client: &mut Client,
    server: &McpServerRecord,
    expected_revision: Option<i64>,
) -> Result<Result<McpServerRecord, Option<i64>>, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let current = tx
        .query_opt(
            "SELECT revision FROM mcp_servers WHERE name = $1 FOR UPDATE",
            &[&server.name],
        )
        .await
        .map_err(pg)?;
    let Some(current) = current else {
        return Ok(Err(None));
    };
    let current: i64 = col(&current, "revision")?;
    if expected_revision.is_some_and(|e| e != current) {
        return Ok(Err(Some(current)));
    }
    let row = tx
        .query_one(
            &format!(
                "UPDATE mcp_servers SET config = $2, revision = revision + 1, updated_at = $3, \
                 updated_by = $4 WHERE name = $1 RETURNING {SERVER_COLUMNS}"
            ),
            &[
                &server.name,
                &server.config,
                &micros(server.updated_at),
                &server.updated_by,
            ],
        )
        .await
        .map_err(pg)?;
    let stored = server_from_row(&row)?;
    tx.commit().await.map_err(pg)?;
    Ok(Ok(stored))
}

pub(crate) async fn delete_server(
    client: &impl GenericClient,
    name: &str,
) -> Result<bool, StoreError> {
    let n = client
        .execute("DELETE FROM mcp_servers WHERE name = $1", &[&name])
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

const GRANT_COLUMNS: &str = "id, server, subject_kind, subject, enabled, tool_allow, tool_deny, \
     created_at, updated_at, updated_by";

fn grant_from_row(row: &Row) -> Result<McpGrantRecord, StoreError> {
    let id: String = col(row, "id")?;
    let t = "mcp_grants";
    Ok(McpGrantRecord {
        server: col(row, "server")?,
        subject_kind: subject(row, t, &id)?,
        subject: col(row, "subject")?,
        enabled: col(row, "enabled")?,
        tool_allow: json_col(row, "tool_allow", t, &id)?,
        tool_deny: json_col(row, "tool_deny", t, &id)?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        updated_by: col(row, "updated_by")?,
        id,
    })
}

pub(crate) async fn list_grants(
    client: &impl GenericClient,
) -> Result<Vec<McpGrantRecord>, StoreError> {
    client
        .query(
            &format!(
                "SELECT {GRANT_COLUMNS} FROM mcp_grants \
                 ORDER BY server COLLATE \"C\", subject_kind, subject COLLATE \"C\""
            ),
            &[],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(grant_from_row)
        .collect()
}

async fn find_grant(
    client: &impl GenericClient,
    server: &str,
    kind: GrantSubject,
    subject: &str,
) -> Result<Option<McpGrantRecord>, StoreError> {
    client
        .query_opt(
            &format!(
                "SELECT {GRANT_COLUMNS} FROM mcp_grants \
                 WHERE server = $1 AND subject_kind = $2 AND subject = $3"
            ),
            &[&server, &kind.as_str(), &subject],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(grant_from_row)
        .transpose()
}

/// Writes the grant of its (server, subject): a new row, or the existing row's fields (its id
/// and creation time stay). The grant as stored.
async fn upsert_grant(
    client: &impl GenericClient,
    grant: &McpGrantRecord,
) -> Result<McpGrantRecord, StoreError> {
    let row = client
        .query_one(
            &format!(
                "INSERT INTO mcp_grants (id, server, subject_kind, subject, enabled, tool_allow, \
                 tool_deny, created_at, updated_at, updated_by) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
                 ON CONFLICT (server, subject_kind, subject) DO UPDATE SET \
                 enabled = excluded.enabled, tool_allow = excluded.tool_allow, \
                 tool_deny = excluded.tool_deny, updated_at = excluded.updated_at, \
                 updated_by = excluded.updated_by RETURNING {GRANT_COLUMNS}"
            ),
            &[
                &grant.id,
                &grant.server,
                &grant.subject_kind.as_str(),
                &grant.subject,
                &grant.enabled,
                &json(&grant.tool_allow),
                &json(&grant.tool_deny),
                &micros(grant.created_at),
                &micros(grant.updated_at),
                &grant.updated_by,
            ],
        )
        .await
        .map_err(pg)?;
    grant_from_row(&row)
}

pub(crate) async fn put_grant(
    client: &impl GenericClient,
    grant: &McpGrantRecord,
) -> Result<McpGrantRecord, StoreError> {
    upsert_grant(client, grant).await
}

pub(crate) async fn delete_grant(
    client: &impl GenericClient,
    id: &str,
) -> Result<bool, StoreError> {
    let n = client
        .execute("DELETE FROM mcp_grants WHERE id = $1", &[&id])
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

const REQUEST_COLUMNS: &str = "id, server, subject_kind, subject, tools, reason, status, \
     requested_by, created_at, decided_by, decided_at, grant_id";

fn request_from_row(row: &Row) -> Result<AccessRequestRecord, StoreError> {
    let id: String = col(row, "id")?;
    let t = "mcp_access_requests";
    let status: String = col(row, "status")?;
    Ok(AccessRequestRecord {
        server: col(row, "server")?,
        subject_kind: subject(row, t, &id)?,
        subject: col(row, "subject")?,
        tools: json_col(row, "tools", t, &id)?,
        reason: col(row, "reason")?,
        status: AccessRequestStatus::parse(&status)
            .ok_or_else(|| corrupt(t, &id, "status", &status))?,
        requested_by: col(row, "requested_by")?,
        created_at: col(row, "created_at")?,
        decided_by: col(row, "decided_by")?,
        decided_at: col(row, "decided_at")?,
        grant_id: col(row, "grant_id")?,
        id,
    })
}

pub(crate) async fn create_request(
    client: &impl GenericClient,
    request: &AccessRequestRecord,
) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO mcp_access_requests (id, server, subject_kind, subject, tools, reason, \
             status, requested_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            &[
                &request.id,
                &request.server,
                &request.subject_kind.as_str(),
                &request.subject,
                &json(&request.tools),
                &request.reason,
                &request.status.as_str(),
                &request.requested_by,
                &micros(request.created_at),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(())
}

pub(crate) async fn list_requests(
    client: &impl GenericClient,
    status: Option<AccessRequestStatus>,
) -> Result<Vec<AccessRequestRecord>, StoreError> {
    let status = status.map(AccessRequestStatus::as_str);
    client
        .query(
            &format!(
                "SELECT {REQUEST_COLUMNS} FROM mcp_access_requests \
                 WHERE $1::TEXT IS NULL OR status = $1 ORDER BY created_at DESC, id COLLATE \"C\""
            ),
            &[&status],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(request_from_row)
        .collect()
}

/// Decides a pending request; with `approve`, creates or widens the subject's grant in the same
/// transaction. `None` when no pending request has that id.
pub(crate) async fn decide_request(
    client: &mut Client,
    id: &str,
    approve: bool,
    decided_by: &str,
    now: DateTime<Utc>,
    new_grant: &McpGrantRecord,
) -> Result<Option<AccessRequestRecord>, StoreError> {
    let now = micros(now);
    let tx = client.transaction().await.map_err(pg)?;
    let Some(row) = tx
        .query_opt(
            &format!(
                "SELECT {REQUEST_COLUMNS} FROM mcp_access_requests \
                 WHERE id = $1 AND status = 'pending' FOR UPDATE"
            ),
            &[&id],
        )
        .await
        .map_err(pg)?
    else {
        return Ok(None);
    };
    let request = request_from_row(&row)?;
    let (status, grant_id) = if approve {
        // The grant's row is locked by the upsert; the advisory lock keeps two approvals for
        // one subject from both reading the grant before either writes it.
        super::lock(
            &*tx,
            &format!(
                "toolsmith:mcp_grant:{}:{}:{}",
                request.server,
                request.subject_kind.as_str(),
                request.subject
            ),
        )
        .await?;
        let base = find_grant(
            &*tx,
            &request.server,
            request.subject_kind,
            &request.subject,
        )
        .await?
        .unwrap_or_else(|| McpGrantRecord {
            server: request.server.clone(),
            subject_kind: request.subject_kind,
            subject: request.subject.clone(),
            ..new_grant.clone()
        });
        let grant = upsert_grant(&*tx, &base.widened(&request.tools, decided_by, now)).await?;
        (AccessRequestStatus::Approved, Some(grant.id))
    } else {
        (AccessRequestStatus::Rejected, None)
    };
    let row = tx
        .query_one(
            &format!(
                "UPDATE mcp_access_requests SET status = $2, decided_by = $3, decided_at = $4, \
                 grant_id = $5 WHERE id = $1 RETURNING {REQUEST_COLUMNS}"
            ),
            &[&id, &status.as_str(), &decided_by, &now, &grant_id],
        )
        .await
        .map_err(pg)?;
    let decided = request_from_row(&row)?;
    tx.commit().await.map_err(pg)?;
    Ok(Some(decided))
}
