//! Tool tasks on SQLite (`tool_tasks`): one writer connection, so the running-task cap counted
//! inside the insert's transaction is exact.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde_json::Value;
use toolsmith_core::tool_task::{ToolTaskRecord, ToolTaskStatus};

use super::rows::{backend, json_text, parse_time, timestamp};
use crate::StoreError;

store_on_connections! {
    impl TaskStore {
        write fn insert_tool_task(task: &ToolTaskRecord, max_running: u32) -> bool
            = insert_task(&task, max_running);
        read fn get_tool_task(
            owner: &str, agent: Option<&str>, id: &str, now: DateTime<Utc>
        ) -> Option<ToolTaskRecord>
            = get_task(&owner, agent.as_deref(), &id, &now);
        read fn list_tool_tasks(
            owner: &str, agent: Option<&str>, now: DateTime<Utc>, limit: u32, offset: u32
        ) -> Vec<ToolTaskRecord>
            = list_tasks(&owner, agent.as_deref(), &now, limit, offset);
        write fn update_tool_task(
            id: &str,
            status: ToolTaskStatus,
            message: Option<&str>,
            result: Option<&Value>,
            now: DateTime<Utc>,
        ) -> Option<ToolTaskRecord>
            = update_task(&id, status, message.as_deref(), result.as_ref(), &now);
        write fn cancel_tool_task(
            owner: &str, agent: Option<&str>, id: &str, message: &str, now: DateTime<Utc>
        ) -> Option<ToolTaskRecord>
            = cancel_task(&owner, agent.as_deref(), &id, &message, &now);
        read fn ended_tool_tasks(ids: &[String]) -> Vec<String> = ended_tasks(&ids);
        write fn fail_instance_tool_tasks(instance: &str, message: &str, now: DateTime<Utc>) -> u64
            = fail_instance_tasks(&instance, &message, &now);
        write fn sweep_tool_tasks(now: DateTime<Utc>) -> u64 = sweep_tasks(&now);
    }
}

const COLUMNS: &str = "id, owner, agent, tool, status, status_message, created_at, updated_at, \
                       ttl_ms, expires_at, result, instance";

/// The statuses of a task that has not ended, as an SQL list.
const RUNNING: &str = "('working', 'input_required')";

fn corrupt(id: &str, what: &str, detail: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt {
        path: String::new(),
        reason: format!("tool_tasks: row {id} has an unreadable {what}: {detail}"),
    }
}

fn task_from_row(row: &Row<'_>) -> Result<ToolTaskRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let time = |i: usize, what: &str| -> Result<DateTime<Utc>, StoreError> {
        let text: String = row.get(i).map_err(backend)?;
        parse_time(&text).map_err(|e| corrupt(&id, what, e))
    };
    let agent: String = row.get(2).map_err(backend)?;
    let status: String = row.get(4).map_err(backend)?;
    let result: Option<String> = row.get(10).map_err(backend)?;
    Ok(ToolTaskRecord {
        owner: row.get(1).map_err(backend)?,
        agent: (!agent.is_empty()).then_some(agent),
        tool: row.get(3).map_err(backend)?,
        status: ToolTaskStatus::parse(&status).ok_or_else(|| corrupt(&id, "status", &status))?,
        status_message: row.get(5).map_err(backend)?,
        created_at: time(6, "created_at")?,
        updated_at: time(7, "updated_at")?,
        ttl_ms: row.get(8).map_err(backend)?,
        expires_at: time(9, "expires_at")?,
        result: result
            .map(|text| serde_json::from_str(&text).map_err(|e| corrupt(&id, "result", e)))
            .transpose()?,
        instance: row.get(11).map_err(backend)?,
        id,
    })
}

fn insert_task(
    conn: &mut Connection,
    task: &ToolTaskRecord,
    max_running: u32,
) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let running: i64 = tx
        .query_row(
            &format!(
                "SELECT count(*) FROM tool_tasks WHERE owner = ?1 AND status IN {RUNNING} \
                 AND expires_at > ?2"
            ),
            params![task.owner, timestamp(&task.created_at)],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if running >= i64::from(max_running) {
        return Ok(false);
    }
    tx.execute(
        &format!(
            "INSERT INTO tool_tasks ({COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
        ),
        params![
            task.id,
            task.owner,
            task.agent.as_deref().unwrap_or(""),
            task.tool,
            task.status.as_str(),
            task.status_message,
            timestamp(&task.created_at),
            timestamp(&task.updated_at),
            task.ttl_ms,
            timestamp(&task.expires_at),
            task.result.as_ref().map(json_text),
            task.instance,
        ],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(true)
}

fn get_task(
    conn: &Connection,
    owner: &str,
    agent: Option<&str>,
    id: &str,
    now: &DateTime<Utc>,
) -> Result<Option<ToolTaskRecord>, StoreError> {
    conn.query_row(
        &format!(
            "SELECT {COLUMNS} FROM tool_tasks \
             WHERE id = ?1 AND owner = ?2 AND agent = ?3 AND expires_at > ?4"
        ),
        params![id, owner, agent.unwrap_or(""), timestamp(now)],
        |row| Ok(task_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

fn list_tasks(
    conn: &Connection,
    owner: &str,
    agent: Option<&str>,
    now: &DateTime<Utc>,
    limit: u32,
    offset: u32,
) -> Result<Vec<ToolTaskRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {COLUMNS} FROM tool_tasks \
             WHERE owner = ?1 AND agent = ?2 AND expires_at > ?3 \
             ORDER BY created_at DESC, id DESC LIMIT ?4 OFFSET ?5"
        ))
        .map_err(backend)?;
    let mut rows = stmt
        .query(params![
            owner,
            agent.unwrap_or(""),
            timestamp(now),
            limit,
            offset
        ])
        .map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(task_from_row(row)?);
    }
    Ok(out)
}

fn task_by_id(conn: &Connection, id: &str) -> Result<Option<ToolTaskRecord>, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM tool_tasks WHERE id = ?1"),
        [id],
        |row| Ok(task_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

fn update_task(
    conn: &mut Connection,
    id: &str,
    status: ToolTaskStatus,
    message: Option<&str>,
    result: Option<&Value>,
    now: &DateTime<Utc>,
) -> Result<Option<ToolTaskRecord>, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let n = tx
        .execute(
            &format!(
                "UPDATE tool_tasks SET status = ?2, status_message = ?3, result = ?4, \
                 updated_at = ?5 WHERE id = ?1 AND status IN {RUNNING}"
            ),
            params![
                id,
                status.as_str(),
                message,
                result.map(json_text),
                timestamp(now)
            ],
        )
        .map_err(backend)?;
    if n == 0 {
        return Ok(None);
    }
    let task = task_by_id(&tx, id)?;
    tx.commit().map_err(backend)?;
    Ok(task)
}

fn cancel_task(
    conn: &mut Connection,
    owner: &str,
    agent: Option<&str>,
    id: &str,
    message: &str,
    now: &DateTime<Utc>,
) -> Result<Option<ToolTaskRecord>, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let Some(task) = get_task(&tx, owner, agent, id, now)? else {
        return Ok(None);
    };
    if task.status.is_terminal() {
        return Ok(Some(task));
    }
    tx.execute(
        &format!(
            "UPDATE tool_tasks SET status = 'cancelled', status_message = ?2, updated_at = ?3 \
             WHERE id = ?1 AND status IN {RUNNING}"
        ),
        params![id, message, timestamp(now)],
    )
    .map_err(backend)?;
    let task = task_by_id(&tx, id)?;
    tx.commit().map_err(backend)?;
    Ok(task)
}

fn ended_tasks(conn: &Connection, ids: &[String]) -> Result<Vec<String>, StoreError> {
    let mut running = conn
        .prepare(&format!(
            "SELECT 1 FROM tool_tasks WHERE id = ?1 AND status IN {RUNNING}"
        ))
        .map_err(backend)?;
    let mut ended = Vec::new();
    for id in ids {
        if !running.exists([id]).map_err(backend)? {
            ended.push(id.clone());
        }
    }
    Ok(ended)
}

fn fail_instance_tasks(
    conn: &Connection,
    instance: &str,
    message: &str,
    now: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    let n = conn
        .execute(
            &format!(
                "UPDATE tool_tasks SET status = 'failed', status_message = ?2, updated_at = ?3 \
                 WHERE instance = ?1 AND status IN {RUNNING}"
            ),
            params![instance, message, timestamp(now)],
        )
        .map_err(backend)?;
    Ok(n as u64)
}

fn sweep_tasks(conn: &Connection, now: &DateTime<Utc>) -> Result<u64, StoreError> {
    let n = conn
        .execute(
            "DELETE FROM tool_tasks WHERE expires_at <= ?1",
            [timestamp(now)],
        )
        .map_err(backend)?;
    Ok(n as u64)
}
