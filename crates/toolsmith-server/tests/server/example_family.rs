//! Scratch (removed in the next commit): the family CONTRIBUTING's recipe adds, `example_echo`,
//! is listed and called through REST and MCP, and switched as its group.

use crate::mcp_protocol::Session;
use crate::rest_support::TestApp;

use axum::http::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn the_recipes_family_is_listed_called_and_switched_on_every_face() {
    let app = TestApp::new().await;
    let session = Session::open(&app.state, "default").await;
    let listed = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK);
    assert!(listed.to_string().contains("\"echo_text\""), "{listed}");
    let done = app
        .post(
            "/api/v1/tools/echo_text/execute",
            &json!({"arguments": {"text": "hello"}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert!(done.to_string().contains("\"echo\":\"hello\""), "{done}");
    assert!(session.names().await.contains(&"echo_text".to_owned()));
    let (is_error, body, _) = session.ok("echo_text", json!({"text": "hi"})).await;
    assert!(!is_error, "{body}");
    assert_eq!(body["echo"], "hi");
    let group = app
        .get("/api/v1/tool-groups/exampleEcho")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(group["enabled"], true, "{group}");
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/exampleEcho",
        &json!({"enabled": false}),
    )
    .await
    .assert_ok(StatusCode::OK);
    app.post(
        "/api/v1/tools/echo_text/execute",
        &json!({"arguments": {"text": "hello"}}),
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
}
