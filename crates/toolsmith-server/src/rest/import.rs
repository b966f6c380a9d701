//! HTTP tools in their own format (spec 004): `POST /api/v1/custom-tools/import` takes a
//! definition as YAML or JSON and creates a tool of kind `http`; `GET /api/v1/tools/suggest`
//! finds the tools whose triggers match a user's message.

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header::CONTENT_TYPE};
use toolsmith_service::Suggestion;

use super::envelope::ApiOk;
use super::error::ApiError;
use super::extract::QueryPairs;
use super::require;
use super::types::ToolRecord;
use crate::AppState;
use crate::auth::{Identity, Scope};

/// The media types a definition may come as. None of them is one a web page can send to
/// another origin without a CORS preflight (`text/plain` is), so a page cannot import a tool
/// through the user's browser (`crate::edge` refuses the others before this handler runs).
pub(crate) const DEFINITION_TYPES: [&str; 4] = [
    "application/yaml",
    "application/x-yaml",
    "text/yaml",
    "application/json",
];

/// Longest message `suggest` looks at, in characters.
const MAX_MESSAGE_CHARS: usize = 4000;

/// Import an HTTP tool
///
/// The body is a spec-004 definition (YAML or JSON). The tool is created with kind `http`; its
/// name and description come from the definition, its parameters from the `explicit`
/// parameters. A definition that breaks the rules is a 422 naming every problem.
#[utoipa::path(
    post, path = "/api/v1/custom-tools/import", tag = "custom-tools", operation_id = "importCustomTool",
    request_body(content = String, description = "The definition", content_type = "application/yaml"),
    responses(
        (status = 201, description = "Created", body = inline(super::openapi::ToolEnvelope)),
        (status = 409, description = "The name is taken", body = super::error::ErrorEnvelope),
        (status = 413, description = "Too large", body = super::error::ErrorEnvelope),
        (status = 415, description = "Not YAML or JSON", body = super::error::ErrorEnvelope),
        (status = 422, description = "Invalid definition", body = super::error::ErrorEnvelope)
    )
)]
pub async fn import(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<ApiOk<ToolRecord>, ApiError> {
    require(&identity, Scope::ToolsWrite)?;
    query.check(&[])?;
    let media = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    if !media
        .as_deref()
        .is_some_and(|m| DEFINITION_TYPES.contains(&m))
    {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!(
                "send the definition as one of: {}",
                DEFINITION_TYPES.join(", ")
            ),
        ));
    }
    let body = body.map_err(|e| ApiError::new(e.status(), "invalid_body", e.body_text()))?;
    let text = std::str::from_utf8(&body)
        .map_err(|_| ApiError::bad_request("invalid_body", "the definition is not UTF-8"))?;
    let record = state
        .service
        .import_http_tool(&super::actor(&identity), text)
        .await?;
    let wire = super::custom_tools::with_missing_config(&state, record).await?;
    Ok(ApiOk::with_status(StatusCode::CREATED, wire))
}

/// Suggest tools for a message
///
/// The caller's active HTTP tools whose triggers occur in `q` (case-insensitive phrase match),
/// most matched triggers first.
#[utoipa::path(
    get, path = "/api/v1/tools/suggest", tag = "tools", operation_id = "suggestTools",
    params(("q" = String, Query, description = "The user's message")),
    responses(
        (status = 200, description = "Matching tools", body = Object),
        (status = 400, description = "No or too long `q`", body = super::error::ErrorEnvelope)
    )
)]
pub async fn suggest(
    State(state): State<AppState>,
    identity: Identity,
    query: QueryPairs,
) -> Result<ApiOk<Vec<Suggestion>>, ApiError> {
    require(&identity, Scope::ToolsRead)?;
    query.check(&["q"])?;
    let Some(message) = query.get("q") else {
        return Err(ApiError::bad_request(
            "invalid_query",
            "query parameter `q` (the user's message) is required",
        ));
    };
    if message.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::bad_request(
            "invalid_query",
            format!("query parameter `q` is longer than {MAX_MESSAGE_CHARS} characters"),
        ));
    }
    let found = state
        .service
        .suggest(&super::actor(&identity), message)
        .await?;
    Ok(ApiOk::ok(found))
}
