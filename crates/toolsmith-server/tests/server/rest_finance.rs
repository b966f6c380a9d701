//! Finance over the real router: `parse_receipt` against an OpenAI-compatible vision service
//! this test starts on loopback (a stand-in for a paid API), reached through the real egress
//! guard only once the operator lists its host, with the key from the Config Center; and the
//! expenses' REST routes (`/api/v1/data/expenses`) with the tools' checks, export and
//! isolation.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

use crate::rest_data::{caller, tool};
use crate::rest_support::TestApp;

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// A loopback chat-completions endpoint that records what it was sent and answers with a
/// receipt; its `host:port`.
async fn vision_service(seen: Arc<Mutex<Vec<(HeaderMap, Value)>>>) -> String {
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |headers: HeaderMap, body: axum::Json<Value>| {
            let seen = seen.clone();
            async move {
                seen.lock().unwrap().push((headers, body.0));
                let receipt = json!({"merchant": "Luigi's", "date": "2026-05-01", "total": 23.5, "currency": "EUR", "category": "food",
                    "items": [{"description": "Pizza", "amount": 12.5}, {"description": "Wine", "amount": 11}]});
                axum::Json(json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": receipt.to_string()}}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    addr.to_string()
}

async fn app_with_egress(allowed: Option<&str>) -> TestApp {
    let mut service = ToolServiceSettings {
        allow_plain_http: true,
        ..ToolServiceSettings::default()
    };
    service.egress.allow_plain_http = true;
    if let Some(host) = allowed {
        service.egress.allowed_private_hosts = vec![host.parse().unwrap()];
    }
    TestApp::with_configs(service, ServerSettings::default()).await
}

async fn configure_vision(app: &TestApp, base_url: &str) {
    app.post(
        "/api/v1/config/services",
        &json!({"name": "vision", "displayName": "Vision"}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    app.post(
        "/api/v1/config/services/vision/entries",
        &json!({"values": {"base_url": base_url, "api_key": "sk-test-vision-key-0123456789"}}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
}

async fn parse(app: &TestApp) -> Value {
    app.post(
        "/api/v1/tools/parse_receipt/execute",
        &json!({"arguments": {"image": format!("data:image/png;base64,{PNG}")}}),
    )
    .await
    .assert_ok(StatusCode::OK)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parse_receipt_asks_the_configured_vision_service_through_the_egress_guard() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let host = vision_service(seen.clone()).await;
    let app = app_with_egress(Some(&host)).await;
    // Not configured: the answer names the entry to set.
    let run = parse(&app).await;
    assert_eq!(run["isError"], true, "{run}");
    assert!(
        run.to_string().contains("Config Center service 'vision'"),
        "{run}"
    );

    configure_vision(&app, &format!("http://{host}/v1/")).await;
    let run = parse(&app).await;
    assert_eq!(run["isError"], false, "{run}");
    let out = &run["content"];
    assert_eq!(
        out["expense"],
        json!({"amount": "23.50", "currency": "EUR", "category": "food", "date": "2026-05-01", "description": "Receipt: Luigi's"}),
        "{run}"
    );
    assert_eq!(
        out["receipt"]["items"][1],
        json!({"description": "Wine", "amount": "11.00"})
    );
    assert!(
        !run.to_string().contains("sk-test-vision-key"),
        "the key never comes back"
    );
    // What the service was sent: the OpenAI chat-completions vision contract.
    let (headers, body) = seen.lock().unwrap().first().cloned().unwrap();
    assert_eq!(
        headers["authorization"],
        "Bearer sk-test-vision-key-0123456789"
    );
    assert_eq!(body["model"], "gpt-4o-mini");
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    let image = body["messages"][1]["content"][1]["image_url"]["url"]
        .as_str()
        .unwrap();
    assert_eq!(image, format!("data:image/png;base64,{PNG}"));
    // The suggested arguments are add_expense's.
    let added = app
        .post(
            "/api/v1/tools/add_expense/execute",
            &json!({"arguments": out["expense"]}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(added["isError"], false, "{added}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parse_receipt_cannot_reach_a_private_address_the_operator_did_not_list() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let host = vision_service(seen.clone()).await;
    let app = app_with_egress(None).await;
    configure_vision(&app, &format!("http://{host}/v1")).await;
    let run = parse(&app).await;
    assert_eq!(run["isError"], true, "{run}");
    assert!(run.to_string().contains("allowed_private_hosts"), "{run}");
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the service"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expenses_through_rest_follow_the_tools_rules_and_stay_their_owners() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let id = alice
        .add("expenses", &json!({"amount": "12.50", "category": "food", "description": "zebracorn lunch", "date": "2026-05-03"}))
        .await;
    tool(&app, "alice", "add_expense", json!({"amount": 1200, "currency": "JPY", "category": "shopping", "description": "Notebook"})).await;
    for (query, count) in [
        ("minAmount=10&maxAmount=20", 1),
        ("currency=jpy", 1),
        ("category=food&search=zebracorn", 1),
        ("startDate=2026-05-01&endDate=2026-05-02", 0),
        ("limit=100&sortBy=amount", 2),
    ] {
        let list = alice
            .get(&format!("/api/v1/data/expenses?{query}"))
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(list["count"], count, "{query}: {list}");
    }
    for (method, path, body, words) in [
        (
            Method::PATCH,
            format!("/api/v1/data/expenses/{id}"),
            json!({"currency": "JPY"}),
            "round it to 0 decimals",
        ),
        (
            Method::POST,
            "/api/v1/data/expenses".to_owned(),
            json!({"amount": "1,5", "category": "food", "description": "x"}),
            "'amount' must be a positive number",
        ),
        (
            Method::POST,
            "/api/v1/data/expenses".to_owned(),
            json!({"amount": 1, "category": "bribes", "description": "x"}),
            "'category' must be one of",
        ),
    ] {
        let res = alice.send(method, &path, Some(&body)).await;
        let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(message.contains(words), "{words:?} not in {message}");
    }
    let res = alice.get("/api/v1/data/expenses?limit=101").await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("from 1 to 100"), "{message}");
    let bob = caller(&app, "bob", None).await;
    let alices_agent = caller(&app, "alice", Some("agent-1")).await;
    for other in [&bob, &alices_agent] {
        let list = other
            .get("/api/v1/data/expenses?search=zebracorn")
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(list["count"], 0, "{list}");
        other.cannot_reach("expenses", &id).await;
    }
    let export = bob
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(export["records"], json!([]));
    let export = alice
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(export["records"].as_array().unwrap().len(), 2, "{export}");
    assert_eq!(export["records"][0]["collection"], "expense");
}
