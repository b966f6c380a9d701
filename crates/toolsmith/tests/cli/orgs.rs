//! `toolsmith org …` and `toolsmith tool move` through the real binary (issue 41): `--user`
//! acts as the person; the rules and their exit codes are the service's (a stranger: 4, a
//! role too low: 6, the last owner or a taken name: 5 or 3).

use serde_json::json;

use crate::support::Env;

const TOOL: &str = r#"{"name": "report", "description": "Says hi", "parameters": {"type": "object", "properties": {}}, "code": "return 'hi';"}"#;

#[test]
fn organisations_members_and_a_tool_moved_in_and_out() {
    let env = Env::new();
    let as_user = |user: &str, args: &[&str]| {
        let mut all = vec!["--json", "--user", user];
        all.extend_from_slice(args);
        env.run(&all)
    };

    // ann makes acme and adds ed (editor) and vic (viewer).
    let made = as_user(
        "ann",
        &["org", "create", "acme", "--display-name", "Acme Support"],
    )
    .expect(0)
    .json();
    let id = made[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(
        (&made[0]["name"], &made[0]["displayName"], &made[0]["role"]),
        (&json!("acme"), &json!("Acme Support"), &json!("owner"))
    );
    let taken = as_user("sam", &["org", "create", "acme"]).expect(3);
    assert!(
        taken.stdout.contains("exists") || taken.stderr.contains("exists"),
        "{taken:?}"
    );
    as_user("sam", &["org", "create", "Bad Name"]).expect(3);
    as_user(
        "ann",
        &["org", "add-member", "acme", "ed", "--role", "editor"],
    )
    .expect(0);
    let added = as_user("ann", &["org", "add-member", "acme", "vic"])
        .expect(0)
        .json();
    assert_eq!(
        (&added[0]["userId"], &added[0]["role"]),
        (&json!("vic"), &json!("viewer"))
    );
    let bad_role = as_user("ann", &["org", "set-role", "acme", "vic", "--role", "boss"]).expect(2);
    assert!(
        bad_role
            .stderr
            .contains("expected: owner, admin, editor, viewer"),
        "{bad_role:?}"
    );

    // Listed with each one's role; a stranger finds nothing.
    let eds = as_user("ed", &["org", "list"]).expect(0).json();
    assert_eq!(
        (&eds[0]["id"], &eds[0]["role"]),
        (&json!(id), &json!("editor"))
    );
    assert_eq!(as_user("sam", &["org", "list"]).expect(0).json(), json!([]));
    let hidden = as_user("sam", &["org", "show", "acme"]).expect(4);
    assert!(
        hidden.stdout.contains("of which you ('sam') are a member"),
        "{hidden:?}"
    );
    as_user("sam", &["org", "members", "acme"]).expect(4);
    let members = as_user("vic", &["org", "members", &id]).expect(0).json();
    let listed: Vec<(&str, &str)> = members
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["userId"].as_str().unwrap(), m["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [("ann", "owner"), ("ed", "editor"), ("vic", "viewer")]
    );

    // Roles: an editor neither renames nor manages members; an admin renames.
    as_user("ed", &["org", "rename", "acme", "--display-name", "Ed's"]).expect(6);
    as_user("ed", &["org", "add-member", "acme", "sam"]).expect(6);
    as_user("ann", &["org", "set-role", "acme", "ed", "--role", "admin"]).expect(0);
    let renamed = as_user(
        "ed",
        &["org", "rename", "acme", "--display-name", "Acme Ltd"],
    )
    .expect(0)
    .json();
    assert_eq!(renamed[0]["displayName"], "Acme Ltd");
    as_user(
        "ann",
        &["org", "set-role", "acme", "ed", "--role", "editor"],
    )
    .expect(0);

    // A tool moves in (ann), a viewer cannot take it out, an editor can.
    let file = env.write("report.json", TOOL);
    as_user("ann", &["tool", "create", "--file", &file]).expect(0);
    as_user("sam", &["tool", "create", "--file", &file]).expect(0);
    as_user("sam", &["tool", "move", "report", "--to", "acme"]).expect(4);
    let moved = as_user("ann", &["tool", "move", "report", "--to", "acme"])
        .expect(0)
        .json();
    assert_eq!(moved["revision"], 2, "{moved}");
    as_user("ann", &["tool", "get", "report"]).expect(4);
    let viewer = as_user(
        "vic",
        &["tool", "move", "report", "--from", "acme", "--to", "me"],
    )
    .expect(6);
    assert!(
        viewer.stdout.contains("you are viewer of 'acme'"),
        "{viewer:?}"
    );
    // A name taken at the new owner: refused, saying how to rename.
    as_user("ed", &["tool", "create", "--file", &file]).expect(0);
    let clash = as_user(
        "ed",
        &["tool", "move", "report", "--from", "acme", "--to", "me"],
    )
    .expect(3);
    assert!(
        clash.stdout.contains("already has a tool named 'report'"),
        "{clash:?}"
    );
    as_user("ed", &["tool", "delete", "report"]).expect(0);
    let out = as_user(
        "ed",
        &["tool", "move", "report", "--from", "acme", "--to", "me"],
    )
    .expect(0)
    .json();
    assert_eq!(out["revision"], 3, "{out}");
    as_user("ed", &["tool", "get", "report"]).expect(0);

    // The move is audited with the person as the actor.
    let audit = env.json(&["audit", "--action", "tool.move"]);
    let actors: Vec<&str> = audit
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["actor"].as_str().unwrap())
        .collect();
    assert_eq!(actors, ["ed", "ann"], "{audit}");

    // Leaving; the last owner never leaves; then deleted by its owner.
    as_user("vic", &["org", "leave", "acme"]).expect(0);
    as_user("vic", &["org", "show", "acme"]).expect(4);
    let last = as_user("ann", &["org", "leave", "acme"]).expect(5);
    assert!(last.stdout.contains("last owner"), "{last:?}");
    as_user("ann", &["org", "remove-member", "acme", "ed"]).expect(0);
    as_user("ann", &["org", "delete", "acme"]).expect(0);
    as_user("ann", &["org", "show", "acme"]).expect(4);
}
