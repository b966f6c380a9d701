//! `toolsmith mcp --compat dynamic-mcp` driven by the official MCP Python SDK, in both protocol
//! generations, through spec 002's own examples (verbatim) and its documented behaviours: the
//! admin token (from `MCP_ADMIN_TOKEN`, checked on stdio), create, duplicate, reserved names,
//! list (with and without code), get, update with and without `expectedRevision`, enable /
//! disable, `timeoutMs`, `run_js_ephemeral`, limits and delete; the control plane answers as
//! dynamic-mcp v0.4.1's does (texts, `{tool}` / `{tools}`, its error messages), a dynamic tool
//! takes its arguments under `args` and answers `{ok, result}` / `{ok: false, error}`. Also:
//! `MCP_REQUIRE_ADMIN_TOKEN` refuses to start without a token. dynamic-mcp's own tests run
//! against the binary in `crates/toolsmith/tests/cli/dynamic_mcp_suite.rs`.

use crate::mcp_support;

use std::time::{Duration, Instant};

use mcp_support::*;
use serde_json::{Value, json};

const ADMIN_TOKEN: &str = "compat-admin-token-0123456789";

/// Debian's bundle of the machine's trusted roots.
const SYSTEM_ROOTS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// `toolsmith mcp` on `db` with `--compat dynamic-mcp`, as `--command`/`--arg` of the script.
fn compat_stdio(db: &std::path::Path) -> Vec<String> {
    let (program, mut server_args) = stdio_server(db);
    if server_args.first().map(String::as_str) == Some("mcp") {
        server_args.insert(1, "--compat=dynamic-mcp".to_owned());
    }
    let mut args = vec!["--command".to_owned(), program];
    args.extend(server_args.into_iter().map(|arg| format!("--arg={arg}")));
    // The variables reach the server: the mode (for a TOOLSMITH_MCP_STDIO_CMD without the
    // flag) and dynamic-mcp's own admin-token variable.
    args.push("--env=TOOLSMITH_COMPAT=dynamic-mcp".to_owned());
    args.push(format!("--env=MCP_ADMIN_TOKEN={ADMIN_TOKEN}"));
    args
}

/// The `{ok: true, result}` of a dynamic tool's invocation (or of `run_js_ephemeral`).
fn ok_result(report: &Value, key: &str) -> Value {
    let answer = &report[key];
    assert_eq!(answer["isError"], false, "{key}: {answer:#}");
    assert_eq!(answer["structured"]["ok"], true, "{key}: {answer:#}");
    answer["structured"]["result"].clone()
}

/// The `{ok: false, error, …}` of a dynamic tool's invocation (or of `run_js_ephemeral`).
fn failure<'a>(answer: &'a Value, what: &str) -> &'a Value {
    assert_eq!(answer["isError"], true, "{what}: {answer:#}");
    assert_eq!(answer["structured"]["ok"], false, "{what}: {answer:#}");
    assert!(
        answer["structured"]["error"]
            .as_str()
            .is_some_and(|e| !e.is_empty()),
        "{what}: an error message: {answer:#}"
    );
    &answer["structured"]
}

/// A control-plane answer that succeeded, as dynamic-mcp gives one: one text and the
/// structured content.
fn answered(report: &Value, key: &str) -> (String, Value) {
    let answer = &report[key];
    assert_eq!(answer["isError"], false, "{key}: {answer:#}");
    let text = answer["text"].as_array().map_or(0, Vec::len);
    assert_eq!(text, 1, "{key}: one text: {answer:#}");
    (
        answer["text"][0].as_str().unwrap_or("").to_owned(),
        answer["structured"].clone(),
    )
}

/// A control-plane failure, as dynamic-mcp gives one: `isError`, its message as the one text,
/// no structured content.
fn refused(answer: &Value, what: &str) -> String {
    assert_eq!(answer["isError"], true, "{what}: {answer:#}");
    assert_eq!(answer["structured"], Value::Null, "{what}: {answer:#}");
    assert_eq!(
        answer["text"].as_array().map_or(0, Vec::len),
        1,
        "{what}: {answer:#}"
    );
    answer["text"][0].as_str().unwrap_or("").to_owned()
}

/// An object's keys, sorted.
fn keys(value: &Value) -> Vec<String> {
    let mut keys: Vec<String> = value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    keys.sort();
    keys
}

async fn dynamic_mcp_stdio(mode: &str, protocol: &str) {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut args = strings(&[
        "mcp_python.py",
        "--mode",
        mode,
        "--scenario",
        "dynamic-mcp",
        "--name",
        "text.uppercase",
        "--admin-token",
        ADMIN_TOKEN,
    ]);
    args.extend(compat_stdio(&dir.path().join("toolsmith.db")));
    // The npm settings in a configuration file, as an operator gives them: the package cache,
    // and the machine's roots for the registry's TLS (a TLS-inspecting proxy's CA among them).
    let config = dir.path().join("toolsmith.toml");
    let mut toml = format!(
        "npm_cache_dir = {:?}\n",
        dir.path().join("npm-cache").display().to_string()
    );
    if std::path::Path::new(SYSTEM_ROOTS).exists() {
        toml.push_str(&format!("npm_ca_file = {SYSTEM_ROOTS:?}\n"));
    }
    std::fs::write(&config, toml).unwrap();
    args.push(format!("--env=TOOLSMITH_CONFIG={}", config.display()));
    let report = run_client(&format!("python {mode} dynamic-mcp"), &python(), &args, &[]).await;
    let ctx = format!("report: {report:#}");
    assert_eq!(report["protocolVersion"], protocol, "{ctx}");

    // The dynamic-mcp control plane is listed, and run_js_ephemeral exactly once.
    let initial = names(&report["initialTools"]);
    for name in [
        "dynamic.tool.create",
        "dynamic.tool.update",
        "dynamic.tool.delete",
        "dynamic.tool.list",
        "dynamic.tool.get",
        "dynamic.tool.enable",
    ] {
        assert!(initial.contains(&name.to_owned()), "{name} listed: {ctx}");
    }
    assert_eq!(
        initial.iter().filter(|n| *n == "run_js_ephemeral").count(),
        1,
        "{ctx}"
    );

    // The admin token: missing or wrong is refused, for reads too, in dynamic-mcp's words
    // and with the fix.
    for key in ["createNoToken", "createWrongToken", "listNoToken"] {
        let text = refused(&report[key], key);
        assert!(
            text.starts_with("Unauthorized: invalid admin token.") && text.contains("adminToken"),
            "{key} names the fix: {ctx}"
        );
    }

    // The spec's text.uppercase, verbatim: `Created dynamic tool: NAME` and {tool: view},
    // the view's fields exactly dynamic-mcp's (no code).
    let (text, created) = answered(&report, "create");
    assert_eq!(text, "Created dynamic tool: text.uppercase", "{ctx}");
    let tool = &created["tool"];
    assert_eq!(
        keys(tool),
        [
            "codeSizeBytes",
            "createdAt",
            "dependencies",
            "description",
            "enabled",
            "image",
            "name",
            "revision",
            "timeoutMs",
            "updatedAt"
        ],
        "{ctx}"
    );
    assert_eq!(tool["name"], "text.uppercase", "{ctx}");
    assert_eq!(tool["timeoutMs"], 10000, "{ctx}");
    assert_eq!(tool["image"], "node:lts-slim", "{ctx}");
    assert_eq!(tool["dependencies"], json!([]), "{ctx}");
    assert_eq!(tool["enabled"], true, "{ctx}");
    assert_eq!(tool["revision"], 1, "{ctx}");
    let spec_code = "const { text } = args;\nif (!text) throw new Error('text is required');\nreturn { upper: String(text).toUpperCase() };";
    assert_eq!(tool["codeSizeBytes"], spec_code.len(), "{ctx}");
    // JavaScript's toISOString: milliseconds and Z.
    let created_at = tool["createdAt"].as_str().unwrap_or("");
    assert!(
        created_at.len() == 24 && created_at.ends_with('Z') && created_at.as_bytes()[19] == b'.',
        "{ctx}"
    );

    // Duplicate, reserved and malformed names, in dynamic-mcp's words.
    assert_eq!(
        refused(&report["duplicate"], "duplicate"),
        "Dynamic tool already exists: text.uppercase",
        "{ctx}"
    );
    let reserved: Vec<String> = report["reserved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| refused(r, "reserved"))
        .collect();
    assert_eq!(
        reserved,
        [
            "Reserved tool name prefix is not allowed: dynamic.tool.mine",
            "Reserved built-in tool name is not allowed: run_js_ephemeral"
        ],
        "{ctx}"
    );
    assert!(
        refused(&report["tooShort"], "tooShort").contains("Invalid dynamic tool name"),
        "{ctx}"
    );

    // The spec's data.parse_csv, verbatim: its npm dependency is installed at create time (from
    // the registry the configuration file names), shown as declared, and imported by the call.
    let (text, parse_csv) = answered(&report, "withDependencies");
    assert_eq!(text, "Created dynamic tool: data.parse_csv", "{ctx}");
    assert_eq!(
        parse_csv["tool"]["dependencies"],
        json!([{"name": "csv-parse", "version": "^5.5.0"}]),
        "{ctx}"
    );
    assert_eq!(
        report["invokeWithDependencies"]["structured"],
        json!({"ok": true, "result": {
            "rows": [{"name": "widget", "qty": "3"}, {"name": "gadget, large", "qty": "5"}],
            "count": 2,
        }}),
        "{ctx}"
    );
    // timeoutMs beyond the spec's 120 s maximum: the arguments break the schema, answered
    // as dynamic-mcp's SDK answers it, naming the field and the limit.
    let too_long = refused(&report["timeoutTooLong"], "timeoutTooLong");
    assert!(
        too_long.starts_with(
            "MCP error -32602: Input validation error: Invalid arguments for tool dynamic.tool.create: "
        ) && too_long.contains("/tool/timeoutMs")
            && too_long.contains("120000"),
        "{ctx}"
    );

    // The tool is listed and answers the spec's invocation (arguments under `args`) with the
    // spec's result; created with the admin token, it is the operator's: no approval asked.
    assert_eq!(report["listedTool"]["name"], "text.uppercase", "{ctx}");
    assert_eq!(
        report["invoke"]["structured"],
        json!({"ok": true, "result": {"upper": "HELLO WORLD"}}),
        "{ctx}"
    );
    assert_eq!(
        report["invokeUnwrapped"]["structured"],
        json!({"ok": true, "result": {"upper": "HELLO WORLD"}}),
        "top-level arguments still work: {ctx}"
    );
    assert_eq!(report["approvalsAskedForAdminTools"], 0, "{ctx}");
    let thrown = failure(&report["invokeThrows"], "invokeThrows");
    assert!(
        thrown["error"]
            .as_str()
            .unwrap_or("")
            .contains("text is required"),
        "{ctx}"
    );

    // list: {tools: [view…]}, the same array as pretty JSON text; code only when asked.
    let (text, listed) = answered(&report, "list");
    assert_eq!(
        serde_json::from_str::<Value>(&text).ok(),
        Some(listed["tools"].clone()),
        "{ctx}"
    );
    assert!(
        text.contains("\n  {\n    \"name\""),
        "pretty, 2 spaces: {ctx}"
    );
    let mine: Vec<&Value> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "text.uppercase")
        .collect();
    assert_eq!(mine.len(), 1, "{ctx}");
    assert_eq!(mine[0]["timeoutMs"], 10000, "{ctx}");
    assert!(mine[0].get("code").is_none(), "{ctx}");
    let (_, with_code) = answered(&report, "listWithCode");
    let uppercase = with_code["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == "text.uppercase"));
    assert_eq!(
        uppercase.map(|t| t["code"].clone()),
        Some(json!(spec_code)),
        "{ctx}"
    );
    // get: {tool: view} with its code.
    let (text, got) = answered(&report, "get");
    assert_eq!(
        serde_json::from_str::<Value>(&text).ok(),
        Some(got["tool"].clone()),
        "{ctx}"
    );
    assert_eq!(got["tool"]["code"], spec_code, "{ctx}");
    assert_eq!(got["tool"]["revision"], 1, "{ctx}");

    // update without expectedRevision: title stored and shown as the MCP title.
    let (text, titled) = answered(&report, "updateTitle");
    assert_eq!(text, "Updated dynamic tool: text.uppercase", "{ctx}");
    assert_eq!(titled["tool"]["title"], "Uppercase", "{ctx}");
    assert_eq!(report["titleListed"], "Uppercase", "{ctx}");

    // Disable (verbatim): gone from tools/list, and calling it is an unknown tool.
    let (text, disabled) = answered(&report, "disable");
    assert_eq!(text, "Disabled dynamic tool: text.uppercase", "{ctx}");
    assert_eq!(disabled["tool"]["enabled"], false, "{ctx}");
    assert_eq!(disabled["tool"]["revision"], 3, "{ctx}");
    assert_eq!(report["listedAfterDisable"], false, "{ctx}");
    assert_eq!(report["invokeDisabled"]["error"]["code"], -32602, "{ctx}");

    // The spec's update with expectedRevision 3, verbatim; the same again is a conflict.
    let (_, updated) = answered(&report, "update");
    assert_eq!(
        updated["tool"]["description"], "Updated description",
        "{ctx}"
    );
    assert_eq!(updated["tool"]["timeoutMs"], 15000, "{ctx}");
    assert_eq!(updated["tool"]["title"], "Uppercase", "{ctx}");
    assert_eq!(
        refused(&report["updateStale"], "updateStale"),
        "Revision conflict for dynamic tool \"text.uppercase\": expected 3, current 4.",
        "{ctx}"
    );

    // Enable: listed and callable again.
    let (text, _) = answered(&report, "enable");
    assert_eq!(text, "Enabled dynamic tool: text.uppercase", "{ctx}");
    assert_eq!(report["listedAfterEnable"], true, "{ctx}");
    assert_eq!(
        report["invokeAfterUpdate"]["structured"],
        json!({"ok": true, "result": {"upper": "AGAIN"}}),
        "{ctx}"
    );

    // timeoutMs is the run's wall-clock limit: a tool given dynamic-mcp's least, 1,000 ms,
    // stops long before the server's 30 s default (or the 5 s CPU limit).
    answered(&report, "createSlow");
    let slow = failure(&report["invokeSlow"], "invokeSlow");
    assert_eq!(slow["code"], "timeout", "{ctx}");
    assert!(
        report["slowSeconds"].as_f64().unwrap_or(f64::MAX) < 4.0,
        "{ctx}"
    );

    // run_js_ephemeral takes the spec's payload as it is, and runs it: `process` is one of the
    // Node-isms the sandbox gives (its `pid` is not, so it is left out of the result).
    let spec_run = ok_result(&report, "ephemeralSpec");
    assert!(
        spec_run["now"].as_str().is_some_and(|t| t.contains('T')),
        "{ctx}"
    );
    assert_eq!(
        report["ephemeralSpec"]["structured"]["meta"]["image"]["applicable"], false,
        "{ctx}"
    );
    let run = ok_result(&report, "ephemeral");
    assert_eq!(run["sum"], 5, "{ctx}");
    assert!(
        run["now"].as_str().is_some_and(|t| t.contains('T')),
        "{ctx}"
    );
    assert_eq!(
        report["ephemeral"]["structured"]["meta"]["image"]["applicable"], false,
        "{ctx}"
    );
    assert_eq!(
        ok_result(&report, "ephemeralDependencies"),
        json!([{"a": "1", "b": "2"}]),
        "{ctx}"
    );

    // Delete: no confirmation step, `Deleted dynamic tool: NAME` and nothing else; then it is
    // not found, by get and by delete, in dynamic-mcp's words.
    assert_eq!(report["delete"]["isError"], false, "{ctx}");
    assert_eq!(
        report["delete"]["text"],
        json!(["Deleted dynamic tool: text.uppercase"]),
        "{ctx}"
    );
    assert_eq!(report["delete"]["structured"], Value::Null, "{ctx}");
    for key in ["getDeleted", "deleteDeleted"] {
        assert_eq!(
            refused(&report[key], key),
            "Dynamic tool not found: text.uppercase",
            "{ctx}"
        );
    }
    assert_eq!(report["listedAfterDelete"], false, "{ctx}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_mcp_python_sdk_auto_over_stdio() {
    dynamic_mcp_stdio("auto", "2026-07-28").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_mcp_python_sdk_legacy_over_stdio() {
    dynamic_mcp_stdio("legacy", "2025-11-25").await;
}

/// `MCP_REQUIRE_ADMIN_TOKEN=true` (dynamic-mcp's variable) and `TOOLSMITH_REQUIRE_ADMIN_TOKEN`
/// refuse to start without an admin token, and say how to set one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_admin_token_refuses_to_start_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let (program, mut args) = stdio_server(&dir.path().join("toolsmith.db"));
    if args.first().map(String::as_str) == Some("mcp") {
        args.insert(1, "--compat=dynamic-mcp".to_owned());
    }
    for (var, value) in [
        ("MCP_REQUIRE_ADMIN_TOKEN", "true"),
        ("TOOLSMITH_REQUIRE_ADMIN_TOKEN", "true"),
    ] {
        let started = Instant::now();
        let out = tokio::process::Command::new(&program)
            .args(&args)
            .env("TOOLSMITH_COMPAT", "dynamic-mcp")
            .env_remove("MCP_ADMIN_TOKEN")
            .env_remove("TOOLSMITH_ADMIN_TOKEN")
            .env(var, value)
            .stdin(std::process::Stdio::null())
            .output();
        let out = tokio::time::timeout(Duration::from_secs(60), out)
            .await
            .expect("the server exits")
            .expect("the server runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}: {stderr}");
        assert!(stderr.contains("ADMIN_TOKEN"), "{var}: {stderr}");
        assert!(started.elapsed() < Duration::from_secs(60));
    }
}

/// dynamic-mcp v0.4.1's sandbox sessions under `--compat dynamic-mcp`, driven by the official
/// Python SDK in `mode` (`auto`: 2026-07-28, `legacy`: 2025-11-25): with `codeExecution` enabled
/// the five names are listed and keep a session's files between `sandbox.exec` and
/// `sandbox.run_js` calls, answering in dynamic-mcp's texts and shapes
/// (`src/sandbox/register-session-tools.ts`); with the group off (the default) they are neither
/// listed nor callable, like the built-ins they stand for.
async fn sandbox_sessions_stdio(enable_group: bool, mode: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut args = strings(&[
        "mcp_python.py",
        "--mode",
        mode,
        "--scenario",
        "sandbox-sessions",
        "--name",
        "unused",
        "--admin-token",
        ADMIN_TOKEN,
    ]);
    args.extend(compat_stdio(&dir.path().join("toolsmith.db")));
    args.push(format!("--env=TOOLSMITH_DATA_DIR={}", dir.path().display()));
    args.push("--env=TOOLSMITH_EXECUTION_APPROVAL=off".to_owned());
    // Sandbox sessions are dynamic-mcp's enterprise profile's (its own MCP_PROFILE variable).
    args.push("--env=MCP_PROFILE=enterprise".to_owned());
    // The enterprise profile switches the group on unless the operator names it either way.
    args.push(if enable_group {
        "--env=TOOLSMITH_ENABLE_GROUPS=codeExecution".to_owned()
    } else {
        "--env=TOOLSMITH_DISABLE_GROUPS=codeExecution".to_owned()
    });
    run_client("python sandbox-sessions", &python(), &args, &[]).await
}

const SANDBOX_NAMES: [&str; 5] = [
    "sandbox.session.list",
    "sandbox.initialize",
    "sandbox.exec",
    "sandbox.run_js",
    "sandbox.stop",
];

/// The one text of a successful answer with no structured content (dynamic-mcp's
/// `sandbox.exec`, `run_js` and `stop`).
fn text_only(report: &Value, key: &str) -> String {
    let answer = &report[key];
    assert_eq!(answer["isError"], false, "{key}: {answer:#}");
    assert_eq!(answer["structured"], Value::Null, "{key}: {answer:#}");
    assert_eq!(
        answer["text"].as_array().map_or(0, Vec::len),
        1,
        "{key}: {answer:#}"
    );
    answer["text"][0].as_str().unwrap_or("").to_owned()
}

async fn sandbox_sessions_answer_as_dynamic_mcp(mode: &str) {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    if toolsmith_core::testkit::require(
        "bubblewrap (the command sandbox)",
        toolsmith_command::CommandSandbox::probe().await,
    )
    .is_none()
    {
        return;
    }
    let report = sandbox_sessions_stdio(true, mode).await;
    let ctx = format!("report: {report:#}");
    let listed = names(&report["initialTools"]);
    for name in SANDBOX_NAMES {
        assert!(listed.iter().any(|n| n == name), "{name} listed: {ctx}");
    }

    // The server has an admin token (compat_stdio): dynamic-mcp's sandbox tools ask for it.
    assert!(
        refused(&report["noAdminToken"], "noAdminToken")
            .starts_with("Unauthorized: invalid admin token."),
        "{ctx}"
    );
    let (text, init) = answered(&report, "initialize");
    let id = init["sessionId"].as_str().unwrap_or("").to_owned();
    assert!(id.starts_with("sbx_"), "{ctx}");
    assert_eq!(text, format!("Sandbox session ready: {id}"), "{ctx}");
    assert_eq!(
        init,
        json!({"sessionId": id, "image": "node:lts-slim", "timeoutMs": 900_000}),
        "{ctx}"
    );

    assert_eq!(
        text_only(&report, "exec"),
        "$ echo kept > state.txt\n\n$ cat state.txt\nkept\n\n$ echo oops 1>&2\noops",
        "{ctx}"
    );
    // timeoutMs takes dynamic-mcp's range; a session's runs end at 30 s.
    assert_eq!(text_only(&report, "execLongTimeout"), "$ true", "{ctx}");
    assert_eq!(
        refused(&report["execRejected"], "execRejected"),
        "Command rejected by policy.",
        "{ctx}"
    );
    let failed = refused(&report["execFails"], "execFails");
    assert!(
        failed.starts_with("Command failed: /bin/sh -c cat missing.txt\n")
            && failed.contains("No such file"),
        "{ctx}"
    );

    let (text, list) = answered(&report, "list");
    let sessions = list["sessions"].as_array().cloned().unwrap_or_default();
    assert_eq!(sessions.len(), 1, "{ctx}");
    assert_eq!(
        keys(&sessions[0]),
        ["createdAt", "id", "image", "lastUsedAt"],
        "{ctx}"
    );
    assert_eq!(sessions[0]["id"], json!(id), "{ctx}");
    assert_eq!(sessions[0]["image"], "node:lts-slim", "{ctx}");
    assert_eq!(
        text,
        serde_json::to_string_pretty(&list["sessions"]).unwrap(),
        "{ctx}"
    );

    // sandbox.run_js needs the host's node: a missing one fails the test, or (with
    // TOOLSMITH_ALLOW_SKIP=1) leaves this case out, recorded (toolsmith_core::testkit).
    if ["/usr/bin/node", "/usr/local/bin/node"]
        .iter()
        .any(|p| std::path::Path::new(p).exists())
    {
        assert_eq!(text_only(&report, "runJs"), "kept 42", "{ctx}");
        assert_eq!(
            text_only(&report, "runJsSilent"),
            "JavaScript execution completed with no output.",
            "{ctx}"
        );
        let thrown = refused(&report["runJsThrows"], "runJsThrows");
        assert!(
            thrown.starts_with("Command failed: node index.mjs\n") && thrown.contains("boom"),
            "{ctx}"
        );
    } else {
        toolsmith_core::testkit::missing(
            "node (Debian package nodejs, for sandbox.run_js)",
            "neither /usr/bin/node nor /usr/local/bin/node exists",
        );
    }

    let missing = refused(&report["missingSession"], "missingSession");
    assert!(
        missing.starts_with(
            "MCP error -32602: Input validation error: Invalid arguments for tool sandbox.exec"
        ) && missing.contains("sessionId"),
        "{ctx}"
    );
    assert_eq!(
        refused(&report["invalidSession"], "invalidSession"),
        "Invalid sandbox session id: abc;rm -rf /",
        "{ctx}"
    );
    assert_eq!(
        refused(&report["unknownSession"], "unknownSession"),
        "Sandbox session not found: sbx_nope",
        "{ctx}"
    );
    assert_eq!(
        text_only(&report, "stop"),
        format!("Stopped sandbox session: {id}"),
        "{ctx}"
    );
    let (text, list) = answered(&report, "listAfterStop");
    assert_eq!(
        (text.as_str(), list),
        ("[]", json!({"sessions": []})),
        "{ctx}"
    );
    assert_eq!(
        refused(&report["execAfterStop"], "execAfterStop"),
        format!("Sandbox session not found: {id}"),
        "{ctx}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_mcp_sandbox_sessions_answer_as_dynamic_mcp_v041_over_2025_11_25() {
    sandbox_sessions_answer_as_dynamic_mcp("legacy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_mcp_sandbox_sessions_answer_as_dynamic_mcp_v041_over_2026_07_28() {
    sandbox_sessions_answer_as_dynamic_mcp("auto").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_mcp_sandbox_names_are_absent_while_code_execution_is_off() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let report = sandbox_sessions_stdio(false, "auto").await;
    let ctx = format!("report: {report:#}");
    let listed = names(&report["initialTools"]);
    for name in SANDBOX_NAMES {
        assert!(
            !listed.iter().any(|n| n == name),
            "{name} listed while its group is off: {ctx}"
        );
    }
    let message = refused(&report["initialize"], "initialize");
    assert!(
        message.starts_with("sandbox.initialize is not available: ")
            && message.contains("codeExecution")
            && message.contains("groups enable"),
        "{ctx}"
    );
}

/// dynamic-mcp's profiles (issue 33): `mvp` and `enterprise`, their tools, resources and prompt,
/// upstream attach, and the HTTP transport's `/readyz` and `/metrics`, through rmcp's client
/// over an in-memory pipe and the real router.
mod profiles {
    use std::sync::Arc;

    use axum::http::{Method, StatusCode};
    use rmcp::ServiceExt;
    use rmcp::model::{
        CallToolResult, ErrorData, GetPromptRequestParams, ReadResourceRequestParams,
    };
    use serde_json::{Value, json};
    use toolsmith_server::auth::Identity;
    use toolsmith_server::mcp::{CompatProfile, ToolsmithMcp};
    use toolsmith_server::{AppState, ServerSettings};
    use toolsmith_service::ToolServiceSettings;
    use tower::ServiceExt as _;

    use crate::mcp_support::{
        McpClient, call_ok, call_tool, clients_dir, open_state_with, prerequisite, python,
        tool_names,
    };
    use crate::rest_support::{TestApp, request};

    const ADMIN: &str = "profiles-admin-token-0123456789";

    const ENTERPRISE_TOOLS: [&str; 9] = [
        "dev.echo",
        "time.now",
        "system.guard_metrics",
        "system.runtime_config",
        "sandbox.session.list",
        "sandbox.initialize",
        "sandbox.exec",
        "sandbox.run_js",
        "sandbox.stop",
    ];

    fn config(profile: CompatProfile) -> ServerSettings {
        ServerSettings {
            compat_dynamic_mcp: true,
            compat_profile: profile,
            admin_token: Some(ADMIN.to_owned()),
            ..ServerSettings::default()
        }
    }

    struct Client {
        client: McpClient<()>,
        _dir: tempfile::TempDir,
        state: AppState,
    }

    impl Client {
        /// A session of user `default` on a fresh store; with `code`, the `codeExecution`
        /// group is on (a workspace under the store's folder), so the `sandbox.*` names have
        /// their built-ins.
        async fn open(
            config: ServerSettings,
            mut service: ToolServiceSettings,
            code: bool,
        ) -> Client {
            let dir = tempfile::tempdir().expect("temp dir");
            if code {
                service.workspace = Some(toolsmith_service::WorkspaceSettings::new(
                    dir.path().join("workspaces"),
                ));
            }
            let state = open_state_with(dir.path(), config, service).await;
            if code {
                state
                    .service
                    .set_tool_group(
                        &toolsmith_service::Actor::user("default"),
                        "codeExecution",
                        true,
                    )
                    .await
                    .expect("the code tools switch on");
            }
            let (server_io, client_io) = tokio::io::duplex(1 << 20);
            let server = ToolsmithMcp::new(state.clone(), Identity::local_default());
            tokio::spawn(async move {
                if let Ok(running) = server.serve(server_io).await {
                    let _ = running.waiting().await;
                }
            });
            let client = ().serve(client_io).await.expect("client connects");
            Client {
                client,
                _dir: dir,
                state,
            }
        }

        async fn names(&self) -> Vec<String> {
            tool_names(&self.client).await
        }

        async fn call(&self, name: &str, args: Value) -> Result<CallToolResult, ErrorData> {
            call_tool(&self.client, name, args).await
        }

        /// `(isError, structuredContent, text)` of a call that is no protocol error.
        async fn ok(&self, name: &str, args: Value) -> (bool, Value, String) {
            call_ok(&self.client, name, args).await
        }
    }

    /// dynamic-mcp's `mvp` (the default): `system.health` beside the control plane and
    /// `run_js_ephemeral`; nothing of `enterprise` is listed or callable, and resources and
    /// prompts are "Method not found".
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dynamic_mcp_mvp_profile_serves_system_health_and_nothing_of_enterprise() {
        let client = Client::open(
            config(CompatProfile::Mvp),
            ToolServiceSettings::default(),
            true,
        )
        .await;
        let names = client.names().await;
        for name in [
            "system.health",
            "run_js_ephemeral",
            "dynamic.tool.create",
            "dynamic.tool.update",
            "dynamic.tool.delete",
            "dynamic.tool.list",
            "dynamic.tool.get",
            "dynamic.tool.enable",
        ] {
            assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
        }
        for name in ENTERPRISE_TOOLS
            .iter()
            .chain(&["upstream.mcp.attach", "upstream.mcp.detach"])
        {
            assert!(!names.iter().any(|n| n == name), "{name} in {names:?}");
        }
        let refused = client.call("dev.echo", json!({"message": "x"})).await;
        assert_eq!(refused.map_err(|e| e.code.0), Err(-32602));
        // Nor do search and help show what the profile does not serve.
        let (_, _, found) = client
            .ok("search_tools", json!({"query": "echo user input message"}))
            .await;
        assert!(!found.contains("dev.echo"), "{found}");
        let (_, _, help) = client
            .ok("get_tool_help", json!({"tool_name": "time.now"}))
            .await;
        assert!(!help.contains("Return current server time"), "{help}");

        let (is_error, health, text) = client.ok("system.health", json!({})).await;
        assert!(!is_error, "{text}");
        assert_eq!(health["status"], "ok");
        assert_eq!(health["service"], "dynamic-mcp");
        assert!(health["version"].is_string() && health["uptimeSeconds"].is_u64());
        assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(health));

        let info = client.client.peer_info().expect("server info");
        assert!(info.capabilities.resources.is_none());
        assert!(info.capabilities.prompts.is_none());
        let err = client.client.list_resources(None).await.unwrap_err();
        assert!(err.to_string().contains("Method not found"), "{err}");
        let err = client.client.list_prompts(None).await.unwrap_err();
        assert!(err.to_string().contains("Method not found"), "{err}");
    }

    /// `enterprise`: dynamic-mcp's operator tools answer as its own do, field for field; the
    /// runtime config says whether an admin token is configured and never shows it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dynamic_mcp_enterprise_profile_tools_answer_in_its_shapes() {
        let client = Client::open(
            config(CompatProfile::Enterprise),
            ToolServiceSettings::default(),
            true,
        )
        .await;
        let tools = client.client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for name in ["system.health"].iter().chain(&ENTERPRISE_TOOLS[..4]) {
            assert!(names.contains(name), "{name} in {names:?}");
        }
        let echo_tool = tools
            .iter()
            .find(|t| t.name == "dev.echo")
            .expect("dev.echo");
        assert_eq!(echo_tool.title.as_deref(), Some("Developer Echo"));
        assert!(echo_tool.output_schema.is_some());

        let (_, _, found) = client
            .ok("search_tools", json!({"query": "echo user input message"}))
            .await;
        assert!(found.contains("dev.echo"), "{found}");

        let (is_error, echo, text) = client
            .ok(
                "dev.echo",
                json!({"message": "hello mcp", "uppercase": true}),
            )
            .await;
        assert!(!is_error);
        assert_eq!(echo, json!({"message": "HELLO MCP", "length": 9}));
        assert_eq!(text, "HELLO MCP");
        let (_, echo, _) = client
            .ok("dev.echo", json!({"message": "Hello World"}))
            .await;
        assert_eq!(echo, json!({"message": "Hello World", "length": 11}));

        let (is_error, now, _) = client.ok("time.now", json!({})).await;
        assert!(!is_error);
        assert_eq!(now["timeZone"], "UTC");
        let iso = now["iso"].as_str().expect("iso");
        let parsed = chrono::DateTime::parse_from_rfc3339(iso).expect("an ISO time");
        // JavaScript's toISOString: milliseconds and a Z.
        assert_eq!(
            parsed
                .with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            iso
        );
        assert_eq!(now["unixSeconds"].as_i64(), Some(parsed.timestamp()));
        let (_, shanghai, _) = client
            .ok("time.now", json!({"timeZone": "Asia/Shanghai"}))
            .await;
        assert_eq!(shanghai["timeZone"], "Asia/Shanghai");
        let (is_error, _, text) = client
            .ok("time.now", json!({"timeZone": "Invalid/NotReal"}))
            .await;
        assert!(is_error);
        assert_eq!(text, "Invalid IANA timezone: Invalid/NotReal");

        let (is_error, guard, _) = client.ok("system.guard_metrics", json!({})).await;
        assert!(!is_error);
        assert_eq!(guard["activeExecutions"], 0);
        assert!(
            guard["limits"]["maxConcurrency"].as_u64() > Some(0),
            "{guard}"
        );
        assert_eq!(guard["limits"]["windowMs"], 60000);
        assert_eq!(guard["scopes"], json!([]));

        let (is_error, runtime, text) = client.ok("system.runtime_config", json!({})).await;
        assert!(!is_error);
        assert_eq!(
            runtime["dynamic"]["adminTokenConfigured"], true,
            "{runtime}"
        );
        assert_eq!(runtime["dynamic"]["requireAdminToken"], false);
        assert_eq!(runtime["dynamic"]["readOnly"], false);
        assert_eq!(runtime["transports"], json!(["stdio", "http"]));
        assert_eq!(runtime["sandbox"]["executionEngine"], "auto");
        assert_eq!(runtime["experimental"]["upstreamMcpAttach"], false);
        for key in ["auth", "security", "sandbox", "audit"] {
            assert!(runtime[key].is_object(), "{key}: {runtime}");
        }
        assert!(!text.contains(ADMIN) && !runtime.to_string().contains(ADMIN));

        // The code tools are on, so the session names are listed in this profile.
        for name in &ENTERPRISE_TOOLS[4..] {
            assert!(names.contains(name), "{name} in {names:?}");
        }
    }

    /// `enterprise`'s 3 resources and 1 prompt, advertised in its capabilities only.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dynamic_mcp_enterprise_resources_and_prompt() {
        let client = Client::open(
            config(CompatProfile::Enterprise),
            ToolServiceSettings::default(),
            false,
        )
        .await;
        let info = client.client.peer_info().expect("server info");
        assert!(info.capabilities.resources.is_some());
        assert!(info.capabilities.prompts.is_some());
        let resources = client.client.list_all_resources().await.expect("list");
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "dynamic://service/meta",
                "dynamic://service/runtime-config",
                "dynamic://metrics/guard"
            ]
        );
        let read = |uri: &str| {
            let uri = uri.to_owned();
            let client = &client.client;
            async move {
                let result = client
                    .read_resource(ReadResourceRequestParams::new(uri.clone()))
                    .await
                    .expect("resources/read");
                let json = serde_json::to_value(&result.contents[0]).expect("contents");
                assert_eq!(json["mimeType"], "application/json", "{json}");
                assert_eq!(json["uri"], uri.as_str());
                serde_json::from_str::<Value>(json["text"].as_str().expect("text"))
                    .expect("JSON text")
            }
        };
        let meta = read("dynamic://service/meta").await;
        assert_eq!(meta["name"], "dynamic-mcp");
        assert_eq!(meta["protocol"], "Model Context Protocol");
        assert_eq!(meta["transports"], json!(["stdio", "http"]));
        let from_resource = read("dynamic://service/runtime-config").await;
        let (_, from_tool, _) = client.ok("system.runtime_config", json!({})).await;
        assert_eq!(from_resource, from_tool);
        let guard = read("dynamic://metrics/guard").await;
        assert!(guard["activeExecutions"].is_u64() && guard["scopes"].is_array());
        let missing = client
            .client
            .read_resource(ReadResourceRequestParams::new("dynamic://nothing"))
            .await
            .unwrap_err();
        assert!(missing.to_string().contains("not found"), "{missing}");

        let prompts = client.client.list_all_prompts().await.expect("prompts");
        assert_eq!(prompts.len(), 1);
        assert_eq!(prompts[0].name, "tool-call-checklist");
        assert!(prompts[0].description.is_some());
        let prompt = client
            .client
            .get_prompt(
                GetPromptRequestParams::new("tool-call-checklist").with_arguments(
                    json!({"toolName": "dev.echo"})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                ),
            )
            .await
            .expect("prompts/get");
        let message = serde_json::to_value(&prompt.messages[0]).expect("message");
        assert_eq!(message["role"], "user");
        assert_eq!(
            message["content"]["text"],
            "Before calling dev.echo, verify input schema, expected output schema, and failure handling."
        );
    }

    /// Its guard counts what dynamic-mcp's counts (here `run_js_ephemeral`), never `dev.echo`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dynamic_mcp_guard_metrics_count_what_its_guard_counts() {
        let client = Client::open(
            config(CompatProfile::Enterprise),
            ToolServiceSettings::default(),
            false,
        )
        .await;
        client.ok("dev.echo", json!({"message": "hi"})).await;
        let (_, guard, _) = client.ok("system.guard_metrics", json!({})).await;
        assert_eq!(guard["scopes"], json!([]));
        let (is_error, ran, text) = client
            .ok("run_js_ephemeral", json!({"code": "return 6 * 7;"}))
            .await;
        assert!(!is_error, "{ran} {text}");
        client
            .ok(
                "run_js_ephemeral",
                json!({"code": "throw new Error('no');"}),
            )
            .await;
        let (_, guard, _) = client.ok("system.guard_metrics", json!({})).await;
        assert_eq!(
            guard["scopes"],
            json!([{"scope": "run_js_ephemeral", "total": 2, "allowed": 2, "rejectedRate": 0, "rejectedConcurrency": 0, "failed": 1}]),
            "{guard}"
        );
        assert_eq!(guard["activeExecutions"], 0);
        let _ = &client.state;
    }

    /// The HTTP transport's probes: dynamic-mcp's bodies in compat mode (sessions counted as
    /// they open), Toolsmith's own outside it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dynamic_mcp_readyz_and_metrics_answer_in_its_shapes() {
        let plain = TestApp::with_config(ServerSettings::default()).await;
        let ready = plain.get("/readyz").await;
        assert_eq!(
            (ready.status, ready.json.clone()),
            (StatusCode::OK, json!({"status": "ok"}))
        );
        assert!(!plain.get("/metrics").await.text.contains("dynamic_mcp_"));

        let app = TestApp::with_config(ServerSettings {
            compat_dynamic_mcp: true,
            ..ServerSettings::default()
        })
        .await;
        let ready = app.get("/readyz").await;
        assert_eq!(ready.status, StatusCode::OK);
        assert_eq!(ready.json, json!({"status": "ready"}));
        assert!(ready.header("x-request-id").is_some());
        let metrics = app.get("/metrics").await;
        assert_eq!(metrics.status, StatusCode::OK);
        for line in [
            "# TYPE dynamic_mcp_process_uptime_seconds gauge",
            "dynamic_mcp_http_sessions_active 0",
            "dynamic_mcp_http_sessions_created_total 0",
            "dynamic_mcp_http_sessions_expired_total 0",
            "dynamic_mcp_http_auth_success_total 0",
            "dynamic_mcp_http_auth_denied_total 0",
        ] {
            assert!(metrics.text.contains(line), "{line}:\n{}", metrics.text);
        }
        // Toolsmith's own series follow.
        assert!(metrics.text.contains("toolsmith_mcp_sessions_open 0"));

        // A 2025-11-25 session opens.
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}
        });
        let response = app
            .router
            .clone()
            .oneshot(
                request(Method::POST, "/mcp")
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .body(axum::body::Body::from(initialize.to_string()))
                    .expect("request"),
            )
            .await
            .expect("the router never fails");
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers().contains_key("mcp-session-id"));
        drop(response);
        let metrics = app.get("/metrics").await.text;
        assert!(
            metrics.contains("dynamic_mcp_http_sessions_active 1"),
            "{metrics}"
        );
        assert!(
            metrics.contains("dynamic_mcp_http_sessions_created_total 1"),
            "{metrics}"
        );
    }

    /// `upstream.mcp.attach` / `detach` (enterprise, with the flag): the admin token as an
    /// argument, the upstream registered on the MCP bridge under every rule of a registration
    /// (allowed program, allowed env), its tools bridged and callable, the attachment limit,
    /// `replace`, and nothing left behind by a detach.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dynamic_mcp_upstream_attach_registers_a_bridged_server_and_detach_removes_it() {
        if !prerequisite("the MCP Python SDK", &python()) {
            return;
        }
        let service = ToolServiceSettings {
            mcp_bridge: toolsmith_service::bridge::BridgeSettings {
                allowed_commands: vec![python()],
                ..Default::default()
            },
            ..ToolServiceSettings::default()
        };
        let client = Client::open(
            ServerSettings {
                compat_upstream_attach: Some(1),
                ..config(CompatProfile::Enterprise)
            },
            service,
            false,
        )
        .await;
        let names = client.names().await;
        assert!(
            names.iter().any(|n| n == "upstream.mcp.attach"),
            "{names:?}"
        );
        assert!(
            names.iter().any(|n| n == "upstream.mcp.detach"),
            "{names:?}"
        );
        let upstream = clients_dir().join("mcp_upstream.py").display().to_string();
        let attach = |token: &str, alias: &str, extra: Value| {
            let mut args = json!({
                "adminToken": token,
                "alias": alias,
                "transport": "stdio",
                "command": python().display().to_string(),
                "args": [upstream.clone()]
            });
            if let (Some(args), Value::Object(extra)) = (args.as_object_mut(), extra) {
                args.extend(extra);
            }
            client.ok("upstream.mcp.attach", args)
        };

        let (is_error, _, text) = attach("wrong-token", "fixture.upstream", json!({})).await;
        assert!(is_error);
        assert_eq!(text, "Unauthorized: invalid admin token.");
        let (is_error, _, text) = attach(
            ADMIN,
            "fixture.upstream",
            json!({"env": {"LD_PRELOAD": "/tmp/x.so"}}),
        )
        .await;
        assert!(is_error && text.contains("mcp_allowed_env"), "{text}");
        assert!(client.state.service.mcp_servers().is_empty());

        let (is_error, attached, text) = attach(ADMIN, "fixture.upstream", json!({})).await;
        assert!(!is_error, "{text}");
        assert_eq!(attached["alias"], "fixture.upstream");
        assert_eq!(attached["transport"], "stdio");
        assert_eq!(attached["target"], python().display().to_string());
        let tool_names = attached["toolNames"].as_array().expect("toolNames");
        assert!(tool_names.contains(&json!("echo")), "{attached}");
        assert_eq!(
            attached["toolCount"].as_u64(),
            Some(tool_names.len() as u64)
        );
        assert!(
            attached["attachedAt"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z'))
        );
        assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(attached));
        // Its tools are bridged: listed and callable.
        assert!(
            client
                .names()
                .await
                .iter()
                .any(|n| n == "mcp_fixture_upstream_echo")
        );
        let (is_error, _, echoed) = client
            .ok(
                "mcp_fixture_upstream_echo",
                json!({"text": "through the bridge"}),
            )
            .await;
        assert!(
            !is_error && echoed.contains("through the bridge"),
            "{echoed}"
        );

        let (is_error, _, text) = attach(ADMIN, "fixture.upstream", json!({})).await;
        assert!(is_error);
        assert_eq!(
            text,
            "Alias \"fixture.upstream\" is already attached. Set replace=true to re-attach."
        );
        let (is_error, _, text) = attach(ADMIN, "fixture.other", json!({})).await;
        assert!(is_error && text.contains("limit"), "{text}");
        let (is_error, replaced, text) =
            attach(ADMIN, "fixture.upstream", json!({"replace": true})).await;
        assert!(!is_error, "{text}");
        assert_eq!(replaced["alias"], "fixture.upstream");

        let detach = |token: &str| {
            client.ok(
                "upstream.mcp.detach",
                json!({"adminToken": token, "alias": "fixture.upstream"}),
            )
        };
        let (is_error, _, text) = detach("").await;
        assert!(is_error);
        assert_eq!(text, "Unauthorized: invalid admin token.");
        let (is_error, detached, _) = detach(ADMIN).await;
        assert!(!is_error);
        assert_eq!(
            detached,
            json!({"alias": "fixture.upstream", "detached": true})
        );
        assert!(client.state.service.mcp_servers().is_empty());
        assert!(
            !client
                .names()
                .await
                .iter()
                .any(|n| n.starts_with("mcp_fixture"))
        );
        let (_, again, _) = detach(ADMIN).await;
        assert_eq!(
            again,
            json!({"alias": "fixture.upstream", "detached": false})
        );
        let _ = Arc::clone(&client.state.service);
    }
}
