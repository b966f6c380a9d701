//! User-defined resources over REST (issue 40): `/api/v1/resources` — the caller's resources
//! (a stored text or blob under a URI) and resource templates (an RFC 6570 URI template whose
//! content a JS function computes): list, create, read, replace, delete. MCP serves them
//! (`resources/list`, `resources/read`, `resources/templates/list`, subscriptions). A person
//! writes any of their resources; a token bound to an agent is the model, which may not change
//! or delete one a person wrote, and whose templates' runs need approval as its tools' do.
//! The body is also the CLI's resource file (`toolsmith resource create --file F`).

use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use toolsmith_service::resources::user::{ResourceInput, UserResource, UserResourceBody};
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// A resource or a template, as written (create, replace, and the CLI's resource files).
/// Exactly one of `uri` (a resource, with exactly one of `text` and `blob`) and `uriTemplate`
/// (a template, with `code`).
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceBodyIn {
    /// Unique among your resources; lowercase letters, digits and `_`.
    #[schema(min_length = 1, max_length = 64, pattern = "^[a-z][a-z0-9_]*$")]
    pub name: String,
    /// A resource's URI, any scheme but `toolsmith:` (`test://static-text`).
    #[serde(default)]
    #[schema(min_length = 1, max_length = 2048)]
    pub uri: Option<String>,
    /// A template's RFC 6570 URI template: `{var}` (one path segment) and `{+var}` (may hold
    /// `/`), e.g. `test://template/{id}/data`.
    #[serde(default)]
    #[schema(min_length = 1, max_length = 2048)]
    pub uri_template: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    /// Default: `text/plain` (text), `application/octet-stream` (blob); a template's by what
    /// its code returns (a string: `text/plain`, anything else: `application/json`).
    #[serde(default)]
    pub mime_type: Option<String>,
    /// A resource's text (at most 512 KiB).
    #[serde(default)]
    pub text: Option<String>,
    /// A resource's bytes, standard base64 (at most 512 KiB decoded).
    #[serde(default)]
    pub blob: Option<String>,
    /// A template's code: the body of a JS function whose `args` are the URI's variables (and
    /// `uri`); what it returns is the content.
    #[serde(default)]
    pub code: Option<String>,
    /// On a replace: the revision you read (409 naming both when it moved on).
    #[serde(default, deserialize_with = "super::types::optional_integer")]
    #[schema(minimum = 1, maximum = 9_007_199_254_740_991_i64)]
    pub expected_revision: Option<i64>,
}

impl ResourceBodyIn {
    /// The service's input.
    #[must_use]
    pub fn into_input(self) -> ResourceInput {
        ResourceInput {
            name: self.name,
            uri: self.uri,
            uri_template: self.uri_template,
            title: self.title,
            description: self.description,
            mime_type: self.mime_type,
            text: self.text,
            blob: self.blob,
            code: self.code,
        }
    }
}

/// A stored resource or template.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StoredResource {
    /// `res_<16 hex>`.
    pub id: String,
    pub name: String,
    /// `text`, `blob` or `template`.
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uri_template: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The content's bytes (a template: its code's).
    pub size: u64,
    /// Present when one resource is read (not in the list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Who wrote the current revision: `user` (a person) or `llm` (a model).
    pub created_by: String,
    /// 1, then one more at each change.
    pub revision: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl StoredResource {
    #[must_use]
    pub fn new(r: UserResource) -> StoredResource {
        let (text, blob, code) = match r.body {
            Some(UserResourceBody::Text(t)) => (Some(t), None, None),
            Some(UserResourceBody::Blob(b)) => (None, Some(b), None),
            Some(UserResourceBody::Code(c)) => (None, None, Some(c)),
            None => (None, None, None),
        };
        StoredResource {
            id: r.id,
            name: r.name,
            kind: r.kind.as_str().to_owned(),
            uri: r.uri,
            uri_template: r.uri_template,
            title: r.title,
            description: r.description,
            mime_type: r.mime_type,
            size: r.size,
            text,
            blob,
            code,
            created_by: r.created_by.as_str().to_owned(),
            revision: r.revision,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// Your resources and templates, by name (without their content).
#[derive(Debug, Serialize, ToSchema)]
pub struct StoredResourceList {
    pub resources: Vec<StoredResource>,
    pub count: usize,
}

pub type StoredResourceEnvelope = Envelope<StoredResource>;
pub type StoredResourceListEnvelope = Envelope<StoredResourceList>;

/// Your resources
///
/// Every resource and template you defined, by name, without their content (read one for it).
#[utoipa::path(
    get, path = "/api/v1/resources", tag = "resources", operation_id = "listResources",
    responses((status = 200, description = "`{resources, count}`", body = inline(StoredResourceListEnvelope)))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<StoredResourceList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let resources: Vec<StoredResource> = state
        .service
        .list_user_resources(&identity.user_id)
        .await?
        .into_iter()
        .map(StoredResource::new)
        .collect();
    Ok(ApiOk::ok(StoredResourceList {
        count: resources.len(),
        resources,
    }))
}

/// Create a resource or template
///
/// Stores it (revision 1), offered at once over MCP (`resources/list` or
/// `resources/templates/list`, with `notifications/resources/list_changed` to your sessions).
#[utoipa::path(
    post, path = "/api/v1/resources", tag = "resources", operation_id = "createResource",
    request_body = ResourceBodyIn,
    responses(
        (status = 201, description = "The resource", body = inline(StoredResourceEnvelope)),
        (status = 409, description = "You have a resource of that name or URI, or as many as one user may", body = super::error::ErrorEnvelope),
        (status = 422, description = "The definition breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<ResourceBodyIn>,
) -> Result<ApiOk<StoredResource>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let resource = state
        .service
        .create_resource(&actor(&identity), body.into_input())
        .await?;
    Ok(ApiOk::created(StoredResource::new(resource)))
}

/// One resource or template
///
/// With its content (`text` or `blob`) or its `code`.
#[utoipa::path(
    get, path = "/api/v1/resources/{name}", tag = "resources", operation_id = "getResource",
    params(("name" = String, Path, description = "The resource's name or id")),
    responses(
        (status = 200, description = "The resource", body = inline(StoredResourceEnvelope)),
        (status = 404, description = "No such resource of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiOk<StoredResource>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    let resource = state
        .service
        .get_user_resource(&identity.tool_context(), &name)
        .await?;
    Ok(ApiOk::ok(StoredResource::new(resource)))
}

/// Replace a resource or template
///
/// The whole definition, as at its creation (a resource stays a resource, a template a
/// template): the next revision; MCP subscribers of its URI are told.
#[utoipa::path(
    put, path = "/api/v1/resources/{name}", tag = "resources", operation_id = "replaceResource",
    params(("name" = String, Path, description = "The resource's name or id")),
    request_body = ResourceBodyIn,
    responses(
        (status = 200, description = "The resource at its new revision", body = inline(StoredResourceEnvelope)),
        (status = 403, description = "A model may not change a resource a person wrote", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such resource of yours", body = super::error::ErrorEnvelope),
        (status = 409, description = "The name or URI is taken, or `expectedRevision` is stale", body = super::error::ErrorEnvelope),
        (status = 422, description = "The definition breaks a rule (named)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn replace(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    ApiJson(body): ApiJson<ResourceBodyIn>,
) -> Result<ApiOk<StoredResource>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    let expected = body.expected_revision;
    let resource = state
        .service
        .update_resource(&actor(&identity), &name, body.into_input(), expected)
        .await?;
    Ok(ApiOk::ok(StoredResource::new(resource)))
}

/// Delete a resource or template
#[utoipa::path(
    delete, path = "/api/v1/resources/{name}", tag = "resources", operation_id = "deleteResource",
    params(("name" = String, Path, description = "The resource's name or id")),
    responses(
        (status = 200, description = "The resource as it was (without its content)", body = inline(StoredResourceEnvelope)),
        (status = 403, description = "A model may not delete a resource a person wrote", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such resource of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
) -> Result<ApiOk<StoredResource>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    let resource = state
        .service
        .delete_resource(&actor(&identity), &name)
        .await?;
    Ok(ApiOk::ok(StoredResource::new(resource)))
}

/// What a read of one URI gives: its text or its bytes (base64), as MCP `resources/read` answers.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRead {
    pub uri: String,
    pub mime_type: String,
    /// A text content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A binary content, standard base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

pub type ResourceReadEnvelope = Envelope<ResourceRead>;

/// Read a resource by its URI
///
/// What MCP `resources/read` answers for the URI: a resource you defined, a URI one of your
/// templates matches (its code runs, as the reader's call of `resource_template`: the sandbox,
/// the policy and approvals apply), a file of your workspace (a `read_file` call) or a tool's
/// source. Needs `tools:execute`, since a read may run code.
#[utoipa::path(
    get, path = "/api/v1/resource-contents", tag = "resources", operation_id = "readResource",
    params(("uri" = String, Query, description = "The URI to read (`docs://style-guide`, `shop://orders/42`)", min_length = 1, max_length = 2048)),
    responses(
        (status = 200, description = "The content", body = inline(ResourceReadEnvelope)),
        (status = 404, description = "No resource of yours at that URI, or one you may not read (the message says why)", body = super::error::ErrorEnvelope)
    )
)]
pub async fn read(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<ResourceRead>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    query.check(&["uri"])?;
    let Some(uri) = query.get("uri").filter(|u| !u.is_empty()) else {
        return Err(ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "invalid_query",
            "give the URI to read: ?uri=docs://style-guide",
        ));
    };
    let content = state
        .service
        .read_resource(identity.tool_context(), uri)
        .await?;
    let blob = content.body.base64();
    let text = match content.body {
        toolsmith_service::resources::ResourceBody::Text(text) => Some(text),
        toolsmith_service::resources::ResourceBody::Blob(_) => None,
    };
    Ok(ApiOk::ok(ResourceRead {
        uri: content.uri,
        mime_type: content.mime_type,
        text,
        blob,
    }))
}
