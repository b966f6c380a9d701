//! Every fenced example of the reference specifications is run, or names the test that runs it,
//! or says why nothing does (issue 14). The examples live verbatim in
//! `tests/data/reference_examples.yaml`, one entry per block in the order of the specs, so this
//! test needs nothing outside the repository; when `../shared/reference/` is there (a
//! developer's checkout), the fixture is also checked against it block for block, so an edited
//! spec cannot drift away from its tests.
//!
//! Checks, by the `check` of an entry:
//! - `create`: the block is a tool definition; `POST /api/v1/custom-tools` answers 201 (with
//!   `kind` when given).
//! - `parameters`: the block is a parameter schema; a tool with it is created.
//! - `run`: the block is a tool's code; the tool is created (with the `parameters` block the
//!   entry names) and run on `args`, and answers `expect` / `expect_subset`, or fails with an
//!   error containing `expect_error`.
//! - `required_api_keys`: the block is a `requiredApiKeys` array; a tool declaring it is
//!   created and the services appear in the Config Center.
//! - `test_route`: the block is a body of `POST /api/v1/custom-tools/test`.
//! - `execute_body`: the block is a body of `POST …/{id}/execute`, sent to `tool`.
//! - `response_shape`: the block is a documented answer; every field it shows is in the answer
//!   `request` really gives (values may differ, `/* … */` comments are dropped).
//! - `import_http`: the block is an HTTP tool definition; the import answers 201.
//! - `mcp_create_tool_fragment`: the block is a fragment of `create_tool` arguments; a
//!   `create_tool` call that carries it succeeds over MCP.

use std::collections::BTreeSet;
use std::path::Path;

use axum::http::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;

use crate::mcp_protocol::{Session, state_with};
use crate::mcp_support::repo_root;
use crate::rest_support::*;

const TOOLS: &str = "/api/v1/custom-tools";

/// One fenced block of a spec and what is done with it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    spec: String,
    line: usize,
    lang: String,
    section: String,
    /// The block as written (payload languages only).
    text: Option<String>,
    /// The block's first non-empty line (other languages).
    begins: Option<String>,
    check: Option<String>,
    covered_by: Option<String>,
    skip: Option<String>,
    why: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    parameters: Option<usize>,
    permissions: Option<Vec<String>>,
    args: Option<Value>,
    expect: Option<Value>,
    expect_subset: Option<Value>,
    expect_error: Option<String>,
    request: Option<String>,
    body: Option<Value>,
    tool: Option<String>,
}

impl Entry {
    fn at(&self) -> String {
        format!(
            "spec {} line {} ({}, \"{}\")",
            self.spec, self.line, self.lang, self.section
        )
    }

    fn text(&self) -> &str {
        self.text
            .as_deref()
            .unwrap_or_else(|| panic!("{}: no text", self.at()))
    }

    /// The block as JSON, `/* … */` comments dropped.
    fn json(&self) -> Value {
        let text = drop_comments(self.text());
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not JSON: {e}\n{text}", self.at()))
    }
}

fn fixture() -> Vec<Entry> {
    let path = repo_root().join("crates/toolsmith-server/tests/data/reference_examples.yaml");
    let text = std::fs::read_to_string(&path).expect("the fixture");
    serde_norway::from_str(&text).expect("the fixture parses")
}

fn drop_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("/*") {
        out.push_str(&rest[..start]);
        match rest[start..].find("*/") {
            Some(end) => rest = &rest[start + end + 2..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// A fenced block of a spec file: `(line, lang, text)`; the same reading as the fixture's.
fn spec_blocks(text: &str) -> Vec<(usize, String, String)> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim();
        let lang = trimmed.strip_prefix("```").unwrap_or("");
        if !lang.is_empty() && lang.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim() != "```" {
                j += 1;
            }
            let mut body = lines[i + 1..j.min(lines.len())].join("\n");
            body.push('\n');
            out.push((i + 1, lang.to_owned(), body));
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out
}

#[test]
fn the_fixture_matches_the_reference_specs() {
    let dir = repo_root().join("../shared/reference");
    if !dir.is_dir() {
        // Not a missing prerequisite: the specs are not part of this repository, and the
        // fixture is what the other test runs.
        eprintln!(
            "{} is absent: the fixture is checked by the other test only",
            dir.display()
        );
        return;
    }
    let entries = fixture();
    let mut expected = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the reference dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    for path in files {
        let spec = spec_name(&path);
        let text = std::fs::read_to_string(&path).expect("a spec");
        for (line, lang, body) in spec_blocks(&text) {
            expected.push((spec.clone(), line, lang, body));
        }
    }
    assert_eq!(
        entries.len(),
        expected.len(),
        "the fixture has {} entries, the specs {} fenced blocks",
        entries.len(),
        expected.len()
    );
    for (entry, (spec, line, lang, body)) in entries.iter().zip(&expected) {
        let at = format!("spec {spec} line {line} ({lang})");
        assert_eq!(
            (&entry.spec, entry.line, &entry.lang),
            (spec, *line, lang),
            "{at}: the fixture's entry is {}",
            entry.at()
        );
        match (&entry.text, &entry.begins) {
            (Some(text), None) => assert_eq!(text, body, "{at}: the text differs from the spec"),
            (None, Some(begins)) => {
                let first = body.lines().map(str::trim).find(|l| !l.is_empty());
                assert_eq!(
                    Some(begins.as_str()),
                    first,
                    "{at}: the block begins differently"
                );
            }
            _ => panic!("{at}: an entry has either `text` or `begins`"),
        }
    }
}

fn spec_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.get(..3))
        .expect("a spec file named NNN_…")
        .to_owned()
}

#[tokio::test]
async fn every_reference_example_runs_or_says_why_not() {
    let entries = fixture();
    assert!(entries.len() >= 90, "{} entries", entries.len());
    let mut seen = BTreeSet::new();
    let mut counts = [0usize; 3];
    for entry in &entries {
        let at = entry.at();
        assert!(seen.insert((entry.spec.clone(), entry.line)), "{at}: twice");
        let ways = [&entry.check, &entry.covered_by, &entry.skip];
        assert_eq!(
            ways.iter().filter(|w| w.is_some()).count(),
            1,
            "{at}: exactly one of check, covered_by, skip"
        );
        if let Some(reason) = &entry.skip {
            assert!(reason.len() > 10, "{at}: a reason that says something");
            counts[2] += 1;
        } else if let Some(test) = &entry.covered_by {
            assert_test_exists(&at, test);
            assert!(entry.why.is_some(), "{at}: say what the test does with it");
            counts[1] += 1;
        } else if let Some(check) = &entry.check {
            run(entry, check, &entries).await;
            counts[0] += 1;
        }
    }
    eprintln!(
        "reference examples: {} run here, {} run by other tests, {} not run (with the reason)",
        counts[0], counts[1], counts[2]
    );
}

/// `module::function` of this test binary, or `<crate> module::function` of another crate's
/// test binary: the function must exist.
fn assert_test_exists(at: &str, test: &str) {
    let (dir, path) = match test.split_once(' ') {
        Some((krate, path)) => {
            let binary = krate.trim_start_matches("toolsmith-");
            (format!("crates/{krate}/tests/{binary}"), path)
        }
        None => ("crates/toolsmith-server/tests/server".to_owned(), test),
    };
    let (module, function) = path
        .rsplit_once("::")
        .unwrap_or_else(|| panic!("{at}: {test} is not module::function"));
    let file = repo_root().join(&dir).join(format!("{module}.rs"));
    let source =
        std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{at}: {}: {e}", file.display()));
    assert!(
        source.contains(&format!("fn {function}(")),
        "{at}: no test {function} in {}",
        file.display()
    );
}

async fn run(entry: &Entry, check: &str, all: &[Entry]) {
    let at = entry.at();
    match check {
        "create" => {
            let app = TestApp::new().await;
            let res = app.post(TOOLS, &entry.json()).await;
            let tool = res.assert_ok(StatusCode::CREATED);
            if let Some(kind) = &entry.kind {
                assert_eq!(tool["kind"], kind.as_str(), "{at}");
            }
        }
        "parameters" => {
            let app = TestApp::new().await;
            app.post(
                TOOLS,
                &json!({"name": "with_parameters", "description": "spec parameters",
                        "parameters": entry.json(), "code": "return 1;"}),
            )
            .await
            .assert_ok(StatusCode::CREATED);
        }
        "required_api_keys" => {
            let app = TestApp::new().await;
            let keys = entry.json();
            app.post(
                TOOLS,
                &json!({"name": "declares_keys", "description": "spec requiredApiKeys",
                        "parameters": {"type": "object"}, "code": "return 1;",
                        "requiredApiKeys": keys}),
            )
            .await
            .assert_ok(StatusCode::CREATED);
            for key in keys.as_array().expect("an array") {
                let name = key["name"].as_str().expect("a name");
                let service = app
                    .get(&format!("/api/v1/config/services/{name}"))
                    .await
                    .assert_ok(StatusCode::OK);
                assert_eq!(service["displayName"], key["displayName"], "{at}");
            }
        }
        "run" => run_code(entry, all).await,
        "test_route" => {
            let app = TestApp::new().await;
            let ran = app
                .post(&format!("{TOOLS}/test"), &entry.json())
                .await
                .assert_ok(StatusCode::OK);
            assert_eq!(ran["isError"], false, "{at}: {ran:#}");
            assert_eq!(ran["testMode"], true, "{at}");
            assert_eq!(Some(&ran["result"]), entry.expect.as_ref(), "{at}");
        }
        "execute_body" => {
            let app = stand_ins().await;
            let tool = entry.tool.as_deref().expect("tool");
            let ran = app
                .post(&format!("{TOOLS}/{tool}/execute"), &entry.json())
                .await
                .assert_ok(StatusCode::OK);
            assert_eq!(ran["isError"], false, "{at}: {ran:#}");
            assert_eq!(Some(&ran["result"]), entry.expect.as_ref(), "{at}");
        }
        "response_shape" => {
            let app = stand_ins().await;
            let request = entry.request.as_deref().expect("request");
            let (method, path) = request.split_once(' ').expect("METHOD /path");
            let method: Method = method.parse().expect("a method");
            let res = match &entry.body {
                Some(body) => app.json(method, path, body).await,
                None => app.call(method, path).await,
            };
            assert!(res.status.is_success(), "{at}: {request}: {}", res.text);
            assert_fields(&at, "", &entry.json(), &res.json);
        }
        "import_http" => {
            let app = TestApp::new().await;
            let res = app
                .raw(
                    Method::POST,
                    &format!("{TOOLS}/import"),
                    Some("application/yaml"),
                    entry.text().to_owned(),
                )
                .await;
            assert_eq!(res.status, StatusCode::CREATED, "{at}: {}", res.text);
            assert_eq!(res.json["data"]["kind"], "http", "{at}");
        }
        "mcp_create_tool_fragment" => {
            let (state, _dir) = state_with(ServerSettings::default()).await;
            let session = Session::open(&state, "default").await;
            let mut args = json!({"name": "needs_weather", "description": "reads its key",
                                  "parameters": {"type": "object"},
                                  "code": "return typeof utils.getApiKey('weatherapi');"});
            for (key, value) in entry.json().as_object().expect("an object") {
                args[key] = value.clone();
            }
            let (is_error, created, text) = session.ok("create_tool", args).await;
            assert!(!is_error, "{at}: {text}");
            assert!(
                text.contains("weatherapi"),
                "{at}: the note names the service: {created}"
            );
        }
        other => panic!("{at}: unknown check {other}"),
    }
}

/// The tools the REST examples talk about: spec 000's `fetch_weather` (created from its own
/// create body) and `city_echo`, a stand-in that runs without leaving the machine.
async fn stand_ins() -> TestApp {
    let app = TestApp::new().await;
    let create = fixture()
        .into_iter()
        .find(|e| e.spec == "000" && e.check.as_deref() == Some("create"))
        .expect("spec 000's create body");
    app.post(TOOLS, &create.json())
        .await
        .assert_ok(StatusCode::CREATED);
    app.post(
        TOOLS,
        &json!({"name": "city_echo", "description": "Answers the city it is given", "category": "Weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]},
                "code": "return args.city;"}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    app
}

async fn run_code(entry: &Entry, all: &[Entry]) {
    let at = entry.at();
    let parameters = match entry.parameters {
        Some(line) => all
            .iter()
            .find(|e| e.spec == entry.spec && e.line == line)
            .unwrap_or_else(|| panic!("{at}: no block at line {line}"))
            .json(),
        None => json!({"type": "object"}),
    };
    let name = entry.name.as_deref().expect("name");
    let app = TestApp::with_configs(no_approvals(), ServerSettings::default()).await;
    app.post(
        TOOLS,
        &json!({"name": name, "description": format!("spec {} example", entry.spec),
                "parameters": parameters, "code": entry.text(),
                "permissions": entry.permissions.clone().unwrap_or_default()}),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let ran = app
        .post(
            &format!("{TOOLS}/{name}/execute"),
            &json!({"arguments": entry.args.clone().unwrap_or(json!({}))}),
        )
        .await
        .assert_ok(StatusCode::OK);
    if let Some(needle) = &entry.expect_error {
        assert_eq!(ran["isError"], true, "{at}: {ran:#}");
        assert!(ran.to_string().contains(needle.as_str()), "{at}: {ran:#}");
        return;
    }
    assert_eq!(ran["isError"], false, "{at}: {ran:#}");
    if let Some(expect) = &entry.expect {
        assert_eq!(&ran["result"], expect, "{at}");
    }
    if let Some(subset) = &entry.expect_subset {
        assert_subset(&at, "", subset, &ran["result"]);
    }
}

fn no_approvals() -> toolsmith_service::ToolServiceSettings {
    toolsmith_service::ToolServiceSettings {
        execution_approval: toolsmith_service::ExecutionApproval::Off,
        ..toolsmith_service::ToolServiceSettings::default()
    }
}

/// Every field of `documented` is in `real`, objects checked field by field and arrays by
/// their first element. An empty object or array is the spec's placeholder (`{ /* tool output
/// */ }`): anything goes there.
fn assert_fields(at: &str, path: &str, documented: &Value, real: &Value) {
    let placeholder = documented.as_object().is_some_and(|o| o.is_empty())
        || documented.as_array().is_some_and(|a| a.is_empty());
    if placeholder {
        return;
    }
    match (documented, real) {
        (Value::Object(doc), Value::Object(got)) => {
            for (key, value) in doc {
                let here = format!("{path}/{key}");
                let Some(got) = got.get(key) else {
                    panic!("{at}: the answer lacks {here}: {real:#}");
                };
                assert_fields(at, &here, value, got);
            }
        }
        (Value::Array(doc), Value::Array(got)) => {
            if let (Some(doc), Some(got)) = (doc.first(), got.first()) {
                assert_fields(at, &format!("{path}/0"), doc, got);
            }
        }
        (Value::Object(_) | Value::Array(_), other) => {
            panic!("{at}: {path} is {other}, the spec shows {documented}")
        }
        _ => {}
    }
}

/// `expected`'s fields have `real`'s values (objects may have more).
fn assert_subset(at: &str, path: &str, expected: &Value, real: &Value) {
    match expected {
        Value::Object(fields) => {
            for (key, value) in fields {
                assert_subset(at, &format!("{path}/{key}"), value, &real[key]);
            }
        }
        _ => assert_eq!(real, expected, "{at}: {path}"),
    }
}
