//! Virtual files (issue 38, spec 001 §3, §7): an agent's `read_file` / `write_file` of the
//! seven routed context files reach its context files, and of `MEMORY.md` / `memory/*` its
//! memory, never the workspace — from inside agent runs (a model server the tests start on
//! 127.0.0.1 whose answer follows the last message: `WRITE <path>: <text>` calls
//! `write_file`, `READ <path>` calls `read_file`, `RECALL <query>` calls `recall`, a tool's
//! result is quoted back as `after tool: …`, anything else is echoed) and over MCP for an
//! agent-bound token. Who may write which: a person's predefined definition is not changed by
//! a model, a model-written one gets a revision, `USER.md` (and every file of an open agent)
//! is the user's own copy; a run reads the merge of its definition's files and its user's.

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolsmith_server::auth::{Identity, Scope};

use crate::agent_support::{
    Proto, Reply, Script, calls, configure, create_agent, enable_groups, last_message,
    model_server, run_waited, says, system_prompt,
};
use crate::mcp_support::{McpClient, call_ok, connect_in_process};
use crate::rest_support::{TestApp, execute, settings_reaching};

/// The model's answer to the request `body` (the module's documentation tells how).
fn reply(body: &Value) -> Reply {
    let last = last_message(body);
    let text = last.text.as_str();
    if last.from_tool {
        says(&format!("after tool: {text}"))
    } else if let Some(rest) = text.strip_prefix("WRITE ") {
        let (path, content) = rest.split_once(':').unwrap();
        calls(
            "write_file",
            &json!({"path": path, "content": content.trim_start()}),
        )
    } else if let Some(path) = text.strip_prefix("READ ") {
        calls("read_file", &json!({"path": path}))
    } else if let Some(query) = text.strip_prefix("RECALL ") {
        calls("recall", &json!({"query": query}))
    } else {
        says(&format!("echo: {text}"))
    }
}

/// The model server, and an app reaching it with a workspace, the service `local`, the
/// `delegation` group on, and the agents `scribe` (predefined, a person's: SOUL.md and
/// BOOTSTRAP.md), `open_one` (open: SOUL.md and IDENTITY.md templates, linked to `scribe` so
/// it reads DELEGATION.md) and `plain` (files but no memory).
async fn setup() -> (TestApp, Script, tempfile::TempDir) {
    let model = Script::replying(reply);
    let host = model_server(&model).await;
    let workspaces = tempfile::tempdir().unwrap();
    let mut service = settings_reaching(&host);
    service.workspace = Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
        workspaces.path().to_owned(),
    ));
    let app = TestApp::with_configs(service, Default::default()).await;
    enable_groups(&app, &["delegation"]).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    let everything = json!({"allow": ["group:filesystem", "group:memory", "group:delegation"]});
    for body in [
        json!({"name": "scribe", "instructions": "You keep notes.",
            "contextFiles": [{"name": "SOUL.md", "text": "Be kind."},
                {"name": "BOOTSTRAP.md", "text": "Introduce yourself first."}],
            "toolPolicy": everything}),
        json!({"name": "open_one", "instructions": "You are open.", "agentType": "open",
            "contextFiles": [{"name": "SOUL.md", "text": "Template soul."},
                {"name": "IDENTITY.md", "text": "Template identity."}],
            "toolPolicy": everything}),
        json!({"name": "plain", "instructions": "Files only.",
            "toolPolicy": {"allow": ["group:filesystem"]}}),
    ] {
        let mut body = body;
        body["model"] = json!({"service": "local", "model": "test-model"});
        create_agent(&app, &body).await;
    }
    app.post(
        "/api/v1/agent-links",
        &json!({"from": "open_one", "to": "scribe", "description": "keeps notes"}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    (app, model, workspaces)
}

/// A run of `agent` on `input`, waited for: its output.
async fn run(app: &TestApp, agent: &str, input: &str) -> String {
    let run = run_waited(app, agent, input).await;
    assert_eq!(run["status"], "completed", "{run}");
    run["output"].as_str().unwrap_or_default().to_owned()
}

/// The agent `name` as REST answers it.
async fn agent(app: &TestApp, name: &str) -> Value {
    app.get(&format!("/api/v1/agents/{name}"))
        .await
        .assert_ok(StatusCode::OK)
}

/// A person's call of `tool` (no agent: the workspace, never routed): (isError, result).
async fn person(app: &TestApp, tool: &str, args: Value) -> (bool, Value) {
    let res = execute(app, tool, args).await.assert_ok(StatusCode::OK);
    (res["isError"] == true, res["result"].clone())
}

/// An MCP session of user `default` as `agent` (bound by its token).
async fn mcp_as(app: &TestApp, agent: Option<&str>) -> McpClient<()> {
    let identity = Identity {
        user_id: "default".to_owned(),
        agent_id: agent.map(str::to_owned),
        agent_from_header: false,
        scopes: vec![Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute],
        read_only: false,
        ..Identity::local_default()
    };
    connect_in_process(&app.state, identity, ()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_predefined_agents_context_files_are_its_definitions_and_user_md_its_users() {
    let (app, model, _workspaces) = setup().await;

    // Read: the definition's SOUL.md, not a workspace file.
    let out = run(&app, "scribe", "READ SOUL.md").await;
    assert!(out.contains("Be kind."), "{out}");
    assert!(out.contains("definition"), "{out}");

    // A person wrote the definition: the model may not change SOUL.md.
    let out = run(&app, "scribe", "WRITE SOUL.md: Be rude.").await;
    assert!(out.contains("a person wrote"), "{out}");
    assert!(out.contains("agentType"), "{out}");
    let stored = agent(&app, "scribe").await;
    assert_eq!(stored["revision"], 1, "{stored}");
    assert_eq!(stored["contextFiles"][0]["text"], "Be kind.", "{stored}");

    // USER.md is the user's own copy: written, read back, the definition unchanged, no file.
    let out = run(&app, "scribe", "WRITE USER.md: Likes green tea.").await;
    assert!(out.contains("your user's own copy"), "{out}");
    let out = run(&app, "scribe", "READ USER.md").await;
    assert!(out.contains("Likes green tea."), "{out}");
    let stored = agent(&app, "scribe").await;
    assert_eq!(stored["revision"], 1, "{stored}");
    assert_eq!(stored["contextFiles"].as_array().unwrap().len(), 2);
    let (missing, why) = person(&app, "read_file", json!({"path": "USER.md"})).await;
    assert!(missing, "USER.md reached the workspace: {why}");

    // Any other path is the workspace's, as before.
    run(&app, "scribe", "WRITE notes/todo.md: buy milk").await;
    let (failed, read) = person(&app, "read_file", json!({"path": "notes/todo.md"})).await;
    assert!(!failed, "{read}");
    assert_eq!(read["content"], "buy milk");

    // The next run reads its user's USER.md after the definition's files.
    run(&app, "scribe", "hello").await;
    let system = system_prompt(&model.last());
    assert!(system.contains("## SOUL.md\n\nBe kind."), "{system}");
    assert!(
        system.contains("## USER.md\n\nLikes green tea."),
        "{system}"
    );
    assert!(system.contains("## BOOTSTRAP.md"), "{system}");

    // BOOTSTRAP.md written empty is done with for this user; the person's definition keeps it.
    run(&app, "scribe", "WRITE BOOTSTRAP.md:").await;
    run(&app, "scribe", "hello again").await;
    let system = system_prompt(&model.last());
    assert!(!system.contains("BOOTSTRAP.md"), "{system}");
    let out = run(&app, "scribe", "READ BOOTSTRAP.md").await;
    assert!(out.contains("you have none yet"), "{out}");
    let stored = agent(&app, "scribe").await;
    assert_eq!(stored["revision"], 1, "{stored}");
    assert_eq!(
        stored["contextFiles"][1]["name"], "BOOTSTRAP.md",
        "{stored}"
    );

    // edit_file does not reach a context file, and says how to change one.
    let mcp = mcp_as(&app, Some("scribe")).await;
    let (refused, _, text) = call_ok(
        &mcp,
        "edit_file",
        json!({"path": "SOUL.md", "oldText": "kind", "newText": "rude"}),
    )
    .await;
    assert!(refused && text.contains("write_file"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_mcp_an_agent_bound_token_reaches_its_context_files_and_a_model_written_definition_gets_a_revision()
 {
    let (app, _model, _workspaces) = setup().await;

    // The token bound to the person's `scribe`: USER.md is its user's, SOUL.md is refused.
    let scribe = mcp_as(&app, Some("scribe")).await;
    let (failed, written, text) = call_ok(
        &scribe,
        "write_file",
        json!({"path": "./USER.md", "content": "Prefers short answers."}),
    )
    .await;
    assert!(!failed, "{text}");
    assert_eq!(written["created"], true, "{written}");
    let (_, read, _) = call_ok(&scribe, "read_file", json!({"path": "USER.md"})).await;
    assert_eq!(read["content"], "Prefers short answers.", "{read}");
    let (refused, _, text) = call_ok(
        &scribe,
        "write_file",
        json!({"path": "SOUL.md", "content": "Be rude."}),
    )
    .await;
    assert!(refused && text.contains("a person wrote"), "{text}");

    // A person's client (no agent) writes to the workspace: nothing is routed.
    let person_mcp = mcp_as(&app, None).await;
    let (failed, _, text) = call_ok(
        &person_mcp,
        "write_file",
        json!({"path": "SOUL.md", "content": "a plain file"}),
    )
    .await;
    assert!(!failed, "{text}");
    let (_, read, _) = call_ok(&scribe, "read_file", json!({"path": "SOUL.md"})).await;
    assert_eq!(read["content"], "Be kind.", "{read}");

    // A definition a model wrote (manage_agents): its SOUL.md is a new revision, audited.
    let (failed, _, text) = call_ok(
        &person_mcp,
        "manage_agents",
        json!({"action": "create", "definition": {
            "name": "drafter", "instructions": "Drafts.",
            "model": {"service": "local", "model": "test-model"},
            "contextFiles": [{"name": "SOUL.md", "text": "Draft carefully."}],
            "toolPolicy": {"allow": ["group:filesystem"]}}}),
    )
    .await;
    assert!(!failed, "{text}");
    let drafter = mcp_as(&app, Some("drafter")).await;
    let (failed, written, text) = call_ok(
        &drafter,
        "write_file",
        json!({"path": "SOUL.md", "content": "Draft boldly."}),
    )
    .await;
    assert!(!failed, "{text}");
    assert_eq!(written["revision"], 2, "{written}");
    let (failed, written, text) = call_ok(
        &drafter,
        "write_file",
        json!({"path": "TOOLS.md", "content": "Use write_file for drafts."}),
    )
    .await;
    assert!(!failed, "{text}");
    assert_eq!(written["created"], true, "{written}");
    let stored = agent(&app, "drafter").await;
    assert_eq!(stored["revision"], 3, "{stored}");
    assert_eq!(
        stored["contextFiles"][0]["text"], "Draft boldly.",
        "{stored}"
    );
    assert_eq!(stored["contextFiles"][1]["name"], "TOOLS.md", "{stored}");
    let audit = app
        .get("/api/v1/audit?action=agent.update")
        .await
        .assert_ok(StatusCode::OK);
    let entries = audit["entries"].as_array().cloned().unwrap_or_default();
    assert!(
        entries
            .iter()
            .any(|e| e["actorKind"] == "llm" && e["details"]["changed"] == json!(["contextFiles"])),
        "{audit}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_agents_files_are_its_users_merged_over_the_templates_with_delegation_md_kept() {
    let (app, model, _workspaces) = setup().await;

    // Every routed file of an open agent is its user's; the definition's are the templates.
    let out = run(&app, "open_one", "READ IDENTITY.md").await;
    assert!(out.contains("Template identity."), "{out}");
    let out = run(&app, "open_one", "WRITE SOUL.md: My own soul.").await;
    assert!(out.contains("your user's own copy"), "{out}");
    run(
        &app,
        "open_one",
        "WRITE HEARTBEAT.md: Check the inbox hourly.",
    )
    .await;
    let out = run(&app, "open_one", "READ SOUL.md").await;
    assert!(out.contains("My own soul."), "{out}");
    let stored = agent(&app, "open_one").await;
    assert_eq!(stored["revision"], 1, "{stored}");
    assert_eq!(stored["agentType"], "open", "{stored}");
    assert_eq!(
        stored["contextFiles"][0]["text"], "Template soul.",
        "{stored}"
    );

    // §7's merging: the user's files over the definition's, base-only DELEGATION.md kept.
    run(&app, "open_one", "hello").await;
    let system = system_prompt(&model.last());
    assert!(system.contains("## SOUL.md\n\nMy own soul."), "{system}");
    assert!(!system.contains("Template soul."), "{system}");
    assert!(
        system.contains("## IDENTITY.md\n\nTemplate identity."),
        "{system}"
    );
    assert!(
        system.contains("## HEARTBEAT.md\n\nCheck the inbox hourly."),
        "{system}"
    );
    assert!(system.contains("## DELEGATION.md"), "{system}");
    let soul = system.find("## SOUL.md").unwrap();
    let delegation = system.find("## DELEGATION.md").unwrap();
    assert!(soul < delegation, "{system}");

    // Another agent's files are its own: scribe's USER.md is not open_one's.
    run(&app, "open_one", "WRITE USER.md: open user").await;
    let out = run(&app, "scribe", "READ USER.md").await;
    assert!(out.contains("you have none yet"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_md_and_memory_files_are_the_agents_memory_indexed_for_recall() {
    let (app, _model, _workspaces) = setup().await;

    // Written as files, kept as memories: recall finds them by their words.
    let out = run(
        &app,
        "scribe",
        "WRITE MEMORY.md: The user's cat is called Miso.",
    )
    .await;
    assert!(out.contains("\"routedTo\":\"memory\""), "{out}");
    run(
        &app,
        "scribe",
        "WRITE memory/projects.md: Project Falcon ships in March.",
    )
    .await;
    let out = run(&app, "scribe", "RECALL when does Falcon ship").await;
    assert!(out.contains("Project Falcon ships in March."), "{out}");
    assert!(out.contains("memory/projects.md"), "{out}");
    let out = run(&app, "scribe", "READ memory/projects.md").await;
    assert!(out.contains("Project Falcon ships in March."), "{out}");
    // Rewritten, the same memory changes: one memory per file.
    run(
        &app,
        "scribe",
        "WRITE MEMORY.md: The user's cat is called Mochi.",
    )
    .await;
    let out = run(&app, "scribe", "RECALL cat").await;
    assert!(out.contains("Mochi") && !out.contains("Miso"), "{out}");
    assert!(out.contains("\"count\":1"), "{out}");

    // Not in the workspace, and not another agent's memory.
    let (missing, why) = person(&app, "read_file", json!({"path": "MEMORY.md"})).await;
    assert!(missing, "MEMORY.md reached the workspace: {why}");
    let out = run(&app, "open_one", "RECALL Falcon").await;
    assert!(out.contains("\"count\":0"), "{out}");
    let out = run(&app, "open_one", "READ MEMORY.md").await;
    assert!(out.contains("nothing is written there yet"), "{out}");

    // The memory tools' rules: an agent that may not call them reaches no memory this way.
    let out = run(&app, "plain", "WRITE MEMORY.md: sneaky").await;
    assert!(
        out.contains("needs 'remember'") && out.contains("group:memory"),
        "{out}"
    );
    let out = run(&app, "plain", "READ MEMORY.md").await;
    assert!(out.contains("needs 'memory_get'"), "{out}");

    // Only plain paths under memory/; written empty, a memory file is forgotten.
    let out = run(&app, "scribe", "READ memory/../SOUL.md").await;
    assert!(out.contains("no empty, '.' or '..' parts"), "{out}");
    let out = run(&app, "scribe", "WRITE MEMORY.md:").await;
    assert!(out.contains("\"forgotten\":true"), "{out}");
    let out = run(&app, "scribe", "RECALL cat").await;
    assert!(out.contains("\"count\":0"), "{out}");
}
