//! The OpenAPI document: it is OpenAPI 3.1, it describes exactly the routes the router answers
//! (and the router answers every route it describes), every `$ref` resolves, and the request
//! schemas accept exactly what the handlers accept.

use crate::rest_support;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use rest_support::{TestApp, request, tool_body};
use serde_json::{Value, json};

/// Every operation of the API, as the spec and the issue list them.
const OPERATIONS: &[(&str, &str)] = &[
    ("GET", "/api/v1/custom-tools"),
    ("GET", "/api/v1/data/export"),
    ("DELETE", "/api/v1/data"),
    ("GET", "/api/v1/data/{family}"),
    ("POST", "/api/v1/data/{family}"),
    ("GET", "/api/v1/data/{family}/{id}"),
    ("PATCH", "/api/v1/data/{family}/{id}"),
    ("DELETE", "/api/v1/data/{family}/{id}"),
    ("GET", "/api/v1/data/custom"),
    ("POST", "/api/v1/data/custom"),
    ("GET", "/api/v1/data/custom/{table}"),
    ("DELETE", "/api/v1/data/custom/{table}"),
    ("GET", "/api/v1/data/custom/{table}/records"),
    ("POST", "/api/v1/data/custom/{table}/records"),
    ("GET", "/api/v1/data/custom/{table}/records/{id}"),
    ("PATCH", "/api/v1/data/custom/{table}/records/{id}"),
    ("DELETE", "/api/v1/data/custom/{table}/records/{id}"),
    ("GET", "/api/v1/settings/timezone"),
    ("PUT", "/api/v1/settings/timezone"),
    ("GET", "/api/v1/scheduled-tasks"),
    ("POST", "/api/v1/scheduled-tasks"),
    ("GET", "/api/v1/scheduled-tasks/{id}"),
    ("PATCH", "/api/v1/scheduled-tasks/{id}"),
    ("DELETE", "/api/v1/scheduled-tasks/{id}"),
    ("GET", "/api/v1/scheduled-tasks/{id}/runs"),
    ("POST", "/api/v1/scheduled-tasks/{id}/trigger"),
    ("POST", "/api/v1/custom-tools"),
    ("GET", "/api/v1/custom-tools/stats"),
    ("GET", "/api/v1/custom-tools/pending"),
    ("GET", "/api/v1/custom-tools/active/definitions"),
    ("POST", "/api/v1/custom-tools/test"),
    ("GET", "/api/v1/custom-tools/{id}"),
    ("PATCH", "/api/v1/custom-tools/{id}"),
    ("DELETE", "/api/v1/custom-tools/{id}"),
    ("POST", "/api/v1/custom-tools/{id}/enable"),
    ("POST", "/api/v1/custom-tools/{id}/disable"),
    ("POST", "/api/v1/custom-tools/{id}/approve"),
    ("POST", "/api/v1/custom-tools/{id}/reject"),
    ("POST", "/api/v1/custom-tools/{id}/execute"),
    ("GET", "/api/v1/custom-tools/{id}/versions"),
    ("POST", "/api/v1/custom-tools/{id}/rollback"),
    ("POST", "/api/v1/custom-tools/{id}/move"),
    ("GET", "/api/v1/organizations"),
    ("POST", "/api/v1/organizations"),
    ("GET", "/api/v1/organizations/{org}"),
    ("PATCH", "/api/v1/organizations/{org}"),
    ("DELETE", "/api/v1/organizations/{org}"),
    ("GET", "/api/v1/organizations/{org}/members"),
    ("PUT", "/api/v1/organizations/{org}/members/{user}"),
    ("DELETE", "/api/v1/organizations/{org}/members/{user}"),
    ("GET", "/api/v1/tools"),
    ("GET", "/api/v1/tools/definitions"),
    ("POST", "/api/v1/tools/{name}/execute"),
    ("GET", "/api/v1/openapi.json"),
    ("GET", "/livez"),
    ("GET", "/readyz"),
    ("GET", "/metrics"),
    ("POST", "/api/v1/custom-tools/import"),
    ("GET", "/api/v1/tools/suggest"),
    ("GET", "/api/v1/custom-tools/{id}/metrics"),
    ("GET", "/api/v1/custom-tools/{id}/anomalies"),
    ("GET", "/api/v1/metrics/tools"),
    ("GET", "/api/v1/metrics/server"),
    ("GET", "/api/v1/metrics/anomalies"),
    ("GET", "/api/v1/audit"),
    ("GET", "/api/v1/policies"),
    ("PUT", "/api/v1/policies"),
    ("DELETE", "/api/v1/policies"),
    ("GET", "/api/v1/approvals"),
    ("GET", "/api/v1/approvals/{id}"),
    ("POST", "/api/v1/approvals/{id}/decision"),
    ("GET", "/api/v1/config/services"),
    ("POST", "/api/v1/config/services"),
    ("GET", "/api/v1/config/services/{service}"),
    ("PATCH", "/api/v1/config/services/{service}"),
    ("DELETE", "/api/v1/config/services/{service}"),
    ("POST", "/api/v1/config/services/{service}/entries"),
    ("PATCH", "/api/v1/config/services/{service}/entries/{entry}"),
    (
        "DELETE",
        "/api/v1/config/services/{service}/entries/{entry}",
    ),
    ("GET", "/api/v1/session"),
    ("GET", "/api/v1/changes"),
    ("GET", "/api/v1/sign-in"),
    ("POST", "/api/v1/sign-in/token"),
    ("GET", "/api/v1/executions"),
    ("GET", "/api/v1/agents"),
    ("POST", "/api/v1/agents"),
    ("GET", "/api/v1/agents/{id}"),
    ("PUT", "/api/v1/agents/{id}"),
    ("DELETE", "/api/v1/agents/{id}"),
    ("GET", "/api/v1/agent-links"),
    ("POST", "/api/v1/agent-links"),
    ("DELETE", "/api/v1/agent-links/{id}"),
    ("GET", "/api/v1/delegations"),
    ("GET", "/api/v1/agents/{id}/runs"),
    ("POST", "/api/v1/agents/{id}/runs"),
    ("GET", "/api/v1/agents/{id}/runs/{run}"),
    ("POST", "/api/v1/agents/{id}/runs/{run}/cancel"),
    ("GET", "/api/v1/agent-runs"),
    ("GET", "/api/v1/metrics/agents"),
    ("GET", "/api/v1/sessions"),
    ("GET", "/api/v1/sessions/{key}"),
    ("GET", "/api/v1/tasks"),
    ("POST", "/api/v1/tasks"),
    ("GET", "/api/v1/tasks/{id}"),
    ("POST", "/api/v1/tasks/{id}/cancel"),
    ("GET", "/api/v1/teams"),
    ("POST", "/api/v1/teams"),
    ("GET", "/api/v1/teams/{id}"),
    ("DELETE", "/api/v1/teams/{id}"),
    ("GET", "/api/v1/teams/{id}/board"),
    ("GET", "/api/v1/prompts"),
    ("POST", "/api/v1/prompts"),
    ("GET", "/api/v1/prompts/{name}"),
    ("PUT", "/api/v1/prompts/{name}"),
    ("DELETE", "/api/v1/prompts/{name}"),
    ("POST", "/api/v1/prompts/{name}/enable"),
    ("POST", "/api/v1/prompts/{name}/disable"),
    ("GET", "/api/v1/prompts/{name}/versions"),
    ("POST", "/api/v1/prompts/{name}/rollback"),
    ("POST", "/api/v1/prompts/{name}/render"),
    ("GET", "/api/v1/resources"),
    ("POST", "/api/v1/resources"),
    ("GET", "/api/v1/resources/{name}"),
    ("PUT", "/api/v1/resources/{name}"),
    ("DELETE", "/api/v1/resources/{name}"),
    ("GET", "/api/v1/resource-contents"),
    ("GET", "/api/v1/tokens"),
    ("POST", "/api/v1/tokens"),
    ("DELETE", "/api/v1/tokens/{id}"),
    ("GET", "/api/v1/mcp-servers"),
    ("POST", "/api/v1/mcp-servers"),
    ("GET", "/api/v1/mcp-servers/{name}"),
    ("PUT", "/api/v1/mcp-servers/{name}"),
    ("DELETE", "/api/v1/mcp-servers/{name}"),
    ("POST", "/api/v1/mcp-servers/{name}/retry"),
    ("GET", "/api/v1/mcp-grants"),
    ("POST", "/api/v1/mcp-grants"),
    ("DELETE", "/api/v1/mcp-grants/{id}"),
    ("GET", "/api/v1/mcp-access-requests"),
    ("POST", "/api/v1/mcp-access-requests"),
    ("POST", "/api/v1/mcp-access-requests/{id}/decision"),
    ("GET", "/api/v1/tool-groups"),
    ("GET", "/api/v1/tool-groups/enabled-tools"),
    ("GET", "/api/v1/tool-groups/{id}"),
    ("PUT", "/api/v1/tool-groups/{id}"),
];

async fn document(app: &TestApp) -> Value {
    let res = app.get("/api/v1/openapi.json").await;
    assert_eq!(res.status, StatusCode::OK);
    assert_eq!(res.header("content-type"), Some("application/json"));
    res.json
}

fn documented_operations(doc: &Value) -> Vec<(String, String)> {
    let mut ops: Vec<(String, String)> = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            ops.push((method.to_uppercase(), path.clone()));
        }
    }
    ops.sort();
    ops
}

#[tokio::test]
async fn the_document_is_openapi_3_1_and_lists_exactly_the_operations() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    assert_eq!(doc["openapi"], json!("3.1.0"));
    assert_eq!(doc["info"]["title"], json!("Toolsmith REST API"));
    let mut expected: Vec<(String, String)> = OPERATIONS
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    expected.sort();
    assert_eq!(documented_operations(&doc), expected);

    // Every operation has a unique id, a summary, a tag and a success answer.
    let mut ids: Vec<String> = Vec::new();
    for (method, path) in &expected {
        let op = &doc["paths"][path][method.to_lowercase()];
        let id = op["operationId"].as_str().expect("operationId");
        assert!(!ids.contains(&id.to_owned()), "duplicate {id}");
        ids.push(id.to_owned());
        assert!(op["summary"].is_string(), "{method} {path}");
        assert!(op["tags"][0].is_string(), "{method} {path}");
        let responses = op["responses"].as_object().expect("responses");
        assert!(
            responses.keys().any(|s| s.starts_with('2')),
            "{method} {path}: {responses:?}"
        );
    }
}

#[tokio::test]
async fn the_router_answers_every_documented_operation() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    for (method, path) in documented_operations(&doc) {
        let concrete = path
            .replace("{id}", "no_such_tool")
            .replace("{name}", "no_such_tool");
        let method = Method::from_bytes(method.as_bytes()).expect("method");
        let mut builder = request(method.clone(), &concrete);
        let body = if matches!(method, Method::POST | Method::PATCH) {
            builder = builder.header("content-type", "application/json");
            Body::from("{}")
        } else {
            Body::empty()
        };
        let res = app.send(builder.body(body).expect("request")).await;
        assert_ne!(
            res.status,
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {concrete}"
        );
        let no_route = res.status == StatusCode::NOT_FOUND
            && res.json["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("no route"));
        assert!(
            !no_route,
            "{method} {concrete} is documented but not routed"
        );
        assert!(
            !res.status.is_server_error(),
            "{method} {concrete}: {}",
            res.text
        );
    }
}

#[tokio::test]
async fn every_ref_resolves() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    let mut refs: Vec<String> = Vec::new();
    collect_refs(&doc, &mut refs);
    assert!(refs.len() > 20, "{refs:?}");
    for r in refs {
        let pointer = r.strip_prefix('#').expect("local ref");
        assert!(doc.pointer(pointer).is_some(), "dangling {r}");
    }
}

fn collect_refs(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                if key == "$ref"
                    && let Some(r) = v.as_str()
                {
                    out.push(r.to_owned());
                }
                collect_refs(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, out)),
        _ => {}
    }
}

fn properties(doc: &Value, schema: &str) -> Vec<String> {
    let s = &doc["components"]["schemas"][schema];
    assert_eq!(
        s["additionalProperties"],
        json!(false),
        "{schema} refuses unknown fields"
    );
    let mut names: Vec<String> = s["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

/// The asynchronous execute's body (`POST /api/v1/tasks`) is what the handler reads, and the
/// task it answers is described.
#[tokio::test]
async fn the_task_schemas_are_what_the_handlers_use() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    assert_eq!(
        properties(&doc, "StartTaskBody"),
        ["arguments", "context", "conversationId", "tool", "ttlMs"]
    );
    let task = &doc["components"]["schemas"]["Task"]["properties"];
    for field in [
        "id",
        "status",
        "statusMessage",
        "ttlMs",
        "expiresAt",
        "pollIntervalMs",
        "result",
    ] {
        assert!(task.get(field).is_some(), "Task has no {field}: {task}");
    }
}

/// An execution as `GET /api/v1/executions` lists it names what the run asked of its caller's
/// client.
#[tokio::test]
async fn the_execution_schema_says_what_a_run_asked_of_its_client() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    let row = &doc["components"]["schemas"]["RecordedExecution"]["properties"];
    for field in [
        "id",
        "toolName",
        "caller",
        "status",
        "durationMs",
        "createdAt",
        "clientRequests",
    ] {
        assert!(
            row.get(field).is_some(),
            "RecordedExecution has no {field}: {row}"
        );
    }
    let counts = &doc["components"]["schemas"]["ClientRequests"]["properties"];
    for field in ["logs", "progress", "samples", "elicitations", "refused"] {
        assert!(
            counts.get(field).is_some(),
            "ClientRequests has no {field}: {counts}"
        );
    }
}

/// The agents' bodies are what the handlers read.
#[tokio::test]
async fn the_agent_schemas_are_what_the_handlers_use() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    assert_eq!(
        properties(&doc, "AgentBody"),
        [
            "agentType",
            "contextFiles",
            "displayName",
            "expectedRevision",
            "instructions",
            "limits",
            "model",
            "name",
            "qualityGates",
            "toolPolicy"
        ]
    );
    assert_eq!(properties(&doc, "StartRunBody"), ["input", "wait"]);
    // Who wrote a definition's revision, as `manage_agents` tells a model.
    let agent = &doc["components"]["schemas"]["Agent"];
    assert_eq!(
        agent["properties"]["writtenByModel"]["type"], "boolean",
        "{agent}"
    );
    assert!(
        agent["required"]
            .as_array()
            .is_some_and(|r| r.contains(&json!("writtenByModel"))),
        "{agent}"
    );
    let run = &doc["components"]["schemas"]["AgentRun"]["properties"];
    for field in [
        "id",
        "status",
        "output",
        "error",
        "usage",
        "iterations",
        "steps",
    ] {
        assert!(run.get(field).is_some(), "AgentRun has no {field}: {run}");
    }
}

#[tokio::test]
async fn request_schemas_are_what_the_handlers_accept() {
    let app = TestApp::new().await;
    let doc = document(&app).await;
    assert_eq!(
        properties(&doc, "CreateToolBody"),
        [
            "category",
            "code",
            "command",
            "createdBy",
            "dependencies",
            "description",
            "enabled",
            "env",
            "kind",
            "metadata",
            "name",
            "network",
            "outputSchema",
            "parameters",
            "permissions",
            "requiredApiKeys",
            "requiresApproval",
            "scope",
            "tags",
            "timeoutSeconds",
            "workingDir"
        ]
    );
    // `code` or spec 001's `command`, never both.
    let create = &doc["components"]["schemas"]["CreateToolBody"];
    assert_eq!(create["oneOf"][0]["required"], json!(["code"]), "{create}");
    assert_eq!(
        create["oneOf"][1]["required"],
        json!(["command"]),
        "{create}"
    );
    assert_eq!(
        properties(&doc, "UpdateToolBody"),
        [
            "category",
            "code",
            "dependencies",
            "description",
            "expectedRevision",
            "metadata",
            "name",
            "newName",
            "outputSchema",
            "parameters",
            "permissions",
            "requiredApiKeys",
            "requiresApproval",
            "tags"
        ]
    );
    assert_eq!(properties(&doc, "RevisionBody"), ["expectedRevision"]);
    assert_eq!(
        properties(&doc, "RollbackBody"),
        ["expectedRevision", "version"]
    );
    assert_eq!(
        properties(&doc, "ExecuteCustomBody"),
        ["arguments", "context"]
    );
    assert_eq!(
        properties(&doc, "ExecuteBody"),
        ["arguments", "context", "conversationId"]
    );
    // A dry run takes a create's fields (spec 001's command form included; `enabled` means
    // nothing for what is never stored), and the arguments.
    let mut test_fields: Vec<String> = properties(&doc, "CreateToolBody")
        .into_iter()
        .filter(|f| f != "enabled")
        .collect();
    test_fields.extend(["testArgs".to_owned(), "testArguments".to_owned()]);
    test_fields.sort();
    assert_eq!(properties(&doc, "TestToolBody"), test_fields);

    // Every documented field of a create is accepted at once.
    let mut create = tool_body("every_field");
    create["permissions"] = json!(["network"]);
    create["requiresApproval"] = json!(false);
    create["metadata"] = json!({"owner": "docs"});
    create["createdBy"] = json!("user");
    let created = app.create_tool(&create).await;
    assert_eq!(created["metadata"], json!({"owner": "docs"}));

    // And every documented field of a patch, one at a time.
    let samples = [
        ("name", json!("every_field")),
        ("newName", json!("every_field_2")),
        ("description", json!("Still upper-cases a text")),
        (
            "parameters",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        ),
        ("code", json!("return args.text;")),
        ("category", json!("Words")),
        ("tags", json!(["x"])),
        ("permissions", json!([])),
        ("requiresApproval", json!(true)),
        ("metadata", json!({"k": 1})),
        ("expectedRevision", Value::Null),
    ];
    for (field, value) in samples {
        let current = app.get("/api/v1/custom-tools/every_field").await;
        let path = if current.status == StatusCode::OK {
            "/api/v1/custom-tools/every_field"
        } else {
            "/api/v1/custom-tools/every_field_2"
        };
        let res = app.patch(path, &json!({ field: value })).await;
        assert_eq!(res.status, StatusCode::OK, "{field}: {}", res.text);
    }
}
