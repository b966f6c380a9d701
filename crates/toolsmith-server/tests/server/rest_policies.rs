//! The stored policy over REST: replacing it takes effect at once on listings and calls, a
//! policy that does not compile changes nothing, revisions are checked, clearing it brings
//! back the configuration file's, and every change is audited.

use crate::rest_support;

use axum::http::{Method, StatusCode};
use rest_support::TestApp;
use serde_json::{Value, json};

fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_stored_policy_takes_effect_at_once_and_can_be_cleared() {
    let app = TestApp::new().await;
    app.create_named("shout").await;
    let none = app.get("/api/v1/policies").await.assert_ok(StatusCode::OK);
    assert_eq!(none["source"], "none");
    assert_eq!(none["policy"], Value::Null);

    let put = app
        .json(
            Method::PUT,
            "/api/v1/policies",
            &json!({"policy": {"deny": ["calculate"]}, "expectedRevision": 0}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(put["source"], "store");
    assert_eq!(put["revision"], 1);
    assert_eq!(put["policy"]["deny"], json!(["calculate"]));
    let listed = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK);
    assert!(!tool_names(&listed).contains(&"calculate".to_owned()));
    assert!(tool_names(&listed).contains(&"shout".to_owned()));
    let refused = app
        .post(
            "/api/v1/tools/calculate/execute",
            &json!({"arguments": {"expression": "1+1"}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(refused["metadata"]["errorKind"], "denied", "{refused}");

    // Fail closed: an unknown profile or group, or a misspelt key, changes nothing.
    for bad in [
        json!({"profile": "everything"}),
        json!({"deny": ["group:nope"]}),
        json!({"denny": ["calculate"]}),
    ] {
        app.json(Method::PUT, "/api/v1/policies", &json!({"policy": bad}))
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    }
    app.json(
        Method::PUT,
        "/api/v1/policies",
        &json!({"policy": {}, "expectedRevision": 0}),
    )
    .await
    .assert_error(StatusCode::CONFLICT, "revision_conflict");
    app.json(Method::PUT, "/api/v1/policies", &json!({"deny": ["x"]}))
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
    let still = app.get("/api/v1/policies").await.assert_ok(StatusCode::OK);
    assert_eq!(still["revision"], 1);
    assert_eq!(still["policy"]["deny"], json!(["calculate"]));

    let cleared = app
        .call(Method::DELETE, "/api/v1/policies")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(cleared["source"], "none");
    let listed = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK);
    assert!(tool_names(&listed).contains(&"calculate".to_owned()));
    app.call(Method::DELETE, "/api/v1/policies")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    let audit = app
        .get("/api/v1/audit?action=policy.")
        .await
        .assert_ok(StatusCode::OK);
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["policy.delete", "policy.update"]);
}
