//! Shared by the agent test files (`agent_*`, `rest_agent*`, `mcp_manage`): the scripted model
//! server the tests start on 127.0.0.1 — a real HTTP server speaking OpenAI-compatible Chat
//! Completions (`/v1/chat/completions`) and Anthropic Messages (`/v1/messages`), with and
//! without streaming (SSE) — whose answers the test holds, either as a queue of replies
//! ([`Script::push`]) or as a function of each request ([`Script::replying`],
//! [`Script::answering`]); the model turns it answers with; the Config Center service `local`
//! the agents run on; agent definitions; starting a run and waiting for it; reading its steps;
//! calling a tool over REST as an agent.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use crate::rest_support::{TestApp, app_reaching, request, serve_loopback};

/// The API key of the service `local` ([`configure`]): the model server sees it, nobody else.
pub const KEY: &str = "sk-test-model-key-0123456789abcdef";

/// One scripted answer of the model server.
pub enum Reply {
    Json(u16, Value),
    Sse(String),
    /// Never answers (a model that takes its time).
    Hang,
}

/// What answers a request, given its body, when the script is a function of the request.
type Answer = Arc<dyn Fn(Value) -> Pin<Box<dyn Future<Output = Reply> + Send>> + Send + Sync>;

/// A model server's script and what it saw.
#[derive(Clone, Default)]
pub struct Script {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    /// Each request's body and its `authorization` / `x-api-key` header.
    seen: Arc<Mutex<Vec<(Value, String)>>>,
    /// Told each time a request arrives.
    pub arrived: Arc<tokio::sync::Notify>,
    /// Answers each request when set; otherwise the queue does.
    answer: Option<Answer>,
}

impl Script {
    /// A script answering each request (its body) with what `answer` makes of it.
    pub fn replying(answer: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Script {
        let answer = Arc::new(answer);
        Script::answering(move |body| {
            let reply = answer(&body);
            async move { reply }
        })
    }

    /// A script answering each request (its body) with what `answer` makes of it, in its own
    /// time (it may wait for the test).
    pub fn answering<F, Fut>(answer: F) -> Script
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Reply> + Send + 'static,
    {
        let answer: Answer = Arc::new(move |body| -> Pin<Box<dyn Future<Output = Reply> + Send>> {
            Box::pin(answer(body))
        });
        Script {
            answer: Some(answer),
            ..Script::default()
        }
    }

    /// Queues the next reply.
    pub fn push(&self, reply: Reply) {
        self.replies.lock().unwrap().push_back(reply);
    }

    /// The next queued reply, if any.
    fn next_queued(&self) -> Option<Reply> {
        self.replies.lock().unwrap().pop_front()
    }

    /// Every request so far: its body and its key header.
    pub fn seen(&self) -> Vec<(Value, String)> {
        self.seen.lock().unwrap().clone()
    }

    /// Every request's body so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.seen().into_iter().map(|(body, _)| body).collect()
    }

    /// The last request's body.
    pub fn last(&self) -> Value {
        self.bodies().pop().expect("the model was asked")
    }
}

async fn answer(State(script): State<Script>, headers: HeaderMap, body: String) -> Response {
    let key = headers
        .get("authorization")
        .or_else(|| headers.get("x-api-key"))
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    script.seen.lock().unwrap().push((body.clone(), key));
    script.arrived.notify_one();
    let next = match &script.answer {
        Some(answer) => Some(answer(body).await),
        None => script.next_queued(),
    };
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

/// Starts a model server on 127.0.0.1 answering by `script`; its `host:port`.
pub async fn model_server(script: &Script) -> String {
    model_server_with(script, Router::new()).await
}

/// [`model_server`] with the routes of `more` too.
pub async fn model_server_with(script: &Script, more: Router) -> String {
    let router = Router::new()
        .route("/v1/chat/completions", post(answer))
        .route("/v1/messages", post(answer))
        .with_state(script.clone())
        .merge(more);
    serve_loopback(router).await
}

/// The last message of a Chat Completions request.
pub struct Last {
    /// It is a tool's result.
    pub from_tool: bool,
    pub text: String,
    /// How many messages the request carried.
    pub messages: usize,
}

/// The last message of the Chat Completions request `body`.
pub fn last_message(body: &Value) -> Last {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    Last {
        from_tool: last["role"] == "tool",
        text: last["content"].as_str().unwrap_or_default().to_owned(),
        messages: messages.len(),
    }
}

/// The system prompt (the first message) of the Chat Completions request `body`.
pub fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The tools offered to the model in the Chat Completions request `body`.
pub fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| {
                    t["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                })
                .collect()
        })
        .unwrap_or_default()
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Proto {
    OpenAi,
    Anthropic,
}

/// An OpenAI-compatible model turn (not streamed) answering `text`.
pub fn says(text: &str) -> Reply {
    answers(Proto::OpenAi, false, text)
}

/// An OpenAI-compatible model turn (not streamed) calling `tool` with `args`.
pub fn calls(tool: &str, args: &Value) -> Reply {
    calls_all(&[(tool, args.clone())])
}

/// An OpenAI-compatible model turn (not streamed) making each call of `calls` (tool and
/// arguments), with the ids `call_0`, `call_1`, ….
pub fn calls_all(calls: &[(&str, Value)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| {
            json!({"id": format!("call_{i}"), "type": "function",
                "function": {"name": name, "arguments": args.to_string()}})
        })
        .collect();
    Reply::Json(
        200,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null, "tool_calls": calls,
            }}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }),
    )
}

/// A model turn that calls `shout` with `text`, in `proto`'s shape.
pub fn calls_shout(proto: Proto, stream: bool, id: &str, text: &str) -> Reply {
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
pub fn answers(proto: Proto, stream: bool, text: &str) -> Reply {
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

/// An OpenAI-compatible SSE stream of `chunks`, ended by `[DONE]`.
pub fn openai_sse(chunks: &[Value]) -> String {
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

/// The Config Center service `local` (the model provider agents run on) for `proto` at `host`,
/// its key [`KEY`], streaming if `stream`.
pub async fn configure(app: &TestApp, proto: Proto, stream: bool, host: &str) {
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

/// Switches on each tool group of `groups` (they are off until an admin switches them on).
pub async fn enable_groups(app: &TestApp, groups: &[&str]) {
    for group in groups {
        app.json(
            Method::PUT,
            &format!("/api/v1/tool-groups/{group}"),
            &json!({"enabled": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
    }
}

/// The agent `helper`-like definition `name` of the `rest_agents` tests: on `local`, allowed
/// `shout`, with the context file `style.md`.
pub fn agent_body(name: &str) -> Value {
    json!({
        "name": name,
        "displayName": "Helper",
        "instructions": "Use your tools, then answer.",
        "model": {"service": "local", "model": "test-model"},
        "toolPolicy": {"allow": ["shout"]},
        "contextFiles": [{"name": "style.md", "text": "Be brief."}],
    })
}

/// An agent definition `name` with `instructions`, on the service `local` (model
/// `test-model`), allowed the tools and groups of `allow`.
pub fn agent_on_local(name: &str, instructions: &str, allow: &[&str]) -> Value {
    json!({
        "name": name,
        "instructions": instructions,
        "model": {"service": "local", "model": "test-model"},
        "toolPolicy": {"allow": allow},
    })
}

/// Creates the agent `body` over REST; the definition as stored.
pub async fn create_agent(app: &TestApp, body: &Value) -> Value {
    app.post("/api/v1/agents", body)
        .await
        .assert_ok(StatusCode::CREATED)
}

/// An app that may reach a model server on loopback, with the tool `shout` (`shout` its
/// definition), the service `local` for `proto` and the agent `helper` ([`agent_body`]); the
/// script and the agent's id.
pub async fn setup_helper(proto: Proto, stream: bool, shout: Value) -> (TestApp, Script, String) {
    let script = Script::default();
    let host = model_server(&script).await;
    let app = app_reaching(&host).await;
    app.create_tool(&shout).await;
    configure(&app, proto, stream, &host).await;
    let agent = create_agent(&app, &agent_body("helper")).await;
    (app, script, agent["id"].as_str().unwrap().to_owned())
}

/// Starts a run of `agent` (id or name) on `input` and waits for its end; the ended run.
pub async fn run_waited(app: &TestApp, agent: &str, input: &str) -> Value {
    app.post(
        &format!("/api/v1/agents/{agent}/runs"),
        &json!({"input": input, "wait": true}),
    )
    .await
    .assert_ok(StatusCode::OK)
}

/// Starts a run of `agent` (id or name) on `input` without waiting; the run as started.
pub async fn start_run(app: &TestApp, agent: &str, input: &str) -> Value {
    app.post(
        &format!("/api/v1/agents/{agent}/runs"),
        &json!({"input": input}),
    )
    .await
    .assert_ok(StatusCode::ACCEPTED)
}

/// Asks `ask` until `done` holds of its answer, every 20 ms for at most `within` (a record
/// only answers when asked); the answer. Fails naming `what` and the last answer.
pub async fn until<T, Fut>(
    what: &str,
    within: Duration,
    mut ask: impl FnMut() -> Fut,
    done: impl Fn(&T) -> bool,
) -> T
where
    Fut: Future<Output = T>,
    T: std::fmt::Display,
{
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let now = ask().await;
        if done(&now) {
            return now;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} never got there: {now}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Asks for the run `run` of `agent` through `app` until `done` holds, for at most 30 s.
pub async fn run_until(
    app: &TestApp,
    agent: &str,
    run: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let path = format!("/api/v1/agents/{agent}/runs/{run}");
    until(
        "the run",
        Duration::from_secs(30),
        || async { app.get(&path).await.assert_ok(StatusCode::OK) },
        done,
    )
    .await
}

/// `/metrics` (a scrape only answers when asked) until `line` is in it, for at most `within`.
pub async fn metrics_until(app: &TestApp, line: &str, within: Duration) -> String {
    until(
        &format!("/metrics line {line}"),
        within,
        || async { app.get("/metrics").await.text },
        |text: &String| text.lines().any(|l| l == line),
    )
    .await
}

/// The kinds of the run's steps, in order.
pub fn kinds(run: &Value) -> Vec<String> {
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap().to_owned())
        .collect()
}

/// The content of the run's first tool result, and whether it was an error.
pub fn tool_result(run: &Value) -> (String, bool) {
    let step = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["kind"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool result: {run}"));
    (
        step["detail"]["content"].to_string(),
        step["detail"]["isError"].as_bool().unwrap(),
    )
}

/// Calls `tool` over REST (`POST /api/v1/tools/{tool}/execute`) with `headers`; its result
/// content (the whole answer when it has no `data`) and whether it is an error.
pub async fn call_with(
    app: &TestApp,
    tool: &str,
    args: Value,
    headers: &[(&str, &str)],
) -> (Value, bool) {
    let mut req = request(Method::POST, &format!("/api/v1/tools/{tool}/execute"))
        .header("content-type", "application/json");
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let res = app
        .send(
            req.body(axum::body::Body::from(
                json!({"arguments": args}).to_string(),
            ))
            .unwrap(),
        )
        .await;
    let data = &res.json["data"];
    let error = data["isError"]
        .as_bool()
        .unwrap_or(res.status != StatusCode::OK);
    let content = if data.is_null() {
        res.json.clone()
    } else {
        data["result"].clone()
    };
    (content, error)
}

/// [`call_with`] as the agent `agent` (`X-Toolsmith-Agent`, an id or a name), if given.
pub async fn call_as(app: &TestApp, agent: Option<&str>, tool: &str, args: Value) -> (Value, bool) {
    match agent {
        Some(agent) => call_with(app, tool, args, &[("x-toolsmith-agent", agent)]).await,
        None => call_with(app, tool, args, &[]).await,
    }
}
