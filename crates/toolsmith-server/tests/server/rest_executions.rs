//! Every call is an execution (issue 36): built-in and bridged calls are recorded as custom
//! tools' calls are, owned by their caller, with their `source` (`custom`, `builtin`, `mcp`),
//! listed by `GET /api/v1/executions` (`?source=`, `?tool=` with a built-in's name) to that
//! caller alone — over REST and over MCP alike.

use axum::body::Body;
use axum::http::{Method, StatusCode, header};
use serde_json::{Value, json};
use toolsmith_server::auth::{Identity, Scope};

use crate::mcp_bridge::{app_with, upstream};
use crate::mcp_protocol::Session;
use crate::mcp_support::{prerequisite, python};
use crate::rest_support::{TestApp, request, tool_body};

/// `data` of a successful answer to `token`'s request (201 for a POST that creates, else 200).
async fn as_user(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> Value {
    let created = method == Method::POST && path == "/api/v1/custom-tools";
    let builder = request(method, path).header(header::AUTHORIZATION, format!("Bearer {token}"));
    let req = match body {
        Some(b) => builder
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(b.to_string())),
        None => builder.body(Body::empty()),
    }
    .expect("request");
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    app.send(req).await.assert_ok(status)
}

/// `(toolName, source)` of each listed execution, newest first.
fn rows(list: &Value) -> Vec<(String, String)> {
    list["executions"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    (
                        r["toolName"].as_str().unwrap_or("").to_owned(),
                        r["source"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
        .collect()
}

#[tokio::test]
async fn a_builtin_call_over_rest_is_its_callers_execution_and_filtered_by_source() {
    let app = TestApp::new().await;
    let scopes = [Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];
    let alice = app.token("alice", None, &scopes).await;
    let bob = app.token("bob", None, &scopes).await;
    as_user(
        &app,
        &alice,
        Method::POST,
        "/api/v1/custom-tools",
        Some(tool_body("shout")),
    )
    .await;
    as_user(
        &app,
        &alice,
        Method::POST,
        "/api/v1/custom-tools/shout/execute",
        Some(json!({"arguments": {"text": "hi"}})),
    )
    .await;
    let answer = as_user(
        &app,
        &alice,
        Method::POST,
        "/api/v1/tools/calculate/execute",
        Some(json!({"arguments": {"expression": "6 * 7"}})),
    )
    .await;
    assert!(answer.to_string().contains("42"), "{answer}");
    as_user(
        &app,
        &bob,
        Method::POST,
        "/api/v1/tools/calculate/execute",
        Some(json!({"arguments": {"expression": "1 + 1"}})),
    )
    .await;

    let all = as_user(&app, &alice, Method::GET, "/api/v1/executions", None).await;
    assert_eq!(
        rows(&all),
        pairs(&[("calculate", "builtin"), ("shout", "custom")]),
        "{all}"
    );
    let builtin = &all["executions"][0];
    assert_eq!(builtin["toolId"], "calculate", "{builtin}");
    assert_eq!(builtin["toolVersion"], 0, "{builtin}");
    assert_eq!(builtin["status"], "success", "{builtin}");
    let only = as_user(
        &app,
        &alice,
        Method::GET,
        "/api/v1/executions?source=builtin",
        None,
    )
    .await;
    assert_eq!(rows(&only), pairs(&[("calculate", "builtin")]), "{only}");
    let custom = as_user(
        &app,
        &alice,
        Method::GET,
        "/api/v1/executions?source=custom",
        None,
    )
    .await;
    assert_eq!(rows(&custom), pairs(&[("shout", "custom")]), "{custom}");
    let by_name = as_user(
        &app,
        &alice,
        Method::GET,
        "/api/v1/executions?tool=calculate",
        None,
    )
    .await;
    assert_eq!(
        rows(&by_name),
        pairs(&[("calculate", "builtin")]),
        "{by_name}"
    );
    let none = as_user(
        &app,
        &alice,
        Method::GET,
        "/api/v1/executions?source=mcp",
        None,
    )
    .await;
    assert_eq!(none["count"], 0, "{none}");

    // Bob's call is his alone, and alice's are never his.
    let bobs = as_user(&app, &bob, Method::GET, "/api/v1/executions", None).await;
    assert_eq!(rows(&bobs), pairs(&[("calculate", "builtin")]), "{bobs}");

    let bad = app
        .send(
            request(Method::GET, "/api/v1/executions?source=nope")
                .header(header::AUTHORIZATION, format!("Bearer {alice}"))
                .body(Body::empty())
                .expect("request"),
        )
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    assert!(bad.contains("custom, builtin, mcp"), "{bad}");
}

#[tokio::test]
async fn a_builtin_call_moves_the_usage_digest_the_executions_page_follows() {
    let app = TestApp::new().await;
    let before = app.get("/api/v1/changes").await.assert_ok(StatusCode::OK);
    app.post(
        "/api/v1/tools/calculate/execute",
        &json!({"arguments": {"expression": "1 + 1"}}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let after = app.get("/api/v1/changes").await.assert_ok(StatusCode::OK);
    assert_ne!(after["usage"], before["usage"], "{before} {after}");
    assert_eq!(after["tools"], before["tools"]);
}

#[tokio::test]
async fn a_builtin_call_over_mcp_is_its_callers_execution_with_its_agent() {
    let app = TestApp::new().await;
    let mut carol = Identity::local_default();
    carol.user_id = "carol".to_owned();
    carol.agent_id = Some("planner".to_owned());
    let session = Session::open_with(&app.state, carol).await;
    let (failed, _, text) = session
        .ok("calculate", json!({"expression": "2 + 3"}))
        .await;
    assert!(!failed, "{text}");
    // Through the discovery meta-tool too: the call it makes is the built-in's.
    let (failed, _, text) = session
        .ok(
            "use_tool",
            json!({"tool_name": "calculate", "arguments": {"expression": "4 * 4"}}),
        )
        .await;
    assert!(!failed, "{text}");

    let carols = app
        .state
        .service
        .executions(
            &toolsmith_service::Actor::user("carol"),
            None,
            None,
            None,
            Some(toolsmith_core::ExecutionSource::Builtin),
            10,
        )
        .await
        .expect("carol's executions");
    assert_eq!(carols.len(), 2, "{carols:?}");
    for row in &carols {
        assert_eq!(row.tool_name, "calculate");
        assert_eq!(row.owner, "carol");
        assert_eq!(row.agent_id.as_deref(), Some("planner"));
    }
    let others = app
        .state
        .service
        .executions(
            &toolsmith_service::Actor::user("default"),
            None,
            None,
            None,
            None,
            10,
        )
        .await
        .expect("default's executions");
    assert!(others.is_empty(), "{others:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridged_call_is_recorded_as_an_mcp_execution_of_its_caller() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("up")]).await;
    let session = Session::open(&app.state, "default").await;
    let (failed, _, text) = session.ok("mcp_up_echo", json!({"text": "hello"})).await;
    assert!(!failed, "{text}");
    let listed = app
        .get("/api/v1/executions?source=mcp")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(rows(&listed), pairs(&[("mcp_up_echo", "mcp")]), "{listed}");
    let by_name = app
        .get("/api/v1/executions?tool=mcp_up_echo")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(by_name["count"], 1, "{by_name}");
}
