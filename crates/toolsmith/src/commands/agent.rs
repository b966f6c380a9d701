//! `toolsmith agent …`: the agents Toolsmith runs (issue 37) — list them, show one, create one
//! from a definition file (the REST body of `POST /api/v1/agents`, as JSON), delete one; link
//! two of them (`link`, `links`, `unlink`: the permission to delegate, spec 001 §7). The
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
    /// Link two agents: FROM may then delegate tasks to TO (spec 001 §7). Only a person makes
    /// links; a model never does.
    Link {
        from: String,
        to: String,
        /// Either may delegate to the other (default: only FROM to TO).
        #[arg(long)]
        bidirectional: bool,
        /// Delegations over the link at once (default 3, at most 64).
        #[arg(long)]
        max_concurrent: Option<u32>,
        /// What the link is for (DELEGATION.md and delegate_search show it).
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Your agent links.
    Links,
    /// Delete an agent link, by id (running delegations over it go on).
    Unlink { id: String },
}

/// Runs the link commands; `None` for the others.
async fn links(ctx: &Ctx, command: &AgentCommand) -> anyhow::Result<Option<u8>> {
    use toolsmith_core::delegation::LinkDirection;
    use toolsmith_server::rest::agent_links::AgentLink;
    use toolsmith_service::agents::delegation::LinkInput;
    let service = &ctx.service;
    let links = match command {
        AgentCommand::Link {
            from,
            to,
            bidirectional,
            max_concurrent,
            description,
        } => vec![
            service
                .create_agent_link_as(
                    &ctx.actor,
                    LinkInput {
                        from: from.clone(),
                        to: to.clone(),
                        direction: if *bidirectional {
                            LinkDirection::Bidirectional
                        } else {
                            LinkDirection::Outbound
                        },
                        max_concurrent: *max_concurrent,
                        description: description.clone(),
                    },
                )
                .await?,
        ],
        AgentCommand::Links => {
            service
                .list_agent_links(&ToolContext::new(ctx.actor.user_id.clone()))
                .await?
        }
        AgentCommand::Unlink { id } => vec![service.delete_agent_link_as(&ctx.actor, id).await?],
        _ => return Ok(None),
    };
    let names: std::collections::HashMap<String, String> = service
        .list_agents(&ToolContext::new(ctx.actor.user_id.clone()))
        .await?
        .into_iter()
        .map(|a| (a.id, a.name))
        .collect();
    let links: Vec<AgentLink> = links.into_iter().map(AgentLink::new).collect();
    if ctx.json {
        output::json(&links)?;
        return Ok(Some(SUCCESS));
    }
    let name = |id: &str| names.get(id).cloned().unwrap_or_else(|| id.to_owned());
    let mut table = output::Table::new(&["ID", "FROM", "TO", "DIRECTION", "MAX"]);
    for link in &links {
        table.row(vec![
            link.id.clone(),
            name(&link.from),
            name(&link.to),
            link.direction.clone(),
            link.max_concurrent.to_string(),
        ]);
    }
    output::stdout(&format!("{}\n", table.render()))?;
    Ok(Some(SUCCESS))
}

/// Runs an `agent` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: AgentCommand) -> anyhow::Result<u8> {
    if let Some(code) = links(ctx, &command).await? {
        return Ok(code);
    }
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
        AgentCommand::Link { .. } | AgentCommand::Links | AgentCommand::Unlink { .. } => {
            return Ok(SUCCESS);
        }
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
