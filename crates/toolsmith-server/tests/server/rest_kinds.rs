//! The other tool kinds and the Config Center through the real router: an HTTP tool imported
//! from the spec's example and run against a server this test starts on loopback (reached
//! through the real egress guard, which allows exactly that host), trigger suggestions, JS
//! `fetch` through the guard, and the refusals of hostile addresses.

use crate::rest_support;

use axum::Router;
use axum::extract::Path;
use axum::http::{Method, StatusCode};
use axum::routing::get;
use rest_support::{TestApp, app_reaching, serve_loopback, settings_reaching};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;

/// A loopback API: the loyalty endpoint of spec 004's first example, and a JSON echo.
async fn upstream() -> String {
    let app = Router::new()
        .route(
            "/v1/customers/{email}/points",
            get(|Path(email): Path<String>| async move {
                axum::Json(json!({"data": {
                    "email": email,
                    "current_balance": 1250,
                    "membership_tier": "Gold",
                    "points_needed_for_next_tier": 250,
                    "expiring_soon": 0
                }}))
            }),
        )
        .route(
            "/json",
            get(|| async { axum::Json(json!({"hello": "world"})) }),
        );
    serve_loopback(app).await
}

async fn configure(app: &TestApp, service: &str, values: Value) {
    let res = app
        .post(
            &format!("/api/v1/config/services/{service}/entries"),
            &json!({"values": values}),
        )
        .await;
    assert_eq!(res.status, StatusCode::CREATED, "{}", res.text);
}

const LOYALTY: &str = include_str!("../../../../examples/http-tools/loyalty_points.yaml");

#[tokio::test]
async fn an_imported_http_tool_runs_against_its_configured_origin() {
    let host = upstream().await;
    let app = app_reaching(&host).await;
    let res = app
        .raw(
            Method::POST,
            "/api/v1/custom-tools/import",
            Some("application/yaml"),
            LOYALTY,
        )
        .await;
    let tool = res.assert_ok(StatusCode::CREATED);
    assert_eq!(tool["kind"], "http");
    assert_eq!(tool["name"], "check_loyalty_points");
    assert!(
        tool["permissions"]
            .as_array()
            .unwrap()
            .contains(&json!("network"))
    );
    // The services it reads were registered, and it says what is missing.
    let missing = tool["missingConfig"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(missing.len(), 2, "{tool}");

    let services = app
        .get("/api/v1/config/services")
        .await
        .assert_ok(StatusCode::OK);
    let names: Vec<&str> = services["services"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["loyalty", "smile"]);
    configure(
        &app,
        "loyalty",
        json!({"api_key": "unused-but-required", "base_url": format!("http://{host}")}),
    )
    .await;
    configure(&app, "smile", json!({"api_key": "smile-secret-123456"})).await;
    let tool = app
        .get("/api/v1/custom-tools/check_loyalty_points")
        .await
        .assert_ok(StatusCode::OK);
    assert!(tool.get("missingConfig").is_none(), "{tool}");

    let run = app
        .post(
            "/api/v1/tools/check_loyalty_points/execute",
            &json!({
                "arguments": {"include_history": false},
                "context": {"conversation": {"customer_email": "ada@example.com"}}
            }),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(run["isError"], false, "{run}");
    let text = run["content"]["text"].as_str().unwrap();
    assert!(text.contains("1250") && text.contains("Gold"), "{text}");
    assert_eq!(run["content"]["data"]["points_balance"], 1250);

    // Without the conversation's email the required parameter is named.
    let res = app
        .post(
            "/api/v1/tools/check_loyalty_points/execute",
            &json!({"arguments": {}}),
        )
        .await;
    assert!(res.text.contains("customer_email"), "{}", res.text);

    let found = app
        .get("/api/v1/tools/suggest?q=How%20many%20points%20do%20I%20have%3F")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(found[0]["name"], "check_loyalty_points", "{found}");
    let none = app
        .get("/api/v1/tools/suggest?q=weather%20tomorrow")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(none, json!([]));
    app.get("/api/v1/tools/suggest")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
}

#[tokio::test]
async fn an_http_tool_pointed_at_a_private_address_is_refused() {
    let host = upstream().await;
    let app = app_reaching(&host).await;
    app.raw(
        Method::POST,
        "/api/v1/custom-tools/import",
        Some("application/yaml"),
        LOYALTY,
    )
    .await
    .assert_ok(StatusCode::CREATED);
    configure(&app, "smile", json!({"api_key": "smile-secret-123456"})).await;
    // The origin now names another loopback port and the metadata address: neither is allowed.
    for origin in [
        "http://127.0.0.1:9",
        "http://169.254.169.254",
        "http://[::1]:80",
        "http://0x7f000001",
    ] {
        app.call(
            Method::DELETE,
            "/api/v1/config/services/loyalty/entries/default",
        )
        .await;
        configure(
            &app,
            "loyalty",
            json!({"api_key": "k-123456", "base_url": origin}),
        )
        .await;
        let run = app
            .post(
                "/api/v1/tools/check_loyalty_points/execute",
                &json!({"arguments": {}, "context": {"conversation": {"customer_email": "a@b.c"}}}),
            )
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(run["isError"], true, "{origin}: {run}");
        if origin.contains("127.0.0.1") || origin.contains("169.254") {
            assert_eq!(run["metadata"]["errorKind"], "denied", "{origin}: {run}");
        }
    }
}

#[tokio::test]
async fn js_fetch_goes_through_the_egress_guard() {
    let host = upstream().await;
    let app = app_reaching(&host).await;
    app.create_tool(&json!({
        "name": "fetcher",
        "description": "fetches a URL",
        "parameters": {"type": "object", "properties": {"url": {"type": "string"}}},
        "code": "const r = await fetch(args.url); return {status: r.status, body: await r.json()};",
        "permissions": ["network"],
    }))
    .await;
    app.create_tool(&json!({
        "name": "offline",
        "description": "has no network",
        "parameters": {"type": "object"},
        "code": "return typeof fetch;",
    }))
    .await;
    let ok = app
        .post(
            "/api/v1/tools/fetcher/execute",
            &json!({"arguments": {"url": format!("http://{host}/json")}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        ok["content"],
        json!({"status": 200, "body": {"hello": "world"}}),
        "{ok}"
    );
    for url in [
        "http://127.0.0.1:9/",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost:9/",
        "http://2130706433/",
        "file:///etc/passwd",
    ] {
        let res = app
            .post(
                "/api/v1/tools/fetcher/execute",
                &json!({"arguments": {"url": url}}),
            )
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(res["isError"], true, "{url}: {res}");
    }
    let offline = app
        .post("/api/v1/tools/offline/execute", &json!({}))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(offline["content"], "undefined");
}

#[tokio::test]
async fn config_values_are_masked_and_hostile_input_is_refused() {
    let app = TestApp::new().await;
    let created = app
        .post(
            "/api/v1/config/services",
            &json!({"name": "weatherapi", "displayName": "WeatherAPI"}),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(created["configured"], false);
    let entry = app
        .post(
            "/api/v1/config/services/weatherapi/entries",
            &json!({"values": {"api_key": "sk-weather-0123456789abcdefXYZ"}}),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let shown = entry["values"]["api_key"].as_str().unwrap();
    assert!(!shown.contains("0123456789"), "{shown}");
    assert!(shown.ends_with("fXYZ"), "{shown}");
    let all = app.get("/api/v1/config/services").await;
    assert!(!all.text.contains("0123456789abcdef"), "{}", all.text);

    for (body, code) in [
        (
            json!({"name": "Bad Name"}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (json!({"name": "weatherapi"}), StatusCode::CONFLICT),
        (
            json!({"name": "x", "fields": [{"name": "a", "kind": "secret"}, {"name": "a", "kind": "text"}]}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"name": "y", "unknown": true}),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let res = app.post("/api/v1/config/services", &body).await;
        assert_eq!(res.status, code, "{body}: {}", res.text);
    }
    for values in [
        json!({"nope": "x"}),
        json!({"api_key": 42}),
        json!({"api_key": "x".repeat(100_000)}),
        json!({"base_url": "not a url"}),
    ] {
        let res = app
            .post(
                "/api/v1/config/services/weatherapi/entries",
                &json!({"label": "other", "values": values}),
            )
            .await;
        assert!(res.status.is_client_error(), "{values}: {}", res.text);
    }
    app.get("/api/v1/config/services/nope")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    let res = app
        .call(Method::DELETE, "/api/v1/config/services/weatherapi")
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text);
}

#[tokio::test]
async fn an_owner_allowlist_narrows_what_its_tools_reach() {
    let host = upstream().await;
    // The operator allows the loopback test host; this owner's list names only another domain,
    // so neither `fetch` nor an HTTP tool of this owner may reach it.
    let mut service = settings_reaching(&host);
    service.owner_allowed_domains.insert(
        "default".to_owned(),
        vec!["api.example.com".parse().unwrap()],
    );
    let app = TestApp::with_configs(service, ServerSettings::default()).await;

    app.create_tool(&json!({
        "name": "fetcher",
        "description": "fetches a URL",
        "parameters": {"type": "object", "properties": {"url": {"type": "string"}}},
        "code": "const r = await fetch(args.url); return r.status;",
        "permissions": ["network"],
    }))
    .await;
    let res = app
        .post(
            "/api/v1/tools/fetcher/execute",
            &json!({"arguments": {"url": format!("http://{host}/json")}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(res["isError"], true, "{res}");
    assert!(
        res.to_string().contains("allow"),
        "the refusal names the allowlist: {res}"
    );

    app.raw(
        Method::POST,
        "/api/v1/custom-tools/import",
        Some("application/yaml"),
        LOYALTY,
    )
    .await
    .assert_ok(StatusCode::CREATED);
    configure(
        &app,
        "loyalty",
        json!({"api_key": "k-123456", "base_url": format!("http://{host}")}),
    )
    .await;
    configure(&app, "smile", json!({"api_key": "smile-secret-123456"})).await;
    let run = app
        .post(
            "/api/v1/tools/check_loyalty_points/execute",
            &json!({"arguments": {}, "context": {"conversation": {"customer_email": "a@b.c"}}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(run["isError"], true, "{run}");
    assert_eq!(run["metadata"]["errorKind"], "denied", "{run}");
}

/// An invalid HTTP tool says so once, through import and through create alike, and names what is
/// wrong (it said "invalid HTTP tool definition: invalid HTTP tool definition: …").
#[tokio::test]
async fn an_invalid_http_definition_is_named_once_on_both_doors() {
    let app = TestApp::new().await;
    let invalid = "name: empty_version\ndescription: An HTTP tool with an empty version\nversion: \"\"\nendpoint:\n  url: https://api.example.com/x\n  method: GET\n";
    let import = app
        .raw(
            Method::POST,
            "/api/v1/custom-tools/import",
            Some("application/yaml"),
            invalid,
        )
        .await;
    let create = app
        .post(
            "/api/v1/custom-tools",
            &json!({"name": "empty_version", "description": "An HTTP tool with an empty version", "kind": "http", "code": invalid, "parameters": {"type": "object"}}),
        )
        .await;
    for res in [import, create] {
        let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert_eq!(
            message.matches("invalid HTTP tool definition").count(),
            1,
            "{message}"
        );
        assert!(
            message.contains("version must be 1 to 32 characters"),
            "{message}"
        );
    }
}

/// Found by the `http_definition` fuzz target: `https:/{{host}}/x` — a scheme without `://` and
/// a host — was imported, and a call sent its request to whatever host the model put in the
/// parameter (the URL parser reads `https:/evil.example/x` as host `evil.example`). Both doors
/// now refuse it, saying how to write the origin.
#[tokio::test]
async fn an_http_tool_whose_host_a_parameter_would_set_is_refused() {
    let app = TestApp::new().await;
    for url in ["https:/{{host}}/x", "https:///{{host}}/x"] {
        let yaml = format!(
            "name: short_scheme\ndescription: An HTTP tool whose URL has a short scheme\n\
             parameters:\n  - {{name: host, type: string, required: true}}\n\
             endpoint:\n  url: '{url}'\n  method: GET\n"
        );
        let message = app
            .raw(
                Method::POST,
                "/api/v1/custom-tools/import",
                Some("application/yaml"),
                yaml,
            )
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(
            message.contains("must begin with its origin in full")
                && message.contains("https://host/"),
            "{url}: {message}"
        );
    }
}
