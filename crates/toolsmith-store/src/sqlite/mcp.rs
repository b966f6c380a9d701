//! The MCP bridge's tables on SQLite: registered servers, grants and access requests.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use toolsmith_core::mcp_bridge::{
    AccessRequestRecord, AccessRequestStatus, GrantSubject, McpGrantRecord, McpServerRecord,
};

use super::rows::{backend, json_text, parse_time, timestamp};
use crate::StoreError;

store_on_connections! {
    impl McpStore {
        read fn list_mcp_servers() -> Vec<McpServerRecord> = list_servers();
        write fn create_mcp_server(server: &McpServerRecord) -> bool = create_server(&server);
        write fn update_mcp_server(
            server: &McpServerRecord, expected_revision: Option<i64>
        ) -> Result<McpServerRecord, Option<i64>>
            = update_server(&server, expected_revision);
        write fn delete_mcp_server(name: &str) -> bool = delete_server(&name);
        read fn list_mcp_grants() -> Vec<McpGrantRecord> = list_grants();
        write fn put_mcp_grant(grant: &McpGrantRecord) -> McpGrantRecord = put_grant(&grant);
        write fn delete_mcp_grant(id: &str) -> bool = delete_grant(&id);
        write fn create_access_request(request: &AccessRequestRecord) -> ()
            = create_request(&request);
        read fn list_access_requests(
            status: Option<AccessRequestStatus>
        ) -> Vec<AccessRequestRecord>
            = list_requests(status);
        write fn decide_access_request(
            id: &str,
            approve: bool,
            decided_by: &str,
            now: DateTime<Utc>,
            new_grant: &McpGrantRecord,
        ) -> Option<AccessRequestRecord>
            = decide_request(&id, approve, &decided_by, &now, &new_grant);
    }
}

fn corrupt(table: &str, id: &str, what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        path: String::new(),
        reason: format!("{table}: row {id} has an unreadable {what}: {detail}"),
    }
}

fn time(table: &str, id: &str, what: &str, text: &str) -> Result<DateTime<Utc>, StoreError> {
    parse_time(text).map_err(|e| corrupt(table, id, what, e))
}

fn json<T: serde::de::DeserializeOwned>(
    table: &str,
    id: &str,
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(table, id, what, e))
}

fn subject(table: &str, id: &str, text: &str) -> Result<GrantSubject, StoreError> {
    GrantSubject::parse(text).ok_or_else(|| corrupt(table, id, "subject_kind", text))
}

const SERVER_COLUMNS: &str = "name, owner, config, revision, created_at, updated_at, updated_by";

fn server_from_row(row: &Row<'_>) -> Result<McpServerRecord, StoreError> {
    let name: String = row.get(0).map_err(backend)?;
    let t = "mcp_servers";
    Ok(McpServerRecord {
        owner: row.get(1).map_err(backend)?,
        config: json(
            t,
            &name,
            "config",
            &row.get::<_, String>(2).map_err(backend)?,
        )?,
        revision: row.get(3).map_err(backend)?,
        created_at: time(
            t,
            &name,
            "created_at",
            &row.get::<_, String>(4).map_err(backend)?,
        )?,
        updated_at: time(
            t,
            &name,
            "updated_at",
            &row.get::<_, String>(5).map_err(backend)?,
        )?,
        updated_by: row.get(6).map_err(backend)?,
        name,
    })
}

pub(crate) fn list_servers(conn: &Connection) -> Result<Vec<McpServerRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {SERVER_COLUMNS} FROM mcp_servers ORDER BY name"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query([]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(server_from_row(row)?);
    }
    Ok(out)
}

pub(crate) fn create_server(
    conn: &Connection,
    server: &McpServerRecord,
) -> Result<bool, StoreError> {
    let n = conn
        .execute(
            "INSERT INTO mcp_servers (name, owner, config, revision, created_at, updated_at, \
             updated_by) VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6) ON CONFLICT (name) DO NOTHING",
            params![
                server.name,
                server.owner,
                json_text(&server.config),
                timestamp(&server.created_at),
                timestamp(&server.updated_at),
                server.updated_by
            ],
        )
        .map_err(backend)?;
    Ok(n == 1)
}

pub(crate) fn update_server(
    conn: &mut Connection,
    server: &McpServerRecord,
    expected_revision: Option<i64>,
) -> Result<Result<McpServerRecord, Option<i64>>, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let current: Option<i64> = tx
        .query_row(
            "SELECT revision FROM mcp_servers WHERE name = ?1",
            [&server.name],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    let Some(current) = current else {
        return Ok(Err(None));
    };
    if expected_revision.is_some_and(|e| e != current) {
        return Ok(Err(Some(current)));
    }
    tx.execute(
        "UPDATE mcp_servers SET config = ?2, revision = revision + 1, updated_at = ?3, \
         updated_by = ?4 WHERE name = ?1",
        params![
            server.name,
            json_text(&server.config),
            timestamp(&server.updated_at),
            server.updated_by
        ],
    )
    .map_err(backend)?;
    let stored = tx
        .query_row(
            &format!("SELECT {SERVER_COLUMNS} FROM mcp_servers WHERE name = ?1"),
            [&server.name],
            |row| Ok(server_from_row(row)),
        )
        .map_err(backend)??;
    tx.commit().map_err(backend)?;
    Ok(Ok(stored))
}

pub(crate) fn delete_server(conn: &Connection, name: &str) -> Result<bool, StoreError> {
    let n = conn
        .execute("DELETE FROM mcp_servers WHERE name = ?1", [name])
        .map_err(backend)?;
    Ok(n > 0)
}

const GRANT_COLUMNS: &str = "id, server, subject_kind, subject, enabled, tool_allow, tool_deny, \
     created_at, updated_at, updated_by";

fn grant_from_row(row: &Row<'_>) -> Result<McpGrantRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let t = "mcp_grants";
    Ok(McpGrantRecord {
        server: row.get(1).map_err(backend)?,
        subject_kind: subject(t, &id, &row.get::<_, String>(2).map_err(backend)?)?,
        subject: row.get(3).map_err(backend)?,
        enabled: row.get(4).map_err(backend)?,
        tool_allow: json(
            t,
            &id,
            "tool_allow",
            &row.get::<_, String>(5).map_err(backend)?,
        )?,
        tool_deny: json(
            t,
            &id,
            "tool_deny",
            &row.get::<_, String>(6).map_err(backend)?,
        )?,
        created_at: time(
            t,
            &id,
            "created_at",
            &row.get::<_, String>(7).map_err(backend)?,
        )?,
        updated_at: time(
            t,
            &id,
            "updated_at",
            &row.get::<_, String>(8).map_err(backend)?,
        )?,
        updated_by: row.get(9).map_err(backend)?,
        id,
    })
}

pub(crate) fn list_grants(conn: &Connection) -> Result<Vec<McpGrantRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {GRANT_COLUMNS} FROM mcp_grants ORDER BY server, subject_kind, subject"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query([]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(grant_from_row(row)?);
    }
    Ok(out)
}

fn find_grant(
    conn: &Connection,
    server: &str,
    kind: GrantSubject,
    subject: &str,
) -> Result<Option<McpGrantRecord>, StoreError> {
    conn.query_row(
        &format!(
            "SELECT {GRANT_COLUMNS} FROM mcp_grants \
             WHERE server = ?1 AND subject_kind = ?2 AND subject = ?3"
        ),
        params![server, kind.as_str(), subject],
        |row| Ok(grant_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

/// Writes the grant of its (server, subject): a new row, or the existing row's fields (its id
/// and creation time stay). The grant as stored.
fn upsert_grant(conn: &Connection, grant: &McpGrantRecord) -> Result<McpGrantRecord, StoreError> {
    conn.execute(
        "INSERT INTO mcp_grants (id, server, subject_kind, subject, enabled, tool_allow, \
         tool_deny, created_at, updated_at, updated_by) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) \
         ON CONFLICT (server, subject_kind, subject) DO UPDATE SET enabled = excluded.enabled, \
         tool_allow = excluded.tool_allow, tool_deny = excluded.tool_deny, \
         updated_at = excluded.updated_at, updated_by = excluded.updated_by",
        params![
            grant.id,
            grant.server,
            grant.subject_kind.as_str(),
            grant.subject,
            grant.enabled,
            json_text(&grant.tool_allow),
            json_text(&grant.tool_deny),
            timestamp(&grant.created_at),
            timestamp(&grant.updated_at),
            grant.updated_by
        ],
    )
    .map_err(backend)?;
    find_grant(conn, &grant.server, grant.subject_kind, &grant.subject)?.ok_or_else(|| {
        corrupt(
            "mcp_grants",
            &grant.id,
            "row",
            "it vanished after its write",
        )
    })
}

pub(crate) fn put_grant(
    conn: &mut Connection,
    grant: &McpGrantRecord,
) -> Result<McpGrantRecord, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let stored = upsert_grant(&tx, grant)?;
    tx.commit().map_err(backend)?;
    Ok(stored)
}

pub(crate) fn delete_grant(conn: &Connection, id: &str) -> Result<bool, StoreError> {
    let n = conn
        .execute("DELETE FROM mcp_grants WHERE id = ?1", [id])
        .map_err(backend)?;
    Ok(n > 0)
}

const REQUEST_COLUMNS: &str = "id, server, subject_kind, subject, tools, reason, status, \
     requested_by, created_at, decided_by, decided_at, grant_id";

fn request_from_row(row: &Row<'_>) -> Result<AccessRequestRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let t = "mcp_access_requests";
    let status: String = row.get(6).map_err(backend)?;
    let decided_at: Option<String> = row.get(10).map_err(backend)?;
    Ok(AccessRequestRecord {
        server: row.get(1).map_err(backend)?,
        subject_kind: subject(t, &id, &row.get::<_, String>(2).map_err(backend)?)?,
        subject: row.get(3).map_err(backend)?,
        tools: json(t, &id, "tools", &row.get::<_, String>(4).map_err(backend)?)?,
        reason: row.get(5).map_err(backend)?,
        status: AccessRequestStatus::parse(&status)
            .ok_or_else(|| corrupt(t, &id, "status", &status))?,
        requested_by: row.get(7).map_err(backend)?,
        created_at: time(
            t,
            &id,
            "created_at",
            &row.get::<_, String>(8).map_err(backend)?,
        )?,
        decided_by: row.get(9).map_err(backend)?,
        decided_at: decided_at
            .map(|d| time(t, &id, "decided_at", &d))
            .transpose()?,
        grant_id: row.get(11).map_err(backend)?,
        id,
    })
}

pub(crate) fn create_request(
    conn: &Connection,
    request: &AccessRequestRecord,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO mcp_access_requests (id, server, subject_kind, subject, tools, reason, \
         status, requested_by, created_at, decided_by, decided_at, grant_id) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, NULL, NULL, NULL)",
        params![
            request.id,
            request.server,
            request.subject_kind.as_str(),
            request.subject,
            json_text(&request.tools),
            request.reason,
            request.status.as_str(),
            request.requested_by,
            timestamp(&request.created_at)
        ],
    )
    .map_err(backend)?;
    Ok(())
}

fn get_request(conn: &Connection, id: &str) -> Result<Option<AccessRequestRecord>, StoreError> {
    conn.query_row(
        &format!("SELECT {REQUEST_COLUMNS} FROM mcp_access_requests WHERE id = ?1"),
        [id],
        |row| Ok(request_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

pub(crate) fn list_requests(
    conn: &Connection,
    status: Option<AccessRequestStatus>,
) -> Result<Vec<AccessRequestRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {REQUEST_COLUMNS} FROM mcp_access_requests \
             WHERE ?1 IS NULL OR status = ?1 ORDER BY created_at DESC, id"
        ))
        .map_err(backend)?;
    let mut rows = stmt
        .query([status.map(AccessRequestStatus::as_str)])
        .map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(request_from_row(row)?);
    }
    Ok(out)
}

/// Decides a pending request; with `approve`, creates or widens the subject's grant in the same
/// transaction (`new_grant` is the grant to create when there is none). `None` when no pending
/// request has that id.
pub(crate) fn decide_request(
    conn: &mut Connection,
    id: &str,
    approve: bool,
    decided_by: &str,
    now: &DateTime<Utc>,
    new_grant: &McpGrantRecord,
) -> Result<Option<AccessRequestRecord>, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let Some(request) = get_request(&tx, id)? else {
        return Ok(None);
    };
    if request.status != AccessRequestStatus::Pending {
        return Ok(None);
    }
    let (status, grant_id) = if approve {
        let base = find_grant(&tx, &request.server, request.subject_kind, &request.subject)?
            .unwrap_or_else(|| McpGrantRecord {
                server: request.server.clone(),
                subject_kind: request.subject_kind,
                subject: request.subject.clone(),
                ..new_grant.clone()
            });
        let grant = upsert_grant(&tx, &base.widened(&request.tools, decided_by, *now))?;
        (AccessRequestStatus::Approved, Some(grant.id))
    } else {
        (AccessRequestStatus::Rejected, None)
    };
    let n = tx
        .execute(
            "UPDATE mcp_access_requests SET status = ?2, decided_by = ?3, decided_at = ?4, \
             grant_id = ?5 WHERE id = ?1 AND status = 'pending'",
            params![id, status.as_str(), decided_by, timestamp(now), grant_id],
        )
        .map_err(backend)?;
    if n != 1 {
        return Ok(None);
    }
    let decided = get_request(&tx, id)?;
    tx.commit().map_err(backend)?;
    Ok(decided)
}
