//! The queries behind execution analytics and retention: samples of recent executions, and
//! pruning of old ones. Aggregation happens above the store (in the service), so every backend
//! answers the same two plain questions and the figures cannot drift between backends.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, Row, params};

use super::rows::{backend, parse_time, timestamp};
use crate::{ExecutionSample, ServerExecutionSample, StoreError};

pub(crate) fn execution_samples(
    conn: &Connection,
    owner: &str,
    tool_id: Option<&str>,
    since: &DateTime<Utc>,
    limit: u32,
) -> Result<Vec<ExecutionSample>, StoreError> {
    // Both shapes use the (owner, tool_id, created_at) or (owner, created_at) index.
    let filter = match tool_id {
        Some(_) => "owner = ?1 AND created_at >= ?2 AND tool_id = ?4",
        None => "owner = ?1 AND created_at >= ?2",
    };
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT tool_id, tool_name, status, error_kind, duration_ms, created_at \
             FROM tool_executions WHERE {filter} ORDER BY created_at DESC LIMIT ?3"
        ))
        .map_err(backend)?;
    let since = timestamp(since);
    let limit = i64::from(limit);
    let mut rows = match tool_id {
        Some(tool_id) => stmt.query(params![owner, since, limit, tool_id]),
        None => stmt.query(params![owner, since, limit]),
    }
    .map_err(backend)?;
    let mut samples = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        samples.push(sample_of(row)?);
    }
    Ok(samples)
}

/// The sample in a row's first six columns (`tool_id, tool_name, status, error_kind,
/// duration_ms, created_at`).
fn sample_of(row: &Row<'_>) -> Result<ExecutionSample, StoreError> {
    let status: String = row.get(2).map_err(backend)?;
    let created_at: String = row.get(5).map_err(backend)?;
    Ok(ExecutionSample {
        tool_id: row.get(0).map_err(backend)?,
        tool_name: row.get(1).map_err(backend)?,
        status: status.parse().map_err(corrupt)?,
        error_kind: row.get(3).map_err(backend)?,
        duration_ms: row.get(4).map_err(backend)?,
        created_at: parse_time(&created_at).map_err(corrupt)?,
    })
}

/// Every owner's executions since `?1`, newest first, at most `?2`: read in the order of the
/// `created_at` index (`idx_tool_executions_created`), never sorted (100,000 rows sorted in a temporary B-tree
/// took most of the server-wide report's time).
const SERVER_SAMPLES: &str = "SELECT tool_id, tool_name, status, error_kind, duration_ms, \
     created_at, owner, agent_id FROM tool_executions WHERE created_at >= ?1 \
     ORDER BY created_at DESC LIMIT ?2";

pub(crate) fn server_execution_samples(
    conn: &Connection,
    since: &DateTime<Utc>,
    limit: u32,
) -> Result<Vec<ServerExecutionSample>, StoreError> {
    let mut stmt = conn.prepare_cached(SERVER_SAMPLES).map_err(backend)?;
    let mut rows = stmt
        .query(params![timestamp(since), i64::from(limit)])
        .map_err(backend)?;
    let mut samples = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        samples.push(ServerExecutionSample {
            sample: sample_of(row)?,
            owner: row.get(6).map_err(backend)?,
            agent_id: row.get(7).map_err(backend)?,
        });
    }
    Ok(samples)
}

pub(crate) fn prune_executions(
    conn: &Connection,
    before: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    let removed = conn
        .execute(
            "DELETE FROM tool_executions WHERE created_at < ?1",
            params![timestamp(before)],
        )
        .map_err(backend)?;
    Ok(removed as u64)
}

fn corrupt(reason: String) -> StoreError {
    StoreError::Corrupt {
        path: String::new(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SQLite's plan of `sql`, one line per step.
    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let unbound = std::iter::repeat_n(rusqlite::types::Null, stmt.parameter_count());
        let steps: Vec<String> = stmt
            .query_map(rusqlite::params_from_iter(unbound), |row| {
                row.get::<_, String>(3)
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        steps.join("\n")
    }

    /// The analytics queries read an index in the order they answer in: no table scan and no
    /// sort of the period's rows (with 100,000 executions the sort was most of the server-wide
    /// report's time).
    #[tokio::test]
    async fn the_analytics_queries_read_an_index_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("toolsmith.db");
        drop(crate::SqliteStore::open(&path).await.unwrap());
        let conn = Connection::open(&path).unwrap();
        let owner_samples = "SELECT tool_id, tool_name, status, error_kind, duration_ms, created_at \
             FROM tool_executions WHERE owner = ?1 AND created_at >= ?2 ORDER BY created_at DESC LIMIT ?3";
        for sql in [SERVER_SAMPLES, owner_samples] {
            let plan = plan(&conn, sql);
            assert!(plan.contains("USING INDEX"), "{sql}:\n{plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{sql}:\n{plan}");
            assert!(!plan.contains("SCAN tool_executions"), "{sql}:\n{plan}");
        }
    }
}
