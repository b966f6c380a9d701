//! Agent links, delegations and handoff routes in PostgreSQL (`agent_links`, `delegations`,
//! `handoff_routes`). A new link and a new delegation take a per-owner advisory lock (the
//! existing link, the running delegations of the link and of the target are counted before the
//! insert), so instances cannot race past either; a delegation's update is conditional on its
//! still running, so one cancelled on one instance stays cancelled.

use deadpool_postgres::Client;
use tokio_postgres::{GenericClient, Row};
use toolsmith_core::delegation::{
    AgentLinkRecord, DelegationAdmission, DelegationQuery, DelegationRecord, HandoffRoute,
};

use super::errors::pg;
use super::rows::{col, micros};
use crate::StoreError;
use crate::delegation_rows::{STILL_RUNNING, delegation, document, read};

store_on_pool! {
    impl DelegationStore |client, this_instance| {
        fn insert_agent_link(link: &AgentLinkRecord) -> bool = insert_link(&mut client, link);
        fn list_agent_links(owner: &str) -> Vec<AgentLinkRecord> = list_links(&**client, owner);
        fn delete_agent_link(owner: &str, id: &str) -> bool = delete_link(&**client, owner, id);
        fn insert_delegation_within(
            delegation: &DelegationRecord, link_max: u32, agent_max: u32
        ) -> DelegationAdmission
            = insert_delegation(&mut client, delegation, link_max, agent_max);
        fn update_delegation(delegation: &DelegationRecord) -> bool
            = update_delegation(&**client, delegation);
        fn get_delegation(owner: &str, id: &str) -> Option<DelegationRecord>
            = one(&**client, "id", owner, id);
        fn list_delegations(owner: &str, query: &DelegationQuery) -> Vec<DelegationRecord>
            = list_delegations(&**client, owner, query);
        fn delegation_of_run(owner: &str, run_id: &str) -> Option<DelegationRecord>
            = one(&**client, "run_id", owner, run_id);
        fn put_handoff_route(route: &HandoffRoute) -> () = put_route(&**client, route);
        fn get_handoff_route(owner: &str, session_id: &str) -> Option<HandoffRoute>
            = route_where(&**client, owner, "session_id", session_id);
        fn handoff_route_to(owner: &str, target_session: &str) -> Option<HandoffRoute>
            = route_where(&**client, owner, "target_session", target_session);
        fn delete_handoff_route(owner: &str, session_id: &str) -> bool
            = delete_route(&**client, owner, session_id);
        fn session_of_run(owner: &str, run_id: &str) -> Option<(String, Option<String>)>
            = session_of_run(&**client, owner, run_id);
    }
}

async fn count(
    tx: &impl GenericClient,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<i64, StoreError> {
    col(&tx.query_one(sql, params).await.map_err(pg)?, "n")
}

async fn insert_link(client: &mut Client, link: &AgentLinkRecord) -> Result<bool, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    super::lock(&*tx, &format!("toolsmith-delegation:{}", link.owner)).await?;
    let linked = count(
        &*tx,
        "SELECT count(*) AS n FROM agent_links WHERE owner = $1 AND \
         ((source_agent = $2 AND target_agent = $3) OR (source_agent = $3 AND target_agent = $2))",
        &[&link.owner, &link.source_agent, &link.target_agent],
    )
    .await?;
    if linked > 0 {
        return Ok(false);
    }
    tx.execute(
        "INSERT INTO agent_links (id, owner, source_agent, target_agent, document, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &link.id,
            &link.owner,
            &link.source_agent,
            &link.target_agent,
            &document(link),
            &micros(link.created_at),
        ],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(true)
}

async fn list_links(
    client: &impl GenericClient,
    owner: &str,
) -> Result<Vec<AgentLinkRecord>, StoreError> {
    let rows = client
        .query(
            "SELECT id, document FROM agent_links WHERE owner = $1 ORDER BY created_at, id",
            &[&owner],
        )
        .await
        .map_err(pg)?;
    rows.iter()
        .map(|row| {
            let id: String = col(row, "id")?;
            let text: String = col(row, "document")?;
            read("agent_links", &id, &text)
        })
        .collect()
}

async fn delete_link(
    client: &impl GenericClient,
    owner: &str,
    id: &str,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            "DELETE FROM agent_links WHERE owner = $1 AND id = $2",
            &[&owner, &id],
        )
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

async fn insert_delegation(
    client: &mut Client,
    d: &DelegationRecord,
    link_max: u32,
    agent_max: u32,
) -> Result<DelegationAdmission, StoreError> {
    let tx = client.transaction().await.map_err(pg)?;
    super::lock(&*tx, &format!("toolsmith-delegation:{}", d.owner)).await?;
    let on_link = count(
        &*tx,
        &format!("SELECT count(*) AS n FROM delegations WHERE link_id = $1 AND {STILL_RUNNING}"),
        &[&d.link_id],
    )
    .await?;
    if on_link >= i64::from(link_max) {
        return Ok(DelegationAdmission::LinkAtCap(link_max));
    }
    let on_agent = count(
        &*tx,
        &format!(
            "SELECT count(*) AS n FROM delegations WHERE owner = $1 AND target_agent = $2 AND \
             {STILL_RUNNING}"
        ),
        &[&d.owner, &d.target_agent],
    )
    .await?;
    if on_agent >= i64::from(agent_max) {
        return Ok(DelegationAdmission::AgentAtCap(agent_max));
    }
    tx.execute(
        "INSERT INTO delegations (id, owner, source_agent, target_agent, link_id, run_id, \
         status, document, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        &[
            &d.id,
            &d.owner,
            &d.source_agent,
            &d.target_agent,
            &d.link_id,
            &d.run_id.as_deref().unwrap_or(""),
            &d.status.as_str(),
            &document(d),
            &micros(d.created_at),
            &micros(d.updated_at),
        ],
    )
    .await
    .map_err(pg)?;
    tx.commit().await.map_err(pg)?;
    Ok(DelegationAdmission::Started)
}

async fn update_delegation(
    client: &impl GenericClient,
    d: &DelegationRecord,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            "UPDATE delegations SET run_id = $2, status = $3, document = $4, updated_at = $5 \
             WHERE id = $1 AND status = 'running'",
            &[
                &d.id,
                &d.run_id.as_deref().unwrap_or(""),
                &d.status.as_str(),
                &document(d),
                &micros(d.updated_at),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

fn delegation_row(row: &Row) -> Result<DelegationRecord, StoreError> {
    let id: String = col(row, "id")?;
    let status: String = col(row, "status")?;
    let text: String = col(row, "document")?;
    delegation(&id, &status, &text)
}

async fn one(
    client: &impl GenericClient,
    filter: &str,
    owner: &str,
    value: &str,
) -> Result<Option<DelegationRecord>, StoreError> {
    let filter = if filter == "id" { "id" } else { "run_id" };
    client
        .query_opt(
            &format!(
                "SELECT id, status, document FROM delegations WHERE owner = $1 AND {filter} = $2 \
                 ORDER BY created_at DESC LIMIT 1"
            ),
            &[&owner, &value],
        )
        .await
        .map_err(pg)?
        .as_ref()
        .map(delegation_row)
        .transpose()
}

async fn list_delegations(
    client: &impl GenericClient,
    owner: &str,
    query: &DelegationQuery,
) -> Result<Vec<DelegationRecord>, StoreError> {
    let rows = client
        .query(
            "SELECT id, status, document FROM delegations WHERE owner = $1 \
               AND ($2 = '' OR source_agent = $2 OR target_agent = $2) \
               AND (NOT $3 OR status = 'running') \
             ORDER BY created_at DESC, id DESC LIMIT $4",
            &[
                &owner,
                &query.agent.as_deref().unwrap_or(""),
                &query.active,
                &i64::from(query.limit),
            ],
        )
        .await
        .map_err(pg)?;
    rows.iter().map(delegation_row).collect()
}

async fn put_route(client: &impl GenericClient, route: &HandoffRoute) -> Result<(), StoreError> {
    client
        .execute(
            "INSERT INTO handoff_routes (session_id, owner, target_session, document, created_at) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (session_id) DO UPDATE SET target_session = excluded.target_session, \
             document = excluded.document, created_at = excluded.created_at",
            &[
                &route.session_id,
                &route.owner,
                &route.target_session,
                &document(route),
                &micros(route.created_at),
            ],
        )
        .await
        .map_err(pg)?;
    Ok(())
}

async fn route_where(
    client: &impl GenericClient,
    owner: &str,
    column: &str,
    value: &str,
) -> Result<Option<HandoffRoute>, StoreError> {
    let column = if column == "session_id" {
        "session_id"
    } else {
        "target_session"
    };
    let row = client
        .query_opt(
            &format!(
                "SELECT session_id, document FROM handoff_routes \
                 WHERE owner = $1 AND {column} = $2 LIMIT 1"
            ),
            &[&owner, &value],
        )
        .await
        .map_err(pg)?;
    row.map(|row| {
        let id: String = col(&row, "session_id")?;
        let text: String = col(&row, "document")?;
        read("handoff_routes", &id, &text)
    })
    .transpose()
}

async fn delete_route(
    client: &impl GenericClient,
    owner: &str,
    session_id: &str,
) -> Result<bool, StoreError> {
    let n = client
        .execute(
            "DELETE FROM handoff_routes WHERE owner = $1 AND session_id = $2",
            &[&owner, &session_id],
        )
        .await
        .map_err(pg)?;
    Ok(n > 0)
}

async fn session_of_run(
    client: &impl GenericClient,
    owner: &str,
    run_id: &str,
) -> Result<Option<(String, Option<String>)>, StoreError> {
    let row = client
        .query_opt(
            "SELECT id, caller_agent FROM agent_sessions WHERE owner = $1 AND kind = 'session' \
             AND (document::jsonb ->> 'lastRun') = $2 LIMIT 1",
            &[&owner, &run_id],
        )
        .await
        .map_err(pg)?;
    row.map(|row| {
        let id: String = col(&row, "id")?;
        let caller: String = col(&row, "caller_agent")?;
        Ok((id, (!caller.is_empty()).then_some(caller)))
    })
    .transpose()
}
