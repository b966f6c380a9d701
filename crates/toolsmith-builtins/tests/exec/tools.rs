//! `execute_shell`, `execute_python`, `compile_code` and `package_manager`: success, bad
//! arguments (the error names the fix), limits, isolation, and no sandbox.

use serde_json::json;
use toolsmith_core::ErrorKind;

use super::Fixture;
use crate::support::{failed, succeeded};

#[tokio::test]
async fn execute_shell_runs_in_the_workspace_and_changes_what_the_file_tools_wrote() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let args = json!({"path": "src/notes.txt", "content": "from write_file\n"});
    succeeded(
        "write_file",
        &args,
        fx.call("write_file", args.clone()).await,
    );
    let args = json!({"command": "pwd; cat src/notes.txt; echo from-shell >> src/notes.txt; echo made > made.txt"});
    let out = succeeded(
        "execute_shell",
        &args,
        fx.call("execute_shell", args.clone()).await,
    );
    assert_eq!(out["stdout"], "/tmp/work\nfrom write_file\n", "{out}");
    assert_eq!(
        (out["success"].clone(), out["exitCode"].clone()),
        (json!(true), json!(0))
    );
    let args = json!({"path": "src/notes.txt"});
    let read = succeeded("read_file", &args, fx.call("read_file", args.clone()).await);
    assert!(read.to_string().contains("from-shell"), "{read}");
    // The file tools change what the sandbox made.
    let args = json!({"path": "made.txt", "content": "over", "overwrite": true});
    succeeded(
        "write_file",
        &args,
        fx.call("write_file", args.clone()).await,
    );

    let args = json!({"command": "pwd; exit 3", "cwd": "src"});
    let out = succeeded(
        "execute_shell",
        &args,
        fx.call("execute_shell", args.clone()).await,
    );
    assert_eq!(out["stdout"], "/tmp/work/src\n");
    assert_eq!(
        (out["success"].clone(), out["exitCode"].clone()),
        (json!(false), json!(3))
    );
}

#[tokio::test]
async fn execute_shell_refuses_bad_arguments_and_dangerous_commands_with_the_fix() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    for (args, kind, needle) in [
        (json!({}), ErrorKind::InvalidArguments, "command"),
        (
            json!({"command": "  "}),
            ErrorKind::InvalidArguments,
            "non-empty",
        ),
        (
            json!({"command": "ls", "timeoutSeconds": 31}),
            ErrorKind::InvalidArguments,
            "timeoutSeconds",
        ),
        (
            json!({"command": "ls", "cwd": "missing"}),
            ErrorKind::ExecutionError,
            "list_directory",
        ),
        (
            json!({"command": "ls", "cwd": "../bob"}),
            ErrorKind::InvalidArguments,
            "..",
        ),
        (json!({"command": "rm -rf /"}), ErrorKind::Denied, "refused"),
        (
            json!({"command": ":(){ :|:& };:"}),
            ErrorKind::Denied,
            "refused",
        ),
        (
            json!({"command": "x".repeat(200 * 1024)}),
            ErrorKind::InvalidArguments,
            "write_file",
        ),
    ] {
        let res = fx.call("execute_shell", args.clone()).await;
        let message = failed("execute_shell", &args, &res, kind);
        assert!(message.contains(needle), "{args}: {message}");
    }
}

#[tokio::test]
async fn execute_shell_limits_time_and_output() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let args = json!({"command": "echo started; sleep 20", "timeoutSeconds": 1});
    let out = succeeded(
        "execute_shell",
        &args,
        fx.call("execute_shell", args.clone()).await,
    );
    assert_eq!(out["timedOut"], json!(true), "{out}");
    assert_eq!(out["success"], json!(false));
    assert!(
        out["error"].as_str().unwrap().contains("time limit"),
        "{out}"
    );

    let args = json!({"command": "head -c 3000000 /dev/zero | tr '\\0' a; echo"});
    let out = succeeded(
        "execute_shell",
        &args,
        fx.call("execute_shell", args.clone()).await,
    );
    assert_eq!(out["truncated"], json!(true));
    assert_eq!(
        out["stdout"].as_str().unwrap().len(),
        toolsmith_builtins::exec::STDOUT_CAP
    );
}

#[tokio::test]
async fn python_and_shell_cannot_reach_the_data_dir_the_key_another_workspace_or_the_network() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let data = fx.data.display().to_string();
    let bob = fx.dir("bob").display().to_string();
    let code = format!(
        r#"
import glob, os, socket
for path in ["{data}/secret.key", "{bob}/notes.txt", "/etc/shadow", "../../bob/workspace/notes.txt"]:
    try:
        print(open(path).read())
    except OSError as e:
        print("refused", type(e).__name__)
found = []
for top in ["/tmp", "/mnt", "/home", "/root", "/var", "/run", "/etc"]:
    found += glob.glob(top + "/**/secret.key", recursive=True) + glob.glob(top + "/**/notes.txt", recursive=True)
print("found", found)
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("127.0.0.1", {port}))
    print("connected")
except OSError as e:
    print("no network", type(e).__name__)
"#
    );
    let args = json!({"code": code});
    let out = succeeded(
        "execute_python",
        &args,
        fx.call("execute_python", args.clone()).await,
    );
    let stdout = out["stdout"].as_str().unwrap();
    assert_eq!(stdout.matches("refused").count(), 4, "{out}");
    assert!(stdout.contains("found []"), "{out}");
    assert!(stdout.contains("no network"), "{out}");

    let command = format!(
        "cat {data}/secret.key {bob}/notes.txt 2>&1; ls {data} 2>&1; \
         grep -rs -e SECRET-KEY -e BOB-PRIVATE /tmp /etc /home /root /mnt /var; \
         python3 probe.py 2>/dev/null && echo connected || echo offline"
    );
    // The deny patterns refuse socket one-liners; a script in the workspace is what gets past
    // them, and the sandbox has no network for it either.
    let probe = format!("import socket\nsocket.create_connection(('127.0.0.1', {port}), 2)\n");
    let args = json!({"path": "probe.py", "content": probe});
    succeeded(
        "write_file",
        &args,
        fx.call("write_file", args.clone()).await,
    );
    let args = json!({"command": command});
    let out = succeeded(
        "execute_shell",
        &args,
        fx.call("execute_shell", args.clone()).await,
    );
    assert!(
        out["stdout"].as_str().unwrap().ends_with("offline\n"),
        "{out}"
    );
}

#[tokio::test]
async fn execute_python_runs_code_with_arguments_and_names_bad_ones() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let args = json!({"code": "import sys, json\nprint(json.dumps(sys.argv[1:]))\nopen('out.txt','w').write('py')", "args": ["a b", "$(id)"]});
    let out = succeeded(
        "execute_python",
        &args,
        fx.call("execute_python", args.clone()).await,
    );
    assert_eq!(out["stdout"], "[\"a b\", \"$(id)\"]\n", "{out}");
    assert_eq!(
        std::fs::read_to_string(fx.dir("alice").join("out.txt")).unwrap(),
        "py"
    );

    let args = json!({"code": "raise SystemExit('boom')"});
    let out = succeeded(
        "execute_python",
        &args,
        fx.call("execute_python", args.clone()).await,
    );
    assert_eq!(
        (out["exitCode"].clone(), out["stderr"].clone()),
        (json!(1), json!("boom\n"))
    );

    for (args, needle) in [
        (json!({"code": ""}), "non-empty"),
        (json!({"code": "print(1)", "args": [1]}), "args"),
        (
            json!({"code": "print(1)", "timeoutSeconds": 0}),
            "timeoutSeconds",
        ),
        (json!({"code": "print(1)", "extra": true}), "extra"),
    ] {
        let res = fx.call("execute_python", args.clone()).await;
        let message = failed("execute_python", &args, &res, ErrorKind::InvalidArguments);
        assert!(message.contains(needle), "{args}: {message}");
    }
}

#[tokio::test]
async fn compile_code_reports_success_and_diagnostics_for_the_hosts_languages() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let here = toolsmith_builtins::exec::compile::available();
    for (language, good, bad) in [
        (
            "c",
            "int main(void) { return 0; }",
            "int main(void) { return x; }",
        ),
        ("python", "print('hi')", "def f(:\n"),
        ("javascript", "const a = 1;", "const = ;"),
    ] {
        if !here.contains(&language) {
            eprintln!("{language}: no compiler on this host");
            continue;
        }
        let args = json!({"code": good, "language": language});
        let out = succeeded(
            "compile_code",
            &args,
            fx.call("compile_code", args.clone()).await,
        );
        assert_eq!(out["success"], json!(true), "{language}: {out}");
        let args = json!({"code": bad, "language": language});
        let out = succeeded(
            "compile_code",
            &args,
            fx.call("compile_code", args.clone()).await,
        );
        assert_eq!(out["success"], json!(false), "{language}: {out}");
        assert!(
            !out["diagnostics"].as_str().unwrap().is_empty(),
            "{language}: {out}"
        );
    }
    assert!(
        here.contains(&"python"),
        "python3 is a test prerequisite: {here:?}"
    );

    let args = json!({"code": "x", "language": "cobol"});
    let res = fx.call("compile_code", args.clone()).await;
    let message = failed("compile_code", &args, &res, ErrorKind::InvalidArguments);
    assert!(message.contains("must be one of c, cpp, java"), "{message}");
}

#[tokio::test]
async fn package_manager_needs_approval_takes_plain_commands_and_installs_into_the_workspace() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let tool = toolsmith_builtins::tools(&toolsmith_builtins::BuiltinEnv::default())
        .into_iter()
        .find(|t| t.definition.name == "package_manager")
        .unwrap();
    assert!(tool.definition.requires_confirmation && tool.requires_approval);
    assert!(
        tool.permissions
            .contains(&toolsmith_core::Permission::Network)
    );

    for (command, needle) in [
        ("pip install x; cat /etc/passwd", "shell syntax"),
        ("pip install $(id)", "shell syntax"),
        ("apt install curl", "pip or npm"),
        ("pip wheel x", "not allowed"),
        ("pip install --target=/tmp x", "outside your workspace"),
        ("npm install -g left-pad", "outside your workspace"),
    ] {
        let args = json!({"command": command});
        let res = fx.call("package_manager", args.clone()).await;
        let message = failed("package_manager", &args, &res, ErrorKind::InvalidArguments);
        assert!(message.contains(needle), "{command}: {message}");
    }
    // `pip list` needs no index: the run shows pip works from the workspace.
    let args = json!({"command": "pip list --user"});
    let out = succeeded(
        "package_manager",
        &args,
        fx.call("package_manager", args.clone()).await,
    );
    assert_eq!(out["exitCode"], json!(0), "{out}");
}

#[tokio::test]
async fn without_a_sandbox_every_code_tool_answers_why_and_runs_nothing() {
    let fx = Fixture::without_sandbox("bubblewrap was not found");
    let marker = fx.dir("alice").join("ran.txt");
    for (tool, args) in [
        ("execute_shell", json!({"command": "touch ran.txt"})),
        ("execute_python", json!({"code": "open('ran.txt','w')"})),
        (
            "compile_code",
            json!({"code": "x = 1", "language": "python"}),
        ),
        ("package_manager", json!({"command": "pip list"})),
        ("sandbox_initialize", json!({})),
    ] {
        let res = fx.call(tool, args.clone()).await;
        let message = failed(tool, &args, &res, ErrorKind::ExecutionError);
        assert!(
            message.contains("bubblewrap was not found") && message.contains("Nothing was run"),
            "{tool}: {message}"
        );
    }
    assert!(!marker.exists());
}

#[tokio::test]
async fn code_runs_see_and_change_nothing_of_the_deny_listed_paths() {
    let Some(fx) = Fixture::with_workspaces(|config| {
        config.denied_prefixes.push("secrets/keys/".to_owned());
        config.denied_prefixes.push("private.txt".to_owned());
    })
    .await
    else {
        return;
    };
    let ws = fx.dir("alice");
    std::fs::create_dir_all(ws.join(".toolsmith")).unwrap();
    std::fs::write(ws.join(".toolsmith/state.json"), "TOOLSMITH-STATE-7f3").unwrap();
    std::fs::create_dir_all(ws.join("secrets/keys")).unwrap();
    std::fs::write(ws.join("secrets/keys/id"), "KEY-MATERIAL-2b9").unwrap();
    std::fs::write(ws.join("secrets/open.txt"), "not-denied").unwrap();
    std::fs::write(ws.join("private.txt"), "PRIVATE-FILE-c41").unwrap();
    let command = "cat .toolsmith/state.json secrets/keys/id private.txt secrets/open.txt 2>&1; \
                   ls -a .toolsmith secrets/keys; \
                   echo planted > .toolsmith/new; echo planted > secrets/keys/new; \
                   echo planted > private.txt; rm -f .toolsmith/state.json secrets/keys/id; true";
    for (tool, args) in [
        ("execute_shell", json!({"command": command})),
        (
            "execute_python",
            json!({"code": format!("import subprocess; print(subprocess.run({command:?}, shell=True, capture_output=True, text=True).stdout)")}),
        ),
    ] {
        let out = succeeded(tool, &args, fx.call(tool, args.clone()).await);
        let text = out.to_string();
        for secret in [
            "TOOLSMITH-STATE-7f3",
            "KEY-MATERIAL-2b9",
            "PRIVATE-FILE-c41",
        ] {
            assert!(!text.contains(secret), "{tool} read a denied path: {text}");
        }
        assert!(text.contains("not-denied"), "{tool}: {text}");
        assert!(!ws.join(".toolsmith/new").exists(), "{tool}");
        assert!(!ws.join("secrets/keys/new").exists(), "{tool}");
        let read = |p: &str| std::fs::read_to_string(ws.join(p)).unwrap();
        assert_eq!(
            read(".toolsmith/state.json"),
            "TOOLSMITH-STATE-7f3",
            "{tool}"
        );
        assert_eq!(read("secrets/keys/id"), "KEY-MATERIAL-2b9", "{tool}");
        assert_eq!(read("private.txt"), "PRIVATE-FILE-c41", "{tool}");
    }
}

#[tokio::test]
async fn code_runs_count_against_the_quota_and_wait_for_deletions_once_it_is_full() {
    const QUOTA: u64 = 64 * 1024;
    let Some(fx) = Fixture::with_workspaces(|config| config.quota_bytes = QUOTA).await else {
        return;
    };
    let ws = fx.dir("alice");
    // No one file grows past what is left of the quota.
    let args = json!({"command": "head -c 500000 /dev/zero > big; echo done"});
    let out = succeeded(
        "execute_shell",
        &args,
        fx.call("execute_shell", args.clone()).await,
    );
    assert_eq!(out["stdout"], "done\n", "{out}");
    let size = std::fs::metadata(ws.join("big")).unwrap().len();
    assert!(
        size <= QUOTA,
        "a run wrote a {size}-byte file past the {QUOTA}-byte quota"
    );
    std::fs::remove_file(ws.join("big")).unwrap();

    // Many files, each within the room, together past it: the answer says so.
    let args = json!({"command": "for i in 1 2 3; do head -c 30000 /dev/zero > f$i; done"});
    let out = succeeded(
        "execute_shell",
        &args,
        fx.call("execute_shell", args.clone()).await,
    );
    assert_eq!(out["quota"]["exceeded"], true, "{out}");
    let message = out["quota"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("delete_file"), "{message}");

    // Then nothing runs until files are deleted.
    for (tool, args) in [
        ("execute_shell", json!({"command": "echo more > more.txt"})),
        (
            "execute_python",
            json!({"code": "open('more.txt', 'w').write('more')"}),
        ),
    ] {
        let res = fx.call(tool, args.clone()).await;
        let message = failed(tool, &args, &res, ErrorKind::Denied);
        assert!(message.contains("delete files"), "{message}");
    }
    assert!(!ws.join("more.txt").exists());
    let args = json!({"path": "f1"});
    succeeded(
        "delete_file",
        &args,
        fx.call("delete_file", args.clone()).await,
    );
    let args = json!({"command": "echo again"});
    let out = succeeded(
        "execute_shell",
        &args,
        fx.call("execute_shell", args.clone()).await,
    );
    assert_eq!(out["stdout"], "again\n", "{out}");
    assert!(out.get("quota").is_none(), "{out}");
}
