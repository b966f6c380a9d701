//! `toolsmith run` and `toolsmith run-code`: the spec's examples with exact values, large
//! arguments and code read from files, tool errors.

use serde_json::{Value, json};

use crate::support::Env;

/// The spec's `word_frequency` on a short text.
#[test]
fn word_frequency_example() {
    let env = Env::new();
    env.create_examples();
    let args = json!({"text": "The cat and the hat. The END, the end!"}).to_string();
    let res = env.json(&["run", "word_frequency", "--args", &args]);
    assert_eq!(res["isError"], false);
    assert_eq!(
        res["content"],
        json!({
            "totalWords": 9,
            "uniqueWords": 5,
            "top20": [["the", 4], ["end", 2], ["cat", 1], ["and", 1], ["hat", 1]]
        })
    );
    assert!(
        res["metadata"]["durationMs"]
            .as_f64()
            .is_some_and(|d| d > 0.0)
    );

    // Human mode: the content as pretty JSON on stdout, nothing on stderr.
    let out = env
        .run(&["run", "word_frequency", "--args", &args])
        .expect(0);
    let content: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(content, res["content"]);
    assert!(out.stdout.starts_with("{\n  \""), "{}", out.stdout);
    assert_eq!(out.stderr, "");
}

/// The spec's `csv_analyzer`, with and without a numeric column.
#[test]
fn csv_analyzer_example() {
    let env = Env::new();
    env.create_examples();
    let csv = "fruit,price,origin\napple,1.5,NZ\npear,2,FR\nfig,3.25,TR\nplum,n/a,DE\nkiwi,10,NZ";
    let args = json!({"csv": csv, "numeric_column": "price"}).to_string();
    let args_file = env.write("csv-args.json", &args);
    let res = env.json(&["run", "csv_analyzer", "--args-file", &args_file]);
    assert_eq!(res["isError"], false, "{res}");
    let content = &res["content"];
    assert_eq!(content["rowCount"], 5);
    assert_eq!(content["columns"], json!(["fruit", "price", "origin"]));
    assert_eq!(
        content["stats"],
        json!({"count": 4, "sum": 16.75, "avg": 4.19, "min": 1.5, "max": 10})
    );
    let id = content["id"].as_str().unwrap();
    assert_eq!(id.len(), 36, "{id}");
    assert_eq!(id.matches('-').count(), 4, "{id}");
    let analyzed_at = content["analyzedAt"].as_str().unwrap();
    assert!(
        analyzed_at.len() >= 20 && analyzed_at.ends_with('Z') && analyzed_at.contains('T'),
        "{analyzed_at}"
    );
    let mut fields: Vec<&String> = content.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["analyzedAt", "columns", "id", "rowCount", "stats"]);

    // Without a numeric column: no stats. An unknown column: no stats either.
    let res = env.json(&[
        "run",
        "csv_analyzer",
        "--args",
        &json!({"csv": csv}).to_string(),
    ]);
    assert_eq!(res["content"]["rowCount"], 5);
    assert!(res["content"].get("stats").is_none());
    let args = json!({"csv": csv, "numeric_column": "weight"}).to_string();
    let res = env.json(&["run", "csv_analyzer", "--args", &args]);
    assert!(res["content"].get("stats").is_none());
    // No records: the tool's own error object, which is a successful call.
    let res = env.json(&["run", "csv_analyzer", "--args", r#"{"csv": ""}"#]);
    assert_eq!(res["content"], json!({"error": "No records found in CSV"}));
    assert_eq!(res["isError"], false);
}

/// ~300 KB of text: `word_frequency` over `lorem ipsum dolor ` × 17,000.
fn large_text() -> String {
    "lorem ipsum dolor ".repeat(17_000)
}

fn large_text_result() -> Value {
    json!({
        "totalWords": 51_000,
        "uniqueWords": 3,
        "top20": [["lorem", 17_000], ["ipsum", 17_000], ["dolor", 17_000]]
    })
}

/// The reference broke at ~100 KB of arguments on a command line; files and stdin have no
/// such limit.
#[test]
fn large_arguments_from_a_file_and_stdin() {
    let env = Env::new();
    env.create_examples();
    let args = json!({"text": large_text()}).to_string();
    assert!(args.len() > 300_000, "{}", args.len());
    let file = env.write("big-args.json", &args);
    let res = env.json(&["run", "word_frequency", "--args-file", &file]);
    assert_eq!(res["content"], large_text_result());

    let out = env
        .run_with_stdin(
            &["--json", "run", "word_frequency", "--args", "-"],
            Some(args.as_bytes()),
        )
        .expect(0);
    assert_eq!(out.json()["content"], large_text_result());
    let out = env
        .run_with_stdin(
            &["--json", "run", "word_frequency", "--args-file", "-"],
            Some(args.as_bytes()),
        )
        .expect(0);
    assert_eq!(out.json()["content"], large_text_result());
}

/// Code is read from the file: a 300 KB file reaches the service whole (and is refused by the
/// 200 KB code limit with its exact size); a 190 KB file runs.
#[test]
fn run_code_from_large_files() {
    let env = Env::new();
    let mut big = String::from("return 'too big';\n");
    while big.len() < 300 * 1024 {
        big.push_str("// padding padding padding padding padding padding padding padding\n");
    }
    let file = env.write("big.js", &big);
    let out = env.run(&["--json", "run-code", "--file", &file]).expect(3);
    let res = out.json();
    assert_eq!(res["isError"], true);
    assert_eq!(res["metadata"]["errorKind"], "invalid_arguments");
    let message = format!(
        "tool code is {} bytes, over the limit of 204800 bytes",
        big.len()
    );
    assert_eq!(res["content"]["error"], message.as_str());
    assert_eq!(out.stderr, format!("error: {message}\n"));

    let payload = "x".repeat(190 * 1024);
    let code =
        format!("const pad = '{payload}';\nreturn {{ length: pad.length, n: args.n * 2 }};\n");
    let file = env.write("fits.js", &code);
    let args_file = env.write("fits-args.json", r#"{"n": 21}"#);
    let res = env.json(&["run-code", "--file", &file, "--args-file", &args_file]);
    assert_eq!(res["content"], json!({"length": 190 * 1024, "n": 42}));

    // Large arguments to ephemeral code, from stdin.
    let code = env.write(
        "count.js",
        "return args.text.split(' ').filter(w => w).length;",
    );
    let args = json!({"text": large_text()}).to_string();
    let out = env
        .run_with_stdin(
            &["--json", "run-code", "--file", &code, "--args", "-"],
            Some(args.as_bytes()),
        )
        .expect(0);
    assert_eq!(out.json()["content"], 51_000);
}

#[test]
fn run_code_output_console_and_permissions() {
    let env = Env::new();
    let code = env.write(
        "hello.js",
        "console.log('hello ' + args.who);\nconsole.warn('careful');\nreturn 'hi ' + args.who;",
    );
    let out = env
        .run(&["run-code", "--file", &code, "--args", r#"{"who": "ana"}"#])
        .expect(0);
    assert_eq!(out.stdout, "hi ana\n");
    assert!(out.stderr.contains("[console.log] "), "{}", out.stderr);
    assert!(out.stderr.contains("hello ana"), "{}", out.stderr);
    assert!(out.stderr.contains("[console.warn] "), "{}", out.stderr);

    let res = env.json(&["run-code", "--file", &code, "--args", r#"{"who": "bo"}"#]);
    assert_eq!(res["content"], "hi bo");
    let console = res["metadata"]["console"].as_array().unwrap();
    assert_eq!(console.len(), 2);
    assert_eq!(console[0]["level"], "log");
    assert_eq!(console[1]["level"], "warn");

    // `fetch` exists only with the network permission.
    let code = env.write("fetch.js", "return typeof fetch;");
    let out = env.run(&["run-code", "-f", &code]).expect(0);
    assert_eq!(out.stdout, "undefined\n");
    let out = env
        .run(&["run-code", "-f", &code, "--permission", "network"])
        .expect(0);
    assert_eq!(out.stdout, "function\n");

    // Code from stdin; arguments must then come from a file or the command line.
    let out = env
        .run_with_stdin(
            &["run-code", "--file", "-", "--args", r#"{"a": 2}"#],
            Some(b"return args.a + 1;"),
        )
        .expect(0);
    assert_eq!(out.stdout, "3\n");
    let out = env
        .run_with_stdin(&["run-code", "--file", "-", "--args", "-"], Some(b"{}"))
        .expect(3);
    assert!(
        out.stderr.contains("cannot both come from stdin"),
        "{}",
        out.stderr
    );

    // Ephemeral code stores nothing.
    assert_eq!(env.json(&["tool", "list"])["total"], 0);
}

/// A tool that throws: exit 1, its message on stderr.
#[test]
fn a_throwing_tool_exits_1() {
    let env = Env::new();
    env.create(&json!({
        "name": "fragile",
        "description": "Fails on purpose",
        "parameters": {"type": "object", "properties": {"why": {"type": "string"}}},
        "code": "throw new Error('kaput: ' + args.why);"
    }));
    let out = env
        .run(&["run", "fragile", "--args", r#"{"why": "disk full"}"#])
        .expect(1);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
    assert!(out.stderr.contains("kaput: disk full"), "{}", out.stderr);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);

    let out = env
        .run(&[
            "--json",
            "run",
            "fragile",
            "--args",
            r#"{"why": "disk full"}"#,
        ])
        .expect(1);
    let res = out.json();
    assert_eq!(res["isError"], true);
    assert_eq!(res["metadata"]["errorKind"], "execution_error");
    assert!(
        res["content"]["error"]
            .as_str()
            .is_some_and(|m| m.contains("kaput: disk full")),
        "{res}"
    );

    // Ephemeral code that throws: the same.
    let code = env.write("throw.js", "throw new Error('nope');");
    let out = env.run(&["run-code", "--file", &code]).expect(1);
    assert!(out.stderr.contains("nope"), "{}", out.stderr);
}

/// Arguments the schema refuses, or that are not JSON: exit 3.
#[test]
fn bad_arguments_exit_3() {
    let env = Env::new();
    env.create_examples();
    let out = env
        .run(&["--json", "run", "word_frequency", "--args", "{text: 'x'}"])
        .expect(3);
    let (code, message) = out.error_doc();
    assert_eq!(code, "validation_error");
    assert!(message.starts_with("invalid JSON in --args: "), "{message}");
    assert_eq!(out.stderr, format!("error: {message}\n"));

    let file = env.write("broken.json", "{\"text\": ");
    let out = env
        .run(&["run", "word_frequency", "--args-file", &file])
        .expect(3);
    assert!(
        out.stderr
            .starts_with(&format!("error: invalid JSON in args file {file}: ")),
        "{}",
        out.stderr
    );

    let out = env
        .run(&[
            "--json",
            "run",
            "word_frequency",
            "--args",
            r#"{"text": 5}"#,
        ])
        .expect(3);
    let res = out.json();
    assert_eq!(res["metadata"]["errorKind"], "invalid_arguments");
    assert_eq!(res["content"]["violations"][0]["path"], "/text");

    let out = env
        .run(&["run", "word_frequency", "--args", "[1, 2]"])
        .expect(3);
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
    let out = env
        .run(&["run", "word_frequency", "--args-file", "missing.json"])
        .expect(3);
    assert!(
        out.stderr
            .starts_with("error: cannot read args file missing.json: "),
        "{}",
        out.stderr
    );
}

#[test]
fn unknown_tool_exits_4() {
    let env = Env::new();
    let out = env.run(&["--json", "run", "no_such_tool"]).expect(4);
    let res = out.json();
    assert_eq!(res["isError"], true);
    assert_eq!(res["metadata"]["errorKind"], "not_found");
    assert_eq!(out.stderr, "error: no tool named 'no_such_tool'\n");
}

/// Built-in tools run through the same command.
#[test]
fn builtins_run_too() {
    let env = Env::new();
    let res = env.json(&[
        "run",
        "calculate",
        "--args",
        r#"{"expression": "2 * (3 + 4)"}"#,
    ]);
    assert_eq!(res["isError"], false);
    assert_eq!(res["content"]["result"].as_f64(), Some(14.0));
    let out = env
        .run(&["run", "calculate", "--args", r#"{"expression": "2 +"}"#])
        .expect(1);
    assert!(out.stderr.starts_with("error: "), "{}", out.stderr);
}

/// Logs never mix with results: with debug logging on, stdout is still one JSON document.
#[test]
fn logs_go_to_stderr_only() {
    let env = Env::new();
    env.create_examples();
    for var in ["TOOLSMITH_LOG", "RUST_LOG"] {
        let out = env
            .run_with_env(
                &[
                    "--json",
                    "run",
                    "word_frequency",
                    "--args",
                    r#"{"text": "a a b"}"#,
                ],
                None,
                &[(var, "debug")],
            )
            .expect(0);
        assert_eq!(out.json()["content"]["totalWords"], 3);
        assert!(out.stderr.contains("DEBUG"), "{var}: {}", out.stderr);
    }
    let out = env
        .run_with_env(
            &["--json", "tool", "list"],
            None,
            &[("TOOLSMITH_LOG", "not a=filter=")],
        )
        .expect(0);
    assert_eq!(out.json()["total"], 2);
    assert!(
        out.stderr.contains("ignoring the log filter"),
        "{}",
        out.stderr
    );
}

/// `toolsmith tool executions` lists a tool's runs with what each asked of its caller's
/// client: the CLI has none, so the log lines went to the console, but they are counted.
#[test]
fn executions_show_what_each_run_asked_of_its_client() {
    let env = Env::new();
    env.create(&json!({
        "name": "chatty",
        "description": "Logs twice and reports progress once",
        "parameters": {"type": "object"},
        "code": "mcp.log('info', 'one'); mcp.log('warning', 'two'); mcp.progress(1, 2); return 'ok';",
    }));
    env.run(&["run", "chatty", "--args", "{}"]).expect(0);
    let rows = env.json(&["tool", "executions", "chatty"]);
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    assert_eq!(
        rows[0]["clientRequests"],
        json!({"logs": 2, "progress": 1, "samples": 0, "elicitations": 0, "refused": 0}),
        "{rows}"
    );
    let out = env.run(&["tool", "executions"]).expect(0);
    assert!(out.stdout.contains("ASKED"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("logs 2, progress 1, samples 0, elicitations 0, refused 0"),
        "{}",
        out.stdout
    );
}
