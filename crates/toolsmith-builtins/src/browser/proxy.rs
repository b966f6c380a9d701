//! The browser's one way out: an HTTP proxy on a loopback port of the host, one per browser,
//! that puts every request of the page through the egress guard.
//!
//! Chromium is started with `--proxy-server` pointing here and `--proxy-bypass-list=<-loopback>`
//! (so loopback goes through it too), and with its own name resolution mapped to nothing
//! (`--host-resolver-rules`), so every page load, subresource, `fetch`, WebSocket and redirect
//! hop arrives here as a `CONNECT host:port` (HTTPS, WebSockets) or an absolute-form request
//! (plain HTTP). Each is checked by the guard for the browser's owner (scheme, the owner's and
//! the operator's allowed domains, the name resolved and every address checked, private and
//! metadata addresses refused unless the operator listed the host in `allowed_private_hosts`),
//! and the connection goes to the addresses that were checked. A refusal is a `403` whose text
//! says why, and is kept for the tool's answer ([`Proxy::blocked`]).
//!
//! The port is open to the host's other processes, but it grants nothing they lack: it reaches
//! only what the guard allows, which is at most what the host reaches itself.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use toolsmith_egress::EgressGuard;

/// Most connections to one browser's proxy at once.
const MAX_CONNECTIONS: usize = 64;
/// How long connecting to a site may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How many refusals are kept for the tool's answers.
const MAX_BLOCKED: usize = 50;

type Body = BoxBody<Bytes, hyper::Error>;

/// A running proxy: its port, and what it refused. It stops when dropped.
pub(crate) struct Proxy {
    port: u16,
    blocked: Arc<Mutex<Vec<String>>>,
    accept: tokio::task::AbortHandle,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl Proxy {
    /// Starts a proxy on `127.0.0.1` applying `guard`.
    pub(crate) async fn start(guard: EgressGuard) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let blocked: Arc<Mutex<Vec<String>>> = Arc::default();
        let accept = tokio::spawn(accept_loop(listener, guard, blocked.clone())).abort_handle();
        Ok(Proxy {
            port,
            blocked,
            accept,
        })
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The refusals since the last time they were taken.
    pub(crate) fn take_blocked(&self) -> Vec<String> {
        self.blocked
            .lock()
            .map(|mut b| std::mem::take(&mut *b))
            .unwrap_or_default()
    }
}

async fn accept_loop(listener: TcpListener, guard: EgressGuard, blocked: Arc<Mutex<Vec<String>>>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            return;
        };
        // Only the host's own processes can reach a loopback port; nothing else is served.
        if !peer.ip().is_loopback() {
            continue;
        }
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            continue;
        };
        let guard = guard.clone();
        let blocked = blocked.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let service =
                service_fn(move |request| answer(guard.clone(), blocked.clone(), request));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades()
                .await;
        });
    }
}

/// The checked addresses of `url` (the guard's rules for the browser's owner), or why not.
async fn checked(
    guard: &EgressGuard,
    url: &str,
    blocked: &Mutex<Vec<String>>,
) -> Result<(Vec<SocketAddr>, u16), String> {
    let refusal = match guard.resolve_checked(url).await {
        Ok(checked) => {
            let port = checked.url.port_or_known_default().unwrap_or(443);
            let addrs = checked
                .addrs
                .into_iter()
                .map(|ip| SocketAddr::new(ip, port))
                .collect();
            return Ok((addrs, port));
        }
        Err(e) => format!("{url} was blocked by the egress guard: {e}"),
    };
    tracing::info!(reason = %refusal, "browser proxy refused a request");
    if let Ok(mut list) = blocked.lock()
        && list.len() < MAX_BLOCKED
    {
        list.push(refusal.clone());
    }
    Err(refusal)
}

async fn connect(addrs: &[SocketAddr]) -> Result<TcpStream, String> {
    let mut last = String::from("it has no addresses");
    for addr in addrs {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = e.to_string(),
            Err(_) => last = format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()),
        }
    }
    Err(last)
}

async fn answer(
    guard: EgressGuard,
    blocked: Arc<Mutex<Vec<String>>>,
    request: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    if request.method() == Method::CONNECT {
        return Ok(tunnel(guard, blocked, request).await);
    }
    Ok(forward(guard, blocked, request).await)
}

/// A `CONNECT host:port`: HTTPS (or a WebSocket) to a host the guard allows.
async fn tunnel(
    guard: EgressGuard,
    blocked: Arc<Mutex<Vec<String>>>,
    request: Request<Incoming>,
) -> Response<Body> {
    let Some(authority) = request.uri().authority().cloned() else {
        return text(
            StatusCode::BAD_REQUEST,
            "CONNECT needs host:port".to_owned(),
        );
    };
    let url = match authority.port_u16() {
        Some(443) | None => format!("https://{}/", authority.host()),
        Some(port) => format!("https://{}:{port}/", authority.host()),
    };
    let addrs = match checked(&guard, &url, &blocked).await {
        Ok((addrs, _)) => addrs,
        Err(refusal) => return text(StatusCode::FORBIDDEN, refusal),
    };
    let mut upstream = match connect(&addrs).await {
        Ok(upstream) => upstream,
        Err(e) => {
            return text(
                StatusCode::BAD_GATEWAY,
                format!("could not connect to {authority}: {e}"),
            );
        }
    };
    tokio::spawn(async move {
        if let Ok(upgraded) = hyper::upgrade::on(request).await {
            let mut client = TokioIo::new(upgraded);
            let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
        }
    });
    Response::new(empty())
}

/// A plain-HTTP request in absolute form, sent on to a host the guard allows.
async fn forward(
    guard: EgressGuard,
    blocked: Arc<Mutex<Vec<String>>>,
    mut request: Request<Incoming>,
) -> Response<Body> {
    let url = request.uri().to_string();
    if request.uri().scheme_str() != Some("http") || request.uri().authority().is_none() {
        return text(
            StatusCode::BAD_REQUEST,
            format!("{url}: the browser's proxy forwards absolute http: URLs only"),
        );
    }
    let addrs = match checked(&guard, &url, &blocked).await {
        Ok((addrs, _)) => addrs,
        Err(refusal) => return text(StatusCode::FORBIDDEN, refusal),
    };
    let stream = match connect(&addrs).await {
        Ok(stream) => stream,
        Err(e) => {
            return text(
                StatusCode::BAD_GATEWAY,
                format!("could not connect for {url}: {e}"),
            );
        }
    };
    let origin_form = request
        .uri()
        .path_and_query()
        .map_or("/", hyper::http::uri::PathAndQuery::as_str)
        .to_owned();
    match origin_form.parse() {
        Ok(uri) => *request.uri_mut() = uri,
        Err(_) => {
            return text(
                StatusCode::BAD_REQUEST,
                format!("{url}: not a request path"),
            );
        }
    }
    let headers = request.headers_mut();
    headers.remove("proxy-connection");
    headers.remove("proxy-authorization");
    let Ok((mut sender, connection)) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
    else {
        return text(
            StatusCode::BAD_GATEWAY,
            format!("could not speak HTTP to {url}"),
        );
    };
    tokio::spawn(connection);
    match sender.send_request(request).await {
        Ok(response) => response.map(BodyExt::boxed),
        Err(e) => text(StatusCode::BAD_GATEWAY, format!("{url}: {e}")),
    }
}

fn empty() -> Body {
    Full::new(Bytes::new())
        .map_err(|never| match never {})
        .boxed()
}

fn text(status: StatusCode, message: String) -> Response<Body> {
    let mut response = Response::new(
        Full::new(Bytes::from(format!("{message}\n")))
            .map_err(|never| match never {})
            .boxed(),
    );
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
