//! Coding agents (issue 39, 003 §26) end to end through MCP: a coding-agent CLI found in the
//! operator's `coding_agent_dirs` runs in the command sandbox on the caller's workspace, with
//! the caller's key from the Config Center as its variable only, under its policy (allowed /
//! prompt → an approval / blocked), its time limit, and no network but its provider's API
//! host through the run's proxy; each run is kept.
//!
//! The real CLIs need paid accounts and the network, so the one fake here is the agent: a
//! Python script named like the CLI (`claude`, `gemini`) that prints what it was given (its
//! arguments, its `*_API_KEY` variables, its folder), writes a file in the workspace, sleeps
//! when asked to (the time limit), and tries the network when asked to. Everything around it
//! — the sandbox, the proxy, the Config Center, the approvals, the records — is the real one.

use std::os::unix::fs::PermissionsExt;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

use crate::mcp_outside::{assert_search_finds, call, configure, mcp};
use crate::rest_support::{TestApp, command_sandbox_works};

/// The stand-in agent.
const AGENT: &str = r#"#!/usr/bin/python3
import os, socket, sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print("9.9.9 (stand-in)")
    sys.exit(0)
prompt = args[-1]
print("args:", " ".join(args[:-1]))
print("prompt:", prompt)
for name in sorted(os.environ):
    if name.endswith("_API_KEY"):
        print("key", name, "=", os.environ[name])
print("cwd:", os.getcwd())
print("proxy:", os.environ.get("HTTPS_PROXY"))
if prompt.startswith("sleep"):
    time.sleep(600)
if prompt.startswith("net "):
    host, port = prompt.split()[1].split(":")
    try:
        socket.create_connection((host, int(port)), timeout=3)
        print("direct: connected")
    except OSError as e:
        print("direct: failed", e)
    s = socket.create_connection(("127.0.0.1", 3128), timeout=3)
    s.sendall(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
    print("tunnel:", s.recv(4096).decode(errors="replace").splitlines()[0])
    sys.exit(0)
with open("DONE.md", "w") as f:
    f.write("done: " + prompt + "\n")
"#;

const KEY: &str = "ck-7d1f0c2e9a4b-standin";

/// A folder `nobody` can read holding the stand-in as each of `names`.
fn agents(names: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for name in names {
        let path = dir.path().join(name);
        std::fs::write(&path, AGENT).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

async fn app(dir: &std::path::Path, ws: &std::path::Path) -> TestApp {
    let settings = ToolServiceSettings {
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            ws.join("workspaces"),
        )),
        coding_agents: toolsmith_builtins::coding_agents::CodingAgentSettings {
            dirs: vec![dir.to_path_buf()],
        },
        ..ToolServiceSettings::default()
    };
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/codingAgents",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    app
}

fn agent<'a>(list: &'a Value, provider: &str) -> &'a Value {
    list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["provider"] == provider)
        .unwrap_or_else(|| panic!("{provider} not listed: {list}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coding_agent_runs_in_the_sandbox_with_its_key_under_its_policy_through_mcp() {
    if !command_sandbox_works().await {
        return;
    }
    let dir = agents(&["claude", "gemini"]);
    let ws = tempfile::tempdir().unwrap();
    let app = app(dir.path(), ws.path()).await;
    let client = mcp(&app).await;

    let (is_error, listed, text) = call(&client, "list_coding_agents", json!({})).await;
    assert!(!is_error, "{text}");
    let claude = agent(&listed, "claude-code");
    assert_eq!(claude["installed"], true, "{claude}");
    assert_eq!(claude["version"], "9.9.9 (stand-in)", "{claude}");
    assert_eq!(claude["configured"], false);
    assert_eq!(claude["keyEnv"], "ANTHROPIC_API_KEY");
    assert_eq!(claude["policy"], "prompt", "the default: {claude}");
    let codex = agent(&listed, "codex");
    assert_eq!(codex["installed"], false);
    assert_eq!(codex["install"], "npm install -g @openai/codex");

    configure(
        &app,
        "coding_agents",
        &[
            ("claude_code", "text"),
            ("codex", "text"),
            ("custom_aider", "text"),
        ],
        json!({"claude_code": "allowed", "codex": "allowed", "custom_aider": "blocked"}),
    )
    .await;
    let task = |provider: &str, prompt: &str| json!({"provider": provider, "prompt": prompt});

    // Not installed: how to get it. Blocked: refused, naming the field.
    let (is_error, _, text) = call(&client, "run_coding_task", task("codex", "x")).await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("not installed") && text.contains("npm install -g @openai/codex"),
        "{text}"
    );
    assert!(text.contains("coding_agent_dirs"), "{text}");
    let (is_error, _, text) = call(&client, "run_coding_task", task("custom:aider", "x")).await;
    assert!(
        is_error && text.contains("blocked") && text.contains("custom_aider"),
        "{text}"
    );

    // No key: the service to configure.
    let (is_error, _, text) = call(&client, "run_coding_task", task("claude-code", "x")).await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("'claude_code'") && text.contains("api_key"),
        "names the service and field: {text}"
    );

    configure(
        &app,
        "claude_code",
        &[("api_key", "secret")],
        json!({"api_key": KEY}),
    )
    .await;
    let (is_error, _, text) = call(
        &client,
        "write_file",
        json!({"path": "app/README.md", "content": "an app"}),
    )
    .await;
    assert!(!is_error, "{text}");
    let (is_error, ran, text) = call(
        &client,
        "run_coding_task",
        json!({"provider": "claude-code", "prompt": "add DONE.md", "cwd": "app", "model": "sonnet", "max_turns": 3}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(!text.contains(KEY), "the key never comes back: {text}");
    assert_eq!(ran["success"], true, "{ran}");
    let output = ran["output"].as_str().unwrap();
    assert!(output.contains("prompt: add DONE.md"), "{output}");
    assert!(
        output.contains(
            "-p --output-format text --dangerously-skip-permissions --model sonnet --max-turns 3 --"
        ),
        "{output}"
    );
    assert!(
        output.contains("key ANTHROPIC_API_KEY = [api_key withheld]"),
        "the key reached it as its variable only, and is cut out: {output}"
    );
    assert!(output.contains("cwd: /tmp/work/app"), "{output}");
    assert!(output.contains("proxy: http://127.0.0.1:3128"), "{output}");
    let (is_error, read, text) = call(&client, "read_file", json!({"path": "app/DONE.md"})).await;
    assert!(!is_error, "{text}");
    assert!(read.to_string().contains("done: add DONE.md"), "{read}");
    let first = ran["resultId"].as_str().unwrap().to_owned();

    // No network beyond the provider's API host: the host's loopback is not the sandbox's,
    // and the proxy refuses any other host.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (is_error, ran, text) = call(
        &client,
        "run_coding_task",
        task("claude-code", &format!("net 127.0.0.1:{port}")),
    )
    .await;
    assert!(!is_error, "{text}");
    let output = ran["output"].as_str().unwrap();
    assert!(output.contains("direct: failed"), "{output}");
    assert!(output.contains("tunnel: HTTP/1.1 403"), "{output}");
    assert!(
        listener.accept().is_err(),
        "nothing reached the host's loopback"
    );

    // The time limit kills it.
    let (is_error, ran, text) = call(
        &client,
        "run_coding_task",
        json!({"provider": "claude-code", "prompt": "sleep", "timeout_seconds": 2}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(ran["timedOut"], true, "{ran}");
    assert_eq!(ran["success"], false, "{ran}");
    assert!(
        ran["error"].as_str().unwrap().contains("time limit"),
        "{ran}"
    );

    // Kept: listed newest first, read back without the key.
    let (is_error, listed, text) = call(&client, "list_task_results", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(listed["count"], 3, "{listed}");
    assert_eq!(listed["results"][0]["prompt"], "sleep");
    assert_eq!(listed["results"][2]["resultId"], first.as_str());
    let (is_error, kept, text) =
        call(&client, "get_task_result", json!({"result_id": first})).await;
    assert!(!is_error, "{text}");
    assert_eq!(kept["prompt"], "add DONE.md");
    assert!(!text.contains(KEY), "{text}");
    let (is_error, _, text) =
        call(&client, "get_task_result", json!({"result_id": "ct_nope"})).await;
    assert!(is_error && text.contains("list_task_results"), "{text}");

    // Prompt (gemini-cli's default): a model's call waits for a person's approval; once a
    // person allows it, the same call runs.
    configure(
        &app,
        "gemini_cli",
        &[("api_key", "secret")],
        json!({"api_key": KEY}),
    )
    .await;
    let ask = task("gemini-cli", "add DONE.md");
    let (is_error, _, text) = call(&client, "run_coding_task", ask.clone()).await;
    assert!(is_error && text.contains("awaiting approval"), "{text}");
    let start = text.find("apr_").unwrap();
    let id: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    app.post(
        &format!("/api/v1/approvals/{id}/decision"),
        &json!({"decision": "allow_once"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let (is_error, ran, text) = call(&client, "run_coding_task", ask).await;
    assert!(!is_error, "{text}");
    let output = ran["output"].as_str().unwrap();
    assert!(output.contains("--yolo --prompt"), "{output}");
    assert!(
        output.contains("key GEMINI_API_KEY = [api_key withheld]"),
        "{output}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tools_finds_the_coding_agents() {
    assert_search_finds(&[
        (
            "ask Claude Code to fix the failing test in my project",
            &["run_coding_task"][..],
        ),
        (
            "have a coding agent refactor the parser",
            &["run_coding_task"],
        ),
        ("which coding agents are installed", &["list_coding_agents"]),
        (
            "show the result of my last coding task",
            &["get_task_result", "list_task_results"],
        ),
        ("list my past coding agent runs", &["list_task_results"]),
    ])
    .await;
}
