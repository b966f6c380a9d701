//! `--compat dynamic-mcp`: the dynamic-mcp control plane (spec 002) under its own names,
//! argument shapes and result shapes, for clients written against it.
//!
//! - `dynamic.tool.create` `{tool: {name, title?, description, code, inputSchema?,
//!   dependencies?, image?, timeoutMs?}}`
//! - `dynamic.tool.update` `{name, patch: {…}, expectedRevision?}`
//! - `dynamic.tool.delete` `{name, expectedRevision?}`
//! - `dynamic.tool.list` `{status?, category?}`, `dynamic.tool.get` `{name}`
//! - `dynamic.tool.enable` `{name, enabled, expectedRevision?}`
//! - `run_js_ephemeral` `{code, args?, dependencies?, image?, timeoutMs?}` (replaces the
//!   control plane's own `run_js_ephemeral` in this mode)
//! - `sandbox.initialize`, `sandbox.exec`, `sandbox.run_js`, `sandbox.stop`: the sandbox
//!   sessions, names for built-ins of the `codeExecution` group ([`sandbox`])
//!
//! Every answer is `{ok: true, result}` or `{ok: false, error}` (plus `code`, and `meta` notes),
//! and so is every call of a custom tool ([`invocation_result`]).
//!
//! dynamic-mcp's rules: names match `^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$`; `dynamic.tool.*` and
//! `run_js_ephemeral` are reserved; `timeoutMs` is 1 to 120,000 ms and honoured as the run's
//! wall-clock limit; with an admin token configured, every `dynamic.tool.*` call must carry it
//! as `adminToken` (compared in constant time). Its container fields do not apply: `image` is
//! kept and reported as not applicable, npm `dependencies` are refused (the sandbox has no
//! module loader). Toolsmith's rules stay: model-created tools require approval, and a delete
//! without a valid `adminToken` needs `confirm: true`.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith_core::name::{RESERVED_PREFIX, validate_dynamic_mcp_name};
use toolsmith_core::{CustomToolRecord, Permission, ToolResult, ToolStatus};
use toolsmith_service::tool_settings::IMAGE_NOT_APPLICABLE;
use toolsmith_service::{
    CreateTool, DeleteOptions, RunCode, ServiceError, ToolPatch, ToolQuery, ToolRef,
};

use super::catalog::{arguments, json_result};
use super::control_plane::{full, parse, service_error, summary};
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

/// Fields of a dynamic-mcp tool definition (create's `tool` and update's `patch`).
fn definition_properties() -> Map<String, Value> {
    let props = json!({
        "name": {"type": "string", "description": "Tool name: ^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$; not starting with dynamic.tool., not run_js_ephemeral."},
        "title": {"type": "string", "description": "Display name (MCP title)."},
        "description": {"type": "string"},
        "code": {"type": "string", "description": "Body of an async function receiving `args`; return a JSON value."},
        "inputSchema": {"anyOf": [{"type": "object"}, {"type": "string"}], "description": "JSON Schema of the arguments (type: object)."},
        "parameters": {"anyOf": [{"type": "object"}, {"type": "string"}], "description": "Same as inputSchema."},
        "category": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "permissions": {"type": "array", "items": {"type": "string", "enum": ["network", "filesystem", "database", "shell", "email", "scheduling"]}},
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
    json!({"type": "array", "items": {"type": "object"}, "description": "npm dependencies: not supported (the sandbox has no module loader); must be empty."})
}

fn image_schema() -> Value {
    json!({"type": "string", "description": "Container image: kept, but not applicable (no containers)."})
}

fn timeout_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": toolsmith_service::tool_settings::MAX_TIMEOUT_MS, "description": "Wall-clock limit of one run in ms (default: the server's js_wall_time, 30 s)."})
}

/// `(op, name, description, input schema)` of every compatibility tool.
pub(crate) fn definitions() -> Vec<(Op, &'static str, &'static str, Value)> {
    let admin_token = json!({"type": "string", "description": "The server's admin token; required when one is configured."});
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
            "dynamic-mcp compatible: create a JavaScript tool ({tool: {name, description, code, inputSchema}}). Same as create_tool.",
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
            "dynamic-mcp compatible: apply a patch to a tool ({name, patch, expectedRevision}). Same as update_custom_tool.",
            arguments(
                json!({
                    "name": {"type": "string"},
                    "patch": arguments(Value::Object(patch_props), &[]),
                    "expectedRevision": {"type": "integer"},
                    "adminToken": admin_token
                }),
                &["name", "patch"],
            ),
        ),
        (
            Op::Delete,
            "dynamic.tool.delete",
            "dynamic-mcp compatible: delete a tool the model created. With a valid adminToken it is deleted at once; without, it needs confirm: true. Same as delete_custom_tool.",
            arguments(
                json!({
                    "name": {"type": "string"},
                    "confirm": {"type": "boolean"},
                    "expectedRevision": {"type": "integer"},
                    "adminToken": admin_token
                }),
                &["name"],
            ),
        ),
        (
            Op::List,
            "dynamic.tool.list",
            "dynamic-mcp compatible: list your tools. Same as list_custom_tools.",
            arguments(
                json!({
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
            "dynamic-mcp compatible: get one tool with its code and revision. Same as get_custom_tool.",
            arguments(
                json!({"name": {"type": "string"}, "adminToken": admin_token}),
                &["name"],
            ),
        ),
        (
            Op::Enable,
            "dynamic.tool.enable",
            "dynamic-mcp compatible: enable or disable a tool ({name, enabled}). Same as toggle_custom_tool.",
            arguments(
                json!({
                    "name": {"type": "string"},
                    "enabled": {"type": "boolean"},
                    "expectedRevision": {"type": "integer"},
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
                    "permissions": {"type": "array", "items": {"type": "string", "enum": ["network", "filesystem", "database", "shell", "email", "scheduling"]}}
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
    dependencies: Option<Vec<Value>>,
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
}

impl Definition {
    /// Refuses what cannot work here.
    fn check(&self) -> Result<(), CallToolResult> {
        refuse_dependencies(self.dependencies.as_deref())?;
        if self.input_schema.is_some() && self.parameters.is_some() {
            return Err(failure(
                "validation_error",
                "give inputSchema or parameters, not both",
                Map::new(),
            ));
        }
        Ok(())
    }

    fn schema(&mut self) -> Option<Value> {
        self.input_schema.take().or_else(|| self.parameters.take())
    }

    /// `metadata` with this definition's `title`, `timeoutMs` and `image` set on it.
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
        metadata
    }

    fn has_settings(&self) -> bool {
        self.title.is_some() || self.timeout_ms.is_some() || self.image.is_some()
    }
}

fn refuse_dependencies(dependencies: Option<&[Value]>) -> Result<(), CallToolResult> {
    match dependencies {
        Some(deps) if !deps.is_empty() => Err(failure(
            "unsupported",
            "dependencies are not supported: Toolsmith runs JavaScript in an embedded QuickJS sandbox with no npm and no module loader, so packages cannot be installed or imported; remove `dependencies` (and any `import`) and use plain JavaScript or the built-in `utils` helpers",
            Map::new(),
        )),
        _ => Ok(()),
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
    #[serde(default)]
    confirm: bool,
    #[serde(default)]
    expected_revision: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ListArgs {
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
    dependencies: Option<Vec<Value>>,
    #[serde(default)]
    image: Option<String>,
    #[serde(default)]
    timeout_ms: Option<u64>,
    #[serde(default)]
    permissions: Vec<Permission>,
}

/// Whether the call's `adminToken` passes: always when no admin token is configured,
/// otherwise only when it equals the configured one (compared in constant time).
enum AdminCheck {
    NotConfigured,
    Valid,
    Refused(CallToolResult),
}

fn check_admin_token(caller: &Caller<'_>, args: &mut Value) -> AdminCheck {
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
    let why = if given.is_empty() {
        "this server requires an admin token for dynamic.tool.* operations: pass the server's admin token (MCP_ADMIN_TOKEN / TOOLSMITH_ADMIN_TOKEN) as the adminToken argument"
    } else {
        "the adminToken does not match the server's admin token: pass the value of MCP_ADMIN_TOKEN / TOOLSMITH_ADMIN_TOKEN"
    };
    AdminCheck::Refused(failure("unauthorized", why, Map::new()))
}

/// Runs a compatibility tool on arguments already validated against its schema.
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: Op,
    mut args: Value,
) -> Result<CallToolResult, String> {
    if op == Op::RunEphemeral {
        return Ok(run_ephemeral(caller, parse(args)?).await);
    }
    let admin = match check_admin_token(caller, &mut args) {
        AdminCheck::Refused(refused) => return Ok(refused),
        AdminCheck::Valid => true,
        AdminCheck::NotConfigured => false,
    };
    Ok(match op {
        Op::Create => create(caller, parse(args)?).await,
        Op::Update => update(caller, parse(args)?).await,
        Op::Delete => delete(caller, parse(args)?, admin).await,
        Op::List => list(caller, parse(args)?).await,
        Op::Get => {
            let GetArgs { name } = parse(args)?;
            match super::control_plane::visible_record(caller, &name).await {
                Ok(record) => success(json!({"tool": view(&record)}), meta_of(&record)),
                Err(e) => failed(e),
            }
        }
        Op::Enable => enable(caller, parse(args)?).await,
        // Run by the handler, through the built-in's door.
        Op::RunEphemeral | Op::Sandbox(_) => return Err("unreachable".to_owned()),
    })
}

async fn create(caller: &Caller<'_>, CreateArgs { tool: mut def }: CreateArgs) -> CallToolResult {
    if let Err(refused) = def.check() {
        return refused;
    }
    let Some(name) = def.name.take() else {
        return failure("validation_error", "tool.name is required", Map::new());
    };
    if let Err(refused) = check_name(&name) {
        return refused;
    }
    if def.new_name.is_some() {
        return failure(
            "validation_error",
            "tool.newName has no meaning in create; use tool.name",
            Map::new(),
        );
    }
    let parameters = def
        .schema()
        .unwrap_or_else(|| json!({"type": "object", "additionalProperties": true}));
    let metadata = def.settings_onto(Map::new());
    let (Some(description), Some(code)) = (def.description.take(), def.code.take()) else {
        return failure(
            "validation_error",
            "tool.description and tool.code are required",
            Map::new(),
        );
    };
    let input = CreateTool {
        name,
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
    match caller.service().create(&caller.actor(), input).await {
        Ok(record) => success(json!({"tool": view(&record)}), meta_of(&record)),
        Err(e) => failed(e),
    }
}

/// dynamic-mcp's name rule and its reserved names, with its "reserved" error.
fn check_name(name: &str) -> Result<(), CallToolResult> {
    if name.starts_with(RESERVED_PREFIX) || name == RESERVED_BUILTIN {
        return Err(failure(
            "reserved",
            &format!(
                "tool name '{name}' is reserved: names starting with '{RESERVED_PREFIX}' and '{RESERVED_BUILTIN}' belong to the server; choose another name"
            ),
            Map::new(),
        ));
    }
    validate_dynamic_mcp_name(name)
        .map_err(|e| failure("validation_error", &e.to_string(), Map::new()))
}

async fn update(caller: &Caller<'_>, args: UpdateArgs) -> CallToolResult {
    let UpdateArgs {
        name,
        patch: mut def,
        expected_revision,
    } = args;
    if let Err(refused) = def.check() {
        return refused;
    }
    if let Some(new_name) = &def.new_name
        && let Err(refused) = check_name(new_name)
    {
        return refused;
    }
    let service = caller.service();
    let actor = caller.actor();
    let tool = ToolRef::parse(&name);
    let metadata = if def.has_settings() {
        // The settings live in the tool's metadata: merge them into what is there.
        let current = match service.get(&actor, &tool).await {
            Ok(record) => record,
            Err(e) => return failed(e),
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
    match service
        .update(&actor, &tool, patch, expected_revision)
        .await
    {
        Ok(record) => success(json!({"tool": view(&record)}), meta_of(&record)),
        Err(e) => failed(e),
    }
}

async fn delete(caller: &Caller<'_>, args: DeleteArgs, admin: bool) -> CallToolResult {
    let options = DeleteOptions {
        // A call that proved the admin token acts with the admin's authority, as in
        // dynamic-mcp; otherwise Toolsmith's rule holds: the model must confirm.
        confirm: args.confirm || admin,
        expected_revision: args.expected_revision,
    };
    match caller
        .service()
        .delete(&caller.actor(), &ToolRef::parse(&args.name), options)
        .await
    {
        Ok(record) => success(
            json!({"deleted": true, "tool": {"id": record.id, "name": record.name}}),
            Map::new(),
        ),
        Err(ServiceError::ConfirmationRequired(message)) => failure(
            "confirmation_required",
            &format!("{message} (or pass the server's adminToken)"),
            Map::from_iter([("confirmationRequired".to_owned(), json!(true))]),
        ),
        Err(e) => failed(e),
    }
}

async fn list(caller: &Caller<'_>, args: ListArgs) -> CallToolResult {
    let mut query = ToolQuery::owner(caller.owner());
    query.limit = 1000;
    query.category = args.category.filter(|c| !c.trim().is_empty());
    if let Some(status) = args.status {
        match status.parse::<ToolStatus>() {
            Ok(status) => query.status = Some(status),
            Err(why) => return failure("validation_error", &why, Map::new()),
        }
    }
    match caller.service().list(&caller.actor(), query).await {
        Ok(page) => {
            // Tools the caller may not call are not shown (nor counted), as in the regular
            // control plane.
            let shown: Vec<Value> = page
                .tools
                .iter()
                .filter(|t| caller.may_see_stored(t))
                .map(|t| {
                    let mut s = summary(t);
                    add_settings(&mut s, t);
                    s
                })
                .collect();
            let hidden = (page.tools.len() - shown.len()) as u64;
            let total = page.total.saturating_sub(hidden);
            success(json!({"tools": shown, "total": total}), Map::new())
        }
        Err(e) => failed(e),
    }
}

async fn enable(caller: &Caller<'_>, args: EnableArgs) -> CallToolResult {
    let result =
        super::control_plane::set_enabled(caller, &args.name, args.enabled, args.expected_revision)
            .await;
    match result {
        Ok(record) => success(json!({"tool": view(&record)}), Map::new()),
        Err(e) => failed(e),
    }
}

async fn run_ephemeral(caller: &Caller<'_>, args: RunArgs) -> CallToolResult {
    if let Err(refused) = refuse_dependencies(args.dependencies.as_deref()) {
        return refused;
    }
    let run = RunCode {
        code: args.code,
        args: args.args,
        permissions: args.permissions,
        timeout_ms: args.timeout_ms,
    };
    let res = super::control_plane::run_once(caller, run).await;
    let mut meta = Map::new();
    if let Some(image) = args.image {
        meta.insert("image".to_owned(), image_note(&image));
    }
    envelope(res, meta)
}

/// A tool's record as dynamic-mcp clients read it: everything [`full`] shows, plus its
/// settings at the top level (`title`, `timeoutMs`, `image`, `dependencies`, `enabled`).
fn view(record: &CustomToolRecord) -> Value {
    let mut value = full(record);
    add_settings(&mut value, record);
    value
}

fn add_settings(value: &mut Value, record: &CustomToolRecord) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    for key in ["title", "timeoutMs", "image"] {
        if let Some(setting) = record.metadata.get(key) {
            obj.insert(key.to_owned(), setting.clone());
        }
    }
    obj.insert("dependencies".to_owned(), json!([]));
    obj.insert(
        "enabled".to_owned(),
        json!(record.status == ToolStatus::Active),
    );
}

/// The `meta` of an answer about `record`: what does not apply here.
fn meta_of(record: &CustomToolRecord) -> Map<String, Value> {
    let mut meta = Map::new();
    if let Some(image) = record.metadata.get("image").and_then(Value::as_str) {
        meta.insert("image".to_owned(), image_note(image));
    }
    meta
}

fn image_note(image: &str) -> Value {
    json!({"requested": image, "applicable": false, "reason": IMAGE_NOT_APPLICABLE})
}

/// `{ok: true, result, meta?}`.
fn success(result: Value, meta: Map<String, Value>) -> CallToolResult {
    let mut out = json!({"ok": true, "result": result});
    if !meta.is_empty() {
        out["meta"] = Value::Object(meta);
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

/// A service error as `{ok: false, error, code, …}`.
fn failed(e: ServiceError) -> CallToolResult {
    let plain = service_error(e);
    let mut extra = match plain.structured_content {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let message = extra
        .remove("error")
        .and_then(|m| m.as_str().map(str::to_owned))
        .unwrap_or_default();
    let code = extra
        .remove("code")
        .and_then(|c| c.as_str().map(str::to_owned))
        .unwrap_or_else(|| "error".to_owned());
    failure(&code, &message, extra)
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
