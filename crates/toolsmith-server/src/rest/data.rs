//! The agent's own data over REST, so people (the web UI, scripts) can see and edit what the
//! agent stored: `/api/v1/data/{family}` and `/api/v1/data/{family}/{id}` (list, add, read,
//! change, delete the records of `tasks`, `bookmarks`, `notes`, `events`, `contacts`, `goals`,
//! `goal-steps`, with the same checks and replies as the family's tools), `GET
//! /api/v1/data/export` (everything the caller keeps, memories included, page by page) and
//! `DELETE /api/v1/data` (erase it all).
//!
//! Records belong to the caller's user and, for a caller with an agent, that agent — exactly
//! what the tools see. Export and erasure cover every agent of the user, so they are a
//! person's: a caller with an agent is refused.

use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use serde_json::Value;
use toolsmith_core::data::{DataRecord, RecordScope};
use toolsmith_service::service::data_api::{DataOp, MAX_EXPORT_PAGE};

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::require;
use crate::AppState;
use crate::auth::{Identity, Scope};

const FAMILY_DOC: &str =
    "The family: `tasks`, `bookmarks`, `notes`, `events`, `contacts`, `goals` or `goal-steps`";

fn scope(identity: &Identity) -> RecordScope {
    RecordScope::new(identity.user_id.clone(), identity.agent_id.as_deref())
}

/// `op` on the caller's records of `family`, if the caller holds `needs`.
async fn run(
    state: &AppState,
    identity: &Identity,
    needs: Scope,
    family: &str,
    op: DataOp<'_>,
    body: &Value,
) -> Result<Value, ApiError> {
    require(identity, needs)?;
    Ok(state
        .service
        .data_op(&scope(identity), family, op, body)
        .await?)
}

/// Export and erasure span every agent of the user: a person's, never an agent's.
fn require_person(identity: &Identity, what: &str) -> Result<(), ApiError> {
    if identity.agent_id.is_some() {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("{what} covers all of a user's data: call without an agent"),
        ));
    }
    Ok(())
}

/// List a family's records
///
/// The query takes the parameters of the family's list tool (`list_tasks` …): its filters,
/// `search`, `sortBy`, `limit` (default 20, at most 50) and `offset`; lists are
/// comma-separated (`tags=a,b`). The answer is the tool's: `{count, total, <family>}`.
#[utoipa::path(
    get, path = "/api/v1/data/{family}", tag = "data", operation_id = "listDataRecords",
    params(("family" = String, Path, description = FAMILY_DOC)),
    responses(
        (status = 200, description = "The records", body = Object),
        (status = 404, description = "No such family", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad filter, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(family): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    let args = state.service.data_list_args(&family, &query.0)?;
    let out = run(
        &state,
        &identity,
        Scope::ToolsRead,
        &family,
        DataOp::List,
        &args,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// Add a record
///
/// The body is the record's fields, as the family's add tool takes them (`add_task` …).
#[utoipa::path(
    post, path = "/api/v1/data/{family}", tag = "data", operation_id = "createDataRecord",
    params(("family" = String, Path, description = FAMILY_DOC)),
    request_body(content = Object, description = "The record's fields"),
    responses(
        (status = 201, description = "The record as stored (`duplicate: true` with the one kept)", body = Object),
        (status = 404, description = "No such family", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad field or a limit, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(family): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let out = run(
        &state,
        &identity,
        Scope::ToolsWrite,
        &family,
        DataOp::Create,
        &body,
    )
    .await?;
    Ok(ApiOk::created(out))
}

/// One record
#[utoipa::path(
    get, path = "/api/v1/data/{family}/{id}", tag = "data", operation_id = "getDataRecord",
    params(("family" = String, Path, description = FAMILY_DOC), ("id" = String, Path, description = "The record's id")),
    responses(
        (status = 200, description = "The record", body = Object),
        (status = 404, description = "No such family, or no such record of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((family, id)): ApiPath<(String, String)>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let out = run(
        &state,
        &identity,
        Scope::ToolsRead,
        &family,
        DataOp::Get(&id),
        &Value::Null,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// Change a record
///
/// The body holds the fields to change; `null` clears an optional one.
#[utoipa::path(
    patch, path = "/api/v1/data/{family}/{id}", tag = "data", operation_id = "updateDataRecord",
    params(("family" = String, Path, description = FAMILY_DOC), ("id" = String, Path, description = "The record's id")),
    request_body(content = Object, description = "The fields to change"),
    responses(
        (status = 200, description = "The record now", body = Object),
        (status = 404, description = "No such family, or no such record of yours", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad field, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn update(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((family, id)): ApiPath<(String, String)>,
    query: QueryPairs,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let out = run(
        &state,
        &identity,
        Scope::ToolsWrite,
        &family,
        DataOp::Update(&id),
        &body,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// Delete a record
#[utoipa::path(
    delete, path = "/api/v1/data/{family}/{id}", tag = "data", operation_id = "deleteDataRecord",
    params(("family" = String, Path, description = FAMILY_DOC), ("id" = String, Path, description = "The record's id")),
    responses(
        (status = 200, description = "Deleted", body = Object),
        (status = 404, description = "No such family, or no such record of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath((family, id)): ApiPath<(String, String)>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let out = run(
        &state,
        &identity,
        Scope::ToolsWrite,
        &family,
        DataOp::Delete(&id),
        &Value::Null,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// One page of an export.
#[derive(Debug, Serialize)]
pub struct ExportPage {
    records: Vec<DataRecord>,
    /// Pass as `after` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    next: Option<String>,
}

/// Export your data
///
/// Everything you keep through the data tools — every family, memories included, of every
/// agent of yours — in id order, `limit` records a page (default and most 1,000); `next` is
/// the `after` of the next page.
#[utoipa::path(
    get, path = "/api/v1/data/export", tag = "data", operation_id = "exportData",
    params(
        ("after" = Option<String>, Query, description = "Continue after this id (`next` of the last page)", min_length = 1, max_length = 100),
        ("limit" = Option<u32>, Query, description = "Records a page (1 to 1000)", minimum = 1, maximum = 1000)
    ),
    responses(
        (status = 200, description = "A page of records", body = Object),
        (status = 403, description = "A caller with an agent", body = super::error::ErrorEnvelope)
    )
)]
pub async fn export(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<ExportPage>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    require_person(&identity, "an export")?;
    query.check(&["after", "limit"])?;
    let after = query.text("after", 100, "a record id")?;
    let limit = query
        .integer("limit", 1, u64::from(MAX_EXPORT_PAGE))?
        .map_or(MAX_EXPORT_PAGE, |n| {
            u32::try_from(n).unwrap_or(MAX_EXPORT_PAGE)
        });
    let (records, next) = state
        .service
        .data_export(&identity.user_id, after, limit)
        .await?;
    Ok(ApiOk::ok(ExportPage { records, next }))
}

/// How many records went.
#[derive(Debug, Serialize)]
pub struct Erased {
    deleted: u64,
}

/// Erase your data
///
/// Deletes everything you keep through the data tools (every family, memories included, of
/// every agent of yours), for good. Needs `confirm=true`. The audit log records the erasure
/// (`data.erase`, with the count). In an organisation, its owners alone erase its data.
#[utoipa::path(
    delete, path = "/api/v1/data", tag = "data", operation_id = "eraseData",
    params(("confirm" = String, Query, description = "Must be `true`: this deletes everything, for good", pattern = "^true$")),
    responses(
        (status = 200, description = "How many records were deleted", body = Object),
        (status = 400, description = "Without confirm=true", body = super::error::ErrorEnvelope),
        (status = 403, description = "A caller with an agent, or in an organisation not its owner", body = super::error::ErrorEnvelope)
    )
)]
pub async fn erase(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Erased>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    require_person(&identity, "erasure")?;
    if let Some(org) = &identity.organization
        && org.role != toolsmith_core::organization::OrgRole::Owner
    {
        // Everything the organisation keeps, for all its members: its owners' decision.
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!(
                "erasing all of organisation '{}''s data is its owners' decision; you are {}",
                org.name, org.role
            ),
        ));
    }
    query.check(&["confirm"])?;
    if query.get("confirm") != Some("true") {
        return Err(ApiError::bad_request(
            "confirmation_required",
            "this deletes all of your data for good: add ?confirm=true",
        ));
    }
    let deleted = state
        .service
        .data_erase(&super::actor(&identity), &identity.user_id)
        .await?;
    Ok(ApiOk::ok(Erased { deleted }))
}
