//! The MCP client's own model (issue 37): an agent whose `model.service` is `sampling` asks no
//! Config Center provider but the client that started its run, through
//! `sampling/createMessage` (MCP 2025-11-25, tools per SEP-1577), so an agent runs with no key
//! at all.
//!
//! The client is the starting call's ([`toolsmith_core::Client`] on its `ToolContext`), and a
//! request goes on that call's stream, so a run on the client's model is started only by a call
//! that waits for its end (`sessions_send` with `wait`, the `subagents` action `run`,
//! `manage_agents` `run` with `wait`); the rest is checked where the run starts
//! (`ToolService::agent_provider`): the client declared `sampling`, the policy has no
//! `mcp:sampling` deny entry for the caller. Each turn is one request: the run's conversation
//! as sampling messages (tool calls as `tool_use`, their results as `tool_result` in the next
//! user message), the agent's system prompt, its tools (`tools`, `toolChoice: auto`) and its
//! `model.model` as a hint (`modelPreferences.hints`). The client's answer is the turn: its
//! text, its `tool_use` blocks as tool calls, its `stopReason`. Each request is audited
//! (`client.sample` on the agent, never the prompt or the answer).
//!
//! Tokens: MCP's result carries no usage, so a turn counts the tokens the client reports under
//! `usage` (`inputTokens`, `outputTokens`) or `_meta.usage` and 0 otherwise; the model calls are
//! counted as for any provider. A refusal (the person declined), a client that has gone, a call
//! cancelled, all end the run with the client's reason: nothing is retried, since the person
//! may have said no.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use toolsmith_core::{Client, ClientError};

use super::{ModelReply, ModelRequest, ProviderError};
use crate::governance::audit::{AuditLog, AuditTarget};
use crate::input::Actor;

/// The `model.service` of an agent that runs on the client's model.
pub const SERVICE: &str = "sampling";

/// The client's model, for one run.
pub struct Sampling {
    client: Client,
    audit: Arc<AuditLog>,
    /// Who started the run: the audit's actor.
    actor: Actor,
    agent_id: String,
    agent_name: String,
    run_id: String,
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling")
            .field("agent", &self.agent_name)
            .field("run", &self.run_id)
            .finish()
    }
}

impl Sampling {
    pub(crate) fn new(
        client: Client,
        audit: Arc<AuditLog>,
        actor: Actor,
        agent: (&str, &str),
        run_id: &str,
    ) -> Sampling {
        Sampling {
            client,
            audit,
            actor,
            agent_id: agent.0.to_owned(),
            agent_name: agent.1.to_owned(),
            run_id: run_id.to_owned(),
        }
    }

    /// Asks the client's model once; every request is audited with its outcome.
    pub async fn complete(&self, request: &ModelRequest) -> Result<ModelReply, ProviderError> {
        let reply = sample(&self.client, request)
            .await
            .map(|sampled| sampled.reply)
            .map_err(|e| match e {
                SampleError::Client(e) => ProviderError::fatal(e.to_string()),
                SampleError::Unusable(e) => e,
            });
        let details = match &reply {
            Ok(_) => json!({"runId": self.run_id, "outcome": "answered"}),
            Err(e) => json!({"runId": self.run_id, "outcome": "failed", "reason": e.message}),
        };
        self.audit
            .record(
                &self.actor,
                "client.sample",
                AuditTarget::new(
                    "agent",
                    self.agent_id.clone(),
                    Some(self.agent_name.clone()),
                ),
                (None, None),
                details,
            )
            .await;
        reply
    }
}

/// What the client's model answered one request.
#[derive(Debug, Clone)]
pub struct Sampled {
    pub reply: ModelReply,
    /// The model the client says answered (its result's `model`), if it named one.
    pub model: Option<String>,
}

/// Why one request to the client's model gave no usable answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SampleError {
    /// The client could not or would not answer: no client on this door, sampling not
    /// declared, the person declined, the call cancelled, the client gone.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The client answered with something that is not an assistant's message.
    #[error("{}", .0.message)]
    Unusable(ProviderError),
}

/// Asks `client`'s model one request — an agent's turn ([`Sampling::complete`]) or a
/// built-in's one question (`builtin_chat`'s fallback when no `chat_model` is configured):
/// `sampling/createMessage` with [`params`], the answer read with [`parse`]. Whether the call
/// may ask at all (the policy, the limits) and the audit are the caller's.
pub async fn sample(client: &Client, request: &ModelRequest) -> Result<Sampled, SampleError> {
    let result = client.0.sample(params(request)).await?;
    let reply = parse(&result).map_err(SampleError::Unusable)?;
    let model = result
        .get("model")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_owned);
    Ok(Sampled { reply, model })
}

/// The client of a run's tool calls when the run has one (the call that started it waits for
/// its end, `runner::Extras::sampling`): that client's model only. A built-in that needs a
/// chat model (data extraction, translation with no service) asks it when the user has no
/// `chat_model` — as a tool called by that client directly would — and so may a JS tool's
/// `mcp.sample`, under the same gate; the person is never asked (an approval of a run goes
/// to REST, the UI or the CLI), and log and progress go nowhere, as for any run.
pub(crate) fn model_only(client: Client) -> Client {
    Client(Arc::new(ModelOnly(client)))
}

struct ModelOnly(Client);

#[async_trait::async_trait]
impl toolsmith_core::CallerClient for ModelOnly {
    fn capabilities(&self) -> toolsmith_core::ClientCapabilities {
        let lent = self.0.capabilities();
        toolsmith_core::ClientCapabilities {
            sampling: lent.sampling,
            sampling_tools: lent.sampling_tools,
            ..Default::default()
        }
    }

    fn log_level(&self) -> Option<toolsmith_core::LogLevel> {
        None
    }

    async fn log(
        &self,
        _: toolsmith_core::LogLevel,
        _: Option<String>,
        _: Value,
    ) -> Result<(), ClientError> {
        Ok(())
    }

    async fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) -> Result<(), ClientError> {
        Ok(())
    }

    async fn sample(&self, params: Value) -> Result<Value, ClientError> {
        self.0.sample(params).await
    }

    async fn elicit(&self, _: Value) -> Result<Value, ClientError> {
        Err(ClientError::Unsupported {
            capability: toolsmith_core::Capability::Elicitation,
        })
    }
}

fn text_block(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

/// A tool call's input as sampling needs it: an object (a model's unreadable arguments, kept
/// as text by the providers, travel under `value`).
fn input_of(arguments: &Value) -> Value {
    match arguments {
        Value::Object(_) => arguments.clone(),
        Value::Null => Value::Object(Map::new()),
        other => json!({"value": other}),
    }
}

/// `sampling/createMessage`'s params for one turn of the run.
pub(crate) fn params(request: &ModelRequest) -> Value {
    // Consecutive tool results go back as one user message (as the spec's example does).
    let messages = super::grouped_messages(
        &request.messages,
        text_block,
        |text, tool_calls| {
            let mut content = Vec::new();
            if !text.is_empty() || tool_calls.is_empty() {
                content.push(text_block(text));
            }
            for call in tool_calls {
                content.push(json!({
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": input_of(&call.arguments),
                }));
            }
            Value::Array(content)
        },
        |call_id, content, is_error| {
            json!({
                "type": "tool_result",
                "toolUseId": call_id,
                "content": [text_block(content)],
                "isError": is_error,
            })
        },
    );
    let mut params = json!({
        "messages": messages,
        "maxTokens": request.max_tokens,
    });
    // No model named (a built-in's question): the client chooses.
    if !request.model.is_empty() {
        toolsmith_core::object::set(
            &mut params,
            "modelPreferences",
            json!({"hints": [{"name": request.model}]}),
        );
    }
    if !request.system.is_empty() {
        toolsmith_core::object::set(
            &mut params,
            "systemPrompt",
            Value::String(request.system.clone()),
        );
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": t.parameters,
                })
            })
            .collect();
        toolsmith_core::object::set(&mut params, "tools", Value::Array(tools));
        toolsmith_core::object::set(&mut params, "toolChoice", json!({"mode": "auto"}));
    }
    params
}

/// A token count the client reported, under either spelling.
fn tokens(usage: Option<&Value>, names: &[&str]) -> u64 {
    usage
        .and_then(|u| names.iter().find_map(|n| u.get(*n).and_then(Value::as_u64)))
        .unwrap_or(0)
}

/// The client's `CreateMessageResult` as the run's turn.
pub(crate) fn parse(result: &Value) -> Result<ModelReply, ProviderError> {
    let bad = |what: &str| {
        ProviderError::fatal(format!(
            "the client's answer to sampling/createMessage is not usable: {what}"
        ))
    };
    if let Some(role) = result.get("role").and_then(Value::as_str)
        && role != "assistant"
    {
        return Err(bad(&format!("its role is '{role}', not 'assistant'")));
    }
    let blocks = match result.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(block @ Value::Object(_)) => vec![block.clone()],
        _ => return Err(bad("it has no content")),
    };
    let mut reply = ModelReply::default();
    for block in &blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if !reply.text.is_empty() {
                    reply.text.push('\n');
                }
                reply
                    .text
                    .push_str(block.get("text").and_then(Value::as_str).unwrap_or(""));
            }
            Some("tool_use") => {
                let (Some(id), Some(name)) = (
                    block.get("id").and_then(Value::as_str),
                    block.get("name").and_then(Value::as_str),
                ) else {
                    return Err(bad("a tool_use block without its id or name"));
                };
                reply.tool_calls.push(super::ToolCall {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    arguments: block
                        .get("input")
                        .cloned()
                        .unwrap_or_else(|| Value::Object(Map::new())),
                });
            }
            // An image or audio answer: nothing a run reads.
            _ => {}
        }
    }
    let usage = result
        .get("usage")
        .or_else(|| result.pointer("/_meta/usage"));
    reply.input_tokens = tokens(usage, &["inputTokens", "input_tokens"]);
    reply.output_tokens = tokens(usage, &["outputTokens", "output_tokens"]);
    reply.stop_reason = result
        .get("stopReason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::providers::{Message, ToolCall, ToolSpec};

    fn request(messages: Vec<Message>) -> ModelRequest {
        ModelRequest {
            model: "claude-test".to_owned(),
            system: "Be brief.".to_owned(),
            messages,
            tools: vec![ToolSpec {
                name: "shout".to_owned(),
                description: "Shouts.".to_owned(),
                parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            }],
            max_tokens: 64,
        }
    }

    #[test]
    fn a_turn_with_tool_calls_becomes_balanced_sampling_messages() {
        let params = params(&request(vec![
            Message::User("hi".to_owned()),
            Message::Assistant {
                text: String::new(),
                tool_calls: vec![
                    ToolCall {
                        id: "a".to_owned(),
                        name: "shout".to_owned(),
                        arguments: json!({"text": "x"}),
                    },
                    ToolCall {
                        id: "b".to_owned(),
                        name: "shout".to_owned(),
                        arguments: json!("not json"),
                    },
                ],
            },
            Message::ToolResult {
                call_id: "a".to_owned(),
                content: "X".to_owned(),
                is_error: false,
            },
            Message::ToolResult {
                call_id: "b".to_owned(),
                content: "bad".to_owned(),
                is_error: true,
            },
        ]));
        let messages = params["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3, "{params}");
        assert_eq!(
            messages[1]["content"][1]["input"],
            json!({"value": "not json"})
        );
        assert_eq!(messages[2]["role"], "user");
        assert_eq!(messages[2]["content"][1]["toolUseId"], "b");
        assert_eq!(params["tools"][0]["inputSchema"]["type"], "object");
        assert_eq!(params["toolChoice"]["mode"], "auto");
        assert_eq!(params["systemPrompt"], "Be brief.");
        assert_eq!(
            params["modelPreferences"]["hints"][0]["name"],
            "claude-test"
        );
    }

    #[test]
    fn an_answer_with_text_and_a_tool_use_is_one_turn() {
        let reply = parse(&json!({
            "role": "assistant", "model": "m", "stopReason": "toolUse",
            "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool_use", "id": "t1", "name": "shout", "input": {"text": "y"}},
            ],
            "_meta": {"usage": {"inputTokens": 7, "outputTokens": 3}},
        }))
        .unwrap();
        assert_eq!(reply.text, "calling");
        assert_eq!(reply.tool_calls[0].arguments, json!({"text": "y"}));
        assert_eq!((reply.input_tokens, reply.output_tokens), (7, 3));
        assert_eq!(reply.stop_reason.as_deref(), Some("toolUse"));
        let single = parse(&json!({"role": "assistant", "model": "m",
            "content": {"type": "text", "text": "done"}}))
        .unwrap();
        assert_eq!((single.text.as_str(), single.input_tokens), ("done", 0));
        let wrong = parse(&json!({"role": "user", "content": []})).unwrap_err();
        assert!(wrong.message.contains("not 'assistant'"), "{wrong:?}");
    }
}
