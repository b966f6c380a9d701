//! `toolsmith team …`: agent teams (spec 001 §8) — list them, show one, create one (a lead and
//! teammates among `--user`'s agents), delete one, and read a team's board (its tasks and
//! latest messages) as `GET /api/v1/teams/{id}/board` does.

use clap::Subcommand;
use toolsmith_core::ToolContext;
use toolsmith_service::agents::teams::TeamInput;

use super::Ctx;
use crate::exit::SUCCESS;
use crate::output;

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Your teams, by name.
    List,
    /// One team, by id or name.
    Get { id: String },
    /// Create a team: a lead and teammates, your agents by name or id.
    Create {
        /// The team's name (lowercase letters, digits and _).
        name: String,
        /// The lead agent.
        #[arg(long)]
        lead: String,
        /// A teammate (repeat for each).
        #[arg(long = "member", required = true)]
        members: Vec<String>,
        /// What the team is for (its lead reads it in TEAM.md).
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Delete a team with its board and mailbox (its agents stay).
    Delete { id: String },
    /// A team's board: every task and the latest messages.
    Board { id: String },
}

impl TeamCommand {
    /// Whether the command only reads.
    #[must_use]
    pub fn reads(&self) -> bool {
        matches!(
            self,
            TeamCommand::List | TeamCommand::Get { .. } | TeamCommand::Board { .. }
        )
    }
}

/// Runs a `team` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: TeamCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    let caller = ToolContext::new(ctx.actor.user_id.clone());
    let teams = match command {
        TeamCommand::List => service.list_teams(&caller).await?,
        TeamCommand::Get { id } => vec![service.get_team(&caller, &id).await?],
        TeamCommand::Create {
            name,
            lead,
            members,
            description,
        } => {
            let input = TeamInput {
                name,
                description,
                lead,
                members,
            };
            vec![service.create_team(&ctx.actor, input).await?]
        }
        TeamCommand::Delete { id } => vec![service.delete_team(&ctx.actor, &id).await?],
        TeamCommand::Board { id } => {
            let board = service.team_board(&caller, &id).await?;
            if ctx.json {
                output::json(&board)?;
                return Ok(SUCCESS);
            }
            let mut table =
                output::Table::new(&["TASK", "STATUS", "PRIORITY", "CLAIMED BY", "SUBJECT"]);
            let text = |v: &serde_json::Value, key: &str| {
                v.get(key)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("-")
                    .to_owned()
            };
            for task in board
                .get("tasks")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
            {
                table.row(vec![
                    text(task, "id"),
                    text(task, "status"),
                    task.get("priority")
                        .map_or_else(|| "-".to_owned(), ToString::to_string),
                    text(task, "claimedBy"),
                    text(task, "subject"),
                ]);
            }
            let mut mail = output::Table::new(&["FROM", "TO", "READ", "TEXT"]);
            for message in board
                .get("messages")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
            {
                mail.row(vec![
                    text(message, "from"),
                    text(message, "to"),
                    message
                        .get("read")
                        .map_or_else(|| "-".to_owned(), ToString::to_string),
                    text(message, "text").chars().take(80).collect(),
                ]);
            }
            output::stdout(&format!("{}\n\n{}\n", table.render(), mail.render()))?;
            return Ok(SUCCESS);
        }
    };
    let views: Vec<serde_json::Value> = teams.iter().map(|t| t.view()).collect();
    if ctx.json {
        output::json(&views)?;
        return Ok(SUCCESS);
    }
    let mut table = output::Table::new(&["ID", "NAME", "LEAD", "MEMBERS"]);
    for team in &teams {
        table.row(vec![
            team.id.clone(),
            team.name.clone(),
            team.lead.name.clone(),
            team.members
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        ]);
    }
    output::stdout(&format!("{}\n", table.render()))?;
    Ok(SUCCESS)
}
