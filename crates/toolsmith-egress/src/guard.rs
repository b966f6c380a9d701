//! [`EgressGuard`] (one `reqwest` client and the policy) and [`EgressSession`] (one
//! execution's request budget): sending a request, following redirects by hand with every hop
//! checked again, and reading the body under the size cap; and [`OriginClient`], a client bound
//! to one origin for a long-lived peer (an upstream MCP server over HTTP).

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Method, StatusCode};
use url::Url;

use crate::check::check_url_for;
use crate::error::EgressError;
use crate::policy::{DomainPattern, EgressPolicy, normalize_host};
use crate::resolve::{GuardResolver, NameResolver, SystemResolver, resolve_and_check};
use crate::tls::client_builder;

/// Request headers a caller may not set: they belong to the HTTP layer (a forged
/// `content-length` or `transfer-encoding` smuggles requests) or to proxies.
const FORBIDDEN_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "proxy-authorization",
    "proxy-connection",
];

/// Headers dropped when a redirect leaves the origin.
const CREDENTIAL_HEADERS: &[HeaderName] = &[header::AUTHORIZATION, header::COOKIE];

/// One outbound request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutboundRequest {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`, `HEAD` or `OPTIONS` (any case); empty is `GET`.
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
}

/// The response to an [`OutboundRequest`], after redirects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundResponse {
    pub status: u16,
    /// The reason phrase of the status (`OK`, `Not Found`), empty when unknown.
    pub status_text: String,
    /// Names lowercase, in the order received; values that are not UTF-8 are decoded lossily.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The URL that answered, after redirects.
    pub final_url: String,
}

/// A URL that passed every check, with the addresses its host resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedUrl {
    pub url: Url,
    pub addrs: Vec<IpAddr>,
}

/// The egress guard: every outbound request of a tool goes through one.
///
/// Cheap to clone (the `reqwest` client and policy are shared). Make one per process with the
/// operator's policy; [`EgressGuard::for_owner`] narrows it to an owner's allowed domains, and
/// [`EgressGuard::session`] starts the request budget of one execution.
#[derive(Clone)]
pub struct EgressGuard {
    client: Client,
    policy: Arc<EgressPolicy>,
    owner_domains: Arc<Vec<DomainPattern>>,
    resolver: Arc<dyn NameResolver>,
}

impl std::fmt::Debug for EgressGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EgressGuard")
            .field("policy", &self.policy)
            .field("owner_domains", &self.owner_domains)
            .finish_non_exhaustive()
    }
}

impl EgressGuard {
    /// A guard using the system resolver.
    pub fn new(policy: EgressPolicy) -> Result<EgressGuard, EgressError> {
        EgressGuard::with_resolver(policy, Arc::new(SystemResolver))
    }

    /// A guard resolving names with `resolver`.
    pub fn with_resolver(
        policy: EgressPolicy,
        resolver: Arc<dyn NameResolver>,
    ) -> Result<EgressGuard, EgressError> {
        let hook = hook(&resolver, &policy);
        let client = client_builder(hook)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(cannot_build)?;
        Ok(EgressGuard {
            client,
            policy: Arc::new(policy),
            owner_domains: Arc::new(Vec::new()),
            resolver,
        })
    }

    /// The operator's policy.
    pub fn policy(&self) -> &EgressPolicy {
        &self.policy
    }

    /// This guard narrowed to one owner's allowed domains. A host must then match the owner's
    /// list *and* the policy's list (an empty list matches everything): an owner can narrow
    /// what the operator allows, never widen it. Shares the client.
    pub fn for_owner(&self, allowed_domains: Vec<DomainPattern>) -> EgressGuard {
        EgressGuard {
            owner_domains: Arc::new(allowed_domains),
            ..self.clone()
        }
    }

    /// The request budget of one execution (`policy.max_requests`).
    pub fn session(&self) -> EgressSession {
        EgressSession {
            guard: self.clone(),
            sent: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Checks `url` without resolving it (scheme, allowed domains, IP literals, `localhost`).
    pub fn check_url(&self, url: &str) -> Result<Url, EgressError> {
        check_url_for(url, &self.policy, &self.owner_domains)
    }

    /// Checks `url` and resolves its host, checking every address: what a request would be
    /// refused for, without sending one. For validation-time checks.
    pub async fn resolve_checked(&self, url: &str) -> Result<CheckedUrl, EgressError> {
        let url = self.check_url(url)?;
        let addrs = match url.host() {
            Some(url::Host::Ipv4(ip)) => vec![IpAddr::V4(ip)],
            Some(url::Host::Ipv6(ip)) => vec![IpAddr::V6(ip)],
            Some(url::Host::Domain(name)) => {
                let name = normalize_host(name);
                let lookup = resolve_and_check(
                    &*self.resolver,
                    &name,
                    url.port_or_known_default(),
                    &self.policy.allowed_private_hosts,
                );
                tokio::time::timeout(self.policy.total_timeout, lookup)
                    .await
                    .map_err(|_| EgressError::Timeout(self.policy.total_timeout))??
            }
            None => return Err(EgressError::InvalidUrl("the URL has no host".to_owned())),
        };
        Ok(CheckedUrl { url, addrs })
    }

    /// A client for one origin, for a peer spoken to over many requests and long-lived
    /// streams (an upstream MCP server over streamable HTTP) through a library that takes a
    /// `reqwest::Client`. `url` is checked now as [`EgressGuard::check_url`] checks it (scheme,
    /// allowed domains, IP literals, an allowed private host's port); the name is resolved and
    /// checked by the guard's DNS hook on every connection, so it never reaches a refused
    /// address unless listed in `allowed_private_hosts`. Redirects are followed only within
    /// the origin (at most `max_redirects`); one to another origin fails the request. No total
    /// timeout (its streams stay open): the caller bounds each exchange.
    pub fn origin_client(&self, url: &str) -> Result<OriginClient, EgressError> {
        let url = self.check_url(url)?;
        let origin = url.origin();
        let max = self.policy.max_redirects;
        let redirects = reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > max {
                attempt.error(EgressError::TooManyRedirects(max))
            } else if attempt.url().origin() != origin {
                let to = attempt.url().host_str().map(normalize_host);
                attempt.error(EgressError::RedirectOffOrigin(to.unwrap_or_default()))
            } else {
                attempt.follow()
            }
        });
        let client = client_builder(hook(&self.resolver, &self.policy))
            .redirect(redirects)
            .build()
            .map_err(cannot_build)?;
        Ok(OriginClient { url, client })
    }

    /// Sends one request under the policy, outside any session's budget.
    pub async fn send(&self, request: OutboundRequest) -> Result<OutboundResponse, EgressError> {
        let limit = self.policy.total_timeout;
        tokio::time::timeout(limit, self.send_within(request))
            .await
            .unwrap_or(Err(EgressError::Timeout(limit)))
    }

    async fn send_within(&self, request: OutboundRequest) -> Result<OutboundResponse, EgressError> {
        let mut method = parse_method(&request.method)?;
        let mut headers = parse_headers(&request.headers)?;
        let mut body = request.body;
        let mut url = self.check_url(&request.url)?;
        let mut redirects = 0;
        loop {
            let mut builder = self
                .client
                .request(method.clone(), url.clone())
                .headers(headers.clone());
            if let Some(body) = &body {
                builder = builder.body(body.clone());
            }
            let response = builder.send().await.map_err(|e| failure(e, &url))?;
            let status = response.status();
            if let Some(location) = redirect_target(&response) {
                if redirects >= self.policy.max_redirects {
                    return Err(EgressError::TooManyRedirects(self.policy.max_redirects));
                }
                redirects += 1;
                let next = url
                    .join(&location)
                    .map_err(|e| EgressError::InvalidUrl(format!("redirect target: {e}")))?;
                let next = self.check_url(next.as_str())?;
                if status == StatusCode::SEE_OTHER
                    || (method == Method::POST
                        && matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND))
                {
                    if method != Method::HEAD {
                        method = Method::GET;
                    }
                    body = None;
                    headers.remove(header::CONTENT_TYPE);
                }
                if next.origin() != url.origin() {
                    for name in CREDENTIAL_HEADERS {
                        headers.remove(name);
                    }
                }
                url = next;
                continue;
            }
            return read_response(response, self.policy.max_response_bytes).await;
        }
    }
}

/// A `reqwest` client bound to one checked origin: see [`EgressGuard::origin_client`].
#[derive(Debug, Clone)]
pub struct OriginClient {
    /// The checked URL it was made for.
    pub url: Url,
    /// The client: the guard's DNS hook, TLS and proxy settings, redirects only within `url`'s
    /// origin.
    pub client: Client,
}

fn hook(resolver: &Arc<dyn NameResolver>, policy: &EgressPolicy) -> GuardResolver {
    GuardResolver {
        resolver: resolver.clone(),
        private_hosts: Arc::new(policy.allowed_private_hosts.clone()),
    }
}

fn cannot_build(e: reqwest::Error) -> EgressError {
    EgressError::InvalidPolicy(format!("cannot build the HTTP client: {e}"))
}

/// One execution's view of the guard: at most `policy.max_requests` requests, counted
/// whether they succeed or not. Cheap to clone; clones share the count.
#[derive(Debug, Clone)]
pub struct EgressSession {
    guard: EgressGuard,
    sent: Arc<AtomicUsize>,
}

impl EgressSession {
    /// Sends `request` if the budget allows; redirects do not count as extra requests.
    pub async fn send(&self, request: OutboundRequest) -> Result<OutboundResponse, EgressError> {
        let max = self.guard.policy.max_requests;
        self.sent
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            })
            .map_err(|_| EgressError::TooManyRequests(max))?;
        self.guard.send(request).await
    }

    /// Requests started so far.
    pub fn requests_sent(&self) -> usize {
        self.sent.load(Ordering::SeqCst)
    }

    /// The guard this session draws on.
    pub fn guard(&self) -> &EgressGuard {
        &self.guard
    }
}

fn parse_method(method: &str) -> Result<Method, EgressError> {
    let upper = method.trim().to_ascii_uppercase();
    Ok(match upper.as_str() {
        "" | "GET" => Method::GET,
        "POST" => Method::POST,
        "PUT" => Method::PUT,
        "PATCH" => Method::PATCH,
        "DELETE" => Method::DELETE,
        "HEAD" => Method::HEAD,
        "OPTIONS" => Method::OPTIONS,
        _ => {
            return Err(EgressError::InvalidRequest(format!(
                "method '{method}' is not allowed (use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS)"
            )));
        }
    })
}

fn parse_headers(headers: &[(String, String)]) -> Result<HeaderMap, EgressError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
            EgressError::InvalidRequest(format!("'{name}' is not a valid header name"))
        })?;
        if FORBIDDEN_HEADERS.contains(&name.as_str()) {
            return Err(EgressError::InvalidRequest(format!(
                "the header '{name}' may not be set"
            )));
        }
        let value = HeaderValue::from_str(value).map_err(|_| {
            EgressError::InvalidRequest(format!("the value of header '{name}' is not valid"))
        })?;
        map.append(name, value);
    }
    Ok(map)
}

/// The `Location` of a redirect the guard follows; `None` for any other response.
fn redirect_target(response: &reqwest::Response) -> Option<String> {
    let followed = matches!(
        response.status(),
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    );
    if !followed {
        return None;
    }
    let location = response.headers().get(header::LOCATION)?;
    Some(String::from_utf8_lossy(location.as_bytes()).into_owned())
}

/// Reads the body chunk by chunk, refusing it as soon as it would pass `max` bytes.
async fn read_response(
    mut response: reqwest::Response,
    max: usize,
) -> Result<OutboundResponse, EgressError> {
    let final_url = response.url().clone();
    if response
        .content_length()
        .is_some_and(|len| len > max as u64)
    {
        return Err(EgressError::ResponseTooLarge(max));
    }
    let status = response.status();
    let headers = response
        .headers()
        .iter()
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failure(e, &final_url))? {
        if body.len() + chunk.len() > max {
            return Err(EgressError::ResponseTooLarge(max));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(OutboundResponse {
        status: status.as_u16(),
        status_text: status.canonical_reason().unwrap_or_default().to_owned(),
        headers,
        body,
        final_url: final_url.to_string(),
    })
}

/// The guard's own refusal if the DNS hook refused, otherwise a connection failure.
fn failure(error: reqwest::Error, url: &Url) -> EgressError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&error);
    while let Some(e) = source {
        if let Some(refusal) = e.downcast_ref::<EgressError>() {
            return refusal.clone();
        }
        source = e.source();
    }
    let host = url.host_str().map(normalize_host).unwrap_or_default();
    let reason = if error.is_timeout() {
        "timed out".to_owned()
    } else if error.is_connect() {
        "the connection failed".to_owned()
    } else {
        "the request failed".to_owned()
    };
    EgressError::ConnectionFailed { host, reason }
}
