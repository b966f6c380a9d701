//! The MCP bridge end to end: a real upstream (the official Python SDK over stdio,
//! `tests/clients/mcp_upstream.py`) bridged into Toolsmith, called through Toolsmith's own MCP
//! face by rmcp's client. Bridged calls run the whole pipeline (schema, policy, approvals,
//! scrubbing); the upstream's `list_changed` reaches Toolsmith's clients; a name already taken
//! is refused, not shadowed.

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_service::ToolServiceSettings;
use toolsmith_service::bridge::{McpServerConfig, ServerState};

use crate::mcp_protocol::Session;
use crate::mcp_support::{clients_dir, prerequisite, python};
use crate::rest_support::TestApp;

fn upstream(name: &str) -> McpServerConfig {
    let mut env = std::collections::BTreeMap::new();
    env.insert(
        "UPSTREAM_SECRET".to_owned(),
        "sk-live-upstream-0123456789abcdef".to_owned(),
    );
    McpServerConfig {
        name: name.to_owned(),
        command: python().display().to_string(),
        args: vec![clients_dir().join("mcp_upstream.py").display().to_string()],
        env,
        prefix: None,
        enabled: true,
        tool_allow: Vec::new(),
        tool_deny: vec!["fail_not_there".to_owned()],
        call_timeout_seconds: Some(20),
    }
}

/// An app bridging `servers`, once every one of them is connected.
async fn app_with(servers: Vec<McpServerConfig>) -> TestApp {
    let app = TestApp::with_configs(
        ToolServiceSettings {
            mcp_servers: servers,
            ..ToolServiceSettings::default()
        },
        toolsmith_server::ServerConfig::default(),
    )
    .await;
    let service = app.state.service.clone();
    let connected = async {
        loop {
            let status = service.mcp_servers();
            if status.iter().all(|s| s.state == ServerState::Connected) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(30), connected)
        .await
        .is_err()
    {
        panic!("the upstream never connected: {:?}", service.mcp_servers());
    }
    app
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_sdk_server_is_bridged_and_called_through_toolsmiths_mcp_face() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("up")]).await;
    let session = Session::open(&app.state, "default").await;
    let names = session.names().await;
    for tool in [
        "mcp_up_echo",
        "mcp_up_add",
        "mcp_up_fail",
        "mcp_up_reveal",
        "mcp_up_wipe",
    ] {
        assert!(
            names.contains(&tool.to_owned()),
            "{tool} missing from {names:?}"
        );
    }

    let (failed, _, text) = session.ok("mcp_up_echo", json!({"text": "hello"})).await;
    assert!(!failed, "{text}");
    assert!(text.contains("hello"), "{text}");
    let (failed, structured, text) = session.ok("mcp_up_add", json!({"a": 2, "b": 40})).await;
    assert!(!failed, "{text}");
    assert!(
        structured.to_string().contains("42") || text.contains("42"),
        "{structured} {text}"
    );

    // The schema is Toolsmith's to enforce before anything reaches the upstream.
    let (failed, _, text) = session.ok("mcp_up_add", json!({"a": "two", "b": 40})).await;
    assert!(failed, "{text}");
    // An upstream tool error is a tool error with the upstream's message (the Python SDK
    // reports a raised exception as "Error executing tool fail").
    let (failed, _, text) = session.ok("mcp_up_fail", json!({"reason": "no"})).await;
    assert!(failed && text.contains("fail"), "{text}");

    // The status counts the calls and their errors.
    let status = &app.state.service.mcp_servers()[0];
    assert_eq!(status.name, "up");
    assert!(status.calls >= 2 && status.errors >= 1, "{status:?}");
    assert_eq!(status.connections, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstreams_list_changed_reaches_toolsmiths_clients() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("grower")]).await;
    let session = Session::open(&app.state, "default").await;
    assert!(
        !session
            .names()
            .await
            .contains(&"mcp_grower_late".to_owned())
    );
    let before = session.changes();
    let (failed, _, text) = session.ok("mcp_grower_grow", json!({})).await;
    assert!(!failed, "{text}");
    session.notified(before + 1).await;
    let appeared = async {
        while !session
            .names()
            .await
            .contains(&"mcp_grower_late".to_owned())
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(2), appeared)
        .await
        .expect("the new upstream tool is listed");
    let (failed, _, text) = session.ok("mcp_grower_late", json!({"word": "late"})).await;
    assert!(!failed && text.contains("LATE"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridged_answers_are_scrubbed_and_destructive_tools_are_flagged() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("sec")]).await;
    let session = Session::open(&app.state, "default").await;
    let (failed, _, text) = session.ok("mcp_sec_reveal", json!({})).await;
    assert!(!failed, "{text}");
    assert!(
        !text.contains("sk-live-upstream-0123456789abcdef"),
        "{text}"
    );
    assert!(text.contains("[REDACTED]"), "{text}");

    let tools = app.get("/api/v1/tools").await.json;
    let find = |name: &str| -> Value {
        tools["data"]["tools"]
            .as_array()
            .and_then(|list| list.iter().find(|t| t["name"] == name).cloned())
            .unwrap_or_else(|| panic!("{name} not listed: {tools}"))
    };
    assert_eq!(find("mcp_sec_wipe")["requiresConfirmation"], true);
    assert_eq!(find("mcp_sec_wipe")["source"], "mcp");
    assert_eq!(find("mcp_sec_echo")["requiresConfirmation"], false);
    // Under the default approval setting, an explicitly destructive tool waits for a person.
    let res = app
        .post(
            "/api/v1/tools/mcp_sec_wipe/execute",
            &json!({"arguments": {}}),
        )
        .await;
    assert!(res.text.contains("approval"), "{} {}", res.status, res.text);
    assert!(!res.text.contains("wiped"), "{}", res.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_name_is_refused_and_the_allow_and_deny_lists_hold() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    // Two servers with one prefix: the second's `echo` lands on the first's name.
    let mut first = upstream("one");
    first.prefix = Some("shared_".to_owned());
    first.tool_allow = vec!["echo".to_owned(), "add".to_owned(), "wipe".to_owned()];
    first.tool_deny = vec!["wipe".to_owned()];
    let mut second = upstream("two");
    second.prefix = Some("shared_".to_owned());
    second.tool_allow = vec!["echo".to_owned()];
    let app = app_with(vec![first, second]).await;
    let status = app.state.service.mcp_servers();
    let bridged: Vec<&String> = status.iter().flat_map(|s| s.tools.iter()).collect();
    assert_eq!(
        bridged
            .iter()
            .filter(|n| n.as_str() == "shared_echo")
            .count(),
        1,
        "{status:?}"
    );
    assert!(
        bridged.iter().any(|n| n.as_str() == "shared_add"),
        "{status:?}"
    );
    assert!(
        !bridged.iter().any(|n| n.as_str() == "shared_wipe"),
        "{status:?}"
    );
    let skipped: Vec<&String> = status.iter().flat_map(|s| s.skipped.iter()).collect();
    assert!(
        skipped
            .iter()
            .any(|s| s.starts_with("echo: the name is taken")),
        "{status:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_upstream_is_restarted_and_its_tools_listed_again() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("phoenix")]).await;
    let session = Session::open(&app.state, "default").await;
    assert!(
        session
            .names()
            .await
            .contains(&"mcp_phoenix_echo".to_owned())
    );
    let before = session.changes();
    // The call itself fails: the upstream is gone before it answers.
    let (failed, _, text) = session.ok("mcp_phoenix_die", json!({})).await;
    assert!(failed, "{text}");
    let service = app.state.service.clone();
    let back = async {
        loop {
            let status = &service.mcp_servers()[0];
            if status.connections >= 2 && status.state == ServerState::Connected {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), back)
        .await
        .unwrap_or_else(|_| panic!("no reconnect: {:?}", service.mcp_servers()));
    // Its tools left the catalogue and came back: clients were told both times.
    session.notified(before + 2).await;
    let (failed, _, text) = session
        .ok("mcp_phoenix_echo", json!({"text": "again"}))
        .await;
    assert!(!failed && text.contains("again"), "{text}");
}
