//! `requiresConfirmation` on every door (issue 35): a built-in flagged so (`delete_file`)
//! called by a model — an MCP session, `use_tool`, a nested `callTool` of code a model runs,
//! an agent's call — waits for a person: the client's form when it declared elicitation and
//! may decide, else an approval decided in the UI, REST or the CLI. A person's own REST call
//! is not asked; the operator's `confirmation_off` turns it off for a tool.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use axum::http::{StatusCode, header};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ErrorData, Implementation,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolsmith_server::auth::{Identity, Scope};
use toolsmith_server::mcp::ToolsmithMcp;
use toolsmith_service::ToolServiceSettings;

use crate::rest_support::{TestApp, execute, request};

/// An application whose file tools work in a folder of their own, with `confirmation_off`.
async fn app_with(confirmation_off: &[&str]) -> (TestApp, tempfile::TempDir) {
    let workspaces = tempfile::tempdir().unwrap();
    let service = ToolServiceSettings {
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            workspaces.path().to_owned(),
        )),
        confirmation_off: confirmation_off.iter().map(|t| (*t).to_owned()).collect(),
        ..ToolServiceSettings::default()
    };
    (
        TestApp::with_configs(service, Default::default()).await,
        workspaces,
    )
}

/// The person behind a client: answers every form with `answer` (`None`: the client has no
/// forms at all), and counts the forms.
#[derive(Clone)]
struct Person {
    answer: Option<&'static str>,
    asked: Arc<AtomicUsize>,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.answer.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("confirmation-test", "1.0"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let ElicitRequestParams::FormElicitationParams { message, .. } = request else {
            panic!("a form is asked for")
        };
        assert!(message.contains("delete_file"), "{message}");
        let answer = match self.answer {
            Some("cancel") => json!({"action": "cancel"}),
            other => json!({"action": "accept", "content": {"decision": other.unwrap_or("deny")}}),
        };
        Ok(serde_json::from_value(answer).unwrap())
    }
}

async fn connect(
    app: &TestApp,
    answer: Option<&'static str>,
) -> (RunningService<RoleClient, Person>, Arc<AtomicUsize>) {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ToolsmithMcp::new(app.state.clone(), Identity::local_default());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let person = Person {
        answer,
        asked: asked.clone(),
    };
    (
        person.serve(client_io).await.expect("client connects"),
        asked,
    )
}

/// A `tools/call`: `(isError, text)`.
async fn call(
    client: &RunningService<RoleClient, Person>,
    name: &str,
    args: Value,
) -> (bool, String) {
    let Value::Object(args) = args else { panic!() };
    let res = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = res
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    (res.is_error.unwrap_or(false), text)
}

/// Writes `path` through REST, as the person.
async fn write(app: &TestApp, path: &str) {
    let res = execute(
        app,
        "write_file",
        json!({"path": path, "content": "keep me"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(res["isError"], false, "{res}");
}

/// Whether `path` is still there (read through REST, as the person).
async fn exists(app: &TestApp, path: &str) -> bool {
    let res = execute(app, "read_file", json!({"path": path}))
        .await
        .assert_ok(StatusCode::OK);
    res["isError"] == false
}

/// The approval id a waiting call's text names.
fn approval_in(text: &str) -> String {
    let start = text
        .find("apr_")
        .unwrap_or_else(|| panic!("no approval named: {text}"));
    text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

async fn allow_once(app: &TestApp, id: &str) {
    app.post(
        &format!("/api/v1/approvals/{id}/decision"),
        &json!({"decision": "allow_once"}),
    )
    .await
    .assert_ok(StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_delete_file_is_confirmed_in_the_clients_form_and_a_refusal_is_final() {
    let (app, _workspaces) = app_with(&[]).await;
    write(&app, "a.txt").await;

    // The person refuses: nothing is deleted, and the same call is refused again unasked.
    let (client, asked) = connect(&app, Some("deny")).await;
    let (is_error, text) = call(&client, "delete_file", json!({"path": "a.txt"})).await;
    assert!(is_error, "{text}");
    assert!(text.contains("denied"), "{text}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(exists(&app, "a.txt").await);
    let (is_error, text) = call(&client, "delete_file", json!({"path": "a.txt"})).await;
    assert!(is_error && text.contains("denied"), "{text}");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "a denial is final for that call"
    );
    assert!(exists(&app, "a.txt").await);

    // The person confirms: it runs.
    write(&app, "b.txt").await;
    let (client, asked) = connect(&app, Some("allow_once")).await;
    let (is_error, text) = call(&client, "delete_file", json!({"path": "b.txt"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert!(!exists(&app, "b.txt").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_form_a_models_delete_file_waits_for_an_approval_on_every_door() {
    let (app, _workspaces) = app_with(&[]).await;
    let (client, _) = connect(&app, None).await;

    // MCP tools/call.
    write(&app, "a.txt").await;
    let (is_error, text) = call(&client, "delete_file", json!({"path": "a.txt"})).await;
    assert!(is_error && text.contains("awaiting approval"), "{text}");
    assert!(exists(&app, "a.txt").await);
    allow_once(&app, &approval_in(&text)).await;
    let (is_error, text) = call(&client, "delete_file", json!({"path": "a.txt"})).await;
    assert!(!is_error, "{text}");
    assert!(!exists(&app, "a.txt").await);

    // The use_tool meta-tool.
    write(&app, "b.txt").await;
    let (is_error, text) = call(
        &client,
        "use_tool",
        json!({"tool_name": "delete_file", "arguments": {"path": "b.txt"}}),
    )
    .await;
    assert!(is_error && text.contains("awaiting approval"), "{text}");
    assert!(exists(&app, "b.txt").await);

    // A nested callTool in code the model runs.
    write(&app, "c.txt").await;
    let (is_error, text) = call(
        &client,
        "run_js_ephemeral",
        json!({
            "code": "return await utils.callTool('delete_file', {path: 'c.txt'});",
            "permissions": ["filesystem"]
        }),
    )
    .await;
    assert!(is_error && text.contains("approval"), "{text}");
    assert!(exists(&app, "c.txt").await);

    // An agent's REST call (an agent-bound token): a model too.
    write(&app, "d.txt").await;
    let token = app
        .token(
            "default",
            Some("bot"),
            &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute],
        )
        .await;
    let req = request(
        axum::http::Method::POST,
        "/api/v1/tools/delete_file/execute",
    )
    .header(header::AUTHORIZATION, format!("Bearer {token}"))
    .header(header::CONTENT_TYPE, "application/json")
    .body(Body::from(
        json!({"arguments": {"path": "d.txt"}}).to_string(),
    ))
    .unwrap();
    let res = app.send(req).await.assert_ok(StatusCode::OK);
    assert_eq!(res["metadata"]["errorKind"], "approval_required", "{res}");
    assert!(exists(&app, "d.txt").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persons_rest_call_is_not_asked_and_the_operator_can_turn_confirmation_off() {
    let (app, _workspaces) = app_with(&[]).await;
    write(&app, "a.txt").await;
    let res = execute(&app, "delete_file", json!({"path": "a.txt"}))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(res["isError"], false, "{res}");
    assert!(!exists(&app, "a.txt").await);

    let (off, _off_workspaces) = app_with(&["delete_file"]).await;
    write(&off, "b.txt").await;
    let (client, asked) = connect(&off, Some("deny")).await;
    let (is_error, text) = call(&client, "delete_file", json!({"path": "b.txt"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    assert!(!exists(&off, "b.txt").await);
}
