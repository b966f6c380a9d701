//! The web tools end to end: each tool through a real `Pipeline` with the real egress guard
//! (`GuardClient`) against an HTTP server this test starts on 127.0.0.1 — the only address
//! any request goes to. Loopback is allow-listed (`allowed_private_hosts`) for the server's
//! port only, as an administrator would for an on-premises host.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::header;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use serde_json::{Value, json};
use toolsmith_builtins::web::GuardClient;
use toolsmith_builtins::workspace::{WorkspaceSettings, Workspaces};
use toolsmith_builtins::{BuiltinEnv, ConfigValues};
use toolsmith_core::{ErrorKind, Pipeline, PipelineLimits, ToolContext, ToolRegistry, ToolResult};
use toolsmith_egress::{EgressGuard, EgressPolicy};

mod pages;

const PAGE: &str = "<html><head><title>Hello  Page</title></head><body><h1>Welcome</h1>\
    <p>The quick brown fox.</p><a href=\"/next\">next</a> <a href=\"https://example.org/x\">x</a>\
    <script>var hidden = 1;</script></body></html>";

/// The test's own web server: a page, JSON echo, 6 MB, a slow answer, redirects, a search.
async fn server() -> String {
    let big = "a".repeat(6 * 1024 * 1024);
    let app = Router::new()
        .route("/page", get(|| async { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], PAGE) }))
        .route("/text", get(|| async { "plain words" }))
        .route("/html/{name}", get(pages::serve))
        .route(
            "/echo",
            post(|headers: axum::http::HeaderMap, body: String| async move {
                let ct = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
                axum::Json(json!({"got": serde_json::from_str::<Value>(&body).ok(), "contentType": ct, "raw": body}))
            }),
        )
        .route("/big", get(move || { let big = big.clone(); async move { big } }))
        .route("/slow", get(|| async { tokio::time::sleep(Duration::from_secs(5)).await; "late" }))
        .route("/to-page", get(|| async { Redirect::temporary("/page") }))
        .route("/to-private", get(|| async { Redirect::temporary("http://localhost:9/secret") }))
        .route("/file.bin", get(|| async { vec![0u8, 1, 2, 255] }))
        .route("/missing", get(|| async { (axum::http::StatusCode::NOT_FOUND, "nope").into_response() }))
        .route(
            "/searx/search",
            get(|axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>| async move {
                assert_eq!(q.get("format").map(String::as_str), Some("json"));
                let query = q.get("q").cloned().unwrap_or_default();
                let results: Vec<Value> = (0..30)
                    .map(|i| json!({"title": format!("{query} {i}"), "url": format!("https://example.org/{i}"), "content": "snippet"}))
                    .collect();
                axum::Json(json!({"results": results}))
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}")
}

/// A fixed Config Center: owner `alice` has the service `web_search` pointing at `base`.
#[derive(Debug)]
struct Config(Option<String>);

#[async_trait::async_trait]
impl ConfigValues for Config {
    async fn values(&self, owner: &str, service: &str) -> Option<BTreeMap<String, Value>> {
        let base = self.0.clone()?;
        (owner == "alice" && service == "web_search")
            .then(|| BTreeMap::from([("base_url".to_owned(), json!(base))]))
    }
}

struct Web {
    base: String,
    pipeline: Pipeline,
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
}

impl Web {
    /// The tools with loopback allow-listed for the test server (when `allow`).
    async fn new(allow: bool) -> Web {
        let base = server().await;
        let host = base.trim_start_matches("http://").to_owned();
        let policy = EgressPolicy {
            allowed_private_hosts: if allow {
                vec![host.parse().unwrap()]
            } else {
                Vec::new()
            },
            ..EgressPolicy::default()
        };
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let env = BuiltinEnv {
            workspaces: Some(Arc::new(
                Workspaces::open(WorkspaceSettings::new(root.clone())).unwrap(),
            )),
            web: Some(Arc::new(GuardClient::new(
                EgressGuard::new(policy).unwrap(),
                HashMap::new(),
            ))),
            config: Some(Arc::new(Config(Some(format!("{base}/searx"))))),
            ..BuiltinEnv::default()
        };
        let registry = ToolRegistry::default();
        toolsmith_builtins::register_all(&registry, &env).unwrap();
        Web {
            base,
            pipeline: Pipeline::new(Arc::new(registry), PipelineLimits::default()),
            _tmp: tmp,
            root,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolResult {
        self.pipeline
            .execute(tool, &args.to_string(), ToolContext::new("alice"))
            .await
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        let res = self.call(tool, args.clone()).await;
        crate::support::succeeded(tool, &args, res)
    }

    async fn fails(&self, tool: &str, args: Value, kind: ErrorKind) -> String {
        let res = self.call(tool, args.clone()).await;
        crate::support::failed(tool, &args, &res, kind)
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

#[tokio::test]
async fn fetch_web_page_and_web_fetch_turn_html_into_text_with_title_and_links() {
    let web = Web::new(true).await;
    for tool in ["fetch_web_page", "web_fetch"] {
        let out = web.ok(tool, json!({"url": web.url("/page")})).await;
        assert_eq!(out["title"], "Hello Page");
        let text = out["text"].as_str().unwrap();
        assert!(
            text.contains("Welcome") && text.contains("The quick brown fox."),
            "{text}"
        );
        assert!(!text.contains("<p>") && !text.contains("hidden"), "{text}");
        assert_eq!(
            out["links"],
            json!([web.url("/next"), "https://example.org/x"])
        );
        assert_eq!(out["truncated"], false);
    }
    let cut = web
        .ok(
            "web_fetch",
            json!({"url": web.url("/page"), "maxLength": 5}),
        )
        .await;
    assert_eq!(cut["text"].as_str().unwrap().chars().count(), 5);
    assert_eq!(cut["truncated"], true);
    // A redirect on the allowed host is followed; plain text comes back as is.
    let moved = web
        .ok("fetch_web_page", json!({"url": web.url("/to-page")}))
        .await;
    assert_eq!(moved["url"], web.url("/page"));
    assert_eq!(
        web.ok("web_fetch", json!({"url": web.url("/text")})).await["text"],
        "plain words"
    );
}

#[tokio::test]
async fn http_request_and_json_api_send_and_read() {
    let web = Web::new(true).await;
    let out = web
        .ok("http_request", json!({"url": web.url("/page")}))
        .await;
    assert_eq!(out["status"], 200);
    assert_eq!(out["body"], PAGE);
    assert!(
        out["headers"]["content-type"]
            .as_str()
            .unwrap()
            .starts_with("text/html")
    );
    let missing = web
        .ok("http_request", json!({"url": web.url("/missing")}))
        .await;
    assert_eq!(
        (missing["status"].clone(), missing["ok"].clone()),
        (json!(404), json!(false))
    );
    let posted = web
        .ok("http_request", json!({"url": web.url("/echo"), "method": "POST", "body": "{\"a\":1}", "headers": {"Content-Type": "application/json"}}))
        .await;
    assert_eq!(
        serde_json::from_str::<Value>(posted["body"].as_str().unwrap()).unwrap()["got"],
        json!({"a": 1})
    );
    let api = web
        .ok(
            "json_api",
            json!({"url": web.url("/echo"), "method": "POST", "body": {"n": [1, 2]}}),
        )
        .await;
    assert_eq!(api["data"]["got"], json!({"n": [1, 2]}));
    assert_eq!(api["data"]["contentType"], "application/json");
    let not_json = web.ok("json_api", json!({"url": web.url("/text")})).await;
    assert!(
        not_json["error"]
            .as_str()
            .unwrap()
            .contains("use http_request"),
        "{not_json}"
    );
}

#[tokio::test]
async fn bad_arguments_name_the_fix() {
    let web = Web::new(true).await;
    for tool in ["http_request", "json_api", "fetch_web_page", "web_fetch"] {
        let msg = web
            .fails(
                tool,
                json!({"url": "file:///etc/passwd"}),
                ErrorKind::InvalidArguments,
            )
            .await;
        assert!(msg.contains("only http: and https:"), "{tool}: {msg}");
        let msg = web
            .fails(
                tool,
                json!({"url": "not a url"}),
                ErrorKind::InvalidArguments,
            )
            .await;
        assert!(msg.contains("https://example.com/page"), "{tool}: {msg}");
    }
    let msg = web
        .fails(
            "download_file",
            json!({"url": "ftp://x/y", "path": "a"}),
            ErrorKind::InvalidArguments,
        )
        .await;
    assert!(msg.contains("only http: and https:"), "{msg}");
    let headers: serde_json::Map<String, Value> =
        (0..51).map(|i| (format!("x-h{i}"), json!("v"))).collect();
    let msg = web
        .fails(
            "http_request",
            json!({"url": web.url("/page"), "headers": headers}),
            ErrorKind::InvalidArguments,
        )
        .await;
    assert!(msg.contains("at most 50"), "{msg}");
    let body = "x".repeat(1024 * 1024 + 1);
    let msg = web
        .fails(
            "http_request",
            json!({"url": web.url("/echo"), "method": "POST", "body": body}),
            ErrorKind::InvalidArguments,
        )
        .await;
    assert!(msg.contains("smaller body"), "{msg}");
    let msg = web
        .fails(
            "search_web",
            json!({"query": "   "}),
            ErrorKind::InvalidArguments,
        )
        .await;
    assert!(msg.contains("words to search for"), "{msg}");
}

#[tokio::test]
async fn limits_size_time_and_the_egress_guard() {
    let web = Web::new(true).await;
    // 6 MB is over the 5 MB cap.
    let msg = web
        .fails(
            "http_request",
            json!({"url": web.url("/big")}),
            ErrorKind::OutputTooLarge,
        )
        .await;
    assert!(msg.contains("larger than 5242880 bytes"), "{msg}");
    let msg = web
        .fails(
            "download_file",
            json!({"url": web.url("/big"), "path": "big.txt"}),
            ErrorKind::OutputTooLarge,
        )
        .await;
    assert!(msg.contains("smaller resource"), "{msg}");
    // A slow server hits the (shortened) timeout.
    let msg = web
        .fails(
            "web_fetch",
            json!({"url": web.url("/slow"), "timeoutMs": 300}),
            ErrorKind::Timeout,
        )
        .await;
    assert!(msg.contains("took longer"), "{msg}");
    // A redirect to a host that is not allow-listed and resolves to loopback is refused.
    let msg = web
        .fails(
            "fetch_web_page",
            json!({"url": web.url("/to-private")}),
            ErrorKind::Denied,
        )
        .await;
    assert!(msg.contains("allowed_private_hosts"), "{msg}");
    // Without the allow-list entry, loopback itself is refused.
    let closed = Web::new(false).await;
    for tool in ["http_request", "json_api", "web_fetch"] {
        let msg = closed
            .fails(tool, json!({"url": closed.url("/page")}), ErrorKind::Denied)
            .await;
        assert!(msg.contains("allowed_private_hosts"), "{tool}: {msg}");
    }
}

#[tokio::test]
async fn download_file_writes_into_the_workspace() {
    let web = Web::new(true).await;
    let out = web
        .ok(
            "download_file",
            json!({"url": web.url("/file.bin"), "path": "dl/f.bin"}),
        )
        .await;
    assert_eq!(
        (out["bytes"].clone(), out["path"].clone()),
        (json!(4), json!("dl/f.bin"))
    );
    let file = web
        .root
        .join("alice")
        .join("workspace")
        .join("dl")
        .join("f.bin");
    assert_eq!(std::fs::read(&file).unwrap(), [0u8, 1, 2, 255]);
    let msg = web
        .fails(
            "download_file",
            json!({"url": web.url("/file.bin"), "path": "dl/f.bin"}),
            ErrorKind::ExecutionError,
        )
        .await;
    assert!(msg.to_lowercase().contains("overwrite"), "{msg}");
    web.ok(
        "download_file",
        json!({"url": web.url("/page"), "path": "dl/f.bin", "overwrite": true}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), PAGE);
    let msg = web
        .fails(
            "download_file",
            json!({"url": web.url("/file.bin"), "path": "../escape"}),
            ErrorKind::InvalidArguments,
        )
        .await;
    assert!(!msg.is_empty());
    let msg = web
        .fails(
            "download_file",
            json!({"url": web.url("/missing"), "path": "m"}),
            ErrorKind::InvalidArguments,
        )
        .await;
    assert!(
        msg.contains("HTTP 404") && msg.contains("check the URL"),
        "{msg}"
    );
    assert!(!web.root.join("alice").join("workspace").join("m").exists());
}

#[tokio::test]
async fn search_web_and_web_search_ask_the_configured_searxng() {
    let web = Web::new(true).await;
    for tool in ["search_web", "web_search"] {
        let out = web
            .ok(tool, json!({"query": "rust lang", "maxResults": 3}))
            .await;
        assert_eq!(out["count"], 3);
        assert_eq!(
            out["results"][0],
            json!({"title": "rust lang 0", "url": "https://example.org/0", "snippet": "snippet"})
        );
    }
    assert_eq!(
        web.ok("search_web", json!({"query": "q"})).await["count"],
        10
    );
    // Another owner has nothing configured: the answer names the service and field.
    let res = web
        .pipeline
        .execute(
            "web_search",
            &json!({"query": "q"}).to_string(),
            ToolContext::new("bob"),
        )
        .await;
    assert!(res.is_error);
    let msg = res.error_message().unwrap();
    assert!(
        msg.contains("'web_search'") && msg.contains("'base_url'"),
        "{msg}"
    );
}

#[tokio::test]
async fn without_a_client_the_tools_say_what_is_missing() {
    let registry = ToolRegistry::default();
    toolsmith_builtins::register_all(&registry, &BuiltinEnv::default()).unwrap();
    let pipeline = Pipeline::new(Arc::new(registry), PipelineLimits::default());
    let res = pipeline
        .execute(
            "http_request",
            r#"{"url":"https://example.org"}"#,
            ToolContext::new("a"),
        )
        .await;
    assert!(res.is_error);
    assert!(
        res.error_message().unwrap().contains("BuiltinEnv::web"),
        "{:?}",
        res.content
    );
}
