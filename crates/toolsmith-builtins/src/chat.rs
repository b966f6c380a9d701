//! The caller's chat model, as the built-ins ask it (translation's fallback, the
//! data extraction tools): one system prompt and one user message in, the model's text out.
//!
//! The model is the caller's Config Center service [`SERVICE`], read as an agent's provider is
//! (`protocol`: `openai` for OpenAI-compatible Chat Completions or `anthropic`; `base_url`;
//! `api_key`, secret; and `model`). When the caller has none, the model of the caller's own
//! MCP client answers instead, if it declared `sampling` (one `sampling/createMessage`), under
//! the rule every request to a client obeys (the policy's `mcp:sampling` deny entries, the
//! per-call and per-user limits, an audit entry `client.sample`). The server implements
//! [`ChatModel`] with the agents' providers (`toolsmith-service`'s `builtin_chat`, which this
//! crate cannot depend on), so the request goes through the egress guard for that origin,
//! with the providers' timeouts and retries; [`BuiltinEnv::chat`](crate::BuiltinEnv) is
//! `None` where no server set one.

use async_trait::async_trait;
use toolsmith_core::ToolContext;

/// The Config Center service naming the chat model the built-ins ask.
pub const SERVICE: &str = "chat_model";

/// One question to the chat model.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// The built-in asking (the audit's target when the client's model answers).
    pub tool: String,
    /// What the model is told to do.
    pub system: String,
    /// The text it works on.
    pub user: String,
    /// The most tokens its answer may have.
    pub max_tokens: u32,
}

/// Which model answered: the caller's configured one, or their MCP client's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The Config Center service [`SERVICE`].
    ChatModel,
    /// The calling MCP client's own model (`sampling/createMessage`).
    Sampling,
}

impl Via {
    /// The name a tool's result gives it (`via`).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Via::ChatModel => SERVICE,
            Via::Sampling => "sampling",
        }
    }
}

/// The model's answer.
#[derive(Debug, Clone)]
pub struct ChatAnswer {
    pub text: String,
    /// The model that answered (the service's `model`, or the one the client named).
    pub model: String,
    pub via: Via,
}

/// Why the chat model gave no answer; each message names what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ChatError {
    /// The caller has no usable [`SERVICE`], and no client whose model can be asked.
    #[error("{0}")]
    NotConfigured(String),
    /// The model server refused or failed.
    #[error("{0}")]
    Failed(String),
    /// The client's model may not be asked for this caller (the policy, the limits).
    #[error("{0}")]
    Refused(String),
    /// The person declined the request in their client.
    #[error("{0}")]
    Declined(String),
}

/// The caller's chat model.
#[async_trait]
pub trait ChatModel: Send + Sync + std::fmt::Debug {
    /// Asks the chat model of the call `ctx` (its user's configured one, or its client's).
    async fn complete(
        &self,
        ctx: &ToolContext,
        request: ChatRequest,
    ) -> Result<ChatAnswer, ChatError>;
}

/// What to do when no chat model is configured: the service and its fields.
#[must_use]
pub fn how_to_configure() -> String {
    format!(
        "create the Config Center service '{SERVICE}' with the fields protocol ('openai' for an \
         OpenAI-compatible server: OpenAI, llama.cpp, vLLM, Ollama, LM Studio; or 'anthropic'), \
         base_url, api_key (secret) and model, e.g. `toolsmith config set {SERVICE} \
         protocol=openai base_url=https://api.openai.com/v1 model=gpt-4o-mini` and `printf %s \
         \"$KEY\" | toolsmith config set {SERVICE} api_key=@-`"
    )
}

/// Asks the chat model of `env` for the call `ctx`, or says what to configure.
pub(crate) async fn ask(
    env: &crate::BuiltinEnv,
    ctx: &ToolContext,
    request: ChatRequest,
) -> Result<ChatAnswer, ChatError> {
    match &env.chat {
        Some(model) => model.complete(ctx, request).await,
        None => Err(ChatError::NotConfigured(format!(
            "this server offers the built-ins no chat model (an embedder must set \
             BuiltinEnv::chat; `toolsmith serve` does): {}",
            how_to_configure()
        ))),
    }
}

/// The JSON value in a model's answer: the whole text, or inside a ```json fence, or from the
/// first `{`/`[` to the last `}`/`]`.
#[must_use]
pub fn json_in(text: &str) -> Option<serde_json::Value> {
    let text = text.trim();
    if let Ok(value) = serde_json::from_str(text) {
        return Some(value);
    }
    let fenced = text
        .strip_prefix("```json")
        .or_else(|| text.strip_prefix("```"))
        .map(|t| t.trim_end().trim_end_matches("```").trim());
    if let Some(value) = fenced.and_then(|t| serde_json::from_str(t).ok()) {
        return Some(value);
    }
    let start = text.find(['{', '['])?;
    let end = text.rfind(['}', ']'])?;
    text.get(start..=end)
        .and_then(|inner| serde_json::from_str(inner).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_found_in_what_models_write() {
        assert_eq!(json_in("{\"a\": 1}"), Some(json!({"a": 1})));
        assert_eq!(json_in("```json\n[1, 2]\n```"), Some(json!([1, 2])));
        assert_eq!(
            json_in("Here it is: {\"a\": [1]} — hope that helps"),
            Some(json!({"a": [1]}))
        );
        assert_eq!(json_in("no json here"), None);
    }
}
