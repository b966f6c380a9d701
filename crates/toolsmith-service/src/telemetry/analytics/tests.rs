use chrono::TimeZone;

use super::*;

fn at(day: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, hour, 0, 0).unwrap()
}

fn sample(tool: &str, status: ExecutionStatus, ms: f64, when: DateTime<Utc>) -> ExecutionSample {
    ExecutionSample {
        tool_id: format!("tool_{tool}"),
        tool_name: tool.to_owned(),
        status,
        error_kind: match status {
            ExecutionStatus::Success => None,
            ExecutionStatus::Timeout => Some("timeout".to_owned()),
            ExecutionStatus::Error => Some("runtime".to_owned()),
            ExecutionStatus::Denied => Some("permission_denied".to_owned()),
            ExecutionStatus::RateLimited => Some("rate_limited".to_owned()),
            ExecutionStatus::Withheld => Some("result_withheld".to_owned()),
            ExecutionStatus::AwaitingApproval | ExecutionStatus::Expired => {
                Some("approval_required".to_owned())
            }
        },
        duration_ms: ms,
        created_at: when,
    }
}

#[test]
fn periods_parse_and_refuse_nonsense() {
    assert_eq!(
        "7d".parse::<Period>().unwrap().duration(),
        Duration::days(7)
    );
    assert_eq!(
        "24h".parse::<Period>().unwrap().duration(),
        Duration::hours(24)
    );
    assert_eq!(
        "90m".parse::<Period>().unwrap().duration(),
        Duration::minutes(90)
    );
    assert_eq!("7d".parse::<Period>().unwrap().to_string(), "7d");
    for bad in [
        "",
        "d",
        "7",
        "7w",
        "-1d",
        "0d",
        "1.5d",
        "7 d",
        "99999999d",
        "367d",
        "٣d",
        "7dd",
    ] {
        assert!(bad.parse::<Period>().is_err(), "{bad:?} was accepted");
    }
    assert!("366d".parse::<Period>().is_ok());
}

#[test]
fn figures_of_a_known_workload() {
    let samples = [
        sample("a", ExecutionStatus::Success, 10.0, at(1, 9)),
        sample("a", ExecutionStatus::Success, 20.0, at(1, 10)),
        sample("a", ExecutionStatus::Success, 30.0, at(3, 10)),
        sample("a", ExecutionStatus::Error, 40.0, at(3, 11)),
        sample("a", ExecutionStatus::Timeout, 1000.0, at(3, 12)),
        sample("a", ExecutionStatus::RateLimited, 0.0, at(3, 13)),
    ];
    let refs: Vec<&ExecutionSample> = samples.iter().collect();
    let m = metrics(&refs, at(1, 0), at(3, 23));
    assert_eq!(m.total_executions, 6);
    assert_eq!((m.successful, m.failed, m.refused), (3, 2, 1));
    assert_eq!(m.success_rate, Some(0.6));
    assert_eq!(
        m.avg_execution_time_ms,
        Some(220.0),
        "refused calls carry no duration"
    );
    assert_eq!(m.p95_execution_time_ms, Some(1000.0));
    assert_eq!(m.status_counts["success"], 3);
    assert_eq!(m.status_counts["rate_limited"], 1);
    assert_eq!(
        m.error_breakdown,
        BTreeMap::from([
            ("rate_limited".to_owned(), 1),
            ("runtime".to_owned(), 1),
            ("timeout".to_owned(), 1)
        ])
    );
    let trend: Vec<(u32, u64, u64)> = m
        .usage_trend
        .iter()
        .map(|d| (chrono::Datelike::day(&d.date), d.executions, d.errors))
        .collect();
    assert_eq!(
        trend,
        [(1, 2, 0), (2, 0, 0), (3, 4, 3)],
        "empty days are listed"
    );
}

#[test]
fn a_withheld_result_is_counted_as_such_and_not_as_the_tools_error() {
    let samples = [
        sample("a", ExecutionStatus::Success, 10.0, at(1, 9)),
        sample("a", ExecutionStatus::Withheld, 20.0, at(1, 10)),
    ];
    let refs: Vec<&ExecutionSample> = samples.iter().collect();
    let m = metrics(&refs, at(1, 0), at(1, 23));
    assert_eq!((m.successful, m.failed, m.refused), (1, 0, 0));
    assert_eq!(m.success_rate, Some(1.0));
    assert_eq!(m.status_counts["withheld"], 1);
    assert!(m.error_breakdown.is_empty(), "{:?}", m.error_breakdown);
    assert_eq!(m.usage_trend[0].errors, 0);
    assert_eq!(m.avg_execution_time_ms, Some(15.0), "the tool ran");
}

#[test]
fn nothing_ran_means_no_rates_rather_than_zero() {
    let samples = [sample("a", ExecutionStatus::Denied, 0.0, at(2, 1))];
    let refs: Vec<&ExecutionSample> = samples.iter().collect();
    let m = metrics(&refs, at(2, 0), at(2, 5));
    assert_eq!(m.success_rate, None);
    assert_eq!(m.avg_execution_time_ms, None);
    assert_eq!(m.p95_execution_time_ms, None);
    let empty = metrics(&[], at(2, 0), at(2, 5));
    assert_eq!(empty.total_executions, 0);
    assert_eq!(empty.usage_trend.len(), 1);
}

#[test]
fn percentile_is_nearest_rank() {
    let mut values: Vec<f64> = (1..=100).map(f64::from).collect();
    assert_eq!(percentile(&mut values, 0.95), Some(95.0));
    assert_eq!(percentile(&mut [7.0], 0.95), Some(7.0));
    assert_eq!(percentile(&mut [3.0, 1.0, 2.0], 0.5), Some(2.0));
    assert_eq!(percentile(&mut [], 0.95), None);
}

fn runs(tool: &str, n: usize, errors: usize, ms: f64, when: DateTime<Utc>) -> Vec<ExecutionSample> {
    (0..n)
        .map(|i| {
            let status = if i < errors {
                ExecutionStatus::Error
            } else {
                ExecutionStatus::Success
            };
            sample(tool, status, ms, when)
        })
        .collect()
}

#[test]
fn anomalies_follow_the_documented_rule() {
    let window = at(10, 0);
    let before = at(5, 0);
    let mut samples = Vec::new();
    // Error rate from 0% to 50%: flagged.
    samples.extend(runs("flaky", 20, 0, 5.0, before));
    samples.extend(runs("flaky", 10, 5, 5.0, at(10, 1)));
    // 10% before and 20% now: a rise of 10 points, below the 20-point threshold.
    samples.extend(runs("steady", 20, 2, 5.0, before));
    samples.extend(runs("steady", 10, 2, 5.0, at(10, 1)));
    // p95 from 10 ms to 200 ms: flagged.
    samples.extend(runs("slow", 20, 0, 10.0, before));
    samples.extend(runs("slow", 10, 0, 200.0, at(10, 1)));
    // 2x slower, but only 10 ms more: noise.
    samples.extend(runs("quick", 20, 0, 10.0, before));
    samples.extend(runs("quick", 10, 0, 20.0, at(10, 1)));
    // Too few calls in the window to judge, however bad.
    samples.extend(runs("rare", 9, 9, 5000.0, at(10, 1)));
    // A new tool without baseline failing 30%: judged against a healthy 0%.
    samples.extend(runs("new", 10, 3, 5.0, at(10, 1)));
    // Refused calls are not errors of the tool.
    samples.extend(runs("limited", 10, 0, 5.0, at(10, 1)));
    samples
        .extend((0..10).map(|_| sample("limited", ExecutionStatus::RateLimited, 0.0, at(10, 2))));

    let found: Vec<(String, &str)> = anomalies(&samples, window)
        .into_iter()
        .map(|a| (a.tool_name, a.kind))
        .collect();
    assert_eq!(
        found,
        [
            ("flaky".to_owned(), "error_rate"),
            ("new".to_owned(), "error_rate"),
            ("slow".to_owned(), "latency"),
        ]
    );
    let flaky = &anomalies(&samples, window)[0];
    assert_eq!((flaky.recent, flaky.baseline), (0.5, 0.0));
    assert_eq!((flaky.window_runs, flaky.baseline_runs), (10, 20));
    assert!(flaky.message.contains("50%"), "{}", flaky.message);
}
