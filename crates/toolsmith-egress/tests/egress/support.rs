//! Shared helpers: a resolver with fixed answers, and a loopback test server.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use futures::future::BoxFuture;
use toolsmith_egress::{EgressGuard, EgressPolicy, NameResolver};

/// Answers from a fixed table; every other name fails as unknown. Counts lookups.
#[derive(Default)]
pub struct FixedResolver {
    pub table: HashMap<String, Vec<IpAddr>>,
    pub lookups: AtomicUsize,
}

impl FixedResolver {
    pub fn new(entries: &[(&str, &[&str])]) -> Arc<FixedResolver> {
        let table = entries
            .iter()
            .map(|(name, ips)| {
                (
                    (*name).to_owned(),
                    ips.iter().map(|ip| ip.parse().unwrap()).collect(),
                )
            })
            .collect();
        Arc::new(FixedResolver {
            table,
            lookups: AtomicUsize::new(0),
        })
    }
}

impl NameResolver for FixedResolver {
    fn lookup(&self, host: &str) -> BoxFuture<'static, io::Result<Vec<IpAddr>>> {
        self.lookups.fetch_add(1, Ordering::SeqCst);
        let answer = self.table.get(host).cloned().ok_or_else(|| {
            io::Error::new(io::ErrorKind::NotFound, format!("unknown test name {host}"))
        });
        Box::pin(async move { answer })
    }
}

/// The names the SSRF corpus resolves.
pub fn hostile_resolver() -> Arc<FixedResolver> {
    FixedResolver::new(&[
        ("evil.test", &["127.0.0.1"]),
        ("metadata.test", &["169.254.169.254"]),
        ("private.test", &["10.0.0.7"]),
        ("mixed.test", &["93.184.216.34", "192.168.1.1"]),
        ("mapped.test", &["::ffff:127.0.0.1"]),
        ("ula.test", &["fd00::1"]),
        ("cgnat.test", &["100.64.1.1"]),
        ("empty.test", &[]),
        ("public.test", &["93.184.216.34"]),
        ("api.example.com", &["93.184.216.34"]),
        ("a.b.example.com", &["93.184.216.34"]),
        ("example.com", &["93.184.216.34"]),
        ("evil-example.com", &["93.184.216.34"]),
    ])
}

/// A guard over `hostile_resolver` with the default policy.
pub fn hostile_guard() -> EgressGuard {
    EgressGuard::with_resolver(EgressPolicy::default(), hostile_resolver()).unwrap()
}

/// A server on 127.0.0.1 with a random port.
pub struct TestServer {
    pub addr: SocketAddr,
}

impl TestServer {
    pub async fn start() -> TestServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            axum::serve(listener, router()).await.unwrap();
        });
        TestServer { addr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// `host:port` of this server, as `allowed_private_hosts` takes it.
    pub fn host_port(&self) -> String {
        self.addr.to_string()
    }
}

/// A port on 127.0.0.1 with nothing allowed on it (bound, so nothing else takes it).
pub async fn other_port() -> (tokio::net::TcpListener, u16) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn router() -> Router {
    Router::new()
        .route(
            "/json",
            get(|| async { axum::Json(serde_json::json!({"hello": "world", "n": 42})) }),
        )
        .route("/echo", any(echo))
        .route("/status/{code}", get(status))
        .route("/redirect/{n}", get(redirect_chain))
        .route("/to", any(redirect_to))
        .route(
            "/see-other",
            any(|| async { (StatusCode::SEE_OTHER, [(header::LOCATION, "/echo")]) }),
        )
        .route("/big/{bytes}", get(big))
        .route("/drip/{bytes}", get(drip))
        .route("/hang", get(std::future::pending::<&'static str>))
}

async fn echo(method: Method, headers: HeaderMap, body: String) -> impl IntoResponse {
    let header_value = |name: &str| {
        headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    axum::Json(serde_json::json!({
        "method": method.as_str(),
        "body": body,
        "xTest": header_value("x-test"),
        "authorization": header_value("authorization"),
        "contentType": header_value("content-type"),
    }))
}

async fn status(Path(code): Path<u16>) -> Response {
    let status = StatusCode::from_u16(code).unwrap();
    (status, format!("status {code}")).into_response()
}

async fn redirect_chain(Path(n): Path<u32>) -> Response {
    if n == 0 {
        return (StatusCode::OK, "end of chain").into_response();
    }
    let next = format!("/redirect/{}", n - 1);
    (StatusCode::FOUND, [(header::LOCATION, next)]).into_response()
}

async fn redirect_to(Query(query): Query<HashMap<String, String>>) -> Response {
    let target = query.get("url").cloned().unwrap_or_default();
    let code = query
        .get("code")
        .and_then(|c| c.parse().ok())
        .unwrap_or(302);
    (
        StatusCode::from_u16(code).unwrap(),
        [(header::LOCATION, target)],
    )
        .into_response()
}

async fn big(Path(bytes): Path<usize>) -> Vec<u8> {
    vec![b'x'; bytes]
}

/// `bytes` bytes in 1 KiB chunks with no content-length: the cap must hold while streaming.
async fn drip(Path(bytes): Path<usize>) -> Response {
    let chunks = (0..bytes.div_ceil(1024)).map(move |i| {
        let len = (bytes - i * 1024).min(1024);
        Ok::<_, io::Error>(vec![b'y'; len])
    });
    Response::new(Body::from_stream(futures::stream::iter(chunks)))
}
