//! Tests of the SQLite store against real files in temp directories.

use std::path::PathBuf;

use chrono::TimeZone;
use serde_json::json;
use toolsmith_core::{CreatedBy, ExecutionStatus, Permission, ToolKind, ToolStatus};

use super::*;

struct Fixture {
    dir: tempfile::TempDir,
    store: SqliteStore,
}

impl Fixture {
    fn path(&self) -> PathBuf {
        self.dir.path().join("toolsmith.db")
    }
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("toolsmith.db"))
        .await
        .unwrap();
    Fixture { dir, store }
}

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 123_456_000)
        .unwrap()
}

fn tool(owner: &str, name: &str) -> CustomToolRecord {
    CustomToolRecord {
        id: CustomToolRecord::new_id(),
        owner: owner.to_owned(),
        name: name.to_owned(),
        kind: ToolKind::Js,
        description: format!("the {name} tool"),
        parameters: json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        code: "return 1".to_owned(),
        category: Some("Utilities".to_owned()),
        tags: vec!["a".to_owned(), "b".to_owned()],
        permissions: [Permission::Network, Permission::Shell]
            .into_iter()
            .collect(),
        status: ToolStatus::Active,
        requires_approval: true,
        created_by: CreatedBy::Llm,
        version: 1,
        revision: 1,
        usage_count: 0,
        last_used_at: None,
        metadata: json!({"k": [1, 2]}),
        created_at: at(0),
        updated_at: at(0),
    }
}

fn execution(tool: &CustomToolRecord, status: ExecutionStatus, secs: i64) -> ExecutionRecord {
    ExecutionRecord {
        id: format!("exec_{}", uuid_like(secs)),
        tool_id: tool.id.clone(),
        tool_name: tool.name.clone(),
        tool_version: tool.version,
        owner: tool.owner.clone(),
        conversation_id: Some("conv".to_owned()),
        status,
        error_kind: (status != ExecutionStatus::Success).then(|| "timeout".to_owned()),
        error: None,
        duration_ms: 1.5,
        created_at: at(secs),
    }
}

fn uuid_like(n: i64) -> String {
    format!("{n:016x}")
}

#[tokio::test]
async fn every_field_round_trips() {
    let f = fixture().await;
    let mut original = tool("default", "round_trip");
    original.last_used_at = Some(at(5));
    original.category = None;
    let stored = f.store.insert_tool(original.clone()).await.unwrap();
    assert_eq!(stored, original);
    assert_eq!(
        f.store.get_tool("default", &original.id).await.unwrap(),
        Some(original.clone())
    );
    assert_eq!(
        f.store
            .get_tool_by_name("default", "round_trip")
            .await
            .unwrap(),
        Some(original)
    );
    assert_eq!(
        f.store
            .get_tool("default", "tool_0000000000000000")
            .await
            .unwrap(),
        None
    );
    f.store.ping().await.unwrap();
}

#[tokio::test]
async fn names_are_unique_per_owner() {
    let f = fixture().await;
    f.store.insert_tool(tool("alice", "same")).await.unwrap();
    let err = f
        .store
        .insert_tool(tool("alice", "same"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NameTaken { name } if name == "same"),
        "{err}"
    );
    f.store.insert_tool(tool("bob", "same")).await.unwrap();
    assert_eq!(f.store.count_tools("alice").await.unwrap(), 1);
    assert_eq!(f.store.count_tools("bob").await.unwrap(), 1);
}

#[tokio::test]
async fn owners_never_see_each_other() {
    let f = fixture().await;
    let alices = f.store.insert_tool(tool("alice", "secret")).await.unwrap();
    assert_eq!(f.store.get_tool("bob", &alices.id).await.unwrap(), None);
    assert_eq!(
        f.store.get_tool_by_name("bob", "secret").await.unwrap(),
        None
    );
    assert_eq!(
        f.store
            .list_tools(&ToolQuery::owner("bob"))
            .await
            .unwrap()
            .total,
        0
    );
    assert_eq!(
        f.store.tool_stats("bob").await.unwrap(),
        ToolStats::default()
    );
    assert!(
        f.store
            .list_versions("bob", &alices.id)
            .await
            .unwrap()
            .is_empty()
    );
    let err = f
        .store
        .update_tool(
            &CustomToolRecord {
                owner: "bob".into(),
                ..alices.clone()
            },
            1,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    let err = f.store.delete_tool("bob", &alices.id, 1).await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn list_filters_search_and_pages() {
    let f = fixture().await;
    for (name, status, created_by, category, description) in [
        (
            "alpha",
            ToolStatus::Active,
            CreatedBy::User,
            Some("Math"),
            "adds numbers",
        ),
        (
            "beta",
            ToolStatus::Disabled,
            CreatedBy::Llm,
            Some("Math"),
            "subtracts 100%",
        ),
        (
            "gamma",
            ToolStatus::PendingApproval,
            CreatedBy::Llm,
            None,
            "fetches WEATHER",
        ),
        (
            "delta_x",
            ToolStatus::Active,
            CreatedBy::Llm,
            Some("Text"),
            "slugs",
        ),
    ] {
        let mut t = tool("default", name);
        t.status = status;
        t.created_by = created_by;
        t.category = category.map(str::to_owned);
        t.description = description.to_owned();
        f.store.insert_tool(t).await.unwrap();
    }
    let names = |page: ToolPage| page.tools.into_iter().map(|t| t.name).collect::<Vec<_>>();
    let all = f
        .store
        .list_tools(&ToolQuery::owner("default"))
        .await
        .unwrap();
    assert_eq!(all.total, 4);
    assert_eq!(names(all), ["alpha", "beta", "delta_x", "gamma"]);
    let q = ToolQuery {
        status: Some(ToolStatus::Active),
        ..ToolQuery::owner("default")
    };
    assert_eq!(
        names(f.store.list_tools(&q).await.unwrap()),
        ["alpha", "delta_x"]
    );
    let q = ToolQuery {
        category: Some("Math".into()),
        created_by: Some(CreatedBy::Llm),
        ..ToolQuery::owner("default")
    };
    assert_eq!(names(f.store.list_tools(&q).await.unwrap()), ["beta"]);
    let q = ToolQuery {
        search: Some("weather".into()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(names(f.store.list_tools(&q).await.unwrap()), ["gamma"]);
    let q = ToolQuery {
        search: Some("%".into()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(
        names(f.store.list_tools(&q).await.unwrap()),
        ["beta"],
        "% is literal"
    );
    let q = ToolQuery {
        search: Some("_".into()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(
        names(f.store.list_tools(&q).await.unwrap()),
        ["delta_x"],
        "_ is literal"
    );
    let q = ToolQuery {
        search: Some("TEXT".into()),
        ..ToolQuery::owner("default")
    };
    assert_eq!(
        names(f.store.list_tools(&q).await.unwrap()),
        ["delta_x"],
        "category is searched"
    );
    let q = ToolQuery {
        limit: 2,
        offset: 1,
        ..ToolQuery::owner("default")
    };
    let page = f.store.list_tools(&q).await.unwrap();
    assert_eq!(page.total, 4);
    assert_eq!(names(page), ["beta", "delta_x"]);
}

#[tokio::test]
async fn update_is_compare_and_swap_on_the_revision() {
    let f = fixture().await;
    let original = f.store.insert_tool(tool("default", "t")).await.unwrap();
    let mut next = original.clone();
    next.description = "changed".into();
    next.revision = 2;
    next.updated_at = at(10);
    f.store.update_tool(&next, 1).await.unwrap();
    assert_eq!(
        f.store.get_tool("default", &original.id).await.unwrap(),
        Some(next.clone())
    );
    let mut stale = next.clone();
    stale.revision = 3;
    let err = f.store.update_tool(&stale, 1).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::RevisionConflict {
                expected: 1,
                actual: 2
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("expected revision 1") && err.to_string().contains("revision 2")
    );
    let ghost = CustomToolRecord {
        id: "tool_00000000000000ff".into(),
        ..next
    };
    assert!(matches!(
        f.store.update_tool(&ghost, 2).await.unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

#[tokio::test]
async fn renaming_onto_a_taken_name_is_refused() {
    let f = fixture().await;
    f.store.insert_tool(tool("default", "one")).await.unwrap();
    let two = f.store.insert_tool(tool("default", "two")).await.unwrap();
    let renamed = CustomToolRecord {
        name: "one".into(),
        revision: 2,
        ..two.clone()
    };
    let err = f.store.update_tool(&renamed, 1).await.unwrap_err();
    assert!(matches!(err, StoreError::NameTaken { .. }), "{err}");
    assert_eq!(
        f.store.get_tool("default", &two.id).await.unwrap(),
        Some(two)
    );
}

#[tokio::test]
async fn versions_are_appended_when_the_version_moves() {
    let f = fixture().await;
    let v1 = f.store.insert_tool(tool("default", "v")).await.unwrap();
    let v1_same = CustomToolRecord {
        description: "words only".into(),
        revision: 2,
        ..v1.clone()
    };
    f.store.update_tool(&v1_same, 1).await.unwrap();
    let v2 = CustomToolRecord {
        code: "return 2".into(),
        version: 2,
        revision: 3,
        updated_at: at(20),
        ..v1_same
    };
    f.store.update_tool(&v2, 2).await.unwrap();
    let versions = f.store.list_versions("default", &v1.id).await.unwrap();
    let summary: Vec<(i64, &str)> = versions
        .iter()
        .map(|v| (v.version, v.code.as_str()))
        .collect();
    assert_eq!(summary, [(2, "return 2"), (1, "return 1")]);
    assert_eq!(versions[0].created_at, at(20));
    let one = f
        .store
        .get_version("default", &v1.id, 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (one.description.as_str(), one.permissions.clone()),
        ("the v tool", v1.permissions.clone())
    );
    assert_eq!(
        f.store.get_version("default", &v1.id, 3).await.unwrap(),
        None
    );
}

#[tokio::test]
async fn delete_removes_tool_and_history_but_keeps_executions() {
    let f = fixture().await;
    let t = f.store.insert_tool(tool("default", "gone")).await.unwrap();
    f.store
        .record_execution(&execution(&t, ExecutionStatus::Success, 1))
        .await
        .unwrap();
    let err = f.store.delete_tool("default", &t.id, 5).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::RevisionConflict {
                expected: 5,
                actual: 1
            }
        ),
        "{err}"
    );
    f.store.delete_tool("default", &t.id, 1).await.unwrap();
    assert_eq!(f.store.get_tool("default", &t.id).await.unwrap(), None);
    assert!(
        f.store
            .list_versions("default", &t.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        f.store
            .list_executions("default", Some(&t.id), 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(matches!(
        f.store.delete_tool("default", &t.id, 1).await.unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

#[tokio::test]
async fn a_recreated_tool_starts_above_the_old_revisions() {
    let f = fixture().await;
    let first = f
        .store
        .insert_tool(tool("default", "phoenix"))
        .await
        .unwrap();
    let bumped = CustomToolRecord {
        revision: 7,
        ..first.clone()
    };
    f.store.update_tool(&bumped, 1).await.unwrap();
    f.store.delete_tool("default", &first.id, 7).await.unwrap();
    let second = f
        .store
        .insert_tool(tool("default", "phoenix"))
        .await
        .unwrap();
    assert_eq!(second.revision, 8);
    let other_owner = f.store.insert_tool(tool("other", "phoenix")).await.unwrap();
    assert_eq!(other_owner.revision, 1);
}

#[tokio::test]
async fn usage_does_not_touch_the_revision_and_survives_updates() {
    let f = fixture().await;
    let t = f.store.insert_tool(tool("default", "used")).await.unwrap();
    f.store
        .record_usage("default", &t.id, at(30))
        .await
        .unwrap();
    let updated = CustomToolRecord {
        description: "new".into(),
        revision: 2,
        ..t.clone()
    };
    f.store.update_tool(&updated, 1).await.unwrap();
    f.store
        .record_usage("default", &t.id, at(40))
        .await
        .unwrap();
    let now = f.store.get_tool("default", &t.id).await.unwrap().unwrap();
    assert_eq!(
        (now.usage_count, now.last_used_at, now.revision),
        (2, Some(at(40)), 2)
    );
    assert_eq!(now.description, "new");
}

#[tokio::test]
async fn stats_count_by_status_creator_and_usage() {
    let f = fixture().await;
    let statuses = [
        ToolStatus::Active,
        ToolStatus::Active,
        ToolStatus::Disabled,
        ToolStatus::PendingApproval,
        ToolStatus::Rejected,
    ];
    for (idx, status) in statuses.into_iter().enumerate() {
        let mut t = tool("default", &format!("t{idx}"));
        t.status = status;
        t.created_by = if idx == 0 {
            CreatedBy::User
        } else {
            CreatedBy::Llm
        };
        t.usage_count = idx as i64;
        f.store.insert_tool(t).await.unwrap();
    }
    let stats = f.store.tool_stats("default").await.unwrap();
    assert_eq!(
        stats,
        ToolStats {
            total: 5,
            active: 2,
            disabled: 1,
            pending_approval: 1,
            rejected: 1,
            created_by_llm: 4,
            created_by_user: 1,
            total_usage: 10
        }
    );
    let active: Vec<String> = f
        .store
        .active_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(active, ["t0", "t1"]);
}

#[tokio::test]
async fn executions_are_listed_newest_first() {
    let f = fixture().await;
    let a = f.store.insert_tool(tool("default", "a")).await.unwrap();
    let b = f.store.insert_tool(tool("default", "b")).await.unwrap();
    f.store
        .record_execution(&execution(&a, ExecutionStatus::Success, 1))
        .await
        .unwrap();
    f.store
        .record_execution(&execution(&b, ExecutionStatus::Timeout, 2))
        .await
        .unwrap();
    f.store
        .record_execution(&execution(&a, ExecutionStatus::Error, 3))
        .await
        .unwrap();
    let all = f.store.list_executions("default", None, 10).await.unwrap();
    let order: Vec<(&str, ExecutionStatus)> = all
        .iter()
        .map(|e| (e.tool_name.as_str(), e.status))
        .collect();
    assert_eq!(
        order,
        [
            ("a", ExecutionStatus::Error),
            ("b", ExecutionStatus::Timeout),
            ("a", ExecutionStatus::Success)
        ]
    );
    assert_eq!(all[1], execution(&b, ExecutionStatus::Timeout, 2));
    assert_eq!(
        f.store
            .list_executions("default", Some(&a.id), 1)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        f.store
            .list_executions("stranger", None, 10)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn data_survives_a_reopen() {
    let f = fixture().await;
    let t = f.store.insert_tool(tool("default", "kept")).await.unwrap();
    let path = f.path();
    drop(f.store);
    let again = SqliteStore::open(&path).await.unwrap();
    assert_eq!(again.get_tool("default", &t.id).await.unwrap(), Some(t));
    drop(f.dir);
}

#[tokio::test]
async fn garbage_files_are_refused_and_left_untouched() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        (
            "text.db",
            b"this is not a database, just some text\n".repeat(200),
        ),
        (
            "random.db",
            (0..8192u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect(),
        ),
        ("header_only.db", {
            let mut b = b"SQLite format 3\0".to_vec();
            b.extend(std::iter::repeat_n(0xAB, 4096));
            b
        }),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let err = SqliteStore::open(&path).await.unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{name}: {err}");
        assert!(err.to_string().contains(name), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was modified");
    }
}

#[tokio::test]
async fn another_programs_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("foreign.db");
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');")
            .unwrap();
    }
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert!(err.to_string().contains("another program"), "{err}");
}

#[tokio::test]
async fn a_newer_schema_is_refused() {
    let f = fixture().await;
    let path = f.path();
    drop(f.store);
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let err = SqliteStore::open(&path).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::UnknownSchema {
                found: 99,
                supported: 1,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("newer toolsmith"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_all_land() {
    let f = fixture().await;
    let store = std::sync::Arc::new(f.store);
    let mut tasks = Vec::new();
    for task in 0..8 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..25 {
                let t = store
                    .insert_tool(tool("default", &format!("t{task}_{i}")))
                    .await
                    .unwrap();
                store.record_usage("default", &t.id, at(i)).await.unwrap();
                store.get_tool("default", &t.id).await.unwrap().unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let stats = store.tool_stats("default").await.unwrap();
    assert_eq!((stats.total, stats.total_usage), (200, 200));
}

/// Runs only as the child of `sigkill_during_creates_loses_no_acknowledged_tool`: creates 1,000
/// tools in the store named by the environment and prints each id once its insert returned.
#[tokio::test]
async fn crash_child() {
    let Ok(path) = std::env::var("TOOLSMITH_STORE_CRASH_CHILD") else {
        return;
    };
    let store = SqliteStore::open(std::path::Path::new(&path))
        .await
        .unwrap();
    for i in 0..1000 {
        let t = store
            .insert_tool(tool("default", &format!("t{i}")))
            .await
            .unwrap();
        println!("ACK {}", t.id);
    }
    println!("DONE");
}

#[tokio::test]
async fn sigkill_during_creates_loses_no_acknowledged_tool() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.db");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "sqlite::tests::crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("TOOLSMITH_STORE_CRASH_CHILD", &path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut acknowledged = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(id) = line.strip_prefix("ACK ") {
            acknowledged.push(id.to_owned());
            if acknowledged.len() == 300 {
                child.kill().unwrap(); // SIGKILL on Unix
                break;
            }
        }
    }
    child.wait().unwrap();
    assert_eq!(acknowledged.len(), 300, "the child stopped early");
    let store = SqliteStore::open(&path).await.unwrap();
    for id in &acknowledged {
        assert!(
            store.get_tool("default", id).await.unwrap().is_some(),
            "acknowledged tool {id} was lost"
        );
    }
    let check: String = Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    assert!(store.count_tools("default").await.unwrap() >= 300);
}
