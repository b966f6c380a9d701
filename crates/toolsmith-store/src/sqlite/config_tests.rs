//! Tests of the Config Center tables against real SQLite files: uniqueness, owner isolation,
//! defaults, cascades, revisions under concurrency, dependency sync, huge values, migration.

use rusqlite::Connection;

use super::*;
use crate::contract::config::{entry, multi, service};
use crate::{ConfigStore, GovernanceStore, RecordStore};

struct Fixture {
    dir: tempfile::TempDir,
    store: SqliteStore,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("toolsmith.db"))
        .await
        .unwrap();
    Fixture { dir, store }
}

#[tokio::test]
async fn the_database_itself_refuses_a_second_default() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    f.store
        .create_config_entry("alice", entry(&s, "one", 1))
        .await
        .unwrap();
    let two = f
        .store
        .create_config_entry("alice", entry(&s, "two", 2))
        .await
        .unwrap();
    let id = two.id.clone();
    let err = f
        .store
        .write(move |conn| {
            conn.execute(
                "UPDATE config_entries SET is_default = 1 WHERE id = ?1",
                [&id],
            )
            .map_err(rows::backend)
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("UNIQUE"), "{err}");
}

/// What the migrations from tool tasks on add (tool tasks, agents, the client counts, prompts,
/// sessions, the `created_at` index), undone first in both old-schema fixtures below.
const UNDO_LATER_MIGRATIONS: &str = "DROP TABLE organization_members; DROP TABLE organizations; \
     DROP INDEX idx_tool_executions_owner_source; \
     ALTER TABLE tool_executions DROP COLUMN source; \
     DROP TABLE vector_items; DROP TABLE vector_collections; \
     DROP TABLE handoff_routes; DROP TABLE delegations; DROP TABLE agent_links; \
     DROP INDEX idx_agent_runs_lease; \
     ALTER TABLE agent_runs DROP COLUMN lease_until; \
     DROP INDEX idx_tool_executions_created; \
     DROP TABLE agent_session_messages; DROP TABLE agent_sessions; \
     DROP TABLE prompt_versions; DROP TABLE prompts; \
     ALTER TABLE tool_executions DROP COLUMN client_logs; \
     ALTER TABLE tool_executions DROP COLUMN client_progress; \
     ALTER TABLE tool_executions DROP COLUMN client_samples; \
     ALTER TABLE tool_executions DROP COLUMN client_elicitations; \
     ALTER TABLE tool_executions DROP COLUMN client_refused; \
     DROP TABLE agent_run_steps; DROP TABLE agent_runs; DROP TABLE agent_versions; \
     DROP TABLE agents; DROP TABLE tool_tasks;";

#[tokio::test]
async fn a_version_2_store_is_migrated_to_the_config_and_governance_tables() {
    let f = fixture().await;
    let path = f.dir.path().join("toolsmith.db");
    drop(f.store);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(UNDO_LATER_MIGRATIONS).unwrap();
        conn.execute_batch(
            "DROP TABLE mcp_access_requests; DROP TABLE mcp_grants; DROP TABLE mcp_servers; \
             DROP TABLE data_record_counts; DROP TABLE data_records_fts; DROP TABLE data_records; \
             DROP TABLE execution_approvals; DROP TABLE approval_grants; DROP TABLE audit_log; \
             DROP TABLE policies; ALTER TABLE api_tokens DROP COLUMN agent_id; \
             DROP INDEX idx_config_entries_one_default; DROP TABLE config_entries; \
             DROP TABLE config_services; DROP INDEX idx_tool_executions_owner_agent; \
             ALTER TABLE tool_executions DROP COLUMN agent_id; ALTER TABLE tool_versions DROP COLUMN metadata; PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    let s = store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    store
        .create_config_entry("alice", entry(&s, "default", 1))
        .await
        .unwrap();
    let version: i64 = store
        .read(|conn| {
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(rows::backend)
        })
        .await
        .unwrap();
    assert_eq!(version, schema::SCHEMA_VERSION);
    assert!(store.get_policy().await.unwrap().is_none());
    assert_eq!(store.count_pending_approvals(Utc::now()).await.unwrap(), 0);
    // The records table and its full-text index came with the migration.
    let scope = crate::RecordScope::new("alice", None);
    assert_eq!(store.record_stats(&scope, "memory").await.unwrap().total, 0);
    let query = crate::RecordQuery {
        owner: "alice".to_owned(),
        collection: "memory".to_owned(),
        text: Some("anything".to_owned()),
        limit: 1,
        ..crate::RecordQuery::default()
    };
    assert!(store.query_records(&query).await.unwrap().is_empty());
}

/// A version 8 store (records, no kept counts) gets its counts from the records it holds.
#[tokio::test]
async fn a_version_8_store_counts_the_records_it_already_holds() {
    let f = fixture().await;
    let path = f.dir.path().join("toolsmith.db");
    for (owner, agent, id) in [
        ("alice", "", "m1"),
        ("alice", "", "m2"),
        ("alice", "a", "m3"),
    ] {
        let scope = crate::RecordScope::new(owner, (!agent.is_empty()).then_some(agent));
        let record = crate::DataRecord::new(
            &scope,
            "memory".to_owned(),
            id.to_owned(),
            serde_json::json!({}),
            String::new(),
        );
        f.store.put_record(record, 100).await.unwrap();
    }
    drop(f.store);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(UNDO_LATER_MIGRATIONS).unwrap();
        conn.execute_batch(
            "DROP TRIGGER data_record_counts_insert; DROP TRIGGER data_record_counts_delete; \
             DROP TABLE data_record_counts; ALTER TABLE tool_versions DROP COLUMN metadata; PRAGMA user_version = 8;",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    let tally = |agent| {
        let store = &store;
        async move {
            let scope = crate::RecordScope::new("alice", agent);
            store.record_tally(&scope, "memory").await.unwrap().total
        }
    };
    assert_eq!((tally(None).await, tally(Some("a")).await), (2, 1));
    // And it keeps counting from there.
    let scope = crate::RecordScope::new("alice", None);
    assert!(store.delete_record(&scope, "memory", "m1").await.unwrap());
    assert_eq!(tally(None).await, 1);
}

#[tokio::test]
async fn unreadable_rows_are_reported_as_corrupt_not_panics() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    let e = f
        .store
        .create_config_entry("alice", entry(&s, "default", 1))
        .await
        .unwrap();
    let id = e.id.clone();
    f.store
        .write(move |conn| {
            conn.execute(
                "UPDATE config_entries SET field_values = '{\"api_key\": {\"plain\": 1}}' WHERE id = ?1",
                [&id],
            )
            .map_err(rows::backend)
        })
        .await
        .unwrap();
    let err = f.store.get_config_entry("alice", &e.id).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { path, reason } if path.ends_with("toolsmith.db") && reason.contains("config_entries")),
        "{err}"
    );
}
