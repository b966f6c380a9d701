//! Anthropic's Messages API (`POST {base_url}/v1/messages`, `anthropic-version` 2023-06-01):
//! `tools` with `input_schema`, the answer's `tool_use` blocks, tool results sent back as
//! `tool_result` blocks of one user message, `usage.input_tokens` / `output_tokens`; streamed
//! as named SSE events (`message_start`, `content_block_start`, `content_block_delta` with
//! `text_delta` or `input_json_delta`, `message_delta`, `message_stop`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{
    ModelReply, ModelRequest, ProviderError, ToolCall, arguments, bad_answer, grouped_messages,
};

/// The API version sent with every request.
pub(crate) const VERSION: &str = "2023-06-01";

/// The request body. Consecutive tool results become one user message, as the API requires.
pub(crate) fn body(request: &ModelRequest, stream: bool) -> Value {
    let messages = grouped_messages(
        &request.messages,
        |text| Value::String(text.to_owned()),
        |text, tool_calls| {
            let mut blocks = Vec::new();
            if !text.is_empty() {
                blocks.push(json!({"type": "text", "text": text}));
            }
            for call in tool_calls {
                blocks.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": call.arguments,
                }));
            }
            Value::Array(blocks)
        },
        |call_id, content, is_error| {
            json!({
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": content,
                "is_error": is_error,
            })
        },
    );
    let mut body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    });
    if !request.system.is_empty() {
        toolsmith_core::object::set(&mut body, "system", Value::String(request.system.clone()));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        toolsmith_core::object::set(&mut body, "tools", Value::Array(tools));
    }
    if stream {
        toolsmith_core::object::set(&mut body, "stream", Value::Bool(true));
    }
    body
}

fn usage(reply: &mut ModelReply, usage: Option<&Value>) {
    if let Some(usage) = usage {
        let n = |key: &str| usage.get(key).and_then(Value::as_u64);
        reply.input_tokens = n("input_tokens").unwrap_or(reply.input_tokens);
        reply.output_tokens = n("output_tokens").unwrap_or(reply.output_tokens);
    }
}

/// A whole (non-streamed) answer.
pub(crate) fn parse(text: &str) -> Result<ModelReply, ProviderError> {
    let answer: Value = serde_json::from_str(text).map_err(|e| bad_answer("Messages JSON", e))?;
    let blocks = answer
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| bad_answer("a Message", "it has no content"))?;
    let mut reply = ModelReply {
        stop_reason: answer
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..ModelReply::default()
    };
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                reply.text.push_str(
                    block
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                );
            }
            Some("tool_use") => reply.tool_calls.push(ToolCall {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                arguments: block.get("input").cloned().unwrap_or_else(|| json!({})),
            }),
            _ => {}
        }
    }
    usage(&mut reply, answer.get("usage"));
    Ok(reply)
}

/// A content block being streamed.
enum Block {
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

/// A whole streamed answer (the SSE text).
pub(crate) fn parse_stream(text: &str) -> Result<ModelReply, ProviderError> {
    let mut reply = ModelReply::default();
    let mut blocks: BTreeMap<u64, Block> = BTreeMap::new();
    let mut stopped = false;
    for event in super::sse::events(text) {
        let data: Value =
            serde_json::from_str(&event.data).map_err(|e| bad_answer("a Messages event", e))?;
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(event.name.as_str());
        let index = data.get("index").and_then(Value::as_u64).unwrap_or(0);
        match kind {
            "message_start" => usage(&mut reply, data.pointer("/message/usage")),
            "content_block_start" => {
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let text = |key: &str| {
                    block
                        .get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                let started = match block.get("type").and_then(Value::as_str) {
                    Some("text") => Block::Text(text("text")),
                    Some("tool_use") => Block::ToolUse {
                        id: text("id"),
                        name: text("name"),
                        json: String::new(),
                    },
                    _ => Block::Other,
                };
                blocks.insert(index, started);
            }
            "content_block_delta" => {
                let delta = data.get("delta").unwrap_or(&Value::Null);
                match (
                    blocks.get_mut(&index),
                    delta.get("type").and_then(Value::as_str),
                ) {
                    (Some(Block::Text(text)), Some("text_delta")) => {
                        text.push_str(
                            delta
                                .get("text")
                                .and_then(Value::as_str)
                                .unwrap_or_default(),
                        );
                    }
                    (Some(Block::ToolUse { json, .. }), Some("input_json_delta")) => json.push_str(
                        delta
                            .get("partial_json")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                    ),
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    reply.stop_reason = Some(reason.to_owned());
                }
                usage(&mut reply, data.get("usage"));
            }
            "message_stop" => stopped = true,
            "error" => {
                let message = data
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("an error event");
                return Err(ProviderError::transient(format!(
                    "the model server's stream ended with an error: {message}"
                )));
            }
            _ => {}
        }
    }
    if !stopped {
        return Err(ProviderError::transient(
            "the model server's stream ended before message_stop",
        ));
    }
    for block in blocks.into_values() {
        match block {
            Block::Text(text) => reply.text.push_str(&text),
            Block::ToolUse { id, name, json } => reply.tool_calls.push(ToolCall {
                id,
                name,
                arguments: arguments(&json),
            }),
            Block::Other => {}
        }
    }
    Ok(reply)
}
