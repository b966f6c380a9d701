//! The dynamic-mcp control plane (`--compat dynamic-mcp`) through the real router, with raw
//! JSON-RPC (protocol 2026-07-28, stateless): its input limits and their answers, who acts
//! (the admin token's holder is the operator; anyone else is the model, whose tools wait for a
//! person), a dynamic tool's arguments under `args`, and read-only mode in its words. The
//! answers' shapes are checked in full by `mcp_compat.rs` (the Python SDK over stdio) and by
//! dynamic-mcp's own tests (`crates/toolsmith/tests/cli/dynamic_mcp_suite.rs`).

use crate::rest_support;

use axum::body::Body;
use axum::http::Method;
use rest_support::{TestApp, request};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_service::ToolServiceSettings;

const ADMIN_TOKEN: &str = "compat-answers-admin-token-0123";

/// The service as `--compat dynamic-mcp` sets it up: dynamic-mcp's wider names.
fn compat_service() -> ToolServiceSettings {
    ToolServiceSettings {
        name_rule: toolsmith_core::name::NameRule::Wide,
        ..ToolServiceSettings::default()
    }
}

fn compat_config(admin_token: Option<&str>) -> ServerSettings {
    ServerSettings {
        compat_dynamic_mcp: true,
        admin_token: admin_token.map(str::to_owned),
        ..ServerSettings::default()
    }
}

/// One stateless `tools/call`; returns its `result` (or the JSON-RPC error as `{"error": …}`).
async fn call(app: &TestApp, bearer: Option<&str>, name: &str, args: Value) -> Value {
    let body = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": name,
            "arguments": args,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1.0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut req = request(Method::POST, "/mcp")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28");
    if let Some(token) = bearer {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let res = app
        .send(req.body(Body::from(body.to_string())).unwrap())
        .await;
    let answer: Value = if res.json.is_null() {
        let data = res
            .text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|d| !d.is_empty())
            .unwrap_or_else(|| panic!("no answer: {} {}", res.status, res.text));
        serde_json::from_str(data).unwrap()
    } else {
        res.json
    };
    if answer.get("error").is_some() {
        return json!({"error": answer["error"]});
    }
    answer["result"].clone()
}

/// `(isError, the one text)` of a result.
fn text_of(result: &Value) -> (bool, String) {
    let texts: Vec<&str> = result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("a tools/call result: {result:#}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect();
    assert_eq!(texts.len(), 1, "{result:#}");
    (result["isError"] == true, texts[0].to_owned())
}

fn spec_tool(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Convert input text to uppercase",
        "code": "const { text } = args;\nif (!text) throw new Error('text is required');\nreturn { upper: String(text).toUpperCase() };",
    })
}

/// dynamic-mcp's limits (its zod schemas, `src/dynamic/spec.ts`): each value just past one is
/// refused as its SDK refuses it ("Input validation error: Invalid arguments for tool …"),
/// naming the field and the limit; each value at the limit is taken.
#[tokio::test]
async fn dynamic_mcp_limits_are_its_own_and_named() {
    let app = TestApp::with_configs(compat_service(), compat_config(None)).await;
    let too_many: Vec<Value> = (0..65)
        .map(|i| json!({"name": format!("pkg{i}"), "version": "1.0.0"}))
        .collect();
    let past = [
        ("title", json!("t".repeat(121)), "/tool/title"),
        ("title", json!(""), "/tool/title"),
        ("description", json!("d".repeat(4001)), "/tool/description"),
        ("description", json!(""), "/tool/description"),
        ("image", json!("i".repeat(201)), "/tool/image"),
        ("timeoutMs", json!(999), "/tool/timeoutMs"),
        ("timeoutMs", json!(120_001), "/tool/timeoutMs"),
        ("timeoutMs", json!(1500.5), "/tool/timeoutMs"),
        ("dependencies", json!(too_many), "/tool/dependencies"),
        (
            "dependencies",
            json!([{"name": "left-pad", "version": "v".repeat(129)}]),
            "/tool/dependencies/0/version",
        ),
        (
            "dependencies",
            json!([{"name": "Not A Package", "version": "1"}]),
            "/tool/dependencies/0/name",
        ),
        ("code", json!(""), "/tool/code"),
        ("code", json!("x".repeat(200_001)), "/tool/code"),
        ("unknownField", json!(true), "/tool"),
    ];
    for (field, value, path) in past {
        let mut tool = spec_tool("text.limits");
        tool[field] = value;
        let result = call(&app, None, "dynamic.tool.create", json!({"tool": tool})).await;
        let (is_error, text) = text_of(&result);
        assert!(is_error, "{field}: {result:#}");
        assert!(
            text.starts_with(
                "MCP error -32602: Input validation error: Invalid arguments for tool dynamic.tool.create: "
            ) && text.contains(path),
            "{field}: {text}"
        );
        assert!(result.get("structuredContent").is_none(), "{result:#}");
    }
    // At the limits: taken.
    let mut tool = spec_tool("text.at_limits");
    tool["title"] = json!("t".repeat(120));
    tool["description"] = json!("d".repeat(4000));
    tool["image"] = json!("i".repeat(200));
    tool["timeoutMs"] = json!(1000);
    let result = call(&app, None, "dynamic.tool.create", json!({"tool": tool})).await;
    let (is_error, text) = text_of(&result);
    assert!(!is_error, "{result:#}");
    assert_eq!(text, "Created dynamic tool: text.at_limits");
    assert_eq!(result["structuredContent"]["tool"]["timeoutMs"], 1000);
    assert_eq!(
        result["structuredContent"]["tool"]["title"],
        json!("t".repeat(120))
    );
    // A name outside its rule, in its words.
    let result = call(
        &app,
        None,
        "dynamic.tool.create",
        json!({"tool": spec_tool("9starts-with-a-digit")}),
    )
    .await;
    let (is_error, text) = text_of(&result);
    assert!(
        is_error && text.contains("Invalid dynamic tool name"),
        "{text}"
    );
}

/// Who acts on the dynamic-mcp control plane: a call proving the server's admin token acts
/// for the operator, so its tool runs without asking anyone (as in dynamic-mcp, where only
/// the token's holder may create tools); without an admin token configured, the caller is the
/// model, and the tool it creates waits for a person's approval before it runs — never
/// approved by the model itself. Both take spec 002's invocation, arguments under `args`.
#[tokio::test]
async fn the_admin_tokens_holder_is_the_operator_and_anyone_else_the_model() {
    // With the admin token: the operator's tool, called at once.
    let app = TestApp::with_configs(compat_service(), compat_config(Some(ADMIN_TOKEN))).await;
    let token = Some(ADMIN_TOKEN);
    let created = call(
        &app,
        token,
        "dynamic.tool.create",
        json!({"tool": spec_tool("text.uppercase"), "adminToken": ADMIN_TOKEN}),
    )
    .await;
    assert!(!text_of(&created).0, "{created:#}");
    let invoked = call(
        &app,
        token,
        "text.uppercase",
        json!({"args": {"text": "hello world"}}),
    )
    .await;
    assert_eq!(
        invoked["structuredContent"],
        json!({"ok": true, "result": {"upper": "HELLO WORLD"}}),
        "{invoked:#}"
    );

    // Without an admin token configured: the model's tool, which asks a person first.
    let app = TestApp::with_configs(compat_service(), compat_config(None)).await;
    let created = call(
        &app,
        None,
        "dynamic.tool.create",
        json!({"tool": spec_tool("text.uppercase")}),
    )
    .await;
    let (is_error, text) = text_of(&created);
    assert!(!is_error, "{created:#}");
    assert_eq!(text, "Created dynamic tool: text.uppercase");
    let invoked = call(
        &app,
        None,
        "text.uppercase",
        json!({"args": {"text": "hello world"}}),
    )
    .await;
    assert_eq!(invoked["isError"], true, "{invoked:#}");
    assert_eq!(invoked["structuredContent"]["ok"], false, "{invoked:#}");
    assert_eq!(
        invoked["structuredContent"]["code"], "approval_required",
        "{invoked:#}"
    );
    // The model cannot make its tool the operator's: enabling, updating or re-creating it
    // changes nothing of who made it.
    let got = call(
        &app,
        None,
        "dynamic.tool.get",
        json!({"name": "text.uppercase"}),
    )
    .await;
    assert_eq!(got["structuredContent"]["tool"]["enabled"], true, "{got:#}");
    let service = &app.state.service;
    let record = service
        .get(
            &toolsmith_service::Actor::user("default"),
            &toolsmith_service::ToolRef::parse("text.uppercase"),
        )
        .await
        .unwrap();
    assert_eq!(record.created_by, toolsmith_core::CreatedBy::Llm);
    assert!(record.requires_approval);
}

/// A dynamic tool whose own schema has a parameter named `args` takes its arguments as
/// they are; others take dynamic-mcp's `{"args": {…}}` and Toolsmith's top-level arguments
/// alike.
#[tokio::test]
async fn args_is_unwrapped_only_for_tools_without_an_args_parameter() {
    let app = TestApp::with_configs(compat_service(), compat_config(Some(ADMIN_TOKEN))).await;
    let token = Some(ADMIN_TOKEN);
    let mut tool = spec_tool("echo.args");
    tool["code"] = json!("return args;");
    tool["inputSchema"] = json!({"type": "object", "properties": {"args": {"type": "object"}}});
    let created = call(
        &app,
        token,
        "dynamic.tool.create",
        json!({"tool": tool, "adminToken": ADMIN_TOKEN}),
    )
    .await;
    assert!(!text_of(&created).0, "{created:#}");
    let invoked = call(&app, token, "echo.args", json!({"args": {"a": 1}})).await;
    assert_eq!(
        invoked["structuredContent"],
        json!({"ok": true, "result": {"args": {"a": 1}}}),
        "{invoked:#}"
    );
    let mut tool = spec_tool("echo.plain");
    tool["code"] = json!("return args;");
    call(
        &app,
        token,
        "dynamic.tool.create",
        json!({"tool": tool, "adminToken": ADMIN_TOKEN}),
    )
    .await;
    for args in [json!({"args": {"a": 1}}), json!({"a": 1})] {
        let invoked = call(&app, token, "echo.plain", args).await;
        assert_eq!(
            invoked["structuredContent"],
            json!({"ok": true, "result": {"a": 1}}),
            "{invoked:#}"
        );
    }
}

/// Read-only mode (`MCP_DYNAMIC_READ_ONLY` in compat mode) refuses the control plane's writes
/// in dynamic-mcp's words, and keeps its reads.
#[tokio::test]
async fn read_only_refuses_writes_in_dynamic_mcps_words() {
    let app = TestApp::with_configs(
        ToolServiceSettings {
            read_only: true,
            ..compat_service()
        },
        ServerSettings {
            read_only: true,
            ..compat_config(None)
        },
    )
    .await;
    let created = call(
        &app,
        None,
        "dynamic.tool.create",
        json!({"tool": spec_tool("text.readonly")}),
    )
    .await;
    let (is_error, text) = text_of(&created);
    assert!(is_error, "{created:#}");
    assert!(
        text.starts_with(
            "Dynamic registry is read-only; cannot create tools while MCP_DYNAMIC_READ_ONLY is enabled."
        ),
        "{text}"
    );
    for (name, args, operation) in [
        (
            "dynamic.tool.update",
            json!({"name": "text.readonly", "patch": {"description": "x"}}),
            "update",
        ),
        (
            "dynamic.tool.delete",
            json!({"name": "text.readonly"}),
            "delete",
        ),
        (
            "dynamic.tool.enable",
            json!({"name": "text.readonly", "enabled": false}),
            "enable/disable",
        ),
    ] {
        let (is_error, text) = text_of(&call(&app, None, name, args).await);
        assert!(is_error, "{name}");
        assert!(
            text.starts_with(&format!(
                "Dynamic registry is read-only; cannot {operation} tools"
            )),
            "{name}: {text}"
        );
    }
    let listed = call(&app, None, "dynamic.tool.list", json!({})).await;
    assert_eq!(
        listed["structuredContent"],
        json!({"tools": []}),
        "{listed:#}"
    );
}
