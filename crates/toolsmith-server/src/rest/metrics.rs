//! Execution analytics over REST: `GET /api/v1/metrics/tools`, `GET /api/v1/metrics/server`
//! (every owner's calls, admin), `GET /api/v1/metrics/anomalies`,
//! `GET /api/v1/custom-tools/{id}/metrics` and `GET /api/v1/custom-tools/{id}/anomalies`.
//! The figures and the anomaly rule are the service's ([`toolsmith_service::analytics`]); this
//! module parses the query and wraps the answer in the envelope.

use axum::extract::State;
use toolsmith_service::{Anomaly, Period};
use toolsmith_service::{MetricsReport, ServerMetricsReport, ToolMetricsReport, ToolRef};

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

const DEFAULT_PERIOD: Period = Period::days(7);
const DEFAULT_WINDOW: Period = Period::hours(24);
const DEFAULT_BASELINE: Period = Period::days(7);

/// Figures of every custom tool
///
/// Totals and one row per tool called in the period (most executions first): executions,
/// success rate, average and p95 duration, status counts, error breakdown, daily trend.
#[utoipa::path(
    get, path = "/api/v1/metrics/tools", tag = "metrics", operation_id = "toolMetrics",
    params(("period" = Option<String>, Query, description = "How far back: `<n>m`, `<n>h` or `<n>d`, up to 366d (default 7d)", pattern = "^([1-9][0-9]{0,2}[mh]|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$")),
    responses(
        (status = 200, description = "The figures", body = Object),
        (status = 400, description = "Bad period", body = super::error::ErrorEnvelope)
    )
)]
pub async fn tools(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<MetricsReport>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["period"])?;
    let period = period(&query, "period", DEFAULT_PERIOD)?;
    let report = state
        .service
        .metrics_report(&actor(&identity), period)
        .await?;
    Ok(ApiOk::ok(report))
}

/// Figures of the whole server (admin)
///
/// Every owner's recorded calls of the period: the totals (calls, errors, refused, p50, p95 and
/// average duration), the same per hour (periods up to 48h) or per day (`overTime`, every
/// bucket, empty ones included), and per tool, per user and per agent (the 50 with the most
/// calls, `more` counting the rest). Read by the web UI's Analytics page.
#[utoipa::path(
    get, path = "/api/v1/metrics/server", tag = "metrics", operation_id = "serverMetrics",
    params(("period" = Option<String>, Query, description = "How far back: `<n>m`, `<n>h` or `<n>d`, up to 366d (default 7d)", pattern = "^([1-9][0-9]{0,2}[mh]|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$")),
    responses(
        (status = 200, description = "The figures", body = Object),
        (status = 400, description = "Bad period", body = super::error::ErrorEnvelope),
        (status = 403, description = "Needs admin", body = super::error::ErrorEnvelope)
    )
)]
pub async fn server(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<ServerMetricsReport>, ApiError> {
    require(&identity, Scope::Admin)?;
    query.check(&["period"])?;
    let period = period(&query, "period", DEFAULT_PERIOD)?;
    let report = state
        .service
        .server_metrics(&actor(&identity), period)
        .await?;
    Ok(ApiOk::ok(report))
}

/// Figures of one custom tool
///
/// The spec's `ToolMetrics` (total executions, success rate, average execution time, error
/// breakdown, usage trend) plus p95 duration and status counts.
#[utoipa::path(
    get, path = "/api/v1/custom-tools/{id}/metrics", tag = "metrics", operation_id = "customToolMetrics",
    params(
        ("id" = String, Path, description = "Tool id or name"),
        ("period" = Option<String>, Query, description = "How far back (default 7d)", pattern = "^([1-9][0-9]{0,2}[mh]|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$")
    ),
    responses(
        (status = 200, description = "The figures", body = Object),
        (status = 400, description = "Bad period", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such tool for this caller", body = super::error::ErrorEnvelope)
    )
)]
pub async fn tool(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<ToolMetricsReport>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["period"])?;
    let period = period(&query, "period", DEFAULT_PERIOD)?;
    let report = state
        .service
        .tool_metrics(&actor(&identity), &ToolRef::parse(&id), period)
        .await?;
    Ok(ApiOk::ok(report))
}

/// Anomalies of every custom tool
///
/// Tools whose error rate or p95 duration in the last `window` departs from the `baseline`
/// before it (the rule is in docs/analytics.md).
#[utoipa::path(
    get, path = "/api/v1/metrics/anomalies", tag = "metrics", operation_id = "toolAnomalies",
    params(
        ("window" = Option<String>, Query, description = "The recent window (default 24h)", pattern = "^([1-9][0-9]{0,2}[mh]|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$"),
        ("baseline" = Option<String>, Query, description = "The baseline before the window (default 7d)", pattern = "^([1-9][0-9]{0,2}[mh]|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$")
    ),
    responses(
        (status = 200, description = "The anomalies", body = Object),
        (status = 400, description = "Bad window or baseline", body = super::error::ErrorEnvelope)
    )
)]
pub async fn anomalies(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Vec<Anomaly>>, ApiError> {
    anomalies_of(state, identity, None, query).await
}

/// Anomalies of one custom tool
#[utoipa::path(
    get, path = "/api/v1/custom-tools/{id}/anomalies", tag = "metrics", operation_id = "customToolAnomalies",
    params(
        ("id" = String, Path, description = "Tool id or name"),
        ("window" = Option<String>, Query, description = "The recent window (default 24h)", pattern = "^([1-9][0-9]{0,2}[mh]|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$"),
        ("baseline" = Option<String>, Query, description = "The baseline before the window (default 7d)", pattern = "^([1-9][0-9]{0,2}[mh]|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-6])d)$")
    ),
    responses(
        (status = 200, description = "The anomalies", body = Object),
        (status = 400, description = "Bad window or baseline", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such tool for this caller", body = super::error::ErrorEnvelope)
    )
)]
pub async fn tool_anomalies(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Vec<Anomaly>>, ApiError> {
    anomalies_of(state, identity, Some(ToolRef::parse(&id)), query).await
}

async fn anomalies_of(
    state: AppState,
    identity: Identity,
    tool: Option<ToolRef>,
    query: QueryPairs,
) -> Result<ApiOk<Vec<Anomaly>>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["window", "baseline"])?;
    let window = period(&query, "window", DEFAULT_WINDOW)?;
    let baseline = period(&query, "baseline", DEFAULT_BASELINE)?;
    let found = state
        .service
        .anomalies(&actor(&identity), tool.as_ref(), window, baseline)
        .await?;
    Ok(ApiOk::ok(found))
}

fn period(query: &QueryPairs, name: &str, default: Period) -> Result<Period, ApiError> {
    match query.get(name) {
        None => Ok(default),
        Some(raw) => raw.parse().map_err(|why: String| {
            ApiError::bad_request("invalid_query", format!("query parameter `{name}`: {why}"))
        }),
    }
}
