//! `toolsmith resource …` through the real binary (issue 40): a resource and a template created
//! from files (the REST body, YAML or JSON) are listed and read for their user only, the
//! template's code runs on a read of a URI it matches, one is replaced from a file and deleted;
//! a malformed file is named; read-only mode refuses writes.

use crate::support::Env;

const TEXT: &str = r##"
name: style_guide
uri: docs://style-guide
description: How we write
mimeType: text/markdown
text: "# Style"
"##;

const TEMPLATE: &str = r#"{
  "name": "order",
  "uriTemplate": "shop://orders/{id}",
  "description": "One order",
  "code": "return {id: args.id, status: 'shipped'};"
}"#;

#[test]
fn a_resource_and_a_template_are_created_from_files_read_replaced_and_deleted() {
    let env = Env::new();
    let text = env.write("style.yaml", TEXT);
    let template = env.write("order.json", TEMPLATE);
    let created = env
        .run(&[
            "--json", "--user", "alice", "resource", "create", "--file", &text,
        ])
        .expect(0)
        .json();
    assert_eq!(
        (
            created[0]["kind"].as_str(),
            created[0]["createdBy"].as_str()
        ),
        (Some("text"), Some("user"))
    );
    env.run(&["--user", "alice", "resource", "create", "--file", &template])
        .expect(0);

    let table = env.run(&["--user", "alice", "resource", "list"]).expect(0);
    assert!(
        table.stdout.contains("style_guide") && table.stdout.contains("shop://orders/{id}"),
        "{}",
        table.stdout
    );
    let bobs = env
        .run(&["--json", "--user", "bob", "resource", "list"])
        .expect(0)
        .json();
    assert_eq!(bobs, serde_json::json!([]));
    let refused = env.run(&["--user", "bob", "resource", "read", "docs://style-guide"]);
    assert_ne!(refused.code, 0);

    let read = env
        .run(&["--user", "alice", "resource", "read", "docs://style-guide"])
        .expect(0)
        .json();
    assert_eq!(
        (read["mimeType"].as_str(), read["text"].as_str()),
        (Some("text/markdown"), Some("# Style"))
    );
    let computed = env
        .run(&["--user", "alice", "resource", "read", "shop://orders/42"])
        .expect(0)
        .json();
    assert_eq!(computed["mimeType"], "application/json");
    let value: serde_json::Value =
        serde_json::from_str(computed["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(value, serde_json::json!({"id": "42", "status": "shipped"}));

    let changed = env.write("style2.yaml", TEXT.replace("# Style", "# Style, v2"));
    let updated = env
        .run(&[
            "--json",
            "--user",
            "alice",
            "resource",
            "update",
            "style_guide",
            "--file",
            &changed,
        ])
        .expect(0)
        .json();
    assert_eq!(updated[0]["revision"], 2);

    let bad = env.write("bad.yaml", "name: x\nstray: 1\n");
    let refused = env.run(&["--user", "alice", "resource", "create", "--file", &bad]);
    assert_ne!(refused.code, 0);
    assert!(
        refused.stderr.contains("is not a resource"),
        "{}",
        refused.stderr
    );

    let ro = env.run_with_env(
        &["--user", "alice", "resource", "delete", "order"],
        None,
        &[("TOOLSMITH_READ_ONLY", "true")],
    );
    assert_ne!(ro.code, 0);
    assert!(ro.stderr.contains("read-only"), "{}", ro.stderr);
    env.run(&["--user", "alice", "resource", "delete", "order"])
        .expect(0);
    let left = env
        .run(&["--json", "--user", "alice", "resource", "list"])
        .expect(0)
        .json();
    assert_eq!(left.as_array().map(Vec::len), Some(1));
}
