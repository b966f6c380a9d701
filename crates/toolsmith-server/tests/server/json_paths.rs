//! One JSON-path grammar on both faces that read paths (`toolsmith_httptool::path`): an HTTP
//! tool's `response_mapping`, imported and run through the real router against a loopback
//! upstream, and `format_json`'s `get_path` called through REST. The same paths find the same
//! values, and the same malformed paths are refused with the same reason and the way to write
//! one.

use crate::rest_support::{TestApp, app_reaching, serve_loopback};

use axum::Router;
use axum::http::{Method, StatusCode};
use axum::routing::get;
use serde_json::{Value, json};

/// The document both faces read: served by the upstream, and given to `format_json`.
fn document() -> Value {
    json!({"data": {
        "items": [{"name": "first"}, {"name": "second"}],
        "a/b": "slash",
        "x.y": "dot",
        "ünï😀": "unicode",
        "~": "tilde"
    }})
}

/// A loopback upstream serving [`document`] at `/doc`; its `host:port`.
async fn upstream() -> String {
    serve_loopback(Router::new().route("/doc", get(|| async { axum::Json(document()) }))).await
}

/// An HTTP tool reading `host`'s document with these mapped fields (name, path).
fn http_tool(host: &str, mapping: &[(&str, &str)]) -> String {
    let fields: String = mapping
        .iter()
        .map(|(name, path)| format!("  {name}: {}\n", json!(path)))
        .collect();
    format!(
        "name: read_paths\ndescription: Reads fields of a document by their paths\n\
         version: '1.0.0'\nendpoint:\n  url: 'http://{host}/doc'\n  method: GET\n\
         response_mapping:\n{fields}"
    )
}

async fn import(app: &TestApp, yaml: &str) -> crate::rest_support::TestResponse {
    app.raw(
        Method::POST,
        "/api/v1/custom-tools/import",
        Some("application/yaml"),
        yaml.to_owned(),
    )
    .await
}

/// Every string in `value`, one a line.
fn strings(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s}\n"),
        Value::Array(items) => items.iter().map(strings).collect(),
        Value::Object(map) => map.values().map(strings).collect(),
        _ => String::new(),
    }
}

/// `format_json`'s `get_path` on [`document`], through REST.
async fn get_path(app: &TestApp, path: &str) -> crate::rest_support::TestResponse {
    app.post(
        "/api/v1/tools/format_json/execute",
        &json!({"arguments": {"json": document(), "operation": "get_path", "path": path}}),
    )
    .await
}

/// Paths in both syntaxes, and what each finds in [`document`].
const FOUND: &[(&str, &str, &str)] = &[
    ("dotted", "data.items[1].name", "second"),
    ("pointer", "/data/items/1/name", "second"),
    ("slash_key", "/data/a~1b", "slash"),
    ("dot_key", "/data/x.y", "dot"),
    ("tilde_key", "/data/~0", "tilde"),
    ("unicode", "data.ünï😀", "unicode"),
];

/// Malformed paths, and the part of the reason each is refused with.
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "index_after_dot",
        "data.[0]",
        "write items[0], not items.[0]",
    ),
    ("spaced_index", "data.items[ 0 ]", "is not an index"),
    ("signed_index", "data.items[+1]", "is not an index"),
    (
        "negative_index",
        "data.items[-1]",
        "negative ones are not supported",
    ),
    (
        "huge_index",
        "data.items[99999999999999999999999]",
        "larger than any array",
    ),
    ("stray_bracket", "data]", "closes no '['"),
    ("unclosed", "data.items[0", "is never closed"),
    ("bad_escape", "/data/~2", "is not followed by 0 or 1"),
];

#[tokio::test]
async fn an_http_tool_mapping_and_format_json_read_the_same_paths() {
    let host = upstream().await;
    let app = app_reaching(&host).await;
    import(
        &app,
        &http_tool(
            &host,
            &FOUND.iter().map(|(n, p, _)| (*n, *p)).collect::<Vec<_>>(),
        ),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    let run = app
        .post(
            "/api/v1/tools/read_paths/execute",
            &json!({"arguments": {}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(run["isError"], false, "{run}");
    for (name, path, value) in FOUND {
        assert_eq!(
            run["content"]["data"][name], *value,
            "mapping {path}: {run}"
        );
        let got = get_path(&app, path).await.assert_ok(StatusCode::OK);
        assert_eq!(
            (&got["content"]["found"], &got["content"]["result"]),
            (&json!(true), &json!(value)),
            "format_json {path}: {got}"
        );
    }
}

#[tokio::test]
async fn both_faces_refuse_a_malformed_path_with_the_same_reason_and_the_fix() {
    let app = TestApp::new().await;
    let how = "write it as \"data.items[0].name\" or as a JSON Pointer \"/data/items/0/name\"";
    for (name, path, reason) in REFUSED {
        let res = import(&app, &http_tool("api.example.com", &[(name, path)])).await;
        assert!(res.status.is_client_error(), "mapping {path}: {}", res.text);
        let said = strings(&res.json);
        assert!(
            said.contains(reason) && said.contains(how),
            "mapping {path}: {}",
            res.text
        );
        let message = get_path(&app, path)
            .await
            .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
        assert!(
            message.contains(reason) && message.contains(how),
            "format_json {path}: {message}"
        );
    }
    // A huge path is refused before it is read, on both faces.
    let huge = "a.".repeat(5_000) + "a";
    let res = import(&app, &http_tool("api.example.com", &[("huge", &huge)])).await;
    assert!(
        strings(&res.json).contains("over the limit of 1024"),
        "{}",
        res.text
    );
    let message = get_path(&app, &huge)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "invalid_arguments");
    assert!(message.contains("over the limit of 1024"), "{message}");
}

/// `format_json`'s `flatten` writes each key in the same grammar, so a member named `x.y`, `a[1]`,
/// `""` or `/x` is no ambiguous dotted key: every key it makes is a path `get_path` reads back
/// to the same leaf.
#[tokio::test]
async fn format_json_flatten_writes_keys_that_get_path_reads_back() {
    let app = TestApp::new().await;
    let doc = json!({
        "data": document()["data"].clone(),
        "a[1]": {"": [true, {"/x": null}]},
        "/top": 1,
        "list": [[{"k": "v"}]]
    });
    let flat = app
        .post(
            "/api/v1/tools/format_json/execute",
            &json!({"arguments": {"json": doc, "operation": "flatten"}}),
        )
        .await
        .assert_ok(StatusCode::OK);
    let flat = flat["content"]["result"].as_object().unwrap().clone();
    assert!(
        flat.contains_key("data.items[1].name"),
        "plain keys stay dotted: {flat:?}"
    );
    assert!(flat.contains_key("/data/x.y"), "{flat:?}");
    assert_eq!(flat.len(), 10, "{flat:?}");
    for (key, leaf) in &flat {
        let got = app
            .post(
                "/api/v1/tools/format_json/execute",
                &json!({"arguments": {"json": doc, "operation": "get_path", "path": key}}),
            )
            .await
            .assert_ok(StatusCode::OK);
        assert_eq!(
            (&got["content"]["found"], &got["content"]["result"]),
            (&json!(true), leaf),
            "flatten's key {key:?}: {got}"
        );
    }
}
