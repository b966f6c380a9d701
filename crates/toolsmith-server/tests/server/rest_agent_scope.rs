//! An agent run's `toolPolicy` holds on every way the run reaches a tool (issue 37): not only
//! the model's direct calls, which the runner checks, but a JS tool's nested `callTool` and
//! `listTools`, and the scheduled tasks the run makes or triggers (the scheduler calls the task's tool later, as the agent, bounded by the agent's
//! definition as it is then). Driven over REST against the scripted model server of
//! `rest_agents`.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::agent_support::{
    Proto, Script, agent_body, calls, configure, create_agent, model_server, run_waited, says,
    tool_result,
};
use crate::rest_support::{TestApp, app_reaching, execute, tool_body};

/// A JS tool `name` running `code`.
fn js_tool(name: &str, code: &str) -> Value {
    json!({
        "name": name,
        "description": "A tool of the test",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": true},
        "code": code,
    })
}

/// An app reaching a model server, with `secret_tool` (upper-cases `text`), the service
/// `local` and an agent `scoped` allowed `allow`; the script and the agent's id.
async fn scoped(allow: &[&str]) -> (TestApp, Script, String) {
    let script = Script::default();
    let host = model_server(&script).await;
    let app = app_reaching(&host).await;
    app.create_tool(&tool_body("secret_tool")).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    let mut body = agent_body("scoped");
    body["toolPolicy"] = json!({ "allow": allow });
    let agent = create_agent(&app, &body).await;
    (app, script, agent["id"].as_str().unwrap().to_owned())
}

/// Runs `agent` to its end, the model calling `tool` with `args` then answering; the run.
async fn run_calling(
    app: &TestApp,
    script: &Script,
    agent: &str,
    tool: &str,
    args: Value,
) -> Value {
    script.push(calls(tool, &args));
    script.push(says("Done."));
    run_waited(app, agent, "Do it.").await
}

#[tokio::test]
async fn a_js_tools_nested_call_is_held_to_the_agents_tool_policy() {
    let (app, script, agent) = scoped(&["wrapper", "lister"]).await;
    app.create_tool(&js_tool(
        "wrapper",
        "return await utils.callTool('secret_tool', {text: 'psst'});",
    ))
    .await;
    app.create_tool(&js_tool(
        "lister",
        "return { names: utils.listTools().map(t => t.name) };",
    ))
    .await;

    // Outside a run the user's own call of the wrapper reaches the secret tool.
    let direct = execute(&app, "wrapper", json!({}))
        .await
        .assert_ok(StatusCode::OK);
    assert!(direct.to_string().contains("PSST"), "{direct}");

    // Inside the run, the nested call is refused, naming the agent's tool policy.
    let run = run_calling(&app, &script, &agent, "wrapper", json!({})).await;
    assert_eq!(run["status"], "completed", "{run}");
    let (content, is_error) = tool_result(&run);
    assert!(is_error, "{run}");
    assert!(!content.contains("PSST"), "the secret tool ran: {content}");
    assert!(
        content.contains("toolPolicy")
            && content.contains("scoped")
            && content.contains("secret_tool"),
        "{content}"
    );

    // And `listTools` inside the run shows only what the agent may call.
    let run = run_calling(&app, &script, &agent, "lister", json!({})).await;
    let (content, is_error) = tool_result(&run);
    assert!(!is_error, "{run}");
    assert!(content.contains("wrapper"), "{content}");
    assert!(!content.contains("secret_tool"), "{content}");

    // The same agent allowed the secret tool too: the nested call runs.
    let mut body = agent_body("scoped");
    body["toolPolicy"] = json!({"allow": ["wrapper", "secret_tool"]});
    app.json(Method::PUT, &format!("/api/v1/agents/{agent}"), &body)
        .await
        .assert_ok(StatusCode::OK);
    let run = run_calling(&app, &script, &agent, "wrapper", json!({})).await;
    let (content, is_error) = tool_result(&run);
    assert!(!is_error && content.contains("PSST"), "{run}");
}

#[tokio::test]
async fn a_scheduled_task_of_a_run_is_held_to_the_agents_tool_policy() {
    let (app, script, agent) = scoped(&["create_scheduled_task", "trigger_task", "shout"]).await;
    app.create_tool(&tool_body("shout")).await;
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/scheduler",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let task = |tool: &str| {
        json!({"name": "nightly", "schedule": "0 3 * * *", "tool": tool,
            "arguments": {"text": "psst"}})
    };

    // A task calling a tool outside the agent's policy is refused when the run makes it.
    let run = run_calling(
        &app,
        &script,
        &agent,
        "create_scheduled_task",
        task("secret_tool"),
    )
    .await;
    let (content, is_error) = tool_result(&run);
    assert!(is_error, "{run}");
    assert!(
        content.contains("toolPolicy") && content.contains("secret_tool"),
        "{content}"
    );

    // One within it is made; when the definition narrows later, the task's tool is refused
    // when it runs (here triggered by the run).
    let run = run_calling(
        &app,
        &script,
        &agent,
        "create_scheduled_task",
        task("shout"),
    )
    .await;
    let (content, is_error) = tool_result(&run);
    assert!(!is_error, "{run}");
    let made: Value = serde_json::from_str(&content).unwrap();
    let id = made["task"]["id"]
        .as_str()
        .or_else(|| made["id"].as_str())
        .unwrap_or_else(|| panic!("no task id: {made}"))
        .to_owned();
    let mut body = agent_body("scoped");
    body["toolPolicy"] = json!({"allow": ["trigger_task"]});
    app.json(Method::PUT, &format!("/api/v1/agents/{agent}"), &body)
        .await
        .assert_ok(StatusCode::OK);
    let run = run_calling(&app, &script, &agent, "trigger_task", json!({"taskId": id})).await;
    let (content, _) = tool_result(&run);
    assert!(!content.contains("PSST"), "the task's tool ran: {content}");
    assert!(
        content.contains("toolPolicy") && content.contains("shout"),
        "{content}"
    );
}
