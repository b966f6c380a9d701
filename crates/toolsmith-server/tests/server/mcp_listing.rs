//! What MCP `tools/list` costs a model, and what the server's `instructions` promise about it
//! (issue 35): the three listings (`full`, `compact` — the binary's default —, `discovery`)
//! measured in cl100k tokens over every built-in (every group on) with 0 and 1,000 custom
//! tools, the default's budget pinned, and each listing's instructions held to what a client
//! then sees.

use std::sync::Arc;

use serde_json::{Value, json};
use toolsmith_server::{AppState, McpListing, ServerSettings};
use toolsmith_service::{Actor, CreateTool};

use crate::mcp_protocol::Session;
use crate::search_quality::{add_custom_tools, all_groups_on, cl100k_tokens};

/// Most cl100k tokens the default (`compact`) `tools/list` may cost, whatever the catalogue:
/// the control plane and the discovery tools (about 1,700) and at most 8 of the caller's own
/// tools within 12,000 bytes of JSON (about 3,000 more).
const COMPACT_TOKEN_BUDGET: usize = 5_000;

/// `state` served with the listing `mode`.
fn served_as(state: &AppState, mode: McpListing) -> AppState {
    let mut state = state.clone();
    state.config = Arc::new(ServerSettings {
        mcp_listing: mode,
        ..ServerSettings::default()
    });
    state
}

/// The `tools` array a `user`'s session receives under `mode`: its names and cl100k tokens.
async fn listing(state: &AppState, mode: McpListing, user: &str) -> (Vec<String>, usize) {
    let session = Session::open(&served_as(state, mode), user).await;
    let tools = session.tools().await;
    let text = serde_json::to_string(&tools).unwrap();
    let names = tools.iter().map(|t| t.name.to_string()).collect();
    (names, cl100k_tokens(&text))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_listing_costs_the_same_for_any_catalogue_and_lists_the_most_used_tools() {
    let app = all_groups_on().await;
    let mut figures = Vec::new();
    for (catalogue, custom) in [("0 custom tools", false), ("1,000 custom tools", true)] {
        if custom {
            add_custom_tools(&app).await;
        }
        for mode in [McpListing::Full, McpListing::Compact, McpListing::Discovery] {
            let (names, tokens) = listing(&app.state, mode, "default").await;
            figures.push(format!(
                "{catalogue}, {mode:?}: {} tools, {tokens} cl100k tokens",
                names.len()
            ));
            if mode == McpListing::Compact {
                assert!(
                    tokens < COMPACT_TOKEN_BUDGET,
                    "{catalogue}: the default listing costs {tokens} tokens (budget {COMPACT_TOKEN_BUDGET})"
                );
            }
        }
    }
    eprintln!("tools/list, every group on:\n  {}", figures.join("\n  "));

    // The caller's most used tools are listed, the most used first; a call counts.
    let session = Session::open(&served_as(&app.state, McpListing::Compact), "default").await;
    for (tool, calls) in [
        ("list_invoice", 3),
        ("create_invoice", 2),
        ("get_invoice", 1),
    ] {
        for _ in 0..calls {
            let (is_error, _, text) = session.ok(tool, json!({"customer_id": "c-1"})).await;
            assert!(!is_error, "{tool}: {text}");
        }
    }
    let (names, _) = listing(&app.state, McpListing::Compact, "default").await;
    let (server_tools, _) = listing(&app.state, McpListing::Discovery, "default").await;
    let own: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|name| !server_tools.iter().any(|s| s == name))
        .collect();
    assert_eq!(own.len(), 8, "{names:?}");
    assert_eq!(
        own.get(..3),
        Some(&["list_invoice", "create_invoice", "get_invoice"][..]),
        "{names:?}"
    );
    // Another user's listing holds none of them.
    let (theirs, _) = listing(&app.state, McpListing::Compact, "someone-else").await;
    assert!(!theirs.iter().any(|n| n == "list_invoice"), "{theirs:?}");
}

fn sums_tool(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Adds two numbers",
        "parameters": {"type": "object", "properties": {
            "a": {"type": "number", "description": "the first"},
            "b": {"type": "number", "description": "the second"}}, "required": ["a", "b"]},
        "code": "return args.a + args.b;"
    })
}

/// Each listing's instructions, held to what the client then sees: the tools it says are
/// listed are, the ones it says are found with `search_tools` are, a created tool is listed
/// exactly when it says so and answers by its name, and the `list_changed` it promises comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_instructions_promise_only_what_each_listing_does() {
    let app = crate::rest_support::TestApp::new().await;
    // Tools of the user's that are not its most used: a compact listing keeps its 8.
    for i in 0..10 {
        let tool = CreateTool {
            kind: Default::default(),
            name: format!("spare_{i}"),
            description: format!("Spare tool {i}"),
            parameters: json!({"type": "object"}),
            code: "return 1;".to_owned(),
            category: None,
            tags: Vec::new(),
            permissions: Vec::new(),
            requires_approval: None,
            metadata: None,
        };
        app.state
            .service
            .create(&Actor::user("default"), tool)
            .await
            .unwrap();
    }
    for mode in [McpListing::Full, McpListing::Compact, McpListing::Discovery] {
        let state = served_as(&app.state, mode);
        let session = Session::open(&state, "default").await;
        let said = session.instructions();
        let names = session.names().await;
        // Built-ins: listed, or found with search_tools, as the text says.
        if said.contains("Call any listed tool") && mode == McpListing::Full {
            assert!(
                names.iter().any(|n| n == "calculate"),
                "{mode:?}: {names:?}"
            );
        }
        if said.contains("the built-ins too") || said.contains("only the control plane") {
            assert!(
                !names.iter().any(|n| n == "calculate"),
                "{mode:?}: {names:?}"
            );
            let (is_error, found, text) = session
                .ok(
                    "search_tools",
                    json!({"query": "calculate an arithmetic expression"}),
                )
                .await;
            assert!(!is_error, "{text}");
            assert_eq!(found["tools"][0]["name"], "calculate", "{mode:?}: {text}");
        }
        if said.contains("up to 8 of your own tools") {
            let server_tools = served_as(&app.state, McpListing::Discovery);
            let server_tools = Session::open(&server_tools, "default").await.names().await;
            let own = names.iter().filter(|n| !server_tools.contains(n)).count();
            assert_eq!(own, 8, "{mode:?}: {names:?}");
        }

        // A tool made now.
        let before = session.changes();
        let name = format!("sum_two_{}", format!("{mode:?}").to_lowercase());
        let (is_error, _, text) = session.ok("create_tool", sums_tool(&name)).await;
        assert!(!is_error, "{mode:?}: {text}");
        if said.contains("list_changed") {
            session.notified(before + 1).await;
        }
        let listed = session.names().await.contains(&name);
        if said.contains("appears in tools/list") {
            assert!(
                listed,
                "{mode:?} promises the new tool in tools/list: {said}"
            );
        }
        if said.contains("is not listed") {
            assert!(!listed, "{mode:?} says the new tool is not listed: {said}");
        }
        if said.contains("called by its name") || said.contains("Call any listed tool by name") {
            let (is_error, _, text) = session.ok(&name, json!({"a": 2, "b": 3})).await;
            assert!(!is_error, "{mode:?}: {text}");
            assert_eq!(text.trim(), "5", "{mode:?}: {text}");
        }
    }
}

/// The compact listing's "most used" counts every call of the caller's, whatever the source
/// (issue 36): a built-in called three times ranks above a custom tool called once, and both
/// above the caller's tools never called; another user's calls move nothing of this one's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_compact_listing_ranks_built_in_calls_with_custom_ones() {
    let app = crate::rest_support::TestApp::new().await;
    for name in ["shout", "spare"] {
        let tool = CreateTool {
            kind: Default::default(),
            name: name.to_owned(),
            description: format!("The {name} tool"),
            parameters: json!({"type": "object"}),
            code: "return 1;".to_owned(),
            category: None,
            tags: Vec::new(),
            permissions: Vec::new(),
            requires_approval: None,
            metadata: None,
        };
        app.state
            .service
            .create(&Actor::user("default"), tool)
            .await
            .unwrap();
    }
    let compact = served_as(&app.state, McpListing::Compact);
    let session = Session::open(&compact, "default").await;
    for _ in 0..3 {
        let (is_error, _, text) = session
            .ok("calculate", json!({"expression": "6 * 7"}))
            .await;
        assert!(!is_error, "{text}");
    }
    let (is_error, _, text) = session.ok("shout", json!({})).await;
    assert!(!is_error, "{text}");
    // Someone else calls generate_uuid often: nothing of theirs reaches this listing.
    let other = Session::open(&compact, "someone-else").await;
    for _ in 0..5 {
        let (is_error, _, text) = other.ok("generate_uuid", json!({})).await;
        assert!(!is_error, "{text}");
    }
    let (server_tools, _) = listing(&app.state, McpListing::Discovery, "default").await;
    let own = |names: Vec<String>| -> Vec<String> {
        names
            .into_iter()
            .filter(|name| !server_tools.contains(name))
            .collect()
    };
    let (names, _) = listing(&app.state, McpListing::Compact, "default").await;
    assert_eq!(own(names), ["calculate", "shout", "spare"]);
    let (theirs, _) = listing(&app.state, McpListing::Compact, "someone-else").await;
    assert_eq!(own(theirs), ["generate_uuid"]);
}
