//! `toolsmith token …` through the real binary.

use std::process::Command;

use serde_json::Value;

fn toolsmith(data_dir: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolsmith"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("TOOLSMITH_USER")
        .output()
        .expect("run toolsmith");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn tokens_are_created_once_listed_without_secrets_and_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = toolsmith(
        dir.path(),
        &[
            "--json",
            "--user",
            "alice",
            "token",
            "create",
            "--scopes",
            "tools:read,tools:execute",
            "--name",
            "laptop",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let created: Value = serde_json::from_str(&out).unwrap();
    let secret = created["token"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("tsk_"), "{created}");
    assert_eq!(created["user"], "alice");
    assert_eq!(
        created["scopes"],
        serde_json::json!(["tools:read", "tools:execute"])
    );

    let (code, out, _) = toolsmith(dir.path(), &["--json", "token", "list"]);
    assert_eq!(code, 0);
    assert!(!out.contains(&secret[4..]), "list never shows the secret");
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed[0]["id"], created["id"]);
    assert_eq!(listed[0]["name"], "laptop");

    let id = created["id"].as_str().unwrap();
    let (code, out, _) = toolsmith(dir.path(), &["token", "revoke", id]);
    assert_eq!(
        (code, out.trim()),
        (0, format!("revoked token {id}").as_str())
    );
    let (code, _, err) = toolsmith(dir.path(), &["token", "revoke", id]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("no API token"), "{err}");
    let (code, out, _) = toolsmith(dir.path(), &["token", "list"]);
    assert_eq!(code, 0);
    assert!(out.contains("no API tokens"), "{out}");
}

#[test]
fn unknown_scopes_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = toolsmith(
        dir.path(),
        &["token", "create", "--scopes", "tools:read,root"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown scope 'root'"), "{err}");
}
