//! Acting in an organisation (issue 41) through the real router, on SQLite and PostgreSQL: the
//! `X-Toolsmith-Organization` header on REST and on MCP over HTTP. A member sees and calls the
//! organisation's tools (REST list, MCP `tools/list`, `search_tools`, `tools/call`), a
//! non-member gets the same 404 whether or not the organisation exists, a viewer cannot write
//! (REST and MCP's `create_tool`, refused naming the role), an editor can; a person's own tools
//! are not in the organisation's list nor its tools in theirs; approvals of calls made in the
//! organisation are decided by its editors (not a viewer, not an outsider) and record the
//! person; executions read in it are its own; the audit log names the person and the
//! organisation; `GET /api/v1/session` tells the scope; an MCP session keeps the scope (and
//! person) it was started with; a token whose user is `org_…` or `me` is refused, and so is an
//! agent-bound token with the header.

use axum::body::Body;
use axum::http::{Method, StatusCode, header};
use serde_json::{Value, json};
use toolsmith_core::organization::OrgRole;
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Scope;
use toolsmith_service::{Actor, ToolServiceSettings};

use crate::rest_support::{TestApp, TestResponse, request, tool_body};

const RWX: [Scope; 3] = [Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];

/// A REST request as `token`, in `org` when given.
async fn rest(
    app: &TestApp,
    token: &str,
    org: Option<&str>,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> TestResponse {
    let mut builder =
        request(method, path).header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(org) = org {
        builder = builder.header("x-toolsmith-organization", org);
    }
    let req = match body {
        Some(b) => builder
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(b.to_string())),
        None => builder.body(Body::empty()),
    }
    .unwrap();
    app.send(req).await
}

/// One stateless MCP (2026-07-28) request as `token`, in `org` when given: the HTTP status and
/// the JSON-RPC answer (`Null` when the request was refused before MCP).
async fn mcp(
    app: &TestApp,
    token: &str,
    org: Option<&str>,
    method: &str,
    mut params: Value,
) -> (StatusCode, Value) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut builder = request(Method::POST, "/mcp")
        .header("mcp-method", method)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28");
    if let Some(name) = params["name"].as_str() {
        builder = builder.header("mcp-name", name);
    }
    if let Some(org) = org {
        builder = builder.header("x-toolsmith-organization", org);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let res = app
        .send(builder.body(Body::from(body.to_string())).unwrap())
        .await;
    if res.status != StatusCode::OK {
        return (res.status, res.json);
    }
    let answer = if res.json.is_null() {
        // An SSE answer: the JSON-RPC message is the data of its last event.
        let data = res
            .text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or_else(|| panic!("{method}: no answer: {}", res.text));
        serde_json::from_str(data).unwrap()
    } else {
        res.json
    };
    (res.status, answer)
}

/// A 2025-11-25 request as `token` (in `org`), in `session` when given: the status and the
/// session id the answer names.
async fn legacy(
    app: &TestApp,
    token: &str,
    org: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> (StatusCode, Option<String>) {
    let mut builder = request(Method::POST, "/mcp")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(org) = org {
        builder = builder.header("x-toolsmith-organization", org);
    }
    if let Some(id) = session {
        builder = builder.header("mcp-session-id", id);
    }
    let res = app
        .send(builder.body(Body::from(body.to_string())).unwrap())
        .await;
    (res.status, res.header("mcp-session-id").map(str::to_owned))
}

/// The names `tools/list` gives `token` (in `org`).
async fn listed(app: &TestApp, token: &str, org: Option<&str>) -> Vec<String> {
    let (status, answer) = mcp(app, token, org, "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// A `tools/call` as `token` (in `org`): whether it failed, and its text.
async fn call(
    app: &TestApp,
    token: &str,
    org: Option<&str>,
    tool: &str,
    arguments: Value,
) -> (bool, String) {
    let (status, answer) = mcp(
        app,
        token,
        org,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    let result = &answer["result"];
    let text = result["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_else(|| answer.to_string());
    (result["isError"] == json!(true), text)
}

/// The custom tools `token` lists over REST (in `org`).
async fn rest_tools(app: &TestApp, token: &str, org: Option<&str>) -> Vec<String> {
    let list = rest(app, token, org, Method::GET, "/api/v1/custom-tools", None)
        .await
        .assert_ok(StatusCode::OK);
    let mut names: Vec<String> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// The people of the scenario: alice owns `acme`, bob is its viewer, carol its editor, dave a
/// stranger; `root` holds `admin` (to read the audit log).
struct People {
    alice: String,
    bob: String,
    carol: String,
    dave: String,
    root: String,
    org_id: String,
}

async fn people(app: &TestApp) -> People {
    let alice = app.token("alice", None, &RWX).await;
    let bob = app.token("bob", None, &RWX).await;
    let carol = app.token("carol", None, &RWX).await;
    let dave = app.token("dave", None, &RWX).await;
    let root = app.token("root", None, &[Scope::Admin]).await;
    let service = &app.state.service;
    let owner = Actor::user("alice");
    let org = service
        .create_organization(&owner, "acme", Some("Acme Support"))
        .await
        .unwrap();
    for (who, role) in [("bob", OrgRole::Viewer), ("carol", OrgRole::Editor)] {
        service
            .put_organization_member(&owner, "acme", who, role)
            .await
            .unwrap();
    }
    People {
        alice,
        bob,
        carol,
        dave,
        root,
        org_id: org.id,
    }
}

async fn the_organisation_scope_holds_on_rest_and_mcp(app: TestApp) {
    let p = people(&app).await;
    let acme = Some("acme");

    // Alice's own tool, and the organisation's, made by alice (owner) and carol (editor).
    rest(
        &app,
        &p.alice,
        None,
        Method::POST,
        "/api/v1/custom-tools",
        Some(&tool_body("alice_own")),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let made = rest(
        &app,
        &p.alice,
        acme,
        Method::POST,
        "/api/v1/custom-tools",
        Some(&tool_body("acme_upper")),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(made["userId"], p.org_id.as_str(), "{made}");
    let by_id = Some(p.org_id.as_str());
    rest(
        &app,
        &p.carol,
        by_id,
        Method::POST,
        "/api/v1/custom-tools",
        Some(&tool_body("acme_carol")),
    )
    .await
    .assert_ok(StatusCode::CREATED);

    // A viewer cannot write, on REST (create, change, delete) nor through MCP's create_tool;
    // the refusal names the role and the role needed.
    let refused = rest(
        &app,
        &p.bob,
        acme,
        Method::POST,
        "/api/v1/custom-tools",
        Some(&tool_body("acme_bob")),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(
        refused.contains("organisation 'acme' as viewer") && refused.contains("editor"),
        "{refused}"
    );
    let path = "/api/v1/custom-tools/acme_upper";
    rest(
        &app,
        &p.bob,
        acme,
        Method::PATCH,
        path,
        Some(&json!({"description": "Mine now"})),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    rest(&app, &p.bob, acme, Method::DELETE, path, None)
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    let (failed, text) = call(
        &app,
        &p.bob,
        acme,
        "create_tool",
        tool_body("acme_by_model"),
    )
    .await;
    assert!(failed && text.contains("as viewer"), "{text}");
    for (tool, arguments) in [
        (
            "update_custom_tool",
            json!({"name": "acme_upper", "description": "Mine now"}),
        ),
        (
            "delete_custom_tool",
            json!({"name": "acme_upper", "confirm": true}),
        ),
        (
            "manage_prompts",
            json!({"action": "create", "definition": {"name": "acme_review", "template": "Review {{text}}"}}),
        ),
    ] {
        let (failed, text) = call(&app, &p.bob, acme, tool, arguments).await;
        assert!(
            failed && text.contains("organisation 'acme' as viewer"),
            "{tool}: {text}"
        );
    }
    // An editor changes the organisation's tool, and its model side creates one.
    rest(
        &app,
        &p.carol,
        acme,
        Method::PATCH,
        path,
        Some(&json!({"description": "Upper-cases a text for Acme"})),
    )
    .await
    .assert_ok(StatusCode::OK);
    let (failed, text) = call(
        &app,
        &p.carol,
        acme,
        "create_tool",
        tool_body("acme_by_model"),
    )
    .await;
    assert!(!failed, "{text}");

    // Each scope lists its own tools only.
    assert_eq!(rest_tools(&app, &p.alice, None).await, ["alice_own"]);
    let org_tools = ["acme_by_model", "acme_carol", "acme_upper"];
    assert_eq!(rest_tools(&app, &p.alice, acme).await, org_tools);
    assert_eq!(rest_tools(&app, &p.bob, acme).await, org_tools);
    assert_eq!(rest_tools(&app, &p.bob, None).await, Vec::<String>::new());
    let bobs = listed(&app, &p.bob, acme).await;
    assert!(
        bobs.iter().any(|n| n == "acme_upper") && !bobs.iter().any(|n| n == "alice_own"),
        "{bobs:?}"
    );
    let alices = listed(&app, &p.alice, None).await;
    assert!(
        alices.iter().any(|n| n == "alice_own") && !alices.iter().any(|n| n.starts_with("acme_")),
        "{alices:?}"
    );
    let (_, found) = call(
        &app,
        &p.bob,
        acme,
        "search_tools",
        json!({"query": "upper-cases a text"}),
    )
    .await;
    assert!(
        found.contains("acme_upper") && !found.contains("alice_own"),
        "{found}"
    );
    let (_, found) = call(
        &app,
        &p.alice,
        None,
        "search_tools",
        json!({"query": "upper-cases a text"}),
    )
    .await;
    assert!(
        found.contains("alice_own") && !found.contains("acme_upper"),
        "{found}"
    );

    // A member calls the organisation's tools on both doors; the stranger's own scope has none.
    let ran = rest(
        &app,
        &p.bob,
        acme,
        Method::POST,
        "/api/v1/tools/acme_upper/execute",
        Some(&json!({"arguments": {"text": "hi"}})),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(ran["content"]["upper"], "HI", "{ran}");
    let (failed, text) = call(&app, &p.bob, acme, "acme_upper", json!({"text": "mcp"})).await;
    assert!(!failed && text.contains("MCP"), "{text}");
    rest(
        &app,
        &p.dave,
        None,
        Method::POST,
        "/api/v1/tools/acme_upper/execute",
        Some(&json!({"arguments": {"text": "hi"}})),
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");

    // A stranger (and anyone naming an organisation that does not exist) gets the same 404,
    // on REST and on MCP.
    let stranger = rest(
        &app,
        &p.dave,
        acme,
        Method::GET,
        "/api/v1/custom-tools",
        None,
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    let nowhere = rest(
        &app,
        &p.dave,
        Some("nowhere"),
        Method::GET,
        "/api/v1/custom-tools",
        None,
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(
        stranger.replace("acme", "X"),
        nowhere.replace("nowhere", "X")
    );
    let by_id = rest(
        &app,
        &p.dave,
        Some(&p.org_id),
        Method::GET,
        "/api/v1/custom-tools",
        None,
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(
        by_id.replace(&p.org_id, "X"),
        nowhere.replace("nowhere", "X")
    );
    let (status, _) = mcp(&app, &p.dave, acme, "tools/list", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The session tells the scope.
    let session = rest(&app, &p.bob, acme, Method::GET, "/api/v1/session", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(session["userId"], p.org_id.as_str(), "{session}");
    assert_eq!(
        session["scopes"],
        json!(["tools:read", "tools:execute"]),
        "{session}"
    );
    assert_eq!(
        session["organization"],
        json!({"id": p.org_id, "name": "acme", "displayName": "Acme Support", "role": "viewer", "member": "bob"}),
    );
    let own = rest(
        &app,
        &p.bob,
        Some("me"),
        Method::GET,
        "/api/v1/session",
        None,
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(
        (&own["userId"], &own["organization"]),
        (&json!("bob"), &Value::Null)
    );

    // Approvals of the organisation's calls: decided by its editors, not a viewer or outsider.
    let mut guarded = tool_body("acme_guarded");
    guarded["requiresApproval"] = json!(true);
    rest(
        &app,
        &p.alice,
        acme,
        Method::POST,
        "/api/v1/custom-tools",
        Some(&guarded),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let exec = "/api/v1/tools/acme_guarded/execute";
    let args = json!({"arguments": {"text": "please"}});
    let waiting = rest(&app, &p.bob, acme, Method::POST, exec, Some(&args))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        waiting["metadata"]["errorKind"], "approval_required",
        "{waiting}"
    );
    let id = waiting["content"]["approvalId"].as_str().unwrap();
    let decide = format!("/api/v1/approvals/{id}/decision");
    let allow = json!({"decision": "allow_once"});
    let by_viewer = rest(&app, &p.bob, acme, Method::POST, &decide, Some(&allow))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(by_viewer.contains("as viewer"), "{by_viewer}");
    rest(&app, &p.dave, None, Method::POST, &decide, Some(&allow))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    rest(&app, &p.carol, None, Method::POST, &decide, Some(&allow))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    let decided = rest(&app, &p.carol, acme, Method::POST, &decide, Some(&allow))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(decided["decidedBy"], "carol", "{decided}");
    let ran = rest(&app, &p.bob, acme, Method::POST, exec, Some(&args))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ran["content"]["upper"], "PLEASE", "{ran}");

    // Executions read in the organisation are its own; alice's own call is hers alone.
    rest(
        &app,
        &p.alice,
        None,
        Method::POST,
        "/api/v1/tools/alice_own/execute",
        Some(&json!({"arguments": {"text": "mine"}})),
    )
    .await
    .assert_ok(StatusCode::OK);
    let tools_of = |list: &Value| -> Vec<String> {
        let mut names: Vec<String> = list["executions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["toolName"].as_str().unwrap().to_owned())
            .collect();
        names.sort();
        names.dedup();
        names
    };
    let in_org = rest(&app, &p.bob, acme, Method::GET, "/api/v1/executions", None)
        .await
        .assert_ok(StatusCode::OK);
    assert!(
        !tools_of(&in_org).contains(&"alice_own".to_owned()),
        "{in_org}"
    );
    assert!(
        tools_of(&in_org).contains(&"acme_upper".to_owned()),
        "{in_org}"
    );
    let hers = rest(
        &app,
        &p.alice,
        None,
        Method::GET,
        "/api/v1/executions",
        None,
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(tools_of(&hers), ["alice_own"], "{hers}");
    // And so are the figures of its tools.
    let figures = rest(
        &app,
        &p.bob,
        acme,
        Method::GET,
        "/api/v1/metrics/tools",
        None,
    )
    .await
    .assert_ok(StatusCode::OK);
    let rows: Vec<&str> = figures["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["toolName"].as_str().unwrap())
        .collect();
    assert!(
        rows.contains(&"acme_upper") && !rows.contains(&"alice_own"),
        "{figures}"
    );

    // The audit log names the person and the organisation.
    let audit = rest(
        &app,
        &p.root,
        None,
        Method::GET,
        "/api/v1/audit?action=tool.create",
        None,
    )
    .await
    .assert_ok(StatusCode::OK);
    let entry = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["targetName"] == "acme_carol")
        .unwrap_or_else(|| panic!("{audit}"));
    assert_eq!(entry["actor"], "carol", "{entry}");
    assert_eq!(
        entry["details"]["actorOrganization"],
        p.org_id.as_str(),
        "{entry}"
    );
    let decision = rest(
        &app,
        &p.root,
        None,
        Method::GET,
        "/api/v1/audit?action=approval.decide",
        None,
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(decision["entries"][0]["actor"], "carol", "{decision}");
    // A person naming one of the organisation's agents (X-Toolsmith-Agent) keeps their role:
    // the agent only narrows it. What an editor's agent makes is the model's, in the
    // organisation.
    let as_agent = |token: &str, method: Method, path: &str, body: Option<&Value>| {
        let mut builder = request(method, path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header("x-toolsmith-organization", "acme")
            .header("x-toolsmith-agent", "helper");
        builder = match body {
            Some(_) => builder.header(header::CONTENT_TYPE, "application/json"),
            None => builder,
        };
        builder
            .body(body.map_or_else(Body::empty, |b| Body::from(b.to_string())))
            .unwrap()
    };
    let refused = app
        .send(as_agent(
            &p.bob,
            Method::POST,
            "/api/v1/custom-tools",
            Some(&tool_body("acme_bot")),
        ))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(refused.contains("as viewer"), "{refused}");
    let made = app
        .send(as_agent(
            &p.carol,
            Method::POST,
            "/api/v1/custom-tools",
            Some(&tool_body("acme_bot")),
        ))
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(
        (&made["userId"], &made["createdBy"]),
        (&json!(p.org_id), &json!("llm")),
        "{made}"
    );
    let session = app
        .send(as_agent(&p.carol, Method::GET, "/api/v1/session", None))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(session["agentId"], "helper", "{session}");
    assert_eq!(session["organization"]["role"], "editor", "{session}");

    // Erasing all the organisation's data is its owners' decision.
    let erase = rest(
        &app,
        &p.carol,
        acme,
        Method::DELETE,
        "/api/v1/data?confirm=true",
        None,
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(
        erase.contains("its owners' decision; you are editor"),
        "{erase}"
    );
    // `admin` is never held through an organisation.
    rest(&app, &p.alice, acme, Method::GET, "/api/v1/audit", None)
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
}

async fn a_person_never_is_an_organisation(app: TestApp) {
    let p = people(&app).await;
    // An MCP session keeps the scope it was started in: the same person without the header, or
    // another member with it, does not reach it (after leaving the organisation, say).
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1.0"}}});
    let (status, id) = legacy(&app, &p.bob, Some("acme"), None, init).await;
    assert_eq!(status, StatusCode::OK);
    let id = id.expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _) = legacy(&app, &p.bob, Some("acme"), Some(&id), initialized).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _) = legacy(&app, &p.bob, Some("acme"), Some(&id), list.clone()).await;
    assert_eq!(status, StatusCode::OK, "its own scope");
    let (status, _) = legacy(&app, &p.bob, None, Some(&id), list.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "bob without the header");
    let (status, _) = legacy(&app, &p.carol, Some("acme"), Some(&id), list.clone()).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "another member");

    for user in [p.org_id.as_str(), "org_0123456789abcdef", "me"] {
        let token = app.token(user, None, &RWX).await;
        let refused = rest(
            &app,
            &token,
            None,
            Method::GET,
            "/api/v1/custom-tools",
            None,
        )
        .await
        .assert_error(StatusCode::UNAUTHORIZED, "unauthorized");
        assert!(
            refused.contains("a person never is an organisation"),
            "{refused}"
        );
        let (status, _) = mcp(&app, &token, None, "tools/list", json!({})).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    // A token bound to an agent acts for its own user only.
    let bot = app.token("alice", Some("bot"), &RWX).await;
    let refused = rest(
        &app,
        &bot,
        Some("acme"),
        Method::GET,
        "/api/v1/custom-tools",
        None,
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(refused.contains("bound to agent 'bot'"), "{refused}");
    // A header that is no name is a bad request.
    rest(
        &app,
        &p.alice,
        Some(&"x".repeat(200)),
        Method::GET,
        "/api/v1/custom-tools",
        None,
    )
    .await
    .assert_error(StatusCode::BAD_REQUEST, "invalid_header");
}

#[tokio::test]
async fn the_organisation_scope_holds_on_rest_and_mcp_on_sqlite() {
    the_organisation_scope_holds_on_rest_and_mcp(TestApp::new().await).await;
}

#[tokio::test]
async fn the_organisation_scope_holds_on_rest_and_mcp_on_postgres() {
    let Some(app) =
        TestApp::on_postgres(ToolServiceSettings::default(), ServerSettings::default()).await
    else {
        return;
    };
    the_organisation_scope_holds_on_rest_and_mcp(app).await;
}

#[tokio::test]
async fn a_person_never_is_an_organisation_on_sqlite() {
    a_person_never_is_an_organisation(TestApp::new().await).await;
}

#[tokio::test]
async fn a_person_never_is_an_organisation_on_postgres() {
    let Some(app) =
        TestApp::on_postgres(ToolServiceSettings::default(), ServerSettings::default()).await
    else {
        return;
    };
    a_person_never_is_an_organisation(app).await;
}
