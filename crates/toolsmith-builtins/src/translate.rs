//! The translation tools (003 §15): `translate_text`, `batch_translate`, `detect_language`
//! and `list_languages`, through a LibreTranslate-compatible API (`POST /translate`,
//! `POST /detect`, `GET /languages`: LibreTranslate itself, self-hosted or hosted, and the
//! services that copy its API) or, when none is configured, the caller's chat model
//! ([`crate::chat`]).
//!
//! The API is the caller's Config Center service [`SERVICE`]: `base_url` (the instance, e.g.
//! `https://libretranslate.com`) and `api_key` (sent in the body as LibreTranslate's
//! `api_key`; empty for an instance that needs none). Requests leave through the egress guard.
//! A language is a code (`de`, `pt-BR`) or an English name (`German`), which the API is sent
//! as its code.

use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::{RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::chat::{self, ChatError, ChatRequest};
use crate::groups::{ToolGroup, off};
use crate::outside;
use crate::web::{Call, ToolError, str_arg, web_tool_in};

/// The category of the family's tools.
pub const CATEGORY: &str = "Translation";
/// The Config Center service of the LibreTranslate-compatible API.
pub const SERVICE: &str = "translation";
/// Longest text translated or detected at once, in characters.
pub const MAX_TEXT_CHARS: usize = 20_000;
/// Most texts of one `batch_translate`.
pub const MAX_TEXTS: usize = 50;
/// Largest answer read from the service.
const MAX_ANSWER_BYTES: usize = 2 * 1024 * 1024;

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[off(
    "translation",
    "Translation",
    "Translate text between languages and detect a text's language, through a \
     LibreTranslate-compatible API or the configured chat model.",
    "reaches an outside translation service or chat model",
    ResultSource::External,
    &[
        "translate_text",
        "detect_language",
        "list_languages",
        "batch_translate",
    ],
)];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[(
    Effect::Reads,
    &[
        "translate_text",
        "detect_language",
        "list_languages",
        "batch_translate",
    ],
)];

/// Languages known by name, as `(code, English name)`: what a person writes is sent to the
/// API as the code, and what `list_languages` answers with the chat model.
const LANGUAGES: &[(&str, &str)] = &[
    ("ar", "Arabic"),
    ("bg", "Bulgarian"),
    ("ca", "Catalan"),
    ("cs", "Czech"),
    ("da", "Danish"),
    ("de", "German"),
    ("el", "Greek"),
    ("en", "English"),
    ("es", "Spanish"),
    ("et", "Estonian"),
    ("fa", "Persian"),
    ("fi", "Finnish"),
    ("fr", "French"),
    ("ga", "Irish"),
    ("he", "Hebrew"),
    ("hi", "Hindi"),
    ("hu", "Hungarian"),
    ("id", "Indonesian"),
    ("it", "Italian"),
    ("ja", "Japanese"),
    ("ko", "Korean"),
    ("lt", "Lithuanian"),
    ("lv", "Latvian"),
    ("ms", "Malay"),
    ("nb", "Norwegian"),
    ("nl", "Dutch"),
    ("pl", "Polish"),
    ("pt", "Portuguese"),
    ("ro", "Romanian"),
    ("ru", "Russian"),
    ("sk", "Slovak"),
    ("sl", "Slovenian"),
    ("sq", "Albanian"),
    ("sv", "Swedish"),
    ("th", "Thai"),
    ("tl", "Tagalog"),
    ("tr", "Turkish"),
    ("uk", "Ukrainian"),
    ("ur", "Urdu"),
    ("vi", "Vietnamese"),
    ("zh", "Chinese"),
];

const TAGS: &[&str] = &[
    "translate",
    "translation",
    "translator",
    "language",
    "in german",
    "in french",
    "in spanish",
    "to english",
    "libretranslate",
];

fn language_property(what: &str) -> Value {
    json!({"type": "string", "minLength": 2, "maxLength": 40, "description": what})
}

fn definitions() -> [ToolDefinition; 4] {
    let target = language_property(
        "The language to translate into: a code ('de', 'pt-BR') or an English name ('German').",
    );
    let source = language_property(
        "The text's language (a code or a name); left out or 'auto', it is detected.",
    );
    let text = json!({"type": "string", "minLength": 1, "maxLength": MAX_TEXT_CHARS, "description": "The text."});
    [
        ToolDefinition::new(
            "translate_text",
            "Translate text into another language (and say which language it was in), through \
             the translation service (LibreTranslate) or chat model configured in the Config \
             Center.",
            json!({"type": "object", "properties": {"text": text, "targetLanguage": target, "sourceLanguage": source},
                "required": ["text", "targetLanguage"], "additionalProperties": false}),
        )
        .with_tags(TAGS),
        ToolDefinition::new(
            "batch_translate",
            "Translate several texts into one language at once (at most 50), in order.",
            json!({"type": "object", "properties": {
                "texts": {"type": "array", "minItems": 1, "maxItems": MAX_TEXTS, "items": {"type": "string", "maxLength": MAX_TEXT_CHARS}, "description": "The texts, translated in this order."},
                "targetLanguage": target, "sourceLanguage": source},
                "required": ["texts", "targetLanguage"], "additionalProperties": false}),
        )
        .with_tags(TAGS),
        ToolDefinition::new(
            "detect_language",
            "Detect which language a text is written in: its code, name and confidence.",
            json!({"type": "object", "properties": {"text": text}, "required": ["text"], "additionalProperties": false}),
        )
        .with_tags(&["detect language", "which language", "what language is this", "identify language"]),
        ToolDefinition::new(
            "list_languages",
            "List the languages the translation tools can translate between (codes and names).",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        )
        .with_tags(&["languages", "supported languages", "translation languages"]),
    ]
}

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let [translate, batch, detect, list] = definitions();
    vec![
        web_tool_in(env, CATEGORY, translate, |c| {
            Box::pin(run(c, "translate_text"))
        }),
        web_tool_in(env, CATEGORY, batch, |c| {
            Box::pin(run(c, "batch_translate"))
        }),
        web_tool_in(env, CATEGORY, detect, |c| {
            Box::pin(run(c, "detect_language"))
        }),
        web_tool_in(env, CATEGORY, list, |c| Box::pin(run(c, "list_languages"))),
    ]
}

/// A language as the API takes it: a known name as its code, a code as written.
fn language(text: &str) -> Result<(String, String), ToolError> {
    let trimmed = text.trim();
    let lower = trimmed.to_ascii_lowercase();
    if let Some((code, name)) = LANGUAGES
        .iter()
        .find(|(code, name)| *code == lower || name.eq_ignore_ascii_case(trimmed))
    {
        return Ok(((*code).to_owned(), (*name).to_owned()));
    }
    let is_code = {
        let mut parts = trimmed.splitn(2, ['-', '_']);
        let base = parts.next().unwrap_or_default();
        let region = parts.next().unwrap_or("xx");
        (2..=3).contains(&base.len())
            && base.bytes().all(|b| b.is_ascii_alphabetic())
            && (2..=4).contains(&region.len())
            && region.bytes().all(|b| b.is_ascii_alphanumeric())
    };
    if is_code {
        return Ok((trimmed.replace('_', "-"), trimmed.to_owned()));
    }
    Err(ToolError::Args(format!(
        "'{trimmed}' is not a language this tool knows: give an ISO 639-1 code such as 'de' or \
         an English name such as 'German' (list_languages shows them)"
    )))
}

/// The language argument `key`, or `None` for `auto`/absent.
fn language_arg(args: &Value, key: &str) -> Result<Option<(String, String)>, ToolError> {
    match args.get(key).and_then(Value::as_str).map(str::trim) {
        None | Some("" | "auto") => Ok(None),
        Some(text) => language(text).map(Some),
    }
}

fn text_arg(args: &Value) -> Result<String, ToolError> {
    let text = str_arg(args, "text")?;
    check_size(text)?;
    Ok(text.to_owned())
}

fn check_size(text: &str) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::Args(
            "the text is empty: pass the words to work on".to_owned(),
        ));
    }
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(ToolError::Args(format!(
            "the text is longer than {MAX_TEXT_CHARS} characters: split it and translate the \
             parts (batch_translate takes up to {MAX_TEXTS})"
        )));
    }
    Ok(())
}

/// The LibreTranslate-compatible service the caller configured.
struct Libre {
    base: String,
    key: Option<String>,
}

impl Libre {
    async fn of(call: &Call<'_>) -> Option<Libre> {
        let values = outside::values(call, SERVICE).await;
        let base = outside::field(values.as_ref(), &["base_url", "baseUrl"])?.to_owned();
        let key = outside::field(values.as_ref(), &["api_key", "apiKey"]).map(str::to_owned);
        Some(Libre { base, key })
    }

    async fn ask(
        &self,
        call: &Call<'_>,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value, ToolError> {
        let url = outside::endpoint(SERVICE, "base_url", &self.base, path)?;
        let body = body.map(|mut body| {
            if let Some(key) = &self.key {
                toolsmith_core::object::set(&mut body, "api_key", json!(key));
            }
            body
        });
        let method = if body.is_some() { "POST" } else { "GET" };
        let answer = outside::send(
            call,
            method,
            url,
            Vec::new(),
            body.as_ref(),
            MAX_ANSWER_BYTES,
        )
        .await?;
        if !(200..300).contains(&answer.status) {
            return Err(ToolError::Provider(format!(
                "the translation service answered HTTP {}{}: check the Config Center service \
                 '{SERVICE}' (base_url: a LibreTranslate-compatible API; api_key if it needs one)",
                answer.status,
                answer.reason()
            )));
        }
        Ok(answer.body)
    }
}

fn unusable(what: &str) -> ToolError {
    ToolError::Provider(format!(
        "the translation service's answer has no {what}: the Config Center service '{SERVICE}' \
         must point at a LibreTranslate-compatible API"
    ))
}

async fn run(call: Call<'_>, tool: &'static str) -> Result<Value, ToolError> {
    match Libre::of(&call).await {
        Some(libre) => by_service(&call, &libre, tool).await,
        None => by_model(&call, tool).await,
    }
}

/// The tool's work through the LibreTranslate-compatible API.
async fn by_service(call: &Call<'_>, libre: &Libre, tool: &str) -> Result<Value, ToolError> {
    let args = &call.args;
    match tool {
        "list_languages" => {
            let list = libre.ask(call, "languages", None).await?;
            let languages = list
                .as_array()
                .ok_or_else(|| unusable("list of languages"))?;
            Ok(json!({"provider": SERVICE, "count": languages.len(), "languages": languages}))
        }
        "detect_language" => {
            let text = text_arg(args)?;
            let found = libre.ask(call, "detect", Some(json!({"q": text}))).await?;
            let best = found.get(0).ok_or_else(|| unusable("detected language"))?;
            let confidence = best
                .get("confidence")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            let code = best.get("language").and_then(Value::as_str).unwrap_or("");
            Ok(json!({
                "provider": SERVICE,
                "language": code,
                "name": name_of(code),
                // LibreTranslate's confidence is a percentage.
                "confidence": if confidence > 1.0 { confidence / 100.0 } else { confidence },
            }))
        }
        "batch_translate" => {
            let texts = texts_arg(args)?;
            let (target, _) = target_arg(args)?;
            let source =
                language_arg(args, "sourceLanguage")?.map_or_else(|| "auto".to_owned(), |(c, _)| c);
            let done = libre
                .ask(
                    call,
                    "translate",
                    Some(json!({"q": texts, "source": source, "target": target, "format": "text"})),
                )
                .await?;
            let translations = done
                .get("translatedText")
                .and_then(Value::as_array)
                .filter(|t| t.len() == texts.len())
                .ok_or_else(|| unusable("translatedText list as long as the texts"))?;
            Ok(
                json!({"provider": SERVICE, "targetLanguage": target, "count": translations.len(), "translations": translations}),
            )
        }
        _ => {
            let text = text_arg(args)?;
            let (target, _) = target_arg(args)?;
            let given = language_arg(args, "sourceLanguage")?;
            let source = given.as_ref().map_or("auto", |(c, _)| c.as_str());
            let done = libre
                .ask(
                    call,
                    "translate",
                    Some(json!({"q": text, "source": source, "target": target, "format": "text"})),
                )
                .await?;
            let translated = done
                .get("translatedText")
                .and_then(Value::as_str)
                .ok_or_else(|| unusable("translatedText"))?;
            let detected = done
                .pointer("/detectedLanguage/language")
                .and_then(Value::as_str)
                .map(str::to_owned);
            Ok(json!({
                "provider": SERVICE,
                "translatedText": translated,
                "sourceLanguage": detected.or(given.map(|(c, _)| c)),
                "targetLanguage": target,
            }))
        }
    }
}

fn target_arg(args: &Value) -> Result<(String, String), ToolError> {
    language_arg(args, "targetLanguage")?.ok_or_else(|| {
        ToolError::Args(
            "'targetLanguage' is missing: say which language to translate into ('de' or 'German')"
                .to_owned(),
        )
    })
}

fn texts_arg(args: &Value) -> Result<Vec<String>, ToolError> {
    let texts = args
        .get("texts")
        .and_then(Value::as_array)
        .ok_or_else(|| ToolError::Args("'texts' must be a list of strings".to_owned()))?;
    if texts.is_empty() || texts.len() > MAX_TEXTS {
        return Err(ToolError::Args(format!(
            "'texts' must hold 1 to {MAX_TEXTS} strings"
        )));
    }
    texts
        .iter()
        .map(|t| {
            let t = t.as_str().ok_or_else(|| {
                ToolError::Args("every item of 'texts' must be a string".to_owned())
            })?;
            check_size(t)?;
            Ok(t.to_owned())
        })
        .collect()
}

fn name_of(code: &str) -> Option<&'static str> {
    LANGUAGES
        .iter()
        .find(|(c, _)| code.eq_ignore_ascii_case(c))
        .map(|(_, name)| *name)
}

/// The tool's work through the caller's chat model, when no translation service is set.
async fn by_model(call: &Call<'_>, tool: &str) -> Result<Value, ToolError> {
    let args = &call.args;
    if tool == "list_languages" {
        let provider = chat::SERVICE;
        let languages: Vec<Value> = LANGUAGES
            .iter()
            .map(|(code, name)| json!({"code": code, "name": name}))
            .collect();
        return Ok(
            json!({"provider": provider, "count": languages.len(), "languages": languages,
            "note": "the chat model translates between these and most other written languages"}),
        );
    }
    let (system, user) = match tool {
        "detect_language" => (
            "Identify the language of the user's text. Answer with one JSON object and nothing \
             else: {\"language\": its ISO 639-1 code, \"confidence\": a number from 0 to 1}."
                .to_owned(),
            text_arg(args)?,
        ),
        "batch_translate" => {
            let texts = texts_arg(args)?;
            let (code, name) = target_arg(args)?;
            (
                format!(
                    "You are a translator. The user sends a JSON array of texts. Translate each \
                     into {name} ({code}), keeping formatting, names, numbers and URLs. Answer \
                     with one JSON object and nothing else: {{\"translations\": [one translated \
                     string per text, in the same order]}}."
                ),
                Value::from(texts).to_string(),
            )
        }
        _ => {
            let (code, name) = target_arg(args)?;
            let from = language_arg(args, "sourceLanguage")?
                .map_or_else(|| "the language it is written in".to_owned(), |(_, n)| n);
            (
                format!(
                    "You are a translator. Translate the user's text from {from} into {name} \
                     ({code}), keeping formatting, names, numbers and URLs. Answer with one \
                     JSON object and nothing else: {{\"translatedText\": the translation, \
                     \"sourceLanguage\": the ISO 639-1 code of the original}}."
                ),
                text_arg(args)?,
            )
        }
    };
    let answer = chat::ask(
        call.env,
        call.ctx,
        ChatRequest {
            tool: tool.to_owned(),
            system,
            user,
            max_tokens: 8192,
        },
    )
    .await
    .map_err(|e| match e {
        ChatError::NotConfigured(why) => ToolError::NotConfigured(format!(
            "no translation service is configured: create the Config Center service \
             '{SERVICE}' with base_url (a LibreTranslate-compatible API, e.g. \
             https://libretranslate.com) and api_key if it needs one, or configure a chat \
             model to translate with ({why})"
        )),
        ChatError::Failed(why) | ChatError::Declined(why) => ToolError::Provider(why),
        ChatError::Refused(why) => ToolError::Denied(why),
    })?;
    // Which model answered: the configured one or the client's (`via`), and its name.
    let provider = answer.via.as_str();
    let model = answer.model.as_str();
    let reply = chat::json_in(&answer.text).ok_or_else(|| {
        ToolError::Provider(format!(
            "the chat model '{}' did not answer with the JSON asked for: try again, or configure \
             a translation service (the Config Center service '{SERVICE}')",
            answer.model
        ))
    })?;
    let text = |key: &str| reply.get(key).and_then(Value::as_str).map(str::to_owned);
    match tool {
        "detect_language" => {
            let code = text("language").unwrap_or_default();
            Ok(
                json!({"provider": provider, "model": model, "language": code, "name": name_of(&code),
                "confidence": reply.get("confidence").and_then(Value::as_f64)}),
            )
        }
        "batch_translate" => {
            let wanted = texts_arg(args)?.len();
            let (code, _) = target_arg(args)?;
            let translations = reply
                .get("translations")
                .and_then(Value::as_array)
                .filter(|t| t.len() == wanted && t.iter().all(Value::is_string))
                .ok_or_else(|| {
                    ToolError::Provider(format!(
                        "the chat model '{}' answered with another number of translations than \
                         the {wanted} texts: try again, or translate them one by one",
                        answer.model
                    ))
                })?;
            Ok(
                json!({"provider": provider, "model": model, "targetLanguage": code, "count": wanted, "translations": translations}),
            )
        }
        _ => {
            let (code, _) = target_arg(args)?;
            let translated = text("translatedText").ok_or_else(|| {
                ToolError::Provider(format!(
                    "the chat model '{}' gave no translatedText: try again",
                    answer.model
                ))
            })?;
            Ok(
                json!({"provider": provider, "model": model, "translatedText": translated,
                "sourceLanguage": text("sourceLanguage"), "targetLanguage": code}),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_are_codes_or_names() {
        assert_eq!(language("German").unwrap().0, "de");
        assert_eq!(language("de").unwrap().1, "German");
        assert_eq!(language("pt-BR").unwrap().0, "pt-BR");
        assert_eq!(language("zh_Hant").unwrap().0, "zh-Hant");
        let e = language("Klingonish").unwrap_err().to_string();
        assert!(e.contains("'de'"), "{e}");
    }
}
