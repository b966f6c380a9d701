//! Quality gates (issue 38, spec 001 §11): a delegating agent's `qualityGates` judge what a
//! delegation answers before the agent reads it — agent evaluators (a reviewer agent answers
//! APPROVED or REJECTED: feedback) and command evaluators (a shell command in the command
//! sandbox: exit 0 passes) — with retries carrying the feedback back to the worker, and no gate
//! on a reviewer's or an evaluate loop's own delegations. Against a model server the tests
//! start on 127.0.0.1 (OpenAI-compatible), whose answer follows the delegated task:
//!
//! - `WRITE …` answers "answer v1", and "answer v2" once the task carries the gate's feedback
//!   "add the price";
//! - `BAD …` always answers "ALWAYS-BAD answer";
//! - `Review the answer …` (a reviewer) rejects an answer holding "ALWAYS-BAD" ("REJECTED:
//!   still wrong") or "v1" ("REJECTED: add the price"), and approves any other;
//! - `Evaluate this draft …` (an evaluate loop's evaluator) approves; anything else is
//!   answered `done: <task>`.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::agent_support::{
    Proto, Reply, Script, agent_on_local, call_as, configure, create_agent, enable_groups,
    last_message, model_server, says,
};
use crate::mcp_support::repo_root;
use crate::rest_support::{TestApp, command_sandbox_works, request, settings_reaching};

fn reply_to(task: &str) -> String {
    if let Some(review) = task.strip_prefix("Review the answer") {
        let answer = review.split_once("\n\nAnswer:\n").map_or("", |(_, a)| a);
        if answer.contains("ALWAYS-BAD") {
            "REJECTED: still wrong".to_owned()
        } else if answer.contains("v1") {
            "REJECTED: add the price".to_owned()
        } else {
            "APPROVED".to_owned()
        }
    } else if task.starts_with("Evaluate this draft") {
        "APPROVED".to_owned()
    } else if task.starts_with("BAD") {
        "ALWAYS-BAD answer".to_owned()
    } else if task.starts_with("WRITE") {
        if task.contains("[quality gate feedback]") && task.contains("Feedback: add the price") {
            "answer v2".to_owned()
        } else {
            "answer v1".to_owned()
        }
    } else {
        format!("done: {task}")
    }
}

/// The model's answer to the request `body`: [`reply_to`] its delegated task.
fn reply(body: &Value) -> Reply {
    let text = last_message(body).text;
    let task = text.split_once('\n').map_or("", |(_, t)| t);
    says(&reply_to(task))
}

/// §11's JSON, as the reference-examples fixture keeps it (spec 001, the block at line 523).
fn section_11_example() -> Value {
    let path = repo_root().join("crates/toolsmith-server/tests/data/reference_examples.yaml");
    let entries: Vec<Value> =
        serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let entry = entries
        .iter()
        .find(|e| e["spec"] == "001" && e["line"] == 523)
        .expect("§11's block in the fixture");
    serde_json::from_str(entry["text"].as_str().unwrap()).unwrap()
}

/// The model server, and an app with the `delegation` group on, the service `local`, and the
/// agents `lead` (with `gates` merged into its definition), `writer`, `qa_reviewer` and
/// `critic`; `lead` is linked to each of the others.
async fn setup(gates: Value) -> (TestApp, Script) {
    let model = Script::replying(reply);
    let host = model_server(&model).await;
    let app = TestApp::with_configs(settings_reaching(&host), Default::default()).await;
    enable_groups(&app, &["delegation"]).await;
    configure(&app, Proto::OpenAi, false, &host).await;
    for name in ["lead", "writer", "qa_reviewer", "critic"] {
        let mut body = agent_on_local(name, &format!("You are {name}."), &["group:delegation"]);
        if name == "lead" {
            for (key, value) in gates.as_object().unwrap() {
                body[key] = value.clone();
            }
        }
        create_agent(&app, &body).await;
    }
    for to in ["writer", "qa_reviewer", "critic"] {
        app.post("/api/v1/agent-links", &json!({"from": "lead", "to": to}))
            .await
            .assert_ok(StatusCode::CREATED);
    }
    (app, model)
}

/// Calls `tool` over REST as `lead`: the delegation as it answered, and whether the call
/// was an error.
async fn delegate_as_lead(app: &TestApp, tool: &str, args: Value) -> (Value, bool) {
    call_as(app, Some("lead"), tool, args).await
}

/// The `quality_gate` steps of the run `run` of `agent` (started by `lead`, whose id reads it).
async fn gate_steps(app: &TestApp, agent: &str, run: &str) -> Vec<Value> {
    let lead = agent_id(app, "lead").await;
    let res = app
        .send(
            request(Method::GET, &format!("/api/v1/agents/{agent}/runs/{run}"))
                .header("x-toolsmith-agent", lead.as_str().unwrap())
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    let run = res.assert_ok(StatusCode::OK);
    run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "quality_gate")
        .map(|s| s["detail"].clone())
        .collect()
}

/// The id of the agent `name`.
async fn agent_id(app: &TestApp, name: &str) -> Value {
    app.get(&format!("/api/v1/agents/{name}"))
        .await
        .assert_ok(StatusCode::OK)["id"]
        .clone()
}

/// Every delegation of the user, oldest first, with `to` as the agent's name.
async fn delegations(app: &TestApp) -> Vec<Value> {
    let all = app
        .get("/api/v1/delegations?limit=200")
        .await
        .assert_ok(StatusCode::OK);
    let mut all = all["delegations"].as_array().unwrap().clone();
    all.reverse();
    for d in &mut all {
        for name in ["writer", "qa_reviewer", "critic"] {
            if d["to"] == agent_id(app, name).await {
                d["to"] = json!(name);
            }
        }
    }
    all
}

/// The runs of `agent` `lead` started, oldest first.
async fn runs_of(app: &TestApp, agent: &str) -> Vec<Value> {
    let lead = agent_id(app, "lead").await;
    let res = app
        .send(
            request(Method::GET, &format!("/api/v1/agents/{agent}/runs"))
                .header("x-toolsmith-agent", lead.as_str().unwrap())
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    let listed = res.assert_ok(StatusCode::OK);
    let mut runs = listed["runs"].as_array().unwrap().clone();
    runs.reverse();
    runs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_example_gate_passes_an_approved_answer_and_sends_a_rejected_one_back_with_its_feedback()
 {
    // §11's JSON, merged into the lead's definition as written (its agent key `qa-reviewer`
    // finds the agent named `qa_reviewer`).
    let (app, model) = setup(section_11_example()).await;
    let lead = app
        .get("/api/v1/agents/lead")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        lead["qualityGates"],
        json!([{"event": "delegation.completed", "type": "agent", "agent": "qa-reviewer",
            "blockOnFailure": true, "maxRetries": 2}]),
        "{lead}"
    );
    // Approved at once: the answer reaches the lead, one passed gate step on the run.
    let (done, error) = delegate_as_lead(
        &app,
        "delegate",
        json!({"agent": "writer", "task": "summarize the meeting"}),
    )
    .await;
    assert!(!error, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], "done: summarize the meeting", "{done}");
    let steps = gate_steps(&app, "writer", done["run"].as_str().unwrap()).await;
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(
        (
            &steps[0]["verdict"],
            &steps[0]["evaluator"],
            &steps[0]["attempt"]
        ),
        (&json!("passed"), &json!("agent 'qa-reviewer'"), &json!(1)),
        "{steps:?}"
    );
    // Rejected, then revised with the feedback, then approved: the lead reads v2.
    let (done, error) = delegate_as_lead(
        &app,
        "delegate",
        json!({"agent": "writer", "task": "WRITE the announcement"}),
    )
    .await;
    assert!(!error, "{done}");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"], "answer v2", "{done}");
    // The worker was asked again with the reviewer's feedback and its previous answer.
    let seen = model.bodies();
    let asked_again = seen
        .iter()
        .filter_map(|r| r["messages"].as_array()?.last()?["content"].as_str())
        .find(|text| text.contains("[quality gate feedback]"))
        .expect("the worker asked again")
        .to_owned();
    assert!(
        asked_again
            .starts_with("[a task delegated to you by agent 'lead']\nWRITE the announcement")
            && asked_again.contains("Feedback: add the price")
            && asked_again.contains("Your previous answer:\nanswer v1"),
        "{asked_again}"
    );
    // Two runs of the writer for it: the first judged failed with the feedback, the last
    // passed; the delegation names the last.
    let writer_runs = runs_of(&app, "writer").await;
    let first = writer_runs[writer_runs.len() - 2]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let failed = gate_steps(&app, "writer", &first).await;
    assert_eq!(
        (
            &failed[0]["verdict"],
            &failed[0]["feedback"],
            &failed[0]["attempt"]
        ),
        (&json!("failed"), &json!("add the price"), &json!(1)),
        "{failed:?}"
    );
    let passed = gate_steps(&app, "writer", done["run"].as_str().unwrap()).await;
    assert_eq!(
        (&passed[0]["verdict"], &passed[0]["attempt"]),
        (&json!("passed"), &json!(2)),
        "{passed:?}"
    );
    // Each gate result is audited, without the reviewer's text.
    let audit = app
        .get("/api/v1/audit?action=agent.quality_gate")
        .await
        .assert_ok(StatusCode::OK);
    let entries = audit["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3, "{audit}");
    assert!(!audit.to_string().contains("add the price"), "{audit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_that_keeps_rejecting_fails_the_delegation_once_its_retries_are_used_up() {
    let (app, _model) = setup(json!({"qualityGates": [{"event": "delegation.completed",
        "type": "agent", "agent": "qa_reviewer", "maxRetries": 2}]}))
    .await;
    let (failed, _) = delegate_as_lead(
        &app,
        "delegate",
        json!({"agent": "writer", "task": "BAD report"}),
    )
    .await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["result"], Value::Null, "{failed}");
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("quality gate 1 (agent 'qa_reviewer') of agent 'lead' rejected the answer of 'writer' 3 time(s), its maxRetries (2) used up: still wrong")
            && error.contains("qualityGates of 'lead'"),
        "{error}"
    );
    // Three runs of the writer, each judged once.
    assert_eq!(runs_of(&app, "writer").await.len(), 3);
    // A reviewer the lead has no link to: the gate cannot judge, and says which link to make.
    let links = app
        .get("/api/v1/agent-links")
        .await
        .assert_ok(StatusCode::OK);
    let reviewer = agent_id(&app, "qa_reviewer").await;
    let to_reviewer = links["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["to"] == reviewer)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.call(
        Method::DELETE,
        &format!("/api/v1/agent-links/{to_reviewer}"),
    )
    .await
    .assert_ok(StatusCode::OK);
    let (failed, _) = delegate_as_lead(
        &app,
        "delegate",
        json!({"agent": "writer", "task": "summarize"}),
    )
    .await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("could not judge the answer")
            && error.contains("no agent link lets 'lead' delegate to 'qa_reviewer'"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_evaluators_run_in_the_command_sandbox_pass_on_exit_0_and_are_bounded() {
    if !command_sandbox_works().await {
        return;
    }
    // A command naming a denied operation is refused when written.
    let host = model_server(&Script::replying(reply)).await;
    let bare = TestApp::with_configs(settings_reaching(&host), Default::default()).await;
    let refused = bare
        .post(
            "/api/v1/agents",
            &json!({"name": "careless", "model": {"service": "local", "model": "m"},
                "qualityGates": [{"event": "delegation.completed", "type": "command",
                    "command": "rm -rf /"}]}),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("qualityGates[0].command: refused"),
        "{}",
        refused.text
    );

    // Exit 0 passes; otherwise stderr is the feedback the worker revises with.
    let check = r#"test "$TOOLSMITH_GATE_OUTPUT" = "answer v2" || { echo "add the price (got: $TOOLSMITH_GATE_OUTPUT for $TOOLSMITH_GATE_AGENT)" >&2; exit 1; }"#;
    let (app, model) = setup(json!({"qualityGates": [{"event": "delegation.completed",
        "type": "command", "command": check, "maxRetries": 1}]}))
    .await;
    let (done, error) = delegate_as_lead(
        &app,
        "delegate",
        json!({"agent": "writer", "task": "WRITE the announcement"}),
    )
    .await;
    assert!(!error, "{done}");
    assert_eq!(
        (&done["status"], &done["result"]),
        (&json!("completed"), &json!("answer v2")),
        "{done}"
    );
    let seen = model.bodies();
    assert!(
        seen.iter().any(|r| r
            .to_string()
            .contains("Feedback: add the price (got: answer v1 for writer)")),
        "the worker read the command's stderr"
    );
    let steps = gate_steps(&app, "writer", done["run"].as_str().unwrap()).await;
    assert_eq!(
        (
            &steps[0]["verdict"],
            &steps[0]["exitCode"],
            &steps[0]["evaluator"]
        ),
        (&json!("passed"), &json!(0), &json!("command")),
        "{steps:?}"
    );

    // The sandbox's rules hold: its own HOME and /tmp, no network, the server's environment
    // unseen, nothing written on the host. A non-blocking gate only records its failure.
    let marker = format!("gate_escape_{}", uuid::Uuid::new_v4().simple());
    let probe = format!(
        "echo \"home=$HOME uid=$(id -u) key=${{TOOLSMITH_SECRET_KEY:-unset}} \
         net=$(cat /sys/class/net/*/operstate 2>/dev/null | tr -d '\\n')\" >&2; \
         touch /tmp/{marker}; exit 3"
    );
    let lead = app
        .get("/api/v1/agents/lead")
        .await
        .assert_ok(StatusCode::OK);
    let mut body = json!({
        "name": "lead",
        "instructions": lead["instructions"],
        "model": lead["model"],
        "toolPolicy": lead["toolPolicy"],
        "qualityGates": [
            {"event": "delegation.completed", "type": "command", "command": probe,
                "blockOnFailure": false},
            {"event": "delegation.completed", "type": "command", "command": "sleep 30",
                "timeoutSeconds": 1},
        ],
    });
    body["expectedRevision"] = lead["revision"].clone();
    app.json(Method::PUT, "/api/v1/agents/lead", &body)
        .await
        .assert_ok(StatusCode::OK);
    let (failed, _) = delegate_as_lead(
        &app,
        "delegate",
        json!({"agent": "writer", "task": "summarize"}),
    )
    .await;
    // The second gate ran out of time: blocking, no retries, the delegation failed saying so.
    assert_eq!(failed["status"], "failed", "{failed}");
    let error = failed["error"].as_str().unwrap();
    assert!(
        error.contains("quality gate 2 (command)")
            && error.contains("ran out of time (1 s) and was killed"),
        "{error}"
    );
    let steps = gate_steps(&app, "writer", failed["run"].as_str().unwrap()).await;
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(
        (
            &steps[0]["verdict"],
            &steps[0]["blocking"],
            &steps[0]["exitCode"]
        ),
        (&json!("failed"), &json!(false), &json!(3)),
        "{steps:?}"
    );
    let said = steps[0]["feedback"].as_str().unwrap();
    assert!(
        said.starts_with("home=/tmp/work ") && said.contains("key=unset"),
        "{said}"
    );
    assert!(
        !said.contains("up"),
        "a network interface is up inside: {said}"
    );
    if nix_is_root() {
        assert!(said.contains("uid=65534"), "{said}");
    }
    assert!(
        !std::path::Path::new("/tmp").join(&marker).exists(),
        "the command wrote on the host's /tmp"
    );
    assert_eq!(
        (&steps[1]["verdict"], &steps[1]["timedOut"]),
        (&json!("failed"), &json!(true)),
        "{steps:?}"
    );
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1).map(|id| id == "0"))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_gate_runs_on_a_reviewers_delegation_or_an_evaluate_loops() {
    let (app, _model) = setup(json!({"qualityGates": [{"event": "delegation.completed",
        "type": "agent", "agent": "qa_reviewer", "maxRetries": 1}]}))
    .await;
    let (done, error) = delegate_as_lead(
        &app,
        "delegate",
        json!({"agent": "writer", "task": "summarize"}),
    )
    .await;
    assert!(!error && done["status"] == "completed", "{done}");
    // The gate's own delegation to the reviewer (lead → qa_reviewer, the lead's gates' event)
    // is marked `gate` and judged by nothing: exactly one review, no gate step on it.
    let all = delegations(&app).await;
    let modes: Vec<(&str, &str)> = all
        .iter()
        .map(|d| (d["to"].as_str().unwrap(), d["mode"].as_str().unwrap()))
        .collect();
    assert_eq!(
        modes,
        [("writer", "sync"), ("qa_reviewer", "gate")],
        "{all:?}"
    );
    let review = &all[1];
    assert_eq!(review["status"], "completed", "{review}");
    assert!(
        gate_steps(&app, "qa_reviewer", review["run"].as_str().unwrap())
            .await
            .is_empty()
    );
    // An evaluate loop's delegations are not gated either.
    let (looped, error) = delegate_as_lead(
        &app,
        "evaluate_loop",
        json!({"generator": "writer", "evaluator": "critic", "task": "draft a note",
            "criteria": "short"}),
    )
    .await;
    assert!(!error, "{looped}");
    assert_eq!(looped["approved"], true, "{looped}");
    let all = delegations(&app).await;
    let later: Vec<&str> = all[2..]
        .iter()
        .map(|d| d["mode"].as_str().unwrap())
        .collect();
    assert_eq!(later, ["evaluate", "evaluate"], "{all:?}");
    for d in &all[2..] {
        let agent = d["to"].as_str().unwrap();
        assert!(
            gate_steps(&app, agent, d["run"].as_str().unwrap())
                .await
                .is_empty()
        );
    }
}
