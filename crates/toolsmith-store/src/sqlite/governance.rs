//! Queries of the governance tables: execution approvals and grants, the audit log, and the
//! stored policy (migration 4).

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::rows::{backend, json_text, parse_time, timestamp};
use crate::approval_rows::{decided_status, read_status, stored_status};
use crate::{
    ApiTokenRecord, ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, AuditQuery,
    AuditRecord, StoreError, StoredPolicy,
};

store_on_connections! {
    impl GovernanceStore {
        write fn insert_token(token: &ApiTokenRecord) -> () = super::tokens::insert_token(&token);
        read fn find_token(token_hash: &str) -> Option<ApiTokenRecord>
            = super::tokens::find_token(&token_hash);
        read fn list_tokens() -> Vec<ApiTokenRecord> = super::tokens::list_tokens();
        write fn delete_token(id: &str) -> bool = super::tokens::delete_token(&id);
        write fn touch_token(id: &str, at: DateTime<Utc>) -> ()
            = super::tokens::touch_token(&id, &at);
        write fn insert_approval(approval: &ApprovalRecord) -> ()
            = insert_approval(&approval);
        read fn get_approval(id: &str) -> Option<ApprovalRecord> = get_approval(&id);
        read fn list_approvals(query: &ApprovalQuery, now: DateTime<Utc>) -> Vec<ApprovalRecord>
            = list_approvals(&query, &now);
        read fn find_pending_approval(
            probe: &ApprovalRecord, now: DateTime<Utc>
        ) -> Option<ApprovalRecord>
            = find_pending_approval(&probe, &now);
        read fn find_denied_approval(
            probe: &ApprovalRecord, now: DateTime<Utc>
        ) -> Option<ApprovalRecord>
            = find_denied_approval(&probe, &now);
        write fn decide_approval(
            id: &str, decision: ApprovalDecision, decided_by: &str, now: DateTime<Utc>
        ) -> Option<ApprovalRecord>
            = decide_approval(&id, decision, &decided_by, &now);
        write fn consume_allowed_approval(probe: &ApprovalRecord) -> Option<String>
            = consume_allowed_approval(&probe);
        read fn has_approval_grant(owner: &str, tool_key: &str, caller: &str) -> bool
            = has_grant(&owner, &tool_key, &caller);
        write fn revoke_approval_grants(owner: &str, tool_key: &str) -> u64
            = revoke_grants(&owner, &tool_key);
        write fn prune_approvals(before: DateTime<Utc>) -> u64 = prune_approvals(&before);
        read fn count_pending_approvals(now: DateTime<Utc>) -> u64
            = count_pending_approvals(&now);
        write fn insert_audit(entry: &AuditRecord) -> i64 = insert_audit(&entry);
        read fn list_audit(query: &AuditQuery) -> Vec<AuditRecord> = list_audit(&query);
        read fn get_policy() -> Option<StoredPolicy> = get_policy();
        write fn put_policy(
            document: &serde_json::Value,
            expected_revision: Option<i64>,
            updated_by: &str,
            now: DateTime<Utc>,
        ) -> Result<StoredPolicy, i64>
            = put_policy(&document, expected_revision, &updated_by, &now);
        write fn delete_policy() -> bool = delete_policy();
    }
}

const APPROVAL_COLUMNS: &str = "id, owner, tool_name, tool_key, caller, args_hash, args_preview, \
     status, decision, decided_by, created_at, expires_at, decided_at";

fn corrupt(table: &str, id: &str, what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        path: String::new(),
        reason: format!("{table}: row {id} has an unreadable {what}: {detail}"),
    }
}

fn approval_from_row(row: &Row<'_>) -> Result<ApprovalRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let text = |idx: usize| -> Result<String, StoreError> { row.get(idx).map_err(backend) };
    let opt = |idx: usize| -> Result<Option<String>, StoreError> { row.get(idx).map_err(backend) };
    let time = |idx: usize, what: &str| -> Result<DateTime<Utc>, StoreError> {
        parse_time(&text(idx)?).map_err(|e| corrupt("execution_approvals", &id, what, e))
    };
    let status: ApprovalStatus = text(7)?
        .parse()
        .map_err(|e| corrupt("execution_approvals", &id, "status", e))?;
    let decision = opt(8)?
        .map(|d| d.parse::<ApprovalDecision>())
        .transpose()
        .map_err(|e| corrupt("execution_approvals", &id, "decision", e))?;
    let status = read_status(status, decision);
    let decided_at = opt(12)?
        .map(|t| parse_time(&t))
        .transpose()
        .map_err(|e| corrupt("execution_approvals", &id, "decided_at", e))?;
    Ok(ApprovalRecord {
        owner: text(1)?,
        tool_name: text(2)?,
        tool_key: text(3)?,
        caller: text(4)?,
        args_hash: text(5)?,
        args_preview: text(6)?,
        status,
        decision,
        decided_by: opt(9)?,
        created_at: time(10, "created_at")?,
        expires_at: time(11, "expires_at")?,
        decided_at,
        id,
    })
}

fn approvals_where(
    conn: &Connection,
    sql_where: &str,
    args: &[&dyn rusqlite::ToSql],
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM execution_approvals {sql_where}"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query(args).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(approval_from_row(row)?);
    }
    Ok(out)
}

pub(crate) fn insert_approval(conn: &Connection, a: &ApprovalRecord) -> Result<(), StoreError> {
    conn.execute(
        &format!(
            "INSERT INTO execution_approvals ({APPROVAL_COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
        ),
        params![
            a.id,
            a.owner,
            a.tool_name,
            a.tool_key,
            a.caller,
            a.args_hash,
            a.args_preview,
            stored_status(a.status),
            a.decision.map(ApprovalDecision::as_str),
            a.decided_by,
            timestamp(&a.created_at),
            timestamp(&a.expires_at),
            a.decided_at.as_ref().map(timestamp),
        ],
    )
    .map_err(backend)?;
    Ok(())
}

pub(crate) fn get_approval(
    conn: &Connection,
    id: &str,
) -> Result<Option<ApprovalRecord>, StoreError> {
    Ok(approvals_where(conn, "WHERE id = ?1", &[&id])?.pop())
}

pub(crate) fn list_approvals(
    conn: &Connection,
    query: &ApprovalQuery,
    now: &DateTime<Utc>,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let now = timestamp(now);
    let limit = i64::from(query.limit);
    let owner = query.owner.as_deref();
    let caller = query.caller.as_deref();
    if query.pending_only {
        approvals_where(
            conn,
            "WHERE status = 'pending' AND expires_at > ?1 AND (?2 IS NULL OR owner = ?2) \
             AND (?4 IS NULL OR caller = ?4) ORDER BY created_at DESC, id LIMIT ?3",
            &[&now, &owner, &limit, &caller],
        )
    } else {
        approvals_where(
            conn,
            "WHERE (?1 IS NULL OR owner = ?1) AND (?3 IS NULL OR caller = ?3) \
             ORDER BY created_at DESC, id LIMIT ?2",
            &[&owner, &limit, &caller],
        )
    }
}

/// The pending, unexpired approval of exactly this call, if one is already waiting.
pub(crate) fn find_pending_approval(
    conn: &Connection,
    probe: &ApprovalRecord,
    now: &DateTime<Utc>,
) -> Result<Option<ApprovalRecord>, StoreError> {
    approval_of_call(conn, probe, now, "pending", "created_at")
}

/// The latest denial of exactly this call still in its time, if any.
pub(crate) fn find_denied_approval(
    conn: &Connection,
    probe: &ApprovalRecord,
    now: &DateTime<Utc>,
) -> Result<Option<ApprovalRecord>, StoreError> {
    approval_of_call(conn, probe, now, "denied", "decided_at DESC")
}

/// The first approval (by `order`) of exactly this call in `status` whose time is not up.
fn approval_of_call(
    conn: &Connection,
    probe: &ApprovalRecord,
    now: &DateTime<Utc>,
    status: &str,
    order: &str,
) -> Result<Option<ApprovalRecord>, StoreError> {
    Ok(approvals_where(
        conn,
        &format!(
            "WHERE owner = ?1 AND tool_key = ?2 AND caller = ?3 AND args_hash = ?4 \
             AND status = ?6 AND expires_at > ?5 ORDER BY {order} LIMIT 1"
        ),
        &[
            &probe.owner,
            &probe.tool_key,
            &probe.caller,
            &probe.args_hash,
            &timestamp(now),
            &status,
        ],
    )?
    .pop())
}

/// Records a decision on a pending, unexpired approval; `None` if it was not pending any more
/// (decided already, expired, or unknown). `allow_always` also writes the standing grant, in
/// the same transaction.
pub(crate) fn decide_approval(
    conn: &mut Connection,
    id: &str,
    decision: ApprovalDecision,
    decided_by: &str,
    now: &DateTime<Utc>,
) -> Result<Option<ApprovalRecord>, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let status = decided_status(decision);
    let changed = tx
        .execute(
            "UPDATE execution_approvals SET status = ?1, decision = ?2, decided_by = ?3, \
             decided_at = ?4 WHERE id = ?5 AND status = 'pending' AND expires_at > ?4",
            params![
                stored_status(status),
                decision.as_str(),
                decided_by,
                timestamp(now),
                id
            ],
        )
        .map_err(backend)?;
    if changed == 0 {
        return Ok(None);
    }
    if decision == ApprovalDecision::AllowOnce {
        // The allowed call may run within one more approval time from now, not forever.
        tx.execute(
            "UPDATE execution_approvals SET expires_at = ?1 WHERE id = ?2",
            params![timestamp(&allowed_until(&tx, id, now)?), id],
        )
        .map_err(backend)?;
    }
    let Some(record) = get_approval(&tx, id)? else {
        return Ok(None);
    };
    if decision == ApprovalDecision::AllowAlways {
        tx.execute(
            "INSERT INTO approval_grants (owner, tool_key, caller, granted_by, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (owner, tool_key, caller) DO NOTHING",
            params![
                record.owner,
                record.tool_key,
                record.caller,
                decided_by,
                timestamp(now)
            ],
        )
        .map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    Ok(Some(record))
}

/// When an approval allowed once at `now` stops allowing its call: `now` plus the time the
/// approval had to be decided in.
fn allowed_until(
    conn: &Connection,
    id: &str,
    now: &DateTime<Utc>,
) -> Result<DateTime<Utc>, StoreError> {
    let Some(record) = get_approval(conn, id)? else {
        return Ok(*now);
    };
    Ok(*now + (record.expires_at - record.created_at))
}

/// Uses up one unexpired `allow_once` approval of exactly this call (`probe.created_at` is the
/// time of the call): `Some(id)` if there was one.
pub(crate) fn consume_allowed_approval(
    conn: &Connection,
    probe: &ApprovalRecord,
) -> Result<Option<String>, StoreError> {
    conn.query_row(
        "UPDATE execution_approvals SET status = 'consumed' WHERE id = (\
             SELECT id FROM execution_approvals WHERE owner = ?1 AND tool_key = ?2 \
             AND caller = ?3 AND args_hash = ?4 AND status = 'allowed' AND expires_at > ?5 \
             ORDER BY decided_at LIMIT 1) RETURNING id",
        params![
            probe.owner,
            probe.tool_key,
            probe.caller,
            probe.args_hash,
            timestamp(&probe.created_at)
        ],
        |row| row.get(0),
    )
    .optional()
    .map_err(backend)
}

pub(crate) fn has_grant(
    conn: &Connection,
    owner: &str,
    tool_key: &str,
    caller: &str,
) -> Result<bool, StoreError> {
    conn.prepare_cached(
        "SELECT 1 FROM approval_grants WHERE owner = ?1 AND tool_key = ?2 AND caller = ?3",
    )
    .and_then(|mut stmt| stmt.exists(params![owner, tool_key, caller]))
    .map_err(backend)
}

/// Deletes the grants of a tool (when it is deleted or its code changes), and expires its
/// approvals still pending or allowed once but unused: they were asked for the old code. How
/// many grants went.
pub(crate) fn revoke_grants(
    conn: &mut Connection,
    owner: &str,
    tool_key: &str,
) -> Result<u64, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let n = tx
        .execute(
            "DELETE FROM approval_grants WHERE owner = ?1 AND tool_key = ?2",
            params![owner, tool_key],
        )
        .map_err(backend)?;
    tx.execute(
        "UPDATE execution_approvals SET status = 'expired' WHERE owner = ?1 AND tool_key = ?2 \
         AND status IN ('pending', 'allowed')",
        params![owner, tool_key],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(n as u64)
}

pub(crate) fn prune_approvals(
    conn: &Connection,
    before: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    let n = conn
        .execute(
            "DELETE FROM execution_approvals WHERE created_at < ?1",
            params![timestamp(before)],
        )
        .map_err(backend)?;
    Ok(n as u64)
}

pub(crate) fn count_pending_approvals(
    conn: &Connection,
    now: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    conn.query_row(
        "SELECT count(*) FROM execution_approvals WHERE status = 'pending' AND expires_at > ?1",
        params![timestamp(now)],
        |row| row.get::<_, i64>(0),
    )
    .map(|n| n.max(0) as u64)
    .map_err(backend)
}

const AUDIT_COLUMNS: &str = "id, at, actor, actor_kind, action, target_type, target_id, \
     target_name, before_revision, after_revision, request_id, details";

pub(crate) fn insert_audit(conn: &Connection, entry: &AuditRecord) -> Result<i64, StoreError> {
    conn.query_row(
        "INSERT INTO audit_log (at, actor, actor_kind, action, target_type, target_id, \
         target_name, before_revision, after_revision, request_id, details) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) RETURNING id",
        params![
            timestamp(&entry.at),
            entry.actor,
            entry.actor_kind,
            entry.action,
            entry.target_type,
            entry.target_id,
            entry.target_name,
            entry.before_revision,
            entry.after_revision,
            entry.request_id,
            json_text(&entry.details),
        ],
        |row| row.get(0),
    )
    .map_err(backend)
}

fn audit_from_row(row: &Row<'_>) -> Result<AuditRecord, StoreError> {
    let id: i64 = row.get(0).map_err(backend)?;
    let shown = id.to_string();
    let at: String = row.get(1).map_err(backend)?;
    let details: String = row.get(11).map_err(backend)?;
    Ok(AuditRecord {
        id,
        at: parse_time(&at).map_err(|e| corrupt("audit_log", &shown, "at", e))?,
        actor: row.get(2).map_err(backend)?,
        actor_kind: row.get(3).map_err(backend)?,
        action: row.get(4).map_err(backend)?,
        target_type: row.get(5).map_err(backend)?,
        target_id: row.get(6).map_err(backend)?,
        target_name: row.get(7).map_err(backend)?,
        before_revision: row.get(8).map_err(backend)?,
        after_revision: row.get(9).map_err(backend)?,
        request_id: row.get(10).map_err(backend)?,
        details: serde_json::from_str(&details)
            .map_err(|e| corrupt("audit_log", &shown, "details", e))?,
    })
}

pub(crate) fn list_audit(
    conn: &Connection,
    query: &AuditQuery,
) -> Result<Vec<AuditRecord>, StoreError> {
    // An action ending in '.' is a prefix (`tool.`); anything else matches exactly.
    let (exact, prefix) = match query.action.as_deref() {
        Some(a) if a.ends_with('.') => (None, Some(format!("{a}%"))),
        Some(a) => (Some(a.to_owned()), None),
        None => (None, None),
    };
    let since = query.since.as_ref().map(timestamp);
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {AUDIT_COLUMNS} FROM audit_log WHERE (?1 IS NULL OR actor = ?1) \
             AND (?2 IS NULL OR action = ?2) AND (?3 IS NULL OR action LIKE ?3 ESCAPE '\\') \
             AND (?4 IS NULL OR target_id = ?4) AND (?5 IS NULL OR at >= ?5) \
             ORDER BY id DESC LIMIT ?6 OFFSET ?7"
        ))
        .map_err(backend)?;
    let mut rows = stmt
        .query(params![
            query.actor,
            exact,
            prefix.map(|p| p.replace('_', "\\_")),
            query.target_id,
            since,
            i64::from(query.limit),
            i64::from(query.offset),
        ])
        .map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(audit_from_row(row)?);
    }
    Ok(out)
}

pub(crate) fn get_policy(conn: &Connection) -> Result<Option<StoredPolicy>, StoreError> {
    let row = conn
        .query_row(
            "SELECT document, revision, updated_by, updated_at FROM policies WHERE id = 1",
            [],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                ))
            },
        )
        .optional()
        .map_err(backend)?;
    row.map(|(document, revision, updated_by, updated_at)| {
        Ok(StoredPolicy {
            document: serde_json::from_str(&document)
                .map_err(|e| corrupt("policies", "1", "document", e))?,
            revision,
            updated_by,
            updated_at: parse_time(&updated_at)
                .map_err(|e| corrupt("policies", "1", "updated_at", e))?,
        })
    })
    .transpose()
}

/// Writes the policy if its revision is `expected` (0: none stored yet); the new record, or
/// `Err(actual)` with the stored revision.
pub(crate) fn put_policy(
    conn: &mut Connection,
    document: &serde_json::Value,
    expected: Option<i64>,
    updated_by: &str,
    now: &DateTime<Utc>,
) -> Result<Result<StoredPolicy, i64>, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let current = get_policy(&tx)?.map_or(0, |p| p.revision);
    if expected.is_some_and(|e| e != current) {
        return Ok(Err(current));
    }
    let revision = current + 1;
    tx.execute(
        "INSERT INTO policies (id, document, revision, updated_by, updated_at) \
         VALUES (1, ?1, ?2, ?3, ?4) ON CONFLICT (id) DO UPDATE SET document = excluded.document, \
         revision = excluded.revision, updated_by = excluded.updated_by, \
         updated_at = excluded.updated_at",
        params![json_text(document), revision, updated_by, timestamp(now)],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(Ok(StoredPolicy {
        document: document.clone(),
        revision,
        updated_by: updated_by.to_owned(),
        updated_at: *now,
    }))
}

/// Removes the stored policy; whether there was one.
pub(crate) fn delete_policy(conn: &Connection) -> Result<bool, StoreError> {
    let n = conn
        .execute("DELETE FROM policies WHERE id = 1", [])
        .map_err(backend)?;
    Ok(n > 0)
}
