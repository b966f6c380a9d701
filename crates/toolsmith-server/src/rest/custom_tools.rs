//! `/api/v1/custom-tools`: the lifecycle of the caller's custom tools, as the spec's routes.
//!
//! Every handler checks its scope, turns the request into a `ToolService` call as the caller
//! (`super::actor`: a person, or the model when the caller acts as an agent), and the answer or
//! the `ServiceError` into the envelope. `{id}` is a tool id
//! (`tool_<16 hex>`) or a tool name. Concurrency control: `expectedRevision` in the body or an
//! `If-Match: "<revision>"` header; single-tool answers carry `ETag: "<revision>"`.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::header::ETAG;
use axum::http::{HeaderValue, StatusCode};
use serde_json::{Map, Value};
use toolsmith_core::{ErrorKind, ToolStatus};
use toolsmith_service::{DeleteOptions, ToolQuery, ToolRef};

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, OptionalApiJson, QueryPairs};
use super::types::{
    CreateToolBody, Creator, Definition, DefinitionList, Deleted, ExecuteCustomBody, Execution,
    RevisionBody, RollbackBody, Stats, Status, TestToolBody, ToolList, ToolRecord, UpdateToolBody,
    VersionList,
};
use super::{Ran, actor, execution_response, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// Default page size of listings.
pub const DEFAULT_LIMIT: u64 = 50;
/// Largest page size of listings.
pub const MAX_LIMIT: u64 = 1000;

const LIST_PARAMS: &[&str] = &[
    "status",
    "category",
    "createdBy",
    "search",
    "limit",
    "offset",
];
const PAGE_PARAMS: &[&str] = &["limit", "offset"];

/// Query parameters of `GET /api/v1/custom-tools` (for the document; parsed by hand so every
/// message names the parameter).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ListParams {
    /// Only tools in this status.
    status: Option<Status>,
    /// Only tools of this category (exact match).
    category: Option<String>,
    /// Only tools created by a person (`user`) or a model (`llm`).
    #[param(rename = "createdBy")]
    created_by: Option<Creator>,
    /// Case-insensitive substring of the name, description or category.
    search: Option<String>,
    /// Page size, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// How many matching tools to skip.
    #[param(minimum = 0, maximum = 4_294_967_295_i64)]
    offset: Option<i64>,
}

/// Query parameters of `GET /api/v1/custom-tools/pending`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PageParams {
    /// Page size, 1 to 1000 (default 50).
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<i64>,
    /// How many tools to skip.
    #[param(minimum = 0, maximum = 4_294_967_295_i64)]
    offset: Option<i64>,
}

/// List the caller's custom tools
///
/// Filtered by status, category, creator and a search text; ordered by name; paged with
/// `limit` (1–1000, default 50) and `offset`. Unknown or malformed parameters are a 400.
#[utoipa::path(
    get, path = "/api/v1/custom-tools", tag = "custom-tools", operation_id = "listCustomTools",
    params(ListParams),
    responses((status = 200, description = "A page of tools", body = inline(super::openapi::ToolListEnvelope)))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<ToolList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(LIST_PARAMS)?;
    let mut q = page_query(&identity, &query)?;
    if let Some(status) = query.get("status") {
        q.status = Some(
            parse_enum::<Status>(
                "status",
                status,
                "active, disabled, pending_approval, rejected",
            )?
            .into(),
        );
    }
    if let Some(created_by) = query.get("createdBy") {
        q.created_by = Some(parse_enum::<Creator>("createdBy", created_by, "user, llm")?.into());
    }
    q.category = query.get("category").map(str::to_owned);
    q.search = query.get("search").map(str::to_owned);
    list_page(&state, &identity, q).await
}

/// Custom-tool statistics
///
/// Counts of the caller's custom tools by status and creator, and their total usage.
#[utoipa::path(
    get, path = "/api/v1/custom-tools/stats", tag = "custom-tools", operation_id = "customToolStats",
    responses((status = 200, description = "Counts", body = inline(super::openapi::StatsEnvelope)))
)]
pub async fn stats(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Stats>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let stats = state.service.stats(&actor(&identity)).await?;
    Ok(ApiOk::ok(stats.into()))
}

/// Tools awaiting approval
///
/// The caller's tools in `pending_approval`, same shape as the list.
#[utoipa::path(
    get, path = "/api/v1/custom-tools/pending", tag = "custom-tools", operation_id = "listPendingCustomTools",
    params(PageParams),
    responses((status = 200, description = "A page of pending tools", body = inline(super::openapi::ToolListEnvelope)))
)]
pub async fn pending(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<ToolList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(PAGE_PARAMS)?;
    let mut q = page_query(&identity, &query)?;
    q.status = Some(ToolStatus::PendingApproval);
    list_page(&state, &identity, q).await
}

/// Active custom tools as tool definitions
///
/// What a model is told about the caller's active custom tools (disabled, pending and rejected
/// tools are left out; tags are never included).
#[utoipa::path(
    get, path = "/api/v1/custom-tools/active/definitions", tag = "custom-tools",
    operation_id = "activeCustomToolDefinitions",
    responses((status = 200, description = "Definitions", body = inline(super::openapi::DefinitionListEnvelope)))
)]
pub async fn active_definitions(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<DefinitionList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let tools: Vec<Definition> = state
        .service
        .visible_tools(&identity.tool_context())
        .iter()
        .filter(|t| t.custom_id().is_some())
        .map(|t| t.definition.clone().into())
        .collect();
    Ok(ApiOk::ok(DefinitionList {
        count: tools.len() as u64,
        tools,
    }))
}

/// One custom tool
#[utoipa::path(
    get, path = "/api/v1/custom-tools/{id}", tag = "custom-tools", operation_id = "getCustomTool",
    params(("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name")),
    responses(
        (status = 200, description = "The tool", body = inline(super::openapi::ToolEnvelope),
            headers(("ETag" = String, description = "The tool's revision, quoted"))),
        (status = 404, description = "No such tool for this caller", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_one(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<ToolRecord>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let record = state
        .service
        .get(&actor(&identity), &ToolRef::parse(&id))
        .await?;
    Ok(tool_ok(
        StatusCode::OK,
        with_missing_config(&state, record).await?,
    ))
}

/// Create a custom tool
///
/// The tool is created by a person (`createdBy: user`) and starts `active`. A definition that
/// breaks the rules (name, JSON Schema, code) is a 422; a taken name a 409.
#[utoipa::path(
    post, path = "/api/v1/custom-tools", tag = "custom-tools", operation_id = "createCustomTool",
    request_body(content = CreateToolBody, description = "The new tool"),
    responses(
        (status = 201, description = "Created", body = inline(super::openapi::ToolEnvelope),
            headers(("ETag" = String, description = "The tool's revision, quoted"))),
        (status = 409, description = "The name is taken, or an owner limit is reached", body = super::error::ErrorEnvelope),
        (status = 413, description = "Body, code or description too large", body = super::error::ErrorEnvelope),
        (status = 415, description = "Not JSON", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid tool definition", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<CreateToolBody>,
) -> Result<ApiOk<ToolRecord>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    check_creator(&identity, body.created_by)?;
    if body.lacks_code() {
        return Err(ApiError::bad_request(
            "invalid_body",
            crate::definition::MISSING_CODE,
        ));
    }
    let (input, enabled) = body.into_input()?;
    let record = state
        .service
        .create_with_enabled(&actor(&identity), input, enabled)
        .await?;
    Ok(tool_ok(StatusCode::CREATED, record.into()))
}

/// Update a custom tool
///
/// A partial update: only given fields change. `version` goes up when `code` or `parameters`
/// change, `revision` on every change. Rename with `name` (spec 000) or `newName`;
/// `requiredApiKeys` replaces the declared Config Center services and keeps the rest of the
/// metadata.
#[utoipa::path(
    patch, path = "/api/v1/custom-tools/{id}", tag = "custom-tools", operation_id = "updateCustomTool",
    params(
        ("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name"),
        ("If-Match" = Option<String>, Header, description = "`\"<revision>\"`: apply only at this revision (or `*`)",
            pattern = r#"^(\*|"[1-9][0-9]{0,14}"|[1-9][0-9]{0,14})$"#)
    ),
    request_body(content = UpdateToolBody, description = "The fields to change"),
    responses(
        (status = 200, description = "The updated tool", body = inline(super::openapi::ToolEnvelope),
            headers(("ETag" = String, description = "The tool's revision, quoted"))),
        (status = 404, description = "No such tool", body = super::error::ErrorEnvelope),
        (status = 409, description = "Stale revision, or the new name is taken", body = super::error::ErrorEnvelope),
        (status = 413, description = "Body, code or description too large", body = super::error::ErrorEnvelope),
        (status = 415, description = "Not JSON", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid tool definition", body = super::error::ErrorEnvelope)
    )
)]
pub async fn update(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    headers: HeaderMap,
    ApiJson(body): ApiJson<UpdateToolBody>,
) -> Result<ApiOk<ToolRecord>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let (mut patch, body_revision, required_api_keys) = body.into_parts();
    let expected = expected_revision(&headers, body_revision)?;
    let tool = ToolRef::parse(&id);
    if let Some(keys) = required_api_keys {
        let mut metadata = match patch.metadata.take() {
            Some(Value::Object(given)) => given,
            _ => {
                let current = state.service.get(&actor(&identity), &tool).await?;
                current.metadata.as_object().cloned().unwrap_or_default()
            }
        };
        metadata.insert("requiredApiKeys".to_owned(), Value::Array(keys));
        patch.metadata = Some(Value::Object(metadata));
    }
    let record = state
        .service
        .update(&actor(&identity), &tool, patch, expected)
        .await?;
    Ok(tool_ok(StatusCode::OK, record.into()))
}

/// Delete a custom tool
///
/// Deletes the tool and its history. The body is optional.
#[utoipa::path(
    delete, path = "/api/v1/custom-tools/{id}", tag = "custom-tools", operation_id = "deleteCustomTool",
    params(
        ("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name"),
        ("If-Match" = Option<String>, Header, description = "`\"<revision>\"`: apply only at this revision (or `*`)",
            pattern = r#"^(\*|"[1-9][0-9]{0,14}"|[1-9][0-9]{0,14})$"#)
    ),
    request_body(content = Option<RevisionBody>, description = "Optional"),
    responses(
        (status = 200, description = "Deleted", body = inline(super::openapi::DeletedEnvelope)),
        (status = 404, description = "No such tool", body = super::error::ErrorEnvelope),
        (status = 409, description = "Stale revision", body = super::error::ErrorEnvelope),
        (status = 415, description = "A body that is not JSON", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    headers: HeaderMap,
    OptionalApiJson(body): OptionalApiJson<RevisionBody>,
) -> Result<ApiOk<Deleted>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let expected = expected_revision(&headers, body.unwrap_or_default().expected_revision)?;
    let options = DeleteOptions {
        confirm: true,
        expected_revision: expected,
    };
    let record = state
        .service
        .delete(&actor(&identity), &ToolRef::parse(&id), options)
        .await?;
    Ok(ApiOk::ok(Deleted {
        deleted: true,
        tool: record.into(),
    }))
}

/// Writes `enable` and `disable`: a status change of the tool named in the path, for
/// `tools:write`, guarded by the tool's revision (`If-Match` or `expectedRevision`); the
/// handler calls the `ToolService` method of its own name.
macro_rules! revision_guarded_change {
    ($(#[doc = $doc:tt])* fn $name:ident, $path:tt, $operation_id:tt) => {
        $(#[doc = $doc])*
        #[utoipa::path(
            post, path = $path, tag = "custom-tools", operation_id = $operation_id,
            params(
                ("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name"),
                ("If-Match" = Option<String>, Header, description = "`\"<revision>\"`: apply only at this revision (or `*`)",
                    pattern = r#"^(\*|"[1-9][0-9]{0,14}"|[1-9][0-9]{0,14})$"#)
            ),
            request_body(content = Option<RevisionBody>, description = "Optional"),
            responses(
                (status = 200, description = "The tool", body = inline(super::openapi::ToolEnvelope),
                    headers(("ETag" = String, description = "The tool's revision, quoted"))),
                (status = 404, description = "No such tool", body = super::error::ErrorEnvelope),
                (status = 409, description = "Stale revision, or the status does not allow it", body = super::error::ErrorEnvelope),
                (status = 415, description = "A body that is not JSON", body = super::error::ErrorEnvelope)
            )
        )]
        pub async fn $name(
            State(state): State<AppState>,
            identity: Identity,
            ApiPath(id): ApiPath<String>,
            query: QueryPairs,
            headers: HeaderMap,
            OptionalApiJson(body): OptionalApiJson<RevisionBody>,
        ) -> Result<ApiOk<ToolRecord>, ApiError> {
            require(&identity, Scope::ToolsWrite)?;
            query.check(&[])?;
            let expected = expected_revision(&headers, body.unwrap_or_default().expected_revision)?;
            let record = state
                .service
                .$name(&actor(&identity), &ToolRef::parse(&id), expected)
                .await?;
            Ok(tool_ok(StatusCode::OK, record.into()))
        }
    };
}

/// Writes `approve` and `reject`: a person's decision on a pending tool — the tool's owner, or
/// an admin whoever owns it (by id); never an agent. Any other status is a 400 (spec 000). The
/// handler calls the `ToolService` method of its own name.
macro_rules! person_decision {
    ($(#[doc = $doc:tt])* fn $name:ident, $path:tt, $operation_id:tt, $answer:tt) => {
        $(#[doc = $doc])*
        #[utoipa::path(
            post, path = $path, tag = "custom-tools", operation_id = $operation_id,
            params(("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name")),
            responses(
                (status = 200, description = $answer, body = inline(super::openapi::ToolEnvelope),
                    headers(("ETag" = String, description = "The tool's revision, quoted"))),
                (status = 403, description = "The caller acts as an agent, or lacks `tools:write`", body = super::error::ErrorEnvelope),
                (status = 404, description = "No such tool of the caller's (an admin: of anyone's, by id)", body = super::error::ErrorEnvelope),
                (status = 400, description = "The tool is not pending approval", body = super::error::ErrorEnvelope)
            )
        )]
        pub async fn $name(
            State(state): State<AppState>,
            identity: Identity,
            ApiPath(id): ApiPath<String>,
            query: QueryPairs,
        ) -> Result<ApiOk<ToolRecord>, ApiError> {
            if let Some(why) = identity.approval_denial() {
                return Err(ApiError::new(StatusCode::FORBIDDEN, "forbidden", why));
            }
            query.check(&[])?;
            let record = state
                .service
                .$name(&actor(&identity), &ToolRef::parse(&id))
                .await
                .map_err(state_is_bad_request)?;
            Ok(tool_ok(StatusCode::OK, record.into()))
        }
    };
}

revision_guarded_change! {
    /// Enable a custom tool
    ///
    /// `disabled` → `active`; enabling an active tool changes nothing. Pending and rejected tools
    /// become active only by approval (409).
    fn enable, "/api/v1/custom-tools/{id}/enable", "enableCustomTool"
}

revision_guarded_change! {
    /// Disable a custom tool
    ///
    /// `active` → `disabled`; disabling a disabled tool changes nothing. Pending and rejected tools
    /// are approved or rejected instead (409).
    fn disable, "/api/v1/custom-tools/{id}/disable", "disableCustomTool"
}

person_decision! {
    /// Approve a pending tool
    ///
    /// `pending_approval` → `active`, by a person: the tool's owner (`tools:write`), or an admin
    /// whoever owns it (by the tool's id). A caller acting as an agent is refused (403). Any
    /// other status is a 400 (spec 000).
    fn approve, "/api/v1/custom-tools/{id}/approve", "approveCustomTool", "The tool, now active"
}

person_decision! {
    /// Reject a pending tool
    ///
    /// `pending_approval` → `rejected`, by a person: the tool's owner (`tools:write`), or an
    /// admin whoever owns it (by the tool's id). A caller acting as an agent is refused (403).
    /// Any other status is a 400 (spec 000).
    fn reject, "/api/v1/custom-tools/{id}/reject", "rejectCustomTool", "The tool, now rejected"
}

/// Run a custom tool
///
/// Runs an active tool on `arguments`. A tool that fails (throws, times out …) still answers
/// 200 with `isError: true`; arguments that break the tool's schema are a 422 with the
/// violations and the schema in `error.details`; a tool that is not active is a 400 (spec 000).
/// The answer has spec 000's `result`, `duration`, `metadata.executionTime` and
/// `metadata.dynamicTool` beside Toolsmith's `content` and `metadata.durationMs`.
#[utoipa::path(
    post, path = "/api/v1/custom-tools/{id}/execute", tag = "custom-tools", operation_id = "executeCustomTool",
    params(("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name")),
    request_body(content = Option<ExecuteCustomBody>, description = "Optional; no body runs with `{}`"),
    responses(
        (status = 200, description = "The result (also when the tool failed: see `isError`)", body = inline(super::openapi::ExecutionEnvelope)),
        (status = 404, description = "No such tool", body = super::error::ErrorEnvelope),
        (status = 400, description = "The tool is not active", body = super::error::ErrorEnvelope),
        (status = 415, description = "A body that is not JSON", body = super::error::ErrorEnvelope),
        (status = 422, description = "The arguments break the tool's schema", body = super::error::ErrorEnvelope)
    )
)]
pub async fn execute(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    headers: HeaderMap,
    OptionalApiJson(body): OptionalApiJson<ExecuteCustomBody>,
) -> Result<ApiOk<Execution>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    query.check(&[])?;
    let depth = super::subagent_depth(&headers)?;
    let record = state
        .service
        .get(&actor(&identity), &ToolRef::parse(&id))
        .await?;
    if record.status != ToolStatus::Active {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "invalid_state",
            format!(
                "tool '{}' is {}; only active tools can run (enable or approve it first)",
                record.name, record.status
            ),
        ));
    }
    let body = body.unwrap_or_default();
    let args = body.arguments.unwrap_or_default();
    let mut ctx = identity.tool_context();
    ctx.subagent_depth = depth;
    ctx.call_context = body.context.map(|c| std::sync::Arc::new(Value::Object(c)));
    let res = state
        .service
        .execute(&record.name, Value::Object(args), ctx)
        .await;
    execution_response(&record.name, res, Ran::Custom)
}

/// Dry-run a tool definition
///
/// Validates the definition as a create would and runs it once on `testArgs` (or
/// `testArguments`, the spec's name; if both are given they must be equal), storing nothing.
/// Answers like an execute, with `testMode: true`. An invalid definition or arguments that break
/// its schema are a 422.
#[utoipa::path(
    post, path = "/api/v1/custom-tools/test", tag = "custom-tools", operation_id = "testCustomTool",
    request_body(content = TestToolBody, description = "The definition and the arguments"),
    responses(
        (status = 200, description = "The result (also when the tool failed: see `isError`)", body = inline(super::openapi::ExecutionEnvelope)),
        (status = 413, description = "Body too large", body = super::error::ErrorEnvelope),
        (status = 415, description = "Not JSON", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid definition, or arguments that break its schema", body = super::error::ErrorEnvelope)
    )
)]
pub async fn test(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<TestToolBody>,
) -> Result<ApiOk<Execution>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    query.check(&[])?;
    check_creator(&identity, body.created_by())?;
    let (input, [test_args, test_arguments]) = body.into_parts()?;
    let args = match (test_args, test_arguments) {
        (Some(a), Some(b)) if a != b => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "validation_error",
                "testArgs and testArguments are two names for the same arguments, and they differ; give one of them",
            ));
        }
        (Some(args), _) | (None, Some(args)) => args,
        (None, None) => Map::new(),
    };
    let name = input.name.clone();
    let res = state
        .service
        .test_tool(
            &actor(&identity),
            input,
            Value::Object(args),
            identity.tool_context(),
            identity.run_rights(),
        )
        .await;
    // The service reports an invalid definition as an `invalid_arguments` result without
    // schema violations; arguments that break the schema come with them.
    if res.error_kind() == Some(ErrorKind::InvalidArguments)
        && res.content.get("violations").is_none()
    {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_error",
            res.error_message().unwrap_or("invalid tool definition"),
        ));
    }
    execution_response(&name, res, Ran::Test)
}

/// A tool's versions
///
/// Every stored version of the tool's definition (description, parameters, code,
/// permissions), newest first.
#[utoipa::path(
    get, path = "/api/v1/custom-tools/{id}/versions", tag = "custom-tools", operation_id = "listCustomToolVersions",
    params(("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name")),
    responses(
        (status = 200, description = "The versions", body = inline(super::openapi::VersionListEnvelope)),
        (status = 404, description = "No such tool", body = super::error::ErrorEnvelope)
    )
)]
pub async fn versions(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<VersionList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let versions = state
        .service
        .versions(&actor(&identity), &ToolRef::parse(&id))
        .await?;
    Ok(ApiOk::ok(VersionList {
        count: versions.len() as u64,
        versions: versions.into_iter().map(Into::into).collect(),
    }))
}

/// Roll a tool back to an earlier version
///
/// Makes the definition of `version` current again, as a new version.
#[utoipa::path(
    post, path = "/api/v1/custom-tools/{id}/rollback", tag = "custom-tools", operation_id = "rollbackCustomTool",
    params(
        ("id" = String, Path, description = "Tool id (`tool_<16 hex>`) or name"),
        ("If-Match" = Option<String>, Header, description = "`\"<revision>\"`: apply only at this revision (or `*`)",
            pattern = r#"^(\*|"[1-9][0-9]{0,14}"|[1-9][0-9]{0,14})$"#)
    ),
    request_body(content = RollbackBody, description = "The version to restore"),
    responses(
        (status = 200, description = "The tool", body = inline(super::openapi::ToolEnvelope),
            headers(("ETag" = String, description = "The tool's revision, quoted"))),
        (status = 404, description = "No such tool or version", body = super::error::ErrorEnvelope),
        (status = 409, description = "Stale revision", body = super::error::ErrorEnvelope),
        (status = 415, description = "Not JSON", body = super::error::ErrorEnvelope),
        (status = 422, description = "The restored definition is no longer valid", body = super::error::ErrorEnvelope)
    )
)]
pub async fn rollback(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(id): ApiPath<String>,
    query: QueryPairs,
    headers: HeaderMap,
    ApiJson(body): ApiJson<RollbackBody>,
) -> Result<ApiOk<ToolRecord>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let expected = expected_revision(&headers, body.expected_revision)?;
    let record = state
        .service
        .rollback(
            &actor(&identity),
            &ToolRef::parse(&id),
            body.version,
            expected,
        )
        .await?;
    Ok(tool_ok(StatusCode::OK, record.into()))
}

/// A single tool, with its revision as the `ETag`.
pub(crate) fn tool_ok(status: StatusCode, tool: ToolRecord) -> ApiOk<ToolRecord> {
    let etag = HeaderValue::from_str(&format!("\"{}\"", tool.revision))
        .unwrap_or_else(|_| HeaderValue::from_static("\"0\""));
    ApiOk::with_status(status, tool).header(ETAG, etag)
}

/// A `createdBy` in the body must say who the caller is: `user` for a person, `llm` for a
/// caller acting as an agent (which is the model, whatever it claims).
fn check_creator(identity: &Identity, created_by: Option<Creator>) -> Result<(), ApiError> {
    let refusal = match (&identity.agent_id, created_by) {
        (None, Some(Creator::Llm)) => {
            "tools created through the REST API by a person are created by a person: createdBy must be \"user\" or absent".to_owned()
        }
        (Some(agent), Some(Creator::User)) => format!(
            "the caller acts as agent '{agent}', so the tools it creates are created by the model: createdBy must be \"llm\" or absent (a person creates tools without an agent)"
        ),
        _ => return Ok(()),
    };
    Err(ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_error",
        refusal,
    ))
}

/// Spec 000 answers approve or reject of a tool that is not pending with a 400 (elsewhere a
/// state conflict is a 409).
fn state_is_bad_request(e: toolsmith_service::ServiceError) -> ApiError {
    match e {
        toolsmith_service::ServiceError::InvalidState(message) => {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_state", message)
        }
        other => other.into(),
    }
}

/// The revision a write must find: from the body, from `If-Match`, or both when they agree.
pub fn expected_revision(
    headers: &HeaderMap,
    from_body: Option<i64>,
) -> Result<Option<i64>, ApiError> {
    let from_header = match headers.get(axum::http::header::IF_MATCH) {
        None => None,
        Some(value) => parse_if_match(value)?,
    };
    match (from_body, from_header) {
        // At most one of them can be the tool's revision: a conflict, whatever the tool is at.
        (Some(body), Some(header)) if body != header => Err(ApiError::new(
            StatusCode::CONFLICT,
            "revision_conflict",
            format!(
                "expectedRevision is {body} but If-Match says revision {header}; they cannot both be the tool's revision (send one of them, or the same in both)"
            ),
        )
        .with_details(serde_json::json!({"expectedRevision": body, "ifMatchRevision": header}))),
        (body, header) => Ok(body.or(header)),
    }
}

/// `If-Match`: `"<revision>"`, a bare `<revision>`, or `*` (any revision).
fn parse_if_match(value: &HeaderValue) -> Result<Option<i64>, ApiError> {
    let bad = || {
        ApiError::bad_request(
            "invalid_header",
            "If-Match must be a tool revision in quotes (the ETag of the tool, e.g. \"3\") or *",
        )
    };
    let text = value.to_str().map_err(|_| bad())?.trim();
    if text == "*" {
        return Ok(None);
    }
    let digits = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(text);
    let well_formed = (1..=15).contains(&digits.len())
        && digits.bytes().all(|b| b.is_ascii_digit())
        && !digits.starts_with('0');
    if !well_formed {
        return Err(bad());
    }
    digits.parse::<i64>().map(Some).map_err(|_| bad())
}

/// `value` as one of an enum's wire names, or a 400 that lists them (`accepted`).
fn parse_enum<T: serde::de::DeserializeOwned>(
    name: &str,
    value: &str,
    accepted: &str,
) -> Result<T, ApiError> {
    serde_json::from_value(Value::String(value.to_owned())).map_err(|_| {
        ApiError::bad_request(
            "invalid_query",
            format!(
                "query parameter `{name}` has an unknown value '{}': use one of {accepted}",
                value.chars().take(64).collect::<String>()
            ),
        )
    })
}

fn page_query(identity: &Identity, query: &QueryPairs) -> Result<ToolQuery, ApiError> {
    let mut q = ToolQuery::owner(identity.user_id.clone());
    let limit = query
        .integer("limit", 1, MAX_LIMIT)?
        .unwrap_or(DEFAULT_LIMIT);
    let offset = query
        .integer("offset", 0, u64::from(u32::MAX))?
        .unwrap_or(0);
    q.limit = u32::try_from(limit).unwrap_or(u32::MAX);
    q.offset = u32::try_from(offset).unwrap_or(u32::MAX);
    Ok(q)
}

async fn list_page(
    state: &AppState,
    identity: &Identity,
    q: ToolQuery,
) -> Result<ApiOk<ToolList>, ApiError> {
    let (limit, offset) = (q.limit, q.offset);
    let page = state.service.list(&actor(identity), q).await?;
    let mut tools = Vec::with_capacity(page.tools.len());
    for record in page.tools {
        tools.push(with_missing_config(state, record).await?);
    }
    Ok(ApiOk::ok(ToolList {
        count: tools.len() as u64,
        total: page.total,
        limit,
        offset,
        tools,
    }))
}

/// The wire record, with the Config Center services it still lacks.
pub(crate) async fn with_missing_config(
    state: &AppState,
    record: toolsmith_core::CustomToolRecord,
) -> Result<ToolRecord, ApiError> {
    let missing = state.service.missing_config(&record).await?;
    let mut wire: ToolRecord = record.into();
    wire.missing_config = missing;
    Ok(wire)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn if_match(text: &str) -> Result<Option<i64>, String> {
        parse_if_match(&HeaderValue::from_str(text).map_err(|e| e.to_string())?)
            .map_err(|e| e.code().to_owned())
    }

    #[test]
    fn if_match_forms() {
        assert_eq!(if_match("\"3\""), Ok(Some(3)));
        assert_eq!(if_match("12"), Ok(Some(12)));
        assert_eq!(if_match("*"), Ok(None));
        for bad in [
            "",
            "\"\"",
            "\"0\"",
            "W/\"3\"",
            "\"3",
            "abc",
            "\"1\", \"2\"",
            "-1",
        ] {
            assert_eq!(if_match(bad), Err("invalid_header".to_owned()), "{bad}");
        }
    }

    #[test]
    fn body_and_header_revisions_must_agree() {
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::header::IF_MATCH,
            HeaderValue::from_static("\"4\""),
        );
        assert_eq!(expected_revision(&headers, None).ok(), Some(Some(4)));
        assert_eq!(expected_revision(&headers, Some(4)).ok(), Some(Some(4)));
        let err = expected_revision(&headers, Some(5))
            .err()
            .map(|e| e.status());
        assert_eq!(err, Some(StatusCode::CONFLICT));
        assert_eq!(
            expected_revision(&HeaderMap::new(), Some(7)).ok(),
            Some(Some(7))
        );
    }
}
