//! `toolsmith token …`: API tokens for `toolsmith serve`.
//!
//! A token belongs to a user (the global `--user`) and carries scopes. Only its SHA-256 is
//! stored; the token itself is printed once, at creation. Once any token exists, the server
//! requires one on every request (health probes excepted).

use clap::Subcommand;
use serde_json::json;
use toolsmith_server::auth::{Scope, new_token};

use super::Ctx;
use crate::output::{self, Table};

/// The `token` command group.
#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token for the user given by --user and print it (shown only this once).
    Create {
        /// Comma-separated scopes: tools:read, tools:write, tools:execute, admin.
        #[arg(long, value_delimiter = ',', required = true, value_parser = Scope::parse)]
        scopes: Vec<Scope>,
        /// A label to recognise the token by.
        #[arg(long, default_value = "cli")]
        name: String,
        /// The agent every request with this token acts as: selects the agent's policy and
        /// per-agent tools, and cannot be overridden by a header.
        #[arg(long, value_parser = parse_agent)]
        agent: Option<String>,
    },
    /// List every token (never the secrets).
    List,
    /// Revoke a token by its id (`tok_…`).
    Revoke {
        /// The token id, as `token list` shows it.
        id: String,
    },
}

/// Runs a `token` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: TokenCommand) -> anyhow::Result<u8> {
    match command {
        TokenCommand::Create {
            scopes,
            name,
            agent,
        } => {
            let (record, secret) = new_token(&ctx.actor.user_id, &name, &scopes, agent.as_deref());
            ctx.service.create_token(&ctx.actor, &record).await?;
            if ctx.json {
                output::json(&json!({
                    "id": record.id, "user": record.user_id, "name": record.name,
                    "scopes": record.scopes, "agent": record.agent_id, "token": secret,
                }))?;
            } else {
                output::stdout(&format!(
                    "created token {} for user '{}' with scopes {}\n{secret}\nStore it now: it is not shown again.\n",
                    record.id,
                    record.user_id,
                    record.scopes.join(",")
                ))?;
            }
            Ok(0)
        }
        TokenCommand::List => {
            let tokens = ctx.service.list_tokens().await?;
            if ctx.json {
                let list: Vec<_> = tokens
                    .iter()
                    .map(|t| {
                        json!({
                            "id": t.id, "user": t.user_id, "name": t.name, "scopes": t.scopes,
                            "agent": t.agent_id, "createdAt": t.created_at, "lastUsedAt": t.last_used_at,
                        })
                    })
                    .collect();
                output::json(&list)?;
            } else if tokens.is_empty() {
                output::stdout(
                    "no API tokens: the server accepts requests without one (loopback only)\n",
                )?;
            } else {
                let mut table = Table::new(&[
                    "ID",
                    "USER",
                    "AGENT",
                    "NAME",
                    "SCOPES",
                    "CREATED",
                    "LAST USED",
                ]);
                for t in &tokens {
                    table.row(vec![
                        t.id.clone(),
                        t.user_id.clone(),
                        t.agent_id.clone().unwrap_or_else(|| "-".to_owned()),
                        t.name.clone(),
                        t.scopes.join(","),
                        output::time(&t.created_at),
                        t.last_used_at
                            .as_ref()
                            .map_or_else(|| "never".to_owned(), output::time),
                    ]);
                }
                output::stdout(&table.render())?;
            }
            Ok(0)
        }
        TokenCommand::Revoke { id } => {
            if !ctx.service.revoke_token(&ctx.actor, &id).await? {
                return Err(
                    crate::exit::CliError::NotFound(format!("no API token with id {id}")).into(),
                );
            }
            if ctx.json {
                output::json(&json!({"revoked": id}))?;
            } else {
                output::stdout(&format!("revoked token {id}\n"))?;
            }
            Ok(0)
        }
    }
}

/// An agent id: 1 to 128 letters, digits, `_`, `-`, `.` or `:`.
fn parse_agent(text: &str) -> Result<String, String> {
    let ok = !text.is_empty()
        && text.len() <= 128
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'));
    if ok {
        Ok(text.to_owned())
    } else {
        Err("an agent id is 1 to 128 letters, digits, '_', '-', '.' or ':'".to_owned())
    }
}
