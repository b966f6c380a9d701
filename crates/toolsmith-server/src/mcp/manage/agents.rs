//! `manage_agents`: the caller's agent definitions and its runs of them, over MCP.

use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith_core::agent::AgentRecord;

use super::{body, merged, needed, require};
use crate::auth::Scope;
use crate::mcp::catalog::{error_result, json_result};
use crate::mcp::control_plane::service_error;
use crate::mcp::handler::Caller;
use crate::rest::agents::{Agent, AgentBody, AgentRun};

/// The actions, in the order the schema lists them.
pub(super) const ACTIONS: [&str; 9] = [
    "list",
    "get",
    "create",
    "update",
    "delete",
    "run",
    "runs",
    "get_run",
    "cancel_run",
];

/// Runs a definition listing returns at most.
const RUNS_LISTED: u32 = 20;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Args {
    action: String,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    definition: Option<Value>,
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    wait: bool,
    #[serde(default)]
    run: Option<String>,
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

/// The answer, or the refusal, of one action.
async fn act(caller: &Caller<'_>, args: Args) -> Result<CallToolResult, CallToolResult> {
    let action = args.action.as_str();
    let scope = match action {
        "list" | "get" | "runs" | "get_run" => Scope::ToolsRead,
        "create" | "update" | "delete" => Scope::ToolsWrite,
        _ => Scope::ToolsExecute,
    };
    require(caller, scope, action)?;
    let service = caller.service();
    let who = caller.who();
    let actor = caller.actor();
    let out = match action {
        "list" => {
            let agents = service.list_agents(&who).await.map_err(service_error)?;
            let agents: Vec<Value> = agents.into_iter().map(summary).collect();
            json!({"count": agents.len(), "agents": agents})
        }
        "get" => {
            let agent = needed(&args.agent, "agent", action)?;
            let record = service
                .get_agent(&who, agent)
                .await
                .map_err(service_error)?;
            json!({"agent": full(record)})
        }
        "create" => {
            let definition = needed(&args.definition, "definition", action)?;
            let input = body::<AgentBody>(definition.clone(), "definition")?.into_input();
            let record = service
                .create_agent_by_model(&actor, &who, input)
                .await
                .map_err(service_error)?;
            json!({
                "created": true,
                "agent": full(record),
                "message": "Created. Its runs call tools as this agent, held to its toolPolicy and to what you may call; start one with action run.",
            })
        }
        "update" => {
            let agent = needed(&args.agent, "agent", action)?;
            let given = needed(&args.definition, "definition", action)?;
            let stored = service
                .get_agent(&who, agent)
                .await
                .map_err(service_error)?;
            let current = serde_json::to_value(Agent::new(stored.clone())).unwrap_or_default();
            let whole = merged(
                current,
                given,
                &[
                    "id",
                    "revision",
                    "createdAt",
                    "updatedAt",
                    "writtenBy",
                    "writtenByModel",
                ],
            );
            let input = body::<AgentBody>(whole, "definition")?.into_input();
            let record = service
                .update_agent_by_model(&actor, &who, &stored.id, input, args.expected_revision)
                .await
                .map_err(service_error)?;
            json!({"updated": true, "agent": full(record)})
        }
        "delete" => {
            let agent = needed(&args.agent, "agent", action)?;
            if !args.confirm {
                let message = format!(
                    "Deleting agent '{agent}' removes its definition and every revision (its runs stay readable); call again with confirm: true to delete it."
                );
                return Ok(json_result(
                    json!({"deleted": false, "confirmationRequired": true, "message": message}),
                ));
            }
            let record = service
                .delete_agent_by_model(&actor, &who, agent)
                .await
                .map_err(service_error)?;
            json!({"deleted": true, "agent": {"id": record.id, "name": record.name}})
        }
        "run" => {
            let agent = needed(&args.agent, "agent", action)?;
            let input = needed(&args.input, "input", action)?;
            let ctx = caller.tool_context();
            let arc = caller.service_arc();
            let run = arc
                .start_agent_run_as(&actor, &ctx, agent, input.clone(), args.wait)
                .await
                .map_err(service_error)?;
            if args.wait {
                let view = service
                    .get_agent_run(&who, &run.id)
                    .await
                    .map_err(service_error)?;
                json!({"run": AgentRun::of_view(view)})
            } else {
                json!({
                    "run": AgentRun::new(run, None),
                    "message": "The run is going: read it with action get_run (run: its id) until its status is completed, failed or cancelled.",
                })
            }
        }
        "runs" => {
            let agent = needed(&args.agent, "agent", action)?;
            let runs: Vec<AgentRun> = service
                .list_agent_runs(&who, agent, RUNS_LISTED)
                .await
                .map_err(service_error)?
                .into_iter()
                .map(|run| AgentRun::new(run, None))
                .collect();
            json!({"count": runs.len(), "runs": runs})
        }
        "get_run" => {
            let run = needed(&args.run, "run", action)?;
            let view = service
                .get_agent_run(&who, run)
                .await
                .map_err(service_error)?;
            json!({"run": AgentRun::of_view(view)})
        }
        "cancel_run" => {
            let run = needed(&args.run, "run", action)?;
            let ended = service
                .cancel_agent_run_as(&actor, &who, run)
                .await
                .map_err(service_error)?;
            json!({"run": AgentRun::new(ended, None)})
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

/// Who wrote a definition's current revision: `llm` (a model, over this door) or `user`.
fn written_by(record: &AgentRecord) -> &'static str {
    if record.definition.written_by_model.is_some() {
        "llm"
    } else {
        "user"
    }
}

/// A definition as REST shows it, with who wrote it.
fn full(record: AgentRecord) -> Value {
    let by = written_by(&record);
    let mut value = serde_json::to_value(Agent::new(record)).unwrap_or_default();
    toolsmith_core::object::set(&mut value, "writtenBy", json!(by));
    value
}

/// What a listing shows of a definition.
fn summary(record: AgentRecord) -> Value {
    json!({
        "id": record.id,
        "name": record.name,
        "displayName": record.definition.display_name,
        "model": {"service": record.definition.model.service, "model": record.definition.model.model},
        "revision": record.revision,
        "writtenBy": written_by(&record),
    })
}
