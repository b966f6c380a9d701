//! The operator's per-user bounds on agents Toolsmith runs (issue 37), over REST against the
//! scripted model server of `rest_agents`: how many definitions one user may own
//! (`agent_max_definitions`) and how many runs may go at once across all of a user's agents
//! (`agent_max_running`), both counted by the store; each refusal names the cap and the
//! setting. And a run cancelled through another instance sharing the store stops on the
//! instance running it within about a second, not only at its next step; a run whose instance
//! died is failed by another once its lease runs out, naming the lost instance.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

use crate::agent_support::{
    Proto, Reply, Script, agent_body, answers, configure, create_agent, metrics_until,
    model_server, run_waited, start_run, until,
};
use crate::rest_support::{TestApp, settings_reaching};

/// An app reaching a model server with the service `local`, under `settings` changed by
/// `change`; the script.
async fn app_with(change: impl FnOnce(&mut ToolServiceSettings)) -> (TestApp, Script) {
    let script = Script::default();
    let host = model_server(&script).await;
    let mut settings = settings_reaching(&host);
    change(&mut settings);
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    (app, script)
}

async fn create(app: &TestApp, name: &str) -> Value {
    create_agent(app, &agent_body(name)).await
}

#[tokio::test]
async fn a_user_owns_at_most_agent_max_definitions_agents() {
    let (app, _) = app_with(|s| s.agents.max_definitions = 2).await;
    create(&app, "first").await;
    let second = create(&app, "second").await;
    let why = app
        .post("/api/v1/agents", &agent_body("third"))
        .await
        .assert_error(StatusCode::CONFLICT, "limit_reached");
    assert!(
        why.contains("agent_max_definitions") && why.contains('2'),
        "{why}"
    );
    // A name already taken is still named as such.
    app.post("/api/v1/agents", &agent_body("first"))
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");
    // One deleted, one more fits.
    let id = second["id"].as_str().unwrap();
    app.call(axum::http::Method::DELETE, &format!("/api/v1/agents/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    create(&app, "third").await;
}

#[tokio::test]
async fn a_users_runs_across_all_their_agents_are_capped_by_agent_max_running() {
    let (app, script) = app_with(|s| s.agents.max_running = 1).await;
    let a = create(&app, "alpha").await;
    let b = create(&app, "beta").await;
    let (a, b) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());
    // alpha's run waits for the model, holding the user's one place.
    script.push(Reply::Hang);
    let arrived = script.arrived.notified();
    let started = start_run(&app, a, "Think.").await;
    arrived.await;
    // beta has places of its own (maxConcurrentRuns 4), but the user has none left.
    let why = app
        .post(
            &format!("/api/v1/agents/{b}/runs"),
            &json!({"input": "Hi.", "wait": true}),
        )
        .await
        .assert_error(StatusCode::CONFLICT, "limit_reached");
    assert!(
        why.contains("agent_max_running") && why.contains('1'),
        "{why}"
    );
    assert_eq!(script.seen().len(), 1, "beta's run never reached the model");
    // The first cancelled, beta runs.
    let run = started["id"].as_str().unwrap();
    app.post(&format!("/api/v1/agents/{a}/runs/{run}/cancel"), &json!({}))
        .await
        .assert_ok(StatusCode::OK);
    script.push(answers(Proto::OpenAi, false, "Hello."));
    let ended = run_waited(&app, b, "Hi.").await;
    assert_eq!(ended["status"], "completed", "{ended}");
}

#[tokio::test]
async fn a_run_cancelled_on_another_instance_stops_while_it_waits_for_the_model() {
    let script = Script::default();
    let host = model_server(&script).await;
    let app = TestApp::with_configs(settings_reaching(&host), ServerSettings::default()).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    let agent = create(&app, "thinker").await;
    let agent = agent["id"].as_str().unwrap();
    // A second instance on the same store.
    let other = app
        .reopen(settings_reaching(&host), ServerSettings::default())
        .await;

    script.push(Reply::Hang);
    let arrived = script.arrived.notified();
    let started = start_run(&app, agent, "Think long.").await;
    let run = started["id"].as_str().unwrap();
    arrived.await;
    metrics_until(
        &app,
        "toolsmith_agent_runs_active 1",
        Duration::from_secs(10),
    )
    .await;

    // Listed and cancelled through the other instance.
    let listed = other
        .get(&format!("/api/v1/agents/{agent}/runs"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(listed["runs"][0]["id"], run, "{listed}");
    let cancelled = other
        .post(
            &format!("/api/v1/agents/{agent}/runs/{run}/cancel"),
            &json!({}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    // The instance running it lets go while the model request is still in flight (its wall
    // time is 600 s, and the model never answers).
    metrics_until(
        &app,
        "toolsmith_agent_runs_active 0",
        Duration::from_secs(10),
    )
    .await;
    let seen = app
        .get(&format!("/api/v1/agents/{agent}/runs/{run}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(seen["status"], "cancelled", "{seen}");
    assert_eq!(script.seen().len(), 1);
}

/// Settings reaching `host` with a short run lease (`agent_run_lease`), so an instance that
/// stops is noticed within a second or so.
fn short_lease(host: &str) -> ToolServiceSettings {
    let mut settings = settings_reaching(host);
    settings.agents.run_lease = std::time::Duration::from_millis(600);
    settings
}

/// The run `run` of `agent` read through `app` until its status is `status`, for at most 10 s
/// (a run's status only answers when asked).
async fn run_until(app: &TestApp, agent: &str, run: &str, status: &str) -> Value {
    let path = format!("/api/v1/agents/{agent}/runs/{run}");
    until(
        &format!("the run (to become {status})"),
        Duration::from_secs(10),
        || async { app.get(&path).await.assert_ok(StatusCode::OK) },
        |seen| seen["status"] == status,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_instance_died_is_failed_by_another_instance_naming_it() {
    let script = Script::default();
    let host = model_server(&script).await;
    // Instance A lives on a runtime of its own, so that it can die: whatever it runs stops
    // with it, its run's lease renewal included.
    let rt_a = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let a = rt_a
        .spawn(TestApp::with_configs(
            short_lease(&host),
            ServerSettings::default(),
        ))
        .await
        .unwrap();
    let a = std::sync::Arc::new(a);
    configure(&a, Proto::OpenAi, false, &host).await;
    let agent = create(&a, "thinker").await;
    let agent = agent["id"].as_str().unwrap().to_owned();
    // The sessions group on, for a subagent of A's.
    a.json(
        axum::http::Method::PUT,
        "/api/v1/tool-groups/sessions",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    // Instance B on the same store.
    let b = a
        .reopen(short_lease(&host), ServerSettings::default())
        .await;

    script.push(Reply::Hang);
    let arrived = script.arrived.notified();
    let started = {
        let a = std::sync::Arc::clone(&a);
        let path = format!("/api/v1/agents/{agent}/runs");
        rt_a.spawn(async move { a.post(&path, &json!({"input": "Think long."})).await })
            .await
            .unwrap()
            .assert_ok(StatusCode::ACCEPTED)
    };
    let run = started["id"].as_str().unwrap().to_owned();
    arrived.await;
    // And a subagent of the person's, spawned on A, waiting for the model too.
    script.push(Reply::Hang);
    let arrived = script.arrived.notified();
    let spawned = {
        let a = std::sync::Arc::clone(&a);
        let args =
            json!({"arguments": {"task": "Think too.", "agent": "thinker", "label": "lost"}});
        rt_a.spawn(async move { a.post("/api/v1/tools/sessions_spawn/execute", &args).await })
            .await
            .unwrap()
            .assert_ok(StatusCode::OK)
    };
    assert_eq!(spawned["result"]["status"], "running", "{spawned}");
    let subagent = spawned["result"]["sessionKey"].as_str().unwrap().to_owned();
    arrived.await;
    // While A lives it renews the lease: three leases later B still reads the run running.
    // (The wait is the time the behaviour is defined by: the lease.)
    tokio::time::sleep(std::time::Duration::from_millis(1800)).await;
    let seen = run_until(&b, &agent, &run, "running").await;
    assert!(seen["error"].is_null(), "{seen}");

    // A dies mid-run: its model request is still waiting.
    rt_a.shutdown_background();
    let failed = run_until(&b, &agent, &run, "failed").await;
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("stopped renewing its lease")
            && error.contains("inst_")
            && error.contains("start the run again"),
        "{error}"
    );
    // The end is a step of the run, naming the lost instance.
    let last = failed["steps"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["kind"], "error", "{failed}");
    assert!(
        last["detail"]["lostInstance"]
            .as_str()
            .is_some_and(|i| i.starts_with("inst_") && error.contains(i)),
        "{last}"
    );
    // Its place under the caps is free again: B lists nothing running.
    let listed = b
        .get(&format!("/api/v1/agents/{agent}/runs"))
        .await
        .assert_ok(StatusCode::OK);
    assert!(
        listed["runs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] == "failed"),
        "{listed}"
    );
    assert_eq!(listed["runs"].as_array().unwrap().len(), 2, "{listed}");
    // The subagent it answered for ended with it: failed, no longer running (MaxConcurrent).
    let sessions = b
        .post(
            "/api/v1/tools/sessions_list/execute",
            &json!({"arguments": {"kind": "subagent"}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    let lost = sessions["result"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["sessionKey"] == subagent.as_str())
        .unwrap_or_else(|| panic!("{sessions}"))
        .clone();
    assert_eq!(lost["status"], "failed", "{lost}");
    assert!(
        lost["error"]
            .as_str()
            .is_some_and(|e| e.contains("stopped renewing its lease")),
        "{lost}"
    );
    assert_eq!(script.seen().len(), 2);
}
