//! The wire types of the REST API: what bodies are parsed into and what `data` holds.
//!
//! They are twins of the domain types (`CustomToolRecord`, `CreateTool`, `ToolPatch`,
//! `ToolResult` …), converted by hand, so that the JSON contract (camelCase names, the OpenAPI
//! schemas derived from these types) is decided here and nowhere below this crate. Request types
//! deny unknown fields and accept exactly what the document describes: camelCase only, `null`
//! wherever a field is optional. A tool definition's body (`CreateToolBody`, `TestToolBody`) is
//! the one every face reads, so it lives in [`crate::definition`] and is re-exported here.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolsmith_core::{
    CreatedBy, CustomToolRecord, Permission, ToolDefinition, ToolKind, ToolResult, ToolStatus,
    ToolVersionRecord,
};
use toolsmith_service::{ToolPatch, ToolStats};
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};

pub use crate::definition::{CreateToolBody, TestToolBody};

/// Where a custom tool is in its lifecycle. Only `active` tools can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Active,
    Disabled,
    PendingApproval,
    Rejected,
}

impl From<ToolStatus> for Status {
    fn from(s: ToolStatus) -> Status {
        match s {
            ToolStatus::Active => Status::Active,
            ToolStatus::Disabled => Status::Disabled,
            ToolStatus::PendingApproval => Status::PendingApproval,
            ToolStatus::Rejected => Status::Rejected,
        }
    }
}

impl From<Status> for ToolStatus {
    fn from(s: Status) -> ToolStatus {
        match s {
            Status::Active => ToolStatus::Active,
            Status::Disabled => ToolStatus::Disabled,
            Status::PendingApproval => ToolStatus::PendingApproval,
            Status::Rejected => ToolStatus::Rejected,
        }
    }
}

/// Who created a tool: a person (UI, REST, CLI) or a model (MCP).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Creator {
    User,
    Llm,
}

impl From<CreatedBy> for Creator {
    fn from(c: CreatedBy) -> Creator {
        match c {
            CreatedBy::User => Creator::User,
            CreatedBy::Llm => Creator::Llm,
        }
    }
}

impl From<Creator> for CreatedBy {
    fn from(c: Creator) -> CreatedBy {
        match c {
            Creator::User => CreatedBy::User,
            Creator::Llm => CreatedBy::Llm,
        }
    }
}

/// A capability a tool declares; nothing undeclared exists in its sandbox. `shell`, `filesystem`
/// and `email` are dangerous: a model-created tool holding one waits for approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolPermission {
    Network,
    Filesystem,
    Database,
    Shell,
    Email,
    Scheduling,
    Sampling,
    Elicitation,
}

impl From<Permission> for ToolPermission {
    fn from(p: Permission) -> ToolPermission {
        match p {
            Permission::Network => ToolPermission::Network,
            Permission::Filesystem => ToolPermission::Filesystem,
            Permission::Database => ToolPermission::Database,
            Permission::Shell => ToolPermission::Shell,
            Permission::Email => ToolPermission::Email,
            Permission::Scheduling => ToolPermission::Scheduling,
            Permission::Sampling => ToolPermission::Sampling,
            Permission::Elicitation => ToolPermission::Elicitation,
        }
    }
}

impl From<ToolPermission> for Permission {
    fn from(p: ToolPermission) -> Permission {
        match p {
            ToolPermission::Network => Permission::Network,
            ToolPermission::Filesystem => Permission::Filesystem,
            ToolPermission::Database => Permission::Database,
            ToolPermission::Shell => Permission::Shell,
            ToolPermission::Email => Permission::Email,
            ToolPermission::Scheduling => Permission::Scheduling,
            ToolPermission::Sampling => Permission::Sampling,
            ToolPermission::Elicitation => Permission::Elicitation,
        }
    }
}

/// How a custom tool is implemented.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `code` is the body of an async JavaScript function, run in the sandbox.
    #[default]
    Js,
    /// `code` is a command-tool spec as JSON (`{"command": "wc -w {{.file}}", …}`), run in the
    /// OS sandbox.
    Command,
    /// `code` is an HTTP tool definition (spec 004), YAML or JSON.
    Http,
}

impl From<ToolKind> for Kind {
    fn from(k: ToolKind) -> Kind {
        match k {
            ToolKind::Js => Kind::Js,
            ToolKind::Command => Kind::Command,
            ToolKind::Http => Kind::Http,
        }
    }
}

impl From<Kind> for ToolKind {
    fn from(k: Kind) -> ToolKind {
        match k {
            Kind::Js => ToolKind::Js,
            Kind::Command => ToolKind::Command,
            Kind::Http => ToolKind::Http,
        }
    }
}

/// A custom tool as stored.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolRecord {
    /// `tool_` and 16 hex digits.
    #[schema(example = "tool_0123456789abcdef")]
    pub id: String,
    /// The owner.
    pub user_id: String,
    #[schema(example = "word_count")]
    pub name: String,
    pub kind: Kind,
    pub description: String,
    /// JSON Schema of the arguments (`type: object`).
    #[schema(value_type = Object)]
    pub parameters: Value,
    /// The body of an async JavaScript function; `args` holds the arguments.
    pub code: String,
    pub category: Option<String>,
    /// Search tags for discovery; never shown to a model.
    pub tags: Vec<String>,
    pub permissions: Vec<ToolPermission>,
    pub status: Status,
    /// Every execution needs a person's confirmation.
    pub requires_approval: bool,
    pub created_by: Creator,
    /// Starts at 1; +1 whenever `code` or `parameters` change.
    pub version: i64,
    /// +1 on every change; what `expectedRevision` and `If-Match` are compared with.
    pub revision: i64,
    pub usage_count: i64,
    pub last_used_at: Option<DateTime<Utc>>,
    /// Free-form JSON object.
    #[schema(value_type = Object)]
    pub metadata: Value,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Config Center services the tool needs that have no value yet, as `service (fields)`;
    /// absent when nothing is missing. Running the tool before they are set is an error
    /// naming them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing_config: Vec<String>,
}

impl From<CustomToolRecord> for ToolRecord {
    fn from(r: CustomToolRecord) -> ToolRecord {
        ToolRecord {
            id: r.id,
            user_id: r.owner,
            name: r.name,
            kind: r.kind.into(),
            description: r.description,
            parameters: r.parameters,
            code: r.code,
            category: r.category,
            tags: r.tags,
            permissions: r.permissions.into_iter().map(Into::into).collect(),
            status: r.status.into(),
            requires_approval: r.requires_approval,
            created_by: r.created_by.into(),
            version: r.version,
            revision: r.revision,
            usage_count: r.usage_count,
            last_used_at: r.last_used_at,
            metadata: r.metadata,
            created_at: r.created_at,
            updated_at: r.updated_at,
            missing_config: Vec::new(),
        }
    }
}

/// One page of custom tools.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolList {
    pub tools: Vec<ToolRecord>,
    /// How many tools are on this page.
    pub count: u64,
    /// How many tools match the filters in all.
    pub total: u64,
    pub limit: u32,
    pub offset: u32,
}

/// Counts over the caller's custom tools.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub total: u64,
    pub active: u64,
    pub disabled: u64,
    pub pending_approval: u64,
    pub rejected: u64,
    #[serde(rename = "createdByLLM")]
    #[schema(rename = "createdByLLM")]
    pub created_by_llm: u64,
    pub created_by_user: u64,
    /// Executions of all custom tools together.
    pub total_usage: u64,
}

impl From<ToolStats> for Stats {
    fn from(s: ToolStats) -> Stats {
        Stats {
            total: s.total,
            active: s.active,
            disabled: s.disabled,
            pending_approval: s.pending_approval,
            rejected: s.rejected,
            created_by_llm: s.created_by_llm,
            created_by_user: s.created_by_user,
            total_usage: s.total_usage,
        }
    }
}

/// A tool as a model is told about it (tags are never included).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Definition {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments.
    #[schema(value_type = Object)]
    pub parameters: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Every execution needs a person's confirmation.
    pub requires_confirmation: bool,
}

impl From<ToolDefinition> for Definition {
    fn from(d: ToolDefinition) -> Definition {
        Definition {
            name: d.name,
            description: d.description,
            parameters: d.parameters,
            category: d.category,
            requires_confirmation: d.requires_confirmation,
        }
    }
}

/// The active custom tools as tool definitions.
#[derive(Debug, Serialize, ToSchema)]
pub struct DefinitionList {
    pub tools: Vec<Definition>,
    pub count: u64,
}

/// One stored version of a tool's definition.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolVersion {
    pub tool_id: String,
    pub version: i64,
    pub description: String,
    #[schema(value_type = Object)]
    pub parameters: Value,
    pub code: String,
    pub permissions: Vec<ToolPermission>,
    /// The tool's metadata as it was at this version: its npm `dependencies` and
    /// `packageLock`, which a rollback to it restores, among it (`{}` for versions stored
    /// before versions kept it).
    #[schema(value_type = Object)]
    pub metadata: Value,
    pub created_at: DateTime<Utc>,
}

impl From<ToolVersionRecord> for ToolVersion {
    fn from(v: ToolVersionRecord) -> ToolVersion {
        ToolVersion {
            tool_id: v.tool_id,
            version: v.version,
            description: v.description,
            parameters: v.parameters,
            code: v.code,
            permissions: v.permissions.into_iter().map(Into::into).collect(),
            metadata: v.metadata,
            created_at: v.created_at,
        }
    }
}

/// The versions of a tool, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionList {
    pub versions: Vec<ToolVersion>,
    pub count: u64,
}

/// What a delete answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct Deleted {
    /// Always `true`.
    pub deleted: bool,
    /// The tool as it was.
    pub tool: ToolRecord,
}

/// An integer as JSON Schema counts one: `3` and `3.0` alike (a fraction or a number outside the
/// `i64` range is refused).
fn integer<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let number = serde_json::Number::deserialize(deserializer)?;
    if let Some(n) = number.as_i64() {
        return Ok(n);
    }
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_991.0 => Ok(f as i64),
        _ => Err(serde::de::Error::custom(format!(
            "invalid value: {number}, expected an integer"
        ))),
    }
}

/// [`integer`], or `null`.
pub(crate) fn optional_integer<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<i64>, D::Error> {
    #[derive(Deserialize)]
    struct Wrapped(#[serde(deserialize_with = "integer")] i64);
    Ok(Option::<Wrapped>::deserialize(deserializer)?.map(|Wrapped(n)| n))
}

/// [`optional_integer`] that must not be negative (a count of seconds, say); `3.0` is 3.
pub(crate) fn optional_unsigned<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u64>, D::Error> {
    optional_integer(deserializer)?
        .map(|n| {
            u64::try_from(n).map_err(|_| {
                serde::de::Error::custom(format!("invalid value: {n}, expected a whole number ≥ 0"))
            })
        })
        .transpose()
}

/// `parameters` of a tool definition: a JSON Schema object, or the same as a JSON string.
pub(crate) fn parameters_schema() -> impl Into<RefOr<Schema>> {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property(
                    "type",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(["object"])),
                )
                .required("type")
                .description(Some("A JSON Schema with `type: object`")),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some("The same JSON Schema, as a JSON string")),
        )
        .description(Some(
            "JSON Schema of the arguments: an object with `type: \"object\"` (`properties`, `required` …), or that object as a JSON string",
        ))
}

/// A partial update: absent (or `null`) fields stay as they are.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateToolBody {
    /// Renames the tool (spec 000). With `newName` also given, it must be the tool's current
    /// name instead (a check, as before `newName` existed).
    #[serde(default)]
    pub name: Option<String>,
    /// Renames the tool (same rules as a new name).
    #[serde(default)]
    #[schema(pattern = "^[a-z][a-z0-9_]*$", min_length = 1, max_length = 64)]
    pub new_name: Option<String>,
    #[serde(default)]
    #[schema(min_length = 1)]
    pub description: Option<String>,
    #[serde(default)]
    #[schema(schema_with = parameters_schema, nullable)]
    pub parameters: Option<Value>,
    #[serde(default)]
    pub code: Option<String>,
    /// `""` clears the category.
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    #[schema(max_items = 32)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub permissions: Option<Vec<ToolPermission>>,
    #[serde(default)]
    pub requires_approval: Option<bool>,
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<Map<String, Value>>,
    /// Replaces the Config Center services the tool declares (kept in
    /// `metadata.requiredApiKeys`; the rest of the metadata stays as it is).
    #[serde(default, alias = "required_api_keys")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub required_api_keys: Option<Vec<Value>>,
    /// JS tools: replaces the npm dependencies (`[{name, version}]`; `[]` removes them),
    /// resolved and installed again when they change.
    #[serde(default)]
    #[schema(value_type = Option<Vec<NpmDependency>>)]
    pub dependencies: Option<Vec<toolsmith_service::packages::Dependency>>,
    /// Replaces the JSON Schema (`"type": "object"`) of the structured content the tool
    /// returns (kept in `metadata.outputSchema`; the rest of the metadata stays as it is).
    #[serde(default, alias = "output_schema")]
    #[schema(value_type = Option<Object>)]
    pub output_schema: Option<Value>,
    /// Apply only if the tool is at this revision (409 otherwise); same as `If-Match`.
    #[serde(default, deserialize_with = "optional_integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

impl UpdateToolBody {
    /// The patch, the expected revision, and the `requiredApiKeys` to merge into the tool's
    /// metadata (the caller holds the current metadata).
    pub fn into_parts(self) -> (ToolPatch, Option<i64>, Option<Vec<Value>>) {
        // `name` alone renames (spec 000); beside `newName` it is the identity check.
        let (name, new_name) = match (self.name, self.new_name) {
            (name, Some(new_name)) => (name, Some(new_name)),
            (name, None) => (None, name),
        };
        let patch = ToolPatch {
            name,
            new_name,
            description: self.description,
            parameters: self.parameters,
            code: self.code,
            category: self.category,
            tags: self.tags,
            permissions: self
                .permissions
                .map(|ps| ps.into_iter().map(Into::into).collect()),
            requires_approval: self.requires_approval,
            metadata: self.metadata.map(Value::Object),
            dependencies: self.dependencies,
            output_schema: self.output_schema,
        };
        (patch, self.expected_revision, self.required_api_keys)
    }
}

/// The optional body of delete, enable and disable.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RevisionBody {
    /// Apply only if the tool is at this revision (409 otherwise); same as `If-Match`.
    #[serde(default, deserialize_with = "optional_integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

/// Makes an earlier version current again (as a new version).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollbackBody {
    /// The version to restore (see `GET …/{id}/versions`).
    #[serde(deserialize_with = "integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub version: i64,
    /// Apply only if the tool is at this revision (409 otherwise); same as `If-Match`.
    #[serde(default, deserialize_with = "optional_integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

/// Runs a custom tool.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecuteCustomBody {
    /// The arguments, checked against the tool's `parameters` (default `{}`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub arguments: Option<Map<String, Value>>,
    /// What the caller knows of the conversation, for HTTP tools' non-explicit parameters:
    /// `{"customer": {…}, "conversation": {…}, "context": {…}}` (see docs/http-tools.md).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub context: Option<Map<String, Value>>,
}

/// Runs any tool the caller can see.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecuteBody {
    /// The arguments, checked against the tool's `parameters` (default `{}`).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub arguments: Option<Map<String, Value>>,
    /// Groups calls of one conversation in the execution records.
    #[serde(default)]
    #[schema(max_length = 200)]
    pub conversation_id: Option<String>,
    /// What the caller knows of the conversation, for HTTP tools' non-explicit parameters:
    /// `{"customer": {…}, "conversation": {…}, "context": {…}}` (see docs/http-tools.md).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub context: Option<Map<String, Value>>,
}

/// One line a tool wrote to its console.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConsoleLine {
    #[schema(pattern = "^(log|warn|error)$")]
    pub level: String,
    pub message: String,
}

/// Facts about a finished call. Further fields may appear (`testMode`, …).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExecutionMetadata {
    /// Wall-clock time of the whole call, in milliseconds.
    pub duration_ms: f64,
    /// The same in whole milliseconds (spec 000).
    pub execution_time: u64,
    /// The custom tool that ran (spec 000); absent for built-ins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dynamic_tool: Option<String>,
    /// Why the call failed: `execution_error`, `timeout`, `cpu_limit`, `memory_limit`,
    /// `stack_overflow`, `output_too_large`, `cancelled`, `denied`, …
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub console: Option<Vec<ConsoleLine>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub console_truncated: Option<bool>,
}

/// The result of one call. A tool that fails still answers 200, with `isError: true` and the
/// error in `content` (`{"error": message, "kind": …}`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Execution {
    /// The tool that ran.
    pub tool: String,
    /// What the tool returned (any JSON), or `{"error", "kind", …}` when it failed.
    #[schema(value_type = Object)]
    pub content: Value,
    /// The same as `content` (spec 000's name for it).
    #[schema(value_type = Object)]
    pub result: Value,
    pub is_error: bool,
    /// Wall-clock time of the whole call, in whole milliseconds (spec 000); `metadata.durationMs`
    /// has the fraction.
    pub duration: u64,
    #[schema(value_type = ExecutionMetadata)]
    pub metadata: Value,
    /// `true` for a dry run (`POST /api/v1/custom-tools/test`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test_mode: Option<bool>,
    /// `"blocks"` when the tool returned MCP content blocks: `content` is then
    /// `{"content": [block, …], "structuredContent"?: …, "_meta"?: {…}}` (images, audio and
    /// resource blobs as base64, as the tool gave them); absent for any other result.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(pattern = "^blocks$")]
    pub content_form: Option<String>,
}

impl Execution {
    pub fn new(tool: &str, res: ToolResult) -> Execution {
        let mut metadata =
            serde_json::to_value(&res.metadata).unwrap_or_else(|_| Value::Object(Map::new()));
        let duration = res.metadata.duration_ms.max(0.0).round() as u64;
        if let Some(obj) = metadata.as_object_mut() {
            // Spec 000's name for the run's time, in whole milliseconds.
            obj.insert("executionTime".to_owned(), Value::from(duration));
        }
        Execution {
            tool: tool.to_owned(),
            result: res.content.clone(),
            content: res.content,
            is_error: res.is_error,
            duration,
            metadata,
            test_mode: None,
            content_form: (res.form == toolsmith_core::ContentForm::Blocks)
                .then(|| "blocks".to_owned()),
        }
    }

    /// Marks the result as a custom tool's (`metadata.dynamicTool`, spec 000).
    #[must_use]
    pub fn of_custom_tool(mut self) -> Execution {
        if let Some(obj) = self.metadata.as_object_mut() {
            obj.insert("dynamicTool".to_owned(), Value::String(self.tool.clone()));
        }
        self
    }
}

/// Where a tool comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Compiled into Toolsmith.
    Builtin,
    /// One of the caller's active custom tools.
    Custom,
    /// A tool of an external MCP server, bridged (docs/mcp-bridge.md).
    Mcp,
}

/// A tool the caller can run.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolSummary {
    pub name: String,
    pub description: String,
    #[schema(value_type = Object)]
    pub parameters: Value,
    pub category: Option<String>,
    pub source: Source,
    /// The custom tool's id (`null` for built-ins).
    pub id: Option<String>,
    /// The custom tool's version (`null` for built-ins).
    pub version: Option<i64>,
    pub requires_confirmation: bool,
    /// MCP's tool annotations as `tools/list` shows them (`readOnlyHint`, `destructiveHint`,
    /// `idempotentHint`, `openWorldHint`): computed from what the tool does for built-ins and
    /// custom tools, the upstream's for bridged tools (absent when it gave none).
    #[schema(value_type = Option<Object>)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

/// Every tool the caller can run: built-ins, then the caller's active custom tools.
#[derive(Debug, Serialize, ToSchema)]
pub struct ToolSummaryList {
    pub tools: Vec<ToolSummary>,
    pub count: u64,
}

/// The function-calling export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// `[{"type": "function", "function": {name, description, parameters}}]`
    Openai,
    /// `[{name, description, input_schema}]`
    Anthropic,
    /// `[{name, description, inputSchema}]`
    Mcp,
}

impl ExportFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Openai => "openai",
            ExportFormat::Anthropic => "anthropic",
            ExportFormat::Mcp => "mcp",
        }
    }

    pub fn parse(text: &str) -> Option<ExportFormat> {
        [
            ExportFormat::Openai,
            ExportFormat::Anthropic,
            ExportFormat::Mcp,
        ]
        .into_iter()
        .find(|f| f.as_str() == text)
    }
}

/// An OpenAI function.
#[derive(Debug, Serialize, ToSchema)]
pub struct OpenAiFunction {
    pub name: String,
    pub description: String,
    #[schema(value_type = Object)]
    pub parameters: Value,
}

/// An OpenAI tool: `{"type": "function", "function": {…}}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct OpenAiTool {
    /// Always `function`.
    #[serde(rename = "type")]
    #[schema(rename = "type", pattern = "^function$")]
    pub kind: String,
    pub function: OpenAiFunction,
}

/// An Anthropic tool.
#[derive(Debug, Serialize, ToSchema)]
pub struct AnthropicTool {
    pub name: String,
    pub description: String,
    #[schema(value_type = Object)]
    pub input_schema: Value,
}

/// An MCP tool.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpTool {
    pub name: String,
    pub description: String,
    #[schema(value_type = Object)]
    pub input_schema: Value,
}

/// One exported tool, in the requested format.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum ExportedTool {
    OpenAi(OpenAiTool),
    Anthropic(AnthropicTool),
    Mcp(McpTool),
}

impl ExportedTool {
    pub fn new(format: ExportFormat, d: ToolDefinition) -> ExportedTool {
        match format {
            ExportFormat::Openai => ExportedTool::OpenAi(OpenAiTool {
                kind: "function".to_owned(),
                function: OpenAiFunction {
                    name: toolsmith_core::name::function_name(&d.name),
                    description: d.description,
                    parameters: d.parameters,
                },
            }),
            ExportFormat::Anthropic => ExportedTool::Anthropic(AnthropicTool {
                name: toolsmith_core::name::function_name(&d.name),
                description: d.description,
                input_schema: d.parameters,
            }),
            ExportFormat::Mcp => ExportedTool::Mcp(McpTool {
                name: d.name,
                description: d.description,
                input_schema: d.parameters,
            }),
        }
    }
}

/// The caller's tools as function-calling definitions.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    pub format: ExportFormat,
    pub tools: Vec<ExportedTool>,
    pub count: u64,
    /// Exported name → the tool's real name, for names a model API would refuse
    /// (`text.uppercase` → `text_uppercase__1a2b3c4d` in `openai` and `anthropic`); call the
    /// tool by its real name. Absent when no name was mapped.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub name_map: std::collections::BTreeMap<String, String>,
}

/// `GET /livez` and `GET /readyz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Health {
    /// `ok`
    #[schema(example = "ok")]
    pub status: String,
}

/// One field of a config service's schema.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigFieldBody {
    #[schema(pattern = "^[a-z][a-z0-9_]*$", min_length = 1, max_length = 64)]
    pub name: String,
    #[serde(default)]
    pub label: Option<String>,
    /// `secret` (encrypted, masked), `text`, `url`, `number` or `boolean`.
    #[schema(pattern = "^(secret|text|url|number|boolean)$")]
    pub kind: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub description: Option<String>,
}

impl ConfigFieldBody {
    fn into_field(self) -> Result<toolsmith_core::ConfigField, String> {
        Ok(toolsmith_core::ConfigField {
            label: self.label.unwrap_or_default(),
            kind: self.kind.parse()?,
            name: self.name,
            required: self.required,
            description: self.description,
        })
    }
}

fn fields(
    list: Option<Vec<ConfigFieldBody>>,
) -> Result<Option<Vec<toolsmith_core::ConfigField>>, String> {
    list.map(|l| l.into_iter().map(ConfigFieldBody::into_field).collect())
        .transpose()
}

/// A new config service.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigServiceBody {
    /// The name tools use: `utils.getApiKey('<name>')`.
    #[schema(
        pattern = "^[a-z][a-z0-9_]*$",
        min_length = 1,
        max_length = 64,
        example = "weatherapi"
    )]
    pub name: String,
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub docs_url: Option<String>,
    #[serde(default)]
    pub multi_entry: bool,
    /// The config schema (default: `api_key` secret, required; `base_url` url).
    #[serde(default)]
    pub fields: Option<Vec<ConfigFieldBody>>,
}

impl ConfigServiceBody {
    pub fn into_input(self) -> Result<toolsmith_service::ServiceInput, String> {
        Ok(toolsmith_service::ServiceInput {
            name: self.name,
            display_name: self.display_name,
            description: self.description,
            category: self.category,
            docs_url: self.docs_url,
            multi_entry: self.multi_entry,
            fields: fields(self.fields)?,
        })
    }
}

/// A change to a config service: absent fields stay.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigServicePatchBody {
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub docs_url: Option<String>,
    #[serde(default)]
    pub multi_entry: Option<bool>,
    #[serde(default)]
    pub fields: Option<Vec<ConfigFieldBody>>,
}

impl ConfigServicePatchBody {
    pub fn into_patch(self) -> Result<toolsmith_service::ServicePatch, String> {
        Ok(toolsmith_service::ServicePatch {
            display_name: self.display_name,
            description: self.description,
            category: self.category,
            docs_url: self.docs_url,
            multi_entry: self.multi_entry,
            fields: fields(self.fields)?,
        })
    }
}

/// An entry's values (plaintext in, masked out).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigEntryBody {
    /// Default `default`.
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub is_default: Option<bool>,
    /// Field → value; in an update `null` removes a value and absent fields stay.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub values: std::collections::BTreeMap<String, Value>,
}

impl ConfigEntryBody {
    pub fn into_input(self) -> toolsmith_service::EntryInput {
        toolsmith_service::EntryInput {
            label: self.label,
            is_default: self.is_default,
            values: self.values,
        }
    }
}

/// One npm dependency of a JS tool as the API takes it (`toolsmith_service::packages::Dependency`):
/// the document's shape of it, so a schema-valid request is one the handler can read.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // Only its schema is used; requests deserialize into the service's type.
pub struct NpmDependency {
    /// The package's name (`csv-parse`, `@scope/name`).
    #[schema(min_length = 1, max_length = 214)]
    name: String,
    /// A semver range as npm reads it, or a dist-tag (`^5.5.0`, `latest`).
    #[schema(min_length = 1, max_length = 128)]
    version: String,
}
