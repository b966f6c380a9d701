//! Dry runs (`POST /api/v1/custom-tools/test`) are calls through the pipeline, with the
//! caller's identity: the policy decides on the tool under test, the approval class follows the
//! permissions asked for, rate limits count them, the audit log records them, and the Config
//! Center's secrets reach a dry run only for a caller who may read them (`admin`).

use crate::rest_support;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use rest_support::{TestApp, TestResponse, request};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::{Scope, new_token};
use toolsmith_service::{LimitsSettings, Rate, ToolServiceSettings};

const SECRET: &str = "sk-live-4f9a1c2e7b3d5a8f";

/// The app with an admin token and an execute-only token of the same user, and the service
/// `prod_api` holding [`SECRET`].
struct App {
    app: TestApp,
    admin: String,
    runner: String,
}

async fn app(service: ToolServiceSettings) -> App {
    let app = TestApp::with_configs(service, ServerSettings::default()).await;
    // No token yet: the local user sets up the Config Center.
    app.post("/api/v1/config/services", &json!({"name": "prod_api"}))
        .await
        .assert_ok(StatusCode::CREATED);
    app.post(
        "/api/v1/config/services/prod_api/entries",
        &json!({"values": {"api_key": SECRET}}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let mut secrets = Vec::new();
    for scopes in [
        vec![Scope::Admin],
        vec![Scope::ToolsRead, Scope::ToolsExecute],
    ] {
        let (record, secret) = new_token("default", "t", &scopes, None);
        app.state
            .service
            .create_token(&toolsmith_service::Actor::user("admin"), &record)
            .await
            .unwrap();
        secrets.push(secret);
    }
    let runner = secrets.pop().unwrap();
    let admin = secrets.pop().unwrap();
    App { app, admin, runner }
}

impl App {
    async fn dry_run(&self, token: &str, body: &Value) -> TestResponse {
        let request = request(Method::POST, "/api/v1/custom-tools/test")
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        self.app.send(request).await
    }
}

fn js(name: &str, code: &str) -> Value {
    json!({"name": name, "description": "d", "parameters": {"type": "object"}, "code": code})
}

#[tokio::test]
async fn a_dry_run_meets_the_policy_the_limits_and_the_audit_log() {
    let service = ToolServiceSettings {
        limits: LimitsSettings {
            per_user: Some(Rate {
                per_minute: 3,
                burst: 3,
            }),
            ..LimitsSettings::default()
        },
        policy: Some(serde_json::from_value(json!({"deny": ["forbidden_dry"]})).unwrap()),
        ..ToolServiceSettings::default()
    };
    let a = app(service).await;
    let denied = a
        .dry_run(&a.runner, &js("forbidden_dry", "return 1"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(denied["metadata"]["errorKind"], "denied", "{denied}");
    // The policy refused that one before the limiter: it spent no token.
    for _ in 0..3 {
        let ok = a
            .dry_run(&a.runner, &js("dry", "return 41 + 1"))
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(ok["content"], 42, "{ok}");
        assert_eq!(ok["testMode"], true, "{ok}");
    }
    // The fourth call of the minute is past the per-user limit of 3.
    a.dry_run(&a.runner, &js("dry", "return 1"))
        .await
        .assert_error(StatusCode::TOO_MANY_REQUESTS, "rate_limited");

    let audit = a
        .app
        .state
        .service
        .audit()
        .list(&toolsmith_core::AuditQuery {
            action: Some("code.run".to_owned()),
            limit: 10,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(audit.len(), 5, "{audit:#?}");
    assert!(
        audit.iter().all(|e| e["targetType"] == "code"),
        "{audit:#?}"
    );
    assert!(
        audit.iter().all(|e| !e.to_string().contains("41 + 1")),
        "no code in the audit log"
    );
}

#[tokio::test]
async fn a_dry_run_asking_for_the_network_needs_the_approval_its_creation_would() {
    let a = app(ToolServiceSettings::default()).await;
    // A command tool holds `shell`; with `network` it would reach the host's network. An
    // execute-only token may not create it, so a person must allow the dry run first.
    let body = json!({
        "name": "net_probe", "kind": "command", "description": "d",
        "parameters": {"type": "object"},
        "code": json!({"command": "echo hi", "network": true}).to_string(),
    });
    let waiting = a.dry_run(&a.runner, &body).await.assert_ok(StatusCode::OK);
    assert_eq!(
        waiting["metadata"]["errorKind"], "approval_required",
        "{waiting}"
    );
    let pending = a
        .app
        .state
        .service
        .approvals()
        .list(None, true, 10)
        .await
        .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].tool_name, "net_probe");
    assert!(pending[0].tool_key.starts_with("unsaved_"), "{pending:?}");
    // Plain code asks for nothing risky and runs.
    let ok = a
        .dry_run(&a.runner, &js("plain", "return 'ok'"))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(ok["content"], "ok", "{ok}");
}

#[tokio::test]
async fn a_dry_run_reads_config_center_secrets_only_for_an_admin() {
    let a = app(ToolServiceSettings::default()).await;
    // Reversed, so the scrubber (which knows the plain form) cannot hide a leak.
    let mut body = js(
        "peek",
        "const k = utils.getApiKey('prod_api'); return k ? k.split('').reverse().join('') : 'none';",
    );
    body["requiredApiKeys"] = json!([{"name": "prod_api"}]);
    let reversed: String = SECRET.chars().rev().collect();

    let runner = a.dry_run(&a.runner, &body).await.assert_ok(StatusCode::OK);
    assert_eq!(runner["content"], "none", "{runner}");
    assert!(!runner.to_string().contains(&reversed), "{runner}");

    let admin = a.dry_run(&a.admin, &body).await.assert_ok(StatusCode::OK);
    assert_eq!(admin["content"], json!(reversed), "{admin}");
}

#[tokio::test]
async fn a_tool_name_in_the_form_of_an_id_is_refused() {
    let app = TestApp::new().await;
    let message = app
        .post(
            "/api/v1/custom-tools",
            &js("tool_0123456789abcdef", "return 1"),
        )
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("form of a tool id"), "{message}");
}
