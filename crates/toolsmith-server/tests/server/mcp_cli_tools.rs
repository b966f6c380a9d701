//! CLI tools (issue 39, 003 §25) end to end through MCP: the host's programs run in the
//! command sandbox (bubblewrap) on the caller's workspace, each under its policy — from its
//! risk by default, from the Config Center service `cli_tools` when a person sets one.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

use crate::mcp_outside::{assert_search_finds, call, configure, mcp};
use crate::rest_support::{TestApp, command_sandbox_works};

fn entry<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {list}"))
}

/// Whether a file named `name` is anywhere below `dir`.
fn found(dir: &std::path::Path, name: &str) -> bool {
    std::fs::read_dir(dir).unwrap().flatten().any(|e| {
        let path = e.path();
        e.file_name() == name || (path.is_dir() && found(&path, name))
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_run_in_the_sandbox_under_their_policy_through_mcp() {
    if !command_sandbox_works().await
        || !toolsmith_core::testkit::require_path("jq", std::path::Path::new("/usr/bin/jq"))
        || !toolsmith_core::testkit::require_path(
            "sqlite3",
            std::path::Path::new("/usr/bin/sqlite3"),
        )
    {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let settings = ToolServiceSettings {
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            ws.path().join("workspaces"),
        )),
        ..ToolServiceSettings::default()
    };
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/cliTools",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let client = mcp(&app).await;

    let (is_error, _, text) = call(
        &client,
        "write_file",
        json!({"path": "people.json", "content": "{\"name\": \"Ada\", \"born\": 1815}"}),
    )
    .await;
    assert!(!is_error, "{text}");

    let (is_error, listed, text) = call(&client, "list_cli_tools", json!({})).await;
    assert!(!is_error, "{text}");
    let jq = entry(&listed, "jq");
    assert_eq!(jq["installed"], true, "{jq}");
    assert_eq!(jq["risk"], "low");
    assert_eq!(jq["policy"], "allowed");
    assert_eq!(entry(&listed, "python3")["policy"], "blocked");
    assert_eq!(entry(&listed, "sqlite3")["policy"], "prompt");

    // A low-risk program runs, on the workspace's file, as an argv (no shell).
    let (is_error, ran, text) = call(
        &client,
        "run_cli_tool",
        json!({"name": "jq", "args": ["-c", "{who: .name, age: (1852 - .born)}", "people.json"]}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(ran["exitCode"], 0, "{ran}");
    assert_eq!(
        ran["stdout"].as_str().unwrap().trim(),
        r#"{"who":"Ada","age":37}"#
    );

    // A shell's syntax is only an argument.
    let (_, ran, text) = call(
        &client,
        "run_cli_tool",
        json!({"name": "jq", "args": [".", "people.json; touch pwned"]}),
    )
    .await;
    assert_ne!(ran["exitCode"], 0, "{text}");
    assert!(!found(ws.path(), "pwned"), "no shell ran the rest");

    // High risk: blocked; medium (`prompt`): a model's call waits for a person's approval,
    // and the same call runs once a person allows it.
    let (is_error, _, text) = call(
        &client,
        "run_cli_tool",
        json!({"name": "python3", "args": ["-c", "print(1)"]}),
    )
    .await;
    assert!(is_error && text.contains("blocked"), "{text}");
    let sql = json!({"name": "sqlite3", "args": [":memory:", "select 6*7;"]});
    let (is_error, _, text) = call(&client, "run_cli_tool", sql.clone()).await;
    assert!(is_error && text.contains("awaiting approval"), "{text}");
    let start = text.find("apr_").unwrap();
    let id: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    app.post(
        &format!("/api/v1/approvals/{id}/decision"),
        &json!({"decision": "allow_once"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let (is_error, ran, text) = call(&client, "run_cli_tool", sql.clone()).await;
    assert!(!is_error, "{text}");
    assert_eq!(ran["stdout"].as_str().unwrap().trim(), "42", "{ran}");
    assert_eq!(ran["policy"], "prompt");

    configure(
        &app,
        "cli_tools",
        &[("sqlite3", "text")],
        json!({"sqlite3": "allowed"}),
    )
    .await;
    let (is_error, ran, text) = call(&client, "run_cli_tool", sql).await;
    assert!(!is_error, "{text}");
    assert_eq!(ran["stdout"].as_str().unwrap().trim(), "42", "{ran}");
    assert_eq!(ran["policy"], "allowed");

    // Nothing is installed by a model.
    let (is_error, _, text) = call(&client, "install_cli_tool", json!({"name": "leftpad"})).await;
    assert!(is_error && text.contains("installs no program"), "{text}");
    let (is_error, known, text) = call(&client, "install_cli_tool", json!({"name": "jq"})).await;
    assert!(!is_error && known["installed"] == true, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tools_finds_the_cli_tools() {
    assert_search_finds(&[
        ("run jq on this file", &["run_cli_tool"][..]),
        (
            "which command line programs are installed",
            &["list_cli_tools"][..],
        ),
    ])
    .await;
}
