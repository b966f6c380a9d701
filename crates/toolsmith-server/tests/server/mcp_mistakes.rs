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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mistake_gets_a_reply_that_names_the_fix() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let corpus_path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mcp_mistakes.json");
    let corpus: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(corpus_path).expect("read the corpus"))
            .expect("the corpus is JSON");
    assert!(corpus.len() >= 30, "{} mistakes", corpus.len());
    let ids: HashSet<&str> = corpus.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), corpus.len(), "ids are unique");

    let service = ToolServiceSettings {
        execution_approval: ExecutionApproval::Off,
        ..ToolServiceSettings::default()
    };
    let server = TestServer::start_with(ServerSettings::default(), service).await;
    catalogue(&server).await;
    let args = strings(&[
        "mcp_mistakes.py",
        "--url",
        &server.url,
        "--corpus",
        corpus_path,
    ]);
    let report = run_client("python mistakes", &python(), &args, &[]).await;
    let results = report["results"].as_array().expect("results");
    assert_eq!(results.len(), corpus.len(), "{report:#}");

    let mut failures = Vec::new();
    for (case, result) in corpus.iter().zip(results) {
        assert_eq!(case["id"], result["id"]);
        let surfaced = result["surfaced"].as_str().unwrap_or_default();
        let missing: Vec<&str> = case["expect"]
            .as_array()
            .expect("expect")
            .iter()
            .map(|e| e.as_str().expect("a string"))
            .filter(|e| !surfaced.contains(e))
            .collect();
        // A mistake is answered as an error, unless the corpus says the answer is a success
        // whose text names the fix (a create with a warning, a delete awaiting `confirm`).
        let looks_ok = result["isError"] != true && case["success"] != true;
        if !missing.is_empty() || looks_ok {
            failures.push(format!(
                "{} ({}): missing {missing:?}{}\n  surfaced: {surfaced}",
                case["id"],
                case["mistake"],
                if looks_ok {
                    ", answered as a success"
                } else {
                    ""
                }
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} replies do not name the fix:\n{}",
        failures.len(),
        corpus.len(),
        failures.join("\n")
    );
}
