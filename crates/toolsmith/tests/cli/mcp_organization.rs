//! `toolsmith mcp --organization` (issue 41): the stdio session of a member acts in the
//! organisation — its tools listed and called, with the member's role (a viewer's `create_tool`
//! refused naming the role) —, a non-member is stopped at once with the same words whether or
//! not the organisation exists, and a `--user` that is an organisation's id is refused.

use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_core::organization::{OrgMemberRecord, OrgRole, OrganizationRecord};
use toolsmith_store::OrgStore as _;

use crate::support::{Env, Out, example};

const ORG_ID: &str = "org_00000000000000ac";

/// A store holding the organisation `acme` (alice owner, bob viewer) and its tool
/// `word_frequency` (made with the CLI as the organisation, as an operator could), and bob's own
/// tool `csv_analyzer`.
fn seeded() -> Env {
    let env = Env::new();
    env.run(&[
        "--user",
        "bob",
        "tool",
        "create",
        "--file",
        &example("csv_analyzer.json"),
    ])
    .expect(0);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = toolsmith_store::SqliteStore::open(&env.db_file())
            .await
            .unwrap();
        let now = Utc::now();
        let org = OrganizationRecord {
            id: ORG_ID.to_owned(),
            name: "acme".to_owned(),
            display_name: "Acme".to_owned(),
            created_at: now,
            created_by: "alice".to_owned(),
        };
        let member = |user: &str, role| OrgMemberRecord {
            org_id: ORG_ID.to_owned(),
            user_id: user.to_owned(),
            role,
            added_at: now,
        };
        assert!(
            store
                .insert_organization(&org, &member("alice", OrgRole::Owner))
                .await
                .unwrap()
        );
        store
            .put_org_member(&member("bob", OrgRole::Viewer))
            .await
            .unwrap();
    });
    env.run(&[
        "--user",
        ORG_ID,
        "tool",
        "create",
        "--file",
        &example("word_frequency.yaml"),
    ])
    .expect(0);
    env
}

/// One stdio session of `args`: initialize, then `requests` (id 2, 3, …), then stdin closes.
fn session(env: &Env, args: &[&str], requests: &[Value]) -> Out {
    let mut input = String::new();
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "cli-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (n, request) in requests.iter().enumerate() {
        let mut request = request.clone();
        request["jsonrpc"] = json!("2.0");
        request["id"] = json!(n + 2);
        lines.push(request);
    }
    for line in lines {
        input.push_str(&line.to_string());
        input.push('\n');
    }
    env.run_with_stdin(args, Some(input.as_bytes()))
}

/// The answer to request `id` on the session's stdout.
fn answer(out: &Out, id: u64) -> Value {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["id"] == json!(id))
        .unwrap_or_else(|| {
            panic!(
                "no answer {id}\nstdout: {}\nstderr: {}",
                out.stdout, out.stderr
            )
        })
}

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_member_acts_in_the_organisation_over_stdio_with_their_role() {
    let env = seeded();
    let requests = [
        json!({"method": "tools/list"}),
        json!({"method": "tools/call", "params": {"name": "word_frequency",
            "arguments": {"text": "the cat and the hat"}}}),
        json!({"method": "tools/call", "params": {"name": "create_tool", "arguments": {
            "name": "by_viewer", "description": "d", "code": "return 1;",
            "parameters": {"type": "object", "properties": {}}}}}),
    ];
    let out = session(
        &env,
        &["--user", "bob", "mcp", "--organization", "acme"],
        &requests,
    )
    .expect(0);
    let listed = names(&answer(&out, 2));
    assert!(
        listed.iter().any(|n| n == "word_frequency") && !listed.iter().any(|n| n == "csv_analyzer"),
        "{listed:?}"
    );
    let ran = answer(&out, 3);
    assert_eq!(ran["result"]["isError"], json!(false), "{ran}");
    let refused = answer(&out, 4);
    assert_eq!(refused["result"]["isError"], json!(true), "{refused}");
    assert!(
        refused
            .to_string()
            .contains("organisation 'acme' as viewer"),
        "{refused}"
    );

    // The same person without the option acts as themselves; by the id, in the organisation.
    let own = session(&env, &["--user", "bob", "mcp"], &requests[..1]).expect(0);
    let listed = names(&answer(&own, 2));
    assert!(
        listed.iter().any(|n| n == "csv_analyzer") && !listed.iter().any(|n| n == "word_frequency"),
        "{listed:?}"
    );
    let by_id = session(
        &env,
        &["--user", "bob", "mcp", "--organization", ORG_ID],
        &requests[..1],
    )
    .expect(0);
    assert!(names(&answer(&by_id, 2)).contains(&"word_frequency".to_owned()));
}

#[test]
fn a_stranger_and_an_organisation_as_user_are_refused_before_the_session() {
    let env = seeded();
    let stranger = session(
        &env,
        &["--user", "dave", "mcp", "--organization", "acme"],
        &[],
    );
    let nowhere = session(
        &env,
        &["--user", "dave", "mcp", "--organization", "nowhere"],
        &[],
    );
    assert_ne!(stranger.code, 0, "{}", stranger.stderr);
    assert!(
        stranger
            .stderr
            .contains("no organisation 'acme' of which you ('dave') are a member"),
        "{}",
        stranger.stderr
    );
    let said = |out: &Out| -> String {
        out.stderr
            .lines()
            .find(|l| l.contains("no organisation"))
            .unwrap_or_else(|| panic!("{}", out.stderr))
            .to_owned()
    };
    assert_eq!(
        said(&stranger).replace("acme", "X"),
        said(&nowhere).replace("nowhere", "X")
    );
    assert!(stranger.stdout.is_empty(), "{}", stranger.stdout);
    let as_org = session(&env, &["--user", ORG_ID, "mcp"], &[]);
    assert_ne!(as_org.code, 0);
    assert!(
        as_org.stderr.contains("a person never is an organisation"),
        "{}",
        as_org.stderr
    );
}
