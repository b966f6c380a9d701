//! Durability: a store killed with SIGKILL in the middle of a stream of creates still opens, is
//! intact, and holds every tool whose `insert_tool` had returned.
//!
//! The test re-executes its own binary as the child (`--exact crash::crash_child` with
//! `TOOLSMITH_STORE_CRASH_CHILD` naming the database): the child creates 1,000 tools and prints
//! `ACK <id>` after each insert returned; the parent kills it after 300 acknowledgements.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use chrono::Utc;
use serde_json::json;
use toolsmith_core::{CreatedBy, CustomToolRecord, ToolKind, ToolStatus};
use toolsmith_store::{SqliteStore, ToolStore};

const CHILD_ENV: &str = "TOOLSMITH_STORE_CRASH_CHILD";

fn tool(name: &str) -> CustomToolRecord {
    let now = Utc::now();
    CustomToolRecord {
        id: CustomToolRecord::new_id(),
        owner: "default".to_owned(),
        name: name.to_owned(),
        kind: ToolKind::Js,
        description: format!("tool {name}"),
        parameters: json!({"type": "object", "properties": {}}),
        code: "return args;".repeat(20),
        category: Some("crash".to_owned()),
        tags: vec!["x".to_owned()],
        permissions: Default::default(),
        status: ToolStatus::Active,
        requires_approval: false,
        created_by: CreatedBy::User,
        version: 1,
        revision: 1,
        usage_count: 0,
        last_used_at: None,
        metadata: json!({}),
        created_at: now,
        updated_at: now,
    }
}

/// Creates `n` tools one by one, reporting each id once its insert has returned.
async fn create_and_acknowledge(path: &Path, n: usize, mut ack: impl FnMut(&str)) {
    let store = SqliteStore::open(path).await.unwrap();
    for i in 0..n {
        let stored = store.insert_tool(tool(&format!("t{i:04}"))).await.unwrap();
        ack(&stored.id);
    }
}

/// The child's side. Run directly (without the variable) it does a short run against a temp
/// store and checks it, so it is a real test and not an empty pass.
#[tokio::test]
async fn crash_child() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        create_and_acknowledge(Path::new(&path), 1000, |id| println!("ACK {id}")).await;
        println!("DONE");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("short.db");
    let mut ids = Vec::new();
    create_and_acknowledge(&path, 20, |id| ids.push(id.to_owned())).await;
    let store = SqliteStore::open(&path).await.unwrap();
    assert_eq!(store.count_tools("default").await.unwrap(), 20);
    for id in &ids {
        assert!(store.get_tool("default", id).await.unwrap().is_some());
    }
}

#[tokio::test]
async fn sigkill_during_creates_loses_no_acknowledged_tool() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.db");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash::crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut acknowledged = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(id) = line.strip_prefix("ACK ") {
            acknowledged.push(id.to_owned());
            if acknowledged.len() == 300 {
                child.kill().unwrap(); // SIGKILL on Unix
                break;
            }
        }
        assert_ne!(line, "DONE", "the child finished before it was killed");
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the child was not killed: {status}");
    assert_eq!(acknowledged.len(), 300, "the child stopped early");

    // The WAL of the killed process is still there; opening recovers it.
    let store = SqliteStore::open(&path).await.unwrap();
    for id in &acknowledged {
        assert!(
            store.get_tool("default", id).await.unwrap().is_some(),
            "acknowledged tool {id} was lost"
        );
    }
    let total = store.count_tools("default").await.unwrap();
    assert!(
        (300..=1000).contains(&total),
        "{total} tools after the crash"
    );
    eprintln!("{total} tools stored when the child was killed");
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
}
