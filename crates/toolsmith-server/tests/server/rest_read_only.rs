//! Read-only mode on every door (issue 31): REST refused its own writes, but the same writes
//! went through tool calls (`add_note`, `write_file`, a custom table) and through an access
//! request (which needs only `tools:read`). Now the service refuses what a built-in would
//! change, and every route that stores something is refused; reads and calls keep working.

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

use crate::rest_support::{TestApp, TestResponse};

async fn execute(app: &TestApp, tool: &str, arguments: Value) -> TestResponse {
    app.post(
        &format!("/api/v1/tools/{tool}/execute"),
        &json!({"arguments": arguments}),
    )
    .await
}

fn refused_as_read_only(res: &TestResponse) {
    assert!(res.text.contains("read-only"), "{}", res.text);
    assert!(
        res.json["data"]["isError"] == true || !res.status.is_success(),
        "{}",
        res.text
    );
}

#[tokio::test]
async fn read_only_mode_refuses_writes_through_tool_calls_and_access_requests() {
    let ws = tempfile::tempdir().unwrap();
    let workspace = toolsmith_builtins::workspace::WorkspaceSettings::new(ws.path().join("ws"));
    // The same store first writable, then served read-only.
    let writable = TestApp::with_configs(
        ToolServiceSettings {
            workspace: Some(workspace.clone()),
            ..ToolServiceSettings::default()
        },
        ServerSettings::default(),
    )
    .await;
    execute(
        &writable,
        "add_note",
        json!({"title": "kept", "content": "before"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    execute(
        &writable,
        "write_file",
        json!({"path": "a.txt", "content": "before"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let service = ToolServiceSettings {
        workspace: Some(workspace),
        read_only: true,
        ..ToolServiceSettings::default()
    };
    let server = ServerSettings {
        read_only: true,
        ..ServerSettings::default()
    };
    let app = TestApp::reopen(&writable, service, server).await;

    for (tool, args) in [
        ("add_note", json!({"title": "t", "content": "c"})),
        ("write_file", json!({"path": "a.txt", "content": "after"})),
        ("delete_file", json!({"path": "a.txt"})),
        ("create_folder", json!({"path": "d"})),
        (
            "create_custom_table",
            json!({"table": "t", "columns": [{"name": "c", "type": "text"}]}),
        ),
        ("remember", json!({"content": "a fact", "type": "fact"})),
    ] {
        refused_as_read_only(&execute(&app, tool, args).await);
    }
    // An access request stores a request: refused too, though it needs only `tools:read`.
    let res = app
        .post("/api/v1/mcp-access-requests", &json!({"server": "any"}))
        .await;
    res.assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(res.text.contains("read-only"), "{}", res.text);

    // Reads and calls that change nothing still work, and nothing changed.
    let notes = execute(&app, "list_notes", json!({}))
        .await
        .assert_ok(StatusCode::OK);
    assert!(notes.to_string().contains("before"), "{notes}");
    assert!(!notes.to_string().contains("\"c\""), "{notes}");
    let file = execute(&app, "read_file", json!({"path": "a.txt"}))
        .await
        .assert_ok(StatusCode::OK);
    assert!(file.to_string().contains("before"), "{file}");
    let sum = execute(&app, "calculate", json!({"expression": "2*21"}))
        .await
        .assert_ok(StatusCode::OK);
    assert!(sum.to_string().contains("42"), "{sum}");
}
