//! Overlapping built-ins (issue 35): an alias (`search`, `list_files`, `web_fetch`,
//! `web_search`, `memory_search`, `cron`, `image`, `tts`, and `execute_javascript` beside
//! `run_js_ephemeral`)
//! is left out of MCP `tools/list`, so a model is shown each tool once, and is still called by
//! its name for the clients written against it.

use serde_json::json;
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Identity;
use toolsmith_service::{Actor, ToolServiceSettings};

use crate::mcp_support::{TestServer, call_ok, connect_in_process, tool_names};

#[tokio::test]
async fn aliases_are_not_listed_but_still_answer_by_their_name() {
    let workspaces = tempfile::tempdir().unwrap();
    let service = ToolServiceSettings {
        workspace: Some(toolsmith_builtins::workspace::WorkspaceSettings::new(
            workspaces.path().to_owned(),
        )),
        ..ToolServiceSettings::default()
    };
    let server = TestServer::start_with(ServerSettings::default(), service).await;
    for group in ["webFetch", "scheduler", "codeExecution", "image", "audio"] {
        server
            .state
            .service
            .set_tool_group(&Actor::user("default"), group, true)
            .await
            .unwrap();
    }
    let client = connect_in_process(&server.state, Identity::local_default(), ()).await;
    let listed = tool_names(&client).await;
    for (alias, tool) in toolsmith_builtins::aliases::ALIASES {
        assert!(!listed.iter().any(|n| n == alias), "{alias} is listed");
        assert!(listed.iter().any(|n| n == tool), "{tool} is not listed");
    }
    // Still callable by name: the same tool under another name.
    let (failed, found, text) =
        call_ok(&client, "memory_search", json!({"query": "birthday"})).await;
    assert!(!failed, "{text}");
    assert!(
        found.get("memories").is_some() || text.contains("memories"),
        "{text}"
    );
    let (failed, _, text) = call_ok(&client, "search", json!({"query": "x"})).await;
    assert!(!failed, "{text}");
    let (failed, _, text) = call_ok(&client, "list_files", json!({})).await;
    assert!(!failed, "{text}");
}

/// `search_tools` answers an alias's words with the listed tool it stands for, once: asked by
/// the alias's own name, or in words both match, the reply never names the alias.
#[tokio::test]
async fn search_names_the_listed_tool_never_its_alias() {
    let server = TestServer::start(ServerSettings::default()).await;
    for group in ["webFetch", "scheduler", "codeExecution", "image", "audio"] {
        server
            .state
            .service
            .set_tool_group(&Actor::user("default"), group, true)
            .await
            .unwrap();
    }
    let client = connect_in_process(&server.state, Identity::local_default(), ()).await;
    for (alias, tool) in toolsmith_builtins::aliases::ALIASES {
        for query in [alias.to_string(), alias.replace('_', " ")] {
            let (failed, found, text) = call_ok(
                &client,
                "search_tools",
                json!({"query": query, "limit": 20}),
            )
            .await;
            assert!(!failed, "{text}");
            let names: Vec<&str> = found["tools"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|t| t["name"].as_str())
                .collect();
            assert!(
                !names.contains(alias),
                "{query:?} names the alias: {names:?}"
            );
            if query == *alias {
                assert!(
                    names.contains(tool),
                    "{query:?} does not name {tool}: {names:?}"
                );
            }
            let mut unique = names.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), names.len(), "{query:?}: {names:?}");
        }
    }
}
