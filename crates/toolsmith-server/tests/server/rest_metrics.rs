//! Execution analytics over REST: a scripted workload with known numbers of successes, errors,
//! timeouts and refusals, and the figures the metrics and anomaly routes give for it.

use crate::rest_support;

use std::time::Duration;

use axum::http::StatusCode;
use rest_support::TestApp;
use serde_json::json;
use toolsmith_sandbox::JsLimits;
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

const WORK: &str = "if (args.mode === 'fail') throw new Error('boom');\n\
                    if (args.mode === 'hang') { while (true) {} }\n\
                    return args.mode;";

async fn app() -> TestApp {
    let service = ToolServiceSettings {
        js_limits: JsLimits {
            cpu_time: Duration::from_millis(100),
            wall_time: Duration::from_secs(2),
            ..JsLimits::default()
        },
        ..ToolServiceSettings::default()
    };
    let app = TestApp::with_configs(service, ServerSettings::default()).await;
    for name in ["work", "idle"] {
        app.create_tool(&json!({
            "name": name,
            "description": "does what it is told",
            "parameters": {"type": "object", "properties": {"mode": {"type": "string"}}},
            "code": WORK,
        }))
        .await;
    }
    app
}

async fn run(app: &TestApp, tool: &str, mode: &str, times: usize) {
    for _ in 0..times {
        let res = app
            .post(
                &format!("/api/v1/custom-tools/{tool}/execute"),
                &json!({"arguments": {"mode": mode}}),
            )
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.text);
    }
}

#[tokio::test]
async fn metrics_match_a_scripted_workload() {
    let app = app().await;
    run(&app, "work", "ok", 7).await;
    run(&app, "work", "fail", 2).await;
    run(&app, "work", "hang", 1).await;
    run(&app, "idle", "ok", 1).await;

    let res = app.get("/api/v1/custom-tools/work/metrics?period=7d").await;
    let m = res.assert_ok(StatusCode::OK);
    assert_eq!(m["toolName"], "work");
    assert_eq!(m["period"], "7d");
    assert_eq!(m["totalExecutions"], 10);
    assert_eq!(
        (m["successful"].clone(), m["failed"].clone()),
        (json!(7), json!(3))
    );
    assert_eq!(m["successRate"], 0.7);
    assert_eq!(
        m["statusCounts"],
        json!({"success": 7, "error": 2, "timeout": 1})
    );
    let breakdown = m["errorBreakdown"].as_object().unwrap();
    assert_eq!(
        breakdown.values().map(|v| v.as_u64().unwrap()).sum::<u64>(),
        3
    );
    assert_eq!(breakdown.len(), 2, "two error classes: {breakdown:?}");
    let p95 = m["p95ExecutionTimeMs"].as_f64().unwrap();
    let avg = m["avgExecutionTimeMs"].as_f64().unwrap();
    assert!(p95 >= 90.0, "the timed-out call dominates p95: {p95}");
    assert!(avg > 0.0 && avg < p95, "avg {avg}, p95 {p95}");
    let trend = m["usageTrend"].as_array().unwrap();
    assert_eq!(trend.len(), 8, "7 days back and today: {trend:?}");
    let today = trend.last().unwrap();
    assert_eq!(
        (today["executions"].clone(), today["errors"].clone()),
        (json!(10), json!(3))
    );

    let all = app
        .get("/api/v1/metrics/tools")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(all["totals"]["totalExecutions"], 11);
    let rows: Vec<(&str, u64)> = all["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["toolName"].as_str().unwrap(),
                t["totalExecutions"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, [("work", 10), ("idle", 1)]);
}

#[tokio::test]
async fn server_figures_cover_every_call_per_tool_user_and_agent_and_are_an_admins() {
    let app = app().await;
    run(&app, "work", "ok", 3).await;
    run(&app, "work", "fail", 1).await;
    for _ in 0..2 {
        let res = app
            .send(
                rest_support::request(
                    axum::http::Method::POST,
                    "/api/v1/custom-tools/idle/execute",
                )
                .header("content-type", "application/json")
                .header("x-toolsmith-agent", "planner")
                .body(axum::body::Body::from(r#"{"arguments": {"mode": "ok"}}"#))
                .unwrap(),
            )
            .await;
        assert_eq!(res.status, StatusCode::OK, "{}", res.text);
    }
    let m = app
        .get("/api/v1/metrics/server?period=24h")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(m["period"], "24h");
    assert_eq!(m["bucket"], "hour");
    assert_eq!(m["sampled"], false);
    assert_eq!(m["totals"]["calls"], 6);
    assert_eq!(m["totals"]["errors"], 1);
    assert_eq!(m["totals"]["refused"], 0);
    for key in ["p50Ms", "p95Ms", "avgMs"] {
        assert!(m["totals"][key].as_f64().is_some(), "{key}: {m}");
    }
    let buckets = m["overTime"].as_array().unwrap();
    assert!((24..=26).contains(&buckets.len()), "{}", buckets.len());
    assert_eq!(
        buckets
            .iter()
            .map(|b| b["calls"].as_u64().unwrap())
            .sum::<u64>(),
        6,
        "every call is in one hour"
    );
    let rows = |what: &str| -> Vec<(String, u64)> {
        m[what]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["name"].as_str().unwrap().to_owned(),
                    r["calls"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(
        rows("tools"),
        [("work".to_owned(), 4), ("idle".to_owned(), 2)]
    );
    assert_eq!(rows("users"), [("default".to_owned(), 6)]);
    assert_eq!(rows("agents"), [("planner".to_owned(), 2)]);
    let week = app
        .get("/api/v1/metrics/server")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(week["bucket"], "day");
    assert_eq!(week["overTime"].as_array().unwrap().len(), 8);
    // An agent is not an admin: the whole server's figures are not its to read.
    let res = app
        .send(
            rest_support::request(axum::http::Method::GET, "/api/v1/metrics/server")
                .header("x-toolsmith-agent", "planner")
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    res.assert_error(StatusCode::FORBIDDEN, "forbidden");
}

#[tokio::test]
async fn another_users_figures_are_not_visible() {
    let app = app().await;
    run(&app, "work", "ok", 2).await;
    let other_tool = app.get("/api/v1/custom-tools/work/metrics").await;
    assert_eq!(other_tool.status, StatusCode::OK);
    // The REST user is `default`; the service scopes every figure to it, so another owner's
    // samples never mix in (checked at the store level); an unknown tool is a 404.
    app.get("/api/v1/custom-tools/nope/metrics")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn a_tool_that_starts_failing_is_an_anomaly() {
    let app = app().await;
    run(&app, "work", "fail", 10).await;
    run(&app, "idle", "ok", 10).await;
    let found = app
        .get("/api/v1/metrics/anomalies?window=1h")
        .await
        .assert_ok(StatusCode::OK);
    let kinds: Vec<(&str, &str)> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["toolName"].as_str().unwrap(), a["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(kinds, [("work", "error_rate")]);
    assert_eq!(found[0]["recent"], 1.0);
    let one = app
        .get("/api/v1/custom-tools/idle/anomalies")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(one, json!([]));
}

#[tokio::test]
async fn bad_periods_and_unknown_parameters_are_400() {
    let app = app().await;
    for path in [
        "/api/v1/metrics/tools?period=7w",
        "/api/v1/metrics/tools?period=0d",
        "/api/v1/metrics/tools?period=9999d",
        "/api/v1/metrics/tools?period=%00%01",
        "/api/v1/metrics/tools?period=7d&period=1d",
        "/api/v1/metrics/tools?since=yesterday",
        "/api/v1/metrics/anomalies?window=forever",
        "/api/v1/custom-tools/work/metrics?period=-1d",
    ] {
        let res = app.get(path).await;
        let message = res.assert_error(StatusCode::BAD_REQUEST, "invalid_query");
        assert!(message.len() < 300, "{path}: {message}");
    }
    let long = format!("/api/v1/metrics/tools?period={}", "9".repeat(10_000));
    let message = app
        .get(&long)
        .await
        .assert_error(StatusCode::BAD_REQUEST, "invalid_query");
    assert!(
        !message.contains("9999999999"),
        "the message does not echo huge input"
    );
}
