//! Scrubbing through the real pipeline: what a JS tool returns, logs or throws leaves the
//! service without credentials, ordinary text stays, and the owner's own secrets are redacted
//! only from the owner's results.

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::ToolContext;

use crate::{Actor, CreateTool, EntryInput, ServiceInput};

fn js(name: &str, code: &str) -> CreateTool {
    CreateTool {
        name: name.to_owned(),
        kind: Default::default(),
        description: "leaks".to_owned(),
        parameters: json!({"type": "object"}),
        code: code.to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: Vec::new(),
        requires_approval: None,
        metadata: None,
    }
}

#[tokio::test]
async fn results_console_and_errors_leave_without_credentials() {
    let (_dir, store, service) = crate::config_center::tests::service().await;
    // Ada's own secret, in her Config Center.
    let ada = Actor::user("ada");
    service
        .create_config_service(
            &ada,
            ServiceInput {
                name: "vault".to_owned(),
                ..ServiceInput::default()
            },
        )
        .await
        .unwrap();
    service
        .create_config_entry(
            &ada,
            "vault",
            EntryInput {
                values: [("api_key".to_owned(), json!("correct-horse-battery"))].into(),
                ..EntryInput::default()
            },
        )
        .await
        .unwrap();
    let token = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    for owner in ["ada", "bob"] {
        let actor = Actor::user(owner);
        service
            .create(
                &actor,
                js(
                    "leak",
                    &format!(
                        "console.log('token {token}'); \
                         if (args.fail) throw new Error('failed with api_key=sk-live-1234567890abcdef'); \
                         return {{config: 'api_key=sk-proj-abcdefghijklmnop1234567890', plain: 'monkey=bananas123', \
                         mine: 'correct-horse-battery'}};"
                    ),
                ),
            )
            .await
            .unwrap();
    }
    let ok = service
        .execute("leak", json!({}), ToolContext::new("ada"))
        .await;
    let text = serde_json::to_string(&ok).unwrap();
    assert!(!text.contains(token), "{text}");
    assert!(!text.contains("sk-proj-abcdefghijklmnop"), "{text}");
    assert!(!text.contains("correct-horse-battery"), "{text}");
    assert_eq!(ok.content["config"], "api_key=[REDACTED]");
    assert_eq!(ok.content["plain"], "monkey=bananas123");

    // Bob's output is not scrubbed of Ada's secret (it is not his), only of patterns.
    let bob = service
        .execute("leak", json!({}), ToolContext::new("bob"))
        .await;
    assert_eq!(bob.content["mine"], "correct-horse-battery");
    assert!(!serde_json::to_string(&bob).unwrap().contains(token));

    let failed = service
        .execute("leak", json!({"fail": true}), ToolContext::new("ada"))
        .await;
    assert!(failed.is_error);
    let text = serde_json::to_string(&failed).unwrap();
    assert!(!text.contains("sk-live-1234567890abcdef"), "{text}");
    service.flush_usage().await;
    let recorded = store
        .list_executions("ada", None, None, None, 10)
        .await
        .unwrap();
    let errors: Vec<&str> = recorded.iter().filter_map(|e| e.error.as_deref()).collect();
    assert!(!errors.is_empty());
    assert!(errors.iter().all(|e| !e.contains("sk-live")), "{errors:?}");
}

/// A source whose secrets cannot be read (the store failed under it).
struct Unreadable;

#[async_trait::async_trait]
impl super::SecretSource for Unreadable {
    async fn secrets_of(&self, _owner: &str) -> Result<Vec<String>, String> {
        Err("the database cannot be used right now: disk I/O error".to_owned())
    }
}

#[tokio::test]
async fn unreadable_secrets_withhold_the_result_instead_of_passing_it() {
    let scrub = super::ScrubMiddleware::new(Arc::new(Unreadable)).unwrap();
    let mut result = toolsmith_core::ToolResult::ok(json!({"mine": "correct-horse-battery"}));
    result.metadata.duration_ms = 12.0;
    scrub
        .scrub("ada", toolsmith_core::ResultSource::External, &mut result)
        .await;
    assert!(result.is_error);
    // The tool ran: not an internal error a client would retry, and not the tool's error.
    assert_eq!(
        result.error_kind(),
        Some(toolsmith_core::ErrorKind::ResultWithheld)
    );
    assert_eq!(result.content["ran"], json!(true));
    let text = serde_json::to_string(&result).unwrap();
    assert!(!text.contains("correct-horse-battery"), "{text}");
    assert!(text.contains("withheld"), "{text}");
    assert_eq!(result.metadata.duration_ms, 12.0);

    let mut preview = json!({"token": "correct-horse-battery"});
    scrub.scrub_value("ada", &mut preview).await;
    assert_eq!(preview, json!("[withheld: secrets unreadable]"));
}
