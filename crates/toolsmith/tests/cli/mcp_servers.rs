//! `toolsmith mcp-servers …` through the real binary, with the official Python SDK's upstream
//! (`tests/clients/mcp_upstream.py`): registered only when the program is allowed, its status
//! from a fresh connection, changed and removed.

use std::path::PathBuf;

use crate::support::Env;

fn clients_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/clients")
}

fn python() -> PathBuf {
    clients_dir().join(".venv/bin/python")
}

#[test]
fn servers_are_added_listed_changed_and_removed_from_the_cli() {
    if !toolsmith_core::testkit::require_path("the MCP Python SDK", &python()) {
        return;
    }
    let env = Env::new();
    let python = python().display().to_string();
    let script = clients_dir().join("mcp_upstream.py").display().to_string();
    let add = [
        "mcp-servers",
        "add",
        "up",
        "--command",
        python.as_str(),
        "--arg",
        script.as_str(),
        "--call-timeout",
        "20",
    ];

    // Nothing allowed yet: refused, naming the setting.
    let out = env.run(&["--json"].iter().chain(&add).copied().collect::<Vec<_>>());
    assert_ne!(out.code, 0, "{out:?}");
    let (_, message) = out.error_doc();
    assert!(message.contains("mcp_allowed_commands"), "{message}");

    let config = env.write(
        "toolsmith.toml",
        format!("mcp_allowed_commands = [{python:?}]\n"),
    );
    let with = |args: &[&str]| env.run_with_env(args, None, &[("TOOLSMITH_CONFIG", &config)]);
    let out = with(&["--json"].iter().chain(&add).copied().collect::<Vec<_>>()).expect(0);
    assert_eq!(out.json()["revision"], 1);

    // The status of a fresh connection: connected, its tools listed.
    let listed = with(&["--json", "mcp-servers", "list"]).expect(0).json();
    assert_eq!(listed[0]["name"], "up", "{listed}");
    assert_eq!(listed[0]["state"], "connected", "{listed}");
    assert_eq!(listed[0]["source"], "api");
    assert!(listed[0]["toolCount"].as_u64().unwrap() >= 5, "{listed}");
    let table = with(&["mcp-servers", "list"]).expect(0).stdout;
    assert!(
        table.contains("up") && table.contains("connected"),
        "{table}"
    );

    let mut update: Vec<&str> = add.to_vec();
    update[1] = "update";
    update.extend(["--deny", "wipe", "--expected-revision", "1"]);
    with(&update).expect(0);
    let shown = with(&["--json", "mcp-servers", "show", "up"])
        .expect(0)
        .json();
    assert_eq!(shown["revision"], 2);
    let tools = shown["tools"].to_string();
    assert!(
        tools.contains("mcp_up_echo") && !tools.contains("mcp_up_wipe"),
        "{shown}"
    );
    // A stale revision is refused.
    assert_ne!(with(&update).code, 0);

    // Grants and the access-request workflow.
    let grant = with(&[
        "--json",
        "mcp-grants",
        "set",
        "up",
        "user",
        "bob",
        "--deny",
        "wipe",
    ])
    .expect(0)
    .json();
    assert_eq!(grant["toolDeny"], serde_json::json!(["wipe"]));
    let asked = with(&[
        "--json",
        "--user",
        "bob",
        "mcp-grants",
        "request",
        "up",
        "--tool",
        "wipe",
        "--reason",
        "cleanup",
    ])
    .expect(0)
    .json();
    assert_eq!(asked["status"], "pending");
    // A user asks only for themselves.
    assert_ne!(
        with(&["--user", "bob", "mcp-grants", "request", "nope"]).code,
        0,
        "an unknown server"
    );
    let pending = with(&["--json", "mcp-grants", "requests", "--status", "pending"])
        .expect(0)
        .json();
    assert_eq!(pending.as_array().unwrap().len(), 1, "{pending}");
    let id = asked["id"].as_str().unwrap();
    let approved = with(&["--json", "mcp-grants", "approve", id])
        .expect(0)
        .json();
    assert_eq!(approved["grantId"], grant["id"]);
    assert_ne!(with(&["mcp-grants", "reject", id]).code, 0, "decided once");
    let grants = with(&["--json", "mcp-grants", "list"]).expect(0).json();
    assert_eq!(grants[0]["toolDeny"], serde_json::json!([]), "{grants}");
    let gid = grant["id"].as_str().unwrap();
    with(&["mcp-grants", "remove", gid]).expect(0);

    let out = with(&["mcp-servers", "remove", "up"]).expect(0);
    assert!(out.stdout.contains("removed MCP server up"), "{out:?}");
    assert_ne!(with(&["mcp-servers", "remove", "up"]).code, 0);
    assert_eq!(
        with(&["--json", "mcp-servers", "list"]).expect(0).json(),
        serde_json::json!([])
    );
}

#[test]
fn http_and_sse_servers_are_checked_from_the_cli_with_the_fix_named() {
    let env = Env::new();
    let add = |extra: &[&str]| {
        let mut args = vec!["--json", "mcp-servers", "add", "remote"];
        args.extend_from_slice(extra);
        env.run(&args)
    };
    // A bearer token in clear is never stored.
    let out = add(&[
        "--url",
        "https://mcp.example.com/mcp",
        "--bearer-token",
        "sk-clear-token-0123456789",
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    let (_, message) = out.error_doc();
    assert!(message.contains("Config Center reference"), "{message}");
    // A loopback upstream the egress policy does not list.
    let out = add(&["--url", "http://127.0.0.1:9/mcp"]);
    assert_ne!(out.code, 0, "{out:?}");
    let (_, message) = out.error_doc();
    assert!(message.contains("allowed_private_hosts"), "{message}");
    // A program and a URL at once, or neither.
    assert_ne!(
        add(&["--url", "https://x.test/mcp", "--command", "/bin/true"]).code,
        0
    );
    assert_ne!(add(&[]).code, 0);
    // A legacy HTTP+SSE server: the same rules, and a URL it cannot go without.
    let out = add(&["--transport", "sse", "--url", "http://127.0.0.1:9/sse"]);
    assert_ne!(out.code, 0, "{out:?}");
    let (_, message) = out.error_doc();
    assert!(message.contains("allowed_private_hosts"), "{message}");
    let out = add(&["--transport", "sse", "--command", "/bin/true"]);
    assert_ne!(out.code, 0, "{out:?}");
    let (_, message) = out.error_doc();
    assert!(message.contains("needs url"), "{message}");
    let listed = env.run(&["--json", "mcp-servers", "list"]).expect(0).json();
    assert_eq!(listed, serde_json::json!([]), "{listed}");

    // Accepted once the egress policy lists its host (registered switched off: nothing is
    // reached).
    let config = env.write(
        "toolsmith.toml",
        "[egress]\nallowed_private_hosts = [\"127.0.0.1:9\"]\n",
    );
    let added = env
        .run_with_env(
            &[
                "--json",
                "mcp-servers",
                "add",
                "legacy",
                "--transport",
                "sse",
                "--url",
                "http://127.0.0.1:9/sse",
                "--bearer-token",
                "{{config.legacy.token}}",
                "--disabled",
            ],
            None,
            &[("TOOLSMITH_CONFIG", &config)],
        )
        .expect(0)
        .json();
    assert_eq!(added["config"]["transport"], "sse", "{added}");
    assert_eq!(added["config"]["url"], "http://127.0.0.1:9/sse", "{added}");
    assert_eq!(added["state"], "disabled", "{added}");
}

#[test]
fn a_servers_env_is_held_to_the_allowlist_and_never_holds_a_secret_in_clear_from_the_cli() {
    let env = Env::new();
    let config = env.write(
        "toolsmith.toml",
        "mcp_allowed_commands = [\"/bin/true\"]\nmcp_allowed_env = [\"LOG_LEVEL\"]\n",
    );
    // Registered switched off: nothing is started, only the rules are met.
    let add = |name: &str, extra: &[&str]| {
        let mut args = vec!["--json", "mcp-servers", "add", name, "--disabled"];
        args.extend_from_slice(extra);
        env.run_with_env(&args, None, &[("TOOLSMITH_CONFIG", &config)])
    };
    for variable in ["LD_PRELOAD=/tmp/hook.so", "PYTHONPATH=/tmp", "PATH=/tmp"] {
        let out = add("hooked", &["--command", "/bin/true", "--env", variable]);
        assert_ne!(out.code, 0, "{out:?}");
        let (_, message) = out.error_doc();
        let name = variable.split('=').next().unwrap_or_default();
        assert!(
            message.contains(name) && message.contains("mcp_allowed_env"),
            "{message}"
        );
    }
    // A credential in clear, in env or in a header, is refused with the fix named.
    let out = add(
        "clear",
        &[
            "--command",
            "/bin/true",
            "--env",
            "GITHUB_TOKEN=ghp_clear0123456789abcdefghijklmnopqrstu",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    let (_, message) = out.error_doc();
    assert!(
        message.contains("GITHUB_TOKEN") && message.contains("Config Center reference"),
        "{message}"
    );
    let out = add(
        "clearheader",
        &[
            "--url",
            "https://mcp.example.com/mcp",
            "--header",
            "X-Api-Key=sk-clear-0123456789abcdef",
        ],
    );
    assert_ne!(out.code, 0, "{out:?}");
    let (_, message) = out.error_doc();
    assert!(
        message.contains("X-Api-Key") && message.contains("Config Center reference"),
        "{message}"
    );
    let listed = env
        .run_with_env(
            &["--json", "mcp-servers", "list", "--wait", "0"],
            None,
            &[("TOOLSMITH_CONFIG", &config)],
        )
        .expect(0)
        .json();
    assert_eq!(listed, serde_json::json!([]), "{listed}");
    // A listed name and a credential as a reference are accepted.
    let added = add(
        "fine",
        &[
            "--command",
            "/bin/true",
            "--env",
            "LOG_LEVEL=warn",
            "--env",
            "GITHUB_TOKEN={{config.github.token}}",
        ],
    )
    .expect(0)
    .json();
    assert_eq!(
        added["config"]["envNames"],
        serde_json::json!(["GITHUB_TOKEN", "LOG_LEVEL"]),
        "{added}"
    );
}

#[test]
fn a_stored_policy_naming_a_server_that_left_the_configuration_file_warns_and_never_locks_out() {
    let env = Env::new();
    let with_server = env.write(
        "with.toml",
        "[[mcp_servers]]\nname = \"gone\"\ncommand = \"/bin/true\"\nenabled = false\n",
    );
    let without = env.write("without.toml", "");
    let policy = env.write("policy.toml", "deny = [\"group:mcp:gone\"]\n");
    env.run_with_env(
        &["policy", "set", &policy],
        None,
        &[("TOOLSMITH_CONFIG", &with_server)],
    )
    .expect(0);
    // The server left the file: the stored policy still names its group. Every command keeps
    // working (the group has no tools now), with a warning naming it.
    let without_server =
        |args: &[&str]| env.run_with_env(args, None, &[("TOOLSMITH_CONFIG", &without)]);
    let shown = without_server(&["--json", "policy", "show"]).expect(0);
    assert_eq!(shown.json()["source"], "store", "{shown:?}");
    assert!(
        shown.stderr.contains("group:mcp:gone"),
        "no warning: {}",
        shown.stderr
    );
    without_server(&["--json", "mcp-servers", "list", "--wait", "0"]).expect(0);
    let cleared = without_server(&["--json", "policy", "clear"]).expect(0);
    assert_eq!(cleared.json()["source"], "none", "{cleared:?}");
    let shown = without_server(&["policy", "show"]).expect(0);
    assert!(!shown.stderr.contains("group:mcp:gone"), "{}", shown.stderr);
}

#[test]
fn cli_commands_start_only_the_upstreams_they_need_and_run_waits_for_its_server() {
    if !toolsmith_core::testkit::require_path("the MCP Python SDK", &python()) {
        return;
    }
    let env = Env::new();
    // Each server notes its start in `starts` (a line with its name) before it serves.
    let starts = env.write("starts", "");
    let python = python().display().to_string();
    let script = clients_dir().join("mcp_upstream.py").display().to_string();
    let server = |name: &str| {
        format!(
            "[[mcp_servers]]\nname = {name:?}\ncommand = \"/bin/sh\"\nargs = [\"-c\", {:?}]\n",
            format!("echo {name} >> '{starts}'; exec '{python}' '{script}'")
        )
    };
    let config = env.write(
        "toolsmith.toml",
        format!(
            "{}{}[[mcp_servers]]\nname = \"broken\"\ncommand = \"/bin/false\"\n",
            server("up"),
            server("other")
        ),
    );
    let with = |args: &[&str]| env.run_with_env(args, None, &[("TOOLSMITH_CONFIG", &config)]);
    let started = || std::fs::read_to_string(&starts).unwrap_or_default();

    // `run` of a bridged tool connects its server (only that one) and waits for it.
    let out = with(&[
        "--json",
        "run",
        "mcp_up_echo",
        "--args",
        r#"{"text": "bridged from the cli"}"#,
    ])
    .expect(0);
    assert!(out.stdout.contains("bridged from the cli"), "{out:?}");
    assert_eq!(started(), "up\n");

    // Commands that need no upstream start none.
    std::fs::write(&starts, "").unwrap();
    with(&["--json", "tool", "list"]).expect(0);
    with(&["--json", "policy", "show"]).expect(0);
    with(&["--json", "approvals", "list"]).expect(0);
    with(&["--json", "mcp-grants", "list"]).expect(0);
    assert_eq!(started(), "", "an unrelated command started upstreams");

    // A server that cannot start: the answer says so, with the reason.
    let out = with(&["--json", "run", "mcp_broken_echo", "--args", "{}"]);
    assert_ne!(out.code, 0, "{out:?}");
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("MCP server 'broken' is not connected (down)"),
        "{said}"
    );
}
