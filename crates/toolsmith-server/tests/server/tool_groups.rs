//! Tool groups: a disabled group's tools are gone from every face (REST lists and exports, MCP
//! `tools/list`, `use_tool`, `utils.callTool` in a JS tool, calls answer `not_found`; `search_tools`
//! names them only as tools of a switched-off group, with how to switch it on), `dependsOn` refuses a broken switch with the fix, aliases and the policy's
//! `group:` entries name the real groups, and every switch is audited.

use crate::mcp_protocol::Session;
use crate::rest_support::TestApp;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

fn names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {list}"))
        .iter()
        .map(|t| {
            t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

async fn switch(app: &TestApp, id: &str, enabled: bool) -> crate::rest_support::TestResponse {
    app.json(
        Method::PUT,
        &format!("/api/v1/tool-groups/{id}"),
        &json!({"enabled": enabled}),
    )
    .await
}

/// What every face shows of `calculate` (a tool of group `core`).
async fn faces_show_calculate(app: &TestApp, session: &Session) -> [bool; 5] {
    let listed = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK);
    let exported = app
        .get("/api/v1/tools/definitions?format=openai")
        .await
        .assert_ok(StatusCode::OK);
    let (_, found, _) = session
        .ok(
            "search_tools",
            json!({"query": "calculate a math expression"}),
        )
        .await;
    // Callable as found: listed, and not as a tool of a switched-off group.
    let found = found["tools"].as_array().is_some_and(|tools| {
        tools
            .iter()
            .any(|t| t["name"] == "calculate" && t.get("offGroup").is_none())
    });
    let executed = app
        .post(
            "/api/v1/tools/calculate/execute",
            &json!({"arguments": {"expression": "6*7"}}),
        )
        .await;
    [
        names(&listed).contains(&"calculate".to_owned()),
        names(&exported).contains(&"calculate".to_owned()),
        session.names().await.contains(&"calculate".to_owned()),
        found,
        executed.status == StatusCode::OK,
    ]
}

#[tokio::test]
async fn a_disabled_group_is_invisible_on_every_face_until_enabled_again() {
    let app = TestApp::new().await;
    let session = Session::open(&app.state, "default").await;
    assert_eq!(faces_show_calculate(&app, &session).await, [true; 5]);
    let groups = app
        .get("/api/v1/tool-groups")
        .await
        .assert_ok(StatusCode::OK);
    let core = &groups["groups"][0];
    assert_eq!(core["id"], "core");
    assert_eq!(core["enabled"], true);
    assert_eq!(core["defaultEnabled"], true);
    assert!(core["availableTools"].to_string().contains("calculate"));
    let before = groups["stats"]["enabledTools"].as_u64().unwrap();

    let seen = session.changes();
    let off = switch(&app, "core", false).await.assert_ok(StatusCode::OK);
    assert_eq!(off["enabled"], false);
    session.notified(seen + 1).await;
    assert_eq!(faces_show_calculate(&app, &session).await, [false; 5]);
    // Search still names it, as a tool of the switched-off group, with what switches it on.
    let (_, found, _) = session
        .ok(
            "search_tools",
            json!({"query": "calculate a math expression"}),
        )
        .await;
    assert_eq!(found["tools"][0]["name"], "calculate", "{found}");
    assert_eq!(found["tools"][0]["offGroup"], "core", "{found}");
    assert!(
        found.to_string().contains("toolsmith groups enable core"),
        "{found}"
    );
    app.post(
        "/api/v1/tools/calculate/execute",
        &json!({"arguments": {"expression": "6*7"}}),
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    let unknown = session
        .call("calculate", json!({"expression": "6*7"}))
        .await
        .expect_err("an unknown tool is a protocol error");
    assert!(
        unknown
            .message
            .contains("'calculate' is in the tool group 'core', which is disabled"),
        "{unknown:?}"
    );
    let (is_error, body, _) = session
        .ok(
            "use_tool",
            json!({"tool_name": "calculate", "arguments": {"expression": "6*7"}}),
        )
        .await;
    assert!(is_error, "{body}");
    let (_, nested, text) = session
        .ok(
            "run_js_ephemeral",
            json!({"code": "try { return await utils.callTool('calculate', {expression: '6*7'}) } catch (e) { return 'refused: ' + e.message }"}),
        )
        .await;
    assert!(
        text.starts_with("refused:") && text.contains("calculate"),
        "{text} {nested}"
    );
    let stats = app
        .get("/api/v1/tool-groups")
        .await
        .assert_ok(StatusCode::OK)["stats"]
        .clone();
    assert!(stats["enabledTools"].as_u64().unwrap() < before, "{stats}");
    let enabled = app
        .get("/api/v1/tool-groups/enabled-tools")
        .await
        .assert_ok(StatusCode::OK);
    assert!(!enabled.to_string().contains("\"calculate\""), "{enabled}");

    // The name stays the built-in's: no custom tool can take it while the group is off.
    let mut body = crate::rest_support::tool_body("calculate");
    body["name"] = json!("calculate");
    app.post("/api/v1/custom-tools", &body)
        .await
        .assert_error(StatusCode::CONFLICT, "name_taken");

    switch(&app, "core", true).await.assert_ok(StatusCode::OK);
    assert_eq!(faces_show_calculate(&app, &session).await, [true; 5]);

    let audit = app
        .get("/api/v1/audit?action=policy.")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        audit["entries"].as_array().map(Vec::len),
        Some(2),
        "{audit}"
    );
}

#[tokio::test]
async fn depends_on_refuses_a_broken_switch_and_names_the_fix() {
    let app = TestApp::new().await;
    switch(&app, "filesystem", false)
        .await
        .assert_ok(StatusCode::OK);
    let why = switch(&app, "git", true)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(
        why.contains("depends on 'filesystem'") && why.contains("enable 'filesystem' too"),
        "{why}"
    );
    let git = app
        .get("/api/v1/tool-groups/git")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(git["enabled"], false, "a refused switch changes nothing");

    // The alias names the same group.
    switch(&app, "fs", true).await.assert_ok(StatusCode::OK);
    switch(&app, "git", true).await.assert_ok(StatusCode::OK);
    let why = switch(&app, "filesystem", false)
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("'git' depends on 'filesystem'"), "{why}");
    let policy = app.get("/api/v1/policies").await.assert_ok(StatusCode::OK);
    assert_eq!(
        policy["policy"]["tool_groups"]["enable"],
        json!(["git"]),
        "{policy}"
    );

    let of = app
        .get("/api/v1/tool-groups?tool=git_status")
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(of["groups"].as_array().map(Vec::len), Some(1));
    assert_eq!(of["groups"][0]["id"], "git");
    app.get("/api/v1/tool-groups?tool=shout")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    let unknown = app
        .get("/api/v1/tool-groups/nope")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    assert!(
        unknown.contains("codeExecution"),
        "names the groups: {unknown}"
    );
    switch(&app, "nope", true)
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/git",
        &json!({"enabled": "yes"}),
    )
    .await
    .assert_error(StatusCode::BAD_REQUEST, "invalid_body");
}

#[tokio::test]
async fn the_policy_names_groups_by_id_and_alias_and_refuses_unknown_switches() {
    let app = TestApp::new().await;
    for policy in [
        json!({"profile": "coding"}),
        json!({"deny": ["group:fs", "group:runtime", "group:web"]}),
        json!({"allow": ["group:filesystem", "group:core"]}),
    ] {
        app.json(Method::PUT, "/api/v1/policies", &json!({"policy": policy}))
            .await
            .assert_ok(StatusCode::OK);
    }
    app.json(
        Method::PUT,
        "/api/v1/policies",
        &json!({"policy": {"deny": ["group:core"]}}),
    )
    .await
    .assert_ok(StatusCode::OK);
    let listed = app.get("/api/v1/tools").await.assert_ok(StatusCode::OK);
    assert!(!names(&listed).contains(&"calculate".to_owned()));

    let why = app
        .json(
            Method::PUT,
            "/api/v1/policies",
            &json!({"policy": {"tool_groups": {"enable": ["nope"]}}}),
        )
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(
        why.contains("unknown group 'nope'") && why.contains("webFetch"),
        "{why}"
    );
    let why = app
        .json(
            Method::PUT,
            "/api/v1/policies",
            &json!({"policy": {"toolGroups": {"enable": ["pdf"], "disable": ["filesystem"]}}}),
        )
        .await
        .assert_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_error");
    assert!(why.contains("'pdf' depends on 'filesystem'"), "{why}");
}
