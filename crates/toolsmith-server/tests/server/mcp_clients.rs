//! MCP with real clients nobody here wrote: the official Python SDK (`mcp` 2.x, in
//! `mode="auto"` — 2026-07-28, list changes through `subscriptions/listen` — and
//! `mode="legacy"` — 2025-11-25 sessions), the official TypeScript SDK 1.x (2025-11-25
//! sessions) and the MCP Inspector CLI, over streamable HTTP (the server runs in-process on an
//! ephemeral loopback port) and stdio (`toolsmith mcp`, built on demand, or
//! `TOOLSMITH_MCP_STDIO_CMD`).
//!
//! The client scripts under `tests/clients/` only drive the clients and report what they saw
//! as JSON; every assertion is here. The clients are installed by
//! `scripts/install-test-deps.sh`; without them these tests fail under `CI=true` and are
//! skipped loudly otherwise.

use crate::mcp_support;

use std::time::Duration;

use mcp_support::*;
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use toolsmith_server::ServerSettings;
use toolsmith_service::{Actor, CreateTool};

/// Real clients are heavy (a Python or Node runtime each): a few at a time on 2 cores.
static CLIENT_SLOTS: Semaphore = Semaphore::const_new(3);

const PY_SCRIPT: &str = "mcp_python.py";
const TS_SCRIPT: &str = "mcp_typescript.mjs";

fn greeting(text: &str, version: u64) -> Value {
    json!({"greeting": text, "version": version})
}

/// The built-ins every caller sees (from the registry, whatever the built-in families are).
fn builtin_names(server_state: &toolsmith_server::AppState) -> Vec<String> {
    server_state
        .service
        .registry()
        .tools("default")
        .iter()
        // Aliases (`builtins::aliases`) answer by name but are not listed.
        .filter(|t| t.is_builtin() && !t.deferred)
        .map(|t| t.name().to_owned())
        .collect()
}

fn expected_initial_tools(builtins: &[String]) -> Vec<String> {
    SERVER_TOOLS
        .iter()
        .map(|s| (*s).to_owned())
        .chain(builtins.iter().cloned())
        .collect()
}

/// The assertions of the main flow, for every client and transport.
fn check_flow(
    report: &Value,
    tool: &str,
    protocol: &str,
    delivery: Option<&str>,
    builtins: &[String],
) {
    let ctx = format!("report: {report:#}");
    assert_eq!(report["protocolVersion"], protocol, "{ctx}");
    if let Some(delivery) = delivery {
        assert_eq!(report["delivery"], delivery, "{ctx}");
    }
    if report.get("serverName").is_some() {
        assert_eq!(report["serverName"], "toolsmith", "{ctx}");
    }
    assert_eq!(
        names(&report["initialTools"]),
        expected_initial_tools(builtins),
        "{ctx}"
    );
    assert!(
        names(&report["initialTools"]).contains(&"calculate".to_owned()),
        "built-ins are listed: {ctx}"
    );

    // create_tool → active, created by the model.
    let create = &report["create"];
    assert_eq!(create["isError"], false, "{ctx}");
    assert_eq!(create["structured"]["created"], true, "{ctx}");
    assert_eq!(create["structured"]["tool"]["name"], tool, "{ctx}");
    assert_eq!(create["structured"]["tool"]["status"], "active", "{ctx}");
    assert_eq!(create["structured"]["tool"]["createdBy"], "llm", "{ctx}");
    assert_eq!(
        create["structured"]["tool"]["requiresApproval"], true,
        "{ctx}"
    );
    assert_eq!(report["notifiedAfterCreate"], true, "{ctx}");
    assert_eq!(report["listedAfterCreate"], true, "{ctx}");

    // The new tool runs, exactly.
    let expected1 = greeting("hello mcp", 1);
    assert_eq!(report["call1"]["isError"], false, "{ctx}");
    assert_eq!(
        report["call1"]["text"],
        json!([expected1.to_string()]),
        "{ctx}"
    );
    assert_eq!(report["call1"]["structured"], expected1, "{ctx}");

    // update_custom_tool → the new code runs on the next call.
    assert_eq!(report["update"]["isError"], false, "{ctx}");
    assert_eq!(
        report["update"]["structured"]["tool"]["version"], 2,
        "{ctx}"
    );
    assert_eq!(report["notifiedAfterUpdate"], true, "{ctx}");
    let expected2 = greeting("hi mcp", 2);
    assert_eq!(
        report["call2"]["text"],
        json!([expected2.to_string()]),
        "{ctx}"
    );
    assert_eq!(report["call2"]["structured"], expected2, "{ctx}");

    // An unknown tool is a protocol error (-32602) whose message says what to do; arguments
    // that break the schema are a tool execution error (MCP 2025-11-25) with the path and the
    // expected shape in its text.
    assert_eq!(report["unknownTool"]["error"]["code"], -32602, "{ctx}");
    assert!(
        report["unknownTool"]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Unknown tool: no_such_tool_anywhere."),
        "{ctx}"
    );
    let bad = &report["badArgs"];
    assert_eq!(bad["isError"], true, "{ctx}");
    let text = bad["text"][0].as_str().unwrap();
    assert!(
        text.starts_with(&format!("invalid arguments for tool '{tool}': /who: ")),
        "{ctx}"
    );
    assert!(text.contains(r#"{"who": string}"#), "{ctx}");
    assert_eq!(bad["structured"]["violations"][0]["path"], "/who", "{ctx}");
    assert_eq!(
        bad["structured"]["schema"]["required"],
        json!(["who"]),
        "{ctx}"
    );
    // A lifecycle mistake is a tool error the model reads.
    assert_eq!(report["badCreate"]["isError"], true, "{ctx}");
    assert_eq!(
        report["badCreate"]["structured"]["code"], "validation_error",
        "{ctx}"
    );
    assert!(
        report["badCreate"]["text"][0]
            .as_str()
            .unwrap()
            .contains("^[a-z][a-z0-9_]*$"),
        "{ctx}"
    );

    // toggle_custom_tool off → gone from the list, and no longer callable.
    assert_eq!(report["toggle"]["isError"], false, "{ctx}");
    assert_eq!(
        report["toggle"]["structured"]["tool"]["status"], "disabled",
        "{ctx}"
    );
    assert_eq!(report["notifiedAfterDisable"], true, "{ctx}");
    assert_eq!(report["listedAfterDisable"], false, "{ctx}");
    assert_eq!(report["callDisabled"]["error"]["code"], -32602, "{ctx}");
    assert!(
        report["callDisabled"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is disabled. Enable it with toggle_custom_tool"),
        "{ctx}"
    );

    // Exactly one notification per change: create, update, disable.
    assert_eq!(report["notifications"], 3, "{ctx}");

    // The model's tool needed a person's approval: asked through elicitation (a request during
    // the call on 2025-11-25, an InputRequiredResult on 2026-07-28), answered allow_always for
    // the first call; the update changed the code, so the second call was asked again.
    assert_eq!(report["approvalsAsked"], 2, "{ctx}");
}

fn py_args(mode: &str, scenario: &str, tool: &str) -> Vec<String> {
    strings(&[
        PY_SCRIPT,
        "--mode",
        mode,
        "--scenario",
        scenario,
        "--name",
        tool,
    ])
}

fn ts_args(scenario: &str, tool: &str) -> Vec<String> {
    strings(&[TS_SCRIPT, "--scenario", scenario, "--name", tool])
}

fn with_url(mut args: Vec<String>, url: &str) -> Vec<String> {
    args.extend(strings(&["--url", url]));
    args
}

fn with_stdio(mut args: Vec<String>, db: &std::path::Path) -> Vec<String> {
    let (program, server_args) = stdio_server(db);
    args.extend(["--command".to_owned(), program]);
    // `--arg=VALUE`: server arguments start with `--` themselves.
    args.extend(server_args.into_iter().map(|arg| format!("--arg={arg}")));
    args
}

async fn python_flow_http(mode: &str, protocol: &str, delivery: &str) {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let server = TestServer::start(ServerSettings::default()).await;
    let tool = format!("py_{mode}_http_greet");
    let args = with_url(py_args(mode, "flow", &tool), &server.url);
    let report = run_client(&format!("python {mode} http"), &python(), &args, &[]).await;
    check_flow(
        &report,
        &tool,
        protocol,
        Some(delivery),
        &builtin_names(&server.state),
    );
}

async fn python_flow_stdio(mode: &str, protocol: &str, delivery: &str) {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tool = format!("py_{mode}_stdio_greet");
    let args = with_stdio(
        py_args(mode, "flow", &tool),
        &dir.path().join("toolsmith.db"),
    );
    let report = run_client(&format!("python {mode} stdio"), &python(), &args, &[]).await;
    let state = open_state(dir.path(), ServerSettings::default()).await;
    check_flow(
        &report,
        &tool,
        protocol,
        Some(delivery),
        &builtin_names(&state),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_auto_over_http() {
    python_flow_http("auto", "2026-07-28", "listen").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_legacy_over_http() {
    python_flow_http("legacy", "2025-11-25", "session").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_auto_over_stdio() {
    python_flow_stdio("auto", "2026-07-28", "listen").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_legacy_over_stdio() {
    python_flow_stdio("legacy", "2025-11-25", "session").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_over_http() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let server = TestServer::start(ServerSettings::default()).await;
    let tool = "ts_http_greet";
    let args = with_url(ts_args("flow", tool), &server.url);
    let report = run_client("typescript http", &node(), &args, &[]).await;
    check_flow(
        &report,
        tool,
        "2025-11-25",
        None,
        &builtin_names(&server.state),
    );
    assert_eq!(report["listChangedCapability"], true, "{report:#}");
    assert!(
        report["sessionId"].as_str().is_some_and(|s| !s.is_empty()),
        "a session: {report:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_over_stdio() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let tool = "ts_stdio_greet";
    let args = with_stdio(ts_args("flow", tool), &dir.path().join("toolsmith.db"));
    let report = run_client("typescript stdio", &node(), &args, &[]).await;
    let state = open_state(dir.path(), ServerSettings::default()).await;
    check_flow(&report, tool, "2025-11-25", None, &builtin_names(&state));
}

/// Two sessions: a tool created in A appears in B's list, with a notification, without
/// reconnecting; deleting it (after the confirmation round) notifies B again.
fn check_two_sessions(report: &Value, tool: &str) {
    let ctx = format!("report: {report:#}");
    assert_eq!(report["bListedBefore"], false, "{ctx}");
    assert_eq!(report["create"]["isError"], false, "{ctx}");
    assert_eq!(report["bNotifiedAfterCreate"], true, "{ctx}");
    assert_eq!(report["bListedAfterCreate"], true, "{ctx}");
    assert_eq!(
        report["bCall"]["structured"],
        greeting("hello b", 1),
        "{ctx}"
    );
    let unconfirmed = &report["deleteUnconfirmed"];
    assert_eq!(unconfirmed["isError"], false, "{ctx}");
    assert_eq!(unconfirmed["structured"]["deleted"], false, "{ctx}");
    assert_eq!(
        unconfirmed["structured"]["confirmationRequired"], true,
        "{ctx}"
    );
    assert!(
        unconfirmed["structured"]["message"]
            .as_str()
            .unwrap()
            .contains("confirm: true"),
        "{ctx}"
    );
    assert_eq!(
        report["deleteConfirmed"]["structured"]["deleted"], true,
        "{ctx}"
    );
    assert_eq!(
        report["deleteConfirmed"]["structured"]["tool"]["name"], tool,
        "{ctx}"
    );
    assert_eq!(report["bNotifiedAfterDelete"], true, "{ctx}");
    assert_eq!(report["bListedAfterDelete"], false, "{ctx}");
    // Once per change (create, delete) on each session, whichever session made it.
    assert_eq!(report["aNotifications"], 2, "{ctx}");
    assert_eq!(report["bNotifications"], 2, "{ctx}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_typescript_sdk() {
    if !prerequisite("the MCP TypeScript SDK", &node()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let server = TestServer::start(ServerSettings::default()).await;
    let tool = "shared_ts_tool";
    let args = with_url(ts_args("two-sessions", tool), &server.url);
    let report = run_client("typescript two sessions", &node(), &args, &[]).await;
    assert_eq!(report["protocolVersion"], "2025-11-25", "{report:#}");
    assert_eq!(report["distinctSessions"], true, "{report:#}");
    check_two_sessions(&report, tool);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_python_sdk_auto() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let server = TestServer::start(ServerSettings::default()).await;
    let tool = "shared_py_auto_tool";
    let args = with_url(py_args("auto", "two-sessions", tool), &server.url);
    let report = run_client("python auto two sessions", &python(), &args, &[]).await;
    assert_eq!(report["protocolVersion"], "2026-07-28", "{report:#}");
    assert_eq!(report["delivery"], "listen", "{report:#}");
    check_two_sessions(&report, tool);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_python_sdk_legacy() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let server = TestServer::start(ServerSettings::default()).await;
    let tool = "shared_py_legacy_tool";
    let args = with_url(py_args("legacy", "two-sessions", tool), &server.url);
    let report = run_client("python legacy two sessions", &python(), &args, &[]).await;
    assert_eq!(report["protocolVersion"], "2025-11-25", "{report:#}");
    check_two_sessions(&report, tool);
}

fn user_tool(name: &str) -> CreateTool {
    CreateTool {
        kind: Default::default(),
        name: name.to_owned(),
        description: format!("{name}, created outside MCP"),
        parameters: json!({"type": "object"}),
        code: "return 'made elsewhere';".to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: Vec::new(),
        requires_approval: None,
        metadata: None,
    }
}

/// How long a real client is given to show a notification that must not come. Sending nothing
/// makes no event, so where the server is out of reach (another process, a real transport) a
/// quiet window is all a test can have; in-process, `mcp_protocol.rs` counts exactly instead.
const NOTHING_ARRIVES: Duration = Duration::from_millis(1500);

/// A change made outside MCP (through the service, as REST or the CLI would) notifies the
/// sessions of its owner, and only those: another user's new tool sends nothing.
async fn external_change(mode: &str, protocol: &str) {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let server = TestServer::start(ServerSettings::default()).await;
    let args = with_url(py_args(mode, "watch", "unused"), &server.url);
    let mut run = ClientRun::spawn(&format!("python {mode} watch"), &python(), &args, &[]);
    run.wait_for_line(|v| v["ready"] == true, Duration::from_secs(60))
        .await;

    let service = &server.state.service;
    // Another user's tool: the session of `default` must not hear of it.
    service
        .create(&Actor::user("someone_else"), user_tool("not_yours"))
        .await
        .expect("create another user's tool");
    // A window for a wrong notification to arrive in, not a wait for anything: no event says
    // "the session decided to send nothing" (`mcp_protocol.rs` proves that exactly, on a paused
    // clock); this checks the same through the real client and transport.
    tokio::time::sleep(NOTHING_ARRIVES).await;
    // The session's own user, through the service as REST would: one notification.
    service
        .create(&Actor::user("default"), user_tool("made_by_rest"))
        .await
        .expect("create a tool outside MCP");

    let report = run.finish(Duration::from_secs(90)).await;
    let ctx = format!("report: {report:#}");
    assert_eq!(report["protocolVersion"], protocol, "{ctx}");
    assert_eq!(report["notified"], true, "{ctx}");
    assert!(
        names(&report["toolsAtFirstNotification"]).contains(&"made_by_rest".to_owned()),
        "the first notification came before the user's own change: the other user's change notified: {ctx}"
    );
    assert_eq!(report["notifications"], 1, "{ctx}");
    let tools = names(&report["tools"]);
    assert!(tools.contains(&"made_by_rest".to_owned()), "{ctx}");
    assert!(!tools.contains(&"not_yours".to_owned()), "{ctx}");
}

/// Over stdio the server is another process: a tool created on the same store by this process
/// (as the CLI or a running `toolsmith serve` would) reaches the session through
/// `toolsmith mcp`'s change feed — with one notification, and none for another user's tool.
async fn external_change_stdio(mode: &str, protocol: &str) {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolsmith.db");
    // Create the store first, so both processes open an existing database.
    let state = open_state(dir.path(), ServerSettings::default()).await;
    let args = with_stdio(py_args(mode, "watch", "unused"), &db);
    let mut run = ClientRun::spawn(&format!("python {mode} stdio watch"), &python(), &args, &[]);
    run.wait_for_line(|v| v["ready"] == true, Duration::from_secs(60))
        .await;

    state
        .service
        .create(&Actor::user("someone_else"), user_tool("not_yours"))
        .await
        .expect("create another user's tool");
    // As above, plus the other process's change feed: it must have read the other user's tool
    // (it polls the store every 500 ms) before the user's own tool is made, or one reading
    // would take in both.
    tokio::time::sleep(NOTHING_ARRIVES + Duration::from_secs(1)).await;
    state
        .service
        .create(&Actor::user("default"), user_tool("made_by_cli"))
        .await
        .expect("create a tool from another process");

    let report = run.finish(Duration::from_secs(90)).await;
    let ctx = format!("report: {report:#}");
    assert_eq!(report["protocolVersion"], protocol, "{ctx}");
    assert_eq!(report["notified"], true, "{ctx}");
    assert!(
        names(&report["toolsAtFirstNotification"]).contains(&"made_by_cli".to_owned()),
        "the first notification came before the user's own change: the other user's change notified: {ctx}"
    );
    assert_eq!(report["notifications"], 1, "{ctx}");
    let tools = names(&report["tools"]);
    assert!(tools.contains(&"made_by_cli".to_owned()), "{ctx}");
    assert!(!tools.contains(&"not_yours".to_owned()), "{ctx}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_process_change_notifies_stdio_python_sdk_auto() {
    external_change_stdio("auto", "2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_process_change_notifies_stdio_python_sdk_legacy() {
    external_change_stdio("legacy", "2025-11-25").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_change_notifies_python_sdk_auto() {
    external_change("auto", "2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_change_notifies_python_sdk_legacy() {
    external_change("legacy", "2025-11-25").await;
}

/// One Inspector CLI invocation (a fresh connection each time); returns its JSON output.
async fn inspector(target: &[String], method_args: &[&str], catalog: &std::path::Path) -> Value {
    inspector_with_stderr(target, method_args, catalog).await.0
}

async fn inspector_with_stderr(
    target: &[String],
    method_args: &[&str],
    catalog: &std::path::Path,
) -> (Value, String) {
    let mut args = vec![inspector_cli().display().to_string(), "--cli".to_owned()];
    args.extend(target.iter().cloned());
    args.extend(method_args.iter().map(|s| (*s).to_owned()));
    let catalog = catalog.display().to_string();
    let label = format!("inspector {}", method_args.join(" "));
    let run = ClientRun::spawn(
        &label,
        &node(),
        &args,
        &[("MCP_CATALOG_PATH", catalog.as_str())],
    );
    run.finish_json(Duration::from_secs(120)).await
}

/// The Inspector CLI's flow: list, create, list, call, update, call, disable, list.
async fn inspector_flow(target: Vec<String>, tool: &str, catalog: &std::path::Path) -> Vec<Value> {
    let create = json!({
        "name": tool,
        "description": "Greets someone (created through the Inspector CLI)",
        "parameters": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
        "code": "return {greeting: 'hello ' + args.who, version: 1};"
    })
    .to_string();
    let update = json!({"name": tool, "code": "return {greeting: 'hi ' + args.who, version: 2};"})
        .to_string();
    let toggle = json!({"name": tool, "enabled": false}).to_string();
    let who = json!({"who": "inspector"}).to_string();
    let mut out = Vec::new();
    for step in [
        vec!["--method", "tools/list"],
        vec![
            "--method",
            "tools/call",
            "--tool-name",
            "create_tool",
            "--tool-args-json",
            &create,
        ],
        vec!["--method", "tools/list"],
        vec![
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            &who,
        ],
        vec![
            "--method",
            "tools/call",
            "--tool-name",
            "update_custom_tool",
            "--tool-args-json",
            &update,
        ],
        vec![
            "--method",
            "tools/call",
            "--tool-name",
            tool,
            "--tool-args-json",
            &who,
        ],
        vec![
            "--method",
            "tools/call",
            "--tool-name",
            "toggle_custom_tool",
            "--tool-args-json",
            &toggle,
        ],
        vec!["--method", "tools/list"],
    ] {
        out.push(inspector(&target, &step, catalog).await);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_over_http() {
    if !prerequisite("the MCP Inspector", &inspector_cli()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    // The Inspector CLI cannot answer approval forms: executions need no approval here.
    let server = TestServer::start_with(ServerSettings::default(), no_approvals()).await;
    let target = strings(&[&server.url, "--transport", "http"]);
    let steps = inspector_flow(
        target.clone(),
        "inspected_http",
        &server.dir.path().join("catalog.json"),
    )
    .await;
    check_inspector_flow(&steps, "inspected_http", &builtin_names(&server.state));
    check_portable(&target, &server.dir.path().join("catalog.json")).await;
}

/// The Inspector's `--strict` schema portability check finds nothing to report.
async fn check_portable(target: &[String], catalog: &std::path::Path) {
    let (_, stderr) =
        inspector_with_stderr(target, &["--method", "tools/list", "--strict"], catalog).await;
    // Silent when there is nothing to report.
    assert!(
        stderr.trim().is_empty() || stderr.contains("0 errors, 0 warnings"),
        "schema portability findings:\n{stderr}"
    );
}

fn listed(result: &Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tools/list result: {result}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn check_inspector_flow(steps: &[Value], tool: &str, builtins: &[String]) {
    let ctx = format!("steps: {:#}", Value::Array(steps.to_vec()));
    assert_eq!(listed(&steps[0]), expected_initial_tools(builtins), "{ctx}");
    assert_eq!(steps[1]["isError"], false, "{ctx}");
    assert_eq!(
        steps[1]["structuredContent"]["tool"]["status"], "active",
        "{ctx}"
    );
    assert!(listed(&steps[2]).contains(&tool.to_owned()), "{ctx}");
    let schema = steps[2]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .map(|t| t["inputSchema"].clone());
    assert_eq!(
        schema,
        Some(
            json!({"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]})
        ),
        "the tool's own inputSchema: {ctx}"
    );
    let v1 = greeting("hello inspector", 1);
    assert_eq!(
        steps[3]["content"],
        json!([{"type": "text", "text": v1.to_string()}]),
        "{ctx}"
    );
    assert_eq!(steps[3]["structuredContent"], v1, "{ctx}");
    assert_eq!(steps[4]["isError"], false, "{ctx}");
    let v2 = greeting("hi inspector", 2);
    assert_eq!(
        steps[5]["content"],
        json!([{"type": "text", "text": v2.to_string()}]),
        "{ctx}"
    );
    assert_eq!(
        steps[6]["structuredContent"]["tool"]["status"], "disabled",
        "{ctx}"
    );
    assert!(!listed(&steps[7]).contains(&tool.to_owned()), "{ctx}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_over_stdio() {
    if !prerequisite("the MCP Inspector", &inspector_cli()) {
        return;
    }
    let _slot = CLIENT_SLOTS.acquire().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Each Inspector invocation starts its own server process on the same store.
    let (program, server_args) = stdio_server(&dir.path().join("toolsmith.db"));
    let mut target = vec![program];
    target.extend(server_args);
    // The Inspector CLI cannot answer approval forms: executions need no approval here.
    target.push("--execution-approval=off".to_owned());
    target.extend(strings(&["--transport", "stdio"]));
    let catalog = dir.path().join("catalog.json");
    let steps = inspector_flow(target.clone(), "inspected_stdio", &catalog).await;
    let state = open_state(dir.path(), ServerSettings::default()).await;
    check_inspector_flow(&steps, "inspected_stdio", &builtin_names(&state));
    check_portable(&target, &catalog).await;
}

/// A service whose executions need no person's approval.
fn no_approvals() -> toolsmith_service::ToolServiceSettings {
    toolsmith_service::ToolServiceSettings {
        execution_approval: toolsmith_service::ExecutionApproval::Off,
        ..toolsmith_service::ToolServiceSettings::default()
    }
}
