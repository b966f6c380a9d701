//! `toolsmith db copy`: a store moved to PostgreSQL and back with the real binary, its tools
//! callable, its secret readable (with the same key) and its custom table's row count rebuilt
//! by the destination's triggers on each copy; a destination with data
//! refused until `--replace`; bad URLs, a missing source and one database given twice answered
//! with the reason.

use serde_json::json;
use toolsmith_store::testkit::pg_or_skip;

use crate::support::Env;

const SECRET: &str = "plum-harbor-8841-secret";

/// A tool that returns the `mail` service's API key reversed (the result is scrubbed of the
/// key itself, not of its reverse).
fn create_key_reader(env: &Env) {
    env.create(&json!({
        "name": "read_key",
        "description": "returns the mail key reversed",
        "parameters": {"type": "object"},
        "requiredApiKeys": [{"name": "mail"}],
        "code": "return utils.getApiKey('mail').split('').reverse().join('');",
    }));
}

fn reversed(text: &str) -> String {
    text.chars().rev().collect()
}

#[test]
fn a_store_moves_to_postgres_and_back_with_its_tools_and_sealed_secrets() {
    let Some(cluster) = pg_or_skip() else { return };
    let pg = cluster.create_database().expect("database");
    let env = Env::new();
    create_key_reader(&env);
    env.run_with_stdin(
        &["config", "set", "mail", "api_key=@-"],
        Some(SECRET.as_bytes()),
    )
    .expect(0);
    env.run(&["run", "read_key"]).expect(0);
    // The agent's own data too: a custom table with two rows, whose count the destination's
    // triggers must rebuild (`data_record_counts` is derived, not copied).
    let table = r#"{"table": "log", "columns": [{"name": "title", "type": "text"}]}"#;
    env.run(&["run", "create_custom_table", "--args", table])
        .expect(0);
    for title in ["a", "b"] {
        let row = format!(r#"{{"table": "log", "data": {{"title": "{title}"}}}}"#);
        env.run(&["run", "add_custom_record", "--args", &row])
            .expect(0);
    }
    let key = std::fs::read_to_string(env.data_dir().join("secret.key")).expect("key file");
    let source = env.db_file().display().to_string();
    let with_key = [("TOOLSMITH_SECRET_KEY", key.trim())];
    let rows_on = |url: Option<&str>| -> serde_json::Value {
        let mut args = Vec::new();
        if let Some(url) = url {
            args.extend(["--database-url", url]);
        }
        args.extend(["--json", "run", "list_custom_tables", "--args", "{}"]);
        let doc = env.run_with_env(&args, None, &with_key).expect(0).json();
        let tables = &doc["content"]["tables"];
        assert!(tables.is_array(), "no tables in {doc}");
        tables[0]["recordCount"].clone()
    };
    assert_eq!(rows_on(None), json!(2));

    let out = env
        .run(&["db", "copy", "--from", &source, "--to", &pg])
        .expect(0);
    for line in [
        "custom_tools",
        "tool_executions",
        "config_entries",
        "verified",
        "sealed",
    ] {
        assert!(out.stdout.contains(line), "{line}: {}", out.stdout);
    }
    // On PostgreSQL, with the same key: the tool runs and reads the secret.
    let ran = env
        .run_with_env(&["--database-url", &pg, "run", "read_key"], None, &with_key)
        .expect(0);
    assert!(ran.stdout.contains(&reversed(SECRET)), "{}", ran.stdout);
    assert_eq!(rows_on(Some(&pg)), json!(2));

    // And back into a new SQLite file, with the counts as JSON: every call on both stores comes
    // along, built-in ones too (each call is recorded, its source with it): on SQLite read_key,
    // create_custom_table, add_custom_record twice and list_custom_tables; on PostgreSQL
    // read_key and list_custom_tables.
    let back = env.write("back/placeholder", "");
    let back = std::path::Path::new(&back).with_file_name("toolsmith.db");
    let back = back.display().to_string();
    let doc = env
        .run(&["--json", "db", "copy", "--from", &pg, "--to", &back])
        .expect(0)
        .json();
    let tables = doc["tables"].as_array().expect("tables");
    let executions = tables
        .iter()
        .find(|t| t["table"] == "tool_executions")
        .expect("tool_executions counted");
    assert_eq!(executions["sourceRows"], json!(7), "{doc}");
    assert_eq!(executions["destinationRows"], json!(7), "{doc}");
    assert!(!doc.to_string().contains(SECRET));
    let ran = env
        .run_with_env(
            &["--database-url", &back, "run", "read_key"],
            None,
            &with_key,
        )
        .expect(0);
    assert!(ran.stdout.contains(&reversed(SECRET)), "{}", ran.stdout);
    assert_eq!(rows_on(Some(&back)), json!(2));
}

#[test]
fn a_destination_with_data_is_refused_until_replace() {
    let env = Env::new();
    create_key_reader(&env);
    let other = Env::new();
    other.create(&json!({"name": "theirs", "description": "d",
                         "parameters": {"type": "object"}, "code": "return 1"}));
    let (from, to) = (
        env.db_file().display().to_string(),
        other.db_file().display().to_string(),
    );

    let out = env
        .run(&["db", "copy", "--from", &from, "--to", &to])
        .expect(5);
    assert!(
        out.stderr.contains("already holds data")
            && out.stderr.contains("custom_tools: 1 rows")
            && out.stderr.contains("--replace"),
        "{}",
        out.stderr
    );
    let (code, message) = env
        .run(&["--json", "db", "copy", "--from", &from, "--to", &to])
        .expect(5)
        .error_doc();
    assert_eq!(code, "conflict");
    assert!(message.contains("--replace"), "{message}");
    other.run(&["tool", "get", "theirs"]).expect(0);

    env.run(&["db", "copy", "--from", &from, "--to", &to, "--replace"])
        .expect(0);
    other.run(&["tool", "get", "theirs"]).expect(4);
    other.run(&["tool", "get", "read_key"]).expect(0);
}

#[test]
fn bad_urls_a_missing_source_and_one_database_twice_are_answered_clearly() {
    let env = Env::new();
    create_key_reader(&env);
    let db = env.db_file().display().to_string();
    let cases: &[(&[&str], i32, &[&str])] = &[
        (
            &["--from", "mysql://h/db", "--to", "x.db"],
            2,
            &["invalid --from", "unsupported database URL scheme 'mysql'"],
        ),
        (
            &["--from", &db, "--to", "postgres://u:hunter2@h:notaport/db"],
            2,
            &["invalid --to", "not a valid PostgreSQL URL"],
        ),
        (
            &["--from", "nowhere/toolsmith.db", "--to", "x.db"],
            4,
            &["the source nowhere/toolsmith.db does not exist"],
        ),
        (
            &["--from", &db, "--to", &format!("sqlite://{db}")],
            2,
            &["the same database", "two different databases"],
        ),
    ];
    for (args, code, wanted) in cases {
        let mut all = vec!["db", "copy"];
        all.extend_from_slice(args);
        let out = env.run(&all).expect(*code);
        for w in *wanted {
            assert!(out.stderr.contains(w), "{args:?}: {w}: {}", out.stderr);
        }
        assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
    }
    // Nothing was created for the refused copies.
    assert!(!env.data_dir().join("../nowhere").exists());
    assert!(!env.data_dir().join("../x.db").exists());

    // A PostgreSQL server that is not there: the start-up budget, then the reason.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://u:hunter2@127.0.0.1:{port}/db");
    let out = env
        .run(&[
            "--database-startup-timeout",
            "1s",
            "db",
            "copy",
            "--from",
            &db,
            "--to",
            &url,
        ])
        .expect(10);
    assert!(
        out.stderr.contains("cannot open the destination")
            && out.stderr.contains("cannot reach the database"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("hunter2"), "{}", out.stderr);
}
