//! The error of a tool call: what the model is told, what kind of failure it was, and the HTTP
//! status when there was one.

use std::fmt;

use serde::Serialize;

/// What kind of failure a call ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HttpErrorKind {
    /// An argument was of the wrong type or may not be passed explicitly.
    InvalidArguments,
    /// A required parameter had no value in its source.
    MissingParameter,
    /// The request could not be built safely (CR/LF in a header, a `..` path segment, a missing
    /// config value, a URL that is not http(s), …).
    Render,
    /// The sender refused the request (egress policy).
    Refused,
    /// No response within the endpoint timeout.
    Timeout,
    /// The response was over the size limit.
    TooLarge,
    /// HTTP 404.
    NotFound,
    /// HTTP 401 or 403.
    Unauthorized,
    /// HTTP 429.
    RateLimited,
    /// Any other non-2xx status, or a connection failure.
    ApiError,
    /// A 2xx response whose body is not JSON.
    InvalidResponse,
    /// The response template failed (out of fuel, output too large, runtime error).
    Template,
}

impl HttpErrorKind {
    /// Stable machine code.
    pub fn code(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid_arguments",
            Self::MissingParameter => "missing_parameter",
            Self::Render => "render_refused",
            Self::Refused => "egress_refused",
            Self::Timeout => "timeout",
            Self::TooLarge => "response_too_large",
            Self::NotFound => "not_found",
            Self::Unauthorized => "unauthorized",
            Self::RateLimited => "rate_limited",
            Self::ApiError => "api_error",
            Self::InvalidResponse => "invalid_response",
            Self::Template => "template_error",
        }
    }
}

/// A failed call: `message` is meant for the model (for HTTP failures it is the definition's
/// `error_handling` text); `detail` is for logs and the tool's owner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HttpToolError {
    pub kind: HttpErrorKind,
    pub message: String,
    /// The upstream HTTP status, when a response arrived.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl HttpToolError {
    pub(crate) fn new(kind: HttpErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            status: None,
            detail: None,
        }
    }

    #[must_use]
    pub(crate) fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    #[must_use]
    pub(crate) fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// Stable machine code of the kind.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl fmt::Display for HttpToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(status) = self.status {
            write!(f, " (HTTP {status})")?;
        }
        Ok(())
    }
}

impl std::error::Error for HttpToolError {}
