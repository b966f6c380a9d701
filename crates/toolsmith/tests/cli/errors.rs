//! Exit codes scripts rely on, invalid tool files, the database location, a corrupt database.

use serde_json::json;

use crate::support::{Env, example};

#[test]
fn invalid_tool_files_exit_3_and_name_the_file() {
    let env = Env::new();
    let cases = [
        ("syntax.json", "{\"name\": \"a\",", "not valid JSON"),
        ("syntax.yaml", "name: [unclosed\n", "not valid YAML"),
        (
            "typo.json",
            r#"{"name":"a","description":"d","parameters":{"type":"object"},"code":"return 1","permisions":["network"]}"#,
            "unknown field `permisions`",
        ),
        (
            "missing.yaml",
            "name: a\ndescription: d\nparameters: {type: object}\n",
            "missing field `code`",
        ),
        (
            "nocode.yml",
            "name: a\ndescription: d\nparameters: {type: object}\ncodeFile: absent.js\n",
            "cannot read codeFile",
        ),
        ("scalar.yaml", "just text\n", "expected an object"),
    ];
    for (name, content, why) in cases {
        let file = env.write(name, content);
        let out = env.run(&["tool", "create", "--file", &file]).expect(3);
        assert!(
            out.stderr
                .starts_with(&format!("error: invalid tool file {file}: ")),
            "{name}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(why), "{name}: {}", out.stderr);
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert_eq!(out.stdout, "");
    }
    let out = env
        .run(&["--json", "tool", "create", "--file", "nowhere.yaml"])
        .expect(3);
    let (code, message) = out.error_doc();
    assert_eq!(code, "validation_error");
    assert!(
        message.starts_with("cannot read tool file nowhere.yaml: "),
        "{message}"
    );
    // Nothing was stored.
    assert_eq!(env.json(&["tool", "list"])["total"], 0);
}

#[test]
fn service_validation_errors_exit_3() {
    let env = Env::new();
    env.create_examples();
    // The name is taken.
    let out = env
        .run(&[
            "--json",
            "tool",
            "create",
            "--file",
            &example("csv_analyzer.json"),
        ])
        .expect(3);
    let (code, message) = out.error_doc();
    assert_eq!(code, "name_taken");
    assert!(message.contains("csv_analyzer"), "{message}");

    // Forbidden code, a bad name, a schema that is not an object, a description too long.
    let base = json!({
        "name": "ok_name", "description": "d",
        "parameters": {"type": "object"}, "code": "return 1;"
    });
    let mut cases = Vec::new();
    let mut forbidden = base.clone();
    forbidden["code"] = json!("return eval('1');");
    cases.push((forbidden, "validation_error", "forbidden pattern"));
    let mut bad_name = base.clone();
    bad_name["name"] = json!("Bad Name!");
    cases.push((bad_name, "validation_error", ""));
    let mut bad_schema = base.clone();
    bad_schema["parameters"] = json!({"type": "string"});
    cases.push((bad_schema, "validation_error", ""));
    let mut long = base.clone();
    long["description"] = json!("x".repeat(4001));
    cases.push((long, "too_large", "4001"));
    for (i, (tool, expected_code, needle)) in cases.into_iter().enumerate() {
        let file = env.write(&format!("case{i}.json"), tool.to_string());
        let out = env
            .run(&["--json", "tool", "create", "--file", &file])
            .expect(3);
        let (code, message) = out.error_doc();
        assert_eq!(code, expected_code, "case {i}: {message}");
        assert!(message.contains(needle), "case {i}: {message}");
    }
    assert_eq!(env.json(&["tool", "list"])["total"], 2);
}

#[test]
fn limit_reached_exits_6() {
    let env = Env::new();
    env.json(&[
        "--max-tools-per-owner",
        "1",
        "tool",
        "create",
        "--file",
        &example("word_frequency.yaml"),
    ]);
    let out = env
        .run(&[
            "--json",
            "--max-tools-per-owner",
            "1",
            "tool",
            "create",
            "--file",
            &example("csv_analyzer.json"),
        ])
        .expect(6);
    let (code, message) = out.error_doc();
    assert_eq!(code, "limit_reached");
    assert!(message.contains("the limit is 1"), "{message}");
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::new();
    env.run(&["frobnicate"]).expect(2);
    env.run(&["tool", "list", "--status", "sleeping"]).expect(2);
    env.run(&["tool", "list", "--created-by", "robot"])
        .expect(2);
    env.run(&["run"]).expect(2);
    env.run(&["run", "x", "--args", "{}", "--args-file", "a.json"])
        .expect(2);
    env.run(&["run-code", "--file", "x.js", "--permission", "root"])
        .expect(2);
    let out = env
        .run(&[
            "--database-url",
            "postgres://u:s3cret@localhost:notaport/toolsmith",
            "tool",
            "list",
        ])
        .expect(2);
    assert!(out.stderr.contains("port"), "{}", out.stderr);
    assert!(!out.stderr.contains("s3cret"), "{}", out.stderr);
    let out = env
        .run(&[
            "--database-url",
            "mysql://localhost/toolsmith",
            "tool",
            "list",
        ])
        .expect(2);
    assert!(out.stderr.contains("unsupported database URL scheme"));
    assert!(!env.data_dir().exists());
}

#[test]
fn help_documents_exit_codes() {
    let env = Env::new();
    let out = env.run(&["--help"]).expect(0);
    for line in [
        "Exit codes:",
        "  0   success",
        "  1   the tool ran but returned an error",
        "  4   not found",
        "  10  store or internal error",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }
    for command in ["tool", "run", "run-code", "serve", "mcp", "token"] {
        assert!(
            out.stdout.contains(&format!("  {command} ")),
            "{}",
            out.stdout
        );
    }
    env.run(&["--version"]).expect(0);
    env.run(&["tool", "--help"]).expect(0);
}

#[test]
fn database_urls() {
    let env = Env::new();
    let abs = env.write("dbs/placeholder", "");
    let dir = std::path::Path::new(&abs).parent().unwrap().to_path_buf();
    let url = format!("sqlite://{}", dir.join("abs.db").display());
    assert!(url.starts_with("sqlite:///"));
    env.json(&[
        "--database-url",
        &url,
        "tool",
        "create",
        "--file",
        &example("word_frequency.yaml"),
    ]);
    assert!(dir.join("abs.db").is_file());
    assert_eq!(
        env.json(&["--database-url", &url, "tool", "list"])["total"],
        1
    );
    // The data dir was not used.
    assert!(!env.db_file().exists());

    // Relative URL and plain path: relative to the working directory.
    for url in ["sqlite://rel/x.db", "plain.db"] {
        env.json(&[
            "--database-url",
            url,
            "tool",
            "create",
            "--file",
            &example("word_frequency.yaml"),
        ]);
        assert_eq!(
            env.json(&["--database-url", url, "tool", "list"])["total"],
            1
        );
    }
    let root = dir.parent().unwrap();
    assert!(root.join("rel/x.db").is_file());
    assert!(root.join("plain.db").is_file());
}

#[test]
fn corrupt_database_exits_10_and_is_left_untouched() {
    let env = Env::new();
    std::fs::create_dir_all(env.data_dir()).unwrap();
    let garbage: Vec<u8> = (0..64 * 1024u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(env.db_file(), &garbage).unwrap();
    let file = env.db_file().display().to_string();

    let out = env.run(&["tool", "list"]).expect(10);
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
    assert!(out.stderr.contains(&file), "{}", out.stderr);
    assert!(out.stderr.contains("untouched"), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
    assert_eq!(out.stdout, "");

    let out = env
        .run(&[
            "--json",
            "tool",
            "create",
            "--file",
            &example("csv_analyzer.json"),
        ])
        .expect(10);
    let (code, message) = out.error_doc();
    assert_eq!(code, "store_error");
    assert!(message.contains(&file), "{message}");

    env.run(&["run", "word_frequency", "--args", "{}"])
        .expect(10);
    assert_eq!(std::fs::read(env.db_file()).unwrap(), garbage);
    // No journal or WAL was left next to it either.
    let mut names: Vec<String> = std::fs::read_dir(env.data_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["toolsmith.db"]);
}

/// Every exit code in one place, as docs/cli.md lists them.
#[test]
fn every_exit_code() {
    let env = Env::new();
    env.create_examples();
    let thrower = env.write("throw.js", "throw new Error('x');");
    let cases: [(&[&str], i32); 7] = [
        (&["tool", "list"], 0),
        (&["run-code", "--file", &thrower], 1),
        (&["tool", "lost"], 2),
        (&["run", "word_frequency", "--args", "{"], 3),
        (&["tool", "get", "nothing"], 4),
        (
            &[
                "tool",
                "disable",
                "word_frequency",
                "--expected-revision",
                "7",
            ],
            5,
        ),
        (
            &[
                "--max-tools-per-owner",
                "2",
                "tool",
                "create",
                "--file",
                &example("word_frequency.yaml"),
            ],
            6,
        ),
    ];
    for (args, code) in cases {
        env.run(args).expect(code);
    }
    std::fs::write(env.db_file(), b"not a database at all, not even close").unwrap();
    env.run(&["tool", "list"]).expect(10);
}

/// A command that reads, decides or deletes, pointed at a data directory with no store, says
/// which path it looked at and exits 4 — it never creates an empty store there. Commands that
/// write what a store is for still start one.
#[test]
fn a_missing_store_is_named_and_not_created() {
    let env = Env::new();
    let missing: [&[&str]; 9] = [
        &["tool", "list"],
        &["tool", "get", "word_frequency"],
        &["tool", "delete", "word_frequency"],
        &["approvals", "list"],
        &["approvals", "allow", "apr_0123456789abcdef"],
        &["audit"],
        &["config", "list"],
        &["policy", "show"],
        &["token", "list"],
    ];
    for args in missing {
        let out = env.run(args).expect(4);
        assert!(
            out.stderr.contains("no Toolsmith store at")
                && out.stderr.contains(&env.db_file().display().to_string())
                && out.stderr.contains("--data-dir"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(!env.db_file().exists(), "{args:?} created a store");
    }
    let out = env.run(&["--json", "tool", "list"]).expect(4);
    assert_eq!(out.error_doc().0, "not_found");

    env.create_examples();
    env.run(&["tool", "list"]).expect(0);
}

/// The hints the CLI prints name the store the person must point the next command at.
#[test]
fn hints_name_the_data_dir() {
    let env = Env::new();
    env.create_examples();
    env.run(&["tool", "disable", "word_frequency"]).expect(0);
    let out = env.run(&["run", "word_frequency", "--args", r#"{"text": "a b"}"#]);
    let data_dir = env.data_dir().display().to_string();
    assert!(
        out.stderr.contains(&format!(
            "`toolsmith --data-dir {data_dir} tool enable word_frequency`"
        )),
        "{out:?}"
    );
}
