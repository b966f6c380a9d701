//! MCP resources (issue 40): a caller's workspace files and the sources of the tools it can
//! call, listed, read and subscribed to through rmcp's own client over an in-process pipe
//! (2025-11-25 sessions); another user's files are never listed, read or notified.

#![allow(
    deprecated,
    reason = "resources/subscribe is MCP 2025-11-25's; rmcp marks it legacy-only"
)]

use crate::mcp_support;

use mcp_support::{McpClient, TestServer, call_ok};
use rmcp::model::{
    ErrorCode, PaginatedRequestParams, ReadResourceRequestParams, ResourceContents,
    ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;
use tokio::sync::mpsc;
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Identity;
use toolsmith_service::{ExecutionApproval, ToolServiceSettings};

/// Passes on every resource notification the session gets, in order: `updated <uri>` or
/// `list_changed`.
#[derive(Clone)]
struct Notes {
    sent: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Notes {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.sent.send(format!("updated {}", params.uri));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.sent.send("list_changed".to_owned());
    }
}

struct Session {
    client: McpClient<Notes>,
    notes: mpsc::UnboundedReceiver<String>,
}

impl Session {
    async fn open(server: &TestServer, user: &str) -> Session {
        let mut identity = Identity::local_default();
        identity.user_id = user.to_owned();
        let (sent, notes) = mpsc::unbounded_channel();
        let client = mcp_support::connect_in_process(&server.state, identity, Notes { sent }).await;
        Session { client, notes }
    }

    /// The next `updated` notification (`list_changed` ones are skipped).
    async fn next_update(&mut self) -> String {
        loop {
            let note = self.notes.recv().await.expect("the session is open");
            if let Some(uri) = note.strip_prefix("updated ") {
                return uri.to_owned();
            }
        }
    }

    async fn uris(&self) -> Vec<String> {
        let mut uris = Vec::new();
        let mut cursor = None;
        loop {
            let page = self
                .client
                .list_resources(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                .await
                .expect("resources/list");
            uris.extend(page.resources.into_iter().map(|r| r.uri));
            cursor = page.next_cursor;
            if cursor.is_none() {
                return uris;
            }
        }
    }

    async fn read(&self, uri: &str) -> Result<ResourceContents, rmcp::model::ErrorData> {
        match self
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
        {
            Ok(result) => Ok(result.contents.into_iter().next().expect("one content")),
            Err(rmcp::ServiceError::McpError(e)) => Err(e),
            Err(e) => panic!("{uri}: transport failure: {e}"),
        }
    }

    async fn write(&self, path: &str, content: &str) {
        let (is_error, _, text) = call_ok(
            &self.client,
            "write_file",
            json!({"path": path, "content": content, "createParents": true}),
        )
        .await;
        assert!(!is_error, "write_file {path}: {text}");
    }
}

async fn server() -> TestServer {
    let service = ToolServiceSettings {
        execution_approval: ExecutionApproval::Off,
        ..ToolServiceSettings::default()
    };
    TestServer::start_with(ServerSettings::default(), service).await
}

async fn server_with_workspace() -> (TestServer, tempfile::TempDir) {
    let workspaces = tempfile::tempdir().expect("temp dir");
    let service = ToolServiceSettings {
        execution_approval: ExecutionApproval::Off,
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            workspaces.path().to_owned(),
        )),
        ..ToolServiceSettings::default()
    };
    (
        TestServer::start_with(ServerSettings::default(), service).await,
        workspaces,
    )
}

#[tokio::test]
async fn workspace_files_and_tool_sources_are_listed_and_read_with_their_mime_types() {
    let (server, workspaces) = server_with_workspace().await;
    let session = Session::open(&server, "alice").await;
    let info = session.client.peer_info().expect("server info");
    let resources = info.capabilities.resources.clone().expect("resources");
    assert_eq!(resources.subscribe, Some(true));
    assert_eq!(resources.list_changed, Some(true));

    session
        .write("notes/todo.md", "# Todo\n- ship resources\n")
        .await;
    // The bytes 0x89 'P' 'N' 'G' 0 1 2 255, which are not UTF-8.
    let png = "iVBORwABAv8=";
    let (is_error, _, text) = call_ok(
        &session.client,
        "write_file",
        json!({"path": "pics/dot.png", "encoding": "base64",
               "content": png}),
    )
    .await;
    assert!(!is_error, "{text}");
    // The deny-list hides what it covers, as list_directory does.
    std::fs::create_dir_all(server_workspace(&workspaces, "alice").join(".toolsmith"))
        .expect("a denied folder");
    std::fs::write(
        server_workspace(&workspaces, "alice").join(".toolsmith/secret.txt"),
        "hidden",
    )
    .expect("a denied file");
    let (is_error, _, text) = call_ok(
        &session.client,
        "create_tool",
        json!({"name": "shout", "description": "Upper-cases text",
               "code": "return String(args.text).toUpperCase();",
               "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}),
    )
    .await;
    assert!(!is_error, "{text}");

    let uris = session.uris().await;
    assert_eq!(
        uris,
        [
            "toolsmith://workspace/notes/todo.md",
            "toolsmith://workspace/pics/dot.png",
            "toolsmith://tools/shout/source",
        ],
        "workspace files in path order, then tool sources; nothing denied"
    );

    match session.read("toolsmith://workspace/notes/todo.md").await {
        Ok(ResourceContents::TextResourceContents {
            mime_type, text, ..
        }) => {
            assert_eq!(mime_type.as_deref(), Some("text/markdown"));
            assert_eq!(text, "# Todo\n- ship resources\n");
        }
        other => panic!("a text resource: {other:?}"),
    }
    match session.read("toolsmith://workspace/pics/dot.png").await {
        Ok(ResourceContents::BlobResourceContents {
            mime_type, blob, ..
        }) => {
            assert_eq!(mime_type.as_deref(), Some("image/png"));
            assert_eq!(blob, png);
        }
        other => panic!("a blob resource: {other:?}"),
    }
    match session.read("toolsmith://tools/shout/source").await {
        Ok(ResourceContents::TextResourceContents {
            mime_type, text, ..
        }) => {
            assert_eq!(mime_type.as_deref(), Some("text/javascript"));
            assert_eq!(text, "return String(args.text).toUpperCase();");
        }
        other => panic!("the tool's source: {other:?}"),
    }
    for (uri, says) in [
        ("toolsmith://workspace/.toolsmith/secret.txt", "reserved"),
        (
            "toolsmith://workspace/../alice/workspace/notes/todo.md",
            "..",
        ),
        ("toolsmith://workspace/missing.txt", "does not exist"),
        ("toolsmith://tools/read_file/source", "custom tool"),
        ("https://example.com/", "resources/list"),
    ] {
        let e = session.read(uri).await.expect_err(uri);
        assert!(
            e.message.contains(says),
            "{uri}: {} should say {says}",
            e.message
        );
    }
    let missing = session
        .read("toolsmith://workspace/missing.txt")
        .await
        .expect_err("missing");
    assert_eq!(missing.code, ErrorCode::RESOURCE_NOT_FOUND);

    let templates = session
        .client
        .list_resource_templates(None)
        .await
        .expect("resources/templates/list");
    let templates: Vec<String> = templates
        .resource_templates
        .into_iter()
        .map(|t| t.uri_template)
        .collect();
    assert_eq!(
        templates,
        [
            "toolsmith://workspace/{+path}",
            "toolsmith://tools/{name}/source"
        ]
    );
}

fn server_workspace(root: &tempfile::TempDir, user: &str) -> std::path::PathBuf {
    root.path().join(user).join("workspace")
}

#[tokio::test]
async fn a_file_written_by_write_file_notifies_a_subscriber_and_a_tool_update_its_source() {
    let (server, _workspaces) = server_with_workspace().await;
    let mut session = Session::open(&server, "alice").await;
    let (is_error, _, text) = call_ok(
        &session.client,
        "create_tool",
        json!({"name": "shout", "description": "Upper-cases text",
               "code": "return String(args.text).toUpperCase();",
               "parameters": {"type": "object"}}),
    )
    .await;
    assert!(!is_error, "{text}");
    for uri in [
        "toolsmith://workspace/watched.txt",
        "toolsmith://tools/shout/source",
    ] {
        session
            .client
            .subscribe(SubscribeRequestParams::new(uri))
            .await
            .expect("resources/subscribe");
    }
    session.write("other.txt", "not watched").await;
    session.write("watched.txt", "v1").await;
    assert_eq!(
        session.next_update().await,
        "toolsmith://workspace/watched.txt",
        "the unwatched file sent no update"
    );
    let (is_error, _, text) = call_ok(
        &session.client,
        "update_custom_tool",
        json!({"name": "shout", "code": "return String(args.text).toLowerCase();"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(
        session.next_update().await,
        "toolsmith://tools/shout/source"
    );

    session
        .client
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(
            "toolsmith://workspace/watched.txt",
        ))
        .await
        .expect("resources/unsubscribe");
    session
        .client
        .subscribe(SubscribeRequestParams::new(
            "toolsmith://workspace/last.txt",
        ))
        .await
        .expect("resources/subscribe");
    session.write("watched.txt", "v2").await;
    session.write("last.txt", "v1").await;
    assert_eq!(
        session.next_update().await,
        "toolsmith://workspace/last.txt",
        "no update after unsubscribing"
    );
}

#[tokio::test]
async fn another_users_files_are_never_listed_read_or_notified() {
    let (server, _workspaces) = server_with_workspace().await;
    let alice = Session::open(&server, "alice").await;
    let mut bob = Session::open(&server, "bob").await;
    for uri in [
        "toolsmith://workspace/same.txt",
        "toolsmith://workspace/mine.txt",
    ] {
        bob.client
            .subscribe(SubscribeRequestParams::new(uri))
            .await
            .expect("resources/subscribe");
    }
    alice.write("same.txt", "alice's").await;
    alice.write("private/plan.md", "alice's plan").await;
    bob.write("mine.txt", "bob's").await;
    assert_eq!(
        bob.next_update().await,
        "toolsmith://workspace/mine.txt",
        "alice's same.txt sent bob nothing"
    );
    assert_eq!(bob.uris().await, ["toolsmith://workspace/mine.txt"]);
    for uri in [
        "toolsmith://workspace/same.txt",
        "toolsmith://workspace/private/plan.md",
        "toolsmith://workspace/../../alice/workspace/same.txt",
        "toolsmith://workspace//tmp/alice/same.txt",
    ] {
        bob.read(uri)
            .await
            .expect_err("another user's file is not readable");
    }
}

#[tokio::test]
async fn without_a_workspace_only_tool_sources_are_resources() {
    let server = server().await;
    let session = Session::open(&server, "default").await;
    assert!(session.uris().await.is_empty());
    let e = session
        .read("toolsmith://workspace/a.txt")
        .await
        .expect_err("no workspace");
    assert!(e.message.contains("read_file"), "{}", e.message);
}

#[tokio::test]
async fn a_token_that_may_not_call_tools_reads_no_workspace_file() {
    let (server, _workspaces) = server_with_workspace().await;
    let alice = Session::open(&server, "alice").await;
    alice.write("plan.md", "alice's plan").await;
    let mut identity = Identity::local_default();
    identity.user_id = "alice".to_owned();
    identity.scopes = vec![toolsmith_server::auth::Scope::ToolsRead];
    let (sent, notes) = mpsc::unbounded_channel();
    let reader = Session {
        client: mcp_support::connect_in_process(&server.state, identity, Notes { sent }).await,
        notes,
    };
    assert!(reader.uris().await.is_empty(), "no file listed");
    let e = reader
        .read("toolsmith://workspace/plan.md")
        .await
        .expect_err("read_file needs tools:execute");
    assert!(e.message.contains("tools:execute"), "{}", e.message);
    let e = reader
        .client
        .subscribe(SubscribeRequestParams::new("toolsmith://workspace/plan.md"))
        .await
        .expect_err("nor a subscription");
    assert!(e.to_string().contains("tools:execute"), "{e}");
    let templates = reader
        .client
        .list_resource_templates(None)
        .await
        .expect("resources/templates/list");
    assert_eq!(templates.resource_templates.len(), 1, "tool sources only");
}

fn defined(name: &str, uri: &str, text: &str) -> toolsmith_service::resources::user::ResourceInput {
    toolsmith_service::resources::user::ResourceInput {
        name: name.to_owned(),
        uri: Some(uri.to_owned()),
        description: format!("{name} for the test"),
        text: Some(text.to_owned()),
        ..Default::default()
    }
}

fn order_template() -> toolsmith_service::resources::user::ResourceInput {
    toolsmith_service::resources::user::ResourceInput {
        name: "order".to_owned(),
        uri_template: Some("shop://orders/{id}/data".to_owned()),
        description: "One order".to_owned(),
        code: Some("return {id: args.id, data: 'Data for ID: ' + args.id};".to_owned()),
        ..Default::default()
    }
}

#[tokio::test]
async fn resources_a_user_defines_are_listed_read_computed_and_notified_and_another_user_sees_none()
{
    let server = server().await;
    let service = server.state.service.clone();
    let alice_person = toolsmith_service::Actor::user("alice");
    service
        .create_resource(&alice_person, defined("note", "test://note", "v1"))
        .await
        .expect("a text resource");
    service
        .create_resource(
            &alice_person,
            toolsmith_service::resources::user::ResourceInput {
                name: "dot".to_owned(),
                uri: Some("test://dot.png".to_owned()),
                mime_type: Some("image/png".to_owned()),
                blob: Some("iVBORwABAv8=".to_owned()),
                ..Default::default()
            },
        )
        .await
        .expect("a blob resource");
    service
        .create_resource(&alice_person, order_template())
        .await
        .expect("a template");

    let mut alice = Session::open(&server, "alice").await;
    assert_eq!(alice.uris().await, ["test://dot.png", "test://note"]);
    match alice.read("test://note").await {
        Ok(ResourceContents::TextResourceContents {
            mime_type, text, ..
        }) => assert_eq!(
            (mime_type.as_deref(), text.as_str()),
            (Some("text/plain"), "v1")
        ),
        other => panic!("a text resource: {other:?}"),
    }
    match alice.read("test://dot.png").await {
        Ok(ResourceContents::BlobResourceContents {
            mime_type, blob, ..
        }) => assert_eq!(
            (mime_type.as_deref(), blob.as_str()),
            (Some("image/png"), "iVBORwABAv8=")
        ),
        other => panic!("a blob resource: {other:?}"),
    }
    let templates: Vec<String> = alice
        .client
        .list_resource_templates(None)
        .await
        .expect("resources/templates/list")
        .resource_templates
        .into_iter()
        .map(|t| t.uri_template)
        .collect();
    assert!(
        templates.contains(&"shop://orders/{id}/data".to_owned()),
        "{templates:?}"
    );
    match alice.read("shop://orders/123/data").await {
        Ok(ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        }) => {
            assert_eq!(uri, "shop://orders/123/data");
            assert_eq!(mime_type.as_deref(), Some("application/json"));
            let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!(value, json!({"id": "123", "data": "Data for ID: 123"}));
        }
        other => panic!("the template's content: {other:?}"),
    }
    let e = alice
        .read("shop://orders/1/2/data")
        .await
        .expect_err("{id} is one segment");
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);

    // A subscriber hears of a change of the resource (and of the template a URI matches).
    for uri in ["test://note", "shop://orders/7/data"] {
        alice
            .client
            .subscribe(SubscribeRequestParams::new(uri))
            .await
            .expect("resources/subscribe");
    }
    alice
        .client
        .subscribe(SubscribeRequestParams::new("test://nothing"))
        .await
        .expect_err("a URI nothing answers for");
    service
        .update_resource(
            &alice_person,
            "note",
            defined("note", "test://note", "v2"),
            Some(1),
        )
        .await
        .expect("a change");
    assert_eq!(alice.next_update().await, "test://note");
    match alice.read("test://note").await {
        Ok(ResourceContents::TextResourceContents { text, .. }) => assert_eq!(text, "v2"),
        other => panic!("the new text: {other:?}"),
    }
    let mut changed = order_template();
    changed.code = Some("return 'order ' + args.id;".to_owned());
    service
        .update_resource(&alice_person, "order", changed, None)
        .await
        .expect("a change of the template");
    assert_eq!(alice.next_update().await, "shop://orders/7/data");

    // Bob: nothing listed, nothing read, not even by URI.
    let bob = Session::open(&server, "bob").await;
    assert!(bob.uris().await.is_empty());
    for uri in ["test://note", "shop://orders/123/data"] {
        let e = bob.read(uri).await.expect_err("alice's");
        assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND, "{uri}");
    }
}

#[tokio::test]
async fn a_template_a_model_wrote_waits_for_a_person_and_a_persons_runs_at_once() {
    // The default execution approval: what a model wrote waits for a person.
    let server =
        TestServer::start_with(ServerSettings::default(), ToolServiceSettings::default()).await;
    let service = server.state.service.clone();
    let model = toolsmith_service::Actor::for_caller("alice", Some("bot".to_owned()));
    let made = service
        .create_resource(&model, order_template())
        .await
        .expect("a model's template");
    assert_eq!(made.created_by, toolsmith_core::CreatedBy::Llm);
    let mut mine = order_template();
    mine.name = "mine".to_owned();
    mine.uri_template = Some("mine://{id}".to_owned());
    service
        .create_resource(&toolsmith_service::Actor::user("alice"), mine)
        .await
        .expect("a person's template");

    let alice = Session::open(&server, "alice").await;
    let e = alice
        .read("shop://orders/5/data")
        .await
        .expect_err("the model's code waits for a person");
    assert!(e.message.contains("approv"), "{}", e.message);
    match alice.read("mine://5").await {
        Ok(ResourceContents::TextResourceContents { text, .. }) => {
            assert!(text.contains('5'), "{text}");
        }
        other => panic!("a person's template runs at once: {other:?}"),
    }
}

#[tokio::test]
async fn a_token_that_may_not_call_tools_completes_no_workspace_path() {
    let (server, _workspaces) = server_with_workspace().await;
    let alice = Session::open(&server, "alice").await;
    alice.write("plan.md", "alice's plan").await;
    let done = complete_path(&alice).await;
    assert_eq!(done.completion.values, ["plan.md"]);

    let mut identity = Identity::local_default();
    identity.user_id = "alice".to_owned();
    identity.scopes = vec![toolsmith_server::auth::Scope::ToolsRead];
    let (sent, notes) = mpsc::unbounded_channel();
    let reader = Session {
        client: mcp_support::connect_in_process(&server.state, identity, Notes { sent }).await,
        notes,
    };
    let done = complete_path(&reader).await;
    assert!(
        done.completion.values.is_empty(),
        "a completion of file names is a listing of them: {:?}",
        done.completion.values
    );
}

async fn complete_path(session: &Session) -> rmcp::model::CompleteResult {
    session
        .client
        .complete(rmcp::model::CompleteRequestParams::new(
            rmcp::model::Reference::for_resource("toolsmith://workspace/{+path}"),
            rmcp::model::ArgumentInfo::new("path", "pl"),
        ))
        .await
        .expect("completion/complete")
}

#[tokio::test]
async fn a_subscriber_left_behind_is_told_only_what_its_own_workspace_may_have_changed() {
    use toolsmith_builtins::workspace::{WriteOptions, WsPath};
    let (server, _workspaces) = server_with_workspace().await;
    let mut bob = Session::open(&server, "bob").await;
    for uri in ["toolsmith://workspace/a.txt", "toolsmith://workspace/b.txt"] {
        bob.client
            .subscribe(SubscribeRequestParams::new(uri))
            .await
            .expect("resources/subscribe");
    }
    // Alice's workspace changes more often than the change channel holds (256) with nothing
    // awaited in between, so bob's watcher (on this test's one thread) falls behind them.
    let mut alice = Identity::local_default().tool_context();
    alice.user_id = "alice".to_owned();
    let workspaces = server.state.service.workspaces().expect("a workspace");
    let workspace = workspaces.for_call(&alice).expect("alice's workspace");
    let path = WsPath::parse("a.txt", workspace.root_path(), workspace.limits()).expect("a path");
    let options = WriteOptions {
        overwrite: true,
        create_parents: false,
    };
    for n in 0..300 {
        workspace
            .write(&path, format!("alice {n}").as_bytes(), options)
            .expect("alice writes");
    }
    bob.write("b.txt", "bob's").await;
    assert_eq!(
        bob.notes.recv().await.expect("the session is open"),
        "updated toolsmith://workspace/b.txt",
        "none of bob's files changed while his watcher was behind: nothing is told of that"
    );
    assert_eq!(bob.notes.recv().await.as_deref(), Some("list_changed"));

    // Behind again, and this time one of the changes missed was bob's own (a.txt created): he
    // is told that his subscribed files may have changed, and that the listing did.
    let mut bob_ctx = Identity::local_default().tool_context();
    bob_ctx.user_id = "bob".to_owned();
    let own = workspaces.for_call(&bob_ctx).expect("bob's workspace");
    own.write(&path, b"bob's a", options).expect("bob writes");
    for n in 0..300 {
        workspace
            .write(&path, format!("alice again {n}").as_bytes(), options)
            .expect("alice writes");
    }
    for expected in [
        "updated toolsmith://workspace/a.txt",
        "updated toolsmith://workspace/b.txt",
        "list_changed",
    ] {
        assert_eq!(bob.notes.recv().await.as_deref(), Some(expected));
    }
}
