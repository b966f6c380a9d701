//! User-defined resources and resource templates (issue 40), over REST: the life of one
//! (create, list, read, replace with `expectedRevision`, delete, each audited), the rules a
//! definition is held to when written, and whose resources a caller sees and may change
//! (another user sees none; a model may not change a person's, and what it writes is its own).

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_server::auth::Scope;

use crate::rest_support::{TestApp, json_request, request};

fn text_resource() -> Value {
    json!({
        "name": "style_guide",
        "uri": "docs://style-guide",
        "title": "Style guide",
        "description": "How we write",
        "mimeType": "text/markdown",
        "text": "# Style\nShort sentences."
    })
}

fn template() -> Value {
    json!({
        "name": "order",
        "uriTemplate": "shop://orders/{id}",
        "description": "One order by its id",
        "code": "return {id: args.id, uri: args.uri};"
    })
}

#[tokio::test]
async fn a_resource_and_a_template_are_created_listed_read_replaced_and_deleted() {
    let app = TestApp::new().await;
    let made = app
        .post("/api/v1/resources", &text_resource())
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(
        (
            made["kind"].as_str(),
            made["revision"].as_i64(),
            made["createdBy"].as_str(),
            made["size"].as_u64()
        ),
        (Some("text"), Some(1), Some("user"), Some(24))
    );
    assert!(made["id"].as_str().unwrap().starts_with("res_"), "{made}");
    app.post("/api/v1/resources", &text_resource())
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");
    let mut same_uri = text_resource();
    same_uri["name"] = json!("other_name");
    let why = app
        .post("/api/v1/resources", &same_uri)
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");
    assert!(why.contains("docs://style-guide"), "{why}");

    let blob = app
        .post(
            "/api/v1/resources",
            &json!({"name": "dot", "uri": "img://dot.png", "mimeType": "image/png",
                    "blob": "iVBORwABAv8="}),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(
        (blob["kind"].as_str(), blob["size"].as_u64()),
        (Some("blob"), Some(8))
    );
    let tpl = app
        .post("/api/v1/resources", &template())
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(tpl["kind"], "template");

    let list = app.get("/api/v1/resources").await.assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 3);
    let names: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["dot", "order", "style_guide"]);
    assert!(
        list["resources"][2].get("text").is_none(),
        "a listing holds no content"
    );
    let one = app
        .get("/api/v1/resources/style_guide")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(one["text"], "# Style\nShort sentences.");
    let code = app
        .get("/api/v1/resources/order")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(code["code"], "return {id: args.id, uri: args.uri};");

    let mut changed = text_resource();
    changed["text"] = json!("# Style\nShorter.");
    changed["expectedRevision"] = json!(1);
    let second = app
        .json(Method::PUT, "/api/v1/resources/style_guide", &changed)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(second["revision"], 2);
    let stale = app
        .json(Method::PUT, "/api/v1/resources/style_guide", &changed)
        .await
        .assert_error(StatusCode::CONFLICT, "revision_conflict");
    assert!(stale.contains('2'), "{stale}");
    let why = app
        .json(Method::PUT, "/api/v1/resources/order", &text_resource())
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("is a template"), "{why}");

    let gone = app
        .call(Method::DELETE, "/api/v1/resources/dot")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(gone["name"], "dot");
    app.get("/api/v1/resources/dot")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    let audit = app
        .get("/api/v1/audit?action=resource.")
        .await
        .assert_ok(StatusCode::OK);
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .map(|entries| {
            entries
                .iter()
                .filter_map(|e| e["action"].as_str())
                .collect()
        })
        .unwrap_or_default();
    for action in ["resource.create", "resource.update", "resource.delete"] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
}

#[tokio::test]
async fn a_definition_that_breaks_a_rule_is_refused_naming_it() {
    let app = TestApp::new().await;
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"name": "a", "uri": "no-scheme", "text": "x"}),
            "no scheme",
        ),
        (
            json!({"name": "a", "uri": "toolsmith://workspace/x", "text": "x"}),
            "server's own",
        ),
        (
            json!({"name": "a", "uri": "t://a", "text": "x", "blob": "eA=="}),
            "exactly one of text",
        ),
        (
            json!({"name": "a", "uri": "t://a", "blob": "not base64!"}),
            "base64",
        ),
        (
            json!({"name": "a", "uri": "t://{id}", "text": "x"}),
            "uriTemplate",
        ),
        (
            json!({"name": "a", "uriTemplate": "t://{id}", "text": "x"}),
            "give code",
        ),
        (
            json!({"name": "a", "uriTemplate": "t://fixed", "code": "return 1;"}),
            "no variable",
        ),
        (
            json!({"name": "a", "uriTemplate": "t://{a}{b}", "code": "return 1;"}),
            "side by side",
        ),
        (
            json!({"name": "a", "uriTemplate": "t://{id}", "code": "return (;"}),
            "",
        ),
        (
            json!({"name": "a", "uri": "t://a", "uriTemplate": "t://{id}", "code": "return 1;"}),
            "exactly one of uri",
        ),
        (
            json!({"name": "a", "uri": "t://a", "text": "x", "mimeType": "plain"}),
            "type/subtype",
        ),
        (
            json!({"name": "Bad-Name", "uri": "t://a", "text": "x"}),
            "resource name",
        ),
    ];
    for (body, says) in cases {
        let why = app
            .post("/api/v1/resources", &body)
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(why.contains(says), "{body}: {why} should say {says}");
    }
    let big = "x".repeat(512 * 1024 + 1);
    app.post(
        "/api/v1/resources",
        &json!({"name": "big", "uri": "t://big", "text": big}),
    )
    .await
    .assert_error(StatusCode::PAYLOAD_TOO_LARGE, "too_large");
    app.post(
        "/api/v1/resources",
        &json!({"name": "a", "uri": "t://a", "text": "x", "stray": 1}),
    )
    .await
    .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    assert_eq!(
        app.get("/api/v1/resources").await.assert_ok(StatusCode::OK)["count"],
        0
    );
}

async fn as_token(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> crate::rest_support::TestResponse {
    let req = match body {
        Some(body) => {
            let mut req = json_request(method, path, &body);
            req.headers_mut()
                .insert("authorization", format!("Bearer {token}").parse().unwrap());
            req
        }
        None => request(method, path)
            .header("authorization", format!("Bearer {token}"))
            .body(axum::body::Body::empty())
            .unwrap(),
    };
    app.send(req).await
}

#[tokio::test]
async fn another_user_sees_none_of_your_resources_and_a_model_may_not_change_a_persons() {
    let app = TestApp::new().await;
    let scopes = [Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];
    let alice = app.token("alice", None, &scopes).await;
    let bot = app.token("alice", Some("bot"), &scopes).await;
    let bob = app.token("bob", None, &scopes).await;
    let reader = app.token("alice", None, &[Scope::ToolsRead]).await;

    as_token(
        &app,
        &alice,
        Method::POST,
        "/api/v1/resources",
        Some(text_resource()),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    as_token(
        &app,
        &reader,
        Method::POST,
        "/api/v1/resources",
        Some(template()),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");

    let list = as_token(&app, &bob, Method::GET, "/api/v1/resources", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 0);
    for (method, path) in [
        (Method::GET, "/api/v1/resources/style_guide"),
        (Method::DELETE, "/api/v1/resources/style_guide"),
    ] {
        as_token(&app, &bob, method, path, None)
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
    }
    // Bob may use the same name and URI: they are his own.
    as_token(
        &app,
        &bob,
        Method::POST,
        "/api/v1/resources",
        Some(text_resource()),
    )
    .await
    .assert_ok(StatusCode::CREATED);

    let mut changed = text_resource();
    changed["text"] = json!("the model's words");
    let why = as_token(
        &app,
        &bot,
        Method::PUT,
        "/api/v1/resources/style_guide",
        Some(changed),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(why.contains("written by a person"), "{why}");
    as_token(
        &app,
        &bot,
        Method::DELETE,
        "/api/v1/resources/style_guide",
        None,
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    let made = as_token(
        &app,
        &bot,
        Method::POST,
        "/api/v1/resources",
        Some(template()),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(made["createdBy"], "llm");
    let hers = as_token(&app, &alice, Method::GET, "/api/v1/resources", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(hers["count"], 2);
}

/// `GET /api/v1/resource-contents?uri=` reads a URI as MCP `resources/read` does (what the web
/// UI's Resources page shows): a text, a blob (base64), a template's code run for the URI's
/// variables; an unknown URI is 404 naming the URIs there are, another user's is not found, and
/// a token without `tools:execute` may not read (a read may run code).
#[tokio::test]
async fn a_uri_is_read_as_mcp_reads_it_a_template_running_its_code() {
    let app = TestApp::new().await;
    for body in [
        text_resource(),
        template(),
        json!({"name": "dot", "uri": "img://dot.png", "mimeType": "image/png", "blob": "iVBORwABAv8="}),
    ] {
        app.post("/api/v1/resources", &body)
            .await
            .assert_ok(StatusCode::CREATED);
    }
    let text = app
        .get("/api/v1/resource-contents?uri=docs%3A%2F%2Fstyle-guide")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        text,
        json!({"uri": "docs://style-guide", "mimeType": "text/markdown", "text": "# Style\nShort sentences."})
    );
    let blob = app
        .get("/api/v1/resource-contents?uri=img://dot.png")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (
            blob["blob"].as_str(),
            blob["mimeType"].as_str(),
            blob.get("text")
        ),
        (Some("iVBORwABAv8="), Some("image/png"), None)
    );
    let order = app
        .get("/api/v1/resource-contents?uri=shop%3A%2F%2Forders%2F42")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(order["mimeType"], "application/json", "{order}");
    let read: Value = serde_json::from_str(order["text"].as_str().unwrap()).unwrap();
    assert_eq!(read, json!({"id": "42", "uri": "shop://orders/42"}));
    let why = app
        .get("/api/v1/resource-contents?uri=docs://nothing")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert!(why.contains("GET /api/v1/resources"), "{why}");
    app.get("/api/v1/resource-contents")
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");

    let bob = app
        .token("bob", None, &[Scope::ToolsRead, Scope::ToolsExecute])
        .await;
    as_token(
        &app,
        &bob,
        Method::GET,
        "/api/v1/resource-contents?uri=docs://style-guide",
        None,
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    let reader = app.token("default", None, &[Scope::ToolsRead]).await;
    as_token(
        &app,
        &reader,
        Method::GET,
        "/api/v1/resource-contents?uri=docs://style-guide",
        None,
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
}
