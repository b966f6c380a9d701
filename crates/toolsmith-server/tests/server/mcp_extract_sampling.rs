//! Data extraction and translation answered by the MCP client's own model (issue 39): a user
//! with no Config Center service `chat_model` whose client declared `sampling` gets the four
//! extraction tools and `translate_text` answered by that client through
//! `sampling/createMessage`, checked against the schema like any model's answer, under the rule
//! every request to a client obeys (the policy's `mcp:sampling`, audited as `client.sample`).
//! The client is the official MCP Python SDK (`tests/clients/mcp_extract_sampling.py`), run
//! once per phase; the server is the real one over streamable HTTP on loopback.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::mcp_outside::{Seen, app_with_group, chat_server, configure_chat_model};
use crate::mcp_support::{prerequisite, python, run_client};
use crate::rest_support::{TestApp, execute, serve_loopback};

/// Summarizes `args.text` with the built-in, through `utils.callTool`.
const DIGEST: &str = "return await utils.callTool('summarize_text', {text: args.text});";

/// The app: data extraction, translation and sessions on; the agent `summarizer` on the
/// client's model, allowed `summarize_text`; two JS tools calling `summarize_text`, one
/// declaring `sampling`. Its egress reaches `chat_host`.
async fn setup(chat_host: &str) -> TestApp {
    let app = app_with_group(Some(chat_host), "dataExtraction").await;
    for group in ["translation", "sessions"] {
        app.json(
            Method::PUT,
            &format!("/api/v1/tool-groups/{group}"),
            &json!({"enabled": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
    }
    app.post(
        "/api/v1/agents",
        &json!({
            "name": "summarizer",
            "instructions": "Summarize what you are given with your tool.",
            "model": {"service": "sampling", "model": "client-model"},
            "toolPolicy": {"allow": ["summarize_text"]},
        }),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    for (name, permissions) in [
        ("digest_plain", json!(["network"])),
        ("digest_sampling", json!(["network", "sampling"])),
    ] {
        app.create_tool(&json!({
            "name": name,
            "description": format!("{name}: summarizes a text with the built-in"),
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            "code": DIGEST,
            "permissions": permissions,
        }))
        .await;
    }
    app
}

/// Runs the Python client's `phase` against the app served at `server`.
async fn phase(server: &str, phase: &str) -> Value {
    let report = run_client(
        "mcp_extract_sampling.py",
        &python(),
        &[
            "mcp_extract_sampling.py".to_owned(),
            "--url".to_owned(),
            format!("http://{server}/mcp"),
            "--phase".to_owned(),
            phase.to_owned(),
        ],
        &[],
    )
    .await;
    eprintln!("{phase}: {report:#}");
    report
}

/// The value of a call that succeeded.
#[track_caller]
fn ok<'a>(report: &'a Value, name: &str) -> &'a Value {
    assert_eq!(report[name]["isError"], false, "{name}: {}", report[name]);
    &report[name]["value"]
}

/// The message of a call that failed.
#[track_caller]
fn refused(report: &Value, name: &str) -> String {
    assert_eq!(report[name]["isError"], true, "{name}: {}", report[name]);
    report[name]["value"].to_string()
}

/// The requests the client was asked for the built-ins (not an agent's turns).
fn questions(report: &Value) -> Vec<&Value> {
    report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("tools").is_none())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extraction_and_translation_fall_back_to_the_clients_model_under_the_sampling_rule() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let seen = Seen::default();
    let chat_host = chat_server(seen.clone(), |_, _| {
        json!({"summary": "the configured model's summary"}).to_string()
    })
    .await;
    let app = setup(&chat_host).await;
    let server = serve_loopback(app.router.clone()).await;

    let report = phase(&server, "sampling").await;
    // The four extraction tools, answered by the client's model and checked: the first
    // structured answer broke the schema, the second (told the violations) met it.
    let structured = ok(&report, "structured");
    assert_eq!(
        structured["data"],
        json!({"customer": "Anna", "total": 42.5, "currency": "EUR"}),
        "{structured}"
    );
    assert_eq!(
        (&structured["model"], &structured["via"]),
        (&json!("client-model"), &json!("sampling"))
    );
    let entities = ok(&report, "entities");
    assert_eq!(entities["count"], 2, "{entities}");
    assert_eq!(entities["via"], "sampling");
    let table = ok(&report, "table");
    assert_eq!(table["rows"], json!([["apples", 3], ["pears", 5]]));
    assert_eq!(table["via"], "sampling");
    let summary = ok(&report, "summary");
    assert_eq!(summary["summary"], "Anna sends the report on Friday.");
    assert_eq!(summary["via"], "sampling");
    let translated = ok(&report, "translated");
    assert_eq!(
        translated["translatedText"], "DE:good morning",
        "{translated}"
    );
    assert_eq!(
        (&translated["provider"], &translated["model"]),
        (&json!("sampling"), &json!("client-model"))
    );
    // A client's answer that breaks the schema twice: the violation is named.
    let bad = refused(&report, "always_bad");
    assert!(
        bad.contains("did not match the schema") && bad.contains("/total"),
        "{bad}"
    );
    assert!(bad.contains("stronger model than 'client-model'"), "{bad}");
    // The person declined in their client: the tool says so.
    let declined = refused(&report, "declined");
    assert!(
        declined.contains("the person declined") && declined.contains("not with my model"),
        "{declined}"
    );
    // What the client was asked: the task as the system prompt, the text as the one user
    // message, maxTokens, and no model hint (the client chooses).
    let asked = questions(&report);
    let first = asked[0];
    assert!(
        first["systemPrompt"]
            .as_str()
            .unwrap()
            .contains("Extract the data the schema describes"),
        "{first}"
    );
    assert_eq!(first["messages"].as_array().unwrap().len(), 1, "{first}");
    assert_eq!(first["messages"][0]["role"], "user");
    assert_eq!(
        first["messages"][0]["content"]["text"],
        "Invoice for Anna, Lyon: total 42.50 EUR, due Friday."
    );
    assert_eq!(first["maxTokens"], 4096);
    assert!(first.get("modelPreferences").is_none(), "{first}");
    let retry = asked[1]["systemPrompt"].as_str().unwrap();
    assert!(
        retry.contains("previous answer was not valid") && retry.contains("/total"),
        "{retry}"
    );

    // An agent on the client's model, started by a call that waits: its tool call of
    // summarize_text is answered by the same client's model.
    let agent = ok(&report, "agent");
    assert_eq!(
        agent["result"],
        "the agent read: {\"model\":\"client-model\",\"summary\":\"Anna sends the report on Friday.\",\"via\":\"sampling\",\"words\":6}",
        "{agent}"
    );
    // A JS tool calling the built-in inherits the rule: without `sampling` it is refused
    // naming the permission; with it, the client's model answers.
    let without = refused(&report, "js_without");
    assert!(
        without.contains("permissions: [\\\"sampling\\\"]"),
        "{without}"
    );
    let with = ok(&report, "js_with");
    assert_eq!(with["via"], "sampling", "{with}");
    // A client that declared no sampling: the refusal names both ways.
    let bare = refused(&report, "bare");
    assert!(
        bare.contains("'chat_model'")
            && bare.contains("did not declare the sampling capability")
            && bare.contains("declares the sampling capability"),
        "{bare}"
    );
    // REST has no client: only chat_model, and the message says so.
    let rest = execute(
        &app,
        "summarize_text",
        json!({"text": "Anna writes to Lyon."}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let rest = rest.to_string();
    assert!(
        rest.contains("'chat_model'")
            && rest.contains("a REST call (or the web UI) has no MCP client"),
        "{rest}"
    );

    // Each request to the client is audited on the built-in, never its prompt or answer;
    // the refusals too.
    let audit = app
        .get("/api/v1/audit?action=client.sample&limit=200")
        .await
        .assert_ok(StatusCode::OK);
    let entries = audit["entries"].as_array().unwrap();
    let on = |tool: &str, outcome: &str| {
        entries
            .iter()
            .filter(|e| e["targetId"] == tool && e["details"]["outcome"] == outcome)
            .count()
    };
    // Structured: 2 + 2 (always bad) answered; the other three once each; the JS tool's once.
    assert_eq!(on("extract_structured_data", "answered"), 4, "{audit}");
    assert_eq!(on("extract_entities", "answered"), 1, "{audit}");
    assert_eq!(on("translate_text", "answered"), 1, "{audit}");
    // summarize_text: the call, the agent's tool call, the JS tool's; the person declined one.
    assert_eq!(on("summarize_text", "answered"), 3, "{audit}");
    assert_eq!(on("summarize_text", "failed"), 1, "{audit}");
    assert_eq!(on("summarize_text", "refused"), 1, "{audit}");
    let text = audit.to_string();
    assert!(
        !text.contains("42.50") && !text.contains("Anna sends"),
        "{audit}"
    );

    // The policy denies mcp:sampling: refused naming the policy; the client is not asked.
    // (The stored policy holds the groups switched on above: keep them.)
    let stored = app.get("/api/v1/policies").await.assert_ok(StatusCode::OK)["policy"].clone();
    let mut denying = stored.clone();
    denying["deny"] = json!(["mcp:sampling"]);
    app.json(Method::PUT, "/api/v1/policies", &json!({"policy": denying}))
        .await
        .assert_ok(StatusCode::OK);
    let report = phase(&server, "policy").await;
    let denied = refused(&report, "summary");
    assert!(
        denied.contains("not allowed for this caller") && denied.contains("'mcp:sampling'"),
        "{denied}"
    );
    assert_eq!(report["requests"], json!([]), "{report}");
    app.json(Method::PUT, "/api/v1/policies", &json!({"policy": stored}))
        .await
        .assert_ok(StatusCode::OK);

    // A configured chat model is asked first: the client is not asked at all.
    configure_chat_model(&app, &chat_host).await;
    let report = phase(&server, "chat_model").await;
    let summary = ok(&report, "summary");
    assert_eq!(summary["summary"], "the configured model's summary");
    assert_eq!(
        (&summary["model"], &summary["via"]),
        (&json!("test-model"), &json!("chat_model"))
    );
    assert_eq!(report["requests"], json!([]), "{report}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}
