//! `search_web` / `web_search` (003's and 001's names for one tool): a web search through the
//! provider the caller configured in the Config Center — a SearXNG instance, service
//! [`SERVICE`] with field `base_url`, asked through its JSON API (`/search?format=json`).
//! Without that entry the answer says exactly what to create.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Call, MAX_RESPONSE_BYTES, ToolError, WebRequest, str_arg, timeout_arg};

/// The Config Center service that names the search provider.
pub const SERVICE: &str = "web_search";
/// Default and largest result counts (003's tool max limit `search_web.maxResults`).
const DEFAULT_RESULTS: usize = 10;
const MAX_RESULTS: usize = 20;
const MAX_QUERY_CHARS: usize = 500;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "description": "What to search for."},
            "maxResults": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": DEFAULT_RESULTS, "description": "How many results to return at most."},
            "timeoutMs": {"type": "integer", "minimum": 1, "maximum": 30000, "description": "Stop after this many milliseconds (at most 30000)."}
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// The two names of the tool: 003's `search_web` and 001's `web_search`.
pub fn definitions() -> impl Iterator<Item = ToolDefinition> {
    [
        (
            "search_web",
            "Search the web and get titles, URLs and snippets of the top results, through the \
             search provider (SearXNG) configured in the Config Center. The same tool as \
             web_search.",
        ),
        (
            "web_search",
            "Search the web for a query: titles, URLs and snippets (GoClaw's name for \
             search_web).",
        ),
    ]
    .into_iter()
    .map(|(name, description)| {
        ToolDefinition::new(name, description, schema()).with_tags(&[
            "search the web",
            "web search",
            "search",
            "google",
            "internet",
            "lookup",
            "find online",
            "searxng",
        ])
    })
}

pub async fn run(call: Call<'_>) -> Result<Value, ToolError> {
    let query = str_arg(&call.args, "query")?.trim().to_owned();
    if query.is_empty() {
        return Err(ToolError::Args(
            "'query' is empty: pass the words to search for".to_owned(),
        ));
    }
    let max_results = call
        .args
        .get("maxResults")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_RESULTS, |n| {
            usize::try_from(n).unwrap_or(MAX_RESULTS)
        })
        .clamp(1, MAX_RESULTS);
    let not_configured = || {
        ToolError::NotConfigured(format!(
            "no web search provider is configured: create the Config Center service \
             '{SERVICE}' with a field 'base_url' set to your SearXNG instance (e.g. \
             'https://searx.example.org', JSON output enabled), e.g. `toolsmith config` or \
             POST /api/v1/config/services"
        ))
    };
    let values = match &call.env.config {
        Some(config) => config.values(&call.ctx.user_id, SERVICE).await,
        None => None,
    }
    .ok_or_else(not_configured)?;
    let base = values
        .get("base_url")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(not_configured)?;
    let mut url = url::Url::parse(base.trim()).map_err(|e| {
        ToolError::NotConfigured(format!(
            "the Config Center service '{SERVICE}' has base_url '{base}', which is not a URL \
             ({e}): set it to your SearXNG instance, e.g. 'https://searx.example.org'"
        ))
    })?;
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    let mut url = url
        .join("search")
        .map_err(|e| ToolError::NotConfigured(format!("'{SERVICE}' base_url: {e}")))?;
    url.query_pairs_mut()
        .append_pair("q", &query)
        .append_pair("format", "json");
    let request = WebRequest {
        method: "GET".to_owned(),
        url: url.into(),
        headers: vec![("Accept".to_owned(), "application/json".to_owned())],
        body: None,
        timeout: timeout_arg(&call.args),
        max_response_bytes: MAX_RESPONSE_BYTES,
    };
    let response = call.client.send(&call.ctx.user_id, request).await?;
    if !(200..300).contains(&response.status) {
        return Err(ToolError::Provider(format!(
            "the search provider answered HTTP {}: check the '{SERVICE}' base_url and that \
             the instance allows format=json",
            response.status
        )));
    }
    let data: Value = serde_json::from_slice(&response.body).map_err(|e| {
        ToolError::Provider(format!(
            "the search provider's answer is not JSON ({e}): enable the json format in the \
             SearXNG settings (search.formats)"
        ))
    })?;
    let results: Vec<Value> = data
        .get("results")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .take(max_results)
                .map(|r| {
                    json!({
                        "title": r.get("title").and_then(Value::as_str).unwrap_or(""),
                        "url": r.get("url").and_then(Value::as_str).unwrap_or(""),
                        "snippet": r.get("content").and_then(Value::as_str).unwrap_or(""),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(json!({"query": query, "count": results.len(), "results": results}))
}
