//! The audit log over REST: a scripted session of privileged actions (tool lifecycle, Config
//! Center with a secret, an approval decision) appears in `GET /api/v1/audit` in order, with
//! actors, revisions and request ids, and never with the secret; filters and bad queries; the
//! JSONL mirror.

use crate::rest_support;

use axum::http::{Method, StatusCode};
use rest_support::{TestApp, tool_body};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

const SECRET: &str = "sk-live-audit-test-0123456789abcdef";

fn actions(entries: &Value) -> Vec<String> {
    entries["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn privileged_actions_are_audited_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("audit.jsonl");
    let service = ToolServiceSettings {
        audit_log_file: Some(jsonl.clone()),
        ..ToolServiceSettings::default()
    };
    let app = TestApp::with_configs(service, ServerSettings::default()).await;

    let mut body = tool_body("shout");
    body["requiresApproval"] = json!(true);
    let created = app.post("/api/v1/custom-tools", &body).await;
    let request_id = created.header("x-request-id").unwrap().to_owned();
    let tool = created.assert_ok(StatusCode::CREATED);
    app.patch(
        "/api/v1/custom-tools/shout",
        &json!({"description": "Shouts", "code": "return 1;"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    app.post("/api/v1/custom-tools/shout/disable", &json!({}))
        .await
        .assert_ok(StatusCode::OK);
    app.post("/api/v1/custom-tools/shout/enable", &json!({}))
        .await
        .assert_ok(StatusCode::OK);
    app.post("/api/v1/config/services", &json!({"name": "weatherapi"}))
        .await
        .assert_ok(StatusCode::CREATED);
    app.post(
        "/api/v1/config/services/weatherapi/entries",
        &json!({"values": {"api_key": SECRET}}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let run = app
        .post(
            "/api/v1/tools/shout/execute",
            &json!({"arguments": {"text": SECRET}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    let approval = run["content"]["approvalId"].as_str().unwrap().to_owned();
    app.post(
        &format!("/api/v1/approvals/{approval}/decision"),
        &json!({"decision": "deny"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    app.call(Method::DELETE, "/api/v1/custom-tools/shout")
        .await
        .assert_ok(StatusCode::OK);

    let res = app.get("/api/v1/audit").await;
    assert!(
        !res.text.contains(SECRET),
        "the secret leaked into the audit log: {}",
        res.text
    );
    let log = res.assert_ok(StatusCode::OK);
    assert_eq!(
        actions(&log),
        [
            "tool.delete",
            "approval.decide",
            "config.entry.create",
            "config.service.create",
            "tool.enable",
            "tool.disable",
            "tool.update",
            "tool.create",
        ]
    );
    let entries = log["entries"].as_array().unwrap();
    let create = &entries[7];
    assert_eq!(create["actor"], "default");
    assert_eq!(create["actorKind"], "user");
    assert_eq!(create["targetId"], tool["id"]);
    assert_eq!(create["targetName"], "shout");
    assert_eq!(create["afterRevision"], 1);
    assert_eq!(create["requestId"], request_id.as_str());
    let update = &entries[6];
    assert_eq!(
        (
            update["beforeRevision"].as_i64(),
            update["afterRevision"].as_i64()
        ),
        (Some(1), Some(2))
    );
    assert_eq!(update["details"]["changed"], json!(["description", "code"]));
    assert_eq!(entries[1]["details"]["decision"], "deny");
    assert_eq!(entries[2]["details"]["fields"], json!(["api_key"]));

    // Filters.
    let tools = app
        .get("/api/v1/audit?action=tool.&limit=2")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(actions(&tools), ["tool.delete", "tool.enable"]);
    let one = app
        .get(&format!("/api/v1/audit?targetId={approval}"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(actions(&one), ["approval.decide"]);
    let none = app
        .get("/api/v1/audit?since=2999-01-01T00:00:00Z")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(none["count"], 0);
    for bad in [
        "since=yesterday",
        "limit=0",
        "limit=1001",
        "actor=",
        "nope=1",
    ] {
        app.get(&format!("/api/v1/audit?{bad}"))
            .await
            .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    }

    // The JSONL mirror has the same entries, oldest first, and no secret either.
    let text = std::fs::read_to_string(&jsonl).unwrap();
    assert!(!text.contains(SECRET));
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    assert_eq!(lines[0]["action"], "tool.create");
    assert_eq!(lines[0]["requestId"], request_id.as_str());
}
