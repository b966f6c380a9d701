//! `toolsmith mcp --compat dynamic-mcp` driven by the official MCP Python SDK, in both protocol
//! generations, through spec 002's own examples (verbatim) and its documented behaviours: the
//! admin token (from `MCP_ADMIN_TOKEN`, checked on stdio), create, duplicate, reserved names,
//! list, get, update with and without `expectedRevision`, enable / disable, `timeoutMs`,
//! `run_js_ephemeral`, limits and delete, every answer in the spec's `{ok, result}` /
//! `{ok: false, error}` shapes. Also: `MCP_REQUIRE_ADMIN_TOKEN` refuses to start without a token.

use crate::mcp_support;

use std::time::{Duration, Instant};

use mcp_support::*;
use serde_json::{Value, json};

const ADMIN_TOKEN: &str = "compat-admin-token-0123456789";

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

fn ok_result(report: &Value, key: &str) -> Value {
    let answer = &report[key];
    assert_eq!(answer["isError"], false, "{key}: {answer:#}");
    assert_eq!(answer["structured"]["ok"], true, "{key}: {answer:#}");
    answer["structured"]["result"].clone()
}

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

    // The admin token: missing or wrong is refused, for reads too.
    for key in ["createNoToken", "createWrongToken", "listNoToken"] {
        let refused = failure(&report[key], key);
        assert_eq!(refused["code"], "unauthorized", "{key}: {ctx}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap_or("")
                .contains("adminToken"),
            "{key} names the fix: {ctx}"
        );
    }

    // The spec's text.uppercase, verbatim: created; image kept but not applicable.
    let created = ok_result(&report, "create");
    let tool = &created["tool"];
    assert_eq!(tool["name"], "text.uppercase", "{ctx}");
    assert_eq!(tool["status"], "active", "{ctx}");
    assert_eq!(tool["timeoutMs"], 10000, "{ctx}");
    assert_eq!(tool["image"], "node:lts-slim", "{ctx}");
    assert_eq!(tool["dependencies"], json!([]), "{ctx}");
    assert_eq!(tool["enabled"], true, "{ctx}");
    let image = &report["create"]["structured"]["meta"]["image"];
    assert_eq!(image["applicable"], false, "{ctx}");
    assert_eq!(image["requested"], "node:lts-slim", "{ctx}");

    // Duplicate, reserved and malformed names.
    assert_eq!(
        failure(&report["duplicate"], "duplicate")["code"],
        "name_taken",
        "{ctx}"
    );
    for (i, refused) in report["reserved"].as_array().unwrap().iter().enumerate() {
        let refused = failure(refused, "reserved");
        assert_eq!(refused["code"], "reserved", "#{i}: {ctx}");
        assert!(
            refused["error"].as_str().unwrap_or("").contains("reserved"),
            "{ctx}"
        );
    }
    assert_eq!(
        failure(&report["tooShort"], "tooShort")["code"],
        "validation_error",
        "{ctx}"
    );

    // The spec's data.parse_csv, verbatim: npm dependencies are refused with the reason.
    let deps = failure(&report["withDependencies"], "withDependencies");
    assert_eq!(deps["code"], "unsupported", "{ctx}");
    assert!(
        deps["error"]
            .as_str()
            .unwrap_or("")
            .contains("dependencies"),
        "{ctx}"
    );
    // timeoutMs beyond the spec's 120 s maximum: the arguments break the schema, and the
    // answer (a tool error, as MCP 2025-11-25 wants) is in the spec's shape and names the field.
    let too_long = failure(&report["timeoutTooLong"], "timeoutTooLong");
    assert_eq!(too_long["code"], "invalid_arguments", "{ctx}");
    assert!(
        too_long["error"]
            .as_str()
            .is_some_and(|e| e.contains("/tool/timeoutMs") && e.contains("120000")),
        "{ctx}"
    );

    // The tool is listed and answers the spec's invocation with the spec's result.
    assert_eq!(report["listedTool"]["name"], "text.uppercase", "{ctx}");
    assert_eq!(
        report["invoke"]["structured"],
        json!({"ok": true, "result": {"upper": "HELLO WORLD"}}),
        "{ctx}"
    );
    let thrown = failure(&report["invokeThrows"], "invokeThrows");
    assert!(
        thrown["error"]
            .as_str()
            .unwrap_or("")
            .contains("text is required"),
        "{ctx}"
    );

    // list and get.
    let listed = ok_result(&report, "list");
    let mine: Vec<&Value> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"] == "text.uppercase")
        .collect();
    assert_eq!(mine.len(), 1, "{ctx}");
    assert_eq!(mine[0]["timeoutMs"], 10000, "{ctx}");
    let got = ok_result(&report, "get");
    assert_eq!(got["tool"]["code"], tool["code"], "{ctx}");
    assert_eq!(got["tool"]["revision"], 1, "{ctx}");

    // update without expectedRevision: title stored and shown as the MCP title.
    let titled = ok_result(&report, "updateTitle");
    assert_eq!(titled["tool"]["title"], "Uppercase", "{ctx}");
    assert_eq!(report["titleListed"], "Uppercase", "{ctx}");

    // Disable (verbatim): gone from tools/list, and calling it is an unknown tool.
    let disabled = ok_result(&report, "disable");
    assert_eq!(disabled["tool"]["enabled"], false, "{ctx}");
    assert_eq!(disabled["tool"]["revision"], 3, "{ctx}");
    assert_eq!(report["listedAfterDisable"], false, "{ctx}");
    assert_eq!(report["invokeDisabled"]["error"]["code"], -32602, "{ctx}");

    // The spec's update with expectedRevision 3, verbatim; the same again is a conflict.
    let updated = ok_result(&report, "update");
    assert_eq!(
        updated["tool"]["description"], "Updated description",
        "{ctx}"
    );
    assert_eq!(updated["tool"]["timeoutMs"], 15000, "{ctx}");
    assert_eq!(updated["tool"]["title"], "Uppercase", "{ctx}");
    let stale = failure(&report["updateStale"], "updateStale");
    assert_eq!(stale["code"], "revision_conflict", "{ctx}");
    assert_eq!(stale["expectedRevision"], 3, "{ctx}");

    // Enable: listed and callable again.
    ok_result(&report, "enable");
    assert_eq!(report["listedAfterEnable"], true, "{ctx}");
    assert_eq!(
        report["invokeAfterUpdate"]["structured"],
        json!({"ok": true, "result": {"upper": "AGAIN"}}),
        "{ctx}"
    );

    // timeoutMs is the run's wall-clock limit: a 300 ms tool stops long before the server's
    // 30 s default (or the 5 s CPU limit).
    ok_result(&report, "createSlow");
    let slow = failure(&report["invokeSlow"], "invokeSlow");
    assert_eq!(slow["code"], "timeout", "{ctx}");
    assert!(
        report["slowSeconds"].as_f64().unwrap_or(f64::MAX) < 4.0,
        "{ctx}"
    );

    // run_js_ephemeral takes the spec's payload as it is. It runs; `process` is Node's, and
    // there is no Node here: the failure says so in the spec's shape.
    let spec_run = failure(&report["ephemeralSpec"], "ephemeralSpec");
    assert!(
        spec_run["error"].as_str().unwrap_or("").contains("process"),
        "{ctx}"
    );
    assert_eq!(spec_run["meta"]["image"]["applicable"], false, "{ctx}");
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
        failure(&report["ephemeralDependencies"], "ephemeralDependencies")["code"],
        "unsupported",
        "{ctx}"
    );

    // Delete with the admin token: gone.
    let deleted = ok_result(&report, "delete");
    assert_eq!(deleted["deleted"], true, "{ctx}");
    assert_eq!(
        failure(&report["getDeleted"], "getDeleted")["code"],
        "not_found",
        "{ctx}"
    );
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

/// Spec 002's sandbox sessions under `--compat dynamic-mcp`, driven by the official Python SDK:
/// with `codeExecution` enabled the four names are listed and keep a session's files between
/// `sandbox.exec` and `sandbox.run_js` calls, with dynamic-mcp's argument names and answers;
/// with the group off (the default) they are neither listed nor callable, like the built-ins
/// they stand for.
async fn sandbox_sessions_stdio(enable_group: bool) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut args = strings(&[
        "mcp_python.py",
        "--mode",
        "auto",
        "--scenario",
        "sandbox-sessions",
        "--name",
        "unused",
    ]);
    args.extend(compat_stdio(&dir.path().join("toolsmith.db")));
    args.push(format!("--env=TOOLSMITH_DATA_DIR={}", dir.path().display()));
    args.push("--env=TOOLSMITH_EXECUTION_APPROVAL=off".to_owned());
    if enable_group {
        args.push("--env=TOOLSMITH_ENABLE_GROUPS=codeExecution".to_owned());
    }
    run_client("python sandbox-sessions", &python(), &args, &[]).await
}

const SANDBOX_NAMES: [&str; 4] = [
    "sandbox.initialize",
    "sandbox.exec",
    "sandbox.run_js",
    "sandbox.stop",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_mcp_sandbox_sessions_keep_files_between_calls_in_the_specs_shapes() {
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
    let report = sandbox_sessions_stdio(true).await;
    let ctx = format!("report: {report:#}");
    let listed = names(&report["initialTools"]);
    for name in SANDBOX_NAMES {
        assert!(listed.iter().any(|n| n == name), "{name} listed: {ctx}");
    }

    let init = ok_result(&report, "initialize");
    assert!(
        init["sessionId"]
            .as_str()
            .is_some_and(|id| id.starts_with("sbx_")),
        "{ctx}"
    );
    assert_eq!(init["workdir"], "/tmp/work", "{ctx}");
    assert_eq!(
        report["initialize"]["structured"]["meta"]["image"]["applicable"], false,
        "{ctx}"
    );

    let exec = ok_result(&report, "exec");
    assert_eq!(
        (exec["exitCode"].clone(), exec["stdout"].clone()),
        (json!(0), json!("kept\n")),
        "{ctx}"
    );
    // An argv array: every word reaches the program as it is, nothing is run by a shell.
    let argv = ok_result(&report, "execArgv");
    assert_eq!(argv["stdout"], "kept\nit's $(id)\n", "{ctx}");
    assert_eq!(
        report["execLongTimeout"]["structured"]["meta"]["timeoutMs"]["applied"], 30000,
        "{ctx}"
    );

    // sandbox.run_js needs the host's node: a missing one fails the test, or (with
    // TOOLSMITH_ALLOW_SKIP=1) leaves this case out, recorded (toolsmith_core::testkit).
    if ["/usr/bin/node", "/usr/local/bin/node"]
        .iter()
        .any(|p| std::path::Path::new(p).exists())
    {
        let value = ok_result(&report, "runJs");
        assert_eq!(value, json!({"state": "kept", "n": 42}), "{ctx}");
        assert_eq!(
            report["runJs"]["structured"]["meta"]["stdout"], "log line\n",
            "{ctx}"
        );
        let thrown = failure(&report["runJsThrows"], "runJsThrows");
        assert_eq!(thrown["error"], "boom", "{ctx}");
    } else {
        toolsmith_core::testkit::missing(
            "node (Debian package nodejs, for sandbox.run_js)",
            "neither /usr/bin/node nor /usr/local/bin/node exists",
        );
    }

    let missing = failure(&report["missingSession"], "missingSession");
    assert!(
        missing["error"]
            .as_str()
            .unwrap_or("")
            .contains("sessionId"),
        "{ctx}"
    );
    let unknown = failure(&report["unknownSession"], "unknownSession");
    assert!(
        unknown["error"]
            .as_str()
            .unwrap_or("")
            .contains("sandbox_initialize"),
        "{ctx}"
    );
    assert_eq!(ok_result(&report, "stop")["stopped"], true, "{ctx}");
    let after = failure(&report["execAfterStop"], "execAfterStop");
    assert!(
        after["error"]
            .as_str()
            .unwrap_or("")
            .contains("no sandbox session"),
        "{ctx}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_mcp_sandbox_names_are_absent_while_code_execution_is_off() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let report = sandbox_sessions_stdio(false).await;
    let ctx = format!("report: {report:#}");
    let listed = names(&report["initialTools"]);
    for name in SANDBOX_NAMES {
        assert!(
            !listed.iter().any(|n| n == name),
            "{name} listed while its group is off: {ctx}"
        );
    }
    let refused = failure(&report["initialize"], "initialize");
    assert_eq!(refused["code"], "not_found", "{ctx}");
    let message = refused["error"].as_str().unwrap_or("");
    assert!(
        message.contains("codeExecution") && message.contains("groups enable"),
        "{ctx}"
    );
}
