//! `toolsmith tool …`: create, import, list, get, update, enable, disable, approve, reject, delete,
//! history, rollback, stats and executions of custom tools, through [`ToolService`](toolsmith_service::ToolService).

use serde::Serialize;
use toolsmith_core::CustomToolRecord;
use toolsmith_service::{DeleteOptions, ToolPatch, ToolQuery, ToolRef, ToolStats};

use super::Ctx;
use crate::cli::{ListArgs, ToolCommand};
use crate::exit::SUCCESS;
use crate::{input, output};

pub async fn run(ctx: &Ctx, command: ToolCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    let actor = &ctx.actor;
    match command {
        ToolCommand::Create { file } => {
            let (tool, enabled) = input::read_new_tool_file(&file)?;
            let created = service.create_with_enabled(actor, tool, enabled).await?;
            report(ctx, "created", &created)?;
        }
        ToolCommand::Import { file } => {
            let text = input::read_text(&file, "definition")?;
            let created = service.import_http_tool(actor, &text).await?;
            report(ctx, "imported", &created)?;
        }
        ToolCommand::List(args) => list(ctx, args).await?,
        ToolCommand::Get { tool } => {
            let found = service.get(actor, &ToolRef::parse(&tool)).await?;
            if ctx.json {
                output::json(&found)?;
            } else {
                output::stdout(&output::tool_block(&found))?;
            }
        }
        ToolCommand::Update {
            tool,
            file,
            revision,
        } => {
            let patch: ToolPatch = input::read_tool_file(&file)?;
            let tool_ref = ToolRef::parse(&tool);
            let before = service.get(actor, &tool_ref).await?;
            let updated = service
                .update(actor, &tool_ref, patch, revision.expected_revision)
                .await?;
            let verb = if updated.revision == before.revision {
                "unchanged"
            } else {
                "updated"
            };
            report(ctx, verb, &updated)?;
        }
        ToolCommand::Enable { tool, revision } => {
            let done = service
                .enable(actor, &ToolRef::parse(&tool), revision.expected_revision)
                .await?;
            report(ctx, "enabled", &done)?;
        }
        ToolCommand::Disable { tool, revision } => {
            let done = service
                .disable(actor, &ToolRef::parse(&tool), revision.expected_revision)
                .await?;
            report(ctx, "disabled", &done)?;
        }
        ToolCommand::Approve { tool } => {
            let done = service.approve(actor, &ToolRef::parse(&tool)).await?;
            report(ctx, "approved", &done)?;
        }
        ToolCommand::Reject { tool } => {
            let done = service.reject(actor, &ToolRef::parse(&tool)).await?;
            report(ctx, "rejected", &done)?;
        }
        ToolCommand::Delete { tool, revision } => {
            let options = DeleteOptions {
                confirm: true,
                expected_revision: revision.expected_revision,
            };
            let gone = service
                .delete(actor, &ToolRef::parse(&tool), options)
                .await?;
            if ctx.json {
                output::json(&gone)?;
            } else {
                output::stdout(&format!("deleted {} ({})\n", gone.name, gone.id))?;
            }
        }
        ToolCommand::Move {
            tool,
            to,
            from,
            revision,
        } => {
            // Out of an organisation: act in it (its id as the owner, --user as the member).
            let mover = match from {
                Some(org) => {
                    let (org, _) = service.organization_of_member(&actor.user_id, &org).await?;
                    toolsmith_service::Actor::user(org.id).with_member(Some(actor.user_id.clone()))
                }
                None => actor.clone(),
            };
            let moved = service
                .move_tool(
                    &mover,
                    &ToolRef::parse(&tool),
                    &to,
                    revision.expected_revision,
                )
                .await?;
            report(ctx, &format!("moved to {to}:"), &moved)?;
        }
        ToolCommand::History { tool } => {
            let tool_ref = ToolRef::parse(&tool);
            let current = service.get(actor, &tool_ref).await?;
            let versions = service.versions(actor, &tool_ref).await?;
            if ctx.json {
                output::json(&versions)?;
            } else {
                output::stdout(&output::version_table(&versions, current.version))?;
            }
        }
        ToolCommand::Rollback {
            tool,
            version,
            revision,
        } => {
            let done = service
                .rollback(
                    actor,
                    &ToolRef::parse(&tool),
                    version,
                    revision.expected_revision,
                )
                .await?;
            let verb = format!("rolled back to version {version}:");
            report(ctx, &verb, &done)?;
        }
        ToolCommand::Executions { tool, limit } => {
            let tool = tool.as_deref().map(ToolRef::parse);
            let rows = service
                .executions(actor, tool.as_ref(), None, None, None, limit)
                .await?;
            if ctx.json {
                output::json(&rows)?;
            } else {
                output::stdout(&output::execution_table(&rows))?;
            }
        }
        ToolCommand::Stats => {
            let stats = StatsView::from(service.stats(actor).await?);
            if ctx.json {
                output::json(&stats)?;
            } else {
                output::stdout(&stats.render())?;
            }
        }
    }
    Ok(SUCCESS)
}

/// The record with `--json`; one summary line otherwise.
fn report(ctx: &Ctx, verb: &str, tool: &CustomToolRecord) -> anyhow::Result<()> {
    if ctx.json {
        return output::json(tool);
    }
    output::stdout(&format!(
        "{verb} {} ({}): status {}, version {}, revision {}\n",
        tool.name, tool.id, tool.status, tool.version, tool.revision
    ))
}

async fn list(ctx: &Ctx, args: ListArgs) -> anyhow::Result<()> {
    let query = ToolQuery {
        owner: ctx.actor.user_id.clone(),
        status: args.status,
        category: args.category,
        created_by: args.created_by,
        search: args.search,
        limit: args.limit,
        offset: args.offset,
    };
    let page = ctx.service.list(&ctx.actor, query).await?;
    if ctx.json {
        return output::json(&ListView {
            tools: &page.tools,
            total: page.total,
        });
    }
    if page.tools.is_empty() {
        let note = if page.total == 0 {
            "no custom tools\n".to_owned()
        } else {
            format!(
                "no tools on this page ({} match; --offset {} is past the end)\n",
                page.total, args.offset
            )
        };
        return output::stdout(&note);
    }
    let mut text = output::tool_table(&page.tools);
    let shown = page.tools.len() as u64;
    if u64::from(args.offset) > 0 || shown < page.total {
        let first = u64::from(args.offset) + 1;
        let last = u64::from(args.offset) + shown;
        text.push_str(&format!(
            "({first}-{last} of {}; use --offset and --limit to page)\n",
            page.total
        ));
    }
    output::stdout(&text)
}

/// `tool list --json`.
#[derive(Serialize)]
struct ListView<'a> {
    tools: &'a [CustomToolRecord],
    total: u64,
}

/// `tool stats`, in the camelCase of every other JSON document.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatsView {
    total: u64,
    active: u64,
    disabled: u64,
    pending_approval: u64,
    rejected: u64,
    created_by_user: u64,
    created_by_llm: u64,
    total_usage: u64,
}

impl From<ToolStats> for StatsView {
    fn from(s: ToolStats) -> Self {
        StatsView {
            total: s.total,
            active: s.active,
            disabled: s.disabled,
            pending_approval: s.pending_approval,
            rejected: s.rejected,
            created_by_user: s.created_by_user,
            created_by_llm: s.created_by_llm,
            total_usage: s.total_usage,
        }
    }
}

impl StatsView {
    fn render(&self) -> String {
        let mut block = output::Block::default();
        block
            .field("total", self.total.to_string())
            .field("active", self.active.to_string())
            .field("disabled", self.disabled.to_string())
            .field("pending approval", self.pending_approval.to_string())
            .field("rejected", self.rejected.to_string())
            .field("created by user", self.created_by_user.to_string())
            .field("created by llm", self.created_by_llm.to_string())
            .field("total uses", self.total_usage.to_string());
        block.render()
    }
}
