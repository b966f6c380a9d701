//! The Config Center over REST: `/api/v1/config/services` (the external services tools need)
//! and `/api/v1/config/services/{service}/entries` (their values). Secret values go in as
//! plaintext over the request and never come back: every answer masks them.
//!
//! Reading needs `tools:read`; writing needs `admin` (secrets are the owner's most sensitive
//! data; a token that may only write tools may not read or replace them) — except in an
//! organisation's scope, where no one holds `admin`: there its editors, admins and owners
//! (`tools:write`) write the organisation's services, and its viewers only read them.

use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};
use toolsmith_service::{EntryView, ServiceView};

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, OptionalApiJson, QueryPairs};
use super::types::{ConfigEntryBody, ConfigServiceBody, ConfigServicePatchBody, RevisionBody};
use super::{actor, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// The scope writing a service or an entry needs: `admin`, or `tools:write` acting in an
/// organisation (an editor or above of it: [`Scope::of_role`](crate::auth::Scope::of_role)).
fn require_writer(identity: &Identity) -> Result<(), ApiError> {
    let needed = if identity.organization.is_some() {
        Scope::ToolsWrite
    } else {
        Scope::Admin
    };
    require(identity, needed)
}

fn invalid(why: String) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "validation_error", why)
}

/// `?expectedRevision=` from the query (PATCH bodies are the new values themselves).
fn revision_query(query: &QueryPairs) -> Result<Option<i64>, ApiError> {
    Ok(query
        .integer("expectedRevision", 1, i64::MAX as u64)?
        .map(|n| n as i64))
}

/// List config services
///
/// Your services with their entries; secret values masked.
#[utoipa::path(
    get, path = "/api/v1/config/services", tag = "config",
    operation_id = "listConfigServices",
    responses((status = 200, description = "The services", body = Object))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let services = state.service.config_services(&actor(&identity)).await?;
    Ok(ApiOk::ok(
        json!({"services": services, "count": services.len()}),
    ))
}

/// Create a config service
#[utoipa::path(
    post, path = "/api/v1/config/services", tag = "config",
    operation_id = "createConfigService",
    request_body(content = ConfigServiceBody, description = "The new service"),
    responses(
        (status = 201, description = "Created", body = Object),
        (status = 409, description = "The name is taken", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid service", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<ConfigServiceBody>,
) -> Result<ApiOk<ServiceView>, ApiError> {
    require_writer(&identity)?;
    query.check(&[])?;
    let input = body.into_input().map_err(invalid)?;
    let created = state
        .service
        .create_config_service(&actor(&identity), input)
        .await?;
    Ok(ApiOk::with_status(StatusCode::CREATED, created))
}

/// Get a config service
#[utoipa::path(
    get, path = "/api/v1/config/services/{service}", tag = "config",
    operation_id = "getConfigService",
    params(("service" = String, Path, description = "Service name or id")),
    responses(
        (status = 200, description = "The service", body = Object),
        (status = 404, description = "No such service", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(service): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<ServiceView>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let found = state
        .service
        .config_service(&actor(&identity), &service)
        .await?;
    Ok(ApiOk::ok(found))
}

/// Update a config service
#[utoipa::path(
    patch, path = "/api/v1/config/services/{service}", tag = "config",
    operation_id = "updateConfigService",
    params(
        ("service" = String, Path, description = "Service name or id"),
        ("expectedRevision" = Option<i64>, Query, description = "Apply only at this revision", minimum = 1)
    ),
    request_body(content = ConfigServicePatchBody, description = "The changes"),
    responses(
        (status = 200, description = "Updated", body = Object),
        (status = 404, description = "No such service", body = super::error::ErrorEnvelope),
        (status = 409, description = "Stale revision", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid service", body = super::error::ErrorEnvelope)
    )
)]
pub async fn update(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(service): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<ConfigServicePatchBody>,
) -> Result<ApiOk<ServiceView>, ApiError> {
    require_writer(&identity)?;
    query.check(&["expectedRevision"])?;
    let expected = revision_query(&query)?;
    let patch = body.into_patch().map_err(invalid)?;
    let updated = state
        .service
        .update_config_service(&actor(&identity), &service, patch, expected)
        .await?;
    Ok(ApiOk::ok(updated))
}

/// Delete a config service
///
/// The service and all its entries.
#[utoipa::path(
    delete, path = "/api/v1/config/services/{service}", tag = "config",
    operation_id = "deleteConfigService",
    params(("service" = String, Path, description = "Service name or id")),
    request_body(content = Option<RevisionBody>, description = "Optional"),
    responses(
        (status = 200, description = "Deleted", body = Object),
        (status = 404, description = "No such service", body = super::error::ErrorEnvelope),
        (status = 409, description = "Stale revision", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(service): ApiPath<String>,
    query: QueryPairs,
    OptionalApiJson(body): OptionalApiJson<RevisionBody>,
) -> Result<ApiOk<Value>, ApiError> {
    require_writer(&identity)?;
    query.check(&[])?;
    let expected = body.and_then(|b| b.expected_revision);
    state
        .service
        .delete_config_service(&actor(&identity), &service, expected)
        .await?;
    Ok(ApiOk::ok(json!({"deleted": true, "service": service})))
}

/// Add an entry
///
/// `{label?, isDefault?, values: {field: value}}`; secrets in plaintext, stored encrypted.
#[utoipa::path(
    post, path = "/api/v1/config/services/{service}/entries", tag = "config",
    operation_id = "createConfigEntry",
    params(("service" = String, Path, description = "Service name or id")),
    request_body(content = ConfigEntryBody, description = "The entry"),
    responses(
        (status = 201, description = "Created (secrets masked)", body = Object),
        (status = 404, description = "No such service", body = super::error::ErrorEnvelope),
        (status = 409, description = "Label taken, or a single-entry service that has one", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid values", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create_entry(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(service): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<ConfigEntryBody>,
) -> Result<ApiOk<EntryView>, ApiError> {
    require_writer(&identity)?;
    query.check(&[])?;
    let created = state
        .service
        .create_config_entry(&actor(&identity), &service, body.into_input())
        .await?;
    Ok(ApiOk::with_status(StatusCode::CREATED, created))
}

/// Update an entry
///
/// Given values replace, `null` removes, absent fields stay; `isDefault: true` makes it the
/// default.
#[utoipa::path(
    patch, path = "/api/v1/config/services/{service}/entries/{entry}", tag = "config",
    operation_id = "updateConfigEntry",
    params(
        ("service" = String, Path, description = "Service name or id"),
        ("entry" = String, Path, description = "Entry label or id"),
        ("expectedRevision" = Option<i64>, Query, description = "Apply only at this revision", minimum = 1)
    ),
    request_body(content = ConfigEntryBody, description = "The changes"),
    responses(
        (status = 200, description = "Updated (secrets masked)", body = Object),
        (status = 404, description = "No such service or entry", body = super::error::ErrorEnvelope),
        (status = 409, description = "Stale revision or label taken", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid values", body = super::error::ErrorEnvelope)
    )
)]
pub async fn update_entry(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((service, entry)): ApiPath<(String, String)>,
    query: QueryPairs,
    ApiJson(body): ApiJson<ConfigEntryBody>,
) -> Result<ApiOk<EntryView>, ApiError> {
    require_writer(&identity)?;
    query.check(&["expectedRevision"])?;
    let expected = revision_query(&query)?;
    let updated = state
        .service
        .update_config_entry(
            &actor(&identity),
            &service,
            &entry,
            body.into_input(),
            expected,
        )
        .await?;
    Ok(ApiOk::ok(updated))
}

/// Delete an entry
#[utoipa::path(
    delete, path = "/api/v1/config/services/{service}/entries/{entry}", tag = "config",
    operation_id = "deleteConfigEntry",
    params(
        ("service" = String, Path, description = "Service name or id"),
        ("entry" = String, Path, description = "Entry label or id")
    ),
    request_body(content = Option<RevisionBody>, description = "Optional"),
    responses(
        (status = 200, description = "Deleted", body = Object),
        (status = 404, description = "No such service or entry", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete_entry(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((service, entry)): ApiPath<(String, String)>,
    query: QueryPairs,
    OptionalApiJson(body): OptionalApiJson<RevisionBody>,
) -> Result<ApiOk<Value>, ApiError> {
    require_writer(&identity)?;
    query.check(&[])?;
    let expected = body.and_then(|b| b.expected_revision);
    state
        .service
        .delete_config_entry(&actor(&identity), &service, &entry, expected)
        .await?;
    Ok(ApiOk::ok(json!({"deleted": true, "entry": entry})))
}
