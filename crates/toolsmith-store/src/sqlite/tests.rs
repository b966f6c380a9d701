//! Tests of the SQLite store against real files in temp directories.

use std::path::PathBuf;

use super::*;
use crate::contract::tools::tool;
use crate::{Store, ToolQuery, ToolStore};

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

/// Writes raw SQL into the store's file behind its back (to damage rows).
fn raw(path: &std::path::Path, sql: &str) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(sql).unwrap();
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
                supported: schema::SCHEMA_VERSION,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("newer toolsmith"), "{err}");
}

#[tokio::test]
async fn unreadable_rows_are_reported_with_their_id() {
    let f = fixture().await;
    let t = f
        .store
        .insert_tool(tool("default", "broken"))
        .await
        .unwrap();
    raw(
        &f.path(),
        &format!(
            "UPDATE custom_tools SET tags = 'not json' WHERE id = '{}'",
            t.id
        ),
    );
    let err = f.store.get_tool("default", &t.id).await.unwrap_err();
    let StoreError::Corrupt { path, reason } = &err else {
        panic!("expected Corrupt, got {err}");
    };
    assert_eq!(path, &f.path().display().to_string());
    assert!(
        reason.contains(&t.id) && reason.contains("tags") && reason.contains("custom_tools"),
        "{reason}"
    );
    let err = f
        .store
        .list_tools(&ToolQuery::owner("default"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");

    // A status outside the CHECK constraint (written with checks off) is reported the same way.
    let other = f.store.insert_tool(tool("default", "other")).await.unwrap();
    raw(
        &f.path(),
        &format!(
            "PRAGMA ignore_check_constraints = ON; \
             UPDATE custom_tools SET status = 'zombie' WHERE id = '{}'",
            other.id
        ),
    );
    let err = f.store.get_tool("default", &other.id).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { reason, .. }
            if reason.contains(&other.id) && reason.contains("zombie")),
        "{err}"
    );
    let v = f
        .store
        .insert_tool(tool("default", "versioned"))
        .await
        .unwrap();
    raw(
        &f.path(),
        &format!(
            "UPDATE tool_versions SET parameters = '{{' WHERE tool_id = '{}'",
            v.id
        ),
    );
    let err = f.store.list_versions("default", &v.id).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { reason, .. }
            if reason.contains(&v.id) && reason.contains("parameters")),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_do_not_wait_for_a_write_in_progress() {
    let f = fixture().await;
    let t = f.store.insert_tool(tool("default", "seen")).await.unwrap();
    // Take the writer and hold it inside an open write transaction, as a long write would,
    // until the reads below have answered.
    let mut writer = f.store.inner.writer.clone().lock_owned().await;
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let write = tokio::task::spawn_blocking(move || {
        let tx = writer
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .unwrap();
        tx.execute(
            "UPDATE custom_tools SET description = 'mid-write' WHERE name = 'seen'",
            [],
        )
        .unwrap();
        started_tx.send(()).unwrap();
        go_rx.recv().unwrap();
        tx.commit().unwrap();
    });
    started_rx.await.unwrap();
    let (seen, page) = tokio::time::timeout(std::time::Duration::from_secs(5), async {
        let seen = f.store.get_tool("default", &t.id).await.unwrap().unwrap();
        let page = f
            .store
            .list_tools(&ToolQuery::owner("default"))
            .await
            .unwrap();
        (seen, page)
    })
    .await
    .expect("a read waited for the writer");
    // The reads see the last committed state, not the write in progress.
    assert_eq!(seen.description, "the seen tool");
    assert_eq!(page.total, 1);
    go_tx.send(()).unwrap();
    write.await.unwrap();
    let after = f.store.get_tool("default", &t.id).await.unwrap().unwrap();
    assert_eq!(after.description, "mid-write");
}

#[tokio::test]
async fn open_creates_directories_and_refuses_an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a/b/c/store.db");
    let store = SqliteStore::open(&nested).await.unwrap();
    assert_eq!(store.path(), nested.as_path());
    store.ping().await.unwrap();
    let mode: String = Connection::open(&nested)
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // A 0-byte file is not a new store (a truncated or lost database must not come back
    // empty, without its tokens): refused and left as it was.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let err = SqliteStore::open(&empty).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("empty (0 bytes)"), "{err}");
    assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
}

#[tokio::test]
async fn tiny_files_directories_and_schemaless_versions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = dir.path().join("tiny.db");
    std::fs::write(&tiny, b"hi\n").unwrap();
    let err = SqliteStore::open(&tiny).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    assert_eq!(std::fs::read(&tiny).unwrap(), b"hi\n");

    let err = SqliteStore::open(dir.path()).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");

    let odd = dir.path().join("odd.db");
    Connection::open(&odd)
        .unwrap()
        .pragma_update(None, "user_version", 1)
        .unwrap();
    let before = std::fs::read(&odd).unwrap();
    let err = SqliteStore::open(&odd).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { reason, .. } if reason.contains("custom_tools")),
        "{err}"
    );
    assert_eq!(std::fs::read(&odd).unwrap(), before);
}

#[tokio::test]
async fn readers_refuse_writes() {
    let f = fixture().await;
    let err = f
        .store
        .read(|conn| {
            conn.execute("DELETE FROM custom_tools", [])
                .map_err(rows::backend)
        })
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("readonly") || err.to_string().contains("read"),
        "{err}"
    );
}

#[tokio::test]
async fn the_unicode_lower_function_keeps_other_values() {
    let f = fixture().await;
    let got = f
        .store
        .read(|conn| {
            conn.query_row(
                "SELECT lower('ÄÖÜ Straße'), lower(42), lower(NULL) IS NULL",
                [],
                |row| {
                    Ok((
                        row.get::<_, String>(0)?,
                        row.get::<_, i64>(1)?,
                        row.get::<_, bool>(2)?,
                    ))
                },
            )
            .map_err(rows::backend)
        })
        .await
        .unwrap();
    assert_eq!(got, ("äöü straße".to_owned(), 42, true));
}

/// A store written before versions kept the tool's metadata: its versions read with `{}`, and
/// the versions written after keep theirs.
#[tokio::test]
async fn versions_stored_before_versions_kept_metadata_read_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolsmith.db");
    let before = schema::MIGRATIONS
        .iter()
        .position(|m| m.contains("ALTER TABLE tool_versions ADD COLUMN metadata"))
        .unwrap();
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&schema::MIGRATIONS[..before].join("\n"))
            .unwrap();
        conn.pragma_update(None, "user_version", before as i64)
            .unwrap();
        conn.execute_batch(
            r#"INSERT INTO custom_tools (id, owner, name, kind, description, parameters, code, status,
                created_by, version, revision, metadata, created_at, updated_at)
            VALUES ('tool_00000000000000a1', 'alice', 'old', 'js', 'd', '{"type":"object"}',
                'return 1', 'active', 'user', 1, 1, '{"image":"node:lts-slim"}',
                '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z');
            INSERT INTO tool_versions (tool_id, version, description, parameters, code, permissions, created_at)
            VALUES ('tool_00000000000000a1', 1, 'd', '{"type":"object"}', 'return 1', '[]',
                '2026-01-01T00:00:00.000000Z');"#,
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    let old = store
        .get_version("alice", "tool_00000000000000a1", 1)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(old.metadata, serde_json::json!({}));
    let mut tool = store
        .get_tool("alice", "tool_00000000000000a1")
        .await
        .unwrap()
        .unwrap();
    tool.code = "return 2".to_owned();
    tool.version = 2;
    tool.revision = 2;
    store.update_tool(&tool, 1).await.unwrap();
    let new = store
        .get_version("alice", "tool_00000000000000a1", 2)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(new.metadata, serde_json::json!({"image": "node:lts-slim"}));
}
