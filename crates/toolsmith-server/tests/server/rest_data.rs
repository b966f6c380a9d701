//! The agent's own data over REST (`/api/v1/data…`) through the real router with bearer
//! tokens: each family's records listed, added, read, changed and deleted with the tools'
//! checks; what the tools store is what REST shows and the other way round; export page by
//! page and erasure; and no user's (or agent's) records reachable by another through any
//! route, search or export.

use axum::body::Body;
use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_core::ToolContext;
use toolsmith_server::auth::{Scope, new_token};

use crate::rest_support::{TestApp, TestResponse, request};

/// A bearer-token caller (a user, maybe an agent), shared with the other data routes' tests.
pub(crate) struct Caller<'a> {
    app: &'a TestApp,
    token: String,
    pub(crate) agent: Option<&'a str>,
}

impl Caller<'_> {
    pub(crate) async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> TestResponse {
        let mut builder =
            request(method, path).header("authorization", format!("Bearer {}", self.token));
        if let Some(agent) = self.agent {
            builder = builder.header("x-toolsmith-agent", agent);
        }
        let req = match body {
            Some(body) => builder
                .header("content-type", "application/json")
                .body(Body::from(body.to_string())),
            None => builder.body(Body::empty()),
        };
        self.app.send(req.expect("request")).await
    }

    pub(crate) async fn get(&self, path: &str) -> TestResponse {
        self.send(Method::GET, path, None).await
    }
}

pub(crate) async fn caller<'a>(app: &'a TestApp, user: &str, agent: Option<&'a str>) -> Caller<'a> {
    caller_with(
        app,
        user,
        agent,
        &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute],
    )
    .await
}

pub(crate) async fn caller_with<'a>(
    app: &'a TestApp,
    user: &str,
    agent: Option<&'a str>,
    scopes: &[Scope],
) -> Caller<'a> {
    let (record, token) = new_token(user, "test", scopes, None);
    app.state
        .service
        .create_token(&toolsmith_service::Actor::user(user), &record)
        .await
        .expect("token");
    Caller { app, token, agent }
}

impl Caller<'_> {
    /// Asserts that the record `id` of `family` is "not found" to this caller: to read,
    /// change or delete.
    pub(crate) async fn cannot_reach(&self, family: &str, id: &str) {
        let path = format!("/api/v1/data/{family}/{id}");
        self.get(&path)
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
        self.send(Method::PATCH, &path, Some(&json!({"title": "taken"})))
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
        self.send(Method::DELETE, &path, None)
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
    }

    /// Adds a record of `family` and returns its id.
    pub(crate) async fn add(&self, family: &str, body: &Value) -> String {
        let made = self
            .send(Method::POST, &format!("/api/v1/data/{family}"), Some(body))
            .await
            .assert_ok(StatusCode::CREATED);
        let one = made
            .as_object()
            .unwrap()
            .values()
            .find(|v| v.is_object())
            .unwrap();
        one["id"].as_str().unwrap().to_owned()
    }
}

/// A tool call of `user` (no agent) through the service's pipeline.
pub(crate) async fn tool(app: &TestApp, user: &str, name: &str, args: Value) -> Value {
    let res = app
        .state
        .service
        .execute(name, args, ToolContext::new(user))
        .await;
    assert!(!res.is_error, "{name}: {res:?}");
    res.content
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_familys_records_through_rest_and_tools_alike() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let created = alice
        .send(
            Method::POST,
            "/api/v1/data/tasks",
            Some(&json!({"title": "Pay the rent", "priority": "high", "dueDate": "2026-05-01"})),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let id = created["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(created["task"]["status"], "pending");
    // What a tool stored, REST lists; what REST stored, a tool finds.
    tool(
        &app,
        "alice",
        "add_note",
        json!({"title": "Rent", "content": "Landlord's IBAN is in the drawer"}),
    )
    .await;
    let notes = alice
        .get("/api/v1/data/notes?search=landlord")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(notes["count"], 1, "{notes}");
    let found = tool(&app, "alice", "list_tasks", json!({"search": "rent"})).await;
    assert_eq!(found["tasks"][0]["id"], json!(id));
    for (query, count) in [
        ("priority=high&search=rent", 1),
        ("priority=low", 0),
        (
            "dueFrom=2026-05-01&dueTo=2026-05-01&sortBy=priority&limit=5&offset=0",
            1,
        ),
    ] {
        let list = alice
            .get(&format!("/api/v1/data/tasks?{query}"))
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(list["count"], count, "{query}: {list}");
    }
    let got = alice
        .get(&format!("/api/v1/data/tasks/{id}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(got["task"]["title"], "Pay the rent");
    let changed = alice
        .send(
            Method::PATCH,
            &format!("/api/v1/data/tasks/{id}"),
            Some(&json!({"status": "completed", "dueDate": null})),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(changed["task"]["status"], "completed");
    assert!(changed["task"].get("dueDate").is_none());
    // Bad input names the fix.
    for (method, path, body, status, words) in [
        (
            Method::POST,
            "/api/v1/data/tasks",
            json!({"title": "x", "priority": "asap"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "priority",
        ),
        (
            Method::POST,
            "/api/v1/data/bookmarks",
            json!({"url": "ftp://x.org"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "http or https URL",
        ),
        (
            Method::POST,
            "/api/v1/data/contacts",
            json!({"name": "Ada", "nick": "A"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "unknown field 'nick'",
        ),
        (
            Method::POST,
            "/api/v1/data/events",
            json!({"title": "t", "startTime": "2026-05-02", "endTime": "2026-05-01"}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "before 'startTime'",
        ),
        (
            Method::PATCH,
            &format!("/api/v1/data/tasks/{id}"),
            json!({}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "nothing to change",
        ),
        (
            Method::POST,
            "/api/v1/data/recipes",
            json!({"title": "x"}),
            StatusCode::NOT_FOUND,
            "the families are tasks, bookmarks, notes, events, contacts",
        ),
    ] {
        let res = alice.send(method, path, Some(&body)).await;
        let code = if status == StatusCode::NOT_FOUND {
            "not_found"
        } else {
            "validation_error"
        };
        let message = res.assert_error(status, code);
        assert!(message.contains(words), "{words:?} not in {message}");
    }
    for (query, words) in [
        ("limit=500", "'limit' must be an integer from 1 to 50"),
        ("isFavorite=yes", "true or false"),
        ("colour=red", "unknown query parameter 'colour'"),
    ] {
        let res = alice.get(&format!("/api/v1/data/bookmarks?{query}")).await;
        let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(message.contains(words), "{words:?} not in {message}");
    }
    // Every family answers its routes.
    for (family, body) in [
        (
            "bookmarks",
            json!({"url": "https://example.org", "tags": ["a", "b"]}),
        ),
        (
            "events",
            json!({"title": "Dentist", "startTime": "2999-01-01T09:00"}),
        ),
        (
            "contacts",
            json!({"name": "Ada", "email": "ada@example.org"}),
        ),
    ] {
        let rid = alice.add(family, &body).await;
        let path = format!("/api/v1/data/{family}/{rid}");
        alice.get(&path).await.assert_ok(StatusCode::OK);
        let list = alice
            .get(&format!("/api/v1/data/{family}"))
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(list["count"], 1, "{family}: {list}");
        alice
            .send(Method::DELETE, &path, None)
            .await
            .assert_ok(StatusCode::OK);
        alice
            .get(&path)
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
    }
    let tags = alice
        .get("/api/v1/data/bookmarks?tags=a,z")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(tags["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_route_search_or_export_shows_one_users_or_agents_records_to_another() {
    let app = TestApp::new().await;
    let alice = caller(&app, "alice", None).await;
    let secret = "zebracorn";
    let mut ids = Vec::new();
    for (family, body) in [
        ("tasks", json!({"title": secret})),
        ("notes", json!({"title": secret, "content": secret})),
        (
            "bookmarks",
            json!({"url": "https://zebracorn.example.org", "title": secret}),
        ),
        (
            "events",
            json!({"title": secret, "startTime": "2999-01-01"}),
        ),
        ("contacts", json!({"name": secret})),
    ] {
        let rid = alice.add(family, &body).await;
        ids.push((family, rid));
    }
    tool(
        &app,
        "alice",
        "remember",
        json!({"content": format!("The {secret} code word"), "type": "fact"}),
    )
    .await;
    let bob = caller(&app, "bob", None).await;
    tool(&app, "bob", "add_task", json!({"title": "Bob's own task"})).await;
    let alices_agent = caller(&app, "alice", Some("agent-1")).await;
    for other in [&bob, &alices_agent] {
        for (family, id) in &ids {
            for query in ["", "?search=zebracorn"] {
                let list = other
                    .get(&format!("/api/v1/data/{family}{query}"))
                    .await
                    .assert_ok(StatusCode::OK);
                let mine = if other.agent.is_none() && *family == "tasks" && query.is_empty() {
                    1
                } else {
                    0
                };
                assert_eq!(list["count"], mine, "{family}{query}: {list}");
                assert!(!list.to_string().contains(secret), "{list}");
            }
            other.cannot_reach(family, id).await;
        }
    }
    // Bob's export holds only his task; an agent may neither export nor erase.
    let export = bob
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(export["records"].as_array().unwrap().len(), 1, "{export}");
    assert!(!export.to_string().contains(secret));
    alices_agent
        .get("/api/v1/data/export")
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    alices_agent
        .send(Method::DELETE, "/api/v1/data?confirm=true", None)
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    // Alice's export, two records a page: her five records and her memory, in id order.
    let mut all: Vec<Value> = Vec::new();
    let mut path = "/api/v1/data/export?limit=2".to_owned();
    loop {
        let page = alice.get(&path).await.assert_ok(StatusCode::OK);
        let records = page["records"].as_array().unwrap();
        assert!(records.len() <= 2);
        all.extend(records.iter().cloned());
        match page["next"].as_str() {
            Some(next) => path = format!("/api/v1/data/export?limit=2&after={next}"),
            None => break,
        }
    }
    assert_eq!(all.len(), 6, "{all:?}");
    assert!(all.iter().all(|r| r["owner"] == "alice"));
    let collections: Vec<&str> = all
        .iter()
        .map(|r| r["collection"].as_str().unwrap())
        .collect();
    for c in [
        "task",
        "note",
        "bookmark",
        "calendar_event",
        "contact",
        "memory",
    ] {
        assert!(collections.contains(&c), "{c} not in {collections:?}");
    }
    // Erasure needs confirm=true, takes all of Alice's data and none of Bob's.
    alice
        .send(Method::DELETE, "/api/v1/data", None)
        .await
        .assert_error(StatusCode::BAD_REQUEST, "confirmation_required");
    let erased = alice
        .send(Method::DELETE, "/api/v1/data?confirm=true", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(erased["deleted"], 6);
    // The erasure is in the audit log: who, whose, how many, and nothing of what was kept.
    let admin = caller_with(&app, "root", None, &[Scope::Admin]).await;
    let audit = admin.get("/api/v1/audit?action=data.erase").await;
    assert!(!audit.text.contains(secret), "{}", audit.text);
    let audit = audit.assert_ok(StatusCode::OK);
    let entries = audit["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{audit}");
    assert_eq!(entries[0]["actor"], "alice");
    assert_eq!(entries[0]["targetType"], "user");
    assert_eq!(entries[0]["targetId"], "alice");
    assert_eq!(entries[0]["details"], json!({"deleted": 6}));
    let export = alice
        .get("/api/v1/data/export")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(export["records"], json!([]));
    let list = bob
        .get("/api/v1/data/tasks")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 1);
}
