//! What only the PostgreSQL backend has: connecting (retry while unreachable, fail at once when
//! refused), its schema version checks, and the database's own constraints.

use std::time::Duration;

use super::Backend;
use super::tools::tool;
use crate::testkit::pg_or_skip;
use crate::{GovernanceStore, PgOptions, PgStore, Store, StoreError, ToolStore};

fn quick(startup: Duration) -> PgOptions {
    PgOptions {
        startup_timeout: startup,
        connect_timeout: Duration::from_secs(2),
        ..PgOptions::default()
    }
}

#[tokio::test]
async fn a_missing_database_or_role_fails_at_once_with_the_reason() {
    let Some(cluster) = pg_or_skip() else { return };
    let started = std::time::Instant::now();
    let err = PgStore::connect(&cluster.url("no_such_db"), &quick(Duration::from_secs(30)))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::ConnectRefused { reason, .. }
            if reason.contains("no_such_db") && reason.contains("createdb")),
        "{err}"
    );
    let url = format!("postgres://stranger@127.0.0.1:{}/postgres", cluster.port());
    let err = PgStore::connect(&url, &quick(Duration::from_secs(30)))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::ConnectRefused { reason, .. } if reason.contains("stranger")),
        "{err}"
    );
    // Neither waited for the 30 s start-up budget.
    assert!(started.elapsed() < Duration::from_secs(20));
    let err = PgStore::connect("postgres://u:hunter2@[bad", &PgOptions::default())
        .await
        .unwrap_err();
    assert!(!err.to_string().contains("hunter2"), "{err}");
}

#[tokio::test]
async fn an_unreachable_server_is_retried_for_the_budget_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://postgres:secret@127.0.0.1:{port}/toolsmith");
    let err = PgStore::connect(&url, &quick(Duration::from_millis(700)))
        .await
        .unwrap_err();
    let StoreError::Unreachable { target, reason } = &err else {
        panic!("expected Unreachable, got {err}");
    };
    assert_eq!(
        target,
        &format!("postgres://postgres@127.0.0.1:{port}/toolsmith")
    );
    assert!(
        reason.contains("tried") && reason.contains("--database-startup-timeout"),
        "{reason}"
    );
    assert!(!err.to_string().contains("secret"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_waits_for_a_server_that_comes_up_later() {
    let Some(cluster) = pg_or_skip() else { return };
    let url = cluster.create_database().unwrap();
    cluster.stop().unwrap();
    // While the server is down its port answers and hangs up at once, as a server still
    // starting may: every accept is one attempt of `connect`, so the test sees it try again
    // after each failure instead of guessing how long to wait.
    let port = tokio::net::TcpListener::bind(("127.0.0.1", cluster.port()))
        .await
        .unwrap();
    let mut connecting =
        tokio::spawn(async move { PgStore::connect(&url, &quick(Duration::from_secs(60))).await });
    for attempt in 1..=3 {
        tokio::select! {
            accepted = port.accept() => drop(accepted.unwrap()),
            gave_up = &mut connecting => {
                panic!("connect gave up after {} attempts while the server was down: {:?}",
                    attempt - 1, gave_up.unwrap().err())
            }
            () = tokio::time::sleep(Duration::from_secs(30)) => {
                panic!("connect stopped trying after {} attempts", attempt - 1)
            }
        }
    }
    drop(port);
    cluster.restart().unwrap();
    let store = connecting.await.unwrap().unwrap();
    store.ping().await.unwrap();
}

#[tokio::test]
async fn a_newer_or_foreign_schema_stops_start_up_untouched() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let cluster = backend.cluster().unwrap();
    let url = cluster.create_database().unwrap();
    drop(PgStore::connect(&url, &PgOptions::default()).await.unwrap());
    let db = url.rsplit('/').next().unwrap().to_owned();
    let sql = |s: &str| {
        let (client_url, s) = (url.clone(), s.to_owned());
        async move {
            let (client, conn) = tokio_postgres::connect(&client_url, tokio_postgres::NoTls)
                .await
                .unwrap();
            let driver = tokio::spawn(conn);
            client.batch_execute(&s).await.unwrap();
            drop(client);
            let _ = driver.await;
        }
    };
    sql("UPDATE toolsmith_schema SET version = 99").await;
    let err = PgStore::connect(&url, &PgOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::UnknownSchema {
                found: 99,
                supported: crate::postgres::schema::SCHEMA_VERSION,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("newer toolsmith") && err.to_string().contains(&db),
        "{err}"
    );

    // Another program's custom_tools table, without Toolsmith's version: refused, kept.
    let other = cluster.create_database().unwrap();
    let (client, conn) = tokio_postgres::connect(&other, tokio_postgres::NoTls)
        .await
        .unwrap();
    let driver = tokio::spawn(conn);
    client
        .batch_execute("CREATE TABLE custom_tools (x int); INSERT INTO custom_tools VALUES (7)")
        .await
        .unwrap();
    let err = PgStore::connect(&other, &PgOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    let kept: i32 = client
        .query_one("SELECT x FROM custom_tools", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(kept, 7);
    drop(client);
    let _ = driver.await;
}

#[tokio::test]
async fn text_postgres_cannot_hold_is_refused_with_a_clear_error() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let store = backend.store();
    let mut t = tool("default", "nul");
    t.description = "before\0after".to_owned();
    let err = store.insert_tool(t).await.unwrap_err();
    assert!(err.to_string().contains("NUL"), "{err}");
    let mut t = tool("default", "nul_json");
    t.metadata = serde_json::json!({"k": "a\u{0}b"});
    let err = store.insert_tool(t).await.unwrap_err();
    assert!(err.to_string().contains("NUL"), "{err}");
    // Nothing of either was stored.
    assert_eq!(store.count_tools("default").await.unwrap(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_instances_never_exceed_the_tool_limit() {
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let cluster = backend.cluster().unwrap();
    let url = cluster.create_database().unwrap();
    // Four independent stores (four pools) on one database, as four instances would be.
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(std::sync::Arc::new(
            PgStore::connect(&url, &PgOptions::default()).await.unwrap(),
        ));
    }
    let mut tasks = Vec::new();
    for i in 0..40 {
        let store = std::sync::Arc::clone(&stores[i % 4]);
        tasks.push(tokio::spawn(async move {
            store
                .insert_tool_limited(tool("alice", &format!("t{i}")), 10)
                .await
        }));
    }
    let mut ok = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => ok += 1,
            Err(StoreError::ToolLimit { limit: 10 }) => {}
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(ok, 10);
    assert_eq!(stores[0].count_tools("alice").await.unwrap(), 10);
}

/// The next event within 10 s.
async fn next_event(rx: &mut tokio::sync::mpsc::Receiver<crate::FeedEvent>) -> crate::FeedEvent {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("no change notice within 10 s")
        .expect("the feed ended")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_instances_changes_arrive_once_committed_and_own_ones_do_not() {
    use crate::{ChangeKind, FeedEvent};
    let Some(backend) = Backend::postgres().await else {
        return;
    };
    let cluster = backend.cluster().unwrap();
    let url = cluster.create_database().unwrap();
    let a = PgStore::connect(&url, &PgOptions::default()).await.unwrap();
    let b = PgStore::connect(&url, &PgOptions::default()).await.unwrap();
    let mut feed = b.subscribe_changes().unwrap();
    assert_eq!(next_event(&mut feed).await, FeedEvent::Resync);

    // B's own write is not announced to B; A's is, with kind, id, owner and revision.
    b.insert_tool(tool("bob", "mine")).await.unwrap();
    let made = a.insert_tool(tool("alice", "theirs")).await.unwrap();
    let FeedEvent::Changed(change) = next_event(&mut feed).await else {
        panic!("expected a change");
    };
    assert_eq!(
        (
            change.kind,
            change.id.as_str(),
            change.owner.as_str(),
            change.revision
        ),
        (
            ChangeKind::Tool,
            made.id.as_str(),
            "alice",
            Some(made.revision)
        )
    );
    // A write that fails (the name is taken) rolls back its notice with it.
    a.insert_tool(tool("alice", "theirs")).await.unwrap_err();
    a.put_policy(&serde_json::json!({}), None, "admin", chrono::Utc::now())
        .await
        .unwrap()
        .unwrap();
    let FeedEvent::Changed(change) = next_event(&mut feed).await else {
        panic!("expected a change");
    };
    assert_eq!(change.kind, ChangeKind::Policy);

    // The server restarts: the listener reconnects and asks for one full resync.
    cluster.stop().unwrap();
    cluster.restart().unwrap();
    assert_eq!(next_event(&mut feed).await, FeedEvent::Resync);
    let again = a.insert_tool(tool("alice", "after_restart")).await.unwrap();
    let FeedEvent::Changed(change) = next_event(&mut feed).await else {
        panic!("expected a change");
    };
    assert_eq!(change.id, again.id);
}
