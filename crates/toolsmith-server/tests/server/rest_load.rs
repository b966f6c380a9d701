//! The concurrency guard through the real router: 200 concurrent calls against a cap of 2,
//! every call answered (200 when it ran, 429 with Retry-After when refused, none lost), the
//! refusals counted exactly, and control-plane reads answering while the cap is full.

use crate::rest_support;

use std::sync::Arc;

use axum::http::StatusCode;
use rest_support::TestApp;
use serde_json::json;
use toolsmith_server::ServerSettings;
use toolsmith_service::{LimitsSettings, ToolServiceSettings};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_callers_meet_the_cap_and_reads_keep_answering() {
    let service = ToolServiceSettings {
        limits: LimitsSettings {
            max_concurrent: 2,
            ..LimitsSettings::default()
        },
        ..ToolServiceSettings::default()
    };
    let app = Arc::new(TestApp::with_configs(service, ServerSettings::default()).await);
    app.create_tool(&json!({
        "name": "slow",
        "description": "spins for 200 ms",
        "parameters": {"type": "object"},
        "code": "const t = Date.now(); while (Date.now() - t < 200) {} return 'done';",
    }))
    .await;

    let calls: Vec<_> = (0..200)
        .map(|_| {
            let app = app.clone();
            tokio::spawn(async move {
                app.post("/api/v1/tools/slow/execute", &json!({"arguments": {}}))
                    .await
            })
        })
        .collect();
    // Control-plane reads go out while the executions hold the cap.
    let reads: Vec<_> = (0..20)
        .map(|i| {
            let app = app.clone();
            tokio::spawn(async move {
                let path = if i % 2 == 0 {
                    "/api/v1/custom-tools"
                } else {
                    "/api/v1/custom-tools/stats"
                };
                app.get(path).await.status
            })
        })
        .collect();

    let (mut ran, mut refused) = (0, 0);
    for call in calls {
        let res = call.await.unwrap();
        match res.status {
            StatusCode::OK => {
                assert_eq!(res.json["data"]["content"], "done", "{}", res.text);
                ran += 1;
            }
            StatusCode::TOO_MANY_REQUESTS => {
                assert!(res.header("retry-after").is_some(), "{:?}", res.headers);
                assert_eq!(res.json["error"]["code"], "rate_limited");
                refused += 1;
            }
            other => panic!("a call was answered {other}: {}", res.text),
        }
    }
    assert_eq!(ran + refused, 200, "every call gets an answer");
    assert!(ran >= 2, "some calls ran");
    assert!(refused > 0, "200 calls of 200 ms cannot all fit 2 slots");
    assert_eq!(
        app.state.service.limit_rejections().concurrency,
        refused,
        "the refusals are counted exactly"
    );
    for read in reads {
        assert_eq!(
            read.await.unwrap(),
            StatusCode::OK,
            "a control-plane read was refused"
        );
    }
}
