//! Approval answers on protocol 2026-07-28, through the real router and bearer tokens, with
//! raw JSON-RPC: the requests a hostile client can send, not only what an SDK would. An answer
//! counts only with the ticket the server issued for exactly that call, from a client that
//! declared forms, for a caller that may decide approvals (as over REST).

use crate::rest_support;

use axum::body::Body;
use axum::http::Method;
use rest_support::{TestApp, request};
use serde_json::{Value, json};
use toolsmith_server::auth::{Scope, new_token};

/// Sends one stateless 2026-07-28 request and returns its JSON-RPC answer.
async fn rpc(app: &TestApp, token: &str, forms: bool, method: &str, params: Value) -> Value {
    let mut params = params;
    let capabilities = if forms {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let req = request(Method::POST, "/mcp")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .body(Body::from(body.to_string()))
        .unwrap();
    let res = app.send(req).await;
    if res.json.is_null() {
        // An SSE answer: the JSON-RPC message is the data of its last event.
        let data = res
            .text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or_else(|| panic!("no answer: {} {}", res.status, res.text));
        return serde_json::from_str(data).unwrap();
    }
    res.json
}

/// The text of a complete `tools/call` result, or the `requestState` of an input-required one.
fn outcome(answer: &Value) -> Result<(bool, String), String> {
    let result = &answer["result"];
    assert!(result.is_object(), "{answer:#}");
    if result["resultType"] == "input_required" {
        return Err(result["requestState"].as_str().unwrap().to_owned());
    }
    let text = result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect();
    Ok((result["isError"] == true, text))
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

/// A retry (or a forgery) carrying `state` and the person's answer.
fn answered(name: &str, args: Value, state: &str, answer: Value) -> Value {
    json!({"name": name, "arguments": args, "requestState": state,
           "inputResponses": {"approval": answer}})
}

fn allow(decision: &str) -> Value {
    json!({"action": "accept", "content": {"decision": decision}})
}

struct Tokens {
    person: String,
    agent: String,
}

/// An app whose model (the person's token, through MCP) created `shout`, which therefore needs
/// approval; plus an execute-only token bound to agent `bot`.
async fn app(config: toolsmith_server::ServerSettings) -> (TestApp, Tokens) {
    let app = TestApp::with_config(config).await;
    let mut tokens = Vec::new();
    for (scopes, agent) in [
        (
            vec![Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute],
            None,
        ),
        (vec![Scope::ToolsExecute], Some("bot")),
    ] {
        let (record, token) = new_token("default", "t", &scopes, agent);
        app.state
            .service
            .create_token(&toolsmith_service::Actor::user("admin"), &record)
            .await
            .unwrap();
        tokens.push(token);
    }
    let agent = tokens.pop().unwrap();
    let person = tokens.pop().unwrap();
    let creator = if app.state.config.read_only {
        // Writes are refused in read-only mode: the tool comes from the service directly.
        None
    } else {
        Some(&person)
    };
    match creator {
        Some(token) => {
            let created = rpc(
                &app,
                token,
                true,
                "tools/call",
                call(
                    "create_tool",
                    json!({"name": "shout", "description": "Upper-cases",
                           "parameters": {"type": "object"},
                           "code": "return String(args.text ?? 'hi').toUpperCase();"}),
                ),
            )
            .await;
            assert!(!outcome(&created).unwrap().0, "{created:#}");
        }
        None => {
            let input: toolsmith_service::CreateTool = serde_json::from_value(json!({
                "name": "shout", "description": "Upper-cases", "parameters": {"type": "object"},
                "code": "return String(args.text ?? 'hi').toUpperCase();"}))
            .unwrap();
            app.state
                .service
                .create(&toolsmith_service::Actor::llm("default"), input)
                .await
                .unwrap();
        }
    }
    (app, Tokens { person, agent })
}

async fn pending(app: &TestApp) -> Vec<String> {
    let approvals = app
        .state
        .service
        .approvals()
        .list(None, true, 10)
        .await
        .unwrap();
    approvals.into_iter().map(|a| a.id).collect()
}

async fn decisions(app: &TestApp) -> Vec<Value> {
    let query = toolsmith_core::AuditQuery {
        action: Some("approval.decide".to_owned()),
        limit: 100,
        ..Default::default()
    };
    app.state.service.audit().list(&query).await.unwrap()
}

#[tokio::test]
async fn an_agent_token_cannot_approve_its_own_calls() {
    let (app, t) = app(toolsmith_server::ServerSettings::default()).await;
    // The agent's client declares forms, but an agent may not decide: it is told to wait.
    let (is_error, text) =
        outcome(&rpc(&app, &t.agent, true, "tools/call", call("shout", json!({}))).await).unwrap();
    assert!(
        is_error && text.contains("awaiting approval apr_"),
        "{text}"
    );
    let ids = pending(&app).await;
    assert_eq!(ids.len(), 1);

    // A ticket the server really issued, to the person, for the same tool and arguments.
    let ticket = outcome(
        &rpc(
            &app,
            &t.person,
            true,
            "tools/call",
            call("shout", json!({})),
        )
        .await,
    )
    .unwrap_err();
    let forged = [
        format!("approval:{}", ids[0]),
        format!("approval:{}", "0123456789abcdef".repeat(4)),
        ticket,
    ];
    for state in &forged {
        for decision in ["allow_always", "allow_once"] {
            let answer = rpc(
                &app,
                &t.agent,
                true,
                "tools/call",
                answered("shout", json!({}), state, allow(decision)),
            )
            .await;
            let (is_error, text) = outcome(&answer).unwrap();
            assert!(is_error, "{text}");
            assert!(
                text.contains("approval answer in this call was not accepted"),
                "{text}"
            );
        }
    }
    // Nothing was decided, no grant was left: the agent still waits.
    assert!(decisions(&app).await.is_empty());
    let (is_error, text) =
        outcome(&rpc(&app, &t.agent, true, "tools/call", call("shout", json!({}))).await).unwrap();
    assert!(is_error && text.contains("awaiting approval"), "{text}");
}

#[tokio::test]
async fn a_ticket_answers_once_and_only_the_call_it_was_issued_for() {
    let (app, t) = app(toolsmith_server::ServerSettings::default()).await;
    let person = |params: Value| rpc(&app, &t.person, true, "tools/call", params);

    // Piggy-backed on another tool: refused, and the ticket is used up.
    let ticket = outcome(&person(call("shout", json!({"text": "a"}))).await).unwrap_err();
    assert!(
        !ticket.contains("apr_"),
        "the ticket is not the approval id: {ticket}"
    );
    let (is_error, text) = outcome(
        &person(answered(
            "calculate",
            json!({"expression": "1+1"}),
            &ticket,
            allow("allow_always"),
        ))
        .await,
    )
    .unwrap();
    assert!(
        is_error && text.contains("opened for another call"),
        "{text}"
    );
    let (is_error, text) = outcome(
        &person(answered(
            "shout",
            json!({"text": "a"}),
            &ticket,
            allow("allow_once"),
        ))
        .await,
    )
    .unwrap();
    assert!(is_error && text.contains("already used"), "{text}");

    // The same tool with other arguments: refused.
    let ticket = outcome(&person(call("shout", json!({"text": "a"}))).await).unwrap_err();
    let (is_error, text) = outcome(
        &person(answered(
            "shout",
            json!({"text": "b"}),
            &ticket,
            allow("allow_always"),
        ))
        .await,
    )
    .unwrap();
    assert!(
        is_error && text.contains("opened for another call"),
        "{text}"
    );

    // A client that declares no forms cannot answer with a real ticket either.
    let ticket = outcome(&person(call("shout", json!({"text": "a"}))).await).unwrap_err();
    let no_forms = rpc(
        &app,
        &t.person,
        false,
        "tools/call",
        answered("shout", json!({"text": "a"}), &ticket, allow("allow_once")),
    )
    .await;
    let (is_error, text) = outcome(&no_forms).unwrap();
    assert!(is_error && text.contains("elicitation"), "{text}");
    assert!(decisions(&app).await.is_empty(), "nothing decided so far");

    // The call it was issued for: the answer counts, once, under the person's name.
    let ticket = outcome(&person(call("shout", json!({"text": "a"}))).await).unwrap_err();
    let (is_error, text) = outcome(
        &person(answered(
            "shout",
            json!({"text": "a"}),
            &ticket,
            allow("allow_once"),
        ))
        .await,
    )
    .unwrap();
    assert!(!is_error, "{text}");
    assert_eq!(text, "A");
    let audit = decisions(&app).await;
    assert_eq!(audit.len(), 1, "{audit:#?}");
    assert_eq!(audit[0]["actor"], "default");
    assert_eq!(audit[0]["actorKind"], "user");
    assert_eq!(audit[0]["details"]["via"], "client");
    let (is_error, text) = outcome(
        &person(answered(
            "shout",
            json!({"text": "a"}),
            &ticket,
            allow("allow_once"),
        ))
        .await,
    )
    .unwrap();
    assert!(is_error && text.contains("already used"), "{text}");
}

#[tokio::test]
async fn cancelling_the_form_ends_the_call_as_awaiting_approval() {
    let (app, t) = app(toolsmith_server::ServerSettings::default()).await;
    let person = |params: Value| rpc(&app, &t.person, true, "tools/call", params);
    let ticket = outcome(&person(call("shout", json!({}))).await).unwrap_err();
    let cancelled = person(answered(
        "shout",
        json!({}),
        &ticket,
        json!({"action": "cancel"}),
    ))
    .await;
    // A complete result, not another form: a client that retries on forms stops here.
    let (is_error, text) = outcome(&cancelled).unwrap();
    assert!(
        is_error && text.contains("awaiting approval apr_"),
        "{text}"
    );
    assert_eq!(
        pending(&app).await.len(),
        1,
        "the approval still waits for a person"
    );
}

#[tokio::test]
async fn a_read_only_server_takes_no_answer_from_the_client() {
    let config = toolsmith_server::ServerSettings {
        read_only: true,
        ..toolsmith_server::ServerSettings::default()
    };
    let (app, t) = app(config).await;
    let (is_error, text) = outcome(
        &rpc(
            &app,
            &t.person,
            true,
            "tools/call",
            call("shout", json!({})),
        )
        .await,
    )
    .unwrap();
    assert!(is_error && text.contains("awaiting approval"), "{text}");
    let id = pending(&app).await.remove(0);
    let forged = answered(
        "shout",
        json!({}),
        &format!("approval:{id}"),
        allow("allow_always"),
    );
    let (is_error, text) =
        outcome(&rpc(&app, &t.person, true, "tools/call", forged).await).unwrap();
    assert!(is_error && text.contains("read-only"), "{text}");
    assert!(decisions(&app).await.is_empty());
}
