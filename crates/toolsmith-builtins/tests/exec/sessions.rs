//! Sandbox sessions: files persist between runs of one session, a session is its owner's
//! only, `stop` and the idle timeout delete its files, and a user's sessions are capped.

use std::time::Duration;

use serde_json::{Value, json};
use toolsmith_builtins::exec::SessionSettings;
use toolsmith_core::ErrorKind;

use super::Fixture;
use crate::support::{failed, succeeded};

async fn start(fx: &Fixture, user: &str) -> String {
    let args = json!({});
    let out = succeeded(
        "sandbox_initialize",
        &args,
        fx.call_as(user, "sandbox_initialize", args.clone()).await,
    );
    assert_eq!(out["workdir"], "/tmp/work");
    out["sessionId"].as_str().unwrap().to_owned()
}

fn session_dir(fx: &Fixture, user: &str, id: &str) -> std::path::PathBuf {
    fx.data
        .join("workspaces")
        .join(user)
        .join("sessions")
        .join(id)
}

#[tokio::test]
async fn a_sessions_files_persist_between_runs_until_it_stops() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let id = start(&fx, "alice").await;
    let args = json!({"sessionId": id, "command": "echo kept > state.txt && ls"});
    let out = succeeded(
        "sandbox_exec",
        &args,
        fx.call("sandbox_exec", args.clone()).await,
    );
    assert_eq!(out["stdout"], "state.txt\n", "{out}");
    let args = json!({"sessionId": id, "command": "cat state.txt; ls /tmp/work"});
    let out = succeeded(
        "sandbox_exec",
        &args,
        fx.call("sandbox_exec", args.clone()).await,
    );
    assert_eq!(out["stdout"], "kept\nstate.txt\n", "{out}");
    if std::path::Path::new("/usr/bin/node").exists() {
        let args = json!({"sessionId": id, "code": "const fs = require('fs'); console.log(fs.readFileSync('state.txt', 'utf8').trim() + '!')"});
        let out = succeeded(
            "sandbox_run_js",
            &args,
            fx.call("sandbox_run_js", args.clone()).await,
        );
        assert_eq!(out["stdout"], "kept!\n", "{out}");
    } else {
        // sandbox_run_js needs the host's node: fails, or (TOOLSMITH_ALLOW_SKIP=1) is left out.
        toolsmith_core::testkit::missing(
            "node (Debian package nodejs, for sandbox_run_js)",
            "/usr/bin/node does not exist",
        );
    }
    assert!(session_dir(&fx, "alice", &id).join("state.txt").exists());

    // Another user cannot use, see or stop it.
    let args = json!({"sessionId": id, "command": "cat state.txt"});
    let res = fx.call_as("bob", "sandbox_exec", args.clone()).await;
    let message = failed("sandbox_exec", &args, &res, ErrorKind::InvalidArguments);
    assert!(message.contains("sandbox_initialize"), "{message}");
    let args = json!({"sessionId": id});
    let res = fx.call_as("bob", "sandbox_stop", args.clone()).await;
    failed("sandbox_stop", &args, &res, ErrorKind::InvalidArguments);

    let out = succeeded(
        "sandbox_stop",
        &args,
        fx.call("sandbox_stop", args.clone()).await,
    );
    assert_eq!(out, json!({"sessionId": id, "stopped": true}));
    assert!(!session_dir(&fx, "alice", &id).exists());
    let args = json!({"sessionId": id, "command": "ls"});
    let res = fx.call("sandbox_exec", args.clone()).await;
    let message = failed("sandbox_exec", &args, &res, ErrorKind::InvalidArguments);
    assert!(message.contains("no sandbox session"), "{message}");
}

#[tokio::test]
async fn session_tools_refuse_bad_arguments_and_dangerous_commands() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let id = start(&fx, "alice").await;
    for (tool, args, kind, needle) in [
        (
            "sandbox_exec",
            json!({"command": "ls"}),
            ErrorKind::InvalidArguments,
            "sessionId",
        ),
        (
            "sandbox_exec",
            json!({"sessionId": "sbx_nope", "command": "ls"}),
            ErrorKind::InvalidArguments,
            "sandbox_initialize",
        ),
        (
            "sandbox_exec",
            json!({"sessionId": id, "command": "rm -rf /"}),
            ErrorKind::Denied,
            "refused",
        ),
        (
            "sandbox_exec",
            json!({"sessionId": id, "command": "ls", "timeoutSeconds": 99}),
            ErrorKind::InvalidArguments,
            "timeoutSeconds",
        ),
        (
            "sandbox_run_js",
            json!({"sessionId": id}),
            ErrorKind::InvalidArguments,
            "code",
        ),
        (
            "sandbox_stop",
            json!({}),
            ErrorKind::InvalidArguments,
            "sessionId",
        ),
    ] {
        let res = fx.call(tool, args.clone()).await;
        let message = failed(tool, &args, &res, kind);
        assert!(message.contains(needle), "{tool} {args}: {message}");
    }
}

#[tokio::test]
async fn sessions_are_capped_per_user_and_scavenged_when_idle() {
    let settings = SessionSettings {
        idle_timeout: Duration::from_millis(300),
        max_per_user: 2,
    };
    let Some(fx) = Fixture::with_sessions(settings).await else {
        return;
    };
    let first = start(&fx, "alice").await;
    let second = start(&fx, "alice").await;
    let res = fx.call("sandbox_initialize", json!({})).await;
    let message = failed("sandbox_initialize", &json!({}), &res, ErrorKind::Denied);
    assert!(message.contains("sandbox_stop"), "{message}");
    // Bob's cap is his own.
    let bobs = start(&fx, "bob").await;

    for id in [&first, &second] {
        let args = json!({"sessionId": id, "command": "echo x > f"});
        succeeded(
            "sandbox_exec",
            &args,
            fx.call("sandbox_exec", args.clone()).await,
        );
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(fx.sessions.scavenge(), 3);
    assert!(fx.sessions.is_empty());
    for (user, id) in [("alice", &first), ("alice", &second), ("bob", &bobs)] {
        assert!(!session_dir(&fx, user, id).exists(), "{id}");
    }
    let args = json!({"sessionId": first, "command": "ls"});
    let res = fx.call("sandbox_exec", args.clone()).await;
    failed("sandbox_exec", &args, &res, ErrorKind::InvalidArguments);
    // After the scavenge, alice may start again.
    let again = start(&fx, "alice").await;
    assert_eq!(fx.sessions.stop_all(), 1);
    assert!(!session_dir(&fx, "alice", &again).exists());
}

#[tokio::test]
async fn a_running_session_is_not_scavenged() {
    let settings = SessionSettings {
        idle_timeout: Duration::from_millis(200),
        max_per_user: 2,
    };
    let Some(fx) = Fixture::with_sessions(settings).await else {
        return;
    };
    let id = start(&fx, "alice").await;
    let args = json!({"sessionId": id, "command": "sleep 2; echo done > f; cat f"});
    let run = fx.call("sandbox_exec", args.clone());
    let scavenger = async {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        fx.sessions.scavenge()
    };
    let (res, ended) = tokio::join!(run, scavenger);
    let out: Value = succeeded("sandbox_exec", &args, res);
    assert_eq!(out["stdout"], "done\n", "{out}");
    assert_eq!(ended, 0);
    assert_eq!(fx.sessions.len(), 1);
}

#[tokio::test]
async fn session_folders_left_by_a_crashed_server_are_removed_at_the_next_start() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let kept = start(&fx, "alice").await;
    let args = json!({"sessionId": kept, "command": "mkdir -p deep/er && echo x > deep/er/f"});
    succeeded(
        "sandbox_exec",
        &args,
        fx.call("sandbox_exec", args.clone()).await,
    );
    let bobs = start(&fx, "bob").await;
    // A link a session left pointing out of it: removing the session never follows it.
    let outside = fx.dir("alice").join("keep.txt");
    std::fs::write(&outside, "mine").unwrap();
    std::os::unix::fs::symlink(&outside, session_dir(&fx, "bob", &bobs).join("link")).unwrap();
    assert!(session_dir(&fx, "alice", &kept).join("deep/er/f").exists());

    // The process "crashes": nothing ends the sessions; a new server starts on the same data.
    let restarted =
        toolsmith_builtins::exec::Sessions::new(fx.workspaces.clone(), SessionSettings::default());
    assert!(restarted.is_empty());
    assert!(!session_dir(&fx, "alice", &kept).exists());
    assert!(!session_dir(&fx, "bob", &bobs).exists());
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine");
    // The users' own workspaces are untouched.
    assert!(fx.dir("bob").join("notes.txt").exists());
}

/// Issue 31: sessions were per user, so one agent of a user ran code in (and stopped) another
/// agent's session. A session is its user's *and agent's*.
#[tokio::test]
async fn one_agents_session_is_out_of_reach_of_the_users_other_agents_and_the_person() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let started = fx
        .call_as_agent("alice", "agent-1", "sandbox_initialize", json!({}))
        .await;
    let out = succeeded("sandbox_initialize", &json!({}), started);
    let id = out["sessionId"].as_str().unwrap().to_owned();
    let args = json!({"sessionId": id, "command": "echo mine > f && cat f"});
    let out = succeeded(
        "sandbox_exec",
        &args,
        fx.call_as_agent("alice", "agent-1", "sandbox_exec", args.clone())
            .await,
    );
    assert_eq!(out["stdout"], "mine\n", "{out}");
    for other in [
        fx.call_as_agent("alice", "agent-2", "sandbox_exec", args.clone())
            .await,
        fx.call("sandbox_exec", args.clone()).await,
    ] {
        let message = failed("sandbox_exec", &args, &other, ErrorKind::InvalidArguments);
        assert!(message.contains("no sandbox session"), "{message}");
    }
    let stop = json!({"sessionId": id});
    let res = fx
        .call_as_agent("alice", "agent-2", "sandbox_stop", stop.clone())
        .await;
    failed("sandbox_stop", &stop, &res, ErrorKind::InvalidArguments);
    assert!(session_dir(&fx, "alice", &id).exists());
    succeeded(
        "sandbox_stop",
        &stop,
        fx.call_as_agent("alice", "agent-1", "sandbox_stop", stop.clone())
            .await,
    );
}

/// `sandbox_list` shows a caller's own sessions (its user *and agent*), oldest first, with
/// their labels and times; `sandbox_exec`'s `commands` run in order and stop at the first that
/// fails; `sandbox_run_js`'s `saveAs` keeps the code as a file of the session and runs it with
/// `node <file>` (an `.mjs` as an ES module). What the compat `sandbox.*` names stand on.
#[tokio::test]
async fn sessions_are_listed_to_their_owner_and_run_several_commands_or_a_saved_module() {
    let Some(fx) = Fixture::new().await else {
        return;
    };
    let args = json!({"label": "node:lts-slim"});
    let out = succeeded(
        "sandbox_initialize",
        &args,
        fx.call("sandbox_initialize", args.clone()).await,
    );
    assert_eq!(out["label"], "node:lts-slim", "{out}");
    let first = out["sessionId"].as_str().unwrap().to_owned();
    let second = start(&fx, "alice").await;
    let agents = succeeded(
        "sandbox_initialize",
        &json!({}),
        fx.call_as_agent("alice", "agent-1", "sandbox_initialize", json!({}))
            .await,
    );
    let listed = succeeded(
        "sandbox_list",
        &json!({}),
        fx.call("sandbox_list", json!({})).await,
    );
    let sessions = listed["sessions"].as_array().unwrap();
    let ids: Vec<&str> = sessions
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [first.as_str(), second.as_str()], "{listed}");
    assert_eq!(sessions[0]["label"], "node:lts-slim");
    assert!(sessions[1].get("label").is_none(), "{listed}");
    assert!(sessions[0]["createdAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(listed["idleTimeoutSeconds"], 900);
    let theirs = succeeded(
        "sandbox_list",
        &json!({}),
        fx.call_as_agent("alice", "agent-1", "sandbox_list", json!({}))
            .await,
    );
    assert_eq!(
        theirs["sessions"][0]["sessionId"], agents["sessionId"],
        "{theirs}"
    );
    assert_eq!(theirs["sessions"].as_array().unwrap().len(), 1);
    let bobs = succeeded(
        "sandbox_list",
        &json!({}),
        fx.call_as("bob", "sandbox_list", json!({})).await,
    );
    assert_eq!(bobs["sessions"], json!([]));

    let args = json!({"sessionId": first, "commands": ["echo kept > state.txt", "cat state.txt", "cat missing", "echo never"]});
    let out = succeeded(
        "sandbox_exec",
        &args,
        fx.call("sandbox_exec", args.clone()).await,
    );
    assert_eq!(out["success"], false, "{out}");
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 3, "{out}");
    assert_eq!(results[1]["command"], "cat state.txt");
    assert_eq!(results[1]["stdout"], "kept\n");
    assert_ne!(results[2]["exitCode"], 0);
    for (args, needle) in [
        (
            json!({"sessionId": first, "command": "ls", "commands": ["ls"]}),
            "not both",
        ),
        (json!({"sessionId": first, "commands": []}), "commands"),
        (
            json!({"sessionId": first, "commands": ["ls", "rm -rf /"]}),
            "refused",
        ),
    ] {
        let res = fx.call("sandbox_exec", args.clone()).await;
        let message = res.error_message().unwrap_or_default().to_owned();
        assert!(
            res.is_error && message.contains(needle),
            "{args}: {message}"
        );
    }

    if std::path::Path::new("/usr/bin/node").exists() {
        let args = json!({"sessionId": first, "saveAs": "index.mjs", "code": "import { readFileSync } from 'node:fs';\nconsole.log(await Promise.resolve(readFileSync('state.txt', 'utf8').trim()));"});
        let out = succeeded(
            "sandbox_run_js",
            &args,
            fx.call("sandbox_run_js", args.clone()).await,
        );
        assert_eq!(out["stdout"], "kept\n", "{out}");
        assert!(session_dir(&fx, "alice", &first).join("index.mjs").exists());
        for name in ["../x.mjs", "sub/x.js", "x.txt", ".mjs"] {
            let args = json!({"sessionId": first, "saveAs": name, "code": "1"});
            let res = fx.call("sandbox_run_js", args.clone()).await;
            failed("sandbox_run_js", &args, &res, ErrorKind::InvalidArguments);
        }
    } else {
        toolsmith_core::testkit::missing(
            "node (Debian package nodejs, for sandbox_run_js)",
            "/usr/bin/node does not exist",
        );
    }
}
