//! OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`): `tools` as
//! functions, the answer's `tool_calls`, `usage.prompt_tokens` / `completion_tokens`; streamed
//! as SSE chunks whose `delta`s are put back together (`stream_options.include_usage` asks for
//! the usage in the last chunk), up to `data: [DONE]`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Message, ModelReply, ModelRequest, ProviderError, ToolCall, arguments, bad_answer};

/// The request body.
pub(crate) fn body(request: &ModelRequest, stream: bool) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        messages.push(match message {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant { text, tool_calls } => {
                let mut m = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments.to_string()},
                            })
                        })
                        .collect();
                    toolsmith_core::object::set(&mut m, "tool_calls", Value::Array(calls));
                }
                m
            }
            Message::ToolResult {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        });
    }
    let mut body = json!({
        "model": request.model,
        "messages": messages,
        "max_tokens": request.max_tokens,
    });
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                })
            })
            .collect();
        toolsmith_core::object::set(&mut body, "tools", Value::Array(tools));
    }
    if stream {
        toolsmith_core::object::set(&mut body, "stream", Value::Bool(true));
        toolsmith_core::object::set(&mut body, "stream_options", json!({"include_usage": true}));
    }
    body
}

fn usage(reply: &mut ModelReply, usage: Option<&Value>) {
    if let Some(usage) = usage {
        let n = |key: &str| usage.get(key).and_then(Value::as_u64);
        reply.input_tokens = n("prompt_tokens").unwrap_or(reply.input_tokens);
        reply.output_tokens = n("completion_tokens").unwrap_or(reply.output_tokens);
    }
}

/// A whole (non-streamed) answer.
pub(crate) fn parse(text: &str) -> Result<ModelReply, ProviderError> {
    let answer: Value =
        serde_json::from_str(text).map_err(|e| bad_answer("Chat Completions JSON", e))?;
    let choice = answer
        .pointer("/choices/0")
        .ok_or_else(|| bad_answer("a Chat Completion", "it has no choices"))?;
    let message = choice.get("message").unwrap_or(&Value::Null);
    let mut reply = ModelReply {
        text: message
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        stop_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..ModelReply::default()
    };
    for (i, call) in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let function = call.get("function").unwrap_or(&Value::Null);
        reply.tool_calls.push(ToolCall {
            id: call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("call_{i}"), str::to_owned),
            name: function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments: match function.get("arguments") {
                Some(Value::String(s)) => arguments(s),
                Some(other) => other.clone(),
                None => json!({}),
            },
        });
    }
    usage(&mut reply, answer.get("usage"));
    Ok(reply)
}

/// A tool call being streamed: its id, name and argument text so far.
#[derive(Default)]
struct Partial {
    id: String,
    name: String,
    arguments: String,
}

/// A whole streamed answer (the SSE text).
pub(crate) fn parse_stream(text: &str) -> Result<ModelReply, ProviderError> {
    let mut reply = ModelReply::default();
    let mut calls: BTreeMap<u64, Partial> = BTreeMap::new();
    let mut done = false;
    for event in super::sse::events(text) {
        if event.data.trim() == "[DONE]" {
            done = true;
            break;
        }
        let chunk: Value = serde_json::from_str(&event.data)
            .map_err(|e| bad_answer("a Chat Completions chunk", e))?;
        if let Some(message) = chunk.pointer("/error/message").and_then(Value::as_str) {
            return Err(ProviderError::transient(format!(
                "the model server's stream ended with an error: {message}"
            )));
        }
        usage(&mut reply, chunk.get("usage").filter(|u| !u.is_null()));
        let Some(choice) = chunk.pointer("/choices/0") else {
            continue;
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            reply.stop_reason = Some(reason.to_owned());
        }
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            reply.text.push_str(text);
        }
        for call in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let partial = calls.entry(index).or_default();
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                id.clone_into(&mut partial.id);
            }
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                partial.name.push_str(name);
            }
            if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                partial.arguments.push_str(args);
            }
        }
    }
    if !done && reply.stop_reason.is_none() {
        return Err(ProviderError::transient(
            "the model server's stream ended before its last chunk",
        ));
    }
    reply.tool_calls = calls
        .into_iter()
        .map(|(index, p)| ToolCall {
            id: if p.id.is_empty() {
                format!("call_{index}")
            } else {
                p.id
            },
            name: p.name,
            arguments: arguments(&p.arguments),
        })
        .collect();
    Ok(reply)
}
