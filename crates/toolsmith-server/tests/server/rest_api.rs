//! The REST routes, each with its happy path and its errors, through the real router
//! (in-process, `oneshot`), each test over its own temp SQLite store.

use crate::rest_support;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use rest_support::{TestApp, json_request, request, tool_body};
use serde_json::{Value, json};
use toolsmith_core::Permission;
use toolsmith_service::{Actor, CreateTool};

const TOOLS: &str = "/api/v1/custom-tools";

fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

/// A tool created by the model with a dangerous permission: it waits for approval.
async fn create_pending(app: &TestApp, name: &str) -> String {
    let input = CreateTool {
        kind: Default::default(),
        name: name.to_owned(),
        description: "Runs a command".to_owned(),
        parameters: json!({"type": "object", "properties": {}}),
        code: "return 1;".to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: vec![Permission::Shell],
        requires_approval: None,
        metadata: None,
    };
    let record = app
        .state
        .service
        .create(&Actor::llm("default"), input)
        .await
        .expect("created");
    assert_eq!(record.status.as_str(), "pending_approval");
    record.id
}

#[tokio::test]
async fn create_answers_201_with_the_full_record() {
    let app = TestApp::new().await;
    let res = app.post(TOOLS, &tool_body("upper")).await;
    let tool = res.assert_ok(StatusCode::CREATED);
    assert_eq!(
        keys(&tool),
        [
            "category",
            "code",
            "createdAt",
            "createdBy",
            "description",
            "id",
            "kind",
            "lastUsedAt",
            "metadata",
            "name",
            "parameters",
            "permissions",
            "requiresApproval",
            "revision",
            "status",
            "tags",
            "updatedAt",
            "usageCount",
            "userId",
            "version"
        ]
    );
    let id = tool["id"].as_str().expect("id");
    assert!(
        id.len() == 21 && id.starts_with("tool_") && id[5..].bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    assert_eq!(tool["userId"], json!("default"));
    assert_eq!(tool["name"], json!("upper"));
    assert_eq!(tool["kind"], json!("js"));
    assert_eq!(tool["description"], json!("Upper-cases a text"));
    assert_eq!(tool["parameters"], tool_body("upper")["parameters"]);
    assert_eq!(
        tool["code"],
        json!("return { upper: args.text.toUpperCase() };")
    );
    assert_eq!(tool["category"], json!("Text"));
    assert_eq!(tool["tags"], json!(["case", "upper"]));
    assert_eq!(tool["permissions"], json!([]));
    assert_eq!(tool["status"], json!("active"));
    assert_eq!(tool["requiresApproval"], json!(false));
    assert_eq!(tool["createdBy"], json!("user"));
    assert_eq!(tool["version"], json!(1));
    assert_eq!(tool["revision"], json!(1));
    assert_eq!(tool["usageCount"], json!(0));
    assert_eq!(tool["lastUsedAt"], Value::Null);
    assert_eq!(tool["metadata"], json!({}));
    assert_eq!(tool["createdAt"], tool["updatedAt"]);
    assert_eq!(res.header("etag"), Some("\"1\""));

    // createdBy "user" is accepted for compatibility with the spec.
    let mut body = tool_body("upper_two");
    body["createdBy"] = json!("user");
    body["requiresApproval"] = json!(true);
    let tool = app.create_tool(&body).await;
    assert_eq!(
        (&tool["createdBy"], &tool["requiresApproval"]),
        (&json!("user"), &json!(true))
    );
}

#[tokio::test]
async fn get_by_id_or_name_and_list_with_filters() {
    let app = TestApp::new().await;
    let upper = app.create_named("upper").await;
    let mut body = tool_body("lower");
    body["category"] = json!("Case");
    body["description"] = json!("Lower-cases a text");
    body["code"] = json!("return args.text.toLowerCase();");
    let lower = app.create_tool(&body).await;
    let pending_id = create_pending(&app, "shell_thing").await;

    let id = upper["id"].as_str().expect("id");
    let by_id = app.get(&format!("{TOOLS}/{id}")).await;
    assert_eq!(by_id.assert_ok(StatusCode::OK), upper);
    assert_eq!(by_id.header("etag"), Some("\"1\""));
    let by_name = app.get(&format!("{TOOLS}/upper")).await;
    assert_eq!(by_name.assert_ok(StatusCode::OK), upper);

    let all = app.get(TOOLS).await.assert_ok(StatusCode::OK);
    assert_eq!(keys(&all), ["count", "limit", "offset", "tools", "total"]);
    assert_eq!(
        (&all["count"], &all["total"], &all["limit"], &all["offset"]),
        (&json!(3), &json!(3), &json!(50), &json!(0))
    );
    let names: Vec<&str> = all["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["lower", "shell_thing", "upper"]);

    let list_names = |data: Value| -> Vec<String> {
        data["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_owned())
            .collect()
    };
    let cases = [
        ("?status=active", vec!["lower", "upper"]),
        ("?status=pending_approval", vec!["shell_thing"]),
        ("?status=disabled", vec![]),
        ("?createdBy=llm", vec!["shell_thing"]),
        ("?createdBy=user", vec!["lower", "upper"]),
        ("?category=Case", vec!["lower"]),
        ("?search=LOWER-cases", vec!["lower"]),
        ("?search=text&status=active", vec!["lower", "upper"]),
        ("?limit=1", vec!["lower"]),
        ("?limit=2&offset=1", vec!["shell_thing", "upper"]),
        ("?offset=10", vec![]),
    ];
    for (query, expected) in cases {
        let data = app
            .get(&format!("{TOOLS}{query}"))
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(list_names(data), expected, "{query}");
    }
    let page = app
        .get(&format!("{TOOLS}?limit=1&offset=1"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (
            &page["count"],
            &page["total"],
            &page["limit"],
            &page["offset"]
        ),
        (&json!(1), &json!(3), &json!(1), &json!(1))
    );
    assert_eq!(lower["status"], json!("active"));
    assert_eq!(
        app.get(&format!("{TOOLS}/{pending_id}"))
            .await
            .assert_ok(StatusCode::OK)["status"],
        json!("pending_approval")
    );
}

#[tokio::test]
async fn bad_query_parameters_are_400() {
    let app = TestApp::new().await;
    let cases = [
        (
            "?limit=0",
            "query parameter `limit` must be an integer from 1 to 1000, got '0'",
        ),
        (
            "?limit=1001",
            "query parameter `limit` must be an integer from 1 to 1000, got '1001'",
        ),
        (
            "?limit=ten",
            "query parameter `limit` must be an integer from 1 to 1000, got 'ten'",
        ),
        (
            "?offset=-1",
            "query parameter `offset` must be an integer from 0 to 4294967295, got '-1'",
        ),
        (
            "?status=gone",
            "query parameter `status` has an unknown value 'gone': use one of active, disabled, pending_approval, rejected",
        ),
        (
            "?createdBy=robot",
            "query parameter `createdBy` has an unknown value 'robot': use one of user, llm",
        ),
        (
            "?colour=red",
            "unknown query parameter `colour` (expected one of: status, category, createdBy, search, limit, offset)",
        ),
        (
            "?limit=1&limit=2",
            "query parameter `limit` is given more than once",
        ),
    ];
    for (query, message) in cases {
        let res = app.get(&format!("{TOOLS}{query}")).await;
        assert_eq!(
            res.assert_error(StatusCode::BAD_REQUEST, "invalid_query"),
            message
        );
    }
    let res = app.get(&format!("{TOOLS}/pending?status=active")).await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    let res = app.get(&format!("{TOOLS}/stats?x=1")).await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_query");
}

#[tokio::test]
async fn patch_updates_versions_and_revisions() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let path = format!("{TOOLS}/upper");

    let res = app
        .patch(&path, &json!({"description": "Shouts a text"}))
        .await;
    let tool = res.assert_ok(StatusCode::OK);
    assert_eq!(tool["description"], json!("Shouts a text"));
    assert_eq!(
        (&tool["version"], &tool["revision"]),
        (&json!(1), &json!(2))
    );
    assert_eq!(res.header("etag"), Some("\"2\""));

    let tool = app
        .patch(
            &path,
            &json!({"code": "return { upper: args.text.toUpperCase() + '!' };", "expectedRevision": 2}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&tool["version"], &tool["revision"]),
        (&json!(2), &json!(3))
    );

    // An empty patch changes nothing.
    let tool = app.patch(&path, &json!({})).await.assert_ok(StatusCode::OK);
    assert_eq!(tool["revision"], json!(3));

    // Beside newName, `name` must be the current name.
    let res = app
        .patch(&path, &json!({"name": "other", "newName": "third"}))
        .await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(
        message.contains("to rename a tool, set newName"),
        "{message}"
    );
    let tool = app
        .patch(&path, &json!({"newName": "shout", "category": ""}))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&tool["name"], &tool["category"]),
        (&json!("shout"), &Value::Null)
    );
    app.get(&path)
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    app.get(&format!("{TOOLS}/shout"))
        .await
        .assert_ok(StatusCode::OK);
}

#[tokio::test]
async fn stale_revisions_are_409_by_body_and_by_if_match() {
    let app = TestApp::new().await;
    let tool = app.create_named("upper").await;
    let id = tool["id"].as_str().expect("id").to_owned();
    let path = format!("{TOOLS}/{id}");
    app.patch(&path, &json!({"description": "Second"}))
        .await
        .assert_ok(StatusCode::OK);

    let res = app
        .patch(
            &path,
            &json!({"description": "Third", "expectedRevision": 1}),
        )
        .await;
    let message = res.assert_error(StatusCode::CONFLICT, "revision_conflict");
    assert_eq!(
        message,
        "revision conflict: expected revision 1, but the tool is at revision 2"
    );
    assert_eq!(
        res.json["error"]["details"],
        json!({"expectedRevision": 1, "currentRevision": 2})
    );

    let stale_if_match = |method: Method, suffix: &str| {
        request(method, &format!("{path}{suffix}"))
            .header("if-match", "\"1\"")
            .header("content-type", "application/json")
    };
    let res = app
        .send(
            stale_if_match(Method::PATCH, "")
                .body(Body::from(r#"{"description": "Third"}"#))
                .expect("request"),
        )
        .await;
    assert_eq!(
        res.assert_error(StatusCode::CONFLICT, "revision_conflict"),
        "revision conflict: expected revision 1, but the tool is at revision 2"
    );
    for (method, suffix) in [
        (Method::DELETE, ""),
        (Method::POST, "/enable"),
        (Method::POST, "/disable"),
    ] {
        let res = app
            .send(
                stale_if_match(method.clone(), suffix)
                    .body(Body::empty())
                    .expect("request"),
            )
            .await;
        res.assert_error(StatusCode::CONFLICT, "revision_conflict");
        let res = app
            .json(
                method.clone(),
                &format!("{path}{suffix}"),
                &json!({"expectedRevision": 1}),
            )
            .await;
        res.assert_error(StatusCode::CONFLICT, "revision_conflict");
    }
    let res = app
        .json(
            Method::POST,
            &format!("{path}/rollback"),
            &json!({"version": 1, "expectedRevision": 1}),
        )
        .await;
    res.assert_error(StatusCode::CONFLICT, "revision_conflict");

    // Body and header must agree.
    let res = app
        .send(
            request(Method::PATCH, &path)
                .header("if-match", "\"2\"")
                .header("content-type", "application/json")
                .body(Body::from(
                    r#"{"description": "Third", "expectedRevision": 1}"#,
                ))
                .expect("request"),
        )
        .await;
    let message = res.assert_error(StatusCode::CONFLICT, "revision_conflict");
    assert!(
        message.starts_with("expectedRevision is 1 but If-Match says revision 2"),
        "{message}"
    );
    // A malformed If-Match is a 400.
    let res = app
        .send(
            request(Method::POST, &format!("{path}/disable"))
                .header("if-match", "W/\"2\"")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_header");

    // The current revision passes, by either route; `*` matches any.
    let res = app
        .send(
            request(Method::POST, &format!("{path}/disable"))
                .header("if-match", "\"2\"")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
    assert_eq!(res.assert_ok(StatusCode::OK)["revision"], json!(3));
    assert_eq!(res.header("etag"), Some("\"3\""));
    let res = app
        .json(
            Method::POST,
            &format!("{path}/enable"),
            &json!({"expectedRevision": 3}),
        )
        .await;
    assert_eq!(res.assert_ok(StatusCode::OK)["revision"], json!(4));
    let res = app
        .send(
            request(Method::DELETE, &path)
                .header("if-match", "*")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
    assert_eq!(res.assert_ok(StatusCode::OK)["deleted"], json!(true));
}

#[tokio::test]
async fn enable_disable_and_what_disabled_means() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    app.create_named("other").await;
    let path = format!("{TOOLS}/upper");

    let tool = app
        .call(Method::POST, &format!("{path}/disable"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&tool["status"], &tool["revision"]),
        (&json!("disabled"), &json!(2))
    );
    // Idempotent: disabling again changes nothing.
    let tool = app
        .call(Method::POST, &format!("{path}/disable"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&tool["status"], &tool["revision"]),
        (&json!("disabled"), &json!(2))
    );

    let defs = app
        .get(&format!("{TOOLS}/active/definitions"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(defs["count"], json!(1));
    assert_eq!(defs["tools"][0]["name"], json!("other"));

    let res = app
        .post(
            &format!("{path}/execute"),
            &json!({"arguments": {"text": "a"}}),
        )
        .await;
    assert_eq!(
        res.assert_error(StatusCode::BAD_REQUEST, "invalid_state"),
        "tool 'upper' is disabled; only active tools can run (enable or approve it first)"
    );
    let res = app
        .post(
            "/api/v1/tools/upper/execute",
            &json!({"arguments": {"text": "a"}}),
        )
        .await;
    res.assert_error(StatusCode::NOT_FOUND, "not_found");

    let tool = app
        .call(Method::POST, &format!("{path}/enable"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&tool["status"], &tool["revision"]),
        (&json!("active"), &json!(3))
    );
    let res = app
        .post(
            &format!("{path}/execute"),
            &json!({"arguments": {"text": "a"}}),
        )
        .await;
    assert_eq!(
        res.assert_ok(StatusCode::OK)["content"],
        json!({"upper": "A"})
    );
}

#[tokio::test]
async fn pending_approve_and_reject() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let first = create_pending(&app, "first_pending").await;
    let second = create_pending(&app, "second_pending").await;

    let pending = app
        .get(&format!("{TOOLS}/pending"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&pending["count"], &pending["total"]),
        (&json!(2), &json!(2))
    );
    let statuses: Vec<(&str, &str)> = pending["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or(""),
                t["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("first_pending", "pending_approval"),
            ("second_pending", "pending_approval")
        ]
    );
    let defs = app
        .get(&format!("{TOOLS}/active/definitions"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(defs["tools"].as_array().map(Vec::len), Some(1));

    // Pending tools are neither enabled nor disabled, only approved or rejected.
    let res = app
        .call(Method::POST, &format!("{TOOLS}/{first}/enable"))
        .await;
    assert_eq!(
        res.assert_error(StatusCode::CONFLICT, "invalid_state"),
        "tool 'first_pending' is pending_approval; it can become active only by approval"
    );

    let res = app
        .call(Method::POST, &format!("{TOOLS}/{first}/approve"))
        .await;
    let tool = res.assert_ok(StatusCode::OK);
    assert_eq!(
        (&tool["status"], &tool["createdBy"]),
        (&json!("active"), &json!("llm"))
    );
    assert_eq!(res.header("etag"), Some("\"2\""));
    let res = app
        .call(Method::POST, &format!("{TOOLS}/{first}/approve"))
        .await;
    assert_eq!(
        res.assert_error(StatusCode::BAD_REQUEST, "invalid_state"),
        "tool 'first_pending' is active; only tools pending approval can be approved or rejected"
    );
    let res = app
        .call(Method::POST, &format!("{TOOLS}/upper/approve"))
        .await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_state");

    let tool = app
        .call(Method::POST, &format!("{TOOLS}/{second}/reject"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(tool["status"], json!("rejected"));
    let res = app
        .call(Method::POST, &format!("{TOOLS}/{second}/reject"))
        .await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_state");
    let res = app
        .call(Method::POST, &format!("{TOOLS}/{second}/enable"))
        .await;
    res.assert_error(StatusCode::CONFLICT, "invalid_state");

    let pending = app
        .get(&format!("{TOOLS}/pending"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(pending["tools"], json!([]));
    let defs = app
        .get(&format!("{TOOLS}/active/definitions"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(defs["count"], json!(2));
}

#[tokio::test]
async fn stats_count_everything() {
    let app = TestApp::new().await;
    let empty = app
        .get(&format!("{TOOLS}/stats"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        empty,
        json!({"total": 0, "active": 0, "disabled": 0, "pendingApproval": 0, "rejected": 0,
               "createdByLLM": 0, "createdByUser": 0, "totalUsage": 0})
    );
    app.create_named("upper").await;
    app.create_named("off").await;
    app.call(Method::POST, &format!("{TOOLS}/off/disable"))
        .await
        .assert_ok(StatusCode::OK);
    create_pending(&app, "waits").await;
    let rejected = create_pending(&app, "refused").await;
    app.call(Method::POST, &format!("{TOOLS}/{rejected}/reject"))
        .await
        .assert_ok(StatusCode::OK);
    for text in ["a", "b"] {
        app.post(
            &format!("{TOOLS}/upper/execute"),
            &json!({"arguments": {"text": text}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    }
    let stats = app
        .get(&format!("{TOOLS}/stats"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        stats,
        json!({"total": 4, "active": 1, "disabled": 1, "pendingApproval": 1, "rejected": 1,
               "createdByLLM": 2, "createdByUser": 2, "totalUsage": 2})
    );
    let upper = app
        .get(&format!("{TOOLS}/upper"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(upper["usageCount"], json!(2));
    assert!(upper["lastUsedAt"].is_string(), "{upper}");
}

#[tokio::test]
async fn delete_answers_the_tool_as_it_was() {
    let app = TestApp::new().await;
    let tool = app.create_named("upper").await;
    let res = app.call(Method::DELETE, &format!("{TOOLS}/upper")).await;
    let data = res.assert_ok(StatusCode::OK);
    assert_eq!(data, json!({"deleted": true, "tool": tool}));
    app.get(&format!("{TOOLS}/upper"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    app.call(Method::DELETE, &format!("{TOOLS}/upper"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    // With the current revision in the body.
    app.create_named("again").await;
    let res = app
        .json(
            Method::DELETE,
            &format!("{TOOLS}/again"),
            &json!({"expectedRevision": 1}),
        )
        .await;
    assert_eq!(res.assert_ok(StatusCode::OK)["deleted"], json!(true));
}

#[tokio::test]
async fn execute_runs_and_reports_tool_errors_as_results() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let res = app
        .post(
            &format!("{TOOLS}/upper/execute"),
            &json!({"arguments": {"text": "abc"}}),
        )
        .await;
    let data = res.assert_ok(StatusCode::OK);
    assert_eq!(
        keys(&data),
        [
            "content", "duration", "isError", "metadata", "result", "tool"
        ]
    );
    assert_eq!(data["tool"], json!("upper"));
    assert_eq!(data["content"], json!({"upper": "ABC"}));
    assert_eq!(data["isError"], json!(false));
    assert!(data["metadata"]["durationMs"].as_f64().is_some(), "{data}");

    let mut thrower = tool_body("thrower");
    thrower["code"] = json!("throw new Error('boom: ' + args.text);");
    app.create_tool(&thrower).await;
    let res = app
        .post(
            &format!("{TOOLS}/thrower/execute"),
            &json!({"arguments": {"text": "x"}}),
        )
        .await;
    let data = res.assert_ok(StatusCode::OK);
    assert_eq!(data["isError"], json!(true));
    assert_eq!(data["metadata"]["errorKind"], json!("execution_error"));
    let message = data["content"]["error"].as_str().expect("error message");
    assert!(message.contains("boom: x"), "{message}");

    // Arguments that break the schema: 422 with the violations and the schema.
    let res = app
        .post(
            &format!("{TOOLS}/upper/execute"),
            &json!({"arguments": {"text": 5, "extra": 1}}),
        )
        .await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    assert!(
        message.starts_with("invalid arguments for tool 'upper'"),
        "{message}"
    );
    let details = &res.json["error"]["details"];
    assert_eq!(details["schema"], tool_body("upper")["parameters"]);
    let violations = details["violations"].as_array().expect("violations");
    assert_eq!(violations.len(), 2, "{details}");
    assert!(
        violations
            .iter()
            .all(|v| v["message"].is_string() && v["path"].is_string())
    );
    // No body at all runs with `{}`, which this schema refuses.
    let res = app
        .call(Method::POST, &format!("{TOOLS}/upper/execute"))
        .await;
    res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    app.post(&format!("{TOOLS}/nothing/execute"), &json!({}))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn test_route_dry_runs_and_stores_nothing() {
    let app = TestApp::new().await;
    let mut body = tool_body("dry");
    body["testArgs"] = json!({"text": "dry run"});
    let res = app.post(&format!("{TOOLS}/test"), &body).await;
    let data = res.assert_ok(StatusCode::OK);
    assert_eq!(data["tool"], json!("dry"));
    assert_eq!(data["content"], json!({"upper": "DRY RUN"}));
    assert_eq!(data["isError"], json!(false));
    assert_eq!(data["testMode"], json!(true));
    assert_eq!(data["metadata"]["testMode"], json!(true));

    // The spec's name for the arguments works too.
    let mut body = tool_body("dry");
    body["testArguments"] = json!({"text": "spec"});
    let data = app
        .post(&format!("{TOOLS}/test"), &body)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(data["content"], json!({"upper": "SPEC"}));

    let list = app.get(TOOLS).await.assert_ok(StatusCode::OK);
    assert_eq!((&list["total"], &list["tools"]), (&json!(0), &json!([])));
    app.get(&format!("{TOOLS}/dry"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    // A throwing definition is a result; an invalid one or bad arguments are 422.
    let mut body = tool_body("dry");
    body["code"] = json!("throw new Error('nope');");
    body["testArgs"] = json!({"text": "x"});
    let data = app
        .post(&format!("{TOOLS}/test"), &body)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&data["isError"], &data["testMode"]),
        (&json!(true), &json!(true))
    );
    let mut body = tool_body("Bad Name");
    body["testArgs"] = json!({"text": "x"});
    let res = app.post(&format!("{TOOLS}/test"), &body).await;
    res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    let mut body = tool_body("dry");
    body["testArgs"] = json!({"text": 1});
    let res = app.post(&format!("{TOOLS}/test"), &body).await;
    res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    assert!(res.json["error"]["details"]["violations"].is_array());
    let mut body = tool_body("dry");
    body["testArgs"] = json!({"text": "a"});
    body["testArguments"] = json!({"text": "b"});
    let res = app.post(&format!("{TOOLS}/test"), &body).await;
    res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
}

#[tokio::test]
async fn versions_and_rollback() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let path = format!("{TOOLS}/upper");
    app.patch(&path, &json!({"code": "return 'v2';"}))
        .await
        .assert_ok(StatusCode::OK);

    let versions = app
        .get(&format!("{path}/versions"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(versions["count"], json!(2));
    let list = versions["versions"].as_array().expect("versions");
    assert_eq!(
        keys(&list[0]),
        [
            "code",
            "createdAt",
            "description",
            "metadata",
            "parameters",
            "permissions",
            "toolId",
            "version"
        ]
    );
    assert_eq!(
        (&list[0]["version"], &list[0]["code"]),
        (&json!(2), &json!("return 'v2';"))
    );
    assert_eq!(list[1]["version"], json!(1));

    let res = app
        .post(&format!("{path}/rollback"), &json!({"version": 1}))
        .await;
    let tool = res.assert_ok(StatusCode::OK);
    assert_eq!(
        (&tool["version"], &tool["revision"], &tool["code"]),
        (
            &json!(3),
            &json!(3),
            &json!("return { upper: args.text.toUpperCase() };")
        )
    );
    assert_eq!(res.header("etag"), Some("\"3\""));
    let res = app
        .post(&format!("{path}/rollback"), &json!({"version": 99}))
        .await;
    assert_eq!(
        res.assert_error(StatusCode::NOT_FOUND, "not_found"),
        "tool 'upper' has no version 99"
    );
    let res = app.post(&format!("{path}/rollback"), &json!({})).await;
    let message = res.assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    assert!(message.contains("missing field `version`"), "{message}");
    // An integral float is an integer, as in JSON Schema.
    let res = app
        .post(&format!("{path}/rollback"), &json!({"version": 2.0}))
        .await;
    assert_eq!(res.assert_ok(StatusCode::OK)["code"], json!("return 'v2';"));
    let res = app
        .post(&format!("{path}/rollback"), &json!({"version": 1.5}))
        .await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_body");
}

#[tokio::test]
async fn create_errors_have_the_right_statuses() {
    let app = TestApp::new().await;
    app.create_named("upper").await;

    let res = app.post(TOOLS, &tool_body("upper")).await;
    assert_eq!(
        res.assert_error(StatusCode::CONFLICT, "name_taken"),
        "a tool named 'upper' already exists"
    );
    let res = app.post(TOOLS, &tool_body("calculate")).await;
    assert_eq!(
        res.assert_error(StatusCode::CONFLICT, "name_taken"),
        "'calculate' is the name of a built-in tool (of tool group 'core', reserved even while the group is disabled); choose another name"
    );

    let invalid = [
        ("name", json!("Bad-Name")),
        ("parameters", json!({"type": "string"})),
        ("parameters", json!("{not json")),
        ("code", json!("return eval('1');")),
        ("code", json!("return {;")),
        ("description", json!("   ")),
    ];
    for (field, value) in invalid {
        let mut body = tool_body("fresh");
        body[field] = value.clone();
        let res = app.post(TOOLS, &body).await;
        assert_eq!(
            res.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{field}: {value}"
        );
        res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    }
    let mut body = tool_body("fresh");
    body["createdBy"] = json!("llm");
    app.post(TOOLS, &body)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");

    let mut body = tool_body("fresh");
    body["code"] = json!(format!("return 1; // {}", "x".repeat(210 * 1024)));
    let message = app
        .post(TOOLS, &body)
        .await
        .assert_error(StatusCode::PAYLOAD_TOO_LARGE, "too_large");
    assert!(
        message.contains("over the limit of 204800 bytes"),
        "{message}"
    );
    let mut body = tool_body("fresh");
    body["description"] = json!("d".repeat(4001));
    app.post(TOOLS, &body)
        .await
        .assert_error(StatusCode::PAYLOAD_TOO_LARGE, "too_large");

    // Malformed requests: wrong types, unknown and missing fields, snake_case spellings.
    let malformed = [
        (
            json!({"name": 1}),
            "invalid type: an integer, expected a string",
        ),
        (json!({"colour": "red"}), "unknown field `colour`"),
        (
            json!({"requires_approval": true}),
            "unknown field `requires_approval`",
        ),
        (
            json!({"permissions": ["root"]}),
            "an unknown variant, expected one of",
        ),
        (
            json!({"tags": null}),
            "invalid type: null, expected a sequence",
        ),
        (
            json!({"metadata": [1]}),
            "invalid type: sequence, expected a map",
        ),
    ];
    for (patch, expected) in malformed {
        let mut body = tool_body("fresh");
        for (k, v) in patch.as_object().expect("object") {
            body[k] = v.clone();
        }
        let res = app.post(TOOLS, &body).await;
        let message = res.assert_error(StatusCode::BAD_REQUEST, "invalid_body");
        assert!(
            message.contains(expected),
            "{message} should contain {expected}"
        );
    }
    let mut body = tool_body("fresh");
    body.as_object_mut().expect("object").remove("code");
    let message = app
        .post(TOOLS, &body)
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    assert!(message.contains("missing field `code`"), "{message}");
    let list = app.get(TOOLS).await.assert_ok(StatusCode::OK);
    assert_eq!(list["total"], json!(1), "nothing else was created");
}

#[tokio::test]
async fn unknown_ids_are_404_on_every_route() {
    let app = TestApp::new().await;
    let ghost = "tool_0123456789abcdef";
    let cases: Vec<(Method, String, Option<Value>)> = vec![
        (Method::GET, format!("{TOOLS}/{ghost}"), None),
        (Method::GET, format!("{TOOLS}/ghost_by_name"), None),
        (
            Method::PATCH,
            format!("{TOOLS}/{ghost}"),
            Some(json!({"description": "x"})),
        ),
        (Method::DELETE, format!("{TOOLS}/{ghost}"), None),
        (Method::POST, format!("{TOOLS}/{ghost}/enable"), None),
        (Method::POST, format!("{TOOLS}/{ghost}/disable"), None),
        (Method::POST, format!("{TOOLS}/{ghost}/approve"), None),
        (Method::POST, format!("{TOOLS}/{ghost}/reject"), None),
        (
            Method::POST,
            format!("{TOOLS}/{ghost}/execute"),
            Some(json!({"arguments": {}})),
        ),
        (Method::GET, format!("{TOOLS}/{ghost}/versions"), None),
        (
            Method::POST,
            format!("{TOOLS}/{ghost}/rollback"),
            Some(json!({"version": 1})),
        ),
        (
            Method::POST,
            "/api/v1/tools/ghost/execute".to_owned(),
            Some(json!({})),
        ),
    ];
    for (method, path, body) in cases {
        let res = match body {
            Some(body) => app.json(method.clone(), &path, &body).await,
            None => app.call(method.clone(), &path).await,
        };
        res.assert_error(StatusCode::NOT_FOUND, "not_found");
    }
    let res = app.get(&format!("{TOOLS}/{ghost}")).await;
    assert_eq!(
        res.assert_error(StatusCode::NOT_FOUND, "not_found"),
        format!("no custom tool with id {ghost}")
    );
    let res = app.get(&format!("{TOOLS}/ghost_by_name")).await;
    assert_eq!(
        res.assert_error(StatusCode::NOT_FOUND, "not_found"),
        "no custom tool named 'ghost_by_name'"
    );
}

#[tokio::test]
async fn tools_lists_builtins_and_custom_tools() {
    let app = TestApp::new().await;
    let custom = app.create_named("upper").await;
    let data = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK);
    let tools = data["tools"].as_array().expect("tools");
    assert_eq!(data["count"], json!(tools.len()));
    let calculate = tools
        .iter()
        .find(|t| t["name"] == json!("calculate"))
        .expect("calculate is listed");
    assert_eq!(
        keys(calculate),
        [
            "annotations",
            "category",
            "description",
            "id",
            "name",
            "parameters",
            "requiresConfirmation",
            "source",
            "version"
        ]
    );
    assert_eq!(
        (
            &calculate["source"],
            &calculate["id"],
            &calculate["version"]
        ),
        (&json!("builtin"), &Value::Null, &Value::Null)
    );
    let upper = tools.last().expect("custom tools come last");
    assert_eq!(
        upper,
        &json!({
            "name": "upper",
            "description": "Upper-cases a text",
            "parameters": tool_body("upper")["parameters"],
            "category": "Text",
            "source": "custom",
            "id": custom["id"],
            "version": 1,
            "requiresConfirmation": false,
            "annotations": {"readOnlyHint": false, "destructiveHint": true,
                            "idempotentHint": false, "openWorldHint": false}
        })
    );
    assert!(tools.iter().all(|t| t.get("tags").is_none()));
    let builtins = tools
        .iter()
        .filter(|t| t["source"] == json!("builtin"))
        .count();
    assert_eq!(builtins, tools.len() - 1);
}

#[tokio::test]
async fn definitions_in_three_formats() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let n_tools = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK)["count"].clone();
    let parameters = tool_body("upper")["parameters"].clone();
    let last = |data: &Value| data["tools"].as_array().and_then(|t| t.last()).cloned();

    let openai = app
        .get("/api/v1/tools/definitions?format=openai")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&openai["format"], &openai["count"]),
        (&json!("openai"), &n_tools)
    );
    assert_eq!(
        last(&openai),
        Some(json!({"type": "function", "function": {
            "name": "upper", "description": "Upper-cases a text", "parameters": parameters
        }}))
    );
    let default = app
        .get("/api/v1/tools/definitions")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(default, openai);

    let anthropic = app
        .get("/api/v1/tools/definitions?format=anthropic")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        last(&anthropic),
        Some(
            json!({"name": "upper", "description": "Upper-cases a text", "input_schema": parameters})
        )
    );
    let mcp = app
        .get("/api/v1/tools/definitions?format=mcp")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        last(&mcp),
        Some(
            json!({"name": "upper", "description": "Upper-cases a text", "inputSchema": parameters})
        )
    );
    // Built-ins have tags; no export carries them (a parameter may be called `tags`).
    for data in [&openai, &anthropic, &mcp] {
        for tool in data["tools"].as_array().unwrap() {
            let exported = tool.get("function").unwrap_or(tool);
            assert!(exported.get("tags").is_none(), "{tool}");
        }
    }

    let res = app.get("/api/v1/tools/definitions?format=gemini").await;
    assert_eq!(
        res.assert_error(StatusCode::BAD_REQUEST, "invalid_query"),
        "unknown format 'gemini' (expected one of: openai, anthropic, mcp)"
    );
    app.get("/api/v1/tools/definitions?format=openai&x=1")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
}

#[tokio::test]
async fn execute_any_tool() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let res = app
        .post(
            "/api/v1/tools/calculate/execute",
            &json!({"arguments": {"expression": "(2 + 3) * 4"}, "conversationId": "conv-1"}),
        )
        .await;
    let data = res.assert_ok(StatusCode::OK);
    assert_eq!(
        (&data["tool"], &data["isError"]),
        (&json!("calculate"), &json!(false))
    );
    assert_eq!(data["content"]["result"].as_f64(), Some(20.0), "{data}");

    let data = app
        .send(
            request(Method::POST, "/api/v1/tools/upper/execute")
                .header("content-type", "application/json")
                .header("x-toolsmith-agent", "agent-7")
                .body(Body::from(r#"{"arguments": {"text": "hi"}}"#))
                .expect("request"),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(data["content"], json!({"upper": "HI"}));

    let res = app
        .post(
            "/api/v1/tools/calculate/execute",
            &json!({"arguments": {"expression": 5}}),
        )
        .await;
    res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    let res = app
        .post(
            "/api/v1/tools/calculate/execute",
            &json!({"arguments": {"expression": "1 +"}}),
        )
        .await;
    assert_eq!(res.assert_ok(StatusCode::OK)["isError"], json!(true));
    let res = app
        .post("/api/v1/tools/nope/execute", &json!({"arguments": {}}))
        .await;
    assert_eq!(
        res.assert_error(StatusCode::NOT_FOUND, "not_found"),
        "no tool named 'nope'"
    );
    let res = app
        .post(
            "/api/v1/tools/calculate/execute",
            &json!({"arguments": {"expression": "1"}, "conversationId": "c".repeat(201)}),
        )
        .await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    let res = app
        .post(
            "/api/v1/tools/calculate/execute",
            &json!({"arguments": [1]}),
        )
        .await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_body");
}

#[tokio::test]
async fn scopes_are_enforced_per_route() {
    use toolsmith_server::auth::{Scope, new_token};

    let app = TestApp::new().await;
    let token = |scopes: &[Scope]| {
        let (record, secret) = new_token("default", "test", scopes, None);
        let service = app.state.service.clone();
        async move {
            service
                .create_token(&toolsmith_service::Actor::user("default"), &record)
                .await
                .expect("token stored");
            secret
        }
    };
    let reader = token(&[Scope::ToolsRead]).await;
    let writer = token(&[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute]).await;
    // The tokens exist before the first request, so the server never read "no tokens" (a
    // reading it would trust for the cache's ttl).
    let with_token = |secret: &str, method: Method, path: &str, body: Option<Value>| {
        let mut req = match body {
            Some(body) => json_request(method, path, &body),
            None => request(method, path).body(Body::empty()).expect("request"),
        };
        req.headers_mut().insert(
            "authorization",
            format!("Bearer {secret}").parse().expect("header"),
        );
        req
    };
    app.send(with_token(
        &writer,
        Method::POST,
        TOOLS,
        Some(tool_body("upper")),
    ))
    .await
    .assert_ok(StatusCode::CREATED);
    let cases = [
        (Method::GET, TOOLS.to_owned(), None, "ok"),
        (Method::GET, format!("{TOOLS}/stats"), None, "ok"),
        (Method::GET, "/api/v1/tools".to_owned(), None, "ok"),
        (
            Method::GET,
            "/api/v1/tools/definitions".to_owned(),
            None,
            "ok",
        ),
        (
            Method::POST,
            TOOLS.to_owned(),
            Some(tool_body("new_one")),
            "tools:write",
        ),
        (
            Method::PATCH,
            format!("{TOOLS}/upper"),
            Some(json!({"description": "x"})),
            "tools:write",
        ),
        (
            Method::DELETE,
            format!("{TOOLS}/upper"),
            None,
            "tools:write",
        ),
        (
            Method::POST,
            format!("{TOOLS}/upper/disable"),
            None,
            "tools:write",
        ),
        (
            Method::POST,
            format!("{TOOLS}/upper/rollback"),
            Some(json!({"version": 1})),
            "tools:write",
        ),
        (
            Method::POST,
            format!("{TOOLS}/upper/execute"),
            Some(json!({"arguments": {"text": "a"}})),
            "tools:execute",
        ),
        (
            Method::POST,
            format!("{TOOLS}/test"),
            Some(tool_body("dry")),
            "tools:execute",
        ),
        (
            Method::POST,
            "/api/v1/tools/upper/execute".to_owned(),
            Some(json!({"arguments": {"text": "a"}})),
            "tools:execute",
        ),
        (
            Method::POST,
            format!("{TOOLS}/upper/approve"),
            None,
            "tools:write",
        ),
    ];
    for (method, path, body, needs) in cases {
        let res = app
            .send(with_token(&reader, method.clone(), &path, body))
            .await;
        if needs == "ok" {
            res.assert_ok(StatusCode::OK);
        } else {
            assert_eq!(
                res.assert_error(StatusCode::FORBIDDEN, "forbidden"),
                format!("this operation needs the '{needs}' scope"),
                "{method} {path}"
            );
        }
    }
    // Approving and rejecting are the owner's (or an admin's) with `tools:write`: the writer
    // owns `upper`, which is not pending.
    for action in ["approve", "reject"] {
        let res = app
            .send(with_token(
                &writer,
                Method::POST,
                &format!("{TOOLS}/upper/{action}"),
                None,
            ))
            .await;
        res.assert_error(StatusCode::BAD_REQUEST, "invalid_state");
    }
    // Without a token, once tokens exist: 401.
    let res = app.get(TOOLS).await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.text);
    assert_eq!(res.json["error"]["code"], json!("unauthorized"));
}
