//! What a request must show before anything reads it: that it is addressed to this server, and
//! that no web page of another origin sent it to change something. One middleware, [`guard`],
//! on every route (REST, the web UI, `/mcp`), in every auth mode.
//!
//! - **`Host`** (DNS rebinding): a page on `evil.example` whose name is rebound to 127.0.0.1
//!   reaches the server as a same-origin page of `evil.example`, and its requests carry
//!   `Host: evil.example`. Every route but the health probes answers only to the names in
//!   [`ServerSettings::allowed_hosts`](crate::ServerSettings::allowed_hosts) (loopback names when it
//!   is empty); an entry with a port matches only that port. A request without `Host` (no
//!   browser sends one) names nothing and passes.
//! - **Where a state-changing request came from** (`POST`, `PUT`, `PATCH`, `DELETE`): a page can
//!   make the browser send some requests to another origin without asking it first (no CORS
//!   preflight), and it cannot read the answer, but the request has done its work. So such a
//!   request is refused when the browser says it came from another origin: `Sec-Fetch-Site`
//!   other than `same-origin` or `none` (every current browser sends it; a page cannot set it),
//!   or an `Origin` that is not this server's (`null` included) — an `Origin` naming another
//!   host is still accepted when the browser vouches `Sec-Fetch-Site: same-origin` (a proxy in
//!   front that rewrites `Host`).
//! - **What it carries**: a body a page can send without a preflight is `text/plain`,
//!   form-encoded or multipart, or has no type at all. A state-changing request with a
//!   `Content-Type` must be JSON (`application/json`, `application/…+json`), or for the import
//!   route one of its YAML types, and a body without a `Content-Type` is refused: so even a
//!   browser too old to send `Origin` gets nothing done. A body-less `POST` (approve, enable)
//!   is judged by its headers alone.
//!
//! Clients outside a browser (the CLI, SDKs, curl) send neither `Origin` nor `Sec-Fetch-Site`
//! and are unaffected; the web UI is same-origin and sends JSON (YAML to import).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN, TRANSFER_ENCODING};
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::rest::error::ApiError;

/// Host names accepted when the configuration lists none.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Routes that answer whatever `Host` a prober uses: they hold no data.
const HEALTH_PATHS: [&str; 2] = ["/livez", "/readyz"];

/// The route that takes a definition as YAML as well as JSON.
const IMPORT_PATH: &str = "/api/v1/custom-tools/import";

/// The rules [`guard`] applies: the host names this server answers to.
#[derive(Debug)]
pub(crate) struct EdgeRules {
    hosts: Vec<Authority>,
}

/// A host name, lower-case and without IPv6 brackets, with its port if one was given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    fn parse(text: &str) -> Option<Authority> {
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        match axum::http::uri::Authority::try_from(text) {
            Ok(a) => Some(Authority::new(a.host(), a.port_u16())),
            // A bare IPv6 address (`::1`) is not an authority; it is a host.
            Err(_) => Some(Authority::new(text, None)),
        }
    }

    fn new(host: &str, port: Option<u16>) -> Authority {
        Authority {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_ascii_lowercase(),
            port,
        }
    }
}

impl EdgeRules {
    /// The rules for `allowed_hosts` (loopback names when it names none).
    pub(crate) fn new(allowed_hosts: &[String]) -> Arc<EdgeRules> {
        let mut hosts: Vec<Authority> = allowed_hosts
            .iter()
            .filter_map(|h| Authority::parse(h))
            .collect();
        if hosts.is_empty() {
            tracing::warn!("no allowed hosts configured; accepting loopback host names only");
            hosts = LOOPBACK_HOSTS
                .iter()
                .filter_map(|h| Authority::parse(h))
                .collect();
        }
        Arc::new(EdgeRules { hosts })
    }

    /// Whether `host` is one of the allowed names (an entry with a port: on that port only).
    fn allows(&self, host: &Authority) -> bool {
        self.hosts
            .iter()
            .any(|a| a.host == host.host && a.port.is_none_or(|p| host.port == Some(p)))
    }

    /// Refuses a request addressed to a name this server does not answer to.
    fn check_host(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refusal> {
        let Some(host) = request_host(headers, uri)? else {
            return Ok(());
        };
        if self.allows(&host) {
            return Ok(());
        }
        let shown = printable(
            headers
                .get(HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or(&host.host),
        );
        tracing::warn!(host = %shown, "refused a request for a host name not in allowed_hosts (possible DNS rebinding)");
        Err(Refusal::new(
            StatusCode::FORBIDDEN,
            "host_not_allowed",
            format!(
                "this server does not answer to the host name '{shown}'; if clients reach it by \
                 that name, add it to allowed_hosts (--allowed-host, TOOLSMITH_ALLOWED_HOSTS)"
            ),
        ))
    }
}

/// The `Host` of a request (or the URI's authority, as HTTP/2 carries it); `None` when it names
/// none.
fn request_host(headers: &HeaderMap, uri: &Uri) -> Result<Option<Authority>, Refusal> {
    let Some(value) = headers.get(HOST) else {
        return Ok(uri
            .authority()
            .map(|a| Authority::new(a.host(), a.port_u16())));
    };
    value
        .to_str()
        .ok()
        .and_then(|text| axum::http::uri::Authority::try_from(text).ok())
        .map(|a| Some(Authority::new(a.host(), a.port_u16())))
        .ok_or_else(|| {
            Refusal::new(
                StatusCode::BAD_REQUEST,
                "invalid_host",
                "the Host header is not a host name with an optional port",
            )
        })
}

/// The middleware (see the module docs): refuses what the edge must not let through, before
/// authentication reads anything.
pub(crate) async fn guard(
    State(rules): State<Arc<EdgeRules>>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    let mcp = path == crate::mcp::MCP_PATH;
    let checked = (|| {
        if !HEALTH_PATHS.contains(&path) {
            rules.check_host(request.headers(), request.uri())?;
        }
        if changes_state(request.method()) {
            check_sender(request.headers())?;
            check_body_type(path, request.headers(), request.body())?;
        }
        Ok::<(), Refusal>(())
    })();
    match checked {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(mcp),
    }
}

fn changes_state(method: &Method) -> bool {
    matches!(
        *method,
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    )
}

/// Refuses a request a browser says came from a page of another origin.
fn check_sender(headers: &HeaderMap) -> Result<(), Refusal> {
    let fetch_site = headers
        .get("sec-fetch-site")
        .map(|v| v.to_str().unwrap_or("").to_ascii_lowercase());
    if let Some(site) = &fetch_site
        && site != "same-origin"
        && site != "none"
    {
        return Err(Refusal::cross_site(format!(
            "the browser says this request came from a page of another origin \
             (Sec-Fetch-Site: {})",
            printable(site)
        )));
    }
    let Some(origin) = headers.get(ORIGIN) else {
        return Ok(());
    };
    if fetch_site.as_deref() == Some("same-origin") {
        // The browser vouches for it (the Host may have been rewritten by a proxy in front).
        return Ok(());
    }
    let origin = origin.to_str().unwrap_or("");
    let host = request_host(headers, &Uri::default())?;
    if host.is_some_and(|host| same_origin(origin, &host)) {
        return Ok(());
    }
    Err(Refusal::cross_site(format!(
        "this request was sent by a page of another origin (Origin: {})",
        printable(origin)
    )))
}

/// Whether the origin `origin` (`scheme://host[:port]`) is the server reached as `host`.
fn same_origin(origin: &str, host: &Authority) -> bool {
    let Ok(uri) = origin.parse::<Uri>() else {
        return false;
    };
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return false;
    };
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return false,
    };
    let origin = Authority::new(authority.host(), authority.port_u16());
    origin.host == host.host
        && origin.port.unwrap_or(default) == host.port.unwrap_or(default)
        && uri.path() == "/"
        && uri.query().is_none()
}

/// Refuses a body a page could send without a preflight: a `Content-Type` that is not JSON
/// (or YAML, on the import route), or a body with no type.
fn check_body_type(
    path: &str,
    headers: &HeaderMap,
    body: &axum::body::Body,
) -> Result<(), Refusal> {
    let import = path == IMPORT_PATH;
    let Some(value) = headers.get(CONTENT_TYPE) else {
        return if has_body(headers, body) {
            Err(media_type(import))
        } else {
            Ok(())
        };
    };
    let essence = value
        .to_str()
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let json = crate::rest::extract::is_json_content_type(&essence);
    if json || (import && crate::rest::import::DEFINITION_TYPES.contains(&essence.as_str())) {
        Ok(())
    } else {
        Err(media_type(import))
    }
}

fn has_body(headers: &HeaderMap, body: &axum::body::Body) -> bool {
    use axum::body::HttpBody as _;
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) => n > 0,
        None => {
            headers.contains_key(TRANSFER_ENCODING)
                || (!body.is_end_stream() && body.size_hint().exact() != Some(0))
        }
    }
}

fn media_type(import: bool) -> Refusal {
    let message = if import {
        format!(
            "send the definition as one of: {}",
            crate::rest::import::DEFINITION_TYPES.join(", ")
        )
    } else {
        "the request body must be JSON, sent with Content-Type: application/json".to_owned()
    };
    Refusal::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        message,
    )
}

/// A header value as it may appear in a message: at most 100 printable characters.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(100).collect()
}

/// Why the edge refused a request.
#[derive(Debug)]
struct Refusal {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl Refusal {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
        }
    }

    fn cross_site(why: String) -> Refusal {
        Refusal::new(
            StatusCode::FORBIDDEN,
            "cross_site_request",
            format!(
                "{why}; a request that changes something is accepted only from this server's own \
                 pages or from a client outside a browser (which sends no Origin)"
            ),
        )
    }

    /// The REST envelope, or on `/mcp` a JSON-RPC error (nothing of the request was read, so
    /// its id is unknown).
    fn into_response(self, mcp: bool) -> Response {
        if !mcp {
            return ApiError::new(self.status, self.code, self.message).into_response();
        }
        (
            self.status,
            axum::Json(serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32600, "message": self.message},
            })),
        )
            .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str) -> Authority {
        Authority::parse(text).expect("an authority")
    }

    #[test]
    fn allowed_hosts_match_by_name_and_pinned_port() {
        let rules = EdgeRules::new(&["Tools.Example.com".to_owned(), "localhost:8787".to_owned()]);
        assert!(rules.allows(&host("tools.example.com")));
        assert!(rules.allows(&host("TOOLS.example.com:8443")));
        assert!(rules.allows(&host("localhost:8787")));
        assert!(!rules.allows(&host("localhost:8788")));
        assert!(!rules.allows(&host("localhost")));
        assert!(!rules.allows(&host("tools.example.com.evil.example")));
        let loopback = EdgeRules::new(&[String::new()]);
        assert!(loopback.allows(&host("[::1]:8787")));
        assert!(loopback.allows(&host("127.0.0.1")));
        assert!(!loopback.allows(&host("127.0.0.2")));
    }

    #[test]
    fn origins_are_compared_with_default_ports() {
        assert!(same_origin(
            "http://127.0.0.1:8787",
            &host("127.0.0.1:8787")
        ));
        assert!(same_origin("http://localhost", &host("localhost:80")));
        assert!(same_origin(
            "https://tools.example.com",
            &host("tools.example.com")
        ));
        assert!(same_origin(
            "https://tools.example.com:443",
            &host("tools.example.com")
        ));
        assert!(!same_origin(
            "http://127.0.0.1:9999",
            &host("127.0.0.1:8787")
        ));
        assert!(!same_origin(
            "http://localhost:8787",
            &host("127.0.0.1:8787")
        ));
        assert!(!same_origin("null", &host("127.0.0.1:8787")));
        assert!(!same_origin("file://", &host("127.0.0.1")));
    }
}
