//! [`ApiError`]: every way a REST request fails, as one JSON envelope with a status that means
//! what it says, including the rejections of the extractors (`extract.rs`), so no plain-text
//! rejection ever leaves the REST API.
//!
//! Status rules (also in the OpenAPI descriptions and `docs/rest.md`):
//! - **400** the request itself is malformed: not JSON, wrong JSON types, unknown or missing
//!   fields, bad query parameters or headers. The document describes every such request.
//! - **401/403** authentication and scopes.
//! - **404** no such tool (or version) for this caller, or no such route.
//! - **405** the route exists but not with this method (`Allow` lists the methods).
//! - **409** the request conflicts with the current state: the name is taken, `expectedRevision`
//!   is stale, the tool's status does not allow the operation, an owner limit is reached.
//! - **413** the body (or a field of it, such as `code`) is larger than allowed.
//! - **415** a body that is not `application/json`.
//! - **422** a well-formed request whose content is invalid: a tool definition that breaks the
//!   rules (name, JSON Schema, code), or tool arguments that break the tool's schema.
//! - **429** rate limits (reserved).
//! - **500** an internal failure, never the caller's fault; the message is generic and the real
//!   error is logged with the request id.
//! - **503** the sandbox is saturated, the request timed out, or the store is unreachable
//!   (with `Retry-After`).

use std::borrow::Cow;

use axum::extract::Request;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::http::header::{ALLOW, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Value, json};
use toolsmith_service::ServiceError;
use utoipa::ToSchema;

use super::envelope::Meta;
use super::extract::is_json_content_type;

/// A failed request, as the caller sees it.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: Cow<'static, str>,
    message: String,
    details: Option<Value>,
    retry_after_secs: Option<u32>,
    /// The scope a 403 lacked: answered as RFC 6750's `insufficient_scope` challenge.
    missing_scope: Option<crate::auth::Scope>,
    /// What really went wrong, for the log only (internal errors).
    internal: Option<String>,
}

/// The real cause of a 500, carried in the response extensions to the logging middleware and
/// removed there; never serialized.
#[derive(Debug, Clone)]
pub struct InternalError(pub String);

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: Cow::Borrowed(code),
            message: message.into(),
            details: None,
            retry_after_secs: None,
            missing_scope: None,
            internal: None,
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 404 for a route that does not exist.
    pub fn no_route(method: &Method, path: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no route for {method} {}", printable_path(path)),
        )
    }

    /// 405: the route exists, the method does not.
    pub fn method_not_allowed(method: &Method, path: &str) -> ApiError {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            format!(
                "{method} is not allowed on {}; see the Allow header",
                printable_path(path)
            ),
        )
    }

    /// 413 for a body over the server's limit.
    pub fn body_too_large(limit: usize) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the request body is larger than the limit of {limit} bytes"),
        )
    }

    /// 500 with a generic message; `why` goes to the log only.
    pub fn internal(why: impl Into<String>) -> ApiError {
        let mut e = ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "internal error; the server log has the details under this request id",
        );
        e.internal = Some(why.into());
        e
    }

    /// 503 for a full sandbox, a timeout or an unreachable store, with `Retry-After`.
    pub fn unavailable(code: &'static str, message: impl Into<String>, retry_after: u32) -> Self {
        let mut e = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, code, message);
        e.retry_after_secs = Some(retry_after);
        e
    }

    #[must_use]
    pub fn with_details(mut self, details: Value) -> ApiError {
        self.details = Some(details);
        self
    }

    #[must_use]
    pub fn with_retry_after(mut self, seconds: u32) -> ApiError {
        self.retry_after_secs = Some(seconds);
        self
    }

    /// A 403 for want of `scope`: the answer carries `WWW-Authenticate: Bearer
    /// error="insufficient_scope", scope="…"` (RFC 6750 §3.1), which OAuth clients act on.
    pub fn with_missing_scope(mut self, scope: crate::auth::Scope) -> ApiError {
        self.missing_scope = Some(scope);
        self
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn code(&self) -> &str {
        &self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The generic envelope for a status produced outside the handlers (a body limit, a
    /// rejection of a layer), with the status's own wording.
    pub fn from_status(status: StatusCode) -> ApiError {
        let (code, message) = match status {
            StatusCode::BAD_REQUEST => ("bad_request", "the request is malformed"),
            StatusCode::UNAUTHORIZED => ("unauthorized", "authentication is required"),
            StatusCode::FORBIDDEN => ("forbidden", "not allowed"),
            StatusCode::NOT_FOUND => ("not_found", "not found"),
            StatusCode::METHOD_NOT_ALLOWED => {
                ("method_not_allowed", "method not allowed on this route")
            }
            StatusCode::REQUEST_TIMEOUT => ("timeout", "the request took too long"),
            StatusCode::PAYLOAD_TOO_LARGE => ("payload_too_large", "the request body is too large"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => (
                "unsupported_media_type",
                "the request body must be application/json",
            ),
            StatusCode::UNPROCESSABLE_ENTITY => ("unprocessable", "the request is invalid"),
            StatusCode::TOO_MANY_REQUESTS => ("rate_limited", "too many requests"),
            StatusCode::SERVICE_UNAVAILABLE => ("unavailable", "the service is unavailable"),
            s if s.is_server_error() => {
                return ApiError::internal(format!("a layer answered {s} without a body"));
            }
            _ => ("error", "the request failed"),
        };
        ApiError::new(status, code, message)
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code,
            self.message
        )
    }
}

/// The error envelope, as documented.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorEnvelope {
    /// Always `false` here.
    pub success: bool,
    pub error: ErrorBody,
    pub meta: Meta,
}

/// What went wrong.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Stable, machine-readable: `bad_request`, `invalid_body`, `malformed_json`,
    /// `invalid_query`, `invalid_header`, `unauthorized`, `forbidden`, `not_found`,
    /// `method_not_allowed`, `name_taken`, `revision_conflict`, `invalid_state`,
    /// `limit_reached`, `payload_too_large`, `too_large`, `unsupported_media_type`,
    /// `validation_error`, `invalid_arguments`, `rate_limited`, `internal_error`, `busy`,
    /// `timeout`, `unavailable`.
    #[schema(example = "not_found")]
    pub code: String,
    /// One line for a person: what failed and on which input.
    pub message: String,
    /// Structured facts (schema violations, the revisions of a conflict …), when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Object)]
    pub details: Option<Value>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let envelope = ErrorEnvelope {
            success: false,
            error: ErrorBody {
                code: self.code.into_owned(),
                message: self.message,
                details: self.details,
            },
            meta: Meta::now(),
        };
        let body = serde_json::to_vec(&envelope).unwrap_or_else(|_| {
            br#"{"success":false,"error":{"code":"internal_error","message":"internal error"}}"#
                .to_vec()
        });
        let mut res = (
            self.status,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body,
        )
            .into_response();
        if let Some(seconds) = self.retry_after_secs {
            res.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some(scope) = self.missing_scope
            && let Ok(value) = HeaderValue::from_str(&format!(
                "Bearer error=\"insufficient_scope\", scope=\"{}\"",
                scope.as_str()
            ))
        {
            res.headers_mut()
                .insert(axum::http::header::WWW_AUTHENTICATE, value);
        }
        if let Some(why) = self.internal {
            res.extensions_mut().insert(InternalError(why));
        }
        res
    }
}

impl From<ServiceError> for ApiError {
    fn from(e: ServiceError) -> ApiError {
        let message = e.to_string();
        match e {
            ServiceError::Validation(_) => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "validation_error",
                message,
            ),
            ServiceError::TooLarge(_) => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", message)
            }
            ServiceError::NotFound(_) => ApiError::new(StatusCode::NOT_FOUND, "not_found", message),
            ServiceError::NameTaken(_) => {
                ApiError::new(StatusCode::CONFLICT, "name_taken", message)
            }
            ServiceError::RevisionConflict { expected, actual } => {
                ApiError::new(StatusCode::CONFLICT, "revision_conflict", message)
                    .with_details(json!({"expectedRevision": expected, "currentRevision": actual}))
            }
            ServiceError::InvalidState(_) => {
                ApiError::new(StatusCode::CONFLICT, "invalid_state", message)
            }
            ServiceError::Forbidden(_) => {
                ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
            }
            ServiceError::ConfirmationRequired(_) => {
                ApiError::new(StatusCode::CONFLICT, "confirmation_required", message)
            }
            ServiceError::LimitReached(_) => {
                ApiError::new(StatusCode::CONFLICT, "limit_reached", message)
            }
            ServiceError::Store(e) if e.is_unavailable() => {
                tracing::error!(error = %e, "the store cannot be used");
                ApiError::unavailable(
                    "unavailable",
                    "the database cannot be used right now (disk full, read-only or \
                     unreachable; the server log says which); nothing was changed. Retry in a \
                     moment; if it lasts, the operator must free disk space or make the \
                     database writable or reachable again",
                    1,
                )
            }
            ServiceError::Store(e) => ApiError::internal(format!("store: {e}")),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> ApiError {
        if rejection.status().is_server_error() {
            return ApiError::internal(format!("path extraction: {}", rejection.body_text()));
        }
        ApiError::bad_request(
            "invalid_path",
            format!("invalid path parameter: {}", deepest_message(&rejection)),
        )
    }
}

impl From<QueryRejection> for ApiError {
    fn from(rejection: QueryRejection) -> ApiError {
        ApiError::bad_request(
            "invalid_query",
            format!("invalid query string: {}", deepest_message(&rejection)),
        )
    }
}

impl From<BytesRejection> for ApiError {
    fn from(rejection: BytesRejection) -> ApiError {
        match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the request body is larger than the limit",
            ),
            s if s.is_server_error() => {
                ApiError::internal(format!("reading the body: {}", rejection.body_text()))
            }
            _ => ApiError::bad_request(
                "bad_request",
                format!(
                    "the request body could not be read: {}",
                    deepest_message(&rejection)
                ),
            ),
        }
    }
}

/// The innermost message of an error chain (the serde or parse error behind a rejection).
fn deepest_message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut current = e;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// A path as it may be quoted in a message: at most 200 characters, control characters replaced.
pub(super) fn printable_path(path: &str) -> String {
    let mut out: String = path
        .chars()
        .take(200)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if path.chars().count() > 200 {
        out.push('…');
    }
    out
}

/// Makes sure every error leaving the wrapped routes is the JSON envelope: a response with an
/// error status that is not JSON (a rejection of some layer, an empty 4xx) is replaced by the
/// envelope for its status. Headers such as `Allow` and `Retry-After` are kept.
pub async fn envelope_errors(request: Request, next: Next) -> Response {
    let res = next.run(request).await;
    let status = res.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return res;
    }
    let is_json = res
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_json_content_type);
    if is_json {
        return res;
    }
    let (parts, _) = res.into_parts();
    let mut replacement = ApiError::from_status(status).into_response();
    for name in [ALLOW, RETRY_AFTER] {
        if let Some(value) = parts.headers.get(&name) {
            replacement.headers_mut().insert(name, value.clone());
        }
    }
    replacement.extensions_mut().extend(parts.extensions);
    replacement
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_errors_map_to_statuses() {
        let cases = [
            (
                ServiceError::Validation("bad".into()),
                422,
                "validation_error",
            ),
            (ServiceError::TooLarge("big".into()), 413, "too_large"),
            (ServiceError::NotFound("x".into()), 404, "not_found"),
            (ServiceError::NameTaken("t".into()), 409, "name_taken"),
            (
                ServiceError::RevisionConflict {
                    expected: 1,
                    actual: 2,
                },
                409,
                "revision_conflict",
            ),
            (ServiceError::InvalidState("s".into()), 409, "invalid_state"),
            (ServiceError::Forbidden("f".into()), 403, "forbidden"),
            (ServiceError::LimitReached("l".into()), 409, "limit_reached"),
        ];
        for (e, status, code) in cases {
            let api = ApiError::from(e);
            assert_eq!((api.status().as_u16(), api.code()), (status, code));
        }
    }
}
