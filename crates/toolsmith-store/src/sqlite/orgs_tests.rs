//! Issue 41's migration test: a store made by the release before organisations (schema 20)
//! opens with this build and keeps every tool, prompt, Config Center service, policy and agent
//! as it was, owned as before; the organisation tables come empty.

use rusqlite::Connection;

use super::*;
use crate::contract::{agents::agent, config::service, prompts::prompt, tools::tool};
use crate::{AgentStore, ConfigStore, GovernanceStore, OrgStore, PromptStore, ToolStore};

/// The schema of a file, as SQLite keeps it (every table, index and trigger with its SQL).
fn schema_of(conn: &Connection) -> Vec<(String, String, Option<String>)> {
    let mut stmt = conn
        .prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test]
async fn a_store_of_the_release_before_organisations_keeps_everything_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolsmith.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let greet = store.insert_tool(tool("alice", "greet")).await.unwrap();
    let bobs = store.insert_tool(tool("bob", "greet")).await.unwrap();
    let review = prompt("prm_1", "alice", "review");
    assert!(store.insert_prompt(&review).await.unwrap());
    let weather = store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    store
        .put_policy(
            &serde_json::json!({"version": 1, "rules": []}),
            Some(0),
            "alice",
            crate::contract::config::at(5),
        )
        .await
        .unwrap()
        .unwrap();
    let policy = store.get_policy().await.unwrap();
    assert!(policy.is_some());
    let researcher = agent("agt_1", "alice", "researcher");
    assert!(store.insert_agent(&researcher).await.unwrap());
    drop(store);

    // Back to schema 20 exactly: what migration 21 added is taken out, and the file's schema is
    // then the one the first 20 migrations make on a new file — today's release's.
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE organization_members; DROP TABLE organizations; PRAGMA user_version = 20;",
        )
        .unwrap();
        let release = Connection::open_in_memory().unwrap();
        for sql in &schema::MIGRATIONS[..20] {
            release.execute_batch(sql).unwrap();
        }
        assert_eq!(schema_of(&conn), schema_of(&release));
    }

    let store = SqliteStore::open(&path).await.unwrap();
    let version: i64 = store
        .read(|conn| {
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(rows::backend)
        })
        .await
        .unwrap();
    assert_eq!(version, schema::SCHEMA_VERSION);
    assert_eq!(
        store.get_tool("alice", &greet.id).await.unwrap().as_ref(),
        Some(&greet)
    );
    assert_eq!(
        store.get_tool("bob", &bobs.id).await.unwrap().as_ref(),
        Some(&bobs)
    );
    assert_eq!(store.get_tool("bob", &greet.id).await.unwrap(), None);
    assert_eq!(
        store.get_prompt("alice", "review").await.unwrap().as_ref(),
        Some(&review)
    );
    assert_eq!(
        store
            .get_config_service_by_name("alice", "weatherapi")
            .await
            .unwrap()
            .map(|s| (s.id, s.owner)),
        Some((weather.id, "alice".to_owned()))
    );
    assert_eq!(store.get_policy().await.unwrap(), policy);
    assert_eq!(
        store
            .get_agent("alice", "researcher")
            .await
            .unwrap()
            .as_ref(),
        Some(&researcher)
    );
    assert!(store.user_organizations("alice").await.unwrap().is_empty());
    assert_eq!(store.get_organization("alice").await.unwrap(), None);
}
