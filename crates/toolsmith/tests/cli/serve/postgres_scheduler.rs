//! The scheduler with two real `toolsmith serve` processes on one PostgreSQL database: both
//! tick every second and both see the same due tasks, and the claim in the database (a
//! compare-and-set on the task's next run) lets exactly one of them run each due time.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Server;
use super::postgres::{create, database, two_instances};

/// Tasks due at the same second, created half through each instance.
const TASKS: usize = 24;

/// One call of a built-in through REST, as the instances' one user; the tool's reply.
fn call(server: &Server, tool: &str, arguments: Value) -> Value {
    let answer = server.post(
        &format!("/api/v1/tools/{tool}/execute"),
        &json!({"arguments": arguments}),
    );
    assert_eq!(answer.status, 200, "{}", answer.body);
    let body = answer.json();
    assert_eq!(body["data"]["isError"], json!(false), "{body}");
    body["data"]["result"].clone()
}

#[test]
fn two_instances_run_each_due_task_exactly_once() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let env = super::Env::new();
    let (a, b) = two_instances(&env, &url, &["--enable-group", "scheduler"]);
    assert_eq!(create(&a, "ticked"), 201);
    // (Not `GET /api/v1/custom-tools/…`: that reads the shared database, which has the tool
    // at once, while calls are served from B's catalogue, which has it once the notice came.)
    b.wait_until("the tool reaching B's catalogue", || {
        b.get("/api/v1/tools").body.contains("\"ticked\"")
    });

    // Far enough ahead for every task to be stored before it is due (each instance ticks
    // every second, so both see them all at once).
    let due = chrono::Utc::now() + chrono::Duration::seconds(6);
    let schedule = due.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let ids: Vec<String> = (0..TASKS)
        .map(|i| {
            let server = if i % 2 == 0 { &a } else { &b };
            let created = call(
                server,
                "create_scheduled_task",
                json!({"name": format!("task {i}"), "schedule": schedule, "tool": "ticked"}),
            );
            created["task"]["id"]
                .as_str()
                .expect("a task id")
                .to_owned()
        })
        .collect();
    assert!(
        chrono::Utc::now() < due,
        "creating {TASKS} tasks took too long for the test to mean anything"
    );

    // Wait for every task to have run, then long enough for a second run to show up (both
    // instances tick every second).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let listed = call(&a, "list_scheduled_tasks", json!({"limit": 50}));
        let ran = listed["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .filter(|t| t["runCount"].as_u64().unwrap_or(0) > 0)
            .count();
        if ran == TASKS {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {ran} of {TASKS} tasks ran: {listed}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    std::thread::sleep(Duration::from_secs(3));

    for (i, id) in ids.iter().enumerate() {
        let server = if i % 2 == 0 { &b } else { &a };
        let history = call(server, "get_task_history", json!({"taskId": id}));
        let runs = history["runs"].as_array().expect("runs");
        assert_eq!(
            runs.len(),
            1,
            "task {i} ran {} times: {history}",
            runs.len()
        );
        assert_eq!(runs[0]["status"], json!("success"), "{history}");
    }
    let listed = call(&b, "list_scheduled_tasks", json!({"limit": 50}));
    for task in listed["tasks"].as_array().expect("tasks") {
        assert_eq!(task["runCount"], json!(1), "{task}");
    }
    // The tool itself was called once per task, by whichever instance claimed it.
    // (Usage is recorded off the call path, so it may lag the history by a moment.)
    a.wait_until("the usage of every run", || {
        a.get("/api/v1/custom-tools/ticked").json()["data"]["usageCount"] == json!(TASKS)
    });
    std::thread::sleep(Duration::from_secs(1));
    let tool = a.get("/api/v1/custom-tools/ticked");
    assert_eq!(
        tool.json()["data"]["usageCount"],
        json!(TASKS),
        "{}",
        tool.body
    );
}
