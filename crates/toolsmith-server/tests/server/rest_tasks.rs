//! Tool tasks over REST (`/api/v1/tasks…`, the asynchronous execute) through the real router:
//! a call started answers 202 at once and its result is read back; hostile input — unknown and
//! others' ids, a huge or negative ttl, unknown fields, cancelling twice or after the end, a
//! result over the cap, the per-user cap — is refused naming the fix. Not the scheduled tasks.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_service::ToolServiceSettings;

use crate::rest_data::caller;
use crate::rest_support::{TestApp, tool_body};

const TASKS: &str = "/api/v1/tasks";

fn spin_body() -> Value {
    let mut body = tool_body("spin");
    body["code"] = json!("while (true) {} return 1;");
    body["parameters"] = json!({"type": "object"});
    body
}

fn big_body() -> Value {
    let mut body = tool_body("big");
    body["code"] = json!("return 'x'.repeat(args.n);");
    body["parameters"] = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    body
}

/// Waits on the service (the real one behind the router) until the task has ended.
async fn ended(app: &TestApp, user: &str, id: &str) {
    let ctx = toolsmith_core::ToolContext::new(user);
    app.state.service.wait_task(&ctx, id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_runs_as_a_task_and_its_result_is_read_back() {
    let app = TestApp::new().await;
    app.create_named("shout").await;
    let started = app
        .post(
            TASKS,
            &json!({"tool": "shout", "arguments": {"text": "hi"}}),
        )
        .await
        .assert_ok(StatusCode::ACCEPTED);
    assert_eq!(started["status"], "working", "{started}");
    assert_eq!(started["tool"], "shout");
    assert_eq!(started["ttlMs"], 3_600_000);
    assert_eq!(started["pollIntervalMs"], 1000);
    assert_eq!(started["result"], Value::Null);
    let id = started["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("task_"), "{id}");
    ended(&app, "default", &id).await;

    let task = app
        .get(&format!("{TASKS}/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["content"], json!({"upper": "HI"}), "{task}");
    assert_eq!(task["result"]["isError"], false);
    let list = app.get(TASKS).await.assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 1, "{list}");
    assert_eq!(list["tasks"][0]["id"], json!(id));

    // The tool's own failure is a completed task whose result says so.
    let failing = app
        .post(TASKS, &json!({"tool": "shout", "arguments": {"text": 5}}))
        .await;
    // Arguments are checked when the call runs: the task completes with the refusal.
    let failing = failing.assert_ok(StatusCode::ACCEPTED);
    let failing_id = failing["id"].as_str().unwrap();
    ended(&app, "default", failing_id).await;
    let failing = app
        .get(&format!("{TASKS}/{failing_id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(failing["status"], "completed", "{failing}");
    assert_eq!(failing["result"]["isError"], true, "{failing}");
    assert_eq!(
        failing["result"]["metadata"]["errorKind"], "invalid_arguments",
        "{failing}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_its_callers_alone() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let bob = caller(&app, "bob", None).await;
    let alices_agent = caller(&app, "alice", Some("bot")).await;
    let started = alice
        .send(
            Method::POST,
            TASKS,
            Some(&json!({"tool": "calculate", "arguments": {"expression": "6 * 7"}})),
        )
        .await
        .assert_ok(StatusCode::ACCEPTED);
    let id = started["id"].as_str().unwrap().to_owned();
    ended(&app, "alice", &id).await;
    let done = alice
        .get(&format!("{TASKS}/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(done["status"], "completed", "{done}");
    for other in [&bob, &alices_agent] {
        let message = other
            .get(&format!("{TASKS}/{id}"))
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
        assert!(message.contains("GET /api/v1/tasks"), "{message}");
        other
            .send(Method::POST, &format!("{TASKS}/{id}/cancel"), None)
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
        let list = other.get(TASKS).await.assert_ok(StatusCode::OK);
        assert_eq!(list["count"], 0, "{list}");
    }
    for unknown in ["task_0", "nope", "x".repeat(300).as_str()] {
        alice
            .get(&format!("{TASKS}/{unknown}"))
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_starts_are_refused_naming_the_fix() {
    let app = TestApp::new().await;
    app.create_named("shout").await;
    // A tool nobody has.
    let message = app
        .post(TASKS, &json!({"tool": "no_such_tool"}))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert!(message.contains("no_such_tool"), "{message}");
    // An unknown field, a negative ttl, no tool.
    for body in [
        json!({"tool": "shout", "arguments": {"text": "a"}, "async": true}),
        json!({"tool": "shout", "ttlMs": -1}),
        json!({"arguments": {}}),
    ] {
        app.post(TASKS, &body)
            .await
            .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    }
    // A huge ttl is cut to task_max_ttl (24 h).
    let huge = app
        .post(
            TASKS,
            &json!({"tool": "shout", "arguments": {"text": "a"}, "ttlMs": u64::MAX}),
        )
        .await
        .assert_ok(StatusCode::ACCEPTED);
    assert_eq!(huge["ttlMs"], 86_400_000, "{huge}");
    assert!(
        app.post(TASKS, &json!({"tool": "shout"}))
            .await
            .status
            .is_success()
    );
    // Bad list queries.
    app.get(&format!("{TASKS}?limit=0"))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    app.get(&format!("{TASKS}?status=working"))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_a_task_once_and_the_cap_names_its_setting() {
    let mut settings = ToolServiceSettings::default();
    settings.tasks.max_running = 1;
    let app = TestApp::with_configs(settings, Default::default()).await;
    app.create_tool(&spin_body()).await;
    app.create_named("shout").await;
    let started = app
        .post(TASKS, &json!({"tool": "spin"}))
        .await
        .assert_ok(StatusCode::ACCEPTED);
    let id = started["id"].as_str().unwrap().to_owned();
    // The one slot is taken.
    let message = app
        .post(TASKS, &json!({"tool": "shout", "arguments": {"text": "a"}}))
        .await
        .assert_error(StatusCode::CONFLICT, "limit_reached");
    assert!(message.contains("task_max_running"), "{message}");

    let cancelled = app
        .call(Method::POST, &format!("{TASKS}/{id}/cancel"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(cancelled["statusMessage"], "cancelled by its caller");
    // Twice: it has ended.
    let message = app
        .call(Method::POST, &format!("{TASKS}/{id}/cancel"))
        .await
        .assert_error(StatusCode::CONFLICT, "invalid_state");
    assert!(message.contains("already ended (cancelled)"), "{message}");
    // The slot is free again; a completed task cannot be cancelled either.
    let next = app
        .post(TASKS, &json!({"tool": "shout", "arguments": {"text": "a"}}))
        .await
        .assert_ok(StatusCode::ACCEPTED);
    let next_id = next["id"].as_str().unwrap();
    ended(&app, "default", next_id).await;
    app.call(Method::POST, &format!("{TASKS}/{next_id}/cancel"))
        .await
        .assert_error(StatusCode::CONFLICT, "invalid_state");
    // The cancelled task keeps no result.
    let read = app
        .get(&format!("{TASKS}/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(read["status"], "cancelled", "{read}");
    assert_eq!(read["result"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_over_the_cap_fails_the_task_and_says_why() {
    let mut settings = ToolServiceSettings::default();
    settings.tasks.max_result_bytes = 4096;
    let app = TestApp::with_configs(settings, Default::default()).await;
    app.create_tool(&big_body()).await;
    let started = app
        .post(TASKS, &json!({"tool": "big", "arguments": {"n": 100_000}}))
        .await
        .assert_ok(StatusCode::ACCEPTED);
    let id = started["id"].as_str().unwrap().to_owned();
    ended(&app, "default", &id).await;
    let failed = app
        .get(&format!("{TASKS}/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["result"], Value::Null, "{failed}");
    let message = failed["statusMessage"].as_str().unwrap();
    assert!(
        message.contains("task_max_result_bytes = 4096"),
        "{message}"
    );
}
