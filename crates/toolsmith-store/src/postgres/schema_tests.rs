//! Migrating a PostgreSQL database written by an older build: a database created at schema
//! version 1 (the first migration's frozen SQL, rows written as version 1 wrote them) opened by
//! this build is migrated to the current version by instances starting together, and keeps
//! every row.

use chrono::{TimeZone, Utc};
use tokio_postgres::NoTls;
use toolsmith_core::ExecutionStatus;

use super::schema::{MIGRATIONS, SCHEMA_VERSION};
use crate::testkit::pg_or_skip;
use crate::{PgOptions, PgStore, RecordStore, ToolStore};

/// Version 1's schema and the rows a version 1 build wrote: two tools (one at version 2 with
/// its history) and three executions (no `agent_id` column yet).
const VERSION_1_ROWS: &str = r#"
INSERT INTO custom_tools (id, owner, name, kind, description, parameters, code, status,
    created_by, version, revision, usage_count, last_used_at, created_at, updated_at)
VALUES
 ('tool_00000000000000a1', 'alice', 'first', 'js', 'd1', '{"type":"object"}', 'return 1',
  'active', 'user', 2, 3, 3, '2026-01-01T00:00:03Z', '2026-01-01T00:00:00Z', '2026-01-01T00:00:02Z'),
 ('tool_00000000000000b2', 'bob', 'second', 'js', 'd2', '{"type":"object"}', 'return 2',
  'disabled', 'llm', 1, 1, 0, NULL, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z');
INSERT INTO tool_versions (tool_id, version, description, parameters, code, permissions, created_at)
VALUES
 ('tool_00000000000000a1', 1, 'd1', '{"type":"object"}', 'return 0', '[]', '2026-01-01T00:00:00Z'),
 ('tool_00000000000000a1', 2, 'd1', '{"type":"object"}', 'return 1', '[]', '2026-01-01T00:00:02Z'),
 ('tool_00000000000000b2', 1, 'd2', '{"type":"object"}', 'return 2', '[]', '2026-01-01T00:00:00Z');
INSERT INTO tool_executions (id, tool_id, tool_name, tool_version, owner, conversation_id,
    status, error_kind, error, duration_ms, created_at)
VALUES
 ('exec_0000000000000001', 'tool_00000000000000a1', 'first', 1, 'alice', 'conv-1',
  'success', NULL, NULL, 1.5, '2026-01-01T00:00:01Z'),
 ('exec_0000000000000002', 'tool_00000000000000a1', 'first', 2, 'alice', NULL,
  'timeout', 'timeout', 'took too long', 5000, '2026-01-01T00:00:02Z'),
 ('exec_0000000000000003', 'tool_00000000000000a1', 'first', 2, 'alice', NULL,
  'success', NULL, NULL, 2.25, '2026-01-01T00:00:03Z');
"#;

async fn sql(url: &str, text: &str) -> Vec<tokio_postgres::SimpleQueryMessage> {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await.unwrap();
    let driver = tokio::spawn(conn);
    let out = client.simple_query(text).await.unwrap();
    drop(client);
    let _ = driver.await;
    out
}

async fn schema_version(url: &str) -> String {
    let rows = sql(url, "SELECT version FROM toolsmith_schema").await;
    rows.iter()
        .find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
            _ => None,
        })
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_database_with_executions_migrates_and_keeps_every_row() {
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().unwrap();
    sql(
        &url,
        &format!(
            "BEGIN; CREATE TABLE toolsmith_schema (id INTEGER PRIMARY KEY CHECK (id = 1), \
             version BIGINT NOT NULL); INSERT INTO toolsmith_schema VALUES (1, 1); {} {} COMMIT;",
            MIGRATIONS[0], VERSION_1_ROWS
        ),
    )
    .await;
    assert_eq!(schema_version(&url).await, "1");

    // Two instances start together on the old database: one migrates, both open.
    let options = PgOptions::default();
    let (a, b) = tokio::join!(
        PgStore::connect(&url, &options),
        PgStore::connect(&url, &options)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(schema_version(&url).await, SCHEMA_VERSION.to_string());

    // Every row is there, as written.
    let first = a
        .get_tool("alice", "tool_00000000000000a1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (first.version, first.revision, first.usage_count),
        (2, 3, 3)
    );
    assert_eq!(
        first.last_used_at,
        Some(Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 3).unwrap())
    );
    assert!(
        b.get_tool("bob", "tool_00000000000000b2")
            .await
            .unwrap()
            .is_some()
    );
    let versions = a
        .list_versions("alice", "tool_00000000000000a1")
        .await
        .unwrap();
    assert_eq!(
        versions.iter().map(|v| v.version).collect::<Vec<_>>(),
        [2, 1]
    );
    // Versions stored before versions kept the metadata read as `{}`.
    assert!(
        versions.iter().all(|v| v.metadata == serde_json::json!({})),
        "{versions:?}"
    );
    let runs = b
        .list_executions("alice", None, None, None, 100)
        .await
        .unwrap();
    assert_eq!(
        runs.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        [
            "exec_0000000000000003",
            "exec_0000000000000002",
            "exec_0000000000000001"
        ]
    );
    assert!(runs.iter().all(|r| r.agent_id.is_none()));
    let timed_out = &runs[1];
    assert_eq!(timed_out.status, ExecutionStatus::Timeout);
    assert_eq!(timed_out.error.as_deref(), Some("took too long"));
    assert_eq!(timed_out.duration_ms, 5000.0);
    assert_eq!(runs[2].conversation_id.as_deref(), Some("conv-1"));

    // The new column works: an execution with an agent, filtered by it.
    let mut new = runs[0].clone();
    new.id = "exec_0000000000000004".to_owned();
    new.agent_id = Some("support".to_owned());
    a.record_executions(std::slice::from_ref(&new))
        .await
        .unwrap();
    let by_agent = b
        .list_executions("alice", None, Some("support"), None, 100)
        .await
        .unwrap();
    assert_eq!(by_agent.len(), 1);
    assert_eq!(by_agent[0].id, "exec_0000000000000004");
    assert_eq!(
        b.list_executions("alice", None, None, None, 100)
            .await
            .unwrap()
            .len(),
        4
    );

    // Opening it again changes nothing.
    drop(PgStore::connect(&url, &options).await.unwrap());
    assert_eq!(schema_version(&url).await, SCHEMA_VERSION.to_string());
}

/// A version 6 database (records, no kept counts) gets its counts from the records it holds,
/// and keeps counting from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_6_database_counts_the_records_it_already_holds() {
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().unwrap();
    sql(
        &url,
        &format!(
            "BEGIN; CREATE TABLE toolsmith_schema (id INTEGER PRIMARY KEY CHECK (id = 1), \
             version BIGINT NOT NULL); INSERT INTO toolsmith_schema VALUES (1, 6); {} \
             INSERT INTO data_records (id, collection, owner, agent, document, created_at, \
             updated_at) VALUES \
             ('m1', 'memory', 'alice', '', '{{}}', now(), now()), \
             ('m2', 'memory', 'alice', '', '{{}}', now(), now()), \
             ('m3', 'memory', 'alice', 'a', '{{}}', now(), now()); COMMIT;",
            MIGRATIONS[..6].join("\n")
        ),
    )
    .await;
    let store = PgStore::connect(&url, &PgOptions::default()).await.unwrap();
    assert_eq!(schema_version(&url).await, SCHEMA_VERSION.to_string());
    let total = |agent| {
        let store = &store;
        async move {
            let scope = crate::RecordScope::new("alice", agent);
            store.record_tally(&scope, "memory").await.unwrap().total
        }
    };
    assert_eq!((total(None).await, total(Some("a")).await), (2, 1));
    let scope = crate::RecordScope::new("alice", None);
    assert!(store.delete_record(&scope, "memory", "m1").await.unwrap());
    assert_eq!(total(None).await, 1);
}
