//! Custom tools, their history, usage counters and executions in PostgreSQL.
//!
//! The revision compare-and-swap is the `WHERE revision = $n` of the `UPDATE`/`DELETE` itself
//! (under READ COMMITTED a concurrent writer of the same row waits, then re-checks the
//! condition against the committed row: exactly one of many writers with the same expected
//! revision wins). Inserting under a tool limit locks the owner (advisory lock) so the count
//! and the insert are one step across every instance.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use tokio_postgres::GenericClient;
use tokio_postgres::types::ToSql;
use toolsmith_core::{
    CreatedBy, CustomToolRecord, ExecutionRecord, ExecutionSource, ToolStatus, ToolVersionRecord,
};

use super::errors::{pg, unique_violation};
use super::lock;
use super::notify::notify;
use super::rows::{
    EXECUTION_COLUMNS, TOOL_COLUMNS, VERSION_COLUMNS, col, execution_from_row, json, micros,
    tool_from_row, version_from_row,
};
use crate::{
    ChangeKind, ExecutionSample, ServerExecutionSample, StoreError, ToolMove, ToolPage, ToolQuery,
    ToolStats,
};

store_on_pool! {
    impl ToolStore |client, instance| {
        fn insert_tool(tool: CustomToolRecord) -> CustomToolRecord
            = insert(&mut client, instance, tool, None);
        fn insert_tool_limited(tool: CustomToolRecord, max_per_owner: u64) -> CustomToolRecord
            = insert(&mut client, instance, tool, Some(max_per_owner));
        fn get_tool(owner: &str, id: &str) -> Option<CustomToolRecord>
            = get(&**client, owner, "id", id);
        fn get_tool_by_name(owner: &str, name: &str) -> Option<CustomToolRecord>
            = get(&**client, owner, "name", name);
        fn get_tool_of_any_owner(id: &str) -> Option<CustomToolRecord>
            = get_of_any_owner(&**client, id);
        fn list_tools(query: &ToolQuery) -> ToolPage = list(&mut client, query);
        fn update_tool(tool: &CustomToolRecord, expected_revision: i64) -> ()
            = update(&mut client, instance, tool, expected_revision);
        fn delete_tool(owner: &str, id: &str, expected_revision: i64) -> ()
            = delete(&mut client, instance, owner, id, expected_revision);
        fn move_tool(change: &ToolMove) -> CustomToolRecord
            = move_tool(&mut client, instance, change);
        fn count_tools(owner: &str) -> u64 = count(&**client, owner);
        fn tool_stats(owner: &str) -> ToolStats = stats(&**client, owner);
        fn active_tools() -> Vec<CustomToolRecord> = active(&**client);
        fn record_usage(owner: &str, id: &str, at: DateTime<Utc>) -> ()
            = record_usage(&**client, owner, id, &at);
        fn list_versions(owner: &str, id: &str) -> Vec<ToolVersionRecord>
            = versions(&**client, owner, id, None);
        fn get_version(owner: &str, id: &str, version: i64) -> Option<ToolVersionRecord>
            = one_version(&**client, owner, id, version);
        fn record_execution(execution: &ExecutionRecord) -> ()
            = record_execution(&**client, execution);
        fn record_executions(batch: &[ExecutionRecord]) -> ()
            = record_executions(&mut client, batch);
        fn list_executions(
            owner: &str, tool_id: Option<&str>, agent_id: Option<&str>,
            source: Option<ExecutionSource>, limit: u32
        ) -> Vec<ExecutionRecord>
            = list_executions(&**client, owner, tool_id, agent_id, source, limit);
        fn execution_samples(
            owner: &str, tool_id: Option<&str>, since: DateTime<Utc>, limit: u32
        ) -> Vec<ExecutionSample>
            = execution_samples(&**client, owner, tool_id, &since, limit);
        fn server_execution_samples(since: DateTime<Utc>, limit: u32) -> Vec<ServerExecutionSample>
            = server_execution_samples(&**client, &since, limit);
        fn prune_executions(before: DateTime<Utc>) -> u64 = prune_executions(&**client, &before);
        fn tools_fingerprint() -> String = super::tokens::tools_fingerprint(&**client);
    }
}

/// Remembers the highest revision a tool of this owner and name ever had.
const RETIRE_NAME: &str = "INSERT INTO tool_name_retired (owner, name, last_revision) \
     VALUES ($1, $2, $3) ON CONFLICT (owner, name) \
     DO UPDATE SET last_revision = GREATEST(tool_name_retired.last_revision, excluded.last_revision)";

/// A broken promise of the caller (not of the database), reported as a backend error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Misuse(String);

pub(crate) fn misuse(message: String) -> StoreError {
    StoreError::Backend(Box::new(Misuse(message)))
}

fn owner_key(owner: &str) -> String {
    format!("toolsmith:tools:{owner}")
}

pub(crate) async fn insert(
    client: &mut Client,
    instance: &str,
    mut tool: CustomToolRecord,
    limit: Option<u64>,
) -> Result<CustomToolRecord, StoreError> {
    tool.created_at = micros(tool.created_at);
    tool.updated_at = micros(tool.updated_at);
    tool.last_used_at = tool.last_used_at.map(micros);
    let tx = client.transaction().await.map_err(pg)?;
    lock(&*tx, &owner_key(&tool.owner)).await?;
    if let Some(limit) = limit
        && count(&*tx, &tool.owner).await? >= limit
    {
        return Err(StoreError::ToolLimit { limit });
    }
    let retired = tx
        .query_opt(
            "SELECT last_revision FROM tool_name_retired WHERE owner = $1 AND name = $2",
            &[&tool.owner, &tool.name],
        )
        .await
        .map_err(pg)?;
    if let Some(row) = retired {
        let last: i64 = row.get(0);
        if tool.revision <= last {
            tool.revision = last + 1;
        }
    }
    let (parameters, tags, permissions) = (
        tool.parameters.clone(),
        json(&tool.tags),
        json(&tool.permissions),
    );
    let params: [&(dyn ToSql + Sync); 20] = [
        &tool.id,
        &tool.owner,
        &tool.name,
        &tool.kind.as_str(),
        &tool.description,
        &parameters,
        &tool.code,
        &tool.category,
        &tags,
        &permissions,
        &tool.status.as_str(),
        &tool.requires_approval,
        &tool.created_by.as_str(),
        &tool.version,
        &tool.revision,
        &tool.usage_count,
        &tool.last_used_at,
        &tool.metadata,
        &tool.created_at,
        &tool.updated_at,
    ];
    let marks: Vec<String> = (1..=20).map(|i| format!("${i}")).collect();
    tx.execute(
        &format!(
            "INSERT INTO custom_tools ({TOOL_COLUMNS}) VALUES ({})",
            marks.join(", ")
        ),
        &params,
    )
    .await
    .map_err(|e| match unique_violation(&e) {
        Some("custom_tools_owner_name") => StoreError::NameTaken {
            name: tool.name.clone(),
        },
        Some(_) => misuse(format!("a tool with id {} already exists: {e}", tool.id)),
        None => pg(e),
    })?;
    insert_version_row(&*tx, &tool, &tool.created_at).await?;
    let (kind, revision) = (ChangeKind::Tool, Some(tool.revision));
    notify(&*tx, instance, kind, &tool.id, &tool.owner, revision).await?;
    tx.commit().await.map_err(pg)?;
    Ok(tool)
}

async fn insert_version_row(
    tx: &impl GenericClient,
    tool: &CustomToolRecord,
    at: &DateTime<Utc>,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO tool_versions \
         (tool_id, version, description, parameters, code, permissions, created_at, metadata) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &tool.id,
            &tool.version,
            &tool.description,
            &tool.parameters,
            &tool.code,
            &json(&tool.permissions),
            at,
            &tool.metadata,
        ],
    )
    .await
    .map_err(|e| {
        if unique_violation(&e).is_some() {
            misuse(format!(
                "tool {} already has a history row for version {}; versions only grow",
                tool.id, tool.version
            ))
        } else {
            pg(e)
        }
    })?;
    Ok(())
}

/// One tool of `owner` by `key_column` (`id` or `name`).
pub(crate) async fn get(
    client: &impl GenericClient,
    owner: &str,
    key_column: &str,
    key: &str,
) -> Result<Option<CustomToolRecord>, StoreError> {
    let row = client
        .query_opt(
            &format!(
                "SELECT {TOOL_COLUMNS} FROM custom_tools WHERE owner = $1 AND {key_column} = $2"
            ),
            &[&owner, &key],
        )
        .await
        .map_err(pg)?;
    row.as_ref().map(tool_from_row).transpose()
}

pub(crate) async fn get_of_any_owner(
    client: &impl GenericClient,
    id: &str,
) -> Result<Option<CustomToolRecord>, StoreError> {
    let row = client
        .query_opt(
            &format!("SELECT {TOOL_COLUMNS} FROM custom_tools WHERE id = $1"),
            &[&id],
        )
        .await
        .map_err(pg)?;
    row.as_ref().map(tool_from_row).transpose()
}

/// `%needle%` for `LIKE … ESCAPE '\'`, lower-cased, with the wildcards of the needle escaped.
fn like_pattern(needle: &str) -> String {
    let mut out = String::with_capacity(needle.len() + 2);
    out.push('%');
    for c in needle.to_lowercase().chars() {
        if matches!(c, '\\' | '%' | '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

pub(crate) async fn list(client: &mut Client, query: &ToolQuery) -> Result<ToolPage, StoreError> {
    let status = query.status.map(ToolStatus::as_str);
    let created_by = query.created_by.map(CreatedBy::as_str);
    let pattern = query
        .search
        .as_deref()
        .filter(|s| !s.is_empty())
        .map(like_pattern);
    let filter = "owner = $1 AND ($2::text IS NULL OR status = $2) \
         AND ($3::text IS NULL OR category = $3) AND ($4::text IS NULL OR created_by = $4) \
         AND ($5::text IS NULL OR lower(name) LIKE $5 ESCAPE '\\' \
              OR lower(description) LIKE $5 ESCAPE '\\' OR lower(category) LIKE $5 ESCAPE '\\')";
    let args: [&(dyn ToSql + Sync); 5] = [
        &query.owner,
        &status,
        &query.category,
        &created_by,
        &pattern,
    ];
    // The page and the total from one snapshot.
    let tx = super::snapshot(client).await?;
    let total: i64 = tx
        .query_one(
            &format!("SELECT count(*) FROM custom_tools WHERE {filter}"),
            &args,
        )
        .await
        .map_err(pg)?
        .get(0);
    let mut tools = Vec::new();
    if query.limit > 0 && total > i64::from(query.offset) {
        let (limit, offset) = (i64::from(query.limit), i64::from(query.offset));
        let mut page_args: Vec<&(dyn ToSql + Sync)> = args.to_vec();
        page_args.push(&limit);
        page_args.push(&offset);
        let rows = tx
            .query(
                &format!(
                    "SELECT {TOOL_COLUMNS} FROM custom_tools WHERE {filter} \
                     ORDER BY name COLLATE \"C\" LIMIT $6 OFFSET $7"
                ),
                &page_args,
            )
            .await
            .map_err(pg)?;
        for row in &rows {
            tools.push(tool_from_row(row)?);
        }
    }
    tx.commit().await.map_err(pg)?;
    Ok(ToolPage {
        tools,
        total: u64::try_from(total).unwrap_or(0),
    })
}

/// Checks that the tool exists for `owner` and is at `expected`: its stored version and name.
async fn expect_revision(
    tx: &impl GenericClient,
    owner: &str,
    id: &str,
    expected: i64,
) -> Result<(i64, String), StoreError> {
    let row = tx
        .query_opt(
            "SELECT revision, version, name FROM custom_tools WHERE owner = $1 AND id = $2 \
             FOR UPDATE",
            &[&owner, &id],
        )
        .await
        .map_err(pg)?;
    let Some(row) = row else {
        return Err(StoreError::NotFound { id: id.to_owned() });
    };
    let actual: i64 = row.get(0);
    if actual != expected {
        return Err(StoreError::RevisionConflict { expected, actual });
    }
    Ok((row.get(1), row.get(2)))
}

pub(crate) async fn update(
    client: &mut Client,
    instance: &str,
    tool: &CustomToolRecord,
    expected_revision: i64,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    // FOR UPDATE: a concurrent writer of this tool waits here, then sees the new revision.
    let (stored_version, stored_name) =
        expect_revision(&*tx, &tool.owner, &tool.id, expected_revision).await?;
    if tool.version < stored_version {
        return Err(misuse(format!(
            "tool {} is at version {stored_version}; an update cannot go back to version {}",
            tool.id, tool.version
        )));
    }
    if stored_name != tool.name {
        // The old name is free again: a tool created under it must start above this revision.
        tx.execute(RETIRE_NAME, &[&tool.owner, &stored_name, &tool.revision])
            .await
            .map_err(pg)?;
    }
    let updated_at = micros(tool.updated_at);
    let changed = tx
        .execute(
            "UPDATE custom_tools SET name = $1, kind = $2, description = $3, parameters = $4, \
             code = $5, category = $6, tags = $7, permissions = $8, status = $9, \
             requires_approval = $10, created_by = $11, version = $12, revision = $13, \
             metadata = $14, updated_at = $15 \
             WHERE owner = $16 AND id = $17 AND revision = $18",
            &[
                &tool.name,
                &tool.kind.as_str(),
                &tool.description,
                &tool.parameters,
                &tool.code,
                &tool.category,
                &json(&tool.tags),
                &json(&tool.permissions),
                &tool.status.as_str(),
                &tool.requires_approval,
                &tool.created_by.as_str(),
                &tool.version,
                &tool.revision,
                &tool.metadata,
                &updated_at,
                &tool.owner,
                &tool.id,
                &expected_revision,
            ],
        )
        .await
        .map_err(|e| match unique_violation(&e) {
            Some("custom_tools_owner_name") => StoreError::NameTaken {
                name: tool.name.clone(),
            },
            _ => pg(e),
        })?;
    if changed != 1 {
        return Err(misuse(format!(
            "tool {} changed while it was being updated",
            tool.id
        )));
    }
    if tool.version != stored_version {
        insert_version_row(&*tx, tool, &updated_at).await?;
    }
    let (kind, revision) = (ChangeKind::Tool, Some(tool.revision));
    notify(&*tx, instance, kind, &tool.id, &tool.owner, revision).await?;
    tx.commit().await.map_err(pg)
}

pub(crate) async fn delete(
    client: &mut Client,
    instance: &str,
    owner: &str,
    id: &str,
    expected_revision: i64,
) -> Result<(), StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let (_, name) = expect_revision(&*tx, owner, id, expected_revision).await?;
    // History rows go with the tool (ON DELETE CASCADE).
    let deleted = tx
        .execute(
            "DELETE FROM custom_tools WHERE owner = $1 AND id = $2 AND revision = $3",
            &[&owner, &id, &expected_revision],
        )
        .await
        .map_err(pg)?;
    if deleted != 1 {
        return Err(misuse(format!(
            "tool {id} changed while it was being deleted"
        )));
    }
    tx.execute(RETIRE_NAME, &[&owner, &name, &expected_revision])
        .await
        .map_err(pg)?;
    notify(&*tx, instance, ChangeKind::Tool, id, owner, None).await?;
    tx.commit().await.map_err(pg)
}

pub(crate) async fn move_tool(
    client: &mut Client,
    instance: &str,
    change: &ToolMove,
) -> Result<CustomToolRecord, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    // The new owner is locked as an insert under a limit locks it: its count holds.
    lock(&*tx, &owner_key(&change.to)).await?;
    let (_, name) =
        expect_revision(&*tx, &change.from, &change.id, change.expected_revision).await?;
    if count(&*tx, &change.to).await? >= change.max_per_owner {
        return Err(StoreError::ToolLimit {
            limit: change.max_per_owner,
        });
    }
    let retired: Option<i64> = tx
        .query_opt(
            "SELECT last_revision FROM tool_name_retired WHERE owner = $1 AND name = $2",
            &[&change.to, &name],
        )
        .await
        .map_err(pg)?
        .map(|row| row.get(0));
    let revision = (change.expected_revision + 1).max(retired.map_or(0, |last| last + 1));
    let at = micros(change.at);
    let moved = tx
        .execute(
            "UPDATE custom_tools SET owner = $1, code = $2, revision = $3, updated_at = $4 \
             WHERE owner = $5 AND id = $6 AND revision = $7",
            &[
                &change.to,
                &change.code,
                &revision,
                &at,
                &change.from,
                &change.id,
                &change.expected_revision,
            ],
        )
        .await
        .map_err(|e| match unique_violation(&e) {
            Some("custom_tools_owner_name") => StoreError::NameTaken { name: name.clone() },
            _ => pg(e),
        })?;
    if moved != 1 {
        return Err(misuse(format!(
            "tool {} changed while it was being moved",
            change.id
        )));
    }
    for (version, code) in &change.version_codes {
        tx.execute(
            "UPDATE tool_versions SET code = $1 WHERE tool_id = $2 AND version = $3",
            &[code, &change.id, version],
        )
        .await
        .map_err(pg)?;
    }
    // The name is free again at the old owner: a tool created under it starts above this.
    tx.execute(RETIRE_NAME, &[&change.from, &name, &revision])
        .await
        .map_err(pg)?;
    let tool = get(&*tx, &change.to, "id", &change.id)
        .await?
        .ok_or_else(|| {
            misuse(format!(
                "tool {} vanished while it was being moved",
                change.id
            ))
        })?;
    notify(
        &*tx,
        instance,
        ChangeKind::Tool,
        &change.id,
        &change.from,
        None,
    )
    .await?;
    notify(
        &*tx,
        instance,
        ChangeKind::Tool,
        &change.id,
        &change.to,
        Some(revision),
    )
    .await?;
    tx.commit().await.map_err(pg)?;
    Ok(tool)
}

pub(crate) async fn count(client: &impl GenericClient, owner: &str) -> Result<u64, StoreError> {
    let n: i64 = client
        .query_one(
            "SELECT count(*) FROM custom_tools WHERE owner = $1",
            &[&owner],
        )
        .await
        .map_err(pg)?
        .get(0);
    Ok(u64::try_from(n).unwrap_or(0))
}

pub(crate) async fn stats(
    client: &impl GenericClient,
    owner: &str,
) -> Result<ToolStats, StoreError> {
    let rows = client
        .query(
            "SELECT status, created_by, count(*), COALESCE(SUM(usage_count), 0)::bigint \
             FROM custom_tools WHERE owner = $1 GROUP BY status, created_by",
            &[&owner],
        )
        .await
        .map_err(pg)?;
    let mut stats = ToolStats::default();
    for row in &rows {
        let status: String = col(row, "status")?;
        let created_by: String = col(row, "created_by")?;
        stats.add_group(
            &status,
            &created_by,
            u64::try_from(row.get::<_, i64>(2)).unwrap_or(0),
            u64::try_from(row.get::<_, i64>(3)).unwrap_or(0),
        );
    }
    Ok(stats)
}

pub(crate) async fn active(
    client: &impl GenericClient,
) -> Result<Vec<CustomToolRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {TOOL_COLUMNS} FROM custom_tools WHERE status = 'active' \
                 ORDER BY owner COLLATE \"C\", name COLLATE \"C\""
            ),
            &[],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(tool_from_row).collect()
}

/// Adds `uses` to a tool's `usage_count` and moves `last_used_at` forward to `at` (never
/// back), in one statement. How many rows changed (0 when the tool is gone).
pub(crate) async fn count_usage(
    client: &impl GenericClient,
    owner: &str,
    id: &str,
    uses: i64,
    at: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    let at = micros(*at);
    client
        .execute(
            "UPDATE custom_tools SET usage_count = usage_count + $1, \
             last_used_at = GREATEST(last_used_at, $2) WHERE owner = $3 AND id = $4",
            &[&uses, &at, &owner, &id],
        )
        .await
        .map_err(pg)
}

pub(crate) async fn record_executions(
    client: &mut Client,
    batch: &[ExecutionRecord],
) -> Result<(), StoreError> {
    if batch.is_empty() {
        return Ok(());
    }
    let mut usage: HashMap<(&str, &str), (i64, DateTime<Utc>)> = HashMap::new();
    for execution in batch
        .iter()
        .filter(|e| e.status.ran() && e.source == ExecutionSource::Custom)
    {
        let entry = usage
            .entry((execution.owner.as_str(), execution.tool_id.as_str()))
            .or_insert((0, execution.created_at));
        entry.0 += 1;
        entry.1 = entry.1.max(execution.created_at);
    }
    let tx = client.transaction().await.map_err(pg)?;
    // One statement, prepared once per connection; the rows are sent together (pipelined on
    // the connection), not one round trip after another.
    let insert = tx
        .prepare_cached(&insert_execution_sql())
        .await
        .map_err(pg)?;
    futures::future::try_join_all(
        batch
            .iter()
            .map(|execution| insert_execution(&*tx, &insert, execution)),
    )
    .await?;
    // In a fixed order, so two instances' batches never lock the same rows crosswise.
    let mut usage: Vec<_> = usage.into_iter().collect();
    usage.sort_by(|a, b| a.0.cmp(&b.0));
    for ((owner, id), (uses, at)) in &usage {
        count_usage(&*tx, owner, id, *uses, at).await?;
    }
    tx.commit().await.map_err(pg)
}

pub(crate) async fn record_execution(
    client: &impl GenericClient,
    execution: &ExecutionRecord,
) -> Result<(), StoreError> {
    insert_execution(client, insert_execution_sql().as_str(), execution).await
}

fn insert_execution_sql() -> String {
    format!(
        "INSERT INTO tool_executions ({EXECUTION_COLUMNS}) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)"
    )
}

/// Inserts one execution row with `statement` ([`insert_execution_sql`], prepared or not).
async fn insert_execution<T>(
    client: &impl GenericClient,
    statement: &T,
    execution: &ExecutionRecord,
) -> Result<(), StoreError>
where
    T: tokio_postgres::ToStatement + Sync + Send + ?Sized,
{
    let duration_ms = if execution.duration_ms.is_nan() {
        0.0
    } else {
        execution.duration_ms
    };
    let asked = &execution.client_requests;
    let (logs, progress, samples, elicitations, refused) = (
        i64::from(asked.logs),
        i64::from(asked.progress),
        i64::from(asked.samples),
        i64::from(asked.elicitations),
        i64::from(asked.refused),
    );
    client
        .execute(
            statement,
            &[
                &execution.id,
                &execution.tool_id,
                &execution.tool_name,
                &execution.tool_version,
                &execution.owner,
                &execution.conversation_id,
                &execution.status.as_str(),
                &execution.error_kind,
                &execution.error,
                &duration_ms,
                &micros(execution.created_at),
                &execution.agent_id,
                &logs,
                &progress,
                &samples,
                &elicitations,
                &refused,
                &execution.source.as_str(),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(())
}

/// Every version of a tool of `owner`, newest first, or just `version`.
pub(crate) async fn versions(
    client: &impl GenericClient,
    owner: &str,
    id: &str,
    version: Option<i64>,
) -> Result<Vec<ToolVersionRecord>, StoreError> {
    let rows = client
        .query(
            &format!(
                "SELECT {VERSION_COLUMNS} FROM tool_versions v JOIN custom_tools t \
                 ON t.id = v.tool_id WHERE t.owner = $1 AND t.id = $2 \
                 AND ($3::bigint IS NULL OR v.version = $3) ORDER BY v.version DESC"
            ),
            &[&owner, &id, &version],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(version_from_row).collect()
}

pub(crate) async fn list_executions(
    client: &impl GenericClient,
    owner: &str,
    tool_id: Option<&str>,
    agent_id: Option<&str>,
    source: Option<ExecutionSource>,
    limit: u32,
) -> Result<Vec<ExecutionRecord>, StoreError> {
    let source = source.map(ExecutionSource::as_str);
    let rows = client
        .query(
            &format!(
                "SELECT {EXECUTION_COLUMNS} FROM tool_executions \
                 WHERE owner = $1 AND ($2::text IS NULL OR tool_id = $2) \
                 AND ($4::text IS NULL OR agent_id = $4) \
                 AND ($5::text IS NULL OR source = $5) \
                 ORDER BY created_at DESC, id COLLATE \"C\" DESC LIMIT $3"
            ),
            &[&owner, &tool_id, &i64::from(limit), &agent_id, &source],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(execution_from_row).collect()
}

pub(crate) async fn execution_samples(
    client: &impl GenericClient,
    owner: &str,
    tool_id: Option<&str>,
    since: &DateTime<Utc>,
    limit: u32,
) -> Result<Vec<ExecutionSample>, StoreError> {
    let rows = client
        .query(
            "SELECT tool_id, tool_name, status, error_kind, duration_ms, created_at \
             FROM tool_executions WHERE owner = $1 AND created_at >= $2 \
             AND ($4::text IS NULL OR tool_id = $4) ORDER BY created_at DESC LIMIT $3",
            &[&owner, since, &i64::from(limit), &tool_id],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(sample_of).collect()
}

/// The sample in a row of `tool_executions`.
fn sample_of(row: &tokio_postgres::Row) -> Result<ExecutionSample, StoreError> {
    let tool_id: String = col(row, "tool_id")?;
    Ok(ExecutionSample {
        tool_name: col(row, "tool_name")?,
        status: super::rows::parsed(row, "status", "tool_executions", &tool_id)?,
        error_kind: col(row, "error_kind")?,
        duration_ms: col(row, "duration_ms")?,
        created_at: col(row, "created_at")?,
        tool_id,
    })
}

pub(crate) async fn server_execution_samples(
    client: &impl GenericClient,
    since: &DateTime<Utc>,
    limit: u32,
) -> Result<Vec<ServerExecutionSample>, StoreError> {
    let rows = client
        .query(
            "SELECT tool_id, tool_name, status, error_kind, duration_ms, created_at, owner, agent_id \
             FROM tool_executions WHERE created_at >= $1 ORDER BY created_at DESC LIMIT $2",
            &[since, &i64::from(limit)],
        )
        .await
        .map_err(pg)?;
    rows.iter()
        .map(|row| {
            Ok(ServerExecutionSample {
                owner: col(row, "owner")?,
                agent_id: col(row, "agent_id")?,
                sample: sample_of(row)?,
            })
        })
        .collect()
}

/// Counts one execution of a tool; [`StoreError::NotFound`] when the tool is gone.
async fn record_usage(
    client: &impl GenericClient,
    owner: &str,
    id: &str,
    at: &DateTime<Utc>,
) -> Result<(), StoreError> {
    if count_usage(client, owner, id, 1, at).await? == 0 {
        return Err(StoreError::NotFound { id: id.to_owned() });
    }
    Ok(())
}

/// One version of a tool of `owner`.
async fn one_version(
    client: &impl GenericClient,
    owner: &str,
    id: &str,
    version: i64,
) -> Result<Option<ToolVersionRecord>, StoreError> {
    Ok(versions(client, owner, id, Some(version)).await?.pop())
}

/// Deletes every execution row older than `before`; how many went.
async fn prune_executions(
    client: &impl GenericClient,
    before: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    client
        .execute(
            "DELETE FROM tool_executions WHERE created_at < $1",
            &[before],
        )
        .await
        .map_err(pg)
}
