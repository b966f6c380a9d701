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
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use toolsmith_core::ExecutionRecord;
use toolsmith_server::auth::Identity;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{Actor, CreateTool, ToolServiceSettings};

/// A client that declares what `capabilities` says, on protocol `version`, and keeps the log
/// messages it gets (level and data).
#[derive(Clone)]
struct Caller {
    capabilities: ClientCapabilities,
    version: ProtocolVersion,
    logs: std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>,
}

impl ClientHandler for Caller {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.capabilities.clone(),
            Implementation::new("caller-client-test", "1.0"),
        )
        .with_protocol_version(self.version.clone())
    }

    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap();
        self.logs
            .lock()
            .unwrap()
            .push((level.as_str().unwrap().to_owned(), params.data));
    }
}

async fn connect(state: &AppState, caller: Caller) -> RunningService<RoleClient, Caller> {
    mcp_support::connect_in_process(state, Identity::local_default(), caller).await
}

fn plain(version: ProtocolVersion) -> Caller {
    Caller {
        capabilities: ClientCapabilities::default(),
        version,
        logs: Default::default(),
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

/// A tool that logs once at each level from debug to error.
const CHATTY: &str = "for (const level of ['debug', 'info', 'notice', 'warning', 'error']) mcp.log(level, level); return 'done';";

/// Calls `tool` with `meta` as the request's `_meta`; the levels of the log messages the client
/// got during the call, once `expected` many have reached its handlers (or 10 s passed).
async fn logged_during(
    client: &RunningService<RoleClient, Caller>,
    tool: &str,
    meta: Option<rmcp::model::RequestMetaObject>,
    expected: usize,
) -> Vec<String> {
    client.service().logs.lock().unwrap().clear();
    // rmcp's client writes a request's `_meta` from its options.
    let mut options = PeerRequestOptions::no_options();
    options.meta = meta;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new(
        tool.to_owned(),
    )));
    let answer = client
        .send_request_with_option(request, options)
        .await
        .unwrap()
        .await_response()
        .await
        .unwrap();
    let rmcp::model::ServerResult::CallToolResult(result) = answer else {
        panic!("{answer:?}")
    };
    assert_ne!(result.is_error, Some(true), "{result:?}");
    // rmcp's client runs each notification's handler on a task of its own, so they may be
    // seen after the result and out of order: waited for, and sorted by severity.
    let deadline = Instant::now() + Duration::from_secs(10);
    while client.service().logs.lock().unwrap().len() < expected && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let logs = client.service().logs.lock().unwrap().clone();
    let mut levels: Vec<String> = logs.into_iter().map(|(level, _)| level).collect();
    levels.sort_by_key(|level| toolsmith_core::LogLevel::parse(level).unwrap());
    levels
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_level_a_client_asks_for_filters_what_a_tool_logs() {
    let (state, _dir) = state().await;
    user_tool(&state, "chatty", CHATTY, &[]).await;
    let all = ["debug", "info", "notice", "warning", "error"];
    // 2025-11-25: every level until the session sets one, then that level and above.
    let client = connect(&state, plain(ProtocolVersion::V_2025_11_25)).await;
    assert_eq!(logged_during(&client, "chatty", None, 5).await, all);
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Warning))
        .await
        .unwrap();
    assert_eq!(
        logged_during(&client, "chatty", None, 2).await,
        ["warning", "error"]
    );
    // The level is the session's: another session still gets everything.
    let other = connect(&state, plain(ProtocolVersion::V_2025_11_25)).await;
    assert_eq!(logged_during(&other, "chatty", None, 5).await, all);
    // 2026-07-28 has no sessions: the level travels with the call, and wins over the session's.
    for client in [&other, &client] {
        let mut meta = rmcp::model::RequestMetaObject::new();
        meta.set_log_level(LoggingLevel::Error);
        assert_eq!(
            logged_during(client, "chatty", Some(meta), 1).await,
            ["error"]
        );
    }
    assert_eq!(logged_during(&other, "chatty", None, 5).await, all);
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

/// The reference server `@modelcontextprotocol/server-everything` (npm, `tests/clients`) over
/// stdio, bridged as `everything`: its sampling, elicitation and progress reach the client
/// that called its tool through Toolsmith (issue 34, "Bridged tools are full MCP citizens").
mod bridged {
    use super::*;

    use toolsmith_service::bridge::{McpServerRegistration, Transport};

    use crate::mcp_bridge::app_with;
    use crate::mcp_person::{Person, Seen};
    use crate::mcp_support::{
        McpClient, call_ok, clients_dir, connect_in_process, node, prerequisite,
    };
    use crate::rest_support::TestApp;

    const SAMPLING_TOOL: &str = "mcp_everything_trigger-sampling-request";
    const ELICITATION_TOOL: &str = "mcp_everything_trigger-elicitation-request";
    const PROGRESS_TOOL: &str = "mcp_everything_trigger-long-running-operation";

    fn everything() -> McpServerRegistration {
        McpServerRegistration {
            name: "everything".to_owned(),
            transport: Transport::Stdio,
            command: node().display().to_string(),
            args: vec![
                clients_dir()
                    .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
                    .display()
                    .to_string(),
                "stdio".to_owned(),
            ],
            env: Default::default(),
            url: None,
            headers: Default::default(),
            bearer_token: None,
            prefix: None,
            enabled: true,
            tool_allow: Vec::new(),
            tool_deny: Vec::new(),
            call_timeout_seconds: Some(30),
            deferred: None,
        }
    }

    /// Toolsmith with server-everything bridged, once the tools it offers only to clients that
    /// can sample and elicit are listed (it adds them after the handshake, then says so).
    async fn app() -> Option<TestApp> {
        if !prerequisite("the MCP TypeScript SDK", &node()) {
            return None;
        }
        let app = app_with(vec![everything()]).await;
        let registry = app.state.service.registry().clone();
        let mut changes = registry.subscribe();
        let listed = async {
            while [SAMPLING_TOOL, ELICITATION_TOOL]
                .iter()
                .any(|name| registry.get("default", name).is_none())
            {
                changes.changed().await.unwrap();
            }
        };
        tokio::time::timeout(Duration::from_secs(30), listed)
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "server-everything never offered its sampling and elicitation tools: {:?}",
                    app.state.service.mcp_servers()
                )
            });
        Some(app)
    }

    async fn connect(state: &AppState, person: Person) -> McpClient<Person> {
        connect_in_process(state, Identity::local_default(), person).await
    }

    /// Calls `tool`; whether it failed, and its text.
    async fn call(client: &McpClient<Person>, tool: &str, args: Value) -> (bool, String) {
        let (failed, _, text) = call_ok(client, tool, args).await;
        (failed, text)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_upstreams_sampling_elicitation_and_progress_reach_the_calling_client() {
        let Some(app) = app().await else { return };
        let seen = Seen::default();
        let client = connect(
            &app.state,
            Person::new(true, "the client's model answers", &seen),
        )
        .await;

        let (failed, text) = call(
            &client,
            SAMPLING_TOOL,
            json!({"prompt": "say hi", "maxTokens": 20}),
        )
        .await;
        assert!(!failed, "{text}");
        assert!(text.contains("the client's model answers"), "{text}");
        let sampled = seen.sampled.lock().unwrap().clone();
        assert_eq!(sampled.len(), 1, "{sampled:?}");
        assert!(sampled[0].to_string().contains("say hi"), "{sampled:?}");

        let (failed, text) = call(&client, ELICITATION_TOOL, json!({})).await;
        assert!(!failed, "{text}");
        assert!(text.contains("Ada"), "{text}");
        assert_eq!(seen.elicited.lock().unwrap().len(), 1);

        let (failed, text) =
            call(&client, PROGRESS_TOOL, json!({"duration": 0.3, "steps": 3})).await;
        assert!(!failed, "{text}");
        // Each step's notification reaches the client while the call runs. rmcp handles each
        // notification on a task of its own, on Toolsmith's upstream side as on the client's,
        // so the last step's may lose the race with the result; the relay then drops it (a
        // progress notification may only name a request still running).
        let (_, progress) = seen.settled(0, 3).await;
        let progress: Vec<f64> = progress.iter().map(|p| p.0).collect();
        assert!(
            progress.starts_with(&[1.0, 2.0]) && progress.len() <= 3,
            "{progress:?}"
        );

        // Each relayed request is in the audit log under the caller's name.
        let query = toolsmith_core::AuditQuery {
            action: Some("client.sample".to_owned()),
            limit: 10,
            ..Default::default()
        };
        let entries = app.state.service.audit().list(&query).await.unwrap();
        assert_eq!(entries.len(), 1, "{entries:#?}");
        assert_eq!(entries[0]["details"]["outcome"], "answered", "{entries:#?}");
        assert_eq!(
            entries[0]["details"]["server"], "everything",
            "{entries:#?}"
        );
    }

    /// server-everything's `simulate-research-query` must run as a task (2025-11-25's
    /// `execution.taskSupport: "required"`; a plain call is answered -32601): Toolsmith calls
    /// it as a task upstream and answers its caller with the task's result. An ambiguous query
    /// puts the upstream's task in `input_required`: its question reaches the calling client,
    /// and the report names the answer.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_tool_the_upstream_requires_to_run_as_a_task_is_called_as_one() {
        const TASK_TOOL: &str = "mcp_everything_simulate-research-query";
        let Some(app) = app().await else { return };
        assert!(
            app.state
                .service
                .registry()
                .get("default", TASK_TOOL)
                .is_some()
        );
        let seen = Seen::default();
        let client = connect(&app.state, Person::new(true, "unused", &seen)).await;
        let (failed, text) = call(&client, TASK_TOOL, json!({"topic": "rust"})).await;
        assert!(!failed, "{text}");
        assert!(text.contains("Research Report: rust"), "{text}");
        assert!(!text.contains("related-task"), "{text}");

        let (failed, text) = call(
            &client,
            TASK_TOOL,
            json!({"topic": "python", "ambiguous": true}),
        )
        .await;
        assert!(!failed, "{text}");
        let elicited = seen.elicited.lock().unwrap().clone();
        assert_eq!(elicited.len(), 1, "{elicited:?}");
        assert!(
            elicited[0]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("multiple interpretations"),
            "{elicited:?}"
        );
        assert!(
            text.contains("Clarification") && !text.contains("elicitation unavailable"),
            "{text}"
        );
        client.cancel().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_caller_that_cannot_answer_gets_the_upstreams_tool_error_saying_why() {
        let Some(app) = app().await else { return };
        // An MCP client that declared neither sampling nor elicitation.
        let seen = Seen::default();
        let client = connect(
            &app.state,
            Person::new(false, "the client's model answers", &seen),
        )
        .await;
        let (failed, text) = call(&client, SAMPLING_TOOL, json!({"prompt": "hi"})).await;
        assert!(failed, "{text}");
        assert!(
            text.contains("did not declare the sampling capability"),
            "{text}"
        );
        let (failed, text) = call(&client, ELICITATION_TOOL, json!({})).await;
        assert!(failed, "{text}");
        assert!(text.contains("elicitation"), "{text}");
        assert!(seen.sampled.lock().unwrap().is_empty());

        // REST has no client to ask: the message names it and where it works.
        let answer = app
            .post(
                &format!("/api/v1/tools/{SAMPLING_TOOL}/execute"),
                &json!({"arguments": {"prompt": "hi"}}),
            )
            .await;
        let text = answer.text.clone();
        assert!(text.contains("REST"), "{text}");
        assert!(text.contains("over MCP"), "{text}");
    }
}
