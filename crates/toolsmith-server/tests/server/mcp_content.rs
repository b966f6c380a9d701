//! Results as MCP content (issue 34): content blocks (text, image, audio, embedded resources,
//! resource links, with annotations and `_meta`) and structured content, through MCP, REST and
//! the bridge — a bridged upstream's blocks, tool annotations and output schema reach
//! Toolsmith's clients unchanged (`tests/clients/mcp_upstream.py`'s rich tools).

use serde_json::{Value, json};

use crate::mcp_bridge::{app_with, upstream};
use crate::mcp_protocol::Session;
use crate::mcp_support::{prerequisite, python};

/// The 1x1 PNG `mcp_upstream.py` returns.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// A call's whole MCP result as JSON (what a client reads).
async fn called(session: &Session, name: &str, args: Value) -> Value {
    let result = session
        .call(name, args)
        .await
        .unwrap_or_else(|e| panic!("{name}: protocol error {e:?}"));
    serde_json::to_value(result).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridged_upstreams_content_blocks_annotations_and_output_schema_pass_through_unchanged() {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("up")]).await;
    let session = Session::open(&app.state, "default").await;

    // tools/list: the upstream's output schema and annotations, as it wrote them.
    let tools = session.tools().await;
    let measure = tools
        .iter()
        .find(|t| t.name == "mcp_up_measure")
        .expect("mcp_up_measure listed");
    let listed = serde_json::to_value(measure).unwrap();
    assert_eq!(
        listed["outputSchema"],
        json!({
            "properties": {
                "length": {"title": "Length", "type": "integer"},
                "words": {"title": "Words", "type": "integer"}
            },
            "required": ["length", "words"],
            "title": "Measure",
            "type": "object"
        }),
        "{listed}"
    );
    assert_eq!(
        listed["annotations"],
        json!({"title": "Measure a text", "readOnlyHint": true, "idempotentHint": true}),
        "{listed}"
    );

    // tools/call: every kind of block, with its annotations and _meta, unchanged.
    let picture = called(&session, "mcp_up_picture", json!({})).await;
    assert_eq!(
        picture["content"],
        json!([
            {"type": "text", "text": "a red dot", "annotations": {"audience": ["user"], "priority": 0.5}},
            {"type": "image", "data": PNG, "mimeType": "image/png", "_meta": {"origin": "upstream"}}
        ]),
        "{picture}"
    );
    assert_eq!(picture["isError"], false, "{picture}");
    let sound = called(&session, "mcp_up_sound", json!({})).await;
    assert_eq!(
        sound["content"],
        json!([{"type": "audio", "data": "UklGRiQAAABXQVZF", "mimeType": "audio/wav"}]),
        "{sound}"
    );
    let linked = called(&session, "mcp_up_linked", json!({})).await;
    assert_eq!(
        linked["content"],
        json!([
            {"type": "resource_link", "uri": "file:///docs/readme.md", "name": "readme.md",
             "mimeType": "text/markdown", "description": "The project's readme"},
            {"type": "resource", "resource": {"uri": "test://notes/1", "mimeType": "text/plain", "text": "first note"}},
            {"type": "resource", "resource": {"uri": "test://blobs/1", "mimeType": "application/octet-stream", "blob": "AAECAw=="}}
        ]),
        "{linked}"
    );
    let measured = called(&session, "mcp_up_measure", json!({"text": "a b c"})).await;
    assert_eq!(
        measured["structuredContent"],
        json!({"length": 5, "words": 3}),
        "{measured}"
    );

    // REST shows the same blocks, base64 as it is, and says what the content is.
    let answer = app
        .post("/api/v1/tools/mcp_up_picture/execute", &json!({}))
        .await
        .assert_ok(axum::http::StatusCode::OK);
    let data = &answer;
    assert_eq!(data["contentForm"], "blocks", "{answer}");
    assert_eq!(data["content"]["content"][1]["data"], PNG, "{answer}");
    assert_eq!(
        data["content"],
        picture_without_is_error(&picture),
        "{answer}"
    );
    assert_eq!(data["result"], data["content"], "{answer}");
    // A plain-text answer reads as before (the Python SDK wraps a str in {"result": …} as
    // structured content), with no contentForm.
    let plain = app
        .post(
            "/api/v1/tools/mcp_up_echo/execute",
            &json!({"arguments": {"text": "hi"}}),
        )
        .await
        .assert_ok(axum::http::StatusCode::OK);
    assert!(plain.get("contentForm").is_none(), "{plain}");
    assert_eq!(plain["content"], json!({"result": "hi"}), "{plain}");
}

/// The MCP result's `content` (and structured content, `_meta`) without `isError`: REST's
/// `content` of a block result.
fn picture_without_is_error(mcp: &Value) -> Value {
    let mut shown = mcp.clone();
    if let Some(map) = shown.as_object_mut() {
        map.remove("isError");
        map.remove("resultType");
    }
    shown
}

/// A custom tool's `outputSchema`: stored, listed in `tools/list`, and every result's
/// structured content checked against it (the object a JS tool returns is its structured
/// content, with its JSON as the text block).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_tools_output_schema_is_listed_and_its_results_are_checked_against_it() {
    let app = crate::rest_support::TestApp::new().await;
    let output = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": false
    });
    app.create_tool(&json!({
        "name": "typed_count",
        "description": "Counts, or gets it wrong when asked to",
        "parameters": {"type": "object", "properties": {"wrong": {"type": "boolean"}}},
        "outputSchema": output,
        "code": "return args.wrong ? { n: 'one' } : { n: 1 };"
    }))
    .await;
    let session = Session::open(&app.state, "default").await;
    let tools = session.tools().await;
    let listed = tools.iter().find(|t| t.name == "typed_count").unwrap();
    assert_eq!(
        serde_json::to_value(listed).unwrap()["outputSchema"],
        output
    );

    let fine = called(&session, "typed_count", json!({})).await;
    assert_eq!(fine["isError"], false, "{fine}");
    assert_eq!(fine["structuredContent"], json!({"n": 1}), "{fine}");
    assert_eq!(
        fine["content"],
        json!([{"type": "text", "text": "{\"n\":1}"}]),
        "{fine}"
    );

    let wrong = called(&session, "typed_count", json!({"wrong": true})).await;
    assert_eq!(wrong["isError"], true, "{wrong}");
    let text = wrong["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("does not match its outputSchema") && text.contains("at /n"),
        "{text}"
    );

    // The same check on REST.
    let answer = app
        .post(
            "/api/v1/tools/typed_count/execute",
            &json!({"arguments": {"wrong": true}}),
        )
        .await
        .assert_ok(axum::http::StatusCode::OK);
    assert_eq!(answer["isError"], true, "{answer}");
    assert_eq!(answer["content"]["violations"][0]["path"], "/n", "{answer}");

    // An output schema that is not an object schema is refused at creation, by name.
    let refused = app
        .post(
            "/api/v1/custom-tools",
            &json!({
                "name": "bad_output",
                "description": "d",
                "parameters": {"type": "object"},
                "outputSchema": {"type": "string"},
                "code": "return 'x';"
            }),
        )
        .await;
    let message = refused.assert_error(
        axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        "validation_error",
    );
    assert!(message.contains("outputSchema"), "{message}");
}

/// JSON Schema 2020-12 keywords are listed as the author wrote them (the conformance suite's
/// `json-schema-2020-12` scenario: `$schema`, `$defs`, `$ref`, `additionalProperties`), and
/// the `$ref` is enforced on calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_schema_2020_12_keywords_are_listed_as_written() {
    let app = crate::rest_support::TestApp::new().await;
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"}
        },
        "additionalProperties": false
    });
    app.create_tool(&json!({
        "name": "json_schema_2020_12_tool",
        "description": "Tool with JSON Schema 2020-12 features",
        "parameters": schema,
        "code": "return { ok: true, name: args.name ?? null };"
    }))
    .await;
    let session = Session::open(&app.state, "default").await;
    let tools = session.tools().await;
    let listed = tools
        .iter()
        .find(|t| t.name == "json_schema_2020_12_tool")
        .unwrap();
    assert_eq!(serde_json::to_value(listed).unwrap()["inputSchema"], schema);
    let fine = called(
        &session,
        "json_schema_2020_12_tool",
        json!({"name": "a", "address": {"street": "Main", "city": "X"}}),
    )
    .await;
    assert_eq!(fine["isError"], false, "{fine}");
    let refused = called(
        &session,
        "json_schema_2020_12_tool",
        json!({"address": {"street": 5}}),
    )
    .await;
    assert_eq!(refused["isError"], true, "{refused}");
    let refused = called(&session, "json_schema_2020_12_tool", json!({"other": 1})).await;
    assert_eq!(refused["isError"], true, "{refused}");
}

/// A model declares an output schema through `create_tool` (`output_schema`), and the tool
/// lists it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_tool_takes_an_output_schema() {
    let app = crate::rest_support::TestApp::new().await;
    let session = Session::open(&app.state, "default").await;
    let output =
        json!({"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]});
    let created = called(
        &session,
        "create_tool",
        json!({
            "name": "typed_add",
            "description": "Adds",
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
            "output_schema": output,
            "code": "return {sum: args.a + args.b};"
        }),
    )
    .await;
    assert_eq!(created["isError"], false, "{created}");
    let tools = session.tools().await;
    let listed = tools.iter().find(|t| t.name == "typed_add").unwrap();
    assert_eq!(
        serde_json::to_value(listed).unwrap()["outputSchema"],
        output
    );
    let sum = called(&session, "typed_add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum["structuredContent"], json!({"sum": 5}), "{sum}");
}

/// An update changes a tool's `outputSchema` as a create sets it: REST `PATCH` (`outputSchema`)
/// and MCP `update_custom_tool` (`output_schema`); the rest of the metadata stays, the new
/// schema is listed and checked at the next call, and an unusable one is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_changes_the_output_schema_on_rest_and_mcp() {
    let app = crate::rest_support::TestApp::new().await;
    let created = app
        .create_tool(&json!({
            "name": "typed_pair",
            "description": "Answers a pair",
            "parameters": {"type": "object"},
            "metadata": {"note": "kept"},
            "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "code": "return {n: 1, s: 'one'};"
        }))
        .await;
    let id = created["id"].as_str().unwrap().to_owned();
    let strict = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "additionalProperties": false
    });
    let updated = app
        .patch(
            &format!("/api/v1/custom-tools/{id}"),
            &json!({"outputSchema": strict}),
        )
        .await
        .assert_ok(axum::http::StatusCode::OK);
    assert_eq!(updated["metadata"]["outputSchema"], strict, "{updated}");
    assert_eq!(updated["metadata"]["note"], "kept", "{updated}");
    let session = Session::open(&app.state, "default").await;
    let tools = session.tools().await;
    let listed = tools.iter().find(|t| t.name == "typed_pair").unwrap();
    assert_eq!(
        serde_json::to_value(listed).unwrap()["outputSchema"],
        strict
    );
    let wrong = called(&session, "typed_pair", json!({})).await;
    assert_eq!(wrong["isError"], true, "{wrong}");

    // MCP: the model changes it back through update_custom_tool.
    let loose = json!({"type": "object", "properties": {"s": {"type": "string"}}});
    let answer = called(
        &session,
        "update_custom_tool",
        json!({"name": "typed_pair", "output_schema": loose}),
    )
    .await;
    assert_eq!(answer["isError"], false, "{answer}");
    let fine = called(&session, "typed_pair", json!({})).await;
    assert_eq!(fine["isError"], false, "{fine}");
    assert_eq!(
        fine["structuredContent"],
        json!({"n": 1, "s": "one"}),
        "{fine}"
    );
    let record = app
        .get(&format!("/api/v1/custom-tools/{id}"))
        .await
        .assert_ok(axum::http::StatusCode::OK);
    assert_eq!(record["metadata"]["outputSchema"], loose, "{record}");
    assert_eq!(record["metadata"]["note"], "kept", "{record}");

    // An output schema that is not an object schema is refused, by name, on both doors.
    let refused = app
        .patch(
            &format!("/api/v1/custom-tools/{id}"),
            &json!({"outputSchema": {"type": "string"}}),
        )
        .await;
    let message = refused.assert_error(
        axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        "validation_error",
    );
    assert!(message.contains("outputSchema"), "{message}");
    let refused = called(
        &session,
        "update_custom_tool",
        json!({"name": "typed_pair", "output_schema": {"type": "string"}}),
    )
    .await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        refused["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("outputSchema"),
        "{refused}"
    );
}
