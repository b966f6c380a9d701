//! Execution analytics: the figures of a period (executions, success rate, average and p95
//! duration, error breakdown, daily trend) and the anomaly rule, computed from the store's
//! execution samples ([`ToolStore::execution_samples`](toolsmith_store::ToolStore::execution_samples)).
//!
//! Aggregation lives here, not in SQL, so every store backend yields the same figures. The
//! functions are pure over a slice of samples; [`ToolService`](crate::ToolService) fetches the
//! samples and calls them.
//!
//! Definitions (also in `docs/analytics.md`):
//! - *executions* count every recorded call, refused ones (`denied`, `rate_limited`) included;
//! - *ran* = `success` + `error` + `timeout`; `successRate` = `success / ran` (null when nothing ran);
//! - durations (average, p95 by nearest rank) are over the calls that ran;
//! - `errorBreakdown` counts the error class of every call that did not succeed;
//! - the daily trend has one row per UTC day of the period, empty days included.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use serde::Serialize;
use toolsmith_core::ExecutionStatus;
use toolsmith_store::ExecutionSample;

/// How many samples one analytics query reads at most; beyond it the figures cover the newest
/// samples and say so (`sampled: true`).
pub const MAX_SAMPLES: u32 = 200_000;

/// The longest period a query may cover.
pub const MAX_PERIOD_DAYS: i64 = 366;

/// A length of time given as `<n><unit>`: `m` minutes, `h` hours, `d` days (`30m`, `24h`, `7d`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    amount: u32,
    unit: char,
}

impl Period {
    pub const fn days(amount: u32) -> Period {
        Period { amount, unit: 'd' }
    }

    pub const fn hours(amount: u32) -> Period {
        Period { amount, unit: 'h' }
    }

    pub fn duration(self) -> Duration {
        let n = i64::from(self.amount);
        match self.unit {
            'm' => Duration::minutes(n),
            'h' => Duration::hours(n),
            _ => Duration::days(n),
        }
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.amount, self.unit)
    }
}

impl FromStr for Period {
    type Err = String;

    fn from_str(text: &str) -> Result<Period, String> {
        if text.len() > 8 {
            return Err(
                "invalid period: use a number and a unit m, h or d, such as 24h or 7d".to_owned(),
            );
        }
        let bad = || {
            format!("invalid period '{text}': use a number and a unit m, h or d, such as 24h or 7d")
        };
        let unit = text.chars().last().ok_or_else(bad)?;
        if !matches!(unit, 'm' | 'h' | 'd') {
            return Err(bad());
        }
        let digits = text.strip_suffix(unit).ok_or_else(bad)?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 6 {
            return Err(bad());
        }
        let amount: u32 = digits.parse().map_err(|_| bad())?;
        let period = Period { amount, unit };
        if amount == 0 {
            return Err(format!(
                "invalid period '{text}': it must be longer than zero"
            ));
        }
        if period.duration() > Duration::days(MAX_PERIOD_DAYS) {
            return Err(format!(
                "invalid period '{text}': at most {MAX_PERIOD_DAYS} days"
            ));
        }
        Ok(period)
    }
}

/// The figures of one tool, or of all of an owner's tools, over a period.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolMetrics {
    pub total_executions: u64,
    pub successful: u64,
    /// `error` + `timeout`.
    pub failed: u64,
    /// `denied` + `rate_limited` + `awaiting_approval` + `expired`: did not run.
    pub refused: u64,
    /// `successful / (successful + failed)`; `None` when nothing ran.
    pub success_rate: Option<f64>,
    pub avg_execution_time_ms: Option<f64>,
    pub p95_execution_time_ms: Option<f64>,
    /// Executions per status (`success`, `error`, `timeout`, `denied`, `rate_limited`, and
    /// `withheld`: the tool ran but its result could not be scrubbed, counted nowhere else).
    pub status_counts: BTreeMap<String, u64>,
    /// Failed and refused executions per error class (`timeout`, `cpu_limit`, `runtime` …).
    pub error_breakdown: BTreeMap<String, u64>,
    pub usage_trend: Vec<DailyUsage>,
}

/// One UTC day of a trend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DailyUsage {
    pub date: NaiveDate,
    pub executions: u64,
    /// Executions of the day that did not succeed.
    pub errors: u64,
}

/// The figures of `samples` (all within `since..=until`).
pub fn metrics(
    samples: &[&ExecutionSample],
    since: DateTime<Utc>,
    until: DateTime<Utc>,
) -> ToolMetrics {
    let mut status_counts = BTreeMap::new();
    let mut error_breakdown = BTreeMap::new();
    let mut durations = Vec::new();
    let mut days: BTreeMap<NaiveDate, DailyUsage> = day_range(since, until)
        .map(|date| {
            (
                date,
                DailyUsage {
                    date,
                    executions: 0,
                    errors: 0,
                },
            )
        })
        .collect();
    for sample in samples {
        *status_counts
            .entry(sample.status.as_str().to_owned())
            .or_insert(0) += 1;
        // A withheld result is not the tool's failure: the tool ran, its result could not be
        // scrubbed. It counts in `status_counts` alone.
        let succeeded = matches!(
            sample.status,
            ExecutionStatus::Success | ExecutionStatus::Withheld
        );
        if !succeeded {
            let class = sample
                .error_kind
                .clone()
                .unwrap_or_else(|| sample.status.as_str().to_owned());
            *error_breakdown.entry(class).or_insert(0) += 1;
        }
        if sample.status.ran() {
            durations.push(sample.duration_ms);
        }
        if let Some(day) = days.get_mut(&sample.created_at.date_naive()) {
            day.executions += 1;
            day.errors += u64::from(!succeeded);
        }
    }
    let count = |status: ExecutionStatus| status_counts.get(status.as_str()).copied().unwrap_or(0);
    let successful = count(ExecutionStatus::Success);
    let failed = count(ExecutionStatus::Error) + count(ExecutionStatus::Timeout);
    let refused = count(ExecutionStatus::Denied)
        + count(ExecutionStatus::RateLimited)
        + count(ExecutionStatus::AwaitingApproval)
        + count(ExecutionStatus::Expired);
    let ran = successful + failed;
    ToolMetrics {
        total_executions: samples.len() as u64,
        successful,
        failed,
        refused,
        success_rate: (ran > 0).then(|| successful as f64 / ran as f64),
        avg_execution_time_ms: (!durations.is_empty())
            .then(|| durations.iter().sum::<f64>() / durations.len() as f64),
        p95_execution_time_ms: percentile(&mut durations, 0.95),
        status_counts,
        error_breakdown,
        usage_trend: days.into_values().collect(),
    }
}

/// The `q`-quantile by nearest rank; `None` for no values. Reorders `values` (a selection, not
/// a sort: linear time, which is what keeps the server-wide report fast with 100,000 calls).
pub fn percentile(values: &mut [f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let rank = (q * values.len() as f64).ceil() as usize;
    let index = rank.clamp(1, values.len()) - 1;
    let (_, nth, _) = values.select_nth_unstable_by(index, f64::total_cmp);
    Some(*nth)
}

fn day_range(since: DateTime<Utc>, until: DateTime<Utc>) -> impl Iterator<Item = NaiveDate> {
    let last = until.date_naive();
    std::iter::successors(Some(since.date_naive()), move |day| {
        day.succ_opt().filter(|next| *next <= last)
    })
}

/// The anomaly rule's thresholds (documented in `docs/analytics.md`).
pub mod rule {
    /// A tool is judged only with at least this many calls that ran in the window.
    pub const MIN_WINDOW_RUNS: usize = 10;
    /// A latency baseline needs at least this many calls that ran.
    pub const MIN_BASELINE_RUNS: usize = 10;
    /// The window's error rate must reach this much above the baseline's (absolute).
    pub const ERROR_RATE_RISE: f64 = 0.20;
    /// The window's p95 must be at least this multiple of the baseline's …
    pub const LATENCY_FACTOR: f64 = 2.0;
    /// … and at least this many milliseconds above it.
    pub const LATENCY_RISE_MS: f64 = 50.0;
}

/// A tool whose recent behaviour departs from its baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Anomaly {
    pub tool_id: String,
    pub tool_name: String,
    /// `error_rate` or `latency`.
    pub kind: &'static str,
    /// The window's figure (an error rate 0–1, or a p95 in ms).
    pub recent: f64,
    /// The baseline's figure; `0` error rate when the tool has no baseline.
    pub baseline: f64,
    pub window_runs: usize,
    pub baseline_runs: usize,
    pub message: String,
}

/// The anomalies among `samples`: each sample is in the window if it is at or after
/// `window_start`, else in the baseline.
pub fn anomalies(samples: &[ExecutionSample], window_start: DateTime<Utc>) -> Vec<Anomaly> {
    #[derive(Default)]
    struct Split<'a> {
        name: &'a str,
        window: Vec<&'a ExecutionSample>,
        baseline: Vec<&'a ExecutionSample>,
    }
    let mut tools: BTreeMap<&str, Split<'_>> = BTreeMap::new();
    for sample in samples.iter().filter(|s| s.status.ran()) {
        let split = tools.entry(&sample.tool_id).or_default();
        split.name = &sample.tool_name;
        if sample.created_at >= window_start {
            split.window.push(sample);
        } else {
            split.baseline.push(sample);
        }
    }
    let mut found = Vec::new();
    for (tool_id, split) in tools {
        if split.window.len() < rule::MIN_WINDOW_RUNS {
            continue;
        }
        let anomaly = |kind, recent, baseline, message| Anomaly {
            tool_id: tool_id.to_owned(),
            tool_name: split.name.to_owned(),
            kind,
            recent,
            baseline,
            window_runs: split.window.len(),
            baseline_runs: split.baseline.len(),
            message,
        };
        let recent_errors = error_rate(&split.window);
        let baseline_errors = if split.baseline.is_empty() {
            0.0
        } else {
            error_rate(&split.baseline)
        };
        if recent_errors >= baseline_errors + rule::ERROR_RATE_RISE {
            found.push(anomaly(
                "error_rate",
                recent_errors,
                baseline_errors,
                format!(
                    "error rate {:.0}% over the last {} calls, against {:.0}% before",
                    recent_errors * 100.0,
                    split.window.len(),
                    baseline_errors * 100.0
                ),
            ));
        }
        if split.baseline.len() >= rule::MIN_BASELINE_RUNS {
            let p95 = |set: &[&ExecutionSample]| {
                let mut durations: Vec<f64> = set.iter().map(|s| s.duration_ms).collect();
                percentile(&mut durations, 0.95).unwrap_or(0.0)
            };
            let (recent, baseline) = (p95(&split.window), p95(&split.baseline));
            if recent >= baseline * rule::LATENCY_FACTOR
                && recent - baseline >= rule::LATENCY_RISE_MS
            {
                found.push(anomaly(
                    "latency",
                    recent,
                    baseline,
                    format!("p95 duration {recent:.1} ms, against {baseline:.1} ms before"),
                ));
            }
        }
    }
    found
}

fn error_rate(samples: &[&ExecutionSample]) -> f64 {
    let errors = samples
        .iter()
        .filter(|s| {
            !matches!(
                s.status,
                ExecutionStatus::Success | ExecutionStatus::Withheld
            )
        })
        .count();
    errors as f64 / samples.len().max(1) as f64
}

#[cfg(test)]
mod tests;
