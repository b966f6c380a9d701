//! A repository whose `.git/config` a model wrote (with `write_file`) to run programs: an
//! fsmonitor, a hooks folder with an executable hook, a pager, an external diff, a filter.
//! Nothing runs on the host, and the settings the git tools override run nowhere at all.

use serde_json::json;

use super::{fixture, init_repo, sandbox};

#[tokio::test]
async fn a_hostile_git_config_runs_nothing_on_the_host() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let fx = fixture(&sandbox);
    init_repo(&fx, &sandbox, "evil").await;
    let host_marker = fx.outside.join("pwned");
    let host = host_marker.display();
    // Each program would leave a marker in the workspace (seen at /tmp/work inside the
    // sandbox) and one on the host, beside the canary.
    let touch = |what: &str| format!("sh -c 'touch /tmp/work/{what}-ran {host}; exit 0'");
    let config = format!(
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\
         \tfsmonitor = \"{}\"\n\thooksPath = hooks\n\tpager = \"{}\"\n\
         \tsshCommand = \"{}\"\n\
         [diff]\n\texternal = \"{}\"\n\
         [filter \"evil\"]\n\tclean = \"{}\"\n\tsmudge = \"{}\"\n",
        touch("fsmonitor"),
        touch("pager"),
        touch("ssh"),
        touch("diff"),
        touch("filter"),
        touch("filter"),
    );
    fx.ok(
        "write_file",
        json!({"path": "evil/.git/config", "content": config}),
    )
    .await;
    let hook = format!("#!/bin/sh\ntouch /tmp/work/hook-ran {host}\n");
    for name in ["pre-commit", "commit-msg", "post-commit", "post-checkout"] {
        fx.ok(
            "write_file",
            json!({"path": format!("evil/hooks/{name}"), "content": hook}),
        )
        .await;
        // The model would need code execution to set the bit; the test gives it anyway.
        let path = fx.dir("alice").join("evil/hooks").join(name);
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    fx.ok(
        "write_file",
        json!({"path": "evil/.gitattributes", "content": "*.txt filter=evil\n"}),
    )
    .await;
    fx.ok(
        "write_file",
        json!({"path": "evil/a.txt", "content": "one\n"}),
    )
    .await;

    fx.ok("git_status", json!({"path": "evil"})).await;
    fx.ok("git_add", json!({"path": "evil", "files": ["."]}))
        .await;
    fx.ok("git_commit", json!({"path": "evil", "message": "first"}))
        .await;
    fx.ok(
        "write_file",
        json!({"path": "evil/a.txt", "content": "two\n"}),
    )
    .await;
    fx.ok("git_diff", json!({"path": "evil"})).await;
    fx.ok("git_log", json!({"path": "evil"})).await;
    fx.ok(
        "git_checkout",
        json!({"path": "evil", "target": "side", "create": true}),
    )
    .await;

    assert!(
        !host_marker.exists(),
        "a program of .git/config ran on the host"
    );
    fx.assert_outside_intact();
    let ws = fx.dir("alice");
    for what in ["fsmonitor", "hook", "pager", "ssh", "diff"] {
        assert!(
            !ws.join(format!("{what}-ran")).exists(),
            "the {what} setting was obeyed"
        );
    }
    // A clean/smudge filter is a program git runs by design; it ran, but only in the sandbox,
    // where the host's folders do not exist.
    assert!(
        ws.join("filter-ran").exists(),
        "the test's filter never ran"
    );
}

/// The workspace's denied prefix (`.toolsmith`, Toolsmith's own state) inside a repository at
/// the workspace root: git never shows its names or content, never stages it, never restores
/// into it, and naming it is refused as the file tools refuse it.
#[tokio::test]
async fn the_denied_prefix_stays_out_of_every_git_tool() {
    let Some(sandbox) = sandbox().await else {
        return;
    };
    let fx = fixture(&sandbox);
    init_repo(&fx, &sandbox, ".").await;
    let state = fx.dir("alice").join(".toolsmith");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("state.json"), "TOOLSMITH-PRIVATE-STATE").unwrap();
    fx.ok(
        "write_file",
        json!({"path": "notes.txt", "content": "mine\n"}),
    )
    .await;

    let status = fx.ok("git_status", json!({})).await;
    assert_eq!(status["untracked"], json!(["notes.txt"]), "{status}");
    let added = fx.ok("git_add", json!({"files": ["."]})).await;
    assert_eq!(
        added["staged"],
        json!([{"path": "notes.txt", "status": "added"}]),
        "{added}"
    );
    let diff = fx.ok("git_diff", json!({"staged": true})).await;
    let text = diff.to_string();
    assert!(
        !text.contains(".toolsmith") && !text.contains("PRIVATE"),
        "{text}"
    );
    fx.ok("git_commit", json!({"message": "notes"})).await;
    let msg = fx
        .fails(
            "git_add",
            json!({"files": [".toolsmith/state.json"]}),
            super::ARGS,
        )
        .await;
    assert!(msg.contains("reserved"), "{msg}");
    fx.fails(
        "git_checkout",
        json!({"target": "HEAD", "files": [".toolsmith"]}),
        super::ARGS,
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(state.join("state.json")).unwrap(),
        "TOOLSMITH-PRIVATE-STATE"
    );
}
