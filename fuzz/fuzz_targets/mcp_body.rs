//! The body of a `POST /mcp` as the server reads it before rmcp (`mcp/body.rs`: the limit, the
//! method the listen streams are counted by, the id a refusal carries), then as rmcp reads it
//! (a JSON-RPC message): parts `limit` (first two bytes), `body`.
//!
//! Asserts: no panic; a body within the limit is taken whole, one over it is refused with a
//! 413 JSON-RPC error; the method the server counts a request by is the one rmcp runs.
#![no_main]

#[path = "../common.rs"]
mod common;

use axum::body::Body;
use libfuzzer_sys::fuzz_target;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage};
use serde_json::Value;
use toolsmith_server::mcp::fuzzing;

fuzz_target!(|data: &[u8]| {
    let (head, body) = match data.split_first_chunk::<2>() {
        Some((head, body)) => (u16::from_le_bytes(*head), body),
        None => (0, data),
    };
    let limit = usize::from(head) % 2048;
    common::block_on(async {
        match fuzzing::read(Body::from(body.to_vec()), limit).await {
            Ok(bytes) => {
                assert!(body.len() <= limit);
                assert_eq!(&bytes[..], body);
            }
            Err(response) => {
                assert!(body.len() > limit);
                assert_eq!(response.status(), 413);
                let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
                    .await
                    .unwrap_or_default();
                let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                assert_eq!(answer["error"]["code"], -32600, "{answer}");
            }
        }
    });
    let method = fuzzing::method(body);
    let _ = fuzzing::request_id(body);
    if let Ok(JsonRpcMessage::Request(request)) =
        serde_json::from_slice::<ClientJsonRpcMessage>(body)
    {
        let parsed: Value = serde_json::to_value(&request.request).unwrap_or(Value::Null);
        if let Some(name) = parsed["method"].as_str() {
            assert_eq!(
                method.as_deref(),
                Some(name),
                "counted as {method:?}, run as {name}"
            );
        }
    }
});
