//! `toolsmith prompt …` through the real binary (issue 40): a prompt created from a YAML file
//! (the REST body) is listed, shown and rendered for its user only, replaced from a JSON file,
//! its history shown and rolled back, switched off, and deleted; a malformed file and a missing
//! argument are named; read-only mode refuses writes.

use crate::support::Env;

const YAML: &str = r#"
name: review
title: Code review
description: Reviews code
arguments:
  - name: language
    required: true
    values: [rust, ruby]
messages:
  - role: user
    content:
      type: text
      text: "Review this {{ language }} code."
"#;

const JSON: &str = r#"{
  "name": "review",
  "description": "Reviews code, kindly",
  "arguments": [{"name": "language", "required": true}],
  "messages": [{"role": "user", "content": {"type": "text", "text": "Kindly review {{ language }}."}}]
}"#;

#[test]
fn a_prompt_is_created_from_a_file_rendered_versioned_rolled_back_and_deleted() {
    let env = Env::new();
    let yaml = env.write("review.yaml", YAML);
    let created = env
        .run(&[
            "--json", "--user", "alice", "prompt", "create", "--file", &yaml,
        ])
        .expect(0)
        .json();
    assert_eq!(created[0]["name"], "review");
    assert_eq!(created[0]["createdBy"], "user");

    let table = env.run(&["--user", "alice", "prompt", "list"]).expect(0);
    assert!(table.stdout.contains("review"), "{}", table.stdout);
    let bobs = env
        .run(&["--json", "--user", "bob", "prompt", "list"])
        .expect(0)
        .json();
    assert_eq!(bobs, serde_json::json!([]));
    let refused = env.run(&["--user", "bob", "prompt", "get", "review"]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("no prompt"), "{}", refused.stderr);

    let rendered = env
        .run(&[
            "--user",
            "alice",
            "prompt",
            "render",
            "review",
            "--arg",
            "language=rust",
        ])
        .expect(0)
        .json();
    assert_eq!(
        rendered["messages"][0]["content"]["text"],
        "Review this rust code."
    );
    let missing = env.run(&["--user", "alice", "prompt", "render", "review"]);
    assert_ne!(missing.code, 0);
    assert!(
        missing.stderr.contains("needs the argument language"),
        "{}",
        missing.stderr
    );

    let json = env.write("review.json", JSON);
    let updated = env
        .run(&[
            "--json", "--user", "alice", "prompt", "update", "review", "--file", &json,
        ])
        .expect(0)
        .json();
    assert_eq!(updated[0]["revision"], 2);
    let history = env
        .run(&["--json", "--user", "alice", "prompt", "history", "review"])
        .expect(0)
        .json();
    assert_eq!(history.as_array().map(Vec::len), Some(2));
    let back = env
        .run(&[
            "--json",
            "--user",
            "alice",
            "prompt",
            "rollback",
            "review",
            "--revision",
            "1",
        ])
        .expect(0)
        .json();
    assert_eq!(back[0]["description"], "Reviews code");
    let off = env
        .run(&["--json", "--user", "alice", "prompt", "disable", "review"])
        .expect(0)
        .json();
    assert_eq!(off[0]["enabled"], false);

    // A file that is not a prompt names the problem.
    let bad = env.write("bad.yaml", "name: x\nmesages: []\n");
    let out = env.run(&["--user", "alice", "prompt", "create", "--file", &bad]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("mesages"), "{}", out.stderr);

    // Read-only mode refuses a write, and still reads.
    let ro = env.run_with_env(
        &["--user", "alice", "prompt", "delete", "review"],
        None,
        &[("TOOLSMITH_READ_ONLY", "true")],
    );
    assert_ne!(ro.code, 0);
    assert!(ro.stderr.contains("read-only"), "{}", ro.stderr);

    env.run(&["--user", "alice", "prompt", "delete", "review"])
        .expect(0);
    let left = env
        .run(&["--json", "--user", "alice", "prompt", "list"])
        .expect(0)
        .json();
    assert_eq!(left, serde_json::json!([]));
}
