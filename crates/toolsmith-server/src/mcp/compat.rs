//! `--compat dynamic-mcp`: the same lifecycle operations under the `dynamic.tool.*` names and
//! argument shapes of the dynamic-mcp control plane (spec 002), for clients written against it.
//!
//! - `dynamic.tool.create` `{tool: {name, description, code, inputSchema?, …}}`
//! - `dynamic.tool.update` `{name, patch: {…}, expectedRevision?}`
//! - `dynamic.tool.delete` `{name, confirm?, expectedRevision?}`
//! - `dynamic.tool.list` `{status?, category?}`, `dynamic.tool.get` `{name}`
//! - `dynamic.tool.enable` `{name, enabled, expectedRevision?}`
//!
//! The rules are Toolsmith's, not that system's: names follow `^[a-z][a-z0-9_]*$`, deleting
//! needs `confirm: true`, model-created tools always require approval. Its container fields
//! have no meaning here: `image` and `timeoutMs` are accepted and ignored (with a note), npm
//! `dependencies` are refused (the sandbox has no module loader), `adminToken` is accepted
//! (admin-token mode comes with access control).

use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith_core::{Permission, ToolStatus};
use toolsmith_service::{CreateTool, DeleteOptions, ServiceError, ToolPatch, ToolQuery, ToolRef};

use super::catalog::{error_result, json_result};
use super::control_plane::{full, parse, service_error, summary, updated_message};
use super::handler::Caller;
use rmcp::model::CallToolResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Create,
    Update,
    Delete,
    List,
    Get,
    Enable,
}

/// Fields of a dynamic-mcp tool definition (create's `tool` and update's `patch`).
fn definition_properties() -> Map<String, Value> {
    let props = json!({
        "name": {"type": "string", "description": "Tool name: ^[a-z][a-z0-9_]*$ in Toolsmith."},
        "description": {"type": "string"},
        "code": {"type": "string", "description": "Body of an async function receiving `args`; return a JSON value."},
        "inputSchema": {"anyOf": [{"type": "object"}, {"type": "string"}], "description": "JSON Schema of the arguments (type: object)."},
        "parameters": {"anyOf": [{"type": "object"}, {"type": "string"}], "description": "Same as inputSchema."},
        "category": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "permissions": {"type": "array", "items": {"type": "string", "enum": ["network", "filesystem", "database", "shell", "email", "scheduling"]}},
        "dependencies": {"type": "array", "items": {}, "description": "npm dependencies: not supported by Toolsmith's sandbox; must be empty."},
        "image": {"type": "string", "description": "Ignored (no containers)."},
        "timeoutMs": {"type": "integer", "description": "Ignored: the sandbox's limits apply."}
    });
    match props {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// `(op, name, description, input schema)` of every compatibility tool.
pub(crate) fn definitions() -> Vec<(Op, &'static str, &'static str, Value)> {
    let admin_token = json!({"type": "string", "description": "Accepted for compatibility."});
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
            json!({
                "type": "object",
                "properties": {
                    "tool": {
                        "type": "object",
                        "properties": definition_properties(),
                        "required": ["name", "description", "code"],
                        "additionalProperties": false
                    },
                    "adminToken": admin_token
                },
                "required": ["tool"],
                "additionalProperties": false
            }),
        ),
        (
            Op::Update,
            "dynamic.tool.update",
            "dynamic-mcp compatible: apply a patch to a tool ({name, patch, expectedRevision}). Same as update_custom_tool.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "patch": {"type": "object", "properties": patch_props, "additionalProperties": false},
                    "expectedRevision": {"type": "integer"},
                    "adminToken": admin_token
                },
                "required": ["name", "patch"],
                "additionalProperties": false
            }),
        ),
        (
            Op::Delete,
            "dynamic.tool.delete",
            "dynamic-mcp compatible: delete a tool the model created; needs confirm: true. Same as delete_custom_tool.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "confirm": {"type": "boolean"},
                    "expectedRevision": {"type": "integer"},
                    "adminToken": admin_token
                },
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
        (
            Op::List,
            "dynamic.tool.list",
            "dynamic-mcp compatible: list your tools. Same as list_custom_tools.",
            json!({
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": ToolStatus::ALL.map(ToolStatus::as_str)},
                    "category": {"type": "string"},
                    "adminToken": admin_token
                },
                "additionalProperties": false
            }),
        ),
        (
            Op::Get,
            "dynamic.tool.get",
            "dynamic-mcp compatible: get one tool with its code and revision. Same as get_custom_tool.",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}, "adminToken": admin_token},
                "required": ["name"],
                "additionalProperties": false
            }),
        ),
        (
            Op::Enable,
            "dynamic.tool.enable",
            "dynamic-mcp compatible: enable or disable a tool ({name, enabled}). Same as toggle_custom_tool.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "enabled": {"type": "boolean"},
                    "expectedRevision": {"type": "integer"},
                    "adminToken": admin_token
                },
                "required": ["name", "enabled"],
                "additionalProperties": false
            }),
        ),
    ]
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Definition {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    new_name: Option<String>,
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
    timeout_ms: Option<i64>,
}

impl Definition {
    /// Refuses what cannot work here; returns notes on what is ignored.
    fn check(&self) -> Result<Vec<String>, CallToolResult> {
        if self.dependencies.as_ref().is_some_and(|d| !d.is_empty()) {
            return Err(error_result(
                "validation_error",
                "dependencies are not supported: Toolsmith runs tools in an embedded JavaScript sandbox without npm; remove them and use the built-in `utils` helpers",
                Map::new(),
            ));
        }
        if self.input_schema.is_some() && self.parameters.is_some() {
            return Err(error_result(
                "validation_error",
                "give inputSchema or parameters, not both",
                Map::new(),
            ));
        }
        let mut notes = Vec::new();
        if self.image.is_some() {
            notes.push(
                "image is ignored: tools run in Toolsmith's embedded sandbox, not in containers"
                    .to_owned(),
            );
        }
        if self.timeout_ms.is_some() {
            notes.push(
                "timeoutMs is ignored: the sandbox's own time and memory limits apply".to_owned(),
            );
        }
        Ok(notes)
    }

    fn schema(&mut self) -> Option<Value> {
        self.input_schema.take().or_else(|| self.parameters.take())
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateArgs {
    tool: Definition,
    #[serde(default)]
    #[allow(dead_code)]
    admin_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UpdateArgs {
    name: String,
    patch: Definition,
    #[serde(default)]
    expected_revision: Option<i64>,
    #[serde(default)]
    #[allow(dead_code)]
    admin_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DeleteArgs {
    name: String,
    #[serde(default)]
    confirm: bool,
    #[serde(default)]
    expected_revision: Option<i64>,
    #[serde(default)]
    #[allow(dead_code)]
    admin_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ListArgs {
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    admin_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GetArgs {
    name: String,
    #[serde(default)]
    #[allow(dead_code)]
    admin_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EnableArgs {
    name: String,
    enabled: bool,
    #[serde(default)]
    expected_revision: Option<i64>,
    #[serde(default)]
    #[allow(dead_code)]
    admin_token: Option<String>,
}

/// Runs a compatibility tool on arguments already validated against its schema.
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: Op,
    args: Value,
) -> Result<CallToolResult, String> {
    let service = caller.service();
    let actor = caller.actor();
    Ok(match op {
        Op::Create => {
            let CreateArgs { tool: mut def, .. } = parse(args)?;
            let notes = match def.check() {
                Ok(notes) => notes,
                Err(refused) => return Ok(refused),
            };
            let parameters = def
                .schema()
                .unwrap_or_else(|| json!({"type": "object", "additionalProperties": true}));
            let (Some(name), Some(description), Some(code)) = (def.name, def.description, def.code)
            else {
                return Err("tool.name, tool.description and tool.code are required".to_owned());
            };
            if def.new_name.is_some() {
                return Err("tool.newName has no meaning in create".to_owned());
            }
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
                metadata: None,
            };
            match service.create(&actor, input).await {
                Ok(record) => ok(json!({"tool": full(&record)}), notes),
                Err(e) => service_error(e),
            }
        }
        Op::Update => {
            let UpdateArgs {
                name,
                patch: mut def,
                expected_revision,
                ..
            } = parse(args)?;
            let notes = match def.check() {
                Ok(notes) => notes,
                Err(refused) => return Ok(refused),
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
                ..ToolPatch::default()
            };
            match service
                .update(&actor, &ToolRef::parse(&name), patch, expected_revision)
                .await
            {
                Ok(record) => ok(
                    json!({"tool": full(&record), "message": updated_message(&record)}),
                    notes,
                ),
                Err(e) => service_error(e),
            }
        }
        Op::Delete => {
            let DeleteArgs {
                name,
                confirm,
                expected_revision,
                ..
            } = parse(args)?;
            let options = DeleteOptions {
                confirm,
                expected_revision,
            };
            match service
                .delete(&actor, &ToolRef::parse(&name), options)
                .await
            {
                Ok(record) => ok(
                    json!({"deleted": {"id": record.id, "name": record.name}}),
                    Vec::new(),
                ),
                Err(ServiceError::ConfirmationRequired(message)) => json_result(json!({
                    "ok": false,
                    "confirmationRequired": true,
                    "message": message,
                })),
                Err(e) => service_error(e),
            }
        }
        Op::List => {
            let ListArgs {
                status, category, ..
            } = parse(args)?;
            let mut query = ToolQuery::owner(caller.owner());
            query.limit = 1000;
            query.category = category.filter(|c| !c.trim().is_empty());
            if let Some(status) = status {
                query.status = Some(status.parse::<ToolStatus>()?);
            }
            match service.list(&actor, query).await {
                Ok(page) => {
                    let (shown, total) = super::control_plane::shown_summaries(caller, &page);
                    ok(json!({"tools": shown, "total": total}), Vec::new())
                }
                Err(e) => service_error(e),
            }
        }
        Op::Get => {
            let GetArgs { name, .. } = parse(args)?;
            match super::control_plane::visible_record(caller, &name).await {
                Ok(record) => ok(json!({"tool": full(&record)}), Vec::new()),
                Err(e) => service_error(e),
            }
        }
        Op::Enable => {
            let EnableArgs {
                name,
                enabled,
                expected_revision,
                ..
            } = parse(args)?;
            let tool = ToolRef::parse(&name);
            let result = if enabled {
                service.enable(&actor, &tool, expected_revision).await
            } else {
                service.disable(&actor, &tool, expected_revision).await
            };
            match result {
                Ok(record) => ok(json!({"tool": summary(&record)}), Vec::new()),
                Err(e) => service_error(e),
            }
        }
    })
}

/// `{ok: true, …fields, notes?}`.
fn ok(fields: Value, notes: Vec<String>) -> CallToolResult {
    let mut out = Map::new();
    out.insert("ok".to_owned(), Value::Bool(true));
    if let Value::Object(fields) = fields {
        out.extend(fields);
    }
    if !notes.is_empty() {
        out.insert("notes".to_owned(), json!(notes));
    }
    json_result(Value::Object(out))
}
