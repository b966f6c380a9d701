//! Agent teams (issue 38, spec 001 §8): a person makes a team over REST; its agents share a
//! task board (`team_tasks`) and a mailbox (`team_message`), called over REST as the agents
//! (`X-Toolsmith-Agent`) and from inside their runs, against a model server the test starts on
//! 127.0.0.1 (OpenAI-compatible): `CALL <tool> <json>` makes that tool call, a team message is
//! answered "on it: …", a teammate's answer routed back is answered "lead got: …", anything
//! else is echoed. Every request is kept, so the test reads the system prompts (`TEAM.md`).

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_server::auth::Scope;

use crate::agent_support::{
    Proto, Reply, Script, agent_on_local, call_with, calls, configure, create_agent, enable_groups,
    last_message, model_server, says, system_prompt,
};
use crate::rest_support::{TestApp, request, settings_reaching};

/// The model's answer to the request `body` (the module's documentation tells how).
fn reply(body: &Value) -> Reply {
    let last = last_message(body);
    let text = last.text.as_str();
    if last.from_tool {
        says(&format!("after tool: {text}"))
    } else if let Some(call) = text.strip_prefix("CALL ") {
        let (tool, args) = call.split_once(' ').unwrap_or((call, "{}"));
        calls(tool, &serde_json::from_str(args).unwrap())
    } else if text.starts_with("[Team message from") {
        says(&format!("on it: {text}"))
    } else if text.starts_with("[teammate:") {
        says(&format!("lead got: {text}"))
    } else {
        says(&format!("echo: {text}"))
    }
}

/// The system prompt of the first request whose first user message is `input`.
fn system_of(model: &Script, input: &str) -> String {
    let request = model
        .bodies()
        .into_iter()
        .find(|r| {
            r["messages"]
                .as_array()
                .and_then(|m| m.iter().find(|m| m["role"] == "user"))
                .is_some_and(|m| m["content"] == input)
        })
        .unwrap_or_else(|| panic!("no request began with {input:?}"));
    system_prompt(&request)
}

/// An app with the `teams` group on, the model service `local` and the agents `lead`,
/// `alice`, `bob` (the team's) and `outsider`, each allowed the team tools. Their ids by name.
async fn setup() -> (TestApp, Script, std::collections::HashMap<String, String>) {
    let model = Script::replying(reply);
    let host = model_server(&model).await;
    let app = TestApp::with_configs(settings_reaching(&host), Default::default()).await;
    enable_groups(&app, &["teams"]).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    let mut ids = std::collections::HashMap::new();
    for name in ["lead", "alice", "bob", "outsider"] {
        let agent = create_agent(
            &app,
            &agent_on_local(name, &format!("You are {name}."), &["group:teams"]),
        )
        .await;
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
    let mut headers = vec![("x-toolsmith-agent", agent)];
    if let Some(auth) = auth {
        headers.push(("authorization", auth));
    }
    call_with(app, tool, args, &headers).await
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
