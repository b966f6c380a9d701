//! `toolsmith policy …`: the policy in force, replacing the stored one from a file, clearing it.
//!
//! The file holds what the `[policy]` table of the configuration file holds (TOML, or the same
//! as JSON). A stored policy wins over the configuration file's; a running server sharing the
//! store puts it in force within its poll interval. `show` here knows only the stored policy
//! (the configuration file is the server's).

use std::path::PathBuf;

use clap::Subcommand;
use serde_json::Value;

use super::Ctx;
use crate::exit::SUCCESS;
use crate::{input, output};

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print the policy in force and where it comes from (store, file or none).
    Show,
    /// Replace the stored policy with the one in FILE (`.toml` or `.json`; `-` reads JSON from
    /// stdin). An unknown profile or group is refused and nothing changes.
    Set {
        file: PathBuf,
        /// Apply only if the stored policy is at this revision (0: none stored yet).
        #[arg(long)]
        expected_revision: Option<i64>,
    },
    /// Remove the stored policy: the configuration file's (or none) is in force again.
    Clear,
}

/// Runs a `policy` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: PolicyCommand) -> anyhow::Result<u8> {
    let view = match command {
        PolicyCommand::Show => ctx.service.policy_view().await?,
        PolicyCommand::Set {
            file,
            expected_revision,
        } => {
            let text = input::read_text(&file, "the policy file")?;
            let is_toml = file.extension().is_some_and(|e| e == "toml");
            let document: Value = if is_toml {
                toml::from_str(&text)
                    .map_err(|e| crate::exit::CliError::Input(format!("{}: {e}", file.display())))?
            } else {
                serde_json::from_str(&text)
                    .map_err(|e| crate::exit::CliError::Input(format!("{}: {e}", file.display())))?
            };
            ctx.service
                .set_policy(&ctx.actor, document, expected_revision)
                .await?
        }
        PolicyCommand::Clear => ctx.service.clear_policy(&ctx.actor, None).await?,
    };
    if ctx.json {
        output::json(&view)?;
    } else {
        output::stdout(&format!(
            "source: {} (revision {})\n{}\n",
            view.source,
            view.revision,
            output::pretty(&view.policy)
        ))?;
    }
    Ok(SUCCESS)
}
