//! Agent links, delegations and handoff routes on SQLite (`agent_links`, `delegations`,
//! `handoff_routes`): one writer connection, so a delegation's caps, counted inside the
//! insert's transaction, are exact.

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use toolsmith_core::delegation::{
    AgentLinkRecord, DelegationAdmission, DelegationQuery, DelegationRecord, HandoffRoute,
};

use super::rows::{backend, timestamp};
use crate::StoreError;
use crate::delegation_rows::{STILL_RUNNING, delegation, document, read};

store_on_connections! {
    impl DelegationStore {
        write fn insert_agent_link(link: &AgentLinkRecord) -> bool = insert_link(&link);
        read fn list_agent_links(owner: &str) -> Vec<AgentLinkRecord> = list_links(&owner);
        write fn delete_agent_link(owner: &str, id: &str) -> bool = delete_link(&owner, &id);
        write fn insert_delegation_within(
            delegation: &DelegationRecord, link_max: u32, agent_max: u32
        ) -> DelegationAdmission = insert_delegation(&delegation, link_max, agent_max);
        write fn update_delegation(delegation: &DelegationRecord) -> bool
            = update_delegation(&delegation);
        read fn get_delegation(owner: &str, id: &str) -> Option<DelegationRecord>
            = get_delegation(&owner, &id);
        read fn list_delegations(owner: &str, query: &DelegationQuery) -> Vec<DelegationRecord>
            = list_delegations(&owner, &query);
        read fn delegation_of_run(owner: &str, run_id: &str) -> Option<DelegationRecord>
            = delegation_of_run(&owner, &run_id);
        write fn put_handoff_route(route: &HandoffRoute) -> () = put_route(&route);
        read fn get_handoff_route(owner: &str, session_id: &str) -> Option<HandoffRoute>
            = route_where(&owner, "session_id", &session_id);
        read fn handoff_route_to(owner: &str, target_session: &str) -> Option<HandoffRoute>
            = route_where(&owner, "target_session", &target_session);
        write fn delete_handoff_route(owner: &str, session_id: &str) -> bool
            = delete_route(&owner, &session_id);
        read fn session_of_run(owner: &str, run_id: &str) -> Option<(String, Option<String>)>
            = session_of_run(&owner, &run_id);
    }
}

fn insert_link(conn: &mut Connection, link: &AgentLinkRecord) -> Result<bool, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let linked: i64 = tx
        .query_row(
            "SELECT count(*) FROM agent_links WHERE owner = ?1 AND \
             ((source_agent = ?2 AND target_agent = ?3) OR (source_agent = ?3 AND target_agent = ?2))",
            params![link.owner, link.source_agent, link.target_agent],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if linked > 0 {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO agent_links (id, owner, source_agent, target_agent, document, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            link.id,
            link.owner,
            link.source_agent,
            link.target_agent,
            document(link),
            timestamp(&link.created_at)
        ],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(true)
}

fn list_links(conn: &Connection, owner: &str) -> Result<Vec<AgentLinkRecord>, StoreError> {
    let mut stmt = conn
        .prepare("SELECT id, document FROM agent_links WHERE owner = ?1 ORDER BY created_at, id")
        .map_err(backend)?;
    let rows = stmt
        .query_map(params![owner], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .map_err(backend)?;
    rows.map(|r| {
        let (id, text) = r.map_err(backend)?;
        read("agent_links", &id, &text)
    })
    .collect()
}

fn delete_link(conn: &mut Connection, owner: &str, id: &str) -> Result<bool, StoreError> {
    let n = conn
        .execute(
            "DELETE FROM agent_links WHERE owner = ?1 AND id = ?2",
            params![owner, id],
        )
        .map_err(backend)?;
    Ok(n > 0)
}

fn insert_delegation(
    conn: &mut Connection,
    d: &DelegationRecord,
    link_max: u32,
    agent_max: u32,
) -> Result<DelegationAdmission, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let on_link: i64 = tx
        .query_row(
            &format!("SELECT count(*) FROM delegations WHERE link_id = ?1 AND {STILL_RUNNING}"),
            params![d.link_id],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if on_link >= i64::from(link_max) {
        return Ok(DelegationAdmission::LinkAtCap(link_max));
    }
    let on_agent: i64 = tx
        .query_row(
            &format!(
                "SELECT count(*) FROM delegations WHERE owner = ?1 AND target_agent = ?2 AND \
                 {STILL_RUNNING}"
            ),
            params![d.owner, d.target_agent],
            |row| row.get(0),
        )
        .map_err(backend)?;
    if on_agent >= i64::from(agent_max) {
        return Ok(DelegationAdmission::AgentAtCap(agent_max));
    }
    tx.execute(
        "INSERT INTO delegations (id, owner, source_agent, target_agent, link_id, run_id, \
         status, document, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            d.id,
            d.owner,
            d.source_agent,
            d.target_agent,
            d.link_id,
            d.run_id.as_deref().unwrap_or(""),
            d.status.as_str(),
            document(d),
            timestamp(&d.created_at),
            timestamp(&d.updated_at),
        ],
    )
    .map_err(backend)?;
    tx.commit().map_err(backend)?;
    Ok(DelegationAdmission::Started)
}

fn update_delegation(conn: &mut Connection, d: &DelegationRecord) -> Result<bool, StoreError> {
    let n = conn
        .execute(
            "UPDATE delegations SET run_id = ?2, status = ?3, document = ?4, updated_at = ?5 \
             WHERE id = ?1 AND status = 'running'",
            params![
                d.id,
                d.run_id.as_deref().unwrap_or(""),
                d.status.as_str(),
                document(d),
                timestamp(&d.updated_at),
            ],
        )
        .map_err(backend)?;
    Ok(n > 0)
}

fn one(
    conn: &Connection,
    filter: &str,
    owner: &str,
    value: &str,
) -> Result<Option<DelegationRecord>, StoreError> {
    conn.query_row(
        &format!(
            "SELECT id, status, document FROM delegations WHERE owner = ?1 AND {filter} = ?2 \
             ORDER BY created_at DESC LIMIT 1"
        ),
        params![owner, value],
        |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
            ))
        },
    )
    .optional()
    .map_err(backend)?
    .map(|(id, status, text)| delegation(&id, &status, &text))
    .transpose()
}

fn get_delegation(
    conn: &Connection,
    owner: &str,
    id: &str,
) -> Result<Option<DelegationRecord>, StoreError> {
    one(conn, "id", owner, id)
}

fn delegation_of_run(
    conn: &Connection,
    owner: &str,
    run_id: &str,
) -> Result<Option<DelegationRecord>, StoreError> {
    one(conn, "run_id", owner, run_id)
}

fn list_delegations(
    conn: &Connection,
    owner: &str,
    query: &DelegationQuery,
) -> Result<Vec<DelegationRecord>, StoreError> {
    let mut stmt = conn
        .prepare(
            "SELECT id, status, document FROM delegations WHERE owner = ?1 \
               AND (?2 = '' OR source_agent = ?2 OR target_agent = ?2) \
               AND (NOT ?3 OR status = 'running') \
             ORDER BY created_at DESC, id DESC LIMIT ?4",
        )
        .map_err(backend)?;
    let rows = stmt
        .query_map(
            params![
                owner,
                query.agent.as_deref().unwrap_or(""),
                query.active,
                i64::from(query.limit)
            ],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                ))
            },
        )
        .map_err(backend)?;
    rows.map(|r| {
        let (id, status, text) = r.map_err(backend)?;
        delegation(&id, &status, &text)
    })
    .collect()
}

fn put_route(conn: &mut Connection, route: &HandoffRoute) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO handoff_routes (session_id, owner, target_session, document, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5) \
         ON CONFLICT (session_id) DO UPDATE SET target_session = excluded.target_session, \
         document = excluded.document, created_at = excluded.created_at",
        params![
            route.session_id,
            route.owner,
            route.target_session,
            document(route),
            timestamp(&route.created_at)
        ],
    )
    .map_err(backend)?;
    Ok(())
}

fn route_where(
    conn: &Connection,
    owner: &str,
    column: &str,
    value: &str,
) -> Result<Option<HandoffRoute>, StoreError> {
    let column = if column == "session_id" {
        "session_id"
    } else {
        "target_session"
    };
    conn.query_row(
        &format!(
            "SELECT session_id, document FROM handoff_routes WHERE owner = ?1 AND {column} = ?2 \
             LIMIT 1"
        ),
        params![owner, value],
        |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)),
    )
    .optional()
    .map_err(backend)?
    .map(|(id, text)| read("handoff_routes", &id, &text))
    .transpose()
}

fn delete_route(conn: &mut Connection, owner: &str, session_id: &str) -> Result<bool, StoreError> {
    let n = conn
        .execute(
            "DELETE FROM handoff_routes WHERE owner = ?1 AND session_id = ?2",
            params![owner, session_id],
        )
        .map_err(backend)?;
    Ok(n > 0)
}

fn session_of_run(
    conn: &Connection,
    owner: &str,
    run_id: &str,
) -> Result<Option<(String, Option<String>)>, StoreError> {
    conn.query_row(
        "SELECT id, caller_agent FROM agent_sessions WHERE owner = ?1 AND kind = 'session' \
         AND json_extract(document, '$.lastRun') = ?2 LIMIT 1",
        params![owner, run_id],
        |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)),
    )
    .optional()
    .map_err(backend)
    .map(|found| found.map(|(id, caller)| (id, (!caller.is_empty()).then_some(caller))))
}
