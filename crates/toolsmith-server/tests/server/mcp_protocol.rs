//! The MCP server's behaviour in detail, through rmcp's own client over an in-memory pipe (one
//! session per connection, protocol 2025-11-25): the control plane and its lifecycle rules,
//! the discovery meta-tools, the `dynamic.tool.*` compatibility names, protocol errors, and
//! exactly-once `list_changed` per owner. The real third-party clients are in
//! `mcp_clients.rs`.

use crate::mcp_support;

use std::sync::Arc;
use std::time::Duration;

use mcp_support::{McpClient, SERVER_TOOLS, call_ok, call_tool, open_state, tool_names};
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorData};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::watch;
use toolsmith_server::auth::Identity;
use toolsmith_server::mcp::ToolsmithMcp;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{Actor, CreateTool, ToolRef};

/// Counts the session's `list_changed` notifications; tests wait on the count, never on time.
#[derive(Clone)]
struct Watcher {
    changes: Arc<watch::Sender<usize>>,
}

impl Default for Watcher {
    fn default() -> Self {
        Watcher {
            changes: Arc::new(watch::Sender::new(0)),
        }
    }
}

impl ClientHandler for Watcher {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// The person behind this client can answer forms (`mcp_approvals.rs` tests the forms).
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_elicitation()
                .build(),
            rmcp::model::Implementation::new("toolsmith-protocol-test", "1.0"),
        )
    }

    /// ... and allows the model's tools, always.
    async fn create_elicitation(
        &self,
        _request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, ErrorData> {
        Ok(serde_json::from_value(
            json!({"action": "accept", "content": {"decision": "allow_always"}}),
        )
        .expect("an elicit result"))
    }
}

pub(crate) struct Session {
    client: McpClient<Watcher>,
    changes: Arc<watch::Sender<usize>>,
}

impl Session {
    pub(crate) async fn open(state: &AppState, user: &str) -> Session {
        Session::open_as(state, user, None).await
    }

    /// A session of `user` acting as `agent`.
    async fn open_as(state: &AppState, user: &str, agent: Option<&str>) -> Session {
        let mut identity = Identity::local_default();
        identity.user_id = user.to_owned();
        identity.agent_id = agent.map(str::to_owned);
        Session::open_with(state, identity).await
    }

    /// A session of the caller `identity` (its scopes as given).
    pub(crate) async fn open_with(state: &AppState, identity: Identity) -> Session {
        let (server_io, client_io) = tokio::io::duplex(1 << 20);
        let server = ToolsmithMcp::new(state.clone(), identity);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let watcher = Watcher::default();
        let changes = watcher.changes.clone();
        let client = watcher.serve(client_io).await.expect("client connects");
        Session { client, changes }
    }

    pub(crate) async fn call(&self, name: &str, args: Value) -> Result<CallToolResult, ErrorData> {
        call_tool(&self.client, name, args).await
    }

    /// A call that must succeed at the protocol level; returns (isError, structured, text).
    pub(crate) async fn ok(&self, name: &str, args: Value) -> (bool, Value, String) {
        call_ok(&self.client, name, args).await
    }

    /// The server's `instructions`, as the client received them at initialization.
    pub(crate) fn instructions(&self) -> String {
        self.client
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .unwrap_or_default()
    }

    /// The session's whole `tools/list`, as the client received it.
    pub(crate) async fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.client.list_all_tools().await.expect("tools/list")
    }

    pub(crate) async fn names(&self) -> Vec<String> {
        tool_names(&self.client).await
    }

    /// How many `list_changed` notifications this session has received so far.
    pub(crate) fn changes(&self) -> usize {
        *self.changes.borrow()
    }

    /// Waits for this session's `n`th notification (10 s at most; on a paused clock, until
    /// nothing in the process is left to run); returns the count then.
    pub(crate) async fn notified(&self, n: usize) -> usize {
        let mut changes = self.changes.subscribe();
        match tokio::time::timeout(Duration::from_secs(10), changes.wait_for(|c| *c >= n)).await {
            Ok(Ok(count)) => *count,
            _ => panic!("notification #{n} never came: {} arrived", self.changes()),
        }
    }
}

/// Returns once everything already under way in this process has run: on a paused clock
/// (`start_paused`, a current-thread runtime) a sleep ends only when every task is idle and no
/// blocking-pool work (the SQLite store's) is in flight, so a notification the server was going
/// to send has reached the client's count by then. That turns "nothing arrives" into an exact
/// count instead of a guess at how long to wait. Only for tests that run no JS tool: the
/// sandbox's threads are not the runtime's, so its reply deadline would pass while they work.
async fn settled() {
    let started = std::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "settled() needs a paused clock (#[tokio::test(start_paused = true)])"
    );
}

pub(crate) async fn state_with(config: ServerSettings) -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let state = open_state(dir.path(), config).await;
    (state, dir)
}

fn tool(name: &str, description: &str, code: &str) -> CreateTool {
    CreateTool {
        kind: Default::default(),
        name: name.to_owned(),
        description: description.to_owned(),
        parameters: json!({"type": "object"}),
        code: code.to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: Vec::new(),
        requires_approval: None,
        metadata: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_info_capabilities_and_list() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    let session = Session::open(&state, "default").await;
    let info = session.client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("toolsmith")
    );
    let tools_cap = info.capabilities.tools.as_ref().expect("tools capability");
    assert_eq!(tools_cap.list_changed, Some(true));
    assert!(
        info.instructions
            .as_deref()
            .unwrap()
            .contains("create_tool")
    );

    let tools = session.client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(&names[..SERVER_TOOLS.len()], SERVER_TOOLS);
    let builtins: Vec<String> = state
        .service
        .registry()
        .tools("default")
        .iter()
        // Aliases (`builtins::aliases`) answer by name but are not listed.
        .filter(|t| !t.deferred)
        .map(|t| t.name().to_owned())
        .collect();
    assert!(builtins.contains(&"calculate".to_owned()));
    assert_eq!(
        &names[SERVER_TOOLS.len()..],
        builtins,
        "then the built-ins, nothing else"
    );
    let hint = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.annotations.clone())
    };
    assert_eq!(
        hint("list_custom_tools").unwrap().read_only_hint,
        Some(true)
    );
    assert_eq!(
        hint("delete_custom_tool").unwrap().destructive_hint,
        Some(true)
    );
    assert!(hint("use_tool").is_none());
    // A built-in's are computed from what it does (`mcp_annotations`).
    assert_eq!(hint("calculate").unwrap().read_only_hint, Some(true));
    assert!(
        !names.iter().any(|n| n.starts_with("dynamic.tool.")),
        "compat is off"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_errors_and_tool_errors() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    let session = Session::open(&state, "default").await;

    let unknown = session.call("nope", json!({})).await.unwrap_err();
    assert_eq!(unknown.code.0, -32602);
    assert!(
        unknown.message.starts_with("Unknown tool: nope. "),
        "{}",
        unknown.message
    );

    // A server tool's own schema is enforced the same way: a tool execution error (MCP
    // 2025-11-25) whose text has the offending path and the expected shape.
    let (is_error, missing, text) = session
        .ok(
            "create_tool",
            json!({"name": "x", "parameters": {"type": "object"}, "code": "return 1;"}),
        )
        .await;
    assert!(is_error);
    assert_eq!(missing["kind"], "invalid_arguments");
    assert!(
        missing["violations"][0]["message"]
            .as_str()
            .unwrap()
            .contains("description"),
        "{missing}"
    );
    // Neither `code` nor GoClaw's `command`: refused, naming both.
    let (is_error, no_code, _) = session
        .ok(
            "create_tool",
            json!({"name": "x", "description": "d", "parameters": {"type": "object"}}),
        )
        .await;
    assert!(is_error);
    let why = no_code["error"].as_str().unwrap_or_default();
    assert!(why.contains("code") && why.contains("command"), "{no_code}");
    assert!(
        text.contains(
            r#"Expected arguments ("?" marks optional): {"description": string, "name": string"#
        ),
        "{text}"
    );
    let (is_error, _, text) = session
        .ok(
            "toggle_custom_tool",
            json!({"name": "x", "enabled": true, "colour": "red"}),
        )
        .await;
    assert!(is_error);
    assert!(text.contains("colour"), "{text}");

    // The tool's code throwing is a tool error, with the message and the kind.
    let (is_error, _, _) = session
        .ok(
            "create_tool",
            json!({"name": "thrower", "description": "throws", "parameters": {"type": "object"},
                   "code": "throw new Error('boom from the tool');"}),
        )
        .await;
    assert!(!is_error);
    let (is_error, structured, text) = session.ok("thrower", json!({})).await;
    assert!(is_error);
    assert!(text.contains("boom from the tool"), "{text}");
    assert!(text.contains("[execution_error]"), "{text}");
    assert_eq!(structured["kind"], "execution_error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_plane_follows_the_lifecycle_rules() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    let session = Session::open(&state, "default").await;

    // parameters as a JSON string; required_api_keys accepted with a note.
    let (is_error, created, _) = session
        .ok(
            "create_tool",
            json!({
                "name": "word_count",
                "description": "Counts words",
                "parameters": "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
                "code": "return args.text.split(/\\s+/).filter(Boolean).length;",
                "category": "Text",
                "tags": ["count"]
            }),
        )
        .await;
    assert!(!is_error, "{created}");
    assert_eq!(created["tool"]["createdBy"], "llm");
    assert_eq!(created["tool"]["requiresApproval"], true);
    let (_, _, text) = session.ok("word_count", json!({"text": "a b  c"})).await;
    assert_eq!(text, "3");

    // A tool declaring a Config Center service is told what is missing, and so is its caller.
    let (is_error, created, _) = session
        .ok(
            "create_tool",
            json!({
                "name": "needs_key",
                "description": "Reads its key",
                "parameters": {"type": "object"},
                "code": "return utils.getApiKey('weatherapi').length;",
                "required_api_keys": [{"name": "weatherapi", "displayName": "WeatherAPI"}]
            }),
        )
        .await;
    assert!(!is_error, "{created}");
    let note = created["notes"][0].as_str().unwrap_or_default();
    assert!(note.contains("weatherapi (api_key)"), "{created}");
    let (is_error, _, text) = session.ok("needs_key", json!({})).await;
    assert!(is_error);
    assert!(text.contains("weatherapi"), "{text}");
    let (is_error, _, _) = session
        .ok(
            "delete_custom_tool",
            json!({"name": "needs_key", "confirm": true}),
        )
        .await;
    assert!(!is_error);

    // get, list with stats.
    let (_, got, _) = session
        .ok("get_custom_tool", json!({"name": "word_count"}))
        .await;
    assert_eq!(
        got["code"],
        "return args.text.split(/\\s+/).filter(Boolean).length;"
    );
    assert_eq!(got["revision"], 1);
    assert!(got.get("owner").is_none());
    let (_, listed, _) = session
        .ok("list_custom_tools", json!({"category": "Text"}))
        .await;
    assert_eq!(listed["total"], 1);
    assert_eq!(listed["tools"][0]["name"], "word_count");
    assert_eq!(listed["stats"]["active"], 1);
    assert_eq!(listed["stats"]["createdByLlm"], 1);

    // A stale revision is a conflict the model reads.
    let (is_error, conflict, _) = session
        .ok(
            "update_custom_tool",
            json!({"name": "word_count", "description": "new", "expected_revision": 7}),
        )
        .await;
    assert!(is_error);
    assert_eq!(conflict["code"], "revision_conflict");
    assert_eq!(conflict["actualRevision"], 1);

    // Dangerous permissions wait for a person: not listed, not callable.
    let (is_error, pending, _) = session
        .ok(
            "create_tool",
            json!({"name": "run_shell", "description": "shell", "parameters": {"type": "object"},
                   "code": "return 1;", "permissions": ["shell"]}),
        )
        .await;
    assert!(!is_error);
    assert_eq!(pending["tool"]["status"], "pending_approval");
    assert!(pending["message"].as_str().unwrap().contains("approval"));
    assert!(!session.names().await.contains(&"run_shell".to_owned()));

    // The model cannot delete a person's tool.
    state
        .service
        .create(
            &Actor::user("default"),
            tool("users_tool", "made by a person", "return 1;"),
        )
        .await
        .unwrap();
    let (is_error, refused, _) = session
        .ok(
            "delete_custom_tool",
            json!({"name": "users_tool", "confirm": true}),
        )
        .await;
    assert!(is_error);
    assert_eq!(refused["code"], "forbidden");

    // run_js_ephemeral runs without storing.
    let (is_error, _, text) = session
        .ok(
            "run_js_ephemeral",
            json!({"code": "return args.a * 2;", "args": {"a": 21}}),
        )
        .await;
    assert!(!is_error);
    assert_eq!(text, "42");
    let (_, listed, _) = session.ok("list_custom_tools", json!({})).await;
    assert_eq!(listed["total"], 3, "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_meta_tools() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    let user = Actor::user("default");
    // Names no built-in shares (the notes family has `note` in its names and tags).
    let mut send = tool(
        "send_postcard",
        "Send a postcard to a colleague by email",
        "return 'sent ' + args.to;",
    );
    send.category = Some("Greetings".to_owned());
    send.tags = vec!["mail".to_owned(), "notify".to_owned()];
    send.parameters = json!({"type": "object", "properties": {"to": {"type": "string", "description": "Recipient"}}, "required": ["to"]});
    state.service.create(&user, send).await.unwrap();
    let mut count = tool(
        "postcard_count",
        "Count the postcards in a folder",
        "return 3;",
    );
    count.category = Some("Postcards".to_owned());
    state.service.create(&user, count).await.unwrap();
    let session = Session::open(&state, "default").await;
    // 60 notes, so a spec limit on `list_notes` (default 20, at most 50) shows in its count on
    // every path. (This test used a custom `list_emails` until the email tools took the name.)
    for batch in 0..2 {
        let notes: Vec<Value> = (0..30)
            .map(|i| json!({"title": format!("note {batch}-{i}"), "content": "x"}))
            .collect();
        let (is_error, _, text) = session.ok("batch_add_notes", json!({"notes": notes})).await;
        assert!(!is_error, "{text}");
    }

    let (_, found, _) = session
        .ok("search_tools", json!({"query": "postcard email"}))
        .await;
    // Any word may match; the tool matching both comes first.
    assert_eq!(found["tools"][0]["name"], "send_postcard", "{found}");
    assert!(found["tools"][0].get("parameters").is_none());
    let (_, found, _) = session
        .ok("search_tools", json!({"query": "postcard"}))
        .await;
    let ranked: Vec<&str> = found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        ranked,
        ["postcard_count", "send_postcard"],
        "name matches rank first: {found}"
    );
    let (_, found, _) = session
        .ok(
            "search_tools",
            json!({"query": "all", "category": "greetings", "include_params": true}),
        )
        .await;
    assert_eq!(found["total"], 1, "{found}");
    assert_eq!(found["tools"][0]["parameters"]["required"], json!(["to"]));

    // The control plane is searchable too (category Meta), marked to be called directly.
    let (_, found, _) = session
        .ok("search_tools", json!({"query": "create a tool"}))
        .await;
    assert_eq!(found["tools"][0]["name"], "create_tool", "{found}");
    assert!(found["tools"][0]["summary"].is_string(), "{found}");
    assert_eq!(found["tools"][0]["callDirectly"], true);

    let (is_error, help, _) = session
        .ok("get_tool_help", json!({"tool_name": "send_postcard"}))
        .await;
    assert!(!is_error);
    assert_eq!(help["parameterDocs"], "- to (string, required): Recipient");
    let (is_error, missing, text) = session
        .ok("get_tool_help", json!({"tool_name": "send_postcards"}))
        .await;
    assert!(is_error);
    assert_eq!(missing["code"], "not_found");
    assert!(text.contains("Did you mean 'send_postcard'"), "{text}");

    let (is_error, _, text) = session
        .ok(
            "use_tool",
            json!({"tool_name": "send_postcard", "arguments": {"to": "ada"}}),
        )
        .await;
    assert!(!is_error);
    assert_eq!(text, "sent ada");
    let (is_error, bad, text) = session
        .ok(
            "use_tool",
            json!({"tool_name": "send_postcard", "arguments": {"too": "ada"}}),
        )
        .await;
    assert!(
        is_error,
        "invalid inner arguments are a tool error with docs"
    );
    assert_eq!(bad["parameterDocs"], "- to (string, required): Recipient");
    assert!(
        text.contains("invalid arguments for tool 'send_postcard'"),
        "{text}"
    );

    let (_, listed, _) = session
        .ok("use_tool", json!({"tool_name": "list_notes"}))
        .await;
    assert_eq!(listed["count"], 20, "the default is injected: {listed}");
    let (_, listed, _) = session
        .ok(
            "use_tool",
            json!({"tool_name": "list_notes", "arguments": {"limit": 500}}),
        )
        .await;
    assert_eq!(listed["count"], 50, "capped at the max: {listed}");
    let (_, listed, _) = session.ok("list_notes", json!({"limit": 500})).await;
    assert_eq!(
        listed["count"], 50,
        "direct calls are limited too: {listed}"
    );
    let (_, _, text) = session
        .ok(
            "run_js_ephemeral",
            json!({"code": "const r = await utils.callTool('list_notes', {limit: 1000}); return r.count;"}),
        )
        .await;
    assert_eq!(text, "50", "and nested ones");

    for meta in [
        "use_tool",
        "create_tool",
        "batch_use_tool",
        "dynamic.tool.create",
    ] {
        let (is_error, refused, text) = session
            .ok("use_tool", json!({"tool_name": meta, "arguments": {}}))
            .await;
        assert!(is_error, "{meta}");
        assert_eq!(refused["code"], "denied");
        assert!(text.contains(&format!("call '{meta}' directly")), "{text}");
    }

    let (is_error, batch, _) = session
        .ok(
            "batch_use_tool",
            json!({"operations": [
                {"tool_name": "send_postcard", "arguments": {"to": "bo"}},
                {"tool": "postcard_count", "args": {}},
                {"tool_name": "send_postcard", "arguments": {}},
                {"tool_name": "use_tool", "arguments": {}},
                {"tool_name": "nothing_here"},
                {"tool_name": "list_notes", "arguments": {"limit": 1000}}
            ]}),
        )
        .await;
    assert!(!is_error);
    let statuses: Vec<&str> = batch["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["success", "success", "error", "error", "error", "success"],
        "{batch}"
    );
    assert_eq!(batch["results"][0]["result"], "sent bo");
    assert_eq!(batch["results"][1]["result"], 3);
    assert_eq!(batch["results"][2]["kind"], "invalid_arguments");
    assert!(batch["results"][2]["parameterDocs"].is_string());
    assert_eq!(batch["results"][3]["kind"], "denied");
    assert_eq!(batch["results"][4]["kind"], "not_found");
    assert_eq!(batch["results"][5]["result"]["count"], 50, "{batch}");
    assert_eq!(batch["succeeded"], 3);
    assert_eq!(batch["failed"], 3);
}

/// The control plane is served under dynamic-mcp's names only in its compatibility mode. Its
/// answers, field for field, are held by dynamic-mcp's own tests run against the binary
/// (`cli dynamic_mcp_suite`) and by `mcp_compat_answers`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compat_dynamic_mcp_names() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    let plain = Session::open(&state, "default").await;
    let off = plain
        .call("dynamic.tool.list", json!({}))
        .await
        .unwrap_err();
    assert_eq!(off.code.0, -32602, "not served without --compat");

    let config = ServerSettings {
        compat_dynamic_mcp: true,
        ..ServerSettings::default()
    };
    let (state, _dir) = state_with(config).await;
    let session = Session::open(&state, "default").await;
    let names = session.names().await;
    for name in ["create", "update", "delete", "list", "get", "enable"] {
        assert!(names.contains(&format!("dynamic.tool.{name}")), "{names:?}");
    }
}

/// Exact counts, "nothing else arrived" included: on a paused clock [`settled`] returns only
/// once the server's watchers have acted on every change made so far (this test runs no JS).
#[tokio::test(start_paused = true)]
async fn list_changed_once_per_change_and_per_owner() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    let alice = Session::open(&state, "default").await;
    let bob = Session::open(&state, "bob").await;
    alice.names().await;
    bob.names().await;
    let service = &state.service;

    // Bob's change reaches Bob only.
    service
        .create(&Actor::user("bob"), tool("bobs_tool", "b", "return 1;"))
        .await
        .unwrap();
    assert_eq!(bob.notified(1).await, 1);
    settled().await;
    assert_eq!((alice.changes(), bob.changes()), (0, 1));
    assert!(bob.names().await.contains(&"bobs_tool".to_owned()));
    assert!(!alice.names().await.contains(&"bobs_tool".to_owned()));
    let unseen = alice.call("bobs_tool", json!({})).await.unwrap_err();
    assert_eq!(
        unseen.code.0, -32602,
        "another user's tool is unknown, not forbidden"
    );

    // A change that does not touch the visible catalogue sends nothing: a no-op update, and a
    // tool that waits for approval …
    let default = Actor::user("default");
    let mut shell = tool("needs_ok", "s", "return 1;");
    shell.permissions = vec![toolsmith_core::Permission::Shell];
    service.create(&Actor::llm("default"), shell).await.unwrap();
    settled().await;
    assert_eq!(alice.changes(), 0);
    // … until a person approves it: one notification.
    service
        .approve(&default, &ToolRef::Name("needs_ok".into()))
        .await
        .unwrap();
    assert_eq!(alice.notified(1).await, 1);
    let noop = toolsmith_service::ToolPatch {
        description: Some("s".to_owned()),
        ..Default::default()
    };
    service
        .update(&default, &ToolRef::Name("needs_ok".into()), noop, None)
        .await
        .unwrap();
    settled().await;
    assert_eq!(alice.changes(), 1);

    // Several sessions of one owner each hear each change once.
    let alice2 = Session::open(&state, "default").await;
    service
        .disable(&default, &ToolRef::Name("needs_ok".into()), None)
        .await
        .unwrap();
    assert_eq!(alice.notified(2).await, 2);
    assert_eq!(alice2.notified(1).await, 1);
    settled().await;
    assert_eq!(
        (alice.changes(), alice2.changes(), bob.changes()),
        (2, 1, 1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_tools_win_over_custom_tools_of_the_same_name() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    // The service reserves the server tools' names, so such a custom tool cannot be made.
    let refused = state
        .service
        .create(
            &Actor::user("default"),
            tool("search_tools", "a custom tool", "return 'custom';"),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "name_taken", "{refused}");
    let session = Session::open(&state, "default").await;
    let names = session.names().await;
    assert_eq!(names.iter().filter(|n| *n == "search_tools").count(), 1);
    let (_, found, _) = session.ok("search_tools", json!({"query": "all"})).await;
    assert!(found["tools"].is_array(), "the meta-tool ran: {found}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_call_is_a_protocol_error_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let limits = toolsmith_service::LimitsSettings {
        per_user: Some(toolsmith_service::Rate {
            per_minute: 1,
            burst: 1,
        }),
        ..Default::default()
    };
    let service = toolsmith_service::ToolServiceSettings {
        limits,
        ..Default::default()
    };
    let state = mcp_support::open_state_with(dir.path(), ServerSettings::default(), service).await;
    let session = Session::open(&state, "default").await;
    let (is_error, _, _) = session.ok("generate_uuid", json!({})).await;
    assert!(!is_error);
    let refused = session.call("generate_uuid", json!({})).await.unwrap_err();
    assert_eq!(refused.code.0, -32029);
    let data = refused.data.expect("data");
    assert_eq!(data["kind"], "rate_limited");
    assert_eq!(data["limit"], "user");
    assert!(data["retryAfterSeconds"].as_u64().unwrap() >= 1, "{data}");
    // The control plane is not an execution: it keeps answering.
    let (is_error, _, _) = session.ok("list_custom_tools", json!({})).await;
    assert!(!is_error);
}

/// An HTTP tool whose parameter comes from the call's context: over MCP the client sends it in
/// `_meta.context`, and the tool's request carries it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_tool_reads_the_calls_context_from_meta() {
    use axum::extract::Path;
    let upstream = axum::Router::new().route(
        "/stock/{product}",
        axum::routing::get(|Path(product): Path<String>| async move {
            axum::Json(json!({"product": product, "count": 7}))
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        axum::serve(listener, upstream).await.unwrap();
    });
    let mut service = toolsmith_service::ToolServiceSettings {
        allow_plain_http: true,
        ..Default::default()
    };
    service.egress.allow_plain_http = true;
    service.egress.allowed_private_hosts = vec![host.parse().unwrap()];
    let dir = tempfile::tempdir().unwrap();
    let state = mcp_support::open_state_with(dir.path(), ServerSettings::default(), service).await;
    let yaml = format!(
        "name: product_stock\ndescription: Stock of the product on the page\nversion: '1.0'\n\
         parameters:\n  - name: product_id\n    type: string\n    required: true\n    source: context\n\
         endpoint:\n  url: 'http://{host}/stock/{{{{product_id}}}}'\n  method: GET\n\
         response_mapping:\n  product: product\n  count: count\n\
         response_template: '{{{{ product }}}}: {{{{ count }}}} in stock'\n"
    );
    let mut create = tool("product_stock", "Stock of the product on the page", &yaml);
    create.kind = toolsmith_core::ToolKind::Http;
    state
        .service
        .create(&Actor::user("default"), create)
        .await
        .unwrap();
    let session = Session::open(&state, "default").await;

    let mut meta = serde_json::Map::new();
    meta.insert(
        "context".to_owned(),
        json!({"context": {"product_id": "sku 42/b"}}),
    );
    let mut params = CallToolRequestParams::new("product_stock");
    params.meta = Some(meta.into());
    let res = session.client.call_tool(params).await.unwrap();
    let text: String = res
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect();
    assert_eq!(res.is_error, Some(false), "{text}");
    // The path segment was URL-encoded on the way out and decoded by the upstream.
    assert!(text.contains("sku 42/b: 7 in stock"), "{text}");

    // Without the context the required parameter is named with its source.
    let (is_error, _, text) = session.ok("product_stock", json!({})).await;
    assert!(is_error);
    assert!(
        text.contains("product_id") && text.contains("context"),
        "{text}"
    );
}

/// A per-agent command tool is listed, described and callable only in its agent's sessions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_agent_tool_is_listed_only_for_its_agent() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    let mut create = tool(
        "support_echo",
        "echoes for the support agent",
        &json!({"command": "echo {{.word}}", "scope": "agent:support"}).to_string(),
    );
    create.kind = toolsmith_core::ToolKind::Command;
    create.parameters = json!({"type": "object", "properties": {"word": {"type": "string"}}});
    state
        .service
        .create(&Actor::user("default"), create)
        .await
        .unwrap();

    let support = Session::open_as(&state, "default", Some("support")).await;
    let sales = Session::open_as(&state, "default", Some("sales")).await;
    assert!(support.names().await.contains(&"support_echo".to_owned()));
    assert!(!sales.names().await.contains(&"support_echo".to_owned()));
    let (is_error, _, text) = sales
        .ok("get_tool_help", json!({"tool_name": "support_echo"}))
        .await;
    assert!(is_error, "{text}");
    let err = sales
        .call("support_echo", json!({"word": "x"}))
        .await
        .unwrap_err();
    assert!(err.message.contains("support_echo"), "{err:?}");
    let (is_error, _, text) = sales
        .ok(
            "use_tool",
            json!({"tool_name": "support_echo", "arguments": {"word": "x"}}),
        )
        .await;
    assert!(is_error, "{text}");
}

/// A policy stored through the API applies at once: the restricted agent's session is told the
/// list changed, no longer lists the denied tools and cannot call them; another agent keeps
/// them. Clearing the policy gives them back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_policy_restricts_an_agents_session_at_once() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    state
        .service
        .create(
            &Actor::user("default"),
            tool("word_count", "counts", "return 3;"),
        )
        .await
        .unwrap();
    let reader = Session::open_as(&state, "default", Some("reader")).await;
    let writer = Session::open_as(&state, "default", Some("writer")).await;
    assert!(reader.names().await.contains(&"word_count".to_owned()));
    let before = reader.changes();

    state
        .service
        .set_policy(
            &Actor::user("default"),
            json!({"agents": {"reader": {"deny": ["group:custom", "calculate"]}}}),
            None,
        )
        .await
        .unwrap();
    assert!(
        reader.notified(before + 1).await > before,
        "the reader was told"
    );
    let names = reader.names().await;
    assert!(!names.contains(&"word_count".to_owned()) && !names.contains(&"calculate".to_owned()));
    assert!(
        names.contains(&"search_tools".to_owned()),
        "server tools stay"
    );
    let (is_error, _, text) = reader.ok("calculate", json!({"expression": "1+1"})).await;
    assert!(is_error && text.contains("not allowed"), "{text}");
    let (is_error, _, text) = reader
        .ok(
            "use_tool",
            json!({"tool_name": "word_count", "arguments": {}}),
        )
        .await;
    assert!(is_error, "{text}");
    assert!(writer.names().await.contains(&"word_count".to_owned()));
    let (is_error, _, _) = writer.ok("calculate", json!({"expression": "1+1"})).await;
    assert!(!is_error);

    state
        .service
        .clear_policy(&Actor::user("default"), None)
        .await
        .unwrap();
    assert!(reader.names().await.contains(&"word_count".to_owned()));
}

/// `--mcp-listing discovery` over a 1,000-tool catalogue: `tools/list` stays under 2,500
/// tokens (bytes / 4) and holds only the server tools, and a client that knows only those
/// finds any tool with `search_tools` and calls it with `use_tool` or by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_listing_keeps_a_large_catalogue_out_of_tools_list() {
    const TOOLS: usize = 1000;
    let config = ServerSettings {
        mcp_listing: toolsmith_server::McpListing::Discovery,
        ..ServerSettings::default()
    };
    let (state, dir) = state_with(config).await;
    let user = Actor::user("default");
    for i in 0..TOOLS {
        let mut input = tool(
            &format!("ledger_{i:04}"),
            &format!("Looks up entry {i} of the ledger and doubles the amount given"),
            &format!("return {{entry: {i}, doubled: args.amount * 2}};"),
        );
        input.parameters = json!({"type": "object", "properties": {"amount": {"type": "number", "description": "The amount to double"}}, "required": ["amount"]});
        state.service.create(&user, input).await.unwrap();
    }
    let session = Session::open(&state, "default").await;
    let listed = session.client.list_all_tools().await.expect("tools/list");
    let bytes = serde_json::to_string(&listed).unwrap().len();
    eprintln!(
        "discovery listing of {TOOLS} tools: {} tools, {bytes} bytes, ~{} tokens",
        listed.len(),
        bytes / 4
    );
    assert!(bytes / 4 < 2500, "tools/list is {bytes} bytes");
    // The same catalogue with the full listing, for docs/mcp.md.
    let full_state = open_state(dir.path(), ServerSettings::default()).await;
    let full = Session::open(&full_state, "default").await;
    let full_list = full.client.list_all_tools().await.expect("tools/list");
    let full_bytes = serde_json::to_string(&full_list).unwrap().len();
    eprintln!(
        "full listing of the same catalogue: {} tools, {full_bytes} bytes, ~{} tokens",
        full_list.len(),
        full_bytes / 4
    );
    assert!(full_list.len() > TOOLS);
    let names: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, SERVER_TOOLS, "only the server tools are listed");

    for i in (0..TOOLS).step_by(111).chain([TOOLS - 1]) {
        let name = format!("ledger_{i:04}");
        let (is_error, found, _) = session
            .ok("search_tools", json!({"query": name.clone()}))
            .await;
        assert!(!is_error, "{found}");
        assert_eq!(found["tools"][0]["name"], name, "{found}");
        let (is_error, help, _) = session
            .ok("get_tool_help", json!({"tool_name": name.clone()}))
            .await;
        assert!(!is_error, "{help}");
        assert_eq!(help["parameters"]["required"], json!(["amount"]));
        let (is_error, used, _) = session
            .ok(
                "use_tool",
                json!({"tool_name": name.clone(), "arguments": {"amount": 21}}),
            )
            .await;
        assert!(!is_error, "{used}");
        assert_eq!(used, json!({"entry": i, "doubled": 42}));
        let (is_error, direct, _) = session.ok(&name, json!({"amount": 4})).await;
        assert!(!is_error, "calling by name keeps working: {direct}");
        assert_eq!(direct["doubled"], 8);
    }
}

/// `_meta.subagentDepth` reaches the policy over MCP: a subagent's calls and its `tools/list`
/// both follow the subagent deny list and `max_depth`; a malformed depth is refused.
#[tokio::test]
async fn subagent_depth_in_meta_applies_to_calls_and_lists() {
    let (state, _dir) = state_with(ServerSettings::default()).await;
    state
        .service
        .set_policy(
            &Actor::user("default"),
            json!({"subagents": {"always_deny": ["calculate"], "max_depth": 1}}),
            None,
        )
        .await
        .unwrap();
    let session = Session::open(&state, "default").await;
    let meta = |depth: Value| {
        let mut object = serde_json::Map::new();
        object.insert("subagentDepth".to_owned(), depth);
        rmcp::model::RequestMetaObject::from(object)
    };
    let call = |depth: Option<Value>| {
        let mut params = CallToolRequestParams::new("calculate").with_arguments(
            json!({"expression": "1+2"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        params.meta = depth.map(meta);
        params
    };
    let list = |depth: Value| {
        let mut params = rmcp::model::PaginatedRequestParams::default();
        params.meta = Some(meta(depth));
        params
    };

    let top = session.client.call_tool(call(None)).await.unwrap();
    assert_eq!(top.is_error, Some(false), "{top:?}");
    let sub = session
        .client
        .call_tool(call(Some(json!(1))))
        .await
        .unwrap();
    assert_eq!(sub.is_error, Some(true), "{sub:?}");
    assert!(format!("{sub:?}").contains("always_deny"), "{sub:?}");

    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    assert!(session.names().await.contains(&"calculate".to_owned()));
    let at_one = names(
        session
            .client
            .list_tools(Some(list(json!(1))))
            .await
            .unwrap()
            .tools,
    );
    assert!(!at_one.contains(&"calculate".to_owned()), "{at_one:?}");
    assert!(
        at_one.contains(&"search_tools".to_owned()),
        "server tools stay: {at_one:?}"
    );
    // Issue 32: search_tools applies the same rule as tools/list (it ignored the depth).
    let search = |depth: Option<Value>| {
        let mut params = CallToolRequestParams::new("search_tools").with_arguments(
            json!({"query": "calculate a math expression"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        params.meta = depth.map(meta);
        params
    };
    let found_names = |found: rmcp::model::CallToolResult| -> String {
        assert_eq!(found.is_error, Some(false), "{found:?}");
        serde_json::to_string(&found.structured_content).unwrap()
    };
    let top = found_names(session.client.call_tool(search(None)).await.unwrap());
    assert!(top.contains("\"name\":\"calculate\""), "{top}");
    let sub = found_names(
        session
            .client
            .call_tool(search(Some(json!(1))))
            .await
            .unwrap(),
    );
    assert!(sub.contains("\"name\":"), "{sub}");
    assert!(!sub.contains("\"name\":\"calculate\""), "{sub}");
    let too_deep = names(
        session
            .client
            .list_tools(Some(list(json!(2))))
            .await
            .unwrap()
            .tools,
    );
    assert!(
        !too_deep.contains(&"hash_text".to_owned()),
        "past max_depth: {too_deep:?}"
    );

    for bad in [json!("deep"), json!(-1), json!(1000)] {
        let refused = session
            .client
            .list_tools(Some(list(bad.clone())))
            .await
            .unwrap_err();
        assert!(
            refused.to_string().contains("subagentDepth"),
            "{bad}: {refused}"
        );
    }
}
