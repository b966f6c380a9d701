//! `parse_receipt`: the expense a receipt image shows, read by a vision model the caller
//! configured in the Config Center — service [`SERVICE`] with `base_url` (an
//! OpenAI-compatible API, such as `https://api.openai.com/v1` or a local server), `api_key`
//! (sent as a bearer token; may be empty for a local server) and optionally `model` (default
//! [`DEFAULT_MODEL`]). Without it the answer names the entry to create.
//!
//! The contract is the OpenAI chat-completions vision request: `POST {base_url}/chat/completions`
//! with `{model, temperature: 0, response_format: {type: "json_object"}, messages: [system
//! prompt, user message with the image as a `data:` URL]}`; the reply's
//! `choices[0].message.content` is a JSON object (`merchant`, `date`, `total`, `currency`,
//! `category`, `items`), checked here like any input. The request leaves through the web
//! tools' client, the egress guard: a service on a private or loopback address must be listed
//! in `allowed_private_hosts`, and the owner's allowlist applies. Nothing is stored: the answer
//! holds the `add_expense` arguments to confirm.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use toolsmith_core::object;
use toolsmith_core::{RegisteredTool, ToolDefinition};

use super::CATEGORIES;
use super::money::{DEFAULT_CURRENCY, decimals, to_text, to_units};
use crate::BuiltinEnv;
use crate::web::{Call, MAX_TIMEOUT, ToolError, WebRequest, web_tool_in};

/// The Config Center service of the vision model.
pub const SERVICE: &str = "vision";
/// The model asked when the service names none.
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";
/// Largest image, decoded.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
/// Largest answer of the vision service.
const MAX_REPLY_BYTES: usize = 1024 * 1024;
/// Most receipt lines returned.
const MAX_ITEMS: usize = 100;

const PROMPT: &str = "You read receipts. Answer with one JSON object and nothing else: \
{\"merchant\": string, \"date\": \"YYYY-MM-DD\" or null, \"total\": number, \"currency\": \
ISO 4217 code or null, \"category\": one of food, transport, utilities, entertainment, \
shopping, health, education, travel, subscription, housing, other, \"items\": [{\"description\": \
string, \"amount\": number}]}. Use the total actually paid.";

/// The tool, in the `Finance` category, holding `network` like the web tools.
pub fn tool(env: &BuiltinEnv) -> RegisteredTool {
    let definition = ToolDefinition::new(
        "parse_receipt",
        "Read a receipt image (base64 or a data: URL; PNG, JPEG, GIF or WebP) and extract the \
         expense: merchant, date, total, currency, category and lines, through the vision \
         service configured in the Config Center ('vision'). Nothing is stored: confirm, then \
         record it with add_expense.",
        json!({
            "type": "object",
            "properties": {
                "image": {"type": "string", "minLength": 8, "description": "The receipt image: base64, or a data:image/...;base64,... URL (at most 5 MB)."},
                "currency": {"type": "string", "minLength": 3, "maxLength": 3, "description": "The currency to assume when the receipt shows none (default USD)."}
            },
            "required": ["image"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "receipt",
        "scan receipt",
        "photo of receipt",
        "invoice",
        "ocr",
        "expense",
        "bill",
    ]);
    web_tool_in(env, "Finance", definition, |c| Box::pin(run(c)))
}

/// The image's bytes and its media type, from base64 or a `data:` URL.
fn image(args: &Value) -> Result<(Vec<u8>, &'static str), ToolError> {
    let bad = |why: &str| {
        ToolError::Args(format!(
            "'image' {why}: pass a PNG, JPEG, GIF or WebP image as base64 or as a \
             data:image/png;base64,... URL, at most {} MB",
            MAX_IMAGE_BYTES / (1024 * 1024)
        ))
    };
    let text = args
        .get("image")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("is missing"))?;
    if text.len() > MAX_IMAGE_BYTES / 3 * 4 + 1024 {
        return Err(bad("is too large"));
    }
    let data = match text.strip_prefix("data:") {
        Some(rest) => rest
            .split_once(";base64,")
            .map(|(_, data)| data)
            .ok_or_else(|| bad("is a data: URL without ;base64,"))?,
        None => text,
    };
    let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let bytes = STANDARD
        .decode(compact.as_bytes())
        .map_err(|_| bad("is not valid base64"))?;
    let mime = match bytes.as_slice() {
        [0x89, b'P', b'N', b'G', ..] => "image/png",
        [0xFF, 0xD8, 0xFF, ..] => "image/jpeg",
        [b'G', b'I', b'F', b'8', ..] => "image/gif",
        [
            b'R',
            b'I',
            b'F',
            b'F',
            _,
            _,
            _,
            _,
            b'W',
            b'E',
            b'B',
            b'P',
            ..,
        ] => "image/webp",
        _ => return Err(bad("is not an image of a known kind")),
    };
    Ok((bytes, mime))
}

async fn run(call: Call<'_>) -> Result<Value, ToolError> {
    let (bytes, mime) = image(&call.args)?;
    let assumed = match call.args.get("currency").and_then(Value::as_str) {
        Some(c) if c.len() == 3 && c.bytes().all(|b| b.is_ascii_alphabetic()) => {
            c.to_ascii_uppercase()
        }
        Some(_) => {
            return Err(ToolError::Args(
                "'currency' must be a three-letter ISO 4217 code like EUR".to_owned(),
            ));
        }
        None => DEFAULT_CURRENCY.to_owned(),
    };
    let not_configured = || {
        ToolError::NotConfigured(format!(
            "no vision service is configured, so receipts cannot be read: set the Config \
             Center service '{SERVICE}' with base_url (an OpenAI-compatible API such as \
             https://api.openai.com/v1) and api_key, e.g. `toolsmith config set {SERVICE} \
             base_url=https://api.openai.com/v1` and `printf %s \"$KEY\" | toolsmith config set \
             {SERVICE} api_key=@-` (or POST /api/v1/config/services/{SERVICE}/entries); an \
             optional text field 'model' picks the model (default {DEFAULT_MODEL}). Until \
             then, record the expense with add_expense"
        ))
    };
    let values = match &call.env.config {
        Some(config) => config.values(&call.ctx.user_id, SERVICE).await,
        None => None,
    }
    .ok_or_else(not_configured)?;
    let field = |name: &str| {
        values
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    };
    let base = field("base_url").ok_or_else(not_configured)?;
    let url = format!("{}/chat/completions", base.trim_end_matches('/'));
    let body = json!({
        "model": field("model").unwrap_or(DEFAULT_MODEL),
        "temperature": 0,
        "response_format": {"type": "json_object"},
        "messages": [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": [
                {"type": "text", "text": "Extract the expense from this receipt."},
                {"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{}", STANDARD.encode(&bytes))}}
            ]}
        ]
    });
    let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
    if let Some(key) = field("api_key") {
        headers.push(("Authorization".to_owned(), format!("Bearer {key}")));
    }
    let request = WebRequest {
        method: "POST".to_owned(),
        url,
        headers,
        body: Some(body.to_string().into_bytes()),
        timeout: MAX_TIMEOUT,
        max_response_bytes: MAX_REPLY_BYTES,
    };
    let response = call.client.send(&call.ctx.user_id, request).await?;
    if !(200..300).contains(&response.status) {
        return Err(ToolError::Provider(format!(
            "the vision service answered HTTP {}: check the '{SERVICE}' base_url, api_key and \
             model in the Config Center",
            response.status
        )));
    }
    let receipt = reply_object(&response.body)?;
    Ok(read_receipt(&receipt, &assumed))
}

/// The JSON object in a chat-completions reply's first message (a ```json fence allowed).
fn reply_object(body: &[u8]) -> Result<Value, ToolError> {
    let unusable = |why: &str| {
        ToolError::Provider(format!(
            "the vision service's answer is not usable ({why}): it must be an OpenAI-compatible \
             chat completion whose message is a JSON object; check the '{SERVICE}' base_url \
             and model"
        ))
    };
    let reply: Value = serde_json::from_slice(body).map_err(|_| unusable("not JSON"))?;
    let content = reply
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| unusable("no choices[0].message.content"))?
        .trim();
    let content = content
        .strip_prefix("```json")
        .or_else(|| content.strip_prefix("```"))
        .map_or(content, |c| c.trim_end().trim_end_matches("```"));
    match serde_json::from_str(content.trim()) {
        Ok(Value::Object(receipt)) => Ok(Value::Object(receipt)),
        _ => Err(unusable("the message is not a JSON object")),
    }
}

/// An amount of the reply as exact decimal text of `currency`, if it is one.
fn amount(value: &Value, currency: &str) -> Option<String> {
    let text = match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().trim_start_matches(['$', '€', '£']).to_owned(),
        _ => return None,
    };
    let scale = decimals(currency);
    to_units(&text, scale)
        .filter(|u| *u > 0)
        .map(|u| to_text(u, scale))
}

/// The receipt as checked fields, and the `add_expense` arguments it suggests.
fn read_receipt(receipt: &Value, assumed: &str) -> Value {
    let text = |key: &str, max: usize| {
        receipt[key]
            .as_str()
            .map(str::trim)
            .filter(|s| !s.is_empty() && !s.contains('\0'))
            .map(|s| s.chars().take(max).collect::<String>())
    };
    let currency = text("currency", 3)
        .map(|c| c.to_ascii_uppercase())
        .filter(|c| c.len() == 3 && c.bytes().all(|b| b.is_ascii_uppercase()))
        .unwrap_or_else(|| assumed.to_owned());
    let total = amount(&receipt["total"], &currency);
    let date =
        text("date", 10).filter(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").is_ok());
    let category = text("category", 20)
        .map(|c| c.to_lowercase())
        .filter(|c| CATEGORIES.contains(&c.as_str()))
        .unwrap_or_else(|| "other".to_owned());
    let merchant = text("merchant", 200);
    let items: Vec<Value> = receipt["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .take(MAX_ITEMS)
                .filter_map(|item| {
                    let description = item["description"].as_str()?.trim();
                    let price = amount(&item["amount"], &currency)?;
                    Some(json!({"description": description.chars().take(200).collect::<String>(), "amount": price}))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut expense = json!({
        "category": category,
        "currency": currency,
        "description": merchant.clone().map_or_else(|| "Receipt".to_owned(), |m| format!("Receipt: {m}")),
    });
    if let Some(total) = &total {
        object::set(&mut expense, "amount", json!(total));
    }
    if let Some(date) = &date {
        object::set(&mut expense, "date", json!(date));
    }
    let message = if total.is_some() {
        "Read the receipt. Check the figures with the user, then record it with add_expense \
         (the 'expense' arguments)."
    } else {
        "No total could be read from the receipt: ask the user for the amount before add_expense."
    };
    json!({
        "success": total.is_some(),
        "receipt": {
            "merchant": merchant,
            "date": date,
            "total": total,
            "currency": currency,
            "category": category,
            "items": items,
        },
        "expense": expense,
        "message": message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_checked_before_anything_leaves() {
        let png = STANDARD.encode(b"\x89PNG\r\n\x1a\n0000");
        assert_eq!(image(&json!({"image": png})).unwrap().1, "image/png");
        let data_url = format!("data:image/png;base64,{png}");
        assert_eq!(image(&json!({"image": data_url})).unwrap().1, "image/png");
        for bad in [
            json!({"image": "not base64 !!"}),
            json!({"image": STANDARD.encode(b"<svg onload=alert(1)>")}),
            json!({"image": "data:image/png,raw"}),
            json!({}),
        ] {
            let e = image(&bad).unwrap_err().to_string();
            assert!(e.contains("PNG, JPEG, GIF or WebP"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_models_answer_is_checked_like_any_input() {
        let body = json!({"choices": [{"message": {"content": "```json\n{\"merchant\": \"Luigi's\", \"date\": \"2026-05-01\", \"total\": 23.5, \"currency\": \"eur\", \"category\": \"Food\", \"items\": [{\"description\": \"Pizza\", \"amount\": 12.5}, {\"description\": \"bad\", \"amount\": -3}]}\n```"}}]});
        let receipt = reply_object(body.to_string().as_bytes()).unwrap();
        let out = read_receipt(&receipt, "USD");
        assert_eq!(
            out["expense"],
            json!({"amount": "23.50", "currency": "EUR", "category": "food", "date": "2026-05-01", "description": "Receipt: Luigi's"})
        );
        assert_eq!(
            out["receipt"]["items"],
            json!([{"description": "Pizza", "amount": "12.50"}])
        );
        let odd = read_receipt(
            &json!({"total": 1.239, "category": "bribes", "date": "yesterday"}),
            "USD",
        );
        assert_eq!(odd["success"], false);
        assert_eq!(odd["receipt"]["category"], "other");
        assert_eq!(odd["receipt"]["date"], Value::Null);
        assert!(reply_object(b"<html>").is_err());
        assert!(reply_object(br#"{"choices": [{"message": {"content": "[1]"}}]}"#).is_err());
    }
}
