//! Shared by the REST test files: the real router over a fresh SQLite store in a temp dir,
//! driven in-process with `oneshot`, and small helpers to build requests and read envelopes.

#![allow(dead_code)]

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode};
use serde_json::{Value, json};
use tempfile::TempDir;
use toolsmith_server::{AppState, ServerSettings};
use toolsmith_service::{ToolService, ToolServiceSettings};
use tower::ServiceExt;

/// The application over its own store; the temp dir lives as long as this value.
pub struct TestApp {
    pub state: AppState,
    pub router: Router,
    _dir: TempDir,
    /// The PostgreSQL server the app's store is on ([`TestApp::on_postgres`]); none on SQLite.
    _cluster: Option<toolsmith_store::testkit::PgCluster>,
}

/// One answer, body parsed as JSON (`Value::Null` for an empty or non-JSON body; `text` keeps
/// it as it was).
#[derive(Debug)]
pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub json: Value,
    pub text: String,
}

impl TestApp {
    pub async fn new() -> TestApp {
        TestApp::with_config(ServerSettings::default()).await
    }

    pub async fn with_config(config: ServerSettings) -> TestApp {
        TestApp::with_configs(ToolServiceSettings::default(), config).await
    }

    pub async fn with_configs(service: ToolServiceSettings, config: ServerSettings) -> TestApp {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("toolsmith.db");
        TestApp::open(dir, &db, service, config).await
    }

    /// Another application on this one's store (opened again with other settings); `self`
    /// must outlive it, as it owns the store's folder.
    pub async fn reopen(&self, service: ToolServiceSettings, config: ServerSettings) -> TestApp {
        let dir = tempfile::tempdir().expect("temp dir");
        TestApp::open(dir, &self.store_path(), service, config).await
    }

    /// The application on the SQLite file `db`, keeping `dir` alive as long as it lives.
    async fn open(
        dir: TempDir,
        db: &std::path::Path,
        service: ToolServiceSettings,
        config: ServerSettings,
    ) -> TestApp {
        // A fresh Config Center key per app, as `toolsmith serve` would load from its data dir.
        let key = toolsmith_secrets::SecretKey::generate().expect("a key");
        let connectors = toolsmith_service::Connectors {
            cipher: Some(Arc::new(toolsmith_secrets::Cipher::new(&key))),
            ..toolsmith_service::Connectors::default()
        };
        let service = ToolService::open_sqlite(service, db, connectors)
            .await
            .expect("service opens");
        TestApp::serving(service, config, dir, None)
    }

    /// The application on a fresh database of a PostgreSQL server of its own (the project's
    /// scripts install PostgreSQL; `None`, the test skipped, only outside CI when it is missing).
    pub async fn on_postgres(
        service: ToolServiceSettings,
        config: ServerSettings,
    ) -> Option<TestApp> {
        let cluster = toolsmith_store::testkit::pg_or_skip()?;
        let url = cluster.create_database().expect("a database");
        let store = toolsmith_store::PgStore::connect(&url, &toolsmith_store::PgOptions::default())
            .await
            .expect("the store connects");
        let key = toolsmith_secrets::SecretKey::generate().expect("a key");
        let connectors = toolsmith_service::Connectors {
            cipher: Some(Arc::new(toolsmith_secrets::Cipher::new(&key))),
            ..toolsmith_service::Connectors::default()
        };
        let service = ToolService::open_with(service, Arc::new(store), connectors)
            .await
            .expect("service opens");
        let dir = tempfile::tempdir().expect("temp dir");
        Some(TestApp::serving(service, config, dir, Some(cluster)))
    }

    fn serving(
        service: Arc<ToolService>,
        config: ServerSettings,
        dir: TempDir,
        cluster: Option<toolsmith_store::testkit::PgCluster>,
    ) -> TestApp {
        let state = AppState::new(service, Arc::new(config));
        let router = toolsmith_server::app::router(state.clone());
        TestApp {
            state,
            router,
            _dir: dir,
            _cluster: cluster,
        }
    }

    /// The SQLite file the app's service runs on.
    pub fn store_path(&self) -> std::path::PathBuf {
        self._dir.path().join("toolsmith.db")
    }

    /// Every byte of the SQLite store (the database file and its WAL) as lossy text: what
    /// someone reading the files would find.
    pub fn stored_text(&self) -> String {
        let mut stored = Vec::new();
        for suffix in ["", "-wal"] {
            let mut path = self.store_path().into_os_string();
            path.push(suffix);
            stored.extend(std::fs::read(path).unwrap_or_default());
        }
        String::from_utf8_lossy(&stored).into_owned()
    }

    /// Creates the Config Center service `service` with `api_key` (a secret) set to `value`.
    pub async fn config_secret(&self, service: &str, value: &str) {
        self.post(
            "/api/v1/config/services",
            &serde_json::json!({"name": service}),
        )
        .await
        .assert_ok(StatusCode::CREATED);
        self.post(
            &format!("/api/v1/config/services/{service}/entries"),
            &serde_json::json!({"values": {"api_key": value}}),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    }

    /// Sends a request as is.
    pub async fn send(&self, request: Request<Body>) -> TestResponse {
        let res = self
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("the router never fails");
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
            .await
            .expect("body reads");
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let json = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        TestResponse {
            status,
            headers,
            json,
            text,
        }
    }

    /// A request without a body.
    pub async fn call(&self, method: Method, path: &str) -> TestResponse {
        self.send(request(method, path).body(Body::empty()).expect("request"))
            .await
    }

    pub async fn get(&self, path: &str) -> TestResponse {
        self.call(Method::GET, path).await
    }

    /// A request with a JSON body.
    pub async fn json(&self, method: Method, path: &str, body: &Value) -> TestResponse {
        self.send(json_request(method, path, body)).await
    }

    pub async fn post(&self, path: &str, body: &Value) -> TestResponse {
        self.json(Method::POST, path, body).await
    }

    pub async fn patch(&self, path: &str, body: &Value) -> TestResponse {
        self.json(Method::PATCH, path, body).await
    }

    /// A request with a raw body and content type.
    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: impl Into<Body>,
    ) -> TestResponse {
        let mut builder = request(method, path);
        if let Some(ct) = content_type {
            builder = builder.header("content-type", ct);
        }
        self.send(builder.body(body.into()).expect("request")).await
    }

    /// Stores an API token for `user` (bound to `agent`, if given) with `scopes` and returns its
    /// secret. Once one exists, every request needs a token.
    pub async fn token(
        &self,
        user: &str,
        agent: Option<&str>,
        scopes: &[toolsmith_server::auth::Scope],
    ) -> String {
        let (record, secret) = toolsmith_server::auth::new_token(user, "test", scopes, agent);
        self.state
            .service
            .create_token(&toolsmith_service::Actor::user(user), &record)
            .await
            .expect("the token is stored");
        secret
    }

    /// Creates a tool through the API and returns its `data`.
    pub async fn create_tool(&self, body: &Value) -> Value {
        let res = self.post("/api/v1/custom-tools", body).await;
        assert_eq!(res.status, StatusCode::CREATED, "{}", res.text);
        res.json["data"].clone()
    }

    /// Creates the tool `name` with a small working definition.
    pub async fn create_named(&self, name: &str) -> Value {
        self.create_tool(&tool_body(name)).await
    }
}

/// Calls the tool `tool` with `arguments` through REST (`POST /api/v1/tools/{tool}/execute`).
pub async fn execute(app: &TestApp, tool: &str, arguments: Value) -> TestResponse {
    app.post(
        &format!("/api/v1/tools/{tool}/execute"),
        &json!({"arguments": arguments}),
    )
    .await
}

/// Calls `tool` with `arguments`, which must wait for a person; shows the approval as listed
/// (`GET /api/v1/approvals`) to `check`, allows it once and returns the answer of the call run
/// again.
pub async fn approved(
    app: &TestApp,
    tool: &str,
    arguments: Value,
    check: impl Fn(&Value),
) -> TestResponse {
    let waiting = execute(app, tool, arguments.clone())
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(
        waiting["metadata"]["errorKind"], "approval_required",
        "{waiting}"
    );
    let id = waiting["content"]["approvalId"]
        .as_str()
        .unwrap()
        .to_owned();
    let listed = app.get("/api/v1/approvals").await.assert_ok(StatusCode::OK);
    let shown = listed["approvals"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id.as_str())
        .unwrap()
        .clone();
    check(&shown);
    app.post(
        &format!("/api/v1/approvals/{id}/decision"),
        &json!({"decision": "allow_once"}),
    )
    .await
    .assert_ok(StatusCode::OK);
    execute(app, tool, arguments).await
}

/// Whether the command sandbox (bubblewrap) works here: a missing one fails the test, or (with
/// `TOOLSMITH_ALLOW_SKIP=1`) is recorded as a skip ([`toolsmith_core::testkit`]).
pub async fn command_sandbox_works() -> bool {
    toolsmith_core::testkit::require(
        "bubblewrap (the command sandbox)",
        toolsmith_command::CommandSandbox::probe().await,
    )
    .is_some()
}

/// A server with `settings`, the workspaces of `workspace`, and the `codeExecution` group on.
pub async fn code_execution_app(
    settings: ToolServiceSettings,
    workspace: toolsmith_builtins::workspace::WorkspaceSettings,
) -> TestApp {
    let settings = ToolServiceSettings {
        workspace: Some(workspace),
        ..settings
    };
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    app.json(
        Method::PUT,
        "/api/v1/tool-groups/codeExecution",
        &json!({"enabled": true}),
    )
    .await
    .assert_ok(StatusCode::OK);
    app
}

/// Serves `app` on 127.0.0.1 at an ephemeral port for the rest of the test (an upstream that
/// HTTP tools and `fetch` reach); its `host:port`.
pub async fn serve_loopback(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    addr.to_string()
}

/// Service settings whose egress may reach `host` (and nothing else private), over plain http.
pub fn settings_reaching(host: &str) -> ToolServiceSettings {
    let mut service = ToolServiceSettings {
        allow_plain_http: true,
        ..ToolServiceSettings::default()
    };
    service.egress.allow_plain_http = true;
    service.egress.allowed_private_hosts = vec![host.parse().unwrap()];
    service
}

/// An app whose egress may reach `host` (and nothing else private), over plain http.
pub async fn app_reaching(host: &str) -> TestApp {
    TestApp::with_configs(settings_reaching(host), ServerSettings::default()).await
}

pub fn request(method: Method, path: &str) -> axum::http::request::Builder {
    Request::builder()
        .method(method)
        .uri(path)
        .header("host", "127.0.0.1")
}

pub fn json_request(method: Method, path: &str, body: &Value) -> Request<Body> {
    request(method, path)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("request")
}

/// A tool that upper-cases `text`.
pub fn tool_body(name: &str) -> Value {
    json!({
        "name": name,
        "description": "Upper-cases a text",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text"}},
            "required": ["text"],
            "additionalProperties": false
        },
        "code": "return { upper: args.text.toUpperCase() };",
        "category": "Text",
        "tags": ["case", "upper"]
    })
}

impl TestResponse {
    /// Asserts the error envelope with this status and code, and returns the message.
    #[track_caller]
    pub fn assert_error(&self, status: StatusCode, code: &str) -> String {
        assert_eq!(self.status, status, "{}", self.text);
        assert_eq!(self.json["success"], json!(false), "{}", self.text);
        assert_eq!(self.json["error"]["code"], json!(code), "{}", self.text);
        assert_eq!(
            self.headers
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
        assert_meta(&self.json, &self.headers);
        self.json["error"]["message"]
            .as_str()
            .expect("message is a string")
            .to_owned()
    }

    /// Asserts the success envelope with this status, and returns `data`.
    #[track_caller]
    pub fn assert_ok(&self, status: StatusCode) -> Value {
        assert_eq!(self.status, status, "{}", self.text);
        assert_eq!(self.json["success"], json!(true), "{}", self.text);
        assert_meta(&self.json, &self.headers);
        self.json["data"].clone()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// `meta.requestId` is the `X-Request-Id` header; `meta.timestamp` is RFC 3339 UTC.
#[track_caller]
pub fn assert_meta(json: &Value, headers: &HeaderMap) {
    let id = json["meta"]["requestId"].as_str().expect("meta.requestId");
    assert_eq!(
        headers.get("x-request-id"),
        Some(&HeaderValue::from_str(id).expect("header value"))
    );
    let ts = json["meta"]["timestamp"].as_str().expect("meta.timestamp");
    assert!(
        chrono::DateTime::parse_from_rfc3339(ts).is_ok() && ts.ends_with('Z'),
        "{ts}"
    );
    let keys: Vec<&String> = json["meta"].as_object().expect("meta").keys().collect();
    assert_eq!(keys, ["requestId", "timestamp"]);
}
