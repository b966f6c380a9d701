//! One rule for who made a tool, and who decides, through REST: a caller acting as an agent (a
//! token bound to an agent, or the `X-Toolsmith-Agent` header) creates and changes tools as
//! the model does over MCP (`createdBy: llm`, pending and re-approval, no clearing of
//! `requiresApproval`); a pending tool is decided by a person — its owner or an admin, whoever
//! owns it — and never by an agent; an agent sees only its own calls' approvals.

use axum::body::Body;
use axum::http::{Method, StatusCode, header};
use serde_json::{Value, json};
use toolsmith_server::auth::Scope;

use super::rest_support::{TestApp, TestResponse, request, tool_body};

const LOYALTY: &str = include_str!("../../../../examples/http-tools/loyalty_points.yaml");

/// A request with `token` and a JSON body (or none).
async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    body: Option<&Value>,
) -> TestResponse {
    let builder = request(method, path).header(header::AUTHORIZATION, format!("Bearer {token}"));
    let request = match body {
        Some(body) => builder
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string())),
        None => builder.body(Body::empty()),
    }
    .unwrap();
    app.send(request).await
}

/// A command tool that reaches the network: `shell` and `network`.
fn networked_command(name: &str) -> Value {
    json!({
        "name": name, "kind": "command", "description": "Fetches a page",
        "parameters": {"type": "object"},
        "code": json!({"command": "echo fetched", "network": true}).to_string(),
        "permissions": ["network"],
    })
}

const WRITE: &[Scope] = &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];

#[tokio::test]
async fn an_agent_creates_and_changes_tools_through_rest_as_the_model_does() {
    let app = TestApp::new().await;
    let person = app.token("alice", None, WRITE).await;
    let agent = app.token("alice", Some("bot"), WRITE).await;

    // A command tool with `network`: made by the model, it waits for a person.
    let made = call(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &agent,
        Some(&networked_command("fetcher")),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(made["createdBy"], "llm", "{made}");
    assert_eq!(made["status"], "pending_approval", "{made}");
    assert_eq!(made["requiresApproval"], true, "{made}");
    // The agent cannot let it out itself.
    call(
        &app,
        Method::POST,
        "/api/v1/custom-tools/fetcher/approve",
        &agent,
        None,
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    call(
        &app,
        Method::POST,
        "/api/v1/custom-tools/fetcher/enable",
        &agent,
        Some(&json!({})),
    )
    .await
    .assert_error(StatusCode::CONFLICT, "invalid_state");

    // A plain tool is active but every call of it asks a person, and stays so.
    let plain = call(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &agent,
        Some(&tool_body("shout")),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(
        (
            &plain["createdBy"],
            &plain["status"],
            &plain["requiresApproval"]
        ),
        (&json!("llm"), &json!("active"), &json!(true)),
        "{plain}"
    );
    let message = call(
        &app,
        Method::PATCH,
        "/api/v1/custom-tools/shout",
        &agent,
        Some(&json!({"requiresApproval": false})),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(message.contains("always require approval"), "{message}");
    // Saying it is a person does not make it one.
    let mut lying = tool_body("liar");
    lying["createdBy"] = json!("user");
    let message = call(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &agent,
        Some(&lying),
    )
    .await
    .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("agent 'bot'"), "{message}");

    // The person's own tool, changed by the agent: re-approval as for the model.
    let mut mine = tool_body("mine");
    mine["requiresApproval"] = json!(false);
    let mine = call(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &person,
        Some(&mine),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(mine["createdBy"], "user");
    let changed = call(
        &app,
        Method::PATCH,
        "/api/v1/custom-tools/mine",
        &agent,
        Some(&json!({"code": "return { upper: args.text.toUpperCase() + '!' };"})),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(changed["requiresApproval"], true, "{changed}");
    assert_eq!(changed["status"], "active", "{changed}");
    let widened = call(
        &app,
        Method::PATCH,
        "/api/v1/custom-tools/mine",
        &agent,
        Some(&json!({"permissions": ["filesystem"]})),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(widened["status"], "pending_approval", "{widened}");
    // The model may not delete what a person made.
    call(
        &app,
        Method::DELETE,
        "/api/v1/custom-tools/mine",
        &agent,
        None,
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");

    // A rollback by the agent is a change by the model too.
    let mut undo = tool_body("undo");
    undo["requiresApproval"] = json!(false);
    call(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &person,
        Some(&undo),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    call(
        &app,
        Method::PATCH,
        "/api/v1/custom-tools/undo",
        &person,
        Some(&json!({"code": "return 2;"})),
    )
    .await
    .assert_ok(StatusCode::OK);
    let rolled = call(
        &app,
        Method::POST,
        "/api/v1/custom-tools/undo/rollback",
        &agent,
        Some(&json!({"version": 1})),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(rolled["requiresApproval"], true, "{rolled}");

    // An import by the agent is a creation by the model.
    let imported = app
        .send(
            request(Method::POST, "/api/v1/custom-tools/import")
                .header(header::AUTHORIZATION, format!("Bearer {agent}"))
                .header(header::CONTENT_TYPE, "application/yaml")
                .body(Body::from(LOYALTY))
                .unwrap(),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(imported["createdBy"], "llm", "{imported}");
    assert_eq!(imported["requiresApproval"], true, "{imported}");

    // The person is still a person.
    let personal = call(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &person,
        Some(&networked_command("by_hand")),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(
        (&personal["createdBy"], &personal["status"]),
        (&json!("user"), &json!("active")),
        "{personal}"
    );
}

#[tokio::test]
async fn an_agent_named_by_the_header_is_the_model_too() {
    // No tokens: the local user, acting as the agent it names.
    let app = TestApp::new().await;
    let made = app
        .send(
            request(Method::POST, "/api/v1/custom-tools")
                .header(header::CONTENT_TYPE, "application/json")
                .header("x-toolsmith-agent", "helper")
                .body(Body::from(networked_command("fetcher").to_string()))
                .unwrap(),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(made["createdBy"], "llm", "{made}");
    assert_eq!(made["status"], "pending_approval", "{made}");
    let approve = |agent: Option<&'static str>| {
        let mut builder = request(Method::POST, "/api/v1/custom-tools/fetcher/approve");
        if let Some(agent) = agent {
            builder = builder.header("x-toolsmith-agent", agent);
        }
        builder.body(Body::empty()).unwrap()
    };
    app.send(approve(Some("helper")))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    // The person at the same server decides.
    let approved = app.send(approve(None)).await.assert_ok(StatusCode::OK);
    assert_eq!(approved["status"], "active", "{approved}");
}

#[tokio::test]
async fn a_pending_tool_is_decided_by_its_owner_or_an_admin_never_by_an_agent() {
    let app = TestApp::new().await;
    let alice = app.token("alice", None, WRITE).await;
    let bot = app.token("alice", Some("bot"), WRITE).await;
    let bob = app.token("bob", None, WRITE).await;
    let root = app.token("root", None, &[Scope::Admin]).await;
    let reader = app.token("alice", None, &[Scope::ToolsRead]).await;

    let mut ids = Vec::new();
    for name in ["first", "second", "third"] {
        let made = call(
            &app,
            Method::POST,
            "/api/v1/custom-tools",
            &bot,
            Some(&networked_command(name)),
        )
        .await
        .assert_ok(StatusCode::CREATED);
        assert_eq!(made["status"], "pending_approval", "{made}");
        ids.push(made["id"].as_str().unwrap().to_owned());
    }
    let decide = |token: &str, id: &str, action: &str| {
        let (token, path) = (
            token.to_owned(),
            format!("/api/v1/custom-tools/{id}/{action}"),
        );
        let app = &app;
        async move { call(app, Method::POST, &path, &token, None).await }
    };

    // Not an agent, not another user, not a token that may not write.
    decide(&bot, &ids[0], "approve")
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    decide(&bob, &ids[0], "approve")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    decide(&reader, &ids[0], "reject")
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");

    // The owner, by id or by name.
    let approved = decide(&alice, &ids[0], "approve")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(approved["status"], "active", "{approved}");
    let rejected = decide(&alice, "second", "reject")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(rejected["status"], "rejected", "{rejected}");

    // An admin, whoever owns the tool (by its id: names are each owner's own).
    let approved = decide(&root, &ids[2], "approve")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&approved["status"], &approved["name"]),
        (&json!("active"), &json!("third")),
        "{approved}"
    );
    let fetched = call(
        &app,
        Method::GET,
        &format!("/api/v1/custom-tools/{}", ids[2]),
        &alice,
        None,
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(fetched["status"], "active", "{fetched}");
    // Decided is decided.
    decide(&root, &ids[2], "reject")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_state");
}

#[tokio::test]
async fn an_agent_sees_only_its_own_calls_approvals() {
    let app = TestApp::new().await;
    let person = app.token("alice", None, WRITE).await;
    let one = app.token("alice", Some("one"), WRITE).await;
    let two = app.token("alice", Some("two"), WRITE).await;
    let mut body = tool_body("shout");
    body["requiresApproval"] = json!(true);
    call(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &person,
        Some(&body),
    )
    .await
    .assert_ok(StatusCode::CREATED);

    let mut ids = Vec::new();
    for (agent, text) in [(&one, "secret plan of one"), (&two, "secret plan of two")] {
        let run = call(
            &app,
            Method::POST,
            "/api/v1/custom-tools/shout/execute",
            agent,
            Some(&json!({"arguments": {"text": text}})),
        )
        .await
        .assert_ok(StatusCode::OK);
        assert_eq!(run["metadata"]["errorKind"], "approval_required", "{run}");
        ids.push(run["content"]["approvalId"].as_str().unwrap().to_owned());
    }

    for (agent, own, other, name) in [
        (&one, &ids[0], &ids[1], "one"),
        (&two, &ids[1], &ids[0], "two"),
    ] {
        for status in ["pending", "all"] {
            let listed = call(
                &app,
                Method::GET,
                &format!("/api/v1/approvals?status={status}"),
                agent,
                None,
            )
            .await
            .assert_ok(StatusCode::OK);
            assert_eq!(listed["count"], 1, "{name} {status}: {listed}");
            assert_eq!(listed["approvals"][0]["id"], own.as_str(), "{listed}");
            assert_eq!(listed["approvals"][0]["agent"], name, "{listed}");
        }
        call(
            &app,
            Method::GET,
            &format!("/api/v1/approvals/{own}"),
            agent,
            None,
        )
        .await
        .assert_ok(StatusCode::OK);
        call(
            &app,
            Method::GET,
            &format!("/api/v1/approvals/{other}"),
            agent,
            None,
        )
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    }
    // The person sees both.
    let listed = call(&app, Method::GET, "/api/v1/approvals", &person, None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(listed["count"], 2, "{listed}");
}

#[tokio::test]
async fn an_agent_sees_only_its_own_executions() {
    let app = TestApp::new().await;
    let person = app.token("alice", None, WRITE).await;
    let one = app.token("alice", Some("one"), WRITE).await;
    let two = app.token("alice", Some("two"), WRITE).await;
    call(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &person,
        Some(&tool_body("shout")),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    for agent in [&one, &two, &person] {
        let run = call(
            &app,
            Method::POST,
            "/api/v1/custom-tools/shout/execute",
            agent,
            Some(&json!({"arguments": {"text": "hi"}})),
        )
        .await
        .assert_ok(StatusCode::OK);
        assert_eq!(run["isError"], false, "{run}");
    }
    let callers = |listed: &Value| -> Vec<Value> {
        listed["executions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["caller"].clone())
            .collect()
    };
    for (agent, name) in [(&one, "one"), (&two, "two")] {
        for query in ["", "?tool=shout", "?caller=one", "?caller=two"] {
            let listed = call(
                &app,
                Method::GET,
                &format!("/api/v1/executions{query}"),
                agent,
                None,
            )
            .await
            .assert_ok(StatusCode::OK);
            let asked_another = query.starts_with("?caller=") && !query.ends_with(name);
            let expected = if asked_another {
                vec![]
            } else {
                vec![json!(name)]
            };
            assert_eq!(callers(&listed), expected, "{name} {query}: {listed}");
        }
    }
    let listed = call(&app, Method::GET, "/api/v1/executions", &person, None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        callers(&listed),
        [json!(null), json!("two"), json!("one")],
        "{listed}"
    );
}
