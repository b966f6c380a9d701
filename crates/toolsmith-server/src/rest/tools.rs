//! `/api/v1/tools`: every tool the caller can run (built-ins and active custom tools), running
//! any of them, and the function-calling exports (OpenAI, Anthropic, MCP shapes).

use axum::extract::State;
use serde_json::Value;
use toolsmith_core::ToolOrigin;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::{ApiPath, OptionalApiJson, QueryPairs};
use super::types::{
    ExecuteBody, Execution, Export, ExportFormat, ExportedTool, Source, ToolSummary,
    ToolSummaryList,
};
use super::{execution_response, require};
use crate::AppState;
use crate::auth::{Identity, Scope};

/// Longest `conversationId` accepted.
const MAX_CONVERSATION_ID_CHARS: usize = 200;

/// Query parameters of `GET /api/v1/tools/definitions`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ExportParams {
    /// `openai` (default), `anthropic` or `mcp`.
    format: Option<ExportFormat>,
}

/// Every tool the caller can run
///
/// Built-in tools, then the caller's active custom tools, each sorted by name, with where it
/// comes from (`source`), its category and its parameters.
#[utoipa::path(
    get, path = "/api/v1/tools", tag = "tools", operation_id = "listTools",
    responses((status = 200, description = "The tools", body = inline(super::openapi::ToolSummaryListEnvelope)))
)]
pub async fn list(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<ToolSummaryList>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&[])?;
    let tools: Vec<ToolSummary> = state
        .service
        .visible_tools(&identity.tool_context())
        .iter()
        .map(|t| ToolSummary {
            name: t.definition.name.clone(),
            description: t.definition.description.clone(),
            parameters: t.definition.parameters.clone(),
            category: t.definition.category.clone(),
            source: match &t.origin {
                ToolOrigin::BuiltIn { .. } => Source::Builtin,
                ToolOrigin::Custom { .. } => Source::Custom,
                ToolOrigin::Mcp { .. } => Source::Mcp,
            },
            id: t.custom_id().map(str::to_owned),
            version: t.version,
            requires_confirmation: t.definition.requires_confirmation,
            annotations: t.definition.annotations.clone(),
        })
        .collect();
    Ok(ApiOk::ok(ToolSummaryList {
        count: tools.len() as u64,
        tools,
    }))
}

/// Function-calling definitions
///
/// Every tool the caller can run, in the shape a model API takes: `openai`
/// (`[{type: "function", function: {name, description, parameters}}]`), `anthropic`
/// (`[{name, description, input_schema}]`) or `mcp` (`[{name, description, inputSchema}]`).
/// Tags are never included. An unknown format is a 400.
#[utoipa::path(
    get, path = "/api/v1/tools/definitions", tag = "tools", operation_id = "exportToolDefinitions",
    params(ExportParams),
    responses((status = 200, description = "The definitions", body = inline(super::openapi::ExportEnvelope)))
)]
pub async fn definitions(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Export>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["format"])?;
    let format = match query.get("format") {
        None => ExportFormat::Openai,
        Some(text) => ExportFormat::parse(text).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_query",
                format!(
                    "unknown format '{}' (expected one of: openai, anthropic, mcp)",
                    text.chars().take(64).collect::<String>()
                ),
            )
        })?,
    };
    let visible = state.service.visible_tools(&identity.tool_context());
    let mut name_map = std::collections::BTreeMap::new();
    if format != ExportFormat::Mcp {
        for tool in &visible {
            let exported = toolsmith_core::name::function_name(tool.name());
            if exported != tool.name() {
                name_map.insert(exported, tool.name().to_owned());
            }
        }
    }
    let tools: Vec<ExportedTool> = visible
        .iter()
        .map(|t| ExportedTool::new(format, t.definition.clone()))
        .collect();
    Ok(ApiOk::ok(Export {
        format,
        count: tools.len() as u64,
        tools,
        name_map,
    }))
}

/// Run any tool
///
/// Runs a built-in or one of the caller's active custom tools through the whole pipeline. A
/// tool that fails still answers 200 with `isError: true`; an unknown tool is a 404 and
/// arguments that break its schema a 422 (violations and schema in `error.details`).
#[utoipa::path(
    post, path = "/api/v1/tools/{name}/execute", tag = "tools", operation_id = "executeTool",
    params(("name" = String, Path, description = "The tool's name", example = "calculate")),
    request_body(content = Option<ExecuteBody>, description = "Optional; no body runs with `{}`"),
    responses(
        (status = 200, description = "The result (also when the tool failed: see `isError`)", body = inline(super::openapi::ExecutionEnvelope)),
        (status = 404, description = "No such tool for this caller", body = super::error::ErrorEnvelope),
        (status = 415, description = "A body that is not JSON", body = super::error::ErrorEnvelope),
        (status = 422, description = "The arguments break the tool's schema", body = super::error::ErrorEnvelope)
    )
)]
pub async fn execute(
    State(state): State<AppState>,
    identity: Identity,
    ApiPath(name): ApiPath<String>,
    query: QueryPairs,
    headers: axum::http::HeaderMap,
    OptionalApiJson(body): OptionalApiJson<ExecuteBody>,
) -> Result<ApiOk<Execution>, ApiError> {
    require(&identity, Scope::ToolsExecute)?;
    query.check(&[])?;
    let body = body.unwrap_or_default();
    let ctx = call_context(&identity, &headers, body.conversation_id, body.context)?;
    let args = Value::Object(body.arguments.unwrap_or_default());
    let res = state.service.execute(&name, args, ctx).await;
    execution_response(&name, res, super::Ran::Catalog)
}

/// The context of a call made through REST (the synchronous execute, a task): the caller, its
/// subagent depth header, the conversation id (checked) and what it knows of the conversation.
pub(crate) fn call_context(
    identity: &Identity,
    headers: &axum::http::HeaderMap,
    conversation_id: Option<String>,
    context: Option<serde_json::Map<String, Value>>,
) -> Result<toolsmith_core::ToolContext, ApiError> {
    let depth = super::subagent_depth(headers)?;
    if conversation_id
        .as_ref()
        .is_some_and(|c| c.chars().count() > MAX_CONVERSATION_ID_CHARS)
    {
        return Err(ApiError::bad_request(
            "invalid_body",
            format!("conversationId is longer than {MAX_CONVERSATION_ID_CHARS} characters"),
        ));
    }
    let mut ctx = identity.tool_context();
    ctx.conversation_id = conversation_id;
    ctx.subagent_depth = depth;
    ctx.call_context = context.map(|c| std::sync::Arc::new(Value::Object(c)));
    Ok(ctx)
}
