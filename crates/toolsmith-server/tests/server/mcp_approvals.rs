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
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ErrorData, Implementation, ProtocolVersion,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::watch;
use toolsmith_core::ApprovalStatus;
use toolsmith_server::auth::{Identity, Scope};
use toolsmith_server::mcp::ToolsmithMcp;
use toolsmith_server::{AppState, ServerSettings};

/// A client whose person answers every approval form with `answer` (or has no forms at all).
/// `"hold"` leaves the form open until the server withdraws it.
#[derive(Clone)]
struct Person {
    answer: Option<&'static str>,
    version: ProtocolVersion,
    asked: Arc<AtomicUsize>,
    /// Forms held open, and forms the server withdrew (`notifications/cancelled`).
    held: Arc<watch::Sender<(usize, usize)>>,
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
        if self.answer == Some("hold") {
            self.held.send_modify(|held| held.0 += 1);
            _context.ct.cancelled().await;
            self.held.send_modify(|held| held.1 += 1);
            return Err(ErrorData::internal_error("the form was withdrawn", None));
        }
        let answer = match self.answer {
            Some("cancel") => json!({"action": "cancel"}),
            other => json!({"action": "accept", "content": {"decision": other.unwrap_or("deny")}}),
        };
        Ok(serde_json::from_value(answer).unwrap())
    }
}

async fn connect(state: &AppState, person: Person) -> RunningService<RoleClient, Person> {
    connect_as(state, person, Identity::local_default()).await
}

async fn connect_as(
    state: &AppState,
    person: Person,
    identity: Identity,
) -> RunningService<RoleClient, Person> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ToolsmithMcp::new(state.clone(), identity);
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
        held: Arc::new(watch::channel((0, 0)).0),
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
    (open_state(dir.path(), ServerSettings::default()).await, dir)
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
    // Under the person's own name, so filters by actor find them, through the client.
    assert_eq!(all[0].decided_by.as_deref(), Some("default"));
    let audit = client_decisions(&state).await;
    assert_eq!(audit.len(), 2, "{audit:#?}");
}

/// The audit entries of approvals decided through the client's form, by user `default`.
async fn client_decisions(state: &AppState) -> Vec<Value> {
    let query = toolsmith_core::AuditQuery {
        actor: Some("default".to_owned()),
        action: Some("approval.decide".to_owned()),
        limit: 100,
        ..Default::default()
    };
    let entries = state.service.audit().list(&query).await.unwrap();
    for entry in &entries {
        assert_eq!(entry["actor"], "default", "{entry:#}");
        assert_eq!(entry["actorKind"], "user", "{entry:#}");
        assert_eq!(entry["details"]["via"], "client", "{entry:#}");
    }
    entries
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
    let all = state
        .service
        .approvals()
        .list(None, false, 10)
        .await
        .unwrap();
    assert_eq!(all[0].status, ApprovalStatus::Granted);
    assert_eq!(client_decisions(&state).await.len(), 1);
}

/// A `tools/call` carrying an approval answer, as a client would retry (or forge) it.
fn answered(name: &str, args: Value, state: &str, decision: &str) -> CallToolRequestParams {
    let Value::Object(args) = args else { panic!() };
    let mut responses = std::collections::BTreeMap::new();
    responses.insert(
        "approval".to_owned(),
        json!({"action": "accept", "content": {"decision": decision}}),
    );
    CallToolRequestParams::new(name.to_owned())
        .with_arguments(args)
        .with_request_state(state.to_owned())
        .with_input_responses(responses)
}

/// One `tools/call` without driving input-required rounds: the result, or the `requestState`
/// of the round the server opened.
async fn call_once(
    client: &RunningService<RoleClient, Person>,
    params: CallToolRequestParams,
) -> Result<(bool, String), String> {
    match client.peer().call_tool_once(params).await.unwrap() {
        CallToolResponse::Complete(res) => Ok((
            res.is_error.unwrap_or(false),
            res.content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                .collect(),
        )),
        CallToolResponse::InputRequired(round) => {
            Err(round.request_state.expect("a round carries its state"))
        }
        _ => panic!("no tasks here"),
    }
}

async fn pending_ids(state: &AppState) -> Vec<String> {
    let pending = state
        .service
        .approvals()
        .list(None, true, 10)
        .await
        .unwrap();
    pending.into_iter().map(|a| a.id).collect()
}

fn agent_token() -> Identity {
    Identity {
        user_id: "default".to_owned(),
        agent_id: Some("bot".to_owned()),
        agent_from_header: false,
        scopes: vec![Scope::ToolsExecute],
        read_only: false,
        ..Identity::local_default()
    }
}

/// On a session (rmcp's client over a pipe negotiates 2025-11-25): an agent is never asked to
/// approve, and answers it makes up in `requestState` / `inputResponses` are refused. The
/// 2026-07-28 tickets are tested over HTTP in `mcp_stateless_approvals.rs`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_cannot_approve_its_own_calls() {
    let (state, _dir) = state().await;
    let creator = connect(&state, person(None, ProtocolVersion::V_2025_11_25)).await;
    model_creates_shout(&creator).await;
    let forged_tickets = |id: &str| {
        vec![
            format!("approval:{id}"),
            format!("approval:{}", "0123456789abcdef".repeat(4)),
        ]
    };

    // An execute-only, agent-bound token whose client says it shows forms: it is never asked
    // (it may not decide), and an answer it makes up is refused.
    let agent_person = person(Some("allow_always"), ProtocolVersion::V_2026_07_28);
    let agent = connect_as(&state, agent_person.clone(), agent_token()).await;
    let (is_error, text) = call_once(&agent, CallToolRequestParams::new("shout"))
        .await
        .unwrap();
    assert!(
        is_error && text.contains("awaiting approval apr_"),
        "{text}"
    );
    assert_eq!(agent_person.asked.load(Ordering::SeqCst), 0);
    let ids = pending_ids(&state).await;
    assert_eq!(ids.len(), 1);
    for forged in forged_tickets(&ids[0]) {
        let (is_error, text) = call_once(
            &agent,
            answered("shout", json!({}), &forged, "allow_always"),
        )
        .await
        .unwrap();
        assert!(is_error, "{text}");
        assert!(
            text.contains("approval answer in this call was not accepted"),
            "{text}"
        );
    }
    // Nothing was decided: the approval waits, no grant was left.
    assert_eq!(pending_ids(&state).await, ids);
    let (is_error, text) = call_once(&agent, CallToolRequestParams::new("shout"))
        .await
        .unwrap();
    assert!(is_error && text.contains("awaiting approval"), "{text}");

    // A person on a read-only server, and a person whose client never declared forms, cannot
    // decide through a made-up answer either.
    let read_only = Identity {
        read_only: true,
        ..Identity::local_default()
    };
    let no_forms = person(None, ProtocolVersion::V_2026_07_28);
    for (identity, who) in [
        (read_only, "read-only"),
        (Identity::local_default(), "no forms"),
    ] {
        let client = connect_as(&state, no_forms.clone(), identity).await;
        for forged in forged_tickets(&ids[0]) {
            let (is_error, text) =
                call_once(&client, answered("shout", json!({}), &forged, "allow_once"))
                    .await
                    .unwrap();
            assert!(is_error && text.contains("not accepted"), "{who}: {text}");
        }
    }
    assert_eq!(pending_ids(&state).await, ids);
    assert!(client_decisions(&state).await.is_empty());
}

/// `run_js_ephemeral` is a call through the pipeline as its caller: the policy decides on it
/// (as `run_js_ephemeral`) and on every `utils.callTool` inside it, `utils.listTools` lists only
/// what the caller may call, and a person's `allow_always` grant is that person's, not an
/// agent's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ephemeral_code_runs_as_its_caller_and_agent() {
    let dir = tempfile::tempdir().unwrap();
    let service = toolsmith_service::ToolServiceSettings {
        policy: Some(
            serde_json::from_value(json!({"agents": {
                "bot": {"deny": ["calculate"]},
                "locked": {"deny": ["run_js_ephemeral"]},
            }}))
            .unwrap(),
        ),
        ..toolsmith_service::ToolServiceSettings::default()
    };
    let state = mcp_support::open_state_with(dir.path(), ServerSettings::default(), service).await;
    let person_client = connect(&state, person(None, ProtocolVersion::V_2025_11_25)).await;
    model_creates_shout(&person_client).await;
    // The person allows `shout` always, for themselves (no agent).
    let (_, text) = call(&person_client, "shout", json!({})).await;
    assert!(text.contains("awaiting approval"), "{text}");
    let id = pending_ids(&state).await.remove(0);
    state
        .service
        .approvals()
        .decide(
            None,
            &id,
            toolsmith_core::ApprovalDecision::AllowAlways,
            "default",
        )
        .await
        .unwrap();
    let run = |code: &str| json!({"code": code});
    let (is_error, text) = call(
        &person_client,
        "run_js_ephemeral",
        run("return await utils.callTool('shout', {text: 'mine'})"),
    )
    .await;
    assert!(
        !is_error && text.contains("MINE"),
        "the person's own grant: {text}"
    );

    let bot = Identity {
        user_id: "default".to_owned(),
        agent_id: Some("bot".to_owned()),
        agent_from_header: false,
        scopes: vec![Scope::ToolsRead, Scope::ToolsExecute],
        read_only: false,
        ..Identity::local_default()
    };
    let bot_client = connect_as(&state, person(None, ProtocolVersion::V_2025_11_25), bot).await;
    let (is_error, text) = call(
        &bot_client,
        "run_js_ephemeral",
        run("try { return await utils.callTool('calculate', {expression: '1+1'}) } catch (e) { return 'refused: ' + e.message }"),
    )
    .await;
    assert!(
        !is_error && text.contains("refused") && text.contains("not allowed"),
        "{text}"
    );
    let (is_error, text) = call(
        &bot_client,
        "run_js_ephemeral",
        run("return utils.listTools().map(t => t.name)"),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(
        !text.contains("calculate") && text.contains("shout"),
        "{text}"
    );
    let (is_error, text) = call(
        &bot_client,
        "run_js_ephemeral",
        run("try { return await utils.callTool('shout', {text: 'theirs'}) } catch (e) { return 'refused: ' + e.message }"),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(
        text.contains("refused") && text.contains("awaiting approval") && !text.contains("THEIRS"),
        "another agent cannot use the person's grant: {text}"
    );

    let locked = Identity {
        agent_id: Some("locked".to_owned()),
        ..Identity::local_default()
    };
    let locked_client =
        connect_as(&state, person(None, ProtocolVersion::V_2025_11_25), locked).await;
    let (is_error, text) = call(&locked_client, "run_js_ephemeral", run("return 1")).await;
    assert!(is_error && text.contains("not allowed"), "{text}");
    // Issue 31: the tool its policy denies is not listed to it either; others still see it.
    let listed = |tools: Vec<rmcp::model::Tool>| tools.iter().any(|t| t.name == "run_js_ephemeral");
    assert!(!listed(locked_client.list_all_tools().await.unwrap()));
    assert!(listed(bot_client.list_all_tools().await.unwrap()));
}

/// Tools a caller may not call are not described to it anywhere: not in `get_tool_help`,
/// `list_custom_tools`, `get_custom_tool` or `utils.listTools()`, as in `tools/list`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_a_caller_may_not_call_are_not_described_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let service = toolsmith_service::ToolServiceSettings {
        policy: Some(
            serde_json::from_value(json!({"agents": {"bot": {"deny": ["shout"]}}})).unwrap(),
        ),
        ..toolsmith_service::ToolServiceSettings::default()
    };
    let state = mcp_support::open_state_with(dir.path(), ServerSettings::default(), service).await;
    let person_client = connect(&state, person(None, ProtocolVersion::V_2025_11_25)).await;
    model_creates_shout(&person_client).await;
    let bot = Identity {
        user_id: "default".to_owned(),
        agent_id: Some("bot".to_owned()),
        agent_from_header: false,
        scopes: vec![Scope::ToolsRead, Scope::ToolsExecute],
        read_only: false,
        ..Identity::local_default()
    };
    let bot_client = connect_as(&state, person(None, ProtocolVersion::V_2025_11_25), bot).await;
    let asks = [
        ("get_tool_help", json!({"tool_name": "shout"})),
        ("list_custom_tools", json!({})),
        ("get_custom_tool", json!({"name": "shout"})),
        (
            "run_js_ephemeral",
            json!({"code": "return utils.listTools().map(t => t.name)"}),
        ),
    ];
    for (tool, args) in &asks {
        let (_, text) = call(&person_client, tool, args.clone()).await;
        assert!(
            text.contains("shout"),
            "the person sees it through {tool}: {text}"
        );
        let (_, text) = call(&bot_client, tool, args.clone()).await;
        assert!(
            !text.contains("Upper-cases")
                && !text.contains("toUpperCase")
                && !text.contains("\"shout\""),
            "{tool} describes a denied tool: {text}"
        );
    }
}

/// The reply that asks the model to get a person's decision names only doors that exist:
/// the HTTP server's web UI, CLI and REST API, or — for `toolsmith mcp` over stdio, which has
/// no UI and no REST API — the CLI on that very store, with its `--data-dir`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_replies_name_only_doors_that_exist() {
    for (doors, wanted, unwanted) in [
        (
            toolsmith_service::ApprovalDoors::Server,
            "in the Toolsmith web UI (Approvals), with `toolsmith approvals allow apr_",
            "stdio",
        ),
        (
            toolsmith_service::ApprovalDoors::Local {
                store_option: "--data-dir /srv/ts".to_owned(),
            },
            "in a terminal with `toolsmith --data-dir /srv/ts approvals allow apr_",
            "POST /api",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let service = toolsmith_service::ToolServiceSettings {
            approval_doors: doors.clone(),
            ..toolsmith_service::ToolServiceSettings::default()
        };
        let state =
            mcp_support::open_state_with(dir.path(), ServerSettings::default(), service).await;
        let client = connect(&state, person(None, ProtocolVersion::V_2025_11_25)).await;
        model_creates_shout(&client).await;
        let (_, text) = call(&client, "shout", json!({})).await;
        assert!(text.contains("awaiting approval apr_"), "{doors:?}: {text}");
        assert!(text.contains(wanted), "{doors:?}: {text}");
        assert!(!text.contains(unwanted), "{doors:?}: {text}");
        if matches!(doors, toolsmith_service::ApprovalDoors::Local { .. }) {
            assert!(!text.contains("web UI (Approvals)"), "{text}");
        }
    }
}

/// A service whose approvals live 20 s, so a call left waiting would end soon enough for a
/// test to see it (the fix settles it at once).
async fn short_lived_state() -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let service = toolsmith_service::ToolServiceSettings {
        approval_ttl: std::time::Duration::from_secs(20),
        ..toolsmith_service::ToolServiceSettings::default()
    };
    let state = mcp_support::open_state_with(dir.path(), ServerSettings::default(), service).await;
    (state, dir)
}

/// Waits until `person` holds `open` forms open and the server withdrew `withdrawn` of them.
async fn held(person: &Person, open: usize, withdrawn: usize) {
    let mut seen = person.held.subscribe();
    seen.wait_for(|h| h.0 >= open && h.1 >= withdrawn)
        .await
        .unwrap();
}

/// Issue 36: the person decides somewhere else (the web UI, REST, the CLI) while the call waits
/// in the client's own approval form. The one waiting call is settled at once: allowed, it runs
/// and the form is withdrawn; the approval ends `consumed`, not `allowed` and then `expired`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_made_elsewhere_runs_the_call_waiting_in_the_clients_form() {
    let (state, _dir) = short_lived_state().await;
    let holding = person(Some("hold"), ProtocolVersion::V_2025_11_25);
    let client = Arc::new(connect(&state, holding.clone()).await);
    model_creates_shout(&client).await;
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { call(&client, "shout", json!({"text": "elsewhere"})).await }
    });
    held(&holding, 1, 0).await;
    let id = pending_ids(&state).await.remove(0);
    state
        .service
        .approvals()
        .decide(
            None,
            &id,
            toolsmith_core::ApprovalDecision::AllowOnce,
            "default",
        )
        .await
        .unwrap();
    let (is_error, text) = waiting.await.unwrap();
    assert!(!is_error, "the allowed call runs: {text}");
    assert_eq!(text, "ELSEWHERE");
    held(&holding, 1, 1).await;
    let record = state.service.approvals().get(None, &id).await.unwrap();
    assert_eq!(record.status, ApprovalStatus::Consumed, "{record:?}");
}

/// Issue 36: a denial made elsewhere ends the waiting call at once, naming who denied it and
/// when; the same call made again within the approval's lifetime is told the same, and no new
/// approval appears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denial_made_elsewhere_ends_the_waiting_call_and_is_final() {
    let (state, _dir) = short_lived_state().await;
    let holding = person(Some("hold"), ProtocolVersion::V_2025_11_25);
    let client = Arc::new(connect(&state, holding.clone()).await);
    model_creates_shout(&client).await;
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { call(&client, "shout", json!({"text": "no"})).await }
    });
    held(&holding, 1, 0).await;
    let id = pending_ids(&state).await.remove(0);
    state
        .service
        .approvals()
        .decide(None, &id, toolsmith_core::ApprovalDecision::Deny, "default")
        .await
        .unwrap();
    let (is_error, text) = waiting.await.unwrap();
    assert!(is_error, "{text}");
    assert!(text.contains("denied by default at "), "{text}");
    assert!(text.contains(&id), "{text}");
    held(&holding, 1, 1).await;
    // The retry (a model's usual move) is told the same, without a new approval or form.
    let (is_error, text) = call(&client, "shout", json!({"text": "no"})).await;
    assert!(is_error && text.contains("denied by default at "), "{text}");
    assert_eq!(
        holding.asked.load(Ordering::SeqCst),
        1,
        "the retry opened no form"
    );
    assert!(pending_ids(&state).await.is_empty());
    let all = state
        .service
        .approvals()
        .list(None, false, 10)
        .await
        .unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    // Another call (other arguments) is a new request.
    let other = connect(&state, person(None, ProtocolVersion::V_2025_11_25)).await;
    let (_, text) = call(&other, "shout", json!({"text": "yes"})).await;
    assert!(text.contains("awaiting approval apr_"), "{text}");
}
