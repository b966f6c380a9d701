//! Model providers: the two wire protocols an agent's model speaks — OpenAI-compatible Chat
//! Completions ([`openai`]: OpenAI, and the local servers llama.cpp, vLLM, Ollama, LM Studio)
//! and Anthropic's Messages ([`anthropic`]) — each with tool calling, with and without
//! streaming (SSE).
//!
//! A provider is a Config Center service of the agent's owner ([`ProviderConfig::from_service`]:
//! `protocol`, `base_url`, `api_key` (secret), `stream`); its requests go through the egress
//! guard's client for that origin ([`toolsmith_egress::EgressGuard::origin_client`]), so a
//! model server on a loopback or private address is reached only when the operator listed it
//! in `allowed_private_hosts`. Each request has a timeout; a 429 or 5xx answer, or a
//! connection that fails, is retried with backoff ([`Provider::complete`]), and every answer's
//! token counts are returned for the run's accounting.
//!
//! Or the MCP client's own model ([`sampling`]): an agent whose `model.service` is `sampling`
//! is answered by the client that started its run, through `sampling/createMessage`. [`Model`]
//! is either, as the runner asks it.

pub mod anthropic;
pub mod openai;
pub mod sampling;
mod sse;

use std::time::Duration;

use serde_json::Value;

use crate::config_center::PlainService;

/// How long one model request may take, streaming included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(180);

/// Attempts of one model request (the first and the retries).
pub const ATTEMPTS: u32 = 3;

/// The wait before the first retry; doubled before each next one (a `Retry-After` the
/// provider sends is followed up to [`MAX_BACKOFF`]).
pub const FIRST_BACKOFF: Duration = Duration::from_millis(250);
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// The most bytes of a model's answer read (a non-streamed body, or a whole stream).
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    OpenAi,
    Anthropic,
}

impl Protocol {
    fn parse(text: &str) -> Option<Protocol> {
        match text.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" | "openai_compatible" | "chat-completions" => {
                Some(Protocol::OpenAi)
            }
            "anthropic" | "messages" => Some(Protocol::Anthropic),
            _ => None,
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            Protocol::OpenAi => "https://api.openai.com/v1",
            Protocol::Anthropic => "https://api.anthropic.com",
        }
    }
}

/// A provider as its Config Center service configures it. `Debug` never shows the key.
#[derive(Clone)]
pub struct ProviderConfig {
    pub protocol: Protocol,
    /// Without a trailing `/`: `…/v1` for OpenAI-compatible servers (requests go to
    /// `{base_url}/chat/completions`), the host for Anthropic (`{base_url}/v1/messages`).
    pub base_url: String,
    pub api_key: Option<String>,
    pub stream: bool,
}

impl std::fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("protocol", &self.protocol)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("stream", &self.stream)
            .finish()
    }
}

/// The value of `field` (or its camelCase twin) in the service's default entry, as text.
fn field(service: &PlainService, names: &[&str]) -> Option<String> {
    let entry = service.default_entry()?;
    names
        .iter()
        .find_map(|name| match entry.values.get(*name)? {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        })
}

impl ProviderConfig {
    /// Reads a provider from the Config Center service `service` (named `name` in errors).
    /// Errors name what is missing and how to set it.
    pub fn from_service(name: &str, service: &PlainService) -> Result<ProviderConfig, String> {
        let protocol_text = field(service, &["protocol"]).ok_or_else(|| {
            format!(
                "the Config Center service '{name}' has no 'protocol' value: add a field \
                 'protocol' to its entry with 'openai' (OpenAI-compatible Chat Completions: \
                 OpenAI, llama.cpp, vLLM, Ollama, LM Studio) or 'anthropic'"
            )
        })?;
        let protocol = Protocol::parse(&protocol_text).ok_or_else(|| {
            format!(
                "the Config Center service '{name}' has protocol '{protocol_text}', which is \
                 not one Toolsmith speaks: use 'openai' or 'anthropic'"
            )
        })?;
        let base_url = field(service, &["base_url", "baseUrl"])
            .unwrap_or_else(|| protocol.default_base_url().to_owned())
            .trim_end_matches('/')
            .to_owned();
        let stream = match field(service, &["stream"]).as_deref() {
            None | Some("false" | "no" | "0") => false,
            Some("true" | "yes" | "1") => true,
            Some(other) => {
                return Err(format!(
                    "the Config Center service '{name}' has stream '{other}': use true or false"
                ));
            }
        };
        Ok(ProviderConfig {
            protocol,
            base_url,
            api_key: field(service, &["api_key", "apiKey"]),
            stream,
        })
    }
}

/// One message of a run's conversation, in neither provider's shape.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        call_id: String,
        content: String,
        is_error: bool,
    },
}

/// A tool call the model asked for. `name` is the function name the model was offered.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// A function name both APIs accept (`toolsmith_core::name::function_name`).
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// One request to a model.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    /// The most tokens the answer may have (Anthropic requires one).
    pub max_tokens: u32,
}

/// A model's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Why the model stopped, as the provider said it.
    pub stop_reason: Option<String>,
}

/// Why a model request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    pub message: String,
    /// Worth another attempt (429, 5xx, a connection that failed or timed out).
    pub retryable: bool,
    /// The wait the provider asked for (`Retry-After`).
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    fn fatal(message: impl Into<String>) -> ProviderError {
        ProviderError {
            message: message.into(),
            retryable: false,
            retry_after: None,
        }
    }

    fn transient(message: impl Into<String>) -> ProviderError {
        ProviderError {
            message: message.into(),
            retryable: true,
            retry_after: None,
        }
    }
}

/// A provider ready to be asked: its configuration and a client bound to its origin.
#[derive(Debug, Clone)]
pub struct Provider {
    pub config: ProviderConfig,
    client: reqwest::Client,
}

impl Provider {
    /// A provider whose requests go through `egress` (the egress guard checks the base URL
    /// now and every address it resolves to at each connection). The error names the setting
    /// that allows a loopback or private model server.
    pub fn new(
        config: ProviderConfig,
        egress: &toolsmith_egress::EgressGuard,
    ) -> Result<Provider, String> {
        let origin = egress.origin_client(&config.base_url).map_err(|e| {
            format!(
                "the egress guard refuses the model server '{}': {e}. A model server on a \
                 loopback or private address (a local llama.cpp, vLLM, Ollama or LM Studio) \
                 must be listed by the operator in allowed_private_hosts, and one over plain \
                 http needs allow_plain_http (both in the configuration file's [egress]); \
                 where the operator gave this user allowed domains (owner_allowed_domains), \
                 the model server's host must be among them",
                config.base_url
            )
        })?;
        Ok(Provider {
            config,
            client: origin.client,
        })
    }

    /// Asks the model, retrying a 429, a 5xx or a failed connection up to [`ATTEMPTS`] times
    /// with backoff. `on_retry` hears of each failed attempt before its wait.
    pub async fn complete(
        &self,
        request: &ModelRequest,
        mut on_retry: impl FnMut(u32, &ProviderError),
    ) -> Result<ModelReply, ProviderError> {
        let mut backoff = FIRST_BACKOFF;
        let mut attempt = 1;
        loop {
            let result = tokio::time::timeout(REQUEST_TIMEOUT, self.once(request))
                .await
                .unwrap_or_else(|_| {
                    Err(ProviderError::transient(format!(
                        "the model server did not answer within {} s",
                        REQUEST_TIMEOUT.as_secs()
                    )))
                });
            match result {
                Ok(reply) => return Ok(reply),
                Err(e) if e.retryable && attempt < ATTEMPTS => {
                    on_retry(attempt, &e);
                    let wait = e.retry_after.unwrap_or(backoff).min(MAX_BACKOFF);
                    tokio::time::sleep(wait).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    attempt += 1;
                }
                Err(mut e) => {
                    if e.retryable {
                        e.message = format!("{} (after {attempt} attempts)", e.message);
                    }
                    return Err(e);
                }
            }
        }
    }

    async fn once(&self, request: &ModelRequest) -> Result<ModelReply, ProviderError> {
        let (url, body) = match self.config.protocol {
            Protocol::OpenAi => (
                format!("{}/chat/completions", self.config.base_url),
                openai::body(request, self.config.stream),
            ),
            Protocol::Anthropic => (
                format!("{}/v1/messages", self.config.base_url),
                anthropic::body(request, self.config.stream),
            ),
        };
        let mut builder = self.client.post(&url).json(&body);
        builder = match (self.config.protocol, &self.config.api_key) {
            (Protocol::OpenAi, Some(key)) => builder.bearer_auth(key),
            (Protocol::Anthropic, Some(key)) => builder.header("x-api-key", key),
            (_, None) => builder,
        };
        if self.config.protocol == Protocol::Anthropic {
            builder = builder.header("anthropic-version", anthropic::VERSION);
        }
        let response = builder.send().await.map_err(|e| {
            ProviderError::transient(format!("cannot reach the model server at {url}: {e}"))
        })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let text = read_capped(response).await.unwrap_or_default();
            let said = error_message(&text);
            let message = format!(
                "the model server answered {status} to {url}{}",
                said.map(|s| format!(": {s}")).unwrap_or_default()
            );
            let retryable = status.as_u16() == 429 || status.is_server_error();
            return Err(ProviderError {
                message,
                retryable,
                retry_after,
            });
        }
        let text = read_capped(response).await?;
        match (self.config.protocol, self.config.stream) {
            (Protocol::OpenAi, false) => openai::parse(&text),
            (Protocol::OpenAi, true) => openai::parse_stream(&text),
            (Protocol::Anthropic, false) => anthropic::parse(&text),
            (Protocol::Anthropic, true) => anthropic::parse_stream(&text),
        }
    }
}

/// What answers a run's model turns: a provider of the Config Center, or the client's model.
#[derive(Debug)]
pub enum Model {
    Provider(Provider),
    Sampling(sampling::Sampling),
}

impl Model {
    /// Asks the model for the next turn (a provider with its retries; the client once).
    pub async fn complete(
        &self,
        request: &ModelRequest,
        on_retry: impl FnMut(u32, &ProviderError),
    ) -> Result<ModelReply, ProviderError> {
        match self {
            Model::Provider(provider) => provider.complete(request, on_retry).await,
            Model::Sampling(client) => client.complete(request).await,
        }
    }

    /// What answers, in the words of an error: `the model provider (Config Center service
    /// 'x')`, or the client's model.
    pub fn describe(&self, service: &str) -> String {
        match self {
            Model::Provider(_) => format!("the model provider (Config Center service '{service}')"),
            Model::Sampling(_) => "the MCP client's model (sampling/createMessage to the client \
                                   that started the run)"
                .to_owned(),
        }
    }
}

/// The conversation as `{role, content}` messages in which consecutive tool results travel as
/// one user message of blocks (Anthropic's Messages API and MCP sampling both need that); each
/// protocol writes its own content: a user's text, an assistant's text and tool calls, one
/// tool result (`call_id`, `content`, `is_error`).
pub(crate) fn grouped_messages(
    messages: &[Message],
    user: impl Fn(&str) -> Value,
    assistant: impl Fn(&str, &[ToolCall]) -> Value,
    tool_result: impl Fn(&str, &str, bool) -> Value,
) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let flush = |out: &mut Vec<Value>, results: &mut Vec<Value>| {
        if !results.is_empty() {
            out.push(serde_json::json!({"role": "user", "content": std::mem::take(results)}));
        }
    };
    for message in messages {
        match message {
            Message::ToolResult {
                call_id,
                content,
                is_error,
            } => results.push(tool_result(call_id, content, *is_error)),
            Message::User(text) => {
                flush(&mut out, &mut results);
                out.push(serde_json::json!({"role": "user", "content": user(text)}));
            }
            Message::Assistant { text, tool_calls } => {
                flush(&mut out, &mut results);
                out.push(
                    serde_json::json!({"role": "assistant", "content": assistant(text, tool_calls)}),
                );
            }
        }
    }
    flush(&mut out, &mut results);
    out
}

/// The body of a response, at most [`MAX_ANSWER_BYTES`].
async fn read_capped(mut response: reqwest::Response) -> Result<String, ProviderError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        ProviderError::transient(format!("the model server's answer broke off: {e}"))
    })? {
        if bytes.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(ProviderError::fatal(format!(
                "the model server's answer is larger than {MAX_ANSWER_BYTES} bytes"
            )));
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes)
        .map_err(|_| ProviderError::fatal("the model server's answer is not UTF-8 text"))
}

/// The message of an error body of either API (`{"error": {"message": …}}`), or its start.
fn error_message(text: &str) -> Option<String> {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("error"))
        })
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| (!text.trim().is_empty()).then(|| text.trim().to_owned()))?;
    Some(message.chars().take(500).collect())
}

/// A tool call's arguments as the model wrote them (JSON text): an object, `{}` for empty
/// text; anything else is kept as the text, so the tool's schema check names the problem.
fn arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn bad_answer(what: &str, e: impl std::fmt::Display) -> ProviderError {
    ProviderError::fatal(format!("the model server's answer is not {what}: {e}"))
}
