//! Every JSON and YAML example in `docs/*.md` is a test: each fenced ```` ```json ```` and
//! ```` ```yaml ```` block is found, matched to what it describes, and run against the real
//! server (a tool definition is created through REST and, when the docs say what it answers,
//! called; an HTTP tool definition is imported). Blocks that are not requests — an MCP client's
//! configuration, an illustrative response with `…` placeholders — are listed with the reason
//! and still checked as far as they can be. A block this test does not know fails it: a new
//! example must be added here, so a broken example cannot slip into the docs.
//!
//! The reference specs' own examples (`../shared/reference/`, outside this repository) are
//! kept verbatim in `tests/data/reference_examples.yaml` and run by `reference_examples`, each
//! with its check, the test that runs it, or the reason nothing does.

use crate::mcp_support::repo_root;
use crate::rest_support::*;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

/// One fenced example.
struct Block {
    file: String,
    line: usize,
    lang: &'static str,
    text: String,
}

fn blocks() -> Vec<Block> {
    let dir = repo_root().join("docs");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("a doc");
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut current: Option<Block> = None;
        for (n, line) in text.lines().enumerate() {
            match &mut current {
                None => {
                    let lang = match line.trim_end() {
                        "```json" => "json",
                        "```yaml" | "```yml" => "yaml",
                        _ => continue,
                    };
                    current = Some(Block {
                        file: file.clone(),
                        line: n + 1,
                        lang,
                        text: String::new(),
                    });
                }
                Some(block) => {
                    if line.trim_end() == "```" {
                        out.extend(current.take());
                    } else {
                        block.text.push_str(line);
                        block.text.push('\n');
                    }
                }
            }
        }
    }
    out
}

/// What a block is, and so how it is checked.
enum Example {
    /// A tool definition: `POST /api/v1/custom-tools` answers 201 with this kind; with
    /// arguments, the tool is run and must answer `expect` (when given) without error.
    Tool {
        kind: &'static str,
        run: Option<(Value, Option<Value>)>,
    },
    /// A tool file of the CLI whose `codeFile` lies in `examples/tools/`.
    ToolFile { run: Value },
    /// An HTTP tool definition: `POST /api/v1/custom-tools/import` answers 201.
    HttpTool,
    /// An MCP client's configuration: valid JSON that starts `toolsmith mcp` or names `/mcp`.
    ClientConfig,
    /// Not a request: an illustrative response or snapshot with `…` placeholders.
    Illustration(&'static str),
}

/// `(file, a string only that block contains, what it is)`.
fn catalogue() -> Vec<(&'static str, &'static str, Example)> {
    vec![
        (
            "command-tools.md",
            "\"dns_lookup\"",
            Example::Tool {
                kind: "command",
                run: None,
            },
        ),
        (
            "tool-kinds.md",
            "\"word_count\"",
            Example::Tool {
                kind: "js",
                run: Some((json!({"text": "one two three"}), Some(json!({"words": 3})))),
            },
        ),
        (
            "tool-kinds.md",
            "\"count_words_in\"",
            Example::Tool {
                kind: "command",
                run: None,
            },
        ),
        (
            "cli.md",
            "codeFile: word_frequency.js",
            Example::ToolFile {
                run: json!({"text": "the cat and the hat"}),
            },
        ),
        ("http-tools.md", "check_loyalty_points", Example::HttpTool),
        ("cli.md", "mcpServers", Example::ClientConfig),
        (
            "mcp.md",
            "\"command\": \"toolsmith\"",
            Example::ClientConfig,
        ),
        ("mcp.md", "\"type\": \"http\"", Example::ClientConfig),
        (
            "rest.md",
            "\"success\": true",
            Example::Illustration("the success envelope, with `{ … }` for any data"),
        ),
        (
            "rest.md",
            "\"success\": false",
            Example::Illustration(
                "the error envelope of a stale revision: checked below against a real 409",
            ),
        ),
        (
            "analytics.md",
            "\"toolId\"",
            Example::Illustration("a metrics response, with `…` in ids and lists"),
        ),
        (
            "analytics.md",
            "\"overTime\"",
            Example::Illustration(
                "the server-wide figures, with `…` in times and lists: pinned by rest_metrics::server_figures_cover_every_call_per_tool_user_and_agent_and_are_an_admins",
            ),
        ),
        (
            "resources.md",
            "name: order",
            Example::Illustration(
                "a resource template file: templates of these fields are created and read by rest_resources, mcp_resources and cli resources",
            ),
        ),
        (
            "resources.md",
            "\"resourceSubscriptions\"",
            Example::Illustration(
                "a 2026-07-28 subscriptions/listen for resources: such requests are sent, acknowledged and notified by mcp_resources_listen",
            ),
        ),
        (
            "prompts.md",
            "name: review",
            Example::Illustration(
                "a prompt file with every field, `…` in the image data: prompts of these fields are created, rendered and completed by rest_prompts, mcp_prompts and cli prompts",
            ),
        ),
        (
            "auth.md",
            "\"organization\": {\"id\"",
            Example::Illustration(
                "GET /api/v1/session acting in an organisation: this very answer is asserted by rest_orgs_scope::the_organisation_scope_holds_on_rest_and_mcp_on_{sqlite,postgres}",
            ),
        ),
        (
            "js-tools.md",
            "\"weatherapi\"",
            Example::Illustration("the Config Center snapshot a JS tool reads, with `…` values"),
        ),
        (
            "js-tools.md",
            "\"dependencies\": [{\"name\": \"csv-parse\"",
            Example::Illustration(
                "a tool with npm dependencies: created and run against the real registry, with the CA this network needs, by rest_dependencies::spec_002s_parse_csv_installs_csv_parse_and_runs_from_the_cache_with_the_registry_out_of_reach",
            ),
        ),
    ]
}

#[tokio::test]
async fn every_docs_example_works() {
    let catalogue = catalogue();
    let blocks = blocks();
    assert!(
        blocks.len() >= catalogue.len(),
        "found {} blocks",
        blocks.len()
    );
    let mut used = vec![0usize; catalogue.len()];
    for block in &blocks {
        let at = format!("docs/{}:{} ({})", block.file, block.line, block.lang);
        let matched: Vec<usize> = catalogue
            .iter()
            .enumerate()
            .filter(|(_, (file, marker, _))| *file == block.file && block.text.contains(marker))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(
            matched.len(),
            1,
            "{at}: an example this test does not know (or matches twice): add it to tests/server/docs_examples.rs\n{}",
            block.text
        );
        used[matched[0]] += 1;
        check(&at, block, &catalogue[matched[0]].2).await;
    }
    for (i, (file, marker, _)) in catalogue.iter().enumerate() {
        assert_eq!(
            used[i], 1,
            "docs/{file}: no example containing {marker:?} any more"
        );
    }
}

async fn check(at: &str, block: &Block, example: &Example) {
    match example {
        Example::Tool { kind, run } => {
            let body: Value = serde_json::from_str(&block.text)
                .unwrap_or_else(|e| panic!("{at}: not valid JSON: {e}"));
            let app = TestApp::new().await;
            let res = app.post("/api/v1/custom-tools", &body).await;
            assert_eq!(res.status, StatusCode::CREATED, "{at}: {}", res.text);
            assert_eq!(res.json["data"]["kind"], *kind, "{at}");
            if let Some((args, expect)) = run {
                let name = body["name"].as_str().unwrap();
                run_tool(at, &app, name, args, expect.as_ref()).await;
            }
        }
        Example::ToolFile { run } => {
            let mut body: Value = serde_norway::from_str(&block.text)
                .unwrap_or_else(|e| panic!("{at}: not valid YAML: {e}"));
            let code_file = body["codeFile"].as_str().expect("codeFile").to_owned();
            let code = std::fs::read_to_string(repo_root().join("examples/tools").join(&code_file))
                .unwrap_or_else(|e| panic!("{at}: examples/tools/{code_file}: {e}"));
            let obj = body.as_object_mut().unwrap();
            obj.remove("codeFile");
            obj.insert("code".to_owned(), Value::String(code));
            let app = TestApp::new().await;
            let res = app.post("/api/v1/custom-tools", &body).await;
            assert_eq!(res.status, StatusCode::CREATED, "{at}: {}", res.text);
            run_tool(at, &app, body["name"].as_str().unwrap(), run, None).await;
        }
        Example::HttpTool => {
            let app = TestApp::new().await;
            let res = app
                .raw(
                    Method::POST,
                    "/api/v1/custom-tools/import",
                    Some("application/yaml"),
                    block.text.clone(),
                )
                .await;
            assert_eq!(res.status, StatusCode::CREATED, "{at}: {}", res.text);
            assert_eq!(res.json["data"]["kind"], "http", "{at}");
        }
        Example::ClientConfig => {
            let config: Value = serde_json::from_str(&block.text)
                .unwrap_or_else(|e| panic!("{at}: not valid JSON: {e}"));
            let server = &config["mcpServers"]["toolsmith"];
            let stdio = server["command"] == "toolsmith" && server["args"][0] == "mcp";
            let http = server["url"].as_str().is_some_and(|u| u.ends_with("/mcp"));
            assert!(stdio || http, "{at}: {config}");
        }
        Example::Illustration(why) => {
            assert!(!why.is_empty());
            if block.text.contains("revision_conflict") {
                stale_revision_matches(at, &block.text).await;
            }
        }
    }
}

async fn run_tool(at: &str, app: &TestApp, name: &str, args: &Value, expect: Option<&Value>) {
    let res = app
        .post(
            &format!("/api/v1/custom-tools/{name}/execute"),
            &json!({"arguments": args}),
        )
        .await;
    let ran = res.assert_ok(StatusCode::OK);
    assert_eq!(ran["isError"], false, "{at}: {ran:#}");
    if let Some(expect) = expect {
        assert_eq!(&ran["result"], expect, "{at}");
    }
}

/// The documented error envelope is what a stale revision really answers.
async fn stale_revision_matches(at: &str, text: &str) {
    let documented: Value = serde_json::from_str(&text.replace("req_8d0f…", "req_x"))
        .unwrap_or_else(|e| panic!("{at}: not valid JSON once the request id is filled in: {e}"));
    let app = TestApp::new().await;
    app.create_named("upper").await;
    app.patch(
        "/api/v1/custom-tools/upper",
        &json!({"description": "second revision"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let res = app
        .patch(
            "/api/v1/custom-tools/upper",
            &json!({"description": "x", "expectedRevision": 1}),
        )
        .await;
    let message = res.assert_error(StatusCode::CONFLICT, "revision_conflict");
    assert_eq!(message, documented["error"]["message"], "{at}");
    assert_eq!(
        res.json["error"]["details"], documented["error"]["details"],
        "{at}"
    );
    assert_eq!(res.json["success"], documented["success"], "{at}");
}
