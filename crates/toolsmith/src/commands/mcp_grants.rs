//! `toolsmith mcp-grants …`: who may use which bridged MCP server's tools once `mcp_grants` is
//! on — the grants, and the access requests users file and an admin decides (the CLI is the
//! local operator, as for tokens; `--user` files a request as that user).

use clap::{Subcommand, ValueEnum};
use toolsmith_core::mcp_bridge::{AccessRequestRecord, AccessRequestStatus, GrantSubject};
use toolsmith_service::bridge::{AccessRequestInput, GrantInput};

use super::Ctx;
use crate::exit::SUCCESS;
use crate::output::{self, Table};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Kind {
    User,
    Agent,
}

impl From<Kind> for GrantSubject {
    fn from(kind: Kind) -> GrantSubject {
        match kind {
            Kind::User => GrantSubject::User,
            Kind::Agent => GrantSubject::Agent,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum McpGrantsCommand {
    /// Every grant.
    List,
    /// Create the grant of a server to a user or agent, or replace theirs.
    Set {
        server: String,
        #[arg(value_enum)]
        kind: Kind,
        subject: String,
        /// Only this upstream tool (repeat); none: all.
        #[arg(long = "allow")]
        tool_allow: Vec<String>,
        /// Never this upstream tool (repeat; wins).
        #[arg(long = "deny")]
        tool_deny: Vec<String>,
        /// Store it switched off.
        #[arg(long)]
        disabled: bool,
    },
    /// Remove a grant by id.
    Remove { id: String },
    /// Access requests, newest first.
    Requests {
        /// Only `pending`, `approved` or `rejected` ones.
        #[arg(long)]
        status: Option<String>,
    },
    /// File a request for a server's tools (as --user, for that user or an agent).
    Request {
        server: String,
        /// The upstream tools (repeat); none: the whole server.
        #[arg(long = "tool")]
        tools: Vec<String>,
        /// For this agent instead of the user.
        #[arg(long)]
        agent: Option<String>,
        #[arg(long, default_value = "")]
        reason: String,
    },
    /// Approve a pending request: its grant is written in the same step.
    Approve { id: String },
    /// Reject a pending request.
    Reject { id: String },
}

/// Runs an `mcp-grants` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: McpGrantsCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    match command {
        McpGrantsCommand::List => {
            let grants = service.mcp_grants().await?;
            if ctx.json {
                output::json(&grants)?;
            } else {
                let mut table =
                    Table::new(&["ID", "SERVER", "SUBJECT", "ENABLED", "ALLOW", "DENY"]);
                for g in &grants {
                    table.row(vec![
                        g.id.clone(),
                        g.server.clone(),
                        format!("{} {}", g.subject_kind.as_str(), g.subject),
                        g.enabled.to_string(),
                        if g.tool_allow.is_empty() {
                            "*".to_owned()
                        } else {
                            g.tool_allow.join(",")
                        },
                        g.tool_deny.join(","),
                    ]);
                }
                output::stdout(&table.render())?;
            }
        }
        McpGrantsCommand::Set {
            server,
            kind,
            subject,
            tool_allow,
            tool_deny,
            disabled,
        } => {
            let input = GrantInput {
                server,
                subject_kind: kind.into(),
                subject,
                enabled: !disabled,
                tool_allow,
                tool_deny,
            };
            let grant = service.put_mcp_grant(&ctx.actor, input).await?;
            if ctx.json {
                output::json(&grant)?;
            } else {
                output::stdout(&format!("granted {} ({})\n", grant.server, grant.id))?;
            }
        }
        McpGrantsCommand::Remove { id } => {
            service.delete_mcp_grant(&ctx.actor, &id).await?;
            if ctx.json {
                output::json(&serde_json::json!({"deleted": id}))?;
            } else {
                output::stdout(&format!("removed grant {id}\n"))?;
            }
        }
        McpGrantsCommand::Requests { status } => {
            let status = status
                .map(|s| {
                    AccessRequestStatus::parse(&s).ok_or_else(|| {
                        crate::exit::CliError::Input(
                            "--status must be pending, approved or rejected".to_owned(),
                        )
                    })
                })
                .transpose()?;
            let requests = service
                .mcp_access_requests(&ctx.actor, status, false)
                .await?;
            if ctx.json {
                output::json(&requests)?;
            } else {
                output::stdout(&requests_table(&requests))?;
            }
        }
        McpGrantsCommand::Request {
            server,
            tools,
            agent,
            reason,
        } => {
            let (subject_kind, subject) = match agent {
                Some(agent) => (GrantSubject::Agent, agent),
                None => (GrantSubject::User, ctx.actor.user_id.clone()),
            };
            let input = AccessRequestInput {
                server,
                subject_kind,
                subject,
                tools,
                reason,
            };
            let request = service.request_mcp_access(&ctx.actor, input).await?;
            decided(ctx, &request, "filed request")?;
        }
        McpGrantsCommand::Approve { id } => {
            let request = service.decide_mcp_access(&ctx.actor, &id, true).await?;
            decided(ctx, &request, "approved")?;
        }
        McpGrantsCommand::Reject { id } => {
            let request = service.decide_mcp_access(&ctx.actor, &id, false).await?;
            decided(ctx, &request, "rejected")?;
        }
    }
    Ok(SUCCESS)
}

fn decided(ctx: &Ctx, request: &AccessRequestRecord, what: &str) -> anyhow::Result<()> {
    if ctx.json {
        output::json(request)
    } else {
        output::stdout(&format!(
            "{what} {} ({} {} on {}){}\n",
            request.id,
            request.subject_kind.as_str(),
            request.subject,
            request.server,
            request
                .grant_id
                .as_ref()
                .map(|g| format!("; grant {g}"))
                .unwrap_or_default()
        ))
    }
}

fn requests_table(requests: &[AccessRequestRecord]) -> String {
    let mut table = Table::new(&["ID", "SERVER", "SUBJECT", "TOOLS", "STATUS", "BY", "REASON"]);
    for r in requests {
        table.row(vec![
            r.id.clone(),
            r.server.clone(),
            format!("{} {}", r.subject_kind.as_str(), r.subject),
            if r.tools.is_empty() {
                "*".to_owned()
            } else {
                r.tools.join(",")
            },
            r.status.as_str().to_owned(),
            r.requested_by.clone(),
            r.reason.clone(),
        ]);
    }
    table.render()
}
