//! The control plane: the tools through which a model creates and manages its own tools, with
//! the names and fields of the spec's meta-tools (`create_tool`, `list_custom_tools`,
//! `delete_custom_tool`, `toggle_custom_tool`) plus `get_custom_tool`, `update_custom_tool` and
//! `run_js_ephemeral`.
//!
//! Every call acts as `Actor::llm(user)`: tools created here are `created_by = llm`, always
//! require approval, land in `pending_approval` when they declare a dangerous permission, and
//! can be deleted by the model only if the model created them and only with `confirm: true`.
//! Service errors are the model's mistakes to correct, so they come back as `isError: true`
//! results carrying the service's message and its stable code — not as protocol errors.

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith_core::object;
use toolsmith_core::{CustomToolRecord, Permission, ToolKind, ToolStatus};
use toolsmith_service::{
    DeleteOptions, ExecutionApproval, RunCode, ServiceError, ToolPatch, ToolQuery, ToolRef,
};

use crate::definition::CreateToolBody;

use super::catalog::{arguments, call_result, error_result, json_result};
use super::handler::Caller;
use rmcp::model::CallToolResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Create,
    List,
    Get,
    Update,
    Delete,
    Toggle,
    RunEphemeral,
}

const PERMISSIONS: [&str; 8] = [
    "network",
    "filesystem",
    "database",
    "shell",
    "email",
    "scheduling",
    "sampling",
    "elicitation",
];

const CODE_CONTRACT: &str = "JavaScript: the body of an async function that receives `args` (the validated arguments) and returns any JSON value (`return {sum: args.a + args.b};`). Throw an Error to fail. `utils` offers helpers (hashing, encoding, dates, text, math, `utils.callTool(name, args)`); network, shell and other capabilities exist only if declared in `permissions`.";

fn permissions_schema() -> Value {
    json!({
        "type": "array",
        "items": {"type": "string", "enum": PERMISSIONS},
        "uniqueItems": true,
        "description": "Capabilities the code needs. shell, filesystem and email make the tool wait for a person's approval."
    })
}

/// `(op, name, description, input schema)` of every control-plane tool.
pub(crate) fn definitions() -> Vec<(Op, &'static str, &'static str, Value)> {
    vec![
        (
            Op::Create,
            "create_tool",
            "Create a new reusable custom tool from JavaScript. It is stored, validated and, once active, appears in tools/list right away (clients get notifications/tools/list_changed) so you can call it by name. Tools declaring shell, filesystem or email wait for a person's approval first.",
            arguments(
                json!({
                    "name": {"type": "string", "description": "Unique tool name: ^[a-z][a-z0-9_]*$, at most 64 characters."},
                    "kind": {"type": "string", "enum": ["js", "command", "http"], "description": "What code holds: js (default) = the body of an async JavaScript function; command = a shell-command spec as JSON, e.g. {\"command\": \"wc -w {{.file}}\", \"timeoutSeconds\": 10} (every {{.param}} must be a declared parameter; values are shell-quoted); http = an HTTP tool definition in YAML or JSON (spec 004). Command tools need a person's approval before they run."},
                    "description": {"type": "string", "description": "What the tool does, for whoever will call it."},
                    "parameters": {
                        "anyOf": [{"type": "object"}, {"type": "string"}],
                        "description": "JSON Schema of the arguments, as an object or as a JSON string; must have \"type\": \"object\". Example: {\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}"
                    },
                    "code": {"type": "string", "description": CODE_CONTRACT},
                    "category": {"type": "string", "description": "Category for organisation, e.g. \"Text\" or \"Utilities\"."},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "Search keywords for search_tools (never shown in tools/list)."},
                    "permissions": permissions_schema(),
                    "output_schema": {"type": "object", "description": "JSON Schema (\"type\": \"object\") of what the tool returns: the object the code returns must match it (a mismatch is an error naming it); listed as the tool's outputSchema."},
                    "required_api_keys": {
                        "type": "array",
                        "items": {"type": "object"},
                        "description": "Config Center services the tool needs, e.g. [{\"name\": \"weatherapi\", \"displayName\": \"WeatherAPI\", \"docsUrl\": \"https://…\"}]. They are registered automatically; a person fills in the values, and the code reads them with utils.getApiKey('weatherapi'). Until then the tool answers with what is missing."
                    },
                    "command": {"type": "string", "description": "A command tool written in GoClaw's form (instead of kind + code): the shell template, e.g. \"dig +short {{.record_type}} {{.domain}}\"."},
                    "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 600, "description": "Command tools: wall-clock limit (default 60)."},
                    "timeoutSeconds": {"type": "integer", "minimum": 1, "maximum": 600},
                    "working_dir": {"type": "string", "description": "Command tools: a relative directory in the run's workspace."},
                    "workingDir": {"type": "string"},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Command tools: environment variables (stored encrypted)."},
                    "network": {"type": "boolean", "description": "Command tools: share the host's network."},
                    "scope": {"type": "string", "description": "Command tools: global (default) or agent:<id>."},
                    "enabled": {"type": "boolean", "description": "false creates the tool disabled (default true)."}
                }),
                &["name", "description", "parameters"],
            ),
        ),
        (
            Op::List,
            "list_custom_tools",
            "List your custom tools (summaries: id, name, description, status, category, createdBy, usageCount, version, revision) with totals per status.",
            arguments(
                json!({
                    "category": {"type": "string", "description": "Only tools of this category."},
                    "status": {"type": "string", "enum": ToolStatus::ALL.map(ToolStatus::as_str), "description": "Only tools in this status."}
                }),
                &[],
            ),
        ),
        (
            Op::Get,
            "get_custom_tool",
            "Get one of your custom tools in full: code, parameters, permissions, status, version and revision (pass the revision as expected_revision to update it safely).",
            arguments(
                json!({"name": {"type": "string", "description": "The tool's name (or its id)."}}),
                &["name"],
            ),
        ),
        (
            Op::Update,
            "update_custom_tool",
            "Change one of your custom tools. Only the fields you give change; the new code runs on the next call. Changing code or parameters makes a new version. Give expected_revision (from get_custom_tool) to refuse the update if someone else changed the tool meanwhile.",
            arguments(
                json!({
                    "name": {"type": "string", "description": "The tool to change (its current name, or its id)."},
                    "new_name": {"type": "string", "description": "Rename the tool."},
                    "description": {"type": "string"},
                    "parameters": {"anyOf": [{"type": "object"}, {"type": "string"}], "description": "New JSON Schema of the arguments (object or JSON string)."},
                    "code": {"type": "string", "description": CODE_CONTRACT},
                    "category": {"type": "string", "description": "New category; \"\" clears it."},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "permissions": permissions_schema(),
                    "output_schema": {"type": "object", "description": "New JSON Schema (\"type\": \"object\") of what the tool returns; listed as its outputSchema and checked on every result."},
                    "expected_revision": {"type": "integer", "description": "Fail with a conflict unless the tool is at this revision."}
                }),
                &["name"],
            ),
        ),
        (
            Op::Delete,
            "delete_custom_tool",
            "Delete a custom tool you created, with its history. Deleting cannot be undone: without confirm: true this only asks for confirmation. Tools a person created cannot be deleted by the model.",
            arguments(
                json!({
                    "name": {"type": "string", "description": "The tool to delete (name or id)."},
                    "confirm": {"type": "boolean", "description": "Must be true to delete."},
                    "expected_revision": {"type": "integer"}
                }),
                &["name"],
            ),
        ),
        (
            Op::Toggle,
            "toggle_custom_tool",
            "Enable or disable one of your custom tools. A disabled tool leaves tools/list until it is enabled again.",
            arguments(
                json!({
                    "name": {"type": "string", "description": "The tool (name or id)."},
                    "enabled": {"type": "boolean", "description": "true to enable, false to disable."},
                    "expected_revision": {"type": "integer"}
                }),
                &["name", "enabled"],
            ),
        ),
        (
            Op::RunEphemeral,
            "run_js_ephemeral",
            "Run JavaScript once in the sandbox without storing a tool: to try code before create_tool, or for a one-off computation.",
            arguments(
                json!({
                    "code": {"type": "string", "description": CODE_CONTRACT},
                    "args": {"type": "object", "description": "The `args` object the code receives."},
                    "permissions": permissions_schema()
                }),
                &["code"],
            ),
        ),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    status: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NameArgs {
    name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    name: String,
    #[serde(default)]
    new_name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parameters: Option<Value>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    tags: Option<Vec<String>>,
    #[serde(default)]
    permissions: Option<Vec<Permission>>,
    #[serde(default)]
    output_schema: Option<Value>,
    #[serde(default)]
    expected_revision: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeleteArgs {
    name: String,
    #[serde(default)]
    confirm: bool,
    #[serde(default)]
    expected_revision: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToggleArgs {
    name: String,
    enabled: bool,
    #[serde(default)]
    expected_revision: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    code: String,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    permissions: Vec<Permission>,
}

/// Runs a control-plane tool on arguments already validated against its schema.
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: Op,
    args: Value,
) -> Result<CallToolResult, String> {
    Ok(match op {
        Op::Create => create(caller, parse(args)?).await,
        Op::List => list(caller, parse(args)?).await,
        Op::Get => {
            let NameArgs { name } = parse(args)?;
            get(caller, &name).await
        }
        Op::Update => update(caller, parse(args)?).await,
        Op::Delete => delete(caller, parse(args)?).await,
        Op::Toggle => toggle(caller, parse(args)?).await,
        Op::RunEphemeral => {
            let RunArgs {
                code,
                args,
                permissions,
            } = parse(args)?;
            let run = RunCode {
                code,
                args,
                permissions,
                timeout_ms: None,
                dependencies: Vec::new(),
            };
            call_result(run_once(caller, run).await)
        }
    })
}

/// Runs code once for `caller`: a call of the one-off tool `run_js_ephemeral` through the
/// pipeline as this caller (policy, approval, limits, usage, audit; see
/// `toolsmith_service::service::one_off`). The only way MCP runs code once, in either mode.
pub(crate) async fn run_once(caller: &Caller<'_>, run: RunCode) -> toolsmith_core::ToolResult {
    caller
        .service()
        .run_ephemeral(
            &caller.actor(),
            run,
            caller.tool_context(),
            caller.run_rights(),
        )
        .await
}

/// Deserializes validated arguments; a failure here is an invalid-params error, whose text
/// names the field and the expected type but never quotes the value sent.
pub(crate) fn parse<T: serde::de::DeserializeOwned>(args: Value) -> Result<T, String> {
    serde_json::from_value(args)
        .map_err(|e| toolsmith_core::schema::message_without_values(&e.to_string()))
}

/// Creates a tool from `create_tool`'s arguments, read into the one definition shape
/// ([`CreateToolBody`]) after its schema let through only what a model may give.
async fn create(caller: &Caller<'_>, mut args: CreateToolBody) -> CallToolResult {
    if args.code.is_none() && !args.has_command_fields() {
        return error_result(
            "validation_error",
            "code is required (or, for a command tool, command: GoClaw's form)",
            Map::new(),
        );
    }
    // An empty list declares nothing: no metadata for it.
    if args.required_api_keys.as_ref().is_some_and(Vec::is_empty) {
        args.required_api_keys = None;
    }
    let (input, enabled) = match args.into_input() {
        Ok(parts) => parts,
        Err(e) => return service_error(e),
    };
    let mut notes: Vec<String> = Vec::new();
    let name = input.name.clone();
    if input.kind == ToolKind::Js && !has_return(&input.code) {
        notes.push(NO_RETURN_NOTE.to_owned());
    }
    match caller
        .service()
        .create_with_enabled(&caller.actor(), input, enabled)
        .await
    {
        Ok(record) => {
            if let Ok(missing) = caller.service().missing_config(&record).await
                && !missing.is_empty()
            {
                notes.push(format!(
                    "The tool needs Config Center values before it can run: {}. They were registered; ask a person to set them (toolsmith config set, or the Config Center API).",
                    missing.join("; ")
                ));
            }
            let mode = caller.service().approvals().mode();
            let message = match record.status {
                ToolStatus::Active => {
                    let waits = caller
                        .find_tool(&record.name)
                        .is_some_and(|tool| mode.applies_to(&tool));
                    format!(
                        "Tool '{}' was created and is active: you can call it by name now (or with use_tool). {}",
                        record.name,
                        calls_wait(waits, mode)
                    )
                }
                ToolStatus::Disabled => format!(
                    "Tool '{}' was created disabled (enabled: false); enable it with toggle_custom_tool to call it.",
                    record.name
                ),
                _ => format!(
                    "Tool '{}' was created and waits for a person's approval (it declares {}); it becomes callable once a person approves it. {}",
                    record.name,
                    dangerous_list(&record),
                    calls_wait(
                        mode != ExecutionApproval::Off
                            && (mode == ExecutionApproval::Dangerous || record.requires_approval),
                        mode,
                    )
                ),
            };
            let mut out = json!({"created": true, "tool": summary(&record), "message": message});
            if !notes.is_empty() {
                object::set(&mut out, "notes", json!(notes));
            }
            json_result(out)
        }
        Err(ServiceError::NameTaken(message)) if message.starts_with("a tool named") => {
            error_result(
                "name_taken",
                &format!(
                    "{message}: to change it, call update_custom_tool {{\"name\": \"{name}\", …only the fields to change}}; to keep both, choose another name"
                ),
                Map::new(),
            )
        }
        Err(e) => service_error(e),
    }
}

/// When the calls of a new tool wait for a person (`--execution-approval`, docs/approvals.md).
fn calls_wait(waits: bool, mode: ExecutionApproval) -> String {
    if waits {
        format!(
            "Each call of it waits for a person (execution approval is `{mode}`): a call answers with an approval id until the user allows it; then make the same call again."
        )
    } else {
        "Its calls run without waiting for a person.".to_owned()
    }
}

/// What `create_tool` adds when JavaScript code has no `return` at all.
const NO_RETURN_NOTE: &str = "Warning: the code has no `return`, so every call will fail with \"the tool returned undefined\". The code is the body of an async function: end it with e.g. `return {result: x};` and fix it with update_custom_tool.";

/// Whether JavaScript code holds the word `return` anywhere (a cheap check: a `return` inside
/// a nested function or a comment passes too — the warning is for code with none at all).
fn has_return(code: &str) -> bool {
    code.match_indices("return").any(|(at, word)| {
        let before = code.get(..at).and_then(|b| b.chars().next_back());
        let after = code.get(at + word.len()..).and_then(|a| a.chars().next());
        let ident =
            |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        !ident(before) && !ident(after)
    })
}

async fn list(caller: &Caller<'_>, args: ListArgs) -> CallToolResult {
    let mut query = ToolQuery::owner(caller.owner());
    query.limit = 1000;
    query.category = args.category.filter(|c| !c.trim().is_empty());
    if let Some(status) = args.status {
        match status.parse::<ToolStatus>() {
            Ok(status) => query.status = Some(status),
            Err(why) => return error_result("validation_error", &why, Map::new()),
        }
    }
    let service = caller.service();
    let actor = caller.actor();
    let page = match service.list(&actor, query).await {
        Ok(page) => page,
        Err(e) => return service_error(e),
    };
    let stats = match service.stats(&actor).await {
        Ok(stats) => stats,
        Err(e) => return service_error(e),
    };
    let (shown, total) = shown_summaries(caller, &page);
    json_result(json!({
        "tools": shown,
        "total": total,
        "stats": {
            "total": stats.total,
            "active": stats.active,
            "disabled": stats.disabled,
            "pendingApproval": stats.pending_approval,
            "rejected": stats.rejected,
            "createdByLlm": stats.created_by_llm,
            "createdByUser": stats.created_by_user,
            "totalUsage": stats.total_usage,
        }
    }))
}

async fn get(caller: &Caller<'_>, name: &str) -> CallToolResult {
    match visible_record(caller, name).await {
        Ok(record) => json_result(full(&record)),
        Err(e) => service_error(e),
    }
}

/// The summaries of `page` the caller may be shown, and the total less the hidden ones: tools
/// the caller may not call are not described to it (as in `tools/list`).
pub(crate) fn shown_summaries(
    caller: &Caller<'_>,
    page: &toolsmith_service::ToolPage,
) -> (Vec<Value>, u64) {
    let shown: Vec<Value> = page
        .tools
        .iter()
        .filter(|t| caller.may_see_stored(t))
        .map(summary)
        .collect();
    let hidden = (page.tools.len() - shown.len()) as u64;
    (shown, page.total.saturating_sub(hidden))
}

/// The caller's stored tool `name` (or id), if it may be shown to it; a tool it may not call
/// is "not found", as if it did not exist.
pub(crate) async fn visible_record(
    caller: &Caller<'_>,
    name: &str,
) -> Result<toolsmith_core::CustomToolRecord, ServiceError> {
    let tool = ToolRef::parse(name);
    let record = caller.service().get(&caller.actor(), &tool).await?;
    if caller.may_see_stored(&record) {
        Ok(record)
    } else {
        Err(ServiceError::NotFound(format!("no custom tool {tool}")))
    }
}

async fn update(caller: &Caller<'_>, args: UpdateArgs) -> CallToolResult {
    let patch = ToolPatch {
        new_name: args.new_name,
        description: args.description,
        parameters: args.parameters,
        code: args.code,
        category: args.category,
        tags: args.tags,
        permissions: args.permissions,
        output_schema: args.output_schema,
        ..ToolPatch::default()
    };
    let result = caller
        .service()
        .update(
            &caller.actor(),
            &ToolRef::parse(&args.name),
            patch,
            args.expected_revision,
        )
        .await;
    match result {
        Ok(record) => json_result(json!({
            "updated": true,
            "tool": summary(&record),
            "message": updated_message(&record),
        })),
        Err(e) => service_error(e),
    }
}

pub(crate) fn updated_message(record: &CustomToolRecord) -> String {
    match record.status {
        ToolStatus::Active => format!(
            "Tool '{}' is at version {} (revision {}); the next call runs it.",
            record.name, record.version, record.revision
        ),
        ToolStatus::PendingApproval => format!(
            "Tool '{}' is at version {} (revision {}) and waits for a person's approval again (it declares {}).",
            record.name,
            record.version,
            record.revision,
            dangerous_list(record)
        ),
        status => format!(
            "Tool '{}' is at version {} (revision {}); it is {status}, so it cannot be called until it is active.",
            record.name, record.version, record.revision
        ),
    }
}

async fn delete(caller: &Caller<'_>, args: DeleteArgs) -> CallToolResult {
    let options = DeleteOptions {
        confirm: args.confirm,
        expected_revision: args.expected_revision,
    };
    match caller
        .service()
        .delete(&caller.actor(), &ToolRef::parse(&args.name), options)
        .await
    {
        Ok(record) => json_result(json!({
            "deleted": true,
            "tool": {"id": record.id, "name": record.name},
            "message": format!("Tool '{}' was deleted.", record.name),
        })),
        Err(ServiceError::ConfirmationRequired(message)) => json_result(json!({
            "deleted": false,
            "confirmationRequired": true,
            "message": message,
        })),
        Err(e) => service_error(e),
    }
}

/// Enables or disables the caller's tool `name` (by name or id): what `toggle_custom_tool`
/// and dynamic-mcp's `dynamic.tool.enable` both do.
pub(crate) async fn set_enabled(
    caller: &Caller<'_>,
    name: &str,
    enabled: bool,
    expected_revision: Option<i64>,
) -> Result<CustomToolRecord, ServiceError> {
    let service = caller.service();
    let actor = caller.actor();
    let tool = ToolRef::parse(name);
    if enabled {
        service.enable(&actor, &tool, expected_revision).await
    } else {
        service.disable(&actor, &tool, expected_revision).await
    }
}

async fn toggle(caller: &Caller<'_>, args: ToggleArgs) -> CallToolResult {
    let result = set_enabled(caller, &args.name, args.enabled, args.expected_revision).await;
    match result {
        Ok(record) => {
            let message = if record.status == ToolStatus::Active {
                format!("Tool '{}' is enabled: it is in tools/list.", record.name)
            } else {
                format!("Tool '{}' is disabled: it left tools/list.", record.name)
            };
            json_result(json!({"tool": summary(&record), "message": message}))
        }
        Err(e) => service_error(e),
    }
}

/// A service error as the tool result the model reads: its message, and its stable code.
pub(crate) fn service_error(e: ServiceError) -> CallToolResult {
    if let ServiceError::Store(inner) = &e {
        tracing::error!(error = %inner, "store error in an MCP control-plane call");
        return error_result(
            e.code(),
            "Toolsmith could not complete the operation because of a storage error; nothing was changed. Try again later.",
            Map::new(),
        );
    }
    let mut extra = Map::new();
    if let ServiceError::RevisionConflict { expected, actual } = &e {
        extra.insert("expectedRevision".to_owned(), json!(expected));
        extra.insert("actualRevision".to_owned(), json!(actual));
    }
    error_result(e.code(), &e.to_string(), extra)
}

/// What a listing shows of a tool.
pub(crate) fn summary(record: &CustomToolRecord) -> Value {
    json!({
        "id": record.id,
        "name": record.name,
        "description": record.description,
        "status": record.status,
        "category": record.category,
        "createdBy": record.created_by,
        "requiresApproval": record.requires_approval,
        "permissions": record.permissions,
        "usageCount": record.usage_count,
        "version": record.version,
        "revision": record.revision,
    })
}

/// Everything about a tool but its owner.
pub(crate) fn full(record: &CustomToolRecord) -> Value {
    let mut value = serde_json::to_value(record).unwrap_or_else(|_| summary(record));
    if let Some(obj) = value.as_object_mut() {
        obj.remove("owner");
    }
    value
}

fn dangerous_list(record: &CustomToolRecord) -> String {
    let dangerous: Vec<&str> = record
        .permissions
        .iter()
        .filter(|p| p.is_dangerous())
        .map(|p| p.as_str())
        .collect();
    if dangerous.is_empty() {
        "permissions that need approval".to_owned()
    } else {
        format!("the {} permission", dangerous.join(", "))
    }
}
