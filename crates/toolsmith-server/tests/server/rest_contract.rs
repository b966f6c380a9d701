//! OwnPilot's REST contract (spec 000, "Gateway REST API"), route by route, with the spec's own
//! request bodies verbatim and the status codes and fields it gives. Toolsmith's extra fields
//! are allowed (the contract is additive); these tests check only what the spec promises.

use crate::rest_support;

use axum::http::{Method, StatusCode};
use rest_support::*;
use serde_json::{Value, json};
use toolsmith_service::{Actor, CreateTool};

const TOOLS: &str = "/api/v1/custom-tools";

/// Spec 000, `POST /api/v1/custom-tools` request body, verbatim.
fn spec_fetch_weather() -> Value {
    json!({
      "name": "fetch_weather",
      "description": "Fetch current weather for a city",
      "parameters": {
        "type": "object",
        "properties": {
          "city": { "type": "string", "description": "City name" }
        },
        "required": ["city"]
      },
      "code": "const key = utils.getApiKey('weatherapi');\nconst res = await fetch(`https://api.weatherapi.com/v1/current.json?key=${key}&q=${args.city}`);\nreturn await res.json();",
      "category": "Weather",
      "permissions": ["network"],
      "createdBy": "user",
      "requiredApiKeys": [
        { "name": "weatherapi", "displayName": "WeatherAPI", "description": "Weather data API" }
      ]
    })
}

/// Spec 000, `POST /api/v1/custom-tools/test` request body, verbatim.
fn spec_test_body() -> Value {
    json!({
      "name": "test_tool",
      "description": "Test description",
      "parameters": { "type": "object", "properties": {} },
      "code": "return { hello: 'world' };",
      "permissions": [],
      "testArguments": {}
    })
}

/// A tool a model created with a dangerous permission: `pending_approval`.
async fn pending(app: &TestApp, name: &str) -> String {
    let input: CreateTool = serde_json::from_value(json!({
        "name": name,
        "description": "Needs a person's approval",
        "parameters": {"type": "object", "properties": {}},
        "code": "return 1;",
        "permissions": ["shell"]
    }))
    .expect("a definition");
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
async fn create_get_list_stats_and_definitions() {
    let app = TestApp::new().await;
    // POST: 201 with the full record.
    let res = app.post(TOOLS, &spec_fetch_weather()).await;
    let tool = res.assert_ok(StatusCode::CREATED);
    for field in [
        "id",
        "userId",
        "name",
        "description",
        "parameters",
        "code",
        "category",
        "permissions",
        "status",
        "requiresApproval",
        "createdBy",
        "version",
        "usageCount",
        "metadata",
        "createdAt",
        "updatedAt",
    ] {
        assert!(tool.get(field).is_some(), "{field} in {tool:#}");
    }
    assert_eq!(tool["status"], "active");
    assert_eq!(tool["createdBy"], "user");
    // requiredApiKeys: registered in the Config Center.
    let service = app
        .get("/api/v1/config/services/weatherapi")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(service["displayName"], "WeatherAPI");

    // GET /:id — the full record, by id and by name.
    let id = tool["id"].as_str().unwrap().to_owned();
    let got = app
        .get(&format!("{TOOLS}/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(got["name"], "fetch_weather");

    // GET list — {tools, count}, with the spec's filters.
    let list = app
        .get(&format!(
            "{TOOLS}?status=active&category=Weather&createdBy=user&limit=10&offset=0"
        ))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 1);
    assert_eq!(list["tools"][0]["name"], "fetch_weather");

    // GET stats — the spec's fields.
    pending(&app, "waiting_tool").await;
    let stats = app
        .get(&format!("{TOOLS}/stats"))
        .await
        .assert_ok(StatusCode::OK);
    for (field, value) in [
        ("total", 2),
        ("active", 1),
        ("disabled", 0),
        ("pendingApproval", 1),
        ("createdByLLM", 1),
        ("createdByUser", 1),
        ("totalUsage", 0),
    ] {
        assert_eq!(stats[field], value, "{field} in {stats:#}");
    }

    // GET pending — the list's shape, pending tools only.
    let pend = app
        .get(&format!("{TOOLS}/pending"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(pend["count"], 1);
    assert_eq!(pend["tools"][0]["status"], "pending_approval");

    // GET active/definitions — {name, description, parameters, category, requiresConfirmation}.
    let defs = app
        .get(&format!("{TOOLS}/active/definitions"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(defs["count"], 1);
    let def = &defs["tools"][0];
    assert_eq!(def["name"], "fetch_weather");
    assert_eq!(def["category"], "Weather");
    assert!(def["parameters"].is_object());
    assert!(def["requiresConfirmation"].is_boolean());
}

#[tokio::test]
async fn patch_renames_with_name_and_takes_required_api_keys() {
    let app = TestApp::new().await;
    let tool = app.create_named("upper").await;
    let id = tool["id"].as_str().unwrap().to_owned();
    let path = format!("{TOOLS}/{id}");
    let metadata = json!({"owner_note": "kept"});
    app.patch(&path, &json!({"metadata": metadata}))
        .await
        .assert_ok(StatusCode::OK);

    // `name` renames (spec 000: "Any subset of: name, …").
    let renamed = app
        .patch(&path, &json!({"name": "shout"}))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(renamed["name"], "shout");
    app.get(&format!("{TOOLS}/upper"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    // `requiredApiKeys` at the top level: registered, the rest of the metadata kept.
    let patched = app
        .patch(
            &path,
            &json!({"requiredApiKeys": [{"name": "smtp", "displayName": "SMTP", "multiEntry": true,
            "configSchema": [
                {"name": "host", "label": "Host", "type": "string", "required": true},
                {"name": "password", "type": "secret", "required": true}
            ]}]}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(patched["metadata"]["owner_note"], "kept");
    assert_eq!(patched["metadata"]["requiredApiKeys"][0]["name"], "smtp");

    // multiEntry and configSchema reach the Config Center.
    let service = app
        .get("/api/v1/config/services/smtp")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(service["multiEntry"], true, "{service:#}");
    let fields: Vec<&str> = service["fields"]
        .as_array()
        .expect("fields")
        .iter()
        .filter_map(|f| f["name"].as_str())
        .collect();
    assert_eq!(fields, ["host", "password"], "{service:#}");
    let missing = app.get(&path).await.assert_ok(StatusCode::OK);
    assert!(
        missing["missingConfig"]
            .to_string()
            .contains("smtp (host, password)"),
        "{missing:#}"
    );

    // A configSchema that is not a list of fields is a 422 naming the fix.
    let res = app
        .patch(
            &path,
            &json!({"requiredApiKeys": [{"name": "bad", "configSchema": "api_key"}]}),
        )
        .await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("configSchema"), "{message}");
}

#[tokio::test]
async fn delete_enable_disable() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let off = app
        .call(Method::POST, &format!("{TOOLS}/upper/disable"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(off["status"], "disabled");
    let on = app
        .call(Method::POST, &format!("{TOOLS}/upper/enable"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(on["status"], "active");
    let deleted = app
        .call(Method::DELETE, &format!("{TOOLS}/upper"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(deleted["deleted"], true);
}

#[tokio::test]
async fn approve_and_reject_answer_400_unless_pending() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let first = pending(&app, "first_pending").await;
    let second = pending(&app, "second_pending").await;
    for action in ["approve", "reject"] {
        let res = app
            .call(Method::POST, &format!("{TOOLS}/upper/{action}"))
            .await;
        res.assert_error(StatusCode::BAD_REQUEST, "invalid_state");
    }
    let approved = app
        .call(Method::POST, &format!("{TOOLS}/{first}/approve"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(approved["status"], "active");
    let rejected = app
        .call(Method::POST, &format!("{TOOLS}/{second}/reject"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(rejected["status"], "rejected");
    for (id, action) in [(&first, "approve"), (&second, "reject")] {
        app.call(Method::POST, &format!("{TOOLS}/{id}/{action}"))
            .await
            .assert_error(StatusCode::BAD_REQUEST, "invalid_state");
    }
}

/// The execute response: `tool`, `result`, `isError`, `duration`, `metadata.executionTime`,
/// `metadata.dynamicTool`, as spec 000 shows; an inactive tool is a 400.
#[tokio::test]
async fn execute_answers_the_spec_fields() {
    let app = TestApp::new().await;
    app.create_named("upper").await;
    let ran = app
        .post(
            &format!("{TOOLS}/upper/execute"),
            &json!({"arguments": {"text": "London"}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ran["tool"], "upper");
    assert_eq!(ran["result"], json!({"upper": "LONDON"}));
    assert_eq!(ran["content"], ran["result"], "the extra field stays");
    assert_eq!(ran["isError"], false);
    assert!(ran["duration"].is_u64(), "{ran:#}");
    assert!(ran["metadata"]["executionTime"].is_u64(), "{ran:#}");
    assert_eq!(ran["metadata"]["dynamicTool"], "upper");
    assert!(ran["metadata"]["durationMs"].is_number(), "{ran:#}");

    // The spec's own execute body against its own fetch_weather: the tool runs and fails
    // because the WeatherAPI key is not set (a tool failure is a 200 with isError).
    app.post(TOOLS, &spec_fetch_weather())
        .await
        .assert_ok(StatusCode::CREATED);
    let ran = app
        .post(
            &format!("{TOOLS}/fetch_weather/execute"),
            &json!({"arguments": { "city": "London" }}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ran["isError"], true, "{ran:#}");
    assert!(
        ran["result"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("weatherapi"),
        "{ran:#}"
    );
    assert_eq!(ran["metadata"]["dynamicTool"], "fetch_weather");

    // Not active: 400.
    app.call(Method::POST, &format!("{TOOLS}/upper/disable"))
        .await
        .assert_ok(StatusCode::OK);
    app.post(
        &format!("{TOOLS}/upper/execute"),
        &json!({"arguments": {"text": "a"}}),
    )
    .await
    .assert_error(StatusCode::BAD_REQUEST, "invalid_state");
    let waiting = pending(&app, "waiting").await;
    app.post(&format!("{TOOLS}/{waiting}/execute"), &json!({}))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_state");
}

#[tokio::test]
async fn test_route_runs_the_spec_body() {
    let app = TestApp::new().await;
    let ran = app
        .post(&format!("{TOOLS}/test"), &spec_test_body())
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ran["testMode"], true);
    assert_eq!(ran["result"], json!({"hello": "world"}));
    assert_eq!(ran["isError"], false);
    assert!(ran["duration"].is_u64());
    assert!(ran["metadata"]["executionTime"].is_u64());
    // Nothing was stored.
    let list = app.get(TOOLS).await.assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 0);
}

/// Spec 001 §13 "JSON Config Example", verbatim, on REST: a command tool, `enabled` its status.
#[tokio::test]
async fn goclaw_command_tool_json_as_is() {
    let app = TestApp::new().await;
    let mut body = json!({
      "name": "dns_lookup",
      "description": "Look up DNS records for a domain",
      "parameters": {
        "type": "object",
        "properties": {
          "domain": { "type": "string", "description": "Domain name" },
          "record_type": { "type": "string", "enum": ["A", "AAAA", "MX", "CNAME", "TXT"] }
        },
        "required": ["domain"]
      },
      "command": "dig +short {{.record_type}} {{.domain}}",
      "timeout_seconds": 10,
      "enabled": true
    });
    let tool = app.post(TOOLS, &body).await.assert_ok(StatusCode::CREATED);
    assert_eq!(tool["kind"], "command");
    assert_eq!(tool["status"], "active");
    let spec: Value = serde_json::from_str(tool["code"].as_str().unwrap()).unwrap();
    assert_eq!(spec["command"], "dig +short {{.record_type}} {{.domain}}");
    assert_eq!(spec["timeoutSeconds"], 10);

    // A whole number written as a float is that number (schemathesis sent `3.0`); a fraction
    // or a negative number is a 400 naming what is expected.
    body["name"] = json!("dns_lookup_float");
    body["timeout_seconds"] = json!(3.0);
    let float = app.post(TOOLS, &body).await.assert_ok(StatusCode::CREATED);
    let spec: Value = serde_json::from_str(float["code"].as_str().unwrap()).unwrap();
    assert_eq!(spec["timeoutSeconds"], 3);
    for bad in [json!(2.5), json!(-1)] {
        body["timeout_seconds"] = bad;
        let message = app
            .post(TOOLS, &body)
            .await
            .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
        assert!(message.contains("expected"), "{message}");
    }
    body["timeout_seconds"] = json!(10);

    body["name"] = json!("dns_lookup_off");
    body["enabled"] = json!(false);
    let off = app.post(TOOLS, &body).await.assert_ok(StatusCode::CREATED);
    assert_eq!(off["status"], "disabled");

    // Both forms at once, or command fields without a command: 422 naming the fix.
    body["name"] = json!("dns_both");
    body["code"] = json!("{\"command\": \"true\"}");
    let message = app
        .post(TOOLS, &body)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("not both"), "{message}");

    // The dry run takes the same form: the fields at the top level, run once in the command
    // sandbox, nothing stored.
    let dry = json!({
      "name": "echo_domain",
      "description": "Echoes a domain",
      "parameters": {"type": "object", "properties": {"domain": {"type": "string"}}, "required": ["domain"]},
      "command": "echo {{.domain}}",
      "timeout_seconds": 10,
      "testArguments": {"domain": "example.org"}
    });
    let ran = app
        .post(&format!("{TOOLS}/test"), &dry)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ran["isError"], false, "{ran:#}");
    assert!(ran["result"].to_string().contains("example.org"), "{ran:#}");
    let mut both = dry.clone();
    both["code"] = json!("{\"command\": \"true\"}");
    let message = app
        .post(&format!("{TOOLS}/test"), &both)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("not both"), "{message}");
    assert!(app.get(&format!("{TOOLS}/echo_domain")).await.status == StatusCode::NOT_FOUND);
}

/// The subagent depth reaches the policy from the REST header.
#[tokio::test]
async fn subagent_depth_header_applies_the_deny_lists() {
    let app = TestApp::new().await;
    app.json(
        Method::PUT,
        "/api/v1/policies",
        &json!({"policy": {"subagents": {"always_deny": ["calculate"], "max_depth": 1}}, "expectedRevision": 0}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let body = json!({"arguments": {"expression": "1+2"}});
    let run = |depth: Option<&'static str>| {
        let mut req = request(Method::POST, "/api/v1/tools/calculate/execute")
            .header("content-type", "application/json");
        if let Some(depth) = depth {
            req = req.header("x-toolsmith-subagent-depth", depth);
        }
        req.body(axum::body::Body::from(body.to_string()))
            .expect("request")
    };
    let top = app.send(run(None)).await.assert_ok(StatusCode::OK);
    assert_eq!(top["isError"], false, "{top:#}");
    let sub = app.send(run(Some("1"))).await.assert_ok(StatusCode::OK);
    assert_eq!(sub["isError"], true, "{sub:#}");
    assert_eq!(sub["metadata"]["errorKind"], "denied", "{sub:#}");
    assert!(
        sub["result"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("always_deny"),
        "{sub:#}"
    );
    let too_deep = app.send(run(Some("2"))).await.assert_ok(StatusCode::OK);
    assert_eq!(too_deep["metadata"]["errorKind"], "denied", "{too_deep:#}");
    app.send(run(Some("deep")))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_header");
}

/// The list's filters of spec 000, one by one: each narrows the list to what it names, paging
/// counts the page in `count` and everything in `total`, and a bad value is a 400 whose message
/// names the parameter and what to send instead.
#[tokio::test]
async fn list_filters_one_by_one() {
    let app = TestApp::new().await;
    for (name, category) in [("alpha", "Text"), ("beta", "Text"), ("gamma", "Math")] {
        let mut body = tool_body(name);
        body["category"] = json!(category);
        app.post(TOOLS, &body).await.assert_ok(StatusCode::CREATED);
    }
    app.call(Method::POST, &format!("{TOOLS}/beta/disable"))
        .await
        .assert_ok(StatusCode::OK);
    pending(&app, "delta").await;
    let names = |list: &Value| -> Vec<String> {
        list["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("a list: {list:#}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    for (query, expected) in [
        ("", vec!["alpha", "beta", "delta", "gamma"]),
        ("status=active", vec!["alpha", "gamma"]),
        ("status=disabled", vec!["beta"]),
        ("status=pending_approval", vec!["delta"]),
        ("status=rejected", vec![]),
        ("category=Text", vec!["alpha", "beta"]),
        ("category=Nothing", vec![]),
        ("createdBy=user", vec!["alpha", "beta", "gamma"]),
        ("createdBy=llm", vec!["delta"]),
        ("limit=2", vec!["alpha", "beta"]),
        ("limit=2&offset=2", vec!["delta", "gamma"]),
        ("offset=10", vec![]),
        ("status=active&category=Math&createdBy=user", vec!["gamma"]),
    ] {
        let list = app
            .get(&format!("{TOOLS}?{query}"))
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(names(&list), expected, "?{query}: {list:#}");
        assert_eq!(list["count"], expected.len(), "?{query}: count is the page");
    }
    let paged = app
        .get(&format!("{TOOLS}?limit=1"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(paged["total"], 4, "total counts every match: {paged:#}");
    let pending_list = app
        .get(&format!("{TOOLS}/pending?limit=1&offset=0"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(names(&pending_list), vec!["delta"]);

    for (query, fix) in [
        (
            "status=enabled",
            "use one of active, disabled, pending_approval, rejected",
        ),
        ("createdBy=robot", "use one of user, llm"),
        ("limit=0", "`limit` must be an integer from 1 to 1000"),
        ("limit=ten", "`limit` must be an integer from 1 to 1000"),
        ("offset=-1", "`offset` must be an integer from 0"),
        ("sort=name", "sort"),
    ] {
        let message = app
            .get(&format!("{TOOLS}?{query}"))
            .await
            .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
        assert!(message.contains(fix), "?{query}: {message}");
    }
    let message = app
        .get(&format!("{TOOLS}/pending?status=active"))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    assert!(message.contains("status"), "{message}");

    // The other lists' filters answer the same way.
    for (path, fix) in [
        (
            "/api/v1/approvals?status=open",
            "must be `pending` or `all`",
        ),
        ("/api/v1/approvals?limit=5000", "from 1 to 1000"),
        (
            "/api/v1/executions?status=failed",
            "one of success, error, timeout",
        ),
        ("/api/v1/executions?tool=", "1 to 128 characters"),
        ("/api/v1/executions?caller=", "leave it out for no filter"),
        ("/api/v1/audit?since=yesterday", "RFC 3339 time, e.g."),
        ("/api/v1/audit?actor=", "1 to 128 characters"),
        ("/api/v1/audit?offset=x", "`offset` must be an integer"),
    ] {
        let message = app
            .get(path)
            .await
            .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
        assert!(message.contains(fix), "{path}: {message}");
    }
}
