//! Agent teams (issue 38, spec 001 §8): a person makes a team over REST; its agents share a
//! task board (`team_tasks`) and a mailbox (`team_message`), called over REST as the agents
//! (`X-Toolsmith-Agent`) and from inside their runs, against a model server the test starts on
//! 127.0.0.1 (OpenAI-compatible): `CALL <tool> <json>` makes that tool call, a team message is
//! answered "on it: …", a teammate's answer routed back is answered "lead got: …", anything
//! else is echoed. Every request is kept, so the test reads the system prompts (`TEAM.md`).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{Method, StatusCode};
use axum::routing::post;
use serde_json::{Value, json};
use toolsmith_server::auth::Scope;

use crate::rest_support::{TestApp, request, serve_loopback, settings_reaching};

#[derive(Clone, Default)]
struct Model {
    seen: Arc<Mutex<Vec<Value>>>,
}

fn answer_with(message: Value, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-t", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })
}

async fn answer(State(model): State<Model>, body: String) -> axum::response::Response {
    use axum::response::IntoResponse;
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    model.seen.lock().unwrap().push(body.clone());
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    let text = last["content"].as_str().unwrap_or_default().to_owned();
    let say = |text: String| answer_with(json!({"role": "assistant", "content": text}), "stop");
    let reply = if last["role"] == "tool" {
        say(format!("after tool: {text}"))
    } else if let Some(call) = text.strip_prefix("CALL ") {
        let (tool, args) = call.split_once(' ').unwrap_or((call, "{}"));
        answer_with(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_0", "type": "function",
                "function": {"name": tool, "arguments": args}}]}),
            "tool_calls",
        )
    } else if text.starts_with("[Team message from") {
        say(format!("on it: {text}"))
    } else if text.starts_with("[teammate:") {
        say(format!("lead got: {text}"))
    } else {
        say(format!("echo: {text}"))
    };
    (
        StatusCode::OK,
        [("content-type", "application/json")],
        reply.to_string(),
    )
        .into_response()
}

/// The system prompt of the first request whose first user message is `input`.
fn system_of(model: &Model, input: &str) -> String {
    let seen = model.seen.lock().unwrap();
    let request = seen
        .iter()
        .find(|r| {
            r["messages"]
                .as_array()
                .and_then(|m| m.iter().find(|m| m["role"] == "user"))
                .is_some_and(|m| m["content"] == input)
        })
        .unwrap_or_else(|| panic!("no request began with {input:?}"));
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// An app with the `teams` group on, the model service `local` and the agents `lead`,
/// `alice`, `bob` (the team's) and `outsider`, each allowed the team tools. Their ids by name.
async fn setup() -> (TestApp, Model, std::collections::HashMap<String, String>) {
    let model = Model::default();
    let router = Router::new()
        .route("/v1/chat/completions", post(answer))
        .with_state(model.clone());
    let host = serve_loopback(router).await;
    let app = TestApp::with_configs(settings_reaching(&host), Default::default()).await;
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/teams",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    app.post(
        "/api/v1/config/services",
        &json!({"name": "local", "fields": [
            {"name": "protocol", "kind": "text", "required": true},
            {"name": "base_url", "kind": "url"},
            {"name": "api_key", "kind": "secret"},
        ]}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    app.post(
        "/api/v1/config/services/local/entries",
        &json!({"values": {"protocol": "openai", "base_url": format!("http://{host}/v1"),
            "api_key": "none"}}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let mut ids = std::collections::HashMap::new();
    for name in ["lead", "alice", "bob", "outsider"] {
        let agent = app
            .post(
                "/api/v1/agents",
                &json!({
                    "name": name,
                    "instructions": format!("You are {name}."),
                    "model": {"service": "local", "model": "test-model"},
                    "toolPolicy": {"allow": ["group:teams"]},
                }),
            )
            .await
            .assert_ok(StatusCode::CREATED);
        ids.insert(name.to_owned(), agent["id"].as_str().unwrap().to_owned());
    }
    (app, model, ids)
}

/// Calls `tool` over REST as the agent `agent` (an id), with `auth` if given; its result and
/// whether it is an error.
async fn call_as(
    app: &TestApp,
    agent: &str,
    auth: Option<&str>,
    tool: &str,
    args: Value,
) -> (Value, bool) {
    let mut req = request(Method::POST, &format!("/api/v1/tools/{tool}/execute"))
        .header("content-type", "application/json")
        .header("x-toolsmith-agent", agent);
    if let Some(auth) = auth {
        req = req.header("authorization", auth);
    }
    let res = app
        .send(
            req.body(axum::body::Body::from(
                json!({"arguments": args}).to_string(),
            ))
            .unwrap(),
        )
        .await;
    let data = &res.json["data"];
    let error = data["isError"]
        .as_bool()
        .unwrap_or(res.status != StatusCode::OK);
    let content = if data.is_null() {
        res.json.clone()
    } else {
        data["result"].clone()
    };
    (content, error)
}

fn text(value: &Value) -> String {
    value.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teams_board_is_claimed_once_unblocks_in_order_and_is_read_by_its_person_alone() {
    let (app, _model, ids) = setup().await;
    let (lead, alice, bob, outsider) = (&ids["lead"], &ids["alice"], &ids["bob"], &ids["outsider"]);
    // A person makes the team; an agent may not.
    let mut req = crate::rest_support::json_request(
        Method::POST,
        "/api/v1/teams",
        &json!({"name": "research", "lead": "lead", "members": ["alice"]}),
    );
    req.headers_mut()
        .insert("x-toolsmith-agent", lead.parse().unwrap());
    let refused = app.send(req).await;
    refused.assert_error(StatusCode::FORBIDDEN, "forbidden");
    let team = app
        .post(
            "/api/v1/teams",
            &json!({"name": "research", "description": "Finds things out.",
                "lead": "lead", "members": ["alice", bob]}),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(team["lead"]["id"], lead.as_str(), "{team}");
    assert_eq!(team["members"][1]["name"], "bob", "{team}");
    app.post(
        "/api/v1/teams",
        &json!({"name": "research", "lead": "lead", "members": ["bob"]}),
    )
    .await
    .assert_error(StatusCode::CONFLICT, "name_taken");
    let unknown = app
        .post(
            "/api/v1/teams",
            &json!({"name": "other", "lead": "lead", "members": ["nobody"]}),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.text);

    // The lead posts two tasks, the second waiting for the first.
    let (first, error) = call_as(
        &app,
        lead,
        None,
        "team_tasks",
        json!({"action": "create", "subject": "Collect the prices", "description": "Of the three vendors.", "priority": 5}),
    )
    .await;
    assert!(!error, "{first}");
    let first_id = first["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(first["task"]["status"], "pending", "{first}");
    let (second, error) = call_as(
        &app,
        lead,
        None,
        "team_tasks",
        json!({"action": "create", "subject": "Compare them", "blocked_by": [first_id]}),
    )
    .await;
    assert!(!error, "{second}");
    let second_id = second["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(second["task"]["status"], "blocked", "{second}");
    // `X-Toolsmith-Agent` may name the agent by name, as for delegation: the same board.
    let (listed, error) =
        call_as(&app, "lead", None, "team_tasks", json!({"action": "list"})).await;
    assert!(!error, "{listed}");
    assert!(text(&listed).contains("Compare them"), "{listed}");

    // Alice claims the first; Bob cannot, and cannot claim the blocked one either.
    let (claimed, error) = call_as(
        &app,
        alice,
        None,
        "team_tasks",
        json!({"action": "claim", "task_id": first_id}),
    )
    .await;
    assert!(!error, "{claimed}");
    assert_eq!(claimed["task"]["claimedBy"], "alice", "{claimed}");
    let (again, error) = call_as(
        &app,
        bob,
        None,
        "team_tasks",
        json!({"action": "claim", "task_id": first_id}),
    )
    .await;
    assert!(
        error && text(&again).contains("already claimed by alice"),
        "{again}"
    );
    let (blocked, error) = call_as(
        &app,
        bob,
        None,
        "team_tasks",
        json!({"action": "claim", "task_id": second_id}),
    )
    .await;
    assert!(
        error && text(&blocked).contains("blocked until"),
        "{blocked}"
    );
    // Only the claimer completes; completing unblocks the second, which Bob then claims.
    let (not_his, error) = call_as(
        &app,
        bob,
        None,
        "team_tasks",
        json!({"action": "complete", "task_id": first_id, "result": "mine"}),
    )
    .await;
    assert!(
        error && text(&not_his).contains("not one you claimed"),
        "{not_his}"
    );
    let (done, error) = call_as(
        &app,
        alice,
        None,
        "team_tasks",
        json!({"action": "complete", "task_id": first_id, "result": "A 10, B 12, C 9"}),
    )
    .await;
    assert!(!error, "{done}");
    assert_eq!(done["unblocked"], json!([second_id]), "{done}");
    let (claimed, error) = call_as(
        &app,
        bob,
        None,
        "team_tasks",
        json!({"action": "claim", "task_id": second_id}),
    )
    .await;
    assert!(!error, "{claimed}");
    // Listing and searching.
    let (active, _) = call_as(&app, bob, None, "team_tasks", json!({"action": "list"})).await;
    assert_eq!(active["tasks"].as_array().unwrap().len(), 1, "{active}");
    let (completed, _) = call_as(
        &app,
        bob,
        None,
        "team_tasks",
        json!({"action": "list", "filter": "completed"}),
    )
    .await;
    assert_eq!(
        completed["tasks"][0]["result"], "A 10, B 12, C 9",
        "{completed}"
    );
    let (found, _) = call_as(
        &app,
        lead,
        None,
        "team_tasks",
        json!({"action": "search", "query": "vendors"}),
    )
    .await;
    assert_eq!(found["tasks"][0]["id"], first_id.as_str(), "{found}");

    // The mailbox: a broadcast reaches both teammates, each read delivers it once.
    let (sent, error) = call_as(
        &app,
        alice,
        None,
        "team_message",
        json!({"action": "broadcast", "text": "prices are in"}),
    )
    .await;
    assert!(!error, "{sent}");
    assert_eq!(sent["sent"].as_array().unwrap().len(), 2, "{sent}");
    let (read, _) = call_as(&app, bob, None, "team_message", json!({"action": "read"})).await;
    assert_eq!(read["messages"][0]["text"], "prices are in", "{read}");
    assert_eq!(read["messages"][0]["from"], "alice", "{read}");
    let (twice, _) = call_as(&app, bob, None, "team_message", json!({"action": "read"})).await;
    assert_eq!(twice["messages"], json!([]), "{twice}");

    // An agent of no team, and a name outside the team, are refused naming the fix.
    let (outside, error) = call_as(
        &app,
        outsider,
        None,
        "team_tasks",
        json!({"action": "list"}),
    )
    .await;
    assert!(
        error && text(&outside).contains("POST /api/v1/teams"),
        "{outside}"
    );
    let (stranger, error) = call_as(
        &app,
        lead,
        None,
        "team_message",
        json!({"action": "send", "to": "outsider", "text": "hi"}),
    )
    .await;
    assert!(
        error && text(&stranger).contains("not of team"),
        "{stranger}"
    );

    // The person reads the board: every task and the messages.
    let board = app
        .get("/api/v1/teams/research/board")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(board["tasks"].as_array().unwrap().len(), 2, "{board}");
    assert!(
        board["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["text"] == "prices are in" && m["to"] == "lead"),
        "{board}"
    );

    // Another user sees no team, no board, and their agents reach none of it.
    let mallory = app
        .token("mallory", None, &[Scope::ToolsRead, Scope::ToolsExecute])
        .await;
    let as_mallory = format!("Bearer {mallory}");
    let mut req = request(Method::GET, "/api/v1/teams")
        .header("authorization", as_mallory.as_str())
        .body(axum::body::Body::empty())
        .unwrap();
    let listed = app.send(req).await.assert_ok(StatusCode::OK);
    assert_eq!(listed["teams"], json!([]), "{listed}");
    req = request(Method::GET, "/api/v1/teams/research/board")
        .header("authorization", as_mallory.as_str())
        .body(axum::body::Body::empty())
        .unwrap();
    app.send(req)
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    let (theirs, error) = call_as(
        &app,
        lead,
        Some(&as_mallory),
        "team_tasks",
        json!({"action": "list"}),
    )
    .await;
    assert!(error && text(&theirs).contains("in no team"), "{theirs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_reads_team_md_wakes_a_teammate_and_synthesizes_its_answer() {
    let (app, model, ids) = setup().await;
    app.post(
        "/api/v1/teams",
        &json!({"name": "research", "lead": "lead", "members": ["alice", "bob"]}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let input =
        r#"CALL team_message {"action":"send","to":"alice","text":"claim the pricing task"}"#;
    let run = app
        .post(
            "/api/v1/agents/lead/runs",
            &json!({"input": input, "wait": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(run["status"], "completed", "{run}");
    // The lead waited for its teammate's answer and answered with it.
    assert_eq!(
        run["output"],
        "lead got: [teammate:alice] on it: [Team message from lead]: claim the pricing task",
        "{run}"
    );
    // Only the lead reads TEAM.md (§8): its teammates, by name.
    let lead_system = system_of(&model, input);
    assert!(
        lead_system.contains("## TEAM.md")
            && lead_system.contains("You lead the team 'research'")
            && lead_system.contains(&format!("- bob (agent id {})", ids["bob"])),
        "{lead_system}"
    );
    let alice_system = system_of(&model, "[Team message from lead]: claim the pricing task");
    assert!(!alice_system.contains("TEAM.md"), "{alice_system}");
    assert!(alice_system.contains("You are alice."), "{alice_system}");
    // The answer reached the lead's run, so its mailbox holds it as read; alice's message
    // waits unread in hers.
    let board = app
        .get("/api/v1/teams/research/board")
        .await
        .assert_ok(StatusCode::OK);
    let messages = board["messages"].as_array().unwrap();
    assert!(
        messages.iter().any(|m| m["from"] == "alice"
            && m["to"] == "lead"
            && m["read"] == true
            && m["text"].as_str().unwrap().starts_with("[teammate:alice]")),
        "{board}"
    );
    let (unread, _) = call_as(
        &app,
        &ids["alice"],
        None,
        "team_message",
        json!({"action": "read"}),
    )
    .await;
    assert_eq!(
        unread["messages"][0]["text"], "claim the pricing task",
        "{unread}"
    );
}
