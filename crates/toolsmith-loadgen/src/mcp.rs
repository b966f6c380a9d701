//! Just enough of MCP over streamable HTTP to call tools, in both protocol generations:
//! 2025-11-25 with a session (`initialize`, `notifications/initialized`, `tools/call`) and
//! 2026-07-28 without one (every request carries its own `_meta` and `Mcp-Method` /
//! `Mcp-Name` headers); answers are read from either a JSON body or an SSE stream.

use hyper::header::{HeaderName, HeaderValue};
use serde_json::{Value, json};

use crate::error::LoadError;
use crate::http::{Conn, Response};

/// The MCP endpoint's path.
pub const MCP_PATH: &str = "/mcp";
/// The protocol generation with sessions (`Mcp-Session-Id`).
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// The stateless protocol generation.
pub const STATELESS_PROTOCOL_VERSION: &str = "2026-07-28";

/// An initialized MCP session on its own connection, or a stateless 2026-07-28 client.
pub struct Session {
    conn: Conn,
    headers: Vec<(HeaderName, HeaderValue)>,
    next_id: u64,
    stateless: bool,
}

impl Session {
    /// A 2026-07-28 client on `conn`: nothing to open, every request stands alone.
    pub fn stateless(conn: Conn) -> Session {
        Session {
            conn,
            headers: vec![(
                HeaderName::from_static("mcp-protocol-version"),
                HeaderValue::from_static(STATELESS_PROTOCOL_VERSION),
            )],
            next_id: 1,
            stateless: true,
        }
    }

    /// Initializes a session on `conn`.
    pub async fn open(mut conn: Conn) -> Result<Session, LoadError> {
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "toolsmith-loadgen", "version": env!("CARGO_PKG_VERSION")}
            }
        });
        let response = conn.post_json(MCP_PATH, init.to_string(), &[]).await?;
        let id = response
            .headers
            .get("mcp-session-id")
            .cloned()
            .ok_or_else(|| {
                LoadError::Protocol(format!(
                    "initialize answered {} without Mcp-Session-Id: {}",
                    response.status,
                    String::from_utf8_lossy(&response.body)
                ))
            })?;
        answer(&response, 0)?;
        let headers = vec![
            (HeaderName::from_static("mcp-session-id"), id),
            (
                HeaderName::from_static("mcp-protocol-version"),
                HeaderValue::from_static(PROTOCOL_VERSION),
            ),
        ];
        let mut session = Session {
            conn,
            headers,
            next_id: 1,
            stateless: false,
        };
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = session
            .conn
            .post_json(MCP_PATH, done.to_string(), &session.headers)
            .await?;
        if !response.status.is_success() {
            return Err(status_error(&response));
        }
        Ok(session)
    }

    /// `tools/call`: the result object, or an error for a JSON-RPC error or `isError: true`.
    pub async fn call_tool(&mut self, name: &str, arguments: &Value) -> Result<Value, LoadError> {
        let result = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            return Err(LoadError::Protocol(format!("the tool failed: {result}")));
        }
        Ok(result)
    }

    /// One JSON-RPC request; its `result`.
    pub async fn request(&mut self, method: &str, mut params: Value) -> Result<Value, LoadError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut headers = self.headers.clone();
        if self.stateless {
            let meta = json!({
                "io.modelcontextprotocol/protocolVersion": STATELESS_PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            });
            match &mut params {
                Value::Object(map) => {
                    map.insert("_meta".to_owned(), meta);
                }
                Value::Null => params = json!({ "_meta": meta }),
                other => {
                    return Err(LoadError::Protocol(format!(
                        "the params of `{method}` must be a JSON object, not {other}"
                    )));
                }
            }
            let header = |text: &str| {
                HeaderValue::from_str(text)
                    .map_err(|_| LoadError::Protocol(format!("`{text}` cannot be a header value")))
            };
            headers.push((HeaderName::from_static("mcp-method"), header(method)?));
            if let Some(name) = params.get("name").and_then(Value::as_str) {
                headers.push((HeaderName::from_static("mcp-name"), header(name)?));
            }
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = self
            .conn
            .post_json(MCP_PATH, body.to_string(), &headers)
            .await?;
        answer(&response, id)
    }
}

fn status_error(response: &Response) -> LoadError {
    LoadError::Status {
        status: response.status.as_u16(),
        body: String::from_utf8_lossy(&response.body)
            .chars()
            .take(500)
            .collect(),
    }
}

/// The `result` of the JSON-RPC answer with id `id` in `response` (a JSON body, or SSE events
/// whose `data:` lines carry JSON-RPC messages).
pub fn answer(response: &Response, id: u64) -> Result<Value, LoadError> {
    if !response.status.is_success() {
        return Err(status_error(response));
    }
    let text = std::str::from_utf8(&response.body)
        .map_err(|_| LoadError::Protocol("the answer is not UTF-8".to_owned()))?;
    let trimmed = text.trim_start();
    let messages: Vec<Value> = if trimmed.starts_with('{') {
        vec![serde_json::from_str(trimmed).map_err(|e| LoadError::Protocol(e.to_string()))?]
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .filter(|data| !data.is_empty())
            .filter_map(|data| serde_json::from_str(data).ok())
            .collect()
    };
    let message = messages
        .into_iter()
        .find(|m| m.get("id").and_then(Value::as_u64) == Some(id))
        .ok_or_else(|| {
            LoadError::Protocol(format!(
                "no answer to request {id} in: {}",
                text.chars().take(300).collect::<String>()
            ))
        })?;
    if let Some(error) = message.get("error") {
        return Err(LoadError::Protocol(format!("JSON-RPC error: {error}")));
    }
    message
        .get("result")
        .cloned()
        .ok_or_else(|| LoadError::Protocol(format!("answer without result: {message}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use hyper::{HeaderMap, StatusCode};

    fn response(status: u16, body: &str) -> Response {
        Response {
            status: StatusCode::from_u16(status).unwrap(),
            headers: HeaderMap::new(),
            body: Bytes::from(body.to_owned()),
        }
    }

    #[test]
    fn answers_from_sse_and_json() {
        let sse = "id: 0\ndata:\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":1}}\n\n";
        assert_eq!(answer(&response(200, sse), 7).unwrap(), json!({"x": 1}));
        let body = r#"{"jsonrpc":"2.0","id":3,"result":{"ok":true}}"#;
        assert_eq!(
            answer(&response(200, body), 3).unwrap(),
            json!({"ok": true})
        );
    }

    #[test]
    fn errors_are_errors() {
        let err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool: x"}}"#;
        assert_eq!(
            answer(&response(200, err), 1).unwrap_err().code(),
            "protocol"
        );
        assert_eq!(
            answer(&response(404, "gone"), 1).unwrap_err().code(),
            "status"
        );
        let other = r#"{"jsonrpc":"2.0","id":2,"result":{}}"#;
        assert_eq!(
            answer(&response(200, other), 1).unwrap_err().code(),
            "protocol"
        );
        for junk in ["", "data: {not json\n\n", "\u{0}\u{1}", "{\"id\":1}"] {
            assert!(answer(&response(200, junk), 1).is_err(), "{junk:?}");
        }
    }
}
