//! Human approval of executions through MCP elicitation, with rmcp's own client over an
//! in-process pipe: on protocol 2025-11-25 the server asks with `elicitation/create` while the
//! call waits; on 2026-07-28 it answers an `InputRequiredResult` and the client retries with
//! the person's answer. A client without elicitation is told which approval to decide.
//! (The official Python SDK drives the same flows in `mcp_clients.rs`.)

use crate::mcp_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_support::open_state;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ErrorData, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolsmith_server::auth::Identity;
use toolsmith_server::mcp::ToolsmithMcp;
use toolsmith_server::{AppState, ServerConfig};
use toolsmith_store::ApprovalStatus;

/// A client whose person answers every approval form with `answer` (or has no forms at all).
#[derive(Clone)]
struct Person {
    answer: Option<&'static str>,
    version: ProtocolVersion,
    asked: Arc<AtomicUsize>,
}

impl ClientHandler for Person {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.answer.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("approval-test", "1.0"))
            .with_protocol_version(self.version.clone())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            panic!("a form is asked for")
        };
        assert!(message.contains("shout"), "{message}");
        assert!(requested_schema.properties.contains_key("decision"));
        Ok(serde_json::from_value(
            json!({"action": "accept", "content": {"decision": self.answer.unwrap_or("deny")}}),
        )
        .unwrap())
    }
}

async fn connect(state: &AppState, person: Person) -> RunningService<RoleClient, Person> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ToolsmithMcp::new(state.clone(), Identity::local_default());
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    person.serve(client_io).await.expect("client connects")
}

fn person(answer: Option<&'static str>, version: ProtocolVersion) -> Person {
    Person {
        answer,
        version,
        asked: Arc::new(AtomicUsize::new(0)),
    }
}

async fn call(
    client: &RunningService<RoleClient, Person>,
    name: &str,
    args: Value,
) -> (bool, String) {
    let Value::Object(args) = args else { panic!() };
    let res = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = res
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    (res.is_error.unwrap_or(false), text)
}

/// The model creates `shout` (so it requires approval) through the control plane.
async fn model_creates_shout(client: &RunningService<RoleClient, Person>) {
    let (is_error, text) = call(
        client,
        "create_tool",
        json!({"name": "shout", "description": "Upper-cases", "parameters": {"type": "object"},
               "code": "return String(args.text ?? 'hi').toUpperCase();"}),
    )
    .await;
    assert!(!is_error, "{text}");
}

async fn state() -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (open_state(dir.path(), ServerConfig::default()).await, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2025_11_25_client_is_asked_during_the_call() {
    let (state, _dir) = state().await;
    let allowing = person(Some("allow_once"), ProtocolVersion::V_2025_11_25);
    let client = connect(&state, allowing.clone()).await;
    model_creates_shout(&client).await;
    let (is_error, text) = call(&client, "shout", json!({"text": "hello"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(text, "HELLO");
    assert_eq!(allowing.asked.load(Ordering::SeqCst), 1);
    // allow_once: the next call is asked again; this person denies it.
    let denying = person(Some("deny"), ProtocolVersion::V_2025_11_25);
    let other = connect(&state, denying.clone()).await;
    let (is_error, text) = call(&other, "shout", json!({"text": "hello"})).await;
    assert!(is_error);
    assert!(text.contains("did not approve"), "{text}");
    assert_eq!(denying.asked.load(Ordering::SeqCst), 1);
    // Both decisions are recorded.
    let all = state
        .service
        .approvals()
        .list(None, false, 10)
        .await
        .unwrap();
    let statuses: Vec<ApprovalStatus> = all.iter().map(|a| a.status).collect();
    assert_eq!(statuses, [ApprovalStatus::Denied, ApprovalStatus::Consumed]);
    assert!(
        all[0]
            .decided_by
            .as_deref()
            .unwrap()
            .contains("asked in the client")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_07_28_client_gets_input_required_and_retries_with_the_answer() {
    let (state, _dir) = state().await;
    let always = person(Some("allow_always"), ProtocolVersion::V_2026_07_28);
    let client = connect(&state, always.clone()).await;
    model_creates_shout(&client).await;
    let (is_error, text) = call(&client, "shout", json!({"text": "again"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(text, "AGAIN");
    assert_eq!(always.asked.load(Ordering::SeqCst), 1);
    // allow_always: later calls run without asking.
    let (is_error, _) = call(&client, "shout", json!({"text": "more"})).await;
    assert!(!is_error);
    assert_eq!(always.asked.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_elicitation_is_told_what_to_approve() {
    let (state, _dir) = state().await;
    let client = connect(&state, person(None, ProtocolVersion::V_2025_11_25)).await;
    model_creates_shout(&client).await;
    let (is_error, text) = call(&client, "shout", json!({})).await;
    assert!(is_error);
    assert!(text.contains("awaiting approval apr_"), "{text}");
    let pending = state
        .service
        .approvals()
        .list(None, true, 10)
        .await
        .unwrap();
    assert_eq!(pending.len(), 1);
    // A person allows it elsewhere; the model's next identical call runs.
    state
        .service
        .approvals()
        .decide(
            None,
            &pending[0].id,
            toolsmith_store::ApprovalDecision::AllowOnce,
            "admin",
        )
        .await
        .unwrap();
    let (is_error, text) = call(&client, "shout", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(text, "HI");
}
