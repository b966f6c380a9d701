//! Agents Toolsmith runs (issue 37), over REST, against a scripted model server the tests start:
//! a real HTTP server on 127.0.0.1 speaking OpenAI-compatible Chat Completions and Anthropic
//! Messages, with and without streaming (SSE), answering each request with the next reply of
//! its test's script and keeping every request it got. Definitions (create, read, revise,
//! delete, another user's invisible), runs that call tools through the pipeline, a call that
//! waits for a person's approval, the iteration limit, a cancelled run, a failing provider
//! (retried, then a clear failure), and a loopback model server the operator did not allow.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use crate::rest_support::{
    TestApp, app_reaching, json_request, request, serve_loopback, tool_body,
};

const KEY: &str = "sk-test-model-key-0123456789abcdef";

/// One scripted answer of the model server.
pub(crate) enum Reply {
    Json(u16, Value),
    Sse(String),
    /// Never answers (a model that takes its time).
    Hang,
}

/// A model server's script and what it saw.
#[derive(Clone, Default)]
pub(crate) struct Script {
    pub(crate) replies: Arc<Mutex<VecDeque<Reply>>>,
    /// Each request's body and its `authorization` / `x-api-key` header.
    pub(crate) seen: Arc<Mutex<Vec<(Value, String)>>>,
    pub(crate) arrived: Arc<tokio::sync::Notify>,
}

impl Script {
    pub(crate) fn push(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }

    pub(crate) fn seen(&self) -> Vec<(Value, String)> {
        self.seen.lock().unwrap().clone()
    }
}

async fn answer(State(script): State<Script>, headers: HeaderMap, body: String) -> Response {
    let key = headers
        .get("authorization")
        .or_else(|| headers.get("x-api-key"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    script
        .seen
        .lock()
        .unwrap()
        .push((serde_json::from_str(&body).unwrap_or(Value::Null), key));
    script.arrived.notify_one();
    let next = script.replies.lock().unwrap().pop_front();
    match next {
        Some(Reply::Json(status, body)) => (
            StatusCode::from_u16(status).unwrap(),
            [("content-type", "application/json")],
            body.to_string(),
        )
            .into_response(),
        Some(Reply::Sse(text)) => (
            StatusCode::OK,
            [("content-type", "text/event-stream")],
            text,
        )
            .into_response(),
        Some(Reply::Hang) => {
            std::future::pending::<()>().await;
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        None => (
            StatusCode::BAD_REQUEST,
            "the test's script has no more replies",
        )
            .into_response(),
    }
}

/// Starts a model server on 127.0.0.1; its `host:port`.
pub(crate) async fn model_server(script: &Script) -> String {
    let router = Router::new()
        .route("/v1/chat/completions", post(answer))
        .route("/v1/messages", post(answer))
        .with_state(script.clone());
    serve_loopback(router).await
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Proto {
    OpenAi,
    Anthropic,
}

/// A model turn that calls `shout` with `text`, in `proto`'s shape.
pub(crate) fn calls_shout(proto: Proto, stream: bool, id: &str, text: &str) -> Reply {
    let args = json!({"text": text}).to_string();
    match (proto, stream) {
        (Proto::OpenAi, false) => Reply::Json(
            200,
            json!({
                "id": "chatcmpl-1", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": null,
                    "tool_calls": [{"id": id, "type": "function",
                        "function": {"name": "shout", "arguments": args}}],
                }}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }),
        ),
        (Proto::OpenAi, true) => {
            let (a, b) = args.split_at(5);
            let chunks = [
                json!({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": id,
                    "type": "function", "function": {"name": "shout", "arguments": a}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                    "function": {"arguments": b}}]}}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
            ];
            Reply::Sse(openai_sse(&chunks))
        }
        (Proto::Anthropic, false) => Reply::Json(
            200,
            json!({
                "id": "msg_1", "type": "message", "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me shout."},
                    {"type": "tool_use", "id": id, "name": "shout", "input": {"text": text}},
                ],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }),
        ),
        (Proto::Anthropic, true) => {
            let (a, b) = args.split_at(5);
            Reply::Sse(anthropic_sse(&[
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me shout."}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": id, "name": "shout", "input": {}}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": a}}),
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": b}}),
                json!({"type": "content_block_stop", "index": 1}),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
                json!({"type": "message_stop"}),
            ]))
        }
    }
}

/// A final answer `text`, in `proto`'s shape.
pub(crate) fn answers(proto: Proto, stream: bool, text: &str) -> Reply {
    match (proto, stream) {
        (Proto::OpenAi, false) => Reply::Json(
            200,
            json!({
                "id": "chatcmpl-2", "object": "chat.completion",
                "choices": [{"index": 0, "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }),
        ),
        (Proto::OpenAi, true) => {
            let (a, b) = text.split_at(text.len() / 2);
            Reply::Sse(openai_sse(&[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": a}}]}),
                json!({"choices": [{"index": 0, "delta": {"content": b}}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}),
            ]))
        }
        (Proto::Anthropic, false) => Reply::Json(
            200,
            json!({
                "id": "msg_2", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }),
        ),
        (Proto::Anthropic, true) => {
            let (a, b) = text.split_at(text.len() / 2);
            Reply::Sse(anthropic_sse(&[
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": a}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": b}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
                json!({"type": "message_stop"}),
            ]))
        }
    }
}

pub(crate) fn openai_sse(chunks: &[Value]) -> String {
    let mut out = String::new();
    for chunk in chunks {
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

fn anthropic_sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// The Config Center service `local` for `proto` at `host`.
pub(crate) async fn configure(app: &TestApp, proto: Proto, stream: bool, host: &str) {
    app.post(
        "/api/v1/config/services",
        &json!({"name": "local", "fields": [
            {"name": "protocol", "kind": "text", "required": true},
            {"name": "base_url", "kind": "url"},
            {"name": "api_key", "kind": "secret"},
            {"name": "stream", "kind": "boolean"},
        ]}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let (protocol, base_url) = match proto {
        Proto::OpenAi => ("openai", format!("http://{host}/v1")),
        Proto::Anthropic => ("anthropic", format!("http://{host}")),
    };
    app.post(
        "/api/v1/config/services/local/entries",
        &json!({"values": {
            "protocol": protocol,
            "base_url": base_url,
            "api_key": KEY,
            "stream": stream,
        }}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
}

pub(crate) fn agent_body(name: &str) -> Value {
    json!({
        "name": name,
        "displayName": "Helper",
        "instructions": "Use your tools, then answer.",
        "model": {"service": "local", "model": "test-model"},
        "toolPolicy": {"allow": ["shout"]},
        "contextFiles": [{"name": "style.md", "text": "Be brief."}],
    })
}

/// An app that may reach a model server on loopback, with the tool `shout`, the service
/// `local` and the agent `helper`; the script and the agent's id.
pub(crate) async fn setup(proto: Proto, stream: bool, shout: Value) -> (TestApp, Script, String) {
    let script = Script::default();
    let host = model_server(&script).await;
    let app = app_reaching(&host).await;
    app.create_tool(&shout).await;
    configure(&app, proto, stream, &host).await;
    let agent = app
        .post("/api/v1/agents", &agent_body("helper"))
        .await
        .assert_ok(StatusCode::CREATED);
    (app, script, agent["id"].as_str().unwrap().to_owned())
}

/// Asks for the run until `done` holds (a run only answers when asked), for at most 30 s.
pub(crate) async fn run_until(
    app: &TestApp,
    agent: &str,
    run: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let now = app
            .get(&format!("/api/v1/agents/{agent}/runs/{run}"))
            .await
            .assert_ok(StatusCode::OK);
        if done(&now) {
            return now;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the run never got there: {now}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

pub(crate) fn kinds(run: &Value) -> Vec<String> {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn an_agent_is_its_owners_and_every_revision_is_kept() {
    let app = TestApp::new().await;
    let created = app
        .post("/api/v1/agents", &agent_body("helper"))
        .await
        .assert_ok(StatusCode::CREATED);
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
            let (app, script, agent) = setup(proto, stream, tool_body("shout")).await;
            script.push(calls_shout(proto, stream, "call_1", "hello"));
            script.push(answers(proto, stream, "I shouted HELLO."));
            let run = app
                .post(
                    &format!("/api/v1/agents/{agent}/runs"),
                    &json!({"input": "Shout hello.", "wait": true}),
                )
                .await
                .assert_ok(StatusCode::OK);
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
    let (app, script, agent) = setup(Proto::OpenAi, false, shout).await;
    script.push(calls_shout(Proto::OpenAi, false, "call_1", "careful"));
    script.push(answers(Proto::OpenAi, false, "Done, carefully."));
    let started = app
        .post(
            &format!("/api/v1/agents/{agent}/runs"),
            &json!({"input": "Shout carefully."}),
        )
        .await
        .assert_ok(StatusCode::ACCEPTED);
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
    let (app, script, agent) = setup(Proto::Anthropic, false, tool_body("shout")).await;
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
    let run = app
        .post(
            &format!("/api/v1/agents/{agent}/runs"),
            &json!({"input": "Loop.", "wait": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
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
    let (app, script, agent) = setup(Proto::OpenAi, true, tool_body("shout")).await;
    script.push(Reply::Hang);
    let arrived = script.arrived.notified();
    let started = app
        .post(
            &format!("/api/v1/agents/{agent}/runs"),
            &json!({"input": "Think long."}),
        )
        .await
        .assert_ok(StatusCode::ACCEPTED);
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
    let (app, script, agent) = setup(Proto::OpenAi, false, tool_body("shout")).await;
    // A 429, then an answer: the retry is recorded and the run completes.
    script.push(Reply::Json(429, json!({"error": {"message": "slow down"}})));
    script.push(answers(Proto::OpenAi, false, "Fine."));
    let run = app
        .post(
            &format!("/api/v1/agents/{agent}/runs"),
            &json!({"input": "Hi.", "wait": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
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
    let run = app
        .post(
            &format!("/api/v1/agents/{agent}/runs"),
            &json!({"input": "Hi again.", "wait": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
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
    let run = app
        .post(
            &format!("/api/v1/agents/{agent}/runs"),
            &json!({"input": "Once more.", "wait": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
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
    let agent = app
        .post("/api/v1/agents", &agent_body("helper"))
        .await
        .assert_ok(StatusCode::CREATED);
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
    let other = app
        .post("/api/v1/agents", &body)
        .await
        .assert_ok(StatusCode::CREATED);
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
    let agent = app
        .post("/api/v1/agents", &agent_body("helper"))
        .await
        .assert_ok(StatusCode::CREATED);
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
