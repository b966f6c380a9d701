//! `fetch` in JS tools, with a test host that sends through the real egress guard to a
//! server the test starts on 127.0.0.1 (allowed explicitly as a private host).

use std::sync::Arc;

use async_trait::async_trait;
use axum::Router;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{AppendHeaders, IntoResponse};
use axum::routing::{any, get};
use serde_json::{Value, json};
use toolsmith_core::{ErrorKind, Permission, ToolResult};
use toolsmith_egress::{EgressGuard, EgressPolicy, EgressSession, OutboundRequest};
use toolsmith_sandbox::{FetchRequest, FetchResponse, HostCalls};

use crate::support::*;

/// A host whose `fetch` goes through one egress session (one execution's budget).
pub struct NetHost {
    pub session: EgressSession,
}

#[async_trait]
impl HostCalls for NetHost {
    async fn call_tool(&self, name: &str, _args: Value) -> Result<Value, String> {
        Err(format!("no tool named '{name}' in this test"))
    }

    fn list_tools(&self) -> Vec<Value> {
        Vec::new()
    }

    async fn fetch(&self, request: FetchRequest) -> Result<FetchResponse, String> {
        let response = self
            .session
            .send(OutboundRequest {
                method: request.method,
                url: request.url,
                headers: request.headers,
                body: request.body.map(String::into_bytes),
            })
            .await
            .map_err(|e| e.to_string())?;
        Ok(FetchResponse {
            status: response.status,
            status_text: response.status_text,
            headers: response.headers,
            url: response.final_url,
            body: String::from_utf8_lossy(&response.body).into_owned(),
        })
    }
}

struct Server {
    base: String,
    guard: EgressGuard,
}

async fn server(max_requests: usize) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route(
            "/json",
            get(|| async { axum::Json(json!({"temp": 21.5, "city": "Oslo"})) }),
        )
        .route("/echo", any(echo))
        .route(
            "/missing",
            get(|| async { (StatusCode::NOT_FOUND, "no such thing") }),
        )
        .route(
            "/text",
            get(|| async {
                (
                    AppendHeaders([
                        (header::CONTENT_TYPE, "text/plain"),
                        (header::SET_COOKIE, "a=1"),
                        (header::SET_COOKIE, "b=2"),
                    ]),
                    "plain \u{e9}",
                )
            }),
        )
        .route("/bytes", get(|| async { vec![0x66u8, 0xff, 0x6f] }))
        .route(
            "/to-metadata",
            get(|| async {
                (
                    StatusCode::FOUND,
                    [(header::LOCATION, "http://169.254.169.254/latest/meta-data/")],
                )
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let guard = EgressGuard::new(EgressPolicy {
        allowed_private_hosts: vec![addr.to_string().parse().unwrap()],
        max_requests,
        ..EgressPolicy::default()
    })
    .unwrap();
    Server {
        base: format!("http://{addr}"),
        guard,
    }
}

async fn echo(method: Method, headers: HeaderMap, body: String) -> impl IntoResponse {
    let get = |name: &str| {
        headers
            .get(name)
            .map(|v| v.to_str().unwrap_or("?").to_owned())
    };
    axum::Json(json!({
        "method": method.as_str(),
        "body": body,
        "xApiKey": get("x-api-key"),
        "contentType": get("content-type"),
    }))
}

impl Server {
    async fn run(&self, code: &str) -> ToolResult {
        let host: Arc<dyn HostCalls> = Arc::new(NetHost {
            session: self.guard.session(),
        });
        let mut job = job_with(code, json!({ "base": self.base }), small_limits(), host);
        job.permissions.insert(Permission::Network);
        shared().run(job).await
    }

    async fn value(&self, code: &str) -> Value {
        let res = self.run(code).await;
        assert!(!res.is_error, "{code} failed: {}", res.content);
        res.content
    }
}

#[tokio::test]
async fn get_json() {
    let s = server(10).await;
    let got = s
        .value("const r = await fetch(args.base + '/json'); return [r.status, r.ok, r.statusText, r.url === args.base + '/json', r.headers.get('Content-Type'), await r.json()]")
        .await;
    assert_eq!(
        got,
        json!([200, true, "OK", true, "application/json", {"temp": 21.5, "city": "Oslo"}])
    );
}

#[tokio::test]
async fn post_with_body_and_headers() {
    let s = server(10).await;
    let got = s
        .value("const r = await fetch(args.base + '/echo', { method: 'post', headers: { 'X-Api-Key': 'k1', 'Content-Type': 'text/plain' }, body: 'hello' }); return await r.json()")
        .await;
    assert_eq!(
        got,
        json!({"method": "POST", "body": "hello", "xApiKey": "k1", "contentType": "text/plain"})
    );
    // An object body is sent as JSON; headers may be [name, value] pairs.
    let got = s
        .value("const r = await fetch(args.base + '/echo', { method: 'PUT', headers: [['x-api-key', 'k2']], body: { a: [1, 2] } }); return await r.json()")
        .await;
    assert_eq!(
        got,
        json!({"method": "PUT", "body": "{\"a\":[1,2]}", "xApiKey": "k2", "contentType": "application/json"})
    );
}

#[tokio::test]
async fn non_2xx_statuses_resolve_with_ok_false() {
    let s = server(10).await;
    let got = s
        .value("const r = await fetch(args.base + '/missing'); return [r.status, r.ok, r.statusText, await r.text()]")
        .await;
    assert_eq!(got, json!([404, false, "Not Found", "no such thing"]));
}

#[tokio::test]
async fn text_headers_and_body_rules() {
    let s = server(10).await;
    let got = s
        .value("const r = await fetch(args.base + '/text'); const t = await r.text(); let again; try { await r.text() } catch (e) { again = e.message } return [t, r.headers.get('SET-COOKIE'), r.headers.has('x-none'), r.headers.get('x-none'), r.bodyUsed, again, Object.isFrozen(r)]")
        .await;
    assert_eq!(
        got,
        json!([
            "plain \u{e9}",
            "a=1, b=2",
            false,
            null,
            true,
            "Response.text: the body has already been read",
            true
        ])
    );
    // Bytes that are not UTF-8 arrive as U+FFFD.
    let got = s
        .value("return await (await fetch(args.base + '/bytes')).text()")
        .await;
    assert_eq!(got, json!("f\u{fffd}o"));
    // A body that is not JSON rejects json().
    let res = s
        .run("return await (await fetch(args.base + '/text')).json()")
        .await;
    let message = failed(&res, ErrorKind::ExecutionError);
    assert!(message.contains("SyntaxError"), "{message}");
}

#[tokio::test]
async fn refused_addresses_reject_with_the_guards_message() {
    let s = server(10).await;
    let got = s
        .value("const out = []; for (const u of ['http://127.0.0.1:9/', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/', 'http://2130706433/', 'file:///etc/passwd', args.base + '/to-metadata']) { try { await fetch(u); out.push('fetched ' + u) } catch (e) { out.push(e.message) } } return out")
        .await;
    let messages: Vec<&str> = got
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 6);
    for m in &messages[..4] {
        assert!(m.starts_with("refused: "), "{m}");
    }
    assert!(messages[1].contains("link-local"), "{}", messages[1]);
    assert!(
        messages[4].contains("only http and https"),
        "{}",
        messages[4]
    );
    assert!(
        messages[5].contains("169.254.169.254") && messages[5].starts_with("refused"),
        "{}",
        messages[5]
    );
}

#[tokio::test]
async fn bad_arguments_reject_rather_than_throw() {
    let s = server(10).await;
    let got = s
        .value("const out = []; for (const [u, o] of [[args.base + '/json', { headers: { 'bad name': 'x' } }], [args.base + '/json', { body: 'x' }], [args.base + '/json', 5], [args.base + '/json', { method: 'TRACE' }], [args.base + '/json', { headers: { 'X-A': 'a\\r\\nB: 1' } }]]) { const p = fetch(u, o); out.push(p instanceof Promise); try { await p } catch (e) { out.push(e.message) } } return out")
        .await;
    assert_eq!(
        got,
        json!([
            true,
            "fetch: 'bad name' is not a valid header name",
            true,
            "fetch: a GET request cannot have a body",
            true,
            "fetch: the options must be an object",
            true,
            "invalid request: method 'TRACE' is not allowed (use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS)",
            true,
            "invalid request: the value of header 'x-a' is not valid"
        ])
    );
}

#[tokio::test]
async fn the_request_cap_rejects_past_the_limit() {
    let s = server(2).await;
    let got = s
        .value("const out = []; for (let i = 0; i < 4; i++) { try { out.push((await fetch(args.base + '/json')).status) } catch (e) { out.push(e.message) } } return out")
        .await;
    assert_eq!(
        got,
        json!([
            200,
            200,
            "too many requests (at most 2 per execution)",
            "too many requests (at most 2 per execution)"
        ])
    );
}

#[tokio::test]
async fn parallel_fetches_count_as_pending_host_calls() {
    let s = server(100).await;
    let got = s
        .value("const ps = []; let refused; for (let i = 0; i < 17; i++) { const p = fetch(args.base + '/json'); ps.push(p); } const rs = await Promise.allSettled(ps); return [rs.filter(r => r.status === 'fulfilled').length, rs.filter(r => r.status === 'rejected').map(r => r.reason.message)]")
        .await;
    assert_eq!(
        got,
        json!([
            16,
            ["fetch: too many host calls at once (at most 16 may be pending)"]
        ])
    );
}

#[tokio::test]
async fn without_the_permission_there_is_no_fetch() {
    let s = server(10).await;
    let host: Arc<dyn HostCalls> = Arc::new(NetHost {
        session: s.guard.session(),
    });
    let job = job_with(
        "return [typeof fetch, typeof globalThis.fetch, 'fetch' in globalThis]",
        json!({}),
        small_limits(),
        host,
    );
    let res = shared().run(job).await;
    assert_eq!(res.content, json!(["undefined", "undefined", false]));
}

#[tokio::test]
async fn fetch_cannot_be_replaced_or_reach_the_host_object() {
    let s = server(10).await;
    let got = s
        .value("fetch.x = 1; let replaced = true; try { globalThis.fetch = () => 1 } catch (e) { replaced = false } return [replaced, typeof fetch, Object.getOwnPropertyNames(fetch).sort(), (await fetch(args.base + '/json')).status]")
        .await;
    assert_eq!(got[1], json!("function"));
    assert_eq!(got[3], json!(200));
    let names = got[2].as_array().unwrap();
    assert!(
        names
            .iter()
            .all(|n| ["length", "name", "prototype", "x"].contains(&n.as_str().unwrap())),
        "{names:?}"
    );
}
