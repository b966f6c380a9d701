//! Issue 41: `/api/v1/organizations…` and `POST /api/v1/custom-tools/{id}/move` through the
//! real router with bearer tokens, on SQLite and on PostgreSQL. ann makes `acme`; ed, vic and
//! sam are other people (sam never a member); `ann-bot` is a token of ann's bound to an agent.
//! Every route's happy path and its refusals: a stranger finds nothing (404, the same words as
//! for a name that does not exist), roles (403 naming the role needed), the last owner and a
//! taken name (409), malformed and huge names and bodies, an agent (403); the move — audited
//! `tool.move`, a name clash at the new owner, a viewer cannot, the tool's MCP `tools/list`
//! follows it (a session of the old owner and one in the organisation each hear
//! `list_changed`) and so does REST's list of runnable tools.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use tokio::sync::watch;
use toolsmith_core::organization::OrgRole;
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::{Identity, Scope};
use toolsmith_service::ToolServiceSettings;

use crate::mcp_support::{McpClient, connect_in_process, tool_names};
use crate::rest_support::{TestApp, TestResponse, request, tool_body};

/// Counts an MCP session's `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct ListWatcher {
    changes: Arc<watch::Sender<usize>>,
}

impl ClientHandler for ListWatcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.send_modify(|n| *n += 1);
    }
}

/// An MCP session of `person` (in organisation `org` as `role`, when given).
async fn mcp_session(
    app: &TestApp,
    person: &str,
    org: Option<(&str, OrgRole)>,
) -> (McpClient<ListWatcher>, watch::Receiver<usize>) {
    let mut identity = Identity::local_default();
    identity.user_id = person.to_owned();
    identity.scopes = vec![Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];
    if let Some((name, role)) = org {
        let record = app
            .state
            .service
            .organization_of_member(person, name)
            .await
            .unwrap()
            .0;
        identity.enter(record, role);
    }
    let watcher = ListWatcher::default();
    let changes = watcher.changes.subscribe();
    (
        connect_in_process(&app.state, identity, watcher).await,
        changes,
    )
}

/// Waits (10 s at most) until the session has heard a `list_changed` since `changes` was
/// last read.
async fn heard_list_changed(changes: &mut watch::Receiver<usize>) {
    tokio::time::timeout(std::time::Duration::from_secs(10), changes.changed())
        .await
        .expect("a list_changed within 10 s")
        .unwrap();
}

/// The custom tools of an MCP session's `tools/list` (no built-in has these names).
async fn listed(client: &McpClient<ListWatcher>, names: &[&str]) -> Vec<String> {
    let mut all = tool_names(client).await;
    all.retain(|n| names.contains(&n.as_str()));
    all
}

const PEOPLE: &[&str] = &["root", "ann", "ed", "vic", "sam", "ann-bot"];

/// The app with a token for each of [`PEOPLE`].
struct People {
    app: TestApp,
    tokens: Vec<String>,
}

async fn people(app: TestApp) -> People {
    let all = [Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];
    let mut tokens = Vec::new();
    for who in PEOPLE {
        let token = match *who {
            "root" => app.token("root", None, &[Scope::Admin]).await,
            "ann-bot" => app.token("ann", Some("helper"), &all).await,
            _ => app.token(who, None, &all).await,
        };
        tokens.push(token);
    }
    People { app, tokens }
}

impl People {
    /// `who` sends `method path` (with `body`), in organisation `org` if given.
    async fn send(
        &self,
        who: &str,
        org: Option<&str>,
        method: Method,
        path: &str,
        body: Option<Body>,
    ) -> TestResponse {
        let index = PEOPLE.iter().position(|p| *p == who).unwrap();
        let mut builder =
            request(method, path).header("authorization", format!("Bearer {}", self.tokens[index]));
        if let Some(org) = org {
            builder = builder.header("x-toolsmith-organization", org);
        }
        if body.is_some() {
            builder = builder.header("content-type", "application/json");
        }
        self.app
            .send(builder.body(body.unwrap_or_else(Body::empty)).unwrap())
            .await
    }

    async fn get(&self, who: &str, path: &str) -> TestResponse {
        self.send(who, None, Method::GET, path, None).await
    }

    async fn json(&self, who: &str, method: Method, path: &str, body: Value) -> TestResponse {
        self.send(who, None, method, path, Some(Body::from(body.to_string())))
            .await
    }

    async fn delete(&self, who: &str, path: &str) -> TestResponse {
        self.send(who, None, Method::DELETE, path, None).await
    }

    async fn role(&self, who: &str, member: &str, role: &str) -> TestResponse {
        let path = format!("/api/v1/organizations/acme/members/{member}");
        self.json(who, Method::PUT, &path, json!({"role": role}))
            .await
    }

    /// `who`'s move of `tool` (of the scope `org`, or their own) to `to`.
    async fn move_tool(&self, who: &str, org: Option<&str>, tool: &str, to: &str) -> TestResponse {
        let path = format!("/api/v1/custom-tools/{tool}/move");
        let body = Body::from(json!({"to": to}).to_string());
        self.send(who, org, Method::POST, &path, Some(body)).await
    }

    /// The names of the tools `who` can run in scope `org` (what MCP `tools/list` lists).
    async fn runnable(&self, who: &str, org: Option<&str>) -> Vec<String> {
        let res = self
            .send(who, org, Method::GET, "/api/v1/tools", None)
            .await;
        let data = res.assert_ok(StatusCode::OK);
        data["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["source"] == "custom")
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

async fn on_sqlite() -> TestApp {
    TestApp::new().await
}

async fn on_postgres() -> Option<TestApp> {
    TestApp::on_postgres(ToolServiceSettings::default(), ServerSettings::default()).await
}

async fn organisations_and_their_members_through_every_route(app: TestApp) {
    let p = people(app).await;
    let orgs = "/api/v1/organizations";

    // Made by a person, who becomes its first owner.
    let body = json!({"name": "acme", "displayName": "Acme Support"});
    let made = p
        .json("ann", Method::POST, orgs, body.clone())
        .await
        .assert_ok(StatusCode::CREATED);
    let id = made["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("org_") && id.len() == 20, "{made}");
    assert_eq!(
        (
            &made["name"],
            &made["displayName"],
            &made["role"],
            &made["createdBy"]
        ),
        (
            &json!("acme"),
            &json!("Acme Support"),
            &json!("owner"),
            &json!("ann")
        )
    );
    // A taken name, another person: 409.
    let why = p
        .json("sam", Method::POST, orgs, body)
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");
    assert!(why.contains("'acme'"), "{why}");
    // An agent never makes or manages one, whoever's token it is.
    let why = p
        .json("ann-bot", Method::POST, orgs, json!({"name": "botco"}))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(
        why.contains("agent 'helper'") && why.contains("person"),
        "{why}"
    );
    p.get("ann-bot", orgs)
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");

    // Malformed names and bodies.
    for reserved in ["me", "org_0123456789abcdef", "org_x"] {
        let res = p
            .json("sam", Method::POST, orgs, json!({"name": reserved}))
            .await;
        let why = res.assert_error(StatusCode::CONFLICT, "name_taken");
        assert!(why.contains("reserved"), "{reserved}: {why}");
    }
    for bad in ["Acme", "9lives", "a b", ""] {
        let res = p
            .json("sam", Method::POST, orgs, json!({"name": bad}))
            .await;
        let why = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(why.contains("organisation name"), "{bad}: {why}");
    }
    let long = "a".repeat(65);
    p.json("sam", Method::POST, orgs, json!({"name": long}))
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    let why = p
        .json(
            "sam",
            Method::POST,
            orgs,
            json!({"name": "zeta", "displayName": "x".repeat(201)}),
        )
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("displayName"), "{why}");
    p.json(
        "sam",
        Method::POST,
        orgs,
        json!({"name": "zeta", "owner": "sam"}),
    )
    .await
    .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    p.json("sam", Method::POST, orgs, json!({"displayName": "Zeta"}))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    let huge = Body::from(json!({"name": "x".repeat(3 << 20)}).to_string());
    let res = p.send("sam", None, Method::POST, orgs, Some(huge)).await;
    res.assert_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large");
    // Nothing of all that was made.
    let mine = p.get("sam", orgs).await.assert_ok(StatusCode::OK);
    assert_eq!(mine, json!({"organizations": [], "count": 0}));

    // Members: added (201), a role set (200), only by admins and owners.
    assert_eq!(
        p.role("ann", "ed", "editor").await.status,
        StatusCode::CREATED
    );
    let added = p
        .role("ann", "vic", "viewer")
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(
        (&added["userId"], &added["role"]),
        (&json!("vic"), &json!("viewer"))
    );
    p.role("ann", "ed", "editor")
        .await
        .assert_ok(StatusCode::OK);
    p.role("ann", "ed", "boss")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    let why = p
        .role("ann", "org_0123456789abcdef", "viewer")
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("not a user"), "{why}");
    let why = p
        .role("ed", "sam", "viewer")
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(
        why.contains("you are editor") && why.contains("admin or above"),
        "{why}"
    );

    // Mine, with my role; by name and by id.
    let eds = p.get("ed", orgs).await.assert_ok(StatusCode::OK);
    assert_eq!(eds["count"], 1);
    assert_eq!(
        (
            &eds["organizations"][0]["id"],
            &eds["organizations"][0]["role"]
        ),
        (&json!(id), &json!("editor"))
    );
    let by_id = p
        .get("vic", &format!("{orgs}/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&by_id["name"], &by_id["role"]),
        (&json!("acme"), &json!("viewer"))
    );
    let members = p
        .get("vic", &format!("{orgs}/acme/members"))
        .await
        .assert_ok(StatusCode::OK);
    let listed: Vec<(&str, &str)> = members["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["userId"].as_str().unwrap(), m["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [("ann", "owner"), ("ed", "editor"), ("vic", "viewer")]
    );

    // To a stranger it does not exist: the same answer as for a name no one has.
    let stranger = p
        .get("sam", &format!("{orgs}/acme"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    let nothing = p
        .get("sam", &format!("{orgs}/nobody"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(stranger.replace("acme", "nobody"), nothing);
    for res in [
        p.get("sam", &format!("{orgs}/{id}/members")).await,
        p.json(
            "sam",
            Method::PATCH,
            &format!("{orgs}/acme"),
            json!({"displayName": "Mine"}),
        )
        .await,
        p.role("sam", "sam", "owner").await,
        p.delete("sam", &format!("{orgs}/acme")).await,
    ] {
        res.assert_error(StatusCode::NOT_FOUND, "not_found");
    }

    // Renamed by admins and owners only.
    let why = p
        .json(
            "ed",
            Method::PATCH,
            &format!("{orgs}/acme"),
            json!({"displayName": "Ed's"}),
        )
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(why.contains("admin or above"), "{why}");
    let renamed = p
        .json(
            "ann",
            Method::PATCH,
            &format!("{orgs}/acme"),
            json!({"displayName": "Acme Ltd"}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&renamed["displayName"], &renamed["name"]),
        (&json!("Acme Ltd"), &json!("acme"))
    );
    p.json(
        "ann",
        Method::PATCH,
        &format!("{orgs}/acme"),
        json!({"displayName": " "}),
    )
    .await
    .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");

    // An admin manages members but not owners.
    p.role("ann", "ed", "admin").await.assert_ok(StatusCode::OK);
    let why = p
        .role("ed", "vic", "owner")
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(why.contains("only an owner"), "{why}");
    p.role("ed", "sam", "viewer")
        .await
        .assert_ok(StatusCode::CREATED);
    p.delete("ed", &format!("{orgs}/acme/members/sam"))
        .await
        .assert_ok(StatusCode::OK);
    p.delete("ed", &format!("{orgs}/acme/members/sam"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    let why = p
        .delete("ed", &format!("{orgs}/acme/members/ann"))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(why.contains("only an owner"), "{why}");

    // The last owner never leaves nor is demoted; the answer says how to make another.
    for res in [
        p.delete("ann", &format!("{orgs}/acme/members/ann")).await,
        p.role("ann", "ann", "admin").await,
    ] {
        let why = res.assert_error(StatusCode::CONFLICT, "invalid_state");
        assert!(
            why.contains("last owner") && why.contains("\"role\": \"owner\""),
            "{why}"
        );
    }

    // Any member may leave; then it is gone for them.
    let left = p
        .delete("vic", &format!("{orgs}/acme/members/vic"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        left,
        json!({"removed": true, "organization": id, "userId": "vic"})
    );
    p.get("vic", &format!("{orgs}/acme"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    // Deleted by an owner only.
    p.delete("ed", &format!("{orgs}/acme"))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    let deleted = p
        .delete("ann", &format!("{orgs}/acme"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (&deleted["deleted"], &deleted["organization"]["id"]),
        (&json!(true), &json!(id))
    );
    p.get("ann", &format!("{orgs}/acme"))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert_eq!(
        p.get("ed", orgs).await.assert_ok(StatusCode::OK)["count"],
        0
    );

    // Every change audited with the person as the actor.
    let audit = p
        .get(
            "root",
            &format!("/api/v1/audit?action=org.&targetId={id}&limit=100"),
        )
        .await
        .assert_ok(StatusCode::OK);
    let entries: Vec<(String, String)> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["actor"].as_str().unwrap().to_owned(),
                e["action"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for expected in [
        ("ann", "org.create"),
        ("ann", "org.member.add"),
        ("ann", "org.update"),
        ("ed", "org.member.remove"),
        ("vic", "org.member.remove"),
        ("ann", "org.delete"),
    ] {
        assert!(
            entries
                .iter()
                .any(|(a, b)| (a.as_str(), b.as_str()) == expected),
            "{expected:?} in {entries:?}"
        );
    }
}

async fn a_tool_moves_between_a_person_and_organisations(app: TestApp) {
    let p = people(app).await;
    let orgs = "/api/v1/organizations";
    for (who, name) in [("ann", "acme"), ("sam", "samco")] {
        p.json(who, Method::POST, orgs, json!({"name": name}))
            .await
            .assert_ok(StatusCode::CREATED);
    }
    p.role("ann", "ed", "editor")
        .await
        .assert_ok(StatusCode::CREATED);
    p.role("ann", "vic", "viewer")
        .await
        .assert_ok(StatusCode::CREATED);
    let acme = p
        .get("ann", &format!("{orgs}/acme"))
        .await
        .assert_ok(StatusCode::OK)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let create = |name: &str| Body::from(tool_body(name).to_string());
    let made = p
        .send(
            "ann",
            None,
            Method::POST,
            "/api/v1/custom-tools",
            Some(create("report")),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let tool_id = made["id"].as_str().unwrap().to_owned();
    let ran = p
        .send(
            "ann",
            None,
            Method::POST,
            "/api/v1/tools/report/execute",
            Some(Body::from(json!({"arguments": {"text": "hi"}}).to_string())),
        )
        .await;
    ran.assert_ok(StatusCode::OK);
    assert_eq!(p.runnable("ann", None).await, ["report"]);
    assert!(p.runnable("ed", Some("acme")).await.is_empty());
    // MCP sessions of ann (her own tools) and of ed in acme.
    let (ann_mcp, mut ann_heard) = mcp_session(&p.app, "ann", None).await;
    let (ed_mcp, mut ed_heard) = mcp_session(&p.app, "ed", Some(("acme", OrgRole::Editor))).await;
    assert_eq!(listed(&ann_mcp, &["report"]).await, ["report"]);
    assert!(listed(&ed_mcp, &["report"]).await.is_empty());
    ann_heard.borrow_and_update();
    ed_heard.borrow_and_update();
    let registry = p.app.state.service.registry().clone();
    let (ann_before, acme_before) = (
        registry.catalog_version("ann"),
        registry.catalog_version(&acme),
    );

    // Refused: an agent, a stale revision, an organisation the mover is no member of, a `to`
    // that is no name, and already the owner's.
    let why = p
        .move_tool("ann-bot", None, "report", "acme")
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(why.contains("person"), "{why}");
    let stale = Body::from(json!({"to": "acme", "expectedRevision": 7}).to_string());
    p.send(
        "ann",
        None,
        Method::POST,
        "/api/v1/custom-tools/report/move",
        Some(stale),
    )
    .await
    .assert_error(StatusCode::CONFLICT, "revision_conflict");
    let why = p
        .move_tool("ann", None, "report", "samco")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert!(
        why.contains("'samco'") && why.contains("members/ann"),
        "{why}"
    );
    for bad in [String::new(), "x".repeat(10_000), "a\u{7}b".to_owned()] {
        p.move_tool("ann", None, "report", &bad)
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    }
    p.move_tool("ann", None, "report", "me")
        .await
        .assert_error(StatusCode::CONFLICT, "invalid_state");
    p.send(
        "ann",
        None,
        Method::POST,
        "/api/v1/custom-tools/report/move",
        Some(Body::from(r#"{"to": "acme", "owner": "x"}"#)),
    )
    .await
    .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    assert_eq!(p.runnable("ann", None).await, ["report"]);

    // Into the organisation: its members see and run it, ann's own list no longer has it.
    let moved = p.move_tool("ann", None, "report", "acme").await;
    let data = moved.assert_ok(StatusCode::OK);
    assert_eq!(
        (&data["id"], &data["revision"]),
        (&json!(tool_id), &json!(2))
    );
    assert_eq!(moved.header("etag"), Some("\"2\""));
    assert!(p.runnable("ann", None).await.is_empty());
    assert_eq!(p.runnable("ed", Some("acme")).await, ["report"]);
    assert_eq!(p.runnable("vic", Some("acme")).await, ["report"]);
    assert!(registry.catalog_version("ann") > ann_before);
    assert!(registry.catalog_version(&acme) > acme_before);
    // Both MCP sessions are told, and their tools/list follows the tool.
    heard_list_changed(&mut ann_heard).await;
    heard_list_changed(&mut ed_heard).await;
    assert!(listed(&ann_mcp, &["report"]).await.is_empty());
    assert_eq!(listed(&ed_mcp, &["report"]).await, ["report"]);
    p.get("ann", "/api/v1/custom-tools/report")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    let versions = p
        .send(
            "ed",
            Some("acme"),
            Method::GET,
            &format!("/api/v1/custom-tools/{tool_id}/versions"),
            None,
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(versions["versions"][0]["version"], 1, "{versions}");
    // Its executions stay ann's history.
    let history = p
        .get("ann", "/api/v1/executions")
        .await
        .assert_ok(StatusCode::OK);
    let of_the_tool = history["executions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["toolId"] == json!(tool_id))
        .count();
    assert_eq!(of_the_tool, 1, "{history}");

    // A viewer cannot move it out, nor move their own tool in.
    let why = p
        .move_tool("vic", Some("acme"), "report", "me")
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(why.contains("viewer"), "{why}");
    p.send(
        "vic",
        None,
        Method::POST,
        "/api/v1/custom-tools",
        Some(create("notes")),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let why = p
        .move_tool("vic", None, "notes", "acme")
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(
        why.contains("you are viewer of 'acme'") && why.contains("editor"),
        "{why}"
    );
    // A stranger finds neither the organisation nor its tool.
    p.move_tool("sam", Some("acme"), "report", "me")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    // A name taken at the new owner: 409 naming the clash and how to rename; nothing moved.
    p.send(
        "ann",
        None,
        Method::POST,
        "/api/v1/custom-tools",
        Some(create("report")),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let why = p
        .move_tool("ann", None, "report", "acme")
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");
    assert!(
        why.contains("organisation 'acme' already has a tool named 'report'")
            && why.contains("newName"),
        "{why}"
    );
    assert_eq!(p.runnable("ann", None).await, ["report"]);
    let clash_back = p
        .move_tool("ed", Some("acme"), "report", "ann")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert!(clash_back.contains("'ann'"), "{clash_back}");

    // An editor moves it out to themselves.
    let out = p
        .move_tool("ed", Some("acme"), &tool_id, "me")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(out["revision"], 3);
    assert_eq!(p.runnable("ed", None).await, ["report"]);
    assert!(p.runnable("vic", Some("acme")).await.is_empty());

    // Audited tool.move: who, from, to, the tool's id and name.
    let audit = p
        .get(
            "root",
            &format!("/api/v1/audit?action=tool.move&targetId={tool_id}"),
        )
        .await
        .assert_ok(StatusCode::OK);
    let entries = audit["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{audit}");
    let into = entries
        .iter()
        .find(|e| e["actor"] == "ann")
        .expect("ann's move");
    assert_eq!(into["targetName"], "report");
    assert_eq!(
        (
            &into["details"]["from"]["owner"],
            &into["details"]["to"]["owner"]
        ),
        (&json!("ann"), &json!(acme))
    );
    assert_eq!(
        (&into["beforeRevision"], &into["afterRevision"]),
        (&json!(1), &json!(2))
    );
    let out_entry = entries
        .iter()
        .find(|e| e["actor"] == "ed")
        .expect("ed's move");
    assert_eq!(
        (
            &out_entry["details"]["from"]["owner"],
            &out_entry["details"]["to"]["owner"]
        ),
        (&json!(acme), &json!("ed"))
    );
}

/// Both tests on both backends.
macro_rules! on_both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::on_sqlite().await).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    let Some(app) = super::on_postgres().await else { return };
                    super::$name(app).await;
                }
            )*
        }
    };
}

on_both_backends!(
    organisations_and_their_members_through_every_route,
    a_tool_moves_between_a_person_and_organisations,
);
