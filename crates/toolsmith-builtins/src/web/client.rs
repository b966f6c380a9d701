//! The seam to the network: [`WebClient`] sends one request for an owner; [`GuardClient`] is
//! the real one, backed by the egress guard (`toolsmith-egress`) and narrowed to each owner's
//! allowlist.

use std::collections::HashMap;
use std::net::{Ipv6Addr, SocketAddr};
use std::time::Duration;

use async_trait::async_trait;
use toolsmith_core::ErrorKind;
use toolsmith_egress::{DomainPattern, EgressError, EgressGuard, OutboundRequest};

/// One outbound request.
#[derive(Debug, Clone)]
pub struct WebRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub timeout: Duration,
    pub max_response_bytes: usize,
}

/// What came back (after any redirects).
#[derive(Debug, Clone)]
pub struct WebResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub final_url: String,
}

impl WebResponse {
    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a request produced no response. Each message names what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub enum WebError {
    #[error(
        "the request took longer than {0:?} and was stopped: retry later, or ask a faster \
         endpoint"
    )]
    Timeout(Duration),
    #[error(
        "the response is larger than {0} bytes and was refused: ask for a smaller resource \
         (a range, a page of results)"
    )]
    TooLarge(usize),
    #[error(
        "the request was refused by the server's egress policy: {0}. Private, loopback and \
         link-local addresses need an administrator's [egress] allowed_private_hosts entry"
    )]
    Refused(String),
    #[error("the request failed: {0}")]
    Connection(String),
}

impl WebError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            WebError::Timeout(_) => ErrorKind::Timeout,
            WebError::Refused(_) => ErrorKind::Denied,
            WebError::TooLarge(_) => ErrorKind::OutputTooLarge,
            WebError::Connection(_) => ErrorKind::ExecutionError,
        }
    }
}

/// Sends one request on behalf of `owner` (whose allowlist applies).
#[async_trait]
pub trait WebClient: Send + Sync + std::fmt::Debug {
    async fn send(&self, owner: &str, request: WebRequest) -> Result<WebResponse, WebError>;

    /// The addresses to open a connection to `host` on `port` that is not an HTTP request
    /// (SMTP, IMAP) on behalf of `owner`, under the same rules as a request: the owner's and
    /// the policy's allowed domains, and every address the name resolves to checked (a private
    /// or loopback one only when `allowed_private_hosts` lists the host and port). Connect to
    /// these, never to the name again, so what was checked is what is reached.
    async fn connect_addresses(
        &self,
        owner: &str,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, WebError> {
        let _ = (owner, host, port);
        Err(WebError::Refused(
            "this server's client for built-ins opens no connection other than HTTP requests"
                .to_owned(),
        ))
    }
}

/// The egress guard as a [`WebClient`]: redirects followed and re-checked by the guard, the
/// owner's allowlist applied.
#[derive(Debug, Clone)]
pub struct GuardClient {
    guard: EgressGuard,
    owner_domains: HashMap<String, Vec<DomainPattern>>,
}

impl GuardClient {
    pub fn new(guard: EgressGuard, owner_domains: HashMap<String, Vec<DomainPattern>>) -> Self {
        GuardClient {
            guard,
            owner_domains,
        }
    }
}

#[async_trait]
impl WebClient for GuardClient {
    async fn send(&self, owner: &str, request: WebRequest) -> Result<WebResponse, WebError> {
        let guard = match self.owner_domains.get(owner) {
            Some(domains) => self.guard.for_owner(domains.clone()),
            None => self.guard.clone(),
        };
        let outbound = OutboundRequest {
            method: request.method,
            url: request.url,
            headers: request.headers,
            body: request.body,
        };
        let limit = request.timeout;
        let response = match tokio::time::timeout(limit, guard.send(outbound)).await {
            Err(_) => return Err(WebError::Timeout(limit)),
            Ok(Err(e)) => return Err(web_error(e, limit, request.max_response_bytes)),
            Ok(Ok(response)) => response,
        };
        if response.body.len() > request.max_response_bytes {
            return Err(WebError::TooLarge(request.max_response_bytes));
        }
        Ok(WebResponse {
            status: response.status,
            headers: response.headers,
            body: response.body,
            final_url: response.final_url,
        })
    }

    async fn connect_addresses(
        &self,
        owner: &str,
        host: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, WebError> {
        let guard = match self.owner_domains.get(owner) {
            Some(domains) => self.guard.for_owner(domains.clone()),
            None => self.guard.clone(),
        };
        let shown = if host.parse::<Ipv6Addr>().is_ok() {
            format!("[{host}]")
        } else {
            host.to_owned()
        };
        let limit = guard.policy().total_timeout;
        // The guard checks URLs: an https URL naming exactly this host and port is checked
        // (names, addresses, an allowed private host's port) as a request to it would be.
        let checked = guard
            .resolve_checked(&format!("https://{shown}:{port}/"))
            .await
            .map_err(|e| web_error(e, limit, 0))?;
        if checked.url.port_or_known_default() != Some(port) || checked.url.path() != "/" {
            return Err(WebError::Refused(format!("'{host}' is not a host name")));
        }
        Ok(checked
            .addrs
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect())
    }
}

fn web_error(e: EgressError, limit: Duration, max: usize) -> WebError {
    match e.code() {
        "timeout" => WebError::Timeout(limit),
        "response_too_large" => WebError::TooLarge(max),
        "connection_failed" | "dns_failed" => WebError::Connection(e.to_string()),
        _ => WebError::Refused(e.to_string()),
    }
}
