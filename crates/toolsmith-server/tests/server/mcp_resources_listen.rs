//! MCP resources over protocol 2026-07-28 (issue 40), raw JSON-RPC over HTTP: a
//! `subscriptions/listen` whose filter names `resourceSubscriptions` and `resourcesListChanged`
//! is acknowledged with the URIs the caller may subscribe to, then carries
//! `notifications/resources/updated` for those URIs (a workspace file written by `write_file`,
//! a tool's source updated, a resource the user defined changed) and `list_changed`; another
//! user's writes are never told, and a token that may not call tools is not subscribed to
//! workspace files.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Scope;
use toolsmith_service::{ExecutionApproval, ToolServiceSettings};
use tower::ServiceExt as _;

use crate::rest_support::{TestApp, request};

/// How long a test waits for a notification before it fails (never a pause: the wait ends
/// with the event).
const WITHIN: Duration = Duration::from_secs(30);

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A 2026-07-28 request as `token`, not yet sent.
fn post(token: &str, method: &str, name: &str, body: &Value) -> axum::http::Request<Body> {
    request(Method::POST, "/mcp")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .body(Body::from(body.to_string()))
        .expect("request")
}

/// One stateless `tools/call` as `token`; panics unless the tool succeeded.
async fn call(app: &TestApp, token: &str, tool: &str, arguments: Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": meta()}});
    let res = app.send(post(token, "tools/call", tool, &body)).await;
    let answer = if res.json.is_null() {
        // An SSE answer: the JSON-RPC message is the data of its last event.
        let data = res
            .text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or_else(|| panic!("{tool}: no answer: {} {}", res.status, res.text));
        serde_json::from_str(data).expect("a JSON-RPC answer")
    } else {
        res.json
    };
    assert_eq!(
        answer["result"]["isError"],
        json!(false),
        "{tool}: {answer:#}"
    );
}

/// One open `subscriptions/listen` stream, read event by event.
struct Listen {
    body: Body,
    buffer: String,
}

impl Listen {
    async fn open(app: &TestApp, token: &str, notifications: Value) -> Listen {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
            "params": {"notifications": notifications, "_meta": meta()}});
        let response = app
            .router
            .clone()
            .oneshot(post(token, "subscriptions/listen", "", &body))
            .await
            .expect("the router answers");
        assert_eq!(response.status(), StatusCode::OK);
        Listen {
            body: response.into_body(),
            buffer: String::new(),
        }
    }

    /// The next JSON-RPC message on the stream.
    async fn next(&mut self) -> Value {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if let Ok(message) = serde_json::from_str::<Value>(&data) {
                    return message;
                }
                continue;
            }
            let frame = tokio::time::timeout(WITHIN, self.body.frame())
                .await
                .expect("a notification within 30 s")
                .expect("the stream is open")
                .expect("the stream reads");
            if let Ok(data) = frame.into_data() {
                self.buffer
                    .push_str(&String::from_utf8_lossy(&data).replace("\r\n", "\n"));
            }
        }
    }

    /// The filter the server acknowledged (the stream's first message).
    async fn acknowledged(&mut self) -> Value {
        let ack = self.next().await;
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack:#}"
        );
        ack["params"]["notifications"].clone()
    }

    /// The next `resources/updated` URI; the `resources/list_changed` before it are counted
    /// into `list_changed`.
    async fn next_update(&mut self, list_changed: &mut usize) -> String {
        loop {
            let message = self.next().await;
            match message["method"].as_str() {
                Some("notifications/resources/updated") => {
                    return message["params"]["uri"].as_str().expect("a URI").to_owned();
                }
                Some("notifications/resources/list_changed") => *list_changed += 1,
                _ => {}
            }
        }
    }
}

async fn app_with_workspace() -> (TestApp, tempfile::TempDir) {
    let workspaces = tempfile::tempdir().expect("temp dir");
    let service = ToolServiceSettings {
        execution_approval: ExecutionApproval::Off,
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            workspaces.path().to_owned(),
        )),
        ..ToolServiceSettings::default()
    };
    (
        TestApp::with_configs(service, ServerSettings::default()).await,
        workspaces,
    )
}

fn defined(text: &str) -> toolsmith_service::resources::user::ResourceInput {
    toolsmith_service::resources::user::ResourceInput {
        name: "guide".to_owned(),
        uri: Some("docs://guide".to_owned()),
        description: "The guide".to_owned(),
        text: Some(text.to_owned()),
        ..Default::default()
    }
}

const WATCHED: &str = "toolsmith://workspace/watched.txt";
const SOURCE: &str = "toolsmith://tools/shout/source";
const GUIDE: &str = "docs://guide";

#[tokio::test]
async fn a_listen_is_told_of_a_written_file_an_updated_tool_and_a_changed_resource() {
    let (app, _workspaces) = app_with_workspace().await;
    let alice = app.token("alice", None, &Scope::ALL).await;
    call(
        &app,
        &alice,
        "create_tool",
        json!({"name": "shout", "description": "Upper-cases text",
               "code": "return String(args.text).toUpperCase();",
               "parameters": {"type": "object"}}),
    )
    .await;
    let person = toolsmith_service::Actor::user("alice");
    let service = app.state.service.clone();
    service
        .create_resource(&person, defined("v1"))
        .await
        .expect("a resource");

    let mut listen = Listen::open(
        &app,
        &alice,
        json!({"resourcesListChanged": true,
               "resourceSubscriptions": [WATCHED, SOURCE, GUIDE]}),
    )
    .await;
    let accepted = listen.acknowledged().await;
    assert_eq!(accepted["resourcesListChanged"], true, "{accepted:#}");
    assert_eq!(
        accepted["resourceSubscriptions"],
        json!([WATCHED, SOURCE, GUIDE]),
        "every URI of the caller's is accepted"
    );

    let mut list_changed = 0;
    call(
        &app,
        &alice,
        "write_file",
        json!({"path": "other.txt", "content": "not watched"}),
    )
    .await;
    call(
        &app,
        &alice,
        "write_file",
        json!({"path": "watched.txt", "content": "v1"}),
    )
    .await;
    assert_eq!(
        listen.next_update(&mut list_changed).await,
        WATCHED,
        "the unwatched file sent no update"
    );
    assert!(list_changed >= 1, "a created file changes the listing");

    call(
        &app,
        &alice,
        "update_custom_tool",
        json!({"name": "shout", "code": "return String(args.text).toLowerCase();"}),
    )
    .await;
    assert_eq!(listen.next_update(&mut list_changed).await, SOURCE);

    service
        .update_resource(&person, "guide", defined("v2"), None)
        .await
        .expect("the resource changes");
    assert_eq!(listen.next_update(&mut list_changed).await, GUIDE);
}

#[tokio::test]
async fn a_listen_hears_nothing_of_another_users_files_and_a_token_without_execute_no_file() {
    let (app, _workspaces) = app_with_workspace().await;
    let alice = app.token("alice", None, &Scope::ALL).await;
    let bob = app.token("bob", None, &Scope::ALL).await;
    let reader = app.token("bob", None, &[Scope::ToolsRead]).await;

    let mut reading = Listen::open(
        &app,
        &reader,
        json!({"resourcesListChanged": true, "resourceSubscriptions": [WATCHED, SOURCE]}),
    )
    .await;
    let accepted = reading.acknowledged().await;
    assert_eq!(
        accepted["resourceSubscriptions"],
        json!([SOURCE]),
        "a workspace file is read_file's, which tools:read alone may not call: {accepted:#}"
    );
    drop(reading);

    let mine = "toolsmith://workspace/mine.txt";
    let mut listen = Listen::open(
        &app,
        &bob,
        json!({"resourceSubscriptions": [WATCHED, mine]}),
    )
    .await;
    let accepted = listen.acknowledged().await;
    assert_eq!(accepted["resourceSubscriptions"], json!([WATCHED, mine]));
    call(
        &app,
        &alice,
        "write_file",
        json!({"path": "watched.txt", "content": "alice's"}),
    )
    .await;
    call(
        &app,
        &bob,
        "write_file",
        json!({"path": "mine.txt", "content": "bob's"}),
    )
    .await;
    let mut list_changed = 0;
    assert_eq!(
        listen.next_update(&mut list_changed).await,
        mine,
        "alice's file of the same path told bob nothing"
    );
    assert_eq!(list_changed, 0, "bob did not ask for list changes");
}
