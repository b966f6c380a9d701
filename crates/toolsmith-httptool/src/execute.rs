//! Running a tool: resolve parameters, render the request, send it through the injected
//! sender, map the response, render the template, and turn failures into the definition's
//! `error_handling` messages.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::context::{CallContext, resolve_arguments};
use crate::definition::{ErrorHandling, HttpToolDefinition, ParamSource};
use crate::error::{HttpErrorKind, HttpToolError};
use crate::render::{MAX_RESPONSE_BYTES, prepare_request, timeout_of};
use crate::sender::{HttpSender, SendError};
use crate::template::{TemplateError, render_template};

/// What the host allows beyond the fixed rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityRules {
    /// Allow `http://` endpoints (off except for on-prem setups and tests).
    pub allow_plain_http: bool,
}

/// A successful call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HttpToolOutput {
    /// The rendered response template (or the mapped data as JSON when there is none).
    pub text: String,
    /// The mapped fields (or the whole response when there is no mapping).
    pub data: Value,
    /// The upstream HTTP status.
    pub status: u16,
}

/// Runs `def` with the model's `args` and the call's context.
pub async fn execute(
    def: &HttpToolDefinition,
    args: &Map<String, Value>,
    ctx: &CallContext<'_>,
    sender: &dyn HttpSender,
    rules: &SecurityRules,
) -> Result<HttpToolOutput, HttpToolError> {
    execute_inner(def, args, ctx, sender, rules)
        .await
        .map(|(output, _)| output)
}

/// `execute`, also returning the mapped names whose path found nothing.
pub(crate) async fn execute_inner(
    def: &HttpToolDefinition,
    args: &Map<String, Value>,
    ctx: &CallContext<'_>,
    sender: &dyn HttpSender,
    rules: &SecurityRules,
) -> Result<(HttpToolOutput, Vec<String>), HttpToolError> {
    let resolved = resolve_arguments(def, args, ctx)?;
    let request = prepare_request(def, &resolved, ctx.store)?;
    if !rules.allow_plain_http && !request.url.starts_with("https://") {
        return Err(HttpToolError::new(
            HttpErrorKind::Render,
            "the endpoint must use https",
        ));
    }
    let handling = &def.error_handling;
    let sent = tokio::time::timeout(timeout_of(def), sender.send(request)).await;
    let response = match sent {
        Err(_elapsed) => return Err(send_failure(handling, SendError::Timeout)),
        Ok(Err(e)) => return Err(send_failure(handling, e)),
        Ok(Ok(response)) => response,
    };
    let status = response.status;
    if response.body.len() > MAX_RESPONSE_BYTES {
        return Err(send_failure(handling, SendError::TooLarge).with_status(status));
    }
    if !(200..300).contains(&status) {
        return Err(status_failure(handling, status));
    }
    let body: Value = if response.body.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(&response.body).map_err(|e| {
            HttpToolError::new(
                HttpErrorKind::InvalidResponse,
                message(&handling.invalid_response, DEFAULT_INVALID_RESPONSE),
            )
            .with_status(status)
            .with_detail(format!("response is not JSON: {e}"))
        })?
    };
    let (data, missing) = map_response(def, &body)?;
    let text = match &def.response_template {
        None => data.to_string(),
        Some(template) => {
            let vars = template_vars(def, &resolved, &data, &body);
            render_template(template, &vars).map_err(|e| template_failure(&e, status))?
        }
    };
    Ok((HttpToolOutput { text, data, status }, missing))
}

const DEFAULT_NOT_FOUND: &str = "The requested record was not found.";
const DEFAULT_API_ERROR: &str = "The service returned an error. Please try again later.";
const DEFAULT_TIMEOUT: &str = "The service did not answer in time. Please try again later.";
const DEFAULT_UNAUTHORIZED: &str = "The service refused the request: the tool is not authorized.";
const DEFAULT_RATE_LIMITED: &str =
    "The service is receiving too many requests. Please try again shortly.";
const DEFAULT_INVALID_RESPONSE: &str = "The service sent a response that could not be read.";

fn message(custom: &Option<String>, default: &str) -> String {
    custom.clone().unwrap_or_else(|| default.to_owned())
}

/// Maps a non-2xx status to its `error_handling` message.
fn status_failure(handling: &ErrorHandling, status: u16) -> HttpToolError {
    let (kind, text) = match status {
        404 => (
            HttpErrorKind::NotFound,
            message(&handling.not_found, DEFAULT_NOT_FOUND),
        ),
        401 | 403 => (
            HttpErrorKind::Unauthorized,
            message(&handling.unauthorized, DEFAULT_UNAUTHORIZED),
        ),
        429 => (
            HttpErrorKind::RateLimited,
            message(&handling.rate_limited, DEFAULT_RATE_LIMITED),
        ),
        408 | 504 => (
            HttpErrorKind::Timeout,
            message(&handling.timeout, DEFAULT_TIMEOUT),
        ),
        _ => (
            HttpErrorKind::ApiError,
            message(&handling.api_error, DEFAULT_API_ERROR),
        ),
    };
    HttpToolError::new(kind, text)
        .with_status(status)
        .with_detail(format!("upstream answered HTTP {status}"))
}

fn send_failure(handling: &ErrorHandling, err: SendError) -> HttpToolError {
    match err {
        SendError::Timeout => HttpToolError::new(
            HttpErrorKind::Timeout,
            message(&handling.timeout, DEFAULT_TIMEOUT),
        ),
        SendError::Refused(why) => HttpToolError::new(
            HttpErrorKind::Refused,
            format!("the request was refused by the egress policy: {why}"),
        ),
        SendError::TooLarge => HttpToolError::new(
            HttpErrorKind::TooLarge,
            format!("the response was larger than {MAX_RESPONSE_BYTES} bytes"),
        ),
        SendError::Connection(why) => HttpToolError::new(
            HttpErrorKind::ApiError,
            message(&handling.api_error, DEFAULT_API_ERROR),
        )
        .with_detail(format!("connection failed: {why}")),
    }
}

fn template_failure(err: &TemplateError, status: u16) -> HttpToolError {
    HttpToolError::new(HttpErrorKind::Template, err.to_string()).with_status(status)
}

/// The mapped fields (null where a path finds nothing) and the names that found nothing.
fn map_response(
    def: &HttpToolDefinition,
    body: &Value,
) -> Result<(Value, Vec<String>), HttpToolError> {
    if def.response_mapping.is_empty() {
        return Ok((body.clone(), Vec::new()));
    }
    let mut data = Map::new();
    let mut missing = Vec::new();
    for (name, path) in &def.response_mapping {
        let parsed = crate::path::parse(path)
            .map_err(|e| HttpToolError::new(HttpErrorKind::InvalidResponse, e.to_string()))?;
        let value = parsed.lookup(body).cloned();
        if value.is_none() {
            missing.push(name.clone());
        }
        data.insert(name.clone(), value.unwrap_or(Value::Null));
    }
    Ok((Value::Object(data), missing))
}

/// The template sees the parameters (except config-filled ones, which may be secrets), then
/// the mapped fields, and the whole response as `response`.
fn template_vars(
    def: &HttpToolDefinition,
    resolved: &Map<String, Value>,
    data: &Value,
    body: &Value,
) -> Map<String, Value> {
    let mut vars: Map<String, Value> = resolved
        .iter()
        .filter(|(name, _)| {
            def.parameters
                .iter()
                .any(|p| &p.name == *name && p.source != ParamSource::Store)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Value::Object(mapped) = data
        && !def.response_mapping.is_empty()
    {
        for (k, v) in mapped {
            vars.insert(k.clone(), v.clone());
        }
    }
    vars.insert("response".into(), body.clone());
    vars
}
