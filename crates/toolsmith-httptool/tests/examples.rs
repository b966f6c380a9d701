//! End to end: the spec's three example tools in `examples/http-tools/`, run against a real
//! axum server on 127.0.0.1 through a test-only reqwest sender (no redirects, per-request
//! timeout, capped body, loopback only).

// Tests, benches and examples fail loudly: a panic is their report. The code they exercise
// is held to the workspace's `unwrap_used`, `expect_used`, `panic`, `string_slice` and
// `indexing_slicing` lints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::string_slice,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use toolsmith_httptool::{
    CallContext, HttpErrorKind, HttpSender, HttpToolDefinition, PreparedRequest, SecurityRules,
    SendError, SenderResponse, execute, load_definition, matches_triggers, parameters_schema,
    validate_definition, validate_security,
};

/// What the upstream saw: (path, authorization header, JSON body).
type Seen = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

async fn start_upstream() -> (SocketAddr, Seen) {
    let seen: Seen = Arc::default();
    let app = Router::new()
        .route("/v1/customers/{email}/points", get(points))
        .route("/api/appointments", post(book))
        .route("/size-advice", post(size))
        .route("/html", get(|| async { "<html>not json</html>" }))
        .route("/big", get(|| async { "x".repeat(2 * 1024 * 1024) }))
        .route(
            "/redirect",
            get(|| async { Redirect::temporary("/v1/customers/ann%40example.com/points") }),
        )
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, seen)
}

fn record(seen: &Seen, path: String, headers: &HeaderMap, body: Value) {
    let auth = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    seen.lock().unwrap().push((path, auth, body));
}

async fn points(
    State(seen): State<Seen>,
    Path(email): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    record(&seen, format!("points/{email}"), &headers, json!(query));
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some("Bearer smile-key") {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    if email != "ann@example.com" {
        return StatusCode::NOT_FOUND.into_response();
    }
    Json(json!({"data": {
        "current_balance": 1250,
        "membership_tier": "Gold",
        "points_needed_for_next_tier": 250,
        "expiring_soon": 0
    }}))
    .into_response()
}

async fn book(State(seen): State<Seen>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    record(&seen, "appointments".into(), &headers, body.clone());
    Json(json!({"data": {"id": "apt-42", "datetime": "2026-12-01 10:00", "store_location": "Main Street"}}))
        .into_response()
}

async fn size(State(seen): State<Seen>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    record(&seen, "size".into(), &headers, body.clone());
    let chest = body["measurements"]["chest"].as_i64().unwrap_or(0);
    let size = if chest > 100 { "L" } else { "M" };
    Json(json!({"recommendation": {"size": size, "confidence": 0.9, "notes": "Runs slightly small."}}))
        .into_response()
}

/// Test-only sender: reqwest straight to loopback, nothing else.
struct LoopbackSender {
    client: reqwest::Client,
}

impl LoopbackSender {
    fn new() -> Self {
        // reqwest is built without a rustls provider (the workspace installs `ring`).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .unwrap();
        Self { client }
    }
}

#[async_trait]
impl HttpSender for LoopbackSender {
    async fn send(&self, req: PreparedRequest) -> Result<SenderResponse, SendError> {
        let url = reqwest::Url::parse(&req.url).map_err(|e| SendError::Refused(e.to_string()))?;
        if url.host_str() != Some("127.0.0.1") {
            return Err(SendError::Refused(format!(
                "test sender only reaches 127.0.0.1, not {url}"
            )));
        }
        let method = reqwest::Method::from_bytes(req.method.as_str().as_bytes()).unwrap();
        let mut builder = self.client.request(method, url).timeout(req.timeout);
        for (name, value) in &req.headers {
            builder = builder.header(name, value);
        }
        if let Some(body) = req.body {
            builder = builder.body(body);
        }
        let mut response = builder.send().await.map_err(|e| {
            if e.is_timeout() {
                SendError::Timeout
            } else {
                SendError::Connection(e.to_string())
            }
        })?;
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or("").to_owned()))
            .collect();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| SendError::Connection(e.to_string()))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > req.max_response_bytes {
                return Err(SendError::TooLarge);
            }
        }
        Ok(SenderResponse {
            status,
            headers,
            body,
        })
    }
}

fn example(file: &str) -> HttpToolDefinition {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/http-tools")
        .join(file);
    load_definition(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn store(addr: SocketAddr) -> BTreeMap<String, String> {
    let base = format!("http://{addr}");
    [
        ("loyalty_base_url", base.as_str()),
        ("smile_api_key", "smile-key"),
        ("booking_base_url", base.as_str()),
        ("booking_api_key", "booking-key"),
        ("fitanalytics_base_url", base.as_str()),
        ("fitanalytics_key", "fit-key"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

const LOOPBACK_HTTP: SecurityRules = SecurityRules {
    allow_plain_http: true,
};

#[test]
fn the_examples_validate() {
    for file in [
        "loyalty_points.yaml",
        "book_appointment.yaml",
        "size_recommendation.yaml",
    ] {
        let def = example(file);
        assert_eq!(validate_definition(&def), vec![], "{file}");
        let refuse_all = |_: &str| Err("nothing is allowed".to_owned());
        // The origins come from config, so only the run-time egress check applies to them.
        assert_eq!(
            validate_security(
                &def,
                &SecurityRules {
                    allow_plain_http: false
                },
                &refuse_all
            ),
            vec![],
            "{file}"
        );
    }
    let booking = example("book_appointment.yaml");
    assert_eq!(
        parameters_schema(&booking)["required"],
        json!(["service_type"])
    );
    assert!(matches_triggers(
        &booking,
        "Can I BOOK APPOINTMENT for Friday?"
    ));
}

#[tokio::test]
async fn loyalty_points_end_to_end() {
    let (addr, seen) = start_upstream().await;
    let def = example("loyalty_points.yaml");
    let config = store(addr);
    let ctx = CallContext {
        customer: Map::new(),
        conversation: obj(json!({"customer_email": "ann@example.com"})),
        store: &config,
        context: Map::new(),
    };
    let out = execute(
        &def,
        &obj(json!({"include_history": true})),
        &ctx,
        &LoopbackSender::new(),
        &LOOPBACK_HTTP,
    )
    .await
    .unwrap();
    assert_eq!(out.status, 200);
    assert_eq!(
        out.text,
        "You have 1250 loyalty points and you're a Gold member!\n\nYou need 250 more points to reach the next tier.\n\n"
    );
    assert_eq!(out.data["tier"], "Gold");
    let seen = seen.lock().unwrap();
    assert_eq!(
        seen[0],
        (
            "points/ann@example.com".to_owned(),
            Some("Bearer smile-key".to_owned()),
            json!({"include_history": "true"})
        )
    );
}

#[tokio::test]
async fn loyalty_points_unknown_customer_gets_the_not_found_message() {
    let (addr, _) = start_upstream().await;
    let def = example("loyalty_points.yaml");
    let config = store(addr);
    let ctx = CallContext {
        customer: Map::new(),
        conversation: obj(json!({"customer_email": "../admin"})),
        store: &config,
        context: Map::new(),
    };
    let err = execute(
        &def,
        &Map::new(),
        &ctx,
        &LoopbackSender::new(),
        &LOOPBACK_HTTP,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::NotFound);
    assert_eq!(err.status, Some(404));
    assert_eq!(
        err.message,
        "I couldn't find your loyalty account. Please make sure you're signed up for our rewards program."
    );
}

#[tokio::test]
async fn appointment_booking_end_to_end() {
    let (addr, seen) = start_upstream().await;
    let def = example("book_appointment.yaml");
    let config = store(addr);
    let ctx = CallContext {
        customer: Map::new(),
        conversation: obj(json!({"customer_email": "ann@example.com"})),
        store: &config,
        context: Map::new(),
    };
    let service = "fitting\", \"admin\": true, \"x\": \"{{store.booking_api_key}}";
    let out = execute(
        &def,
        &obj(json!({"service_type": service})),
        &ctx,
        &LoopbackSender::new(),
        &LOOPBACK_HTTP,
    )
    .await
    .unwrap();
    assert_eq!(
        out.text,
        format!(
            "Great! I've booked your {service} appointment for 2026-12-01 10:00 at our Main Street location.\nYour appointment ID is apt-42."
        )
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].1.as_deref(), Some("Bearer booking-key"));
    assert_eq!(
        seen[0].2,
        json!({"customer_email": "ann@example.com", "service": service, "requested_date": null})
    );
}

#[tokio::test]
async fn size_recommendation_end_to_end() {
    let (addr, seen) = start_upstream().await;
    let def = example("size_recommendation.yaml");
    let config = store(addr);
    let ctx = CallContext {
        customer: obj(json!({"measurements": {"chest": 104, "waist": 90}})),
        conversation: Map::new(),
        store: &config,
        context: obj(json!({"product_id": "jacket-7"})),
    };
    let out = execute(
        &def,
        &Map::new(),
        &ctx,
        &LoopbackSender::new(),
        &LOOPBACK_HTTP,
    )
    .await
    .unwrap();
    assert_eq!(
        out.text,
        "Based on the product and your measurements, I recommend size L.\nThis recommendation has high confidence.\nRuns slightly small."
    );
    assert_eq!(
        seen.lock().unwrap()[0].2,
        json!({"product_id": "jacket-7", "measurements": {"chest": 104, "waist": 90}})
    );

    let no_product = CallContext {
        context: Map::new(),
        ..ctx
    };
    let err = execute(
        &def,
        &Map::new(),
        &no_product,
        &LoopbackSender::new(),
        &LOOPBACK_HTTP,
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.message,
        "required parameter 'product_id' (source: context) has no value: the call's context has no context.product_id"
    );
}

async fn get_path(
    path: &str,
) -> Result<toolsmith_httptool::HttpToolOutput, toolsmith_httptool::HttpToolError> {
    let (addr, _) = start_upstream().await;
    let def = load_definition(&format!(
        "name: probe\ndescription: probe\nendpoint: {{url: '{{{{store.base}}}}{path}'}}\nerror_handling: {{invalid_response: 'bad answer'}}\n"
    ))
    .unwrap();
    let config: BTreeMap<String, String> = [("base".to_owned(), format!("http://{addr}"))].into();
    let ctx = CallContext {
        customer: Map::new(),
        conversation: Map::new(),
        store: &config,
        context: Map::new(),
    };
    execute(
        &def,
        &Map::new(),
        &ctx,
        &LoopbackSender::new(),
        &LOOPBACK_HTTP,
    )
    .await
}

#[tokio::test]
async fn non_json_large_and_redirect_responses_are_errors() {
    let err = get_path("/html").await.unwrap_err();
    assert_eq!(
        (err.kind, err.message.as_str(), err.status),
        (HttpErrorKind::InvalidResponse, "bad answer", Some(200))
    );
    let err = get_path("/big").await.unwrap_err();
    assert_eq!(err.kind, HttpErrorKind::TooLarge);
    let err = get_path("/redirect").await.unwrap_err();
    assert_eq!((err.kind, err.status), (HttpErrorKind::ApiError, Some(307)));
}
