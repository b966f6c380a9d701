//! dynamic-mcp's 3 resources and 1 prompt, served in the enterprise profile of
//! `--compat dynamic-mcp` ([`super::profile`]) by a minimal read-only provider (the general
//! prompts and resources of a later issue will replace it):
//!
//! - `dynamic://service/meta` (`service.meta`): `{name, version, transports, protocol}`;
//! - `dynamic://service/runtime-config` (`service.runtime_config`): the same snapshot as
//!   `system.runtime_config`;
//! - `dynamic://metrics/guard` (`guard.metrics`): the same counters as `system.guard_metrics`;
//! - the prompt `tool-call-checklist` `{toolName}`: one user message.
//!
//! Each resource reads as one `application/json` text, pretty-printed as dynamic-mcp writes it.

use rmcp::model::{
    ErrorData, GetPromptRequestParams, GetPromptResult, Prompt, PromptArgument, PromptMessage,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceContents, Role,
};
use serde_json::{Value, json};

use crate::mcp::handler::Caller;

const JSON: &str = "application/json";

/// `(uri, name, title, description)` of every resource.
const RESOURCES: [(&str, &str, &str, &str); 3] = [
    (
        "dynamic://service/meta",
        "service.meta",
        "Service Metadata",
        "Basic metadata for this MCP server",
    ),
    (
        "dynamic://service/runtime-config",
        "service.runtime_config",
        "Runtime Config Snapshot",
        "Sanitized runtime config snapshot for operations and debugging",
    ),
    (
        "dynamic://metrics/guard",
        "guard.metrics",
        "Guard Metrics",
        "Runtime metrics for global tool execution guard",
    ),
];

const PROMPT: &str = "tool-call-checklist";

pub(crate) fn list() -> Vec<Resource> {
    RESOURCES
        .iter()
        .map(|(uri, name, title, description)| {
            Resource::new(*uri, *name)
                .with_title(*title)
                .with_description(*description)
                .with_mime_type(JSON)
        })
        .collect()
}

pub(crate) async fn read(
    caller: &Caller<'_>,
    request: &ReadResourceRequestParams,
) -> Result<ReadResourceResult, ErrorData> {
    let payload = match request.uri.as_str() {
        "dynamic://service/meta" => json!({
            "name": super::system::SERVICE,
            "version": env!("CARGO_PKG_VERSION"),
            "transports": ["stdio", "http"],
            "protocol": "Model Context Protocol"
        }),
        "dynamic://service/runtime-config" => super::system::runtime_config(caller).await,
        "dynamic://metrics/guard" => super::system::guard_metrics(caller),
        other => {
            // The TypeScript SDK's answer for an unknown resource.
            return Err(ErrorData::invalid_params(
                format!("Resource {other} not found"),
                Some(json!({"uri": other})),
            ));
        }
    };
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(pretty(&payload), request.uri.clone()).with_mime_type(JSON),
    ]))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

pub(crate) fn prompts() -> Vec<Prompt> {
    vec![
        Prompt::new(
            PROMPT,
            Some("Reusable checklist before invoking an MCP tool"),
            Some(vec![
                PromptArgument::new("toolName")
                    .with_description("Tool name to review")
                    .with_required(true),
            ]),
        )
        .with_title("Tool Call Checklist"),
    ]
}

pub(crate) fn get_prompt(request: &GetPromptRequestParams) -> Result<GetPromptResult, ErrorData> {
    if request.name != PROMPT {
        return Err(ErrorData::invalid_params(
            format!("Prompt {} not found", request.name),
            None,
        ));
    }
    let tool_name = request
        .arguments
        .as_ref()
        .and_then(|args| args.get("toolName"))
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "Invalid arguments for prompt {PROMPT}: toolName is required (a non-empty string)"
                ),
                None,
            )
        })?;
    Ok(GetPromptResult::new(vec![PromptMessage::new_text(
        Role::User,
        format!(
            "Before calling {tool_name}, verify input schema, expected output schema, and failure handling."
        ),
    )]))
}
