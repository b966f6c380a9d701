//! What the families that talk to an outside service share (weather, translation, messaging,
//! data extraction): the caller's Config Center service that configures the provider, its
//! endpoints, and one JSON request through the web tools' client (the egress guard), whose
//! failures name the service to check.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::web::{Call, MAX_TIMEOUT, ToolError, WebRequest};

/// The default entry's values of the caller's Config Center service `service`, if any.
pub(crate) async fn values(call: &Call<'_>, service: &str) -> Option<BTreeMap<String, Value>> {
    match &call.env.config {
        Some(config) => config.values(&call.ctx.user_id, service).await,
        None => None,
    }
}

/// The non-empty text of field `name` (or one of its other spellings) in `values`.
pub(crate) fn field<'a>(
    values: Option<&'a BTreeMap<String, Value>>,
    names: &[&str],
) -> Option<&'a str> {
    let values = values?;
    names.iter().find_map(|name| {
        values
            .get(*name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    })
}

/// `base` (an `http:` or `https:` URL, from field `field` of `service`) joined with `path`.
pub(crate) fn endpoint(
    service: &str,
    field: &str,
    base: &str,
    path: &str,
) -> Result<url::Url, ToolError> {
    let bad = |why: String| {
        ToolError::NotConfigured(format!(
            "the Config Center service '{service}' has {field} '{base}', which {why}: set it to \
             the provider's http(s) URL"
        ))
    };
    let mut url = url::Url::parse(base).map_err(|e| bad(format!("is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("is not http: or https:".to_owned()));
    }
    if !url.path().ends_with('/') {
        url.set_path(&format!("{}/", url.path()));
    }
    url.join(path).map_err(|e| bad(e.to_string()))
}

/// A provider's answer: its status and its body as JSON (`Value::Null` when it is not JSON).
pub(crate) struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Answer {
    /// The provider's own words about a failure (`error`, `reason`, `message`, `error.message`),
    /// cut to 300 characters.
    pub(crate) fn reason(&self) -> String {
        let said = self
            .body
            .pointer("/error/message")
            .or_else(|| self.body.get("reason"))
            .or_else(|| self.body.get("error"))
            .or_else(|| self.body.get("message"))
            .and_then(Value::as_str);
        said.map(|s| format!(" ({})", s.chars().take(300).collect::<String>()))
            .unwrap_or_default()
    }
}

/// Sends one request with a JSON body (or none) for the caller and reads the answer, at most
/// `max_bytes` of it.
pub(crate) async fn send(
    call: &Call<'_>,
    method: &str,
    url: url::Url,
    headers: Vec<(String, String)>,
    body: Option<&Value>,
    max_bytes: usize,
) -> Result<Answer, ToolError> {
    let mut headers = headers;
    headers.push(("Accept".to_owned(), "application/json".to_owned()));
    if body.is_some() {
        headers.push(("Content-Type".to_owned(), "application/json".to_owned()));
    }
    let request = WebRequest {
        method: method.to_owned(),
        url: url.into(),
        headers,
        body: body.map(|b| b.to_string().into_bytes()),
        timeout: MAX_TIMEOUT,
        max_response_bytes: max_bytes,
    };
    let response = call.client.send(&call.ctx.user_id, request).await?;
    Ok(Answer {
        status: response.status,
        body: serde_json::from_slice(&response.body).unwrap_or(Value::Null),
    })
}
