//! Latency statistics of a run: calls/s and nearest-rank percentiles over every measured call.

use std::time::Duration;

use serde::Serialize;

/// The figures of one run, as printed (table row or JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub target: String,
    pub clients: usize,
    /// Successful calls measured (after the warm-up).
    pub calls: u64,
    /// Failed calls (HTTP error, JSON-RPC error, `isError`, broken connection).
    pub errors: u64,
    pub seconds: f64,
    pub calls_per_second: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Summary {
    /// Summarises `latencies` (one per successful call, any order) measured over `elapsed`.
    pub fn new(
        target: &str,
        clients: usize,
        mut latencies: Vec<Duration>,
        errors: u64,
        elapsed: Duration,
    ) -> Summary {
        latencies.sort_unstable();
        let seconds = elapsed.as_secs_f64();
        let calls = latencies.len() as u64;
        Summary {
            target: target.to_owned(),
            clients,
            calls,
            errors,
            seconds,
            calls_per_second: if seconds > 0.0 {
                calls as f64 / seconds
            } else {
                0.0
            },
            p50_ms: millis(percentile(&latencies, 50.0)),
            p90_ms: millis(percentile(&latencies, 90.0)),
            p99_ms: millis(percentile(&latencies, 99.0)),
            max_ms: millis(latencies.last().copied().unwrap_or_default()),
        }
    }

    /// The header of [`Summary::row`].
    pub fn header() -> String {
        format!(
            "{:<6} {:>7} {:>9} {:>7} {:>10} {:>8} {:>8} {:>8} {:>8}",
            "target",
            "clients",
            "calls",
            "errors",
            "calls/s",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "max ms"
        )
    }

    /// One line of the table.
    pub fn row(&self) -> String {
        format!(
            "{:<6} {:>7} {:>9} {:>7} {:>10.0} {:>8.3} {:>8.3} {:>8.3} {:>8.3}",
            self.target,
            self.clients,
            self.calls,
            self.errors,
            self.calls_per_second,
            self.p50_ms,
            self.p90_ms,
            self.p99_ms,
            self.max_ms
        )
    }
}

/// Nearest-rank percentile of sorted `values` (zero when empty).
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted
        .get(rank.clamp(1, sorted.len()) - 1)
        .copied()
        .unwrap_or_default()
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<Duration> = (1..=100).map(ms).collect();
        assert_eq!(percentile(&values, 50.0), ms(50));
        assert_eq!(percentile(&values, 99.0), ms(99));
        assert_eq!(percentile(&values, 100.0), ms(100));
        assert_eq!(percentile(&values, 0.0), ms(1));
        assert_eq!(percentile(&[ms(7)], 99.0), ms(7));
        assert_eq!(percentile(&[], 50.0), Duration::ZERO);
    }

    #[test]
    fn summary_of_unsorted_latencies() {
        let s = Summary::new("mcp", 4, vec![ms(3), ms(1), ms(2), ms(10)], 1, ms(2000));
        assert_eq!(s.calls, 4);
        assert_eq!(s.errors, 1);
        assert!((s.calls_per_second - 2.0).abs() < 1e-9);
        assert!((s.p50_ms - 2.0).abs() < 1e-9);
        assert!((s.p99_ms - 10.0).abs() < 1e-9);
        assert!((s.max_ms - 10.0).abs() < 1e-9);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["callsPerSecond"], 2.0);
        assert!(s.row().starts_with("mcp"));
    }

    #[test]
    fn empty_run_has_zero_figures() {
        let s = Summary::new("noop", 1, Vec::new(), 3, Duration::ZERO);
        assert_eq!(s.calls_per_second, 0.0);
        assert_eq!(s.max_ms, 0.0);
    }
}
