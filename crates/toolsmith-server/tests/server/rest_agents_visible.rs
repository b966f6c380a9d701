//! Everything an agent run does is visible (issue 37): a run's tokens and cost (at the
//! definition's `model.price`), a user's totals per agent (`GET /api/v1/metrics/agents`), the
//! runs, steps and tokens counted in `/metrics`, and the audit log's entries for definitions
//! written and runs started or cancelled. Against the scripted model server of `rest_agents`.

use std::time::Duration;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::agent_support::{
    Proto, Reply, Script, agent_body, answers, calls_shout, create_agent, metrics_until,
    run_waited, setup_helper, start_run,
};
use crate::rest_support::{TestApp, tool_body};

/// Two model turns of the scripted server (10 input and 5 output tokens each): a call of
/// `shout`, then the answer; the ended run.
async fn run_once(app: &TestApp, script: &Script, agent: &str) -> Value {
    script.push(calls_shout(Proto::OpenAi, false, "call_1", "hello"));
    script.push(answers(Proto::OpenAi, false, "I shouted HELLO."));
    run_waited(app, agent, "Shout hello.").await
}

fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 1e-12)
}

#[tokio::test]
async fn a_run_costs_its_tokens_at_the_models_price_and_usage_sums_them() {
    let (app, script, agent) = setup_helper(Proto::OpenAi, false, tool_body("shout")).await;
    // No price: tokens, and no cost.
    let first = run_once(&app, &script, &agent).await;
    assert_eq!(first["status"], "completed", "{first}");
    assert_eq!(first["usage"]["totalTokens"], 30, "{first}");
    assert!(first["usage"]["cost"].is_null(), "{first}");

    // A price in the definition: the next run costs its tokens at it.
    let mut priced = agent_body("helper");
    priced["model"]["price"] = json!({"inputPerMillion": 2.0, "outputPerMillion": 10.0});
    let revised = app
        .json(Method::PUT, &format!("/api/v1/agents/{agent}"), &priced)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        revised["model"]["price"]["outputPerMillion"], 10.0,
        "{revised}"
    );
    let second = run_once(&app, &script, &agent).await;
    // Two turns of 10 input and 5 output tokens: 2 × (10 × 2 + 5 × 10) / 1,000,000 dollars.
    assert!(close(&second["usage"]["cost"], 140.0 / 1e6), "{second}");
    let listed = app
        .get(&format!("/api/v1/agents/{agent}/runs"))
        .await
        .assert_ok(StatusCode::OK);
    assert!(
        close(&listed["runs"][0]["usage"]["cost"], 140.0 / 1e6),
        "{listed}"
    );

    // A price that is no price is refused, naming the field.
    priced["model"]["price"] = json!({"inputPerMillion": -1.0, "outputPerMillion": 10.0});
    let why = app
        .json(Method::PUT, &format!("/api/v1/agents/{agent}"), &priced)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("model.price"), "{why}");

    // The user's totals: per agent and in all.
    let usage = app
        .get("/api/v1/metrics/agents")
        .await
        .assert_ok(StatusCode::OK);
    let total = &usage["total"];
    assert_eq!(total["runs"], 2, "{usage}");
    assert_eq!(total["inputTokens"], 40, "{usage}");
    assert_eq!(total["outputTokens"], 20, "{usage}");
    assert_eq!(total["totalTokens"], 60, "{usage}");
    assert_eq!(total["modelCalls"], 4, "{usage}");
    assert_eq!(total["toolCalls"], 2, "{usage}");
    assert_eq!(total["pricedRuns"], 1, "{usage}");
    assert!(close(&total["cost"], 140.0 / 1e6), "{usage}");
    assert_eq!(usage["agents"][0]["agentId"], agent.as_str(), "{usage}");
    assert_eq!(usage["agents"][0]["name"], "helper", "{usage}");
    let recent = app
        .get("/api/v1/metrics/agents?period=1h")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(recent["period"], "1h");
    assert_eq!(recent["total"]["runs"], 2, "{recent}");
    app.get("/api/v1/metrics/agents?period=forever")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");

    // Another user spent nothing.
    use toolsmith_server::auth::Scope;
    let bob = app.token("bob", None, &[Scope::ToolsRead]).await;
    let asked = crate::rest_support::request(Method::GET, "/api/v1/metrics/agents")
        .header("authorization", format!("Bearer {bob}"))
        .body(axum::body::Body::empty())
        .unwrap();
    let theirs = app.send(asked).await.assert_ok(StatusCode::OK);
    assert_eq!(theirs["total"]["runs"], 0, "{theirs}");
    assert_eq!(theirs["agents"], json!([]), "{theirs}");
}

#[tokio::test]
async fn metrics_count_runs_by_status_their_steps_and_tokens() {
    let (app, script, agent) = setup_helper(Proto::OpenAi, false, tool_body("shout")).await;
    run_once(&app, &script, &agent).await;
    // A failing provider: one failed run, its error step.
    script.push(Reply::Json(
        400,
        json!({"error": {"message": "unknown model"}}),
    ));
    let failed = run_waited(&app, &agent, "Hi.").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    // A cancelled one.
    script.push(Reply::Hang);
    let arrived = script.arrived.notified();
    let started = start_run(&app, &agent, "Think long.").await;
    arrived.await;
    let run = started["id"].as_str().unwrap();
    app.post(
        &format!("/api/v1/agents/{agent}/runs/{run}/cancel"),
        &json!({}),
    )
    .await
    .assert_ok(StatusCode::OK);

    let text = metrics_until(
        &app,
        "toolsmith_agent_runs_finished_total{status=\"cancelled\"} 1",
        Duration::from_secs(30),
    )
    .await;
    for line in [
        "toolsmith_agent_runs_started_total 3",
        "toolsmith_agent_runs_finished_total{status=\"completed\"} 1",
        "toolsmith_agent_runs_finished_total{status=\"failed\"} 1",
        "toolsmith_agent_run_steps_total{kind=\"model\"} 2",
        "toolsmith_agent_run_steps_total{kind=\"tool_call\"} 1",
        "toolsmith_agent_run_steps_total{kind=\"tool_result\"} 1",
        "toolsmith_agent_run_steps_total{kind=\"error\"} 1",
        "toolsmith_agent_tokens_total{direction=\"input\"} 20",
        "toolsmith_agent_tokens_total{direction=\"output\"} 10",
        "toolsmith_agent_runs_active 0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in:\n{text}");
    }
}

fn entries(log: &Value) -> Vec<(String, String, String)> {
    log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_owned(),
                e["targetType"].as_str().unwrap().to_owned(),
                e["actorKind"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn definitions_written_and_runs_started_or_cancelled_are_audited() {
    let (app, script, agent) = setup_helper(Proto::OpenAi, false, tool_body("shout")).await;
    let mut changed = agent_body("helper");
    changed["instructions"] = json!("Answer in French.");
    app.json(Method::PUT, &format!("/api/v1/agents/{agent}"), &changed)
        .await
        .assert_ok(StatusCode::OK);
    run_once(&app, &script, &agent).await;
    script.push(Reply::Hang);
    let arrived = script.arrived.notified();
    let started = start_run(&app, &agent, "Think long.").await;
    arrived.await;
    let run = started["id"].as_str().unwrap();
    app.post(
        &format!("/api/v1/agents/{agent}/runs/{run}/cancel"),
        &json!({}),
    )
    .await
    .assert_ok(StatusCode::OK);
    app.call(Method::DELETE, &format!("/api/v1/agents/{agent}"))
        .await
        .assert_ok(StatusCode::OK);

    let log = app
        .get("/api/v1/audit?action=agent.")
        .await
        .assert_ok(StatusCode::OK);
    let person =
        |action: &str, target: &str| (action.to_owned(), target.to_owned(), "user".to_owned());
    assert_eq!(
        entries(&log),
        [
            person("agent.delete", "agent"),
            person("agent.run.cancel", "agent_run"),
            person("agent.run.start", "agent_run"),
            person("agent.run.start", "agent_run"),
            person("agent.update", "agent"),
            person("agent.create", "agent"),
        ],
        "{log}"
    );
    let all = log["entries"].as_array().unwrap();
    let update = &all[4];
    assert_eq!(update["targetId"], agent.as_str());
    assert_eq!(update["targetName"], "helper");
    assert_eq!(update["beforeRevision"], 1);
    assert_eq!(update["afterRevision"], 2);
    assert_eq!(
        update["details"]["changed"],
        json!(["instructions"]),
        "{update}"
    );
    let cancel = &all[1];
    assert_eq!(cancel["targetId"], run);
    assert_eq!(cancel["details"]["agentId"], agent.as_str(), "{cancel}");
    let create = &all[5];
    assert_eq!(create["afterRevision"], 1);
    assert!(create["requestId"].is_string(), "{create}");
    // What an agent is told stays out of the log: only field names.
    assert!(!log.to_string().contains("Answer in French"), "{log}");
}

/// `GET /api/v1/agent-runs` as `agent` (`X-Toolsmith-Agent`), or as the person.
async fn started_runs(app: &TestApp, agent: Option<&str>) -> Value {
    let mut asked = crate::rest_support::request(Method::GET, "/api/v1/agent-runs");
    if let Some(agent) = agent {
        asked = asked.header("x-toolsmith-agent", agent);
    }
    app.send(asked.body(axum::body::Body::empty()).unwrap())
        .await
        .assert_ok(StatusCode::OK)
}

fn run_ids(list: &Value) -> Vec<&str> {
    list["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn a_person_lists_the_runs_each_of_their_agents_started_and_opens_one() {
    let (app, script, helper) = setup_helper(Proto::OpenAi, false, tool_body("shout")).await;
    let lead = create_agent(&app, &agent_body("lead")).await;
    let lead = lead["id"].as_str().unwrap().to_owned();
    // The person's own run of helper, and one lead starts of helper (as a delegation does).
    let mine = run_once(&app, &script, &helper).await;
    script.push(answers(Proto::OpenAi, false, "Done for lead."));
    let asked =
        crate::rest_support::request(Method::POST, &format!("/api/v1/agents/{helper}/runs"))
            .header("content-type", "application/json")
            .header("x-toolsmith-agent", lead.as_str())
            .body(axum::body::Body::from(
                json!({"input": "Answer lead.", "wait": true}).to_string(),
            ))
            .unwrap();
    let leads = app.send(asked).await.assert_ok(StatusCode::OK);
    assert_eq!(leads["startedByAgent"], lead.as_str(), "{leads}");
    let leads_id = leads["id"].as_str().unwrap();

    // The person's list holds their run only; lead's, the run lead started, with its agent.
    let own = started_runs(&app, None).await;
    assert_eq!(run_ids(&own), [mine["id"].as_str().unwrap()], "{own}");
    let started = started_runs(&app, Some(&lead)).await;
    assert_eq!(run_ids(&started), [leads_id], "{started}");
    assert_eq!(started["count"], 1, "{started}");
    assert_eq!(started["runs"][0]["agentId"], helper.as_str(), "{started}");
    assert_eq!(started["runs"][0]["status"], "completed", "{started}");
    assert!(started["runs"][0].get("steps").is_none(), "{started}");
    // helper started nothing.
    assert_eq!(started_runs(&app, Some(&helper)).await["count"], 0);
    // Opened as lead, with its steps; the person alone does not see it (the starter's only).
    let path = format!("/api/v1/agents/{helper}/runs/{leads_id}");
    let opened = app
        .send(
            crate::rest_support::request(Method::GET, &path)
                .header("x-toolsmith-agent", lead.as_str())
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(opened["output"], "Done for lead.", "{opened}");
    app.get(&path)
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    // The limit is checked as the other listings' is.
    app.get("/api/v1/agent-runs?limit=0")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    assert_eq!(
        run_ids(
            &app.get("/api/v1/agent-runs?limit=1")
                .await
                .assert_ok(StatusCode::OK)
        )
        .len(),
        1
    );

    // Another user, even naming the same agent, sees none of them.
    use toolsmith_server::auth::Scope;
    let bob = app.token("bob", None, &[Scope::ToolsRead]).await;
    for agent in [None, Some(lead.as_str())] {
        let mut asked = crate::rest_support::request(Method::GET, "/api/v1/agent-runs")
            .header("authorization", format!("Bearer {bob}"));
        if let Some(agent) = agent {
            asked = asked.header("x-toolsmith-agent", agent);
        }
        let theirs = app
            .send(asked.body(axum::body::Body::empty()).unwrap())
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(theirs["runs"], json!([]), "{theirs}");
    }
}
