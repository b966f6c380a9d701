//! Sessions and subagents (issue 37, spec 001 §2 "Sessions", §6), through the `sessions`
//! built-ins called over REST and from inside agent runs, against a model server the tests
//! start on 127.0.0.1: an OpenAI-compatible Chat Completions server whose answer follows the
//! last message it is sent (`SPAWN a;b` spawns subagents, `HANG` never answers, `GATE` waits
//! for the test, a subagent's announcement or a steer is quoted back, anything else echoed
//! with the length of the history it got), keeping every request.
//!
//! The MCP side, with the official Python SDK, is `agent_sessions_python`.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use serde_json::{Value, json};
use toolsmith_service::ToolServiceSettings;

use crate::agent_support::{
    Proto, Reply, Script, agent_on_local, call_with, calls, calls_all, configure, create_agent,
    enable_groups, kinds, last_message, model_server_with, offered, run_waited, says, until,
};
use crate::rest_support::{TestApp, request, serve_loopback, settings_reaching, tool_body};

/// The model server: its script (every request), and the gate `GATE` waits at.
#[derive(Clone)]
pub struct Model {
    script: Script,
    gate: Arc<tokio::sync::Semaphore>,
}

impl Model {
    /// Every request whose first message is `input` (one run's requests, in order).
    pub fn requests_of(&self, input: &str) -> Vec<Value> {
        self.script
            .bodies()
            .into_iter()
            .filter(|r| {
                r["messages"][1]["content"] == input || r["messages"][0]["content"] == input
            })
            .collect()
    }

    /// Lets one `GATE` turn through.
    pub fn release(&self) {
        self.gate.add_permits(1);
    }
}

/// The model's answer to the request `body` (the module's documentation tells how); a `GATE`
/// turn waits at `gate`.
async fn reply(body: Value, gate: Arc<tokio::sync::Semaphore>) -> Reply {
    let last = last_message(&body);
    let text = last.text.as_str();
    if last.from_tool {
        says(&format!("after tool: {text}"))
    } else if let Some(tasks) = text.strip_prefix("SPAWN ") {
        let calls: Vec<(&str, Value)> = tasks
            .split(';')
            .map(|task| ("sessions_spawn", json!({"task": task, "label": task})))
            .collect();
        calls_all(&calls)
    } else if let Some(task) = text.strip_prefix("RUN ") {
        calls("subagents", &json!({"action": "run", "task": task}))
    } else if text.starts_with("HANG") {
        Reply::Hang
    } else if text.starts_with("GATE") {
        gate.acquire().await.unwrap().forget();
        calls("shout", &json!({"text": "through the gate"}))
    } else if text.starts_with("SHOUT") {
        calls("shout", &json!({"text": "again"}))
    } else if text.starts_with("[subagent") {
        says(&format!("parent got: {text}"))
    } else if text.starts_with("[a message from your parent]") {
        says(&format!("steered: {text}"))
    } else {
        says(&format!("echo: {text} (history {})", last.messages))
    }
}

/// The model server on 127.0.0.1 (with `POST /release` opening its gate once) and its
/// `host:port`.
pub async fn model_server() -> (Model, String) {
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let script = Script::answering({
        let gate = Arc::clone(&gate);
        move |body| reply(body, Arc::clone(&gate))
    });
    let model = Model { script, gate };
    let release = Router::new()
        .route(
            "/release",
            post(|State(model): State<Model>| async move {
                model.release();
                "released"
            }),
        )
        .with_state(model.clone());
    let host = model_server_with(&model.script, release).await;
    (model, host)
}

/// Service settings reaching `host`.
pub fn settings(host: &str) -> ToolServiceSettings {
    settings_reaching(host)
}

/// An app on `service` with the `sessions` group on, the tool `shout`, the service `local` at `host` and the agent
/// `helper` (which may call the sessions tools and `shout`).
pub async fn setup_app(host: &str, service: ToolServiceSettings) -> TestApp {
    set_up(
        TestApp::with_configs(service, Default::default()).await,
        host,
    )
    .await
}

/// `app` with the `sessions` group on, the `shout` tool, the scripted model server at `host` as
/// the Config Center service `local`, and the agent `helper` on it.
async fn set_up(app: TestApp, host: &str) -> TestApp {
    enable_groups(&app, &["sessions"]).await;
    app.create_tool(&tool_body("shout")).await;
    configure(&app, Proto::OpenAi, false, host).await;
    create_agent(
        &app,
        &agent_on_local(
            "helper",
            "Work with your subagents.",
            &["group:sessions", "shout"],
        ),
    )
    .await;
    app
}

/// Calls the built-in `tool` over REST; its result content and whether it is an error.
async fn call(app: &TestApp, tool: &str, args: Value) -> (Value, bool) {
    call_with(app, tool, args, &[]).await
}

/// Asks for the subagent `key` until `done` holds (a record only answers when asked).
async fn subagent_until(app: &TestApp, key: &str, done: impl Fn(&Value) -> bool) -> Value {
    let find = |now: &Value| {
        now["sessions"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["sessionKey"] == key))
            .cloned()
    };
    let now = until(
        "the subagent",
        Duration::from_secs(30),
        || async {
            call(
                app,
                "sessions_list",
                json!({"kind": "subagent", "includeArchived": true}),
            )
            .await
            .0
        },
        |now| find(now).is_some_and(|s| done(&s)),
    )
    .await;
    find(&now).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_keeps_its_history_for_the_next_run_and_trims_the_oldest() {
    let (model, host) = model_server().await;
    let mut service = settings(&host);
    service.sessions.max_messages = 3;
    let app = setup_app(&host, service).await;
    let (first, error) = call(
        &app,
        "sessions_send",
        json!({"agent": "helper", "message": "hello there", "label": "greeting"}),
    )
    .await;
    assert!(!error, "{first}");
    assert_eq!(first["status"], "idle", "{first}");
    assert_eq!(first["result"], "echo: hello there (history 2)", "{first}");
    let key = first["sessionKey"].as_str().unwrap().to_owned();
    assert!(key.starts_with("ses_"), "{key}");
    let (second, error) = call(
        &app,
        "sessions_send",
        json!({"sessionKey": key, "message": "and again"}),
    )
    .await;
    assert!(!error, "{second}");
    // The run's history was the session (after the instructions): the first message and its
    // answer, then the new one.
    assert_eq!(second["result"], "echo: and again (history 4)", "{second}");
    let asked = model.requests_of("hello there");
    assert!(
        asked
            .iter()
            .any(|r| r["messages"].as_array().unwrap().len() == 4),
        "the second run's request carried the session's history: {asked:?}"
    );
    // Bounded: 4 messages written, the oldest trimmed to keep 3.
    assert_eq!(
        (second["messages"].as_u64(), second["trimmed"].as_u64()),
        (Some(3), Some(1))
    );
    let (history, _) = call(&app, "sessions_history", json!({"sessionKey": key})).await;
    let roles: Vec<&str> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["assistant", "user", "assistant"], "{history}");
    let (status, _) = call(&app, "session_status", json!({"sessionKey": key})).await;
    assert_eq!(status["status"], "idle");
    assert_eq!(status["label"], "greeting");
    let (listed, _) = call(&app, "sessions_list", json!({})).await;
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1, "{listed}");
    // A subagent takes no message; an unknown session is not found.
    let (unknown, error) = call(
        &app,
        "sessions_send",
        json!({"sessionKey": "ses_nope", "message": "hi"}),
    )
    .await;
    assert!(
        error && unknown.to_string().contains("sessions_list"),
        "{unknown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_sessions_are_never_listed_or_readable() {
    use toolsmith_server::auth::Scope;
    let (_model, host) = model_server().await;
    let app = setup_app(&host, settings(&host)).await;
    let scopes = [Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];
    // Alice configures her own model service: an admin's scope.
    let alice = app
        .token(
            "alice",
            None,
            &[
                Scope::ToolsRead,
                Scope::ToolsWrite,
                Scope::ToolsExecute,
                Scope::Admin,
            ],
        )
        .await;
    let bob = app.token("bob", None, &scopes).await;
    let as_alice = format!("Bearer {alice}");
    let as_bob = format!("Bearer {bob}");
    // Alice's own agent and service (the default user's are not hers).
    let create = |path: &str, body: Value| {
        crate::rest_support::json_request(axum::http::Method::POST, path, &body)
    };
    for (path, body) in [
        (
            "/api/v1/config/services",
            json!({"name": "local", "fields": [
                {"name": "protocol", "kind": "text", "required": true},
                {"name": "base_url", "kind": "url"}]}),
        ),
        (
            "/api/v1/config/services/local/entries",
            json!({"values": {"protocol": "openai", "base_url": format!("http://{host}/v1")}}),
        ),
        (
            "/api/v1/agents",
            json!({"name": "mine", "model": {"service": "local", "model": "m"},
                "toolPolicy": {"allow": ["shout"]}}),
        ),
    ] {
        let mut req = create(path, body);
        req.headers_mut()
            .insert("authorization", as_alice.parse().unwrap());
        let res = app.send(req).await;
        assert_eq!(res.status, StatusCode::CREATED, "{path}: {}", res.text);
    }
    let alice_h = [("authorization", as_alice.as_str())];
    let bob_h = [("authorization", as_bob.as_str())];
    let (sent, error) = call_with(
        &app,
        "sessions_send",
        json!({"agent": "mine", "message": "secret plans"}),
        &alice_h,
    )
    .await;
    assert!(!error, "{sent}");
    let key = sent["sessionKey"].as_str().unwrap();
    let (listed, _) = call_with(&app, "sessions_list", json!({}), &bob_h).await;
    assert_eq!(listed["sessions"], json!([]), "{listed}");
    for (tool, args) in [
        ("sessions_history", json!({"sessionKey": key})),
        ("session_status", json!({"sessionKey": key})),
        (
            "sessions_send",
            json!({"sessionKey": key, "message": "let me in"}),
        ),
        ("subagents", json!({"action": "cancel", "id": key})),
    ] {
        let (answer, error) = call_with(&app, tool, args, &bob_h).await;
        assert!(error, "{tool}: {answer}");
        assert!(
            answer.to_string().contains("no session"),
            "{tool}: {answer}"
        );
        assert!(
            !answer.to_string().contains("secret plans"),
            "{tool}: {answer}"
        );
    }
    let (mine, _) = call_with(&app, "sessions_list", json!({}), &alice_h).await;
    assert_eq!(mine["sessions"].as_array().unwrap().len(), 1, "{mine}");

    // The same over REST's reads: the owner lists and reads the session with its history;
    // another user lists nothing and reads 404, never the text.
    let get = |path: String, auth: &str| {
        let req = request(axum::http::Method::GET, &path)
            .header("authorization", auth)
            .body(axum::body::Body::empty())
            .unwrap();
        app.send(req)
    };
    let listed = get("/api/v1/sessions".to_owned(), &as_alice).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    let sessions = &listed.json["data"]["sessions"];
    assert_eq!(listed.json["data"]["count"], 1, "{}", listed.text);
    assert_eq!(sessions[0]["sessionKey"], key, "{}", listed.text);
    assert_eq!(sessions[0]["kind"], "session");
    assert_eq!(sessions[0]["status"], "idle");
    let read = get(format!("/api/v1/sessions/{key}"), &as_alice).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let data = &read.json["data"];
    assert_eq!(data["session"]["sessionKey"], key);
    let messages = data["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{}", read.text);
    assert_eq!(
        (&messages[0]["role"], &messages[0]["content"]),
        (&json!("user"), &json!("secret plans"))
    );
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["run"], data["session"]["lastRun"]);
    let only_subagents = get("/api/v1/sessions?kind=subagent".to_owned(), &as_alice).await;
    assert_eq!(
        only_subagents.json["data"]["count"], 0,
        "{}",
        only_subagents.text
    );
    let wrong = get("/api/v1/sessions?kind=chat".to_owned(), &as_alice).await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.text);
    assert!(
        wrong.text.contains("'session' or 'subagent'"),
        "{}",
        wrong.text
    );
    let theirs = get("/api/v1/sessions".to_owned(), &as_bob).await;
    assert_eq!(theirs.json["data"]["count"], 0, "{}", theirs.text);
    let theirs = get(format!("/api/v1/sessions/{key}"), &as_bob).await;
    assert_eq!(theirs.status, StatusCode::NOT_FOUND, "{}", theirs.text);
    assert!(!theirs.text.contains("secret plans"), "{}", theirs.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_spawns_subagents_and_reads_their_results_in_its_next_turn() {
    let (model, host) = model_server().await;
    let app = setup_app(&host, settings(&host)).await;
    let run = run_waited(&app, "helper", "SPAWN alpha;beta").await;
    assert_eq!(run["status"], "completed", "{run}");
    let output = run["output"].as_str().unwrap();
    assert!(output.starts_with("parent got: [subagent"), "{run}");
    // Both results reached the parent's model, in one turn or two.
    let parent = model.requests_of("SPAWN alpha;beta");
    let told: String = parent
        .iter()
        .flat_map(|r| r["messages"].as_array().cloned().unwrap_or_default())
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str().map(str::to_owned))
        .collect::<Vec<_>>()
        .join("\n");
    for child in ["alpha", "beta"] {
        assert!(
            told.contains(&format!("[subagent '{child}'"))
                && told.contains(&format!("echo: {child}")),
            "the parent never read {child}'s result: {told}"
        );
    }
    // The parent was offered the spawning tools; its children, at the deepest depth, neither
    // those (leaf) nor session_status and sessions_send (always denied).
    let parent_tools = offered(&parent[0]);
    for tool in [
        "sessions_spawn",
        "subagents",
        "session_status",
        "sessions_send",
        "shout",
    ] {
        assert!(parent_tools.contains(&tool.to_owned()), "{parent_tools:?}");
    }
    let child = model.requests_of("alpha");
    let child_tools = offered(&child[0]);
    assert!(child_tools.contains(&"shout".to_owned()), "{child_tools:?}");
    for tool in [
        "sessions_spawn",
        "subagents",
        "sessions_list",
        "sessions_history",
        "session_status",
        "sessions_send",
    ] {
        assert!(
            !child_tools.contains(&tool.to_owned()),
            "{tool}: {child_tools:?}"
        );
    }
    // Each spawn answered at once: running, one deeper, the run its parent.
    let run_id = run["id"].as_str().unwrap();
    let view = app
        .get(&format!("/api/v1/agents/helper/runs/{run_id}"))
        .await
        .assert_ok(StatusCode::OK);
    let spawned: Vec<&Value> = view["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "tool_result")
        .collect();
    assert_eq!(spawned.len(), 2, "{view}");
    for step in spawned {
        let content = &step["detail"]["content"];
        assert_eq!(content["status"], "running", "{view}");
        assert_eq!(content["depth"], 1, "{view}");
        assert_eq!(content["parent"], format!("run:{run_id}"), "{view}");
    }
    assert!(kinds(&view).contains(&"announce".to_owned()), "{view}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_limit_of_the_subagent_table_holds() {
    let (_model, host) = model_server().await;
    let mut service = settings(&host);
    service.sessions.subagents.max_children_per_agent = 1;
    service.sessions.subagents.max_iterations = 1;
    service.sessions.subagents.archive_after = Duration::ZERO;
    let app = setup_app(&host, service).await;
    // MaxChildrenPerAgent: the run's second spawn is rejected, the first runs.
    let run = app
        .post(
            "/api/v1/agents/helper/runs",
            &json!({"input": "SPAWN HANG one;HANG two", "wait": false}),
        )
        .await
        .assert_ok(StatusCode::ACCEPTED);
    let run_id = run["id"].as_str().unwrap().to_owned();
    let view = loop {
        let now = app
            .get(&format!("/api/v1/agents/helper/runs/{run_id}"))
            .await
            .assert_ok(StatusCode::OK);
        let results = now["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["kind"] == "tool_result")
            .count();
        if results == 2 {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let results: Vec<&Value> = view["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "tool_result")
        .collect();
    assert_eq!(results[0]["detail"]["isError"], false, "{view}");
    assert_eq!(results[1]["detail"]["isError"], true, "{view}");
    assert!(
        results[1]["detail"]["content"]
            .to_string()
            .contains("MaxChildrenPerAgent 1"),
        "{view}"
    );
    app.post(
        &format!("/api/v1/agents/helper/runs/{run_id}/cancel"),
        &json!({}),
    )
    .await
    .assert_ok(StatusCode::OK);

    // MaxSpawnDepth: a caller at depth 1 spawns nothing.
    let (deep, error) = call_with(
        &app,
        "sessions_spawn",
        json!({"task": "anything", "agent": "helper"}),
        &[("x-toolsmith-subagent-depth", "1")],
    )
    .await;
    assert!(error, "{deep}");
    assert!(deep.to_string().contains("MaxSpawnDepth is 1"), "{deep}");

    // Max iterations: a subagent gets one model turn; a tool call in it ends the run.
    let (ran, error) = call(
        &app,
        "subagents",
        json!({"action": "run", "task": "SHOUT it", "agent": "helper"}),
    )
    .await;
    assert!(!error, "{ran}");
    assert_eq!(ran["status"], "failed", "{ran}");
    assert!(
        ran["error"].to_string().contains("iteration limit of 1"),
        "{ran}"
    );
    // ArchiveAfterMinutes (0 here): once ended, it is archived at the next listing.
    let key = ran["sessionKey"].as_str().unwrap().to_owned();
    let archived = subagent_until(&app, &key, |s| s["status"] == "archived").await;
    assert_eq!(archived["error"], ran["error"]);
    let (listed, _) = call(&app, "subagents", json!({"action": "list"})).await;
    assert!(
        !listed.to_string().contains(&key),
        "archived subagents are listed only when asked: {listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_concurrent_counts_a_users_running_subagents_across_parents() {
    let (_model, host) = model_server().await;
    let mut service = settings(&host);
    service.sessions.subagents.max_concurrent = 2;
    let app = setup_app(&host, service).await;
    let mut keys = Vec::new();
    // Two parents: the client (no agent) and a client naming an agent.
    for headers in [vec![], vec![("x-toolsmith-agent", "assistant")]] {
        let (spawned, error) = call_with(
            &app,
            "sessions_spawn",
            json!({"task": "HANG", "agent": "helper", "label": "hangs"}),
            &headers,
        )
        .await;
        assert!(!error, "{spawned}");
        assert_eq!(spawned["status"], "running");
        keys.push(spawned["sessionKey"].as_str().unwrap().to_owned());
    }
    let (third, error) = call(
        &app,
        "sessions_spawn",
        json!({"task": "HANG", "agent": "helper"}),
    )
    .await;
    assert!(error, "{third}");
    assert!(third.to_string().contains("MaxConcurrent 2"), "{third}");
    // Cancelled, it no longer counts.
    let (cancelled, error) =
        call(&app, "subagents", json!({"action": "cancel", "id": "last"})).await;
    assert!(!error, "{cancelled}");
    assert_eq!(cancelled["subagents"][0]["sessionKey"], keys[0]);
    assert_eq!(cancelled["subagents"][0]["status"], "cancelled");
    // The subagent's run is cancelled as any run is: audited.
    let log = app
        .get("/api/v1/audit?action=agent.run.cancel")
        .await
        .assert_ok(axum::http::StatusCode::OK);
    assert_eq!(log["entries"].as_array().unwrap().len(), 1, "{log}");
    let (again, error) = call(
        &app,
        "sessions_spawn",
        json!({"task": "HANG", "agent": "helper"}),
    )
    .await;
    assert!(!error, "{again}");
    let (all, error) = call(&app, "subagents", json!({"action": "cancel", "id": "all"})).await;
    assert!(!error, "{all}");
    assert_eq!(all["subagents"].as_array().unwrap().len(), 1, "{all}");
    subagent_until(&app, &keys[0], |s| s["status"] == "cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_reaches_a_running_subagent_at_its_next_turn() {
    let (model, host) = model_server().await;
    let app = setup_app(&host, settings(&host)).await;
    let (spawned, error) = call(
        &app,
        "subagents",
        json!({"action": "spawn", "task": "GATE then listen", "agent": "helper", "label": "listener"}),
    )
    .await;
    assert!(!error, "{spawned}");
    let key = spawned["sessionKey"].as_str().unwrap().to_owned();
    let (steered, error) = call(
        &app,
        "subagents",
        json!({"action": "steer", "id": key, "message": "use the blue one"}),
    )
    .await;
    assert!(!error, "{steered}");
    model.release();
    let done = subagent_until(&app, &key, |s| s["status"] == "completed").await;
    assert!(
        done["result"]
            .as_str()
            .unwrap()
            .starts_with("steered: [a message from your parent]\nuse the blue one"),
        "{done}"
    );
    // Steering an ended one says so.
    let (late, error) = call(
        &app,
        "subagents",
        json!({"action": "steer", "id": key, "message": "too late"}),
    )
    .await;
    assert!(
        error && late.to_string().contains("not a running subagent"),
        "{late}"
    );
}

/// Spec 001 §6's steer: cancel, then respawn with the new message as the task, keeping the
/// label.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steer_with_restart_cancels_and_respawns_keeping_the_label() {
    let (_model, host) = model_server().await;
    let app = setup_app(&host, settings(&host)).await;
    let (spawned, error) = call(
        &app,
        "subagents",
        json!({"action": "spawn", "task": "GATE forever", "agent": "helper", "label": "worker"}),
    )
    .await;
    assert!(!error, "{spawned}");
    let old = spawned["sessionKey"].as_str().unwrap().to_owned();
    let (steered, error) = call(
        &app,
        "subagents",
        json!({"action": "steer", "id": old, "message": "count the apples", "restart": true}),
    )
    .await;
    assert!(!error, "{steered}");
    assert_eq!(
        steered["cancelled"]["sessionKey"],
        old.as_str(),
        "{steered}"
    );
    assert_eq!(steered["cancelled"]["status"], "cancelled", "{steered}");
    assert_eq!(steered["steered"]["label"], "worker", "{steered}");
    assert_eq!(steered["steered"]["task"], "count the apples", "{steered}");
    let new = steered["steered"]["sessionKey"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(new, old);
    let done = subagent_until(&app, &new, |s| s["status"] == "completed").await;
    assert_eq!(
        done["result"], "echo: count the apples (history 2)",
        "{done}"
    );
    let gone = subagent_until(&app, &old, |s| s["status"] == "cancelled").await;
    assert_eq!(gone["result"], Value::Null, "{gone}");
}

/// The six tools and every subagent action through the official MCP Python SDK
/// (`tests/clients/mcp_sessions.py`, a 2025-11-25 session over streamable HTTP): a subagent's
/// end reaches the client as a `notifications/message` of logger `toolsmith/subagents`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_drives_sessions_and_every_subagent_action() {
    python_sdk_drives_sessions(false).await;
}

/// The same run with the store on PostgreSQL: sessions, subagents, their limits (counted in the
/// store) and deny lists by depth as on SQLite.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_drives_sessions_and_every_subagent_action_on_postgres() {
    python_sdk_drives_sessions(true).await;
}

async fn python_sdk_drives_sessions(on_postgres: bool) {
    use crate::mcp_support::{prerequisite, python, run_client};
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let (_model, host) = model_server().await;
    let mut service = settings(&host);
    service.sessions.subagents.max_children_per_agent = 3;
    let app = if on_postgres {
        let Some(app) = TestApp::on_postgres(service, Default::default()).await else {
            return;
        };
        set_up(app, &host).await
    } else {
        setup_app(&host, service).await
    };
    let server = serve_loopback(app.router.clone()).await;
    let report = run_client(
        "mcp_sessions.py",
        &python(),
        &[
            "mcp_sessions.py".to_owned(),
            "--url".to_owned(),
            format!("http://{server}/mcp"),
            "--release".to_owned(),
            format!("http://{host}/release"),
        ],
        &[],
    )
    .await;
    eprintln!("{report:#}");
    let tools: Vec<&str> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for tool in [
        "sessions_list",
        "sessions_history",
        "sessions_send",
        "sessions_spawn",
        "subagents",
        "session_status",
    ] {
        assert!(tools.contains(&tool), "{tool} not listed: {tools:?}");
    }
    let value = |name: &str| {
        assert_eq!(report[name]["isError"], false, "{name}: {}", report[name]);
        report[name]["value"].clone()
    };
    assert_eq!(value("sendFirst")["result"], "echo: hello (history 2)");
    assert_eq!(value("sendSecond")["result"], "echo: more (history 4)");
    assert_eq!(value("list")["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(value("history")["messages"].as_array().unwrap().len(), 4);
    assert_eq!(value("status")["status"], "idle");
    assert_eq!(value("statusSummary")["sessions"]["idle"], 1);
    assert_eq!(value("spawn")["status"], "running");
    let notified = &report["spawnNotified"]["data"];
    assert_eq!(notified["status"], "completed", "{report:#}");
    assert_eq!(notified["result"], "echo: alpha (history 2)");
    assert_eq!(value("actionRun")["status"], "completed");
    assert_eq!(value("actionRun")["result"], "echo: beta (history 2)");
    assert_eq!(value("actionSpawn")["status"], "running");
    assert_eq!(value("actionSteer")["steered"]["label"], "gated");
    let steered = report["steeredNotified"]["data"]["result"]
        .as_str()
        .unwrap_or_default();
    assert!(
        steered.starts_with("steered: [a message from your parent]\nturn left"),
        "{report:#}"
    );
    let hanging = value("hanging")["sessionKey"].clone();
    let listed = value("actionList")["subagents"].as_array().unwrap().clone();
    assert!(
        listed
            .iter()
            .any(|s| s["sessionKey"] == hanging && s["status"] == "running"),
        "{listed:?}"
    );
    value("second");
    value("third");
    assert_eq!(report["overChildren"]["isError"], true);
    assert!(
        report["overChildren"]["value"]
            .to_string()
            .contains("MaxChildrenPerAgent 3"),
        "{report:#}"
    );
    assert_eq!(value("cancelOne")["subagents"][0]["status"], "cancelled");
    assert_eq!(
        value("cancelLast")["subagents"][0]["sessionKey"],
        value("third")["sessionKey"]
    );
    assert_eq!(
        value("cancelAll")["subagents"][0]["sessionKey"],
        value("second")["sessionKey"]
    );
    assert_eq!(report["cancelNotified"]["data"]["status"], "cancelled");
    assert_eq!(report["badAction"]["isError"], true);
}

/// `sessions_spawn` as an MCP task, through the official TypeScript SDK's 2025-11-25 tasks
/// over streamable HTTP (`tests/clients/mcp_sessions_task.mjs`): the task is working while
/// its subagent runs and completed with the subagent's result when it ends; the task's cancel
/// cancels the subagent; a subagent cancelled through `subagents` ends its task cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_spawn_as_an_mcp_task_follows_its_subagent() {
    use crate::mcp_support::{node, prerequisite, run_client, strings};
    if !prerequisite("Node 22 (test clients)", &node()) {
        return;
    }
    let (_model, host) = model_server().await;
    let app = setup_app(&host, settings(&host)).await;
    let server = serve_loopback(app.router.clone()).await;
    let args = strings(&[
        "mcp_sessions_task.mjs",
        "--url",
        &format!("http://{server}/mcp"),
        "--release",
        &format!("http://{host}/release"),
    ]);
    let report = run_client("sessions task", &node(), &args, &[]).await;
    let ctx = format!("report: {report:#}");

    // The SDK's stream: a task, then the subagent's result.
    let streamed = &report["streamed"];
    assert_eq!(streamed["types"][0], "taskCreated", "{ctx}");
    assert_eq!(streamed["task"]["status"], "working", "{ctx}");
    assert_eq!(streamed["error"], Value::Null, "{ctx}");
    let done = &streamed["result"]["structuredContent"];
    assert_eq!(done["status"], "completed", "{ctx}");
    assert_eq!(done["label"], "apples", "{ctx}");
    assert_eq!(
        done["result"], "echo: count the apples (history 2)",
        "{ctx}"
    );

    // Working while the subagent runs; completed with its result once it ended.
    assert_eq!(report["gatedCreated"]["status"], "working", "{ctx}");
    assert_eq!(report["gatedSubagent"]["status"], "running", "{ctx}");
    assert_eq!(report["gatedWhileRunning"]["status"], "working", "{ctx}");
    assert_eq!(report["gatedEnded"]["status"], "completed", "{ctx}");
    let gated = &report["gatedResult"]["structuredContent"];
    assert_eq!(
        gated["sessionKey"], report["gatedSubagent"]["sessionKey"],
        "{ctx}"
    );
    assert_eq!(gated["status"], "completed", "{ctx}");
    assert!(
        gated["result"]
            .as_str()
            .is_some_and(|r| r.starts_with("after tool:")),
        "{ctx}"
    );

    // The task cancelled: its subagent too.
    assert_eq!(report["taskCancelled"]["status"], "cancelled", "{ctx}");
    assert_eq!(report["plumsAfter"]["status"], "cancelled", "{ctx}");

    // The subagent cancelled: its task too, saying why.
    assert_eq!(
        report["figsCancel"]["subagents"][0]["status"], "cancelled",
        "{ctx}"
    );
    assert_eq!(report["figsTask"]["status"], "cancelled", "{ctx}");
    assert!(
        report["figsTask"]["statusMessage"]
            .as_str()
            .is_some_and(|m| m.contains("figs") && m.contains("cancelled")),
        "{ctx}"
    );
}
