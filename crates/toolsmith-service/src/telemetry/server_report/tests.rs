use chrono::TimeZone;

use super::*;

fn at(day: u32, hour: u32, minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, day, hour, minute, 0).unwrap()
}

fn call(
    tool: &str,
    owner: &str,
    agent: Option<&str>,
    status: ExecutionStatus,
    ms: f64,
    when: DateTime<Utc>,
) -> ServerExecutionSample {
    ServerExecutionSample {
        sample: ExecutionSample {
            tool_id: format!("tool_{tool}"),
            tool_name: tool.to_owned(),
            status,
            error_kind: None,
            duration_ms: ms,
            created_at: when,
        },
        owner: owner.to_owned(),
        agent_id: agent.map(str::to_owned),
    }
}

/// The figures as the definitions say, computed the slow way: for the comparison below.
fn by_definition(samples: &[&ServerExecutionSample]) -> Figures {
    let mut ran: Vec<f64> = samples
        .iter()
        .filter(|s| s.sample.status.ran())
        .map(|s| s.sample.duration_ms)
        .collect();
    ran.sort_by(f64::total_cmp);
    let rank = |q: f64| {
        (!ran.is_empty())
            .then(|| ran[((q * ran.len() as f64).ceil() as usize).clamp(1, ran.len()) - 1])
    };
    Figures {
        calls: samples.len() as u64,
        errors: samples
            .iter()
            .filter(|s| {
                !matches!(
                    s.sample.status,
                    ExecutionStatus::Success | ExecutionStatus::Withheld
                )
            })
            .count() as u64,
        refused: samples.iter().filter(|s| !s.sample.status.ran()).count() as u64,
        p50_ms: rank(0.50),
        p95_ms: rank(0.95),
        avg_ms: (!ran.is_empty()).then(|| ran.iter().sum::<f64>() / ran.len() as f64),
    }
}

#[test]
fn one_pass_gives_each_bucket_and_row_the_figures_of_its_calls() {
    let since = at(1, 10, 30);
    let until = at(2, 9, 0);
    let statuses = [
        ExecutionStatus::Success,
        ExecutionStatus::Error,
        ExecutionStatus::Success,
        ExecutionStatus::Timeout,
        ExecutionStatus::Denied,
        ExecutionStatus::Withheld,
        ExecutionStatus::RateLimited,
    ];
    let mut samples = Vec::new();
    for n in 0..500u32 {
        let minutes = i64::from(n * 37 % (22 * 60));
        samples.push(call(
            ["a", "b", "c"][(n % 3) as usize],
            ["alice", "bob"][(n % 2) as usize],
            [Some("planner"), None, Some("")][(n % 3) as usize],
            statuses[(n % 7) as usize],
            f64::from(n % 89) * 1.25,
            since + Duration::minutes(minutes),
        ));
    }
    samples.sort_by_key(|s| std::cmp::Reverse(s.sample.created_at));
    let report = report(&samples, Period::hours(24), since, until);
    assert_eq!(report.bucket, "hour");
    let all: Vec<&ServerExecutionSample> = samples.iter().collect();
    assert_eq!(report.totals, by_definition(&all));
    // Every hour from the one holding `since` to the one holding `until`, empty or not.
    assert_eq!(report.over_time.len(), 24);
    assert_eq!(report.over_time[0].start, at(1, 10, 0));
    for bucket in &report.over_time {
        let inside: Vec<&ServerExecutionSample> = samples
            .iter()
            .filter(|s| {
                s.sample.created_at >= bucket.start
                    && s.sample.created_at < bucket.start + Duration::hours(1)
            })
            .collect();
        assert_eq!(bucket.figures, by_definition(&inside), "{}", bucket.start);
    }
    for (breakdown, key) in [(&report.tools, 0), (&report.users, 1), (&report.agents, 2)] {
        let name = |s: &ServerExecutionSample| -> Option<String> {
            match key {
                0 => Some(s.sample.tool_name.clone()),
                1 => Some(s.owner.clone()),
                _ => s.agent_id.clone().filter(|a| !a.is_empty()),
            }
        };
        for row in &breakdown.rows {
            let mine: Vec<&ServerExecutionSample> = samples
                .iter()
                .filter(|s| name(s).as_deref() == Some(row.name.as_str()))
                .collect();
            assert_eq!(row.figures, by_definition(&mine), "{}", row.name);
        }
    }
    assert_eq!(
        report
            .agents
            .rows
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>(),
        ["planner"],
        "a call without an agent (none, or empty) is in no row"
    );
    assert_eq!(report.users.rows.len(), 2);
}

#[test]
fn rows_are_the_most_called_first_then_by_name_and_the_rest_are_counted() {
    let since = at(1, 0, 0);
    let until = at(8, 0, 0);
    let mut samples = Vec::new();
    for t in 0..(MAX_ROWS + 3) {
        // Tool t is called (t % 4) + 1 times.
        for _ in 0..=(t % 4) {
            samples.push(call(
                &format!("tool_{t:03}"),
                "alice",
                None,
                ExecutionStatus::Success,
                1.0,
                at(3, 0, 0),
            ));
        }
    }
    let report = report(&samples, Period::days(7), since, until);
    assert_eq!(report.bucket, "day");
    assert_eq!(report.over_time.len(), 8);
    assert_eq!(report.tools.rows.len(), MAX_ROWS);
    assert_eq!(report.tools.more, 3);
    let shown: Vec<(u64, &str)> = report
        .tools
        .rows
        .iter()
        .map(|r| (r.figures.calls, r.name.as_str()))
        .collect();
    let mut expected = shown.clone();
    expected.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    assert_eq!(shown, expected);
    assert_eq!(shown[0], (4, "tool_003"));
}

#[test]
fn a_call_outside_the_period_has_a_bucket_of_its_own() {
    let since = at(1, 10, 0);
    let until = at(1, 12, 0);
    let samples = [
        call(
            "a",
            "alice",
            None,
            ExecutionStatus::Success,
            5.0,
            at(1, 15, 5),
        ),
        call(
            "a",
            "alice",
            None,
            ExecutionStatus::Success,
            3.0,
            at(1, 11, 5),
        ),
    ];
    let report = report(&samples, Period::hours(2), since, until);
    let starts: Vec<(DateTime<Utc>, u64)> = report
        .over_time
        .iter()
        .map(|b| (b.start, b.figures.calls))
        .collect();
    assert_eq!(
        starts,
        [
            (at(1, 10, 0), 0),
            (at(1, 11, 0), 1),
            (at(1, 12, 0), 0),
            (at(1, 15, 0), 1),
        ]
    );
}

#[test]
fn nothing_ran_means_no_durations() {
    let report = report(&[], Period::hours(1), at(1, 10, 0), at(1, 11, 0));
    assert_eq!(report.totals.calls, 0);
    assert_eq!(report.totals.p50_ms, None);
    assert_eq!(report.totals.avg_ms, None);
    assert!(report.tools.rows.is_empty());
}
