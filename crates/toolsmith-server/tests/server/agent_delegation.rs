//! Agents working together (issue 38, spec 001 §7, §9, §10): agent links made by a person,
//! `delegate` (sync, async, cancel, list, history, the caps), `delegate_search`,
//! `evaluate_loop` and `handoff`, through the `delegation` built-ins called over REST and from
//! inside agent runs, against a model server the tests start on 127.0.0.1: an
//! OpenAI-compatible Chat Completions server whose answer follows the last message it is sent:
//!
//! - `DELEGATE <agent> <sync|async>: <task>` calls `delegate`; `HANDOFF <agent>: <reason>`
//!   calls `handoff`;
//! - a delegated task (`[a task delegated to you …]`) is answered by its body: `HANG` never
//!   answers, `WRITE …` drafts "announcement v1" (v2 once it carries feedback), `Evaluate this
//!   draft …` approves a v2 draft and rejects a v1, anything else `done: <task>`;
//! - an announced result (`[delegate:…`) is quoted back, a tool's result too; anything else is
//!   echoed with the length of the history it got.
//!
//! The MCP side, with the official Python SDK and the `teams` tools too, is
//! `the_python_sdk_drives_every_delegation_and_team_tool` (`tests/clients/mcp_agents_together.py`).

use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::agent_support::{
    Proto, Reply, Script, agent_on_local, call_as, calls, configure, create_agent, enable_groups,
    last_message, model_server, run_waited, says, until,
};
use crate::rest_support::{TestApp, request, serve_loopback, settings_reaching};

/// The model's answer to the request `body` (the module's documentation tells how).
fn reply(body: &Value) -> Reply {
    let last = last_message(body);
    let text = last.text.as_str();
    if last.from_tool {
        says(&format!("after tool: {text}"))
    } else if let Some(rest) = text.strip_prefix("DELEGATE ") {
        let (head, task) = rest.split_once(": ").unwrap();
        let (agent, mode) = head.split_once(' ').unwrap();
        calls(
            "delegate",
            &json!({"agent": agent, "mode": mode, "task": task}),
        )
    } else if let Some(rest) = text.strip_prefix("HANDOFF ") {
        let (agent, reason) = rest.split_once(": ").unwrap();
        calls("handoff", &json!({"agent": agent, "reason": reason}))
    } else if text.starts_with("[a task delegated to you") {
        let task = text.split_once('\n').map_or("", |(_, t)| t);
        if task.starts_with("HANG") {
            Reply::Hang
        } else if task.starts_with("Evaluate this draft") {
            if task.contains("announcement v2") {
                says("APPROVED")
            } else {
                says("REJECTED: Too long, missing pricing")
            }
        } else if task.starts_with("WRITE") && task.contains("Feedback: Too long, missing pricing")
        {
            says("announcement v2")
        } else if task.starts_with("WRITE") {
            says("announcement v1")
        } else {
            says(&format!("done: {task}"))
        }
    } else if text.starts_with("[delegate:") {
        says(&format!("lead got: {text}"))
    } else {
        says(&format!("echo: {text} (history {})", last.messages))
    }
}

/// The model server on 127.0.0.1, and an app reaching it with the `delegation` and
/// `sessions` groups on, the service `local` and the agents `lead` (which may call the
/// delegation and sessions tools), `billing`, `writer` and `critic`.
async fn setup() -> (TestApp, Script) {
    let model = Script::replying(reply);
    let host = model_server(&model).await;
    let app = TestApp::with_configs(settings_reaching(&host), Default::default()).await;
    enable_groups(&app, &["delegation", "sessions"]).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    for (name, display, instructions) in [
        (
            "lead",
            "Lead",
            "You lead: answer the user, delegate what others do better.",
        ),
        ("billing", "Billing", "Refunds, invoices and payments."),
        ("writer", "Writer", "Writes product announcements."),
        ("critic", "Critic", "Reviews drafts against criteria."),
    ] {
        let mut body = agent_on_local(name, instructions, &["group:delegation", "group:sessions"]);
        body["displayName"] = json!(display);
        create_agent(&app, &body).await;
    }
    (app, model)
}

async fn link(app: &TestApp, body: Value) -> Value {
    app.post("/api/v1/agent-links", &body)
        .await
        .assert_ok(StatusCode::CREATED)
}

/// Asks for the delegation `id` until `done` holds (a record only answers when asked).
async fn delegation_until(app: &TestApp, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let find = |all: &Value| {
        all["delegations"]
            .as_array()
            .and_then(|all| all.iter().find(|d| d["id"] == id))
            .cloned()
    };
    let all = until(
        "the delegation",
        Duration::from_secs(30),
        || async {
            app.get("/api/v1/delegations?limit=200")
                .await
                .assert_ok(StatusCode::OK)
        },
        |all| find(all).is_some_and(|d| done(&d)),
    )
    .await;
    find(&all).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_is_made_by_a_person_and_without_one_the_refusal_names_it() {
    let (app, _model) = setup().await;
    // No link: no delegation, and the refusal names the link to create.
    let (refused, error) = call_as(
        &app,
        Some("lead"),
        "delegate",
        json!({"agent": "billing", "task": "refund order 7"}),
    )
    .await;
    assert!(error, "{refused}");
    let text = refused.to_string();
    assert!(
        text.contains("no agent link lets 'lead' delegate to 'billing'")
            && text.contains("POST /api/v1/agent-links")
            && text.contains("toolsmith agent link lead billing"),
        "{refused}"
    );
    // A model never makes a link.
    let res = app
        .send(
            request(Method::POST, "/api/v1/agent-links")
                .header("content-type", "application/json")
                .header("x-toolsmith-agent", "lead")
                .body(axum::body::Body::from(
                    json!({"from": "lead", "to": "billing"}).to_string(),
                ))
                .unwrap(),
        )
        .await;
    let message = res.assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(message.contains("made by a person"), "{message}");
    // A person does: outbound by default, once per pair whichever way.
    let made = link(
        &app,
        json!({"from": "lead", "to": "billing", "description": "refunds"}),
    )
    .await;
    assert_eq!(made["direction"], "outbound", "{made}");
    assert_eq!(made["maxConcurrent"], 3, "{made}");
    for body in [
        json!({"from": "lead", "to": "billing"}),
        json!({"from": "billing", "to": "lead"}),
    ] {
        app.post("/api/v1/agent-links", &body)
            .await
            .assert_error(StatusCode::CONFLICT, "name_taken");
    }
    let bad = app
        .post(
            "/api/v1/agent-links",
            &json!({"from": "lead", "to": "lead"}),
        )
        .await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.text);
    // Sync: the target answers as itself, and the caller reads its answer.
    let (done, error) = call_as(
        &app,
        Some("lead"),
        "delegate",
        json!({"agent": "billing", "task": "refund order 7"}),
    )
    .await;
    assert!(!error, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], "done: refund order 7", "{done}");
    assert_eq!(
        (&done["from"], &done["to"]),
        (&json!("lead"), &json!("billing"))
    );
    // Outbound: billing may not delegate back.
    let (back, error) = call_as(
        &app,
        Some("billing"),
        "delegate",
        json!({"agent": "lead", "task": "anything"}),
    )
    .await;
    assert!(error, "{back}");
    assert!(
        back.to_string().contains("no agent link lets 'billing'"),
        "{back}"
    );
    // Listed for the person, and in the caller's history.
    let listed = app
        .get("/api/v1/delegations")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(listed["count"], 1, "{listed}");
    let (history, _) = call_as(&app, Some("lead"), "delegate", json!({"action": "history"})).await;
    assert_eq!(history["delegations"][0]["id"], done["id"], "{history}");
    // The links are listed, and deleted by a person; then delegating is refused again.
    let links = app
        .get("/api/v1/agent-links")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(links["count"], 1, "{links}");
    let id = made["id"].as_str().unwrap();
    app.call(Method::DELETE, &format!("/api/v1/agent-links/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    let (refused, error) = call_as(
        &app,
        Some("lead"),
        "delegate",
        json!({"agent": "billing", "task": "refund order 8"}),
    )
    .await;
    assert!(
        error && refused.to_string().contains("no agent link"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_reads_delegation_md_and_delegates_sync_and_async() {
    let (app, model) = setup().await;
    link(
        &app,
        json!({"from": "lead", "to": "billing", "direction": "bidirectional",
            "description": "refunds and invoices"}),
    )
    .await;
    let run = run_waited(&app, "lead", "DELEGATE billing sync: refund order 7").await;
    assert_eq!(run["status"], "completed", "{run}");
    let output = run["output"].as_str().unwrap();
    assert!(
        output.starts_with("after tool: ") && output.contains("done: refund order 7"),
        "{output}"
    );
    // The lead's context held DELEGATION.md naming its target; the target's run held its
    // own instructions and was given the task alone.
    let seen = model.bodies();
    let lead_system = seen[0]["messages"][0]["content"].as_str().unwrap();
    assert!(
        lead_system.contains("## DELEGATION.md")
            && lead_system.contains(
                "`billing` (Billing): Refunds, invoices and payments. — refunds and invoices"
            ),
        "{lead_system}"
    );
    let billing_system = seen[1]["messages"][0]["content"].as_str().unwrap();
    assert!(
        billing_system.starts_with("Refunds, invoices"),
        "{billing_system}"
    );
    assert_eq!(
        seen[1]["messages"][1]["content"],
        "[a task delegated to you by agent 'lead']\nrefund order 7"
    );
    // Async: the run goes on, and the result is announced in its next turn (it waits for it).
    let run = run_waited(&app, "lead", "DELEGATE billing async: invoice 12").await;
    assert_eq!(run["status"], "completed", "{run}");
    let output = run["output"].as_str().unwrap();
    assert!(
        output.starts_with("lead got: [delegate:dlg_")
            && output.contains("to 'billing' completed]\ndone: invoice 12"),
        "{output}"
    );
    let listed = app
        .get("/api/v1/delegations?agent=billing")
        .await
        .assert_ok(StatusCode::OK);
    let modes: Vec<&str> = listed["delegations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["async", "sync"], "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegations_are_capped_per_link_and_a_cancel_frees_the_place() {
    let (app, _model) = setup().await;
    link(
        &app,
        json!({"from": "lead", "to": "billing", "maxConcurrent": 1}),
    )
    .await;
    let (first, error) = call_as(
        &app,
        Some("lead"),
        "delegate",
        json!({"agent": "billing", "task": "HANG forever", "mode": "async"}),
    )
    .await;
    assert!(!error, "{first}");
    assert_eq!(first["status"], "running", "{first}");
    let (full, error) = call_as(
        &app,
        Some("lead"),
        "delegate",
        json!({"agent": "billing", "task": "another"}),
    )
    .await;
    assert!(error, "{full}");
    assert!(
        full.to_string().contains(
            "Link to 'billing' at capacity (1/1). Try a different agent or handle it yourself."
        ),
        "{full}"
    );
    let (running, _) = call_as(&app, Some("lead"), "delegate", json!({"action": "list"})).await;
    assert_eq!(
        running["delegations"].as_array().unwrap().len(),
        1,
        "{running}"
    );
    let id = first["id"].as_str().unwrap();
    let (cancelled, error) = call_as(
        &app,
        Some("lead"),
        "delegate",
        json!({"action": "cancel", "id": id}),
    )
    .await;
    assert!(!error, "{cancelled}");
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    delegation_until(&app, id, |d| d["status"] == "cancelled").await;
    let (again, error) = call_as(
        &app,
        Some("lead"),
        "delegate",
        json!({"agent": "billing", "task": "another"}),
    )
    .await;
    assert!(!error, "{again}");
    assert_eq!(again["result"], "done: another", "{again}");
    // The target's own load counts every source (maxDelegationLoad).
    let res = app
        .json(
            Method::PUT,
            "/api/v1/agents/billing",
            &json!({
                "name": "billing",
                "instructions": "Refunds.",
                "model": {"service": "local", "model": "test-model"},
                "limits": {"maxDelegationLoad": 1},
            }),
        )
        .await;
    let billing = res.assert_ok(StatusCode::OK);
    assert_eq!(billing["limits"]["maxDelegationLoad"], 1, "{billing}");
    link(
        &app,
        json!({"from": "writer", "to": "billing", "maxConcurrent": 5}),
    )
    .await;
    let (hanging, error) = call_as(
        &app,
        Some("lead"),
        "delegate",
        json!({"agent": "billing", "task": "HANG again", "mode": "async"}),
    )
    .await;
    assert!(!error, "{hanging}");
    let (busy, error) = call_as(
        &app,
        Some("writer"),
        "delegate",
        json!({"agent": "billing", "task": "from the writer"}),
    )
    .await;
    assert!(error, "{busy}");
    assert!(
        busy.to_string()
            .contains("Agent 'billing' at capacity (1/1)"),
        "{busy}"
    );
    let hanging = hanging["id"].as_str().unwrap();
    call_as(
        &app,
        None,
        "delegate",
        json!({"action": "cancel", "id": hanging}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegate_search_finds_the_linked_agent_that_fits_the_task() {
    let (app, _model) = setup().await;
    link(
        &app,
        json!({"from": "lead", "to": "billing", "description": "refunds and invoices"}),
    )
    .await;
    link(&app, json!({"from": "lead", "to": "writer"})).await;
    let (found, error) = call_as(
        &app,
        Some("lead"),
        "delegate_search",
        json!({"query": "refund an invoice"}),
    )
    .await;
    assert!(!error, "{found}");
    assert_eq!(found["targets"], 2, "{found}");
    assert_eq!(found["agents"][0]["agent"], "billing", "{found}");
    assert_eq!(found["agents"].as_array().unwrap().len(), 1, "{found}");
    // The critic is not linked: never found, whatever matches.
    let (none, _) = call_as(
        &app,
        Some("lead"),
        "delegate_search",
        json!({"query": "reviews drafts criteria"}),
    )
    .await;
    assert!(none["agents"].as_array().unwrap().is_empty(), "{none}");
    assert!(
        none["next"]
            .as_str()
            .unwrap()
            .contains("handle the task yourself"),
        "{none}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluate_loop_revises_until_the_evaluator_approves() {
    let (app, _model) = setup().await;
    link(&app, json!({"from": "lead", "to": "writer"})).await;
    link(&app, json!({"from": "lead", "to": "critic"})).await;
    let (result, error) = call_as(
        &app,
        Some("lead"),
        "evaluate_loop",
        json!({"generator": "writer", "evaluator": "critic",
            "task": "WRITE a product announcement", "criteria": "short, with pricing"}),
    )
    .await;
    assert!(!error, "{result}");
    assert_eq!(result["approved"], true, "{result}");
    assert_eq!(result["rounds"], 2, "{result}");
    assert_eq!(result["output"], "announcement v2", "{result}");
    assert_eq!(
        result["history"][0]["feedback"], "Too long, missing pricing",
        "{result}"
    );
    // One round is not enough: the last draft, not approved.
    let (one, error) = call_as(
        &app,
        Some("lead"),
        "evaluate_loop",
        json!({"generator": "writer", "evaluator": "critic", "maxRounds": 1,
            "task": "WRITE a product announcement", "criteria": "short, with pricing"}),
    )
    .await;
    assert!(!error, "{one}");
    assert_eq!(
        (&one["approved"], &one["output"]),
        (&json!(false), &json!("announcement v1"))
    );
    // At most 5 rounds; each round's delegations are recorded as the loop's.
    let (too_many, error) = call_as(
        &app,
        Some("lead"),
        "evaluate_loop",
        json!({"generator": "writer", "evaluator": "critic", "maxRounds": 6,
            "task": "WRITE", "criteria": "x"}),
    )
    .await;
    assert!(error, "{too_many}");
    let listed = app
        .get("/api/v1/delegations")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(listed["count"], 6, "{listed}");
    assert!(
        listed["delegations"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["mode"] == "evaluate"),
        "{listed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handoff_routes_the_sessions_next_messages_until_cleared() {
    let (app, model) = setup().await;
    // Without a link a handoff is refused like a delegation.
    let (first, error) = call_as(
        &app,
        None,
        "sessions_send",
        json!({"agent": "lead", "message": "HANDOFF billing: billing question"}),
    )
    .await;
    assert!(!error, "{first}");
    assert!(
        first["result"]
            .as_str()
            .unwrap()
            .contains("no agent link lets 'lead'"),
        "{first}"
    );
    link(&app, json!({"from": "lead", "to": "billing"})).await;
    let key = first["sessionKey"].as_str().unwrap().to_owned();
    let (handed, error) = call_as(
        &app,
        None,
        "sessions_send",
        json!({"sessionKey": key, "message": "HANDOFF billing: billing question"}),
    )
    .await;
    assert!(!error, "{handed}");
    assert!(
        handed["result"]
            .as_str()
            .unwrap()
            .contains("\"answeredBy\":\"billing\""),
        "{handed}"
    );
    // The next message goes to billing, in its own session, with the conversation so far.
    let (routed, error) = call_as(
        &app,
        None,
        "sessions_send",
        json!({"sessionKey": key, "message": "how much was it?"}),
    )
    .await;
    assert!(!error, "{routed}");
    assert_ne!(routed["sessionKey"], key, "{routed}");
    let billing = app
        .get("/api/v1/agents/billing")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(routed["agent"], billing["id"], "{routed}");
    let asked = model.last();
    let messages = asked["messages"].as_array().unwrap();
    let note = messages[1]["content"].as_str().unwrap();
    assert!(
        note.starts_with(
            "[this conversation was handed to you by agent 'lead'; reason: billing question]"
        ) && note.contains("user: HANDOFF billing: billing question"),
        "{note}"
    );
    assert!(
        asked["messages"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("Refunds"),
        "billing answers with its own instructions: {asked}"
    );
    // Cleared, the session's own agent answers again.
    let (cleared, error) = call_as(
        &app,
        None,
        "handoff",
        json!({"action": "clear", "sessionKey": key}),
    )
    .await;
    assert!(!error, "{cleared}");
    assert_eq!(cleared["answeredBy"], "lead", "{cleared}");
    let (back, error) = call_as(
        &app,
        None,
        "sessions_send",
        json!({"sessionKey": key, "message": "thanks"}),
    )
    .await;
    assert!(!error, "{back}");
    assert_eq!(back["sessionKey"], key, "{back}");
}

/// Issue 38's acceptance through the official MCP Python SDK
/// (`tests/clients/mcp_agents_together.py`): every action of `delegate`, `delegate_search`,
/// `evaluate_loop`, `handoff`, `team_tasks` and `team_message`, called over MCP (2025-11-25,
/// streamable HTTP) by a person and by the agents (`X-Toolsmith-Agent`), against this module's
/// model server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_drives_every_delegation_and_team_tool() {
    use crate::mcp_support::{prerequisite, python, run_client};
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let (app, _model) = setup().await;
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/teams",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let policy = json!({"allow": ["group:delegation", "group:sessions", "group:teams"]});
    let lead = app
        .json(
            Method::PUT,
            "/api/v1/agents/lead",
            &json!({
                "name": "lead",
                "displayName": "Lead",
                "instructions": "You lead: answer the user, delegate what others do better.",
                "model": {"service": "local", "model": "test-model"},
                "toolPolicy": policy,
            }),
        )
        .await
        .assert_ok(StatusCode::OK);
    let mut ids = vec![lead["id"].as_str().unwrap().to_owned()];
    for name in ["alice", "bob"] {
        let agent = app
            .post(
                "/api/v1/agents",
                &json!({
                    "name": name,
                    "instructions": format!("You are {name}."),
                    "model": {"service": "local", "model": "test-model"},
                    "toolPolicy": policy,
                }),
            )
            .await
            .assert_ok(StatusCode::CREATED);
        ids.push(agent["id"].as_str().unwrap().to_owned());
    }
    link(
        &app,
        json!({"from": "lead", "to": "billing", "description": "refunds and invoices"}),
    )
    .await;
    link(&app, json!({"from": "lead", "to": "writer"})).await;
    link(&app, json!({"from": "lead", "to": "critic"})).await;
    app.post(
        "/api/v1/teams",
        &json!({"name": "research", "lead": "lead", "members": ["alice", "bob"]}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let server = serve_loopback(app.router.clone()).await;
    let mut args = vec![
        "mcp_agents_together.py".to_owned(),
        "--url".to_owned(),
        format!("http://{server}/mcp"),
    ];
    for (flag, id) in ["--lead", "--alice", "--bob"].into_iter().zip(&ids) {
        args.extend([flag.to_owned(), id.clone()]);
    }
    let report = run_client("mcp_agents_together.py", &python(), &args, &[]).await;
    eprintln!("{report:#}");
    let listed = |key: &str| -> Vec<String> {
        report[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_owned())
            .collect()
    };
    let (tools, person_tools) = (listed("tools"), listed("personTools"));
    for tool in [
        "delegate",
        "delegate_search",
        "evaluate_loop",
        "handoff",
        "team_tasks",
        "team_message",
    ] {
        assert!(
            tools.iter().any(|t| t == tool),
            "{tool} not listed: {tools:?}"
        );
        assert!(
            person_tools.iter().any(|t| t == tool),
            "{tool} not listed for the person: {person_tools:?}"
        );
    }
    let value = |name: &str| {
        assert_eq!(report[name]["isError"], false, "{name}: {}", report[name]);
        report[name]["value"].clone()
    };
    let refusal = |name: &str| {
        assert_eq!(report[name]["isError"], true, "{name}: {}", report[name]);
        report[name]["value"].to_string()
    };

    // delegate: no link, no delegation, and the refusal names the link to create.
    let no_link = refusal("noLink");
    assert!(
        no_link.contains("no agent link lets 'lead' delegate to 'alice'")
            && no_link.contains("POST /api/v1/agent-links")
            && no_link.contains("toolsmith agent link lead alice"),
        "{no_link}"
    );
    // Sync: the answer in the result.
    let sync = value("sync");
    assert_eq!(
        (&sync["status"], &sync["mode"], &sync["from"], &sync["to"]),
        (
            &json!("completed"),
            &json!("sync"),
            &json!("lead"),
            &json!("billing")
        ),
        "{sync}"
    );
    assert_eq!(sync["result"], "done: refund order 7", "{sync}");
    // Async: answered at once, the result announced on the session.
    let started = value("async");
    assert_eq!(
        (&started["status"], &started["mode"]),
        (&json!("running"), &json!("async")),
        "{started}"
    );
    let announced = &report["asyncNotified"]["data"];
    assert_eq!(announced["status"], "completed", "{report:#}");
    assert_eq!(announced["result"], "done: invoice 12", "{report:#}");
    assert_eq!(
        announced["id"],
        format!("delegate:{}", started["id"].as_str().unwrap())
    );
    // list holds the running one; cancel stops it (announced too); list is then empty.
    let hanging = value("hanging");
    assert_eq!(hanging["status"], "running", "{hanging}");
    let running = value("list")["delegations"].as_array().unwrap().clone();
    assert_eq!(running.len(), 1, "{running:?}");
    assert_eq!(
        (&running[0]["id"], &running[0]["status"]),
        (&hanging["id"], &json!("running"))
    );
    let cancelled = value("cancel");
    assert_eq!(
        (&cancelled["id"], &cancelled["status"]),
        (&hanging["id"], &json!("cancelled")),
        "{cancelled}"
    );
    assert_eq!(
        report["cancelNotified"]["data"]["status"], "cancelled",
        "{report:#}"
    );
    assert_eq!(value("listAfterCancel")["delegations"], json!([]));
    // history: every one, newest first, with how it ended.
    let history = value("history")["delegations"].as_array().unwrap().clone();
    let ended: Vec<(&Value, &Value, &Value)> = history
        .iter()
        .map(|d| (&d["id"], &d["status"], &d["result"]))
        .collect();
    assert_eq!(
        ended,
        [
            (&hanging["id"], &json!("cancelled"), &Value::Null),
            (
                &started["id"],
                &json!("completed"),
                &json!("done: invoice 12")
            ),
            (
                &sync["id"],
                &json!("completed"),
                &json!("done: refund order 7")
            ),
        ],
        "{history:?}"
    );

    // delegate_search: the linked agent that fits, alone.
    let found = value("search");
    assert_eq!(found["targets"], 3, "{found}");
    let agents = found["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 1, "{found}");
    assert_eq!(agents[0]["agent"], "billing", "{found}");

    // evaluate_loop: APPROVED in the first round; REJECTED, revised, then APPROVED.
    let one = value("loopOneRound");
    assert_eq!(
        (&one["approved"], &one["rounds"], &one["output"]),
        (
            &json!(true),
            &json!(1),
            &json!("done: Polish announcement v2")
        ),
        "{one}"
    );
    assert_eq!(one["history"][0]["verdict"], "approved", "{one}");
    let two = value("loopTwoRounds");
    assert_eq!(
        (&two["approved"], &two["rounds"], &two["output"]),
        (&json!(true), &json!(2), &json!("announcement v2")),
        "{two}"
    );
    assert_eq!(
        (
            &two["history"][0]["verdict"],
            &two["history"][0]["feedback"]
        ),
        (&json!("rejected"), &json!("Too long, missing pricing")),
        "{two}"
    );
    assert_eq!(two["history"][1]["verdict"], "approved", "{two}");

    // handoff: the session's next message is billing's, in its own session, until cleared.
    let first = value("sessionFirst");
    assert_eq!(first["result"], "echo: hello (history 2)", "{first}");
    let key = first["sessionKey"].clone();
    let handed = value("handoff");
    assert_eq!(
        (
            &handed["event"],
            &handed["from"],
            &handed["answeredBy"],
            &handed["carriedMessages"]
        ),
        (
            &json!("handoff"),
            &json!("lead"),
            &json!("billing"),
            &json!(2)
        ),
        "{handed}"
    );
    let routed = value("routed");
    assert_eq!(routed["sessionKey"], handed["targetSession"], "{routed}");
    assert_ne!(routed["sessionKey"], key, "{routed}");
    assert_eq!(
        routed["result"], "echo: how much was it? (history 3)",
        "{routed}"
    );
    let cleared = value("clear");
    assert_eq!(
        (&cleared["event"], &cleared["answeredBy"]),
        (&json!("handoff_cleared"), &json!("lead")),
        "{cleared}"
    );
    let back = value("back");
    assert_eq!(back["sessionKey"], key, "{back}");
    assert_eq!(back["result"], "echo: thanks (history 4)", "{back}");

    // team_tasks: create with priority and blocked_by, list, claim once, complete unblocking,
    // search.
    let (first_task, second_task) = (&report["ids"]["firstTask"], &report["ids"]["secondTask"]);
    let created = value("taskCreate");
    assert_eq!(
        (&created["task"]["status"], &created["task"]["priority"]),
        (&json!("pending"), &json!(5.0)),
        "{created}"
    );
    let blocked = value("taskCreateBlocked");
    assert_eq!(
        (&blocked["task"]["status"], &blocked["task"]["blocked_by"]),
        (&json!("blocked"), &json!([first_task])),
        "{blocked}"
    );
    let board = value("taskList");
    let order: Vec<&Value> = board["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["id"])
        .collect();
    assert_eq!(order, [first_task, second_task], "{board}");
    let claimed = value("taskClaim");
    assert_eq!(
        (&claimed["task"]["status"], &claimed["task"]["claimedBy"]),
        (&json!("in_progress"), &json!("alice")),
        "{claimed}"
    );
    let taken = refusal("taskClaimTaken");
    assert!(taken.contains("already claimed by alice"), "{taken}");
    let waiting = refusal("taskClaimBlocked");
    assert!(waiting.contains("blocked until"), "{waiting}");
    let done = value("taskComplete");
    assert_eq!(done["task"]["status"], "completed", "{done}");
    assert_eq!(done["unblocked"], json!([second_task]), "{done}");
    let unblocked = value("taskClaimUnblocked");
    assert_eq!(unblocked["task"]["claimedBy"], "bob", "{unblocked}");
    let completed = value("taskListCompleted");
    assert_eq!(
        completed["tasks"][0]["result"], "A 10, B 12, C 9",
        "{completed}"
    );
    let found = value("taskSearch");
    assert_eq!(found["tasks"][0]["id"], *first_task, "{found}");

    // team_message: send wakes the teammate; read delivers once; broadcast reaches all others.
    let sent = value("messageSend");
    assert_eq!(sent["sent"][0]["to"], "alice", "{sent}");
    assert!(sent["sent"][0]["run"].is_string(), "{sent}");
    let read = value("messageRead");
    assert_eq!(
        (&read["messages"][0]["text"], &read["messages"][0]["from"]),
        (&json!("claim the pricing task"), &json!("lead")),
        "{read}"
    );
    assert_eq!(read["messages"].as_array().unwrap().len(), 1, "{read}");
    assert_eq!(value("messageReadAgain")["messages"], json!([]));
    let broadcast = value("messageBroadcast");
    let to: Vec<&Value> = broadcast["sent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["to"])
        .collect();
    assert_eq!(to, [&json!("lead"), &json!("bob")], "{broadcast}");
    let heard = value("messageReadBroadcast");
    assert_eq!(
        (
            &heard["messages"][0]["text"],
            &heard["messages"][0]["from"],
            &heard["messages"][0]["broadcast"]
        ),
        (&json!("prices are in"), &json!("alice"), &json!(true)),
        "{heard}"
    );
}
