//! Human approval of executions over REST: a call of a tool that requires approval answers
//! `approval_required` with the approval's id, a person lists and decides it, and the same
//! call then runs once; hostile and late decisions are refused with clear statuses.

use crate::rest_support;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use rest_support::{TestApp, request, tool_body};
use serde_json::{Value, json};

async fn execute(app: &TestApp, text: &str) -> Value {
    app.post(
        "/api/v1/custom-tools/shout/execute",
        &json!({"arguments": {"text": text}}),
    )
    .await
    .assert_ok(StatusCode::OK)
}

fn approval_id(run: &Value) -> String {
    assert_eq!(run["isError"], true, "{run}");
    assert_eq!(run["metadata"]["errorKind"], "approval_required", "{run}");
    let id = run["content"]["approvalId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("apr_"), "{run}");
    id
}

#[tokio::test]
async fn a_call_waits_for_a_person_and_runs_once_after_allow_once() {
    let app = TestApp::new().await;
    let mut body = tool_body("shout");
    body["requiresApproval"] = json!(true);
    app.create_tool(&body).await;

    let id = approval_id(&execute(&app, "hi").await);
    let listed = app.get("/api/v1/approvals").await.assert_ok(StatusCode::OK);
    assert_eq!(listed["count"], 1, "{listed}");
    let one = &listed["approvals"][0];
    assert_eq!(one["id"], id.as_str());
    assert_eq!(one["toolName"], "shout");
    assert_eq!(one["status"], "pending");
    assert_eq!(one["arguments"], "{\"text\":\"hi\"}");
    let metrics = app.get("/metrics").await;
    assert!(
        metrics.text.contains("toolsmith_approvals_pending 1"),
        "{}",
        metrics.text
    );

    let decided = app
        .post(
            &format!("/api/v1/approvals/{id}/decision"),
            &json!({"decision": "allow_once"}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(decided["status"], "allowed");
    assert_eq!(decided["decidedBy"], "default");
    // The same call runs now, once; other arguments still wait.
    let other = approval_id(&execute(&app, "other").await);
    assert_ne!(other, id);
    let ran = execute(&app, "hi").await;
    assert_eq!(ran["isError"], false, "{ran}");
    assert_eq!(ran["content"], json!({"upper": "HI"}));
    approval_id(&execute(&app, "hi").await);

    // Decided is decided.
    app.post(
        &format!("/api/v1/approvals/{id}/decision"),
        &json!({"decision": "deny"}),
    )
    .await
    .assert_error(StatusCode::CONFLICT, "invalid_state");
    let got = app
        .get(&format!("/api/v1/approvals/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(got["status"], "consumed");
    let all = app
        .get("/api/v1/approvals?status=all")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(all["count"], 3, "{all}");
}

#[tokio::test]
async fn allow_always_lets_later_calls_run() {
    let app = TestApp::new().await;
    let mut body = tool_body("shout");
    body["requiresApproval"] = json!(true);
    app.create_tool(&body).await;
    let id = approval_id(&execute(&app, "a").await);
    app.post(
        &format!("/api/v1/approvals/{id}/decision"),
        &json!({"decision": "allow_always"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    for text in ["a", "b", "c"] {
        assert_eq!(execute(&app, text).await["isError"], false);
    }
    let pending = app.get("/api/v1/approvals").await.assert_ok(StatusCode::OK);
    assert_eq!(pending["count"], 0);
}

#[tokio::test]
async fn bad_decisions_are_refused() {
    let app = TestApp::new().await;
    let mut body = tool_body("shout");
    body["requiresApproval"] = json!(true);
    app.create_tool(&body).await;
    let id = approval_id(&execute(&app, "x").await);
    let path = format!("/api/v1/approvals/{id}/decision");

    app.post(&path, &json!({"decision": "maybe"}))
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    app.post(&path, &json!({"decision": "allow_once", "extra": 1}))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    app.raw(Method::POST, &path, Some("application/json"), "{not json")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "malformed_json");
    app.post(
        "/api/v1/approvals/apr_0000000000000000/decision",
        &json!({"decision": "deny"}),
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    app.post(
        &format!("/api/v1/approvals/{}/decision", "x".repeat(5000)),
        &json!({"decision": "deny"}),
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    app.get("/api/v1/approvals?status=maybe")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    app.get("/api/v1/approvals?limit=0")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");

    // A caller acting as an agent cannot approve (its own) calls.
    let res = app
        .send(
            request(Method::POST, &path)
                .header("content-type", "application/json")
                .header("x-toolsmith-agent", "helpful-bot")
                .body(Body::from(json!({"decision": "allow_always"}).to_string()))
                .unwrap(),
        )
        .await;
    res.assert_error(StatusCode::FORBIDDEN, "forbidden");
    // Still pending after all of that.
    let got = app
        .get(&format!("/api/v1/approvals/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(got["status"], "pending");
}
