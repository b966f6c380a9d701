//! MCP prompts (issue 40): `prompts/list`, `prompts/get` (arguments checked, `-32602` naming a
//! missing one), `completion/complete` for a prompt's argument and
//! `notifications/prompts/list_changed` — through rmcp's client in process, and through the
//! official Python SDK over streamable HTTP (2025-11-25 and 2026-07-28's
//! `subscriptions/listen`) and over stdio (`toolsmith mcp`, another process writing the
//! store). Another user's prompts are never listed nor got.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, Reference};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use tokio::sync::watch;
use toolsmith_core::prompt::{
    PromptArgumentSpec, PromptContent, PromptDefinition, PromptMessageSpec, PromptRole,
};
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Identity;
use toolsmith_service::prompts::PromptInput;
use toolsmith_service::{Actor, ToolService};

use crate::mcp_support::{
    ClientRun, TestServer, connect_in_process, open_state, prerequisite, python, stdio_server,
};

/// Counts `prompts/list_changed`; tests wait on the count.
#[derive(Clone)]
struct PromptWatcher(Arc<watch::Sender<usize>>);

impl ClientHandler for PromptWatcher {
    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.send_modify(|n| *n += 1);
    }
}

pub(crate) fn prompt(name: &str) -> PromptInput {
    PromptInput {
        name: name.to_owned(),
        agent: None,
        enabled: true,
        definition: PromptDefinition {
            title: Some("Code review".to_owned()),
            description: "Reviews code".to_owned(),
            arguments: vec![
                PromptArgumentSpec {
                    name: "language".to_owned(),
                    title: None,
                    description: "The language".to_owned(),
                    required: true,
                    values: vec!["rust".to_owned(), "ruby".to_owned(), "python".to_owned()],
                },
                PromptArgumentSpec {
                    name: "focus".to_owned(),
                    title: None,
                    description: String::new(),
                    required: false,
                    values: Vec::new(),
                },
            ],
            messages: vec![PromptMessageSpec {
                role: PromptRole::User,
                content: PromptContent::Text {
                    text:
                        "Review this {{ language }} code{% if focus %} for {{ focus }}{% endif %}."
                            .to_owned(),
                },
            }],
        },
    }
}

async fn create(service: &ToolService, user: &str, name: &str) {
    service
        .create_prompt(&Actor::user(user), prompt(name))
        .await
        .expect("the prompt is stored");
}

fn identity(user: &str) -> Identity {
    let mut identity = Identity::local_default();
    identity.user_id = user.to_owned();
    identity
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_are_listed_got_completed_and_each_change_notified_to_their_user_alone() {
    let dir = tempfile::tempdir().unwrap();
    let state = open_state(dir.path(), ServerSettings::default()).await;
    create(&state.service, "alice", "review").await;
    let changes = Arc::new(watch::Sender::new(0usize));
    let alice = connect_in_process(&state, identity("alice"), PromptWatcher(changes.clone())).await;
    let bob = connect_in_process(
        &state,
        identity("bob"),
        PromptWatcher(Arc::new(watch::Sender::new(0))),
    )
    .await;

    let info = alice.peer_info().expect("initialized");
    let prompts_cap = info
        .capabilities
        .prompts
        .as_ref()
        .expect("prompts capability");
    assert_eq!(prompts_cap.list_changed, Some(true));
    assert!(info.capabilities.completions.is_some());

    let listed = alice.list_all_prompts().await.expect("prompts/list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].name, "review");
    assert_eq!(listed[0].description.as_deref(), Some("Reviews code"));
    let args = listed[0].arguments.as_ref().expect("arguments");
    assert_eq!(
        args.iter()
            .map(|a| (a.name.as_str(), a.required))
            .collect::<Vec<_>>(),
        vec![("language", Some(true)), ("focus", Some(false))]
    );

    let mut params = GetPromptRequestParams::new("review");
    params.arguments =
        Some(serde_json::from_value(json!({"language": "rust", "focus": "safety"})).unwrap());
    let got = alice.get_prompt(params).await.expect("prompts/get");
    assert_eq!(
        serde_json::to_value(&got.messages).unwrap(),
        json!([{"role": "user", "content": {"type": "text", "text": "Review this rust code for safety."}}])
    );

    // A missing required argument is -32602 naming it; so is an unknown prompt.
    let mut params = GetPromptRequestParams::new("review");
    params.arguments = Some(serde_json::from_value(json!({"focus": "x"})).unwrap());
    let err = alice
        .get_prompt(params)
        .await
        .expect_err("missing argument");
    let text = format!("{err:?}");
    assert!(
        text.contains("-32602") || text.contains("InvalidParams") || text.contains("32602"),
        "{text}"
    );
    assert!(text.contains("language"), "{text}");

    // Completion: the declared values that start with what was typed.
    let done = alice
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("review"),
            ArgumentInfo::new("language", "ru"),
        ))
        .await
        .expect("completion/complete");
    assert_eq!(done.completion.values, vec!["rust", "ruby"]);
    assert_eq!(
        (done.completion.total, done.completion.has_more),
        (Some(2), Some(false))
    );

    // Bob sees none of Alice's prompts.
    assert!(bob.list_all_prompts().await.unwrap().is_empty());
    assert!(
        bob.get_prompt(GetPromptRequestParams::new("review"))
            .await
            .is_err()
    );

    // A prompt Alice creates elsewhere (REST, the CLI, another session) is announced once.
    create(&state.service, "alice", "summary").await;
    let mut seen = changes.subscribe();
    tokio::time::timeout(Duration::from_secs(10), seen.wait_for(|n| *n >= 1))
        .await
        .expect("prompts/list_changed within 10 s")
        .unwrap();
    let names: Vec<String> = alice
        .list_all_prompts()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(names, vec!["review", "summary"]);
    // Switched off, it leaves the list (and is announced).
    state
        .service
        .set_prompt_enabled(&Actor::user("alice"), "summary", false)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), seen.wait_for(|n| *n >= 2))
        .await
        .expect("a second prompts/list_changed")
        .unwrap();
    assert_eq!(alice.list_all_prompts().await.unwrap().len(), 1);
}

/// Runs the Python SDK's prompt scenario against `args`' server; `write` creates the prompt
/// `summary` once the client listens.
async fn python_scenario(label: &str, args: Vec<String>, write: impl AsyncFnOnce()) -> Value {
    let mut run = ClientRun::spawn(label, &python(), &args, &[]);
    run.wait_for_line(|v| v["ready"] == true, Duration::from_secs(120))
        .await;
    write().await;
    run.finish(Duration::from_secs(60)).await
}

fn check(report: &Value, protocol: &str, delivery: &str) {
    assert_eq!(report["protocol"], protocol, "{report:#}");
    assert_eq!(report["delivery"], delivery, "{report:#}");
    assert_eq!(report["promptsListChanged"], true, "{report:#}");
    assert_eq!(report["completions"], true, "{report:#}");
    assert_eq!(
        report["listed"],
        json!([{"name": "review", "description": "Reviews code", "arguments": ["language", "focus"]}]),
        "{report:#}"
    );
    assert_eq!(
        report["messages"][0]["content"]["text"], "Review this rust code for safety.",
        "{report:#}"
    );
    assert_eq!(report["missing"]["code"], -32602, "{report:#}");
    assert!(
        report["missing"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("language")),
        "{report:#}"
    );
    assert_eq!(
        report["completion"]["values"],
        json!(["rust", "ruby"]),
        "{report:#}"
    );
    assert_eq!(report["notified"], true, "{report:#}");
    assert_eq!(
        report["listedAfter"],
        json!(["review", "summary"]),
        "{report:#}"
    );
}

async fn python_over_http(mode: &str, protocol: &str, delivery: &str) {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let server = TestServer::start(ServerSettings::default()).await;
    create(&server.state.service, "default", "review").await;
    let args = vec![
        "mcp_prompts.py".to_owned(),
        "--mode".to_owned(),
        mode.to_owned(),
        "--url".to_owned(),
        server.url.clone(),
    ];
    let service = server.state.service.clone();
    let report = python_scenario(&format!("python prompts {mode} http"), args, async || {
        create(&service, "default", "summary").await;
    })
    .await;
    check(&report, protocol, delivery);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_prompts_over_http_2025_11_25() {
    python_over_http("legacy", "2025-11-25", "session").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_prompts_over_http_2026_07_28() {
    python_over_http("auto", "2026-07-28", "listen").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_prompts_over_stdio_with_another_process_writing_the_store() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let state = open_state(dir.path(), ServerSettings::default()).await;
    create(&state.service, "default", "review").await;
    let (command, server_args) = stdio_server(&dir.path().join("toolsmith.db"));
    let mut args = vec![
        "mcp_prompts.py".to_owned(),
        "--mode".to_owned(),
        "legacy".to_owned(),
        "--command".to_owned(),
        command,
    ];
    for a in server_args {
        args.push(format!("--arg={a}"));
    }
    let service = state.service.clone();
    let report = python_scenario("python prompts stdio", args, async || {
        create(&service, "default", "summary").await;
    })
    .await;
    check(&report, "2025-11-25", "session");
}
