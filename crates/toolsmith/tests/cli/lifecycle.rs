//! The lifecycle of custom tools through `toolsmith tool …`.

use serde_json::{Value, json};

use crate::support::{Env, example, examples_dir};

fn names(list: &Value) -> Vec<&str> {
    list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect()
}

#[test]
fn create_from_yaml_with_code_file() {
    let env = Env::new();
    let tool = env.json(&["tool", "create", "--file", &example("word_frequency.yaml")]);
    let code = std::fs::read_to_string(examples_dir().join("word_frequency.js")).unwrap();
    assert_eq!(tool["name"], "word_frequency");
    assert_eq!(tool["description"], "Count word frequency in a text");
    assert_eq!(tool["code"], code.as_str());
    assert_eq!(
        tool["parameters"],
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to analyze"}},
            "required": ["text"]
        })
    );
    assert_eq!(tool["status"], "active");
    assert_eq!(tool["createdBy"], "user");
    assert_eq!(tool["owner"], "default");
    assert_eq!(tool["kind"], "js");
    assert_eq!(tool["version"], 1);
    assert_eq!(tool["revision"], 1);
    assert_eq!(tool["usageCount"], 0);
    assert_eq!(tool["category"], "text");
    assert_eq!(tool["tags"], json!(["words", "statistics"]));
    assert_eq!(tool["permissions"], json!([]));
    assert_eq!(tool["requiresApproval"], false);
    assert!(
        tool["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("tool_") && id.len() == 21)
    );
    // The database is where --data-dir says.
    assert!(env.db_file().is_file());
}

#[test]
fn create_from_json_and_from_stdin() {
    let env = Env::new();
    let tool = env.json(&["tool", "create", "-f", &example("csv_analyzer.json")]);
    assert_eq!(tool["name"], "csv_analyzer");
    assert_eq!(tool["category"], "data");
    assert!(
        tool["code"]
            .as_str()
            .unwrap()
            .starts_with("const records = utils.parseCsv(args.csv);")
    );

    // `-` reads the tool from stdin; snake_case field names are accepted too.
    let doc = json!({
        "name": "shout", "description": "Upper-cases a text",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        "code": "return args.text.toUpperCase();",
        "requires_approval": true, "metadata": {"team": "docs"}
    });
    let out = env
        .run_with_stdin(
            &["--json", "tool", "create", "--file", "-"],
            Some(doc.to_string().as_bytes()),
        )
        .expect(0);
    let tool = out.json();
    assert_eq!(tool["requiresApproval"], true);
    assert_eq!(tool["metadata"], json!({"team": "docs"}));
    assert_eq!(tool["status"], "active");

    // Human output: one summary line.
    let out = env
        .run(&["tool", "create", "--file", &example("word_frequency.yaml")])
        .expect(0);
    assert!(
        out.stdout.starts_with("created word_frequency (tool_")
            && out
                .stdout
                .ends_with("): status active, version 1, revision 1\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn list_with_filters_and_paging() {
    let env = Env::new();
    env.create_examples();
    let all = env.json(&["tool", "list"]);
    assert_eq!(names(&all), ["csv_analyzer", "word_frequency"]);
    assert_eq!(all["total"], 2);

    let by_category = env.json(&["tool", "list", "--category", "text"]);
    assert_eq!(names(&by_category), ["word_frequency"]);
    let by_search = env.json(&["tool", "list", "--search", "CSV"]);
    assert_eq!(names(&by_search), ["csv_analyzer"]);
    let by_creator = env.json(&["tool", "list", "--created-by", "llm"]);
    assert_eq!(by_creator, json!({"tools": [], "total": 0}));
    let by_creator = env.json(&["tool", "list", "--created-by", "user"]);
    assert_eq!(by_creator["total"], 2);
    let page = env.json(&["tool", "list", "--limit", "1", "--offset", "1"]);
    assert_eq!(names(&page), ["word_frequency"]);
    assert_eq!(page["total"], 2);

    env.run(&["tool", "disable", "csv_analyzer"]).expect(0);
    let disabled = env.json(&["tool", "list", "--status", "disabled"]);
    assert_eq!(names(&disabled), ["csv_analyzer"]);
    let active = env.json(&["tool", "list", "--status", "active"]);
    assert_eq!(names(&active), ["word_frequency"]);

    // Human table: aligned columns in a fixed order.
    let out = env.run(&["tool", "list"]).expect(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", out.stdout);
    assert_eq!(
        lines[0],
        "NAME            STATUS    VERSION  REV  CREATED BY  USES  CATEGORY  ID"
    );
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        row[..7],
        ["csv_analyzer", "disabled", "1", "2", "user", "0", "data"]
    );
    assert!(row[7].starts_with("tool_"));
    let row: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        row[..7],
        ["word_frequency", "active", "1", "1", "user", "0", "text"]
    );
    // Columns line up under their headers.
    let id_col = lines[0].find("ID").unwrap();
    assert!(lines[1][id_col..].starts_with("tool_"));
    assert!(lines[2][id_col..].starts_with("tool_"));

    // Another user sees none of these tools.
    let other = env.json(&["--user", "alice", "tool", "list"]);
    assert_eq!(other["total"], 0);
    let out = env.run(&["tool", "list", "--user", "alice"]).expect(0);
    assert_eq!(out.stdout, "no custom tools\n");
}

#[test]
fn get_by_name_and_id() {
    let env = Env::new();
    let (words, _) = env.create_examples();
    let id = words["id"].as_str().unwrap();
    let by_id = env.json(&["tool", "get", id]);
    assert_eq!(by_id, words);
    let by_name = env.json(&["tool", "get", "word_frequency"]);
    assert_eq!(by_name, words);

    let out = env.run(&["tool", "get", "word_frequency"]).expect(0);
    let text = out.stdout;
    assert!(
        text.starts_with("name:              word_frequency\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("\nid:                {id}\n")),
        "{text}"
    );
    assert!(text.contains("\nstatus:            active\n"), "{text}");
    assert!(
        text.contains("\ntags:              words, statistics\n"),
        "{text}"
    );
    assert!(text.contains("\npermissions:       -\n"), "{text}");
    assert!(text.contains("\nlast used:         never\n"), "{text}");
    // The code comes last, indented.
    assert!(
        text.contains(
            "\ncode:\n  const words = args.text.toLowerCase().match(/\\b\\w+\\b/g) || [];\n"
        ),
        "{text}"
    );
    assert!(text.ends_with(
        "  return { totalWords: words.length, uniqueWords: Object.keys(freq).length, top20: sorted };\n"
    ));
}

#[test]
fn update_versions_revisions_and_history() {
    let env = Env::new();
    env.create_examples();
    // A YAML patch with codeFile: code changes → version and revision move.
    env.write(
        "patches/v2.js",
        "return { words: args.text.split(/\\s+/).length };\n",
    );
    let patch = env.write(
        "patches/v2.yaml",
        "codeFile: v2.js\ndescription: Count words\n",
    );
    let v2 = env.json(&[
        "tool",
        "update",
        "word_frequency",
        "--file",
        &patch,
        "--expected-revision",
        "1",
    ]);
    assert_eq!(v2["version"], 2);
    assert_eq!(v2["revision"], 2);
    assert_eq!(
        v2["code"],
        "return { words: args.text.split(/\\s+/).length };\n"
    );
    assert_eq!(v2["description"], "Count words");
    let run = env.json(&["run", "word_frequency", "--args", r#"{"text": "a b c"}"#]);
    assert_eq!(run["content"], json!({"words": 3}));

    // Only metadata-like fields: revision moves, version does not.
    let patch = env.write("patches/tags.json", r#"{"tags": ["x"], "category": ""}"#);
    let tagged = env.json(&["tool", "update", "word_frequency", "--file", &patch]);
    assert_eq!(tagged["version"], 2);
    assert_eq!(tagged["revision"], 3);
    assert_eq!(tagged["tags"], json!(["x"]));
    assert_eq!(tagged["category"], Value::Null);

    // The same patch again changes nothing.
    let out = env
        .run(&["tool", "update", "word_frequency", "--file", &patch])
        .expect(0);
    assert!(
        out.stdout.starts_with("unchanged word_frequency (tool_"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.ends_with("version 2, revision 3\n"));

    // A stale revision is a conflict (exit 5) and changes nothing.
    let patch = env.write("patches/desc.json", r#"{"description": "stale"}"#);
    let out = env
        .run(&[
            "--json",
            "tool",
            "update",
            "word_frequency",
            "--file",
            &patch,
            "--expected-revision",
            "1",
        ])
        .expect(5);
    assert_eq!(
        out.error_doc(),
        (
            "revision_conflict".to_owned(),
            "revision conflict: expected revision 1, but the tool is at revision 3".to_owned()
        )
    );
    assert_eq!(
        out.stderr,
        "error: revision conflict: expected revision 1, but the tool is at revision 3\n"
    );
    assert_eq!(env.json(&["tool", "get", "word_frequency"])["revision"], 3);

    // History: newest first.
    let history = env.json(&["tool", "history", "word_frequency"]);
    let versions: Vec<i64> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [2, 1]);
    assert_eq!(history[1]["description"], "Count word frequency in a text");
    let out = env.run(&["tool", "history", "word_frequency"]).expect(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("VERSION  CREATED"), "{}", out.stdout);
    assert!(lines[1].starts_with("2 *  "), "{}", out.stdout);
    assert!(lines[2].starts_with("1    "), "{}", out.stdout);
    assert!(lines[2].ends_with("Count word frequency in a text"));

    // Rollback to version 1: a new version 3 with the old code.
    let original = std::fs::read_to_string(examples_dir().join("word_frequency.js")).unwrap();
    let rolled = env.json(&[
        "tool",
        "rollback",
        "word_frequency",
        "--version",
        "1",
        "--expected-revision",
        "3",
    ]);
    assert_eq!(rolled["version"], 3);
    assert_eq!(rolled["revision"], 4);
    assert_eq!(rolled["code"], original.as_str());
    assert_eq!(rolled["description"], "Count word frequency in a text");
    let history = env.json(&["tool", "history", "word_frequency"]);
    assert_eq!(history.as_array().unwrap().len(), 3);
    assert_eq!(history[0]["version"], 3);
    let run = env.json(&["run", "word_frequency", "--args", r#"{"text": "a b a"}"#]);
    assert_eq!(run["content"]["totalWords"], 3);

    // Unknown version: not found. Stale revision: conflict.
    let out = env
        .run(&["tool", "rollback", "word_frequency", "--version", "9"])
        .expect(4);
    assert!(
        out.stderr.starts_with("error: ") && out.stderr.contains("version 9"),
        "{}",
        out.stderr
    );
    env.run(&[
        "tool",
        "rollback",
        "word_frequency",
        "--version",
        "1",
        "--expected-revision",
        "3",
    ])
    .expect(5);
}

#[test]
fn enable_disable_approve_reject() {
    let env = Env::new();
    env.create_examples();
    let disabled = env.json(&[
        "tool",
        "disable",
        "word_frequency",
        "--expected-revision",
        "1",
    ]);
    assert_eq!(disabled["status"], "disabled");
    assert_eq!(disabled["revision"], 2);
    // Idempotent: nothing changes.
    let again = env.json(&["tool", "disable", "word_frequency"]);
    assert_eq!(again["revision"], 2);

    // A disabled tool is not in the catalog.
    let out = env
        .run(&["run", "word_frequency", "--args", r#"{"text": "a"}"#])
        .expect(4);
    assert_eq!(
        out.stderr,
        format!(
            "error: no tool named 'word_frequency' (tool 'word_frequency' is disabled; enable it \
             with `toolsmith --data-dir {} tool enable word_frequency`)\n",
            env.data_dir().display()
        )
    );

    env.run(&[
        "tool",
        "enable",
        "word_frequency",
        "--expected-revision",
        "1",
    ])
    .expect(5);
    let out = env.run(&["tool", "enable", "word_frequency"]).expect(0);
    assert!(out.stdout.starts_with("enabled word_frequency (tool_"));
    assert!(
        out.stdout
            .ends_with("): status active, version 1, revision 3\n")
    );
    env.run(&["run", "word_frequency", "--args", r#"{"text": "a"}"#])
        .expect(0);

    // Approve and reject only apply to tools pending approval: a user's tool is active.
    let out = env
        .run(&["--json", "tool", "approve", "csv_analyzer"])
        .expect(5);
    assert_eq!(
        out.error_doc(),
        (
            "invalid_state".to_owned(),
            "tool 'csv_analyzer' is active; only tools pending approval can be approved or \
             rejected"
                .to_owned()
        )
    );
    env.run(&["tool", "reject", "csv_analyzer"]).expect(5);
    env.run(&["tool", "approve", "nope"]).expect(4);
}

#[test]
fn delete() {
    let env = Env::new();
    let (words, _) = env.create_examples();
    env.run(&[
        "tool",
        "delete",
        "word_frequency",
        "--expected-revision",
        "2",
    ])
    .expect(5);
    let gone = env.json(&[
        "tool",
        "delete",
        "word_frequency",
        "--expected-revision",
        "1",
    ]);
    assert_eq!(gone["id"], words["id"]);
    let out = env.run(&["tool", "get", "word_frequency"]).expect(4);
    assert_eq!(out.stderr, "error: no custom tool named 'word_frequency'\n");
    let out = env.run(&["tool", "delete", "csv_analyzer"]).expect(0);
    assert!(out.stdout.starts_with("deleted csv_analyzer (tool_"));
    assert_eq!(env.json(&["tool", "list"])["total"], 0);
    // The name is free again.
    env.create_examples();
}

#[test]
fn stats_count_tools_and_uses() {
    let env = Env::new();
    // A store with no tool yet (`tool stats` on no store at all says so and exits 4).
    env.run(&["config", "add-service", "placeholder"]).expect(0);
    assert_eq!(
        env.json(&["tool", "stats"]),
        json!({
            "total": 0, "active": 0, "disabled": 0, "pendingApproval": 0, "rejected": 0,
            "createdByUser": 0, "createdByLlm": 0, "totalUsage": 0
        })
    );
    env.create_examples();
    for _ in 0..3 {
        env.run(&["run", "word_frequency", "--args", r#"{"text": "x"}"#])
            .expect(0);
    }
    // Arguments refused by the schema never reach the tool: no use.
    env.run(&["run", "csv_analyzer", "--args", r#"{"csv": 1}"#])
        .expect(3);
    env.run(&["run", "csv_analyzer", "--args", r#"{"csv": "a\n1"}"#])
        .expect(0);
    env.run(&["tool", "disable", "csv_analyzer"]).expect(0);
    let stats = env.json(&["tool", "stats"]);
    assert_eq!(
        stats,
        json!({
            "total": 2, "active": 1, "disabled": 1, "pendingApproval": 0, "rejected": 0,
            "createdByUser": 2, "createdByLlm": 0, "totalUsage": 4
        })
    );
    assert_eq!(
        env.json(&["tool", "get", "word_frequency"])["usageCount"],
        3
    );
    let out = env.run(&["tool", "stats"]).expect(0);
    assert_eq!(
        out.stdout,
        "total:            2\nactive:           1\ndisabled:         1\npending approval: 0\n\
         rejected:         0\ncreated by user:  2\ncreated by llm:   0\ntotal uses:       4\n"
    );
}

/// A patch file's `outputSchema` replaces the tool's declared output schema (kept in
/// `metadata.outputSchema`, the rest of the metadata kept), and the next run is checked
/// against it; an unusable one is refused by name.
#[test]
fn an_update_file_changes_the_output_schema() {
    let env = Env::new();
    env.create(&json!({
        "name": "pair",
        "description": "Answers a pair",
        "parameters": {"type": "object"},
        "metadata": {"note": "kept"},
        "code": "return {n: 1, s: 'one'};"
    }));
    let strict = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "additionalProperties": false
    });
    let patch = env.write(
        "patches/output.json",
        json!({"outputSchema": strict}).to_string(),
    );
    let updated = env.json(&["tool", "update", "pair", "--file", &patch]);
    assert_eq!(updated["metadata"]["outputSchema"], strict, "{updated}");
    assert_eq!(updated["metadata"]["note"], "kept", "{updated}");
    let out = env.run(&["--json", "run", "pair"]);
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("does not match its outputSchema"),
        "{} {}",
        out.stdout,
        out.stderr
    );

    let patch = env.write(
        "patches/bad.json",
        json!({"outputSchema": {"type": "string"}}).to_string(),
    );
    let out = env
        .run(&["tool", "update", "pair", "--file", &patch])
        .expect(3);
    assert!(out.stderr.contains("outputSchema"), "{}", out.stderr);
}
