//! `resources/subscribe` of a bridged resource, forwarded to its upstream (the official Python
//! SDK's server, `tests/clients/mcp_upstream.py`, which logs the subscribe and unsubscribe
//! requests it receives and sends `resources/updated` only to a subscriber): once per URI
//! however many sessions subscribe, released with the last holder or its session, subscribed
//! again after the upstream reconnects; told only to sessions that may still see the server; an
//! upstream that takes no subscriptions refused with the reason. And a watcher that falls
//! behind the bridged servers' changes is told only what moved for it — no `list_changed`.

#![allow(
    deprecated,
    reason = "resources/subscribe is MCP 2025-11-25's; rmcp marks it legacy-only"
)]

use std::time::Duration;

use rmcp::model::{ErrorCode, SubscribeRequestParams, UnsubscribeRequestParams};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolsmith_core::mcp_bridge::GrantSubject;
use toolsmith_server::auth::Identity;
use toolsmith_service::bridge::{GrantInput, ServerState};
use toolsmith_service::{Actor, ToolService};

use crate::mcp_bridge::{app_with, app_with_grants, upstream};
use crate::mcp_bridge_offer::Session;
use crate::mcp_support::{call_ok, prerequisite, python};
use crate::rest_support::TestApp;

const TODAY: &str = "notes://today";

/// Calls the bridged tool `tool` through `session`; the text it returned (a tool error fails
/// the test).
async fn call(session: &Session, tool: &str, args: Value) -> String {
    let (failed, structured, text) = call_ok(&session.client, tool, args).await;
    assert!(!failed, "{tool}: {text}");
    match structured["result"].as_str() {
        Some(result) => result.to_owned(),
        None => text,
    }
}

/// The subscribe and unsubscribe requests the upstream of `prefix` received, in order.
async fn upstream_log(session: &Session, prefix: &str) -> Vec<String> {
    call(session, &format!("{prefix}subscriptions"), json!({}))
        .await
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Waits until the upstream's log is `expected` (requests released on a task of their own
/// arrive a moment after the answer to the unsubscribe), 20 s at most.
async fn wait_for_log(session: &Session, prefix: &str, expected: &[&str]) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let log = upstream_log(session, prefix).await;
        if log == expected {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the upstream's log stayed {log:?}, not {expected:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `session` lists `uri` (the upstream's resources are listed just after it
/// connects), 30 s at most.
async fn wait_listed(session: &Session, uri: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !session.uris().await.iter().any(|u| u == uri) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{uri} was never listed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn subscribe(session: &Session, uri: &str) -> Result<(), rmcp::model::ErrorData> {
    match session
        .client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
    {
        Ok(()) => Ok(()),
        Err(rmcp::ServiceError::McpError(e)) => Err(e),
        Err(e) => panic!("subscribe {uri}: transport failure: {e}"),
    }
}

async fn unsubscribe(session: &Session, uri: &str) {
    session
        .client
        .unsubscribe(UnsubscribeRequestParams::new(uri))
        .await
        .expect("resources/unsubscribe");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridged_subscription_is_forwarded_once_and_released_with_its_last_holder() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("up")]).await;
    let mut first = Session::open(&app, "default", true).await;
    let mut second = Session::open(&app, "default", true).await;
    wait_listed(&first, TODAY).await;
    assert!(upstream_log(&first, "mcp_up_").await.is_empty());

    // Two sessions subscribe to one URI: one subscription upstream, and both hear its update
    // (the upstream tells only a subscriber: before the forwarding nobody heard it).
    subscribe(&first, TODAY).await.expect("first subscribes");
    subscribe(&second, TODAY).await.expect("second subscribes");
    subscribe(&second, TODAY)
        .await
        .expect("again: nothing more");
    assert_eq!(
        upstream_log(&first, "mcp_up_").await,
        ["subscribe notes://today"]
    );
    call(&first, "mcp_up_touch_note", json!({"text": "one"})).await;
    first.wait_for("updated notes://today").await;
    second.wait_for("updated notes://today").await;

    // The first lets go: the upstream keeps the subscription for the second (its next request,
    // another URI's subscribe, comes after the first's release).
    unsubscribe(&first, TODAY).await;
    subscribe(&second, "notes://day/monday")
        .await
        .expect("a template's URI");
    assert_eq!(
        upstream_log(&first, "mcp_up_").await,
        ["subscribe notes://today", "subscribe notes://day/monday"]
    );
    call(&first, "mcp_up_touch_note", json!({"text": "two"})).await;
    second.wait_for("updated notes://today").await;

    // The last holder lets go: unsubscribed upstream.
    unsubscribe(&second, TODAY).await;
    wait_for_log(
        &first,
        "mcp_up_",
        &[
            "subscribe notes://today",
            "subscribe notes://day/monday",
            "unsubscribe notes://today",
        ],
    )
    .await;

    // The second session ends holding notes://day/monday: released upstream too.
    second.client.cancel().await.expect("the session ends");
    wait_for_log(
        &first,
        "mcp_up_",
        &[
            "subscribe notes://today",
            "subscribe notes://day/monday",
            "unsubscribe notes://today",
            "unsubscribe notes://day/monday",
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridged_subscription_is_made_again_when_the_upstream_comes_back() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("up")]).await;
    let mut session = Session::open(&app, "default", true).await;
    wait_listed(&session, TODAY).await;
    subscribe(&session, TODAY).await.expect("subscribes");

    // The upstream crashes; the bridge starts it again (a new process, which knows nothing of
    // the subscription) and subscribes on the new connection.
    let died = crate::mcp_support::call_tool(&session.client, "mcp_up_die", json!({})).await;
    assert!(
        died.as_ref().map_or(true, |r| r.is_error == Some(true)),
        "{died:?}"
    );
    let service = app.state.service.clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = service.mcp_servers();
        if status
            .iter()
            .all(|s| s.state == ServerState::Connected && s.connections == 2)
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the upstream did not come back: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    wait_for_log(&session, "mcp_up_", &["subscribe notes://today"]).await;
    call(&session, "mcp_up_touch_note", json!({"text": "again"})).await;
    session.wait_for("updated notes://today").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_takes_no_subscriptions_is_named_by_the_refused_subscribe() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let mut server = upstream("plain");
    server
        .env
        .insert("UPSTREAM_NO_SUBSCRIBE".to_owned(), "1".to_owned());
    let app = app_with(vec![server]).await;
    let session = Session::open(&app, "default", true).await;
    wait_listed(&session, TODAY).await;
    let refused = subscribe(&session, TODAY).await.expect_err("refused");
    assert_eq!(refused.code, ErrorCode::INVALID_PARAMS, "{refused:?}");
    assert!(
        refused.message.contains("MCP server 'plain'")
            && refused.message.contains("resources.subscribe"),
        "{}",
        refused.message
    );
    // Still offered and read as before.
    assert_eq!(session.read(TODAY).await.expect("read"), "nothing yet");
}

/// `subject`'s grant of the server `server`, switched on or off.
async fn grant(service: &ToolService, server: &str, subject: &str, enabled: bool) {
    service
        .put_mcp_grant(
            &Actor::user("default"),
            GrantInput {
                server: server.to_owned(),
                subject_kind: GrantSubject::User,
                subject: subject.to_owned(),
                enabled,
                tool_allow: vec!["echo".to_owned()],
                tool_deny: Vec::new(),
            },
        )
        .await
        .expect("grant");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_is_told_only_to_subscribers_who_may_still_see_the_server() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with_grants(upstream("g")).await;
    let service = app.state.service.clone();
    grant(&service, "g", "carol", true).await;
    let admin = Session::open(&app, "default", true).await;
    let mut carol = Session::open(&app, "carol", false).await;
    let bob = Session::open(&app, "bob", false).await;
    // Once the upstream is listed, carol (granted) subscribes; bob (no grant) cannot.
    wait_listed(&carol, TODAY).await;
    subscribe(&carol, TODAY).await.expect("carol subscribes");
    assert_eq!(
        subscribe(&bob, TODAY).await.expect_err("hidden").code,
        ErrorCode::RESOURCE_NOT_FOUND
    );
    call(&admin, "mcp_g_touch_note", json!({"text": "for carol"})).await;
    carol.wait_for("updated notes://today").await;

    // Carol's grant is switched off: the upstream still tells Toolsmith (the subscription is
    // held), but carol is told nothing. Switched on again, the next change of the server's
    // resources reaches her — and nothing came before it.
    grant(&service, "g", "carol", false).await;
    call(&admin, "mcp_g_touch_note", json!({"text": "not for carol"})).await;
    grant(&service, "g", "carol", true).await;
    call(&admin, "mcp_g_add_note", json!({})).await;
    let next = tokio::time::timeout(Duration::from_secs(20), carol.notes.recv())
        .await
        .expect("a notice within 20 s")
        .expect("the session is open");
    assert_eq!(
        next, "resources",
        "the update made while carol could not see the server was told to her"
    );
}

/// A raw MCP session (2025-11-25) over an in-process pipe of one byte: its server blocks on the
/// first notification until this reads it, so its watcher falls behind whatever comes
/// meanwhile.
struct RawSession {
    reader: BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
}

impl RawSession {
    async fn open(app: &TestApp) -> RawSession {
        use rmcp::ServiceExt;
        let (server_io, client_io) = tokio::io::duplex(1);
        let server =
            toolsmith_server::mcp::ToolsmithMcp::new(app.state.clone(), Identity::local_default());
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let (read, writer) = tokio::io::split(client_io);
        let mut raw = RawSession {
            reader: BufReader::new(read),
            writer,
        };
        raw.request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"}
            }),
        )
        .await;
        raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        raw
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .await
            .expect("write to the session");
    }

    async fn next(&mut self) -> Value {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(20), self.reader.read_line(&mut line))
            .await
            .expect("a message within 20 s")
            .expect("read from the session");
        assert!(read > 0, "the session closed");
        serde_json::from_str(&line).expect("JSON-RPC")
    }

    /// Sends a request and reads until its answer (nothing else is expected before it).
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = self.next().await;
        assert_eq!(answer["id"], id, "{answer}");
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer
    }
}

/// A notification as "<method> <uri>".
fn note_of(message: &Value) -> String {
    let method = message["method"].as_str().unwrap_or("(an answer)");
    match message["params"]["uri"].as_str() {
        Some(uri) => format!("{method} {uri}"),
        None => method.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watcher_left_behind_by_another_servers_burst_hears_no_list_changed() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    // "a" answers for notes:// (first by name); "z" only floods.
    let app = app_with(vec![upstream("a"), upstream("z")]).await;
    let other = Session::open(&app, "default", true).await;
    // Both listed (a server's prompts and resources are installed together).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let prompts = other.client.list_all_prompts().await.expect("prompts/list");
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        if names.contains(&"mcp_a_greet") && names.contains(&"mcp_z_greet") {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{names:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mut raw = RawSession::open(&app).await;
    raw.request(2, "resources/subscribe", json!({"uri": TODAY}))
        .await;
    raw.request(
        3,
        "resources/subscribe",
        json!({"uri": "notes://day/friday"}),
    )
    .await;

    // The raw session's watcher takes the update of notes://today and blocks sending it (the
    // pipe holds one byte, read here only to see that the sending began).
    call(&other, "mcp_a_touch_note", json!({"text": "block"})).await;
    let started = tokio::time::timeout(Duration::from_secs(20), raw.reader.fill_buf())
        .await
        .expect("the server starts to send within 20 s")
        .expect("read");
    assert!(!started.is_empty());

    // Meanwhile "z" tells of 600 updates of a URI the session holds nothing of: more than the
    // bridged changes' channel keeps (256), so the watcher falls behind.
    call(&other, "mcp_z_flood", json!({"count": 600})).await;
    let service = app.state.service.clone();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while service.bridged_counts().of("z").updated < 600 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the flood never came"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Then "a" tells of a URI the session holds (told by its own message, or — sent before the
    // watcher caught up — by the resync, which tells each URI held at a server whose updates
    // it missed).
    call(
        &other,
        "mcp_a_flood",
        json!({"count": 1, "uri": "notes://day/friday"}),
    )
    .await;

    let mut heard = Vec::new();
    loop {
        let note = note_of(&raw.next().await);
        heard.push(note.clone());
        if note == "notifications/resources/updated notes://day/friday" {
            break;
        }
    }
    assert_eq!(
        heard.first().map(String::as_str),
        Some("notifications/resources/updated notes://today"),
        "{heard:?}"
    );
    assert!(
        heard.iter().all(|note| [
            "notifications/resources/updated notes://today",
            "notifications/resources/updated notes://day/friday"
        ]
        .contains(&note.as_str())),
        "nothing the session lists changed while it was behind, yet it heard {heard:?}"
    );
}
