//! The `codeExecution` group through the real server: off by default and invisible until
//! enabled; then `execute_javascript` runs in the JS sandbox, `execute_shell` changes what
//! `write_file` wrote (the workspace is the sandbox user's), and `package_manager` waits for a
//! person's approval.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

use crate::rest_support::{TestApp, approved, code_execution_app, command_sandbox_works, execute};

fn listed(list: &Value, name: &str) -> bool {
    list["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == name))
}

#[tokio::test]
async fn code_execution_is_off_by_default_and_runs_in_the_sandboxes_once_enabled() {
    let ws = tempfile::tempdir().unwrap();
    let settings = ToolServiceSettings {
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            ws.path().join("workspaces"),
        )),
        ..ToolServiceSettings::default()
    };
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    let tools = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK);
    for name in [
        "execute_shell",
        "execute_python",
        "execute_javascript",
        "sandbox_initialize",
    ] {
        assert!(
            !listed(&tools, name),
            "{name} is listed while its group is off"
        );
    }
    execute(&app, "execute_shell", json!({"command": "id"}))
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");

    app.json(
        Method::PUT,
        "/api/v1/tool-groups/codeExecution",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let tools = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK);
    assert!(listed(&tools, "execute_shell") && listed(&tools, "package_manager"));

    let js = execute(
        &app,
        "execute_javascript",
        json!({"code": "return args.xs.map(x => x * 2)", "args": {"xs": [1, 2, 3]}}),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert!(js.to_string().contains("[2,4,6]"), "{js}");
    let bad = execute(
        &app,
        "execute_javascript",
        json!({"code": "process.exit(1)"}),
    )
    .await;
    assert!(bad.text.contains("process.exit"), "{}", bad.text);

    if !command_sandbox_works().await {
        return;
    }
    execute(
        &app,
        "write_file",
        json!({"path": "log.txt", "content": "by write_file\n"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let shell = execute(
        &app,
        "execute_shell",
        json!({"command": "echo by-shell >> log.txt && cat log.txt"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert!(
        shell.to_string().contains("by write_file\\nby-shell\\n"),
        "{shell}"
    );
    // `package_manager` has the network, so it waits for a person (the default approval rule).
    let pending = execute(&app, "package_manager", json!({"command": "pip list"})).await;
    assert!(pending.text.contains("approval"), "{}", pending.text);
}

/// A server with the `codeExecution` group on, its workspaces under `dir` with `quota_bytes`.
async fn code_app(dir: &std::path::Path, quota_bytes: u64) -> TestApp {
    let workspace = toolsmith_builtins::workspace::WorkspaceSettings {
        quota_bytes,
        ..toolsmith_builtins::workspace::WorkspaceSettings::new(dir.join("workspaces"))
    };
    code_execution_app(ToolServiceSettings::default(), workspace).await
}

/// [`code_app`] in a fresh folder when the command sandbox works here (see
/// [`command_sandbox_works`]).
async fn sandboxed_app(quota_bytes: u64) -> Option<(tempfile::TempDir, TestApp)> {
    if !command_sandbox_works().await {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let app = code_app(dir.path(), quota_bytes).await;
    Some((dir, app))
}

/// Issue 31: `/dev` was a writable tmpfs of half the host's RAM, counted by no quota. Now
/// `/dev` is read-only and `/dev/shm` and `/tmp` are tmpfs of a fixed size
/// (`SandboxLimits::shm_bytes`, `workspace_bytes`): a run writing 1 MiB files until refused
/// stores nothing in `/dev` and at most those sizes in the others, under a 5 MB quota.
#[tokio::test]
async fn every_writable_mount_of_the_command_sandbox_is_bounded() {
    let Some((_dir, app)) = sandboxed_app(5 * 1024 * 1024).await else {
        return;
    };
    let limits = toolsmith_command::SandboxLimits::default();
    // One MiB a file (under the quota's file size limit), 100 files a place at most.
    let fill = |place: &str| {
        format!(
            "n=0; while [ $n -lt 100 ] && head -c 1048576 /dev/zero > {place}/f$n 2>/dev/null; \
             do n=$((n+1)); done; echo {place}=$n"
        )
    };
    let command = [fill("/dev"), fill("/dev/shm"), fill("/tmp")].join("; ");
    let out = execute(&app, "execute_shell", json!({"command": command}))
        .await
        .assert_ok(StatusCode::OK);
    let stdout = out.to_string();
    let written = |place: &str| -> u64 {
        let key = format!("{place}=");
        let stdout = out["content"]["stdout"].as_str().unwrap_or_default();
        stdout
            .lines()
            .find_map(|line| line.strip_prefix(&key))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no count for {place} in {stdout}"))
    };
    let mib = 1024 * 1024;
    assert_eq!(written("/dev"), 0, "{stdout}");
    assert!(written("/dev/shm") * mib <= limits.shm_bytes, "{stdout}");
    assert!(written("/tmp") * mib <= limits.workspace_bytes, "{stdout}");
}

/// Issue 31 (attack run): with `/dev` read-only, the same memory was still reachable without a
/// mount: a `memfd_create` file or a System V shared memory segment is RAM that no quota, tmpfs
/// size or rlimit counts (`RLIMIT_FSIZE` caps one memfd, and 256 of them fit under
/// `RLIMIT_NOFILE`; a segment written and detached leaves `RLIMIT_AS`). One run under a 5 MB
/// quota held 400 MB either way. Both system calls are now refused inside the sandbox.
#[tokio::test]
async fn memory_outside_every_mount_cannot_be_held_by_a_command() {
    let Some((_dir, app)) = sandboxed_app(5 * 1024 * 1024).await else {
        return;
    };
    // Python reaches both calls without a compiler; each prints what it managed.
    let script = r#"
import ctypes, os
try:
    fd = os.memfd_create("m")
    os.write(fd, b"x" * 1048576)
    print("memfd=held")
except OSError as err:
    print("memfd=refused", err.errno)
libc = ctypes.CDLL(None, use_errno=True)
sid = libc.shmget(0, 1048576, 0o1600)
print("shm=held" if sid >= 0 else "shm=refused %d" % ctypes.get_errno())
"#;
    let out = execute(
        &app,
        "execute_shell",
        json!({"command": format!("python3 -c {}", shell_quote(script))}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let stdout = out["content"]["stdout"].as_str().unwrap_or_default();
    assert!(stdout.contains("memfd=refused"), "{out}");
    assert!(stdout.contains("shm=refused"), "{out}");
}

/// `value` as one single-quoted shell word.
fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// Issue 31: `bash -c {{.x}}` ran the caller's value as a script although `eval` is refused.
/// Registration now refuses a placeholder a program runs as code, naming it and the fix; the
/// same value as an argument of a fixed script is accepted.
#[tokio::test]
async fn a_command_tool_running_its_parameter_as_a_script_is_refused_at_registration() {
    let app = TestApp::new().await;
    let body = |name: &str, command: &str| {
        json!({
            "name": name, "kind": "command", "description": "Runs a script",
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
            "code": json!({"command": command}).to_string(),
        })
    };
    for (name, command) in [
        ("via_bash", "bash -c {{.x}}"),
        ("via_sh", "/bin/sh -lc {{.x}}"),
        ("via_python", "python3 -c {{.x}}"),
    ] {
        let res = app.post("/api/v1/custom-tools", &body(name, command)).await;
        let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(
            message.contains("{{.x}}") && message.contains("\"$1\"' _ {{.x}}"),
            "{command}: {message}"
        );
    }
    app.create_tool(&body(
        "as_argument",
        "sh -c 'printf \"%s\\n\" \"$1\"' _ {{.x}}",
    ))
    .await;
}

/// Issue 31 (attack run): the code-option check missed an option between the code option and
/// the placeholder (`sh -c -e {{.x}}`: the shell's first operand after its options is still
/// the script) and an option with an argument before it (`python3 -W ignore -c {{.x}}`); both
/// were accepted and ran the caller's value (`echo PWNED; id` printed PWNED). Both are refused
/// now, and a value after a fixed script stays data.
#[tokio::test]
async fn a_placeholder_after_options_around_a_code_option_is_refused_at_registration() {
    let app = TestApp::new().await;
    let body = |name: &str, command: &str| {
        json!({
            "name": name, "kind": "command", "description": "Runs a script",
            "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
            "command": command,
        })
    };
    for (name, command) in [
        ("sh_c_then_option", "sh -c -e {{.x}}"),
        ("bash_c_then_options", "bash -c -x -e {{.x}}"),
        ("python_option_argument", "python3 -W ignore -c {{.x}}"),
        ("python_x_option", "python3 -X utf8 -c {{.x}}"),
        ("node_require", "node -r ./setup.js -e {{.x}}"),
    ] {
        let res = app.post("/api/v1/custom-tools", &body(name, command)).await;
        let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
        assert!(message.contains("{{.x}}"), "{command}: {message}");
    }
    app.create_tool(&body("after_fixed_script", "sh -c 'echo \"$1\"' -- {{.x}}"))
        .await;
}

/// Issue 31: `glob` with `../**` or `/etc/*` answered an empty list, as if nothing matched.
/// Patterns are relative to the folder searched; one that could only match outside it is an
/// error naming the rule.
#[tokio::test]
async fn glob_refuses_a_pattern_that_leaves_the_workspace_naming_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    let app = code_app(dir.path(), 5 * 1024 * 1024).await;
    execute(
        &app,
        "write_file",
        json!({"path": "docs/a.md", "content": "a"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    for (pattern, path) in [
        ("../**", "."),
        ("/etc/*", "."),
        ("docs/../../*", "."),
        ("../*.md", "docs"),
    ] {
        let res = execute(&app, "glob", json!({"pattern": pattern, "path": path})).await;
        assert!(
            res.text.contains("invalid_arguments")
                && res.text.contains("relative to 'path'")
                && res.text.contains(pattern),
            "{pattern}: {}",
            res.text
        );
    }
    let found = execute(&app, "glob", json!({"pattern": "**/*.md"}))
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(found["content"]["count"], 1, "{found}");
}

/// Whether the workspace's `preinstall` script left its mark.
async fn preinstall_ran(app: &TestApp) -> bool {
    let out = execute(
        app,
        "execute_shell",
        json!({"command": "test -e preinstall-ran && echo yes || echo no"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    out["content"]["stdout"].as_str().unwrap().trim() == "yes"
}

/// Issue 31: approving `package_manager {"command": "npm install"}` ran the workspace's
/// `preinstall` script with the host's network, though the person saw only the command. Now
/// scripts run only when the call says `allowScripts: true`, which the approval shows.
#[tokio::test]
async fn package_installs_run_no_scripts_unless_the_approval_says_so() {
    let Some((_dir, app)) = sandboxed_app(50 * 1024 * 1024).await else {
        return;
    };
    let manifest = json!({
        "name": "w", "version": "1.0.0",
        "scripts": {"preinstall": "touch preinstall-ran"}
    });
    execute(
        &app,
        "write_file",
        json!({"path": "package.json", "content": manifest.to_string()}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let off = approved(
        &app,
        "package_manager",
        json!({"command": "npm install"}),
        |shown| assert_eq!(shown["arguments"], "{\"command\":\"npm install\"}"),
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(off["content"]["scripts"], "off", "{off}");
    assert_eq!(off["content"]["exitCode"], 0, "{off}");
    assert!(
        !preinstall_ran(&app).await,
        "a preinstall script ran without allowScripts"
    );

    let on = approved(
        &app,
        "package_manager",
        json!({"command": "npm install", "allowScripts": true}),
        |shown| {
            let arguments = shown["arguments"].as_str().unwrap();
            assert!(arguments.contains("\"allowScripts\":true"), "{shown}");
        },
    )
    .await
    .assert_ok(StatusCode::OK);
    assert_eq!(on["content"]["scripts"], "allowed", "{on}");
    assert!(
        preinstall_ran(&app).await,
        "allowScripts: true runs the scripts: {on}"
    );
}

/// Issue 32: a requirement-file line `-é` (a dash and a two-byte character) was cut at byte 2,
/// inside the character, and the tool panicked. The flag is the dash and one character.
#[tokio::test]
async fn a_requirement_file_option_with_a_multibyte_character_is_refused_not_a_panic() {
    let Some((_dir, app)) = sandboxed_app(50 * 1024 * 1024).await else {
        return;
    };
    execute(
        &app,
        "write_file",
        json!({"path": "req.txt", "content": "-é\n-éx\n"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let message = approved(
        &app,
        "package_manager",
        json!({"command": "pip install -r req.txt"}),
        |_| {},
    )
    .await
    .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    assert!(
        message.contains("req.txt line 1") && message.contains("not allowed in a requirement file"),
        "{message}"
    );
}

/// Issue 31: `pip install -r req.txt` took an `--index-url` from the file although the option
/// is refused on the command line. Requirement files (nested ones too) are now filtered like
/// the command line, naming the file and line, and nothing runs.
#[tokio::test]
async fn a_requirement_file_is_filtered_like_the_command_line() {
    let Some((_dir, app)) = sandboxed_app(50 * 1024 * 1024).await else {
        return;
    };
    for (path, content) in [
        ("req.txt", "six\n-r deps/more.txt\n"),
        (
            "deps/more.txt",
            "# mirrors\n--index-url http://127.0.0.1:9/simple\nsix\n",
        ),
        ("plain.txt", "-i http://169.254.169.254/simple\n"),
    ] {
        execute(
            &app,
            "write_file",
            json!({"path": path, "content": content}),
        )
        .await
        .assert_ok(StatusCode::OK);
    }
    for (command, named) in [
        ("pip install -r req.txt", "deps/more.txt line 2"),
        ("pip install --requirement=plain.txt", "plain.txt line 1"),
    ] {
        let message = approved(&app, "package_manager", json!({"command": command}), |_| {})
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
        assert!(
            message.contains(named) && message.contains("not allowed in a requirement file"),
            "{command}: {message}"
        );
    }
    let direct = approved(
        &app,
        "package_manager",
        json!({"command": "pip install -i http://127.0.0.1:9/simple six"}),
        |_| {},
    )
    .await
    .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    assert!(direct.contains("'-i' is not allowed"), "{direct}");

    // npm: a `.npmrc` (another registry, another `git`) refuses the run; a `package.json`
    // dependency off the registry is named.
    execute(
        &app,
        "write_file",
        json!({"path": ".npmrc", "content": "registry=http://127.0.0.1:9/\n"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let message = approved(
        &app,
        "package_manager",
        json!({"command": "npm install"}),
        |_| {},
    )
    .await
    .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    assert!(message.contains(".npmrc"), "{message}");
    execute(&app, "delete_file", json!({"path": ".npmrc"}))
        .await
        .assert_ok(StatusCode::OK);
    let manifest = json!({"name": "w", "version": "1.0.0", "dependencies": {"meta": "http://169.254.169.254/x.tgz"}});
    execute(
        &app,
        "write_file",
        json!({"path": "package.json", "content": manifest.to_string()}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let message = approved(
        &app,
        "package_manager",
        json!({"command": "npm install"}),
        |_| {},
    )
    .await
    .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    assert!(
        message.contains("package.json dependencies.meta"),
        "{message}"
    );
}

/// Issue 31: parallel runs each got what was left of the quota as their file size limit, so
/// two runs overshot it twice. Runs in flight now share it: two runs that each write 3 MiB,
/// held together until both have started, leave at most the 4 MiB quota between them.
#[tokio::test]
async fn parallel_runs_share_what_is_left_of_the_quota() {
    let Some((_dir, app)) = sandboxed_app(4 * 1024 * 1024).await else {
        return;
    };
    // Each run marks that it started and waits for the other's mark before writing, so both
    // hold their share at once.
    let run = |me: &str, other: &str| {
        json!({
            "command": format!(
                "touch {me}.in; until [ -e {other}.in ]; do :; done; \
                 head -c 3145728 /dev/zero > {me}.bin; stat -c %s {me}.bin"
            ),
            "timeoutSeconds": 20
        })
    };
    let (a, b) = tokio::join!(
        execute(&app, "execute_shell", run("a", "b")),
        execute(&app, "execute_shell", run("b", "a")),
    );
    let size = |res: &crate::rest_support::TestResponse| -> u64 {
        let data = res.assert_ok(StatusCode::OK);
        data["content"]["stdout"]
            .as_str()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("no size in {data}"))
    };
    let (a, b) = (size(&a), size(&b));
    assert!(
        a + b <= 4 * 1024 * 1024,
        "two parallel runs wrote {a} + {b} bytes under a 4 MiB quota"
    );
}

/// Issue 31: a JS tool's fan-out of `callTool`s ran 256 command sandboxes at once under a
/// concurrency cap of 1, because nested calls took no permit. Each level of `callTool` now has
/// caps of its own: of eight `execute_shell` siblings, each waiting for a second one to start,
/// one runs (and waits in vain until its timeout) and seven are refused at once, naming the
/// rule; the tool that fans out keeps running (no deadlock against its own permit).
#[tokio::test]
async fn a_call_tool_fan_out_is_bounded_by_the_concurrency_cap() {
    if !command_sandbox_works().await {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let settings = ToolServiceSettings {
        limits: toolsmith_service::LimitsSettings {
            max_concurrent_per_user: 1,
            ..toolsmith_service::LimitsSettings::default()
        },
        ..ToolServiceSettings::default()
    };
    let workspace =
        toolsmith_builtins::workspace::WorkspaceSettings::new(dir.path().join("workspaces"));
    let app = code_execution_app(settings, workspace).await;
    let code = "const one = (i) => utils.callTool('execute_shell', {command: \
        `touch in.${i}; until [ $(ls in.* | wc -l) -ge 2 ]; do :; done; echo ok`, \
        timeoutSeconds: 3}).then(() => 'ran', (e) => 'refused: ' + e.message); \
        return await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(one));";
    app.create_tool(&json!({
        "name": "fan_out", "description": "Runs eight shells at once",
        "parameters": {"type": "object"},
        "permissions": ["shell", "filesystem"],
        "code": code,
    }))
    .await;
    let out = app
        .post(
            "/api/v1/custom-tools/fan_out/execute",
            &json!({"arguments": {}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    let outcomes: Vec<String> = out["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{out}"))
        .iter()
        .map(|o| o.as_str().unwrap().to_owned())
        .collect();
    let ran = outcomes.iter().filter(|o| *o == "ran").count();
    assert_eq!(ran, 1, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .filter(|o| *o != "ran")
            .all(|o| o.contains("depth 1") && o.contains("one after another")),
        "{outcomes:?}"
    );
}
