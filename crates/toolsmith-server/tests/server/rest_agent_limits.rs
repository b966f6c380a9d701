//! The operator's per-user bounds on agents Toolsmith runs (issue 37), over REST against the
//! scripted model server of `rest_agents`: how many definitions one user may own
//! (`agent_max_definitions`) and how many runs may go at once across all of a user's agents
//! (`agent_max_running`), both counted by the store; each refusal names the cap and the
//! setting.

use axum::http::StatusCode;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

use crate::rest_agents::{Proto, Reply, Script, agent_body, answers, configure, model_server};
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
    app.post("/api/v1/agents", &agent_body(name))
        .await
        .assert_ok(StatusCode::CREATED)
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
    let started = app
        .post(
            &format!("/api/v1/agents/{a}/runs"),
            &json!({"input": "Think."}),
        )
        .await
        .assert_ok(StatusCode::ACCEPTED);
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
    let ended = app
        .post(
            &format!("/api/v1/agents/{b}/runs"),
            &json!({"input": "Hi.", "wait": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ended["status"], "completed", "{ended}");
}
