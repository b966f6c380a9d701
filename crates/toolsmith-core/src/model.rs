//! The values every tool call is made of: the definition an LLM sees, the context of one call,
//! and the result that comes back.
//!
//! Errors of a call are *results*, not Rust errors: a tool that fails returns a [`ToolResult`]
//! with `is_error: true`, a machine-readable [`ErrorKind`] in its metadata, and a message meant
//! for the model that made the call.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// What an LLM is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    pub name: String,
    /// A display name (MCP's `title`); custom tools take it from `metadata.title`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    /// JSON Schema of the arguments: always `{"type": "object", ...}`.
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Hidden search tags for discovery; never sent to the LLM.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default)]
    pub requires_confirmation: bool,
    /// JSON Schema of the result's structured content, when the tool declares one (MCP's
    /// `outputSchema`; custom tools take it from `metadata.outputSchema`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// MCP tool annotations (`readOnlyHint`, `destructiveHint` …) as a bridged upstream gave
    /// them, listed as they are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

impl ToolDefinition {
    /// A definition with no category, tags or confirmation.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        ToolDefinition {
            name: name.into(),
            title: None,
            description: description.into(),
            parameters,
            category: None,
            tags: Vec::new(),
            requires_confirmation: false,
            output_schema: None,
            annotations: None,
        }
    }

    #[must_use]
    pub fn with_category(mut self, category: impl Into<String>) -> Self {
        self.category = Some(category.into());
        self
    }

    #[must_use]
    pub fn with_tags(mut self, tags: &[&str]) -> Self {
        self.tags = tags.iter().map(|t| (*t).to_owned()).collect();
        self
    }
}

/// What a tool does to the world, in one word: what its MCP annotations (`readOnlyHint`,
/// `destructiveHint`, `idempotentHint`) are computed from ([`Effect::annotations`]), so a
/// client can tell `read_file` from `delete_file`. Every built-in states one (its family's
/// `EFFECTS`); a custom tool's comes from its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Computes, or reads what exists; changes nothing.
    Reads,
    /// Adds something new (a record, a file, a step) and changes nothing that exists: not
    /// destructive, and a second call adds again.
    Adds,
    /// Marks or sets what exists to a value the call names (done, enabled, staged): not
    /// destructive, and the same call again changes nothing more.
    Sets,
    /// Changes or replaces what exists (updates fields, overwrites, moves): destructive, and the
    /// same call again changes nothing more.
    Changes,
    /// Removes what exists: destructive, and the same call again removes nothing more.
    Deletes,
    /// Runs code, a command or a request whose effects the tool cannot know: destructive, and
    /// each call may do more.
    Runs,
}

impl Effect {
    pub const ALL: [Effect; 6] = [
        Effect::Reads,
        Effect::Adds,
        Effect::Sets,
        Effect::Changes,
        Effect::Deletes,
        Effect::Runs,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Reads => "reads",
            Effect::Adds => "adds",
            Effect::Sets => "sets",
            Effect::Changes => "changes",
            Effect::Deletes => "deletes",
            Effect::Runs => "runs",
        }
    }

    /// MCP's tool annotations for a tool with this effect that reaches outside the server
    /// (`open_world`: the network, another service) or not. A read-only tool's
    /// `destructiveHint` and `idempotentHint` are meaningless in MCP and left out.
    pub fn annotations(self, open_world: bool) -> Value {
        let (destructive, idempotent) = match self {
            Effect::Reads => {
                return json!({"readOnlyHint": true, "openWorldHint": open_world});
            }
            Effect::Adds => (false, false),
            Effect::Sets => (false, true),
            Effect::Changes | Effect::Deletes => (true, true),
            Effect::Runs => (true, false),
        };
        json!({
            "readOnlyHint": false,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
            "openWorldHint": open_world,
        })
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A capability a tool must declare before its sandbox offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    Network,
    Filesystem,
    Database,
    Shell,
    Email,
    Scheduling,
    /// `mcp.sample`: ask the calling client's model (MCP `sampling/createMessage`).
    Sampling,
    /// `mcp.elicit`: ask the person behind the calling client (MCP `elicitation/create`).
    Elicitation,
}

impl Permission {
    pub const ALL: [Permission; 8] = [
        Permission::Network,
        Permission::Filesystem,
        Permission::Database,
        Permission::Shell,
        Permission::Email,
        Permission::Scheduling,
        Permission::Sampling,
        Permission::Elicitation,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Network => "network",
            Permission::Filesystem => "filesystem",
            Permission::Database => "database",
            Permission::Shell => "shell",
            Permission::Email => "email",
            Permission::Scheduling => "scheduling",
            Permission::Sampling => "sampling",
            Permission::Elicitation => "elicitation",
        }
    }

    /// Permissions that make an LLM-created tool wait for a human (`shell`, `filesystem`, `email`).
    pub fn is_dangerous(self) -> bool {
        matches!(
            self,
            Permission::Shell | Permission::Filesystem | Permission::Email
        )
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Permission {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Permission::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown permission '{s}' (expected one of: network, filesystem, database, shell, email, scheduling, sampling, elicitation)"
                )
            })
    }
}

/// A set of permissions, ordered so it prints and stores the same way every time.
pub type PermissionSet = BTreeSet<Permission>;

/// Everything a tool executor knows about the call it is running.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Unique id of this invocation.
    pub call_id: String,
    pub conversation_id: Option<String>,
    /// The owner whose custom tools this call may see; `default` without authentication.
    pub user_id: String,
    pub agent_id: Option<String>,
    /// The caller named `agent_id` itself (a request header on a token bound to no agent),
    /// rather than a token or the operator's configuration: the agent's rules may then only
    /// narrow what the user may do, never widen it.
    pub agent_chosen_by_caller: bool,
    /// Cancelled when the caller goes away or the server shuts down.
    pub cancellation: CancellationToken,
    /// How many `callTool` hops led to this call (0 for a call from outside).
    pub depth: u32,
    /// The caller's subagent depth as its agent runner declared it (0 for a top-level agent,
    /// 1 for its subagent …; MCP `_meta.subagentDepth`, REST `X-Toolsmith-Subagent-Depth`):
    /// what the policy's subagent deny lists apply to. Nested `callTool` calls keep it, so a
    /// subagent cannot escape its deny list through a tool.
    pub subagent_depth: u32,
    /// For nested calls: the permissions of the calling tool. A nested call may only reach a tool
    /// whose own permissions are covered by these. `None` for calls from outside.
    pub granted_permissions: Option<PermissionSet>,
    /// For nested calls: the caller's deadline, which the nested call must not outlive.
    pub deadline: Option<Instant>,
    /// What the caller knows of the conversation, sent with the call (REST body `context`, MCP
    /// `_meta.context`): `{customer, conversation, context}` objects that HTTP tools' non-explicit
    /// parameters are filled from. Nested calls inherit it.
    pub call_context: Option<std::sync::Arc<serde_json::Value>>,
    /// Who can ask the person behind this call for an approval while the call waits (an MCP
    /// client with elicitation); `None` leaves approvals to the REST API and the CLI.
    pub approver: Option<crate::approval::Approver>,
    /// The caller's client as a running tool may use it (log, progress, sampling,
    /// elicitation): set by a door whose caller is an MCP client reachable during the call;
    /// `None` elsewhere (see [`crate::client::Client::of`]). Nested calls keep it.
    pub client: Option<crate::client::Client>,
    /// The caller is an admin acting as a person (an `admin` token without an agent, or the
    /// CLI): not bound by MCP grants. Nested calls keep it.
    pub admin: bool,
    /// The call is a scheduled task's run, or made by one (nested calls keep it): such a call
    /// may not create, change or trigger scheduled tasks, so tasks cannot multiply.
    pub scheduled_run: bool,
    /// What this call may reach beyond the policy, when a door with a scope of its own made
    /// it (an agent run: its definition's `toolPolicy`); asked for every tool by the policy
    /// middleware and the listings. Nested calls keep it, so no tool reaches past it.
    pub narrowing: Option<crate::narrowing::Narrowing>,
    /// A model made this call though no agent is named (an MCP client's session): a built-in
    /// that `requires_confirmation` then waits for a person, as for an agent's call. A
    /// person's REST or CLI call leaves it `false`. Nested calls keep it.
    pub model_caller: bool,
    /// The person making the call while acting in an organisation (`user_id` is then the
    /// organisation's id): named in the audit entries the call writes. `None` otherwise.
    /// Nested calls keep it.
    pub member: Option<String>,
}

impl ToolContext {
    /// A context for a call from outside, with a fresh call id.
    pub fn new(user_id: impl Into<String>) -> Self {
        ToolContext {
            call_id: new_call_id(),
            conversation_id: None,
            user_id: user_id.into(),
            agent_id: None,
            agent_chosen_by_caller: false,
            cancellation: CancellationToken::new(),
            depth: 0,
            subagent_depth: 0,
            granted_permissions: None,
            deadline: None,
            call_context: None,
            approver: None,
            client: None,
            admin: false,
            scheduled_run: false,
            narrowing: None,
            model_caller: false,
            member: None,
        }
    }

    /// Whether a model made this call: an agent is named, or a model's door said so
    /// ([`ToolContext::model_caller`]). What asks a person to confirm a built-in flagged
    /// `requires_confirmation`.
    pub fn by_model(&self) -> bool {
        self.model_caller || self.agent_id.is_some()
    }

    /// The context of a call made by a running tool through `callTool`.
    #[must_use]
    pub fn nested(&self, granted: PermissionSet, deadline: Option<Instant>) -> Self {
        ToolContext {
            call_id: new_call_id(),
            conversation_id: self.conversation_id.clone(),
            user_id: self.user_id.clone(),
            agent_id: self.agent_id.clone(),
            agent_chosen_by_caller: self.agent_chosen_by_caller,
            cancellation: self.cancellation.child_token(),
            depth: self.depth + 1,
            subagent_depth: self.subagent_depth,
            granted_permissions: Some(granted),
            deadline: match (self.deadline, deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            call_context: self.call_context.clone(),
            approver: self.approver.clone(),
            client: self.client.clone(),
            admin: self.admin,
            scheduled_run: self.scheduled_run,
            narrowing: self.narrowing.clone(),
            model_caller: self.model_caller,
            member: self.member.clone(),
        }
    }
}

/// A new random call id (`call_<uuid>`).
pub fn new_call_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

/// The class of a failed call, so callers can branch without parsing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// The arguments were not JSON, not an object, or broke the tool's schema.
    InvalidArguments,
    /// No tool of that name is visible to the caller.
    NotFound,
    /// The tool's own code failed (a thrown error, a failed command).
    ExecutionError,
    /// The wall-clock limit ran out.
    Timeout,
    /// The CPU-time limit ran out.
    CpuLimit,
    /// The memory limit was hit.
    MemoryLimit,
    /// The stack-depth limit was hit.
    StackOverflow,
    /// The result was larger than the output cap.
    OutputTooLarge,
    /// The execution queue was full.
    Busy,
    /// The call was cancelled by its caller.
    Cancelled,
    /// A policy, permission or approval rule refused the call.
    Denied,
    /// A rate limit refused the call.
    RateLimited,
    /// The call waits for a human's approval (see the result's `approvalId`).
    ApprovalRequired,
    /// Something went wrong inside Toolsmith; never the caller's fault.
    Internal,
    /// The tool ran, but its result cannot be released (the owner's secrets could not be read
    /// to scrub it): not the tool's error, and a retry runs the tool again (the result's
    /// `ran: true` says so).
    ResultWithheld,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::NotFound => "not_found",
            ErrorKind::ExecutionError => "execution_error",
            ErrorKind::Timeout => "timeout",
            ErrorKind::CpuLimit => "cpu_limit",
            ErrorKind::MemoryLimit => "memory_limit",
            ErrorKind::StackOverflow => "stack_overflow",
            ErrorKind::OutputTooLarge => "output_too_large",
            ErrorKind::Busy => "busy",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Denied => "denied",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::ApprovalRequired => "approval_required",
            ErrorKind::Internal => "internal",
            ErrorKind::ResultWithheld => "result_withheld",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConsoleLevel {
    Log,
    Warn,
    Error,
}

/// One line a tool wrote to its console. Kept as data; never written raw into the server log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConsoleEntry {
    pub level: ConsoleLevel,
    pub message: String,
}

/// Facts about a finished call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultMetadata {
    /// Wall-clock time of the whole call, in milliseconds (fractional).
    pub duration_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub console: Vec<ConsoleEntry>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub console_truncated: bool,
    /// Anything else an executor or middleware wants to report.
    #[serde(default, skip_serializing_if = "Map::is_empty", flatten)]
    pub extra: Map<String, Value>,
}

/// What a call returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub content: Value,
    pub is_error: bool,
    pub metadata: ResultMetadata,
    /// How `content` is to be read: any JSON value (the default, not serialized), or content
    /// blocks made by [`ToolResult::blocks`] (see [`crate::content`]).
    #[serde(default, skip_serializing_if = "crate::content::ContentForm::is_json")]
    pub form: crate::content::ContentForm,
}

impl ToolResult {
    pub fn ok(content: Value) -> Self {
        ToolResult {
            content,
            is_error: false,
            metadata: ResultMetadata::default(),
            form: crate::content::ContentForm::Json,
        }
    }

    /// A failed call: `content` is `{"error": message, "kind": kind}`.
    pub fn error(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolResult::error_with(kind, message, Map::new())
    }

    /// A failed call with extra fields next to `error` and `kind` (violations, schema, stack …).
    pub fn error_with(
        kind: ErrorKind,
        message: impl Into<String>,
        details: Map<String, Value>,
    ) -> Self {
        let mut content = Map::new();
        content.insert("error".to_owned(), Value::String(message.into()));
        content.insert("kind".to_owned(), json!(kind));
        content.extend(details);
        ToolResult {
            content: Value::Object(content),
            is_error: true,
            metadata: ResultMetadata {
                error_kind: Some(kind),
                ..ResultMetadata::default()
            },
            form: crate::content::ContentForm::Json,
        }
    }

    /// The error class, if this call failed.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        self.metadata.error_kind
    }

    /// The error message, if this call failed.
    pub fn error_message(&self) -> Option<&str> {
        if !self.is_error {
            return None;
        }
        if let Some(blocks) = self.content_blocks() {
            return blocks
                .iter()
                .find_map(|b| b.get("text").and_then(Value::as_str));
        }
        match &self.content {
            Value::String(s) => Some(s),
            it => it.get("error").and_then(Value::as_str),
        }
    }

    /// The content as the text an LLM receives: strings as they are, `null` as empty,
    /// everything else as JSON.
    pub fn content_text(&self) -> String {
        if let Some(text) = self.blocks_text() {
            return text;
        }
        match &self.content {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            it => it.to_string(),
        }
    }
}

/// Runs one tool. Implemented by built-ins, the JS sandbox, and later command, HTTP and
/// bridged tools. Arguments have already been validated against the tool's schema.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult;

    /// Whether this call waits for a person's approval by a rule of the tool's own, whatever
    /// the server's approval setting says (a coding agent whose policy is `prompt`): the
    /// approval gate asks this before the call runs. No by default.
    async fn asks_person(&self, _args: &Value, _ctx: &ToolContext) -> bool {
        false
    }
}
