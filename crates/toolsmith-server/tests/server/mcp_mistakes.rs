//! Replies that name the fix (issue 15): a fixed corpus of typical model mistakes
//! (`tests/data/mcp_mistakes.json`: wrong argument names and types, missing arguments, near
//! names, tools in the wrong state, bad code and schemas on create, …) is driven through the
//! official MCP Python SDK (`tests/clients/mcp_mistakes.py`) against the server over HTTP, and
//! for each, the text the SDK surfaces — a result's text, or the message of the error it raises
//! (it drops `error.data`) — must contain what the model needs to fix its call. Values sent are
//! never echoed (they could be secrets), so the fix is named by path, rule, type and the
//! expected shape.

use std::collections::HashSet;

use serde_json::{Value, json};
use toolsmith_core::Permission;
use toolsmith_server::ServerSettings;
use toolsmith_service::{Actor, CreateTool, ExecutionApproval, ToolRef, ToolServiceSettings};

use crate::mcp_support::{TestServer, prerequisite, python, run_client, strings};

fn tool(name: &str, description: &str, parameters: Value, code: &str) -> CreateTool {
    CreateTool {
        kind: Default::default(),
        name: name.to_owned(),
        description: description.to_owned(),
        parameters,
        code: code.to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: Vec::new(),
        requires_approval: None,
        metadata: None,
    }
}

/// The catalogue the mistakes are made against: active tools of a person, a disabled one, a
/// model's tool waiting for approval and one a person rejected.
async fn catalogue(server: &TestServer) {
    let service = &server.state.service;
    let person = Actor::user("default");
    let model = Actor::llm("default");
    let active = [
        tool(
            "currency_convert",
            "Converts an amount of money from one currency to another",
            json!({"type": "object", "properties": {
                "amount": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}},
                "required": ["amount", "from", "to"], "additionalProperties": false}),
            "return {amount: args.amount * 0.9, currency: args.to};",
        ),
        tool(
            "format_address",
            "Formats a postal address on one line",
            json!({"type": "object", "properties": {"address": {"type": "object", "properties": {
                "street": {"type": "string"}, "city": {"type": "string"}}}},
                "required": ["address"]}),
            "return args.address.street + ', ' + args.address.city;",
        ),
        tool(
            "set_priority",
            "Sets the priority of the current task",
            json!({"type": "object", "properties": {"level": {"enum": ["low", "high"]}},
                "required": ["level"]}),
            "return {level: args.level};",
        ),
        tool(
            "roll_dice",
            "Rolls a die with the given number of sides",
            json!({"type": "object", "properties": {"sides": {"type": "integer", "minimum": 2}},
                "required": ["sides"]}),
            "return 1;",
        ),
        tool(
            "forgets_return",
            "Computes something and forgets to return it",
            json!({"type": "object"}),
            "const x = 1 + 1;",
        ),
        tool(
            "fetch_page",
            "Fetches a web page",
            json!({"type": "object", "properties": {"url": {"type": "string"}}}),
            "const r = await fetch(args.url); return r.status;",
        ),
        tool(
            "send_report",
            "Sends the weekly report",
            json!({"type": "object"}),
            "return 'sent';",
        ),
    ];
    for t in active {
        service.create(&person, t).await.expect("create a tool");
    }
    service
        .disable(&person, &ToolRef::Name("send_report".into()), None)
        .await
        .expect("disable");
    let mut pending = tool(
        "disk_cleanup",
        "Frees disk space",
        json!({"type": "object"}),
        "return 0;",
    );
    pending.permissions = vec![Permission::Filesystem];
    service.create(&model, pending).await.expect("pending tool");
    let mut rejected = tool(
        "shell_runner",
        "Runs a shell",
        json!({"type": "object"}),
        "return 0;",
    );
    rejected.permissions = vec![Permission::Shell];
    service
        .create(&model, rejected)
        .await
        .expect("tool to reject");
    service
        .reject(&person, &ToolRef::Name("shell_runner".into()))
        .await
        .expect("reject");
}

/// The records the title-for-id mistakes name: a task and a note of the MCP caller (user
/// `default`, no agent), made through the pipeline; the placeholders the corpus uses for their ids.
async fn records(server: &TestServer) -> Vec<(String, String)> {
    let service = &server.state.service;
    let mut ids = Vec::new();
    for (tool, args, key, one, placeholder) in [
        (
            "add_task",
            json!({"title": "Buy milk"}),
            "taskId",
            "task",
            "{milk_task}",
        ),
        (
            "add_note",
            json!({"title": "Packing list", "content": "socks"}),
            "noteId",
            "note",
            "{packing_note}",
        ),
    ] {
        let result = service
            .execute(tool, args, toolsmith_core::ToolContext::new("default"))
            .await;
        assert!(!result.is_error, "{tool}: {:?}", result.content);
        let id = result.content[one]["id"]
            .as_str()
            .or_else(|| result.content[key].as_str())
            .unwrap_or_else(|| panic!("{tool} answers an id: {:?}", result.content))
            .to_owned();
        ids.push((placeholder.to_owned(), id));
    }
    ids
}

/// The corpus's text with its placeholders filled: the ids of [`records`], and the dates a
/// natural date resolves to on `today` (UTC): `{today+N}`, `{next_friday}`.
fn expand(text: &str, ids: &[(String, String)], today: chrono::NaiveDate) -> Vec<Value> {
    use chrono::Datelike;
    let mut text = text.to_owned();
    for (placeholder, id) in ids {
        text = text.replace(placeholder, id);
    }
    for n in 0..8 {
        let day = today + chrono::Days::new(n);
        text = text.replace(&format!("{{today+{n}}}"), &day.to_string());
    }
    let to_friday = (4 + 7 - i64::from(today.weekday().num_days_from_monday())) % 7;
    let next_friday = today + chrono::Days::new(if to_friday == 0 { 7 } else { to_friday as u64 });
    text = text.replace("{next_friday}", &next_friday.to_string());
    serde_json::from_str(&text).expect("the corpus is JSON")
}

/// The failures of `results` against `corpus`: a missing expected text, a text that must not
/// appear, or an answer that looks like a success.
fn failures(corpus: &[Value], results: &[Value]) -> Vec<String> {
    let mut failures = Vec::new();
    for (case, result) in corpus.iter().zip(results) {
        assert_eq!(case["id"], result["id"]);
        let surfaced = result["surfaced"].as_str().unwrap_or_default();
        let strings = |key: &str| -> Vec<&str> {
            case[key]
                .as_array()
                .map(|a| a.iter().map(|e| e.as_str().expect("a string")).collect())
                .unwrap_or_default()
        };
        let missing: Vec<&str> = strings("expect")
            .into_iter()
            .filter(|e| !surfaced.contains(e))
            .collect();
        // What a reply must not say: a switched-off group's tool is no typo.
        let present: Vec<&str> = strings("absent")
            .into_iter()
            .filter(|e| surfaced.contains(e))
            .collect();
        // A mistake is answered as an error, unless the corpus says the answer is a success
        // whose text names the fix (a create with a warning, a delete awaiting `confirm`, a
        // natural date resolved and echoed).
        let looks_ok = result["isError"] != true && case["success"] != true;
        if !missing.is_empty() || !present.is_empty() || looks_ok {
            failures.push(format!(
                "{} ({}): missing {missing:?}{}{}\n  surfaced: {surfaced}",
                case["id"],
                case["mistake"],
                if present.is_empty() {
                    String::new()
                } else {
                    format!(", must not say {present:?}")
                },
                if looks_ok {
                    ", answered as a success"
                } else {
                    ""
                }
            ));
        }
    }
    failures
}

/// Runs `corpus` through the Python SDK against `server`; the results, in order.
async fn run_corpus(server: &TestServer, corpus: &[Value]) -> Vec<Value> {
    let file = tempfile::NamedTempFile::new().expect("a temp file");
    std::fs::write(file.path(), serde_json::to_vec(corpus).expect("JSON")).expect("write");
    let path = file.path().display().to_string();
    let args = strings(&["mcp_mistakes.py", "--url", &server.url, "--corpus", &path]);
    let report = run_client("python mistakes", &python(), &args, &[]).await;
    let results = report["results"].as_array().expect("results").clone();
    assert_eq!(results.len(), corpus.len(), "{report:#}");
    results
}

/// Every case of the corpus through the real MCP door. The cases that name `groups` run after
/// those groups are switched on (`codeExecution` and `scheduler` are off out of the box, and a
/// switched-off group's tool is itself one of the mistakes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mistake_gets_a_reply_that_names_the_fix() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let corpus_path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mcp_mistakes.json");
    let text = std::fs::read_to_string(corpus_path).expect("read the corpus");
    let raw: Vec<Value> = serde_json::from_str(&text).expect("the corpus is JSON");
    assert!(raw.len() >= 30, "{} mistakes", raw.len());
    let ids: HashSet<&str> = raw.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), raw.len(), "ids are unique");

    let workspaces = tempfile::tempdir().expect("temp dir");
    let service = ToolServiceSettings {
        execution_approval: ExecutionApproval::Off,
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            workspaces.path().to_owned(),
        )),
        ..ToolServiceSettings::default()
    };
    let server = TestServer::start_with(ServerSettings::default(), service).await;
    catalogue(&server).await;
    let ids = records(&server).await;
    let today = || chrono::Utc::now().date_naive();
    let started = today();
    let corpus = expand(&text, &ids, started);
    let (later, first): (Vec<usize>, Vec<usize>) =
        (0..corpus.len()).partition(|&i| corpus[i].get("groups").is_some());
    let pick =
        |which: &[usize]| -> Vec<Value> { which.iter().map(|&i| corpus[i].clone()).collect() };
    let mut results: Vec<Option<Value>> = vec![None; corpus.len()];
    for (i, result) in first.iter().zip(run_corpus(&server, &pick(&first)).await) {
        results[*i] = Some(result);
    }
    let mut groups: Vec<&str> = later
        .iter()
        .flat_map(|&i| corpus[i]["groups"].as_array().expect("groups").iter())
        .map(|g| g.as_str().expect("a group id"))
        .collect();
    groups.sort_unstable();
    groups.dedup();
    let admin = Actor::user("default");
    for group in groups {
        server
            .state
            .service
            .set_tool_group(&admin, group, true)
            .await
            .expect("switch a group on");
    }
    for (i, result) in later.iter().zip(run_corpus(&server, &pick(&later)).await) {
        results[*i] = Some(result);
    }
    let results: Vec<Value> = results.into_iter().map(|r| r.expect("a result")).collect();

    let mut failed = failures(&corpus, &results);
    // A run across midnight (UTC) resolved "tomorrow" on either day.
    if !failed.is_empty() && today() != started {
        failed = failures(&expand(&text, &ids, today()), &results);
    }
    assert!(
        failed.is_empty(),
        "{} of {} replies do not name the fix:\n{}",
        failed.len(),
        corpus.len(),
        failed.join("\n")
    );
}
