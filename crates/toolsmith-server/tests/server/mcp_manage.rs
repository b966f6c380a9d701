//! The control plane of agents and prompts over MCP (issues 37 and 40): `manage_agents` and
//! `manage_prompts`, driven through rmcp's client over an in-memory pipe against a real
//! service and SQLite store, with the scripted OpenAI-compatible model server of
//! `rest_agents` for the runs. Each action, and a refusal per rule: another user's
//! definition, `agent_max_definitions`, a toolPolicy reaching beyond the model that writes
//! it (refused when named, bounded at run time when reached through `*`), limits above the
//! defaults, a person's definition or prompt, the scope of each action.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::watch;
use toolsmith_server::auth::{Identity, Scope};
use toolsmith_server::mcp::ToolsmithMcp;
use toolsmith_server::{AppState, ServerSettings};

use crate::agent_support::{
    Proto, Reply, Script, agent_body, answers, calls, configure, model_server, offered, run_waited,
    tool_result,
};
use crate::rest_support::{TestApp, settings_reaching, tool_body};

/// Counts the session's `notifications/prompts/list_changed`; tests wait on the count.
#[derive(Clone, Default)]
struct PromptWatcher {
    changes: Arc<watch::Sender<usize>>,
}

impl ClientHandler for PromptWatcher {
    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.send_modify(|n| *n += 1);
    }
}

/// A model's MCP session: `identity`'s, on `state`.
struct Model {
    client: RunningService<RoleClient, PromptWatcher>,
    prompt_changes: Arc<watch::Sender<usize>>,
}

impl Model {
    async fn open(state: &AppState, identity: Identity) -> Model {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let server = ToolsmithMcp::new(state.clone(), identity);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let watcher = PromptWatcher::default();
        let prompt_changes = Arc::clone(&watcher.changes);
        let client = watcher.serve(client_io).await.expect("client connects");
        Model {
            client,
            prompt_changes,
        }
    }

    /// A session of `user`, as `agent` when given (bound by its token), with `scopes`.
    async fn of(state: &AppState, user: &str, agent: Option<&str>, scopes: &[Scope]) -> Model {
        let identity = Identity {
            user_id: user.to_owned(),
            agent_id: agent.map(str::to_owned),
            agent_from_header: false,
            scopes: scopes.to_vec(),
            read_only: false,
            ..Identity::local_default()
        };
        Model::open(state, identity).await
    }

    /// A call of `tool`: (isError, structured content, text).
    async fn call(&self, tool: &str, args: Value) -> (bool, Value, String) {
        let Value::Object(arguments) = args else {
            panic!("arguments are an object")
        };
        let result = self
            .client
            .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
            .await
            .expect("tools/call answers");
        let text = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        (
            result.is_error.unwrap_or(false),
            result.structured_content.unwrap_or(Value::Null),
            text,
        )
    }

    /// A call that must succeed: its structured content.
    async fn ok(&self, tool: &str, args: Value) -> Value {
        let (is_error, value, text) = self.call(tool, args).await;
        assert!(!is_error, "{tool}: {text}");
        value
    }

    /// A call that must be refused with `code`: its text.
    async fn refused(&self, tool: &str, args: Value, code: &str) -> String {
        let (is_error, value, text) = self.call(tool, args).await;
        assert!(is_error, "{tool} was not refused: {text}");
        assert_eq!(value["code"], code, "{text}");
        text
    }

    /// Waits for this session's `n`th prompts `list_changed` (10 s at most).
    async fn prompts_changed(&self, n: usize) {
        let mut changes = self.prompt_changes.subscribe();
        let waited =
            tokio::time::timeout(Duration::from_secs(10), changes.wait_for(|c| *c >= n)).await;
        assert!(
            matches!(waited, Ok(Ok(_))),
            "prompts list_changed #{n} never came: {} arrived",
            *self.prompt_changes.borrow()
        );
    }
}

const ALL: &[Scope] = &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];

/// An app reaching a model server, with the tool `shout` and the model service `local`,
/// under `policy` (the operator's) and at most `max_definitions` agents a user.
async fn app_with(policy: Value, max_definitions: u32) -> (TestApp, Script) {
    let script = Script::default();
    let host = model_server(&script).await;
    let mut service = settings_reaching(&host);
    service.policy = Some(serde_json::from_value(policy).unwrap());
    service.agents.max_definitions = max_definitions;
    let app = TestApp::with_configs(service, ServerSettings::default()).await;
    app.create_tool(&tool_body("shout")).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    (app, script)
}

/// The tools offered to the model in the model server's last request.
fn offered_tools(script: &Script) -> Vec<String> {
    offered(&script.last())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_creates_changes_runs_and_deletes_its_agents_over_mcp() {
    let (app, script) = app_with(json!({}), 100).await;
    let model = Model::of(&app.state, "default", None, ALL).await;
    let agents = "manage_agents";

    let listed = model.ok(agents, json!({"action": "list"})).await;
    assert_eq!(listed["count"], 0, "{listed}");
    // Listed without their field docs (the compact listing's budget); get_tool_help has them.
    let help = model
        .ok("get_tool_help", json!({"tool_name": agents}))
        .await;
    assert!(help.to_string().contains("maxIterations"), "{help}");

    let created = model
        .ok(
            agents,
            json!({"action": "create", "definition": agent_body("helper")}),
        )
        .await;
    assert_eq!(created["agent"]["name"], "helper", "{created}");
    assert_eq!(created["agent"]["writtenBy"], "llm", "{created}");
    assert_eq!(created["agent"]["revision"], 1, "{created}");

    // An update changes only what it gives.
    let updated = model
        .ok(
            agents,
            json!({"action": "update", "agent": "helper",
                   "definition": {"instructions": "Shout, then answer."}}),
        )
        .await;
    let agent = &updated["agent"];
    assert_eq!(agent["revision"], 2, "{updated}");
    assert_eq!(agent["instructions"], "Shout, then answer.", "{updated}");
    assert_eq!(agent["contextFiles"][0]["name"], "style.md", "{updated}");
    assert_eq!(agent["toolPolicy"]["allow"], json!(["shout"]), "{updated}");
    // A stale revision is refused.
    model
        .refused(
            agents,
            json!({"action": "update", "agent": "helper", "expected_revision": 1,
                   "definition": {"instructions": "Again."}}),
            "revision_conflict",
        )
        .await;
    let got = model
        .ok(agents, json!({"action": "get", "agent": "helper"}))
        .await;
    assert_eq!(got["agent"]["instructions"], "Shout, then answer.", "{got}");

    // A run to its end: the model calls `shout`, then answers.
    script.push(calls("shout", &json!({"text": "hi"})));
    script.push(answers(Proto::OpenAi, false, "Done."));
    let ran = model
        .ok(
            agents,
            json!({"action": "run", "agent": "helper", "input": "Shout hi.", "wait": true}),
        )
        .await;
    let run = &ran["run"];
    assert_eq!(run["status"], "completed", "{ran}");
    assert_eq!(run["output"], "Done.", "{ran}");
    let (content, is_error) = tool_result(run);
    assert!(!is_error && content.contains("HI"), "{content}");

    // A run that waits for its model, read and cancelled.
    script.push(Reply::Hang);
    let going = model
        .ok(
            agents,
            json!({"action": "run", "agent": "helper", "input": "Take your time."}),
        )
        .await;
    let id = going["run"]["id"].as_str().unwrap().to_owned();
    assert_eq!(going["run"]["status"], "running", "{going}");
    let read = model
        .ok(agents, json!({"action": "get_run", "run": id}))
        .await;
    assert_eq!(read["run"]["id"], id.as_str(), "{read}");
    let cancelled = model
        .ok(agents, json!({"action": "cancel_run", "run": id}))
        .await;
    assert_eq!(cancelled["run"]["status"], "cancelled", "{cancelled}");
    let runs = model
        .ok(agents, json!({"action": "runs", "agent": "helper"}))
        .await;
    assert_eq!(runs["count"], 2, "{runs}");

    // Every write and run is audited as the model's.
    let audit = app
        .get("/api/v1/audit?limit=100")
        .await
        .assert_ok(StatusCode::OK);
    let actions: Vec<(String, String)> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap_or_default().to_owned(),
                e["actorKind"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for action in [
        "agent.create",
        "agent.update",
        "agent.run.start",
        "agent.run.cancel",
    ] {
        assert!(
            actions.iter().any(|(a, k)| a == action && k == "llm"),
            "{action} by the model: {audit}"
        );
    }

    // Deleting asks for confirmation first.
    let asked = model
        .ok(agents, json!({"action": "delete", "agent": "helper"}))
        .await;
    assert_eq!(asked["confirmationRequired"], true, "{asked}");
    model
        .ok(
            agents,
            json!({"action": "delete", "agent": "helper", "confirm": true}),
        )
        .await;
    let listed = model.ok(agents, json!({"action": "list"})).await;
    assert_eq!(listed["count"], 0, "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manage_agents_holds_a_model_to_the_rules_of_its_user_and_its_own_reach() {
    // The operator denies agent `bot` the tool `shout`; one agent a user at most.
    let (app, script) = app_with(json!({"agents": {"bot": {"deny": ["shout"]}}}), 1).await;
    let agents = "manage_agents";
    let bot = Model::of(&app.state, "default", Some("bot"), ALL).await;

    // Its toolPolicy may not name a tool the model may not call itself.
    let mut body = agent_body("wide");
    body["toolPolicy"] = json!({"allow": ["shout"]});
    let why = bot
        .refused(
            agents,
            json!({"action": "create", "definition": body}),
            "forbidden",
        )
        .await;
    assert!(why.contains("'shout'") && why.contains("no more"), "{why}");

    // Nor raise the limits above the defaults.
    let mut body = agent_body("greedy");
    body["limits"] = json!({"maxIterations": 50, "wallTimeSecs": 3600});
    let why = bot
        .refused(
            agents,
            json!({"action": "create", "definition": body}),
            "forbidden",
        )
        .await;
    assert!(
        why.contains("maxIterations 50") && why.contains("wallTimeSecs 3600"),
        "{why}"
    );

    // `*` is accepted, and its runs are held to what the model may call: a person's run of it
    // cannot reach `shout` either.
    let mut body = agent_body("everything");
    body["toolPolicy"] = json!({"allow": ["*"]});
    bot.ok(agents, json!({"action": "create", "definition": body}))
        .await;
    // REST shows who wrote it.
    let got = app
        .get("/api/v1/agents/everything")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(got["writtenByModel"], true, "{got}");
    script.push(calls("shout", &json!({"text": "psst"})));
    script.push(answers(Proto::OpenAi, false, "Done."));
    let run = run_waited(&app, "everything", "Shout.").await;
    let (content, is_error) = tool_result(&run);
    assert!(is_error, "{run}");
    assert!(!content.contains("PSST"), "shout ran: {content}");
    // The run's model was never offered it.
    let offered = offered_tools(&script);
    assert!(
        offered.contains(&"calculate".to_owned()) && !offered.contains(&"shout".to_owned()),
        "{offered:?}"
    );

    // A person taking the definition over (a revision of theirs) lifts that bound.
    let mut body = agent_body("everything");
    body["toolPolicy"] = json!({"allow": ["*"]});
    let taken = app
        .json(axum::http::Method::PUT, "/api/v1/agents/everything", &body)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(taken["writtenByModel"], false, "{taken}");
    script.push(calls("shout", &json!({"text": "psst"})));
    script.push(answers(Proto::OpenAi, false, "Done."));
    let run = run_waited(&app, "everything", "Shout.").await;
    let (content, is_error) = tool_result(&run);
    assert!(!is_error && content.contains("PSST"), "{content}");

    // A person's definition is not the model's to change or delete (it may read and run it).
    for args in [
        json!({"action": "update", "agent": "everything", "definition": {"instructions": "Mine now."}}),
        json!({"action": "delete", "agent": "everything", "confirm": true}),
    ] {
        let why = bot.refused(agents, args, "forbidden").await;
        assert!(why.contains("written by a person"), "{why}");
    }
    let got = bot
        .ok(agents, json!({"action": "get", "agent": "everything"}))
        .await;
    assert_eq!(got["agent"]["writtenBy"], "user", "{got}");

    // agent_max_definitions: the user has one.
    let mut body = agent_body("third");
    body["toolPolicy"] = json!({"allow": ["calculate"]});
    let why = bot
        .refused(
            agents,
            json!({"action": "create", "definition": body}),
            "limit_reached",
        )
        .await;
    assert!(why.contains("agent_max_definitions"), "{why}");

    // Another user's definitions are neither listed nor found.
    let stranger = Model::of(&app.state, "someone-else", None, ALL).await;
    let listed = stranger.ok(agents, json!({"action": "list"})).await;
    assert_eq!(listed["count"], 0, "{listed}");
    for args in [
        json!({"action": "get", "agent": "everything"}),
        json!({"action": "run", "agent": "everything", "input": "Go."}),
        json!({"action": "delete", "agent": "everything", "confirm": true}),
    ] {
        stranger.refused(agents, args, "not_found").await;
    }

    // Each action needs its REST route's scope.
    let reader = Model::of(&app.state, "default", None, &[Scope::ToolsRead]).await;
    let listed = reader.ok(agents, json!({"action": "list"})).await;
    assert_eq!(listed["count"], 1, "{listed}");
    let why = reader
        .refused(
            agents,
            json!({"action": "create", "definition": agent_body("fourth")}),
            "forbidden",
        )
        .await;
    assert!(why.contains("tools:write"), "{why}");
    let why = reader
        .refused(
            agents,
            json!({"action": "run", "agent": "everything", "input": "Go."}),
            "forbidden",
        )
        .await;
    assert!(why.contains("tools:execute"), "{why}");
}

/// A prompt with one argument.
fn prompt_body(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Summarise a text",
        "arguments": [{"name": "text", "description": "What to summarise", "required": true}],
        "messages": [{"role": "user", "content": "Summarise: {{ text }}"}],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_manages_its_prompts_over_mcp_and_its_sessions_hear_of_each_change() {
    let app = TestApp::new().await;
    let prompts = "manage_prompts";
    let model = Model::of(&app.state, "default", None, ALL).await;
    let listener = Model::of(&app.state, "default", None, ALL).await;

    let created = model
        .ok(
            prompts,
            json!({"action": "create", "definition": prompt_body("summarise")}),
        )
        .await;
    assert_eq!(created["prompt"]["createdBy"], "llm", "{created}");
    listener.prompts_changed(1).await;
    let listed = listener.client.list_all_prompts().await.unwrap();
    assert!(listed.iter().any(|p| p.name == "summarise"), "{listed:?}");

    let updated = model
        .ok(
            prompts,
            json!({"action": "update", "prompt": "summarise",
                   "definition": {"description": "Summarise a text briefly"}}),
        )
        .await;
    assert_eq!(updated["prompt"]["revision"], 2, "{updated}");
    assert_eq!(
        updated["prompt"]["messages"][0]["content"]["text"], "Summarise: {{ text }}",
        "{updated}"
    );
    listener.prompts_changed(2).await;
    model
        .ok(prompts, json!({"action": "disable", "prompt": "summarise"}))
        .await;
    listener.prompts_changed(3).await;
    let got = model
        .ok(prompts, json!({"action": "get", "prompt": "summarise"}))
        .await;
    assert_eq!(got["prompt"]["enabled"], false, "{got}");
    let listed = model.ok(prompts, json!({"action": "list"})).await;
    assert_eq!(listed["count"], 1, "{listed}");

    // A template using an undeclared argument is refused, naming it.
    let mut bad = prompt_body("broken");
    bad["messages"] = json!([{"role": "user", "content": "Hello {{ someone }}"}]);
    let why = model
        .refused(
            prompts,
            json!({"action": "create", "definition": bad}),
            "validation_error",
        )
        .await;
    assert!(why.contains("someone"), "{why}");

    // A person's prompt is read, not changed.
    let mut theirs = prompt_body("persons");
    theirs["messages"] =
        json!([{"role": "user", "content": {"type": "text", "text": "{{ text }}"}}]);
    app.post("/api/v1/prompts", &theirs)
        .await
        .assert_ok(StatusCode::CREATED);
    model
        .ok(prompts, json!({"action": "get", "prompt": "persons"}))
        .await;
    for args in [
        json!({"action": "update", "prompt": "persons", "definition": {"description": "Mine."}}),
        json!({"action": "disable", "prompt": "persons"}),
        json!({"action": "delete", "prompt": "persons", "confirm": true}),
    ] {
        model.refused(prompts, args, "forbidden").await;
    }

    // An agent scopes a prompt to itself only.
    let bot = Model::of(&app.state, "default", Some("bot"), ALL).await;
    let mut scoped = prompt_body("bots");
    scoped["agent"] = json!("other-bot");
    bot.refused(
        prompts,
        json!({"action": "create", "definition": scoped}),
        "forbidden",
    )
    .await;

    // Another user sees none of them; a read-only token writes none.
    let stranger = Model::of(&app.state, "someone-else", None, ALL).await;
    let listed = stranger.ok(prompts, json!({"action": "list"})).await;
    assert_eq!(listed["count"], 0, "{listed}");
    stranger
        .refused(
            prompts,
            json!({"action": "get", "prompt": "summarise"}),
            "not_found",
        )
        .await;
    let reader = Model::of(&app.state, "default", None, &[Scope::ToolsRead]).await;
    let why = reader
        .refused(
            prompts,
            json!({"action": "create", "definition": prompt_body("another")}),
            "forbidden",
        )
        .await;
    assert!(why.contains("tools:write"), "{why}");

    // Deleting asks for confirmation first, then the prompt leaves every listing.
    let asked = model
        .ok(prompts, json!({"action": "delete", "prompt": "summarise"}))
        .await;
    assert_eq!(asked["confirmationRequired"], true, "{asked}");
    model
        .ok(
            prompts,
            json!({"action": "delete", "prompt": "summarise", "confirm": true}),
        )
        .await;
    let listed = model.ok(prompts, json!({"action": "list"})).await;
    assert!(!listed.to_string().contains("summarise"), "{listed}");
}
