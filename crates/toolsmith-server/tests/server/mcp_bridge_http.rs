//! The MCP bridge over HTTP, with real upstreams started by the test on 127.0.0.1: servers
//! written with the official TypeScript SDK over streamable HTTP
//! (`tests/clients/mcp_upstream_http.mjs`) and over the legacy HTTP+SSE transport
//! (`mcp_upstream_sse.mjs`), and another Toolsmith (`toolsmith serve`, the real binary). Calls
//! go end to end through Toolsmith's own MCP face; the upstream is reached only through the
//! egress guard (its address listed in `allowed_private_hosts`); headers and the bearer token
//! come from the Config Center and never appear in an answer or the store; a killed and
//! restarted upstream is reconnected and re-listed, and connected clients are told. What no SDK
//! sends (an SSE endpoint on another origin, a stream that never names its endpoint) comes from
//! hand-written listeners.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use toolsmith_service::ToolServiceSettings;
use toolsmith_service::bridge::{McpServerRegistration, ServerState, Transport};

use crate::mcp_protocol::Session;
use crate::mcp_support::{clients_dir, node, prerequisite, toolsmith_binary};
use crate::rest_support::TestApp;

/// An upstream process listening on 127.0.0.1:`port`; killed when dropped.
struct Upstream {
    child: Child,
    port: u16,
}

impl Upstream {
    /// `node mcp_upstream_http.mjs PORT` (0: ephemeral), once it printed its port.
    async fn typescript(port: u16) -> Upstream {
        Upstream::node("mcp_upstream_http.mjs", port).await
    }

    /// As [`Upstream::typescript`], answering an unknown session with `400` (as the SDK's
    /// examples and the reference `server-everything` do) instead of `404`.
    async fn typescript_answering_400(port: u16) -> Upstream {
        let mut command = Command::new(node());
        command
            .arg(clients_dir().join("mcp_upstream_http.mjs"))
            .arg(port.to_string())
            .env("UPSTREAM_UNKNOWN_SESSION", "400")
            .current_dir(clients_dir());
        Upstream::spawn(command, |line| {
            serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v["port"].as_u64())
        })
        .await
    }

    /// `node mcp_upstream_sse.mjs PORT` (0: ephemeral): the legacy HTTP+SSE transport, its
    /// stream at `/sse`.
    async fn typescript_sse(port: u16) -> Upstream {
        Upstream::node("mcp_upstream_sse.mjs", port).await
    }

    async fn node(script: &str, port: u16) -> Upstream {
        let mut command = Command::new(node());
        command
            .arg(clients_dir().join(script))
            .arg(port.to_string())
            .current_dir(clients_dir());
        Upstream::spawn(command, |line| {
            serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v["port"].as_u64())
        })
        .await
    }

    /// `toolsmith serve` on `data_dir`, 127.0.0.1:`port` (0: ephemeral), once it listens.
    async fn toolsmith(data_dir: &Path, port: u16) -> Upstream {
        let mut command = Command::new(toolsmith_binary());
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("TOOLSMITH_") {
                command.env_remove(name);
            }
        }
        command.env("TOOLSMITH_DATA_DIR", data_dir).args([
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            &port.to_string(),
            // Bridged, it is an upstream whose every tool is offered (the default listing
            // holds the discovery tools and the most used ones).
            "--mcp-listing",
            "full",
        ]);
        Upstream::spawn(command, |line| {
            line.strip_prefix("toolsmith listening on http://")
                .and_then(|addr| addr.trim().rsplit(':').next())
                .and_then(|p| p.parse().ok())
        })
        .await
    }

    async fn spawn(mut command: Command, port_of: impl Fn(&str) -> Option<u64>) -> Upstream {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let mut child = command.spawn().expect("the upstream starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let port = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await.expect("read stdout") {
                if let Some(port) = port_of(&line) {
                    return port;
                }
            }
            panic!("the upstream ended before it listened")
        })
        .await
        .expect("the upstream listens within 60 s");
        // Keep reading, so the process never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Upstream {
            child,
            port: u16::try_from(port).expect("a port"),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    fn sse_url(&self) -> String {
        format!("http://127.0.0.1:{}/sse", self.port)
    }

    async fn kill(mut self) {
        self.child.kill().await.expect("kill the upstream");
    }
}

/// A streamable HTTP server entry for `url`.
fn http_server(name: &str, url: &str) -> McpServerRegistration {
    McpServerRegistration {
        name: name.to_owned(),
        transport: Transport::StreamableHttp,
        command: String::new(),
        args: Vec::new(),
        env: Default::default(),
        url: Some(url.to_owned()),
        headers: Default::default(),
        bearer_token: None,
        prefix: None,
        enabled: true,
        tool_allow: Vec::new(),
        tool_deny: Vec::new(),
        call_timeout_seconds: Some(20),
        deferred: None,
    }
}

/// A legacy HTTP+SSE server entry for `url`.
fn sse_server(name: &str, url: &str) -> McpServerRegistration {
    McpServerRegistration {
        transport: Transport::Sse,
        ..http_server(name, url)
    }
}

/// Settings whose egress guard lets the app reach 127.0.0.1 at `ports`, bridging `servers`.
fn settings_reaching(ports: &[u16], servers: Vec<McpServerRegistration>) -> ToolServiceSettings {
    let mut settings = ToolServiceSettings {
        mcp_servers: servers,
        ..ToolServiceSettings::default()
    };
    settings.egress.allowed_private_hosts = ports
        .iter()
        .map(|port| format!("127.0.0.1:{port}").parse().unwrap())
        .collect();
    settings
}

/// An app whose egress guard lets it reach 127.0.0.1:`port`, bridging `servers`.
async fn app_reaching(port: u16, servers: Vec<McpServerRegistration>) -> TestApp {
    app_with(settings_reaching(&[port], servers)).await
}

async fn app_with(settings: ToolServiceSettings) -> TestApp {
    TestApp::with_configs(settings, toolsmith_server::ServerSettings::default()).await
}

/// Waits until the server `name` is connected after at least `connections` connections.
async fn connected(app: &TestApp, name: &str, connections: u64) {
    let service = app.state.service.clone();
    let done = async {
        loop {
            if let Ok(status) = service.mcp_server(name)
                && status.state == ServerState::Connected
                && status.connections >= connections
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    if tokio::time::timeout(Duration::from_secs(30), done)
        .await
        .is_err()
    {
        panic!(
            "'{name}' never got connected: {:?}",
            service.mcp_server(name)
        );
    }
}

/// Waits until the server `name`'s last error holds `what` (it may pass, as the server
/// reconnects); the error.
async fn failed_with(app: &TestApp, name: &str, what: &str) -> String {
    let service = app.state.service.clone();
    let done = async {
        loop {
            if let Ok(status) = service.mcp_server(name)
                && let Some(error) = status.last_error
                && error.contains(what)
            {
                return error;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    match tokio::time::timeout(Duration::from_secs(30), done).await {
        Ok(error) => error,
        Err(_) => panic!(
            "'{name}' never failed with '{what}': {:?}",
            service.mcp_server(name)
        ),
    }
}

/// A hand-written listener on 127.0.0.1 for what no SDK sends: each request gets `answer` (a
/// raw HTTP response), and the connection is then held open. Counts the connections it accepts.
struct RawSse {
    port: u16,
    connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl RawSse {
    /// A `200` SSE stream holding `events` (raw SSE text), never ended.
    async fn start(events: String) -> RawSse {
        RawSse::answering(format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\r\n{events}"
        ))
        .await
    }

    async fn answering(answer: String) -> RawSse {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let connections = Arc::new(AtomicUsize::new(0));
        let count = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                let answer = answer.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match socket.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    if socket.write_all(answer.as_bytes()).await.is_ok() {
                        tokio::time::sleep(Duration::from_secs(600)).await;
                    }
                });
            }
        });
        RawSse {
            port,
            connections,
            task,
        }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for RawSse {
    fn drop(&mut self) {
        self.task.abort();
    }
}

const TOKEN: &str = "opaque-upstream-token-7Qp2xZ9wLm4v";
const TENANT: &str = "tenant-9f8e7d6c5b4a3210";

/// Registers the TypeScript SDK upstream at `url` (on 127.0.0.1:`port`) as `name` over
/// `transport` through REST, after the refusals every HTTP registration meets; then calls its
/// tools end to end: the schema enforced, the header and the token from the Config Center sent
/// and scrubbed for every caller and never stored, and a tool the upstream adds listed within
/// 1 s. The app, and a session of `default`.
async fn registered_end_to_end(
    port: u16,
    url: &str,
    transport: &str,
    name: &str,
) -> (TestApp, Session) {
    let app = app_reaching(port, Vec::new()).await;

    // Hostile or unsupported registrations are refused with the fix named.
    let mut body = json!({
        "name": name,
        "transport": "websocket",
        "url": url,
    });
    let res = app.post("/api/v1/mcp-servers", &body).await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("stdio, streamable_http, sse"), "{message}");
    body["transport"] = json!(transport);
    body["url"] = json!("http://127.0.0.1:9/mcp");
    let res = app.post("/api/v1/mcp-servers", &body).await;
    let message = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(message.contains("allowed_private_hosts"), "{message}");
    body["url"] = json!(format!("http://user:pw@127.0.0.1:{port}/mcp"));
    let res = app.post("/api/v1/mcp-servers", &body).await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("credentials"), "{message}");
    body["url"] = json!(url);
    body["bearerToken"] = json!(TOKEN);
    let res = app.post("/api/v1/mcp-servers", &body).await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("Config Center reference"), "{message}");
    body["bearerToken"] = json!("{{config.upstreamapi.api_key}}");
    body["headers"] = json!({"Authorization": "Bearer x"});
    let res = app.post("/api/v1/mcp-servers", &body).await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("bearer_token"), "{message}");
    body["headers"] = json!({"X-Tenant": "{{config.tenantdir.api_key}}"});
    body["command"] = json!("/bin/sh");
    let res = app.post("/api/v1/mcp-servers", &body).await;
    res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    body.as_object_mut().unwrap().remove("command");

    // The token and the tenant live in the Config Center; the server references them.
    app.config_secret("upstreamapi", TOKEN).await;
    app.config_secret("tenantdir", TENANT).await;
    body["callTimeoutSeconds"] = json!(20);
    let created = app
        .post("/api/v1/mcp-servers", &body)
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(created["config"]["transport"], transport);
    assert_eq!(created["config"]["headerNames"], json!(["X-Tenant"]));
    assert_eq!(created["config"]["bearerToken"], true);
    connected(&app, name, 1).await;

    let session = Session::open(&app.state, "default").await;
    let names = session.names().await;
    let tool = |t: &str| format!("mcp_{name}_{t}");
    for t in ["echo", "add", "whoami", "grow", "wipe"] {
        assert!(names.contains(&tool(t)), "{t} not in {names:?}");
    }
    let (failed, _, text) = session
        .ok(&tool("echo"), json!({"text": "over the bridge"}))
        .await;
    assert!(!failed && text.contains("over the bridge"), "{text}");
    let (failed, structured, text) = session.ok(&tool("add"), json!({"a": 2, "b": 40})).await;
    assert!(!failed, "{text}");
    assert!(structured.to_string().contains("42"), "{structured} {text}");
    // Toolsmith enforces the upstream's schema before anything is sent.
    let (failed, _, text) = session.ok(&tool("add"), json!({"a": "two", "b": 40})).await;
    assert!(failed, "{text}");

    // The upstream got the header and the token from the Config Center (it answers with
    // them); a client sees both scrubbed — the one who registered the server, and another
    // user, whose own secrets they are not — and the store holds only the references.
    for user in ["default", "bob"] {
        let caller = Session::open(&app.state, user).await;
        let (failed, _, text) = caller.ok(&tool("whoami"), json!({})).await;
        assert!(!failed, "{text}");
        assert!(text.contains("tenant=[REDACTED]"), "{user}: {text}");
        assert!(text.contains("authorization=Bearer"), "{user}: {text}");
        assert!(
            !text.contains(TOKEN) && !text.contains(TENANT),
            "{user}: a secret reached the client: {text}"
        );
    }
    let stored = app.stored_text();
    assert!(stored.contains("{{config.upstreamapi.api_key}}"));
    assert!(
        !stored.contains(TOKEN) && !stored.contains(TENANT),
        "a secret is stored in clear"
    );

    // The upstream's list_changed reaches Toolsmith's client, and the new tool is there within
    // a second of the call that added it.
    let before = session.changes();
    let (failed, _, text) = session.ok(&tool("grow"), json!({})).await;
    assert!(!failed, "{text}");
    let appeared = async {
        session.notified(before + 1).await;
        while !session.names().await.contains(&tool("late")) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(1), appeared)
        .await
        .expect("the new upstream tool is listed within 1 s");
    let (failed, _, text) = session.ok(&tool("late"), json!({"word": "late"})).await;
    assert!(!failed && text.contains("LATE"), "{text}");
    (app, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_sdk_server_over_streamable_http_is_bridged_governed_and_scrubbed() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let upstream = Upstream::typescript(0).await;
    let (app, _session) =
        registered_end_to_end(upstream.port, &upstream.url(), "streamable_http", "tsup").await;

    // Annotations: a destructive tool waits for a person.
    let res = app
        .post(
            "/api/v1/tools/mcp_tsup_wipe/execute",
            &json!({"arguments": {}}),
        )
        .await;
    assert!(res.text.contains("approval"), "{} {}", res.status, res.text);
    assert!(!res.text.contains("wiped"), "{}", res.text);
    upstream.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_http_upstream_is_reconnected_relisted_and_clients_told() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let upstream = Upstream::typescript(0).await;
    let port = upstream.port;
    let app = app_reaching(port, vec![http_server("phoenix", &upstream.url())]).await;
    connected(&app, "phoenix", 1).await;
    let session = Session::open(&app.state, "default").await;
    let before = session.changes();

    // Killed and started again on the same port: it has forgotten the session. The first call
    // fails and makes the bridge check at once (not at its next 30 s health check).
    upstream.kill().await;
    let upstream = Upstream::typescript(port).await;
    let (failed, _, text) = session
        .ok("mcp_phoenix_echo", json!({"text": "lost"}))
        .await;
    assert!(failed, "{text}");
    connected(&app, "phoenix", 2).await;
    // Its tools left the catalogue and came back: clients were told both times.
    session.notified(before + 2).await;
    assert!(
        session
            .names()
            .await
            .contains(&"mcp_phoenix_echo".to_owned())
    );
    let (failed, _, text) = session
        .ok("mcp_phoenix_echo", json!({"text": "again"}))
        .await;
    assert!(!failed && text.contains("again"), "{text}");
    upstream.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_upstream_answering_400_to_the_old_session_is_reconnected_at_once() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let upstream = Upstream::typescript_answering_400(0).await;
    let port = upstream.port;
    let mut server = http_server("lazarus", &upstream.url());
    // Longer than the test would wait for anything: a call that hangs is seen as one.
    server.call_timeout_seconds = Some(120);
    let app = app_reaching(port, vec![server]).await;
    connected(&app, "lazarus", 1).await;
    let session = Session::open(&app.state, "default").await;
    let before = session.changes();

    upstream.kill().await;
    let upstream = Upstream::typescript_answering_400(port).await;
    // The call to the forgotten session fails at once, as after a 404 (it used to wait for
    // the whole call timeout, the server shown connected meanwhile).
    let (failed, _, text) = tokio::time::timeout(
        Duration::from_secs(60),
        session.ok("mcp_lazarus_echo", json!({"text": "lost"})),
    )
    .await
    .expect("the call to the lost session hung");
    assert!(failed, "{text}");
    assert!(!text.contains("did not answer"), "{text}");
    connected(&app, "lazarus", 2).await;
    session.notified(before + 2).await;
    let (failed, _, text) = session
        .ok("mcp_lazarus_echo", json!({"text": "again"}))
        .await;
    assert!(!failed && text.contains("again"), "{text}");
    upstream.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_toolsmith_is_bridged_over_streamable_http_and_survives_a_restart() {
    let data = tempfile::tempdir().expect("temp dir");
    let upstream = Upstream::toolsmith(data.path(), 0).await;
    let port = upstream.port;
    let mut server = http_server("ts", &upstream.url());
    server.tool_allow = vec!["calculate".to_owned(), "hash_text".to_owned()];
    let app = app_reaching(port, vec![server]).await;
    connected(&app, "ts", 1).await;
    let status = app.state.service.mcp_server("ts").unwrap();
    assert_eq!(status.tools, ["mcp_ts_calculate", "mcp_ts_hash_text"]);

    let session = Session::open(&app.state, "default").await;
    let (failed, _, text) = session
        .ok("mcp_ts_calculate", json!({"expression": "6 * 7"}))
        .await;
    assert!(!failed && text.contains("42"), "{text}");
    // The upstream Toolsmith checks its own schema too; the downstream checks first.
    let (failed, _, text) = session.ok("mcp_ts_calculate", json!({})).await;
    assert!(failed && text.contains("expression"), "{text}");

    let before = session.changes();
    upstream.kill().await;
    let upstream = Upstream::toolsmith(data.path(), port).await;
    let (failed, _, text) = session
        .ok("mcp_ts_calculate", json!({"expression": "1 + 1"}))
        .await;
    assert!(failed, "the call to the gone session succeeded: {text}");
    connected(&app, "ts", 2).await;
    session.notified(before + 2).await;
    let (failed, _, text) = session
        .ok("mcp_ts_calculate", json!({"expression": "20 + 22"}))
        .await;
    assert!(!failed && text.contains("42"), "{text}");
    upstream.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_sdk_server_over_legacy_sse_is_bridged_scrubbed_and_reconnected() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let upstream = Upstream::typescript_sse(0).await;
    let port = upstream.port;
    let (app, session) = registered_end_to_end(port, &upstream.sse_url(), "sse", "legacy").await;

    // Killed: its stream ends, so the bridge knows at once (no call needed), takes the tools
    // out and reconnects once the upstream is back on the same port; re-listed, clients told.
    let before = session.changes();
    upstream.kill().await;
    let error = failed_with(&app, "legacy", "SSE stream").await;
    assert!(error.contains("connection ended"), "{error}");
    let upstream = Upstream::typescript_sse(port).await;
    connected(&app, "legacy", 2).await;
    session.notified(before + 2).await;
    let (failed, _, text) = session
        .ok("mcp_legacy_echo", json!({"text": "again"}))
        .await;
    assert!(!failed && text.contains("again"), "{text}");
    upstream.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_sse_event_ends_the_connection_with_the_limit_named() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let upstream = Upstream::typescript_sse(0).await;
    let mut settings = settings_reaching(
        &[upstream.port],
        vec![sse_server("big", &upstream.sse_url())],
    );
    settings.egress.max_response_bytes = 64 * 1024;
    let app = app_with(settings).await;
    connected(&app, "big", 1).await;
    let session = Session::open(&app.state, "default").await;
    let (failed, _, text) = session.ok("mcp_big_big", json!({"size": 1000})).await;
    assert!(!failed && text.len() == 1000, "{text}");

    // An answer over the egress limit is never buffered whole: the connection ends, the
    // status names the limit, the call fails, and the server comes back on its own.
    let (failed, _, text) = session.ok("mcp_big_big", json!({"size": 100_000})).await;
    assert!(failed, "{text}");
    let error = failed_with(&app, "big", "larger than 65536 bytes").await;
    assert!(error.contains("max_response_bytes"), "{error}");
    connected(&app, "big", 2).await;
    let (failed, _, text) = session.ok("mcp_big_echo", json!({"text": "back"})).await;
    assert!(!failed && text.contains("back"), "{text}");
    upstream.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_sse_servers_are_refused_with_the_reason_named() {
    // Messages would go to another origin: refused before anything is sent there.
    let elsewhere = RawSse::start(String::new()).await;
    let redirecting = RawSse::start(format!(
        "event: endpoint\ndata: http://127.0.0.1:{}/messages?sessionId=1\n\n",
        elsewhere.port
    ))
    .await;
    // A stream that never names its endpoint (a comment now and then).
    let silent = RawSse::start(": waiting\n\n".to_owned()).await;
    let mut quiet = sse_server("silent", &format!("http://127.0.0.1:{}/sse", silent.port));
    quiet.call_timeout_seconds = Some(1);
    // Not an SSE stream at all (a streamable HTTP server refuses a GET without a session).
    let refusing = RawSse::answering(
        "HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
            .to_owned(),
    )
    .await;
    let settings = settings_reaching(
        // Every port allowed: the endpoint's origin is what refuses it, not the egress guard.
        &[redirecting.port, elsewhere.port, silent.port, refusing.port],
        vec![
            sse_server(
                "redirecting",
                &format!("http://127.0.0.1:{}/sse", redirecting.port),
            ),
            quiet,
            sse_server("notsse", &format!("http://127.0.0.1:{}/mcp", refusing.port)),
        ],
    );
    let app = app_with(settings).await;

    let error = failed_with(&app, "redirecting", "another origin").await;
    assert!(
        error.contains(&format!("127.0.0.1:{}/messages", elsewhere.port)),
        "{error}"
    );
    assert!(redirecting.connections() >= 1);
    assert_eq!(
        elsewhere.connections(),
        0,
        "a message went to the other origin"
    );

    let error = failed_with(&app, "silent", "did not name its endpoint").await;
    assert!(error.contains("within 1 s"), "{error}");
    let status = app.state.service.mcp_server("silent").unwrap();
    assert_ne!(status.state, ServerState::Connected);
    assert_eq!(status.tool_count, 0);

    let error = failed_with(&app, "notsse", "not an SSE stream").await;
    assert!(
        error.contains("405") && error.contains("transport = \"streamable_http\""),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_handshake_says_the_http_status_or_the_upstreams_message() {
    let refusing = RawSse::answering(
        "HTTP/1.1 401 Unauthorized\r\ncontent-type: text/plain\r\ncontent-length: 10\r\nconnection: close\r\n\r\nbad token\n"
            .to_owned(),
    )
    .await;
    let body = r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: tenant header missing"},"id":null}"#;
    let complaining = RawSse::answering(format!(
        "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    ))
    .await;
    let app = app_with(settings_reaching(
        &[refusing.port, complaining.port],
        vec![
            http_server(
                "refusing",
                &format!("http://127.0.0.1:{}/mcp", refusing.port),
            ),
            http_server(
                "complaining",
                &format!("http://127.0.0.1:{}/mcp", complaining.port),
            ),
        ],
    ))
    .await;
    let error = failed_with(&app, "refusing", "handshake").await;
    assert!(error.contains("401"), "{error}");
    let error = failed_with(&app, "complaining", "handshake").await;
    assert!(error.contains("tenant header missing"), "{error}");
}
