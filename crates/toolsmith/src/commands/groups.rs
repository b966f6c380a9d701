//! `toolsmith groups …`: the built-in tool groups — list them with their state and the spec's
//! stats, show one, find a tool's group, list the enabled tools, switch a group on or off.
//!
//! Switching stores the policy in force with the group's switch changed (the policy's
//! `tool_groups`); a running server sharing the store follows within its poll interval.

use clap::Subcommand;
use toolsmith_service::governance::tool_groups::ToolGroupView;

use super::Ctx;
use crate::exit::{CliError, SUCCESS};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum GroupsCommand {
    /// Every group: enabled or not, on by default or not, its tools; then the stats.
    List,
    /// One group by id or alias (`fs` is `filesystem`).
    Show { id: String },
    /// The group a built-in tool belongs to.
    Of { tool: String },
    /// Every built-in tool of an enabled group.
    EnabledTools,
    /// Switch a group on (refused while a group it depends on is off).
    Enable { id: String },
    /// Switch a group off (refused while an enabled group depends on it).
    Disable { id: String },
}

/// Runs a `groups` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: GroupsCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    let groups = match command {
        GroupsCommand::List => {
            if ctx.json {
                output::json(&serde_json::json!({
                    "groups": service.tool_groups(),
                    "stats": service.tool_group_stats(),
                }))?;
                return Ok(SUCCESS);
            }
            let stats = service.tool_group_stats();
            output::stdout(&format!(
                "{}\n{} groups ({} on by default, {} off), {} tools; enabled here: {} groups, {} tools\n",
                table(&service.tool_groups()),
                stats.total_groups,
                stats.enabled_by_default,
                stats.disabled_by_default,
                stats.total_tools,
                stats.enabled,
                stats.enabled_tools
            ))?;
            return Ok(SUCCESS);
        }
        GroupsCommand::EnabledTools => {
            let tools = service.enabled_builtin_tools();
            if ctx.json {
                output::json(&tools)?;
            } else {
                output::stdout(&format!("{}\n", tools.join("\n")))?;
            }
            return Ok(SUCCESS);
        }
        GroupsCommand::Show { id } => vec![service.tool_group(&id)?],
        GroupsCommand::Of { tool } => {
            let found: Vec<ToolGroupView> = service
                .tool_groups()
                .into_iter()
                .filter(|g| g.group.tools.contains(&tool.as_str()))
                .collect();
            if found.is_empty() {
                return Err(CliError::NotFound(format!(
                    "'{tool}' is in no tool group: only built-in tools belong to groups"
                ))
                .into());
            }
            found
        }
        GroupsCommand::Enable { id } => vec![service.set_tool_group(&ctx.actor, &id, true).await?],
        GroupsCommand::Disable { id } => {
            vec![service.set_tool_group(&ctx.actor, &id, false).await?]
        }
    };
    if ctx.json {
        output::json(&groups)?;
    } else {
        output::stdout(&format!("{}\n", table(&groups)))?;
    }
    Ok(SUCCESS)
}

fn table(groups: &[ToolGroupView]) -> String {
    let mut table = output::Table::new(&["GROUP", "ENABLED", "DEFAULT", "DEPENDS ON", "TOOLS"]);
    for view in groups {
        let g = &view.group;
        table.row(vec![
            g.id.to_owned(),
            if view.enabled { "yes" } else { "no" }.to_owned(),
            if g.default_enabled { "on" } else { "off" }.to_owned(),
            g.depends_on.join(", "),
            view.available_tools.join(", "),
        ]);
    }
    table.render()
}
