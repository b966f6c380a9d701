//! The control plane of agents and prompts (issues 37 and 40): `manage_agents` and
//! `manage_prompts`, through which a model manages the agent definitions Toolsmith runs (and
//! their runs) and the prompts its user's clients offer, as a person does over REST.
//!
//! One tool per area with an `action` argument, not a tool per operation: every MCP caller's
//! listing carries them (the compact listing's budget, `mcp_listing`), and two tools cost a
//! model a few hundred tokens where twelve would cost thousands. Each action needs the scope
//! its REST route needs (`tools:read` to read, `tools:write` to write, `tools:execute` to
//! start or cancel a run), checked here since one tool holds actions of all three.
//!
//! Every call acts as `Actor::llm(user)` with the caller's agent: the service holds a model to
//! its rules — a definition it writes reaches no more than itself, keeps the default limits or
//! lower, and a person's definition or prompt is not the model's to change
//! (`toolsmith_service::agents::by_model`, `toolsmith_service::prompts`). Answers carry REST's
//! shapes (`rest::agents::Agent`, `rest::prompts::Prompt`), and refusals come back as
//! `isError` results with the service's message and stable code, as the tool control plane's
//! do.

mod agents;
mod prompts;

use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};

use super::catalog::{arguments, error_result};
use super::handler::Caller;
use crate::auth::Scope;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Agents,
    Prompts,
}

/// `(op, name, description, input schema)` of both tools.
pub(crate) fn definitions() -> Vec<(Op, &'static str, &'static str, Value)> {
    vec![
        (
            Op::Agents,
            "manage_agents",
            "Manage the agents Toolsmith runs for your user (instructions, a model from your Config Center, a toolPolicy) and their runs. Actions: list, get, create, update (only the definition fields you give change), delete (confirm: true), run (input; answers at once with the run, or at its end with wait: true), runs, get_run, cancel_run (run). An agent you create reaches no more tools than you, and keeps the default limits or lower.",
            arguments(
                json!({
                    "action": {"type": "string", "enum": agents::ACTIONS, "description": "What to do."},
                    "agent": {"type": "string", "description": "The agent's name or id (every action but list and create)."},
                    "definition": {"type": "object", "description": "create, update: {name, instructions, model: {service: your Config Center service for the provider, model}, toolPolicy?: {allow?, deny?, profile?} (tool names, group:<id> or *), displayName?, contextFiles?: [{name, text}], agentType?: predefined (default) or open, limits?: {maxIterations ≤ 20, wallTimeSecs ≤ 600, maxConcurrentRuns ≤ 4, maxTokens}}"},
                    "input": {"type": "string", "description": "run: the task for the agent."},
                    "wait": {"type": "boolean", "description": "run: answer when the run has ended (default: at once, while it runs)."},
                    "run": {"type": "string", "description": "get_run, cancel_run: the run's id."},
                    "confirm": {"type": "boolean", "description": "delete: must be true."},
                    "expected_revision": {"type": "integer", "description": "update: refuse if the agent is no longer at this revision."}
                }),
                &["action"],
            ),
        ),
        (
            Op::Prompts,
            "manage_prompts",
            "Manage your prompts: reusable instructions with arguments that MCP clients offer as prompts (slash commands). Actions: list, get, create, update (only the fields you give change), enable, disable, delete (confirm: true). A prompt a person wrote is theirs: you may read it, not change it.",
            arguments(
                json!({
                    "action": {"type": "string", "enum": prompts::ACTIONS, "description": "What to do."},
                    "prompt": {"type": "string", "description": "The prompt's name or id (every action but list and create)."},
                    "definition": {"type": "object", "description": "create, update: {name, description?, title?, arguments?: [{name, description?, required?, values?}], messages: [{role: user|assistant, content: text (a Jinja template: {{ argument }}) or a content block}], agent?: your own agent id to keep it to yourself}"},
                    "confirm": {"type": "boolean", "description": "delete: must be true."},
                    "expected_revision": {"type": "integer", "description": "update: refuse if the prompt is no longer at this revision."}
                }),
                &["action"],
            ),
        ),
    ]
}

/// The description of `op`'s tool in the compact and discovery listings, whose parameters
/// carry no docs there (`get_tool_help` gives the tool in full).
pub(crate) fn listed_description(op: Op) -> &'static str {
    match op {
        Op::Agents => {
            "Create, change, list and run the agents Toolsmith runs for you, and read or cancel their runs. get_tool_help {\"tool_name\": \"manage_agents\"} gives every field."
        }
        Op::Prompts => {
            "Create, change, list, switch and delete your prompts (what MCP clients offer as slash commands). get_tool_help {\"tool_name\": \"manage_prompts\"} gives every field."
        }
    }
}

/// Runs `manage_agents` or `manage_prompts` on arguments already validated against its schema.
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: Op,
    args: Value,
) -> Result<CallToolResult, String> {
    match op {
        Op::Agents => agents::call(caller, super::control_plane::parse(args)?).await,
        Op::Prompts => prompts::call(caller, super::control_plane::parse(args)?).await,
    }
}

/// `Err` with the refusal when the caller lacks `scope` for `action`.
fn require(caller: &Caller<'_>, scope: Scope, action: &str) -> Result<(), CallToolResult> {
    match caller.denial(scope) {
        None => Ok(()),
        Some(why) => Err(error_result(
            "forbidden",
            &format!("{action}: {why}"),
            Map::new(),
        )),
    }
}

/// The argument an action needs, or the refusal naming it.
fn needed<'a, T>(value: &'a Option<T>, field: &str, action: &str) -> Result<&'a T, CallToolResult> {
    value.as_ref().ok_or_else(|| {
        error_result(
            "validation_error",
            &format!("{action} needs {field}"),
            Map::new(),
        )
    })
}

/// `stored` (a REST shape, as JSON) with the top-level fields of `given` put over it, less
/// the fields only the server writes: what an update that gives only some fields means.
fn merged(stored: Value, given: &Value, server_fields: &[&str]) -> Value {
    let mut out = match stored {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    for field in server_fields {
        out.remove(*field);
    }
    if let Value::Object(given) = given {
        for (key, value) in given {
            out.insert(key.clone(), value.clone());
        }
    }
    Value::Object(out)
}

/// A body read from JSON as REST reads it; the refusal names the field (never its value).
fn body<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> Result<T, CallToolResult> {
    serde_json::from_value(value).map_err(|e| {
        error_result(
            "validation_error",
            &format!(
                "{what}: {}",
                toolsmith_core::schema::message_without_values(&e.to_string())
            ),
            Map::new(),
        )
    })
}
