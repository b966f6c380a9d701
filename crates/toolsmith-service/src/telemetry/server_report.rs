//! The server-wide analytics (an admin's view): every owner's recorded calls of a period —
//! calls, errors, latency (p50, p95, average) — over time (hourly up to two days, daily
//! beyond), and per tool, per user and per agent, from the store's samples
//! ([`ToolStore::server_execution_samples`](toolsmith_store::ToolStore::server_execution_samples)).
//! Pure over the samples like [`crate::telemetry::analytics`], whose definitions it keeps.

use std::collections::{BTreeMap, HashMap};

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

/// What a set of calls adds up to, gathered one call at a time.
#[derive(Debug, Default)]
struct Tally {
    calls: u64,
    errors: u64,
    refused: u64,
    /// Of the calls that ran.
    durations: Vec<f64>,
}

impl Tally {
    fn add(&mut self, s: &ExecutionSample) {
        self.calls += 1;
        if !matches!(
            s.status,
            ExecutionStatus::Success | ExecutionStatus::Withheld
        ) {
            self.errors += 1;
        }
        // Refused before it ran: denied, rate limited, waiting for or past its approval.
        if s.status.ran() {
            self.durations.push(s.duration_ms);
        } else {
            self.refused += 1;
        }
    }

    fn figures(mut self) -> Figures {
        let avg_ms = (!self.durations.is_empty())
            .then(|| self.durations.iter().sum::<f64>() / self.durations.len() as f64);
        Figures {
            calls: self.calls,
            errors: self.errors,
            refused: self.refused,
            p50_ms: percentile(&mut self.durations, 0.50),
            p95_ms: percentile(&mut self.durations, 0.95),
            avg_ms,
        }
    }
}

/// The figures of `samples`.
pub fn figures<'a>(samples: impl IntoIterator<Item = &'a ExecutionSample>) -> Figures {
    let mut tally = Tally::default();
    for s in samples {
        tally.add(s);
    }
    tally.figures()
}

/// The rows of one breakdown: the most calls first, then by name; at most [`MAX_ROWS`].
fn breakdown(groups: HashMap<&str, Tally>) -> Breakdown {
    let mut groups: Vec<(&str, Tally)> = groups.into_iter().collect();
    groups.sort_by(|(a, ta), (b, tb)| tb.calls.cmp(&ta.calls).then_with(|| a.cmp(b)));
    let more = groups.len().saturating_sub(MAX_ROWS);
    groups.truncate(MAX_ROWS);
    Breakdown {
        rows: groups
            .into_iter()
            .map(|(name, tally)| Row {
                name: name.to_owned(),
                figures: tally.figures(),
            })
            .collect(),
        more,
    }
}

/// The report of `samples` (all within `since..=until`, newest first as the store gives them),
/// made in one pass over them: each call is added to the totals, its bucket, its tool, its
/// user and its agent; only the rows shown are then ranked for their percentiles.
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
    let mut starts = Vec::new();
    let mut start = first;
    while start <= until {
        starts.push(start);
        start += width;
    }
    let width_ms = width.num_milliseconds().max(1);
    let mut buckets: Vec<Tally> = starts.iter().map(|_| Tally::default()).collect();
    // Calls outside the period (a clock that moved) each start a bucket of their own, as the
    // BTreeMap this replaced did.
    let mut strays: BTreeMap<DateTime<Utc>, Tally> = BTreeMap::new();
    let mut totals = Tally::default();
    let mut tools: HashMap<&str, Tally> = HashMap::new();
    let mut users: HashMap<&str, Tally> = HashMap::new();
    let mut agents: HashMap<&str, Tally> = HashMap::new();
    for s in samples {
        let sample = &s.sample;
        totals.add(sample);
        let offset = (sample.created_at - first).num_milliseconds();
        let slot = (offset >= 0)
            .then(|| usize::try_from(offset / width_ms).ok())
            .flatten();
        match slot.and_then(|i| buckets.get_mut(i)) {
            Some(tally) => tally.add(sample),
            None => strays
                .entry(sample.created_at.duration_trunc(width).unwrap_or(first))
                .or_default()
                .add(sample),
        }
        tools
            .entry(sample.tool_name.as_str())
            .or_default()
            .add(sample);
        users.entry(s.owner.as_str()).or_default().add(sample);
        if let Some(agent) = s.agent_id.as_deref().filter(|a| !a.is_empty()) {
            agents.entry(agent).or_default().add(sample);
        }
    }
    let mut over_time: BTreeMap<DateTime<Utc>, Tally> = starts.into_iter().zip(buckets).collect();
    over_time.extend(strays);
    ServerMetricsReport {
        period: period.to_string(),
        since,
        until,
        sampled: samples.len() >= MAX_SAMPLES as usize,
        bucket,
        totals: totals.figures(),
        over_time: over_time
            .into_iter()
            .map(|(start, tally)| Bucket {
                start,
                figures: tally.figures(),
            })
            .collect(),
        tools: breakdown(tools),
        users: breakdown(users),
        agents: breakdown(agents),
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

#[cfg(test)]
mod tests;
