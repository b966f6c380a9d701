//! What the web UI needs from the server: its static files (own CSP, no auth, ETags), and the
//! routes added for it — `/api/v1/session`, `/api/v1/changes` (ETag, 304), `/api/v1/executions`
//! and `/api/v1/tokens`.

use axum::body::Body;
use axum::http::{Method, StatusCode, header};
use serde_json::json;

use super::rest_support::{TestApp, request, tool_body};

fn bearer(method: Method, path: &str, token: &str) -> axum::http::request::Builder {
    request(method, path).header(header::AUTHORIZATION, format!("Bearer {token}"))
}

#[tokio::test]
async fn the_page_and_its_files_carry_a_strict_policy_and_need_no_token() {
    let app = TestApp::new().await;
    // Auth on: a token exists.
    let created = app
        .post("/api/v1/tokens", &json!({"name": "t", "scopes": ["admin"]}))
        .await
        .assert_ok(StatusCode::CREATED);
    assert!(created["token"].as_str().unwrap().starts_with("tsk_"));
    assert_eq!(
        app.get("/api/v1/custom-tools").await.status,
        StatusCode::UNAUTHORIZED
    );

    let page = app.get("/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(
        page.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let csp = page.header("content-security-policy").unwrap();
    for part in [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(part), "{csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    assert!(page.text.contains("/ui/js/app.js"));

    let js = app.get("/ui/js/pages/tools.js").await;
    assert_eq!(js.status, StatusCode::OK);
    assert_eq!(
        js.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    let etag = js.header("etag").unwrap().to_owned();
    let again = app
        .send(
            request(Method::GET, "/ui/js/pages/tools.js")
                .header(header::IF_NONE_MATCH, &etag)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.text.is_empty());

    app.get("/ui/../Cargo.toml")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    app.get("/ui/js/nope.js")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    // The API's own answers keep the API's policy.
    let api = app
        .send(
            bearer(
                Method::GET,
                "/api/v1/session",
                created["token"].as_str().unwrap(),
            )
            .body(Body::empty())
            .unwrap(),
        )
        .await;
    assert_eq!(
        api.header("content-security-policy"),
        Some(toolsmith_server::app::CONTENT_SECURITY_POLICY_VALUE)
    );
}

#[tokio::test]
async fn session_says_who_is_calling() {
    let app = TestApp::new().await;
    let open = app.get("/api/v1/session").await.assert_ok(StatusCode::OK);
    assert_eq!(open["userId"], "default");
    assert_eq!(open["authRequired"], false);
    assert_eq!(open["scopes"].as_array().unwrap().len(), 4);

    let reader = app
        .post(
            "/api/v1/tokens",
            &json!({"name": "reader", "userId": "alice", "scopes": ["tools:read"]}),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let token = reader["token"].as_str().unwrap();
    let res = app
        .send(
            bearer(Method::GET, "/api/v1/session", token)
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    let me = res.assert_ok(StatusCode::OK);
    assert_eq!(me["userId"], "alice");
    assert_eq!(me["scopes"], json!(["tools:read"]));
    assert_eq!(me["authRequired"], true);
    assert_eq!(
        app.get("/api/v1/session").await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn changes_move_with_tools_and_usage_and_answer_304_otherwise() {
    let app = TestApp::new().await;
    let first = app.get("/api/v1/changes").await;
    let data = first.assert_ok(StatusCode::OK);
    assert_eq!(data["pendingTools"], 0);
    assert_eq!(data["pendingApprovals"], 0);
    let tag = first.header("etag").unwrap().to_owned();
    let poll = |tag: String| {
        let app = &app;
        async move {
            app.send(
                request(Method::GET, "/api/v1/changes")
                    .header(header::IF_NONE_MATCH, tag)
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
        }
    };
    assert_eq!(poll(tag.clone()).await.status, StatusCode::NOT_MODIFIED);

    app.create_named("shout").await;
    let moved = poll(tag.clone()).await;
    let after_create = moved.assert_ok(StatusCode::OK);
    assert_ne!(after_create["tools"], data["tools"]);
    let tag2 = moved.header("etag").unwrap().to_owned();
    assert_ne!(tag2, tag);

    // A call changes the usage digest (and the tag), not the catalogue's: a page listing
    // tools is not reloaded while an agent works (issue 36).
    app.post(
        "/api/v1/custom-tools/shout/execute",
        &json!({"arguments": {"text": "hi"}}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let used = poll(tag2.clone()).await.assert_ok(StatusCode::OK);
    assert_ne!(used["usage"], after_create["usage"]);
    assert_eq!(used["tools"], after_create["tools"]);
}

#[tokio::test]
async fn executions_are_listed_newest_first_and_filtered() {
    let app = TestApp::new().await;
    app.create_named("shout").await;
    let mut thrower = tool_body("thrower");
    thrower["code"] = json!("throw new Error('no');");
    app.create_tool(&thrower).await;
    for text in ["a", "b"] {
        app.post(
            "/api/v1/custom-tools/shout/execute",
            &json!({"arguments": {"text": text}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    }
    app.post(
        "/api/v1/custom-tools/thrower/execute",
        &json!({"arguments": {"text": "x"}}),
    )
    .await
    .assert_ok(StatusCode::OK);

    let all = app
        .get("/api/v1/executions")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(all["count"], 3);
    assert_eq!(all["executions"][0]["toolName"], "thrower");
    assert_eq!(all["executions"][0]["status"], "error");
    let shout = app
        .get("/api/v1/executions?tool=shout")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(shout["count"], 2);
    let errors = app
        .get("/api/v1/executions?status=error&limit=5")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(errors["count"], 1);
    assert_eq!(errors["executions"][0]["toolName"], "thrower");
    app.get("/api/v1/executions?status=nope")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    app.get("/api/v1/executions?tool=missing")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    app.get("/api/v1/executions?limit=0")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");

    // A call an agent made names it, and `caller` lists that agent's calls alone.
    app.send(
        request(Method::POST, "/api/v1/custom-tools/shout/execute")
            .header("content-type", "application/json")
            .header("x-toolsmith-agent", "planner")
            .body(Body::from(r#"{"arguments": {"text": "from an agent"}}"#))
            .expect("request"),
    )
    .await
    .assert_ok(StatusCode::OK);
    let planner = app
        .get("/api/v1/executions?caller=planner")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(planner["count"], 1, "{planner}");
    assert_eq!(planner["executions"][0]["caller"], "planner");
    assert_eq!(planner["executions"][0]["toolName"], "shout");
    let everyone = app
        .get("/api/v1/executions")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(everyone["count"], 4);
    assert_eq!(everyone["executions"][1]["caller"], json!(null));
    let nobody = app
        .get("/api/v1/executions?caller=nobody&tool=shout")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(nobody["count"], 0);
}

#[tokio::test]
async fn tokens_are_shown_once_listed_without_secrets_and_revoked_at_once() {
    let app = TestApp::new().await;
    let admin = app
        .post(
            "/api/v1/tokens",
            &json!({"name": "ops", "scopes": ["admin"]}),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    let admin_token = admin["token"].as_str().unwrap().to_owned();
    let call = |method: Method, path: &str, body: Option<serde_json::Value>| {
        let builder = bearer(method, path, &admin_token);
        match body {
            Some(b) => builder
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(b.to_string()))
                .unwrap(),
            None => builder.body(Body::empty()).unwrap(),
        }
    };
    let spare = app
        .send(call(
            Method::POST,
            "/api/v1/tokens",
            Some(json!({"name": "spare", "userId": "bob", "scopes": ["tools:read"], "agentId": "bot"})),
        ))
        .await
        .assert_ok(StatusCode::CREATED);
    let spare_token = spare["token"].as_str().unwrap().to_owned();

    let list = app.send(call(Method::GET, "/api/v1/tokens", None)).await;
    let listed = list.assert_ok(StatusCode::OK);
    assert_eq!(listed["count"], 2);
    assert!(!list.text.contains(&spare_token) && !list.text.contains(&admin_token));
    assert!(!list.text.contains("tokenHash"));
    assert_eq!(listed["tokens"][1]["agentId"], "bot");

    for bad in [
        json!({"name": "x", "scopes": []}),
        json!({"name": "x", "scopes": ["root"]}),
        json!({"name": "", "scopes": ["admin"]}),
        json!({"name": "x<script>", "scopes": ["admin"]}),
    ] {
        app.send(call(Method::POST, "/api/v1/tokens", Some(bad)))
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    }

    // A reader may not manage tokens.
    app.send(
        bearer(Method::GET, "/api/v1/tokens", &spare_token)
            .body(Body::empty())
            .unwrap(),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");

    let id = spare["id"].as_str().unwrap();
    app.send(call(Method::DELETE, &format!("/api/v1/tokens/{id}"), None))
        .await
        .assert_ok(StatusCode::OK);
    // Revoked by this process: refused at once, not after the cache's second.
    app.send(
        bearer(Method::GET, "/api/v1/session", &spare_token)
            .body(Body::empty())
            .unwrap(),
    )
    .await
    .assert_error(StatusCode::UNAUTHORIZED, "unauthorized");
    app.send(call(Method::DELETE, &format!("/api/v1/tokens/{id}"), None))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    let audit = app
        .send(call(Method::GET, "/api/v1/audit?action=token.", None))
        .await
        .assert_ok(StatusCode::OK);
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["token.revoke", "token.create", "token.create"]);
}
