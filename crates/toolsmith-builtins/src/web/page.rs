//! `fetch_web_page` / `web_fetch` (003's and 001's names for one tool): a page fetched
//! through the client and turned into readable text with `html2text`, with its title and
//! links (capped) read by html5ever's tokenizer (`outline`); non-HTML text answers come back as
//! they are.

mod outline;

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Call, MAX_RESPONSE_BYTES, ToolError, WebRequest, timeout_arg, url_arg};

/// Default and largest `maxLength` (characters of text returned).
const DEFAULT_MAX_LENGTH: usize = 50_000;
const MAX_MAX_LENGTH: usize = 1_000_000;
/// Most links returned.
const MAX_LINKS: usize = 100;
/// Line width the text is wrapped at.
const WIDTH: usize = 100;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "Absolute http(s) URL of the page."},
            "maxLength": {"type": "integer", "minimum": 1, "maximum": MAX_MAX_LENGTH, "default": DEFAULT_MAX_LENGTH, "description": "Most characters of text to return; longer text is cut and 'truncated' is true."},
            "timeoutMs": {"type": "integer", "minimum": 1, "maximum": 30000, "description": "Stop after this many milliseconds (at most 30000)."}
        },
        "required": ["url"],
        "additionalProperties": false
    })
}

/// The two names of the tool: 003's `fetch_web_page` and 001's `web_fetch`.
pub fn definitions() -> impl Iterator<Item = ToolDefinition> {
    [
        (
            "fetch_web_page",
            "Fetch a web page and return it as readable text (HTML converted to plain text), \
             with its title and links. The same tool as web_fetch.",
        ),
        (
            "web_fetch",
            "Fetch a URL and return its content as readable text, with title and links \
             (GoClaw's name for fetch_web_page).",
        ),
    ]
    .into_iter()
    .map(|(name, description)| {
        ToolDefinition::new(name, description, schema()).with_tags(&[
            "fetch a web page",
            "web",
            "page",
            "url",
            "website",
            "html",
            "read",
            "scrape",
            "text",
            "browse",
            "article",
            "blog",
            "post",
        ])
    })
}

pub async fn run(call: Call<'_>) -> Result<Value, ToolError> {
    let url = url_arg(&call.args)?;
    let max_length = call
        .args
        .get("maxLength")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_MAX_LENGTH, |n| {
            usize::try_from(n).unwrap_or(MAX_MAX_LENGTH)
        })
        .clamp(1, MAX_MAX_LENGTH);
    let request = WebRequest {
        method: "GET".to_owned(),
        url: url.into(),
        headers: vec![(
            "Accept".to_owned(),
            "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5".to_owned(),
        )],
        body: None,
        timeout: timeout_arg(&call.args),
        max_response_bytes: MAX_RESPONSE_BYTES,
    };
    let response = call.client.send(&call.ctx.user_id, request).await?;
    let content_type = response
        .header("content-type")
        .unwrap_or("")
        .to_ascii_lowercase();
    let raw = String::from_utf8_lossy(&response.body).into_owned();
    let is_html = content_type.contains("html")
        || (content_type.is_empty() && raw.trim_start().starts_with('<'));
    let (title, text, links) = if is_html {
        readable(&raw, &response.final_url)
    } else {
        (None, raw, Vec::new())
    };
    let total = text.chars().count();
    let truncated = total > max_length;
    let text: String = if truncated {
        text.chars().take(max_length).collect()
    } else {
        text
    };
    Ok(json!({
        "url": response.final_url,
        "status": response.status,
        "contentType": content_type,
        "title": title,
        "text": text,
        "length": total,
        "truncated": truncated,
        "links": links,
    }))
}

/// Title, text and absolute links of an HTML document.
fn readable(html: &str, base: &str) -> (Option<String>, String, Vec<String>) {
    let outline = outline::outline(html, base, MAX_LINKS);
    let text = html2text::config::plain_no_decorate()
        .string_from_read(html.as_bytes(), WIDTH)
        .unwrap_or_else(|_| html.to_owned());
    (outline.title, text.trim().to_owned(), outline.links)
}
