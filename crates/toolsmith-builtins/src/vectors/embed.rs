//! The embeddings client: the caller's Config Center service [`SERVICE`] (`base_url` of an
//! OpenAI-compatible API such as `https://api.openai.com/v1` or a local server, `api_key` sent
//! as a bearer token and may be empty for a local server, optional `model`, default
//! [`DEFAULT_MODEL`]). The contract is OpenAI's embeddings request: `POST {base_url}/embeddings`
//! with `{model, input: [texts]}`, answered with `{data: [{index, embedding: [numbers]}]}`. The
//! request leaves through the web tools' client, so the egress guard applies (a service on a
//! loopback or private address must be in `allowed_private_hosts`).

use serde_json::{Value, json};

use crate::web::{Call, MAX_TIMEOUT, ToolError, WebRequest};

/// The Config Center service of the embeddings API.
pub const SERVICE: &str = "embeddings";
/// The model asked when the service names none.
pub const DEFAULT_MODEL: &str = "text-embedding-3-small";
/// Largest answer of the embeddings service.
const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// What the embeddings service answered: one embedding per text, in order, and the model.
#[derive(Debug, Clone)]
pub struct Embeddings {
    pub vectors: Vec<Vec<f32>>,
    pub model: String,
}

/// The message of a caller who has no embeddings service.
#[must_use]
pub fn not_configured() -> String {
    format!(
        "no embeddings service is configured: set the Config Center service '{SERVICE}' with \
         base_url (an OpenAI-compatible API such as https://api.openai.com/v1, or a local \
         server) and api_key, e.g. `toolsmith config set {SERVICE} \
         base_url=https://api.openai.com/v1` and `printf %s \"$KEY\" | toolsmith config set \
         {SERVICE} api_key=@-` (or POST /api/v1/config/services); an optional text field \
         'model' picks the model (default {DEFAULT_MODEL})"
    )
}

/// The caller's embeddings service, as its Config Center entry names it.
#[derive(Debug, Clone)]
pub struct Service {
    base_url: String,
    model: String,
    api_key: Option<String>,
}

impl Service {
    /// What tells one service's embeddings from another's: its address and model (the same
    /// text embedded by both is the same embedding).
    #[must_use]
    pub fn fingerprint(&self) -> String {
        format!("{}\n{}", self.base_url, self.model)
    }
}

/// The caller's embeddings service, or why there is none ([`ToolError::NotConfigured`]).
pub async fn service(call: &Call<'_>) -> Result<Service, ToolError> {
    let values = match &call.env.config {
        Some(config) => config.values(&call.ctx.user_id, SERVICE).await,
        None => None,
    }
    .ok_or_else(|| ToolError::NotConfigured(not_configured()))?;
    let field = |name: &str| {
        values
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    Ok(Service {
        base_url: field("base_url").ok_or_else(|| ToolError::NotConfigured(not_configured()))?,
        model: field("model").unwrap_or_else(|| DEFAULT_MODEL.to_owned()),
        api_key: field("api_key"),
    })
}

/// The embeddings of `texts` (at least one), from the caller's service.
pub async fn embed(call: &Call<'_>, texts: &[String]) -> Result<Embeddings, ToolError> {
    let service = service(call).await?;
    embed_with(call, &service, texts).await
}

/// The embeddings of `texts` (at least one), from `service`.
pub async fn embed_with(
    call: &Call<'_>,
    service: &Service,
    texts: &[String],
) -> Result<Embeddings, ToolError> {
    let model = service.model.clone();
    let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
    if let Some(key) = &service.api_key {
        headers.push(("Authorization".to_owned(), format!("Bearer {key}")));
    }
    let request = WebRequest {
        method: "POST".to_owned(),
        url: format!("{}/embeddings", service.base_url.trim_end_matches('/')),
        headers,
        body: Some(
            json!({"model": model, "input": texts})
                .to_string()
                .into_bytes(),
        ),
        timeout: MAX_TIMEOUT,
        max_response_bytes: MAX_REPLY_BYTES,
    };
    let response = call.client.send(&call.ctx.user_id, request).await?;
    if !(200..300).contains(&response.status) {
        return Err(ToolError::Provider(format!(
            "the embeddings service answered HTTP {}: check the '{SERVICE}' base_url, api_key \
             and model in the Config Center",
            response.status
        )));
    }
    let vectors = read_reply(&response.body, texts.len())?;
    Ok(Embeddings { vectors, model })
}

/// The embeddings of an OpenAI-compatible reply, in the order of the input (by `index`).
fn read_reply(body: &[u8], expected: usize) -> Result<Vec<Vec<f32>>, ToolError> {
    let unusable = |why: &str| {
        ToolError::Provider(format!(
            "the embeddings service's answer is not usable ({why}): it must be an \
             OpenAI-compatible embeddings response ({{\"data\": [{{\"index\": 0, \"embedding\": \
             [numbers]}}]}}); check the '{SERVICE}' base_url and model"
        ))
    };
    let reply: Value = serde_json::from_slice(body).map_err(|_| unusable("not JSON"))?;
    let data = reply
        .get("data")
        .and_then(Value::as_array)
        .ok_or_else(|| unusable("no 'data' list"))?;
    if data.len() != expected {
        return Err(unusable(&format!(
            "{} embeddings for {expected} texts",
            data.len()
        )));
    }
    let mut out: Vec<Option<Vec<f32>>> = vec![None; expected];
    for (position, entry) in data.iter().enumerate() {
        let index = entry
            .get("index")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
            .unwrap_or(position);
        let numbers = entry
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| unusable("an entry without 'embedding'"))?;
        let vector = numbers
            .iter()
            .map(|n| n.as_f64().map(|x| x as f32).filter(|x| x.is_finite()))
            .collect::<Option<Vec<f32>>>()
            .ok_or_else(|| unusable("an embedding that is not all numbers"))?;
        if vector.is_empty() || vector.len() > super::MAX_DIMENSIONS as usize {
            return Err(unusable(&format!(
                "an embedding of {} numbers (1 to {} are taken)",
                vector.len(),
                super::MAX_DIMENSIONS
            )));
        }
        let slot = out
            .get_mut(index)
            .ok_or_else(|| unusable("an index past the input"))?;
        *slot = Some(vector);
    }
    out.into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| unusable("a text without its embedding"))
}

/// The cosine similarity of two embeddings of one length (0 when either is all zeros).
#[must_use]
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let norm = |v: &[f32]| v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let (na, nb) = (norm(a), norm(b));
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_in_input_order_and_checked() {
        let body = json!({"data": [
            {"index": 1, "embedding": [0.0, 1.0]},
            {"index": 0, "embedding": [1.0, 0.5]}
        ]});
        let vectors = read_reply(body.to_string().as_bytes(), 2).unwrap();
        assert_eq!(vectors, vec![vec![1.0, 0.5], vec![0.0, 1.0]]);
        for bad in [
            json!({"data": [{"index": 0, "embedding": ["x"]}]}),
            json!({"data": [{"index": 5, "embedding": [1.0]}]}),
            json!({"data": []}),
            json!({"object": "error"}),
        ] {
            let e = read_reply(bad.to_string().as_bytes(), 1).unwrap_err();
            assert!(e.to_string().contains("OpenAI-compatible"), "{bad}: {e}");
        }
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-9);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
    }
}
