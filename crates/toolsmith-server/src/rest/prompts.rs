//! Prompts made at runtime, over REST (issue 40): `/api/v1/prompts` — the caller's prompts
//! (list, create, read, replace, delete, enable, disable), their versions and rollback, and a
//! render (`POST /api/v1/prompts/{name}/render`: the messages MCP `prompts/get` would answer).
//! A person writes any of their prompts; a token bound to an agent is the model, which may not
//! change a prompt a person wrote and sees only prompts scoped to no agent or to itself.
//! The body is also the CLI's prompt file (`toolsmith prompt create --file F`, JSON or YAML).

use std::collections::HashMap;

use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use toolsmith_core::prompt::{
    PromptArgumentSpec, PromptContent, PromptDefinition, PromptMessageSpec, PromptRecord,
    PromptResource, PromptRole, PromptVersionRecord,
};
use toolsmith_service::prompts::{PromptInput, RenderedPrompt};
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// One argument of a prompt.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptArgumentBody {
    /// Its name in the templates (`{{ name }}`).
    #[schema(min_length = 1, max_length = 64, pattern = "^[A-Za-z_][A-Za-z0-9_]*$")]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
    /// Values `completion/complete` offers, filtered by what the user typed.
    #[serde(default)]
    pub values: Vec<String>,
}

/// The resource a message embeds: `text` (a template, as `uri` is) or `blob` (base64).
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptResourceBody {
    #[schema(min_length = 1)]
    pub uri: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// A message's content, in MCP's content-block shapes.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum PromptContentBody {
    /// Text; a Jinja template over the arguments.
    Text { text: String },
    /// An image, base64.
    Image {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64.
    Audio {
        data: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// An embedded resource.
    Resource { resource: PromptResourceBody },
}

/// One message of a prompt.
#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptMessageBody {
    /// `user` or `assistant`.
    #[schema(pattern = "^(user|assistant)$")]
    pub role: String,
    pub content: PromptContentBody,
}

/// A prompt, as written (create, replace, and the CLI's prompt files).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PromptBody {
    /// Unique among your prompts; lowercase letters, digits and `_`.
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z][a-z0-9_]*$")]
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub arguments: Vec<PromptArgumentBody>,
    #[schema(min_items = 1, max_items = 100)]
    pub messages: Vec<PromptMessageBody>,
    /// The one agent of yours that sees it (default: you and all your agents).
    #[serde(default)]
    pub agent: Option<String>,
    /// Offered over MCP (default `true`).
    #[serde(default = "on")]
    pub enabled: bool,
    /// On a replace: the revision you read (409 naming both when it moved on).
    #[serde(default, deserialize_with = "super::types::optional_integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

fn on() -> bool {
    true
}

fn bad_body(message: String) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "invalid_body", message)
}

impl PromptBody {
    /// The service's input.
    pub fn into_input(self) -> Result<PromptInput, ApiError> {
        let mut messages = Vec::with_capacity(self.messages.len());
        for (i, m) in self.messages.into_iter().enumerate() {
            let role = match m.role.as_str() {
                "user" => PromptRole::User,
                "assistant" => PromptRole::Assistant,
                other => {
                    return Err(bad_body(format!(
                        "messages[{i}].role: 'user' or 'assistant', not '{other}'"
                    )));
                }
            };
            messages.push(PromptMessageSpec {
                role,
                content: m.content.into(),
            });
        }
        Ok(PromptInput {
            name: self.name,
            agent: self.agent,
            enabled: self.enabled,
            definition: PromptDefinition {
                title: self.title,
                description: self.description,
                arguments: self
                    .arguments
                    .into_iter()
                    .map(|a| PromptArgumentSpec {
                        name: a.name,
                        title: a.title,
                        description: a.description,
                        required: a.required,
                        values: a.values,
                    })
                    .collect(),
                messages,
            },
        })
    }
}

impl From<PromptContentBody> for PromptContent {
    fn from(body: PromptContentBody) -> PromptContent {
        match body {
            PromptContentBody::Text { text } => PromptContent::Text { text },
            PromptContentBody::Image { data, mime_type } => {
                PromptContent::Image { data, mime_type }
            }
            PromptContentBody::Audio { data, mime_type } => {
                PromptContent::Audio { data, mime_type }
            }
            PromptContentBody::Resource { resource: r } => PromptContent::Resource {
                resource: PromptResource {
                    uri: r.uri,
                    mime_type: r.mime_type,
                    text: r.text,
                    blob: r.blob,
                },
            },
        }
    }
}

impl From<PromptContent> for PromptContentBody {
    fn from(content: PromptContent) -> PromptContentBody {
        match content {
            PromptContent::Text { text } => PromptContentBody::Text { text },
            PromptContent::Image { data, mime_type } => {
                PromptContentBody::Image { data, mime_type }
            }
            PromptContent::Audio { data, mime_type } => {
                PromptContentBody::Audio { data, mime_type }
            }
            PromptContent::Resource { resource: r } => PromptContentBody::Resource {
                resource: PromptResourceBody {
                    uri: r.uri,
                    mime_type: r.mime_type,
                    text: r.text,
                    blob: r.blob,
                },
            },
        }
    }
}

fn message_bodies(messages: Vec<PromptMessageSpec>) -> Vec<PromptMessageBody> {
    messages
        .into_iter()
        .map(|m| PromptMessageBody {
            role: match m.role {
                PromptRole::User => "user".to_owned(),
                PromptRole::Assistant => "assistant".to_owned(),
            },
            content: m.content.into(),
        })
        .collect()
}

/// A stored prompt.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Prompt {
    /// `prm_<32 hex>`.
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    pub arguments: Vec<PromptArgumentBody>,
    pub messages: Vec<PromptMessageBody>,
    /// The one agent that sees it (absent: you and all your agents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    pub enabled: bool,
    /// Who wrote the current revision: `user` (a person) or `llm` (a model).
    pub created_by: String,
    /// 1, then one more at each change (a switch on or off included).
    pub revision: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

fn argument_bodies(arguments: Vec<PromptArgumentSpec>) -> Vec<PromptArgumentBody> {
    arguments
        .into_iter()
        .map(|a| PromptArgumentBody {
            name: a.name,
            title: a.title,
            description: a.description,
            required: a.required,
            values: a.values,
        })
        .collect()
}

impl Prompt {
    pub fn new(p: PromptRecord) -> Prompt {
        let d = p.definition;
        Prompt {
            id: p.id,
            name: p.name,
            title: d.title,
            description: d.description,
            arguments: argument_bodies(d.arguments),
            messages: message_bodies(d.messages),
            agent: p.agent,
            enabled: p.enabled,
            created_by: p.created_by.as_str().to_owned(),
            revision: p.revision,
            created_at: p.created_at,
            updated_at: p.updated_at,
        }
    }
}

/// Your prompts, by name.
#[derive(Debug, Serialize, ToSchema)]
pub struct PromptList {
    pub prompts: Vec<Prompt>,
    pub count: usize,
}

/// One kept version of a prompt's definition.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptVersion {
    pub revision: i64,
    pub created_by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    pub arguments: Vec<PromptArgumentBody>,
    pub messages: Vec<PromptMessageBody>,
    /// The fields that differ from the version before (empty for the first).
    pub changed: Vec<String>,
    pub created_at: DateTime<Utc>,
}

/// Every kept version, oldest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct PromptVersionList {
    pub versions: Vec<PromptVersion>,
    pub count: usize,
}

fn versions_of(records: Vec<PromptVersionRecord>) -> Vec<PromptVersion> {
    let mut out = Vec::with_capacity(records.len());
    let mut before: Option<PromptDefinition> = None;
    for v in records {
        let changed = before.as_ref().map_or_else(Vec::new, |b| {
            toolsmith_service::prompts::changed_fields(b, &v.definition)
                .into_iter()
                .map(str::to_owned)
                .collect()
        });
        before = Some(v.definition.clone());
        let d = v.definition;
        out.push(PromptVersion {
            revision: v.revision,
            created_by: v.created_by.as_str().to_owned(),
            title: d.title,
            description: d.description,
            arguments: argument_bodies(d.arguments),
            messages: message_bodies(d.messages),
            changed,
            created_at: v.created_at,
        });
    }
    out
}

/// Brings back a version.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptRollbackBody {
    #[schema(minimum = 1)]
    pub revision: i64,
}

/// Renders a prompt.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptRenderBody {
    /// The arguments, by name (strings, as MCP gives them).
    #[serde(default)]
    pub arguments: HashMap<String, String>,
}

/// A prompt's messages rendered from arguments: what MCP `prompts/get` answers.
#[derive(Debug, Serialize, ToSchema)]
pub struct RenderedPromptBody {
    pub description: String,
    pub messages: Vec<PromptMessageBody>,
}

impl From<RenderedPrompt> for RenderedPromptBody {
    fn from(r: RenderedPrompt) -> RenderedPromptBody {
        RenderedPromptBody {
            description: r.description,
            messages: message_bodies(r.messages),
        }
    }
}

pub type PromptEnvelope = Envelope<Prompt>;
pub type PromptListEnvelope = Envelope<PromptList>;
pub type PromptVersionListEnvelope = Envelope<PromptVersionList>;
pub type RenderedPromptEnvelope = Envelope<RenderedPromptBody>;

/// Your prompts
///
/// Every prompt you see (enabled or not), by name: a token bound to an agent sees those scoped
/// to no agent or to itself.
#[utoipa::path(
    get, path = "/api/v1/prompts", tag = "prompts", operation_id = "listPrompts",
    responses((status = 200, description = "`{prompts, count}`", body = inline(PromptListEnvelope)))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<PromptList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let prompts: Vec<Prompt> = state
        .service
        .list_prompts(&identity.tool_context())
        .await?
        .into_iter()
        .map(Prompt::new)
        .collect();
    Ok(ApiOk::ok(PromptList {
        count: prompts.len(),
        prompts,
    }))
}

/// Create a prompt
///
/// Stores a prompt (revision 1), offered at once over MCP (`prompts/list`, with
/// `notifications/prompts/list_changed` to your sessions). Its templates must compile and use
/// only declared arguments.
#[utoipa::path(
    post, path = "/api/v1/prompts", tag = "prompts", operation_id = "createPrompt",
    request_body = PromptBody,
    responses(
        (status = 201, description = "The prompt", body = inline(PromptEnvelope)),
        (status = 409, description = "You have a prompt of that name", body = super::error::ErrorEnvelope),
        (status = 422, description = "The definition breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<PromptBody>,
) -> Result<ApiOk<Prompt>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let prompt = state
        .service
        .create_prompt(&actor(&identity), body.into_input()?)
        .await?;
    Ok(ApiOk::created(Prompt::new(prompt)))
}

/// One prompt
#[utoipa::path(
    get, path = "/api/v1/prompts/{name}", tag = "prompts", operation_id = "getPrompt",
    params(("name" = String, Path, description = "The prompt's name or id")),
    responses(
        (status = 200, description = "The prompt", body = inline(PromptEnvelope)),
        (status = 404, description = "No such prompt of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiOk<Prompt>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let prompt = state
        .service
        .get_prompt(&identity.tool_context(), &name)
        .await?;
    Ok(ApiOk::ok(Prompt::new(prompt)))
}

/// Replace a prompt
///
/// The whole prompt, as at its creation: the next revision, its definition kept as a version.
#[utoipa::path(
    put, path = "/api/v1/prompts/{name}", tag = "prompts", operation_id = "replacePrompt",
    params(("name" = String, Path, description = "The prompt's name or id")),
    request_body = PromptBody,
    responses(
        (status = 200, description = "The prompt at its new revision", body = inline(PromptEnvelope)),
        (status = 403, description = "A model may not change a prompt a person wrote", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such prompt of yours", body = super::error::ErrorEnvelope),
        (status = 409, description = "The name is taken, or `expectedRevision` is stale", body = super::error::ErrorEnvelope),
        (status = 422, description = "The definition breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn replace(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    ApiJson(body): ApiJson<PromptBody>,
) -> Result<ApiOk<Prompt>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    let expected = body.expected_revision;
    let prompt = state
        .service
        .update_prompt(&actor(&identity), &name, body.into_input()?, expected)
        .await?;
    Ok(ApiOk::ok(Prompt::new(prompt)))
}

/// Delete a prompt
///
/// The prompt and its versions go.
#[utoipa::path(
    delete, path = "/api/v1/prompts/{name}", tag = "prompts", operation_id = "deletePrompt",
    params(("name" = String, Path, description = "The prompt's name or id")),
    responses(
        (status = 200, description = "The prompt as it was", body = inline(PromptEnvelope)),
        (status = 403, description = "A model may not delete a prompt a person wrote", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such prompt of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiOk<Prompt>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    let prompt = state
        .service
        .delete_prompt(&actor(&identity), &name)
        .await?;
    Ok(ApiOk::ok(Prompt::new(prompt)))
}

/// Switch a prompt on
///
/// Offered over MCP again; switching on an enabled prompt changes nothing.
#[utoipa::path(
    post, path = "/api/v1/prompts/{name}/enable", tag = "prompts", operation_id = "enablePrompt",
    params(("name" = String, Path, description = "The prompt's name or id")),
    responses(
        (status = 200, description = "The prompt", body = inline(PromptEnvelope)),
        (status = 404, description = "No such prompt of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn enable(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiOk<Prompt>, ApiError> {
    switch(state, identity, name, true).await
}

/// Switch a prompt off
///
/// Kept, but no longer listed or served over MCP.
#[utoipa::path(
    post, path = "/api/v1/prompts/{name}/disable", tag = "prompts", operation_id = "disablePrompt",
    params(("name" = String, Path, description = "The prompt's name or id")),
    responses(
        (status = 200, description = "The prompt", body = inline(PromptEnvelope)),
        (status = 404, description = "No such prompt of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn disable(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiOk<Prompt>, ApiError> {
    switch(state, identity, name, false).await
}

async fn switch(
    state: AppState,
    identity: Identity,
    name: String,
    enabled: bool,
) -> Result<ApiOk<Prompt>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    let prompt = state
        .service
        .set_prompt_enabled(&actor(&identity), &name, enabled)
        .await?;
    Ok(ApiOk::ok(Prompt::new(prompt)))
}

/// A prompt's versions
///
/// Every kept version of its definition, oldest first, each with the fields that changed.
#[utoipa::path(
    get, path = "/api/v1/prompts/{name}/versions", tag = "prompts", operation_id = "listPromptVersions",
    params(("name" = String, Path, description = "The prompt's name or id")),
    responses(
        (status = 200, description = "`{versions, count}`", body = inline(PromptVersionListEnvelope)),
        (status = 404, description = "No such prompt of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn versions(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiOk<PromptVersionList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let versions = versions_of(
        state
            .service
            .prompt_versions(&identity.tool_context(), &name)
            .await?,
    );
    Ok(ApiOk::ok(PromptVersionList {
        count: versions.len(),
        versions,
    }))
}

/// Roll a prompt back
///
/// Brings back the definition of `revision` as the next revision.
#[utoipa::path(
    post, path = "/api/v1/prompts/{name}/rollback", tag = "prompts", operation_id = "rollbackPrompt",
    params(("name" = String, Path, description = "The prompt's name or id")),
    request_body = PromptRollbackBody,
    responses(
        (status = 200, description = "The prompt at its new revision", body = inline(PromptEnvelope)),
        (status = 404, description = "No such prompt of yours, or no such version", body = super::error::ErrorEnvelope)
    )
)]
pub async fn rollback(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    ApiJson(body): ApiJson<PromptRollbackBody>,
) -> Result<ApiOk<Prompt>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    let prompt = state
        .service
        .rollback_prompt(&actor(&identity), &name, body.revision)
        .await?;
    Ok(ApiOk::ok(Prompt::new(prompt)))
}

/// Render a prompt
///
/// Its messages rendered from `arguments`, as MCP `prompts/get` answers them (a disabled prompt
/// renders too: a preview). A missing required argument, or one it does not declare, is 422
/// naming it.
#[utoipa::path(
    post, path = "/api/v1/prompts/{name}/render", tag = "prompts", operation_id = "renderPrompt",
    params(("name" = String, Path, description = "The prompt's name or id")),
    request_body = PromptRenderBody,
    responses(
        (status = 200, description = "`{description, messages}`", body = inline(RenderedPromptEnvelope)),
        (status = 404, description = "No such prompt of yours", body = super::error::ErrorEnvelope),
        (status = 422, description = "A missing or unknown argument (named), or a template that fails", body = super::error::ErrorEnvelope)
    )
)]
pub async fn render(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    ApiJson(body): ApiJson<PromptRenderBody>,
) -> Result<ApiOk<RenderedPromptBody>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let rendered = state
        .service
        .render_prompt(&identity.tool_context(), &name, &body.arguments)
        .await?;
    Ok(ApiOk::ok(rendered.into()))
}
