//! `manage_prompts`: the caller's prompts, over MCP. Every write moves the user's prompt
//! catalogue, so their sessions hear `notifications/prompts/list_changed`.

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{body, merged, needed, require};
use crate::auth::Scope;
use crate::mcp::catalog::{error_result, json_result};
use crate::mcp::control_plane::service_error;
use crate::mcp::handler::Caller;
use crate::rest::prompts::{Prompt, PromptBody};

/// The actions, in the order the schema lists them.
pub(super) const ACTIONS: [&str; 7] = [
    "list", "get", "create", "update", "enable", "disable", "delete",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    action: String,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    definition: Option<Value>,
    #[serde(default)]
    confirm: bool,
    #[serde(default)]
    expected_revision: Option<i64>,
}

pub(super) async fn call(caller: &Caller<'_>, args: Args) -> Result<CallToolResult, String> {
    Ok(match act(caller, args).await {
        Ok(done) | Err(done) => done,
    })
}

/// A definition as a model may write it: a message's `content` may be plain text, which is
/// the text block it stands for.
fn with_text_blocks(mut definition: Value) -> Value {
    if let Some(messages) = definition.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages {
            if let Some(content) = message.get_mut("content")
                && let Value::String(text) = content
            {
                *content = json!({"type": "text", "text": text});
            }
        }
    }
    definition
}

/// The service's input from a definition, read as REST reads a prompt's body.
fn input(definition: Value) -> Result<toolsmith_service::prompts::PromptInput, CallToolResult> {
    body::<PromptBody>(with_text_blocks(definition), "definition")?
        .into_input()
        .map_err(|e| error_result("validation_error", e.message(), Map::new()))
}

/// The answer, or the refusal, of one action.
async fn act(caller: &Caller<'_>, args: Args) -> Result<CallToolResult, CallToolResult> {
    let action = args.action.as_str();
    let scope = match action {
        "list" | "get" => Scope::ToolsRead,
        _ => Scope::ToolsWrite,
    };
    require(caller, scope, action)?;
    let service = caller.service();
    let who = caller.who();
    let actor = caller.actor();
    let out = match action {
        "list" => {
            let prompts: Vec<Value> = service
                .list_prompts(&who)
                .await
                .map_err(service_error)?
                .into_iter()
                .map(|p| {
                    json!({
                        "id": p.id,
                        "name": p.name,
                        "description": p.definition.description,
                        "enabled": p.enabled,
                        "agent": p.agent,
                        "createdBy": p.created_by.as_str(),
                        "revision": p.revision,
                    })
                })
                .collect();
            json!({"count": prompts.len(), "prompts": prompts})
        }
        "get" => {
            let prompt = needed(&args.prompt, "prompt", action)?;
            let record = service
                .get_prompt(&who, prompt)
                .await
                .map_err(service_error)?;
            json!({"prompt": Prompt::new(record)})
        }
        "create" => {
            let definition = needed(&args.definition, "definition", action)?;
            let record = service
                .create_prompt(&actor, input(definition.clone())?)
                .await
                .map_err(service_error)?;
            json!({
                "created": true,
                "prompt": Prompt::new(record),
                "message": "Created: your clients list it in prompts/list now (they were sent notifications/prompts/list_changed).",
            })
        }
        "update" => {
            let prompt = needed(&args.prompt, "prompt", action)?;
            let given = needed(&args.definition, "definition", action)?;
            let stored = service
                .get_prompt(&who, prompt)
                .await
                .map_err(service_error)?;
            let id = stored.id.clone();
            let current = serde_json::to_value(Prompt::new(stored)).unwrap_or_default();
            let whole = merged(
                current,
                given,
                &["id", "createdBy", "revision", "createdAt", "updatedAt"],
            );
            let record = service
                .update_prompt(&actor, &id, input(whole)?, args.expected_revision)
                .await
                .map_err(service_error)?;
            json!({"updated": true, "prompt": Prompt::new(record)})
        }
        "enable" | "disable" => {
            let prompt = needed(&args.prompt, "prompt", action)?;
            let record = service
                .set_prompt_enabled(&actor, prompt, action == "enable")
                .await
                .map_err(service_error)?;
            json!({"prompt": Prompt::new(record)})
        }
        "delete" => {
            let prompt = needed(&args.prompt, "prompt", action)?;
            if !args.confirm {
                let message = format!(
                    "Deleting prompt '{prompt}' removes it and every version; call again with confirm: true to delete it."
                );
                return Ok(json_result(
                    json!({"deleted": false, "confirmationRequired": true, "message": message}),
                ));
            }
            let record = service
                .delete_prompt(&actor, prompt)
                .await
                .map_err(service_error)?;
            json!({"deleted": true, "prompt": {"id": record.id, "name": record.name}})
        }
        other => {
            return Err(error_result(
                "validation_error",
                &format!("unknown action '{other}': one of {}", ACTIONS.join(", ")),
                Map::new(),
            ));
        }
    };
    Ok(json_result(out))
}
