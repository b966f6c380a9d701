//! Two real `toolsmith serve` processes on one PostgreSQL database (a private cluster from the
//! store's test kit): what one instance writes, the other serves; concurrent writers across
//! instances are decided by the database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith_store::testkit::{PgCluster, pg_or_skip};

use super::{Env, ListChanged, Server, mcp_post, request};

/// A cluster with one fresh database, and its URL.
pub(super) fn database() -> Option<(PgCluster, String)> {
    let cluster = pg_or_skip()?;
    let url = cluster.create_database().expect("create database");
    Some((cluster, url))
}

/// Instances A and B on `url` (same data dir: the same Config Center key).
pub(super) fn two_instances(env: &Env, url: &str, extra: &[&str]) -> (Server, Server) {
    let mut args = vec!["--database-url", url, "--poll-interval", "100ms"];
    args.extend_from_slice(extra);
    let a = env.serve(&args);
    let b = env.serve(&args);
    (a, b)
}

pub(super) fn create(server: &Server, name: &str) -> u16 {
    server
        .post(
            "/api/v1/custom-tools",
            &json!({"name": name, "description": "d", "parameters": {"type": "object"},
                    "code": format!("return '{name} ran';")}),
        )
        .status
}

#[test]
fn a_tool_created_on_one_instance_is_served_and_disabled_across_both() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &[]);
    let (mut a_changes, mut b_changes) = (ListChanged::open(&a.addr), ListChanged::open(&b.addr));
    assert_eq!(create(&a, "shared"), 201);
    a_changes.next("the tool created on A itself");
    b_changes.next("the tool created on A");
    let path = "/api/v1/tools/shared/execute";
    let call = json!({"arguments": {}});
    let ran = b.post(path, &call);
    assert_eq!(ran.status, 200, "{}", ran.body);
    assert!(ran.body.contains("shared ran"), "{}", ran.body);
    assert!(b.get("/api/v1/tools").body.contains("\"shared\""));
    // Usage recorded by B is counted in the shared database.
    let got = a.get("/api/v1/custom-tools/shared");
    assert_eq!(got.status, 200, "{}", got.body);

    // Disabled through B: A stops serving it.
    let disabled = b.post("/api/v1/custom-tools/shared/disable", &json!({}));
    assert_eq!(disabled.status, 200, "{}", disabled.body);
    a_changes.next("the disable on B");
    assert_eq!(a.post(path, &call).status, 404);
    assert_eq!(a.get("/readyz").status, 200);
    assert_eq!(b.get("/readyz").status, 200);
}

/// A prompt written on one instance (issue 40) is announced to the other's MCP sessions at
/// once (the change feed's Prompt notice) and served there; so is its switch off.
#[test]
fn a_prompt_written_on_one_instance_is_announced_and_served_by_the_other() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &[]);
    let mut b_changes = ListChanged::open(&b.addr);
    let made = a.post(
        "/api/v1/prompts",
        &json!({"name": "shared_prompt", "description": "d",
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    b_changes.next_of(
        "notifications/prompts/list_changed",
        "the prompt created on A",
    );
    let listed = b.get("/api/v1/prompts");
    assert!(listed.body.contains("shared_prompt"), "{}", listed.body);
    let off = a.post("/api/v1/prompts/shared_prompt/disable", &json!({}));
    assert_eq!(off.status, 200, "{}", off.body);
    b_changes.next_of(
        "notifications/prompts/list_changed",
        "the prompt switched off on A",
    );
}

/// A resource a user defines on one instance (issue 40) is announced to the other's MCP
/// sessions at once (the change feed's Resource notice): `list_changed` when it is created,
/// `updated` to a subscriber of its URI when it changes, `list_changed` when it is deleted.
#[test]
fn a_resource_written_on_one_instance_is_announced_to_the_others_subscribers() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &[]);
    let mut b_changes = ListChanged::open(&b.addr);
    let note = json!({"name": "shared_note", "uri": "notes://shared", "text": "first"});
    let made = a.post("/api/v1/resources", &note);
    assert_eq!(made.status, 201, "{}", made.body);
    b_changes.next_of(
        "notifications/resources/list_changed",
        "the resource created on A",
    );
    let subscribed = mcp_post(
        &b.addr,
        Some(&b_changes.session),
        &json!({"jsonrpc": "2.0", "id": 7, "method": "resources/subscribe",
                "params": {"uri": "notes://shared"}}),
    );
    assert_eq!(subscribed.status, 200, "{}", subscribed.body);
    assert!(
        !subscribed.body.contains("\"error\""),
        "{}",
        subscribed.body
    );
    let changed = json!({"name": "shared_note", "uri": "notes://shared", "text": "second",
                         "expectedRevision": 1});
    let put = request(
        &a.addr,
        "PUT",
        "/api/v1/resources/shared_note",
        Some(changed.to_string().as_bytes()),
    );
    assert_eq!(put.status, 200, "{}", put.body);
    b_changes.next_of(
        "notifications/resources/updated",
        "the resource changed on A",
    );
    let read = b.get("/api/v1/resources/shared_note");
    assert!(read.body.contains("second"), "{}", read.body);
    let gone = request(&a.addr, "DELETE", "/api/v1/resources/shared_note", None);
    assert_eq!(gone.status, 200, "{}", gone.body);
    b_changes.next_of(
        "notifications/resources/list_changed",
        "the resource deleted on A",
    );
}

/// The pids of the change feed's LISTEN connections to the database of `url`.
fn listeners(cluster: &PgCluster, url: &str) -> Vec<String> {
    let db = url.rsplit('/').next().expect("a database name");
    let db = db.split('?').next().unwrap_or(db);
    let rows = cluster
        .psql(&format!(
            "SELECT pid FROM pg_stat_activity WHERE datname = '{db}' \
             AND query LIKE 'LISTEN %' ORDER BY pid"
        ))
        .expect("pg_stat_activity");
    rows.lines().map(str::to_owned).collect()
}

/// The change feed's LISTEN connection is cut (`pg_terminate_backend`) and comes back: each
/// instance resyncs (notices sent while it was away are not replayed), and an MCP session
/// whose prompts and resources nothing changed hears nothing of it — then the next real
/// change, and only it.
#[test]
fn a_change_feed_that_reconnects_tells_no_session_whose_listings_did_not_move() {
    let Some((cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &[]);
    let mut b_changes = ListChanged::open(&b.addr);
    let deadline = Instant::now() + Duration::from_secs(30);
    let before = loop {
        let pids = listeners(&cluster, &url);
        if pids.len() == 2 {
            break pids;
        }
        assert!(
            Instant::now() < deadline,
            "two listeners never came: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let killed = cluster
        .psql(&format!(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE pid IN ({})",
            before.join(", ")
        ))
        .expect("terminate the listeners");
    assert_eq!(killed, "2");
    // Both come back on new connections (each resyncs right after its LISTEN).
    loop {
        let pids = listeners(&cluster, &url);
        if pids.len() == 2 && pids.iter().all(|p| !before.contains(p)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the listeners never came back: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // A resource created on A after the reconnect: B's session hears its list_changed, and
    // before it nothing (before, the resync told every session that its prompts and its
    // resources had changed).
    let note = json!({"name": "after_reconnect", "uri": "notes://after", "text": "t"});
    let made = a.post("/api/v1/resources", &note);
    assert_eq!(made.status, 201, "{}", made.body);
    let heard = b_changes.until(
        "notifications/resources/list_changed",
        "the resource created on A",
    );
    assert_eq!(
        heard,
        ["notifications/resources/list_changed"],
        "a session heard of the resync although none of its prompts or resources changed"
    );
    let made = a.post(
        "/api/v1/prompts",
        &json!({"name": "after_reconnect", "description": "d",
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}),
    );
    assert_eq!(made.status, 201, "{}", made.body);
    let heard = b_changes.until(
        "notifications/prompts/list_changed",
        "the prompt created on A",
    );
    assert_eq!(heard, ["notifications/prompts/list_changed"]);
    // And one more resource: a notice of the resync that came late would be read here first.
    let note = json!({"name": "last", "uri": "notes://last", "text": "t"});
    let made = a.post("/api/v1/resources", &note);
    assert_eq!(made.status, 201, "{}", made.body);
    let heard = b_changes.until(
        "notifications/resources/list_changed",
        "the second resource created on A",
    );
    assert_eq!(heard, ["notifications/resources/list_changed"]);
}

#[test]
fn fifty_updates_with_one_expected_revision_across_two_instances_have_one_winner() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &[]);
    assert_eq!(create(&a, "contended"), 201);
    let addrs = Arc::new([a.addr.clone(), b.addr.clone()]);
    let barrier = Arc::new(std::sync::Barrier::new(50));
    let handles: Vec<_> = (0..50)
        .map(|i| {
            let (addrs, barrier) = (Arc::clone(&addrs), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let body = json!({"description": format!("writer {i}"), "expectedRevision": 1});
                barrier.wait();
                request(
                    &addrs[i % 2],
                    "PATCH",
                    "/api/v1/custom-tools/contended",
                    Some(body.to_string().as_bytes()),
                )
                .status
            })
        })
        .collect();
    let statuses: Vec<u16> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let won = statuses.iter().filter(|s| **s == 200).count();
    let conflicts = statuses.iter().filter(|s| **s == 409).count();
    assert_eq!((won, conflicts), (1, 49), "{statuses:?}");
    let stored = b.get("/api/v1/custom-tools/contended").json();
    assert_eq!(stored["data"]["revision"], json!(2), "{stored}");
}

#[test]
fn a_tool_limit_race_across_two_instances_never_exceeds_the_limit() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    let (a, b) = two_instances(&env, &url, &["--max-tools-per-owner", "5"]);
    let addrs = Arc::new([a.addr.clone(), b.addr.clone()]);
    let barrier = Arc::new(std::sync::Barrier::new(20));
    let handles: Vec<_> = (0..20)
        .map(|i| {
            let (addrs, barrier) = (Arc::clone(&addrs), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let body = json!({"name": format!("t{i}"), "description": "d",
                                  "parameters": {"type": "object"}, "code": "return 1"});
                barrier.wait();
                request(
                    &addrs[i % 2],
                    "POST",
                    "/api/v1/custom-tools",
                    Some(body.to_string().as_bytes()),
                )
                .status
            })
        })
        .collect();
    let statuses: Vec<u16> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        5,
        "{statuses:?}"
    );
    let listed = a.get("/api/v1/custom-tools").json();
    assert_eq!(listed["data"]["total"], json!(5), "{listed}");
}

#[test]
fn the_cli_works_on_postgres_and_start_up_errors_say_why() {
    let Some((cluster, url)) = database() else {
        return;
    };
    let env = Env::new();
    env.create_tool_with(&["--database-url", &url], "from_cli", "return 1;");
    let (code, stdout, stderr) = env.run(&["--database-url", &url, "--json", "tool", "list"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("from_cli"), "{stdout}");

    // A missing database fails at once, naming the fix; the password is never shown.
    let missing = format!(
        "postgres://postgres:hunter2@127.0.0.1:{}/absent",
        cluster.port()
    );
    let started = Instant::now();
    let (code, _, stderr) = env.run(&["--database-url", &missing, "tool", "list"]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("absent") && stderr.contains("createdb"),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));

    // Nothing listening: retried for the start-up timeout, then a clear message.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let nowhere = format!("postgres://postgres@127.0.0.1:{port}/toolsmith");
    let (code, _, stderr) = env.run(&[
        "--database-url",
        &nowhere,
        "--database-startup-timeout",
        "1s",
        "tool",
        "list",
    ]);
    assert_ne!(code, 0);
    assert!(stderr.contains("cannot reach the database"), "{stderr}");
}
