//! [`EgressError`]: every reason an outbound request is refused or fails, each with a stable
//! machine code. Messages name the host as the caller wrote it and the *class* of a refused
//! address, never the resolved address itself.

use std::time::Duration;

use crate::classify::AddressClass;

/// Why an outbound request was refused or did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EgressError {
    #[error("only http and https URLs may be fetched, not '{0}:'")]
    SchemeNotAllowed(String),
    #[error("plain http is not allowed here; use https")]
    PlainHttpNotAllowed,
    #[error("invalid URL: {0}")]
    InvalidUrl(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("invalid egress policy: {0}")]
    InvalidPolicy(String),
    #[error("refused: '{host}' is {class}, which tools may not reach")]
    AddressRefused { host: String, class: AddressClass },
    #[error("refused: '{0}' is not one of the allowed domains")]
    DomainNotAllowed(String),
    #[error("could not resolve '{host}': {reason}")]
    DnsFailed { host: String, reason: String },
    #[error("too many redirects (at most {0} are followed)")]
    TooManyRedirects(usize),
    #[error("refused: a redirect to another origin ('{0}')")]
    RedirectOffOrigin(String),
    #[error("too many requests (at most {0} per execution)")]
    TooManyRequests(usize),
    #[error("the response is larger than the limit of {0} bytes")]
    ResponseTooLarge(usize),
    #[error("the request took longer than {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("could not reach '{host}': {reason}")]
    ConnectionFailed { host: String, reason: String },
}

impl EgressError {
    /// A stable, machine-readable code for the error's kind.
    pub fn code(&self) -> &'static str {
        match self {
            EgressError::SchemeNotAllowed(_) | EgressError::PlainHttpNotAllowed => {
                "scheme_not_allowed"
            }
            EgressError::InvalidUrl(_) => "invalid_url",
            EgressError::InvalidRequest(_) => "invalid_request",
            EgressError::InvalidPolicy(_) => "invalid_policy",
            EgressError::AddressRefused { .. } => "address_refused",
            EgressError::DomainNotAllowed(_) => "domain_not_allowed",
            EgressError::DnsFailed { .. } => "dns_failed",
            EgressError::TooManyRedirects(_) => "too_many_redirects",
            EgressError::RedirectOffOrigin(_) => "redirect_refused",
            EgressError::TooManyRequests(_) => "too_many_requests",
            EgressError::ResponseTooLarge(_) => "response_too_large",
            EgressError::Timeout(_) => "timeout",
            EgressError::ConnectionFailed { .. } => "connection_failed",
        }
    }
}
