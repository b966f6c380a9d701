//! `toolsmith config …`: the Config Center from the command line — list and show services
//! (values masked), add a service, set values of an entry, delete a service or an entry.
//!
//! `set` takes `FIELD=VALUE` pairs; `FIELD=@-` reads the value from stdin (so a secret never
//! appears in the shell history or the process list), `FIELD=@path` from a file.

use std::collections::BTreeMap;
use std::path::Path;

use clap::Subcommand;
use serde_json::Value;
use toolsmith_service::{EntryInput, ServiceInput, ServiceView};

use super::Ctx;
use crate::exit::SUCCESS;
use crate::{input, output};

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// List your services, their entries and what is missing (secrets masked).
    List,
    /// Show one service.
    Get {
        /// Service name or id.
        service: String,
    },
    /// Register a service (default fields: api_key, base_url).
    AddService {
        /// `^[a-z][a-z0-9_]*$`: the name tools use (`utils.getApiKey('NAME')`).
        name: String,
        #[arg(long)]
        display_name: Option<String>,
        #[arg(long)]
        description: Option<String>,
        #[arg(long)]
        docs_url: Option<String>,
        /// Several entries make sense (several accounts).
        #[arg(long)]
        multi_entry: bool,
    },
    /// Set values of an entry (created if needed; the service too, with default fields).
    Set {
        /// Service name or id.
        service: String,
        /// `FIELD=VALUE`; `FIELD=@-` reads stdin, `FIELD=@FILE` a file.
        #[arg(required = true, value_name = "FIELD=VALUE")]
        values: Vec<String>,
        /// The entry's label. [default: default]
        #[arg(long, default_value = "default")]
        entry: String,
    },
    /// Delete a service (with its entries), or one entry with --entry.
    Delete {
        /// Service name or id.
        service: String,
        #[arg(long)]
        entry: Option<String>,
    },
}

pub async fn run(ctx: &Ctx, command: ConfigCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    let actor = &ctx.actor;
    match command {
        ConfigCommand::List => {
            let services = service.config_services(actor).await?;
            if ctx.json {
                output::json(&services)?;
            } else if services.is_empty() {
                output::stdout("no config services\n")?;
            } else {
                for s in &services {
                    output::stdout(&describe(s))?;
                }
            }
        }
        ConfigCommand::Get { service: name } => {
            let found = service.config_service(actor, &name).await?;
            if ctx.json {
                output::json(&found)?;
            } else {
                output::stdout(&describe(&found))?;
            }
        }
        ConfigCommand::AddService {
            name,
            display_name,
            description,
            docs_url,
            multi_entry,
        } => {
            let created = service
                .create_config_service(
                    actor,
                    ServiceInput {
                        name,
                        display_name,
                        description,
                        docs_url,
                        multi_entry,
                        ..ServiceInput::default()
                    },
                )
                .await?;
            show(ctx, "created", &created)?;
        }
        ConfigCommand::Set {
            service: name,
            values,
            entry,
        } => {
            let values = parse_values(&values)?;
            let existing = match service.config_service(actor, &name).await {
                Ok(found) => found,
                Err(toolsmith_service::ServiceError::NotFound(_)) => {
                    service
                        .create_config_service(
                            actor,
                            ServiceInput {
                                name: name.clone(),
                                ..ServiceInput::default()
                            },
                        )
                        .await?
                }
                Err(e) => return Err(e.into()),
            };
            let input = EntryInput {
                label: Some(entry.clone()),
                is_default: None,
                values,
            };
            if existing.entries.iter().any(|e| e.label == entry) {
                let mut input = input;
                input.label = None;
                service
                    .update_config_entry(actor, &name, &entry, input, None)
                    .await?;
            } else {
                service.create_config_entry(actor, &name, input).await?;
            }
            let now = service.config_service(actor, &name).await?;
            show(ctx, "set", &now)?;
        }
        ConfigCommand::Delete {
            service: name,
            entry,
        } => match entry {
            Some(entry) => {
                service
                    .delete_config_entry(actor, &name, &entry, None)
                    .await?;
                output::stdout(&format!("deleted entry '{entry}' of '{name}'\n"))?;
            }
            None => {
                service.delete_config_service(actor, &name, None).await?;
                output::stdout(&format!("deleted config service '{name}'\n"))?;
            }
        },
    }
    Ok(SUCCESS)
}

fn parse_values(pairs: &[String]) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for pair in pairs {
        let Some((field, value)) = pair.split_once('=') else {
            anyhow::bail!("'{pair}' is not FIELD=VALUE");
        };
        let text = match value.strip_prefix('@') {
            Some(source) => input::read_text(Path::new(source), "value")?
                .trim_end_matches(['\n', '\r'])
                .to_owned(),
            None => value.to_owned(),
        };
        // Numbers and booleans for fields of those kinds; the service checks the kinds.
        let value = match text.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            t => t
                .parse::<serde_json::Number>()
                .ok()
                .filter(|_| !field.ends_with("key") && !field.ends_with("url"))
                .map_or_else(|| Value::String(text.clone()), Value::Number),
        };
        out.insert(field.to_owned(), value);
    }
    Ok(out)
}

fn show(ctx: &Ctx, verb: &str, service: &ServiceView) -> anyhow::Result<()> {
    if ctx.json {
        output::json(service)?;
    } else {
        output::stdout(&format!("{verb} {}", describe(service)))?;
    }
    Ok(())
}

fn describe(s: &ServiceView) -> String {
    let mut out = format!(
        "{} ({}){}\n",
        s.service.name,
        if s.configured {
            "configured"
        } else {
            "not configured"
        },
        if s.service.registered_by.is_empty() {
            String::new()
        } else {
            format!(", needed by {}", s.service.registered_by.join(", "))
        }
    );
    for e in &s.entries {
        let values: Vec<String> = e
            .values
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect();
        out.push_str(&format!(
            "  {}{}: {}{}\n",
            e.label,
            if e.is_default { " (default)" } else { "" },
            values.join(" "),
            if e.missing.is_empty() {
                String::new()
            } else {
                format!("  missing: {}", e.missing.join(", "))
            }
        ));
    }
    out
}
