//! The JSON envelope every REST answer travels in, and the request id it carries.
//!
//! Success: `{"success": true, "data": …, "meta": {"requestId", "timestamp"}}`.
//! Failure: `{"success": false, "error": {"code", "message", "details"?}, "meta": …}` (built by
//! [`ApiError`](super::error::ApiError)).
//!
//! The request id is chosen once per request by [`request_id_middleware`] (a fresh
//! `req_<32 hex>`, or the caller's own `X-Request-Id` if it is a short, plain token), echoed in
//! the `X-Request-Id` response header, and held in a task-local for the duration of the request
//! so that every envelope built while handling it, success or error, carries the same id.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::{ApiError, InternalError};

/// The header a request id travels in, both ways.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Longest caller-supplied request id that is reused as is.
const MAX_INCOMING_ID_LEN: usize = 64;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The id of the request being handled (a fresh one outside a request).
pub fn current_request_id() -> String {
    REQUEST_ID
        .try_with(Clone::clone)
        .unwrap_or_else(|_| new_request_id())
}

/// A fresh request id: `req_` and 32 hex digits.
pub fn new_request_id() -> String {
    format!("req_{}", uuid::Uuid::new_v4().simple())
}

/// Whether a caller-supplied request id is safe to reuse and echo: 1–64 characters of
/// `A-Z a-z 0-9 . _ -`.
pub fn is_sane_request_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_INCOMING_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Gives every request its id, runs the rest of the stack inside that id's scope, echoes the id
/// in `X-Request-Id`, and logs internal errors (which responses never describe) with it.
pub async fn request_id_middleware(request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| is_sane_request_id(v))
        .map_or_else(new_request_id, str::to_owned);
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let mut res = REQUEST_ID.scope(id.clone(), next.run(request)).await;
    if let Some(InternalError(why)) = res.extensions_mut().remove::<InternalError>() {
        tracing::error!(request_id = %id, %method, %path, error = %why, "internal error");
    }
    if let Ok(value) = HeaderValue::from_str(&id) {
        res.headers_mut()
            .insert(HeaderName::from_static(REQUEST_ID_HEADER), value);
    }
    res
}

/// `meta` of every envelope.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// The id of this request, also in the `X-Request-Id` response header.
    #[schema(example = "req_8d0f6a3c2b7e4f0a9c1d2e3f4a5b6c7d")]
    pub request_id: String,
    /// When the answer was made (RFC 3339, UTC, milliseconds).
    #[schema(value_type = String, format = DateTime, example = "2026-01-31T12:00:00.000Z")]
    pub timestamp: String,
}

impl Meta {
    /// The meta of the current request, stamped now.
    pub fn now() -> Meta {
        Meta {
            request_id: current_request_id(),
            timestamp: timestamp(Utc::now()),
        }
    }
}

fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The successful envelope, as documented: `data` is the operation's own schema.
#[derive(Debug, Serialize, ToSchema)]
pub struct Envelope<T> {
    /// Always `true` here.
    pub success: bool,
    pub data: T,
    pub meta: Meta,
}

/// A successful answer: a status, optional headers, and `data` wrapped in the envelope.
#[derive(Debug)]
pub struct ApiOk<T> {
    status: StatusCode,
    headers: HeaderMap,
    data: T,
}

impl<T: Serialize> ApiOk<T> {
    /// `200 OK` with `data`.
    pub fn ok(data: T) -> ApiOk<T> {
        ApiOk::with_status(StatusCode::OK, data)
    }

    /// `201 Created` with `data`.
    pub fn created(data: T) -> ApiOk<T> {
        ApiOk::with_status(StatusCode::CREATED, data)
    }

    pub fn with_status(status: StatusCode, data: T) -> ApiOk<T> {
        ApiOk {
            status,
            headers: HeaderMap::new(),
            data,
        }
    }

    /// Adds a response header.
    #[must_use]
    pub fn header(mut self, name: HeaderName, value: HeaderValue) -> ApiOk<T> {
        self.headers.insert(name, value);
        self
    }
}

impl<T: Serialize> IntoResponse for ApiOk<T> {
    fn into_response(self) -> Response {
        let envelope = Envelope {
            success: true,
            data: self.data,
            meta: Meta::now(),
        };
        match serde_json::to_vec(&envelope) {
            Ok(body) => {
                let mut res = (
                    self.status,
                    [(
                        axum::http::header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    )],
                    body,
                )
                    .into_response();
                res.headers_mut().extend(self.headers);
                res
            }
            Err(e) => {
                ApiError::internal(format!("response did not serialize: {e}")).into_response()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids() {
        let id = new_request_id();
        assert!(id.starts_with("req_") && id.len() == 36, "{id}");
        assert!(is_sane_request_id(&id));
        assert!(is_sane_request_id("trace-1.2_3"));
        assert!(!is_sane_request_id(""));
        assert!(!is_sane_request_id("has space"));
        assert!(!is_sane_request_id("<script>"));
        assert!(!is_sane_request_id(&"a".repeat(65)));
    }

    #[test]
    fn timestamps_are_rfc3339_millis_utc() {
        let at = DateTime::parse_from_rfc3339("2026-01-31T12:00:00.5+01:00")
            .map(|t| t.with_timezone(&Utc))
            .ok();
        assert_eq!(
            at.map(timestamp).as_deref(),
            Some("2026-01-31T11:00:00.500Z")
        );
    }
}
