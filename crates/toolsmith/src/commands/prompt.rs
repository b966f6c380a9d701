//! `toolsmith prompt …`: prompts made at runtime (issue 40) — list, show, create or replace one
//! from a file, switch one on or off, its versions, roll it back, render it, delete it. The
//! prompts are those of `--user`, written by a person. A prompt file is the REST body of
//! `POST /api/v1/prompts` (`PromptBody`), as JSON or YAML, so there is one shape.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clap::Subcommand;
use toolsmith_core::ToolContext;
use toolsmith_server::rest::prompts::{Prompt, PromptBody, RenderedPromptBody};

use super::Ctx;
use crate::exit::{CliError, SUCCESS};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum PromptCommand {
    /// Your prompts, by name.
    List,
    /// One prompt, by name or id.
    Get { name: String },
    /// Create a prompt from a file (JSON or YAML: name, title, description, arguments,
    /// messages — the body of POST /api/v1/prompts).
    Create {
        #[arg(long)]
        file: PathBuf,
    },
    /// Replace a prompt by the one in a file (a new version).
    Update {
        name: String,
        #[arg(long)]
        file: PathBuf,
    },
    /// Switch a prompt on (offered over MCP).
    Enable { name: String },
    /// Switch a prompt off (kept, not offered).
    Disable { name: String },
    /// Every kept version of a prompt, oldest first.
    History { name: String },
    /// Bring back the definition of a version, as a new version.
    Rollback {
        name: String,
        #[arg(long)]
        revision: i64,
    },
    /// Render a prompt's messages from arguments (`--arg key=value`, repeated).
    Render {
        name: String,
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
    },
    /// Delete a prompt and its versions.
    Delete { name: String },
}

impl PromptCommand {
    /// Whether the command only reads.
    pub fn reads(&self) -> bool {
        matches!(
            self,
            PromptCommand::List
                | PromptCommand::Get { .. }
                | PromptCommand::History { .. }
                | PromptCommand::Render { .. }
        )
    }
}

/// A prompt file, JSON or YAML, read as REST reads its body.
fn read_file(file: &Path) -> Result<PromptBody, CliError> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        CliError::Input(format!(
            "cannot read the prompt file {}: {e}",
            file.display()
        ))
    })?;
    let json = serde_json::from_str::<PromptBody>(&text);
    let is_json = text.trim_start().starts_with('{');
    match json {
        Ok(body) => Ok(body),
        Err(e) if is_json => Err(e.to_string()),
        Err(_) => serde_norway::from_str::<PromptBody>(&text).map_err(|e| e.to_string()),
    }
    .map_err(|e| {
        CliError::Input(format!(
            "the prompt file {} is not a prompt: {e} (the body of POST /api/v1/prompts, as \
             JSON or YAML; see docs/prompts.md)",
            file.display()
        ))
    })
}

fn arguments(pairs: &[String]) -> Result<HashMap<String, String>, CliError> {
    pairs
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .ok_or_else(|| CliError::Input(format!("--arg '{pair}': write it as KEY=VALUE")))
        })
        .collect()
}

fn into_input(body: PromptBody) -> anyhow::Result<toolsmith_service::prompts::PromptInput> {
    body.into_input()
        .map_err(|e| CliError::Input(e.message().to_owned()).into())
}

/// Runs a `prompt` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: PromptCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    let actor = &ctx.actor;
    let caller = ToolContext::new(actor.user_id.clone());
    let prompts = match command {
        PromptCommand::List => service.list_prompts(&caller).await?,
        PromptCommand::Get { name } => vec![service.get_prompt(&caller, &name).await?],
        PromptCommand::Create { file } => {
            let input = into_input(read_file(&file)?)?;
            vec![service.create_prompt(actor, input).await?]
        }
        PromptCommand::Update { name, file } => {
            let body = read_file(&file)?;
            let expected = body.expected_revision;
            let input = into_input(body)?;
            vec![service.update_prompt(actor, &name, input, expected).await?]
        }
        PromptCommand::Enable { name } => {
            vec![service.set_prompt_enabled(actor, &name, true).await?]
        }
        PromptCommand::Disable { name } => {
            vec![service.set_prompt_enabled(actor, &name, false).await?]
        }
        PromptCommand::Rollback { name, revision } => {
            vec![service.rollback_prompt(actor, &name, revision).await?]
        }
        PromptCommand::Delete { name } => vec![service.delete_prompt(actor, &name).await?],
        PromptCommand::History { name } => {
            let versions = service.prompt_versions(&caller, &name).await?;
            if ctx.json {
                output::json(&versions)?;
                return Ok(SUCCESS);
            }
            let mut table = output::Table::new(&["REVISION", "BY", "CREATED", "DESCRIPTION"]);
            for v in &versions {
                table.row(vec![
                    v.revision.to_string(),
                    v.created_by.as_str().to_owned(),
                    v.created_at.to_rfc3339(),
                    v.definition.description.clone(),
                ]);
            }
            output::stdout(&format!("{}\n", table.render()))?;
            return Ok(SUCCESS);
        }
        PromptCommand::Render { name, args } => {
            let rendered: RenderedPromptBody = service
                .render_prompt(&caller, &name, &arguments(&args)?)
                .await?
                .into();
            output::json(&rendered)?;
            return Ok(SUCCESS);
        }
    };
    let prompts: Vec<Prompt> = prompts.into_iter().map(Prompt::new).collect();
    if ctx.json {
        output::json(&prompts)?;
        return Ok(SUCCESS);
    }
    let mut table = output::Table::new(&["NAME", "ENABLED", "ARGUMENTS", "REVISION", "BY"]);
    for p in &prompts {
        table.row(vec![
            p.name.clone(),
            p.enabled.to_string(),
            p.arguments
                .iter()
                .map(|a| a.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
            p.revision.to_string(),
            p.created_by.clone(),
        ]);
    }
    output::stdout(&format!("{}\n", table.render()))?;
    Ok(SUCCESS)
}
