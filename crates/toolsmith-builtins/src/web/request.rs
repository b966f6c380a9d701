//! `http_request` (any method, text answer) and `json_api` (JSON in, JSON out): one request
//! through the client, with the family's limits on headers, body, size and time.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;
use toolsmith_core::object;

use super::{
    Call, MAX_HEADERS, MAX_REQUEST_BODY, MAX_RESPONSE_BYTES, ToolError, WebRequest, WebResponse,
    timeout_arg, url_arg,
};

const METHODS: [&str; 7] = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

fn schema(body_type: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "Absolute http(s) URL."},
            "method": {"type": "string", "enum": METHODS, "default": "GET", "description": "The HTTP method (GET reads; POST, PUT, PATCH and DELETE may change something on the other side)."},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Request headers (at most 50)."},
            "body": body_type,
            "timeoutMs": {"type": "integer", "minimum": 1, "maximum": 30000, "description": "Stop after this many milliseconds (at most 30000)."}
        },
        "required": ["url"],
        "additionalProperties": false
    })
}

pub fn http_definition() -> ToolDefinition {
    ToolDefinition::new(
        "http_request",
        "Send an HTTP request (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS) to a URL and get \
         the status, headers and body as text. Responses over 5 MB and requests over 30 s are \
         refused; private addresses are refused unless the administrator allows them.",
        schema(json!({"type": "string", "description": "Request body as text (at most 1 MB)."})),
    )
    .with_tags(&[
        "http",
        "request",
        "api",
        "call an api",
        "rest",
        "post",
        "get",
        "url",
        "endpoint",
    ])
}

pub fn json_definition() -> ToolDefinition {
    ToolDefinition::new(
        "json_api",
        "Call a JSON API: sends 'body' as JSON (Content-Type and Accept application/json) and \
         parses the answer as JSON. Same limits as http_request.",
        schema(json!({"description": "Any JSON value, sent as the request body."})),
    )
    .with_tags(&[
        "json",
        "api",
        "call an api",
        "rest",
        "endpoint",
        "webhook",
        "http",
    ])
}

/// Builds the request from the shared arguments; `body` is already encoded.
fn build(
    args: &Value,
    body: Option<Vec<u8>>,
    extra: &[(&str, &str)],
) -> Result<WebRequest, ToolError> {
    let url = url_arg(args)?;
    let method = args
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("GET")
        .to_ascii_uppercase();
    if !METHODS.contains(&method.as_str()) {
        return Err(ToolError::Args(format!(
            "'method' must be one of {}, not '{method}'",
            METHODS.join(", ")
        )));
    }
    let mut headers: Vec<(String, String)> = extra
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
    if let Some(given) = args.get("headers") {
        let given = given.as_object().ok_or_else(|| {
            ToolError::Args("'headers' must be an object of name: value strings".to_owned())
        })?;
        if given.len() > MAX_HEADERS {
            return Err(ToolError::Args(format!(
                "'headers' has {} entries; send at most {MAX_HEADERS}",
                given.len()
            )));
        }
        for (name, value) in given {
            let value = value.as_str().ok_or_else(|| {
                ToolError::Args(format!("header '{name}' must be a string value"))
            })?;
            headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            headers.push((name.clone(), value.to_owned()));
        }
    }
    if body.as_ref().is_some_and(|b| b.len() > MAX_REQUEST_BODY) {
        return Err(ToolError::Args(format!(
            "'body' is larger than {MAX_REQUEST_BODY} bytes; send a smaller body"
        )));
    }
    Ok(WebRequest {
        method,
        url: url.into(),
        headers,
        body,
        timeout: timeout_arg(args),
        max_response_bytes: MAX_RESPONSE_BYTES,
    })
}

fn headers_json(response: &WebResponse) -> Value {
    let mut map = serde_json::Map::new();
    for (name, value) in &response.headers {
        map.entry(name.to_ascii_lowercase())
            .or_insert_with(|| Value::String(value.clone()));
    }
    Value::Object(map)
}

pub async fn http_request(call: Call<'_>) -> Result<Value, ToolError> {
    let body = match call.args.get("body") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone().into_bytes()),
        Some(_) => {
            return Err(ToolError::Args(
                "'body' must be a string (use json_api for JSON)".to_owned(),
            ));
        }
    };
    let request = build(&call.args, body, &[])?;
    let response = call.client.send(&call.ctx.user_id, request).await?;
    Ok(json!({
        "status": response.status,
        "ok": (200..300).contains(&response.status),
        "url": response.final_url,
        "headers": headers_json(&response),
        "body": String::from_utf8_lossy(&response.body),
        "bytes": response.body.len(),
    }))
}

pub async fn json_api(call: Call<'_>) -> Result<Value, ToolError> {
    let body = match call.args.get("body") {
        None => None,
        Some(value) => Some(
            serde_json::to_vec(value)
                .map_err(|e| ToolError::Args(format!("'body' cannot be encoded as JSON: {e}")))?,
        ),
    };
    let mut extra = vec![("Accept", "application/json")];
    if body.is_some() {
        extra.push(("Content-Type", "application/json"));
    }
    let request = build(&call.args, body, &extra)?;
    let response = call.client.send(&call.ctx.user_id, request).await?;
    let text = String::from_utf8_lossy(&response.body);
    let (data, parse_error) = if text.trim().is_empty() {
        (Value::Null, None)
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(v) => (v, None),
            Err(e) => (
                Value::Null,
                Some(format!(
                    "the answer is not JSON ({e}); use http_request to see it as text"
                )),
            ),
        }
    };
    let mut out = json!({
        "status": response.status,
        "ok": (200..300).contains(&response.status),
        "url": response.final_url,
        "headers": headers_json(&response),
        "data": data,
    });
    if let Some(e) = parse_error {
        object::set(&mut out, "error", json!(e));
        object::set(
            &mut out,
            "text",
            json!(text.chars().take(2000).collect::<String>()),
        );
    }
    Ok(out)
}
