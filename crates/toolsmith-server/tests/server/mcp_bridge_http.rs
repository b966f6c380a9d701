//! The MCP bridge over streamable HTTP, with real upstreams started by the test on 127.0.0.1:
//! a server written with the official TypeScript SDK (`tests/clients/mcp_upstream_http.mjs`) and
//! another Toolsmith (`toolsmith serve`, the real binary). Calls go end to end through
//! Toolsmith's own MCP face; the upstream is reached only through the egress guard (its address
//! listed in `allowed_private_hosts`); headers and the bearer token come from the Config Center
//! and never appear in an answer or the store; a killed and restarted upstream is reconnected and
//! re-listed, and connected clients are told.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use toolsmith_service::ToolServiceSettings;
use toolsmith_service::bridge::{McpServerConfig, ServerState, Transport};

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
        let mut command = Command::new(node());
        command
            .arg(clients_dir().join("mcp_upstream_http.mjs"))
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

    async fn kill(mut self) {
        self.child.kill().await.expect("kill the upstream");
    }
}

/// A streamable HTTP server entry for `url`.
fn http_server(name: &str, url: &str) -> McpServerConfig {
    McpServerConfig {
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

/// An app whose egress guard lets it reach 127.0.0.1:`port`, bridging `servers`.
async fn app_reaching(port: u16, servers: Vec<McpServerConfig>) -> TestApp {
    let mut settings = ToolServiceSettings {
        mcp_servers: servers,
        ..ToolServiceSettings::default()
    };
    settings.egress.allowed_private_hosts = vec![format!("127.0.0.1:{port}").parse().unwrap()];
    TestApp::with_configs(settings, toolsmith_server::ServerConfig::default()).await
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

const TOKEN: &str = "opaque-upstream-token-7Qp2xZ9wLm4v";
const TENANT: &str = "tenant-9f8e7d6c5b4a3210";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_sdk_server_over_streamable_http_is_bridged_governed_and_scrubbed() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let upstream = Upstream::typescript(0).await;
    let app = app_reaching(upstream.port, Vec::new()).await;

    // Hostile or unsupported registrations are refused with the fix named.
    let mut body = json!({
        "name": "tsup",
        "transport": "sse",
        "url": upstream.url(),
    });
    let res = app.post("/api/v1/mcp-servers", &body).await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("streamable_http"), "{message}");
    body["transport"] = json!("streamable_http");
    body["url"] = json!("http://127.0.0.1:9/mcp");
    let res = app.post("/api/v1/mcp-servers", &body).await;
    let message = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(message.contains("allowed_private_hosts"), "{message}");
    body["url"] = json!(upstream.url());
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
    assert_eq!(created["config"]["transport"], "streamable_http");
    assert_eq!(created["config"]["headerNames"], json!(["X-Tenant"]));
    assert_eq!(created["config"]["bearerToken"], true);
    connected(&app, "tsup", 1).await;

    let session = Session::open(&app.state, "default").await;
    let names = session.names().await;
    for tool in [
        "mcp_tsup_echo",
        "mcp_tsup_add",
        "mcp_tsup_whoami",
        "mcp_tsup_grow",
        "mcp_tsup_wipe",
    ] {
        assert!(names.contains(&tool.to_owned()), "{tool} not in {names:?}");
    }
    let (failed, _, text) = session
        .ok("mcp_tsup_echo", json!({"text": "over http"}))
        .await;
    assert!(!failed && text.contains("over http"), "{text}");
    let (failed, structured, text) = session.ok("mcp_tsup_add", json!({"a": 2, "b": 40})).await;
    assert!(!failed, "{text}");
    assert!(structured.to_string().contains("42"), "{structured} {text}");
    // Toolsmith enforces the upstream's schema before anything is sent.
    let (failed, _, text) = session
        .ok("mcp_tsup_add", json!({"a": "two", "b": 40}))
        .await;
    assert!(failed, "{text}");

    // The upstream got the header and the token from the Config Center (it answers with
    // them); a client sees both scrubbed — the one who registered the server, and another
    // user, whose own secrets they are not — and the store holds only the references.
    for user in ["default", "bob"] {
        let caller = Session::open(&app.state, user).await;
        let (failed, _, text) = caller.ok("mcp_tsup_whoami", json!({})).await;
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
    let (failed, _, text) = session.ok("mcp_tsup_grow", json!({})).await;
    assert!(!failed, "{text}");
    let appeared = async {
        session.notified(before + 1).await;
        while !session.names().await.contains(&"mcp_tsup_late".to_owned()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(1), appeared)
        .await
        .expect("the new upstream tool is listed within 1 s");
    let (failed, _, text) = session.ok("mcp_tsup_late", json!({"word": "late"})).await;
    assert!(!failed && text.contains("LATE"), "{text}");

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
