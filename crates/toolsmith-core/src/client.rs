//! What the caller's client can do for a running tool: log, report progress, ask its model
//! (sampling) and ask its person (elicitation).
//!
//! The engine knows nothing of MCP: an interface whose caller is an MCP client that can be
//! reached while the call runs (a 2025-11-25 session) sets a [`Client`] on the call's
//! [`ToolContext`](crate::ToolContext); nested `callTool` calls keep it. The tool's side (the
//! sandbox's `mcp` global, a bridged upstream's requests) asks it through [`Client::of`], which
//! gives a refusing client when the call has none, so every door answers with a message that
//! says why and where the capability works.
//!
//! Parameters and results are MCP's own JSON (`sampling/createMessage`'s and
//! `elicitation/create`'s params and results, `_meta` included), passed through as they are;
//! what a tool may ask, and how often, is decided above this trait (the tool's permissions, the
//! policy, limits).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A log message's severity, MCP's (RFC 5424's) levels from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's MCP name (`debug` … `emergency`).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level of an MCP name; the error names the eight levels.
    pub fn parse(name: &str) -> Result<LogLevel, String> {
        LogLevel::ALL
            .into_iter()
            .find(|level| level.as_str() == name)
            .ok_or_else(|| {
                format!(
                    "unknown log level {name:?}: use one of debug, info, notice, warning, error, critical, alert, emergency"
                )
            })
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the caller's client declared it can do (MCP client capabilities), as far as a running
/// tool cares.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// `sampling`: the client's model can be asked (`sampling/createMessage`).
    pub sampling: bool,
    /// `sampling.tools`: a sampling request may offer the model tools.
    pub sampling_tools: bool,
    /// `elicitation` with forms: the person can be asked to fill a form.
    pub elicitation_form: bool,
    /// `elicitation.url`: the person can be sent to a URL.
    pub elicitation_url: bool,
    /// `roots`: the client can list its roots.
    pub roots: bool,
    /// The call carried a `progressToken`, so progress reaches the client.
    pub progress: bool,
    /// Log messages reach the client (filtered by the level it set).
    pub logging: bool,
}

/// One capability a tool can ask the client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    Sampling,
    SamplingTools,
    Elicitation,
    ElicitationUrl,
    Roots,
}

impl Capability {
    /// The capability's name as the client declares it.
    pub fn declared_as(self) -> &'static str {
        match self {
            Capability::Sampling => "sampling",
            Capability::SamplingTools => "sampling.tools",
            Capability::Elicitation => "elicitation (form)",
            Capability::ElicitationUrl => "elicitation.url",
            Capability::Roots => "roots",
        }
    }

    /// What asking for it is, in a sentence's words.
    fn asking(self) -> &'static str {
        match self {
            Capability::Sampling | Capability::SamplingTools => "asking the client's model",
            Capability::Elicitation | Capability::ElicitationUrl => "asking the user",
            Capability::Roots => "listing the client's roots",
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.declared_as())
    }
}

/// The way a call came in that has no MCP client to ask, so a refusal can say where the
/// capability works instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Door {
    /// The REST API (and the web UI, its client).
    Rest,
    /// The CLI (`toolsmith run`, a dry run).
    Cli,
    /// A scheduled task's run.
    Scheduled,
    /// An MCP client on protocol 2026-07-28, which has no server-to-client requests while a
    /// call runs.
    McpStateless,
    /// A door that did not say (a context made without one).
    Unknown,
}

impl Door {
    /// Why there is no one to ask on this door.
    fn why(self) -> &'static str {
        match self {
            Door::Rest => "a REST call (or the web UI) has no MCP client to ask",
            Door::Cli => "a CLI run has no MCP client to ask",
            Door::Scheduled => "a scheduled run has no caller to ask",
            Door::McpStateless => {
                "protocol 2026-07-28 has no server-to-client requests while a call runs"
            }
            Door::Unknown => "this call has no MCP client to ask",
        }
    }
}

/// Why the client could not do what a tool asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The call has no MCP client that can be asked (REST, CLI, scheduled …).
    #[error(
        "{what} is not possible here: {why}. It works when the tool is called over MCP (tools/call, protocol 2025-11-25, stdio or streamable HTTP) by a client that declared the {declared} capability",
        what = capability_sentence(*capability),
        why = door.why(),
        declared = capability.declared_as()
    )]
    NoClient { door: Door, capability: Capability },
    /// The client did not declare the capability.
    #[error(
        "the calling MCP client did not declare the {declared} capability, so {what} is not possible: call the tool from a client that declares it",
        declared = capability.declared_as(),
        what = capability.asking()
    )]
    Unsupported { capability: Capability },
    /// The person refused the request (a sampling request rejected in the client).
    #[error("the client's user declined the request: {0}")]
    Declined(String),
    /// The call was cancelled (by its caller, or its time ran out) while it waited.
    #[error("the call was cancelled while it waited for the client")]
    Cancelled,
    /// The client did not answer in time.
    #[error("the client did not answer within {} s", after.as_secs())]
    Timeout { after: Duration },
    /// The client answered with an error, or the answer could not be read.
    #[error("the client answered with an error: {0}")]
    Failed(String),
    /// What the tool asked for is not a valid request (the message says what to fix).
    #[error("the request to the client is not valid: {0}")]
    Invalid(String),
}

impl ClientError {
    /// A stable name of the error's class, for records and metrics.
    pub fn kind(&self) -> &'static str {
        match self {
            ClientError::NoClient { .. } => "no_client",
            ClientError::Unsupported { .. } => "unsupported",
            ClientError::Declined(_) => "declined",
            ClientError::Cancelled => "cancelled",
            ClientError::Timeout { .. } => "timeout",
            ClientError::Failed(_) => "failed",
            ClientError::Invalid(_) => "invalid",
        }
    }
}

fn capability_sentence(capability: Capability) -> &'static str {
    match capability {
        Capability::Sampling | Capability::SamplingTools => "Asking the client's model (sampling)",
        Capability::Elicitation | Capability::ElicitationUrl => "Asking the user (elicitation)",
        Capability::Roots => "Listing the client's roots",
    }
}

/// The caller's client, as a running tool may use it.
#[async_trait]
pub trait CallerClient: Send + Sync {
    /// What the client declared (and whether the call carried a progress token).
    fn capabilities(&self) -> ClientCapabilities;

    /// The least severe level the client wants (`logging/setLevel`); `None` when log messages
    /// go nowhere. A tool may skip building a message below it.
    fn log_level(&self) -> Option<LogLevel>;

    /// Sends a log message (`notifications/message`); below the client's level it is dropped,
    /// which is not an error.
    async fn log(
        &self,
        level: LogLevel,
        logger: Option<String>,
        data: Value,
    ) -> Result<(), ClientError>;

    /// Reports progress for the call's `progressToken` (`notifications/progress`); without a
    /// token it goes nowhere, which is not an error.
    async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ClientError>;

    /// Asks the client's model: `sampling/createMessage`'s params in, its result out.
    async fn sample(&self, params: Value) -> Result<Value, ClientError>;

    /// Asks the person: `elicitation/create`'s params in, its result (`action`: `accept`,
    /// `decline` or `cancel`, and `content`) out. A declined or cancelled form is a result,
    /// not an error.
    async fn elicit(&self, params: Value) -> Result<Value, ClientError>;

    /// Lists the client's roots (`roots/list`'s result).
    async fn list_roots(&self) -> Result<Value, ClientError> {
        Err(ClientError::Unsupported {
            capability: Capability::Roots,
        })
    }
}

/// The [`CallerClient`] of a call, cheap to clone into nested calls.
#[derive(Clone)]
pub struct Client(pub Arc<dyn CallerClient>);

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Client")
    }
}

impl Client {
    /// A client for a door with no one to ask: log and progress go nowhere, sampling and
    /// elicitation are refused with [`ClientError::NoClient`] naming the door.
    pub fn absent(door: Door) -> Client {
        Client(Arc::new(Absent(door)))
    }

    /// The client of a call: its own, or one that refuses for an unnamed door.
    pub fn of(ctx: &crate::ToolContext) -> Client {
        ctx.client
            .clone()
            .unwrap_or_else(|| Client::absent(Door::Unknown))
    }
}

impl std::ops::Deref for Client {
    type Target = dyn CallerClient;

    fn deref(&self) -> &Self::Target {
        self.0.as_ref()
    }
}

/// The client of a door with no MCP client.
struct Absent(Door);

#[async_trait]
impl CallerClient for Absent {
    fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities::default()
    }

    fn log_level(&self) -> Option<LogLevel> {
        None
    }

    async fn log(&self, _: LogLevel, _: Option<String>, _: Value) -> Result<(), ClientError> {
        Ok(())
    }

    async fn progress(&self, _: f64, _: Option<f64>, _: Option<String>) -> Result<(), ClientError> {
        Ok(())
    }

    async fn sample(&self, _: Value) -> Result<Value, ClientError> {
        Err(ClientError::NoClient {
            door: self.0,
            capability: Capability::Sampling,
        })
    }

    async fn elicit(&self, _: Value) -> Result<Value, ClientError> {
        Err(ClientError::NoClient {
            door: self.0,
            capability: Capability::Elicitation,
        })
    }

    async fn list_roots(&self) -> Result<Value, ClientError> {
        Err(ClientError::NoClient {
            door: self.0,
            capability: Capability::Roots,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_named_as_mcp_names_them() {
        assert!(LogLevel::Debug < LogLevel::Emergency);
        assert!(LogLevel::Warning < LogLevel::Error);
        for level in LogLevel::ALL {
            assert_eq!(LogLevel::parse(level.as_str()), Ok(level));
            assert_eq!(
                serde_json::to_value(level).unwrap(),
                Value::String(level.as_str().to_owned())
            );
        }
        assert!(
            LogLevel::parse("verbose")
                .unwrap_err()
                .contains("emergency")
        );
    }

    #[tokio::test]
    async fn a_call_without_a_client_is_refused_naming_its_door_and_where_it_works() {
        let ctx = crate::ToolContext::new("u");
        let client = Client::of(&ctx);
        assert_eq!(client.capabilities(), ClientCapabilities::default());
        client.log(LogLevel::Info, None, Value::Null).await.unwrap();
        client.progress(1.0, None, None).await.unwrap();
        let err = Client::absent(Door::Rest)
            .sample(Value::Null)
            .await
            .unwrap_err();
        let message = err.to_string();
        assert!(message.contains("REST"), "{message}");
        assert!(message.contains("over MCP"), "{message}");
        assert!(message.contains("sampling"), "{message}");
        let err = Client::absent(Door::Scheduled)
            .elicit(Value::Null)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("scheduled"), "{err}");
    }
}
