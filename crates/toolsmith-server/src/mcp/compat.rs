//! `--compat dynamic-mcp`: the dynamic-mcp control plane (spec 002) under its own names,
//! argument shapes and answers, for clients written against dynamic-mcp v0.4.1.
//!
//! - `dynamic.tool.create` `{tool: {name, title?, description, code, enabled?, dependencies?,
//!   image?, timeoutMs?}}` (and Toolsmith's `inputSchema`, `category`, `tags`, `permissions`)
//! - `dynamic.tool.update` `{name, patch: {…}, expectedRevision?}`
//! - `dynamic.tool.delete` `{name, expectedRevision?}`
//! - `dynamic.tool.list` `{includeCode?}`, `dynamic.tool.get` `{name}`
//! - `dynamic.tool.enable` `{name, enabled, expectedRevision?}`
//! - `run_js_ephemeral` `{code, args?, dependencies?, image?, timeoutMs?}` (replaces the
//!   control plane's own `run_js_ephemeral` in this mode)
//! - `sandbox.session.list`, `sandbox.initialize`, `sandbox.exec`, `sandbox.run_js`,
//!   `sandbox.stop`: the sandbox sessions, names for built-ins of the `codeExecution` group
//!   ([`sandbox`])
//!
//! The control plane answers as dynamic-mcp's `src/dynamic/service.ts` does: `list` with
//! `structuredContent: {tools: [view…]}` and the same array as pretty JSON text, `get` with
//! `{tool: view}` (code included), `create` / `update` / `enable` with `{tool: view}` and the
//! text `Created dynamic tool: NAME` (`Updated`, `Enabled`, `Disabled`), `delete` with the
//! text `Deleted dynamic tool: NAME` alone; a missing tool is `isError` with `Dynamic tool not
//! found: NAME`, any other failure `isError` with its message. A view ([`View`]) holds name,
//! title, description, image, timeoutMs, dependencies, enabled, createdAt, updatedAt, revision,
//! codeSizeBytes (and code where asked). A call of a custom tool answers `{ok: true, result}`
//! or `{ok: false, error}` ([`invocation_result`]), and takes its arguments under `args` as
//! dynamic-mcp's clients send them ([`invocation_args`]).
//!
//! dynamic-mcp's rules: names match `^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$`; `dynamic.tool.*` and
//! `run_js_ephemeral` are reserved; its limits are in the input schemas (title 1–120,
//! description 1–4,000, image 1–200, `timeoutMs` 1,000–120,000, at most 64 dependencies,
//! code 1–200,000); `timeoutMs` is honoured as the run's wall-clock limit; with an admin token
//! configured, every `dynamic.tool.*` call must carry it as `adminToken` (compared in constant
//! time); delete asks for no confirmation. Its container field `image` is kept, never used.
//! Toolsmith's rule stays: a call that does not prove the admin token acts as the model, so a
//! tool it creates waits for a person's approval ([`call`]).

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith_core::name::{RESERVED_PREFIX, validate_dynamic_mcp_name};
use toolsmith_core::{CustomToolRecord, Permission, ToolResult, ToolStatus};
use toolsmith_service::packages::Dependency;
use toolsmith_service::tool_settings::IMAGE_NOT_APPLICABLE;
use toolsmith_service::{
    Actor, CreateTool, DeleteOptions, RunCode, ServiceError, ToolPatch, ToolQuery, ToolRef,
};

use super::catalog::{arguments, json_result};
use super::control_plane::{parse, service_error};
use super::handler::Caller;
use rmcp::model::{CallToolResult, ContentBlock};

pub(crate) mod probes;
pub(crate) mod profile;
pub(crate) mod resources;
pub(crate) mod sandbox;
pub(crate) mod system;
pub(crate) mod upstream;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Create,
    Update,
    Delete,
    List,
    Get,
    Enable,
    RunEphemeral,
    /// A name for a built-in; called through the built-in's own door (see [`sandbox`]).
    Sandbox(sandbox::SandboxOp),
}

impl Op {
    /// The built-in this compat name stands for, if it stands for one.
    pub(crate) fn builtin(self) -> Option<&'static str> {
        match self {
            Op::Sandbox(op) => Some(op.builtin()),
            _ => None,
        }
    }
}

/// The built-in name dynamic-mcp reserves besides its `dynamic.tool.` prefix.
const RESERVED_BUILTIN: &str = "run_js_ephemeral";

/// dynamic-mcp's defaults for what a definition leaves out (`src/dynamic/spec.ts`).
const DEFAULT_IMAGE: &str = "node:lts-slim";
const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// dynamic-mcp's limits (`src/dynamic/spec.ts`).
const MIN_TIMEOUT_MS: u64 = 1_000;
const MAX_TITLE_CHARS: u64 = 120;
const MAX_DESCRIPTION_CHARS: u64 = 4_000;
const MAX_IMAGE_CHARS: u64 = 200;
const MAX_DEPENDENCIES: u64 = 64;
const MAX_VERSION_CHARS: u64 = 128;
const MAX_CODE_CHARS: u64 = 200_000;
/// dynamic-mcp's `npmPackageNameRegex` (character classes with `-` last: the same sets).
const NPM_NAME_PATTERN: &str = "^(?:@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$";

/// Fields of a dynamic-mcp tool definition (create's `tool` and update's `patch`), with its
/// limits; `inputSchema`, `parameters`, `category`, `tags` and `permissions` are Toolsmith's
/// additions.
fn definition_properties() -> Map<String, Value> {
    let props = json!({
        "name": {"type": "string", "description": "Tool name: ^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$; not starting with dynamic.tool., not run_js_ephemeral."},
        "title": {"type": "string", "minLength": 1, "maxLength": MAX_TITLE_CHARS, "description": "Display name (MCP title)."},
        "description": {"type": "string", "minLength": 1, "maxLength": MAX_DESCRIPTION_CHARS},
        "code": {"type": "string", "minLength": 1, "maxLength": MAX_CODE_CHARS, "description": "Body of an async function receiving `args`; return a JSON value."},
        "enabled": {"type": "boolean", "description": "false keeps the tool out of tools/list until enabled (default true)."},
        "inputSchema": {"anyOf": [{"type": "object"}, {"type": "string"}], "description": "JSON Schema of the arguments (type: object)."},
        "parameters": {"anyOf": [{"type": "object"}, {"type": "string"}], "description": "Same as inputSchema."},
        "category": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "permissions": {"type": "array", "items": {"type": "string", "enum": ["network", "filesystem", "database", "shell", "email", "scheduling", "sampling", "elicitation"]}},
        "dependencies": dependencies_schema(),
        "image": image_schema(),
        "timeoutMs": timeout_schema()
    });
    match props {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn dependencies_schema() -> Value {
    json!({
        "type": "array",
        "maxItems": MAX_DEPENDENCIES,
        "items": arguments(
            json!({
                "name": {"type": "string", "pattern": NPM_NAME_PATTERN},
                "version": {"type": "string", "minLength": 1, "maxLength": MAX_VERSION_CHARS}
            }),
            &["name", "version"],
        ),
        "description": "npm dependencies ({name, version})."
    })
}

fn image_schema() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_IMAGE_CHARS, "description": "Container image (default node:lts-slim): kept, but not applicable (no containers)."})
}

fn timeout_schema() -> Value {
    json!({"type": "integer", "minimum": MIN_TIMEOUT_MS, "maximum": toolsmith_service::tool_settings::MAX_TIMEOUT_MS, "description": "Wall-clock limit of one run in ms (default 30000)."})
}

/// `(op, name, description, input schema)` of every compatibility tool.
pub(crate) fn definitions() -> Vec<(Op, &'static str, &'static str, Value)> {
    let admin_token = json!({"type": "string", "description": "The server's admin token; required when one is configured."});
    let revision = json!({"type": "integer", "minimum": 1});
    let mut patch_props = definition_properties();
    patch_props.remove("name");
    patch_props.insert(
        "newName".to_owned(),
        json!({"type": "string", "description": "Rename the tool."}),
    );
    vec![
        (
            Op::Create,
            "dynamic.tool.create",
            "Create and register a new dynamic tool",
            arguments(
                json!({
                    "tool": arguments(
                        Value::Object(definition_properties()),
                        &["name", "description", "code"]
                    ),
                    "adminToken": admin_token
                }),
                &["tool"],
            ),
        ),
        (
            Op::Update,
            "dynamic.tool.update",
            "Update an existing dynamic tool definition",
            arguments(
                json!({
                    "name": {"type": "string"},
                    "patch": arguments(Value::Object(patch_props), &[]),
                    "expectedRevision": revision,
                    "adminToken": admin_token
                }),
                &["name", "patch"],
            ),
        ),
        (
            Op::Delete,
            "dynamic.tool.delete",
            "Delete a dynamic tool and unregister it from MCP",
            arguments(
                json!({
                    "name": {"type": "string"},
                    "confirm": {"type": "boolean", "description": "Not needed here (dynamic-mcp's delete asks for no confirmation); accepted and ignored."},
                    "expectedRevision": revision,
                    "adminToken": admin_token
                }),
                &["name"],
            ),
        ),
        (
            Op::List,
            "dynamic.tool.list",
            "List all dynamic tools currently registered in local storage",
            arguments(
                json!({
                    "includeCode": {"type": "boolean", "description": "Also return each tool's code (default false)."},
                    "status": {"type": "string", "enum": ToolStatus::ALL.map(ToolStatus::as_str)},
                    "category": {"type": "string"},
                    "adminToken": admin_token
                }),
                &[],
            ),
        ),
        (
            Op::Get,
            "dynamic.tool.get",
            "Get one dynamic tool definition by name",
            arguments(
                json!({"name": {"type": "string"}, "adminToken": admin_token}),
                &["name"],
            ),
        ),
        (
            Op::Enable,
            "dynamic.tool.enable",
            "Enable or disable a dynamic tool at runtime",
            arguments(
                json!({
                    "name": {"type": "string"},
                    "enabled": {"type": "boolean"},
                    "expectedRevision": revision,
                    "adminToken": admin_token
                }),
                &["name", "enabled"],
            ),
        ),
        (
            Op::RunEphemeral,
            "run_js_ephemeral",
            "Run JavaScript once in the sandbox without storing a tool ({code, args, timeoutMs}); answers {ok, result} or {ok: false, error}.",
            arguments(
                json!({
                    "code": {"type": "string", "description": "Body of an async function receiving `args`."},
                    "args": {"type": "object"},
                    "dependencies": dependencies_schema(),
                    "image": image_schema(),
                    "timeoutMs": timeout_schema(),
                    "permissions": {"type": "array", "items": {"type": "string", "enum": ["network", "filesystem", "database", "shell", "email", "scheduling", "sampling", "elicitation"]}}
                }),
                &["code"],
            ),
        ),
    ]
    .into_iter()
    .chain(
        sandbox::definitions()
            .into_iter()
            .map(|(op, name, description, schema)| (Op::Sandbox(op), name, description, schema)),
    )
    .collect()
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Definition {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    new_name: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    input_schema: Option<Value>,
    #[serde(default)]
    parameters: Option<Value>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    tags: Option<Vec<String>>,
    #[serde(default)]
    permissions: Option<Vec<Permission>>,
    #[serde(default)]
    dependencies: Option<Vec<Dependency>>,
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

impl Definition {
    /// Refuses what cannot work here.
    fn check(&self) -> Result<(), CallToolResult> {
        if self.input_schema.is_some() && self.parameters.is_some() {
            return Err(refusal(
                "give inputSchema or parameters, not both".to_owned(),
            ));
        }
        Ok(())
    }

    fn schema(&mut self) -> Option<Value> {
        self.input_schema.take().or_else(|| self.parameters.take())
    }

    /// `metadata` with this definition's `title`, `timeoutMs`, `image` and `dependencies` set
    /// on it (the service installs the dependencies and keeps their lock beside them).
    fn settings_onto(&self, mut metadata: Map<String, Value>) -> Map<String, Value> {
        if let Some(title) = &self.title {
            metadata.insert("title".to_owned(), json!(title));
        }
        if let Some(ms) = self.timeout_ms {
            metadata.insert("timeoutMs".to_owned(), json!(ms));
        }
        if let Some(image) = &self.image {
            metadata.insert("image".to_owned(), json!(image));
        }
        if let Some(dependencies) = &self.dependencies {
            metadata.insert("dependencies".to_owned(), json!(dependencies));
        }
        metadata
    }

    fn has_settings(&self) -> bool {
        self.title.is_some()
            || self.timeout_ms.is_some()
            || self.image.is_some()
            || self.dependencies.is_some()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateArgs {
    tool: Definition,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UpdateArgs {
    name: String,
    patch: Definition,
    #[serde(default)]
    expected_revision: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DeleteArgs {
    name: String,
    /// Accepted and ignored: dynamic-mcp's delete has no confirmation step.
    #[serde(default)]
    #[allow(dead_code)]
    confirm: bool,
    #[serde(default)]
    expected_revision: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    include_code: bool,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    category: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GetArgs {
    name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EnableArgs {
    name: String,
    enabled: bool,
    #[serde(default)]
    expected_revision: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RunArgs {
    code: String,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    dependencies: Vec<Dependency>,
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    permissions: Vec<Permission>,
}

/// Whether the call's `adminToken` passes: always when no admin token is configured,
/// otherwise only when it equals the configured one (compared in constant time).
pub(crate) enum AdminCheck {
    NotConfigured,
    Valid,
    Refused(CallToolResult),
}

pub(crate) fn check_admin_token(caller: &Caller<'_>, args: &mut Value) -> AdminCheck {
    let given = args
        .as_object_mut()
        .and_then(|map| map.remove("adminToken"));
    let Some(expected) = caller.admin_token() else {
        return AdminCheck::NotConfigured;
    };
    let given = given.as_ref().and_then(Value::as_str).unwrap_or("");
    if !given.is_empty() && crate::auth::constant_time_eq(expected.as_bytes(), given.as_bytes()) {
        return AdminCheck::Valid;
    }
    // dynamic-mcp's words, then the fix.
    let fix = if given.is_empty() {
        "this server requires its admin token for dynamic.tool.* and sandbox.* operations: pass it (MCP_ADMIN_TOKEN / TOOLSMITH_ADMIN_TOKEN) as the adminToken argument"
    } else {
        "the adminToken does not match the server's admin token: pass the value of MCP_ADMIN_TOKEN / TOOLSMITH_ADMIN_TOKEN"
    };
    AdminCheck::Refused(refusal(format!(
        "Unauthorized: invalid admin token. ({fix})"
    )))
}

/// Runs a compatibility tool on arguments already validated against its schema.
///
/// Who acts: a call that proves the server's admin token acts for the operator (a person:
/// its tools are the operator's, called without approval, as in dynamic-mcp, where only the
/// admin token's holder may change tools); any other call acts as the model, under
/// Toolsmith's rules (a tool it creates waits for a person's approval of its calls, or of
/// the tool itself when it asks for dangerous permissions).
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: Op,
    mut args: Value,
) -> Result<CallToolResult, String> {
    if op == Op::RunEphemeral {
        return Ok(run_ephemeral(caller, parse(args)?).await);
    }
    let actor = match check_admin_token(caller, &mut args) {
        AdminCheck::Refused(refused) => return Ok(refused),
        AdminCheck::Valid => Actor::user(caller.owner()).with_member(caller.member()),
        AdminCheck::NotConfigured => caller.actor(),
    };
    let plane = Plane { caller, actor };
    Ok(match op {
        Op::Create => plane.create(parse(args)?).await,
        Op::Update => plane.update(parse(args)?).await,
        Op::Delete => plane.delete(parse(args)?).await,
        Op::List => plane.list(parse(args)?).await,
        Op::Get => plane.get(parse(args)?).await,
        Op::Enable => plane.enable(parse(args)?).await,
        // Run by the handler, through the built-in's door.
        Op::RunEphemeral | Op::Sandbox(_) => return Err("unreachable".to_owned()),
    })
}

/// One call of the dynamic-mcp control plane: who calls, and who acts.
struct Plane<'a, 'b> {
    caller: &'a Caller<'b>,
    actor: Actor,
}

impl Plane<'_, '_> {
    async fn create(&self, CreateArgs { tool: mut def }: CreateArgs) -> CallToolResult {
        let Some(name) = def.name.take() else {
            return invalid("dynamic.tool.create", "/tool/name: required");
        };
        if let Err(refused) = check_name(&name) {
            return refused;
        }
        if let Err(refused) = def.check() {
            return refused;
        }
        if def.new_name.is_some() {
            return refusal("tool.newName has no meaning in create; use tool.name".to_owned());
        }
        let parameters = def
            .schema()
            .unwrap_or_else(|| json!({"type": "object", "additionalProperties": true}));
        let metadata = def.settings_onto(Map::new());
        let (Some(description), Some(code)) = (def.description.take(), def.code.take()) else {
            return invalid(
                "dynamic.tool.create",
                "/tool: description and code are required",
            );
        };
        let input = CreateTool {
            name: name.clone(),
            kind: Default::default(),
            description,
            parameters,
            code,
            category: def.category,
            tags: def.tags.unwrap_or_default(),
            permissions: def.permissions.unwrap_or_default(),
            requires_approval: None,
            metadata: (!metadata.is_empty()).then_some(Value::Object(metadata)),
        };
        match self
            .service()
            .create_with_enabled(&self.actor, input, def.enabled)
            .await
        {
            Ok(record) => with_tool(format!("Created dynamic tool: {}", record.name), &record),
            Err(e) => self.failed(&name, e),
        }
    }

    async fn update(&self, args: UpdateArgs) -> CallToolResult {
        let UpdateArgs {
            name,
            patch: mut def,
            expected_revision,
        } = args;
        if let Err(refused) = check_name(&name) {
            return refused;
        }
        if let Err(refused) = def.check() {
            return refused;
        }
        if let Some(new_name) = &def.new_name
            && let Err(refused) = check_name(new_name)
        {
            return refused;
        }
        let service = self.service();
        let tool = ToolRef::parse(&name);
        let metadata = if def.has_settings() {
            // The settings live in the tool's metadata: merge them into what is there.
            let current = match service.get(&self.actor, &tool).await {
                Ok(record) => record,
                Err(e) => return self.failed(&name, e),
            };
            let base = current.metadata.as_object().cloned().unwrap_or_default();
            Some(Value::Object(def.settings_onto(base)))
        } else {
            None
        };
        let parameters = def.schema();
        let patch = ToolPatch {
            new_name: def.new_name,
            description: def.description,
            parameters,
            code: def.code,
            category: def.category,
            tags: def.tags,
            permissions: def.permissions,
            metadata,
            ..ToolPatch::default()
        };
        let changes_definition = patch != ToolPatch::default();
        let mut record = None;
        if changes_definition || def.enabled.is_none() {
            match service
                .update(&self.actor, &tool, patch, expected_revision)
                .await
            {
                Ok(updated) => record = Some(updated),
                Err(e) => return self.failed(&name, e),
            }
        }
        if let Some(enabled) = def.enabled {
            // dynamic-mcp's patch may carry `enabled`: the state follows the definition.
            let expected = match &record {
                Some(updated) => Some(updated.revision),
                None => expected_revision,
            };
            let id = record.as_ref().map(|r| ToolRef::Id(r.id.clone()));
            let target = id.as_ref().unwrap_or(&tool);
            let result = if enabled {
                service.enable(&self.actor, target, expected).await
            } else {
                service.disable(&self.actor, target, expected).await
            };
            match result {
                Ok(toggled) => record = Some(toggled),
                Err(e) => return self.failed(&name, e),
            }
        }
        match record {
            Some(record) => with_tool(format!("Updated dynamic tool: {}", record.name), &record),
            None => self.failed(&name, ServiceError::NotFound(name.clone())),
        }
    }

    async fn delete(&self, args: DeleteArgs) -> CallToolResult {
        if let Err(refused) = check_name(&args.name) {
            return refused;
        }
        // dynamic-mcp's delete has no confirmation step (Toolsmith's own delete_custom_tool
        // keeps its `confirm`).
        let options = DeleteOptions {
            confirm: true,
            expected_revision: args.expected_revision,
        };
        match self
            .service()
            .delete(&self.actor, &ToolRef::parse(&args.name), options)
            .await
        {
            Ok(record) => CallToolResult::success(vec![ContentBlock::text(format!(
                "Deleted dynamic tool: {}",
                record.name
            ))]),
            Err(e) => self.failed(&args.name, e),
        }
    }

    async fn list(&self, args: ListArgs) -> CallToolResult {
        let mut query = ToolQuery::owner(self.caller.owner());
        query.limit = 1000;
        query.category = args.category.filter(|c| !c.trim().is_empty());
        if let Some(status) = args.status {
            match status.parse::<ToolStatus>() {
                Ok(status) => query.status = Some(status),
                Err(why) => return invalid("dynamic.tool.list", &format!("/status: {why}")),
            }
        }
        match self.service().list(&self.actor, query).await {
            Ok(page) => {
                // Tools the caller may not call are not shown, as in the regular control plane.
                let views: Vec<View> = page
                    .tools
                    .iter()
                    .filter(|t| self.caller.may_see_stored(t))
                    .map(|t| View::of(t, args.include_code))
                    .collect();
                let text = serde_json::to_string_pretty(&views).unwrap_or_default();
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(json!({"tools": views}));
                result
            }
            Err(e) => self.failed("", e),
        }
    }

    async fn get(&self, GetArgs { name }: GetArgs) -> CallToolResult {
        match super::control_plane::visible_record(self.caller, &name).await {
            Ok(record) => {
                let view = View::of(&record, true);
                let text = serde_json::to_string_pretty(&view).unwrap_or_default();
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(json!({"tool": view}));
                result
            }
            Err(e) => self.failed(&name, e),
        }
    }

    async fn enable(&self, args: EnableArgs) -> CallToolResult {
        if let Err(refused) = check_name(&args.name) {
            return refused;
        }
        let service = self.service();
        let tool = ToolRef::parse(&args.name);
        let result = if args.enabled {
            service
                .enable(&self.actor, &tool, args.expected_revision)
                .await
        } else {
            service
                .disable(&self.actor, &tool, args.expected_revision)
                .await
        };
        match result {
            Ok(record) => {
                let done = if args.enabled { "Enabled" } else { "Disabled" };
                with_tool(format!("{done} dynamic tool: {}", args.name), &record)
            }
            Err(e) => self.failed(&args.name, e),
        }
    }

    fn service(&self) -> &toolsmith_service::ToolService {
        self.caller.service()
    }

    /// A service error in dynamic-mcp's words where it has words for it (`src/dynamic/
    /// registry.ts`), else Toolsmith's message, which names the fix.
    fn failed(&self, name: &str, e: ServiceError) -> CallToolResult {
        let text = match &e {
            ServiceError::NotFound(_) => format!("Dynamic tool not found: {name}"),
            ServiceError::RevisionConflict { expected, actual } => format!(
                "Revision conflict for dynamic tool \"{name}\": expected {expected}, current {actual}."
            ),
            ServiceError::NameTaken(_)
                if !self.caller.registry().is_builtin_name(name)
                    && !toolsmith_core::name::is_reserved(name) =>
            {
                format!("Dynamic tool already exists: {name}")
            }
            ServiceError::LimitReached(_) => format!(
                "Dynamic tool limit reached ({}).",
                self.service().config().max_tools_per_owner
            ),
            _ => {
                let plain = service_error(e);
                return refusal(
                    plain
                        .structured_content
                        .as_ref()
                        .and_then(|s| s.get("error"))
                        .and_then(Value::as_str)
                        .unwrap_or("the operation failed")
                        .to_owned(),
                );
            }
        };
        refusal(text)
    }
}

/// dynamic-mcp's name rule and its reserved names, in its words.
fn check_name(name: &str) -> Result<(), CallToolResult> {
    if name.starts_with(RESERVED_PREFIX) {
        return Err(refusal(format!(
            "Reserved tool name prefix is not allowed: {name}"
        )));
    }
    if name == RESERVED_BUILTIN {
        return Err(refusal(format!(
            "Reserved built-in tool name is not allowed: {name}"
        )));
    }
    validate_dynamic_mcp_name(name).map_err(|e| {
        refusal(format!(
            "MCP error -32602: Input validation error: Invalid dynamic tool name: {e}"
        ))
    })
}

/// A tool as dynamic-mcp shows it (`toToolView` of `src/dynamic/service.ts`), its fields in
/// its order; `status` is Toolsmith's, shown only for the states dynamic-mcp does not have
/// (a tool waiting for approval, or rejected).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct View {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    description: String,
    image: String,
    timeout_ms: u64,
    dependencies: Value,
    enabled: bool,
    created_at: String,
    updated_at: String,
    revision: i64,
    code_size_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<ToolStatus>,
}

impl View {
    fn of(record: &CustomToolRecord, include_code: bool) -> View {
        let setting = |key: &str| record.metadata.get(key);
        View {
            name: record.name.clone(),
            title: setting("title").and_then(Value::as_str).map(str::to_owned),
            description: record.description.clone(),
            image: setting("image")
                .and_then(Value::as_str)
                .unwrap_or(DEFAULT_IMAGE)
                .to_owned(),
            timeout_ms: setting("timeoutMs")
                .and_then(Value::as_u64)
                .unwrap_or(DEFAULT_TIMEOUT_MS),
            dependencies: dependencies_of(record),
            enabled: record.status == ToolStatus::Active,
            created_at: iso(record.created_at),
            updated_at: iso(record.updated_at),
            revision: record.revision,
            code_size_bytes: record.code.len(),
            code: include_code.then(|| record.code.clone()),
            status: matches!(
                record.status,
                ToolStatus::PendingApproval | ToolStatus::Rejected
            )
            .then_some(record.status),
        }
    }
}

/// A tool's npm dependencies as dynamic-mcp lists them (`[{name, version}]`).
fn dependencies_of(record: &CustomToolRecord) -> Value {
    record
        .metadata
        .get("dependencies")
        .filter(|d| d.is_array())
        .cloned()
        .unwrap_or_else(|| json!([]))
}

/// A time as JavaScript's `toISOString` writes it (milliseconds, `Z`).
fn iso(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `text` with `{tool: view}` (without code) as structured content.
fn with_tool(text: String, record: &CustomToolRecord) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({"tool": View::of(record, false)}));
    result
}

/// A failure as dynamic-mcp answers one: `isError` and the message as text.
fn refusal(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// Arguments outside the tool's input schema, in the words of the MCP TypeScript SDK's
/// server (which dynamic-mcp's answers come from).
fn invalid(tool: &str, details: &str) -> CallToolResult {
    refusal(format!(
        "MCP error -32602: Input validation error: Invalid arguments for tool {tool}: {details}"
    ))
}

/// The answer to a control-plane call whose arguments break its schema: as
/// [`invalid`], with the violations Toolsmith found (each path and what it must be).
pub(crate) fn invalid_arguments(op: Op, tool: &str, res: ToolResult) -> CallToolResult {
    match op {
        Op::Create | Op::Update | Op::Delete | Op::List | Op::Get | Op::Enable | Op::Sandbox(_) => {
            let message = res.error_message().unwrap_or_default();
            let prefix = format!("invalid arguments for tool '{tool}': ");
            invalid(tool, message.strip_prefix(&prefix).unwrap_or(message))
        }
        Op::RunEphemeral => invocation_result(res),
    }
}

/// The answer to a control-plane call the caller's identity may not make: in read-only mode,
/// dynamic-mcp's words (`MCP_DYNAMIC_READ_ONLY`), else Toolsmith's reason.
pub(crate) fn denied(op: Op, read_only: bool, why: String) -> CallToolResult {
    let operation = match op {
        Op::Create => "create",
        Op::Update => "update",
        Op::Delete => "delete",
        Op::Enable => "enable/disable",
        // dynamic-mcp's sandbox tools answer a failure with its message as text.
        Op::Sandbox(_) => return refusal(why),
        Op::List | Op::Get | Op::RunEphemeral => {
            return invocation_result(ToolResult::error(toolsmith_core::ErrorKind::Denied, why));
        }
    };
    if read_only {
        return refusal(format!(
            "Dynamic registry is read-only; cannot {operation} tools while MCP_DYNAMIC_READ_ONLY is enabled. (Toolsmith is in read-only mode: {why}; restart it without MCP_DYNAMIC_READ_ONLY / --read-only to change tools.)"
        ));
    }
    refusal(why)
}

/// A dynamic tool's arguments as dynamic-mcp's clients send them, `{"args": {…}}`, unwrapped
/// for a tool whose own schema has no `args` parameter; any other arguments as they are.
pub(crate) fn invocation_args(tool_schema: &Value, args: Value) -> Value {
    let declares_args = tool_schema
        .get("properties")
        .and_then(|p| p.get("args"))
        .is_some();
    match args {
        Value::Object(mut map) if !declares_args && map.len() == 1 => match map.remove("args") {
            Some(inner @ Value::Object(_)) => inner,
            Some(other) => {
                map.insert("args".to_owned(), other);
                Value::Object(map)
            }
            None => Value::Object(map),
        },
        other => other,
    }
}

async fn run_ephemeral(caller: &Caller<'_>, args: RunArgs) -> CallToolResult {
    // A run answers in the `{ok, …}` shape of a dynamic tool's run.
    let run = RunCode {
        code: args.code,
        args: args.args,
        permissions: args.permissions,
        timeout_ms: args.timeout_ms,
        dependencies: args.dependencies,
    };
    let res = super::control_plane::run_once(caller, run).await;
    let mut meta = Map::new();
    if let Some(image) = args.image {
        meta.insert("image".to_owned(), image_note(&image));
    }
    envelope(res, meta)
}

fn image_note(image: &str) -> Value {
    json!({"requested": image, "applicable": false, "reason": IMAGE_NOT_APPLICABLE})
}

/// `{ok: true, result, meta?}`.
fn success(result: Value, meta: Map<String, Value>) -> CallToolResult {
    let mut out = json!({"ok": true, "result": result});
    if !meta.is_empty() {
        toolsmith_core::object::set(&mut out, "meta", Value::Object(meta));
    }
    json_result(out)
}

/// `{ok: false, error, code, …extra}`, with `isError: true`.
fn failure(code: &str, message: &str, extra: Map<String, Value>) -> CallToolResult {
    let mut out = Map::new();
    out.insert("ok".to_owned(), json!(false));
    out.insert("error".to_owned(), json!(message));
    out.insert("code".to_owned(), json!(code));
    out.extend(extra);
    let out = Value::Object(out);
    let mut result = CallToolResult::error(vec![ContentBlock::text(out.to_string())]);
    result.structured_content = Some(out);
    result
}

/// A tool's result in dynamic-mcp's shape: `{ok: true, result}` or `{ok: false, error}`
/// (with the error's `kind` and details kept beside it).
fn envelope(res: ToolResult, meta: Map<String, Value>) -> CallToolResult {
    if res.is_error {
        let message = res
            .error_message()
            .map(str::to_owned)
            .unwrap_or_else(|| res.content_text());
        let mut extra = Map::new();
        if let Value::Object(content) = &res.content {
            for (k, v) in content {
                if k != "error" {
                    extra.insert(k.clone(), v.clone());
                }
            }
        }
        if !meta.is_empty() {
            extra.insert("meta".to_owned(), Value::Object(meta));
        }
        let code = res
            .error_kind()
            .map(|k| k.to_string())
            .unwrap_or_else(|| "execution_error".to_owned());
        return failure(&code, &message, extra);
    }
    success(res.content, meta)
}

/// A custom tool's call result in compat mode.
pub(crate) fn invocation_result(res: ToolResult) -> CallToolResult {
    envelope(res, Map::new())
}
