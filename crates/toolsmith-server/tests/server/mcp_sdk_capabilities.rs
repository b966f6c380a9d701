//! What a running custom tool can ask of the client that called it (issue 34), through the
//! official SDKs as clients: the TypeScript SDK 1.x (2025-11-25 sessions) and the Python SDK
//! 2.x in `mode="legacy"` (2025-11-25) and `mode="auto"` (2026-07-28), over streamable HTTP
//! (the server in-process on 127.0.0.1) and stdio (`toolsmith mcp`, the real binary).
//!
//! Each run calls five JS tools of user `default` — `cap_log` (`mcp.log` at debug, info and
//! warning after the client set its level to info), `cap_progress` (`mcp.progress` three
//! times), `cap_sample` (`mcp.sample`), `cap_elicit` (`mcp.elicit`) and `cap_spin` (says it
//! runs, then spins until the client cancels the call) — and a client that declares neither
//! sampling nor elicitation (`--bare`) gets an error that names what is missing. The scripts
//! (`tests/clients/mcp_capabilities.{mjs,py}`) only drive the clients and report what they
//! saw; every assertion is here. A cancelled call must leave an execution record of kind
//! `cancelled`: the sandbox stopped, it did not run to its timeout. On 2026-07-28 (no
//! server-to-client request while a call runs) logging and progress work and sampling and
//! elicitation are refused with a message that says why and where they work.

use crate::mcp_support;

use std::path::Path;
use std::time::Duration;

use mcp_support::*;
use serde_json::{Value, json};
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{Actor, CreateTool};

const TS_SCRIPT: &str = "mcp_capabilities.mjs";
const PY_SCRIPT: &str = "mcp_capabilities.py";

/// The tools the scripts call: (name, permissions, code).
const TOOLS: &[(&str, &[&str], &str)] = &[
    (
        "cap_log",
        &[],
        "mcp.log('debug', 'below the level the client set'); \
         mcp.log('info', {step: 1}); mcp.log('warning', 'careful', 'cap'); return 'logged';",
    ),
    (
        "cap_progress",
        &[],
        "mcp.progress(1, 3, 'one'); mcp.progress(2, 3); mcp.progress(3, 3, 'done'); \
         return 'progressed';",
    ),
    (
        "cap_sample",
        &["sampling"],
        "const r = await mcp.sample({messages: [{role: 'user', content: {type: 'text', \
         text: args.prompt || ''}}], maxTokens: 50, systemPrompt: 'Be brief.'}); \
         return {model: r.model, text: r.content.text};",
    ),
    (
        "cap_elicit",
        &["elicitation"],
        "return await mcp.elicit({message: 'Who are you?', requestedSchema: {type: 'object', \
         properties: {name: {type: 'string', description: 'Your name'}}, required: ['name']}});",
    ),
    (
        "cap_spin",
        &[],
        "mcp.log('info', 'spinning'); while (true) {}",
    ),
];

async fn create_tools(state: &AppState) {
    for (name, permissions, code) in TOOLS {
        let tool: CreateTool = serde_json::from_value(json!({
            "name": name,
            "description": format!("{name}: what a tool asks of its client (issue 34)"),
            "parameters": {"type": "object"},
            "code": code,
            "permissions": permissions,
        }))
        .unwrap();
        state
            .service
            .create(&Actor::user("default"), tool)
            .await
            .unwrap_or_else(|e| panic!("{name} is created: {e}"));
    }
}

/// The newest execution record of user `default`'s `cap_spin`.
async fn spin_record(state: &AppState) -> Option<toolsmith_core::ExecutionRecord> {
    state
        .service
        .executions(
            &Actor::user("default"),
            Some(&toolsmith_service::ToolRef::Name("cap_spin".to_owned())),
            None,
            None,
            None,
            10,
        )
        .await
        .unwrap()
        .into_iter()
        .next()
}

/// Waits for the cancelled call's record: it is written when the call ends, which the client
/// does not wait for. Asked again until it is there (no event reaches the test).
async fn cancelled_record(state: &AppState, ctx: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let record = loop {
        if let Some(record) = spin_record(state).await {
            break record;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the cancelled call left no execution record: {ctx}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        record.error_kind.as_deref(),
        Some("cancelled"),
        "the cancelled call's record: {record:?}\n{ctx}"
    );
}

fn text(result: &Value) -> String {
    result["text"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn progress_of(updates: &Value) -> Vec<f64> {
    updates
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["progress"].as_f64())
        .collect()
}

/// What every client gets: log messages at or above its level, progress for its call, and a
/// call it cancels stops while the connection lives on.
fn check_common(report: &Value, protocol: &str, ctx: &str) {
    assert_eq!(report["protocolVersion"], protocol, "{ctx}");

    // Logging: info and warning reach the client, debug (below its level) does not.
    assert_eq!(report["log"]["isError"], false, "{ctx}");
    assert_eq!(report["logArrived"], true, "{ctx}");
    let logs = report["logs"].as_array().unwrap();
    let levels: Vec<&str> = logs.iter().filter_map(|m| m["level"].as_str()).collect();
    assert_eq!(levels, ["info", "warning"], "{ctx}");
    assert_eq!(logs[0]["data"], json!({"step": 1}), "{ctx}");
    assert_eq!(logs[1]["data"], "careful", "{ctx}");
    assert_eq!(logs[1]["logger"], "cap", "{ctx}");

    // Progress: three updates for the call's token, in order, before its result.
    assert_eq!(report["progress"]["isError"], false, "{ctx}");
    let delivered = progress_of(&report["progressUpdates"]);
    if let Some(wire) = report.get("progressOnTheWire") {
        // The TypeScript SDK drops progress that arrives in one read with the response (over
        // stdio), though it came first: the transport saw all three (mcp_capabilities.mjs). How
        // many the SDK then hands on depends on how the reads fall — all three were dropped in
        // one clean-clone run — so what is held is the wire, and that whatever was delivered
        // came in order.
        assert_eq!(progress_of(wire), [1.0, 2.0, 3.0], "{ctx}");
        assert_eq!(wire[0]["total"], 3.0, "{ctx}");
        assert_eq!(wire[2]["message"], "done", "{ctx}");
        assert!([1.0, 2.0, 3.0].starts_with(&delivered), "{ctx}");
    } else {
        assert_eq!(delivered, [1.0, 2.0, 3.0], "{ctx}");
        assert_eq!(report["progressUpdates"][0]["total"], 3.0, "{ctx}");
        assert_eq!(report["progressUpdates"][2]["message"], "done", "{ctx}");
    }

    // Cancelled: the tool ran, the client gave up on it, the connection lives on.
    assert_eq!(report["spinRunning"], true, "{ctx}");
    assert!(
        report["spin"].get("isError").is_none() || report["spin"]["cancelled"] == true,
        "the cancelled call did not end as the client's cancellation: {ctx}"
    );
    assert_eq!(report["afterCancel"]["isError"], false, "{ctx}");
}

/// The assertions for a client that declared sampling and elicitation, on a 2025-11-25
/// session.
fn check_full(report: &Value) {
    let ctx = format!("report: {report:#}");
    check_common(report, "2025-11-25", &ctx);

    // Sampling: the client's model was asked what the tool asked, and its answer came back.
    assert_eq!(report["sample"]["isError"], false, "{ctx}");
    assert_eq!(
        report["sample"]["structured"],
        json!({"model": "test-model", "text": "the client's model read: Say hi"}),
        "{ctx}"
    );
    let asked = &report["samplingRequests"][0];
    assert_eq!(asked["maxTokens"], 50, "{ctx}");
    assert_eq!(asked["systemPrompt"], "Be brief.", "{ctx}");
    assert_eq!(asked["messages"][0]["content"]["text"], "Say hi", "{ctx}");

    // Elicitation: the person was shown the form and their answer came back.
    assert_eq!(report["elicit"]["isError"], false, "{ctx}");
    assert_eq!(
        report["elicit"]["structured"],
        json!({"action": "accept", "content": {"name": "Ada"}}),
        "{ctx}"
    );
    let form = &report["elicitationRequests"][0];
    assert_eq!(form["message"], "Who are you?", "{ctx}");
    assert_eq!(
        form["requestedSchema"]["properties"]["name"]["type"], "string",
        "{ctx}"
    );
}

/// `mcp.sample` and `mcp.elicit` failed as tool errors whose message contains each of
/// `words` (with the capability's name), and the client was never asked.
fn check_refused(report: &Value, words: &[&str], ctx: &str) {
    assert_eq!(report["samplingRequests"], json!([]), "{ctx}");
    assert_eq!(report["elicitationRequests"], json!([]), "{ctx}");
    for (call, capability) in [("sample", "sampling"), ("elicit", "elicitation")] {
        assert_eq!(report[call]["isError"], true, "{call}: {ctx}");
        let message = text(&report[call]);
        for word in words.iter().chain([&capability]) {
            assert!(
                message.contains(word),
                "{call}'s error says {word:?}: {message}\n{ctx}"
            );
        }
    }
}

/// A 2025-11-25 client that declared neither sampling nor elicitation: the error names the
/// capability it did not declare.
fn check_bare(report: &Value) {
    let ctx = format!("report: {report:#}");
    check_common(report, "2025-11-25", &ctx);
    check_refused(report, &["did not declare"], &ctx);
}

/// A 2026-07-28 client: logging and progress work; sampling and elicitation are refused with
/// a message that says why (no server-to-client requests while a call runs) and where they
/// work.
fn check_modern(report: &Value) {
    let ctx = format!("report: {report:#}");
    check_common(report, "2026-07-28", &ctx);
    check_refused(report, &["2026-07-28", "2025-11-25"], &ctx);
}

fn ts_args(bare: bool) -> Vec<String> {
    let mut args = vec![TS_SCRIPT.to_owned()];
    if bare {
        args.push("--bare".to_owned());
    }
    args
}

fn py_args(mode: &str, bare: bool) -> Vec<String> {
    let mut args = strings(&[PY_SCRIPT, "--mode", mode]);
    if bare {
        args.push("--bare".to_owned());
    }
    args
}

/// The client `program ARGS --url URL` against an in-process server; its report, after the
/// cancelled call's record was checked.
async fn over_http(label: &str, program: &Path, mut args: Vec<String>) -> Value {
    let server = TestServer::start(ServerSettings::default()).await;
    create_tools(&server.state).await;
    args.extend(strings(&["--url", &server.url]));
    let report = run_client(label, program, &args, &[]).await;
    eprintln!("{label}: {report}");
    cancelled_record(&server.state, &format!("{label}: {report:#}")).await;
    report
}

/// The client against `toolsmith mcp` over stdio on a fresh store; its report, after the
/// cancelled call's record was checked.
async fn over_stdio(label: &str, program: &Path, mut args: Vec<String>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let state = open_state(dir.path(), ServerSettings::default()).await;
    create_tools(&state).await;
    let (server, server_args) = stdio_server(&dir.path().join("toolsmith.db"));
    args.extend(["--command".to_owned(), server]);
    args.extend(server_args.into_iter().map(|arg| format!("--arg={arg}")));
    let report = run_client(label, program, &args, &[]).await;
    eprintln!("{label}: {report}");
    cancelled_record(&state, &format!("{label}: {report:#}")).await;
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_over_http() {
    if !prerequisite("Node 22 (test clients)", &node()) {
        return;
    }
    let report = over_http("ts http", &node(), ts_args(false)).await;
    check_full(&report);
    let report = over_http("ts http bare", &node(), ts_args(true)).await;
    check_bare(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_over_stdio() {
    if !prerequisite("Node 22 (test clients)", &node()) {
        return;
    }
    let report = over_stdio("ts stdio", &node(), ts_args(false)).await;
    check_full(&report);
    let report = over_stdio("ts stdio bare", &node(), ts_args(true)).await;
    check_bare(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_legacy_over_http() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let report = over_http("python legacy http", &python(), py_args("legacy", false)).await;
    check_full(&report);
    let report = over_http(
        "python legacy http bare",
        &python(),
        py_args("legacy", true),
    )
    .await;
    check_bare(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_legacy_over_stdio() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let report = over_stdio("python legacy stdio", &python(), py_args("legacy", false)).await;
    check_full(&report);
    let report = over_stdio(
        "python legacy stdio bare",
        &python(),
        py_args("legacy", true),
    )
    .await;
    check_bare(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_auto_over_http() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let report = over_http("python auto http", &python(), py_args("auto", false)).await;
    check_modern(&report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_auto_over_stdio() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let report = over_stdio("python auto stdio", &python(), py_args("auto", false)).await;
    check_modern(&report);
}
