//! Agents Toolsmith runs, on SQLite (`agents`, `agent_versions`, `agent_runs`,
//! `agent_run_steps`): one writer connection, so the revision check and the concurrent-run cap
//! inside a write's transaction are exact.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use toolsmith_core::agent::{
    AgentDefinition, AgentInsert, AgentRecord, AgentRunRecord, AgentRunStatus, AgentRunStep,
    AgentUpdate, AgentUsageQuery, AgentUsageRow, AgentVersionRecord, RunAdmission,
};

use super::rows::{backend, json_text, parse_time, timestamp};
use crate::StoreError;
use crate::agent_rows::{LAPSED_AT_ONCE, RUNNING, RunDocument, corrupt};

store_on_connections! {
    impl AgentStore {
        write fn insert_agent_within(agent: &AgentRecord, max_per_owner: u32) -> AgentInsert
            = insert_agent(&agent, max_per_owner);
        write fn update_agent(agent: &AgentRecord) -> AgentUpdate = update_agent(&agent);
        read fn get_agent(owner: &str, id_or_name: &str) -> Option<AgentRecord>
            = get_agent(&owner, &id_or_name);
        read fn list_agents(owner: &str) -> Vec<AgentRecord> = list_agents(&owner);
        write fn delete_agent(owner: &str, id: &str, revision: Option<i64>) -> bool
            = delete_agent(&owner, &id, revision);
        read fn agent_versions(owner: &str, id: &str) -> Vec<AgentVersionRecord>
            = agent_versions(&owner, &id);
        write fn insert_agent_run_within(
            run: &AgentRunRecord, max_running: u32, max_per_owner: u32
        ) -> RunAdmission
            = insert_run(&run, max_running, max_per_owner);
        write fn update_agent_run(run: &AgentRunRecord) -> bool = update_run(&run);
        write fn renew_agent_run_lease(id: &str, instance: &str, until: DateTime<Utc>) -> bool
            = renew_lease(&id, &instance, &until);
        read fn lapsed_agent_runs(now: DateTime<Utc>) -> Vec<AgentRunRecord> = lapsed_runs(&now);
        write fn end_lapsed_agent_run(
            run: &AgentRunRecord, step: &AgentRunStep, now: DateTime<Utc>
        ) -> bool
            = end_lapsed_run(&run, &step, &now);
        read fn get_agent_run(
            owner: &str, caller_agent: Option<&str>, id: &str
        ) -> Option<AgentRunRecord>
            = get_run(&owner, caller_agent.as_deref(), &id);
        read fn agent_run_status(id: &str) -> Option<AgentRunStatus> = run_status(&id);
        read fn list_agent_runs(
            owner: &str, caller_agent: Option<&str>, agent_id: Option<&str>, limit: u32
        ) -> Vec<AgentRunRecord>
            = list_runs(&owner, caller_agent.as_deref(), agent_id.as_deref(), limit);
        write fn cancel_agent_run(
            owner: &str, caller_agent: Option<&str>, id: &str, message: &str, now: DateTime<Utc>
        ) -> Option<AgentRunRecord>
            = cancel_run(&owner, caller_agent.as_deref(), &id, &message, &now);
        write fn add_agent_run_step(step: &AgentRunStep) -> () = add_step(&step);
        read fn agent_run_steps(run_id: &str) -> Vec<AgentRunStep> = run_steps(&run_id);
        read fn agent_usage(query: &AgentUsageQuery) -> Vec<AgentUsageRow> = usage(&query);
    }
}

const AGENT_COLUMNS: &str = "id, owner, name, revision, definition, created_at, updated_at";
const RUN_COLUMNS: &str = "id, owner, caller_agent, agent_id, status, document, created_at, \
                           updated_at, instance, lease_until";

fn time(row: &Row<'_>, i: usize, table: &str, id: &str) -> Result<DateTime<Utc>, StoreError> {
    let text: String = row.get(i).map_err(backend)?;
    parse_time(&text).map_err(|e| corrupt(table, id, "time", e))
}

fn definition(text: &str, table: &str, id: &str) -> Result<AgentDefinition, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(table, id, "definition", e))
}

fn agent_from_row(row: &Row<'_>) -> Result<AgentRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let text: String = row.get(4).map_err(backend)?;
    Ok(AgentRecord {
        owner: row.get(1).map_err(backend)?,
        name: row.get(2).map_err(backend)?,
        revision: row.get(3).map_err(backend)?,
        definition: definition(&text, "agents", &id)?,
        created_at: time(row, 5, "agents", &id)?,
        updated_at: time(row, 6, "agents", &id)?,
        id,
    })
}

fn run_from_row(row: &Row<'_>) -> Result<AgentRunRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let caller: String = row.get(2).map_err(backend)?;
    let status: String = row.get(4).map_err(backend)?;
    let document: String = row.get(5).map_err(backend)?;
    let document: RunDocument =
        serde_json::from_str(&document).map_err(|e| corrupt("agent_runs", &id, "document", e))?;
    Ok(document.into_record(
        id.clone(),
        row.get(1).map_err(backend)?,
        (!caller.is_empty()).then_some(caller),
        row.get(3).map_err(backend)?,
        AgentRunStatus::parse(&status)
            .ok_or_else(|| corrupt("agent_runs", &id, "status", &status))?,
        time(row, 6, "agent_runs", &id)?,
        time(row, 7, "agent_runs", &id)?,
        row.get(8).map_err(backend)?,
        row.get::<_, Option<String>>(9)
            .map_err(backend)?
            .map(|text| parse_time(&text).map_err(|e| corrupt("agent_runs", &id, "lease", e)))
            .transpose()?,
    ))
}

fn name_taken(tx: &Connection, owner: &str, name: &str, id: &str) -> Result<bool, StoreError> {
    tx.prepare("SELECT 1 FROM agents WHERE owner = ?1 AND name = ?2 AND id <> ?3")
        .and_then(|mut stmt| stmt.exists(params![owner, name, id]))
        .map_err(backend)
}

fn insert_version(tx: &Connection, agent: &AgentRecord) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO agent_versions (agent_id, revision, definition, created_at) \
         VALUES (?1, ?2, ?3, ?4)",
        params![
            agent.id,
            agent.revision,
            json_text(&agent.definition),
            timestamp(&agent.updated_at)
        ],
    )
    .map_err(backend)?;
    Ok(())
}

/// How many rows `sql` (a `count(*)` of one parameter) counts for `key`.
fn count(tx: &Connection, sql: &str, key: &str) -> Result<i64, StoreError> {
    tx.query_row(sql, [key], |row| row.get(0)).map_err(backend)
}

fn insert_agent(
    conn: &mut Connection,
    agent: &AgentRecord,
    max_per_owner: u32,
) -> Result<AgentInsert, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    if name_taken(&tx, &agent.owner, &agent.name, &agent.id)? {
        return Ok(AgentInsert::NameTaken);
    }
    let owned = count(
        &tx,
        "SELECT count(*) FROM agents WHERE owner = ?1",
        &agent.owner,
    )?;
    if owned >= i64::from(max_per_owner) {
        return Ok(AgentInsert::AtCap);
    }
    tx.execute(
        &format!("INSERT INTO agents ({AGENT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
        params![
            agent.id,
            agent.owner,
            agent.name,
            agent.revision,
            json_text(&agent.definition),
            timestamp(&agent.created_at),
            timestamp(&agent.updated_at),
        ],
    )
    .map_err(backend)?;
    insert_version(&tx, agent)?;
    tx.commit().map_err(backend)?;
    Ok(AgentInsert::Inserted)
}

fn update_agent(conn: &mut Connection, agent: &AgentRecord) -> Result<AgentUpdate, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let stored: Option<i64> = tx
        .query_row(
            "SELECT revision FROM agents WHERE id = ?1 AND owner = ?2",
            params![agent.id, agent.owner],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    let Some(actual) = stored else {
        return Ok(AgentUpdate::NotFound);
    };
    if actual + 1 != agent.revision {
        return Ok(AgentUpdate::Conflict { actual });
    }
    if name_taken(&tx, &agent.owner, &agent.name, &agent.id)? {
        return Ok(AgentUpdate::NameTaken);
    }
    tx.execute(
        "UPDATE agents SET name = ?3, revision = ?4, definition = ?5, updated_at = ?6 \
         WHERE id = ?1 AND owner = ?2",
        params![
            agent.id,
            agent.owner,
            agent.name,
            agent.revision,
            json_text(&agent.definition),
            timestamp(&agent.updated_at),
        ],
    )
    .map_err(backend)?;
    insert_version(&tx, agent)?;
    tx.commit().map_err(backend)?;
    Ok(AgentUpdate::Updated)
}

fn get_agent(
    conn: &Connection,
    owner: &str,
    id_or_name: &str,
) -> Result<Option<AgentRecord>, StoreError> {
    conn.query_row(
        &format!(
            "SELECT {AGENT_COLUMNS} FROM agents WHERE owner = ?1 AND (id = ?2 OR name = ?2) \
             ORDER BY id = ?2 DESC LIMIT 1"
        ),
        params![owner, id_or_name],
        |row| Ok(agent_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

fn list_agents(conn: &Connection, owner: &str) -> Result<Vec<AgentRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {AGENT_COLUMNS} FROM agents WHERE owner = ?1 ORDER BY name, id"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query([owner]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(agent_from_row(row)?);
    }
    Ok(out)
}

fn delete_agent(
    conn: &mut Connection,
    owner: &str,
    id: &str,
    revision: Option<i64>,
) -> Result<bool, StoreError> {
    let tx = conn.transaction().map_err(backend)?;
    let n = tx
        .execute(
            "DELETE FROM agents WHERE id = ?1 AND owner = ?2 AND (?3 IS NULL OR revision = ?3)",
            params![id, owner, revision],
        )
        .map_err(backend)?;
    if n > 0 {
        tx.execute("DELETE FROM agent_versions WHERE agent_id = ?1", [id])
            .map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    Ok(n > 0)
}

fn agent_versions(
    conn: &Connection,
    owner: &str,
    id: &str,
) -> Result<Vec<AgentVersionRecord>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT v.agent_id, v.revision, v.definition, v.created_at FROM agent_versions v \
             JOIN agents a ON a.id = v.agent_id WHERE v.agent_id = ?1 AND a.owner = ?2 \
             ORDER BY v.revision",
        )
        .map_err(backend)?;
    let mut rows = stmt.query(params![id, owner]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        let text: String = row.get(2).map_err(backend)?;
        out.push(AgentVersionRecord {
            agent_id: row.get(0).map_err(backend)?,
            revision: row.get(1).map_err(backend)?,
            definition: definition(&text, "agent_versions", id)?,
            created_at: time(row, 3, "agent_versions", id)?,
        });
    }
    Ok(out)
}

fn insert_run(
    conn: &mut Connection,
    run: &AgentRunRecord,
    max_running: u32,
    max_per_owner: u32,
) -> Result<RunAdmission, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let running = count(
        &tx,
        &format!("SELECT count(*) FROM agent_runs WHERE agent_id = ?1 AND status IN {RUNNING}"),
        &run.agent_id,
    )?;
    if running >= i64::from(max_running) {
        return Ok(RunAdmission::AgentAtCap);
    }
    let owned = count(
        &tx,
        &format!("SELECT count(*) FROM agent_runs WHERE owner = ?1 AND status IN {RUNNING}"),
        &run.owner,
    )?;
    if owned >= i64::from(max_per_owner) {
        return Ok(RunAdmission::OwnerAtCap);
    }
    tx.execute(
        &format!(
            "INSERT INTO agent_runs ({RUN_COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
        ),
        params![
            run.id,
            run.owner,
            run.caller_agent.as_deref().unwrap_or(""),
            run.agent_id,
            run.status.as_str(),
            json_text(&RunDocument::of(run)),
            timestamp(&run.created_at),
            timestamp(&run.updated_at),
            run.instance,
            run.lease_until.as_ref().map(timestamp),
        ],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(RunAdmission::Started)
}

fn update_run(conn: &Connection, run: &AgentRunRecord) -> Result<bool, StoreError> {
    let n = conn
        .execute(
            &format!(
                "UPDATE agent_runs SET status = ?2, document = ?3, updated_at = ?4 \
                 WHERE id = ?1 AND status IN {RUNNING}"
            ),
            params![
                run.id,
                run.status.as_str(),
                json_text(&RunDocument::of(run)),
                timestamp(&run.updated_at),
            ],
        )
        .map_err(backend)?;
    Ok(n > 0)
}

fn renew_lease(
    conn: &Connection,
    id: &str,
    instance: &str,
    until: &DateTime<Utc>,
) -> Result<bool, StoreError> {
    let n = conn
        .execute(
            &format!(
                "UPDATE agent_runs SET lease_until = ?3 \
                 WHERE id = ?1 AND instance = ?2 AND status IN {RUNNING}"
            ),
            params![id, instance, timestamp(until)],
        )
        .map_err(backend)?;
    Ok(n > 0)
}

fn lapsed_runs(conn: &Connection, now: &DateTime<Utc>) -> Result<Vec<AgentRunRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM agent_runs \
             WHERE status IN {RUNNING} AND lease_until < ?1 \
             ORDER BY lease_until LIMIT {LAPSED_AT_ONCE}"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query([timestamp(now)]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(run_from_row(row)?);
    }
    Ok(out)
}

fn end_lapsed_run(
    conn: &mut Connection,
    run: &AgentRunRecord,
    step: &AgentRunStep,
    now: &DateTime<Utc>,
) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let n = tx
        .execute(
            &format!(
                "UPDATE agent_runs SET status = ?2, document = ?3, updated_at = ?4 \
                 WHERE id = ?1 AND status IN {RUNNING} AND lease_until < ?5"
            ),
            params![
                run.id,
                run.status.as_str(),
                json_text(&RunDocument::of(run)),
                timestamp(&run.updated_at),
                timestamp(now),
            ],
        )
        .map_err(backend)?;
    if n == 0 {
        return Ok(false);
    }
    add_step(&tx, step)?;
    tx.commit().map_err(backend)?;
    Ok(true)
}

fn get_run(
    conn: &Connection,
    owner: &str,
    caller_agent: Option<&str>,
    id: &str,
) -> Result<Option<AgentRunRecord>, StoreError> {
    conn.query_row(
        &format!(
            "SELECT {RUN_COLUMNS} FROM agent_runs \
             WHERE id = ?1 AND owner = ?2 AND caller_agent = ?3"
        ),
        params![id, owner, caller_agent.unwrap_or("")],
        |row| Ok(run_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

fn run_status(conn: &Connection, id: &str) -> Result<Option<AgentRunStatus>, StoreError> {
    let status: Option<String> = conn
        .query_row("SELECT status FROM agent_runs WHERE id = ?1", [id], |row| {
            row.get(0)
        })
        .optional()
        .map_err(backend)?;
    status
        .map(|s| AgentRunStatus::parse(&s).ok_or_else(|| corrupt("agent_runs", id, "status", &s)))
        .transpose()
}

fn list_runs(
    conn: &Connection,
    owner: &str,
    caller_agent: Option<&str>,
    agent_id: Option<&str>,
    limit: u32,
) -> Result<Vec<AgentRunRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {RUN_COLUMNS} FROM agent_runs \
             WHERE owner = ?1 AND caller_agent = ?2 AND (?3 IS NULL OR agent_id = ?3) \
             ORDER BY created_at DESC, id DESC LIMIT ?4"
        ))
        .map_err(backend)?;
    let mut rows = stmt
        .query(params![owner, caller_agent.unwrap_or(""), agent_id, limit])
        .map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(run_from_row(row)?);
    }
    Ok(out)
}

fn cancel_run(
    conn: &mut Connection,
    owner: &str,
    caller_agent: Option<&str>,
    id: &str,
    message: &str,
    now: &DateTime<Utc>,
) -> Result<Option<AgentRunRecord>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let Some(mut run) = get_run(&tx, owner, caller_agent, id)? else {
        return Ok(None);
    };
    if run.status.is_terminal() {
        return Ok(Some(run));
    }
    run.status = AgentRunStatus::Cancelled;
    run.error = Some(message.to_owned());
    run.updated_at = *now;
    update_run(&tx, &run)?;
    tx.commit().map_err(backend)?;
    Ok(Some(run))
}

fn add_step(conn: &Connection, step: &AgentRunStep) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO agent_run_steps (run_id, seq, kind, detail, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            step.run_id,
            step.seq,
            step.kind,
            json_text(&step.detail),
            timestamp(&step.at)
        ],
    )
    .map_err(backend)?;
    Ok(())
}

fn run_steps(conn: &Connection, run_id: &str) -> Result<Vec<AgentRunStep>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT run_id, seq, kind, detail, at FROM agent_run_steps WHERE run_id = ?1 \
             ORDER BY seq",
        )
        .map_err(backend)?;
    let mut rows = stmt.query([run_id]).map_err(backend)?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        let detail: String = row.get(3).map_err(backend)?;
        out.push(AgentRunStep {
            run_id: row.get(0).map_err(backend)?,
            seq: row.get(1).map_err(backend)?,
            kind: row.get(2).map_err(backend)?,
            detail: serde_json::from_str(&detail)
                .map_err(|e| corrupt("agent_run_steps", run_id, "detail", e))?,
            at: time(row, 4, "agent_run_steps", run_id)?,
        });
    }
    Ok(out)
}

fn usage(conn: &Connection, query: &AgentUsageQuery) -> Result<Vec<AgentUsageRow>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT agent_id, count(*), \
                 coalesce(sum(json_extract(document, '$.usage.inputTokens')), 0), \
                 coalesce(sum(json_extract(document, '$.usage.outputTokens')), 0), \
                 coalesce(sum(json_extract(document, '$.usage.modelCalls')), 0), \
                 coalesce(sum(json_extract(document, '$.usage.toolCalls')), 0), \
                 sum(json_extract(document, '$.usage.cost')), \
                 count(json_extract(document, '$.usage.cost')) \
             FROM agent_runs \
             WHERE owner = ?1 AND (?2 IS NULL OR caller_agent = ?2) \
                 AND (?3 IS NULL OR created_at >= ?3) \
             GROUP BY agent_id ORDER BY agent_id",
        )
        .map_err(backend)?;
    let since = query.since.as_ref().map(timestamp);
    let mut rows = stmt
        .query(params![query.owner, query.caller_agent, since])
        .map_err(backend)?;
    let count = |row: &Row<'_>, i: usize| -> Result<u64, StoreError> {
        let n: i64 = row.get(i).map_err(backend)?;
        Ok(u64::try_from(n).unwrap_or(0))
    };
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        out.push(AgentUsageRow {
            agent_id: row.get(0).map_err(backend)?,
            runs: count(row, 1)?,
            input_tokens: count(row, 2)?,
            output_tokens: count(row, 3)?,
            model_calls: count(row, 4)?,
            tool_calls: count(row, 5)?,
            cost: row.get(6).map_err(backend)?,
            priced_runs: count(row, 7)?,
        });
    }
    Ok(out)
}
