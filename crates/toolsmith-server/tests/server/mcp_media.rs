//! The image and audio families (issue 39) end to end through MCP: an OpenAI-compatible API
//! this test starts on 127.0.0.1 speaking the real protocol shapes with scripted answers
//! (chat completions with an `image_url` part, `images/generations` answering `b64_json`,
//! `images/edits` and `images/variations` and `audio/transcriptions` and
//! `audio/translations` as `multipart/form-data`, `audio/speech` answering the sound's bytes),
//! reached through the real egress guard with the caller's Config Center services `image` and
//! `audio`; the local tools (`resize_image`, `audio_info`, `split_audio`) on real workspace
//! files, hostile ones included.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Identity;

use crate::mcp_outside::{Seen, assert_search_finds, configure};
use crate::mcp_support::{McpClient, call_tool, connect_in_process, result_text};
use crate::rest_support::{TestApp, serve_loopback, settings_reaching};

/// A PNG of `width` x `height`, all red.
fn png(width: u32, height: u32) -> Vec<u8> {
    let picture = image::RgbaImage::from_pixel(width, height, image::Rgba([200, 20, 20, 255]));
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgba8(picture)
        .write_to(&mut out, image::ImageFormat::Png)
        .unwrap();
    out.into_inner()
}

/// One second of a 24 kHz mono 16-bit WAV (what OpenAI's `wav` speech is).
fn wav(frames: u32) -> Vec<u8> {
    let data_len = frames * 2;
    let mut out = Vec::new();
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&24_000u32.to_le_bytes());
    out.extend_from_slice(&48_000u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    out.extend((0..frames).flat_map(|i| ((i % 64) as i16 * 300).to_le_bytes()));
    out
}

/// PNG's chunk checksum (CRC-32).
fn crc32(data: &[u8]) -> u32 {
    let mut c = u32::MAX;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 == 1 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// A decompression bomb: a valid PNG of a few hundred bytes whose header says 60,000 x
/// 60,000 pixels (14.4 GB as RGBA).
fn bomb() -> Vec<u8> {
    let mut bytes = png(4, 4);
    bytes[16..20].copy_from_slice(&60_000u32.to_be_bytes());
    bytes[20..24].copy_from_slice(&60_000u32.to_be_bytes());
    let crc = crc32(&bytes[12..29]);
    bytes[29..33].copy_from_slice(&crc.to_be_bytes());
    bytes
}

/// One part of a `multipart/form-data` body: `(name, filename, content type, bytes)`.
type Part = (String, Option<String>, Option<String>, Vec<u8>);

/// The parts of a `multipart/form-data` body.
fn parts(headers: &HeaderMap, body: &[u8]) -> Vec<Part> {
    let content_type = headers[header::CONTENT_TYPE].to_str().unwrap();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("not multipart: {content_type}"));
    let delimiter = format!("--{boundary}");
    let text = body;
    let mut out = Vec::new();
    let positions: Vec<usize> = text
        .windows(delimiter.len())
        .enumerate()
        .filter(|(_, w)| *w == delimiter.as_bytes())
        .map(|(i, _)| i)
        .collect();
    assert!(
        body.ends_with(format!("{delimiter}--\r\n").as_bytes()),
        "the closing delimiter"
    );
    for pair in positions.windows(2) {
        let part = &text[pair[0] + delimiter.len() + 2..pair[1] - 2];
        let split = part.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8(part[..split].to_vec()).unwrap();
        let content = part[split + 4..].to_vec();
        let field = |key: &str| {
            head.split(&format!("{key}=\""))
                .nth(1)
                .map(|rest| rest.split('"').next().unwrap().to_owned())
        };
        let mime = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Type: "))
            .map(str::to_owned);
        out.push((field(" name").unwrap(), field("filename"), mime, content));
    }
    out
}

/// The multipart body as JSON for `seen`: text fields as strings, files as
/// `{filename, contentType, bytes, magic}`.
fn form_json(headers: &HeaderMap, body: &[u8]) -> Value {
    let mut out = serde_json::Map::new();
    for (name, filename, mime, content) in parts(headers, body) {
        let value = match filename {
            Some(filename) => {
                json!({"filename": filename, "contentType": mime, "bytes": content.len(),
                "magic": String::from_utf8_lossy(&content[..4.min(content.len())]).into_owned()})
            }
            None => json!(String::from_utf8(content).unwrap()),
        };
        out.insert(name, value);
    }
    out.insert(
        "authorization".to_owned(),
        json!(
            headers
                .get(header::AUTHORIZATION)
                .map(|v| v.to_str().unwrap())
        ),
    );
    Value::Object(out)
}

fn keep(seen: &Seen, what: &str, mut value: Value, headers: &HeaderMap) -> Value {
    if let Some(auth) = headers.get(header::AUTHORIZATION) {
        value["authorization"] = json!(auth.to_str().unwrap());
    }
    seen.lock().unwrap().push((what.to_owned(), value.clone()));
    value
}

fn images_answer(n: u64) -> Value {
    let picture = STANDARD.encode(png(64, 32));
    let data: Vec<Value> = (0..n)
        .map(|_| json!({"b64_json": picture, "revised_prompt": "A red fox in the snow, watercolour."}))
        .collect();
    json!({"created": 1_780_000_000, "data": data})
}

/// OpenAI's image and audio endpoints on loopback, scripted; every request kept in `seen`.
async fn openai(seen: Seen) -> String {
    let s = seen.clone();
    let chat = post(move |headers: HeaderMap, body: axum::Json<Value>| {
        let seen = s.clone();
        async move {
            keep(&seen, "chat", body.0, &headers);
            axum::Json(
                json!({"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "A red rectangle, nothing else."}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107}}),
            )
        }
    });
    let s = seen.clone();
    let generations = post(move |headers: HeaderMap, body: axum::Json<Value>| {
        let seen = s.clone();
        async move {
            let body = keep(&seen, "generations", body.0, &headers);
            axum::Json(images_answer(body["n"].as_u64().unwrap_or(1)))
        }
    });
    let form = |what: &'static str, seen: Seen| {
        post(move |headers: HeaderMap, body: Bytes| {
            let seen = seen.clone();
            async move {
                let form = form_json(&headers, &body);
                seen.lock().unwrap().push((what.to_owned(), form.clone()));
                let answer = match what {
                    "edits" | "variations" => {
                        images_answer(form["n"].as_str().unwrap().parse().unwrap())
                    }
                    "translations" => json!({"text": "Good morning, this is the weekly report."}),
                    _ if form["response_format"] == "verbose_json" => json!({
                        "task": "transcribe", "language": "english", "duration": 1.0,
                        "text": "Hello from the recording.",
                        "segments": [{"id": 0, "seek": 0, "start": 0.0, "end": 1.0, "text": "Hello from the recording.",
                            "tokens": [1, 2], "temperature": 0.0, "avg_logprob": -0.2, "compression_ratio": 1.1, "no_speech_prob": 0.01}]}),
                    _ => json!({"text": "Hello from the recording."}),
                };
                axum::Json(answer)
            }
        })
    };
    let s = seen.clone();
    let speech = post(move |headers: HeaderMap, body: axum::Json<Value>| {
        let seen = s.clone();
        async move {
            let body = keep(&seen, "speech", body.0, &headers);
            match body["response_format"].as_str() {
                Some("wav") => ([(header::CONTENT_TYPE, "audio/wav")], wav(24_000)).into_response(),
                _ => (
                    [(header::CONTENT_TYPE, "audio/mpeg")],
                    b"ID3\x04\x00\x00\x00\x00\x00\x00scripted mp3".to_vec(),
                )
                    .into_response(),
            }
        }
    });
    let app = Router::new()
        .route("/v1/chat/completions", chat)
        .route("/v1/images/generations", generations)
        .route("/v1/images/edits", form("edits", seen.clone()))
        .route("/v1/images/variations", form("variations", seen.clone()))
        .route(
            "/v1/audio/transcriptions",
            form("transcriptions", seen.clone()),
        )
        .route("/v1/audio/translations", form("translations", seen.clone()))
        .route("/v1/audio/speech", speech);
    serve_loopback(app).await
}

/// An app reaching `host` with a workspace in `dir` and `groups` on; the local user's
/// workspace folder.
async fn media_app(host: &str, dir: &Path, groups: &[&str]) -> (TestApp, PathBuf) {
    let mut settings = settings_reaching(host);
    let workspaces = toolsmith_builtins::workspace::WorkspaceSettings::new(dir.join("ws"));
    settings.workspace = Some(workspaces.clone());
    let app = TestApp::with_configs(settings, ServerSettings::default()).await;
    for group in groups {
        app.json(
            Method::PUT,
            &format!("/api/v1/tool-groups/{group}"),
            &json!({"enabled": true}),
        )
        .await
        .assert_ok(StatusCode::OK);
    }
    let folder = toolsmith_builtins::workspace::Workspaces::open(workspaces)
        .unwrap()
        .for_owner("default", None)
        .unwrap()
        .root_path()
        .to_owned();
    (app, folder)
}

/// `(isError, structured content, text, content blocks)` of a call through MCP.
async fn call(
    client: &McpClient<()>,
    tool: &str,
    args: Value,
) -> (bool, Value, String, Vec<Value>) {
    let res = call_tool(client, tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e:?}"));
    let text = result_text(&res);
    let structured = res
        .structured_content
        .clone()
        .unwrap_or_else(|| serde_json::from_str(&text).unwrap_or(Value::Null));
    let blocks = res
        .content
        .iter()
        .map(|c| serde_json::to_value(c).unwrap())
        .collect();
    (res.is_error.unwrap_or(false), structured, text, blocks)
}

fn media_blocks(blocks: &[Value], kind: &str) -> Vec<Value> {
    blocks
        .iter()
        .filter(|b| b["type"] == kind)
        .cloned()
        .collect()
}

fn last(seen: &Seen, what: &str) -> Value {
    seen.lock()
        .unwrap()
        .iter()
        .rfind(|(w, _)| w == what)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no {what} request"))
}

fn decoded(path: &Path) -> image::DynamicImage {
    image::load_from_memory(&std::fs::read(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pictures_are_described_generated_edited_varied_and_resized_through_mcp() {
    let seen = Seen::default();
    let host = openai(seen.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let (app, ws) = media_app(&host, dir.path(), &["image"]).await;
    std::fs::write(ws.join("photo.png"), png(300, 200)).unwrap();
    let client = connect_in_process(&app.state, Identity::local_default(), ()).await;

    // No service yet: the answer names the one to set; resizing needs none.
    let (is_error, _, text, _) =
        call(&client, "analyze_image", json!({"image": "photo.png"})).await;
    assert!(is_error);
    assert!(
        text.contains("'image'") && text.contains("base_url"),
        "{text}"
    );
    let (is_error, out, text, blocks) = call(
        &client,
        "resize_image",
        json!({"image": "photo.png", "width": 150}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["path"], "photo-150x100.png", "{out}");
    assert_eq!(
        (out["width"].as_u64(), out["height"].as_u64()),
        (Some(150), Some(100))
    );
    assert_eq!(out["source"]["width"], 300);
    let small = decoded(&ws.join("photo-150x100.png"));
    assert_eq!((small.width(), small.height()), (150, 100));
    let images = media_blocks(&blocks, "image");
    assert_eq!(
        images.len(),
        1,
        "the picture comes back as MCP image content"
    );
    assert_eq!(images[0]["mimeType"], "image/png");
    let shown = STANDARD
        .decode(images[0]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(shown, std::fs::read(ws.join("photo-150x100.png")).unwrap());
    // Conversion, and a box filled and cropped.
    let (is_error, out, text, _) = call(
        &client,
        "resize_image",
        json!({"image": "photo.png", "format": "jpeg", "output": "out/photo.jpg", "quality": 70, "show": false}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["format"], "jpeg");
    assert_eq!(out["inline"], Value::Null, "show: false returns no picture");
    assert!(
        std::fs::read(ws.join("out/photo.jpg"))
            .unwrap()
            .starts_with(&[0xFF, 0xD8, 0xFF])
    );
    let (is_error, _, text, _) = call(
        &client,
        "resize_image",
        json!({"image": "photo.png", "width": 50, "height": 50, "fit": "cover", "format": "webp"}),
    )
    .await;
    assert!(!is_error, "{text}");
    let square = decoded(&ws.join("photo-50x50.webp"));
    assert_eq!((square.width(), square.height()), (50, 50));

    configure(
        &app,
        "image",
        &[("base_url", "url"), ("api_key", "secret")],
        json!({"base_url": format!("http://{host}/v1"), "api_key": "img-key-0123456789"}),
    )
    .await;

    let (is_error, out, text, _) = call(
        &client,
        "analyze_image",
        json!({"image": "photo.png", "prompt": "What colour is it?", "detail": "low"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["answer"], "A red rectangle, nothing else.");
    assert_eq!(
        out["image"],
        json!({"path": "photo.png", "format": "png", "width": 300, "height": 200})
    );
    let asked = last(&seen, "chat");
    assert_eq!(asked["model"], "gpt-4o-mini");
    assert_eq!(asked["authorization"], "Bearer img-key-0123456789");
    assert_eq!(
        asked["messages"][0]["content"][0]["text"],
        "What colour is it?"
    );
    let part = &asked["messages"][0]["content"][1];
    assert_eq!(part["type"], "image_url");
    assert_eq!(part["image_url"]["detail"], "low");
    let url = part["image_url"]["url"].as_str().unwrap();
    let sent = STANDARD
        .decode(url.strip_prefix("data:image/png;base64,").unwrap())
        .unwrap();
    assert_eq!(sent, png(300, 200), "the workspace file is what was sent");
    assert!(!text.contains("img-key"), "the key never comes back");

    let (is_error, out, text, blocks) = call(
        &client,
        "generate_image",
        json!({"prompt": "a red fox", "n": 2, "size": "1024x1024", "path": "art/fox.png"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["count"], 2);
    assert_eq!(out["images"][1]["path"], "art/fox-2.png");
    assert_eq!(out["images"][0]["width"], 64);
    assert_eq!(
        out["images"][0]["revisedPrompt"],
        "A red fox in the snow, watercolour."
    );
    assert_eq!(decoded(&ws.join("art/fox-1.png")).width(), 64);
    assert_eq!(media_blocks(&blocks, "image").len(), 2);
    let asked = last(&seen, "generations");
    assert_eq!(
        (
            &asked["model"],
            &asked["n"],
            &asked["size"],
            &asked["response_format"]
        ),
        (
            &json!("dall-e-3"),
            &json!(2),
            &json!("1024x1024"),
            &json!("b64_json")
        )
    );
    // An existing file is not replaced unless asked.
    let (is_error, _, text, _) = call(
        &client,
        "generate_image",
        json!({"prompt": "a red fox", "path": "photo.png"}),
    )
    .await;
    assert!(is_error && text.contains("overwrite"), "{text}");
    // GoClaw's name does the same.
    let (is_error, out, text, _) = call(&client, "image", json!({"prompt": "a lighthouse"})).await;
    assert!(!is_error, "{text}");
    let saved = out["images"][0]["path"].as_str().unwrap();
    assert!(
        saved.starts_with("images/generated-") && saved.ends_with(".png"),
        "{saved}"
    );
    assert!(ws.join(saved).is_file());

    let (is_error, out, text, _) = call(
        &client,
        "edit_image",
        json!({"image": "photo.png", "prompt": "add a hat", "mask": "photo-150x100.png", "path": "art/hat.png"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["images"][0]["path"], "art/hat.png");
    let asked = last(&seen, "edits");
    assert_eq!(asked["prompt"], "add a hat");
    assert_eq!(asked["model"], "dall-e-2");
    assert_eq!(asked["image"]["filename"], "image.png");
    assert_eq!(asked["image"]["contentType"], "image/png");
    assert_eq!(asked["image"]["bytes"], png(300, 200).len());
    assert_eq!(asked["mask"]["filename"], "mask.png");
    assert_eq!(asked["authorization"], "Bearer img-key-0123456789");

    let (is_error, out, text, _) = call(
        &client,
        "image_variation",
        json!({"image": "photo.png", "n": 1}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(
        ws.join(out["images"][0]["path"].as_str().unwrap())
            .is_file()
    );
    assert_eq!(last(&seen, "variations")["image"]["magic"], "\u{fffd}PNG");

    // Hostile input: each refused with what to do, nothing decoded or sent.
    std::fs::write(ws.join("bomb.png"), bomb()).unwrap();
    let mut cut = png(300, 200);
    cut.truncate(cut.len() / 2);
    std::fs::write(ws.join("cut.png"), cut).unwrap();
    std::fs::write(ws.join("notes.txt"), "not a picture").unwrap();
    let requests = seen.lock().unwrap().len();
    for (tool, args, expected) in [
        (
            "resize_image",
            json!({"image": "bomb.png", "width": 10}),
            "refused unread",
        ),
        (
            "analyze_image",
            json!({"image": "bomb.png"}),
            "60000 x 60000",
        ),
        (
            "edit_image",
            json!({"image": "bomb.png", "prompt": "x"}),
            "refused unread",
        ),
        (
            "resize_image",
            json!({"image": "cut.png", "width": 10}),
            "damaged, cut short",
        ),
        (
            "resize_image",
            json!({"image": "notes.txt", "width": 10}),
            "not a PNG, JPEG, WebP or GIF",
        ),
        (
            "resize_image",
            json!({"image": "../../../etc/passwd", "width": 10}),
            "workspace",
        ),
        (
            "analyze_image",
            json!({"image": "/etc/hostname"}),
            "workspace",
        ),
        (
            "resize_image",
            json!({"image": "photo.png", "width": 16384, "height": 16384}),
            "ask for a smaller size",
        ),
        (
            "resize_image",
            json!({"image": "photo.png"}),
            "nothing to do",
        ),
        (
            "analyze_image",
            json!({"image": "https://example.com/cat.png"}),
            "download_file",
        ),
    ] {
        let (is_error, _, text, _) = call(&client, tool, args.clone()).await;
        assert!(is_error, "{tool} {args}: {text}");
        assert!(text.contains(expected), "{tool} {args}: {text}");
    }
    assert_eq!(
        seen.lock().unwrap().len(),
        requests,
        "no hostile file reached the service"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn speech_is_made_transcribed_translated_measured_and_split_through_mcp() {
    let seen = Seen::default();
    let host = openai(seen.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let (app, ws) = media_app(&host, dir.path(), &["audio"]).await;
    let client = connect_in_process(&app.state, Identity::local_default(), ()).await;

    let (is_error, _, text, _) = call(&client, "text_to_speech", json!({"text": "Hello"})).await;
    assert!(is_error);
    assert!(
        text.contains("'audio'") && text.contains("speech_model"),
        "{text}"
    );
    configure(
        &app,
        "audio",
        &[("base_url", "url"), ("api_key", "secret"), ("voice", "text")],
        json!({"base_url": format!("http://{host}/v1"), "api_key": "audio-key-0123456789", "voice": "nova"}),
    )
    .await;

    let (is_error, out, text, blocks) = call(
        &client,
        "text_to_speech",
        json!({"text": "Hello from Toolsmith.", "format": "wav", "speed": 1.25, "path": "speech/hello.wav"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["path"], "speech/hello.wav");
    assert_eq!(out["mimeType"], "audio/wav");
    assert_eq!(out["voice"], "nova", "the service's voice");
    assert_eq!(
        std::fs::read(ws.join("speech/hello.wav")).unwrap(),
        wav(24_000)
    );
    let sounds = media_blocks(&blocks, "audio");
    assert_eq!(sounds.len(), 1, "the sound comes back as MCP audio content");
    assert_eq!(sounds[0]["mimeType"], "audio/wav");
    let asked = last(&seen, "speech");
    assert_eq!(
        (
            &asked["model"],
            &asked["input"],
            &asked["voice"],
            &asked["response_format"],
            &asked["speed"]
        ),
        (
            &json!("tts-1"),
            &json!("Hello from Toolsmith."),
            &json!("nova"),
            &json!("wav"),
            &json!(1.25)
        )
    );
    assert_eq!(asked["authorization"], "Bearer audio-key-0123456789");
    // GoClaw's `tts`: MP3 by default, saved under audio/.
    let (is_error, out, text, _) =
        call(&client, "tts", json!({"text": "Hi", "voice": "onyx"})).await;
    assert!(!is_error, "{text}");
    let saved = out["path"].as_str().unwrap();
    assert!(
        saved.starts_with("audio/speech-") && saved.ends_with(".mp3"),
        "{saved}"
    );
    assert!(std::fs::read(ws.join(saved)).unwrap().starts_with(b"ID3"));

    let (is_error, out, text, _) =
        call(&client, "audio_info", json!({"path": "speech/hello.wav"})).await;
    assert!(!is_error, "{text}");
    assert_eq!(
        out,
        json!({"path": "speech/hello.wav", "format": "wav", "encoding": "pcm", "bytes": 48_044,
            "sampleRate": 24_000, "channels": 1, "bitsPerSample": 16, "frames": 24_000, "durationSeconds": 1.0})
    );
    let (is_error, out, text, _) = call(
        &client,
        "split_audio",
        json!({"path": "speech/hello.wav", "splitPoints": [0.25, 0.5]}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["count"], 3);
    assert_eq!(out["parts"][2]["path"], "speech/hello-part3.wav");
    assert_eq!(out["parts"][1]["start"], 0.25);
    assert_eq!(out["parts"][2]["durationSeconds"], 0.5);
    let (_, part, _, _) = call(
        &client,
        "audio_info",
        json!({"path": "speech/hello-part1.wav"}),
    )
    .await;
    assert_eq!(part["frames"], 6000);
    let whole = wav(24_000);
    let first = std::fs::read(ws.join("speech/hello-part1.wav")).unwrap();
    assert_eq!(
        &first[44..],
        &whole[44..44 + 12_000],
        "the samples are cut, not changed"
    );
    let (is_error, _, text, _) = call(
        &client,
        "split_audio",
        json!({"path": "speech/hello.wav", "splitPoints": [0.25]}),
    )
    .await;
    assert!(is_error && text.contains("overwrite"), "{text}");

    let (is_error, out, text, _) = call(
        &client,
        "speech_to_text",
        json!({"audio": "speech/hello.wav", "language": "en", "prompt": "Toolsmith", "timestamps": true}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(out["text"], "Hello from the recording.");
    assert_eq!(
        out["segments"],
        json!([{"start": 0.0, "end": 1.0, "text": "Hello from the recording."}])
    );
    assert_eq!(out["durationSeconds"], 1.0);
    let asked = last(&seen, "transcriptions");
    assert_eq!(asked["file"]["filename"], "audio.wav");
    assert_eq!(asked["file"]["contentType"], "audio/wav");
    assert_eq!(asked["file"]["bytes"], 48_044);
    assert_eq!(
        (
            &asked["model"],
            &asked["response_format"],
            &asked["language"],
            &asked["prompt"]
        ),
        (
            &json!("whisper-1"),
            &json!("verbose_json"),
            &json!("en"),
            &json!("Toolsmith")
        )
    );
    let (is_error, out, text, _) = call(&client, "translate_audio", json!({"audio": saved})).await;
    assert!(!is_error, "{text}");
    assert_eq!(out["text"], "Good morning, this is the weekly report.");
    assert_eq!(out["language"], "en");
    let asked = last(&seen, "translations");
    assert_eq!(asked["file"]["filename"], "audio.mp3");
    assert_eq!(asked["response_format"], "json");

    // Hostile and unsupported input: refused with the reason and the way round.
    let mut truncated = wav(24_000);
    truncated.truncate(10_000);
    std::fs::write(ws.join("cut.wav"), truncated).unwrap();
    std::fs::write(ws.join("notes.txt"), "not a sound").unwrap();
    let requests = seen.lock().unwrap().len();
    for (tool, args, expected) in [
        ("audio_info", json!({"path": "cut.wav"}), "truncated"),
        (
            "split_audio",
            json!({"path": "cut.wav", "splitPoints": [0.1]}),
            "truncated",
        ),
        (
            "audio_info",
            json!({"path": saved}),
            "MP3 audio; audio_info reads WAV and FLAC",
        ),
        (
            "split_audio",
            json!({"path": saved, "splitPoints": [0.1]}),
            "convert it to WAV",
        ),
        (
            "split_audio",
            json!({"path": "speech/hello.wav", "splitPoints": [0.5, 0.25], "outputPrefix": "x"}),
            "must increase",
        ),
        (
            "split_audio",
            json!({"path": "speech/hello.wav", "splitPoints": [5.0], "outputPrefix": "x"}),
            "between 0 and its length",
        ),
        (
            "audio_info",
            json!({"path": "../../../etc/passwd"}),
            "workspace",
        ),
        (
            "speech_to_text",
            json!({"audio": "notes.txt"}),
            "not a recording",
        ),
        (
            "speech_to_text",
            json!({"audio": "../outside.wav"}),
            "workspace",
        ),
    ] {
        let (is_error, _, text, _) = call(&client, tool, args.clone()).await;
        assert!(is_error, "{tool} {args}: {text}");
        assert!(text.contains(expected), "{tool} {args}: {text}");
    }
    assert_eq!(
        seen.lock().unwrap().len(),
        requests,
        "nothing hostile reached the service"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn image_and_audio_services_on_a_private_address_not_listed_are_never_reached() {
    // The services answer on loopback; the operator lists another port only.
    let seen = Seen::default();
    let host = openai(seen.clone()).await;
    let dir = tempfile::tempdir().unwrap();
    let (app, ws) = media_app("127.0.0.1:1", dir.path(), &["image", "audio"]).await;
    std::fs::write(ws.join("photo.png"), png(300, 200)).unwrap();
    std::fs::write(ws.join("hello.wav"), wav(24_000)).unwrap();
    for service in ["image", "audio"] {
        configure(
            &app,
            service,
            &[("base_url", "url"), ("api_key", "secret")],
            json!({"base_url": format!("http://{host}/v1"), "api_key": "key-0123456789"}),
        )
        .await;
    }
    let client = connect_in_process(&app.state, Identity::local_default(), ()).await;
    for (tool, args) in [
        ("analyze_image", json!({"image": "photo.png"})),
        ("generate_image", json!({"prompt": "a red fox"})),
        (
            "edit_image",
            json!({"image": "photo.png", "prompt": "add a hat"}),
        ),
        ("image_variation", json!({"image": "photo.png"})),
        ("text_to_speech", json!({"text": "Hello"})),
        ("speech_to_text", json!({"audio": "hello.wav"})),
        ("translate_audio", json!({"audio": "hello.wav"})),
    ] {
        let (is_error, _, text, _) = call(&client, tool, args).await;
        assert!(is_error, "{tool}: {text}");
        assert!(text.contains("allowed_private_hosts"), "{tool}: {text}");
    }
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the services: {:?}",
        seen.lock().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_tools_finds_the_image_and_audio_tools_from_what_a_person_types() {
    assert_search_finds(&[
        ("make this picture smaller", &["resize_image"][..]),
        ("convert this png to jpeg", &["resize_image"]),
        ("what is in this photo", &["analyze_image"]),
        (
            "draw a picture of a cat wearing a hat",
            &["generate_image", "image"],
        ),
        ("transcribe this recording", &["speech_to_text"]),
        ("read this text aloud", &["text_to_speech", "tts"]),
        ("how long is this recording", &["audio_info"]),
        ("cut the recording into three parts", &["split_audio"]),
    ])
    .await;
}
