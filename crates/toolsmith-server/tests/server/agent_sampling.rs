//! An agent on the MCP client's own model (issue 37: `model.service` `sampling`): its model
//! turns go to the client that started its run as `sampling/createMessage`, tool calls
//! included, with no Config Center service or key at all. The client is the official MCP
//! Python SDK (`tests/clients/mcp_sampling.py`); REST, which has no client, is refused naming
//! the fix.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::agent_support::{create_agent, enable_groups, kinds};
use crate::rest_support::{TestApp, serve_loopback, tool_body};

/// An app with the `sessions` group on, the tool `shout` and the agent `sampler` on the
/// client's model — and no Config Center service.
async fn setup() -> TestApp {
    let app = TestApp::with_configs(Default::default(), Default::default()).await;
    enable_groups(&app, &["sessions"]).await;
    app.create_tool(&tool_body("shout")).await;
    create_agent(
        &app,
        &json!({
            "name": "sampler",
            "instructions": "Use your tools.",
            "model": {"service": "sampling", "model": "client-model"},
            "toolPolicy": {"allow": ["group:sessions", "shout"]},
        }),
    )
    .await;
    app
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_model_runs_an_agent_with_no_key_tool_calls_through_the_pipeline() {
    use crate::mcp_support::{prerequisite, python, run_client};
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = setup().await;
    let server = serve_loopback(app.router.clone()).await;
    let report = run_client(
        "mcp_sampling.py",
        &python(),
        &[
            "mcp_sampling.py".to_owned(),
            "--url".to_owned(),
            format!("http://{server}/mcp"),
        ],
        &[],
    )
    .await;
    eprintln!("{report:#}");
    let value = |name: &str| {
        assert_eq!(report[name]["isError"], false, "{name}: {}", report[name]);
        report[name]["value"].clone()
    };
    // The conversation: the client's model called shout, read its result and answered.
    let sent = value("send");
    assert_eq!(sent["status"], "idle", "{sent}");
    assert_eq!(
        sent["result"], "the client's model saw: {\"upper\":\"HI\"}",
        "{sent}"
    );
    // The subagent the caller waited for: the same.
    let ran = value("run");
    assert_eq!(ran["status"], "completed", "{ran}");
    assert_eq!(ran["result"], "the client's model saw: {\"upper\":\"HI\"}");
    // What the client was asked: the tools, the hint, the system prompt, the tool's result.
    let requests = report["requests"].as_array().unwrap();
    let first = &requests[0];
    assert!(
        first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "shout" && t["inputSchema"]["type"] == "object"),
        "{first}"
    );
    assert_eq!(first["toolChoice"]["mode"], "auto");
    assert_eq!(
        first["modelPreferences"]["hints"][0]["name"],
        "client-model"
    );
    assert!(
        first["systemPrompt"]
            .as_str()
            .unwrap()
            .starts_with("Use your tools."),
        "{first}"
    );
    let second = &requests[1];
    let replayed = second["messages"].as_array().unwrap();
    assert_eq!(replayed[1]["content"][0]["type"], "tool_use", "{second}");
    assert_eq!(replayed[2]["content"][0]["type"], "tool_result", "{second}");
    assert_eq!(replayed[2]["content"][0]["toolUseId"], "use_1", "{second}");
    // Spawned, the run would outlive the call whose stream the requests ride: refused.
    assert_eq!(report["spawn"]["isError"], true, "{report:#}");
    let spawn = report["spawn"]["value"].to_string();
    assert!(
        spawn.contains("waits for its end") && spawn.contains("'run'"),
        "{spawn}"
    );
    // The person declined: the run failed with the client's reason.
    let declined = value("declined");
    assert!(
        declined["error"]
            .as_str()
            .unwrap_or_default()
            .contains("declined the request: the user declined to run this"),
        "{declined}"
    );
    // A client that declared no sampling: refused, naming the capability and the other way.
    assert_eq!(report["bare"]["isError"], true, "{report:#}");
    let bare = report["bare"]["value"].to_string();
    assert!(
        bare.contains("declares the sampling capability") && bare.contains("model.service"),
        "{bare}"
    );

    // The runs, as REST reads them: each tool call ran through the pipeline as the agent.
    let runs = app
        .get("/api/v1/agents/sampler/runs")
        .await
        .assert_ok(StatusCode::OK);
    let completed: Vec<&Value> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "completed")
        .collect();
    assert_eq!(completed.len(), 2, "{runs}");
    let id = completed[0]["id"].as_str().unwrap();
    let run = app
        .get(&format!("/api/v1/agents/sampler/runs/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        kinds(&run),
        ["model", "tool_call", "tool_result", "model"],
        "{run}"
    );
    assert_eq!(run["steps"][2]["detail"]["content"], json!({"upper": "HI"}));
    assert_eq!(run["usage"]["modelCalls"], 2, "{run}");
    assert_eq!(run["usage"]["toolCalls"], 1, "{run}");
    // Every request to the client is audited, never its prompt or answer.
    let audit = app
        .get("/api/v1/audit?action=client.sample")
        .await
        .assert_ok(StatusCode::OK);
    let entries = audit["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 5, "{audit}");
    assert!(!audit.to_string().contains("shout hi"), "{audit}");
}

#[tokio::test]
async fn a_run_on_the_clients_model_started_over_rest_names_the_fix() {
    let app = setup().await;
    let refused = app
        .post(
            "/api/v1/agents/sampler/runs",
            &json!({"input": "shout hi", "wait": true}),
        )
        .await;
    let message = refused.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(
        message.contains("a REST, CLI or scheduled start has no client to ask")
            && message.contains("model.service"),
        "{message}"
    );
}
