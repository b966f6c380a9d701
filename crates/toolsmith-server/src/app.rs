//! The HTTP application: one axum `Router` for everything `toolsmith serve` answers, and
//! [`serve`], which runs it until shutdown.
//!
//! - `/api/v1/…` — the REST API ([`crate::rest`]), with its OpenAPI document at
//!   `/api/v1/openapi.json`. Unknown routes answer a JSON 404 envelope, a known route with the
//!   wrong method a JSON 405 (with `Allow`); no plain-text error leaves it.
//! - `/mcp` — MCP streamable HTTP ([`crate::mcp`]).
//! - `/` and `/ui/…` — the web UI ([`crate::ui`]), static files with their own CSP.
//! - `/livez` (always `200 {"status":"ok"}`) and `/readyz` (pings the store: 200, or 503).
//!
//! Around all of it, outermost first: the request id (`X-Request-Id`, and the log line of
//! every internal error), hardened headers on every response (`X-Content-Type-Options`,
//! `X-Frame-Options`, `Referrer-Policy`, a strict `Content-Security-Policy` unless a route sets
//! its own), the request timeout (503 envelope), the body limit
//! ([`ServerSettings::body_limit_bytes`](crate::ServerSettings::body_limit_bytes): 413 envelope;
//! `/mcp` reads its bodies itself, with a limit of at least 16 MiB, and answers one over it as
//! a JSON-RPC error once it has been sent),
//! the edge's checks ([`crate::edge`]: the `Host` names served, and no state-changing request
//! sent by another origin's page), then authentication.
//! Connections are accepted by [`crate::connections`]: `TCP_NODELAY`, a connection cap, and
//! header-read and idle timeouts.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header::{
    CONTENT_LENGTH, CONTENT_SECURITY_POLICY, REFERRER_POLICY, RETRY_AFTER, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tokio_util::sync::CancellationToken;
use tower_http::set_header::SetResponseHeaderLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::AppState;
use crate::rest;
use crate::rest::envelope::request_id_middleware;
use crate::rest::error::{ApiError, envelope_errors};
use crate::rest::extract::BodyLimit;
use crate::rest::types::Health;

/// The `Content-Security-Policy` of every response that does not set its own.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/// How long `/readyz` waits for the store.
const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// The whole application for `state`. Open MCP streams end only when the server stops; use
/// [`router_with_shutdown`] to end them on shutdown.
pub fn router(state: AppState) -> Router {
    router_with_shutdown(state, CancellationToken::new())
}

/// [`router`], whose MCP sessions and streams end when `shutdown` is cancelled.
pub fn router_with_shutdown(state: AppState, shutdown: CancellationToken) -> Router {
    let body_limit = state.config.body_limit_bytes;
    let request_timeout = state.config.request_timeout;
    let state_for_limit = state.clone();

    let (api, _) = rest::api_router().merge(health_routes()).split_for_parts();
    let api = api
        .fallback(no_route)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn(envelope_errors))
        .with_state(state.clone());

    let edge = crate::edge::EdgeRules::new(&state.config.allowed_hosts);
    let app = api
        .merge(crate::ui::router())
        .merge(crate::auth::oauth::routes(state.clone()))
        .merge(crate::mcp::routes_with_shutdown(state.clone(), shutdown))
        .layer(middleware::from_fn_with_state(
            state,
            crate::auth::authenticate,
        ))
        .layer(middleware::from_fn_with_state(edge, crate::edge::guard));

    app.layer(DefaultBodyLimit::max(body_limit))
        .layer(middleware::from_fn_with_state(
            body_limit,
            limit_content_length,
        ))
        .layer(middleware::from_fn_with_state(
            (request_timeout, state_for_limit),
            time_limit,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
        ))
        .layer(middleware::from_fn(request_id_middleware))
}

/// Serves the application on `listener` until `shutdown` completes, then stops accepting
/// connections, ends MCP streams, and lets in-flight requests finish — for at most the request
/// timeout (plus a second), after which the remaining ones are dropped.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let grace = state.config.request_timeout + Duration::from_secs(1);
    let limits = crate::connections::ConnectionLimits {
        max_connections: state.config.max_connections,
        header_read_timeout: state.config.header_read_timeout,
        idle_timeout: state.config.idle_timeout,
    };
    let stats = state.connections.clone();
    let stop = CancellationToken::new();
    let app = router_with_shutdown(state, stop.clone());
    let signal = stop.clone();
    tokio::spawn(async move {
        shutdown.await;
        signal.cancel();
    });
    let server = crate::connections::serve_connections(listener, app, limits, stats, stop.clone());
    let mut server = std::pin::pin!(server);
    tokio::select! {
        () = &mut server => return Ok(()),
        () = stop.cancelled() => {}
    }
    tracing::info!(
        grace_secs = grace.as_secs(),
        "shutting down; waiting for in-flight requests"
    );
    if tokio::time::timeout(grace, server).await.is_err() {
        tracing::warn!(
            grace_secs = grace.as_secs(),
            "in-flight requests did not finish in time; dropping them"
        );
    }
    Ok(())
}

/// `/livez` and `/readyz`, documented.
pub(crate) fn health_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(livez))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
}

/// Liveness
///
/// Always `200 {"status": "ok"}` while the process serves requests.
#[utoipa::path(
    get, path = "/livez", tag = "health", operation_id = "livez",
    responses((status = 200, description = "The process is alive", body = Health))
)]
async fn livez() -> Response {
    health(StatusCode::OK, "ok")
}

/// Metrics
///
/// This process's metrics in the Prometheus text format: executions by tool and status,
/// durations, sandbox limit hits, rate-limit refusals, queue depth. With authentication on,
/// it needs an `admin` token (tool names of every user appear in it).
#[utoipa::path(
    get, path = "/metrics", tag = "health", operation_id = "metrics",
    responses(
        (status = 200, description = "The metrics", body = String, content_type = "text/plain"),
        (status = 403, description = "Not an admin token", body = crate::rest::error::ErrorEnvelope)
    )
)]
async fn metrics(
    State(state): State<AppState>,
    identity: crate::auth::Identity,
) -> Result<Response, ApiError> {
    rest::require(&identity, crate::auth::Scope::Admin)?;
    Ok((
        [(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        metrics_text(&state).await,
    )
        .into_response())
}

/// The exposition of `/metrics`: in compat mode dynamic-mcp's series first.
async fn metrics_text(state: &AppState) -> String {
    let text = with_server_metrics(state.service.metrics_text().await, state);
    if state.config.compat_dynamic_mcp {
        return crate::mcp::compat_probes::metrics(
            state,
            crate::mcp::compat_probes::started(),
            &text,
        );
    }
    text
}

/// The service's exposition with this server's own series added before its `# EOF`: open
/// connections and MCP sessions, and how many the limits closed or refused.
fn with_server_metrics(service: String, state: &AppState) -> String {
    use std::fmt::Write as _;
    use std::sync::atomic::Ordering::Relaxed;
    let c = &state.connections;
    let m = &state.mcp_sessions;
    let series: [(&str, &str, &str, u64); 10] = [
        (
            "toolsmith_http_connections_open",
            "gauge",
            "HTTP connections open now",
            c.open.load(Relaxed) as u64,
        ),
        (
            "toolsmith_http_connections_evicted_total",
            "counter",
            "Idle connections closed to make room for a new one",
            c.evicted.load(Relaxed),
        ),
        (
            "toolsmith_http_connections_refused_total",
            "counter",
            "Connections refused with 503 because every open one was busy",
            c.refused.load(Relaxed),
        ),
        (
            "toolsmith_http_connections_idle_closed_total",
            "counter",
            "Connections closed after idle_timeout with nothing in flight",
            c.idle_closed.load(Relaxed),
        ),
        (
            "toolsmith_mcp_sessions_open",
            "gauge",
            "MCP sessions open now",
            m.open.load(Relaxed) as u64,
        ),
        (
            "toolsmith_mcp_sessions_evicted_total",
            "counter",
            "MCP sessions closed to make room for a newer one of the same user",
            m.evicted.load(Relaxed),
        ),
        (
            "toolsmith_mcp_sessions_refused_total",
            "counter",
            "MCP sessions refused by mcp_max_sessions or mcp_max_sessions_per_user",
            m.refused.load(Relaxed),
        ),
        (
            "toolsmith_mcp_sessions_expired_total",
            "counter",
            "MCP sessions closed after mcp_session_idle_timeout unused",
            m.expired.load(Relaxed),
        ),
        (
            "toolsmith_mcp_listens_open",
            "gauge",
            "MCP subscriptions/listen streams open now",
            m.listens_open.load(Relaxed) as u64,
        ),
        (
            "toolsmith_mcp_listens_refused_total",
            "counter",
            "MCP subscriptions/listen requests refused by mcp_max_listens or mcp_max_listens_per_user",
            m.listens_refused.load(Relaxed),
        ),
    ];
    let mut extra = String::new();
    for (name, kind, help, value) in series {
        let family = name.strip_suffix("_total").unwrap_or(name);
        let _ = writeln!(extra, "# HELP {family} {help}.");
        let _ = writeln!(extra, "# TYPE {family} {kind}");
        let _ = writeln!(extra, "{name} {value}");
    }
    match service.rsplit_once("# EOF") {
        Some((head, tail)) => format!("{head}{extra}# EOF{tail}"),
        None => service + &extra,
    }
}

/// Readiness
///
/// `200 {"status": "ok"}` when the store answers and takes writes, `503 {"status":
/// "unavailable"}` otherwise (no answer in time, or its last write failed and records wait
/// for a retry: disk full, read-only, unreachable).
#[utoipa::path(
    get, path = "/readyz", tag = "health", operation_id = "readyz",
    responses(
        (status = 200, description = "Ready: the store answers and takes writes", body = Health),
        (status = 503, description = "Not ready: the store does not answer or cannot write", body = Health)
    )
)]
async fn readyz(State(state): State<AppState>) -> Response {
    let outcome = readiness(&state).await;
    if state.config.compat_dynamic_mcp {
        // dynamic-mcp's bodies (`{"status": "ready"}` / `"not_ready"` with the reason).
        return crate::mcp::compat_probes::readyz(outcome);
    }
    match outcome {
        Ok(()) => health(StatusCode::OK, "ok"),
        Err(_) => unready(),
    }
}

/// Whether the store answers and takes writes; if not, why, in words fit for a public probe
/// (the details are logged).
async fn readiness(state: &AppState) -> Result<(), String> {
    let why = match tokio::time::timeout(READY_TIMEOUT, state.service.ping_store()).await {
        Ok(Ok(())) => match state.service.store_write_health() {
            (true, _) => return Ok(()),
            (false, spooled) => {
                tracing::warn!(
                    spooled,
                    "readiness check: the store cannot write (usage records wait for a retry)"
                );
                format!("the store cannot write ({spooled} usage records wait for a retry)")
            }
        },
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "readiness check: the store failed");
            // `/readyz` is public: the store's own message stays in the log.
            "the store failed (its error is in the server's log)".to_owned()
        }
        Err(_) => {
            tracing::warn!("readiness check: the store did not answer in time");
            "the store did not answer in time".to_owned()
        }
    };
    Err(why)
}

fn unready() -> Response {
    let mut res = health(StatusCode::SERVICE_UNAVAILABLE, "unavailable");
    res.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    res
}

fn health(status: StatusCode, text: &str) -> Response {
    (
        status,
        axum::Json(Health {
            status: text.to_owned(),
        }),
    )
        .into_response()
}

async fn no_route(method: Method, uri: Uri) -> ApiError {
    ApiError::no_route(&method, uri.path())
}

async fn method_not_allowed(method: Method, uri: Uri) -> ApiError {
    ApiError::method_not_allowed(&method, uri.path())
}

/// 413 as soon as a declared `Content-Length` is over the limit (bodies without one are cut
/// off by [`DefaultBodyLimit`] when read).
async fn limit_content_length(
    State(limit): State<usize>,
    mut request: Request,
    next: Next,
) -> Response {
    if request.uri().path() == crate::mcp::MCP_PATH {
        // `/mcp` has its own limit and answers over it only once the body has been sent
        // (answering first would cut the connection under the client's session).
        return next.run(request).await;
    }
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return ApiError::body_too_large(limit).into_response();
    }
    request.extensions_mut().insert(BodyLimit(limit));
    next.run(request).await
}

/// 503 when a request takes longer than the request timeout.
/// Answers 503 when a request takes longer than the request limit — or, for the REST call of a
/// bridged MCP tool, than its server's call timeout when that is longer (plus a few seconds for
/// the answer to come back), so a server allowed 120 s is not cut at 60 s.
async fn time_limit(
    State((limit, state)): State<(Duration, AppState)>,
    request: Request,
    next: Next,
) -> Response {
    let bridged = request
        .uri()
        .path()
        .strip_prefix("/api/v1/tools/")
        .and_then(|rest| rest.strip_suffix("/execute"))
        .and_then(|name| state.service.mcp_call_timeout(name));
    let limit = match bridged {
        Some(call) => limit.max(call + Duration::from_secs(5)),
        None => limit,
    };
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(res) => res,
        Err(_) => ApiError::unavailable(
            "timeout",
            format!(
                "the request took longer than the limit of {} seconds",
                limit.as_secs_f64()
            ),
            1,
        )
        .into_response(),
    }
}
