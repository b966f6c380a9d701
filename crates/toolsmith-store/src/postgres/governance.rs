//! Approvals, grants, the audit log and the stored policy in PostgreSQL.
//!
//! Deciding is one conditional `UPDATE … WHERE status = 'pending' AND expires_at > now`: of
//! many deciders on any number of instances exactly one changes the row. Consuming an
//! `allow_once` approval re-checks `status = 'allowed'` in the `UPDATE`, so a call runs once.
//! The policy's revision check and write hold the policy's advisory lock.

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use tokio_postgres::{GenericClient, Row};

use super::errors::pg;
use super::lock;
use super::notify::notify;
use super::rows::{col, corrupt, micros};
use crate::approval_rows::{decided_status, read_status, stored_status};
use crate::{
    ApiTokenRecord, ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, AuditQuery,
    AuditRecord, ChangeKind, StoreError, StoredPolicy,
};

store_on_pool! {
    impl GovernanceStore |client, instance| {
        fn insert_token(token: &ApiTokenRecord) -> ()
            = super::tokens::insert(&mut client, instance, token);
        fn find_token(token_hash: &str) -> Option<ApiTokenRecord>
            = super::tokens::find(&**client, token_hash);
        fn list_tokens() -> Vec<ApiTokenRecord> = super::tokens::select(&**client, None);
        fn delete_token(id: &str) -> bool = super::tokens::delete(&mut client, instance, id);
        fn touch_token(id: &str, at: DateTime<Utc>) -> ()
            = super::tokens::touch(&**client, id, &at);
        fn insert_approval(approval: &ApprovalRecord) -> ()
            = insert_approval(&mut client, instance, approval);
        fn get_approval(id: &str) -> Option<ApprovalRecord> = get_approval(&**client, id);
        fn list_approvals(query: &ApprovalQuery, now: DateTime<Utc>) -> Vec<ApprovalRecord>
            = list_approvals(&**client, query, &now);
        fn find_pending_approval(
            probe: &ApprovalRecord, now: DateTime<Utc>
        ) -> Option<ApprovalRecord>
            = find_pending_approval(&**client, probe, &now);
        fn find_denied_approval(
            probe: &ApprovalRecord, now: DateTime<Utc>
        ) -> Option<ApprovalRecord>
            = find_denied_approval(&**client, probe, &now);
        fn decide_approval(
            id: &str, decision: ApprovalDecision, decided_by: &str, now: DateTime<Utc>
        ) -> Option<ApprovalRecord>
            = decide_approval(&mut client, instance, id, decision, decided_by, &now);
        fn consume_allowed_approval(probe: &ApprovalRecord) -> Option<String>
            = consume_allowed_approval(&**client, probe);
        fn has_approval_grant(owner: &str, tool_key: &str, caller: &str) -> bool
            = has_grant(&**client, owner, tool_key, caller);
        fn revoke_approval_grants(owner: &str, tool_key: &str) -> u64
            = revoke_grants(&mut client, owner, tool_key);
        fn prune_approvals(before: DateTime<Utc>) -> u64 = prune_approvals(&**client, &before);
        fn count_pending_approvals(now: DateTime<Utc>) -> u64
            = count_pending_approvals(&**client, &now);
        fn insert_audit(entry: &AuditRecord) -> i64 = insert_audit(&**client, entry);
        fn list_audit(query: &AuditQuery) -> Vec<AuditRecord> = list_audit(&**client, query);
        fn get_policy() -> Option<StoredPolicy> = get_policy(&**client);
        fn put_policy(
            document: &serde_json::Value,
            expected_revision: Option<i64>,
            updated_by: &str,
            now: DateTime<Utc>,
        ) -> Result<StoredPolicy, i64>
            = put_policy(&mut client, instance, document, expected_revision, updated_by, &now);
        fn delete_policy() -> bool = delete_policy(&mut client, instance);
    }
}

const APPROVAL_COLUMNS: &str = "id, owner, tool_name, tool_key, caller, args_hash, args_preview, \
     status, decision, decided_by, created_at, expires_at, decided_at";

fn approval_from_row(row: &Row) -> Result<ApprovalRecord, StoreError> {
    let id: String = col(row, "id")?;
    let t = "execution_approvals";
    let status: String = col(row, "status")?;
    let status = status
        .parse::<ApprovalStatus>()
        .map_err(|e| corrupt(t, &id, "status", e))?;
    let decision: Option<String> = col(row, "decision")?;
    let decision = decision
        .map(|d| d.parse::<ApprovalDecision>())
        .transpose()
        .map_err(|e| corrupt(t, &id, "decision", e))?;
    Ok(ApprovalRecord {
        owner: col(row, "owner")?,
        tool_name: col(row, "tool_name")?,
        tool_key: col(row, "tool_key")?,
        caller: col(row, "caller")?,
        args_hash: col(row, "args_hash")?,
        args_preview: col(row, "args_preview")?,
        status: read_status(status, decision),
        decision,
        decided_by: col(row, "decided_by")?,
        created_at: col(row, "created_at")?,
        expires_at: col(row, "expires_at")?,
        decided_at: col(row, "decided_at")?,
        id,
    })
}

async fn approvals_where(
    client: &impl GenericClient,
    sql_where: &str,
    args: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let rows = client
        .query(
            &format!("SELECT {APPROVAL_COLUMNS} FROM execution_approvals {sql_where}"),
            args,
        )
        .await
        .map_err(pg)?;
    rows.iter().map(approval_from_row).collect()
}

pub(crate) async fn insert_approval(
    client: &mut Client,
    instance: &str,
    a: &ApprovalRecord,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    tx.execute(
        &format!(
            "INSERT INTO execution_approvals ({APPROVAL_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        ),
        &[
            &a.id,
            &a.owner,
            &a.tool_name,
            &a.tool_key,
            &a.caller,
            &a.args_hash,
            &a.args_preview,
            &stored_status(a.status),
            &a.decision.map(ApprovalDecision::as_str),
            &a.decided_by,
            &micros(a.created_at),
            &micros(a.expires_at),
            &a.decided_at.map(micros),
        ],
    )
    .await
    .map_err(pg)?;
    notify(&*tx, instance, ChangeKind::Approval, &a.id, &a.owner, None).await?;
    tx.commit().await.map_err(pg)
}

pub(crate) async fn get_approval(
    client: &impl GenericClient,
    id: &str,
) -> Result<Option<ApprovalRecord>, StoreError> {
    Ok(approvals_where(client, "WHERE id = $1", &[&id])
        .await?
        .pop())
}

pub(crate) async fn list_approvals(
    client: &impl GenericClient,
    query: &ApprovalQuery,
    now: &DateTime<Utc>,
) -> Result<Vec<ApprovalRecord>, StoreError> {
    let limit = i64::from(query.limit);
    let owner = query.owner.as_deref();
    let caller = query.caller.as_deref();
    if query.pending_only {
        approvals_where(
            client,
            "WHERE status = 'pending' AND expires_at > $1 AND ($2::text IS NULL OR owner = $2) \
             AND ($4::text IS NULL OR caller = $4) \
             ORDER BY created_at DESC, id COLLATE \"C\" LIMIT $3",
            &[now, &owner, &limit, &caller],
        )
        .await
    } else {
        approvals_where(
            client,
            "WHERE ($1::text IS NULL OR owner = $1) AND ($3::text IS NULL OR caller = $3) \
             ORDER BY created_at DESC, id COLLATE \"C\" LIMIT $2",
            &[&owner, &limit, &caller],
        )
        .await
    }
}

pub(crate) async fn find_pending_approval(
    client: &impl GenericClient,
    probe: &ApprovalRecord,
    now: &DateTime<Utc>,
) -> Result<Option<ApprovalRecord>, StoreError> {
    approval_of_call(client, probe, now, "pending", "created_at").await
}

/// The latest denial of exactly this call still in its time, if any.
pub(crate) async fn find_denied_approval(
    client: &impl GenericClient,
    probe: &ApprovalRecord,
    now: &DateTime<Utc>,
) -> Result<Option<ApprovalRecord>, StoreError> {
    approval_of_call(client, probe, now, "denied", "decided_at DESC").await
}

/// The first approval (by `order`) of exactly this call in `status` whose time is not up.
async fn approval_of_call(
    client: &impl GenericClient,
    probe: &ApprovalRecord,
    now: &DateTime<Utc>,
    status: &str,
    order: &str,
) -> Result<Option<ApprovalRecord>, StoreError> {
    Ok(approvals_where(
        client,
        &format!(
            "WHERE owner = $1 AND tool_key = $2 AND caller = $3 AND args_hash = $4 \
             AND status = $6 AND expires_at > $5 ORDER BY {order} LIMIT 1"
        ),
        &[
            &probe.owner,
            &probe.tool_key,
            &probe.caller,
            &probe.args_hash,
            now,
            &status,
        ],
    )
    .await?
    .pop())
}

pub(crate) async fn decide_approval(
    client: &mut Client,
    instance: &str,
    id: &str,
    decision: ApprovalDecision,
    decided_by: &str,
    now: &DateTime<Utc>,
) -> Result<Option<ApprovalRecord>, StoreError> {
    let status = stored_status(decided_status(decision));
    let now = micros(*now);
    let tx = client.transaction().await.map_err(pg)?;
    let row = tx
        .query_opt(
            &format!(
                "UPDATE execution_approvals SET status = $1, decision = $2, decided_by = $3, \
                 decided_at = $4, \
                 expires_at = CASE WHEN $2 = 'allow_once' \
                     THEN $4 + (expires_at - created_at) ELSE expires_at END \
                 WHERE id = $5 AND status = 'pending' AND expires_at > $4 \
                 RETURNING {APPROVAL_COLUMNS}"
            ),
            &[&status, &decision.as_str(), &decided_by, &now, &id],
        )
        .await
        .map_err(pg)?;
    let Some(row) = row else {
        return Ok(None);
    };
    let record = approval_from_row(&row)?;
    if decision == ApprovalDecision::AllowAlways {
        tx.execute(
            "INSERT INTO approval_grants (owner, tool_key, caller, granted_by, created_at) \
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT (owner, tool_key, caller) DO NOTHING",
            &[
                &record.owner,
                &record.tool_key,
                &record.caller,
                &decided_by,
                &now,
            ],
        )
        .await
        .map_err(pg)?;
    }
    notify(
        &*tx,
        instance,
        ChangeKind::Approval,
        id,
        &record.owner,
        None,
    )
    .await?;
    tx.commit().await.map_err(pg)?;
    Ok(Some(record))
}

pub(crate) async fn consume_allowed_approval(
    client: &impl GenericClient,
    probe: &ApprovalRecord,
) -> Result<Option<String>, StoreError> {
    let row = client
        .query_opt(
            "UPDATE execution_approvals SET status = 'consumed' WHERE status = 'allowed' AND id = (\
                 SELECT id FROM execution_approvals WHERE owner = $1 AND tool_key = $2 \
                 AND caller = $3 AND args_hash = $4 AND status = 'allowed' AND expires_at > $5 \
                 ORDER BY decided_at LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id",
            &[
                &probe.owner,
                &probe.tool_key,
                &probe.caller,
                &probe.args_hash,
                &micros(probe.created_at),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(row.map(|r| r.get(0)))
}

const AUDIT_COLUMNS: &str = "id, at, actor, actor_kind, action, target_type, target_id, \
     target_name, before_revision, after_revision, request_id, details";

pub(crate) async fn insert_audit(
    client: &impl GenericClient,
    entry: &AuditRecord,
) -> Result<i64, StoreError> {
    let row = client
        .query_one(
            "INSERT INTO audit_log (at, actor, actor_kind, action, target_type, target_id, \
             target_name, before_revision, after_revision, request_id, details) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id",
            &[
                &micros(entry.at),
                &entry.actor,
                &entry.actor_kind,
                &entry.action,
                &entry.target_type,
                &entry.target_id,
                &entry.target_name,
                &entry.before_revision,
                &entry.after_revision,
                &entry.request_id,
                &entry.details,
            ],
        )
        .await
        .map_err(pg)?;
    Ok(row.get(0))
}

pub(crate) async fn list_audit(
    client: &impl GenericClient,
    query: &AuditQuery,
) -> Result<Vec<AuditRecord>, StoreError> {
    // An action ending in '.' is a prefix (`tool.`); anything else matches exactly.
    let (exact, prefix) = match query.action.as_deref() {
        Some(a) if a.ends_with('.') => (
            None,
            Some(format!(
                "{}%",
                a.replace('\\', "\\\\")
                    .replace('%', "\\%")
                    .replace('_', "\\_")
            )),
        ),
        Some(a) => (Some(a.to_owned()), None),
        None => (None, None),
    };
    let rows = client
        .query(
            &format!(
                "SELECT {AUDIT_COLUMNS} FROM audit_log WHERE ($1::text IS NULL OR actor = $1) \
                 AND ($2::text IS NULL OR action = $2) \
                 AND ($3::text IS NULL OR action LIKE $3 ESCAPE '\\') \
                 AND ($4::text IS NULL OR target_id = $4) \
                 AND ($5::timestamptz IS NULL OR at >= $5) \
                 ORDER BY id DESC LIMIT $6 OFFSET $7"
            ),
            &[
                &query.actor,
                &exact,
                &prefix,
                &query.target_id,
                &query.since,
                &i64::from(query.limit),
                &i64::from(query.offset),
            ],
        )
        .await
        .map_err(pg)?;
    rows.iter()
        .map(|row| {
            Ok(AuditRecord {
                id: col(row, "id")?,
                at: col(row, "at")?,
                actor: col(row, "actor")?,
                actor_kind: col(row, "actor_kind")?,
                action: col(row, "action")?,
                target_type: col(row, "target_type")?,
                target_id: col(row, "target_id")?,
                target_name: col(row, "target_name")?,
                before_revision: col(row, "before_revision")?,
                after_revision: col(row, "after_revision")?,
                request_id: col(row, "request_id")?,
                details: col(row, "details")?,
            })
        })
        .collect()
}

pub(crate) async fn get_policy(
    client: &impl GenericClient,
) -> Result<Option<StoredPolicy>, StoreError> {
    let row = client
        .query_opt(
            "SELECT document, revision, updated_by, updated_at FROM policies WHERE id = 1",
            &[],
        )
        .await
        .map_err(pg)?;
    row.map(|row| {
        Ok(StoredPolicy {
            document: col(&row, "document")?,
            revision: col(&row, "revision")?,
            updated_by: col(&row, "updated_by")?,
            updated_at: col(&row, "updated_at")?,
        })
    })
    .transpose()
}

pub(crate) async fn put_policy(
    client: &mut Client,
    instance: &str,
    document: &serde_json::Value,
    expected: Option<i64>,
    updated_by: &str,
    now: &DateTime<Utc>,
) -> Result<Result<StoredPolicy, i64>, StoreError> {
    let now = micros(*now);
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, "toolsmith:policy").await?;
    let current = get_policy(&*tx).await?.map_or(0, |p| p.revision);
    if expected.is_some_and(|e| e != current) {
        return Ok(Err(current));
    }
    let revision = current + 1;
    tx.execute(
        "INSERT INTO policies (id, document, revision, updated_by, updated_at) \
         VALUES (1, $1, $2, $3, $4) ON CONFLICT (id) DO UPDATE SET document = excluded.document, \
         revision = excluded.revision, updated_by = excluded.updated_by, \
         updated_at = excluded.updated_at",
        &[document, &revision, &updated_by, &now],
    )
    .await
    .map_err(pg)?;
    notify(&*tx, instance, ChangeKind::Policy, "1", "", Some(revision)).await?;
    tx.commit().await.map_err(pg)?;
    Ok(Ok(StoredPolicy {
        document: document.clone(),
        revision,
        updated_by: updated_by.to_owned(),
        updated_at: now,
    }))
}

pub(crate) async fn delete_policy(client: &mut Client, instance: &str) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let n = tx
        .execute("DELETE FROM policies WHERE id = 1", &[])
        .await
        .map_err(pg)?;
    if n > 0 {
        notify(&*tx, instance, ChangeKind::Policy, "1", "", None).await?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(n > 0)
}

/// Whether `caller` holds an `allow_always` grant for the tool.
async fn has_grant(
    client: &impl GenericClient,
    owner: &str,
    tool_key: &str,
    caller: &str,
) -> Result<bool, StoreError> {
    let row = client
        .query_opt(
            "SELECT 1 FROM approval_grants WHERE owner = $1 AND tool_key = $2 AND caller = $3",
            &[&owner, &tool_key, &caller],
        )
        .await
        .map_err(pg)?;
    Ok(row.is_some())
}

/// Removes every grant of a tool and expires its approvals still pending or allowed but
/// unused; how many grants went.
async fn revoke_grants(
    client: &mut Client,
    owner: &str,
    tool_key: &str,
) -> Result<u64, StoreError> {
    // The approvals still pending or allowed once but unused were asked for the old code.
    let tx = client.transaction().await.map_err(pg)?;
    let n = tx
        .execute(
            "DELETE FROM approval_grants WHERE owner = $1 AND tool_key = $2",
            &[&owner, &tool_key],
        )
        .await
        .map_err(pg)?;
    tx.execute(
        "UPDATE execution_approvals SET status = 'expired' WHERE owner = $1 \
         AND tool_key = $2 AND status IN ('pending', 'allowed')",
        &[&owner, &tool_key],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(n)
}

/// Deletes every approval created before `before`; how many went.
async fn prune_approvals(
    client: &impl GenericClient,
    before: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    client
        .execute(
            "DELETE FROM execution_approvals WHERE created_at < $1",
            &[before],
        )
        .await
        .map_err(pg)
}

/// How many approvals are waiting for a decision at `now`.
async fn count_pending_approvals(
    client: &impl GenericClient,
    now: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    let n: i64 = client
        .query_one(
            "SELECT count(*) FROM execution_approvals \
             WHERE status = 'pending' AND expires_at > $1",
            &[now],
        )
        .await
        .map_err(pg)?
        .get(0);
    Ok(u64::try_from(n).unwrap_or(0))
}
