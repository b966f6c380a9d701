//! Access control through the real router: no auth by default, bearer tokens with scopes and
//! per-user scoping once tokens exist, the admin token, and read-only mode.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use serde_json::{Value, json};
use toolsmith_server::auth::{Scope, new_token};
use toolsmith_server::{AppState, ServerSettings, app};
use toolsmith_service::{ToolService, ToolServiceSettings};
use tower::ServiceExt;

struct Server {
    _dir: tempfile::TempDir,
    state: AppState,
}

async fn server(config: ServerSettings) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let service = ToolService::open_sqlite(
        ToolServiceSettings::default(),
        &dir.path().join("t.db"),
        toolsmith_service::Connectors::default(),
    )
    .await
    .unwrap();
    Server {
        _dir: dir,
        state: AppState::new(service, Arc::new(config)),
    }
}

impl Server {
    async fn token(&self, user: &str, scopes: &[Scope]) -> String {
        let (record, secret) = new_token(user, "test", scopes, None);
        self.state
            .service
            .create_token(&toolsmith_service::Actor::user(user), &record)
            .await
            .unwrap();
        secret
    }

    async fn call(
        &self,
        method: &str,
        uri: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value, Option<String>) {
        self.call_as_agent(method, uri, token, None, body).await
    }

    /// [`Server::call`] with `X-Toolsmith-Agent: agent`.
    async fn call_as_agent(
        &self,
        method: &str,
        uri: &str,
        token: Option<&str>,
        agent: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value, Option<String>) {
        let mut request = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::HOST, "127.0.0.1");
        if let Some(token) = token {
            request = request.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(agent) = agent {
            request = request.header("x-toolsmith-agent", agent);
        }
        let request = match body {
            Some(body) => request
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string())),
            None => request.body(Body::empty()),
        }
        .unwrap();
        let response = app::router(self.state.clone())
            .oneshot(request)
            .await
            .unwrap();
        let status = response.status();
        let challenge = response
            .headers()
            .get(header::WWW_AUTHENTICATE)
            .map(|v| v.to_str().unwrap().to_owned());
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        (status, body, challenge)
    }
}

fn new_tool(name: &str) -> Value {
    json!({"name": name, "description": "d", "parameters": {"type": "object"}, "code": "return 'hi'"})
}

#[tokio::test]
async fn without_tokens_everything_is_open_on_loopback() {
    let s = server(ServerSettings::default()).await;
    let (status, _, _) = s
        .call("POST", "/api/v1/custom-tools", None, Some(new_tool("open")))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, body, _) = s.call("GET", "/api/v1/custom-tools", None, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn once_tokens_exist_every_request_needs_one() {
    let s = server(ServerSettings::default()).await;
    let reader = s.token("alice", &[Scope::ToolsRead]).await;
    let (status, body, challenge) = s.call("GET", "/api/v1/custom-tools", None, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "unauthorized");
    assert_eq!(challenge.as_deref(), Some("Bearer"));
    let (status, _, _) = s
        .call("GET", "/api/v1/custom-tools", Some("tsk_forged"), None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, _) = s
        .call(
            "POST",
            "/mcp",
            None,
            Some(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "MCP is behind the same door"
    );
    let (status, _, _) = s.call("GET", "/livez", None, None).await;
    assert_eq!(status, StatusCode::OK, "health probes stay open");
    let (status, _, _) = s
        .call("GET", "/api/v1/custom-tools", Some(&reader), None)
        .await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn scopes_limit_what_a_token_may_do() {
    let s = server(ServerSettings::default()).await;
    let reader = s.token("alice", &[Scope::ToolsRead]).await;
    let writer = s
        .token("alice", &[Scope::ToolsRead, Scope::ToolsWrite])
        .await;
    let runner = s.token("alice", &[Scope::ToolsExecute]).await;
    let (status, body, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools",
            Some(&reader),
            Some(new_tool("t")),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tools:write")
    );
    let (status, _, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools",
            Some(&writer),
            Some(new_tool("t")),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools/t/execute",
            Some(&reader),
            Some(json!({"arguments": {}})),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, body, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools/t/execute",
            Some(&runner),
            Some(json!({"arguments": {}})),
        )
        .await;
    assert_eq!(
        (status, &body["data"]["content"]),
        (StatusCode::OK, &json!("hi"))
    );
}

#[tokio::test]
async fn users_never_see_each_others_tools() {
    let s = server(ServerSettings::default()).await;
    let alice = s
        .token(
            "alice",
            &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute],
        )
        .await;
    let bob = s
        .token(
            "bob",
            &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute],
        )
        .await;
    let (status, created, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools",
            Some(&alice),
            Some(new_tool("secret")),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let id = created["data"]["id"].as_str().unwrap().to_owned();
    for uri in [
        format!("/api/v1/custom-tools/{id}"),
        "/api/v1/custom-tools/secret".to_owned(),
    ] {
        let (status, _, _) = s.call("GET", &uri, Some(&bob), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "404, not 403: {uri}");
    }
    let (status, _, _) = s
        .call(
            "POST",
            "/api/v1/tools/secret/execute",
            Some(&bob),
            Some(json!({"arguments": {}})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, listed, _) = s
        .call("GET", "/api/v1/custom-tools", Some(&bob), None)
        .await;
    assert_eq!(listed["data"]["total"], json!(0), "{listed}");
    let (status, _, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools",
            Some(&bob),
            Some(new_tool("secret")),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "the same name is free for another user"
    );
}

#[tokio::test]
async fn with_an_admin_token_writes_need_admin() {
    let config = ServerSettings {
        admin_token: Some("let-me-in-0123456789".into()),
        ..ServerSettings::default()
    };
    let s = server(config).await;
    let writer = s
        .token("default", &[Scope::ToolsRead, Scope::ToolsWrite])
        .await;
    let (status, _, _) = s
        .call("POST", "/api/v1/custom-tools", None, Some(new_tool("t")))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools",
            Some(&writer),
            Some(new_tool("t")),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools",
            Some("let-me-in-0123456789"),
            Some(new_tool("t")),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _, _) = s
        .call("GET", "/api/v1/custom-tools/t", Some(&writer), None)
        .await;
    assert_eq!(
        status,
        StatusCode::OK,
        "reads still work with an ordinary token"
    );
}

#[tokio::test]
async fn read_only_mode_refuses_writes_only() {
    let s = server(ServerSettings::default()).await;
    s.call("POST", "/api/v1/custom-tools", None, Some(new_tool("t")))
        .await;
    let s = Server {
        state: AppState {
            config: Arc::new(ServerSettings {
                read_only: true,
                ..ServerSettings::default()
            }),
            ..s.state.clone()
        },
        ..s
    };
    let (status, body, _) = s
        .call("POST", "/api/v1/custom-tools", None, Some(new_tool("u")))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read-only"),
        "{body}"
    );
    let (status, _, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools/t/disable",
            None,
            Some(json!({})),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, _) = s.call("GET", "/api/v1/custom-tools/t", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools/t/execute",
            None,
            Some(json!({"arguments": {}})),
        )
        .await;
    assert_eq!(
        (status, &body["data"]["content"]),
        (StatusCode::OK, &json!("hi"))
    );
}

/// A token bound to an agent acts as that agent: the agent's policy applies, and the
/// `X-Toolsmith-Agent` header cannot swap it for a less restricted agent.
#[tokio::test]
async fn a_token_bound_to_an_agent_gets_that_agents_policy_whatever_the_header_says() {
    let s = server(ServerSettings::default()).await;
    s.state
        .service
        .set_policy(
            &toolsmith_service::Actor::user("admin"),
            json!({"agents": {"reader": {"deny": ["calculate"]}}}),
            None,
        )
        .await
        .unwrap();
    let (record, secret) = new_token(
        "alice",
        "bot",
        &[Scope::ToolsRead, Scope::ToolsExecute],
        Some("reader"),
    );
    s.state
        .service
        .create_token(&toolsmith_service::Actor::user("alice"), &record)
        .await
        .unwrap();

    let names = |body: &Value| -> Vec<String> {
        body["data"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (status, body, _) = s.call("GET", "/api/v1/tools", Some(&secret), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!names(&body).contains(&"calculate".to_owned()));

    let request = Request::builder()
        .method("GET")
        .uri("/api/v1/tools")
        .header(header::HOST, "127.0.0.1")
        .header(header::AUTHORIZATION, format!("Bearer {secret}"))
        .header("x-toolsmith-agent", "writer")
        .body(Body::empty())
        .unwrap();
    let response = app::router(s.state.clone()).oneshot(request).await.unwrap();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(
        !names(&body).contains(&"calculate".to_owned()),
        "the header swapped the agent"
    );

    let (_, body, _) = s
        .call(
            "POST",
            "/api/v1/tools/calculate/execute",
            Some(&secret),
            Some(json!({"arguments": {"expression": "2*3"}})),
        )
        .await;
    assert_eq!(body["data"]["metadata"]["errorKind"], "denied", "{body}");
}

/// `X-Toolsmith-Agent` on a token bound to no agent names an agent the caller chose itself: it
/// may narrow what the user may do, never widen it. Only a token bound to the agent gets what
/// the operator granted that agent.
#[tokio::test]
async fn a_header_chosen_agent_only_narrows_what_the_user_may_do() {
    let s = server(ServerSettings::default()).await;
    s.state
        .service
        .set_policy(
            &toolsmith_service::Actor::user("admin"),
            json!({
                "users": {"bob": {"profile": "minimal"}},
                "agents": {
                    "wide": {"profile": "full", "also_allow": ["shout"]},
                    "narrow": {"deny": ["calculate"]},
                },
            }),
            None,
        )
        .await
        .unwrap();
    let all = [Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute];
    let bob = s.token("bob", &all).await;
    let (record, bound) = new_token("bob", "wide bot", &all, Some("wide"));
    s.state
        .service
        .create_token(&toolsmith_service::Actor::user("admin"), &record)
        .await
        .unwrap();
    let (status, body, _) = s
        .call(
            "POST",
            "/api/v1/custom-tools",
            Some(&bob),
            Some(new_tool("shout")),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let listed = |body: &Value| -> Vec<String> {
        body["data"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let run = |tool: &'static str| {
        (
            format!("/api/v1/tools/{tool}/execute"),
            Some(
                json!({"arguments": if tool == "calculate" { json!({"expression": "2*3"}) } else { json!({}) }}),
            ),
        )
    };

    // Bob's profile is minimal: his custom tool is not his to run, and naming a wider agent in
    // the header does not change that.
    for agent in [None, Some("wide")] {
        let (status, body, _) = s
            .call_as_agent("GET", "/api/v1/tools", Some(&bob), agent, None)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(
            !listed(&body).contains(&"shout".to_owned()),
            "{agent:?}: {body}"
        );
        let (uri, args) = run("shout");
        let (_, body, _) = s.call_as_agent("POST", &uri, Some(&bob), agent, args).await;
        assert_eq!(
            body["data"]["metadata"]["errorKind"], "denied",
            "{agent:?}: {body}"
        );
        for uri in ["/api/v1/custom-tools/shout/execute"] {
            let (_, body, _) = s
                .call_as_agent(
                    "POST",
                    uri,
                    Some(&bob),
                    agent,
                    Some(json!({"arguments": {}})),
                )
                .await;
            assert_eq!(
                body["data"]["metadata"]["errorKind"], "denied",
                "{agent:?}: {body}"
            );
        }
    }
    // A header-chosen agent still narrows.
    let (uri, args) = run("calculate");
    let (_, body, _) = s
        .call_as_agent("POST", &uri, Some(&bob), None, args.clone())
        .await;
    assert_eq!(body["data"]["content"]["result"], 6.0, "{body}");
    let (_, body, _) = s
        .call_as_agent("POST", &uri, Some(&bob), Some("narrow"), args)
        .await;
    assert_eq!(body["data"]["metadata"]["errorKind"], "denied", "{body}");

    // The token the operator bound to `wide` gets what `wide` is granted.
    let (_, body, _) = s.call("GET", "/api/v1/tools", Some(&bound), None).await;
    assert!(listed(&body).contains(&"shout".to_owned()), "{body}");
    let (uri, args) = run("shout");
    let (_, body, _) = s.call("POST", &uri, Some(&bound), args).await;
    assert_eq!(body["data"]["content"], "hi", "{body}");
}

/// Tokens are written by `toolsmith token`, possibly another process: the server notices a
/// new or revoked token within the cache's ttl, without a restart.
#[tokio::test]
async fn tokens_created_or_revoked_while_running_take_effect_within_the_cache_ttl() {
    use toolsmith_server::auth::cache::TOKEN_CACHE_TTL;

    let s = server(ServerSettings::default()).await;
    let (status, _, _) = s.call("GET", "/api/v1/custom-tools", None, None).await;
    assert_eq!(status, StatusCode::OK, "open while no token exists");

    let (record, secret) = new_token("alice", "test", &[Scope::ToolsRead], None);
    s.state
        .service
        .create_token(&toolsmith_service::Actor::user("alice"), &record)
        .await
        .unwrap();
    tokio::time::sleep(TOKEN_CACHE_TTL).await;
    let (status, _, _) = s.call("GET", "/api/v1/custom-tools", None, None).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "closed once a token exists"
    );
    let (status, _, _) = s
        .call("GET", "/api/v1/custom-tools", Some(&secret), None)
        .await;
    assert_eq!(status, StatusCode::OK);

    assert!(
        s.state
            .service
            .revoke_token(&toolsmith_service::Actor::user("alice"), &record.id)
            .await
            .unwrap()
    );
    tokio::time::sleep(TOKEN_CACHE_TTL).await;
    let (status, body, _) = s
        .call("GET", "/api/v1/custom-tools", Some(&secret), None)
        .await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "a revoked token stops working: {body}"
    );
}
