//! The seam to the network: a prepared request goes out through an injected `HttpSender`.
//!
//! This crate sends nothing itself. The host supplies the sender (in Toolsmith, one backed by the
//! egress guard); a real sender must not follow redirects, must honour `timeout`, and should stop
//! reading once the body passes `max_response_bytes`.

use std::time::Duration;

use async_trait::async_trait;

use crate::definition::Method;

/// A fully rendered request, ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedRequest {
    pub method: Method,
    /// Absolute http(s) URL, every parameter already encoded.
    pub url: String,
    /// Header name and value pairs; values are free of CR, LF and NUL.
    pub headers: Vec<(String, String)>,
    /// JSON text, when the endpoint has a body.
    pub body: Option<String>,
    pub timeout: Duration,
    /// Largest response body the caller will accept.
    pub max_response_bytes: usize,
}

impl PreparedRequest {
    /// The value of the first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// Why a request produced no response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    #[error("the request timed out")]
    Timeout,
    #[error("the request was refused: {0}")]
    Refused(String),
    #[error("the response was too large")]
    TooLarge,
    #[error("connection failed: {0}")]
    Connection(String),
}

/// Sends prepared requests (object-safe; the host passes `&dyn HttpSender`).
#[async_trait]
pub trait HttpSender: Send + Sync {
    async fn send(&self, req: PreparedRequest) -> Result<SenderResponse, SendError>;
}
