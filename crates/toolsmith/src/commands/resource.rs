//! `toolsmith resource …`: user-defined resources and resource templates (issue 40) — list,
//! show, create or replace one from a file, read a URI as MCP `resources/read` would, delete
//! one. The resources are those of `--user`, written by a person. A resource file is the REST
//! body of `POST /api/v1/resources` (`ResourceBodyIn`), as JSON or YAML, so there is one shape.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use serde_json::json;
use toolsmith_core::ToolContext;
use toolsmith_server::rest::resources::{ResourceBodyIn, StoredResource};
use toolsmith_service::resources::ResourceBody;

use super::Ctx;
use crate::exit::{CliError, SUCCESS};
use crate::output;

#[derive(Debug, Subcommand)]
pub enum ResourceCommand {
    /// Your resources and templates, by name.
    List,
    /// One resource or template, by name or id, with its content or code.
    Get { name: String },
    /// Create a resource or template from a file (JSON or YAML: name, uri or uriTemplate,
    /// description, mimeType, text, blob or code — the body of POST /api/v1/resources).
    Create {
        #[arg(long)]
        file: PathBuf,
    },
    /// Replace a resource or template by the one in a file (the next revision).
    Update {
        name: String,
        #[arg(long)]
        file: PathBuf,
    },
    /// Read a URI as an MCP client would (resources/read): a resource of yours, a URI one of
    /// your templates matches (its code runs), a workspace file or a tool's source.
    Read { uri: String },
    /// Delete a resource or template.
    Delete { name: String },
}

impl ResourceCommand {
    /// Whether the command only reads (a template's read runs code, but stores nothing).
    pub fn reads(&self) -> bool {
        matches!(
            self,
            ResourceCommand::List | ResourceCommand::Get { .. } | ResourceCommand::Read { .. }
        )
    }

    /// Whether the command may start a new store where none is.
    pub fn creates(&self) -> bool {
        matches!(self, ResourceCommand::Create { .. })
    }
}

/// A resource file, JSON or YAML, read as REST reads its body.
fn read_file(file: &Path) -> Result<ResourceBodyIn, CliError> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        CliError::Input(format!(
            "cannot read the resource file {}: {e}",
            file.display()
        ))
    })?;
    let json = serde_json::from_str::<ResourceBodyIn>(&text);
    let is_json = text.trim_start().starts_with('{');
    match json {
        Ok(body) => Ok(body),
        Err(e) if is_json => Err(e.to_string()),
        Err(_) => serde_norway::from_str::<ResourceBodyIn>(&text).map_err(|e| e.to_string()),
    }
    .map_err(|e| {
        CliError::Input(format!(
            "the resource file {} is not a resource: {e} (the body of POST /api/v1/resources, \
             as JSON or YAML; see docs/resources.md)",
            file.display()
        ))
    })
}

/// Runs a `resource` command; returns the exit code.
pub async fn run(ctx: &Ctx, command: ResourceCommand) -> anyhow::Result<u8> {
    let service = &ctx.service;
    let actor = &ctx.actor;
    let caller = ToolContext::new(actor.user_id.clone());
    let resources = match command {
        ResourceCommand::List => service.list_user_resources(&actor.user_id).await?,
        ResourceCommand::Get { name } => vec![service.get_user_resource(&caller, &name).await?],
        ResourceCommand::Create { file } => {
            let input = read_file(&file)?.into_input();
            vec![service.create_resource(actor, input).await?]
        }
        ResourceCommand::Update { name, file } => {
            let body = read_file(&file)?;
            let expected = body.expected_revision;
            vec![
                service
                    .update_resource(actor, &name, body.into_input(), expected)
                    .await?,
            ]
        }
        ResourceCommand::Delete { name } => vec![service.delete_resource(actor, &name).await?],
        ResourceCommand::Read { uri } => {
            let content = service.read_resource(caller, &uri).await?;
            let blob = content.body.base64();
            let value = match content.body {
                ResourceBody::Text(text) => {
                    json!({"uri": content.uri, "mimeType": content.mime_type, "text": text})
                }
                ResourceBody::Blob(_) => {
                    json!({"uri": content.uri, "mimeType": content.mime_type, "blob": blob})
                }
            };
            output::json(&value)?;
            return Ok(SUCCESS);
        }
    };
    let resources: Vec<StoredResource> = resources.into_iter().map(StoredResource::new).collect();
    if ctx.json {
        output::json(&resources)?;
        return Ok(SUCCESS);
    }
    let mut table = output::Table::new(&["NAME", "KIND", "URI", "MIME", "REVISION", "BY"]);
    for r in &resources {
        table.row(vec![
            r.name.clone(),
            r.kind.clone(),
            r.uri
                .clone()
                .or_else(|| r.uri_template.clone())
                .unwrap_or_default(),
            r.mime_type.clone().unwrap_or_default(),
            r.revision.to_string(),
            r.created_by.clone(),
        ]);
    }
    output::stdout(&format!("{}\n", table.render()))?;
    Ok(SUCCESS)
}
