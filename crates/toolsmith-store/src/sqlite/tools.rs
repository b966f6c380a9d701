//! The SQL of every store operation, as synchronous functions over one connection.
//!
//! [`super::SqliteStore`] runs them on the blocking thread pool: writes on the single writer
//! connection, reads on a pooled reader connection. Every write that reads before it writes
//! runs in a `BEGIN IMMEDIATE` transaction, so its check (the revision compare-and-swap, the
//! free name) and its change are one atomic step. The SQL itself stays portable (plain
//! `UPSERT`, `CASE`, no SQLite-only functions), so a PostgreSQL backend can follow it closely;
//! the one SQLite-specific piece is the search of listings ([`search_page`]: an index hint and
//! `rowid`), where PostgreSQL would use `ILIKE` with a `count(*) OVER ()`.

use std::sync::LazyLock;

use chrono::{DateTime, SubsecRound, Utc};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params, params_from_iter};
use toolsmith_core::{CustomToolRecord, ExecutionRecord, ExecutionSource, ToolVersionRecord};

use super::rows::{
    EXECUTION_COLUMNS, TOOL_COLUMNS, VERSION_COLUMNS, backend, execution_from_row, json_text,
    timestamp, tool_from_row, version_from_row,
};
use crate::{
    ExecutionSample, ServerExecutionSample, StoreError, ToolMove, ToolPage, ToolQuery, ToolStats,
};

store_on_connections! {
    impl ToolStore {
        write fn insert_tool(tool: CustomToolRecord) -> CustomToolRecord
            = insert_tool(tool, None);
        write fn insert_tool_limited(tool: CustomToolRecord, max_per_owner: u64) -> CustomToolRecord
            = insert_tool(tool, Some(max_per_owner));
        read fn get_tool(owner: &str, id: &str) -> Option<CustomToolRecord>
            = get_tool(&owner, &id);
        read fn get_tool_by_name(owner: &str, name: &str) -> Option<CustomToolRecord>
            = get_tool_by_name(&owner, &name);
        read fn get_tool_of_any_owner(id: &str) -> Option<CustomToolRecord>
            = get_tool_of_any_owner(&id);
        read fn list_tools(query: &ToolQuery) -> ToolPage = list_tools(&query);
        write fn update_tool(tool: &CustomToolRecord, expected_revision: i64) -> ()
            = update_tool(&tool, expected_revision);
        write fn delete_tool(owner: &str, id: &str, expected_revision: i64) -> ()
            = delete_tool(&owner, &id, expected_revision);
        write fn move_tool(change: &ToolMove) -> CustomToolRecord = move_tool(&change);
        read fn count_tools(owner: &str) -> u64 = count_tools(&owner);
        read fn tool_stats(owner: &str) -> ToolStats = tool_stats(&owner);
        read fn active_tools() -> Vec<CustomToolRecord> = active_tools();
        write fn record_usage(owner: &str, id: &str, at: DateTime<Utc>) -> ()
            = record_usage(&owner, &id, &at);
        read fn list_versions(owner: &str, id: &str) -> Vec<ToolVersionRecord>
            = list_versions(&owner, &id);
        read fn get_version(owner: &str, id: &str, version: i64) -> Option<ToolVersionRecord>
            = get_version(&owner, &id, version);
        write fn record_execution(execution: &ExecutionRecord) -> ()
            = record_execution(&execution);
        write fn record_executions(batch: &[ExecutionRecord]) -> ()
            = record_executions(&batch);
        read fn list_executions(
            owner: &str, tool_id: Option<&str>, agent_id: Option<&str>,
            source: Option<ExecutionSource>, limit: u32
        ) -> Vec<ExecutionRecord>
            = list_executions(&owner, tool_id.as_deref(), agent_id.as_deref(), source, limit);
        read fn execution_samples(
            owner: &str, tool_id: Option<&str>, since: DateTime<Utc>, limit: u32
        ) -> Vec<ExecutionSample>
            = super::analytics::execution_samples(&owner, tool_id.as_deref(), &since, limit);
        read fn server_execution_samples(since: DateTime<Utc>, limit: u32) -> Vec<ServerExecutionSample>
            = super::analytics::server_execution_samples(&since, limit);
        write fn prune_executions(before: DateTime<Utc>) -> u64
            = super::analytics::prune_executions(&before);
        read fn tools_fingerprint() -> String = super::tokens::tools_fingerprint();
    }
}

static INSERT_TOOL: LazyLock<String> = LazyLock::new(|| {
    let marks: Vec<String> = (1..=20).map(|i| format!("?{i}")).collect();
    format!(
        "INSERT INTO custom_tools ({TOOL_COLUMNS}) VALUES ({})",
        marks.join(", ")
    )
});

static SELECT_TOOL_BY_ID: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {TOOL_COLUMNS} FROM custom_tools WHERE owner = ?1 AND id = ?2")
});

static SELECT_TOOL_OF_ANY_OWNER: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {TOOL_COLUMNS} FROM custom_tools WHERE id = ?1"));

static SELECT_TOOL_BY_NAME: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {TOOL_COLUMNS} FROM custom_tools WHERE owner = ?1 AND name = ?2")
});

const INSERT_VERSION: &str = "INSERT INTO tool_versions \
     (tool_id, version, description, parameters, code, permissions, created_at, metadata) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

/// Remembers the highest revision a tool of this owner and name ever had.
const RETIRE_NAME: &str = "INSERT INTO tool_name_retired (owner, name, last_revision) \
     VALUES (?1, ?2, ?3) \
     ON CONFLICT (owner, name) DO UPDATE SET last_revision = CASE \
         WHEN excluded.last_revision > tool_name_retired.last_revision \
         THEN excluded.last_revision ELSE tool_name_retired.last_revision END";

/// A broken promise of the caller (not of the database), reported as a backend error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Misuse(String);

pub(crate) fn misuse(message: String) -> StoreError {
    StoreError::Backend(Box::new(Misuse(message)))
}

/// Timestamps are stored with microsecond precision; records handed back match what is stored.
fn truncate_times(tool: &mut CustomToolRecord) {
    tool.created_at = tool.created_at.trunc_subsecs(6);
    tool.updated_at = tool.updated_at.trunc_subsecs(6);
    tool.last_used_at = tool.last_used_at.map(|t| t.trunc_subsecs(6));
}

/// The values of a tool row, in [`TOOL_COLUMNS`] order.
fn tool_values(tool: &CustomToolRecord) -> Vec<SqlValue> {
    let text = |s: &str| SqlValue::Text(s.to_owned());
    let opt = |s: Option<String>| s.map_or(SqlValue::Null, SqlValue::Text);
    vec![
        text(&tool.id),
        text(&tool.owner),
        text(&tool.name),
        text(tool.kind.as_str()),
        text(&tool.description),
        SqlValue::Text(json_text(&tool.parameters)),
        text(&tool.code),
        opt(tool.category.clone()),
        SqlValue::Text(json_text(&tool.tags)),
        SqlValue::Text(json_text(&tool.permissions)),
        text(tool.status.as_str()),
        SqlValue::Integer(i64::from(tool.requires_approval)),
        text(tool.created_by.as_str()),
        SqlValue::Integer(tool.version),
        SqlValue::Integer(tool.revision),
        SqlValue::Integer(tool.usage_count),
        opt(tool.last_used_at.as_ref().map(timestamp)),
        SqlValue::Text(json_text(&tool.metadata)),
        SqlValue::Text(timestamp(&tool.created_at)),
        SqlValue::Text(timestamp(&tool.updated_at)),
    ]
}

fn insert_version_row(
    conn: &Connection,
    tool: &CustomToolRecord,
    at: &DateTime<Utc>,
) -> Result<(), StoreError> {
    conn.prepare_cached(INSERT_VERSION)
        .and_then(|mut stmt| {
            stmt.execute(params![
                tool.id,
                tool.version,
                tool.description,
                json_text(&tool.parameters),
                tool.code,
                json_text(&tool.permissions),
                timestamp(at),
                json_text(&tool.metadata),
            ])
        })
        .map_err(|e| {
            if is_constraint(&e) {
                misuse(format!(
                    "tool {} already has a history row for version {}; versions only grow",
                    tool.id, tool.version
                ))
            } else {
                backend(e)
            }
        })?;
    Ok(())
}

fn is_constraint(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ConstraintViolation)
    )
}

fn name_owner(conn: &Connection, owner: &str, name: &str) -> Result<Option<String>, StoreError> {
    conn.prepare_cached("SELECT id FROM custom_tools WHERE owner = ?1 AND name = ?2")
        .and_then(|mut stmt| {
            stmt.query_row(params![owner, name], |row| row.get(0))
                .optional()
        })
        .map_err(backend)
}

/// Inserts a tool; with `limit`, only while its owner has fewer tools than that (counted in
/// the same `BEGIN IMMEDIATE` transaction, so no other writer can slip in between).
pub(crate) fn insert_tool(
    conn: &mut Connection,
    mut tool: CustomToolRecord,
    limit: Option<u64>,
) -> Result<CustomToolRecord, StoreError> {
    truncate_times(&mut tool);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    if let Some(limit) = limit
        && count_tools(&tx, &tool.owner)? >= limit
    {
        return Err(StoreError::ToolLimit { limit });
    }
    if name_owner(&tx, &tool.owner, &tool.name)?.is_some() {
        return Err(StoreError::NameTaken { name: tool.name });
    }
    let retired: Option<i64> = tx
        .prepare_cached(
            "SELECT last_revision FROM tool_name_retired WHERE owner = ?1 AND name = ?2",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![tool.owner, tool.name], |row| row.get(0))
                .optional()
        })
        .map_err(backend)?;
    if let Some(last) = retired
        && tool.revision <= last
    {
        tool.revision = last + 1;
    }
    tx.prepare_cached(&INSERT_TOOL)
        .and_then(|mut stmt| stmt.execute(params_from_iter(tool_values(&tool))))
        .map_err(|e| {
            if is_constraint(&e) {
                misuse(format!("a tool with id {} already exists: {e}", tool.id))
            } else {
                backend(e)
            }
        })?;
    insert_version_row(&tx, &tool, &tool.created_at)?;
    tx.commit().map_err(backend)?;
    Ok(tool)
}

pub(crate) fn get_tool(
    conn: &Connection,
    owner: &str,
    id: &str,
) -> Result<Option<CustomToolRecord>, StoreError> {
    one_tool(conn, &SELECT_TOOL_BY_ID, owner, id)
}

pub(crate) fn get_tool_by_name(
    conn: &Connection,
    owner: &str,
    name: &str,
) -> Result<Option<CustomToolRecord>, StoreError> {
    one_tool(conn, &SELECT_TOOL_BY_NAME, owner, name)
}

pub(crate) fn get_tool_of_any_owner(
    conn: &Connection,
    id: &str,
) -> Result<Option<CustomToolRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&SELECT_TOOL_OF_ANY_OWNER)
        .map_err(backend)?;
    let mut rows = stmt.query(params![id]).map_err(backend)?;
    match rows.next().map_err(backend)? {
        Some(row) => tool_from_row(row).map(Some),
        None => Ok(None),
    }
}

fn one_tool(
    conn: &Connection,
    sql: &str,
    owner: &str,
    key: &str,
) -> Result<Option<CustomToolRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(sql).map_err(backend)?;
    let mut rows = stmt.query(params![owner, key]).map_err(backend)?;
    match rows.next().map_err(backend)? {
        Some(row) => tool_from_row(row).map(Some),
        None => Ok(None),
    }
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

pub(crate) fn list_tools(conn: &mut Connection, query: &ToolQuery) -> Result<ToolPage, StoreError> {
    let mut filter = String::from("owner = ?");
    let mut args = vec![SqlValue::Text(query.owner.clone())];
    if let Some(status) = query.status {
        filter.push_str(" AND status = ?");
        args.push(SqlValue::Text(status.as_str().to_owned()));
    }
    if let Some(category) = &query.category {
        filter.push_str(" AND category = ?");
        args.push(SqlValue::Text(category.clone()));
    }
    if let Some(created_by) = query.created_by {
        filter.push_str(" AND created_by = ?");
        args.push(SqlValue::Text(created_by.as_str().to_owned()));
    }
    let search = query.search.as_deref().filter(|s| !s.is_empty());
    if let Some(search) = search {
        // SQLite's LIKE already ignores ASCII case, which is all an ASCII needle needs; other
        // needles compare Unicode-lowercased text (the connection's `lower` folds all scripts).
        filter.push_str(if search.is_ascii() {
            " AND (name LIKE ? ESCAPE '\\' OR description LIKE ? ESCAPE '\\' \
             OR category LIKE ? ESCAPE '\\')"
        } else {
            " AND (lower(name) LIKE ? ESCAPE '\\' OR lower(description) LIKE ? ESCAPE '\\' \
             OR lower(category) LIKE ? ESCAPE '\\')"
        });
        let pattern = like_pattern(search);
        for _ in 0..3 {
            args.push(SqlValue::Text(pattern.clone()));
        }
    }
    // One read transaction: the page and the total come from the same snapshot.
    let tx = conn.transaction().map_err(backend)?;
    let (tools, total) = if search.is_some() {
        search_page(&tx, &filter, args, query)?
    } else {
        filtered_page(&tx, &filter, args, query)?
    };
    Ok(ToolPage {
        tools,
        total: count(total),
    })
}

/// Filters the indexes answer: the total from an index, then one page in name order.
fn filtered_page(
    conn: &Connection,
    filter: &str,
    mut args: Vec<SqlValue>,
    query: &ToolQuery,
) -> Result<(Vec<CustomToolRecord>, i64), StoreError> {
    let total: i64 = conn
        .prepare_cached(&format!("SELECT count(*) FROM custom_tools WHERE {filter}"))
        .and_then(|mut stmt| stmt.query_row(params_from_iter(args.iter()), |row| row.get(0)))
        .map_err(backend)?;
    let mut tools = Vec::new();
    if query.limit > 0 && total > i64::from(query.offset) {
        args.push(SqlValue::Integer(i64::from(query.limit)));
        args.push(SqlValue::Integer(i64::from(query.offset)));
        let mut stmt = conn
            .prepare_cached(&format!(
                "SELECT {TOOL_COLUMNS} FROM custom_tools WHERE {filter} \
                 ORDER BY name LIMIT ? OFFSET ?"
            ))
            .map_err(backend)?;
        let mut rows = stmt.query(params_from_iter(args.iter())).map_err(backend)?;
        while let Some(row) = rows.next().map_err(backend)? {
            tools.push(tool_from_row(row)?);
        }
    }
    Ok((tools, total))
}

/// A substring search reads every tool of the owner. One pass over the covering search index
/// (already in name order) collects the matching row ids — the total — and only the rows of
/// the page are then read from the table.
fn search_page(
    conn: &Connection,
    filter: &str,
    args: Vec<SqlValue>,
    query: &ToolQuery,
) -> Result<(Vec<CustomToolRecord>, i64), StoreError> {
    let matches: Vec<i64> = conn
        .prepare_cached(&format!(
            "SELECT rowid FROM custom_tools INDEXED BY idx_custom_tools_owner_search \
             WHERE {filter} ORDER BY name"
        ))
        .and_then(|mut stmt| {
            stmt.query_map(params_from_iter(args.iter()), |row| row.get(0))?
                .collect()
        })
        .map_err(backend)?;
    let offset = usize::try_from(query.offset).unwrap_or(usize::MAX);
    let limit = usize::try_from(query.limit).unwrap_or(usize::MAX);
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {TOOL_COLUMNS} FROM custom_tools WHERE rowid = ?1"
        ))
        .map_err(backend)?;
    let mut tools = Vec::new();
    for rowid in matches.iter().skip(offset).take(limit) {
        let mut rows = stmt.query(params![rowid]).map_err(backend)?;
        if let Some(row) = rows.next().map_err(backend)? {
            tools.push(tool_from_row(row)?);
        }
    }
    Ok((tools, i64::try_from(matches.len()).unwrap_or(i64::MAX)))
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The stored revision, version and name of a tool, if it exists for this owner.
fn current_state(
    conn: &Connection,
    owner: &str,
    id: &str,
) -> Result<Option<(i64, i64, String)>, StoreError> {
    conn.prepare_cached(
        "SELECT revision, version, name FROM custom_tools WHERE owner = ?1 AND id = ?2",
    )
    .and_then(|mut stmt| {
        stmt.query_row(params![owner, id], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()
    })
    .map_err(backend)
}

/// Looks the tool up and checks the revision: `NotFound` or `RevisionConflict`, else its state.
fn expect_revision(
    conn: &Connection,
    owner: &str,
    id: &str,
    expected: i64,
) -> Result<(i64, i64, String), StoreError> {
    let Some(state) = current_state(conn, owner, id)? else {
        return Err(StoreError::NotFound { id: id.to_owned() });
    };
    if state.0 != expected {
        return Err(StoreError::RevisionConflict {
            expected,
            actual: state.0,
        });
    }
    Ok(state)
}

pub(crate) fn update_tool(
    conn: &mut Connection,
    tool: &CustomToolRecord,
    expected_revision: i64,
) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let (_, stored_version, stored_name) =
        expect_revision(&tx, &tool.owner, &tool.id, expected_revision)?;
    if tool.version < stored_version {
        return Err(misuse(format!(
            "tool {} is at version {stored_version}; an update cannot go back to version {}",
            tool.id, tool.version
        )));
    }
    if stored_name != tool.name {
        if name_owner(&tx, &tool.owner, &tool.name)?.is_some() {
            return Err(StoreError::NameTaken {
                name: tool.name.clone(),
            });
        }
        // The old name is free again: a tool created under it must start above this revision.
        tx.prepare_cached(RETIRE_NAME)
            .and_then(|mut stmt| stmt.execute(params![tool.owner, stored_name, tool.revision]))
            .map_err(backend)?;
    }
    let changed = tx
        .prepare_cached(
            "UPDATE custom_tools SET name = ?1, kind = ?2, description = ?3, parameters = ?4, \
             code = ?5, category = ?6, tags = ?7, permissions = ?8, status = ?9, \
             requires_approval = ?10, created_by = ?11, version = ?12, revision = ?13, \
             metadata = ?14, updated_at = ?15 \
             WHERE owner = ?16 AND id = ?17 AND revision = ?18",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                tool.name,
                tool.kind.as_str(),
                tool.description,
                json_text(&tool.parameters),
                tool.code,
                tool.category,
                json_text(&tool.tags),
                json_text(&tool.permissions),
                tool.status.as_str(),
                tool.requires_approval,
                tool.created_by.as_str(),
                tool.version,
                tool.revision,
                json_text(&tool.metadata),
                timestamp(&tool.updated_at),
                tool.owner,
                tool.id,
                expected_revision,
            ])
        })
        .map_err(backend)?;
    if changed != 1 {
        // Unreachable under the write lock taken by BEGIN IMMEDIATE; checked all the same.
        return Err(misuse(format!(
            "tool {} changed while it was being updated",
            tool.id
        )));
    }
    if tool.version != stored_version {
        insert_version_row(&tx, tool, &tool.updated_at)?;
    }
    tx.commit().map_err(backend)
}

pub(crate) fn delete_tool(
    conn: &mut Connection,
    owner: &str,
    id: &str,
    expected_revision: i64,
) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let (revision, _, name) = expect_revision(&tx, owner, id, expected_revision)?;
    // The foreign key cascades too; deleting explicitly does not depend on it being enabled.
    tx.prepare_cached("DELETE FROM tool_versions WHERE tool_id = ?1")
        .and_then(|mut stmt| stmt.execute(params![id]))
        .map_err(backend)?;
    let deleted = tx
        .prepare_cached("DELETE FROM custom_tools WHERE owner = ?1 AND id = ?2 AND revision = ?3")
        .and_then(|mut stmt| stmt.execute(params![owner, id, expected_revision]))
        .map_err(backend)?;
    if deleted != 1 {
        return Err(misuse(format!(
            "tool {id} changed while it was being deleted"
        )));
    }
    tx.prepare_cached(RETIRE_NAME)
        .and_then(|mut stmt| stmt.execute(params![owner, name, revision]))
        .map_err(backend)?;
    tx.commit().map_err(backend)
}

pub(crate) fn move_tool(
    conn: &mut Connection,
    change: &ToolMove,
) -> Result<CustomToolRecord, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let (_, _, name) = expect_revision(&tx, &change.from, &change.id, change.expected_revision)?;
    if count_tools(&tx, &change.to)? >= change.max_per_owner {
        return Err(StoreError::ToolLimit {
            limit: change.max_per_owner,
        });
    }
    if name_owner(&tx, &change.to, &name)?.is_some() {
        return Err(StoreError::NameTaken { name });
    }
    let retired: Option<i64> = tx
        .prepare_cached(
            "SELECT last_revision FROM tool_name_retired WHERE owner = ?1 AND name = ?2",
        )
        .and_then(|mut stmt| {
            stmt.query_row(params![change.to, name], |row| row.get(0))
                .optional()
        })
        .map_err(backend)?;
    let revision = (change.expected_revision + 1).max(retired.map_or(0, |last| last + 1));
    let at = timestamp(&change.at);
    let moved = tx
        .prepare_cached(
            "UPDATE custom_tools SET owner = ?1, code = ?2, revision = ?3, updated_at = ?4 \
             WHERE owner = ?5 AND id = ?6 AND revision = ?7",
        )
        .and_then(|mut stmt| {
            stmt.execute(params![
                change.to,
                change.code,
                revision,
                at,
                change.from,
                change.id,
                change.expected_revision
            ])
        })
        .map_err(backend)?;
    if moved != 1 {
        return Err(misuse(format!(
            "tool {} changed while it was being moved",
            change.id
        )));
    }
    for (version, code) in &change.version_codes {
        tx.prepare_cached("UPDATE tool_versions SET code = ?1 WHERE tool_id = ?2 AND version = ?3")
            .and_then(|mut stmt| stmt.execute(params![code, change.id, version]))
            .map_err(backend)?;
    }
    // The name is free again at the old owner: a tool created under it starts above this.
    tx.prepare_cached(RETIRE_NAME)
        .and_then(|mut stmt| stmt.execute(params![change.from, name, revision]))
        .map_err(backend)?;
    let tool = get_tool(&tx, &change.to, &change.id)?.ok_or_else(|| {
        misuse(format!(
            "tool {} vanished while it was being moved",
            change.id
        ))
    })?;
    tx.commit().map_err(backend)?;
    Ok(tool)
}

pub(crate) fn count_tools(conn: &Connection, owner: &str) -> Result<u64, StoreError> {
    conn.prepare_cached("SELECT count(*) FROM custom_tools WHERE owner = ?1")
        .and_then(|mut stmt| stmt.query_row(params![owner], |row| row.get::<_, i64>(0)))
        .map(count)
        .map_err(backend)
}

pub(crate) fn tool_stats(conn: &Connection, owner: &str) -> Result<ToolStats, StoreError> {
    // One query, grouped: at most 8 groups, read in order from the covering index
    // (owner, status, created_by, usage_count); the sums are added up here.
    let mut stmt = conn
        .prepare_cached(
            "SELECT status, created_by, count(*), COALESCE(SUM(usage_count), 0) \
             FROM custom_tools WHERE owner = ?1 GROUP BY status, created_by",
        )
        .map_err(backend)?;
    let mut rows = stmt.query(params![owner]).map_err(backend)?;
    let mut stats = ToolStats::default();
    while let Some(row) = rows.next().map_err(backend)? {
        let status: String = row.get(0).map_err(backend)?;
        let created_by: String = row.get(1).map_err(backend)?;
        // The CHECK constraints keep other values out; such rows would count in the totals only.
        stats.add_group(
            &status,
            &created_by,
            count(row.get(2).map_err(backend)?),
            count(row.get(3).map_err(backend)?),
        );
    }
    Ok(stats)
}

/// Whether the database answers a trivial query.
pub(crate) fn ping(conn: &Connection) -> Result<(), StoreError> {
    conn.query_row("SELECT 1", [], |row| row.get::<_, i64>(0))
        .map_err(backend)?;
    Ok(())
}

pub(crate) fn active_tools(conn: &Connection) -> Result<Vec<CustomToolRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {TOOL_COLUMNS} FROM custom_tools WHERE status = 'active' ORDER BY owner, name"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query([]).map_err(backend)?;
    let mut tools = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        tools.push(tool_from_row(row)?);
    }
    Ok(tools)
}

pub(crate) fn record_usage(
    conn: &Connection,
    owner: &str,
    id: &str,
    at: &DateTime<Utc>,
) -> Result<(), StoreError> {
    if count_usage(conn, owner, id, 1, at)? == 0 {
        return Err(StoreError::NotFound { id: id.to_owned() });
    }
    Ok(())
}

/// Adds `uses` to a tool's `usage_count` and moves `last_used_at` to `at` unless it is already
/// later. Returns how many rows changed (0 when the tool is gone).
fn count_usage(
    conn: &Connection,
    owner: &str,
    id: &str,
    uses: i64,
    at: &DateTime<Utc>,
) -> Result<usize, StoreError> {
    // One statement, so it is atomic on its own; `last_used_at` never moves backwards when
    // usages are recorded out of order. Timestamps are fixed-width text, so `<` compares times.
    conn.prepare_cached(
        "UPDATE custom_tools SET usage_count = usage_count + ?1, \
         last_used_at = CASE WHEN last_used_at IS NULL OR last_used_at < ?2 \
             THEN ?2 ELSE last_used_at END \
         WHERE owner = ?3 AND id = ?4",
    )
    .and_then(|mut stmt| stmt.execute(params![uses, timestamp(at), owner, id]))
    .map_err(backend)
}

pub(crate) fn record_executions(
    conn: &mut Connection,
    batch: &[ExecutionRecord],
) -> Result<(), StoreError> {
    if batch.is_empty() {
        return Ok(());
    }
    // Usage is summed per tool first, so a batch of many calls of one tool is one UPDATE.
    let mut usage: std::collections::HashMap<(&str, &str), (i64, DateTime<Utc>)> =
        std::collections::HashMap::new();
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
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    for execution in batch {
        record_execution(&tx, execution)?;
    }
    for ((owner, id), (uses, at)) in &usage {
        // A tool deleted since its call keeps its execution rows; there is nothing to count.
        count_usage(&tx, owner, id, *uses, at)?;
    }
    tx.commit().map_err(backend)
}

pub(crate) fn list_versions(
    conn: &Connection,
    owner: &str,
    id: &str,
) -> Result<Vec<ToolVersionRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {} FROM tool_versions v JOIN custom_tools t ON t.id = v.tool_id \
             WHERE t.owner = ?1 AND t.id = ?2 ORDER BY v.version DESC",
            qualified("v", VERSION_COLUMNS)
        ))
        .map_err(backend)?;
    let mut rows = stmt.query(params![owner, id]).map_err(backend)?;
    let mut versions = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        versions.push(version_from_row(row)?);
    }
    Ok(versions)
}

pub(crate) fn get_version(
    conn: &Connection,
    owner: &str,
    id: &str,
    version: i64,
) -> Result<Option<ToolVersionRecord>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {} FROM tool_versions v JOIN custom_tools t ON t.id = v.tool_id \
             WHERE t.owner = ?1 AND t.id = ?2 AND v.version = ?3",
            qualified("v", VERSION_COLUMNS)
        ))
        .map_err(backend)?;
    let mut rows = stmt.query(params![owner, id, version]).map_err(backend)?;
    match rows.next().map_err(backend)? {
        Some(row) => version_from_row(row).map(Some),
        None => Ok(None),
    }
}

/// `a, b` → `v.a, v.b`.
fn qualified(alias: &str, columns: &str) -> String {
    columns
        .split(',')
        .map(|c| format!("{alias}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn record_execution(
    conn: &Connection,
    execution: &ExecutionRecord,
) -> Result<(), StoreError> {
    // SQLite stores NaN as NULL, which the NOT NULL column refuses; an unmeasured duration is 0.
    let duration_ms = if execution.duration_ms.is_nan() {
        0.0
    } else {
        execution.duration_ms
    };
    conn.prepare_cached(&format!(
        "INSERT INTO tool_executions ({EXECUTION_COLUMNS}) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
    ))
    .and_then(|mut stmt| {
        let asked = &execution.client_requests;
        stmt.execute(params![
            execution.id,
            execution.tool_id,
            execution.tool_name,
            execution.tool_version,
            execution.owner,
            execution.conversation_id,
            execution.status.as_str(),
            execution.error_kind,
            execution.error,
            duration_ms,
            timestamp(&execution.created_at),
            execution.agent_id,
            asked.logs,
            asked.progress,
            asked.samples,
            asked.elicitations,
            asked.refused,
            execution.source.as_str(),
        ])
    })
    .map_err(backend)?;
    Ok(())
}

pub(crate) fn list_executions(
    conn: &Connection,
    owner: &str,
    tool_id: Option<&str>,
    agent_id: Option<&str>,
    source: Option<ExecutionSource>,
    limit: u32,
) -> Result<Vec<ExecutionRecord>, StoreError> {
    // One statement per combination rather than `?3 IS NULL OR …`, so each gets its index.
    let mut filter = String::from("owner = ?1");
    let mut values: Vec<&dyn rusqlite::ToSql> = vec![&owner];
    let limit = i64::from(limit);
    values.push(&limit);
    if let Some(tool_id) = &tool_id {
        values.push(tool_id);
        filter.push_str(&format!(" AND tool_id = ?{}", values.len()));
    }
    if let Some(agent_id) = &agent_id {
        values.push(agent_id);
        filter.push_str(&format!(" AND agent_id = ?{}", values.len()));
    }
    let source = source.map(ExecutionSource::as_str);
    if let Some(source) = &source {
        values.push(source);
        filter.push_str(&format!(" AND source = ?{}", values.len()));
    }
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {EXECUTION_COLUMNS} FROM tool_executions WHERE {filter} \
             ORDER BY created_at DESC, id DESC LIMIT ?2"
        ))
        .map_err(backend)?;
    let mut rows = stmt.query(values.as_slice()).map_err(backend)?;
    let mut executions = Vec::new();
    while let Some(row) = rows.next().map_err(backend)? {
        executions.push(execution_from_row(row)?);
    }
    Ok(executions)
}
