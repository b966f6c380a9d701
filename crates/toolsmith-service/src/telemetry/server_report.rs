//! The server-wide analytics (an admin's view): every owner's recorded calls of a period —
//! calls, errors, latency (p50, p95, average) — over time (hourly up to two days, daily
//! beyond), and per tool, per user and per agent, from the store's samples
//! ([`ToolStore::server_execution_samples`](toolsmith_store::ToolStore::server_execution_samples)).
//! Pure over the samples like [`crate::telemetry::analytics`], whose definitions it keeps.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, DurationRound, Utc};
use serde::Serialize;
use toolsmith_core::ExecutionStatus;
use toolsmith_store::{ExecutionSample, ServerExecutionSample};

use crate::error::ServiceError;
use crate::input::Actor;
use crate::service::ToolService;
use crate::telemetry::analytics::{MAX_SAMPLES, Period, percentile};

/// Rows of each breakdown (per tool, user, agent) at most; `more` counts the rest.
pub const MAX_ROWS: usize = 50;
/// Periods up to this many hours are shown by the hour; longer ones by the day.
const HOURLY_UP_TO_HOURS: i64 = 48;

/// The figures of a set of calls.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub calls: u64,
    /// Calls that did not succeed: failed (`error`, `timeout`) or refused (`denied`,
    /// `rate_limited`).
    pub errors: u64,
    /// Of the errors, the calls refused before the tool ran.
    pub refused: u64,
    /// Durations by nearest rank, over the calls that ran; `None` when none ran.
    pub p50_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub avg_ms: Option<f64>,
}

/// One hour or day of the period.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bucket {
    pub start: DateTime<Utc>,
    #[serde(flatten)]
    pub figures: Figures,
}

/// One tool, user or agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub name: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// A breakdown: the rows with the most calls first (at most [`MAX_ROWS`]), and how many more.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Breakdown {
    pub rows: Vec<Row>,
    pub more: usize,
}

/// `GET /api/v1/metrics/server`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerMetricsReport {
    pub period: String,
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    /// `true` when the period held more than [`MAX_SAMPLES`] calls and the figures cover the
    /// newest of them.
    pub sampled: bool,
    /// `hour` or `day`: the width of each bucket of `overTime`.
    pub bucket: &'static str,
    pub totals: Figures,
    /// Every bucket of the period, empty ones included, oldest first.
    pub over_time: Vec<Bucket>,
    pub tools: Breakdown,
    pub users: Breakdown,
    /// Calls made by an agent, per agent (calls without one are not in it).
    pub agents: Breakdown,
}

/// The figures of `samples`.
pub fn figures<'a>(samples: impl IntoIterator<Item = &'a ExecutionSample>) -> Figures {
    let mut calls = 0;
    let mut errors = 0;
    let mut refused = 0;
    let mut durations = Vec::new();
    for s in samples {
        calls += 1;
        if !matches!(
            s.status,
            ExecutionStatus::Success | ExecutionStatus::Withheld
        ) {
            errors += 1;
        }
        // Refused before it ran: denied, rate limited, waiting for or past its approval.
        if !s.status.ran() {
            refused += 1;
        }
        if s.status.ran() {
            durations.push(s.duration_ms);
        }
    }
    let avg_ms =
        (!durations.is_empty()).then(|| durations.iter().sum::<f64>() / durations.len() as f64);
    Figures {
        calls,
        errors,
        refused,
        p50_ms: percentile(&mut durations, 0.50),
        p95_ms: percentile(&mut durations, 0.95),
        avg_ms,
    }
}

fn breakdown<'a>(
    samples: &'a [ServerExecutionSample],
    key: impl Fn(&'a ServerExecutionSample) -> Option<&'a str>,
) -> Breakdown {
    let mut groups: BTreeMap<&str, Vec<&ExecutionSample>> = BTreeMap::new();
    for s in samples {
        if let Some(name) = key(s) {
            groups.entry(name).or_default().push(&s.sample);
        }
    }
    let mut rows: Vec<Row> = groups
        .into_iter()
        .map(|(name, group)| Row {
            name: name.to_owned(),
            figures: figures(group),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.figures
            .calls
            .cmp(&a.figures.calls)
            .then_with(|| a.name.cmp(&b.name))
    });
    let more = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    Breakdown { rows, more }
}

/// The report of `samples` (all within `since..=until`, newest first as the store gives them).
pub fn report(
    samples: &[ServerExecutionSample],
    period: Period,
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> ServerMetricsReport {
    let (bucket, width) = if period.duration() <= Duration::hours(HOURLY_UP_TO_HOURS) {
        ("hour", Duration::hours(1))
    } else {
        ("day", Duration::days(1))
    };
    let first = since.duration_trunc(width).unwrap_or(since);
    let mut buckets: BTreeMap<DateTime<Utc>, Vec<&ExecutionSample>> = BTreeMap::new();
    let mut start = first;
    while start <= until {
        buckets.insert(start, Vec::new());
        start += width;
    }
    for s in samples {
        let at = s.sample.created_at.duration_trunc(width).unwrap_or(first);
        buckets.entry(at).or_default().push(&s.sample);
    }
    ServerMetricsReport {
        period: period.to_string(),
        since,
        until,
        sampled: samples.len() >= MAX_SAMPLES as usize,
        bucket,
        totals: figures(samples.iter().map(|s| &s.sample)),
        over_time: buckets
            .into_iter()
            .map(|(start, group)| Bucket {
                start,
                figures: figures(group),
            })
            .collect(),
        tools: breakdown(samples, |s| Some(s.sample.tool_name.as_str())),
        users: breakdown(samples, |s| Some(s.owner.as_str())),
        agents: breakdown(samples, |s| s.agent_id.as_deref().filter(|a| !a.is_empty())),
    }
}

impl ToolService {
    /// Every owner's calls over the last `period` (an admin's view; the REST route checks the
    /// scope, and this refuses an actor that is not an admin).
    pub async fn server_metrics(
        &self,
        actor: &Actor,
        period: Period,
    ) -> Result<ServerMetricsReport, ServiceError> {
        if !actor.admin {
            return Err(ServiceError::Forbidden(
                "the server-wide analytics are an admin's: use a token with the admin scope, or GET /api/v1/metrics/tools for your own tools".to_owned(),
            ));
        }
        self.flush_usage().await;
        let until = Utc::now();
        let since = until - period.duration();
        let samples = self
            .store
            .server_execution_samples(since, MAX_SAMPLES)
            .await?;
        Ok(report(&samples, period, since, until))
    }
}
