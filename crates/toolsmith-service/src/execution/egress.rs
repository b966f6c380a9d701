//! The service's way out to the network: every outbound request of a JS tool's `fetch` and of
//! an HTTP tool goes through the egress guard (`toolsmith-egress`), which refuses private,
//! loopback and metadata addresses, re-checks redirects and caps sizes, time and requests.
//!
//! - [`EgressSender`] is the [`HttpSender`] of HTTP tools. It follows no redirects (a 3xx is
//!   refused, as spec 004 wants a tool to name its real endpoint) and honours the definition's
//!   timeout.
//! - JS tools get one [`EgressSession`](toolsmith_egress::EgressSession) per execution (see
//!   `js_tool.rs`), so the per-execution request cap holds across every `fetch` of a run.

use async_trait::async_trait;
use toolsmith_egress::{EgressError, EgressGuard, EgressPolicy, OutboundRequest};
use toolsmith_httptool::{HttpSender, PreparedRequest, SendError, SenderResponse};

/// Sends HTTP tools' requests through the guard.
pub struct EgressSender {
    guard: EgressGuard,
}

impl EgressSender {
    /// A sender on `policy`, with redirects off.
    pub fn new(policy: &EgressPolicy) -> Result<EgressSender, EgressError> {
        let policy = EgressPolicy {
            max_redirects: 0,
            ..policy.clone()
        };
        Ok(EgressSender {
            guard: EgressGuard::new(policy)?,
        })
    }

    /// A sender on an existing guard (one narrowed to an owner's allowlist).
    pub fn from_guard(guard: EgressGuard) -> EgressSender {
        EgressSender { guard }
    }

    /// The guard this sender sends through.
    pub fn guard(&self) -> &EgressGuard {
        &self.guard
    }
}

#[async_trait]
impl HttpSender for EgressSender {
    async fn send(&self, request: PreparedRequest) -> Result<SenderResponse, SendError> {
        let outbound = OutboundRequest {
            method: request.method.as_str().to_owned(),
            url: request.url,
            headers: request.headers,
            body: request.body.map(String::into_bytes),
        };
        let sent = tokio::time::timeout(request.timeout, self.guard.send(outbound)).await;
        let response = match sent {
            Err(_) => return Err(SendError::Timeout),
            Ok(Err(e)) => return Err(send_error(e)),
            Ok(Ok(response)) => response,
        };
        if response.body.len() > request.max_response_bytes {
            return Err(SendError::TooLarge);
        }
        Ok(SenderResponse {
            status: response.status,
            headers: response.headers,
            body: response.body,
        })
    }
}

fn send_error(e: EgressError) -> SendError {
    match e.code() {
        "timeout" => SendError::Timeout,
        "response_too_large" => SendError::TooLarge,
        "connection_failed" | "dns_failed" => SendError::Connection(e.to_string()),
        _ => SendError::Refused(e.to_string()),
    }
}
