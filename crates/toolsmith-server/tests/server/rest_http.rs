//! What every answer shares: the envelope, the request id, the hardened headers, JSON 404/405,
//! malformed bodies, the body limit, the health probes; and one run over a real socket.

use crate::rest_support;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use rest_support::{TestApp, TestResponse, request, tool_body};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{ToolService, ToolServiceSettings};

const TOOLS: &str = "/api/v1/custom-tools";

#[track_caller]
fn assert_hardened(res: &TestResponse) {
    assert_eq!(res.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(res.header("x-frame-options"), Some("DENY"));
    assert_eq!(res.header("referrer-policy"), Some("no-referrer"));
    assert_eq!(
        res.header("content-security-policy"),
        Some(toolsmith_server::app::CONTENT_SECURITY_POLICY_VALUE)
    );
    let csp = toolsmith_server::app::CONTENT_SECURITY_POLICY_VALUE;
    assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert!(res.header("x-request-id").is_some());
}

#[tokio::test]
async fn every_answer_is_hardened() {
    let app = TestApp::new().await;
    let created = app.post(TOOLS, &tool_body("upper")).await;
    assert_eq!(created.status, StatusCode::CREATED);
    let answers = [
        created,
        app.get(TOOLS).await,
        app.get("/livez").await,
        app.get("/readyz").await,
        app.get("/api/v1/openapi.json").await,
        app.get("/nowhere").await,
        app.call(Method::PUT, TOOLS).await,
        app.raw(Method::POST, TOOLS, Some("application/json"), "{")
            .await,
        app.raw(
            Method::POST,
            TOOLS,
            Some("application/json"),
            vec![b' '; 2 * 1024 * 1024],
        )
        .await,
        app.post(
            "/api/v1/tools/upper/execute",
            &json!({"arguments": {"text": "a"}}),
        )
        .await,
        app.call(Method::POST, "/mcp").await,
    ];
    for res in &answers {
        assert_hardened(res);
    }
}

#[tokio::test]
async fn unknown_routes_and_wrong_methods_are_json() {
    let app = TestApp::new().await;
    let res = app.get("/api/v1/nothing/here").await;
    assert_eq!(
        res.assert_error(StatusCode::NOT_FOUND, "not_found"),
        "no route for GET /api/v1/nothing/here"
    );
    // `/` is the web UI; any other path no route serves is a JSON 404.
    let res = app.get("/nothing").await;
    res.assert_error(StatusCode::NOT_FOUND, "not_found");
    let res = app
        .call(Method::DELETE, "/api/v1/custom-tools/x/versions")
        .await;
    res.assert_error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    assert_eq!(res.header("allow"), Some("GET,HEAD"));

    let res = app.call(Method::PUT, TOOLS).await;
    assert_eq!(
        res.assert_error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
        "PUT is not allowed on /api/v1/custom-tools; see the Allow header"
    );
    assert_eq!(res.header("allow"), Some("GET,HEAD,POST"));
    let res = app.call(Method::GET, &format!("{TOOLS}/x/enable")).await;
    res.assert_error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
    assert_eq!(res.header("allow"), Some("POST"));
    let res = app.call(Method::POST, "/livez").await;
    res.assert_error(StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
}

#[tokio::test]
async fn malformed_bodies_are_400_in_the_envelope() {
    let app = TestApp::new().await;
    let res = app
        .raw(Method::POST, TOOLS, Some("application/json"), "{\"name\": ")
        .await;
    let message = res.assert_error(StatusCode::BAD_REQUEST, "malformed_json");
    assert!(
        message.starts_with("the request body is not valid JSON: EOF while parsing"),
        "{message}"
    );
    let res = app
        .raw(Method::POST, TOOLS, Some("application/json"), "[1, 2]")
        .await;
    assert_eq!(
        res.assert_error(StatusCode::BAD_REQUEST, "invalid_body"),
        "the request body must be a JSON object, not an array"
    );
    let res = app
        .raw(Method::POST, TOOLS, Some("application/json"), "")
        .await;
    assert_eq!(
        res.assert_error(StatusCode::BAD_REQUEST, "invalid_body"),
        "this request needs a JSON object body"
    );
    let res = app
        .raw(
            Method::POST,
            TOOLS,
            Some("text/plain"),
            tool_body("x").to_string(),
        )
        .await;
    res.assert_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    let res = app.raw(Method::POST, TOOLS, None, "{}").await;
    res.assert_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    // `application/<x>+json` and parameters are JSON too.
    let res = app
        .raw(
            Method::POST,
            TOOLS,
            Some("application/merge-patch+json; charset=utf-8"),
            tool_body("fine").to_string(),
        )
        .await;
    res.assert_ok(StatusCode::CREATED);
    // Optional bodies: nothing, `null` and `{}` are the same; anything else is checked.
    for body in ["", "null", "{}"] {
        let res = app
            .raw(
                Method::POST,
                &format!("{TOOLS}/fine/disable"),
                Some("application/json"),
                body,
            )
            .await;
        res.assert_ok(StatusCode::OK);
    }
    let res = app
        .raw(
            Method::POST,
            &format!("{TOOLS}/fine/enable"),
            Some("application/json"),
            "{\"expectedRevision\": \"2\"}",
        )
        .await;
    res.assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    let res = app
        .raw(
            Method::POST,
            &format!("{TOOLS}/fine/enable"),
            Some("application/json"),
            "{\"confirm\": true}",
        )
        .await;
    let message = res.assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    assert!(message.contains("unknown field `confirm`"), "{message}");
}

#[tokio::test]
async fn bodies_over_the_limit_are_413() {
    let app = TestApp::new().await;
    let mut body = tool_body("big");
    body["metadata"] = json!({"blob": "x".repeat(1024 * 1024)});
    let res = app.post(TOOLS, &body).await;
    assert_eq!(
        res.assert_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        "the request body is larger than the limit of 1048576 bytes"
    );
    // Without a Content-Length (streamed), the limit applies while reading.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..20).map(|_| Ok(vec![b' '; 64 * 1024])).collect();
    let res = app
        .send(
            request(Method::POST, TOOLS)
                .header("content-type", "application/json")
                .body(Body::from_stream(futures::stream::iter(chunks)))
                .expect("request"),
        )
        .await;
    assert_eq!(
        res.assert_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        "the request body is larger than the limit of 1048576 bytes"
    );
    // With a declared Content-Length, before anything is read.
    let res = app
        .send(
            request(Method::POST, TOOLS)
                .header("content-type", "application/json")
                .header("content-length", "5000000")
                .body(Body::from("{}"))
                .expect("request"),
        )
        .await;
    res.assert_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    // A smaller configured limit.
    let small = TestApp::with_config(ServerSettings {
        body_limit_bytes: 1000,
        ..ServerSettings::default()
    })
    .await;
    let mut body = tool_body("medium");
    body["description"] = json!("d".repeat(2000));
    small
        .post(TOOLS, &body)
        .await
        .assert_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    small
        .post(TOOLS, &tool_body("fits"))
        .await
        .assert_ok(StatusCode::CREATED);
    let list = small.get(TOOLS).await.assert_ok(StatusCode::OK);
    assert_eq!(list["total"], json!(1));
}

#[tokio::test]
async fn request_ids_are_fresh_or_the_callers() {
    let app = TestApp::new().await;
    let a = app.get(TOOLS).await;
    let b = app.get(TOOLS).await;
    let id_a = a.json["meta"]["requestId"].as_str().expect("id").to_owned();
    assert!(id_a.starts_with("req_") && id_a.len() == 36, "{id_a}");
    assert_ne!(a.json["meta"]["requestId"], b.json["meta"]["requestId"]);

    let with_id = |id: &str| {
        request(Method::GET, TOOLS)
            .header("x-request-id", id)
            .body(Body::empty())
            .expect("request")
    };
    let res = app.send(with_id("trace-42.a_b")).await;
    res.assert_ok(StatusCode::OK);
    assert_eq!(res.header("x-request-id"), Some("trace-42.a_b"));
    assert_eq!(res.json["meta"]["requestId"], json!("trace-42.a_b"));
    // Errors carry it too.
    let res = app
        .send(
            request(Method::GET, "/nope")
                .header("x-request-id", "trace-43")
                .body(Body::empty())
                .expect("request"),
        )
        .await;
    res.assert_error(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(res.json["meta"]["requestId"], json!("trace-43"));
    // An id that is not a plain short token is replaced.
    for bad in ["has spaces", "<script>", &"a".repeat(65)] {
        let res = app.send(with_id(bad)).await;
        let id = res.header("x-request-id").expect("id").to_owned();
        assert!(id.starts_with("req_"), "{bad} → {id}");
        assert_eq!(res.json["meta"]["requestId"], json!(id));
    }
}

#[tokio::test]
async fn health_probes() {
    let app = TestApp::new().await;
    let live = app.get("/livez").await;
    assert_eq!(
        (live.status, &live.json),
        (StatusCode::OK, &json!({"status": "ok"}))
    );
    let ready = app.get("/readyz").await;
    assert_eq!(
        (ready.status, &ready.json),
        (StatusCode::OK, &json!({"status": "ok"}))
    );
    assert_eq!(ready.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn internal_errors_say_nothing_about_internals() {
    // Whatever failed inside (a store error, a sandbox crash), the answer is a generic 500.
    use toolsmith_server::rest::error::ApiError;
    let res = axum::response::IntoResponse::into_response(ApiError::internal(
        "disk /secret/path exploded",
    ));
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .expect("body");
    let json: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(json["error"]["code"], json!("internal_error"));
    assert_eq!(
        json["error"]["message"],
        json!("internal error; the server log has the details under this request id")
    );
    assert!(!String::from_utf8_lossy(&bytes).contains("secret"));
}

async fn raw_http(addr: std::net::SocketAddr, request: &str) -> (u16, String, Value) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.expect("read");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
    let status: u16 = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    let json = serde_json::from_str(body).unwrap_or(Value::Null);
    (status, head.to_lowercase(), json)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_over_a_real_socket_and_shuts_down() {
    let dir = tempfile::tempdir().expect("temp dir");
    let service = ToolService::open_sqlite(
        ToolServiceSettings::default(),
        &dir.path().join("toolsmith.db"),
        toolsmith_service::Connectors::default(),
    )
    .await
    .expect("service");
    let state = AppState::new(service, Arc::new(ServerSettings::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(toolsmith_server::app::serve(listener, state, async move {
        let _ = stopped.await;
    }));

    let (status, head, json) = raw_http(
        addr,
        "GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!((status, json), (200, json!({"status": "ok"})));
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");

    let body = tool_body("over_tcp").to_string();
    let (status, head, json) = raw_http(
        addr,
        &format!(
            "POST /api/v1/custom-tools HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
    .await;
    assert_eq!(status, 201, "{json}");
    assert_eq!(json["data"]["name"], json!("over_tcp"));
    assert!(head.contains("etag: \"1\""), "{head}");

    let (status, _, json) = raw_http(
        addr,
        "POST /api/v1/tools/over_tcp/execute HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 29\r\nConnection: close\r\n\r\n{\"arguments\": {\"text\": \"ok\"}}",
    )
    .await;
    assert_eq!(status, 200, "{json}");
    assert_eq!(json["data"]["content"], json!({"upper": "OK"}));

    stop.send(()).expect("server still running");
    let res = tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("the server stops promptly")
        .expect("server task");
    assert!(res.is_ok(), "{res:?}");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}

/// Issue 31: `/readyz` stayed 200 on a full disk until a usage write failed. It now watches the
/// embedded store's free space (`ready_min_free_bytes`): a disk with less room than that is not
/// ready, before any write fails on it.
#[tokio::test]
async fn readiness_says_a_disk_without_room_is_not_ready_before_a_write_fails() {
    let dir = tempfile::tempdir().unwrap();
    let settings = |min_free: u64| ToolServiceSettings {
        data_dir: Some(dir.path().to_path_buf()),
        ready_min_free_bytes: min_free,
        ..ToolServiceSettings::default()
    };
    let roomy = TestApp::with_configs(settings(1), ServerSettings::default()).await;
    assert_eq!(roomy.get("/readyz").await.status, StatusCode::OK);
    // No disk has this much room: the same check on a "full" disk.
    let full = TestApp::with_configs(settings(u64::MAX), ServerSettings::default()).await;
    let ready = full.get("/readyz").await;
    assert_eq!(
        ready.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        ready.text
    );
    assert_eq!(ready.header("retry-after"), Some("1"));
    assert_eq!(full.get("/livez").await.status, StatusCode::OK);
}
