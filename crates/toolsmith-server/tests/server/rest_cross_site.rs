//! What a web page can make a browser send, and what it cannot get done with it (issue 31).
//!
//! A page of another origin can send "simple" requests without a CORS preflight: `GET`, and
//! `POST` with no body or a `text/plain`, form-encoded or multipart body. The browser adds
//! `Origin` and (every current browser) `Sec-Fetch-Site`, which the page cannot set. Every
//! state-changing request (`POST`, `PUT`, `PATCH`, `DELETE` on `/api/v1` and `/mcp`) from
//! another site or origin, or with a body that is not JSON (YAML on the import route), is
//! refused before it is read, in every auth mode; the server's own pages (same origin) and
//! clients outside a browser (no `Origin`, no `Sec-Fetch-Site`) work as before. And every
//! route but the health probes answers only to the host names it serves (`allowed_hosts`), as
//! `/mcp` always did, so a rebound DNS name reaches nothing.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::json;
use toolsmith_core::Permission;
use toolsmith_server::ServerSettings;
use toolsmith_service::{Actor, CreateTool};

use crate::rest_support::{TestApp, TestResponse, tool_body};

const TOOLS: &str = "/api/v1/custom-tools";
const SERVER: &str = "127.0.0.1:8787";

/// How a browser marks a request, by where the page that sent it came from.
#[derive(Clone, Copy, Debug)]
enum Page {
    /// Another site (`http://evil.example`): `Sec-Fetch-Site: cross-site`.
    OtherSite,
    /// Another port of the same loopback address: same site, another origin.
    OtherPort,
    /// An older browser: `Origin` only, no `Sec-Fetch-Site`.
    OtherOriginOnly,
    /// A sandboxed frame or a `data:` page: `Origin: null`.
    Opaque,
    /// No page: a client outside a browser, or a browser too old to send either header.
    Outside,
    /// This server's own page (the web UI).
    Own,
}

impl Page {
    fn headers(self) -> Vec<(&'static str, String)> {
        let own = format!("http://{SERVER}");
        match self {
            Page::OtherSite => vec![
                ("origin", "http://evil.example".to_owned()),
                ("sec-fetch-site", "cross-site".to_owned()),
                ("sec-fetch-mode", "no-cors".to_owned()),
            ],
            Page::OtherPort => vec![
                ("origin", "http://127.0.0.1:9999".to_owned()),
                ("sec-fetch-site", "same-site".to_owned()),
                ("sec-fetch-mode", "no-cors".to_owned()),
            ],
            Page::OtherOriginOnly => vec![("origin", "http://localhost:9999".to_owned())],
            Page::Opaque => vec![
                ("origin", "null".to_owned()),
                ("sec-fetch-site", "cross-site".to_owned()),
            ],
            Page::Outside => Vec::new(),
            Page::Own => vec![
                ("origin", own),
                ("sec-fetch-site", "same-origin".to_owned()),
                ("sec-fetch-mode", "cors".to_owned()),
            ],
        }
    }
}

/// `method path` with `body` of `content_type`, as sent from `page` to `host` (no token).
async fn send(
    app: &TestApp,
    page: Page,
    host: &str,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> TestResponse {
    send_as(app, false, page, host, method, path, content_type, body).await
}

/// A tool made by the model with `shell`: it waits for a person's approval.
async fn pending_shell_tool(app: &TestApp) -> String {
    let input = CreateTool {
        kind: Default::default(),
        name: "shell_thing".to_owned(),
        description: "Runs a command".to_owned(),
        parameters: json!({"type": "object", "properties": {}}),
        code: "return 1;".to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: vec![Permission::Shell],
        requires_approval: None,
        metadata: None,
    };
    let record = app
        .state
        .service
        .create(&Actor::llm("default"), input)
        .await
        .expect("created");
    assert_eq!(record.status.as_str(), "pending_approval");
    record.id
}

const IMPORTED: &str = "name: planted\ndescription: Planted by a page\nendpoint:\n  url: 'https://evil.example/x'\n  method: GET\n";

/// What a page of `page` would try, each as a browser sends it without a preflight: `(method,
/// path, content type, body)`.
fn attempts(
    pending: &str,
    upper: &str,
    disabled: &str,
) -> Vec<(Method, String, Option<&'static str>, String)> {
    let text = Some("text/plain;charset=UTF-8");
    vec![
        (
            Method::POST,
            format!("{TOOLS}/{pending}/approve"),
            None,
            String::new(),
        ),
        (
            Method::POST,
            format!("{TOOLS}/{pending}/approve"),
            text,
            "{}".to_owned(),
        ),
        (
            Method::POST,
            format!("{TOOLS}/{disabled}/enable"),
            None,
            String::new(),
        ),
        (
            Method::POST,
            format!("{TOOLS}/{upper}/execute"),
            text,
            json!({"arguments": {"text": "hi"}}).to_string(),
        ),
        (
            Method::POST,
            format!("{TOOLS}/import"),
            text,
            IMPORTED.to_owned(),
        ),
        (
            Method::POST,
            TOOLS.to_owned(),
            Some("application/x-www-form-urlencoded"),
            format!("{}=", tool_body("formed")),
        ),
        (
            Method::POST,
            TOOLS.to_owned(),
            Some("multipart/form-data; boundary=x"),
            format!(
                "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n{}\r\n--x--\r\n",
                tool_body("multi")
            ),
        ),
        (
            Method::DELETE,
            format!("{TOOLS}/{upper}"),
            None,
            String::new(),
        ),
        (
            Method::POST,
            "/mcp".to_owned(),
            text,
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).to_string(),
        ),
    ]
}

/// Nothing the attempts wanted happened: the pending tool waits, the disabled one is off, the
/// executed one never ran, nothing was imported or created, nothing deleted.
async fn nothing_changed(
    app: &TestApp,
    with_token: bool,
    pending: &str,
    upper: &str,
    disabled: &str,
) {
    let get = |path: String| async move {
        send_as(
            app,
            with_token,
            Page::Outside,
            SERVER,
            Method::GET,
            &path,
            None,
            "",
        )
        .await
    };
    let status = |id: &str| {
        let path = format!("{TOOLS}/{id}");
        async move { get(path).await.assert_ok(StatusCode::OK)["status"].clone() }
    };
    assert_eq!(status(pending).await, "pending_approval");
    assert_eq!(status(disabled).await, "disabled");
    assert_eq!(status(upper).await, "active");
    for name in ["planted", "formed", "multi"] {
        let res = get(format!("{TOOLS}/{name}")).await;
        assert_eq!(res.status, StatusCode::NOT_FOUND, "{name}: {}", res.text);
    }
    let runs = get("/api/v1/executions".to_owned())
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(runs["count"], 0, "{runs}");
}

/// The refusal of `res`: 403 for where it came from, 415 for what it carries; the message says
/// why and what a legitimate client does instead.
fn assert_refused(res: &TestResponse, path: &str, page: Page) {
    assert!(
        [StatusCode::FORBIDDEN, StatusCode::UNSUPPORTED_MEDIA_TYPE].contains(&res.status),
        "{page:?} {path}: {} {}",
        res.status,
        res.text
    );
    if path == "/mcp" {
        assert_eq!(res.json["jsonrpc"], "2.0", "{}", res.text);
        assert!(
            res.json["error"]["message"].as_str().is_some(),
            "{}",
            res.text
        );
    } else {
        assert_eq!(res.json["success"], false, "{}", res.text);
        let code = res.json["error"]["code"].as_str().unwrap_or_default();
        assert!(
            ["cross_site_request", "unsupported_media_type"].contains(&code),
            "{page:?} {path}: {}",
            res.text
        );
    }
}

#[tokio::test]
async fn a_page_of_another_origin_changes_nothing_whatever_it_sends() {
    for config in [
        ServerSettings::default(),
        ServerSettings {
            admin_token: Some("admin-secret".to_owned()),
            ..ServerSettings::default()
        },
    ] {
        let app = TestApp::with_config(config).await;
        let with_token = app.state.config.admin_token.is_some();
        let (pending, upper, disabled) = three_tools_as(&app, with_token).await;
        for page in [
            Page::OtherSite,
            Page::OtherPort,
            Page::OtherOriginOnly,
            Page::Opaque,
        ] {
            for (method, path, content_type, body) in attempts(&pending, &upper, &disabled) {
                let res = send_as(
                    &app,
                    with_token,
                    page,
                    SERVER,
                    method,
                    &path,
                    content_type,
                    &body,
                )
                .await;
                assert_refused(&res, &path, page);
                if content_type.is_none() || path == "/mcp" {
                    // Nothing in the body to blame: where it came from is the reason.
                    assert_eq!(
                        res.status,
                        StatusCode::FORBIDDEN,
                        "{page:?} {path}: {}",
                        res.text
                    );
                    let message = res.json["error"]["message"].as_str().unwrap_or_default();
                    assert!(message.contains("another"), "{message}");
                }
            }
        }
        // Without `Origin` or `Sec-Fetch-Site` (a browser too old to send either), a body that
        // is not JSON is still refused: only what needs no preflight is, so a page gets nothing.
        for (method, path, content_type, body) in attempts(&pending, &upper, &disabled) {
            if content_type.is_some() {
                let res = send_as(
                    &app,
                    with_token,
                    Page::Outside,
                    SERVER,
                    method,
                    &path,
                    content_type,
                    &body,
                )
                .await;
                assert_eq!(
                    res.status,
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "{path}: {}",
                    res.text
                );
                assert_refused(&res, &path, Page::Outside);
            }
        }
        nothing_changed(&app, with_token, &pending, &upper, &disabled).await;
    }
}

async fn three_tools_as(app: &TestApp, with_token: bool) -> (String, String, String) {
    let pending = pending_shell_tool(app).await;
    let created = |name: &'static str| async move {
        let res = send_as(
            app,
            with_token,
            Page::Outside,
            SERVER,
            Method::POST,
            TOOLS,
            Some("application/json"),
            &tool_body(name).to_string(),
        )
        .await;
        res.assert_ok(StatusCode::CREATED)["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let upper = created("upper").await;
    let disabled = created("off").await;
    send_as(
        app,
        with_token,
        Page::Outside,
        SERVER,
        Method::POST,
        &format!("{TOOLS}/{disabled}/disable"),
        None,
        "",
    )
    .await
    .assert_ok(StatusCode::OK);
    (pending, upper, disabled)
}

/// [`send`], with the admin token when `with_token`.
#[allow(clippy::too_many_arguments)]
async fn send_as(
    app: &TestApp,
    with_token: bool,
    page: Page,
    host: &str,
    method: Method,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> TestResponse {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("host", host);
    if with_token {
        builder = builder.header("authorization", "Bearer admin-secret");
    }
    for (name, value) in page.headers() {
        builder = builder.header(name, value);
    }
    if let Some(ct) = content_type {
        builder = builder.header("content-type", ct);
    }
    app.send(builder.body(Body::from(body.to_owned())).expect("request"))
        .await
}

#[tokio::test]
async fn the_servers_own_pages_and_clients_outside_a_browser_keep_working() {
    let app = TestApp::new().await;
    let pending = pending_shell_tool(&app).await;
    // The web UI: same origin, JSON bodies, YAML for an import, and body-less POSTs and DELETEs.
    let res = send(
        &app,
        Page::Own,
        SERVER,
        Method::POST,
        TOOLS,
        Some("application/json"),
        &tool_body("mine").to_string(),
    )
    .await;
    let mine = res.assert_ok(StatusCode::CREATED)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    send(
        &app,
        Page::Own,
        SERVER,
        Method::POST,
        &format!("{TOOLS}/{pending}/approve"),
        Some("application/json"),
        "{}",
    )
    .await
    .assert_ok(StatusCode::OK);
    send(
        &app,
        Page::Own,
        SERVER,
        Method::POST,
        &format!("{TOOLS}/{mine}/disable"),
        None,
        "",
    )
    .await
    .assert_ok(StatusCode::OK);
    send(
        &app,
        Page::Own,
        SERVER,
        Method::POST,
        &format!("{TOOLS}/import"),
        Some("application/yaml"),
        IMPORTED,
    )
    .await
    .assert_ok(StatusCode::CREATED);
    // An Origin spelled with the scheme's default port, or a browser that names no site.
    let mut builder = Request::builder()
        .method(Method::DELETE)
        .uri(format!("{TOOLS}/planted"))
        .header("host", "localhost");
    builder = builder
        .header("origin", "http://localhost:80")
        .header("sec-fetch-site", "none");
    assert_eq!(
        app.send(builder.body(Body::empty()).unwrap()).await.status,
        StatusCode::OK
    );
    // A client outside a browser: no Origin, no Sec-Fetch-Site.
    send(
        &app,
        Page::Outside,
        SERVER,
        Method::PATCH,
        &format!("{TOOLS}/{mine}"),
        Some("application/json"),
        &json!({"description": "Mine"}).to_string(),
    )
    .await
    .assert_ok(StatusCode::OK);
    send(
        &app,
        Page::Outside,
        SERVER,
        Method::POST,
        &format!("{TOOLS}/import"),
        Some("text/yaml"),
        &IMPORTED.replace("planted", "again"),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    // Reads from anywhere are still reads (a page cannot read the answer without CORS).
    send(&app, Page::OtherSite, SERVER, Method::GET, TOOLS, None, "")
        .await
        .assert_ok(StatusCode::OK);
    // A text/plain import names the types it takes.
    let res = send(
        &app,
        Page::Outside,
        SERVER,
        Method::POST,
        &format!("{TOOLS}/import"),
        Some("text/plain"),
        IMPORTED,
    )
    .await;
    let message = res.assert_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    assert!(message.contains("application/yaml"), "{message}");
}

#[tokio::test]
async fn rest_and_the_ui_answer_only_to_the_servers_own_host_names() {
    for config in [
        ServerSettings::default(),
        ServerSettings {
            admin_token: Some("admin-secret".to_owned()),
            allowed_hosts: vec!["tools.example.com".to_owned(), "localhost:8787".to_owned()],
            ..ServerSettings::default()
        },
    ] {
        let app = TestApp::with_config(config).await;
        let with_token = app.state.config.admin_token.is_some();
        let (good, bad): (Vec<&str>, Vec<&str>) = if with_token {
            (
                vec![
                    "tools.example.com",
                    "TOOLS.example.com:443",
                    "localhost:8787",
                ],
                vec![
                    "127.0.0.1",
                    "localhost:8788",
                    "evil.example",
                    "tools.example.com.evil.example",
                ],
            )
        } else {
            (
                vec![
                    "127.0.0.1",
                    "127.0.0.1:8787",
                    "localhost:1234",
                    "[::1]:8787",
                ],
                vec![
                    "evil.example",
                    "rebound.evil.example:8787",
                    "127.0.0.1.evil.example",
                ],
            )
        };
        for path in [
            "/api/v1/custom-tools",
            "/",
            "/ui/js/app.js",
            "/api/v1/openapi.json",
            "/metrics",
            "/nowhere",
        ] {
            for host in &good {
                let res = send_as(
                    &app,
                    with_token,
                    Page::Outside,
                    host,
                    Method::GET,
                    path,
                    None,
                    "",
                )
                .await;
                assert_ne!(
                    res.status,
                    StatusCode::FORBIDDEN,
                    "{host} {path}: {}",
                    res.text
                );
            }
            for host in &bad {
                let res = send_as(
                    &app,
                    with_token,
                    Page::Outside,
                    host,
                    Method::GET,
                    path,
                    None,
                    "",
                )
                .await;
                let message = res.assert_error(StatusCode::FORBIDDEN, "host_not_allowed");
                assert!(message.contains("allowed_hosts"), "{message}");
                assert!(message.contains(host), "{message}");
            }
        }
        let res = send_as(
            &app,
            with_token,
            Page::Outside,
            "evil.example",
            Method::POST,
            "/mcp",
            Some("application/json"),
            &json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}).to_string(),
        )
        .await;
        assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.text);
        // The health probes hold no data and answer whatever name a prober uses.
        for path in ["/livez", "/readyz"] {
            let res = send_as(
                &app,
                false,
                Page::Outside,
                "10.0.0.7:8787",
                Method::GET,
                path,
                None,
                "",
            )
            .await;
            assert_eq!(res.status, StatusCode::OK, "{path}: {}", res.text);
        }
    }
}
