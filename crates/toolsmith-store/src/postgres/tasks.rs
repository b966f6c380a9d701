//! Tool tasks in PostgreSQL (`tool_tasks`). The running-task cap is counted in the insert's
//! transaction under a per-owner advisory lock, so instances cannot race past it; every status
//! change is a conditional `UPDATE … WHERE status IN ('working', 'input_required')`, so a task
//! cancelled on one instance stays cancelled when the instance that runs it finishes. A result
//! is JSON text (`TEXT`), since JSONB refuses the NUL character a tool's result may hold.

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use serde_json::Value;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::tool_task::{ToolTaskRecord, ToolTaskStatus};

use super::errors::pg;
use super::rows::{col, corrupt, micros};
use crate::StoreError;

store_on_pool! {
    impl TaskStore |client, this_instance| {
        fn insert_tool_task(task: &ToolTaskRecord, max_running: u32) -> bool
            = insert_task(&mut client, task, max_running);
        fn get_tool_task(
            owner: &str, agent: Option<&str>, id: &str, now: DateTime<Utc>
        ) -> Option<ToolTaskRecord>
            = get_task(&**client, owner, agent, id, now);
        fn list_tool_tasks(
            owner: &str, agent: Option<&str>, now: DateTime<Utc>, limit: u32, offset: u32
        ) -> Vec<ToolTaskRecord>
            = list_tasks(&**client, owner, agent, now, limit, offset);
        fn update_tool_task(
            id: &str,
            status: ToolTaskStatus,
            message: Option<&str>,
            result: Option<&Value>,
            now: DateTime<Utc>,
        ) -> Option<ToolTaskRecord>
            = update_task(&**client, id, status, message, result, now);
        fn cancel_tool_task(
            owner: &str, agent: Option<&str>, id: &str, message: &str, now: DateTime<Utc>
        ) -> Option<ToolTaskRecord>
            = cancel_task(&mut client, owner, agent, id, message, now);
        fn ended_tool_tasks(ids: &[String]) -> Vec<String> = ended_tasks(&**client, ids);
        fn fail_instance_tool_tasks(instance: &str, message: &str, now: DateTime<Utc>) -> u64
            = fail_instance_tasks(&**client, instance, message, now);
        fn sweep_tool_tasks(now: DateTime<Utc>) -> u64 = sweep_tasks(&**client, now);
    }
}

/// A result as JSON text (serializing a JSON value cannot fail).
fn json_text(value: &Value) -> String {
    value.to_string()
}

const COLUMNS: &str = "id, owner, agent, tool, status, status_message, created_at, updated_at, \
                       ttl_ms, expires_at, result, instance";

/// The statuses of a task that has not ended, as an SQL list.
const RUNNING: &str = "('working', 'input_required')";

fn task_from_row(row: &Row) -> Result<ToolTaskRecord, StoreError> {
    let id: String = col(row, "id")?;
    let agent: String = col(row, "agent")?;
    let status: String = col(row, "status")?;
    Ok(ToolTaskRecord {
        owner: col(row, "owner")?,
        agent: (!agent.is_empty()).then_some(agent),
        tool: col(row, "tool")?,
        status: ToolTaskStatus::parse(&status)
            .ok_or_else(|| corrupt("tool_tasks", &id, "status", &status))?,
        status_message: col(row, "status_message")?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        ttl_ms: col(row, "ttl_ms")?,
        expires_at: col(row, "expires_at")?,
        result: col::<Option<String>>(row, "result")?
            .map(|text| {
                serde_json::from_str(&text).map_err(|e| corrupt("tool_tasks", &id, "result", e))
            })
            .transpose()?,
        instance: col(row, "instance")?,
        id,
    })
}

async fn insert_task(
    client: &mut Client,
    task: &ToolTaskRecord,
    max_running: u32,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    super::lock(&*tx, &format!("toolsmith-tool-tasks:{}", task.owner)).await?;
    let running: i64 = col(
        &tx.query_one(
            &format!(
                "SELECT count(*) AS n FROM tool_tasks WHERE owner = $1 AND status IN {RUNNING} \
                 AND expires_at > $2"
            ),
            &[&task.owner, &micros(task.created_at)],
        )
        .await
        .map_err(pg)?,
        "n",
    )?;
    if running >= i64::from(max_running) {
        return Ok(false);
    }
    tx.execute(
        &format!(
            "INSERT INTO tool_tasks ({COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ),
        &[
            &task.id,
            &task.owner,
            &task.agent.as_deref().unwrap_or(""),
            &task.tool,
            &task.status.as_str(),
            &task.status_message,
            &micros(task.created_at),
            &micros(task.updated_at),
            &task.ttl_ms,
            &micros(task.expires_at),
            &task.result.as_ref().map(json_text),
            &task.instance,
        ],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(true)
}

async fn get_task(
    client: &impl GenericClient,
    owner: &str,
    agent: Option<&str>,
    id: &str,
    now: DateTime<Utc>,
) -> Result<Option<ToolTaskRecord>, StoreError> {
    client
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM tool_tasks \
                 WHERE id = $1 AND owner = $2 AND agent = $3 AND expires_at > $4"
            ),
            &[&id, &owner, &agent.unwrap_or(""), &micros(now)],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(task_from_row)
        .transpose()
}

async fn list_tasks(
    client: &impl GenericClient,
    owner: &str,
    agent: Option<&str>,
    now: DateTime<Utc>,
    limit: u32,
    offset: u32,
) -> Result<Vec<ToolTaskRecord>, StoreError> {
    client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM tool_tasks \
                 WHERE owner = $1 AND agent = $2 AND expires_at > $3 \
                 ORDER BY created_at DESC, id COLLATE \"C\" DESC LIMIT $4 OFFSET $5"
            ),
            &[
                &owner,
                &agent.unwrap_or(""),
                &micros(now),
                &i64::from(limit),
                &i64::from(offset),
            ],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(task_from_row)
        .collect()
}

async fn update_task(
    client: &impl GenericClient,
    id: &str,
    status: ToolTaskStatus,
    message: Option<&str>,
    result: Option<&Value>,
    now: DateTime<Utc>,
) -> Result<Option<ToolTaskRecord>, StoreError> {
    client
        .query_opt(
            &format!(
                "UPDATE tool_tasks SET status = $2, status_message = $3, result = $4, \
                 updated_at = $5 WHERE id = $1 AND status IN {RUNNING} RETURNING {COLUMNS}"
            ),
            &[
                &id,
                &status.as_str(),
                &message,
                &result.map(json_text),
                &micros(now),
            ],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(task_from_row)
        .transpose()
}

async fn cancel_task(
    client: &mut Client,
    owner: &str,
    agent: Option<&str>,
    id: &str,
    message: &str,
    now: DateTime<Utc>,
) -> Result<Option<ToolTaskRecord>, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let Some(row) = tx
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM tool_tasks \
                 WHERE id = $1 AND owner = $2 AND agent = $3 AND expires_at > $4 FOR UPDATE"
            ),
            &[&id, &owner, &agent.unwrap_or(""), &micros(now)],
        )
        .await
        .map_err(pg)?
    else {
        return Ok(None);
    };
    let task = task_from_row(&row)?;
    if task.status.is_terminal() {
        return Ok(Some(task));
    }
    let row = tx
        .query_one(
            &format!(
                "UPDATE tool_tasks SET status = 'cancelled', status_message = $2, \
                 updated_at = $3 WHERE id = $1 RETURNING {COLUMNS}"
            ),
            &[&id, &message, &micros(now)],
        )
        .await
        .map_err(pg)?;
    let task = task_from_row(&row)?;
    tx.commit().await.map_err(pg)?;
    Ok(Some(task))
}

async fn ended_tasks(
    client: &impl GenericClient,
    ids: &[String],
) -> Result<Vec<String>, StoreError> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let running: Vec<String> = client
        .query(
            &format!("SELECT id FROM tool_tasks WHERE id = ANY($1) AND status IN {RUNNING}"),
            &[&ids],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|row| col(row, "id"))
        .collect::<Result<_, _>>()?;
    Ok(ids
        .iter()
        .filter(|id| !running.contains(id))
        .cloned()
        .collect())
}

async fn fail_instance_tasks(
    client: &impl GenericClient,
    instance: &str,
    message: &str,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    client
        .execute(
            &format!(
                "UPDATE tool_tasks SET status = 'failed', status_message = $2, updated_at = $3 \
                 WHERE instance = $1 AND status IN {RUNNING}"
            ),
            &[&instance, &message, &micros(now)],
        )
        .await
        .map_err(pg)
}

async fn sweep_tasks(client: &impl GenericClient, now: DateTime<Utc>) -> Result<u64, StoreError> {
    client
        .execute(
            "DELETE FROM tool_tasks WHERE expires_at <= $1",
            &[&micros(now)],
        )
        .await
        .map_err(pg)
}
