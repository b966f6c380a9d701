//! Read-only mode on the CLI (issue 31): `TOOLSMITH_READ_ONLY` (or `--read-only`) refuses
//! every command that changes the store, as the server's faces do; reads and tool runs work,
//! and a run of a built-in that would change stored data is refused by the service.

use crate::support::{Env, example};

#[test]
fn read_only_mode_refuses_the_clis_writes_and_keeps_its_reads() {
    let env = Env::new();
    env.json(&["tool", "create", "--file", &example("word_frequency.yaml")]);
    let read_only = [("TOOLSMITH_READ_ONLY", "true")];

    for args in [
        vec!["tool", "create", "--file", &example("word_frequency.yaml")],
        vec!["tool", "disable", "word_frequency"],
        vec!["tool", "delete", "word_frequency"],
        vec!["policy", "clear"],
        vec!["token", "create", "--scopes", "tools:read"],
        vec!["groups", "enable", "notes"],
    ] {
        let mut all = vec!["--json"];
        all.extend(args.iter().copied());
        let out = env.run_with_env(&all, None, &read_only);
        assert_ne!(
            out.code, 0,
            "{args:?} ran in read-only mode: {}",
            out.stdout
        );
        let (code, message) = out.error_doc();
        assert_eq!(code, "forbidden", "{args:?}: {message}");
        assert!(message.contains("read-only"), "{args:?}: {message}");
    }
    // The flag says the same as the variable.
    let out = env.run(&["--read-only", "tool", "disable", "word_frequency"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("read-only"), "{}", out.stderr);

    // Reads and runs still work; the tool is still active.
    let out = env.run_with_env(
        &["--json", "tool", "get", "word_frequency"],
        None,
        &read_only,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["status"], "active");
    let out = env.run_with_env(
        &["--json", "tool", "executions", "word_frequency"],
        None,
        &read_only,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = env.run_with_env(
        &[
            "--json",
            "run",
            "calculate",
            "--args",
            r#"{"expression": "2*21"}"#,
        ],
        None,
        &read_only,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("42"), "{}", out.stdout);
    // A built-in that would store something is refused by the service, not run.
    let out = env.run_with_env(
        &[
            "--json",
            "run",
            "add_note",
            "--args",
            r#"{"title": "t", "content": "c"}"#,
        ],
        None,
        &read_only,
    );
    assert!(
        out.stdout.contains("read-only"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    let listed = env.json(&["run", "list_notes", "--args", "{}"]);
    assert!(!listed.to_string().contains("\"c\""), "{listed}");
}
