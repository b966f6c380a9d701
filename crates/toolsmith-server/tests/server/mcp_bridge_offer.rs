//! What a bridged server offers besides its tools (issue 40): its prompts, resources, resource
//! templates, completions and `instructions`, offered through Toolsmith's MCP face under its
//! prefix, forwarded to the upstream (the official Python SDK's `MCPServer` over stdio,
//! `tests/clients/mcp_upstream.py`) and scrubbed of its secrets; its `list_changed` and
//! `resources/updated` passed on; a caller without a grant of the server sees none of it.

#![allow(
    deprecated,
    reason = "resources/subscribe is MCP 2025-11-25's; rmcp marks it legacy-only"
)]

use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ErrorCode, GetPromptRequestParams,
    ReadResourceRequestParams, Reference, ResourceContents, ResourceUpdatedNotificationParam,
    SubscribeRequestParams,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;
use tokio::sync::mpsc;
use toolsmith_core::mcp_bridge::GrantSubject;
use toolsmith_server::auth::{Identity, Scope};
use toolsmith_service::Actor;
use toolsmith_service::bridge::GrantInput;

use crate::mcp_bridge::{app_with, app_with_grants, upstream};
use crate::mcp_support::{self, McpClient, call_ok, prerequisite, python};
use crate::rest_support::TestApp;

const SECRET: &str = "sk-live-upstream-0123456789abcdef";

/// Passes on the notifications of prompts and resources, in order.
#[derive(Clone)]
pub(crate) struct Notes {
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
        let _ = self.sent.send("resources".to_owned());
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.sent.send("prompts".to_owned());
    }
}

/// One MCP session with its notifications ([`Notes`]).
pub(crate) struct Session {
    pub(crate) client: McpClient<Notes>,
    pub(crate) notes: mpsc::UnboundedReceiver<String>,
}

impl Session {
    pub(crate) async fn open(app: &TestApp, user: &str, admin: bool) -> Session {
        let mut identity = Identity::local_default();
        identity.user_id = user.to_owned();
        if !admin {
            identity.scopes = vec![Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];
        }
        let (sent, notes) = mpsc::unbounded_channel();
        let client = mcp_support::connect_in_process(&app.state, identity, Notes { sent }).await;
        Session { client, notes }
    }

    /// Waits for the notification `note` (others are skipped), 20 s at most.
    pub(crate) async fn wait_for(&mut self, note: &str) {
        let found = async {
            while let Some(got) = self.notes.recv().await {
                if got == note {
                    return;
                }
            }
            panic!("the session closed before '{note}'");
        };
        tokio::time::timeout(Duration::from_secs(20), found)
            .await
            .unwrap_or_else(|_| panic!("'{note}' never came"));
    }

    async fn prompts(&self) -> Vec<rmcp::model::Prompt> {
        self.client.list_all_prompts().await.expect("prompts/list")
    }

    async fn prompt_names(&self) -> Vec<String> {
        self.prompts().await.into_iter().map(|p| p.name).collect()
    }

    /// The prompt names once the bridged `wanted` is among them: listed now, or after the
    /// `prompts/list_changed` that the upstream's listing (which may still be under way) sends.
    async fn prompt_names_with(&mut self, wanted: &str) -> Vec<String> {
        let names = self.prompt_names().await;
        if names.iter().any(|n| n == wanted) {
            return names;
        }
        self.wait_for("prompts").await;
        self.prompt_names().await
    }

    pub(crate) async fn uris(&self) -> Vec<String> {
        let listed = self
            .client
            .list_all_resources()
            .await
            .expect("resources/list");
        listed.into_iter().map(|r| r.uri).collect()
    }

    pub(crate) async fn read(&self, uri: &str) -> Result<String, rmcp::model::ErrorData> {
        match self
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
        {
            Ok(result) => match result.contents.into_iter().next() {
                Some(ResourceContents::TextResourceContents { text, .. }) => Ok(text),
                other => panic!("{uri}: not one text content: {other:?}"),
            },
            Err(rmcp::ServiceError::McpError(e)) => Err(e),
            Err(e) => panic!("{uri}: transport failure: {e}"),
        }
    }

    async fn get(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<String, rmcp::model::ErrorData> {
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = arguments.as_object().cloned();
        match self.client.get_prompt(params).await {
            Ok(result) => Ok(result
                .messages
                .iter()
                .map(|m| match m.content.as_text() {
                    Some(text) => text.text.clone(),
                    None => format!("{:?}", m.content),
                })
                .collect::<Vec<_>>()
                .join("\n")),
            Err(rmcp::ServiceError::McpError(e)) => Err(e),
            Err(e) => panic!("{name}: transport failure: {e}"),
        }
    }

    async fn complete(&self, reference: Reference, argument: &str, typed: &str) -> Vec<String> {
        let params = CompleteRequestParams::new(reference, ArgumentInfo::new(argument, typed));
        match self.client.complete(params).await {
            Ok(result) => result.completion.values,
            Err(e) => panic!("completion/complete {argument}: {e}"),
        }
    }

    fn instructions(&self) -> String {
        self.client
            .peer_info()
            .and_then(|info| info.instructions.clone())
            .unwrap_or_default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridged_servers_prompts_resources_completions_and_instructions_are_offered_and_forwarded()
 {
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with(vec![upstream("up")]).await;
    let mut session = Session::open(&app, "default", true).await;

    // Prompts: listed under the server's prefix, got from the upstream, scrubbed.
    let names = session.prompt_names_with("mcp_up_greet").await;
    assert!(names.contains(&"mcp_up_leak".to_owned()), "{names:?}");
    let greet = session
        .prompts()
        .await
        .into_iter()
        .find(|p| p.name == "mcp_up_greet")
        .expect("listed");
    let arguments: Vec<(String, Option<bool>)> = greet
        .arguments
        .unwrap_or_default()
        .into_iter()
        .map(|a| (a.name, a.required))
        .collect();
    assert!(
        arguments.contains(&("name".to_owned(), Some(true))),
        "{arguments:?}"
    );
    let text = session
        .get("mcp_up_greet", json!({"name": "Ada", "style": "pirate"}))
        .await
        .expect("prompts/get");
    assert_eq!(text, "Say hello to Ada in a pirate way.");
    let leaked = session.get("mcp_up_leak", json!({})).await.expect("leak");
    assert!(
        !leaked.contains(SECRET) && leaked.contains("[REDACTED]"),
        "{leaked}"
    );
    // The upstream's own refusal passes on (a missing required argument).
    let refused = session.get("mcp_up_greet", json!({})).await;
    assert!(refused.is_err(), "{refused:?}");
    let unknown = session.get("mcp_up_nothing", json!({})).await;
    assert_eq!(
        unknown.expect_err("unknown").code,
        ErrorCode::INVALID_PARAMS
    );

    // Completions: forwarded for the prompt's argument and the template's variable.
    let styles = session
        .complete(Reference::for_prompt("mcp_up_greet"), "style", "pi")
        .await;
    assert_eq!(styles, vec!["pirate".to_owned()]);
    let days = session
        .complete(Reference::for_resource("notes://day/{day}"), "day", "t")
        .await;
    assert_eq!(days, vec!["tuesday".to_owned()]);

    // Resources and templates: listed, read from the upstream.
    let uris = session.uris().await;
    assert!(uris.contains(&"notes://today".to_owned()), "{uris:?}");
    let listed = session
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let today = listed
        .iter()
        .find(|r| r.uri == "notes://today")
        .expect("listed");
    assert_eq!(today.name, "mcp_up_today");
    let templates = session
        .client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    assert!(
        templates
            .iter()
            .any(|t| t.uri_template == "notes://day/{day}" && t.name == "mcp_up_day"),
        "{templates:?}"
    );
    assert_eq!(
        session.read("notes://today").await.expect("read"),
        "nothing yet"
    );
    assert_eq!(
        session.read("notes://day/friday").await.expect("read"),
        "the note of friday"
    );
    let missing = session.read("elsewhere://nothing").await;
    assert_eq!(
        missing.expect_err("not offered").code,
        ErrorCode::RESOURCE_NOT_FOUND
    );

    // Instructions: the upstream's folded into Toolsmith's, scrubbed (a session opened now
    // that the upstream has been listed).
    let later = Session::open(&app, "default", true).await;
    let instructions = later.instructions();
    assert!(
        instructions.starts_with("Toolsmith:")
            && instructions.contains("MCP server 'up'")
            && instructions.contains("Notes live under notes://"),
        "{instructions}"
    );
    assert!(!instructions.contains(SECRET), "{instructions}");

    // The upstream's resources/updated reaches a subscriber; a read sees the new text.
    session
        .client
        .subscribe(SubscribeRequestParams::new("notes://today"))
        .await
        .expect("resources/subscribe of a bridged URI");
    let (failed, _, text) = call_ok(
        &session.client,
        "mcp_up_touch_note",
        json!({"text": "buy milk"}),
    )
    .await;
    assert!(!failed, "{text}");
    session.wait_for("updated notes://today").await;
    assert_eq!(
        session.read("notes://today").await.expect("read"),
        "buy milk"
    );

    // The upstream's list_changed for prompts and resources reaches Toolsmith's sessions.
    let (failed, _, text) = call_ok(&session.client, "mcp_up_add_prompt", json!({})).await;
    assert!(!failed, "{text}");
    let names = session.prompt_names_with("mcp_up_farewell").await;
    assert!(names.contains(&"mcp_up_farewell".to_owned()), "{names:?}");
    let (failed, _, text) = call_ok(&session.client, "mcp_up_add_note", json!({})).await;
    assert!(!failed, "{text}");
    session.wait_for("resources").await;
    let uris = session.uris().await;
    assert!(uris.contains(&"notes://tomorrow".to_owned()), "{uris:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_without_a_grant_of_the_server_sees_none_of_its_prompts_resources_or_instructions()
{
    if !prerequisite("the MCP Python SDK", &python()) {
        return;
    }
    let app = app_with_grants(upstream("g")).await;
    app.state
        .service
        .put_mcp_grant(
            &Actor::user("default"),
            GrantInput {
                server: "g".to_owned(),
                subject_kind: GrantSubject::User,
                subject: "carol".to_owned(),
                enabled: true,
                // A grant of one tool still shows the server's prompts and resources.
                tool_allow: vec!["echo".to_owned()],
                tool_deny: Vec::new(),
            },
        )
        .await
        .expect("grant");
    let mut carol = Session::open(&app, "carol", false).await;
    let bob = Session::open(&app, "bob", false).await;
    // Carol, with a grant of the server, sees its prompts once it is listed.
    let names = carol.prompt_names_with("mcp_g_greet").await;
    assert!(names.contains(&"mcp_g_greet".to_owned()), "{names:?}");
    assert!(carol.uris().await.contains(&"notes://today".to_owned()));
    assert_eq!(
        carol.read("notes://today").await.expect("read"),
        "nothing yet"
    );

    // Bob, without one, sees none of it and can reach none of it.
    let names = bob.prompt_names().await;
    assert!(!names.iter().any(|n| n.starts_with("mcp_g_")), "{names:?}");
    let uris = bob.uris().await;
    assert!(!uris.iter().any(|u| u.starts_with("notes://")), "{uris:?}");
    let templates = bob
        .client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    assert!(
        !templates
            .iter()
            .any(|t| t.uri_template.starts_with("notes://")),
        "{templates:?}"
    );
    assert_eq!(
        bob.read("notes://today").await.expect_err("hidden").code,
        ErrorCode::RESOURCE_NOT_FOUND
    );
    assert_eq!(
        bob.read("notes://day/monday")
            .await
            .expect_err("hidden")
            .code,
        ErrorCode::RESOURCE_NOT_FOUND
    );
    assert_eq!(
        bob.get("mcp_g_greet", json!({"name": "Ada"}))
            .await
            .expect_err("hidden")
            .code,
        ErrorCode::INVALID_PARAMS
    );
    let completed = bob
        .client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("mcp_g_greet"),
            ArgumentInfo::new("style", "p"),
        ))
        .await;
    assert!(
        completed
            .as_ref()
            .map_or(true, |c| c.completion.values.is_empty()),
        "{completed:?}"
    );
    let later_bob = Session::open(&app, "bob", false).await;
    assert!(
        !later_bob.instructions().contains("Notes live"),
        "{}",
        later_bob.instructions()
    );
    let later_carol = Session::open(&app, "carol", false).await;
    assert!(
        later_carol.instructions().contains("Notes live"),
        "{}",
        later_carol.instructions()
    );
}
