//! Agents Toolsmith runs, in PostgreSQL (`agents`, `agent_versions`, `agent_runs`,
//! `agent_run_steps`). A definition's write takes a per-owner advisory lock (the name check and
//! the revision check read before they write, and the per-owner cap of definitions), a run's
//! insert a per-owner one (the concurrent-run caps of the agent and of its owner), so instances
//! cannot race past either; a run's update is conditional on its not
//! having ended, so a run cancelled on one instance stays cancelled. Documents are JSON text
//! (`TEXT`), since JSONB refuses the NUL character a tool's result may hold.

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::agent::{
    AgentDefinition, AgentInsert, AgentRecord, AgentRunRecord, AgentRunStatus, AgentRunStep,
    AgentUpdate, AgentUsageQuery, AgentUsageRow, AgentVersionRecord, RunAdmission,
};

use super::errors::pg;
use super::rows::{col, micros};
use crate::StoreError;
use crate::agent_rows::{LAPSED_AT_ONCE, RUNNING, RunDocument, corrupt};

store_on_pool! {
    impl AgentStore |client, this_instance| {
        fn insert_agent_within(agent: &AgentRecord, max_per_owner: u32) -> AgentInsert
            = insert_agent(&mut client, agent, max_per_owner);
        fn update_agent(agent: &AgentRecord) -> AgentUpdate = update_agent(&mut client, agent);
        fn get_agent(owner: &str, id_or_name: &str) -> Option<AgentRecord>
            = get_agent(&**client, owner, id_or_name);
        fn list_agents(owner: &str) -> Vec<AgentRecord> = list_agents(&**client, owner);
        fn delete_agent(owner: &str, id: &str, revision: Option<i64>) -> bool
            = delete_agent(&mut client, owner, id, revision);
        fn agent_versions(owner: &str, id: &str) -> Vec<AgentVersionRecord>
            = agent_versions(&**client, owner, id);
        fn insert_agent_run_within(
            run: &AgentRunRecord, max_running: u32, max_per_owner: u32
        ) -> RunAdmission
            = insert_run(&mut client, run, max_running, max_per_owner);
        fn update_agent_run(run: &AgentRunRecord) -> bool = update_run(&**client, run);
        fn renew_agent_run_lease(id: &str, instance: &str, until: DateTime<Utc>) -> bool
            = renew_lease(&**client, id, instance, until);
        fn lapsed_agent_runs(now: DateTime<Utc>) -> Vec<AgentRunRecord>
            = lapsed_runs(&**client, now);
        fn end_lapsed_agent_run(
            run: &AgentRunRecord, step: &AgentRunStep, now: DateTime<Utc>
        ) -> bool
            = end_lapsed_run(&mut client, run, step, now);
        fn get_agent_run(
            owner: &str, caller_agent: Option<&str>, id: &str
        ) -> Option<AgentRunRecord>
            = get_run(&**client, owner, caller_agent, id);
        fn agent_run_status(id: &str) -> Option<AgentRunStatus> = run_status(&**client, id);
        fn list_agent_runs(
            owner: &str, caller_agent: Option<&str>, agent_id: Option<&str>, limit: u32
        ) -> Vec<AgentRunRecord>
            = list_runs(&**client, owner, caller_agent, agent_id, limit);
        fn cancel_agent_run(
            owner: &str, caller_agent: Option<&str>, id: &str, message: &str, now: DateTime<Utc>
        ) -> Option<AgentRunRecord>
            = cancel_run(&mut client, owner, caller_agent, id, message, now);
        fn add_agent_run_step(step: &AgentRunStep) -> () = add_step(&**client, step);
        fn agent_run_steps(run_id: &str) -> Vec<AgentRunStep> = run_steps(&**client, run_id);
        fn agent_usage(query: &AgentUsageQuery) -> Vec<AgentUsageRow> = usage(&**client, query);
    }
}

const AGENT_COLUMNS: &str = "id, owner, name, revision, definition, created_at, updated_at";
const RUN_COLUMNS: &str = "id, owner, caller_agent, agent_id, status, document, created_at, \
                           updated_at, instance, lease_until";

/// A value as JSON text (serializing plain records cannot fail).
fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
}

fn definition(text: &str, table: &str, id: &str) -> Result<AgentDefinition, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(table, id, "definition", e))
}

fn agent_from_row(row: &Row) -> Result<AgentRecord, StoreError> {
    let id: String = col(row, "id")?;
    let text: String = col(row, "definition")?;
    Ok(AgentRecord {
        owner: col(row, "owner")?,
        name: col(row, "name")?,
        revision: col(row, "revision")?,
        definition: definition(&text, "agents", &id)?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        id,
    })
}

fn run_from_row(row: &Row) -> Result<AgentRunRecord, StoreError> {
    let id: String = col(row, "id")?;
    let caller: String = col(row, "caller_agent")?;
    let status: String = col(row, "status")?;
    let document: String = col(row, "document")?;
    let document: RunDocument =
        serde_json::from_str(&document).map_err(|e| corrupt("agent_runs", &id, "document", e))?;
    Ok(document.into_record(
        id.clone(),
        col(row, "owner")?,
        (!caller.is_empty()).then_some(caller),
        col(row, "agent_id")?,
        AgentRunStatus::parse(&status)
            .ok_or_else(|| corrupt("agent_runs", &id, "status", &status))?,
        col(row, "created_at")?,
        col(row, "updated_at")?,
        col(row, "instance")?,
        col(row, "lease_until")?,
    ))
}

async fn name_taken(
    tx: &impl GenericClient,
    owner: &str,
    name: &str,
    id: &str,
) -> Result<bool, StoreError> {
    Ok(tx
        .query_opt(
            "SELECT 1 FROM agents WHERE owner = $1 AND name = $2 AND id <> $3",
            &[&owner, &name, &id],
        )
        .await
        .map_err(pg)?
        .is_some())
}

async fn insert_version(tx: &impl GenericClient, agent: &AgentRecord) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO agent_versions (agent_id, revision, definition, created_at) \
         VALUES ($1, $2, $3, $4)",
        &[
            &agent.id,
            &agent.revision,
            &json_text(&agent.definition),
            &micros(agent.updated_at),
        ],
    )
    .await
    .map_err(pg)?;
    Ok(())
}

/// How many rows `sql` (a `count(*) AS n` of one parameter) counts for `key`.
async fn count(tx: &impl GenericClient, sql: &str, key: &str) -> Result<i64, StoreError> {
    col(&tx.query_one(sql, &[&key]).await.map_err(pg)?, "n")
}

async fn insert_agent(
    client: &mut Client,
    agent: &AgentRecord,
    max_per_owner: u32,
) -> Result<AgentInsert, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    super::lock(&*tx, &format!("toolsmith-agents:{}", agent.owner)).await?;
    if name_taken(&*tx, &agent.owner, &agent.name, &agent.id).await? {
        return Ok(AgentInsert::NameTaken);
    }
    let owned = count(
        &*tx,
        "SELECT count(*) AS n FROM agents WHERE owner = $1",
        &agent.owner,
    )
    .await?;
    if owned >= i64::from(max_per_owner) {
        return Ok(AgentInsert::AtCap);
    }
    tx.execute(
        &format!("INSERT INTO agents ({AGENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"),
        &[
            &agent.id,
            &agent.owner,
            &agent.name,
            &agent.revision,
            &json_text(&agent.definition),
            &micros(agent.created_at),
            &micros(agent.updated_at),
        ],
    )
    .await
    .map_err(pg)?;
    insert_version(&*tx, agent).await?;
    tx.commit().await.map_err(pg)?;
    Ok(AgentInsert::Inserted)
}

async fn update_agent(client: &mut Client, agent: &AgentRecord) -> Result<AgentUpdate, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    super::lock(&*tx, &format!("toolsmith-agents:{}", agent.owner)).await?;
    let stored = tx
        .query_opt(
            "SELECT revision FROM agents WHERE id = $1 AND owner = $2 FOR UPDATE",
            &[&agent.id, &agent.owner],
        )
        .await
        .map_err(pg)?;
    let Some(stored) = stored else {
        return Ok(AgentUpdate::NotFound);
    };
    let actual: i64 = col(&stored, "revision")?;
    if actual + 1 != agent.revision {
        return Ok(AgentUpdate::Conflict { actual });
    }
    if name_taken(&*tx, &agent.owner, &agent.name, &agent.id).await? {
        return Ok(AgentUpdate::NameTaken);
    }
    tx.execute(
        "UPDATE agents SET name = $3, revision = $4, definition = $5, updated_at = $6 \
         WHERE id = $1 AND owner = $2",
        &[
            &agent.id,
            &agent.owner,
            &agent.name,
            &agent.revision,
            &json_text(&agent.definition),
            &micros(agent.updated_at),
        ],
    )
    .await
    .map_err(pg)?;
    insert_version(&*tx, agent).await?;
    tx.commit().await.map_err(pg)?;
    Ok(AgentUpdate::Updated)
}

async fn get_agent(
    client: &impl GenericClient,
    owner: &str,
    id_or_name: &str,
) -> Result<Option<AgentRecord>, StoreError> {
    client
        .query_opt(
            &format!(
                "SELECT {AGENT_COLUMNS} FROM agents WHERE owner = $1 AND (id = $2 OR name = $2) \
                 ORDER BY id = $2 DESC LIMIT 1"
            ),
            &[&owner, &id_or_name],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(agent_from_row)
        .transpose()
}

async fn list_agents(
    client: &impl GenericClient,
    owner: &str,
) -> Result<Vec<AgentRecord>, StoreError> {
    client
        .query(
            &format!(
                "SELECT {AGENT_COLUMNS} FROM agents WHERE owner = $1 \
                 ORDER BY name COLLATE \"C\", id COLLATE \"C\""
            ),
            &[&owner],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(agent_from_row)
        .collect()
}

async fn delete_agent(
    client: &mut Client,
    owner: &str,
    id: &str,
    revision: Option<i64>,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let n = tx
        .execute(
            "DELETE FROM agents WHERE id = $1 AND owner = $2 \
             AND ($3::BIGINT IS NULL OR revision = $3)",
            &[&id, &owner, &revision],
        )
        .await
        .map_err(pg)?;
    if n > 0 {
        tx.execute("DELETE FROM agent_versions WHERE agent_id = $1", &[&id])
            .await
            .map_err(pg)?;
    }
    tx.commit().await.map_err(pg)?;
    Ok(n > 0)
}

async fn agent_versions(
    client: &impl GenericClient,
    owner: &str,
    id: &str,
) -> Result<Vec<AgentVersionRecord>, StoreError> {
    client
        .query(
            "SELECT v.agent_id, v.revision, v.definition, v.created_at FROM agent_versions v \
             JOIN agents a ON a.id = v.agent_id WHERE v.agent_id = $1 AND a.owner = $2 \
             ORDER BY v.revision",
            &[&id, &owner],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|row| {
            let text: String = col(row, "definition")?;
            Ok(AgentVersionRecord {
                agent_id: col(row, "agent_id")?,
                revision: col(row, "revision")?,
                definition: definition(&text, "agent_versions", id)?,
                created_at: col(row, "created_at")?,
            })
        })
        .collect()
}

async fn insert_run(
    client: &mut Client,
    run: &AgentRunRecord,
    max_running: u32,
    max_per_owner: u32,
) -> Result<RunAdmission, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    // Per owner: an agent is its owner's, so this one lock covers both counts.
    super::lock(&*tx, &format!("toolsmith-agent-runs:{}", run.owner)).await?;
    let running = count(
        &*tx,
        &format!(
            "SELECT count(*) AS n FROM agent_runs WHERE agent_id = $1 AND status IN {RUNNING}"
        ),
        &run.agent_id,
    )
    .await?;
    if running >= i64::from(max_running) {
        return Ok(RunAdmission::AgentAtCap);
    }
    let owned = count(
        &*tx,
        &format!("SELECT count(*) AS n FROM agent_runs WHERE owner = $1 AND status IN {RUNNING}"),
        &run.owner,
    )
    .await?;
    if owned >= i64::from(max_per_owner) {
        return Ok(RunAdmission::OwnerAtCap);
    }
    tx.execute(
        &format!(
            "INSERT INTO agent_runs ({RUN_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
        ),
        &[
            &run.id,
            &run.owner,
            &run.caller_agent.as_deref().unwrap_or(""),
            &run.agent_id,
            &run.status.as_str(),
            &json_text(&RunDocument::of(run)),
            &micros(run.created_at),
            &micros(run.updated_at),
            &run.instance,
            &run.lease_until.map(micros),
        ],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(RunAdmission::Started)
}

async fn update_run(client: &impl GenericClient, run: &AgentRunRecord) -> Result<bool, StoreError> {
    let n = client
        .execute(
            &format!(
                "UPDATE agent_runs SET status = $2, document = $3, updated_at = $4 \
                 WHERE id = $1 AND status IN {RUNNING}"
            ),
            &[
                &run.id,
                &run.status.as_str(),
                &json_text(&RunDocument::of(run)),
                &micros(run.updated_at),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

async fn renew_lease(
    client: &impl GenericClient,
    id: &str,
    instance: &str,
    until: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            &format!(
                "UPDATE agent_runs SET lease_until = $3 \
                 WHERE id = $1 AND instance = $2 AND status IN {RUNNING}"
            ),
            &[&id, &instance, &micros(until)],
        )
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

async fn lapsed_runs(
    client: &impl GenericClient,
    now: DateTime<Utc>,
) -> Result<Vec<AgentRunRecord>, StoreError> {
    client
        .query(
            &format!(
                "SELECT {RUN_COLUMNS} FROM agent_runs \
                 WHERE status IN {RUNNING} AND lease_until < $1 \
                 ORDER BY lease_until LIMIT {LAPSED_AT_ONCE}"
            ),
            &[&now],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(run_from_row)
        .collect()
}

async fn end_lapsed_run(
    client: &mut Client,
    run: &AgentRunRecord,
    step: &AgentRunStep,
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let n = tx
        .execute(
            &format!(
                "UPDATE agent_runs SET status = $2, document = $3, updated_at = $4 \
                 WHERE id = $1 AND status IN {RUNNING} AND lease_until < $5"
            ),
            &[
                &run.id,
                &run.status.as_str(),
                &json_text(&RunDocument::of(run)),
                &micros(run.updated_at),
                &now,
            ],
        )
        .await
        .map_err(pg)?;
    if n == 0 {
        return Ok(false);
    }
    add_step(&*tx, step).await?;
    tx.commit().await.map_err(pg)?;
    Ok(true)
}

async fn get_run(
    client: &impl GenericClient,
    owner: &str,
    caller_agent: Option<&str>,
    id: &str,
) -> Result<Option<AgentRunRecord>, StoreError> {
    client
        .query_opt(
            &format!(
                "SELECT {RUN_COLUMNS} FROM agent_runs \
                 WHERE id = $1 AND owner = $2 AND caller_agent = $3"
            ),
            &[&id, &owner, &caller_agent.unwrap_or("")],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(run_from_row)
        .transpose()
}

async fn run_status(
    client: &impl GenericClient,
    id: &str,
) -> Result<Option<AgentRunStatus>, StoreError> {
    let row = client
        .query_opt("SELECT status FROM agent_runs WHERE id = $1", &[&id])
        .await
        .map_err(pg)?;
    row.map(|row| {
        let status: String = col(&row, "status")?;
        AgentRunStatus::parse(&status).ok_or_else(|| corrupt("agent_runs", id, "status", &status))
    })
    .transpose()
}

async fn list_runs(
    client: &impl GenericClient,
    owner: &str,
    caller_agent: Option<&str>,
    agent_id: Option<&str>,
    limit: u32,
) -> Result<Vec<AgentRunRecord>, StoreError> {
    client
        .query(
            &format!(
                "SELECT {RUN_COLUMNS} FROM agent_runs \
                 WHERE owner = $1 AND caller_agent = $2 AND ($3::TEXT IS NULL OR agent_id = $3) \
                 ORDER BY created_at DESC, id COLLATE \"C\" DESC LIMIT $4"
            ),
            &[
                &owner,
                &caller_agent.unwrap_or(""),
                &agent_id,
                &i64::from(limit),
            ],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(run_from_row)
        .collect()
}

async fn cancel_run(
    client: &mut Client,
    owner: &str,
    caller_agent: Option<&str>,
    id: &str,
    message: &str,
    now: DateTime<Utc>,
) -> Result<Option<AgentRunRecord>, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let row = tx
        .query_opt(
            &format!(
                "SELECT {RUN_COLUMNS} FROM agent_runs \
                 WHERE id = $1 AND owner = $2 AND caller_agent = $3 FOR UPDATE"
            ),
            &[&id, &owner, &caller_agent.unwrap_or("")],
        )
        .await
        .map_err(pg)?;
    let Some(mut run) = row.as_ref().map(run_from_row).transpose()? else {
        return Ok(None);
    };
    if run.status.is_terminal() {
        return Ok(Some(run));
    }
    run.status = AgentRunStatus::Cancelled;
    run.error = Some(message.to_owned());
    run.updated_at = micros(now);
    update_run(&*tx, &run).await?;
    tx.commit().await.map_err(pg)?;
    Ok(Some(run))
}

async fn add_step(client: &impl GenericClient, step: &AgentRunStep) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO agent_run_steps (run_id, seq, kind, detail, at) \
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &step.run_id,
                &step.seq,
                &step.kind,
                &json_text(&step.detail),
                &micros(step.at),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(())
}

async fn run_steps(
    client: &impl GenericClient,
    run_id: &str,
) -> Result<Vec<AgentRunStep>, StoreError> {
    client
        .query(
            "SELECT run_id, seq, kind, detail, at FROM agent_run_steps WHERE run_id = $1 \
             ORDER BY seq",
            &[&run_id],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|row| {
            let detail: String = col(row, "detail")?;
            Ok(AgentRunStep {
                run_id: col(row, "run_id")?,
                seq: col(row, "seq")?,
                kind: col(row, "kind")?,
                detail: serde_json::from_str(&detail)
                    .map_err(|e| corrupt("agent_run_steps", run_id, "detail", e))?,
                at: col(row, "at")?,
            })
        })
        .collect()
}

/// The runs' usage, cut out of each document's text before it is read as JSON: the document
/// may hold a NUL character (`\u0000`, in a run's output), which PostgreSQL's JSON operators
/// refuse. The cut is exact: `usage` is the document's only object, flat, and holds no
/// strings, and `"usage":{` cannot occur inside a JSON string (its quotes are escaped there).
async fn usage(
    client: &impl GenericClient,
    query: &AgentUsageQuery,
) -> Result<Vec<AgentUsageRow>, StoreError> {
    let rows = client
        .query(
            "SELECT agent_id, count(*)::BIGINT AS runs, \
                 coalesce(sum((u ->> 'inputTokens')::BIGINT), 0)::BIGINT AS input_tokens, \
                 coalesce(sum((u ->> 'outputTokens')::BIGINT), 0)::BIGINT AS output_tokens, \
                 coalesce(sum((u ->> 'modelCalls')::BIGINT), 0)::BIGINT AS model_calls, \
                 coalesce(sum((u ->> 'toolCalls')::BIGINT), 0)::BIGINT AS tool_calls, \
                 sum((u ->> 'cost')::FLOAT8) AS cost, \
                 count(u -> 'cost')::BIGINT AS priced_runs \
             FROM (SELECT agent_id, \
                       substring(document FROM '\"usage\":([{][^{}]*[}])')::JSON AS u \
                   FROM agent_runs \
                   WHERE owner = $1 AND ($2::TEXT IS NULL OR caller_agent = $2) \
                       AND ($3::TIMESTAMPTZ IS NULL OR created_at >= $3)) AS r \
             GROUP BY agent_id ORDER BY agent_id COLLATE \"C\"",
            &[&query.owner, &query.caller_agent, &query.since],
        )
        .await
        .map_err(pg)?;
    let count = |row: &Row, name: &str| -> Result<u64, StoreError> {
        let n: i64 = col(row, name)?;
        Ok(u64::try_from(n).unwrap_or(0))
    };
    rows.iter()
        .map(|row| {
            Ok(AgentUsageRow {
                agent_id: col(row, "agent_id")?,
                runs: count(row, "runs")?,
                input_tokens: count(row, "input_tokens")?,
                output_tokens: count(row, "output_tokens")?,
                model_calls: count(row, "model_calls")?,
                tool_calls: count(row, "tool_calls")?,
                cost: col(row, "cost")?,
                priced_runs: count(row, "priced_runs")?,
            })
        })
        .collect()
}
