//! Neither the server's log nor the reply holds a call's argument values (issue 12, item 9 and
//! the invalid-argument replies): a Config Center secret sent as an invalid argument, over MCP
//! with the official Python SDK (`tests/clients/ui_mcp.py`), over REST and through the CLI, must
//! not reach stderr — not at the default `warn` level (where rmcp logs every error answer) and
//! not at `debug` (where it logs every request and response) — nor come back in the error text,
//! which still names the field and the expected type. The log lines about those calls must still
//! be there, with names, ids and sizes.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::{Env, Server};
use crate::ui_browser::{prerequisite, repo_root};

const SECRET: &str = "sk-live-Zq8xW3logsecret4242";

/// The MCP Python SDK's `call` through `ui_mcp.py`: the final result or error, as JSON.
fn mcp_call(python: &Path, server: &Server, tool: &str, args: &Value) -> Value {
    let out = Command::new(python)
        .arg(repo_root().join("tests/clients/ui_mcp.py"))
        .args(["--url", &format!("http://{}/mcp", server.addr)])
        .args(["call", "--name", tool, "--args", &args.to_string()])
        .args(["--timeout", "10"])
        .output()
        .expect("run ui_mcp.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default();
    let doc: Value = serde_json::from_str(last).unwrap_or_else(|e| {
        panic!(
            "ui_mcp.py gave no result ({e})\nstdout: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    doc["final"].clone()
}

/// A store with the secret in the Config Center and a tool that takes an integer.
fn prepared_env() -> Env {
    let env = Env::new();
    for args in [
        vec!["config", "add-service", "prod_api"],
        vec![
            "config",
            "set",
            "prod_api",
            &format!("api_key={SECRET}"),
            "base_url=https://api.example.test",
        ],
    ] {
        let (code, stdout, stderr) = env.run(&args);
        assert_eq!(code, 0, "{args:?}\nstdout: {stdout}\nstderr: {stderr}");
    }
    let tool = json!({
        "name": "add_one",
        "description": "adds one",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        },
        "code": "return {n: args.n + 1};",
    });
    let file = env.write("add_one.json", &tool.to_string());
    let (code, stdout, stderr) = env.run(&["tool", "create", "--file", file.to_str().unwrap()]);
    assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    env
}

#[test]
fn argument_values_never_reach_the_log_or_the_reply() {
    let python = repo_root().join("tests/clients/.venv/bin/python");
    if !prerequisite(
        "the MCP Python SDK",
        &python,
        "bash scripts/install-test-deps.sh",
    ) {
        return;
    }
    let env = prepared_env();

    // Default level (warn): an error answer that quotes what the caller sent.
    let server = env.serve(&[]);
    let unknown = format!("lookup_{SECRET}");
    let answer = mcp_call(&python, &server, &unknown, &json!({"n": SECRET}));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let log = server.stderr();
    assert!(
        log.contains("response error") && log.contains("error=<redacted: "),
        "rmcp's warning about the error answer is still logged, redacted:\n{log}"
    );
    assert!(
        !log.contains(SECRET),
        "the secret is in the warn log:\n{log}"
    );
    drop(server);

    // Debug: every request and response passes through rmcp's debug lines.
    let server = env.serve_with_env(&[], &[("RUST_LOG", "debug")]);
    let answer = mcp_call(&python, &server, "add_one", &json!({"n": SECRET}));
    assert_eq!(answer["isError"], true, "{answer}");
    let text = answer["text"][0].as_str().unwrap_or_default();
    assert!(text.contains("invalid arguments"), "{answer}");
    assert!(
        text.contains(r#"/n: a string is not of type "integer""#),
        "the reply names the field and the type: {answer}"
    );
    assert!(
        !answer.to_string().contains("Zq8xW3"),
        "MCP reply: {answer}"
    );
    // A control-plane tool: its arguments are checked against its schema, then deserialized.
    let toggled = mcp_call(
        &python,
        &server,
        "toggle_custom_tool",
        &json!({"name": "add_one", "enabled": SECRET}),
    );
    assert!(
        toggled.to_string().contains("enabled"),
        "the reply names the field: {toggled}"
    );
    assert!(
        !toggled.to_string().contains("Zq8xW3"),
        "MCP reply: {toggled}"
    );
    let res = server.post(
        "/api/v1/tools/add_one/execute",
        &json!({"arguments": {"n": SECRET}}),
    );
    assert_eq!(res.status, 422, "{}", res.body);
    assert!(res.body.contains("/n"), "{}", res.body);
    assert!(!res.body.contains("Zq8xW3"), "REST reply: {}", res.body);
    // A body field of the wrong type: serde's message would quote the value.
    let res = server.post(
        "/api/v1/tools/add_one/execute",
        &json!({"arguments": SECRET}),
    );
    assert_eq!(res.status, 400, "{}", res.body);
    assert!(res.body.contains("a string"), "{}", res.body);
    assert!(!res.body.contains("Zq8xW3"), "REST reply: {}", res.body);
    let log = server.stderr();
    for expected in [
        "received request id=",
        "request=<redacted: ",
        "result=<redacted: ",
        "tools/call answered",
        "tool=\"add_one\"",
        "argument_bytes=",
    ] {
        assert!(
            log.contains(expected),
            "no '{expected}' in the debug log:\n{log}"
        );
    }
    assert!(
        !log.contains(SECRET),
        "the secret is in the debug log:\n{log}"
    );
    assert!(
        !log.contains("Zq8xW3"),
        "part of the secret is in the debug log:\n{log}"
    );
    drop(server);

    // The CLI's one-off run says what is wrong, without the value.
    let args = json!({"n": SECRET}).to_string();
    let (code, stdout, stderr) = env.run(&["run", "add_one", "--args", &args]);
    assert_ne!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
    let out = format!("{stdout}{stderr}");
    assert!(
        out.contains(r#"a string is not of type \"integer\""#)
            || out.contains(r#"a string is not of type "integer""#),
        "{out}"
    );
    assert!(!out.contains("Zq8xW3"), "CLI output: {out}");
}
