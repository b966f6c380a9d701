//! Sessions with agents and subagents, on SQLite (`agent_sessions`, `agent_session_messages`):
//! one writer connection, so a subagent's spawn bounds and a session's trimming, counted inside
//! a write's transaction, are exact.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use toolsmith_core::agent_session::{
    SessionKind, SessionMessage, SessionQuery, SessionRecord, SessionStatus, SpawnOutcome,
};

use super::rows::{backend, parse_time, timestamp};
use crate::StoreError;
use crate::agent_rows::corrupt;
use crate::session_rows::{ENDED, OPEN, SessionDocument, content_text, to_trim};

store_on_connections! {
    impl SessionStore {
        write fn insert_session(session: &SessionRecord) -> () = insert_session(&session);
        write fn spawn_subagent(
            session: &SessionRecord, max_running: u32, max_children: u32
        ) -> SpawnOutcome
            = spawn_subagent(&session, max_running, max_children);
        read fn get_session(
            owner: &str, caller_agent: Option<&str>, id: &str
        ) -> Option<SessionRecord>
            = get_session(&owner, caller_agent.as_deref(), &id);
        read fn list_sessions(
            owner: &str, caller_agent: Option<&str>, query: &SessionQuery
        ) -> Vec<SessionRecord>
            = list_sessions(&owner, caller_agent.as_deref(), &query);
        write fn update_session(session: &SessionRecord) -> bool = update_session(&session);
        write fn archive_sessions(owner: &str, before: DateTime<Utc>) -> u64
            = archive_sessions(&owner, &before);
        write fn append_session_messages(
            session_id: &str, messages: &[SessionMessage], max_messages: u32, max_bytes: u64
        ) -> Option<SessionRecord>
            = append_messages(&session_id, &messages, max_messages, max_bytes);
        read fn session_messages(session_id: &str, limit: u32) -> Vec<SessionMessage>
            = session_messages(&session_id, limit);
        read fn running_sessions(owner: &str) -> Vec<SessionRecord> = running_sessions(&owner);
    }
}

const COLUMNS: &str = "id, owner, caller_agent, agent_id, kind, label, parent, depth, status, \
    document, message_count, message_bytes, trimmed, created_at, updated_at";

fn time(row: &Row<'_>, i: usize, table: &str, id: &str) -> Result<DateTime<Utc>, StoreError> {
    let text: String = row.get(i).map_err(backend)?;
    parse_time(&text).map_err(|e| corrupt(table, id, "time", e))
}

fn count<T: TryFrom<i64>>(row: &Row<'_>, i: usize, id: &str) -> Result<T, StoreError> {
    let n: i64 = row.get(i).map_err(backend)?;
    T::try_from(n).map_err(|_| corrupt("agent_sessions", id, "count", n))
}

fn session_from_row(row: &Row<'_>) -> Result<SessionRecord, StoreError> {
    let id: String = row.get(0).map_err(backend)?;
    let caller: String = row.get(2).map_err(backend)?;
    let kind: String = row.get(4).map_err(backend)?;
    let parent: String = row.get(6).map_err(backend)?;
    let status: String = row.get(8).map_err(backend)?;
    let document: String = row.get(9).map_err(backend)?;
    let document: SessionDocument = serde_json::from_str(&document)
        .map_err(|e| corrupt("agent_sessions", &id, "document", e))?;
    Ok(SessionRecord {
        owner: row.get(1).map_err(backend)?,
        caller_agent: (!caller.is_empty()).then_some(caller),
        agent_id: row.get(3).map_err(backend)?,
        kind: SessionKind::parse(&kind)
            .ok_or_else(|| corrupt("agent_sessions", &id, "kind", &kind))?,
        label: row.get(5).map_err(backend)?,
        parent: (!parent.is_empty()).then_some(parent),
        depth: count(row, 7, &id)?,
        status: SessionStatus::parse(&status)
            .ok_or_else(|| corrupt("agent_sessions", &id, "status", &status))?,
        task: document.task,
        result: document.result,
        error: document.error,
        last_run: document.last_run,
        message_count: count(row, 10, &id)?,
        message_bytes: count(row, 11, &id)?,
        trimmed: count(row, 12, &id)?,
        created_at: time(row, 13, "agent_sessions", &id)?,
        updated_at: time(row, 14, "agent_sessions", &id)?,
        id,
    })
}

fn message_from_row(row: &Row<'_>) -> Result<SessionMessage, StoreError> {
    let session_id: String = row.get(0).map_err(backend)?;
    let content: String = row.get(3).map_err(backend)?;
    let run: String = row.get(4).map_err(backend)?;
    Ok(SessionMessage {
        seq: row.get(1).map_err(backend)?,
        role: row.get(2).map_err(backend)?,
        content: serde_json::from_str(&content)
            .map_err(|e| corrupt("agent_session_messages", &session_id, "content", e))?,
        run_id: (!run.is_empty()).then_some(run),
        at: time(row, 5, "agent_session_messages", &session_id)?,
        session_id,
    })
}

fn write_session(tx: &Connection, s: &SessionRecord) -> Result<(), StoreError> {
    tx.execute(
        &format!(
            "INSERT INTO agent_sessions ({COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, 0, 0, ?11, ?12)"
        ),
        params![
            s.id,
            s.owner,
            s.caller_agent.as_deref().unwrap_or(""),
            s.agent_id,
            s.kind.as_str(),
            s.label,
            s.parent.as_deref().unwrap_or(""),
            i64::from(s.depth),
            s.status.as_str(),
            SessionDocument::text(s),
            timestamp(&s.created_at),
            timestamp(&s.updated_at),
        ],
    )
    .map_err(backend)?;
    Ok(())
}

fn insert_session(conn: &mut Connection, session: &SessionRecord) -> Result<(), StoreError> {
    write_session(conn, session)
}

fn spawn_subagent(
    conn: &mut Connection,
    session: &SessionRecord,
    max_running: u32,
    max_children: u32,
) -> Result<SpawnOutcome, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let running: i64 = tx
        .query_row(
            "SELECT count(*) FROM agent_sessions \
             WHERE owner = ?1 AND kind = 'subagent' AND status = 'running'",
            params![session.owner],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if running >= i64::from(max_running) {
        return Ok(SpawnOutcome::TooManyRunning(max_running));
    }
    let children: i64 = tx
        .query_row(
            "SELECT count(*) FROM agent_sessions \
             WHERE parent = ?1 AND owner = ?2 AND kind = 'subagent' AND status = 'running'",
            params![session.parent.as_deref().unwrap_or(""), session.owner],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if children >= i64::from(max_children) {
        return Ok(SpawnOutcome::TooManyChildren(max_children));
    }
    write_session(&tx, session)?;
    tx.commit().map_err(backend)?;
    Ok(SpawnOutcome::Inserted)
}

fn get_session(
    conn: &Connection,
    owner: &str,
    caller_agent: Option<&str>,
    id: &str,
) -> Result<Option<SessionRecord>, StoreError> {
    conn.query_row(
        &format!(
            "SELECT {COLUMNS} FROM agent_sessions \
             WHERE id = ?1 AND owner = ?2 AND caller_agent = ?3"
        ),
        params![id, owner, caller_agent.unwrap_or("")],
        |row| Ok(session_from_row(row)),
    )
    .optional()
    .map_err(backend)?
    .transpose()
}

fn list_sessions(
    conn: &Connection,
    owner: &str,
    caller_agent: Option<&str>,
    query: &SessionQuery,
) -> Result<Vec<SessionRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {COLUMNS} FROM agent_sessions \
             WHERE owner = ?1 AND caller_agent = ?2 \
               AND (?3 = '' OR kind = ?3) AND (?4 = '' OR parent = ?4) \
               AND (?5 OR status <> 'archived') \
             ORDER BY updated_at DESC, id DESC LIMIT ?6"
        ))
        .map_err(backend)?;
    let rows = stmt
        .query_map(
            params![
                owner,
                caller_agent.unwrap_or(""),
                query.kind.map_or("", SessionKind::as_str),
                query.parent.as_deref().unwrap_or(""),
                query.archived,
                i64::from(query.limit),
            ],
            |row| Ok(session_from_row(row)),
        )
        .map_err(backend)?;
    rows.map(|r| r.map_err(backend)?).collect()
}

fn running_sessions(conn: &Connection, owner: &str) -> Result<Vec<SessionRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {COLUMNS} FROM agent_sessions WHERE owner = ?1 AND status = 'running' \
             ORDER BY updated_at DESC, id DESC"
        ))
        .map_err(backend)?;
    let rows = stmt
        .query_map(params![owner], |row| Ok(session_from_row(row)))
        .map_err(backend)?;
    rows.map(|r| r.map_err(backend)?).collect()
}

fn update_session(conn: &mut Connection, s: &SessionRecord) -> Result<bool, StoreError> {
    let n = conn
        .execute(
            &format!(
                "UPDATE agent_sessions SET status = ?2, document = ?3, updated_at = ?4 \
                 WHERE id = ?1 AND status IN {OPEN}"
            ),
            params![
                s.id,
                s.status.as_str(),
                SessionDocument::text(s),
                timestamp(&s.updated_at)
            ],
        )
        .map_err(backend)?;
    Ok(n > 0)
}

fn archive_sessions(
    conn: &mut Connection,
    owner: &str,
    before: &DateTime<Utc>,
) -> Result<u64, StoreError> {
    let n = conn
        .execute(
            &format!(
                "UPDATE agent_sessions SET status = 'archived' \
                 WHERE owner = ?1 AND kind = 'subagent' AND status IN {ENDED} AND updated_at < ?2"
            ),
            params![owner, timestamp(before)],
        )
        .map_err(backend)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

fn append_messages(
    conn: &mut Connection,
    session_id: &str,
    messages: &[SessionMessage],
    max_messages: u32,
    max_bytes: u64,
) -> Result<Option<SessionRecord>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let next: Option<i64> = tx
        .query_row(
            "SELECT next_seq FROM agent_sessions WHERE id = ?1",
            params![session_id],
            |row| row.get(0),
        )
        .optional()
        .map_err(backend)?;
    let Some(mut next) = next else {
        return Ok(None);
    };
    for m in messages {
        tx.execute(
            "INSERT INTO agent_session_messages (session_id, seq, role, content, bytes, run_id, at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                session_id,
                next,
                m.role,
                content_text(&m.content),
                i64::try_from(m.content.len()).unwrap_or(i64::MAX),
                m.run_id.as_deref().unwrap_or(""),
                timestamp(&m.at),
            ],
        )
        .map_err(backend)?;
        next += 1;
    }
    let kept: Vec<(i64, i64)> = {
        let mut stmt = tx
            .prepare(
                "SELECT seq, bytes FROM agent_session_messages WHERE session_id = ?1 ORDER BY seq",
            )
            .map_err(backend)?;
        let rows = stmt
            .query_map(params![session_id], |row| Ok((row.get(0)?, row.get(1)?)))
            .map_err(backend)?;
        rows.collect::<Result<_, _>>().map_err(backend)?
    };
    let sizes: Vec<u64> = kept
        .iter()
        .map(|(_, b)| u64::try_from(*b).unwrap_or(0))
        .collect();
    let drop = to_trim(&sizes, max_messages, max_bytes);
    if let Some((last_dropped, _)) = drop.checked_sub(1).and_then(|i| kept.get(i)) {
        tx.execute(
            "DELETE FROM agent_session_messages WHERE session_id = ?1 AND seq <= ?2",
            params![session_id, last_dropped],
        )
        .map_err(backend)?;
    }
    let count = sizes.len().saturating_sub(drop);
    let bytes: u64 = sizes.iter().skip(drop).sum();
    tx.execute(
        "UPDATE agent_sessions SET next_seq = ?2, message_count = ?3, message_bytes = ?4, \
         trimmed = trimmed + ?5 WHERE id = ?1",
        params![
            session_id,
            next,
            i64::try_from(count).unwrap_or(i64::MAX),
            i64::try_from(bytes).unwrap_or(i64::MAX),
            i64::try_from(drop).unwrap_or(i64::MAX),
        ],
    )
    .map_err(backend)?;
    let session = tx
        .query_row(
            &format!("SELECT {COLUMNS} FROM agent_sessions WHERE id = ?1"),
            params![session_id],
            |row| Ok(session_from_row(row)),
        )
        .optional()
        .map_err(backend)?
        .transpose()?;
    tx.commit().map_err(backend)?;
    Ok(session)
}

fn session_messages(
    conn: &Connection,
    session_id: &str,
    limit: u32,
) -> Result<Vec<SessionMessage>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT session_id, seq, role, content, run_id, at FROM ( \
               SELECT * FROM agent_session_messages WHERE session_id = ?1 \
               ORDER BY seq DESC LIMIT ?2) ORDER BY seq",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map(params![session_id, i64::from(limit)], |row| {
            Ok(message_from_row(row))
        })
        .map_err(backend)?;
    rows.map(|r| r.map_err(backend)?).collect()
}
