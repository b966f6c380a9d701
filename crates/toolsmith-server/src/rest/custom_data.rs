//! Custom Data over REST, beside the other data routes, so people (the web UI, scripts) can see
//! and edit the tables the agent made: `/api/v1/data/custom` (list, create),
//! `/api/v1/data/custom/{table}` (describe, delete), `/api/v1/data/custom/{table}/records`
//! (list or search, add one) and `/api/v1/data/custom/{table}/records/{id}` (read, change,
//! delete), each running the Custom Data tool of the same job with its checks and reply.
//!
//! Tables belong to the caller's user and, for a caller with an agent, that agent — exactly
//! what the tools see. A person's export and erasure (`data.rs`) include every table and row.

use axum::extract::State;
use serde_json::{Map, Value, json};
use toolsmith_builtins::custom::CustomOp;
use toolsmith_core::data::RecordScope;
use toolsmith_core::object;
use toolsmith_service::ServiceError;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiJson, ApiPath, QueryPairs};
use super::require;
use crate::AppState;
use crate::auth::{Identity, Scope};

const TABLE_DOC: &str = "The table's name (like `books`) or id";

/// `op` with `args` on the caller's tables, if the caller holds `needs`.
async fn run(
    state: &AppState,
    identity: &Identity,
    needs: Scope,
    op: CustomOp,
    args: &Value,
) -> Result<Value, ApiError> {
    require(identity, needs)?;
    let scope = RecordScope::new(identity.user_id.clone(), identity.agent_id.as_deref());
    Ok(state.service.custom_data(&scope, op, args).await?)
}

/// List your custom tables
///
/// The answer is `list_custom_tables`'s: `{count, tables}`, each with its column and record
/// counts.
#[utoipa::path(
    get, path = "/api/v1/data/custom", tag = "data", operation_id = "listCustomTables",
    responses((status = 200, description = "The tables", body = Object))
)]
pub async fn list_tables(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let out = run(
        &state,
        &identity,
        Scope::ToolsRead,
        CustomOp::ListTables,
        &json!({}),
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// Create a custom table
///
/// The body is `create_custom_table`'s arguments: `table` (its name), `displayName`,
/// `description`, `columns` (each `name`, `type`, `required`, `default`, `description`).
#[utoipa::path(
    post, path = "/api/v1/data/custom", tag = "data", operation_id = "createCustomTable",
    request_body(content = Object, description = "The table: table, displayName, description, columns"),
    responses(
        (status = 201, description = "The table as stored", body = Object),
        (status = 422, description = "A bad name or column, a name taken, or the table limit, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn create_table(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let out = run(
        &state,
        &identity,
        Scope::ToolsWrite,
        CustomOp::CreateTable,
        &body,
    )
    .await?;
    Ok(ApiOk::created(out))
}

/// Describe a custom table
#[utoipa::path(
    get, path = "/api/v1/data/custom/{table}", tag = "data", operation_id = "describeCustomTable",
    params(("table" = String, Path, description = TABLE_DOC)),
    responses(
        (status = 200, description = "Its columns and figures", body = Object),
        (status = 404, description = "No such table of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn describe_table(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(table): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let args = json!({ "table": table });
    let out = run(
        &state,
        &identity,
        Scope::ToolsRead,
        CustomOp::DescribeTable,
        &args,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// Delete a custom table
///
/// Deletes the table and every record of it, for good. Needs `confirm=true`.
#[utoipa::path(
    delete, path = "/api/v1/data/custom/{table}", tag = "data", operation_id = "deleteCustomTable",
    params(
        ("table" = String, Path, description = TABLE_DOC),
        ("confirm" = String, Query, description = "Must be `true`: the table and its records go for good", pattern = "^true$")
    ),
    responses(
        (status = 200, description = "Deleted, with how many records went", body = Object),
        (status = 400, description = "Without confirm=true", body = super::error::ErrorEnvelope),
        (status = 404, description = "No such table of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete_table(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(table): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&["confirm"])?;
    if query.get("confirm") != Some("true") {
        return Err(ApiError::bad_request(
            "confirmation_required",
            "this deletes the table and all of its records for good: add ?confirm=true",
        ));
    }
    let args = json!({ "table": table, "confirm": true });
    let out = run(
        &state,
        &identity,
        Scope::ToolsWrite,
        CustomOp::DeleteTable,
        &args,
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// List or search a table's records
///
/// Without `query`, `list_custom_records`: `filter` (a JSON object of column values, exact
/// match), `sortBy` (a column, `createdAt` or `updatedAt`), `sortOrder` (`asc`, `desc`),
/// `limit` (default 20, at most 50 — a larger one is refused here) and `offset`. With `query`,
/// `search_custom_records`: the records whose text columns match its words, best first
/// (`filter`, `limit` and `offset` apply too).
#[utoipa::path(
    get, path = "/api/v1/data/custom/{table}/records", tag = "data", operation_id = "listCustomRecords",
    params(
        ("table" = String, Path, description = TABLE_DOC),
        ("query" = Option<String>, Query, description = "Words to search the text columns for"),
        ("filter" = Option<String>, Query, description = "A JSON object of column values to match exactly, like {\"genre\":\"sci-fi\"}"),
        ("sortBy" = Option<String>, Query, description = "A column, or createdAt (default) or updatedAt"),
        ("sortOrder" = Option<String>, Query, description = "asc or desc"),
        ("limit" = Option<u32>, Query, description = "Records a page (1 to 50, default 20)"),
        ("offset" = Option<u32>, Query, description = "Records to skip")
    ),
    responses(
        (status = 200, description = "The records", body = Object),
        (status = 404, description = "No such table of yours", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad filter, sort or page, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn list_rows(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(table): ApiPath<String>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&["query", "filter", "sortBy", "sortOrder", "limit", "offset"])?;
    let mut args = Map::new();
    args.insert("table".to_owned(), json!(table));
    for (name, raw) in &query.0 {
        let value = match name.as_str() {
            "limit" | "offset" => raw.parse::<i64>().map(Value::from).map_err(|_| {
                ApiError::bad_request("invalid_query", format!("`{name}` must be a whole number"))
            })?,
            // A filter names the table's own columns: like a bad value, a 422.
            "filter" => serde_json::from_str(raw).map_err(|_| {
                ServiceError::Validation(
                    "`filter` must be a JSON object of column values, like {\"genre\":\"sci-fi\"}"
                        .to_owned(),
                )
            })?,
            _ => json!(raw),
        };
        args.insert(name.clone(), value);
    }
    let op = if args.contains_key("query") {
        if args.contains_key("sortBy") || args.contains_key("sortOrder") {
            return Err(ServiceError::Validation(
                "a search returns the best matches first: leave out sortBy and sortOrder"
                    .to_owned(),
            )
            .into());
        }
        CustomOp::SearchRows
    } else {
        CustomOp::ListRows
    };
    let out = run(
        &state,
        &identity,
        Scope::ToolsRead,
        op,
        &Value::Object(args),
    )
    .await?;
    Ok(ApiOk::ok(out))
}

/// Add a record to a table
///
/// The body is the record's column values (`add_custom_record`'s `data`); the tools'
/// `batch_add_custom_records` adds up to 50 at once.
#[utoipa::path(
    post, path = "/api/v1/data/custom/{table}/records", tag = "data", operation_id = "createCustomRecord",
    params(("table" = String, Path, description = TABLE_DOC)),
    request_body(content = Object, description = "The record's column values"),
    responses(
        (status = 201, description = "The record as stored", body = Object),
        (status = 404, description = "No such table of yours", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad value or a limit, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn add_row(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(table): ApiPath<String>,
    query: QueryPairs,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    let args = json!({"table": table, "data": body});
    let out = run(
        &state,
        &identity,
        Scope::ToolsWrite,
        CustomOp::AddRow,
        &args,
    )
    .await?;
    Ok(ApiOk::created(out))
}

/// `op` on one record of a table.
async fn one_row(
    state: &AppState,
    identity: &Identity,
    needs: Scope,
    op: CustomOp,
    (table, id): (String, String),
    data: Option<Value>,
) -> Result<ApiOk<Value>, ApiError> {
    let mut args = json!({ "table": table, "recordId": id });
    if let Some(data) = data {
        object::set(&mut args, "data", data);
    }
    Ok(ApiOk::ok(run(state, identity, needs, op, &args).await?))
}

/// One record of a table
#[utoipa::path(
    get, path = "/api/v1/data/custom/{table}/records/{id}", tag = "data", operation_id = "getCustomRecord",
    params(("table" = String, Path, description = TABLE_DOC), ("id" = String, Path, description = "The record's id")),
    responses(
        (status = 200, description = "The record", body = Object),
        (status = 404, description = "No such table or record of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn get_row(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(path): ApiPath<(String, String)>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    one_row(
        &state,
        &identity,
        Scope::ToolsRead,
        CustomOp::GetRow,
        path,
        None,
    )
    .await
}

/// Change a record of a table
///
/// The body holds the columns to change; `null` clears an optional one.
#[utoipa::path(
    patch, path = "/api/v1/data/custom/{table}/records/{id}", tag = "data", operation_id = "updateCustomRecord",
    params(("table" = String, Path, description = TABLE_DOC), ("id" = String, Path, description = "The record's id")),
    request_body(content = Object, description = "The columns to change"),
    responses(
        (status = 200, description = "The record now", body = Object),
        (status = 404, description = "No such table or record of yours", body = super::error::ErrorEnvelope),
        (status = 422, description = "A bad value, named", body = super::error::ErrorEnvelope)
    )
)]
pub async fn update_row(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(path): ApiPath<(String, String)>,
    query: QueryPairs,
    ApiJson(body): ApiJson<Value>,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    one_row(
        &state,
        &identity,
        Scope::ToolsWrite,
        CustomOp::UpdateRow,
        path,
        Some(body),
    )
    .await
}

/// Delete a record of a table
#[utoipa::path(
    delete, path = "/api/v1/data/custom/{table}/records/{id}", tag = "data", operation_id = "deleteCustomRecord",
    params(("table" = String, Path, description = TABLE_DOC), ("id" = String, Path, description = "The record's id")),
    responses(
        (status = 200, description = "Deleted", body = Object),
        (status = 404, description = "No such table or record of yours", body = super::error::ErrorEnvelope)
    )
)]
pub async fn delete_row(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(path): ApiPath<(String, String)>,
    query: QueryPairs,
) -> Result<ApiOk<Value>, ApiError> {
    query.check(&[])?;
    one_row(
        &state,
        &identity,
        Scope::ToolsWrite,
        CustomOp::DeleteRow,
        path,
        None,
    )
    .await
}
