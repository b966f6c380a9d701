//! The stored shape of custom tools, their version history and their executions.
//!
//! These are plain values shared by the store (which persists them) and the service (which
//! enforces the lifecycle rules on them). Field names serialize in the spec's camelCase.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{Permission, PermissionSet, ToolDefinition};

/// How a custom tool is implemented.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// The body of an async JavaScript function, run in the JS sandbox.
    #[default]
    Js,
    /// A shell-command template run in the OS sandbox; `code` holds its spec as JSON.
    Command,
    /// A declarative HTTP endpoint; `code` holds its definition (YAML or JSON).
    Http,
}

impl ToolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::Js => "js",
            ToolKind::Command => "command",
            ToolKind::Http => "http",
        }
    }
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "js" => Ok(ToolKind::Js),
            "command" => Ok(ToolKind::Command),
            "http" => Ok(ToolKind::Http),
            _ => Err(format!(
                "unknown tool kind '{s}' (expected: js, command or http)"
            )),
        }
    }
}

/// Where a custom tool is in its lifecycle. Only `active` tools are in the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Active,
    Disabled,
    PendingApproval,
    Rejected,
}

impl ToolStatus {
    pub const ALL: [ToolStatus; 4] = [
        ToolStatus::Active,
        ToolStatus::Disabled,
        ToolStatus::PendingApproval,
        ToolStatus::Rejected,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Active => "active",
            ToolStatus::Disabled => "disabled",
            ToolStatus::PendingApproval => "pending_approval",
            ToolStatus::Rejected => "rejected",
        }
    }
}

impl fmt::Display for ToolStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolStatus::ALL
            .into_iter()
            .find(|it| it.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown status '{s}' (expected one of: active, disabled, pending_approval, rejected)"
                )
            })
    }
}

/// Who created (or is acting on) a tool: a person through the UI/REST/CLI, or a model through MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CreatedBy {
    User,
    Llm,
}

impl CreatedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            CreatedBy::User => "user",
            CreatedBy::Llm => "llm",
        }
    }
}

impl fmt::Display for CreatedBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CreatedBy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "user" => Ok(CreatedBy::User),
            "llm" => Ok(CreatedBy::Llm),
            _ => Err(format!("unknown creator '{s}' (expected: user or llm)")),
        }
    }
}

/// A custom tool as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CustomToolRecord {
    /// `tool_<16 hex>`.
    pub id: String,
    /// The owning user id (`default` without authentication).
    pub owner: String,
    pub name: String,
    pub kind: ToolKind,
    pub description: String,
    /// JSON Schema of the arguments (`type: object`).
    pub parameters: Value,
    pub code: String,
    pub category: Option<String>,
    pub tags: Vec<String>,
    pub permissions: PermissionSet,
    pub status: ToolStatus,
    pub requires_approval: bool,
    pub created_by: CreatedBy,
    /// Starts at 1; +1 whenever code or parameters change.
    pub version: i64,
    /// +1 on every real change; what `expectedRevision` is compared with.
    pub revision: i64,
    pub usage_count: i64,
    pub last_used_at: Option<DateTime<Utc>>,
    /// Free-form JSON object.
    pub metadata: Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl CustomToolRecord {
    /// A fresh id: `tool_` and 16 random hex digits.
    pub fn new_id() -> String {
        format!("tool_{:016x}", uuid::Uuid::new_v4().as_u64_pair().0)
    }

    /// The definition this tool shows to an LLM.
    pub fn definition(&self) -> ToolDefinition {
        ToolDefinition {
            name: self.name.clone(),
            title: self
                .metadata
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_owned),
            description: self.description.clone(),
            parameters: self.parameters.clone(),
            category: self.category.clone(),
            tags: self.tags.clone(),
            requires_confirmation: self.requires_approval,
            output_schema: self.metadata.get("outputSchema").cloned(),
            annotations: None,
        }
    }

    pub fn has_dangerous_permission(&self) -> bool {
        self.permissions.iter().any(|p| p.is_dangerous())
    }

    /// Whether `permission` is declared.
    pub fn has_permission(&self, permission: Permission) -> bool {
        self.permissions.contains(&permission)
    }
}

/// One past (or the current) version of a tool's code and parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolVersionRecord {
    pub tool_id: String,
    pub version: i64,
    pub description: String,
    pub parameters: Value,
    pub code: String,
    pub permissions: PermissionSet,
    /// The tool's metadata as it was at this version (its npm `dependencies` and
    /// `packageLock` among it); `{}` for versions stored before versions kept it.
    #[serde(default = "empty_object")]
    pub metadata: Value,
    pub created_at: DateTime<Utc>,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionStatus {
    Success,
    Error,
    Timeout,
    Denied,
    RateLimited,
    /// The tool ran, but its result was withheld (it could not be scrubbed): not its error.
    Withheld,
    /// The call did not run: it waits for a person's approval (the caller was told which).
    AwaitingApproval,
    /// The call did not run: its approval expired without a decision.
    Expired,
}

impl ExecutionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionStatus::Success => "success",
            ExecutionStatus::Error => "error",
            ExecutionStatus::Timeout => "timeout",
            ExecutionStatus::Denied => "denied",
            ExecutionStatus::RateLimited => "rate_limited",
            ExecutionStatus::Withheld => "withheld",
            ExecutionStatus::AwaitingApproval => "awaiting_approval",
            ExecutionStatus::Expired => "expired",
        }
    }

    /// Whether the tool ran (successfully or not), as opposed to being refused before it could.
    pub fn ran(self) -> bool {
        !matches!(
            self,
            ExecutionStatus::Denied
                | ExecutionStatus::RateLimited
                | ExecutionStatus::AwaitingApproval
                | ExecutionStatus::Expired
        )
    }
}

impl FromStr for ExecutionStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            ExecutionStatus::Success,
            ExecutionStatus::Error,
            ExecutionStatus::Timeout,
            ExecutionStatus::Denied,
            ExecutionStatus::RateLimited,
            ExecutionStatus::Withheld,
            ExecutionStatus::AwaitingApproval,
            ExecutionStatus::Expired,
        ]
        .into_iter()
        .find(|it| it.as_str() == s)
        .ok_or_else(|| format!("unknown execution status '{s}'"))
    }
}

/// Where the tool of a recorded call comes from: a stored custom tool, a built-in, or a tool
/// of an upstream MCP server bridged into the catalogue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionSource {
    /// A stored custom tool (JS, command, HTTP): its `tool_id` is the tool's id. The default,
    /// for records stored or spooled before the source was kept.
    #[default]
    Custom,
    /// A built-in: its `tool_id` is its name.
    Builtin,
    /// A bridged tool of an upstream MCP server: its `tool_id` is its name in the catalogue.
    Mcp,
}

impl ExecutionSource {
    pub const ALL: [ExecutionSource; 3] = [
        ExecutionSource::Custom,
        ExecutionSource::Builtin,
        ExecutionSource::Mcp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ExecutionSource::Custom => "custom",
            ExecutionSource::Builtin => "builtin",
            ExecutionSource::Mcp => "mcp",
        }
    }
}

impl FromStr for ExecutionSource {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ExecutionSource::ALL
            .into_iter()
            .find(|it| it.as_str() == s)
            .ok_or_else(|| format!("unknown execution source '{s}' (custom, builtin or mcp)"))
    }
}

/// One finished call of a tool (custom, built-in or bridged), as recorded for analytics.
/// `owner` is the user the call was made for: the custom tool's owner, or the caller of a
/// built-in or bridged tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionRecord {
    pub id: String,
    pub tool_id: String,
    pub tool_name: String,
    pub tool_version: i64,
    pub owner: String,
    pub conversation_id: Option<String>,
    /// The agent that made the call (an agent-bound token, or the `X-Toolsmith-Agent` header);
    /// `None` for a call with no agent named. Absent from records spooled by older versions.
    #[serde(default)]
    pub agent_id: Option<String>,
    pub status: ExecutionStatus,
    /// The error class (`timeout`, `cpu_limit`, …) when the call failed.
    pub error_kind: Option<String>,
    pub error: Option<String>,
    pub duration_ms: f64,
    pub created_at: DateTime<Utc>,
    /// What the run asked of its caller's client (all zero for a run that asked nothing, and
    /// for records stored or spooled before it was kept).
    #[serde(default)]
    pub client_requests: ClientRequestCounts,
    /// Where the tool comes from (`custom` for records stored or spooled before it was kept).
    #[serde(default)]
    pub source: ExecutionSource,
}

/// How many requests one run made of its caller's client (`mcp.log`, `mcp.progress`,
/// `mcp.sample`, `mcp.elicit`, and a bridged upstream's relayed ones), and how many of the
/// asking ones (sampling, elicitation) the gate refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClientRequestCounts {
    pub logs: u32,
    pub progress: u32,
    pub samples: u32,
    pub elicitations: u32,
    pub refused: u32,
}

impl ClientRequestCounts {
    /// Whether the run asked nothing of its client.
    pub fn is_empty(&self) -> bool {
        *self == ClientRequestCounts::default()
    }
}
