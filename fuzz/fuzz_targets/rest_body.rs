//! REST request bodies and query strings at the extractors (`rest/extract.rs`: `ApiJson`,
//! `QueryPairs`), into the request types of the routes that take definitions and calls:
//! parts `type selector` (first byte), `Content-Type`, `body`, `query string`.
//!
//! Asserts: no panic; every refusal is a 4xx envelope; a refusal's message never shows a string
//! value of the body (issue 12: serde quotes values, the extractor takes them out).
#![no_main]

#[path = "../common.rs"]
mod common;

use axum::body::Body;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolsmith_server::definition::{CreateToolBody, TestToolBody};
use toolsmith_server::rest::error::ApiError;
use toolsmith_server::rest::extract::{ApiJson, QueryPairs};
use toolsmith_server::rest::mcp_servers::McpServerBody;
use toolsmith_server::rest::policies::PolicyBody;
use toolsmith_server::rest::types::{
    ConfigEntryBody, ConfigServiceBody, ExecuteBody, UpdateToolBody,
};

fn request(content_type: &str, body: &str, query: &str) -> Option<Request> {
    Request::builder()
        .method("POST")
        .uri(format!("/api/v1/x?{query}"))
        .header(CONTENT_TYPE, content_type)
        .body(Body::from(body.to_owned()))
        .ok()
}

/// The message of a refusal, after checking it is a 4xx envelope.
async fn refusal(err: ApiError) -> String {
    let response = err.into_response();
    assert!(response.status().is_client_error(), "{}", response.status());
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap_or_default();
    let envelope: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    envelope["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn extract<T: DeserializeOwned>(req: Request) -> Result<T, String> {
    match ApiJson::<T>::from_request(req, &()).await {
        Ok(ApiJson(value)) => Ok(value),
        Err(err) => Err(refusal(err).await),
    }
}

/// String values of the body (not keys) that could be a secret and are not a name the message
/// may rightly use (field and variant names are letters and `_`).
fn values<'v>(value: &'v Value, keys: &mut Vec<&'v str>, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| values(v, keys, out)),
        Value::Object(map) => {
            for (k, v) in map {
                keys.push(k);
                values(v, keys, out);
            }
        }
        _ => {}
    }
}

async fn run(kind: u8, req: Request) -> Result<(), String> {
    match kind % 8 {
        0 => {
            let body: CreateToolBody = extract(req).await?;
            let _ = body.into_input();
        }
        1 => {
            let body: TestToolBody = extract(req).await?;
            let _ = body.created_by();
            let _ = body.into_parts();
        }
        2 => drop(extract::<UpdateToolBody>(req).await?),
        3 => drop(extract::<ExecuteBody>(req).await?),
        4 => drop(extract::<PolicyBody>(req).await?),
        5 => drop(extract::<McpServerBody>(req).await?),
        6 => drop(extract::<ConfigServiceBody>(req).await?),
        _ => drop(extract::<ConfigEntryBody>(req).await?),
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let Some(parts) = common::parts(data) else {
        return;
    };
    let kind = common::part(&parts, 0).bytes().next().unwrap_or(0);
    let content_type = match common::part(&parts, 1) {
        "" => "application/json",
        other => other,
    };
    let body = common::part(&parts, 2);
    let query = common::part(&parts, 3);
    let Some(req) = request(content_type, body, query) else {
        return;
    };
    common::block_on(async {
        let (mut head, rest) = req.into_parts();
        match QueryPairs::from_request_parts(&mut head, &()).await {
            Ok(pairs) => {
                if let Err(err) = pairs.check(&["limit", "q"]) {
                    let _ = refusal(err).await;
                }
                let _ = pairs.text("q", 100, "a search");
                let _ = pairs.integer("limit", 1, 100);
            }
            Err(err) => drop(refusal(err).await),
        }
        let Err(message) = run(kind, Request::from_parts(head, rest)).await else {
            return;
        };
        // What the refusal says of its own (e.g. "send Content-Type: application/json"), as it
        // says it to an empty object: a value of the body that is part of that text is not shown.
        let own = match request(content_type, "{}", query) {
            Some(req) => run(kind, req).await.err().unwrap_or_default(),
            None => String::new(),
        };
        let Ok(parsed) = serde_json::from_str::<Value>(body) else {
            return;
        };
        let (mut keys, mut strings) = (Vec::new(), Vec::new());
        values(&parsed, &mut keys, &mut strings);
        for value in strings {
            let name_like = value.chars().all(|c| c.is_ascii_alphabetic() || c == '_');
            if value.len() < 8
                || name_like
                || keys.iter().any(|k| k.contains(value))
                || own.contains(value)
            {
                continue;
            }
            assert!(
                !message.contains(value),
                "the refusal shows {value:?}: {message}"
            );
        }
    });
});
