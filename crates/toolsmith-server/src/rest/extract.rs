//! The extractors of the REST handlers: JSON bodies (`ApiJson`, `OptionalApiJson`), path
//! parameters (`ApiPath`) and the query string (`QueryPairs`), each rejecting with the
//! [`ApiError`] envelope and a message that names what was wrong.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolsmith_core::json_type;

use super::error::{ApiError, printable_path};

/// The body limit of the server, put into the request extensions by the app so that a body cut
/// off while being read is reported with the limit.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimit(pub usize);

/// A JSON request body deserialized into `T` (a request type that denies unknown fields).
///
/// Rejections, all as the envelope: 415 without a JSON content type, 413 over the body limit,
/// 400 `malformed_json` for invalid JSON, 400 `invalid_body` for valid JSON of the wrong shape
/// (wrong types, unknown or missing fields), naming the field.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

/// Like [`ApiJson`], but an empty body is allowed (`None`).
#[derive(Debug)]
pub struct OptionalApiJson<T>(pub Option<T>);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        match OptionalApiJson::<T>::from_request(request, state).await? {
            OptionalApiJson(Some(value)) => Ok(ApiJson(value)),
            OptionalApiJson(None) => Err(ApiError::bad_request(
                "invalid_body",
                "this request needs a JSON object body",
            )),
        }
    }
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for OptionalApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = request
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(is_json_content_type);
        let limit = request.extensions().get::<BodyLimit>().map(|l| l.0);
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| match limit {
                Some(limit) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                    ApiError::body_too_large(limit)
                }
                _ => ApiError::from(rejection),
            })?;
        if bytes.is_empty() {
            return Ok(OptionalApiJson(None));
        }
        if !is_json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "the request body must be JSON, sent with Content-Type: application/json",
            ));
        }
        let value = serde_json::from_slice::<Value>(&bytes).map_err(|e| {
            ApiError::bad_request(
                "malformed_json",
                format!("the request body is not valid JSON: {e}"),
            )
        })?;
        match value {
            // A literal `null` is the same as no body.
            Value::Null => Ok(OptionalApiJson(None)),
            // Checked here: serde would also read a struct from an array, by position.
            Value::Object(_) => serde_json::from_value::<T>(value)
                .map(|v| OptionalApiJson(Some(v)))
                .map_err(|e| {
                    ApiError::bad_request(
                        "invalid_body",
                        format!(
                            "invalid request body: {}",
                            toolsmith_core::schema::message_without_values(&e.to_string())
                        ),
                    )
                }),
            other => Err(ApiError::bad_request(
                "invalid_body",
                format!(
                    "the request body must be a JSON object, not {}",
                    json_type(&other)
                ),
            )),
        }
    }
}

/// Whether a `Content-Type` is JSON: `application/json`, or an `application/…+json` type.
pub(crate) fn is_json_content_type(value: &str) -> bool {
    let essence = value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// A path parameter, with the rejection as an envelope.
#[derive(Debug)]
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(value) =
            axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(ApiPath(value))
    }
}

/// The query string as name/value pairs, in order (handlers check names and values themselves,
/// so every message names the parameter).
#[derive(Debug)]
pub struct QueryPairs(pub Vec<(String, String)>);

impl<S: Send + Sync> FromRequestParts<S> for QueryPairs {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(pairs) =
            axum::extract::Query::<Vec<(String, String)>>::from_request_parts(parts, state).await?;
        Ok(QueryPairs(pairs))
    }
}

impl QueryPairs {
    /// Refuses names not in `known` and names given twice.
    pub fn check(&self, known: &[&str]) -> Result<(), ApiError> {
        for (idx, (name, _)) in self.0.iter().enumerate() {
            if !known.contains(&name.as_str()) {
                return Err(ApiError::bad_request(
                    "invalid_query",
                    format!(
                        "unknown query parameter `{}` (expected one of: {})",
                        printable_path(name),
                        known.join(", ")
                    ),
                ));
            }
            if self.0.iter().take(idx).any(|(n, _)| n == name) {
                return Err(ApiError::bad_request(
                    "invalid_query",
                    format!("query parameter `{name}` is given more than once"),
                ));
            }
        }
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A text parameter of 1 to `max` characters; `what` names what it holds in the error.
    pub fn text(&self, name: &str, max: usize, what: &str) -> Result<Option<&str>, ApiError> {
        match self.get(name) {
            Some(v) if v.is_empty() || v.chars().count() > max => Err(ApiError::bad_request(
                "invalid_query",
                format!(
                    "query parameter `{name}` must be {what} of 1 to {max} characters (leave it out for no filter)"
                ),
            )),
            value => Ok(value),
        }
    }

    /// An integer parameter within `min..=max`.
    pub fn integer(&self, name: &str, min: u64, max: u64) -> Result<Option<u64>, ApiError> {
        let Some(raw) = self.get(name) else {
            return Ok(None);
        };
        match raw.parse::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            _ => Err(ApiError::bad_request(
                "invalid_query",
                format!(
                    "query parameter `{name}` must be an integer from {min} to {max}, got '{}'",
                    printable_path(raw)
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types() {
        assert!(is_json_content_type("application/json"));
        assert!(is_json_content_type("Application/JSON; charset=utf-8"));
        assert!(is_json_content_type("application/merge-patch+json"));
        assert!(!is_json_content_type("text/plain"));
        assert!(!is_json_content_type("application/x-www-form-urlencoded"));
    }
}
