//! Tests of the real sandbox: each one starts bubblewrap on this host.
//!
//! Without bubblewrap these tests fail, or skip with `TOOLSMITH_ALLOW_SKIP=1`
//! (`toolsmith_core::testkit`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::{CommandOutput, CommandSandbox, RunRequest, check_denied, render};

async fn sandbox() -> Option<CommandSandbox> {
    toolsmith_core::testkit::require(
        "bubblewrap (the command sandbox)",
        CommandSandbox::probe().await,
    )
}

fn request<'a>(command: &'a str, env: &'a BTreeMap<String, String>) -> RunRequest<'a> {
    RunRequest {
        command,
        args: &[],
        workspace: None,
        hidden: &[],
        max_file_size: None,
        env,
        working_dir: None,
        timeout: Duration::from_secs(20),
        network: false,
        proxy_socket: None,
        program: None,
        stdout_cap: 1024 * 1024,
        stderr_cap: 1024 * 1024,
    }
}

async fn run(sandbox: &CommandSandbox, command: &str) -> CommandOutput {
    let env = BTreeMap::new();
    sandbox.run(&request(command, &env)).await.unwrap()
}

#[tokio::test]
async fn runs_a_command_and_separates_stdout_from_stderr() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let out = run(&sandbox, "echo out; echo err >&2; exit 3").await;
    assert_eq!(out.stdout, "out\n");
    assert_eq!(out.stderr, "err\n");
    assert_eq!(
        (out.exit_code, out.signal, out.timed_out),
        (Some(3), None, false)
    );
    assert!(!out.stdout_truncated && !out.stderr_truncated);
}

#[tokio::test]
async fn a_signal_is_reported() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let out = run(&sandbox, "kill -KILL $$").await;
    assert_eq!((out.exit_code, out.signal), (Some(137), Some(9)));
}

#[tokio::test]
async fn runs_as_nobody_in_a_private_writable_workspace_with_a_read_only_system() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let out = run(
        &sandbox,
        "id -u; pwd; echo data > f && cat f; touch /usr/x 2>/dev/null || echo usr-ro; touch /etc/x 2>/dev/null || echo etc-ro; touch /x 2>/dev/null || echo root-ro",
    )
    .await;
    assert_eq!(
        out.stdout, "65534\n/tmp/work\ndata\nusr-ro\netc-ro\nroot-ro\n",
        "{out:?}"
    );
}

#[tokio::test]
async fn working_dir_is_created_inside_the_workspace() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let env = BTreeMap::new();
    let mut req = request("pwd; ls -A", &env);
    req.working_dir = Some("job/out");
    let out = sandbox.run(&req).await.unwrap();
    assert_eq!(out.stdout, "/tmp/work/job/out\n");

    req.working_dir = Some("../etc");
    let err = sandbox.run(&req).await.unwrap_err();
    assert_eq!(err.code(), "invalid_run_request");
}

#[tokio::test]
async fn cannot_read_a_data_dir_on_the_host() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let data_dir = tempfile::Builder::new()
        .prefix("toolsmith-data")
        .tempdir_in("/tmp")
        .unwrap();
    let secret_file = data_dir.path().join("toolsmith.db");
    std::fs::write(&secret_file, "TOP-SECRET-ROW").unwrap();
    let command = format!(
        "cat {0} 2>&1; ls {1} 2>&1; ls /root /work /home 2>&1; cat /etc/shadow /etc/passwd 2>&1; grep -rs TOP-SECRET-ROW /tmp /etc /run /dev/shm /var; echo done",
        secret_file.display(),
        data_dir.path().display()
    );
    let out = run(&sandbox, &command).await;
    assert!(out.stdout.ends_with("done\n"), "{out:?}");
    assert!(!out.stdout.contains("TOP-SECRET-ROW"), "{out:?}");
    assert!(out.stdout.contains("No such file or directory"), "{out:?}");
}

#[tokio::test]
async fn starts_from_an_empty_env_plus_the_tools_own_vars() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let server_env: Vec<(String, String)> = std::env::vars().collect();
    assert!(!server_env.is_empty());
    // Reference mistake: a tool with no env inherited the whole server environment.
    let out = run(&sandbox, "env | sort").await;
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    assert_eq!(names, ["HOME", "LANG", "PATH", "PWD", "TMPDIR"], "{out:?}");
    let env = BTreeMap::from([("API_TOKEN".to_owned(), "tool-secret-1".to_owned())]);
    let out = sandbox.run(&request("env", &env)).await.unwrap();
    let mut names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["API_TOKEN", "HOME", "LANG", "PATH", "PWD", "TMPDIR"],
        "{out:?}"
    );
    assert!(out.stdout.contains("API_TOKEN=tool-secret-1\n"));
    for (name, value) in &server_env {
        assert!(
            !out.stdout.contains(&format!("{name}={value}\n")) || name == "LANG",
            "server var {name} leaked"
        );
    }
}

#[tokio::test]
async fn no_network_without_permission_and_network_with_it() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let command = format!(
        "bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null && echo connected || echo refused"
    );
    let out = run(&sandbox, &command).await;
    assert_eq!(out.stdout, "refused\n");

    let env = BTreeMap::new();
    let mut req = request(&command, &env);
    req.network = true;
    let (out, accepted) = tokio::join!(sandbox.run(&req), listener.accept());
    assert_eq!(out.unwrap().stdout, "connected\n");
    assert!(accepted.is_ok());
}

#[tokio::test]
async fn process_count_is_capped() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let out = run(
        &sandbox,
        "for i in $(seq 1 200); do sleep 5 & done 2>&1 | grep -m1 -o 'fork'; echo end",
    )
    .await;
    assert_eq!(out.stdout, "fork\nend\n", "{out:?}");
}

#[tokio::test]
async fn a_fork_bomb_is_contained_and_ends_at_the_timeout() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let env = BTreeMap::new();
    // The shell forks its `sleep` before the bomb and then only waits (a builtin): were the
    // `sleep` forked after the bomb, a bomb that filled the cap first would make that fork fail
    // and the shell exit at once, as it did on a loaded machine, instead of running to the
    // timeout.
    let mut req = request("sleep 600 & bomb() { bomb | bomb & }; bomb; wait", &env);
    req.timeout = Duration::from_secs(5);
    let out = sandbox.run(&req).await.unwrap();
    assert!(out.timed_out, "{out:?}");
    assert!(
        out.stderr.contains("fork"),
        "the process cap was never hit: {out:?}"
    );
    wait_until_gone("bomb() { bomb");
    assert_eq!(host_processes_matching("bomb() { bomb"), 0);
}

#[tokio::test]
async fn timeout_kills_the_whole_process_tree() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let env = BTreeMap::new();
    let mut req = request("echo started; sleep 987651 & sleep 987652 & wait", &env);
    req.timeout = Duration::from_secs(4);
    let out = sandbox.run(&req).await.unwrap();
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(9));
    assert_eq!(out.stdout, "started\n");
    wait_until_gone("98765");
    assert_eq!(host_processes_matching("98765"), 0);
}

#[tokio::test]
async fn output_is_capped_without_deadlock() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let env = BTreeMap::new();
    let mut req = request(
        "head -c 5000000 /dev/zero | tr '\\0' a; head -c 3000000 /dev/zero | tr '\\0' b >&2; echo tail",
        &env,
    );
    req.stdout_cap = 1000;
    req.stderr_cap = 10;
    let out = sandbox.run(&req).await.unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout, "a".repeat(1000));
    assert_eq!(out.stderr, "b".repeat(10));
    assert!(out.stdout_truncated && out.stderr_truncated);
}

#[tokio::test]
async fn file_size_is_capped() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let out = run(
        &sandbox,
        "head -c 100000000 /dev/zero > big 2>/dev/null; echo $?; stat -c %s big",
    )
    .await;
    let limit = sandbox.limits().max_file_size_bytes;
    assert_ne!(out.stdout.lines().next(), Some("0"), "{out:?}");
    assert!(
        out.stdout
            .lines()
            .nth(1)
            .is_some_and(|size| size.parse::<u64>().unwrap() <= limit),
        "{out:?}"
    );
}

/// Issue 31: `/dev` was bubblewrap's tmpfs of half the host's RAM. Each writable mount is now
/// bounded: `/dev` read-only (its device nodes still work), `/dev/shm` and `/tmp` sized tmpfs.
#[tokio::test]
async fn every_writable_mount_is_bounded_and_dev_is_read_only() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let fill = |place: &str| {
        format!(
            "n=0; while [ $n -lt 100 ] && head -c 1048576 /dev/zero > {place}/f$n 2>/dev/null; \
             do n=$((n+1)); done; echo $n"
        )
    };
    let script = [
        fill("/dev"),
        fill("/dev/shm"),
        fill("/tmp"),
        "echo ok > /dev/null && head -c 3 /dev/urandom | wc -c".to_owned(),
    ]
    .join("; ");
    let out = run(&sandbox, &script).await;
    let counts: Vec<u64> = out
        .stdout
        .lines()
        .map(|line| line.trim().parse().unwrap())
        .collect();
    let mib = 1024 * 1024;
    let limits = sandbox.limits();
    assert_eq!(counts.len(), 4, "{out:?}");
    assert_eq!(counts[0], 0, "{out:?}");
    assert!(counts[1] * mib <= limits.shm_bytes, "{out:?}");
    assert!(counts[2] * mib <= limits.workspace_bytes, "{out:?}");
    assert_eq!(counts[3], 3, "device nodes keep working: {out:?}");
}

#[tokio::test]
async fn nested_user_namespaces_are_refused() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let out = run(
        &sandbox,
        "unshare -U true 2>/dev/null && echo nested || echo refused",
    )
    .await;
    assert_eq!(out.stdout, "refused\n");
}

/// Every injection payload, through every parameter: the rendered command must print each value
/// back as exactly one literal word and create no marker.
#[tokio::test]
async fn injection_through_any_parameter_runs_only_the_intended_command() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let template =
        "printf '[%s]\\n' {{.a}} {{.b}}; if [ -e /tmp/work/marker ]; then echo INJECTED; fi";
    let payloads = [
        "'; touch /tmp/work/marker; '",
        "\"; touch /tmp/work/marker; \"",
        "$(touch /tmp/work/marker)",
        "`touch /tmp/work/marker`",
        "; touch /tmp/work/marker",
        "&& touch /tmp/work/marker",
        "| touch /tmp/work/marker",
        "x\ntouch /tmp/work/marker",
        "{{.b}}",
        "\\'; touch /tmp/work/marker #",
        "\u{FF07}; touch /tmp/work/marker; \u{FF07}",
        "\u{FF04}(touch /tmp/work/marker)",
        "'\u{200B}; touch /tmp/work/marker",
        "${IFS}touch${IFS}/tmp/work/marker",
        "> /tmp/work/marker",
        "*",
    ];
    for payload in payloads {
        for (target, other) in [("a", "b"), ("b", "a")] {
            let mut args = Map::new();
            args.insert(target.to_owned(), Value::String(payload.to_owned()));
            args.insert(other.to_owned(), json!("$(touch /tmp/work/marker)"));
            let rendered = render(template, &args).unwrap();
            assert_eq!(check_denied(&rendered), Ok(()), "{rendered}");
            let out = run(&sandbox, &rendered).await;
            let expected = if target == "a" {
                format!("[{payload}]\n[$(touch /tmp/work/marker)]\n")
            } else {
                format!("[$(touch /tmp/work/marker)]\n[{payload}]\n")
            };
            assert_eq!(out.stdout, expected, "payload {payload:?} in {target}");
        }
    }
}

/// The whole path the integrator wires: validate, render, deny-check, run.
#[tokio::test]
async fn a_spec_runs_end_to_end() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let spec: crate::CommandToolSpec = serde_json::from_value(json!({
        "command": "printf '%s:%s\\n' \"$GREETING\" {{.name}}",
        "timeoutSeconds": 5,
        "env": {"GREETING": "hello"}
    }))
    .unwrap();
    let template = spec.validate().unwrap();
    let args = json!({"name": "wor'ld"});
    let rendered = template.render(args.as_object().unwrap()).unwrap();
    check_denied(&rendered).unwrap();
    let out = sandbox
        .run(&RunRequest::for_spec(&spec, &rendered))
        .await
        .unwrap();
    assert_eq!(out.stdout, "hello:wor'ld\n");
    assert_eq!(out.exit_code, Some(0));
}

#[test]
fn a_missing_tool_makes_the_sandbox_unavailable_with_a_reason() {
    let err = super::find_tool("toolsmith-no-such-tool", "bubblewrap").unwrap_err();
    assert!(
        err.reason.contains("install the `bubblewrap` package"),
        "{err}"
    );
    assert_eq!(err.code(), "command_sandbox_unavailable");
}

/// Counts host processes whose command line contains `needle`, other than this test process.
fn host_processes_matching(needle: &str) -> usize {
    let me = std::process::id().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_string_lossy()
                .chars()
                .all(|c| c.is_ascii_digit())
        })
        .filter(|entry| entry.file_name().to_string_lossy() != me)
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .filter(|cmdline| String::from_utf8_lossy(cmdline).contains(needle))
        .count()
}

/// The kernel reaps a dead PID namespace asynchronously; give it a bounded moment.
fn wait_until_gone(needle: &str) {
    for _ in 0..50 {
        if host_processes_matching(needle) == 0 {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[tokio::test]
async fn the_seccomp_filter_denies_kernel_attack_surface_and_stdin_is_empty() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    assert!(sandbox.has_seccomp());
    let out = run(
        &sandbox,
        "grep -E '^Seccomp:' /proc/self/status; cat | wc -c; mount -t tmpfs none /tmp/work 2>/dev/null || echo mount-refused",
    )
    .await;
    assert_eq!(out.stdout, "Seccomp:\t2\n0\nmount-refused\n", "{out:?}");
}

mod workspace;
