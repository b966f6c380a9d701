//! The scheduled tasks over REST (`/api/v1/scheduled-tasks…`) through the real router with
//! bearer tokens: a task made, read, paused, run by hand and deleted with the scheduler
//! tools' checks; the scopes a task's calls need; bad input named; and no user's (or agent's)
//! tasks or runs reachable by another.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_server::auth::Scope;

use crate::rest_data::{Caller, caller, caller_with};
use crate::rest_support::TestApp;

const TASKS: &str = "/api/v1/scheduled-tasks";

fn daily(expression: &str) -> Value {
    json!({
        "name": "daily sum",
        "schedule": "0 9 * * *",
        "timezone": "Europe/Paris",
        "tool": "calculate",
        "arguments": {"expression": expression},
    })
}

async fn create(who: &Caller<'_>, body: &Value) -> String {
    let made = who
        .send(Method::POST, TASKS, Some(body))
        .await
        .assert_ok(StatusCode::CREATED);
    made["task"]["id"].as_str().expect("an id").to_owned()
}

async fn switch_scheduler(admin: &Caller<'_>, on: bool) {
    admin
        .send(
            Method::PUT,
            "/api/v1/tool-groups/scheduler",
            Some(&json!({"enabled": on})),
        )
        .await
        .assert_ok(StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_made_read_paused_run_and_deleted_over_rest() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let admin = caller_with(&app, "root", None, &[Scope::Admin]).await;
    let id = create(&alice, &daily("6 * 7")).await;
    let path = format!("{TASKS}/{id}");

    let one = alice.get(&path).await.assert_ok(StatusCode::OK);
    assert_eq!(one["task"]["tool"], "calculate", "{one}");
    assert_eq!(one["task"]["timezone"], "Europe/Paris", "{one}");
    assert!(one["task"]["nextRunAt"].is_string(), "{one}");
    let list = alice.get(TASKS).await.assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 1, "{list}");
    assert_eq!(list["tasks"][0]["id"], json!(id));

    // Paused: no next run, and listed as paused.
    let paused = alice
        .send(Method::PATCH, &path, Some(&json!({"enabled": false})))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(paused["task"]["status"], "paused", "{paused}");
    let listed = alice
        .get(&format!("{TASKS}?status=paused&limit=5"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(listed["count"], 1, "{listed}");

    // Run by hand: refused while the group is off, naming how to switch it on; then a
    // real call of the tool, kept in the history.
    let trigger = format!("{path}/trigger");
    let off = alice
        .send(Method::POST, &trigger, None)
        .await
        .assert_error(StatusCode::CONFLICT, "invalid_state");
    assert!(off.contains("/api/v1/tool-groups/scheduler"), "{off}");
    switch_scheduler(&admin, true).await;
    let ran = alice
        .send(Method::POST, &trigger, None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ran["success"], true, "{ran}");
    assert!(ran["run"]["result"].to_string().contains("42"), "{ran}");
    let runs = alice
        .get(&format!("{path}/runs?limit=5"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(runs["count"], 1, "{runs}");
    assert_eq!(runs["runs"][0]["status"], "success", "{runs}");
    // What REST made, the tools see.
    let history = app
        .state
        .service
        .execute(
            "get_task_history",
            json!({"taskId": id}),
            toolsmith_core::ToolContext::new("alice"),
        )
        .await;
    assert!(!history.is_error, "{:?}", history.content);
    assert_eq!(history.content["count"], 1);

    let gone = alice
        .send(Method::DELETE, &path, None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(gone["deletedRuns"], 1, "{gone}");
    alice
        .get(&path)
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tasks_and_queries_are_refused_with_the_fix_named() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    for (body, needle) in [
        (
            json!({"name": "x", "schedule": "61 * * * *", "tool": "calculate"}),
            "cron",
        ),
        (
            json!({"name": "x", "schedule": "0 9 * *", "tool": "calculate"}),
            "5",
        ),
        (
            json!({"name": "x", "schedule": "@daily", "tool": "no_such_tool"}),
            "no_such_tool",
        ),
        (
            json!({"name": "x", "schedule": "@daily", "tool": "trigger_task"}),
            "scheduler",
        ),
        (
            json!({"name": "x", "schedule": "@daily", "tool": "calculate", "timezone": "Mars/Olympus"}),
            "IANA",
        ),
        (json!({"schedule": "@daily", "tool": "calculate"}), "name"),
        (
            json!({"name": "x", "schedule": "@daily", "tool": "calculate", "cronn": "typo"}),
            "cronn",
        ),
        (
            json!({"name": "x", "schedule": "@daily", "tool": "calculate", "missedRuns": "all"}),
            "missedRuns",
        ),
        (
            json!({"name": "x".repeat(100_000), "schedule": "@daily", "tool": "calculate"}),
            "name",
        ),
    ] {
        let res = alice.send(Method::POST, TASKS, Some(&body)).await;
        assert_eq!(res.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", res.text);
        assert!(
            res.text.contains(needle),
            "{needle} not named in {}",
            res.text
        );
    }
    for (query, status) in [
        ("?limit=abc", StatusCode::BAD_REQUEST),
        ("?limit=51", StatusCode::UNPROCESSABLE_ENTITY),
        ("?status=sleeping", StatusCode::UNPROCESSABLE_ENTITY),
        ("?sort=name", StatusCode::BAD_REQUEST),
        ("?limit=1&limit=2", StatusCode::BAD_REQUEST),
    ] {
        let res = alice.get(&format!("{TASKS}{query}")).await;
        assert_eq!(res.status, status, "{query}: {}", res.text);
    }
    let res = alice
        .send(Method::POST, TASKS, Some(&json!(["not", "an", "object"])))
        .await;
    assert!(res.status.is_client_error(), "{}", res.text);
    let list = alice.get(TASKS).await.assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 0, "nothing half-made was kept: {list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_may_not_call_tools_may_not_schedule_calls_either() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let id = create(&alice, &daily("1 + 1")).await;
    let path = format!("{TASKS}/{id}");
    let writer = caller_with(&app, "alice", None, &[Scope::ToolsRead, Scope::ToolsWrite]).await;
    let reader = caller_with(&app, "alice", None, &[Scope::ToolsRead]).await;
    for who in [&writer, &reader] {
        who.send(Method::POST, TASKS, Some(&daily("2")))
            .await
            .assert_error(StatusCode::FORBIDDEN, "forbidden");
        who.send(Method::PATCH, &path, Some(&json!({"enabled": false})))
            .await
            .assert_error(StatusCode::FORBIDDEN, "forbidden");
        who.send(Method::POST, &format!("{path}/trigger"), None)
            .await
            .assert_error(StatusCode::FORBIDDEN, "forbidden");
        // Reading is what tools:read is for.
        who.get(&path).await.assert_ok(StatusCode::OK);
    }
    reader
        .send(Method::DELETE, &path, None)
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    writer
        .send(Method::DELETE, &path, None)
        .await
        .assert_ok(StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_route_shows_or_touches_another_users_or_agents_tasks() {
    let app = TestApp::new().await;
    let admin = caller_with(&app, "root", None, &[Scope::Admin]).await;
    switch_scheduler(&admin, true).await;
    let alice = caller(&app, "alice", None).await;
    let id = create(&alice, &daily("2 + 2")).await;
    alice
        .send(Method::POST, &format!("{TASKS}/{id}/trigger"), None)
        .await
        .assert_ok(StatusCode::OK);
    let bob = caller(&app, "bob", None).await;
    let alices_agent = caller(&app, "alice", Some("agent-1")).await;
    for other in [&bob, &alices_agent] {
        let list = other.get(TASKS).await.assert_ok(StatusCode::OK);
        assert_eq!(list["count"], 0, "{list}");
        let path = format!("{TASKS}/{id}");
        for (method, path, body) in [
            (Method::GET, path.clone(), None),
            (Method::PATCH, path.clone(), Some(json!({"enabled": false}))),
            (Method::GET, format!("{path}/runs"), None),
            (Method::POST, format!("{path}/trigger"), None),
            (Method::DELETE, path.clone(), None),
        ] {
            let res = other.send(method.clone(), &path, body.as_ref()).await;
            res.assert_error(StatusCode::NOT_FOUND, "not_found");
            assert!(!res.text.contains("2 + 2"), "{}", res.text);
        }
    }
    // Still there, untouched, with its one run.
    let runs = alice
        .get(&format!("{TASKS}/{id}/runs"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(runs["count"], 1, "{runs}");
    let one = alice
        .get(&format!("{TASKS}/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(one["task"]["enabled"], true, "{one}");
}

/// Issue 31: the cap of 100 tasks is one user's, whatever agent each task was made as (the
/// agent of a person's token is any header value): 100 made as four agents, then none more —
/// as a fifth agent or as the person — while another user still may.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_task_cap_is_one_users_across_all_their_agents() {
    let app = TestApp::new().await;
    let agents = ["agent-0", "agent-1", "agent-2", "agent-3"];
    let mut as_agents = Vec::new();
    for agent in agents {
        as_agents.push(caller(&app, "alice", Some(agent)).await);
    }
    for i in 0..100 {
        create(&as_agents[i % agents.len()], &daily("1 + 1")).await;
    }
    let fifth = caller(&app, "alice", Some("agent-4")).await;
    let person = caller(&app, "alice", None).await;
    for who in [&fifth, &person] {
        let refused = who
            .send(Method::POST, TASKS, Some(&daily("1 + 1")))
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(
            refused.contains("100 scheduled tasks across all your agents"),
            "{refused}"
        );
        assert!(refused.contains("delete_scheduled_task"), "{refused}");
    }
    let bob = caller(&app, "bob", None).await;
    create(&bob, &daily("1 + 1")).await;
}

/// Issue 31: a scheduled run cannot make tasks, not even through a custom tool that calls
/// `create_scheduled_task` (2 → 4 → 8 a minute otherwise); the run's history says why. The
/// same tool called by the person outside a run still may.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_run_cannot_create_tasks_through_the_tool_it_runs() {
    let app = TestApp::new().await;
    let admin = caller_with(&app, "root", None, &[Scope::Admin]).await;
    switch_scheduler(&admin, true).await;
    let alice = caller(&app, "alice", None).await;
    alice
        .send(
            Method::POST,
            "/api/v1/custom-tools",
            Some(&json!({
                "name": "spawner",
                "description": "schedules a copy of itself",
                "parameters": {"type": "object"},
                "code": "return await utils.callTool('create_scheduled_task', \
                         {name: 'copy', schedule: '* * * * *', tool: 'spawner'});",
            })),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let id = create(
        &alice,
        &json!({"name": "spawn", "schedule": "* * * * *", "tool": "spawner"}),
    )
    .await;
    let run = alice
        .send(Method::POST, &format!("{TASKS}/{id}/trigger"), None)
        .await
        .assert_ok(StatusCode::OK);
    assert_ne!(run["run"]["status"], "success", "{run}");
    let error = run["run"]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("cannot create, change or trigger scheduled tasks"),
        "{run}"
    );
    let list = alice.get(TASKS).await.assert_ok(StatusCode::OK);
    assert_eq!(list["total"], 1, "no task was made by the run: {list}");
    // Outside a run, the person's call of the same tool makes its task.
    alice
        .send(
            Method::POST,
            "/api/v1/tools/spawner/execute",
            Some(&json!({"arguments": {}})),
        )
        .await
        .assert_ok(StatusCode::OK);
    let list = alice.get(TASKS).await.assert_ok(StatusCode::OK);
    assert_eq!(list["total"], 2, "{list}");
}

/// Issue 31: a task made by an agent's own token is shown to the agent's person (their list
/// shows every agent's tasks, each with its `agent`) and to an admin (`?user=`); once the
/// agent's token is revoked, its next run does not happen: the history says why, and the task
/// is paused with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_tasks_are_shown_to_its_person_and_admins_and_stop_when_its_token_goes() {
    let app = TestApp::new().await;
    let admin = caller_with(&app, "root", None, &[Scope::Admin]).await;
    switch_scheduler(&admin, true).await;
    let made = admin
        .send(
            Method::POST,
            "/api/v1/tokens",
            Some(&json!({"name": "bot", "userId": "alice", "agentId": "bot",
                         "scopes": ["tools:read", "tools:write", "tools:execute"]})),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let (bot_token, token_id) = (
        made["token"].as_str().expect("a token").to_owned(),
        made["id"].as_str().expect("an id").to_owned(),
    );
    let created = app
        .send(
            crate::rest_support::request(Method::POST, TASKS)
                .header("authorization", format!("Bearer {bot_token}"))
                .header("content-type", "application/json")
                .body(axum::body::Body::from(
                    json!({"name": "poll", "schedule": "* * * * *", "tool": "calculate",
                           "arguments": {"expression": "1 + 1"}})
                    .to_string(),
                ))
                .expect("request"),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let id = created["task"]["id"].as_str().expect("an id").to_owned();

    // Seen by the person, and by an admin asking for that user, with the agent named.
    let alice = caller(&app, "alice", None).await;
    let mine = alice.get(TASKS).await.assert_ok(StatusCode::OK);
    assert_eq!(mine["total"], 1, "{mine}");
    assert_eq!(mine["tasks"][0]["id"], json!(id), "{mine}");
    assert_eq!(mine["tasks"][0]["agent"], "bot", "{mine}");
    let seen = admin
        .get(&format!("{TASKS}?user=alice"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(seen["tasks"][0]["agent"], "bot", "{seen}");
    alice
        .get(&format!("{TASKS}?user=bob"))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");

    // The agent's token is revoked: its next run is refused and the task paused.
    admin
        .send(Method::DELETE, &format!("/api/v1/tokens/{token_id}"), None)
        .await;
    let next: chrono::DateTime<chrono::Utc> = mine["tasks"][0]["nextRunAt"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("a next run");
    let scheduler = app.state.service.scheduler().expect("a scheduler");
    for run in scheduler.tick(next).await.expect("a tick") {
        run.await.expect("the run");
    }
    let after = alice.get(TASKS).await.assert_ok(StatusCode::OK);
    let task = &after["tasks"][0];
    assert_eq!(task["status"], "paused", "{after}");
    assert_eq!(task["runCount"], 0, "the tool never ran: {after}");
    let why = task["lastStatus"].as_str().unwrap_or_default();
    assert!(why.contains("no API token any more"), "{after}");
    let as_bot = caller(&app, "alice", Some("bot")).await;
    let runs = as_bot
        .get(&format!("{TASKS}/{id}/runs"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(runs["runs"][0]["status"], "denied", "{runs}");
    assert!(
        runs["runs"][0]["error"]
            .as_str()
            .unwrap_or_default()
            .contains("revoked"),
        "{runs}"
    );
}
