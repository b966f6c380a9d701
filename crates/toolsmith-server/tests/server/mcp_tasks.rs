//! MCP tasks through the in-process rmcp client: a client that declares the tasks extension
//! gets a registry tool's call as a task (`CreateTaskResult`), waits with `tasks/result`, reads
//! it with `tasks/get` and lists it with `tasks/list`; another user's task is not found; a
//! cancelled task says so and cancelling twice is refused; a client that declares nothing still
//! gets its result at once.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    ClientRequest, CustomRequest, GetTaskParams, Implementation, ProtocolVersion, TaskStatus,
};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use toolsmith_server::auth::Identity;
use toolsmith_server::mcp::ToolsmithMcp;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{Actor, CreateTool};

use crate::mcp_support::open_state;

#[derive(Clone)]
struct Client {
    capabilities: ClientCapabilities,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.capabilities.clone(),
            Implementation::new("tasks-test", "1.0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

async fn connect(
    state: &AppState,
    identity: Identity,
    tasks: bool,
) -> RunningService<RoleClient, Client> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    let server = ToolsmithMcp::new(state.clone(), identity);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let capabilities = if tasks {
        ClientCapabilities::builder().enable_tasks().build()
    } else {
        ClientCapabilities::default()
    };
    Client { capabilities }
        .serve(client_io)
        .await
        .expect("client connects")
}

async fn tool(state: &AppState, name: &str, code: &str) {
    let tool: CreateTool = serde_json::from_value(json!({
        "name": name,
        "description": format!("{name}, a test tool"),
        "parameters": {"type": "object"},
        "code": code,
    }))
    .unwrap();
    state
        .service
        .create(&Actor::user("default"), tool)
        .await
        .expect("the tool is created");
}

async fn custom(
    client: &RunningService<RoleClient, Client>,
    method: &str,
    params: Value,
) -> Result<Value, String> {
    let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
    match client.send_request(request).await {
        Ok(rmcp::model::ServerResult::CustomResult(result)) => Ok(result.0),
        Ok(other) => Ok(serde_json::to_value(other).unwrap()),
        Err(e) => Err(e.to_string()),
    }
}

async fn start(client: &RunningService<RoleClient, Client>, name: &str) -> String {
    // A call asks to run as a task in its `_meta`; declaring the extension alone does not.
    let mut meta = rmcp::model::RequestMetaObject::new();
    meta.0
        .0
        .insert("io.modelcontextprotocol/tasks".to_owned(), json!({}));
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.meta = Some(meta);
    match client
        .call_tool_once(params)
        .await
        .expect("tools/call answers")
    {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::Working);
            assert_eq!(created.task.ttl_ms, Some(3_600_000));
            created.task.task_id
        }
        other => panic!("not a task: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_runs_as_a_task_for_a_client_that_takes_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let state = open_state(dir.path(), ServerSettings::default()).await;
    tool(&state, "answer", "return {n: 42};").await;
    let client = connect(&state, Identity::local_default(), true).await;
    let info = client.peer_info().unwrap();
    assert!(info.capabilities.supports_tasks(), "{info:?}");

    let id = start(&client, "answer").await;
    let result = custom(&client, "tasks/result", json!({"taskId": id}))
        .await
        .unwrap();
    assert_eq!(result["isError"], json!(false), "{result}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        json!(id)
    );
    let got = client
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(got.task.status(), TaskStatus::Completed);
    let wire = serde_json::to_value(&got).unwrap();
    assert_eq!(wire["result"]["isError"], json!(false), "{wire}");
    let list = custom(&client, "tasks/list", json!({})).await.unwrap();
    assert_eq!(list["tasks"][0]["taskId"], json!(id), "{list}");

    // Another user: not found, whatever the method.
    let mut mallory = Identity::local_default();
    mallory.user_id = "mallory".to_owned();
    let other = connect(&state, mallory, true).await;
    let err = other
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("no task"), "{err}");
    assert!(
        other
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .is_err()
    );
    let err = custom(&other, "tasks/result", json!({"taskId": id}))
        .await
        .unwrap_err();
    assert!(err.contains("no task"), "{err}");
    let list = custom(&other, "tasks/list", json!({})).await.unwrap();
    assert_eq!(list["tasks"], json!([]), "{list}");
    // Unknown ids and bad params.
    assert!(
        client
            .get_task(GetTaskParams::new("task_nope"))
            .await
            .is_err()
    );
    let err = custom(&client, "tasks/result", json!({}))
        .await
        .unwrap_err();
    assert!(err.contains("taskId"), "{err}");
    let err = custom(&client, "tasks/list", json!({"cursor": "x"}))
        .await
        .unwrap_err();
    assert!(err.contains("cursor"), "{err}");

    // A client that declares nothing gets the result at once.
    let plain = connect(&state, Identity::local_default(), false).await;
    let answer = plain
        .call_tool_once(CallToolRequestParams::new("answer"))
        .await
        .unwrap();
    assert!(
        matches!(answer, CallToolResponse::Complete(_)),
        "{answer:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_says_so_and_is_cancelled_once() {
    let dir = tempfile::tempdir().unwrap();
    let state = open_state(dir.path(), ServerSettings::default()).await;
    tool(&state, "spin", "while (true) {} return 1;").await;
    let client = connect(&state, Identity::local_default(), true).await;
    let id = start(&client, "spin").await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let got = client
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(got.task.status(), TaskStatus::Cancelled);
    let err = client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("already ended"), "{err}");
    let err = custom(&client, "tasks/result", json!({"taskId": id}))
        .await
        .unwrap_err();
    assert!(err.contains("cancelled"), "{err}");
}

/// The assertions on what the TypeScript SDK saw of 2025-11-25's tasks
/// (`tests/clients/mcp_tasks_2025.mjs`).
fn check_2025(report: &Value) {
    let ctx = format!("report: {report:#}");
    assert_eq!(
        report["serverTasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{ctx}"
    );
    assert_eq!(
        report["execution"]["answer"],
        json!({"taskSupport": "optional"}),
        "{ctx}"
    );
    // The server's own tools answer at once: listed without taskSupport.
    assert_eq!(report["execution"]["create_tool"], Value::Null, "{ctx}");

    // The SDK made the call a task by itself, polled it, and read its result.
    let auto = &report["auto"];
    assert_eq!(auto["types"][0], "taskCreated", "{ctx}");
    assert_eq!(
        auto["types"].as_array().unwrap().last().unwrap(),
        "result",
        "{ctx}"
    );
    assert_eq!(auto["task"]["status"], "working", "{ctx}");
    assert_eq!(auto["task"]["ttl"], 3_600_000, "{ctx}");
    assert_eq!(auto["task"]["pollInterval"], 1000, "{ctx}");
    assert_eq!(
        auto["result"]["structuredContent"],
        json!({"n": 42}),
        "{ctx}"
    );
    assert_eq!(auto["error"], Value::Null, "{ctx}");
    assert_eq!(report["withTtl"]["task"]["ttl"], 120_000, "{ctx}");
    assert_eq!(
        report["withTtl"]["result"]["structuredContent"],
        json!({"n": 42}),
        "{ctx}"
    );
    let id = auto["task"]["taskId"].as_str().unwrap();
    assert_eq!(report["got"]["taskId"], id, "{ctx}");
    assert_eq!(report["got"]["status"], "completed", "{ctx}");
    assert!(
        report["listed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["taskId"] == id && t["ttl"] == 3_600_000),
        "{ctx}"
    );

    // Cancelled: the answer is the task, cancelled; a second cancel is refused.
    assert_eq!(report["spinCreated"]["status"], "working", "{ctx}");
    assert_eq!(report["cancelled"]["status"], "cancelled", "{ctx}");
    assert_eq!(report["afterCancel"]["status"], "cancelled", "{ctx}");
    let again = report["cancelAgain"].as_str().unwrap();
    assert!(again.contains("already ended"), "{ctx}");
    // Status notifications reached the session (the cancelled task's at least: it is sent
    // before the cancel is answered).
    let spin = report["spinCreated"]["taskId"].as_str().unwrap();
    assert!(
        report["notified"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["taskId"] == spin && n["status"] == "cancelled"),
        "{ctx}"
    );

    // A plain call is answered at once.
    assert_eq!(report["direct"]["isError"], false, "{ctx}");
    assert_eq!(report["direct"]["structured"], json!({"n": 42}), "{ctx}");
}

const TASKS_2025_SCRIPT: &str = "mcp_tasks_2025.mjs";

/// 2025-11-25's tasks (the revision's experimental form, rmcp carries none of it) through the
/// official TypeScript SDK over streamable HTTP: capabilities.tasks, execution.taskSupport, a
/// `task` field in tools/call, tasks/get, tasks/result, tasks/list, tasks/cancel,
/// notifications/tasks/status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_tasks_of_2025_11_25_over_http() {
    use crate::mcp_support::{TestServer, node, prerequisite, run_client, strings};
    if !prerequisite("Node 22 (test clients)", &node()) {
        return;
    }
    let server = TestServer::start(toolsmith_server::ServerSettings::default()).await;
    tool(&server.state, "answer", "return {n: 42};").await;
    tool(&server.state, "spin", "while (true) {} return 1;").await;
    let args = strings(&[TASKS_2025_SCRIPT, "--url", &server.url]);
    let report = run_client("ts tasks http", &node(), &args, &[]).await;
    check_2025(&report);
}

/// The same over stdio (`toolsmith mcp`, the real binary).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_tasks_of_2025_11_25_over_stdio() {
    use crate::mcp_support::{node, prerequisite, run_client, stdio_server, strings};
    if !prerequisite("Node 22 (test clients)", &node()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let state = open_state(dir.path(), ServerSettings::default()).await;
    tool(&state, "answer", "return {n: 42};").await;
    tool(&state, "spin", "while (true) {} return 1;").await;
    let (server, server_args) = stdio_server(&dir.path().join("toolsmith.db"));
    let mut args = strings(&[TASKS_2025_SCRIPT, "--command", &server]);
    args.extend(server_args.into_iter().map(|arg| format!("--arg={arg}")));
    let report = run_client("ts tasks stdio", &node(), &args, &[]).await;
    check_2025(&report);
}
