//! The HTTP edge's bounds under a real server (`app::serve` on a loopback port), issue 31:
//! - a `tools/call` body of the documented largest write (10 MiB) goes through `/mcp`, and a
//!   larger one fails as that call's error, naming the limit, with the official Python SDK's
//!   session intact;
//! - `subscriptions/listen` streams are capped per user and in total, the refusal naming the
//!   limit;
//! - `/livez` and `/readyz` answer while every connection is busy.

use crate::mcp_support;
use crate::rest_support::TestApp;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use mcp_support::*;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::ToolServiceSettings;
use tower::ServiceExt;

/// The whole application served on 127.0.0.1 (the accept loop, every middleware).
struct AppServer {
    addr: std::net::SocketAddr,
    state: AppState,
    stop: CancellationToken,
    _dir: tempfile::TempDir,
}

impl AppServer {
    async fn start(config: ServerSettings, service: ToolServiceSettings) -> AppServer {
        let dir = tempfile::tempdir().expect("temp dir");
        let state = open_state_with(dir.path(), config, service).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        let (served, signal) = (state.clone(), stop.clone());
        tokio::spawn(async move {
            toolsmith_server::app::serve(listener, served, async move {
                signal.cancelled().await;
            })
            .await
            .expect("the server runs");
        });
        AppServer {
            addr,
            state,
            stop,
            _dir: dir,
        }
    }

    /// Sends `request` (raw HTTP/1.1) on a new connection and reads until the head of the
    /// answer has arrived; returns the connection and what was read.
    async fn head(&self, request: &str) -> (TcpStream, String) {
        let mut tcp = TcpStream::connect(self.addr).await.unwrap();
        tcp.write_all(request.as_bytes()).await.unwrap();
        let head = read_head(&mut tcp).await;
        (tcp, head)
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Reads until a blank line ends a response head (or the connection closes).
async fn read_head(tcp: &mut TcpStream) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match tcp.read(&mut buf).await.unwrap_or(0) {
            0 => break,
            n => seen.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// The status of a whole short answer read to the end (`Connection: close`).
async fn status_of(server: &AppServer, path: &str) -> (u16, String) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    let (mut tcp, mut text) = server.head(&request).await;
    let mut rest = String::new();
    let _ = tcp.read_to_string(&mut rest).await;
    text.push_str(&rest);
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

#[tokio::test]
async fn health_probes_answer_while_every_connection_is_busy() {
    let config = ServerSettings {
        max_connections: 2,
        ..ServerSettings::default()
    };
    let server = AppServer::start(config, ToolServiceSettings::default()).await;
    // Two requests in flight whose bodies never come: the handler is reading (the server said
    // `100 Continue`), so both connections are busy and neither can be closed for a new one.
    let busy = "POST /api/v1/custom-tools HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                Content-Type: application/json\r\nContent-Length: 1000\r\n\
                Expect: 100-continue\r\n\r\n";
    let mut held = Vec::new();
    for _ in 0..2 {
        let (tcp, head) = server.head(busy).await;
        assert!(head.starts_with("HTTP/1.1 100"), "{head}");
        held.push(tcp);
    }
    for path in ["/livez", "/readyz"] {
        let (status, text) = status_of(&server, path).await;
        assert_eq!(status, 200, "{path} while every connection is busy: {text}");
    }
    let (status, text) = status_of(&server, "/api/v1/custom-tools").await;
    assert_eq!(status, 503, "{text}");
    assert!(text.contains("max_connections"), "{text}");
    let refused = &server.state.connections.refused;
    assert!(refused.load(std::sync::atomic::Ordering::SeqCst) >= 1);
    drop(held);
}

/// A `subscriptions/listen` request (2026-07-28) as `oneshot` sends it; the answer is kept
/// unread, so a stream stays open as long as it is held.
async fn listen(app: &TestApp, id: u64) -> axum::response::Response {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": true},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1.0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let request = crate::rest_support::request(Method::POST, "/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(Body::from(body.to_string()))
        .unwrap();
    app.router.clone().oneshot(request).await.unwrap()
}

async fn json_of(response: axum::response::Response) -> (StatusCode, Value) {
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn listen_streams_are_capped_per_user_and_in_total() {
    let mut config = ServerSettings::default();
    config.mcp_sessions.max_listens_per_user = 3;
    let app = TestApp::with_config(config).await;
    let mut open = Vec::new();
    for id in 0..3 {
        let response = listen(&app, id).await;
        assert_eq!(response.status(), StatusCode::OK);
        open.push(response);
    }
    let (status, answer) = json_of(listen(&app, 41).await).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{answer}");
    assert_eq!(answer["id"], 41, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("mcp_max_listens_per_user") && message.contains('3'),
        "{message}"
    );
    let stats = &app.state.mcp_sessions;
    assert_eq!(
        stats.listens_open.load(std::sync::atomic::Ordering::SeqCst),
        3
    );
    // A stream that ends gives its place back.
    drop(open.pop());
    assert_eq!(
        stats.listens_open.load(std::sync::atomic::Ordering::SeqCst),
        2
    );
    open.push(listen(&app, 5).await);
    assert_eq!(open[2].status(), StatusCode::OK);

    let mut config = ServerSettings::default();
    config.mcp_sessions.max_listens = 2;
    let app = TestApp::with_config(config).await;
    let held = [listen(&app, 1).await, listen(&app, 2).await];
    let (status, answer) = json_of(listen(&app, 3).await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("mcp_max_listens"), "{message}");
    drop(held);
}

#[tokio::test]
async fn the_python_sdk_writes_10_mib_over_http_and_a_larger_body_fails_only_its_call() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    for mode in ["auto", "legacy"] {
        let ws = tempfile::tempdir().unwrap();
        let service = ToolServiceSettings {
            workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
                ws.path().join("workspaces"),
            )),
            ..ToolServiceSettings::default()
        };
        let server = AppServer::start(ServerSettings::default(), service).await;
        let url = format!("http://{}/mcp", server.addr);
        let args = strings(&[
            "mcp_python.py",
            "--mode",
            mode,
            "--scenario",
            "big-bodies",
            "--name",
            "unused",
            "--url",
            &url,
        ]);
        let report = run_client(&format!("python {mode} big bodies"), &python(), &args, &[]).await;
        let ctx = format!("{mode}: {report}");
        assert_eq!(report["largest"]["isError"], false, "{ctx}");
        assert!(
            report["largest"]["text"].to_string().contains("10485760"),
            "{ctx}"
        );
        let message = report["tooLarge"]["error"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(
            message.contains("16777216") && message.contains("body_limit"),
            "the call fails naming the limit: {ctx}"
        );
        assert_eq!(
            report["after"]["isError"], false,
            "the session lives on: {ctx}"
        );
    }
}
