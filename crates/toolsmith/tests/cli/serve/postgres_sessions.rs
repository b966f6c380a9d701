//! Sessions and subagents (issue 37, spec 001 §2 "Sessions", §6) on two real `toolsmith serve`
//! processes sharing one PostgreSQL database, against `postgres_delegation`'s model server on
//! 127.0.0.1 (each request waits for the test's answer): a conversation's run and a subagent
//! started on instance A are listed and read on B (`sessions_list`, `session_status`,
//! `sessions_history`, `subagents` list, REST's sessions and runs), a conversation's answer
//! given on A is read on B, and a cancel from B — the subagent through `subagents`, a
//! conversation's run through REST — stops A's run: A gives its model request up, and the state
//! is the same on both instances.

use serde_json::{Value, json};

use super::postgres::{database, two_instances};
use super::postgres_delegation::{Model, answer};
use super::{Env, Response, Server};

fn ok(response: &Response, status: u16) -> Value {
    assert_eq!(response.status, status, "{}", response.body);
    response.json()["data"].take()
}

/// Calls the sessions built-in `tool` on `server` as the person (REST execute); its result,
/// which must not be an error.
fn call(server: &Server, tool: &str, args: &Value) -> Value {
    let mut data = ok(
        &server.post(
            &format!("/api/v1/tools/{tool}/execute"),
            &json!({"arguments": args}),
        ),
        200,
    );
    assert_eq!(data["isError"], false, "{tool} on {}: {data}", server.addr);
    data["result"].take()
}

/// Session `key` as `session_status` on `server` shows it.
fn status(server: &Server, key: &str) -> Value {
    call(server, "session_status", &json!({"sessionKey": key}))
}

/// The run `run` of agent `helper` as REST on `server` shows it.
fn run(server: &Server, run: &str) -> Value {
    ok(
        &server.get(&format!("/api/v1/agents/helper/runs/{run}")),
        200,
    )
}

fn setup(model: &Model, a: &Server, b: &Server) {
    ok(
        &a.post(
            "/api/v1/config/services",
            &json!({"name": "local", "fields": [
                {"name": "protocol", "kind": "text", "required": true},
                {"name": "base_url", "kind": "url"},
                {"name": "api_key", "kind": "secret"},
            ]}),
        ),
        201,
    );
    ok(
        &a.post(
            "/api/v1/config/services/local/entries",
            &json!({"values": {"protocol": "openai",
                "base_url": format!("http://{}/v1", model.host), "api_key": "none"}}),
        ),
        201,
    );
    // The agent, made on B: definitions are the database's.
    ok(
        &b.post(
            "/api/v1/agents",
            &json!({"name": "helper", "instructions": "Help.",
                "model": {"service": "local", "model": "test-model"},
                "toolPolicy": {"allow": ["group:sessions"]}}),
        ),
        201,
    );
}

#[test]
fn sessions_and_subagents_started_on_one_instance_are_read_and_cancelled_on_the_other() {
    let Some((_cluster, url)) = database() else {
        return;
    };
    let model = Model::start();
    let env = Env::new();
    let config = env.write(
        "toolsmith.toml",
        &format!(
            "[egress]\nallowed_private_hosts = [\"{}\"]\nallow_plain_http = true\n",
            model.host
        ),
    );
    let config = config.to_str().expect("a utf-8 path");
    let (a, b) = two_instances(
        &env,
        &url,
        &["--config", config, "--enable-group", "sessions"],
    );
    setup(&model, &a, &b);

    // A conversation begun on A, its run waiting for the model.
    let sent = call(
        &a,
        "sessions_send",
        &json!({"agent": "helper", "message": "first question", "wait": false}),
    );
    assert_eq!(sent["status"], "running", "{sent}");
    let key = sent["sessionKey"].as_str().expect("a key").to_owned();
    let first_run = sent["lastRun"].as_str().expect("its run").to_owned();
    let (asked, conn) = model.request("the conversation's run on A");
    assert_eq!(asked, "first question");

    // B lists it, reads its status and history, and REST's sessions and runs on B show it.
    let listed = call(&b, "sessions_list", &json!({}));
    assert_eq!(
        listed["sessions"][0]["sessionKey"],
        key.as_str(),
        "{listed}"
    );
    assert_eq!(listed["sessions"][0]["status"], "running", "{listed}");
    assert_eq!(status(&b, &key)["status"], "running");
    let history = call(&b, "sessions_history", &json!({"sessionKey": key}));
    assert_eq!(history["messages"].as_array().map(Vec::len), Some(1));
    assert_eq!(history["messages"][0]["content"], "first question");
    let rest = ok(&b.get(&format!("/api/v1/sessions/{key}")), 200);
    assert_eq!(rest["session"]["status"], "running", "{rest}");
    assert_eq!(run(&b, &first_run)["status"], "running");

    // Answered on A: B reads the answer in the history, the session idle again.
    answer(conn, "first answer");
    b.wait_until("B reading the conversation idle", || {
        status(&b, &key)["status"] == "idle"
    });
    assert_eq!(status(&b, &key)["result"], "first answer");
    let history = call(&b, "sessions_history", &json!({"sessionKey": key}));
    let contents: Vec<&Value> = history["messages"]
        .as_array()
        .map(|m| m.iter().map(|m| &m["content"]).collect())
        .unwrap_or_default();
    assert_eq!(contents, [&json!("first question"), &json!("first answer")]);
    assert_eq!(run(&b, &first_run)["status"], "completed");

    // A subagent spawned on A: B lists it (subagents list, sessions_list, REST) running.
    let spawned = call(
        &a,
        "sessions_spawn",
        &json!({"agent": "helper", "task": "count the sheep", "label": "sheep"}),
    );
    assert_eq!(spawned["status"], "running", "{spawned}");
    let sub = spawned["sessionKey"].as_str().expect("a key").to_owned();
    let sub_run = spawned["lastRun"].as_str().expect("its run").to_owned();
    let (asked, _held) = model.request("the subagent's run on A");
    assert_eq!(asked, "count the sheep");
    let listed = call(&b, "subagents", &json!({"action": "list"}));
    assert_eq!(
        listed["subagents"][0]["sessionKey"],
        sub.as_str(),
        "{listed}"
    );
    assert_eq!(listed["subagents"][0]["status"], "running", "{listed}");
    assert_eq!(listed["subagents"][0]["label"], "sheep", "{listed}");
    let listed = call(&b, "sessions_list", &json!({"kind": "subagent"}));
    assert_eq!(
        listed["sessions"][0]["sessionKey"],
        sub.as_str(),
        "{listed}"
    );
    let rest = ok(&b.get("/api/v1/sessions?kind=subagent"), 200);
    assert_eq!(rest["sessions"][0]["status"], "running", "{rest}");
    let runs = ok(&b.get("/api/v1/agents/helper/runs"), 200);
    assert!(
        runs["runs"].as_array().is_some_and(|r| r
            .iter()
            .any(|r| r["id"] == sub_run.as_str() && r["status"] == "running")),
        "{runs}"
    );
    let summary = call(&b, "session_status", &json!({}));
    assert_eq!(summary["sessions"]["running"], 1, "{summary}");

    // Cancelled from B: A's run gives its model request up, and both read it cancelled.
    let cancelled = call(&b, "subagents", &json!({"action": "cancel", "id": sub}));
    assert_eq!(
        cancelled["subagents"][0]["status"], "cancelled",
        "{cancelled}"
    );
    model.given_up("count the sheep");
    a.wait_until("A reading the subagent's run cancelled", || {
        run(&a, &sub_run)["status"] == "cancelled"
    });
    for server in [&a, &b] {
        assert_eq!(
            status(server, &sub)["status"],
            "cancelled",
            "{}",
            server.addr
        );
        assert_eq!(run(server, &sub_run)["status"], "cancelled");
    }

    // A conversation's run on A, cancelled through REST on B: A gives up, the run is
    // cancelled on both and the conversation takes messages again.
    let sent = call(
        &a,
        "sessions_send",
        &json!({"sessionKey": key, "message": "second question", "wait": false}),
    );
    let second_run = sent["lastRun"].as_str().expect("its run").to_owned();
    let (asked, _held) = model.request("the conversation's second run on A");
    assert_eq!(asked, "second question");
    let stopped = ok(
        &b.post(
            &format!("/api/v1/agents/helper/runs/{second_run}/cancel"),
            &json!({}),
        ),
        200,
    );
    assert_eq!(stopped["status"], "cancelled", "{stopped}");
    model.given_up("second question");
    a.wait_until("A reading the conversation idle again", || {
        status(&a, &key)["status"] == "idle"
    });
    for server in [&a, &b] {
        assert_eq!(run(server, &second_run)["status"], "cancelled");
        assert_eq!(status(server, &key)["status"], "idle", "{}", server.addr);
    }
    let summary = call(&a, "session_status", &json!({}));
    assert_eq!(summary["sessions"]["running"], 0, "{summary}");
}
