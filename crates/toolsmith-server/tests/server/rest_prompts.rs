//! Prompts made at runtime (issue 40), over REST: the whole life of one (create, read, render,
//! replace, versions with what changed, rollback, switch off and on, delete, each audited), the
//! rules a definition is held to when written, and whose prompts a caller sees and may change
//! (another user sees none; a model may not change a person's prompt and scopes only to itself).

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_server::auth::Scope;

use crate::rest_support::{TestApp, json_request, request};

pub(crate) fn review_prompt() -> Value {
    json!({
        "name": "review",
        "title": "Code review",
        "description": "Reviews code in a language",
        "arguments": [
            {"name": "language", "description": "The language", "required": true,
             "values": ["rust", "ruby", "python"]},
            {"name": "focus", "description": "What to look at"}
        ],
        "messages": [
            {"role": "user", "content": {"type": "text",
             "text": "Review this {{ language }} code{% if focus %} for {{ focus }}{% endif %}."}},
            {"role": "assistant", "content": {"type": "resource", "resource": {
                "uri": "file:///guide/{{ language }}.md", "mimeType": "text/markdown",
                "text": "Style guide for {{ language }}"}}}
        ]
    })
}

#[tokio::test]
async fn a_prompt_lives_like_a_tool_created_rendered_versioned_rolled_back_switched_and_deleted() {
    let app = TestApp::new().await;
    let made = app
        .post("/api/v1/prompts", &review_prompt())
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(
        (
            made["name"].as_str(),
            made["revision"].as_i64(),
            made["enabled"].as_bool(),
            made["createdBy"].as_str()
        ),
        (Some("review"), Some(1), Some(true), Some("user"))
    );
    assert!(made["id"].as_str().unwrap().starts_with("prm_"));
    app.post("/api/v1/prompts", &review_prompt())
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");

    // Rendered from its arguments, as MCP prompts/get answers.
    let rendered = app
        .post(
            "/api/v1/prompts/review/render",
            &json!({"arguments": {"language": "rust", "focus": "safety"}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        rendered["messages"][0]["content"]["text"],
        "Review this rust code for safety."
    );
    assert_eq!(
        rendered["messages"][1]["content"]["resource"]["uri"],
        "file:///guide/rust.md"
    );
    let missing = app
        .post("/api/v1/prompts/review/render", &json!({"arguments": {}}))
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(missing.contains("needs the argument language"), "{missing}");

    // A new revision keeps the old definition as a version, with what changed.
    let mut changed = review_prompt();
    changed["description"] = json!("Reviews code, kindly");
    changed["expectedRevision"] = json!(1);
    let second = app
        .json(Method::PUT, "/api/v1/prompts/review", &changed)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(second["revision"], 2);
    app.json(Method::PUT, "/api/v1/prompts/review", &changed)
        .await
        .assert_error(StatusCode::CONFLICT, "revision_conflict");
    let versions = app
        .get("/api/v1/prompts/review/versions")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(versions["count"], 2);
    assert_eq!(versions["versions"][1]["changed"], json!(["description"]));

    // Rollback: the first definition again, as revision 3.
    let back = app
        .post("/api/v1/prompts/review/rollback", &json!({"revision": 1}))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (back["revision"].as_i64(), back["description"].as_str()),
        (Some(3), Some("Reviews code in a language"))
    );
    app.post("/api/v1/prompts/review/rollback", &json!({"revision": 9}))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    // Switched off: kept, marked, still rendered as a preview.
    let off = app
        .call(Method::POST, "/api/v1/prompts/review/disable")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(off["enabled"], false);
    let on = app
        .call(Method::POST, "/api/v1/prompts/review/enable")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        (on["enabled"].as_bool(), on["revision"].as_i64()),
        (Some(true), Some(5))
    );

    app.call(Method::DELETE, "/api/v1/prompts/review")
        .await
        .assert_ok(StatusCode::OK);
    app.get("/api/v1/prompts/review")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    // Every change is in the audit log.
    let audit = app
        .get("/api/v1/audit?limit=50")
        .await
        .assert_ok(StatusCode::OK);
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .or(audit["items"].as_array())
        .or(audit.as_array())
        .expect("audit entries")
        .iter()
        .filter_map(|e| e["action"].as_str())
        .filter(|a| a.starts_with("prompt."))
        .collect();
    for action in [
        "prompt.create",
        "prompt.update",
        "prompt.rollback",
        "prompt.disable",
        "prompt.enable",
        "prompt.delete",
    ] {
        assert!(actions.contains(&action), "{action} not in {actions:?}");
    }
}

#[tokio::test]
async fn a_definition_that_would_fail_when_used_is_refused_when_written_naming_the_problem() {
    let app = TestApp::new().await;
    let mut body = review_prompt();
    body["messages"][0]["content"]["text"] = json!("Hello {{ who }}");
    let why = app
        .post("/api/v1/prompts", &body)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("uses who that no argument declares"), "{why}");

    let mut body = review_prompt();
    body["messages"][0]["content"] =
        json!({"type": "image", "data": "%%%", "mimeType": "image/png"});
    let why = app
        .post("/api/v1/prompts", &body)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("base64"), "{why}");

    let mut body = review_prompt();
    body["messages"] = json!([]);
    app.post("/api/v1/prompts", &body)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");

    let mut body = review_prompt();
    body["messages"][0]["role"] = json!("system");
    app.post("/api/v1/prompts", &body)
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
}

async fn as_token(
    app: &TestApp,
    token: &str,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> crate::rest_support::TestResponse {
    let builder = request(method.clone(), path).header("authorization", format!("Bearer {token}"));
    let req = match body {
        Some(body) => {
            let mut req = json_request(method, path, &body);
            req.headers_mut()
                .insert("authorization", format!("Bearer {token}").parse().unwrap());
            req
        }
        None => builder.body(axum::body::Body::empty()).unwrap(),
    };
    app.send(req).await
}

#[tokio::test]
async fn another_user_sees_none_of_your_prompts_and_a_model_may_not_change_a_persons() {
    let app = TestApp::new().await;
    let scopes = [Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];
    let alice = app.token("alice", None, &scopes).await;
    let bot = app.token("alice", Some("bot"), &scopes).await;
    let other_bot = app.token("alice", Some("other"), &scopes).await;
    let bob = app.token("bob", None, &scopes).await;

    as_token(
        &app,
        &alice,
        Method::POST,
        "/api/v1/prompts",
        Some(review_prompt()),
    )
    .await
    .assert_ok(StatusCode::CREATED);

    // Bob: nothing listed, nothing by name, nothing to render or delete.
    let list = as_token(&app, &bob, Method::GET, "/api/v1/prompts", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(list["count"], 0);
    for (method, path) in [
        (Method::GET, "/api/v1/prompts/review"),
        (Method::DELETE, "/api/v1/prompts/review"),
    ] {
        as_token(&app, &bob, method, path, None)
            .await
            .assert_error(StatusCode::NOT_FOUND, "not_found");
    }

    // Alice's agent sees the prompt but may not rewrite, switch or delete what she wrote.
    let mut changed = review_prompt();
    changed["description"] = json!("Now the model's");
    let why = as_token(
        &app,
        &bot,
        Method::PUT,
        "/api/v1/prompts/review",
        Some(changed),
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(why.contains("written by a person"), "{why}");
    as_token(&app, &bot, Method::DELETE, "/api/v1/prompts/review", None)
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");

    // Its own prompt is the model's (createdBy llm), scoped to itself if it likes, never to
    // another agent; a prompt scoped to it is not the other agent's to see.
    let mut own = review_prompt();
    own["name"] = json!("bot_notes");
    own["agent"] = json!("bot");
    let made = as_token(
        &app,
        &bot,
        Method::POST,
        "/api/v1/prompts",
        Some(own.clone()),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(made["createdBy"], "llm");
    own["name"] = json!("for_other");
    own["agent"] = json!("other");
    as_token(&app, &bot, Method::POST, "/api/v1/prompts", Some(own))
        .await
        .assert_error(StatusCode::FORBIDDEN, "forbidden");
    let seen = as_token(&app, &other_bot, Method::GET, "/api/v1/prompts", None)
        .await
        .assert_ok(StatusCode::OK);
    let names: Vec<&str> = seen["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, vec!["review"]);
    // The person sees all of hers.
    let hers = as_token(&app, &alice, Method::GET, "/api/v1/prompts", None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(hers["count"], 2);
}
