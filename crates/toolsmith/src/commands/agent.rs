//! `toolsmith agent …`: the agents Toolsmith runs (issue 37) — list them, show one, create one
//! from a definition file (the REST body of `POST /api/v1/agents`, as JSON), delete one. The
//! agents are those of `--user`; the file is read as REST reads its body (`AgentBody`), so
//! there is one shape.

use std::path::PathBuf;

use clap::Subcommand;
use toolsmith_core::ToolContext;
use toolsmith_server::rest::agents::{Agent, AgentBody};

use super::Ctx;
use crate::exit::{CliError, SUCCESS};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum AgentCommand {
    /// Your agents, by name.
    List,
    /// One agent, by id or name.
    Get { id: String },
    /// Create an agent from a definition file (JSON: name, instructions, model, toolPolicy,
    /// contextFiles, limits — the body of POST /api/v1/agents).
    Create {
        #[arg(long)]
        file: PathBuf,
    },
    /// Delete an agent (its runs stay readable).
    Delete { id: String },
}

/// Runs an `agent` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: AgentCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    let caller = ToolContext::new(ctx.actor.user_id.clone());
    let agents = match command {
        AgentCommand::List => service.list_agents(&caller).await?,
        AgentCommand::Get { id } => vec![service.get_agent(&caller, &id).await?],
        AgentCommand::Create { file } => {
            let text = std::fs::read_to_string(&file).map_err(|e| {
                CliError::Input(format!(
                    "cannot read the agent file {}: {e}",
                    file.display()
                ))
            })?;
            let body: AgentBody = serde_json::from_str(&text).map_err(|e| {
                CliError::Input(format!(
                    "the agent file {} is not an agent definition: {e} (the body of POST \
                     /api/v1/agents, as JSON; see docs/agents.md)",
                    file.display()
                ))
            })?;
            vec![
                service
                    .create_agent_as(&ctx.actor, body.into_input())
                    .await?,
            ]
        }
        AgentCommand::Delete { id } => vec![service.delete_agent_as(&ctx.actor, &id).await?],
    };
    let agents: Vec<Agent> = agents.into_iter().map(Agent::new).collect();
    if ctx.json {
        output::json(&agents)?;
        return Ok(SUCCESS);
    }
    let mut table = output::Table::new(&["ID", "NAME", "MODEL", "REVISION"]);
    for agent in &agents {
        table.row(vec![
            agent.id.clone(),
            agent.name.clone(),
            format!("{} / {}", agent.model.service, agent.model.model),
            agent.revision.to_string(),
        ]);
    }
    output::stdout(&format!("{}\n", table.render()))?;
    Ok(SUCCESS)
}
