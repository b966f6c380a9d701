//! `toolsmith agent …` through the real binary: an agent created from a definition file is
//! listed and shown (by name and id) to its user only, a malformed file is refused naming the
//! problem, and a deleted agent is gone.

use crate::support::Env;

const DEFINITION: &str = r#"{
  "name": "researcher",
  "displayName": "Researcher",
  "instructions": "Find things out.",
  "model": {"service": "local", "model": "qwen2.5"},
  "toolPolicy": {"allow": ["group:core"]},
  "contextFiles": [{"name": "style.md", "text": "Be brief."}],
  "limits": {"maxIterations": 5}
}"#;

#[test]
fn an_agent_is_created_from_a_file_listed_for_its_user_and_deleted() {
    let env = Env::new();
    let file = env.write("researcher.json", DEFINITION);
    let created = env
        .run(&[
            "--json", "--user", "alice", "agent", "create", "--file", &file,
        ])
        .expect(0)
        .json();
    let agent = &created[0];
    assert_eq!(agent["name"], "researcher");
    assert_eq!(agent["revision"], 1);
    assert_eq!(agent["limits"]["maxIterations"], 5);
    let id = agent["id"].as_str().unwrap().to_owned();

    for key in ["researcher", id.as_str()] {
        let shown = env
            .run(&["--json", "--user", "alice", "agent", "get", key])
            .expect(0)
            .json();
        assert_eq!(shown[0]["id"], id.as_str());
    }
    let table = env.run(&["--user", "alice", "agent", "list"]).expect(0);
    assert!(table.stdout.contains("researcher") && table.stdout.contains("local / qwen2.5"));
    // Another user has none, and cannot read or delete alice's.
    let bobs = env
        .run(&["--json", "--user", "bob", "agent", "list"])
        .expect(0)
        .json();
    assert_eq!(bobs, serde_json::json!([]));
    let refused = env.run(&["--user", "bob", "agent", "delete", &id]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("no agent"), "{}", refused.stderr);

    // A file that is not a definition names the problem.
    let bad = env.write("bad.json", r#"{"name": "x", "modle": {}}"#);
    let out = env.run(&["--user", "alice", "agent", "create", "--file", &bad]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("modle"), "{}", out.stderr);

    env.run(&["--user", "alice", "agent", "delete", "researcher"])
        .expect(0);
    let left = env
        .run(&["--json", "--user", "alice", "agent", "list"])
        .expect(0)
        .json();
    assert_eq!(left, serde_json::json!([]));
}

/// `toolsmith team …`: a team of alice's agents is made, listed, its board read (empty), and
/// deleted; bob sees none, and a team naming an agent alice does not have is refused naming it.
#[test]
fn a_team_of_agents_is_created_listed_its_board_read_and_deleted() {
    let env = Env::new();
    for name in ["lead", "scout", "scribe"] {
        let file = env.write(
            &format!("{name}.json"),
            format!(r#"{{"name": "{name}", "model": {{"service": "local", "model": "m"}}}}"#),
        );
        env.run(&["--user", "alice", "agent", "create", "--file", &file])
            .expect(0);
    }
    let created = env
        .run(&[
            "--json",
            "--user",
            "alice",
            "team",
            "create",
            "crew",
            "--lead",
            "lead",
            "--member",
            "scout",
            "--member",
            "scribe",
            "--description",
            "Finds and writes.",
        ])
        .expect(0)
        .json();
    assert_eq!(created[0]["name"], "crew", "{created}");
    assert_eq!(created[0]["lead"]["name"], "lead", "{created}");
    assert_eq!(created[0]["members"][1]["name"], "scribe", "{created}");
    let table = env.run(&["--user", "alice", "team", "list"]).expect(0);
    assert!(
        table.stdout.contains("crew") && table.stdout.contains("scout, scribe"),
        "{}",
        table.stdout
    );
    let board = env
        .run(&["--json", "--user", "alice", "team", "board", "crew"])
        .expect(0)
        .json();
    assert_eq!(board["tasks"], serde_json::json!([]), "{board}");
    assert_eq!(board["team"]["description"], "Finds and writes.", "{board}");
    let bobs = env
        .run(&["--json", "--user", "bob", "team", "list"])
        .expect(0)
        .json();
    assert_eq!(bobs, serde_json::json!([]));
    let refused = env.run(&[
        "--user", "alice", "team", "create", "other", "--lead", "lead", "--member", "ghost",
    ]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("no agent 'ghost'"),
        "{}",
        refused.stderr
    );
    env.run(&["--user", "alice", "team", "delete", "crew"])
        .expect(0);
    let left = env
        .run(&["--json", "--user", "alice", "team", "list"])
        .expect(0)
        .json();
    assert_eq!(left, serde_json::json!([]));
}
