//! `/readyz` and `/metrics` under `--compat dynamic-mcp`, in the bodies of dynamic-mcp's HTTP
//! transport (outside compat mode Toolsmith's own stay):
//!
//! - `/readyz`: `200 {"status": "ready"}`, or `503 {"status": "not_ready", "error": "…"}`,
//!   from the same readiness check as Toolsmith's (the store answers and takes writes);
//! - `/metrics`: dynamic-mcp's six series (`dynamic_mcp_process_uptime_seconds`,
//!   `dynamic_mcp_http_sessions_active`, `…_created_total`, `…_expired_total`,
//!   `dynamic_mcp_http_auth_success_total`, `…_auth_denied_total`), followed by Toolsmith's
//!   own exposition, so an operator's dashboards of either keep working.

use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::AppState;

/// When this process's HTTP server was built (dynamic-mcp's process uptime counts from it).
pub(crate) fn started() -> std::time::Instant {
    static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *STARTED.get_or_init(std::time::Instant::now)
}

/// dynamic-mcp's readiness answer: ready, or not ready with the reason.
pub(crate) fn readyz(outcome: Result<(), String>) -> Response {
    match outcome {
        Ok(()) => (StatusCode::OK, axum::Json(json!({"status": "ready"}))).into_response(),
        Err(error) => (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({"status": "not_ready", "error": error})),
        )
            .into_response(),
    }
}

/// dynamic-mcp's series, in its Prometheus text, then `toolsmith` (Toolsmith's exposition).
pub(crate) fn metrics(state: &AppState, started: std::time::Instant, toolsmith: &str) -> String {
    let m = &state.mcp_sessions;
    let series: [(&str, &str, u64); 6] = [
        (
            "dynamic_mcp_process_uptime_seconds",
            "gauge",
            started.elapsed().as_secs(),
        ),
        (
            "dynamic_mcp_http_sessions_active",
            "gauge",
            m.open.load(Relaxed) as u64,
        ),
        (
            "dynamic_mcp_http_sessions_created_total",
            "counter",
            m.created.load(Relaxed),
        ),
        (
            "dynamic_mcp_http_sessions_expired_total",
            "counter",
            m.expired.load(Relaxed),
        ),
        (
            "dynamic_mcp_http_auth_success_total",
            "counter",
            m.auth_success.load(Relaxed),
        ),
        (
            "dynamic_mcp_http_auth_denied_total",
            "counter",
            m.auth_denied.load(Relaxed),
        ),
    ];
    let mut text = String::new();
    for (name, kind, value) in series {
        let _ = writeln!(text, "# TYPE {name} {kind}");
        let _ = writeln!(text, "{name} {value}");
    }
    text.push_str(toolsmith);
    text
}
