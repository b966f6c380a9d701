//! MCP tool annotations (issue 35): every built-in and custom tool is listed with
//! `readOnlyHint`, `destructiveHint`, `idempotentHint` and `openWorldHint` computed from what it
//! does (a built-in's stated effect and `network` permission, a custom tool's kind, an HTTP
//! tool's method, its owner's `metadata.annotations`), the same in `tools/list` on both protocol
//! generations and in REST's tool list. A bridged tool's own annotations pass through
//! (`mcp_content::a_bridged_tools_content_blocks_and_output_schema_pass_through`).

use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use toolsmith_server::auth::Identity;

use crate::mcp_support::connect_in_process;
use crate::rest_support::{TestApp, request};

/// One stateless 2026-07-28 request (no session), its JSON-RPC answer.
async fn rpc_2026(app: &TestApp, method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let req = request(Method::POST, "/mcp")
        .header("mcp-method", method)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .body(Body::from(body.to_string()))
        .unwrap();
    let res = app.send(req).await;
    if res.json.is_null() {
        let data = res
            .text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or_else(|| panic!("no answer: {} {}", res.status, res.text));
        return serde_json::from_str(data).unwrap();
    }
    res.json
}

/// An HTTP tool (YAML) calling `method` (never called here).
fn http_tool(name: &str, method: &str) -> String {
    format!(
        "name: {name}\ndescription: An HTTP tool using {method}\nversion: '1.0.0'\n\
         endpoint:\n  url: 'https://api.example.com/thing'\n  method: {method}\n"
    )
}

/// The annotations of each tool of a listing (`[{name, annotations}]`), by name.
fn by_name(tools: &[Value]) -> BTreeMap<String, Value> {
    tools
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t.get("annotations").cloned().unwrap_or(Value::Null),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_is_listed_with_annotations_computed_from_what_it_does() {
    let app = TestApp::new().await;
    for body in [
        json!({"name": "js_plain", "description": "Adds one", "parameters": {"type": "object"},
               "code": "return 1;"}),
        json!({"name": "js_declared", "description": "Looks something up",
               "parameters": {"type": "object"}, "code": "return 1;",
               "permissions": ["network"],
               "metadata": {"annotations": {"readOnlyHint": true, "openWorldHint": false}}}),
    ] {
        let res = app.post("/api/v1/custom-tools", &body).await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.text);
    }
    for (name, method) in [("http_get", "GET"), ("http_delete", "DELETE")] {
        let res = app
            .raw(
                Method::POST,
                "/api/v1/custom-tools/import",
                Some("application/yaml"),
                http_tool(name, method),
            )
            .await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.text);
    }
    // A hint that is not a boolean is refused, naming the fix.
    let res = app
        .post(
            "/api/v1/custom-tools",
            &json!({"name": "js_bad", "description": "x", "parameters": {"type": "object"},
                    "code": "return 1;", "metadata": {"annotations": {"readOnly": true}}}),
        )
        .await;
    let message = res.assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(message.contains("readOnlyHint"), "{message}");

    let expected = [
        (
            "read_file",
            json!({"readOnlyHint": true, "openWorldHint": false}),
        ),
        (
            "delete_file",
            json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}),
        ),
        (
            "add_task",
            json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}),
        ),
        (
            "calculate",
            json!({"readOnlyHint": true, "openWorldHint": false}),
        ),
        (
            "js_plain",
            json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false}),
        ),
        // Declared read-only by its owner; it reaches the network, so open world whatever it says.
        (
            "js_declared",
            json!({"readOnlyHint": true, "openWorldHint": true}),
        ),
        (
            "http_get",
            json!({"readOnlyHint": true, "openWorldHint": true}),
        ),
        (
            "http_delete",
            json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": true}),
        ),
    ];

    // REST's tool list.
    let res = app.get("/api/v1/tools").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text);
    let rest = by_name(res.json["data"]["tools"].as_array().unwrap());

    // MCP 2025-11-25 through rmcp's client.
    let client = connect_in_process(&app.state, Identity::local_default(), ()).await;
    let listed = client.list_all_tools().await.unwrap();
    let listed: Vec<Value> = listed
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let titles: BTreeMap<String, Value> = listed
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t["title"].clone()))
        .collect();
    let older = by_name(&listed);

    // MCP 2026-07-28, stateless.
    let answer = rpc_2026(&app, "tools/list", json!({})).await;
    let newer = by_name(answer["result"]["tools"].as_array().unwrap_or_else(|| {
        panic!("{answer:#}");
    }));

    for (door, listing) in [
        ("REST", &rest),
        ("2025-11-25", &older),
        ("2026-07-28", &newer),
    ] {
        for (name, hints) in &expected {
            assert_eq!(listing.get(*name), Some(hints), "{door}: {name}");
        }
        // Every registry tool (REST lists exactly those) carries them on every door.
        for (name, hints) in listing.iter().filter(|(name, _)| rest.contains_key(*name)) {
            assert!(
                hints.is_object(),
                "{door}: {name} is listed without annotations"
            );
        }
    }
    assert_eq!(titles["read_file"], json!("Read file"));
}
