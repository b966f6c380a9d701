//! The MCP bridge end to end: a real upstream (the official Python SDK over stdio,
//! `tests/clients/mcp_upstream.py`) bridged into Toolsmith, called through Toolsmith's own MCP
//! face by rmcp's client. Bridged calls run the whole pipeline (schema, policy, approvals,
//! scrubbing); the upstream's `list_changed` reaches Toolsmith's clients; a name already taken
//! is refused, not shadowed.

use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_service::ToolServiceSettings;
use toolsmith_service::bridge::{McpServerRegistration, ServerState, Transport};

use crate::mcp_protocol::Session;
use crate::mcp_support::{clients_dir, prerequisite, python};
use crate::rest_support::TestApp;

pub(crate) fn upstream(name: &str) -> McpServerRegistration {
    let mut env = std::collections::BTreeMap::new();
    env.insert(
        "UPSTREAM_SECRET".to_owned(),
        "sk-live-upstream-0123456789abcdef".to_owned(),
    );
    McpServerRegistration {
        name: name.to_owned(),
        transport: Transport::Stdio,
        command: python().display().to_string(),
        args: vec![clients_dir().join("mcp_upstream.py").display().to_string()],
        env,
        url: None,
        headers: Default::default(),
        bearer_token: None,
        prefix: None,
        enabled: true,
        tool_allow: Vec::new(),
        tool_deny: vec!["fail_not_there".to_owned()],
        call_timeout_seconds: Some(20),
        deferred: None,
    }
}

/// An app bridging `server` with grants on (`mcp_grants`), not waiting for it to connect.
pub(crate) async fn app_with_grants(server: McpServerRegistration) -> TestApp {
    TestApp::with_configs(
        ToolServiceSettings {
            mcp_servers: vec![server],
            mcp_bridge: toolsmith_service::bridge::BridgeSettings {
                grants: true,
                ..Default::default()
            },
            ..ToolServiceSettings::default()
        },
        toolsmith_server::ServerSettings::default(),
    )
    .await
}

/// An app bridging `servers`, once every one of them is connected.
pub(crate) async fn app_with(servers: Vec<McpServerRegistration>) -> TestApp {
    let app = TestApp::with_configs(
        ToolServiceSettings {
            mcp_servers: servers,
            ..ToolServiceSettings::default()
        },
        toolsmith_server::ServerSettings::default(),
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

/// An app whose operator allowed the test's Python for servers registered at run time.
async fn app_allowing_python(threshold: Option<usize>) -> TestApp {
    let mut bridge = toolsmith_service::bridge::BridgeSettings {
        allowed_commands: vec![python()],
        ..Default::default()
    };
    if let Some(threshold) = threshold {
        bridge.deferred_threshold = threshold;
    }
    TestApp::with_configs(
        ToolServiceSettings {
            mcp_bridge: bridge,
            ..ToolServiceSettings::default()
        },
        toolsmith_server::ServerSettings::default(),
    )
    .await
}

/// The REST body registering the Python upstream as `name`.
fn registration(name: &str) -> Value {
    json!({
        "name": name,
        "command": python().display().to_string(),
        "args": [clients_dir().join("mcp_upstream.py").display().to_string()],
        "env": {"UPSTREAM_SECRET": "{{config.weatherapi.api_key}}"},
        "callTimeoutSeconds": 20,
    })
}

/// Polls `GET /api/v1/mcp-servers/{name}` until `done` holds (30 s at most).
async fn wait_status(app: &TestApp, name: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let status = app.get(&format!("/api/v1/mcp-servers/{name}")).await.json;
        if done(&status["data"]) {
            return status["data"].clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "server '{name}' never got there: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

const UPSTREAM_KEY: &str = "sk-live-configcenter-0123456789abcdef";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_are_registered_through_rest_only_with_an_allowed_program() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    // Nothing allowed (the default): refused, and the message names the setting.
    let closed = TestApp::new().await;
    let res = closed
        .post("/api/v1/mcp-servers", &registration("up"))
        .await;
    let message = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(message.contains("mcp_allowed_commands"), "{message}");
    assert!(closed.state.service.mcp_servers().is_empty());

    let app = app_allowing_python(None).await;
    // A program outside the allowlist, whatever it is called, and a shell line as a command.
    for command in ["/bin/sh", "sh", "python3 -c 'print(1)'"] {
        let mut body = registration("other");
        body["command"] = json!(command);
        let res = app.post("/api/v1/mcp-servers", &body).await;
        assert!(
            res.status == StatusCode::FORBIDDEN || res.status == StatusCode::UNPROCESSABLE_ENTITY,
            "{command}: {} {}",
            res.status,
            res.text
        );
    }
    // Hostile fields are refused with the field named.
    let mut bad = registration("Bad Name");
    let res = app.post("/api/v1/mcp-servers", &bad).await;
    assert!(
        res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error")
            .contains("name")
    );
    bad = registration("bad-env");
    bad["env"] = json!({"X": "{{config.weatherapi}}"});
    let res = app.post("/api/v1/mcp-servers", &bad).await;
    assert!(
        res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error")
            .contains("env X")
    );
    bad = registration("extra");
    bad["shell"] = json!(true);
    assert_eq!(
        app.post("/api/v1/mcp-servers", &bad).await.status,
        StatusCode::BAD_REQUEST
    );

    // The secret the upstream needs lives in the Config Center; the server's env references it.
    app.config_secret("weatherapi", UPSTREAM_KEY).await;
    let created = app
        .post("/api/v1/mcp-servers", &registration("reg"))
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(created["source"], "api");
    assert_eq!(created["revision"], 1);
    assert_eq!(created["config"]["envNames"], json!(["UPSTREAM_SECRET"]));
    let res = app.post("/api/v1/mcp-servers", &registration("reg")).await;
    res.assert_error(StatusCode::CONFLICT, "name_taken");

    let status = wait_status(&app, "reg", |s| s["state"] == "connected").await;
    assert!(status["toolCount"].as_u64().unwrap() >= 5, "{status}");
    assert_eq!(status["deferred"], false);
    // The upstream got the Config Center value (it answers with it), and the client sees it
    // scrubbed; the store holds only the reference.
    let session = Session::open(&app.state, "default").await;
    let (failed, _, text) = session.ok("mcp_reg_reveal", json!({})).await;
    assert!(!failed, "{text}");
    assert!(
        !text.contains(UPSTREAM_KEY) && text.contains("[REDACTED]"),
        "{text}"
    );
    assert!(
        !text.contains("unset"),
        "the env reference was not resolved: {text}"
    );
    let stored = app.stored_text();
    assert!(stored.contains("{{config.weatherapi.api_key}}"));
    assert!(
        !stored.contains(UPSTREAM_KEY),
        "the secret is stored in clear"
    );

    // The list shows it with its counters.
    let list = app
        .get("/api/v1/mcp-servers")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 1);
    assert!(list["servers"][0]["calls"].as_u64().unwrap() >= 1, "{list}");

    // A change restarts it with the new lists; a stale revision is refused.
    let mut change = registration("reg");
    change["toolDeny"] = json!(["wipe"]);
    change["expectedRevision"] = json!(1);
    let changed = app
        .json(Method::PUT, "/api/v1/mcp-servers/reg", &change)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(changed["revision"], 2);
    let res = app
        .json(Method::PUT, "/api/v1/mcp-servers/reg", &change)
        .await;
    res.assert_error(StatusCode::CONFLICT, "revision_conflict");
    let status = wait_status(&app, "reg", |s| s["state"] == "connected").await;
    let tools: Vec<String> = serde_json::from_value(status["tools"].clone()).unwrap();
    assert!(tools.contains(&"mcp_reg_echo".to_owned()), "{status}");
    assert!(!tools.contains(&"mcp_reg_wipe".to_owned()), "{status}");
    app.post("/api/v1/mcp-servers/reg/retry", &json!({}))
        .await
        .assert_ok(StatusCode::OK);

    // Removed: its tools leave the catalogue; the name is free again.
    app.call(Method::DELETE, "/api/v1/mcp-servers/reg")
        .await
        .assert_ok(StatusCode::OK);
    assert!(!session.names().await.contains(&"mcp_reg_echo".to_owned()));
    app.call(Method::DELETE, "/api/v1/mcp-servers/reg")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    let audit = app.get("/api/v1/audit").await.json.to_string();
    for action in [
        "mcp_server.create",
        "mcp_server.update",
        "mcp_server.delete",
    ] {
        assert!(audit.contains(action), "{action} not audited: {audit}");
    }
    assert!(!audit.contains(UPSTREAM_KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_file_servers_are_shown_but_not_changed_through_rest() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("filed")]).await;
    let status = app
        .get("/api/v1/mcp-servers/filed")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(status["source"], "config");
    assert_eq!(status["state"], "connected");
    // Env values of the file may be secrets: names only.
    assert!(!status.to_string().contains("sk-live-upstream"), "{status}");
    let mut body = registration("filed");
    body["command"] = json!(python().display().to_string());
    let res = app
        .json(Method::PUT, "/api/v1/mcp-servers/filed", &body)
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.text);
    let res = app.call(Method::DELETE, "/api/v1/mcp-servers/filed").await;
    let message = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(message.contains("configuration file"), "{message}");
    app.get("/api/v1/mcp-servers/nope")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_upstream_is_deferred_out_of_tools_list_but_found_and_called() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    // A threshold of 3: the upstream's 7 tools are deferred.
    let app = app_allowing_python(Some(3)).await;
    let mut body = registration("big");
    body["env"] = json!({});
    app.post("/api/v1/mcp-servers", &body)
        .await
        .assert_ok(StatusCode::CREATED);
    let status = wait_status(&app, "big", |s| s["state"] == "connected").await;
    assert_eq!(status["deferred"], true, "{status}");
    let session = Session::open(&app.state, "default").await;
    let names = session.names().await;
    assert!(
        !names.iter().any(|n| n.starts_with("mcp_big_")),
        "{names:?}"
    );
    let (failed, found, _) = session
        .ok("search_tools", json!({"query": "echo the text back"}))
        .await;
    assert!(!failed, "{found}");
    assert!(found.to_string().contains("mcp_big_echo"), "{found}");
    let (failed, used, text) = session
        .ok(
            "use_tool",
            json!({"tool_name": "mcp_big_echo", "arguments": {"text": "deferred"}}),
        )
        .await;
    assert!(!failed && text.contains("deferred"), "{used} {text}");
    // `deferred: false` overrides the threshold.
    body["deferred"] = json!(false);
    app.json(Method::PUT, "/api/v1/mcp-servers/big", &body)
        .await
        .assert_ok(StatusCode::OK);
    wait_status(&app, "big", |s| {
        s["state"] == "connected" && s["deferred"] == false
    })
    .await;
    assert!(session.names().await.contains(&"mcp_big_echo".to_owned()));
}

/// Sends `method path` with `body` as the holder of `token`.
async fn as_token(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> crate::rest_support::TestResponse {
    let builder = axum::http::Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json");
    let body = body.map_or_else(String::new, Value::to_string);
    app.send(builder.body(axum::body::Body::from(body)).unwrap())
        .await
}

/// What `bob` meets of the bridged tool `name` on every face: (listed by REST, listed by MCP
/// tools/list, found by search_tools, a call through use_tool answered).
async fn faces(app: &TestApp, bob: &str, session: &Session, name: &str) -> [bool; 4] {
    let listed = as_token(app, bob, Method::GET, "/api/v1/tools", None).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    let rest = listed.text.contains(&format!("\"{name}\""));
    let mcp = session.names().await.contains(&name.to_owned());
    let (_, found, _) = session.ok("search_tools", json!({"query": name})).await;
    let search = found["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == name));
    if !search {
        // Nor does the answer name it anywhere else (a suggestion, a message).
        let mut rest = found.clone();
        rest.as_object_mut().map(|o| o.remove("query"));
        assert!(!rest.to_string().contains(name), "{found}");
    }
    let (failed, _, text) = session
        .ok(
            "use_tool",
            json!({"tool_name": name, "arguments": {"text": "hi"}}),
        )
        .await;
    let called = !failed;
    if failed {
        assert!(
            text.contains("not allowed")
                || text.contains("not found")
                || text.contains("no grant")
                || text.contains("Unknown"),
            "a refused call says why: {text}"
        );
    }
    [rest, mcp, search, called]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_hides_a_denied_tool_on_every_face_and_an_approved_request_shows_it() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with_grants(upstream("g")).await;
    wait_status(&app, "g", |s| s["state"] == "connected").await;
    let admin = app
        .post(
            "/api/v1/tokens",
            &json!({"name": "admin", "scopes": ["admin"]}),
        )
        .await
        .assert_ok(StatusCode::CREATED)["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let bob = as_token(
        &app,
        &admin,
        Method::POST,
        "/api/v1/tokens",
        Some(&json!({"name": "bob", "userId": "bob", "scopes": ["tools:read", "tools:execute"]})),
    )
    .await
    .assert_ok(StatusCode::CREATED)["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut identity = toolsmith_server::auth::Identity::local_default();
    identity.user_id = "bob".to_owned();
    identity.scopes = vec![
        toolsmith_server::auth::Scope::ToolsRead,
        toolsmith_server::auth::Scope::ToolsExecute,
    ];
    let session = Session::open_with(&app.state, identity).await;

    // No grant: bob meets none of the server's tools anywhere; the admin meets them all.
    assert_eq!(faces(&app, &bob, &session, "mcp_g_echo").await, [false; 4]);
    let admin_list = as_token(&app, &admin, Method::GET, "/api/v1/tools", None).await;
    assert!(admin_list.text.contains("\"mcp_g_echo\""));
    let direct = as_token(
        &app,
        &bob,
        Method::POST,
        "/api/v1/tools/mcp_g_echo/execute",
        Some(&json!({"arguments": {"text": "hi"}})),
    )
    .await;
    // REST answers a refused call as a tool error of kind `denied`, naming the way to ask.
    assert_eq!(
        direct.json["data"]["metadata"]["errorKind"], "denied",
        "{}",
        direct.text
    );
    assert!(
        direct.text.contains("mcp-access-requests"),
        "{}",
        direct.text
    );
    // Grants are the admin's.
    let grant =
        json!({"server": "g", "subjectKind": "user", "subject": "bob", "toolDeny": ["echo"]});
    as_token(&app, &bob, Method::POST, "/api/v1/mcp-grants", Some(&grant))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    // A grant of the server that denies `echo`: `add` appears, `echo` stays hidden everywhere.
    let granted = as_token(
        &app,
        &admin,
        Method::POST,
        "/api/v1/mcp-grants",
        Some(&grant),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(granted["toolDeny"], json!(["echo"]));
    assert!(session.names().await.contains(&"mcp_g_add".to_owned()));
    let (failed, _, text) = session.ok("mcp_g_add", json!({"a": 1, "b": 2})).await;
    assert!(!failed, "{text}");
    assert_eq!(faces(&app, &bob, &session, "mcp_g_echo").await, [false; 4]);

    // Bob asks for `echo`; a request for another user is refused.
    let asked = as_token(
        &app,
        &bob,
        Method::POST,
        "/api/v1/mcp-access-requests",
        Some(&json!({"server": "g", "tools": ["echo"], "reason": "to greet"})),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(asked["status"], "pending");
    assert_eq!(asked["subject"], "bob");
    as_token(
        &app,
        &bob,
        Method::POST,
        "/api/v1/mcp-access-requests",
        Some(&json!({"server": "g", "subjectKind": "user", "subject": "carol"})),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    let id = asked["id"].as_str().unwrap();
    let decide = format!("/api/v1/mcp-access-requests/{id}/decision");
    as_token(
        &app,
        &bob,
        Method::POST,
        &decide,
        Some(&json!({"decision": "approve"})),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    // Bob sees his own request pending.
    let mine = as_token(
        &app,
        &bob,
        Method::GET,
        "/api/v1/mcp-access-requests?status=pending",
        None,
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(mine["count"], 1);

    // Approved: the grant is widened in the same step, and `echo` is visible on every face.
    let decided = as_token(
        &app,
        &admin,
        Method::POST,
        &decide,
        Some(&json!({"decision": "approve"})),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(decided["status"], "approved");
    assert_eq!(decided["grantId"], granted["id"]);
    assert_eq!(faces(&app, &bob, &session, "mcp_g_echo").await, [true; 4]);
    // Decided once.
    as_token(
        &app,
        &admin,
        Method::POST,
        &decide,
        Some(&json!({"decision": "reject"})),
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");

    // The grant removed: back to nothing.
    let grants = as_token(&app, &admin, Method::GET, "/api/v1/mcp-grants", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(grants["enforced"], true);
    let grant_id = grants["grants"][0]["id"].as_str().unwrap();
    as_token(
        &app,
        &admin,
        Method::DELETE,
        &format!("/api/v1/mcp-grants/{grant_id}"),
        None,
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(faces(&app, &bob, &session, "mcp_g_echo").await, [false; 4]);
    let audit = as_token(&app, &admin, Method::GET, "/api/v1/audit", None)
        .await
        .text;
    for action in [
        "mcp_grant.put",
        "mcp_access.request",
        "mcp_access.approve",
        "mcp_grant.delete",
    ] {
        assert!(audit.contains(action), "{action} not audited");
    }
}

/// An app allowing the test's Python, and the `env` names `allowed_env` beyond the
/// credential-like ones.
async fn app_allowing_env(allowed_env: &[&str]) -> TestApp {
    TestApp::with_configs(
        ToolServiceSettings {
            mcp_bridge: toolsmith_service::bridge::BridgeSettings {
                allowed_commands: vec![python()],
                allowed_env: allowed_env.iter().map(|s| (*s).to_owned()).collect(),
                ..Default::default()
            },
            ..ToolServiceSettings::default()
        },
        toolsmith_server::ServerSettings::default(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_servers_env_cannot_make_an_allowed_program_run_other_code() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_allowing_env(&["LOG_LEVEL", "MYAPP_*"]).await;
    // Python runs `sitecustomize.py` from any folder PYTHONPATH names, before the server's
    // own code: an allowed program made to run the registrant's code on the host.
    let hook = tempfile::tempdir().unwrap();
    let marker = hook.path().join("ran");
    std::fs::write(
        hook.path().join("sitecustomize.py"),
        format!(
            "open({:?}, 'w').write('host code ran')\n",
            marker.display().to_string()
        ),
    )
    .unwrap();
    let folder = hook.path().display().to_string();
    for (name, value) in [
        ("PYTHONPATH", folder.as_str()),
        ("LD_PRELOAD", "/tmp/hook.so"),
        ("NODE_OPTIONS", "--require /tmp/hook.js"),
        ("PERL5LIB", folder.as_str()),
        ("RUBYOPT", "-r/tmp/hook.rb"),
        ("BASH_ENV", "/tmp/hook.sh"),
        ("PATH", folder.as_str()),
        ("DYLD_INSERT_LIBRARIES", "/tmp/hook.dylib"),
        ("PYTHONSTARTUP", "/tmp/hook.py"),
        ("MYAPPX", "near a listed prefix"),
    ] {
        let mut body = registration("hooked");
        body["env"] = json!({ name: value });
        let res = app.post("/api/v1/mcp-servers", &body).await;
        let message = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
        assert!(
            message.contains(&format!("env '{name}'")) && message.contains("mcp_allowed_env"),
            "{name}: {message}"
        );
        // A change is held to the same rule.
        let res = app
            .json(Method::PUT, "/api/v1/mcp-servers/hooked", &body)
            .await;
        assert!(
            res.status == StatusCode::FORBIDDEN || res.status == StatusCode::NOT_FOUND,
            "{name}: {} {}",
            res.status,
            res.text
        );
    }
    assert!(app.state.service.mcp_servers().is_empty());
    assert!(!marker.exists(), "the hook ran on the host");
    // There is no working directory to choose.
    let mut body = registration("hooked");
    body["cwd"] = json!(folder);
    let res = app.post("/api/v1/mcp-servers", &body).await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.text);

    // A secret written in clear under a credential-like name is refused, naming the fix; a
    // reference is what is stored.
    for (name, value) in [
        ("GITHUB_TOKEN", "ghp_clear0123456789abcdefghijklmnopqrstu"),
        ("UPSTREAM_SECRET", "prefix {{config.weatherapi.api_key}}"),
        ("DB_PASSWORD", "hunter2hunter2"),
    ] {
        let mut body = registration("clear");
        body["env"] = json!({ name: value });
        let res = app.post("/api/v1/mcp-servers", &body).await;
        let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(
            message.contains(name) && message.contains("Config Center reference"),
            "{name}: {message}"
        );
    }
    assert!(!app.stored_text().contains("hunter2hunter2"));

    // Names the operator listed pass, credential-like ones as references; the program starts
    // in `/`, not in the server's working directory.
    app.config_secret("weatherapi", UPSTREAM_KEY).await;
    let mut body = registration("fine");
    body["env"] = json!({
        "LOG_LEVEL": "warn",
        "MYAPP_MODE": "test",
        "UPSTREAM_SECRET": "{{config.weatherapi.api_key}}",
    });
    app.post("/api/v1/mcp-servers", &body)
        .await
        .assert_ok(StatusCode::CREATED);
    wait_status(&app, "fine", |s| s["state"] == "connected").await;
    let session = Session::open(&app.state, "default").await;
    let (failed, structured, text) = session.ok("mcp_fine_cwd", json!({})).await;
    assert!(!failed, "{text}");
    assert_eq!(structured, json!({"result": "/"}), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_always_of_a_bridged_tool_ends_when_the_upstream_changes_its_definition() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("shift")]).await;
    let execute = |args: Value| {
        let app = &app;
        async move {
            app.post(
                "/api/v1/tools/mcp_shift_wipe/execute",
                &json!({ "arguments": args }),
            )
            .await
        }
    };
    // The destructive tool waits for a person, who allows it for good.
    let waiting = execute(json!({})).await;
    let id = waiting.json["data"]["content"]["approvalId"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval id: {}", waiting.text))
        .to_owned();
    app.post(
        &format!("/api/v1/approvals/{id}/decision"),
        &json!({"decision": "allow_always"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let ran = execute(json!({})).await;
    assert!(ran.text.contains("wiped"), "{}", ran.text);

    // The upstream changes what `wipe` is (its description and input schema).
    let session = Session::open(&app.state, "default").await;
    let before = session.changes();
    let (failed, _, text) = session.ok("mcp_shift_redefine", json!({})).await;
    assert!(!failed, "{text}");
    session.notified(before + 1).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let tool = app.get("/api/v1/tools").await;
        if tool.text.contains("for real this time") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{}", tool.text);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The grant was for the old definition: the new one waits for a person again.
    let res = execute(json!({"everything": true})).await;
    assert!(
        !res.text.contains("wiped again") && res.text.contains("approval"),
        "{}",
        res.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rest_call_of_a_bridged_tool_may_take_its_servers_call_timeout() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    // The request limit (1 s here, 60 s by default) is shorter than the server's call timeout
    // (20 s): a bridged call of 2 s is the server's to bound, not the request limit's.
    let app = TestApp::with_configs(
        ToolServiceSettings {
            mcp_servers: vec![upstream("slowpoke")],
            ..ToolServiceSettings::default()
        },
        toolsmith_server::ServerSettings {
            request_timeout: Duration::from_secs(1),
            ..toolsmith_server::ServerSettings::default()
        },
    )
    .await;
    wait_status(&app, "slowpoke", |s| s["state"] == "connected").await;
    let res = app
        .post(
            "/api/v1/tools/mcp_slowpoke_slow/execute",
            &json!({"arguments": {"seconds": 2}}),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text);
    assert!(res.text.contains("slept 2"), "{}", res.text);
    // Other requests keep the request limit.
    assert_eq!(
        app.state.config.request_timeout,
        Duration::from_secs(1),
        "the limit itself is unchanged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_says_why_in_its_status_without_its_secrets() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_allowing_python(None).await;
    app.config_secret("weatherapi", UPSTREAM_KEY).await;
    // A program that refuses its key (naming it on stderr, as programs do) and exits.
    let mut body = registration("grumpy");
    body["args"] = json!([
        "-c",
        "import os, sys; sys.stderr.write('refused: bad key ' + os.environ['UPSTREAM_SECRET'] + '\\n'); sys.exit(3)"
    ]);
    app.post("/api/v1/mcp-servers", &body)
        .await
        .assert_ok(StatusCode::CREATED);
    let status = wait_status(&app, "grumpy", |s| {
        s["lastError"]
            .as_str()
            .is_some_and(|e| e.contains("stderr"))
    })
    .await;
    let error = status["lastError"].as_str().unwrap_or_default();
    assert!(
        error.contains("handshake")
            && error.contains("exited")
            && error.contains("refused: bad key [REDACTED]"),
        "{error}"
    );
    assert!(!error.contains(UPSTREAM_KEY), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bridged_names_and_descriptions_are_checked_and_never_take_toolsmiths_own() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    // No prefix: the upstream's names are the catalogue's.
    let mut raw = upstream("raw");
    raw.prefix = Some(String::new());
    raw.tool_allow = vec![
        "hostile".to_owned(),
        "bad\nname".to_owned(),
        "<b>bold</b>".to_owned(),
        "create_tool".to_owned(),
        "search_tools".to_owned(),
        "verbose".to_owned(),
    ];
    let app = app_with(vec![raw]).await;
    let res = app
        .post("/api/v1/tools/hostile/execute", &json!({"arguments": {}}))
        .await;
    assert!(res.text.contains("planted"), "{}", res.text);
    let status = wait_status(&app, "raw", |s| s["tools"].to_string().contains("verbose")).await;
    let tools = status["tools"].to_string();
    let skipped = status["skipped"].to_string();
    for name in ["bad", "<b>", "create_tool", "search_tools"] {
        assert!(!tools.contains(name), "{name} bridged: {status}");
        assert!(skipped.contains(name), "{name} not noted: {status}");
    }
    // Toolsmith's own names stay its own on REST too.
    let res = app
        .post(
            "/api/v1/tools/create_tool/execute",
            &json!({"arguments": {}}),
        )
        .await;
    assert!(!res.text.contains("the upstream answered"), "{}", res.text);
    // A description is capped.
    let listed = app.get("/api/v1/tools").await.json;
    let verbose = listed["data"]["tools"]
        .as_array()
        .and_then(|all| all.iter().find(|t| t["name"] == "verbose").cloned())
        .unwrap_or_else(|| panic!("verbose not listed"));
    let described = verbose["description"].as_str().unwrap_or_default().len();
    assert!(
        described <= 4200,
        "a description of {described} bytes was kept"
    );

    // Bridged calls are labelled as such in /metrics.
    let metrics = app.get("/metrics").await.text;
    let line = metrics
        .lines()
        .find(|l| l.starts_with("toolsmith_executions_total{tool=\"hostile\""))
        .unwrap_or_else(|| panic!("no series for the bridged call: {metrics}"));
    assert!(
        line.contains("source=\"mcp\"") && line.contains("tool_id=\"mcp:raw\""),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_server_whose_env_the_operator_no_longer_allows_starts_nothing() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    // Registered while the operator allowed LOG_LEVEL.
    let app = app_allowing_env(&["LOG_LEVEL"]).await;
    let mut body = registration("narrowed");
    body["env"] = json!({"LOG_LEVEL": "warn"});
    app.post("/api/v1/mcp-servers", &body)
        .await
        .assert_ok(StatusCode::CREATED);
    // The same store under a narrower allowlist: the stored row is checked again at launch
    // (as a row stored before the rule is), and a change is refused at the door.
    let strict = app
        .reopen(
            ToolServiceSettings {
                mcp_bridge: toolsmith_service::bridge::BridgeSettings {
                    allowed_commands: vec![python()],
                    ..Default::default()
                },
                ..ToolServiceSettings::default()
            },
            toolsmith_server::ServerSettings::default(),
        )
        .await;
    let status = wait_status(&strict, "narrowed", |s| s["lastError"].is_string()).await;
    let error = status["lastError"].as_str().unwrap_or_default();
    assert!(
        error.contains("env 'LOG_LEVEL'") && error.contains("mcp_allowed_env"),
        "{error}"
    );
    assert_eq!(status["connections"], 0, "{status}");
    let res = strict
        .json(Method::PUT, "/api/v1/mcp-servers/narrowed", &body)
        .await;
    let message = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(message.contains("env 'LOG_LEVEL'"), "{message}");
}
