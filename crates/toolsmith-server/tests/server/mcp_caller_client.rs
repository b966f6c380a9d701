//! The calling client as a running tool sees it (issue 34), through rmcp's own client over an
//! in-process pipe: `logging/setLevel` per session, the logging capability declared, and a
//! `notifications/cancelled` that stops the call's sandbox.

#![allow(
    deprecated,
    reason = "logging and sampling are MCP 2025-11-25's; rmcp marks them for SEP-2577"
)]

use crate::mcp_support;

use std::time::{Duration, Instant};

use mcp_support::{open_state, open_state_with};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, LoggingLevel, ProtocolVersion, SetLevelRequestParams,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolsmith_core::ExecutionRecord;
use toolsmith_server::auth::Identity;
use toolsmith_server::mcp::ToolsmithMcp;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{Actor, CreateTool, ToolServiceSettings};

/// A client that declares what `capabilities` says, on protocol `version`.
#[derive(Clone)]
struct Caller {
    capabilities: ClientCapabilities,
    version: ProtocolVersion,
}

impl ClientHandler for Caller {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.capabilities.clone(),
            Implementation::new("caller-client-test", "1.0"),
        )
        .with_protocol_version(self.version.clone())
    }
}

async fn connect(state: &AppState, caller: Caller) -> RunningService<RoleClient, Caller> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ToolsmithMcp::new(state.clone(), Identity::local_default());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    caller.serve(client_io).await.expect("client connects")
}

fn plain(version: ProtocolVersion) -> Caller {
    Caller {
        capabilities: ClientCapabilities::default(),
        version,
    }
}

async fn state() -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (open_state(dir.path(), ServerSettings::default()).await, dir)
}

/// A service whose tools may fetch from 127.0.0.1 over plain HTTP.
async fn state_reaching_loopback() -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut service = ToolServiceSettings {
        allow_plain_http: true,
        ..ToolServiceSettings::default()
    };
    service.egress.allow_plain_http = true;
    service.egress.allowed_private_hosts = vec!["127.0.0.1".parse().unwrap()];
    let state = open_state_with(dir.path(), ServerSettings::default(), service).await;
    (state, dir)
}

/// An HTTP endpoint on 127.0.0.1 that answers `ok` and reports each request it gets: a tool
/// that fetches it is running.
async fn reached() -> (String, tokio::sync::mpsc::UnboundedReceiver<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tx.send(());
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                    )
                    .await;
            });
        }
    });
    (url, rx)
}

/// `name`, a JS tool of user `default` running `code` with `permissions`.
async fn user_tool(state: &AppState, name: &str, code: &str, permissions: &[&str]) {
    let tool: CreateTool = serde_json::from_value(json!({
        "name": name,
        "description": format!("{name}, a test tool"),
        "parameters": {"type": "object"},
        "code": code,
        "permissions": permissions,
    }))
    .unwrap();
    state
        .service
        .create(&Actor::user("default"), tool)
        .await
        .expect("the tool is created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    deprecated,
    reason = "logging is MCP 2025-11-25's; rmcp marks it for SEP-2577"
)]
async fn logging_set_level_is_declared_and_accepted_per_session() {
    let (state, _dir) = state().await;
    let client = connect(&state, plain(ProtocolVersion::V_2025_11_25)).await;
    let info = client.peer_info().expect("the server introduced itself");
    assert!(
        info.capabilities.logging.is_some(),
        "the logging capability is declared: {:?}",
        info.capabilities
    );
    for level in [LoggingLevel::Debug, LoggingLevel::Warning] {
        client
            .set_level(SetLevelRequestParams::new(level))
            .await
            .unwrap_or_else(|e| panic!("logging/setLevel is answered: {e}"));
    }
}

/// The executions of user `default`'s tool `tool`, newest first.
async fn executions(state: &AppState, tool: &str) -> Vec<ExecutionRecord> {
    state
        .service
        .executions(
            &Actor::user("default"),
            Some(&toolsmith_service::ToolRef::Name(tool.to_owned())),
            None,
            None,
            10,
        )
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_by_its_client_stops_its_sandbox() {
    for version in [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28] {
        let (state, _dir) = state_reaching_loopback().await;
        let (url, mut running) = reached().await;
        // The tool tells the test it runs by fetching its endpoint, then spins forever.
        let code = format!("await fetch({url:?}); while (true) {{}}");
        user_tool(&state, "spin", &code, &["network"]).await;
        let client = connect(&state, plain(version.clone())).await;
        let Value::Object(args) = json!({}) else {
            unreachable!()
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("spin").with_arguments(args),
        ));
        let handle = client
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .unwrap();
        running.recv().await.expect("the tool runs");
        handle
            .cancel(Some("the user pressed stop".to_owned()))
            .await
            .unwrap();
        // The record is written when the call ends: asked again until it is there.
        let deadline = Instant::now() + Duration::from_secs(20);
        let record = loop {
            if let Some(record) = executions(&state, "spin").await.into_iter().next() {
                break record;
            }
            assert!(
                Instant::now() < deadline,
                "{version}: the cancelled call has no execution record"
            );
            tokio::task::yield_now().await;
        };
        assert_eq!(
            record.error_kind.as_deref(),
            Some("cancelled"),
            "{version}: {record:?}"
        );
        client.cancel().await.unwrap();
    }
}
