//! The body of a `POST /mcp`, read here before rmcp sees it.
//!
//! - Its limit is the larger of `body_limit` and [`MIN_BODY_BYTES`], so a write of the
//!   documented largest size (10 MiB, even as base64) fits, as it does over stdio.
//! - A body over the limit is read to its end and thrown away (up to [`DRAIN_FACTOR`] times the
//!   limit), then answered `413` with a JSON-RPC error that names the limit and carries the
//!   request's `id` when its first [`ID_SCAN_BYTES`] show it (else `null`). Answering before the
//!   client has sent its body would close the connection under it: the official Python SDK then
//!   lost the whole session to a bare `ReadError`; this way only that call fails.
//! - [`method`] tells which JSON-RPC method a body calls without building its tree, so the
//!   listen streams can be counted before rmcp opens one.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt as _;
use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// The least body limit of `/mcp`: 16 MiB, so a 10 MiB write fits even as base64 (13.4 MiB)
/// with its JSON-RPC envelope.
pub(crate) const MIN_BODY_BYTES: usize = 16 * 1024 * 1024;

/// How much past the limit is still read (and thrown away) so the client can hear the answer;
/// a body larger than this many limits is cut off and its connection closed.
const DRAIN_FACTOR: usize = 4;

/// How much of an oversized body is searched for the request's `id`.
const ID_SCAN_BYTES: usize = 64 * 1024;

/// The body limit of `/mcp` for the server's `body_limit`.
pub(crate) fn limit(body_limit: usize) -> usize {
    body_limit.max(MIN_BODY_BYTES)
}

/// Why a body could not be taken.
pub(crate) enum Refused {
    /// Over `limit`: the first bytes (for the id), and whether the rest was read to its end.
    TooLarge {
        limit: usize,
        prefix: Bytes,
        drained: bool,
    },
    /// The connection failed while the body was read.
    Broken(String),
}

/// The whole body, at most `limit` bytes.
pub(crate) async fn read(mut body: Body, limit: usize) -> Result<Bytes, Refused> {
    let mut kept: Vec<u8> = Vec::new();
    let mut seen: usize = 0;
    let drain_max = limit.saturating_mul(DRAIN_FACTOR);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| Refused::Broken(e.to_string()))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let over_before = seen > limit;
        seen = seen.saturating_add(data.len());
        if seen <= limit {
            kept.extend_from_slice(&data);
        } else if !over_before {
            // The first frame past the limit: keep only what the id search needs.
            kept.truncate(ID_SCAN_BYTES);
            let room = ID_SCAN_BYTES - kept.len();
            kept.extend(data.iter().take(room));
        }
        if seen > drain_max {
            return Err(Refused::TooLarge {
                limit,
                prefix: Bytes::from(kept),
                drained: false,
            });
        }
    }
    if seen > limit {
        return Err(Refused::TooLarge {
            limit,
            prefix: Bytes::from(kept),
            drained: true,
        });
    }
    Ok(Bytes::from(kept))
}

impl Refused {
    /// The answer: `413` with a JSON-RPC error naming the limit (the request's id when it was
    /// found), or `400` for a body that broke off.
    pub(crate) fn into_response(self) -> Response {
        match self {
            Refused::TooLarge {
                limit,
                prefix,
                drained,
            } => {
                let message = format!(
                    "the request body is larger than the limit of /mcp, {limit} bytes ({} MiB: \
                     the larger of body_limit and 16 MiB); send less in one call (write a large \
                     file in parts), or raise body_limit",
                    limit / (1024 * 1024)
                );
                let mut response =
                    error(StatusCode::PAYLOAD_TOO_LARGE, request_id(&prefix), message);
                if !drained {
                    response
                        .headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                response
            }
            Refused::Broken(why) => error(
                StatusCode::BAD_REQUEST,
                Value::Null,
                format!("the request body could not be read: {why}"),
            ),
        }
    }
}

/// A JSON-RPC error response (code -32600, invalid request) with `status`.
pub(crate) fn error(status: StatusCode, id: Value, message: String) -> Response {
    (
        status,
        axum::Json(serde_json::json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32600, "message": message},
        })),
    )
        .into_response()
}

/// The `id` of the JSON-RPC request `body` begins with, if the part of it at hand shows one (a
/// number or a string); `null` otherwise.
pub(crate) fn request_id(body: &[u8]) -> Value {
    match member(body, "id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id,
        _ => Value::Null,
    }
}

/// The `method` of the JSON-RPC request `body`, if it is one object that names it.
pub(crate) fn method(body: &[u8]) -> Option<String> {
    match member(body, "method") {
        Some(Value::String(method)) => Some(method),
        _ => None,
    }
}

/// The top-level member `name` of the JSON object `body` begins with, read as far as needed
/// (the other members' values are skipped without being built; a body cut short after the
/// member still yields it).
fn member(body: &[u8], name: &'static str) -> Option<Value> {
    struct Find<'a> {
        name: &'static str,
        found: &'a mut Option<Value>,
    }
    impl<'de> Visitor<'de> for Find<'_> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON-RPC object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == self.name {
                    *self.found = Some(map.next_value()?);
                    // Stop here: the rest may be cut short, and is not needed.
                    return Err(serde::de::Error::custom("found"));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut found = None;
    let _ = serde_json::Deserializer::from_slice(body).deserialize_map(Find {
        name,
        found: &mut found,
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_id_is_found_in_a_body_cut_short() {
        let body = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"content":"aaaa"#;
        assert_eq!(request_id(body), json!(42));
        assert_eq!(method(body).as_deref(), Some("tools/call"));
        let body = br#"{ "id" : "req-7", "params": {"a": [1, 2"#;
        assert_eq!(request_id(body), json!("req-7"));
        // After a value cut short, or of a kind JSON-RPC does not allow: null.
        assert_eq!(request_id(br#"{"params":{"content":"aaa"#), Value::Null);
        assert_eq!(request_id(br#"{"id":{"x":1},"method":"m"}"#), Value::Null);
        assert_eq!(request_id(b"[1,2]"), Value::Null);
        assert_eq!(request_id(b"not json"), Value::Null);
        // An escaped name is still the name.
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"subscriptions\/listen","params":{}}"#;
        assert_eq!(method(body).as_deref(), Some("subscriptions/listen"));
        // A nested "method" is not the request's.
        assert_eq!(method(br#"{"params":{"method":"x"}}"#), None);
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_read_to_its_end_and_refused_with_its_id() {
        let mut body = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"x":""#.to_vec();
        body.extend(std::iter::repeat_n(b'a', 300));
        body.extend(br#""}}"#);
        let Err(Refused::TooLarge {
            limit,
            prefix,
            drained,
        }) = read(Body::from(body.clone()), 100).await
        else {
            panic!("over the limit")
        };
        assert_eq!((limit, drained), (100, true));
        assert_eq!(request_id(&prefix), json!(9));
        assert!(read(Body::from(body.clone()), body.len()).await.is_ok());
        // Far past the limit: cut off, and the connection will close.
        let Err(Refused::TooLarge { drained, .. }) = read(Body::from(body), 10).await else {
            panic!("over the limit")
        };
        assert!(!drained);
    }
}
