//! Sessions with agents and subagents, in PostgreSQL (`agent_sessions`,
//! `agent_session_messages`). A subagent's spawn takes a per-owner advisory lock (the running
//! subagents of the owner and of the parent are counted before the insert), and appending
//! messages locks the session's row (numbering and trimming are one step), so instances cannot
//! race past either. A session's update is conditional on its not having ended, so a subagent
//! cancelled on one instance stays cancelled.

use chrono::{DateTime, Utc};
use deadpool_postgres::Client;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::agent_session::{
    SessionKind, SessionMessage, SessionQuery, SessionRecord, SessionStatus, SpawnOutcome,
};

use super::errors::pg;
use super::rows::{col, micros};
use crate::StoreError;
use crate::agent_rows::corrupt;
use crate::session_rows::{ENDED, OPEN, SessionDocument, content_text, to_trim};

store_on_pool! {
    impl SessionStore |client, this_instance| {
        fn insert_session(session: &SessionRecord) -> () = insert_session(&**client, session);
        fn spawn_subagent(
            session: &SessionRecord, max_running: u32, max_children: u32
        ) -> SpawnOutcome
            = spawn_subagent(&mut client, session, max_running, max_children);
        fn get_session(
            owner: &str, caller_agent: Option<&str>, id: &str
        ) -> Option<SessionRecord>
            = get_session(&**client, owner, caller_agent, id);
        fn list_sessions(
            owner: &str, caller_agent: Option<&str>, query: &SessionQuery
        ) -> Vec<SessionRecord>
            = list_sessions(&**client, owner, caller_agent, query);
        fn update_session(session: &SessionRecord) -> bool = update_session(&**client, session);
        fn archive_sessions(owner: &str, before: DateTime<Utc>) -> u64
            = archive_sessions(&**client, owner, before);
        fn append_session_messages(
            session_id: &str, messages: &[SessionMessage], max_messages: u32, max_bytes: u64
        ) -> Option<SessionRecord>
            = append_messages(&mut client, session_id, messages, max_messages, max_bytes);
        fn running_sessions(owner: &str) -> Vec<SessionRecord>
            = running_sessions(&**client, owner);
        fn session_messages(session_id: &str, limit: u32) -> Vec<SessionMessage>
            = session_messages(&**client, session_id, limit);
    }
}

const COLUMNS: &str = "id, owner, caller_agent, agent_id, kind, label, parent, depth, status, \
    document, message_count, message_bytes, trimmed, created_at, updated_at";

fn number<T: TryFrom<i64>>(row: &Row, name: &str, id: &str) -> Result<T, StoreError> {
    let n: i64 = col(row, name)?;
    T::try_from(n).map_err(|_| corrupt("agent_sessions", id, name, n))
}

fn session_from_row(row: &Row) -> Result<SessionRecord, StoreError> {
    let id: String = col(row, "id")?;
    let caller: String = col(row, "caller_agent")?;
    let kind: String = col(row, "kind")?;
    let parent: String = col(row, "parent")?;
    let status: String = col(row, "status")?;
    let document: String = col(row, "document")?;
    let document: SessionDocument = serde_json::from_str(&document)
        .map_err(|e| corrupt("agent_sessions", &id, "document", e))?;
    Ok(SessionRecord {
        owner: col(row, "owner")?,
        caller_agent: (!caller.is_empty()).then_some(caller),
        agent_id: col(row, "agent_id")?,
        kind: SessionKind::parse(&kind)
            .ok_or_else(|| corrupt("agent_sessions", &id, "kind", &kind))?,
        label: col(row, "label")?,
        parent: (!parent.is_empty()).then_some(parent),
        depth: number(row, "depth", &id)?,
        status: SessionStatus::parse(&status)
            .ok_or_else(|| corrupt("agent_sessions", &id, "status", &status))?,
        task: document.task,
        result: document.result,
        error: document.error,
        last_run: document.last_run,
        message_count: number(row, "message_count", &id)?,
        message_bytes: number(row, "message_bytes", &id)?,
        trimmed: number(row, "trimmed", &id)?,
        created_at: col(row, "created_at")?,
        updated_at: col(row, "updated_at")?,
        id,
    })
}

fn message_from_row(row: &Row) -> Result<SessionMessage, StoreError> {
    let session_id: String = col(row, "session_id")?;
    let content: String = col(row, "content")?;
    let run: String = col(row, "run_id")?;
    Ok(SessionMessage {
        seq: col(row, "seq")?,
        role: col(row, "role")?,
        content: serde_json::from_str(&content)
            .map_err(|e| corrupt("agent_session_messages", &session_id, "content", e))?,
        run_id: (!run.is_empty()).then_some(run),
        at: col(row, "at")?,
        session_id,
    })
}

async fn insert_session(client: &impl GenericClient, s: &SessionRecord) -> Result<(), StoreError> {
    client
        .execute(
            &format!(
                "INSERT INTO agent_sessions ({COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, 0, 0, $11, $12)"
            ),
            &[
                &s.id,
                &s.owner,
                &s.caller_agent.as_deref().unwrap_or(""),
                &s.agent_id,
                &s.kind.as_str(),
                &s.label,
                &s.parent.as_deref().unwrap_or(""),
                &i64::from(s.depth),
                &s.status.as_str(),
                &SessionDocument::text(s),
                &micros(s.created_at),
                &micros(s.updated_at),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(())
}

async fn count(
    tx: &impl GenericClient,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<i64, StoreError> {
    col(&tx.query_one(sql, params).await.map_err(pg)?, "n")
}

async fn spawn_subagent(
    client: &mut Client,
    session: &SessionRecord,
    max_running: u32,
    max_children: u32,
) -> Result<SpawnOutcome, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    super::lock(&*tx, &format!("toolsmith-subagents:{}", session.owner)).await?;
    let running = count(
        &*tx,
        "SELECT count(*) AS n FROM agent_sessions \
         WHERE owner = $1 AND kind = 'subagent' AND status = 'running'",
        &[&session.owner],
    )
    .await?;
    if running >= i64::from(max_running) {
        return Ok(SpawnOutcome::TooManyRunning(max_running));
    }
    let children = count(
        &*tx,
        "SELECT count(*) AS n FROM agent_sessions \
         WHERE parent = $1 AND owner = $2 AND kind = 'subagent' AND status = 'running'",
        &[&session.parent.as_deref().unwrap_or(""), &session.owner],
    )
    .await?;
    if children >= i64::from(max_children) {
        return Ok(SpawnOutcome::TooManyChildren(max_children));
    }
    insert_session(&*tx, session).await?;
    tx.commit().await.map_err(pg)?;
    Ok(SpawnOutcome::Inserted)
}

async fn get_session(
    client: &impl GenericClient,
    owner: &str,
    caller_agent: Option<&str>,
    id: &str,
) -> Result<Option<SessionRecord>, StoreError> {
    client
        .query_opt(
            &format!(
                "SELECT {COLUMNS} FROM agent_sessions \
                 WHERE id = $1 AND owner = $2 AND caller_agent = $3"
            ),
            &[&id, &owner, &caller_agent.unwrap_or("")],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(session_from_row)
        .transpose()
}

async fn list_sessions(
    client: &impl GenericClient,
    owner: &str,
    caller_agent: Option<&str>,
    query: &SessionQuery,
) -> Result<Vec<SessionRecord>, StoreError> {
    client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM agent_sessions \
                 WHERE owner = $1 AND caller_agent = $2 \
                   AND ($3 = '' OR kind = $3) AND ($4 = '' OR parent = $4) \
                   AND ($5 OR status <> 'archived') \
                 ORDER BY updated_at DESC, id DESC LIMIT $6"
            ),
            &[
                &owner,
                &caller_agent.unwrap_or(""),
                &query.kind.map_or("", SessionKind::as_str),
                &query.parent.as_deref().unwrap_or(""),
                &query.archived,
                &i64::from(query.limit),
            ],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(session_from_row)
        .collect()
}

async fn running_sessions(
    client: &impl GenericClient,
    owner: &str,
) -> Result<Vec<SessionRecord>, StoreError> {
    client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM agent_sessions WHERE owner = $1 AND status = 'running' \
                 ORDER BY updated_at DESC, id DESC"
            ),
            &[&owner],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(session_from_row)
        .collect()
}

async fn update_session(
    client: &impl GenericClient,
    s: &SessionRecord,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            &format!(
                "UPDATE agent_sessions SET status = $2, document = $3, updated_at = $4 \
                 WHERE id = $1 AND status IN {OPEN}"
            ),
            &[
                &s.id,
                &s.status.as_str(),
                &SessionDocument::text(s),
                &micros(s.updated_at),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

async fn archive_sessions(
    client: &impl GenericClient,
    owner: &str,
    before: DateTime<Utc>,
) -> Result<u64, StoreError> {
    client
        .execute(
            &format!(
                "UPDATE agent_sessions SET status = 'archived' \
                 WHERE owner = $1 AND kind = 'subagent' AND status IN {ENDED} AND updated_at < $2"
            ),
            &[&owner, &micros(before)],
        )
        .await
        .map_err(pg)
}

async fn append_messages(
    client: &mut Client,
    session_id: &str,
    messages: &[SessionMessage],
    max_messages: u32,
    max_bytes: u64,
) -> Result<Option<SessionRecord>, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    let Some(row) = tx
        .query_opt(
            "SELECT next_seq FROM agent_sessions WHERE id = $1 FOR UPDATE",
            &[&session_id],
        )
        .await
        .map_err(pg)?
    else {
        return Ok(None);
    };
    let mut next: i64 = col(&row, "next_seq")?;
    for m in messages {
        tx.execute(
            "INSERT INTO agent_session_messages (session_id, seq, role, content, bytes, run_id, at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &session_id,
                &next,
                &m.role,
                &content_text(&m.content),
                &i64::try_from(m.content.len()).unwrap_or(i64::MAX),
                &m.run_id.as_deref().unwrap_or(""),
                &micros(m.at),
            ],
        )
        .await
        .map_err(pg)?;
        next += 1;
    }
    let kept: Vec<(i64, u64)> = tx
        .query(
            "SELECT seq, bytes FROM agent_session_messages WHERE session_id = $1 ORDER BY seq",
            &[&session_id],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(|row| {
            let bytes: i64 = col(row, "bytes")?;
            Ok((col(row, "seq")?, u64::try_from(bytes).unwrap_or(0)))
        })
        .collect::<Result<_, StoreError>>()?;
    let sizes: Vec<u64> = kept.iter().map(|(_, b)| *b).collect();
    let drop = to_trim(&sizes, max_messages, max_bytes);
    if let Some((last_dropped, _)) = drop.checked_sub(1).and_then(|i| kept.get(i)) {
        tx.execute(
            "DELETE FROM agent_session_messages WHERE session_id = $1 AND seq <= $2",
            &[&session_id, last_dropped],
        )
        .await
        .map_err(pg)?;
    }
    let remaining = i64::try_from(sizes.len().saturating_sub(drop)).unwrap_or(i64::MAX);
    let bytes = i64::try_from(sizes.iter().skip(drop).sum::<u64>()).unwrap_or(i64::MAX);
    let dropped = i64::try_from(drop).unwrap_or(i64::MAX);
    let row = tx
        .query_one(
            &format!(
                "UPDATE agent_sessions SET next_seq = $2, message_count = $3, message_bytes = $4, \
                 trimmed = trimmed + $5 WHERE id = $1 RETURNING {COLUMNS}"
            ),
            &[&session_id, &next, &remaining, &bytes, &dropped],
        )
        .await
        .map_err(pg)?;
    let session = session_from_row(&row)?;
    tx.commit().await.map_err(pg)?;
    Ok(Some(session))
}

async fn session_messages(
    client: &impl GenericClient,
    session_id: &str,
    limit: u32,
) -> Result<Vec<SessionMessage>, StoreError> {
    client
        .query(
            "SELECT session_id, seq, role, content, run_id, at FROM ( \
               SELECT * FROM agent_session_messages WHERE session_id = $1 \
               ORDER BY seq DESC LIMIT $2) AS last ORDER BY seq",
            &[&session_id, &i64::from(limit)],
        )
        .await
        .map_err(pg)?
        .iter()
        .map(message_from_row)
        .collect()
}
