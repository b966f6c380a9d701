//! The scheduler end to end through the service (real pipeline, real SQLite store), on a
//! clock the test drives: a task every minute fires on time for three minutes; two services
//! on one store run each due time once; missed runs follow `missedRuns`; a task whose tool
//! was disabled or whose group was switched off records the refusal; bad arguments name the
//! fix; one user never sees another's tasks.

use chrono::{DateTime, Duration, Timelike, Utc};
use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, ToolContext};

use super::*;

async fn call(service: &ToolService, user: &str, tool: &str, args: Value) -> ToolResult {
    service.execute(tool, args, ToolContext::new(user)).await
}

async fn ok(service: &ToolService, user: &str, tool: &str, args: Value) -> Value {
    let res = call(service, user, tool, args.clone()).await;
    assert!(!res.is_error, "{tool} {args}: {res:?}");
    res.content
}

fn refused(res: &ToolResult, kind: ErrorKind, words: &str) {
    assert!(res.is_error, "{res:?}");
    assert_eq!(res.metadata.error_kind, Some(kind), "{res:?}");
    let text = res.content.to_string();
    assert!(text.contains(words), "{words:?} not in {text}");
}

async fn with_scheduler(service: &Arc<ToolService>) {
    service
        .set_tool_group(&user(), "scheduler", true)
        .await
        .unwrap();
}

/// Ticks `service`'s scheduler every simulated second from `from` for `seconds`, waiting for
/// the runs each tick starts.
async fn drive(service: &ToolService, from: DateTime<Utc>, seconds: i64) {
    let scheduler = service.scheduler().unwrap();
    for s in 0..=seconds {
        for run in scheduler.tick(from + Duration::seconds(s)).await.unwrap() {
            run.await.unwrap();
        }
    }
}

async fn history(service: &ToolService, user: &str, task: &str) -> Vec<Value> {
    let out = ok(
        service,
        user,
        "get_task_history",
        json!({"taskId": task, "limit": 50}),
    )
    .await;
    let mut runs = out["runs"].as_array().cloned().unwrap_or_default();
    runs.reverse(); // oldest first
    runs
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("a time: {v}"))
}

async fn every_minute(service: &ToolService, user: &str, missed: &str) -> String {
    let out = ok(
        service,
        user,
        "create_scheduled_task",
        json!({
            "name": "tick",
            "schedule": "* * * * *",
            "tool": "calculate",
            "arguments": {"expression": "6 * 7"},
            "missedRuns": missed,
        }),
    )
    .await;
    out["task"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_task_every_minute_fires_on_time_for_three_minutes() {
    let f = fixture().await;
    with_scheduler(&f.service).await;
    let start = Utc::now();
    let id = every_minute(&f.service, "alice", "skip").await;
    let listed = ok(&f.service, "alice", "list_scheduled_tasks", json!({})).await;
    let next = time(&listed["tasks"][0]["nextRunAt"]);
    assert!(
        next > start && next - start <= Duration::seconds(60),
        "{listed}"
    );
    assert_eq!(
        (next.second(), next.nanosecond()),
        (0, 0),
        "on the minute: {listed}"
    );

    drive(&f.service, start, 185).await;
    let runs = history(&f.service, "alice", &id).await;
    let due: Vec<DateTime<Utc>> = (0..)
        .map(|m| next + Duration::minutes(m))
        .take_while(|t| *t <= start + Duration::seconds(185))
        .collect();
    assert!(due.len() >= 3, "{due:?}");
    assert_eq!(runs.len(), due.len(), "one run per minute: {runs:#?}");
    for (run, due) in runs.iter().zip(&due) {
        assert_eq!(run["status"], "success", "{run}");
        assert_eq!(run["trigger"], "schedule");
        assert_eq!(run["result"]["result"].as_f64(), Some(42.0), "{run}");
        assert_eq!(time(&run["scheduledFor"]), *due);
        let late = time(&run["startedAt"]) - *due;
        assert!(
            late >= Duration::zero() && late <= Duration::seconds(2),
            "{run}"
        );
    }
    let task = &ok(&f.service, "alice", "list_scheduled_tasks", json!({})).await["tasks"][0];
    assert_eq!(task["runCount"], due.len());
    assert_eq!(task["lastStatus"], "success");
}

#[tokio::test]
async fn switching_the_group_off_stops_every_task_until_it_is_back() {
    let f = fixture().await;
    with_scheduler(&f.service).await;
    let start = Utc::now();
    let skip = every_minute(&f.service, "alice", "skip").await;
    f.service
        .set_tool_group(&user(), "scheduler", false)
        .await
        .unwrap();
    drive(&f.service, start, 150).await;
    // Back on five minutes later: the waiting run is late, so it is a missed one.
    with_scheduler(&f.service).await;
    let back = start + Duration::minutes(5);
    drive(&f.service, back, 0).await;
    let runs = history(&f.service, "alice", &skip).await;
    assert_eq!(
        runs.len(),
        1,
        "nothing ran while the group was off: {runs:#?}"
    );
    assert_eq!(
        (runs[0]["status"].clone(), runs[0]["trigger"].clone()),
        (json!("skipped"), json!("missed"))
    );
}

#[tokio::test]
async fn two_services_on_one_store_run_each_due_time_once() {
    let f = fixture().await;
    let path = f._dir.path().join("toolsmith.db");
    let second = open_at(&path, ToolServiceSettings::default()).await;
    with_scheduler(&f.service).await;
    let start = Utc::now();
    let id = every_minute(&f.service, "alice", "skip").await;
    let (a, b) = (f.service.scheduler().unwrap(), second.scheduler().unwrap());
    for s in 0..=130 {
        let now = start + Duration::seconds(s);
        let (ra, rb) = tokio::join!(a.tick(now), b.tick(now));
        for run in ra.unwrap().into_iter().chain(rb.unwrap()) {
            run.await.unwrap();
        }
    }
    let runs = history(&f.service, "alice", &id).await;
    let mut due: Vec<_> = runs.iter().map(|r| time(&r["scheduledFor"])).collect();
    let n = due.len();
    due.dedup();
    assert!(n >= 2 && due.len() == n, "each due time once: {runs:#?}");
}

/// Issue 31: a run claimed by a process that stopped before running it (a crash, `kill -9`)
/// is not lost without a trace: once its lease ends, another instance records it as `lost`,
/// once, without running it again; the task goes on at its next times.
#[tokio::test]
async fn a_run_claimed_by_a_process_that_stopped_is_recorded_as_lost_once() {
    let f = fixture().await;
    let path = f._dir.path().join("toolsmith.db");
    let second = open_at(&path, ToolServiceSettings::default()).await;
    with_scheduler(&f.service).await;
    with_scheduler(&second).await;
    let id = every_minute(&f.service, "alice", "skip").await;
    let listed = ok(&f.service, "alice", "list_scheduled_tasks", json!({})).await;
    let first = time(&listed["tasks"][0]["nextRunAt"]);

    // The first instance claims the due run and stops before the run is ever polled.
    let claimed = f.service.scheduler().unwrap().tick(first).await.unwrap();
    assert_eq!(claimed.len(), 1);
    for run in claimed {
        run.abort();
    }
    // The other instance goes on ticking for three and a half minutes.
    let other = second.scheduler().unwrap();
    for s in 1..=210 {
        for run in other.tick(first + Duration::seconds(s)).await.unwrap() {
            run.await.unwrap();
        }
    }
    let runs = history(&second, "alice", &id).await;
    let lost: Vec<&Value> = runs.iter().filter(|r| r["status"] == "lost").collect();
    assert_eq!(lost.len(), 1, "one lost run: {runs:#?}");
    assert_eq!(time(&lost[0]["scheduledFor"]), first, "{runs:#?}");
    assert_eq!(lost[0]["trigger"], "schedule");
    let error = lost[0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("never finished"), "{error}");
    let ran: Vec<DateTime<Utc>> = runs
        .iter()
        .filter(|r| r["status"] == "success")
        .map(|r| time(&r["scheduledFor"]))
        .collect();
    assert_eq!(
        ran,
        (1..=3)
            .map(|m| first + Duration::minutes(m))
            .collect::<Vec<_>>(),
        "the lost run is not run again, the next ones run: {runs:#?}"
    );
    let task = &ok(&second, "alice", "list_scheduled_tasks", json!({})).await["tasks"][0];
    assert_eq!(task["runCount"], 3, "{task}");
}

#[tokio::test]
async fn missed_runs_are_skipped_or_run_once_as_the_task_says() {
    let f = fixture().await;
    with_scheduler(&f.service).await;
    let start = Utc::now();
    let skip = every_minute(&f.service, "alice", "skip").await;
    let once = every_minute(&f.service, "alice", "run_once").await;
    // The server was down for ten minutes.
    let back = start + Duration::minutes(10);
    drive(&f.service, back, 0).await;
    let skipped = history(&f.service, "alice", &skip).await;
    assert_eq!(skipped.len(), 1, "{skipped:#?}");
    assert_eq!(
        (skipped[0]["status"].clone(), skipped[0]["trigger"].clone()),
        (json!("skipped"), json!("missed"))
    );
    let ran = history(&f.service, "alice", &once).await;
    assert_eq!(ran.len(), 1, "{ran:#?}");
    assert_eq!(
        (ran[0]["status"].clone(), ran[0]["trigger"].clone()),
        (json!("success"), json!("missed"))
    );
    // Neither catches up on the other nine: the next run is the first after now.
    let listed = ok(&f.service, "alice", "list_scheduled_tasks", json!({})).await;
    for task in listed["tasks"].as_array().unwrap() {
        let next = time(&task["nextRunAt"]);
        assert!(next > back && next <= back + Duration::minutes(1), "{task}");
    }
}

#[tokio::test]
async fn a_task_whose_tool_is_refused_records_the_refusal() {
    let f = fixture().await;
    with_scheduler(&f.service).await;
    f.service
        .create(
            &Actor::user("alice"),
            tool("greet", "return 'hi ' + args.x;"),
        )
        .await
        .unwrap();
    let make = |tool: &str, args: Value| json!({"name": format!("run {tool}"), "schedule": "0 9 * * *", "tool": tool, "arguments": args});
    let custom = ok(
        &f.service,
        "alice",
        "create_scheduled_task",
        make("greet", json!({"x": 1})),
    )
    .await;
    let custom = custom["task"]["id"].as_str().unwrap().to_owned();
    let grouped = ok(
        &f.service,
        "alice",
        "create_scheduled_task",
        make(
            "date_diff",
            json!({"startDate": "2026-01-01", "endDate": "2026-01-31"}),
        ),
    )
    .await;
    let grouped = grouped["task"]["id"].as_str().unwrap().to_owned();
    let run = ok(
        &f.service,
        "alice",
        "trigger_task",
        json!({"taskId": custom}),
    )
    .await;
    assert_eq!(run["run"]["status"], "success", "{run}");

    f.service
        .disable(&Actor::user("alice"), &by_name("greet"), None)
        .await
        .unwrap();
    f.service
        .set_tool_group(&user(), "dateTime", false)
        .await
        .unwrap();
    for (id, words) in [(&custom, "greet"), (&grouped, "dateTime")] {
        let out = ok(&f.service, "alice", "trigger_task", json!({"taskId": id})).await;
        assert_eq!(out["success"], false, "{out}");
        assert_eq!(out["run"]["status"], "not_found", "{out}");
        let runs = history(&f.service, "alice", id).await;
        let last = runs.last().unwrap();
        assert_eq!(last["status"], "not_found");
        let error = last["error"].as_str().unwrap_or_default();
        assert!(error.contains(words) || id == &custom, "{error}");
    }
    // A tool the owner cannot call now is refused when the task is made.
    let res = call(
        &f.service,
        "alice",
        "create_scheduled_task",
        make("date_diff", json!({})),
    )
    .await;
    refused(&res, ErrorKind::InvalidArguments, "groups enable dateTime");
}

#[tokio::test]
async fn bad_arguments_name_the_fix_and_tasks_are_their_owners() {
    let f = fixture().await;
    let off = call(&f.service, "alice", "list_scheduled_tasks", json!({})).await;
    assert_eq!(
        off.error_kind(),
        Some(ErrorKind::NotFound),
        "off by default: {off:?}"
    );
    with_scheduler(&f.service).await;
    let base = json!({"name": "n", "schedule": "0 9 * * *", "tool": "calculate", "arguments": {"expression": "1"}});
    let with = |key: &str, value: Value| {
        let mut args = base.clone();
        args[key] = value;
        args
    };
    for (args, words) in [
        (with("schedule", json!("every morning")), "has 2 fields"),
        (
            with("schedule", json!("0 25 * * *")),
            "the hour field (field 2 of 5) is 25, but it must be 0-23",
        ),
        (
            with("schedule", json!("2001-01-01T09:00")),
            "is in the past",
        ),
        (with("timezone", json!("Mars/Base")), "IANA time zone"),
        (with("tool", json!("no_such_tool")), "search_tools"),
        (with("tool", json!("trigger_task")), "scheduler tool"),
        (with("tool", json!("cron")), "scheduler tool"),
        (with("missedRuns", json!("always")), "run_once"),
        (with("arguments", json!([1])), "not of type"),
        (with("name", json!("")), "'name'"),
    ] {
        let res = call(&f.service, "alice", "create_scheduled_task", args.clone()).await;
        assert!(res.is_error, "{args}: {res:?}");
        let text = res.content.to_string();
        assert!(text.contains(words), "{args}: {words:?} not in {text}");
    }

    let made = ok(&f.service, "alice", "create_scheduled_task", base.clone()).await;
    let id = made["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(made["task"]["status"], "active");
    // Bob sees nothing of it, on any tool.
    let listed = ok(&f.service, "bob", "list_scheduled_tasks", json!({})).await;
    assert_eq!(listed["total"], 0);
    for tool in [
        "trigger_task",
        "get_task_history",
        "delete_scheduled_task",
        "update_scheduled_task",
    ] {
        let res = call(&f.service, "bob", tool, json!({"taskId": id})).await;
        refused(&res, ErrorKind::InvalidArguments, "list_scheduled_tasks");
    }
    let res = call(
        &f.service,
        "bob",
        "cron",
        json!({"action": "run", "taskId": id}),
    )
    .await;
    refused(&res, ErrorKind::InvalidArguments, "no scheduled task");

    // Pause and resume; a one-off in a time zone; cron's actions.
    let paused = ok(
        &f.service,
        "alice",
        "update_scheduled_task",
        json!({"taskId": id, "enabled": false}),
    )
    .await;
    assert_eq!(
        (
            paused["task"]["status"].clone(),
            paused["task"]["nextRunAt"].clone()
        ),
        (json!("paused"), Value::Null)
    );
    let resumed = ok(
        &f.service,
        "alice",
        "update_scheduled_task",
        json!({"taskId": id, "enabled": true, "timezone": "Asia/Tokyo"}),
    )
    .await;
    let next = time(&resumed["task"]["nextRunAt"]);
    assert_eq!(
        (next.hour(), next.minute()),
        (0, 0),
        "9:00 in Tokyo is 0:00 UTC: {resumed}"
    );
    let once = ok(
        &f.service,
        "alice",
        "cron",
        json!({"action": "add", "name": "once", "schedule": "2099-06-01T12:00", "timezone": "Europe/Paris", "tool": "calculate", "arguments": {"expression": "2"}}),
    )
    .await;
    assert_eq!(once["task"]["nextRunAt"], "2099-06-01T10:00:00Z", "{once}");
    let listed = ok(&f.service, "alice", "cron", json!({"action": "list"})).await;
    assert_eq!(listed["total"], 2);
    let once_id = once["task"]["id"].as_str().unwrap();
    let ran = ok(
        &f.service,
        "alice",
        "cron",
        json!({"action": "run", "taskId": once_id}),
    )
    .await;
    assert_eq!(ran["run"]["result"]["result"].as_f64(), Some(2.0), "{ran}");
    let removed = ok(
        &f.service,
        "alice",
        "cron",
        json!({"action": "remove", "taskId": once_id}),
    )
    .await;
    assert_eq!(
        (removed["deleted"].clone(), removed["deletedRuns"].clone()),
        (json!(true), json!(1))
    );
    let res = call(&f.service, "alice", "cron", json!({"action": "explode"})).await;
    refused(&res, ErrorKind::InvalidArguments, "/action");

    // At most 100 tasks each.
    for i in 1..toolsmith_builtins::schedule::MAX_TASKS {
        ok(
            &f.service,
            "alice",
            "create_scheduled_task",
            with("name", json!(format!("t{i}"))),
        )
        .await;
    }
    let res = call(&f.service, "alice", "create_scheduled_task", base).await;
    refused(
        &res,
        ErrorKind::InvalidArguments,
        "100 scheduled tasks across all your agents, the most allowed",
    );
}
