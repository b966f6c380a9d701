//! A JS tool's side of the conversation (issue 34): `mcp.log`, `mcp.progress`, `mcp.sample` and
//! `mcp.elicit` through real MCP (rmcp's client over an in-process pipe, answering sampling and
//! elicitation itself) and through REST, which has no client to ask; the permissions, the
//! policy and the limits that govern asking, and the audit entries each request leaves.

#![allow(
    deprecated,
    reason = "logging and sampling are MCP 2025-11-25's; rmcp marks them for SEP-2577"
)]

use rmcp::model::{CallToolRequestParams, LoggingLevel, SetLevelRequestParams};
use serde_json::{Value, json};
use toolsmith_server::auth::Identity;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::ToolServiceSettings;
use toolsmith_service::governance::client_requests::ClientRequestLimits;

use crate::mcp_person::{Person, Seen};
use crate::mcp_support::{McpClient, call_ok, connect_in_process};
use crate::rest_support::{TestApp, execute};

async fn connect(state: &AppState, person: Person) -> McpClient<Person> {
    connect_in_process(state, Identity::local_default(), person).await
}

/// Calls `tool` without arguments; whether it failed, and its text.
async fn call(client: &McpClient<Person>, tool: &str) -> (bool, String) {
    let (failed, _, text) = call_ok(client, tool, json!({})).await;
    (failed, text)
}

/// Creates the JS tool `name` running `code` with `permissions`, over REST.
async fn tool(app: &TestApp, name: &str, code: &str, permissions: &[&str]) {
    app.create_tool(&json!({
        "name": name,
        "description": format!("{name}, a test tool that talks to its client"),
        "parameters": {"type": "object"},
        "code": code,
        "permissions": permissions,
    }))
    .await;
}

/// Logs, reports progress, asks the model and the person, and returns what they answered.
const CONVERSATION: &str = "
    mcp.log('info', {step: 'start'}, 'conversation');
    mcp.progress(1, 3, 'asking the model');
    const sampled = await mcp.sample({messages: [{role: 'user', content: 'What is 2 + 2?'}], systemPrompt: 'Answer in words', maxTokens: 10});
    mcp.progress(2, 3, 'asking the person');
    const elicited = await mcp.elicit({message: 'Your name?', requestedSchema: {type: 'object', properties: {name: {type: 'string'}}, required: ['name']}});
    mcp.log('debug', 'done');
    mcp.progress(3, 3);
    return {answer: sampled.content.text, model: sampled.model, name: elicited.content.name};
";

async fn audit(app: &TestApp, action: &str) -> Vec<Value> {
    let query = toolsmith_core::AuditQuery {
        action: Some(action.to_owned()),
        limit: 50,
        ..Default::default()
    };
    app.state.service.audit().list(&query).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_logs_reports_progress_samples_and_elicits_through_the_calling_client() {
    let app = TestApp::new().await;
    tool(&app, "converse", CONVERSATION, &["sampling", "elicitation"]).await;
    let seen = Seen::default();
    let client = connect(&app.state, Person::new(true, "four", &seen)).await;
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
        .await
        .unwrap();
    let (failed, text) = call(&client, "converse").await;
    assert!(!failed, "{text}");
    let result: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        result,
        json!({"answer": "four", "model": "test-model", "name": "Ada"})
    );
    // The model got the tool's request as MCP's sampling/createMessage params.
    let sampled = seen.sampled.lock().unwrap().clone();
    assert_eq!(sampled.len(), 1, "{sampled:?}");
    assert_eq!(sampled[0]["systemPrompt"], "Answer in words");
    assert_eq!(sampled[0]["maxTokens"], 10);
    assert_eq!(
        sampled[0]["messages"][0]["content"]["text"], "What is 2 + 2?",
        "{sampled:?}"
    );
    let elicited = seen.elicited.lock().unwrap().clone();
    assert_eq!(elicited.len(), 1, "{elicited:?}");
    assert_eq!(elicited[0]["message"], "Your name?");
    // Every log and progress message reached the client (the server sends them in order before
    // the result; rmcp's client hands each to its handler on a task of its own, so they are
    // compared sorted).
    let (logs, progress_seen) = seen.settled(2, 3).await;
    assert_eq!(
        logs,
        [
            ("debug".to_owned(), None, json!("done")),
            (
                "info".to_owned(),
                Some("conversation".to_owned()),
                json!({"step": "start"})
            ),
        ]
    );
    let progress: Vec<f64> = progress_seen.iter().map(|p| p.0).collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(
        progress_seen[0],
        (1.0, Some(3.0), Some("asking the model".to_owned()))
    );
    // Each request is in the audit log, without the prompt or the answer.
    let entries = audit(&app, "client.sample").await;
    assert_eq!(entries.len(), 1, "{entries:#?}");
    assert_eq!(entries[0]["details"]["outcome"], "answered");
    assert_eq!(entries[0]["targetName"], "converse", "{entries:#?}");
    assert!(!entries[0].to_string().contains("2 + 2"), "{entries:#?}");
    let entries = audit(&app, "client.elicit").await;
    assert_eq!(entries.len(), 1, "{entries:#?}");
    assert_eq!(entries[0]["details"]["action"], "accept");
    client.cancel().await.unwrap();
}

/// What the last run of `tool` asked of its client, as REST's executions list it.
async fn asked(app: &TestApp, tool: &str) -> Value {
    let body = app
        .get(&format!("/api/v1/executions?tool={tool}&limit=1"))
        .await
        .json;
    body["data"]["executions"][0]["clientRequests"].clone()
}

/// What a run asked of its client is a field of its execution record, stored and shown by REST
/// executions: the logs, progress, samples and elicitations a run over MCP made (the requests
/// the gate refused: `the_policy_and_the_limits_bound_asking`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_execution_record_counts_what_the_run_asked_of_its_client() {
    let app = TestApp::new().await;
    tool(&app, "converse", CONVERSATION, &["sampling", "elicitation"]).await;
    let seen = Seen::default();
    let client = connect(&app.state, Person::new(true, "four", &seen)).await;
    let (failed, text) = call(&client, "converse").await;
    assert!(!failed, "{text}");
    assert_eq!(
        asked(&app, "converse").await,
        json!({"logs": 2, "progress": 3, "samples": 1, "elicitations": 1, "refused": 0})
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_needs_the_permission_and_a_client_that_can_answer() {
    let app = TestApp::new().await;
    tool(&app, "undeclared", "return await mcp.sample('hi')", &[]).await;
    tool(
        &app,
        "declared",
        "return await mcp.sample('hi')",
        &["sampling"],
    )
    .await;
    let seen = Seen::default();
    let able = connect(&app.state, Person::new(true, "four", &seen)).await;
    let (failed, text) = call(&able, "undeclared").await;
    assert!(failed, "{text}");
    assert!(
        text.contains("mcp.sample asks the client's model, which a tool may do only when it declares permissions: [\"sampling\"]"),
        "{text}"
    );
    // An MCP client that declared no sampling is named as the reason.
    let unable = connect(&app.state, Person::new(false, "four", &seen)).await;
    let (failed, text) = call(&unable, "declared").await;
    assert!(failed, "{text}");
    assert!(
        text.contains("did not declare the sampling capability"),
        "{text}"
    );
    assert!(seen.sampled.lock().unwrap().is_empty());
    able.cancel().await.unwrap();
    unable.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_rest_a_sample_is_refused_saying_where_it_works_and_logs_stay_in_the_console() {
    let app = TestApp::new().await;
    tool(
        &app,
        "ask_rest",
        "mcp.log('warning', 'about to ask'); mcp.progress(1); return await mcp.sample('hi');",
        &["sampling"],
    )
    .await;
    let res = execute(&app, "ask_rest", json!({})).await;
    let body = res.text.clone();
    assert!(
        body.contains("mcp.sample: Asking the client's model (sampling) is not possible here"),
        "{body}"
    );
    assert!(body.contains("REST"), "{body}");
    assert!(body.contains("over MCP"), "{body}");
    assert!(
        body.contains("[mcp.log warning] about to ask"),
        "the log line is in the call's console: {body}"
    );
    let entries = audit(&app, "client.sample").await;
    assert_eq!(entries.len(), 1, "{entries:#?}");
    assert_eq!(entries[0]["details"]["outcome"], "failed", "{entries:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_policy_and_the_limits_bound_asking() {
    let service = ToolServiceSettings {
        policy: Some(
            serde_json::from_value(json!({"users": {"default": {"deny": ["mcp:elicitation"]}}}))
                .unwrap(),
        ),
        client_requests: ClientRequestLimits {
            samples_per_call: 3,
            ..ClientRequestLimits::default()
        },
        ..ToolServiceSettings::default()
    };
    let app = TestApp::with_configs(service, ServerSettings::default()).await;
    // A tool that samples in a loop stops at the call's limit, whatever it catches.
    tool(
        &app,
        "drain",
        "let answered = 0; let refusal = ''; for (let i = 0; i < 100; i++) { try { await mcp.sample('again'); answered++; } catch (e) { refusal = e.message; break; } } return {answered, refusal};",
        &["sampling"],
    )
    .await;
    tool(
        &app,
        "ask_person",
        "return await mcp.elicit({message: 'Name?', requestedSchema: {type: 'object', properties: {name: {type: 'string'}}}})",
        &["elicitation"],
    )
    .await;
    let seen = Seen::default();
    let client = connect(&app.state, Person::new(true, "four", &seen)).await;
    let (failed, text) = call(&client, "drain").await;
    assert!(!failed, "{text}");
    let result: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(result["answered"], 3, "{result}");
    assert!(
        result["refusal"].as_str().unwrap().contains(
            "this call has made its 3 sampling requests (the `mcp_max_samples_per_call` setting)"
        ),
        "{result}"
    );
    assert_eq!(seen.sampled.lock().unwrap().len(), 3);

    let (failed, text) = call(&client, "ask_person").await;
    assert!(failed, "{text}");
    assert!(
        text.contains("denied by deny entry 'mcp:elicitation' of user 'default'"),
        "{text}"
    );
    assert!(seen.elicited.lock().unwrap().is_empty());
    let entries = audit(&app, "client.elicit").await;
    assert_eq!(entries[0]["details"]["outcome"], "refused", "{entries:#?}");
    // The execution records count what was asked and what the rule refused.
    assert_eq!(
        asked(&app, "drain").await,
        json!({"logs": 0, "progress": 0, "samples": 3, "elicitations": 0, "refused": 1})
    );
    assert_eq!(
        asked(&app, "ask_person").await,
        json!({"logs": 0, "progress": 0, "samples": 0, "elicitations": 0, "refused": 1})
    );
    client.cancel().await.unwrap();
}

/// The `js` example of `docs/js-tools.md`'s "Talking to the client" runs as written.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_tools_docs_example_runs_over_mcp() {
    let docs =
        std::fs::read_to_string(crate::mcp_support::repo_root().join("docs/js-tools.md")).unwrap();
    let section = docs
        .split("## Talking to the client: `mcp`")
        .nth(1)
        .expect("the section is in docs/js-tools.md");
    let code = section
        .split("```js\n")
        .nth(1)
        .and_then(|block| block.split("\n```").next())
        .expect("the section has a js example");
    let app = TestApp::new().await;
    tool(&app, "publish_summary", code, &["sampling", "elicitation"]).await;
    let seen = Seen::default();
    let client = connect(&app.state, Person::new(true, "four", &seen)).await;
    let Value::Object(args) = json!({"url": "https://example.com/a", "text": "A long text."})
    else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("publish_summary").with_arguments(args))
        .await
        .unwrap();
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(result.is_error, Some(false), "{text}");
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        value,
        json!({"summary": "four", "model": "test-model", "name": "Ada", "check": true, "email": "ada@example.com"})
    );
    assert!(
        seen.sampled.lock().unwrap()[0]
            .to_string()
            .contains("Summarize in one line: A long text.")
    );
    client.cancel().await.unwrap();
}
