//! `toolsmith approvals …`: human approval of executions from the command line — list what
//! waits, show one, and decide (`allow`, `always`, `deny`).
//!
//! The CLI opens the store itself, so it acts as the operator: it sees and decides the
//! approvals of every user. A decision is taken by the server at once (it reads approvals from
//! the store on every call).

use clap::Subcommand;
use toolsmith_core::ApprovalDecision;
use toolsmith_service::ApprovalView;

use super::Ctx;
use crate::exit::SUCCESS;
use crate::output::{self, Block, Table};

#[derive(Debug, Subcommand)]
pub enum ApprovalsCommand {
    /// List the approvals waiting for a decision (with --all, decided and expired ones too).
    List {
        #[arg(long)]
        all: bool,
        /// At most this many, newest first.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1000))]
        limit: u32,
    },
    /// Show one approval, with the call's arguments.
    Show {
        /// The approval id (`apr_…`).
        id: String,
    },
    /// Allow this one call: made again with the same arguments, it runs once.
    Allow { id: String },
    /// Allow this call and every later call of the tool by the same caller.
    Always { id: String },
    /// Deny the call.
    Deny { id: String },
}

/// Runs an `approvals` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: ApprovalsCommand) -> anyhow::Result<u8> {
    let approvals = ctx.service.approvals();
    let (id, decision) = match command {
        ApprovalsCommand::List { all, limit } => {
            let list = approvals.list(None, !all, limit).await?;
            let views: Vec<ApprovalView> = list.iter().map(ApprovalView::of).collect();
            if ctx.json {
                output::json(&views)?;
            } else if views.is_empty() {
                output::stdout(if all {
                    "no approvals\n"
                } else {
                    "nothing waits for approval\n"
                })?;
            } else {
                let mut table = Table::new(&[
                    "ID",
                    "OWNER",
                    "TOOL",
                    "AGENT",
                    "STATUS",
                    "EXPIRES",
                    "ARGUMENTS",
                ]);
                for (view, record) in views.iter().zip(&list) {
                    table.row(vec![
                        view.id.clone(),
                        record.owner.clone(),
                        view.tool_name.clone(),
                        view.agent.clone().unwrap_or_else(|| "-".to_owned()),
                        view.status.to_string(),
                        output::time(&view.expires_at),
                        output::one_line(&view.arguments, 60),
                    ]);
                }
                output::stdout(&table.render())?;
            }
            return Ok(SUCCESS);
        }
        ApprovalsCommand::Show { id } => {
            let record = approvals.get(None, &id).await?;
            print_one(ctx, &record)?;
            return Ok(SUCCESS);
        }
        ApprovalsCommand::Allow { id } => (id, ApprovalDecision::AllowOnce),
        ApprovalsCommand::Always { id } => (id, ApprovalDecision::AllowAlways),
        ApprovalsCommand::Deny { id } => (id, ApprovalDecision::Deny),
    };
    let decided = approvals
        .decide_as(
            &ctx.actor,
            None,
            &id,
            decision,
            toolsmith_service::governance::approvals::Via::Cli,
        )
        .await?;
    print_one(ctx, &decided)?;
    Ok(SUCCESS)
}

fn print_one(ctx: &Ctx, record: &toolsmith_core::ApprovalRecord) -> anyhow::Result<()> {
    let view = ApprovalView::of(record);
    if ctx.json {
        return output::json(&view);
    }
    let mut block = Block::default();
    block
        .field("id", view.id.clone())
        .field("owner", record.owner.clone())
        .field("tool", view.tool_name.clone())
        .field(
            "agent",
            view.agent.clone().unwrap_or_else(|| "-".to_owned()),
        )
        .field("status", view.status.to_string())
        .field("arguments", view.arguments.clone())
        .field("created", output::time(&view.created_at))
        .field("expires", output::time(&view.expires_at));
    if let Some(decision) = view.decision {
        block.field("decision", decision.to_string());
    }
    if let Some(by) = &view.decided_by {
        block.field("decided by", by.clone());
    }
    output::stdout(&block.render())
}
