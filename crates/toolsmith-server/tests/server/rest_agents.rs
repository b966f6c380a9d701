//! Agents Toolsmith runs (issue 37), over REST, against a scripted model server the tests start:
//! a real HTTP server on 127.0.0.1 speaking OpenAI-compatible Chat Completions and Anthropic
//! Messages, with and without streaming (SSE), answering each request with the next reply of
//! its test's script and keeping every request it got. Definitions (create, read, revise,
//! delete, another user's invisible), runs that call tools through the pipeline, a call that
//! waits for a person's approval, the iteration limit, a cancelled run, a failing provider
//! (retried, then a clear failure), and a loopback model server the operator did not allow.

use axum::http::StatusCode;
use serde_json::json;

use crate::agent_support::{
    KEY, Proto, Reply, Script, agent_body, answers, calls_shout, configure, create_agent, kinds,
    model_server, run_until, run_waited, setup_helper, start_run,
};
use crate::rest_support::{TestApp, json_request, request, tool_body};

#[tokio::test]
async fn an_agent_is_its_owners_and_every_revision_is_kept() {
    let app = TestApp::new().await;
    let created = create_agent(&app, &agent_body("helper")).await;
    assert_eq!(created["revision"], 1);
    assert_eq!(created["limits"]["maxIterations"], 20, "{created}");
    let id = created["id"].as_str().unwrap();
    // By id and by name.
    for key in [id, "helper"] {
        let got = app
            .get(&format!("/api/v1/agents/{key}"))
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(got["id"], id);
    }
    app.post("/api/v1/agents", &agent_body("helper"))
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");
    // A policy naming an unknown group is refused, naming it.
    let mut bad = agent_body("other");
    bad["toolPolicy"] = json!({"allow": ["group:nope"]});
    let why = app
        .post("/api/v1/agents", &bad)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("nope"), "{why}");
    // A revision, then a stale one.
    let mut changed = agent_body("helper");
    changed["instructions"] = json!("Answer in French.");
    changed["expectedRevision"] = json!(1);
    let revised = app
        .json(
            axum::http::Method::PUT,
            &format!("/api/v1/agents/{id}"),
            &changed,
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(revised["revision"], 2);
    assert_eq!(revised["instructions"], "Answer in French.");
    app.json(
        axum::http::Method::PUT,
        &format!("/api/v1/agents/{id}"),
        &changed,
    )
    .await
    .assert_error(StatusCode::CONFLICT, "revision_conflict");
    let listed = app.get("/api/v1/agents").await.assert_ok(StatusCode::OK);
    assert_eq!(listed["count"], 1);

    // Another user sees nothing of it.
    use toolsmith_server::auth::Scope;
    let alice = app
        .token(
            "alice",
            None,
            &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute],
        )
        .await;
    let bob = app
        .token(
            "bob",
            None,
            &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute],
        )
        .await;
    let as_ = |token: &str, method: axum::http::Method, path: &str| {
        request(method, path)
            .header("authorization", format!("Bearer {token}"))
            .body(axum::body::Body::empty())
            .unwrap()
    };
    let mut body = json_request(
        axum::http::Method::POST,
        "/api/v1/agents",
        &agent_body("mine"),
    );
    body.headers_mut()
        .insert("authorization", format!("Bearer {alice}").parse().unwrap());
    let alices = app.send(body).await.assert_ok(StatusCode::CREATED);
    let alices_id = alices["id"].as_str().unwrap();
    let seen = app
        .send(as_(&bob, axum::http::Method::GET, "/api/v1/agents"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(seen["count"], 0, "{seen}");
    for path in [
        format!("/api/v1/agents/{alices_id}"),
        "/api/v1/agents/mine".to_owned(),
        format!("/api/v1/agents/{alices_id}/runs"),
    ] {
        app.send(as_(&bob, axum::http::Method::GET, &path))
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
    }
    app.send(as_(
        &bob,
        axum::http::Method::DELETE,
        &format!("/api/v1/agents/{alices_id}"),
    ))
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    app.send(as_(
        &alice,
        axum::http::Method::DELETE,
        &format!("/api/v1/agents/{alices_id}"),
    ))
    .await
    .assert_ok(StatusCode::OK);
}

/// The same run on each protocol, streamed and not: the model calls `shout` (through the
/// pipeline, as the agent), reads its result and answers; every step is recorded, the usage
/// summed, the key sent only to the model server and never shown.
#[tokio::test]
async fn a_run_calls_tools_on_every_protocol_with_and_without_streaming() {
    for proto in [Proto::OpenAi, Proto::Anthropic] {
        for stream in [false, true] {
            let (app, script, agent) = setup_helper(proto, stream, tool_body("shout")).await;
            script.push(calls_shout(proto, stream, "call_1", "hello"));
            script.push(answers(proto, stream, "I shouted HELLO."));
            let run = run_waited(&app, &agent, "Shout hello.").await;
            let case = format!("{proto:?}, stream {stream}: {run}");
            assert_eq!(run["status"], "completed", "{case}");
            assert_eq!(run["output"], "I shouted HELLO.", "{case}");
            assert_eq!(run["iterations"], 2, "{case}");
            assert_eq!(run["usage"]["inputTokens"], 20, "{case}");
            assert_eq!(run["usage"]["outputTokens"], 10, "{case}");
            assert_eq!(run["usage"]["toolCalls"], 1, "{case}");
            assert_eq!(
                kinds(&run),
                ["model", "tool_call", "tool_result", "model"],
                "{case}"
            );
            let result = &run["steps"][2]["detail"];
            assert_eq!(result["isError"], false, "{case}");
            assert!(result["content"].to_string().contains("HELLO"), "{case}");
            assert!(!run.to_string().contains(KEY), "{case}");

            let seen = script.seen();
            assert_eq!(seen.len(), 2, "{case}");
            let (first, key) = &seen[0];
            match proto {
                Proto::OpenAi => {
                    assert_eq!(key, &format!("Bearer {KEY}"), "{case}");
                    assert_eq!(first["messages"][0]["role"], "system", "{case}");
                    let system = first["messages"][0]["content"].as_str().unwrap();
                    assert!(system.contains("Be brief."), "{case}");
                    let tools: Vec<&str> = first["tools"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t["function"]["name"].as_str().unwrap())
                        .collect();
                    assert_eq!(tools, ["shout"], "only what the toolPolicy allows: {case}");
                    let back = &seen[1].0["messages"];
                    let tool_message = back
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|m| m["role"] == "tool")
                        .unwrap();
                    assert_eq!(tool_message["tool_call_id"], "call_1", "{case}");
                    assert!(tool_message["content"].as_str().unwrap().contains("HELLO"));
                }
                Proto::Anthropic => {
                    assert_eq!(key, KEY, "{case}");
                    assert!(first["system"].as_str().unwrap().contains("Be brief."));
                    let tools: Vec<&str> = first["tools"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t["name"].as_str().unwrap())
                        .collect();
                    assert_eq!(tools, ["shout"], "only what the toolPolicy allows: {case}");
                    let back = &seen[1].0["messages"];
                    let last = back.as_array().unwrap().last().unwrap();
                    assert_eq!(last["role"], "user", "{case}");
                    assert_eq!(last["content"][0]["type"], "tool_result", "{case}");
                    assert_eq!(last["content"][0]["tool_use_id"], "call_1", "{case}");
                }
            }
            assert_eq!(first["stream"].as_bool().unwrap_or(false), stream, "{case}");

            // The call went through the pipeline as the agent: its execution is recorded.
            let executions = app
                .get(&format!("/api/v1/executions?caller={agent}"))
                .await
                .assert_ok(StatusCode::OK)
                .to_string();
            assert!(executions.contains("shout"), "{case}: {executions}");
        }
    }
}

#[tokio::test]
async fn a_tool_call_needing_approval_pauses_the_run_until_a_person_decides() {
    let mut shout = tool_body("shout");
    shout["requiresApproval"] = json!(true);
    let (app, script, agent) = setup_helper(Proto::OpenAi, false, shout).await;
    script.push(calls_shout(Proto::OpenAi, false, "call_1", "careful"));
    script.push(answers(Proto::OpenAi, false, "Done, carefully."));
    let started = start_run(&app, &agent, "Shout carefully.").await;
    assert_eq!(started["status"], "running");
    let run = started["id"].as_str().unwrap();
    let waiting = run_until(&app, &agent, run, |r| r["status"] == "waiting_approval").await;
    assert!(
        kinds(&waiting).contains(&"approval".to_owned()),
        "{waiting}"
    );
    let approvals = app.get("/api/v1/approvals").await.assert_ok(StatusCode::OK);
    let approval = approvals["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["toolName"] == "shout")
        .unwrap_or_else(|| panic!("no approval of shout: {approvals}"));
    let id = approval["id"].as_str().unwrap();
    app.post(
        &format!("/api/v1/approvals/{id}/decision"),
        &json!({"decision": "allow_once"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let ended = run_until(&app, &agent, run, |r| r["status"] == "completed").await;
    assert_eq!(ended["output"], "Done, carefully.");
    let result = ended["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "tool_result")
        .unwrap();
    assert_eq!(result["detail"]["isError"], false, "{ended}");
    assert!(result["detail"]["content"].to_string().contains("CAREFUL"));
}

#[tokio::test]
async fn a_run_that_never_answers_stops_at_its_iteration_limit() {
    let (app, script, agent) = setup_helper(Proto::Anthropic, false, tool_body("shout")).await;
    let mut body = agent_body("helper");
    body["limits"] = json!({"maxIterations": 3});
    app.json(
        axum::http::Method::PUT,
        &format!("/api/v1/agents/{agent}"),
        &body,
    )
    .await
    .assert_ok(StatusCode::OK);
    for i in 0..5 {
        script.push(calls_shout(
            Proto::Anthropic,
            false,
            &format!("call_{i}"),
            "again",
        ));
    }
    let run = run_waited(&app, &agent, "Loop.").await;
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["iterations"], 3, "{run}");
    let error = run["error"].as_str().unwrap();
    assert!(
        error.contains("maxIterations") && error.contains('3'),
        "{error}"
    );
    assert_eq!(script.seen().len(), 3);
    assert_eq!(run["usage"]["toolCalls"], 3, "{run}");
}

#[tokio::test]
async fn a_cancelled_run_stops_and_stays_cancelled() {
    let (app, script, agent) = setup_helper(Proto::OpenAi, true, tool_body("shout")).await;
    script.push(Reply::Hang);
    let arrived = script.arrived.notified();
    let started = start_run(&app, &agent, "Think long.").await;
    let run = started["id"].as_str().unwrap();
    // The model is being asked.
    arrived.await;
    let cancelled = app
        .post(
            &format!("/api/v1/agents/{agent}/runs/{run}/cancel"),
            &json!({}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert!(
        cancelled["error"]
            .as_str()
            .unwrap()
            .contains("cancelled by")
    );
    let listed = app
        .get(&format!("/api/v1/agents/{agent}/runs"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(listed["runs"][0]["status"], "cancelled", "{listed}");
    // The runner has let go of it (a second run may start at once) and it stays cancelled.
    let again = app
        .post(
            &format!("/api/v1/agents/{agent}/runs/{run}/cancel"),
            &json!({}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(again["status"], "cancelled");
    assert_eq!(script.seen().len(), 1);
}

#[tokio::test]
async fn a_failing_provider_is_retried_then_fails_clearly() {
    let (app, script, agent) = setup_helper(Proto::OpenAi, false, tool_body("shout")).await;
    // A 429, then an answer: the retry is recorded and the run completes.
    script.push(Reply::Json(429, json!({"error": {"message": "slow down"}})));
    script.push(answers(Proto::OpenAi, false, "Fine."));
    let run = run_waited(&app, &agent, "Hi.").await;
    assert_eq!(run["status"], "completed", "{run}");
    assert_eq!(kinds(&run), ["retry", "model"], "{run}");
    assert!(
        run["steps"][0]["detail"]["error"]
            .as_str()
            .unwrap()
            .contains("429")
    );

    // Three 503s: three attempts, then a failure naming the service and the status.
    for _ in 0..3 {
        script.push(Reply::Json(
            503,
            json!({"error": {"message": "overloaded"}}),
        ));
    }
    let run = run_waited(&app, &agent, "Hi again.").await;
    assert_eq!(run["status"], "failed", "{run}");
    let error = run["error"].as_str().unwrap();
    assert!(
        error.contains("'local'")
            && error.contains("503")
            && error.contains("overloaded")
            && error.contains("after 3 attempts"),
        "{error}"
    );
    assert_eq!(kinds(&run), ["retry", "retry", "error"], "{run}");
    assert_eq!(script.seen().len(), 2 + 3);

    // A 400 is not retried.
    script.push(Reply::Json(
        400,
        json!({"error": {"message": "unknown model"}}),
    ));
    let run = run_waited(&app, &agent, "Once more.").await;
    assert_eq!(run["status"], "failed", "{run}");
    assert!(
        run["error"].as_str().unwrap().contains("unknown model"),
        "{run}"
    );
    assert_eq!(script.seen().len(), 6);
}

#[tokio::test]
async fn a_model_server_on_loopback_needs_the_operators_allow() {
    let script = Script::default();
    let host = model_server(&script).await;
    // The operator did not list the model server's host.
    let app = TestApp::new().await;
    configure(&app, Proto::OpenAi, false, &host).await;
    let agent = create_agent(&app, &agent_body("helper")).await;
    let why = app
        .post(
            &format!("/api/v1/agents/{}/runs", agent["id"].as_str().unwrap()),
            &json!({"input": "Hi.", "wait": true}),
        )
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("allowed_private_hosts"), "{why}");
    assert!(script.seen().is_empty());

    // And a model service that does not exist is named.
    let mut body = agent_body("other");
    body["model"]["service"] = json!("missing");
    let other = create_agent(&app, &body).await;
    let why = app
        .post(
            &format!("/api/v1/agents/{}/runs", other["id"].as_str().unwrap()),
            &json!({"input": "Hi."}),
        )
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(
        why.contains("'missing'") && why.contains("config/services"),
        "{why}"
    );
}

/// The operator's allowlist for a user (`owner_allowed_domains`) holds for their agents' model
/// server as for their tools: outside it, the run is refused and the server never asked.
#[tokio::test]
async fn a_model_server_outside_the_owners_allowed_domains_is_never_asked() {
    let script = Script::default();
    let host = model_server(&script).await;
    let mut service = crate::rest_support::settings_reaching(&host);
    service.owner_allowed_domains.insert(
        "default".to_owned(),
        vec!["api.example.com".parse().unwrap()],
    );
    let app = TestApp::with_configs(service, toolsmith_server::ServerSettings::default()).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    let agent = create_agent(&app, &agent_body("helper")).await;
    let why = app
        .post(
            &format!("/api/v1/agents/{}/runs", agent["id"].as_str().unwrap()),
            &json!({"input": "Hi.", "wait": true}),
        )
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("not one of the allowed domains"), "{why}");
    assert!(why.contains("owner_allowed_domains"), "{why}");
    assert!(script.seen().is_empty());
}
