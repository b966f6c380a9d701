//! MCP calls respect the caller's scopes and read-only mode, like REST.

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::{Identity, Scope};
use toolsmith_server::mcp::ToolsmithMcp;
use toolsmith_service::ToolServiceSettings;

async fn call_as(identity: Identity, name: &str, args: Value) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let state = crate::mcp_support::open_state_with(
        dir.path(),
        ServerSettings::default(),
        ToolServiceSettings::default(),
    )
    .await;
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = ToolsmithMcp::new(state, identity).serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.expect("client connects");
    let Value::Object(args) = args else {
        panic!("object args")
    };
    let res = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .expect("a tool result, not a protocol error");
    let text = serde_json::to_string(&res.content).unwrap();
    (res.is_error == Some(true), text)
}

fn create_args() -> Value {
    json!({"name": "t", "description": "d", "parameters": {"type": "object"}, "code": "return 1"})
}

#[tokio::test]
async fn control_plane_writes_need_the_write_scope() {
    let reader = Identity {
        scopes: vec![Scope::ToolsRead, Scope::ToolsExecute],
        ..Identity::local_default()
    };
    let (is_error, text) = call_as(reader, "create_tool", create_args()).await;
    assert!(is_error && text.contains("tools:write"), "{text}");
    let (is_error, text) = call_as(Identity::local_default(), "create_tool", create_args()).await;
    assert!(!is_error, "{text}");
}

#[tokio::test]
async fn calls_need_the_execute_scope_and_read_only_refuses_writes() {
    let reader = Identity {
        scopes: vec![Scope::ToolsRead],
        ..Identity::local_default()
    };
    let (is_error, text) = call_as(reader, "calculate", json!({"expression": "1+1"})).await;
    assert!(is_error && text.contains("tools:execute"), "{text}");
    let read_only = Identity {
        read_only: true,
        ..Identity::local_default()
    };
    let (is_error, text) = call_as(read_only.clone(), "create_tool", create_args()).await;
    assert!(is_error && text.contains("read-only"), "{text}");
    let (is_error, text) = call_as(read_only, "calculate", json!({"expression": "1+1"})).await;
    assert!(!is_error, "reads and executions keep working: {text}");
}
