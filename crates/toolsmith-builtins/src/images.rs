//! The image tools (003 §13): `analyze_image` (a vision model describes or answers about a
//! picture), `generate_image`, `edit_image` and `image_variation` (an images API makes
//! pictures, saved into the caller's workspace), and `resize_image` (local: resizing and
//! format conversion of workspace pictures, no service needed); GoClaw's `image` is another
//! name of `generate_image`.
//!
//! The service is the caller's Config Center service [`SERVICE`], an OpenAI-compatible API:
//! `base_url`, `api_key`, and the models `model` (generation, default
//! [`DEFAULT_MODEL`]), `edit_model` (edits and variations, default [`DEFAULT_EDIT_MODEL`]) and
//! `vision_model` (analysis, default [`DEFAULT_VISION_MODEL`]). Analysis uses the chat
//! completions vision request (`POST /chat/completions`, the picture as a `data:` URL in an
//! `image_url` part); without an `image` service it asks `parse_receipt`'s `vision` service.
//! Generation is `POST /images/generations`, edits `POST /images/edits` and variations
//! `POST /images/variations` (multipart), answers as `b64_json` (or a `url`, fetched through
//! the egress guard too). Pictures are checked before anything is decoded: a known kind by
//! its first bytes, at most [`MAX_INPUT_BYTES`], and its header's size at most
//! [`local::MAX_PIXELS`] pixels ([`local`]), so a small file that would inflate to gigabytes is
//! refused unread.

pub mod local;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::{RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use crate::media::{self, Form, Provider, Reply};
use crate::web::{Call, MAX_TIMEOUT, ToolError, WebRequest, str_arg};

/// The category of the family's tools.
pub const CATEGORY: &str = "Image";
/// The Config Center service of the images API.
pub const SERVICE: &str = "image";
/// The service analysis falls back to (`parse_receipt`'s).
pub const VISION_SERVICE: &str = "vision";
/// The generation model when the service names none.
pub const DEFAULT_MODEL: &str = "dall-e-3";
/// The edit and variation model when the service names none.
pub const DEFAULT_EDIT_MODEL: &str = "dall-e-2";
/// The analysis model when the service names none.
pub const DEFAULT_VISION_MODEL: &str = "gpt-4o-mini";
/// Largest picture read from the workspace (OpenAI's own limit for vision input).
pub const MAX_INPUT_BYTES: u64 = 20 * 1024 * 1024;
/// Largest answer of the images API (several pictures as base64).
const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;
/// Most pictures one call asks for.
pub const MAX_IMAGES: u64 = 4;

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    depends_on: &["filesystem"],
    ..off(
        "image",
        "Image",
        "Describe pictures with a vision model, generate and edit pictures through an \
         OpenAI-compatible images API, and resize or convert workspace pictures locally.",
        "sends pictures and prompts to an outside image service (requests that cost money)",
        ResultSource::External,
        &[
            "analyze_image",
            "generate_image",
            "edit_image",
            "image_variation",
            "resize_image",
            "image",
        ],
    )
}];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[
    (Effect::Reads, &["analyze_image"]),
    (
        Effect::Changes,
        &[
            "generate_image",
            "edit_image",
            "image_variation",
            "resize_image",
            "image",
        ],
    ),
];

const SIZES: &[&str] = &[
    "auto",
    "256x256",
    "512x512",
    "1024x1024",
    "1536x1024",
    "1024x1536",
    "1792x1024",
    "1024x1792",
];

fn size_schema() -> Value {
    json!({"type": "string", "enum": SIZES, "description": "The picture's size in pixels, width x height: 256x256, 512x512 or 1024x1024 (dall-e-2); 1024x1024, 1792x1024 or 1024x1792 (dall-e-3); 1024x1024, 1536x1024 or 1024x1536 (gpt-image-1); auto lets the model choose. Left out: the model's default."})
}

fn output_props(what: &str) -> Value {
    json!({
        "n": {"type": "integer", "minimum": 1, "maximum": MAX_IMAGES, "default": 1, "description": "How many pictures (1-4; dall-e-3 makes one)."},
        "size": size_schema(),
        "path": {"type": "string", "minLength": 1, "maxLength": 500, "description": format!("Where to save the picture in your workspace (several get -1, -2 … before the extension). Default: images/{what}-<id>.png.")},
        "overwrite": {"type": "boolean", "default": false, "description": "Replace a file already at path (otherwise the call is refused)."},
        "show": {"type": "boolean", "default": true, "description": "Also return the pictures as image content (up to 512 KB in all), for clients that show them."}
    })
}

fn with(mut props: Value, more: Value) -> Value {
    if let Some(more) = more.as_object() {
        for (key, value) in more {
            toolsmith_core::object::set(&mut props, key, value.clone());
        }
    }
    props
}

fn generate_definition(name: &str) -> ToolDefinition {
    let description = if name == "image" {
        "Generate a picture from a text prompt (GoClaw's name for generate_image): saved in \
         your workspace and shown, through the images API of the Config Center service \
         'image'."
    } else {
        "Generate a picture from a text description (DALL-E, gpt-image-1 or any \
         OpenAI-compatible images API set as the Config Center service 'image'): the \
         picture is saved in your workspace and shown."
    };
    ToolDefinition::new(
        name,
        description,
        json!({
            "type": "object",
            "properties": with(output_props("generated"), json!({
                "prompt": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "What the picture shows."},
                "quality": {"type": "string", "pattern": "^[a-z]{1,10}$", "description": "The model's quality word: standard or hd (dall-e-3), low, medium or high (gpt-image-1)."}
            })),
            "required": ["prompt"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "generate image",
        "create a picture",
        "draw",
        "illustration",
        "dall-e",
        "text to image",
        "logo",
        "artwork",
    ])
}

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let image_path = json!({"type": "string", "minLength": 1, "maxLength": 500, "description": "The picture: a path in your workspace (PNG, JPEG, WebP or GIF, at most 20 MB)."});
    vec![
        media::network_tool(
            env,
            CATEGORY,
            ToolDefinition::new(
                "analyze_image",
                "Look at a picture with a vision model and describe it, read its text or \
                 answer a question about it (what is in this photo, what does the screenshot \
                 say). Through the Config Center service 'image' (or 'vision').",
                json!({
                    "type": "object",
                    "properties": {
                        "image": {"type": "string", "minLength": 1, "description": "The picture: a path in your workspace, or a data:image/...;base64,... URL (PNG, JPEG, WebP or GIF, at most 20 MB)."},
                        "prompt": {"type": "string", "maxLength": 4000, "description": "What to ask about the picture (default: describe it in detail)."},
                        "detail": {"type": "string", "enum": ["auto", "low", "high"], "default": "auto", "description": "How closely the model looks: low (a small copy, fewer tokens), high (full detail), auto (the model decides)."},
                        "maxTokens": {"type": "integer", "minimum": 1, "maximum": 4096, "default": 500, "description": "Longest answer, in tokens."}
                    },
                    "required": ["image"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&[
                "analyze image",
                "describe picture",
                "what is in this photo",
                "vision",
                "screenshot",
                "ocr",
                "recognize",
                "look at",
            ]),
            |c| Box::pin(analyze(c)),
        ),
        media::network_tool(env, CATEGORY, generate_definition("generate_image"), |c| {
            Box::pin(generate(c))
        }),
        media::network_tool(env, CATEGORY, generate_definition("image"), |c| {
            Box::pin(generate(c))
        }),
        media::network_tool(
            env,
            CATEGORY,
            ToolDefinition::new(
                "edit_image",
                "Edit a workspace picture from a text prompt (change, add or remove \
                 something; a mask's transparent area says where), through the images API of \
                 the Config Center service 'image'; the result is saved in your workspace.",
                json!({
                    "type": "object",
                    "properties": with(output_props("edited"), json!({
                        "image": image_path,
                        "prompt": {"type": "string", "minLength": 1, "maxLength": 4000, "description": "The change to make."},
                        "mask": {"type": "string", "minLength": 1, "maxLength": 500, "description": "A PNG in your workspace, as large as the picture, transparent where the picture may change."}
                    })),
                    "required": ["image", "prompt"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["edit image", "change the picture", "inpaint", "retouch", "remove from photo"]),
            |c| Box::pin(edit(c)),
        ),
        media::network_tool(
            env,
            CATEGORY,
            ToolDefinition::new(
                "image_variation",
                "Make variations of a workspace picture (the same subject and style, drawn \
                 anew), through the images API of the Config Center service 'image'; saved in \
                 your workspace.",
                json!({
                    "type": "object",
                    "properties": with(output_props("variation"), json!({"image": image_path})),
                    "required": ["image"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["image variation", "variations", "similar picture", "another version"]),
            |c| Box::pin(variation(c)),
        ),
        media::local_tool(env, CATEGORY, local::definition(), local::resize),
    ]
}

/// The picture named by `image`: a workspace path or a `data:` URL; its bytes, kind and where
/// it came from.
async fn input(call: &Call<'_>, text: &str) -> Result<(Vec<u8>, local::Kind, Value), ToolError> {
    if let Some(rest) = text.strip_prefix("data:") {
        let data = rest.split_once(";base64,").map(|(_, d)| d).ok_or_else(|| {
            ToolError::Args(
                "'image' is a data: URL without ;base64,: pass data:image/png;base64,... or a \
                 workspace path"
                    .to_owned(),
            )
        })?;
        if data.len() as u64 > MAX_INPUT_BYTES / 3 * 4 + 4 {
            return Err(ToolError::Args(format!(
                "'image' is larger than {} MB: make it smaller with resize_image first",
                MAX_INPUT_BYTES / (1024 * 1024)
            )));
        }
        let compact: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let bytes = STANDARD.decode(compact.as_bytes()).map_err(|_| {
            ToolError::Args("'image' is a data: URL whose data is not valid base64".to_owned())
        })?;
        let kind = local::Kind::sniff(&bytes, "the data: URL")?;
        return Ok((bytes, kind, json!({"source": "data URL"})));
    }
    if text.starts_with("http://") || text.starts_with("https://") {
        return Err(ToolError::Args(
            "'image' is a web address: save the picture into your workspace first \
             (download_file), then pass its path"
                .to_owned(),
        ));
    }
    let (path, bytes) = media::read_for(call, text, MAX_INPUT_BYTES).await?;
    let kind = local::Kind::sniff(&bytes, &path)?;
    Ok((bytes, kind, json!({"path": path})))
}

async fn analyze(call: Call<'_>) -> Result<Reply, ToolError> {
    let (bytes, kind, source) = input(&call, str_arg(&call.args, "image")?).await?;
    let (width, height) = local::dimensions(&bytes, kind)?;
    let provider = Provider::of(
        &call,
        SERVICE,
        Some(VISION_SERVICE),
        "pictures cannot be analyzed",
        &format!(
            "an optional text field 'vision_model' picks the model (default \
             {DEFAULT_VISION_MODEL}); the service '{VISION_SERVICE}' (parse_receipt's) is used \
             when '{SERVICE}' is missing"
        ),
    )
    .await?;
    let model = if provider.service == SERVICE {
        provider.field("vision_model")
    } else {
        provider.field("model")
    }
    .unwrap_or(DEFAULT_VISION_MODEL)
    .to_owned();
    let prompt = call
        .args
        .get("prompt")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .unwrap_or("Describe this image in detail.");
    let detail = call
        .args
        .get("detail")
        .and_then(Value::as_str)
        .unwrap_or("auto");
    let body = json!({
        "model": model,
        "max_tokens": call.args.get("maxTokens").and_then(Value::as_u64).unwrap_or(500),
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": prompt},
            {"type": "image_url", "image_url": {"url": format!("data:{};base64,{}", kind.mime(), STANDARD.encode(&bytes)), "detail": detail}}
        ]}]
    });
    let answer = provider
        .post_json(&call, "chat/completions", &body, 1024 * 1024, "vision")
        .await?;
    let text = answer
        .pointer("/choices/0/message/content")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ToolError::Provider(format!(
                "the vision service's answer has no choices[0].message.content: the Config \
                 Center service '{}' must be an OpenAI-compatible chat completions API with a \
                 vision model",
                provider.service
            ))
        })?;
    let mut image = source;
    toolsmith_core::object::set(&mut image, "format", json!(kind.name()));
    toolsmith_core::object::set(&mut image, "width", json!(width));
    toolsmith_core::object::set(&mut image, "height", json!(height));
    Ok(Reply::json(json!({
        "answer": text,
        "model": answer.get("model").and_then(Value::as_str).unwrap_or(&model),
        "service": provider.service,
        "image": image,
    })))
}

async fn images_provider(call: &Call<'_>, why: &str) -> Result<Provider, ToolError> {
    Provider::of(
        call,
        SERVICE,
        None,
        why,
        &format!(
            "optional text fields 'model' (generation, default {DEFAULT_MODEL}) and \
             'edit_model' (edits and variations, default {DEFAULT_EDIT_MODEL}) pick the models"
        ),
    )
    .await
}

/// OpenAI's gpt-image models always answer with base64 and refuse `response_format`.
fn wants_format(model: &str) -> bool {
    !model.starts_with("gpt-image")
}

async fn generate(call: Call<'_>) -> Result<Reply, ToolError> {
    let prompt = str_arg(&call.args, "prompt")?.to_owned();
    let provider = images_provider(&call, "pictures cannot be generated").await?;
    let model = provider.field("model").unwrap_or(DEFAULT_MODEL).to_owned();
    let mut body =
        json!({"model": model, "prompt": prompt, "n": media::count(&call.args, MAX_IMAGES)});
    for key in ["size", "quality"] {
        if let Some(value) = call.args.get(key) {
            toolsmith_core::object::set(&mut body, key, value.clone());
        }
    }
    if wants_format(&model) {
        toolsmith_core::object::set(&mut body, "response_format", json!("b64_json"));
    }
    let answer = provider
        .post_json(
            &call,
            "images/generations",
            &body,
            MAX_ANSWER_BYTES,
            "image",
        )
        .await?;
    save(&call, &provider, &answer, &model, "generated").await
}

/// The form fields every images request with a picture shares.
fn form_fields(call: &Call<'_>, model: &str) -> Form {
    let mut form = Form::default()
        .text("model", model)
        .text("n", &media::count(&call.args, MAX_IMAGES).to_string());
    if let Some(size) = call.args.get("size").and_then(Value::as_str) {
        form = form.text("size", size);
    }
    if wants_format(model) {
        form = form.text("response_format", "b64_json");
    }
    form
}

async fn picture_file(call: &Call<'_>, key: &str) -> Result<(Vec<u8>, local::Kind), ToolError> {
    let raw = str_arg(&call.args, key)?;
    let (path, bytes) = media::read_for(call, raw, MAX_INPUT_BYTES).await?;
    let kind = local::Kind::sniff(&bytes, &path)?;
    local::dimensions(&bytes, kind)?;
    Ok((bytes, kind))
}

async fn edit(call: Call<'_>) -> Result<Reply, ToolError> {
    let (bytes, kind) = picture_file(&call, "image").await?;
    let mask = match call.args.get("mask") {
        Some(_) => Some(picture_file(&call, "mask").await?),
        None => None,
    };
    let provider = images_provider(&call, "pictures cannot be edited").await?;
    let model = provider
        .field("edit_model")
        .unwrap_or(DEFAULT_EDIT_MODEL)
        .to_owned();
    let mut form = form_fields(&call, &model)
        .text("prompt", str_arg(&call.args, "prompt")?)
        .file(
            "image",
            &format!("image.{}", kind.ext()),
            kind.mime(),
            &bytes,
        );
    if let Some((mask, mask_kind)) = &mask {
        form = form.file(
            "mask",
            &format!("mask.{}", mask_kind.ext()),
            mask_kind.mime(),
            mask,
        );
    }
    let answer = provider
        .post_form(&call, "images/edits", form, MAX_ANSWER_BYTES, "image")
        .await?;
    save(&call, &provider, &answer, &model, "edited").await
}

async fn variation(call: Call<'_>) -> Result<Reply, ToolError> {
    let (bytes, kind) = picture_file(&call, "image").await?;
    let provider = images_provider(&call, "variations cannot be made").await?;
    let model = provider
        .field("edit_model")
        .unwrap_or(DEFAULT_EDIT_MODEL)
        .to_owned();
    let form = form_fields(&call, &model).file(
        "image",
        &format!("image.{}", kind.ext()),
        kind.mime(),
        &bytes,
    );
    let answer = provider
        .post_form(&call, "images/variations", form, MAX_ANSWER_BYTES, "image")
        .await?;
    save(&call, &provider, &answer, &model, "variation").await
}

/// The `i`-th of `n` output paths: `path` (with `-i` before its extension when `n` > 1), or
/// `images/<stem>-<id>[-i].<ext>`.
fn output_path(path: Option<&str>, stem: &str, id: &str, i: usize, n: usize, ext: &str) -> String {
    let suffix = if n > 1 {
        format!("-{}", i + 1)
    } else {
        String::new()
    };
    match path {
        Some(path) => match path.rsplit_once('.') {
            Some((head, tail)) if !tail.contains('/') && !head.is_empty() => {
                format!("{head}{suffix}.{tail}")
            }
            _ => format!("{path}{suffix}"),
        },
        None => format!("images/{stem}-{id}{suffix}.{ext}"),
    }
}

/// Saves each picture of an images API answer (`data[].b64_json`, or `data[].url` fetched
/// through the egress guard) into the workspace.
async fn save(
    call: &Call<'_>,
    provider: &Provider,
    answer: &Value,
    model: &str,
    stem: &str,
) -> Result<Reply, ToolError> {
    let unusable = |why: &str| {
        ToolError::Provider(format!(
            "the image service's answer is not usable ({why}): it must be an OpenAI-compatible \
             images API answer ({{data: [{{b64_json}}]}}); check the Config Center service \
             '{}' (base_url, model)",
            provider.service
        ))
    };
    let data = answer
        .get("data")
        .and_then(Value::as_array)
        .filter(|d| !d.is_empty())
        .ok_or_else(|| unusable("no data"))?;
    let data: Vec<&Value> = data.iter().take(MAX_IMAGES as usize).collect();
    let id = uuid::Uuid::new_v4().simple().to_string();
    let id = id.get(..8).unwrap_or("image");
    let path = call.args.get("path").and_then(Value::as_str);
    let overwrite = media::overwrite(&call.args);
    let show = call.args.get("show").and_then(Value::as_bool) != Some(false);
    let mut reply = Reply::default();
    let mut saved = Vec::new();
    for (i, item) in data.iter().enumerate() {
        let bytes = match (
            item.get("b64_json").and_then(Value::as_str),
            item.get("url").and_then(Value::as_str),
        ) {
            (Some(b64), _) => STANDARD
                .decode(b64.trim().as_bytes())
                .map_err(|_| unusable("b64_json is not base64"))?,
            (None, Some(url)) => fetch(call, url).await?,
            (None, None) => return Err(unusable("an entry has neither b64_json nor url")),
        };
        let kind = local::Kind::sniff(&bytes, "the service's picture")
            .map_err(|_| unusable("a picture is not PNG, JPEG, WebP or GIF"))?;
        let (width, height) = local::dimensions(&bytes, kind).unwrap_or((0, 0));
        let target = output_path(path, stem, id, i, data.len(), kind.ext());
        let mut file = media::write_for(call, &target, bytes.clone(), overwrite).await?;
        toolsmith_core::object::set(&mut file, "format", json!(kind.name()));
        toolsmith_core::object::set(&mut file, "width", json!(width));
        toolsmith_core::object::set(&mut file, "height", json!(height));
        if let Some(revised) = item.get("revised_prompt").and_then(Value::as_str) {
            toolsmith_core::object::set(&mut file, "revisedPrompt", json!(revised));
        }
        saved.push(file);
        if show {
            reply.media.push(("image", kind.mime().to_owned(), bytes));
        }
    }
    reply.value = json!({"images": saved, "count": saved.len(), "model": model});
    Ok(reply)
}

/// A picture an images API answered with as a URL, fetched through the egress guard.
async fn fetch(call: &Call<'_>, url: &str) -> Result<Vec<u8>, ToolError> {
    let request = WebRequest {
        method: "GET".to_owned(),
        url: url.to_owned(),
        headers: Vec::new(),
        body: None,
        timeout: MAX_TIMEOUT,
        max_response_bytes: MAX_INPUT_BYTES as usize,
    };
    let response = call.client.send(&call.ctx.user_id, request).await?;
    if !(200..300).contains(&response.status) {
        return Err(ToolError::Provider(format!(
            "the picture the image service made could not be fetched (HTTP {}): ask again",
            response.status
        )));
    }
    Ok(response.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths_number_several_pictures_and_keep_the_extension() {
        assert_eq!(
            output_path(Some("a/cat.png"), "g", "id", 0, 1, "png"),
            "a/cat.png"
        );
        assert_eq!(
            output_path(Some("a/cat.png"), "g", "id", 1, 2, "png"),
            "a/cat-2.png"
        );
        assert_eq!(output_path(Some("cat"), "g", "id", 0, 2, "png"), "cat-1");
        assert_eq!(
            output_path(None, "edited", "ab12", 0, 1, "webp"),
            "images/edited-ab12.webp"
        );
        assert!(!wants_format("gpt-image-1"));
        assert!(wants_format("dall-e-3"));
    }
}
