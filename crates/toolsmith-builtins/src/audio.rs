//! The audio tools (003 §14): `text_to_speech` (GoClaw's `tts` is another name of it),
//! `speech_to_text` and `translate_audio` through an OpenAI-compatible audio API, and
//! `audio_info` and `split_audio` locally on workspace files.
//!
//! The service is the caller's Config Center service [`SERVICE`]: `base_url`, `api_key`, and
//! the optional `speech_model` (default [`DEFAULT_SPEECH_MODEL`]), `transcription_model`
//! (default [`DEFAULT_TRANSCRIPTION_MODEL`]) and `voice` (default [`DEFAULT_VOICE`]). Speech is
//! `POST /audio/speech` (JSON in, the sound's bytes out, saved into the workspace),
//! transcription `POST /audio/transcriptions` and translation into English
//! `POST /audio/translations` (multipart, the file as `file`) — the API OpenAI, Groq, LocalAI,
//! faster-whisper-server/Speaches and most self-hosted speech servers speak.
//!
//! Locally, [`wav`] reads WAV (`audio_info` and `split_audio`: a PCM file's frames can be cut
//! and written back with no codec) and FLAC's header (`audio_info`); compressed formats (MP3,
//! Ogg, M4A, WebM) would need a decoder per codec to measure or cut exactly, so they are named
//! and refused with the way round (ask `text_to_speech` for `wav`, or convert the file).

pub mod wav;

use serde_json::{Value, json};
use toolsmith_core::model::Effect;
use toolsmith_core::{RegisteredTool, ResultSource, ToolDefinition};

use crate::BuiltinEnv;
use crate::groups::{ToolGroup, off};
use crate::media::{self, Form, Provider, Reply};
use crate::web::{Call, ToolError, str_arg};
use crate::workspace::Workspace;

/// The category of the family's tools.
pub const CATEGORY: &str = "Audio";
/// The Config Center service of the audio API.
pub const SERVICE: &str = "audio";
/// The speech model when the service names none.
pub const DEFAULT_SPEECH_MODEL: &str = "tts-1";
/// The transcription model when the service names none.
pub const DEFAULT_TRANSCRIPTION_MODEL: &str = "whisper-1";
/// The voice when neither the call nor the service names one.
pub const DEFAULT_VOICE: &str = "alloy";
/// Largest sound file sent or read (OpenAI's upload limit).
pub const MAX_AUDIO_BYTES: u64 = 25 * 1024 * 1024;
/// Longest text spoken at once (OpenAI's limit).
pub const MAX_SPEECH_CHARS: u64 = 4096;
/// Most split points.
pub const MAX_SPLITS: u64 = 100;

/// The family's tool groups (see [`crate::groups`]).
pub const GROUPS: &[ToolGroup] = &[ToolGroup {
    depends_on: &["filesystem"],
    ..off(
        "audio",
        "Audio",
        "Speech to text, text to speech and translation of recordings through an \
         OpenAI-compatible audio API, and WAV files measured and split locally.",
        "sends text and recordings to an outside audio service (requests that cost money)",
        ResultSource::External,
        &[
            "text_to_speech",
            "speech_to_text",
            "translate_audio",
            "audio_info",
            "split_audio",
            "tts",
        ],
    )
}];

/// What each tool of this family does to the world (`crate::Effects`).
pub const EFFECTS: crate::Effects = &[
    (
        Effect::Reads,
        &["speech_to_text", "translate_audio", "audio_info"],
    ),
    (Effect::Changes, &["text_to_speech", "split_audio", "tts"]),
];

/// The speech formats and their MIME types.
const FORMATS: &[(&str, &str)] = &[
    ("mp3", "audio/mpeg"),
    ("opus", "audio/ogg"),
    ("aac", "audio/aac"),
    ("flac", "audio/flac"),
    ("wav", "audio/wav"),
    ("pcm", "audio/pcm"),
];

fn speech_definition(name: &str) -> ToolDefinition {
    let description = if name == "tts" {
        "Text to speech (GoClaw's name for text_to_speech): read a text aloud into an audio \
         file in your workspace, through the Config Center service 'audio'."
    } else {
        "Read a text aloud: text to speech through an OpenAI-compatible audio API (the \
         Config Center service 'audio'); the sound is saved in your workspace and returned \
         as audio content."
    };
    ToolDefinition::new(
        name,
        description,
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "minLength": 1, "maxLength": MAX_SPEECH_CHARS, "description": "What to say (at most 4,096 characters)."},
                "voice": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,40}$", "description": "The provider's voice name (OpenAI: alloy, echo, fable, onyx, nova, shimmer …). Default: the service's 'voice', else alloy."},
                "format": {"type": "string", "enum": ["mp3", "opus", "aac", "flac", "wav", "pcm"], "default": "mp3", "description": "The sound's format: mp3 (default), opus (Ogg), aac, flac (lossless), wav (uncompressed, what audio_info and split_audio read) or pcm (raw 24 kHz 16-bit samples)."},
                "speed": {"type": "number", "minimum": 0.25, "maximum": 4.0, "description": "Speaking speed, 0.25-4 (1 is normal)."},
                "instructions": {"type": "string", "maxLength": 2000, "description": "How to speak (tone, accent), for models that take it."},
                "path": {"type": "string", "minLength": 1, "maxLength": 500, "description": "Where to save the sound in your workspace. Default: audio/speech-<id>.<format>."},
                "overwrite": {"type": "boolean", "default": false, "description": "Replace a file already at path (otherwise the call is refused)."},
                "show": {"type": "boolean", "default": true, "description": "Also return the sound as audio content (when it is at most 512 KB), for clients that play it."}
            },
            "required": ["text"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "text to speech",
        "read this text aloud",
        "read aloud",
        "say",
        "speak",
        "voice",
        "tts",
        "narrate",
        "audio",
    ])
}

fn recording_schema(extra: Value) -> Value {
    let mut properties = json!({
        "audio": {"type": "string", "minLength": 1, "maxLength": 500, "description": "The recording: a path in your workspace (MP3, WAV, FLAC, Ogg, M4A or WebM, at most 25 MB)."},
        "prompt": {"type": "string", "maxLength": 1000, "description": "Words to expect (names, terms) or earlier text, to guide the model."}
    });
    if let Some(extra) = extra.as_object() {
        for (key, value) in extra {
            toolsmith_core::object::set(&mut properties, key, value.clone());
        }
    }
    json!({"type": "object", "properties": properties, "required": ["audio"], "additionalProperties": false})
}

/// Every tool of the family.
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    vec![
        media::network_tool(env, CATEGORY, speech_definition("text_to_speech"), |c| {
            Box::pin(speak(c))
        }),
        media::network_tool(env, CATEGORY, speech_definition("tts"), |c| {
            Box::pin(speak(c))
        }),
        media::network_tool(
            env,
            CATEGORY,
            ToolDefinition::new(
                "speech_to_text",
                "Transcribe a recording in your workspace to text (Whisper or any \
                 OpenAI-compatible transcription API set as the Config Center service \
                 'audio'): what was said, optionally with timestamps.",
                recording_schema(json!({
                    "language": {"type": "string", "pattern": "^[a-z]{2,3}$", "description": "The spoken language as an ISO 639-1 code (en, de), if known: faster and more accurate."},
                    "timestamps": {"type": "boolean", "default": false, "description": "Also return the segments with their start and end in seconds."}
                })),
            )
            .with_tags(&[
                "speech to text",
                "transcribe this recording",
                "transcription",
                "transcript",
                "whisper",
                "what was said",
            ]),
            |c| Box::pin(transcribe(c, false)),
        ),
        media::network_tool(
            env,
            CATEGORY,
            ToolDefinition::new(
                "translate_audio",
                "Translate a recording in your workspace into English text (a foreign-language \
                 recording heard and written in English), through the Config Center service \
                 'audio' (Whisper's translations API).",
                recording_schema(json!({})),
            )
            .with_tags(&[
                "translate audio",
                "translate recording to english",
                "foreign language recording",
                "whisper",
            ]),
            |c| Box::pin(transcribe(c, true)),
        ),
        media::local_tool(
            env,
            CATEGORY,
            ToolDefinition::new(
                "audio_info",
                "How long a sound file in your workspace is, and its format: sample rate, \
                 channels, bits, frames (WAV and FLAC; read locally).",
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "minLength": 1, "maxLength": 500, "description": "The sound file: a path in your workspace (WAV or FLAC)."}
                    },
                    "required": ["path"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&[
                "audio info",
                "recording",
                "length",
                "duration",
                "sample rate",
                "wav",
                "metadata",
            ]),
            info,
        ),
        media::local_tool(
            env,
            CATEGORY,
            ToolDefinition::new(
                "split_audio",
                "Cut a WAV recording in your workspace into parts at the given times (in \
                 seconds), locally: each part is saved as a WAV file of the same format.",
                json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "minLength": 1, "maxLength": 500, "description": "The WAV file: a path in your workspace."},
                        "splitPoints": {"type": "array", "minItems": 1, "maxItems": MAX_SPLITS, "items": {"type": "number", "exclusiveMinimum": 0}, "description": "Where to cut, in seconds from the start, in increasing order, each inside the recording: n points make n + 1 parts."},
                        "outputPrefix": {"type": "string", "minLength": 1, "maxLength": 500, "description": "The parts' path before their number: <outputPrefix>1.wav, <outputPrefix>2.wav … Default: beside the file, <name>-part."},
                        "overwrite": {"type": "boolean", "default": false, "description": "Replace files already at the parts' paths (otherwise the call is refused before anything is written)."}
                    },
                    "required": ["path", "splitPoints"],
                    "additionalProperties": false
                }),
            )
            .with_tags(&["split audio", "cut recording", "chunks", "segments", "trim", "wav"]),
            split,
        ),
    ]
}

async fn audio_provider(call: &Call<'_>, why: &str) -> Result<Provider, ToolError> {
    Provider::of(
        call,
        SERVICE,
        None,
        why,
        &format!(
            "optional text fields 'speech_model' (default {DEFAULT_SPEECH_MODEL}), \
             'transcription_model' (default {DEFAULT_TRANSCRIPTION_MODEL}) and 'voice' (default \
             {DEFAULT_VOICE}) pick the models and the voice"
        ),
    )
    .await
}

async fn speak(call: Call<'_>) -> Result<Reply, ToolError> {
    let text = str_arg(&call.args, "text")?;
    let format = call
        .args
        .get("format")
        .and_then(Value::as_str)
        .unwrap_or("mp3");
    let mime = FORMATS
        .iter()
        .find(|(f, _)| *f == format)
        .map_or("audio/mpeg", |(_, m)| *m);
    let provider = audio_provider(&call, "text cannot be read aloud").await?;
    let model = provider
        .field("speech_model")
        .unwrap_or(DEFAULT_SPEECH_MODEL)
        .to_owned();
    let voice = call
        .args
        .get("voice")
        .and_then(Value::as_str)
        .or_else(|| provider.field("voice"))
        .unwrap_or(DEFAULT_VOICE)
        .to_owned();
    let mut body =
        json!({"model": model, "input": text, "voice": voice, "response_format": format});
    for key in ["speed", "instructions"] {
        if let Some(value) = call.args.get(key) {
            toolsmith_core::object::set(&mut body, key, value.clone());
        }
    }
    let response = provider
        .post_for_bytes(
            &call,
            "audio/speech",
            &body,
            MAX_AUDIO_BYTES as usize,
            "audio",
        )
        .await?;
    let looks_like_json = response
        .header("content-type")
        .is_some_and(|t| t.contains("json"));
    if response.body.is_empty() || looks_like_json {
        return Err(ToolError::Provider(format!(
            "the audio service answered without a sound: the Config Center service \
             '{SERVICE}' must point at an OpenAI-compatible speech API (base_url, speech_model)"
        )));
    }
    let id = uuid::Uuid::new_v4().simple().to_string();
    let target = call.args.get("path").and_then(Value::as_str).map_or_else(
        || format!("audio/speech-{}.{format}", id.get(..8).unwrap_or("x")),
        str::to_owned,
    );
    let bytes = response.body;
    let mut file =
        media::write_for(&call, &target, bytes.clone(), media::overwrite(&call.args)).await?;
    for (key, value) in [
        ("format", json!(format)),
        ("mimeType", json!(mime)),
        ("model", json!(model)),
        ("voice", json!(voice)),
        ("characters", json!(text.chars().count())),
    ] {
        toolsmith_core::object::set(&mut file, key, value);
    }
    let mut reply = Reply::json(file);
    if call.args.get("show").and_then(Value::as_bool) != Some(false) {
        reply.media.push(("audio", mime.to_owned(), bytes));
    }
    Ok(reply)
}

async fn transcribe(call: Call<'_>, translate: bool) -> Result<Reply, ToolError> {
    let (path, bytes) =
        media::read_for(&call, str_arg(&call.args, "audio")?, MAX_AUDIO_BYTES).await?;
    let (kind, ext, mime) = wav::sniff(&bytes).ok_or_else(|| {
        ToolError::Args(format!(
            "'{path}' is not a recording the audio API takes (its first bytes are not MP3, \
             WAV, FLAC, Ogg, M4A or WebM): convert it to one of those"
        ))
    })?;
    let provider = audio_provider(
        &call,
        if translate {
            "recordings cannot be translated"
        } else {
            "recordings cannot be transcribed"
        },
    )
    .await?;
    let model = provider
        .field("transcription_model")
        .unwrap_or(DEFAULT_TRANSCRIPTION_MODEL)
        .to_owned();
    let timestamps =
        !translate && call.args.get("timestamps").and_then(Value::as_bool) == Some(true);
    let mut form = Form::default()
        .file("file", &format!("audio.{ext}"), mime, &bytes)
        .text("model", &model)
        .text(
            "response_format",
            if timestamps { "verbose_json" } else { "json" },
        );
    for key in ["language", "prompt"] {
        if let Some(value) = call.args.get(key).and_then(Value::as_str) {
            form = form.text(key, value);
        }
    }
    let endpoint = if translate {
        "audio/translations"
    } else {
        "audio/transcriptions"
    };
    let answer = provider
        .post_form(&call, endpoint, form, 8 * 1024 * 1024, "audio")
        .await?;
    let text = answer.get("text").and_then(Value::as_str).ok_or_else(|| {
        ToolError::Provider(format!(
            "the audio service's answer has no 'text': the Config Center service '{SERVICE}' \
             must point at an OpenAI-compatible transcription API (base_url, \
             transcription_model)"
        ))
    })?;
    let segments = timestamps.then(|| {
        answer
            .get("segments")
            .and_then(Value::as_array)
            .map(|segments| {
                segments
                    .iter()
                    .map(|s| json!({"start": s.get("start"), "end": s.get("end"), "text": s.get("text")}))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    });
    let language = if translate {
        json!("en")
    } else {
        answer.get("language").cloned().unwrap_or(Value::Null)
    };
    Ok(Reply::json(media::present(&[
        ("text", json!(text)),
        ("language", language),
        (
            "durationSeconds",
            answer.get("duration").cloned().unwrap_or(Value::Null),
        ),
        ("segments", segments.map_or(Value::Null, Value::from)),
        ("model", json!(model)),
        (
            "audio",
            json!({"path": path, "format": kind, "bytes": bytes.len()}),
        ),
    ])))
}

/// Why a local audio tool cannot read `path` (`why` from [`wav`]), with the way round.
fn unreadable(path: &str, why: &str) -> ToolError {
    ToolError::Args(format!(
        "'{path}' cannot be read as WAV: {why}. audio_info reads WAV and FLAC and split_audio \
         WAV: ask text_to_speech for format 'wav', or convert the file to WAV first"
    ))
}

fn compressed(path: &str, kind: &str, tool: &str, reads: &str) -> ToolError {
    ToolError::Args(format!(
        "'{path}' is {} audio; {tool} reads {reads} only (compressed formats need a decoder \
         per codec to measure and cut exactly): convert it to WAV first, or ask \
         text_to_speech for format 'wav'",
        kind.to_uppercase()
    ))
}

fn info(workspace: &Workspace, args: &Value) -> Result<Reply, ToolError> {
    let raw = args.get("path").and_then(Value::as_str).unwrap_or_default();
    let (path, bytes) = media::read(workspace, raw, MAX_AUDIO_BYTES * 4)?;
    let about = match wav::sniff(&bytes) {
        Some(("wav", ..)) => {
            let wav = wav::parse(&bytes).map_err(|why| unreadable(&path, &why))?;
            json!({
                "path": path, "format": "wav", "encoding": wav.encoding(), "bytes": bytes.len(),
                "sampleRate": wav.sample_rate, "channels": wav.channels, "bitsPerSample": wav.bits,
                "frames": wav.frames(), "durationSeconds": round(wav.seconds()),
            })
        }
        Some(("flac", ..)) => {
            let (rate, channels, bits, frames) =
                wav::flac(&bytes).map_err(|why| unreadable(&path, &why))?;
            json!({
                "path": path, "format": "flac", "bytes": bytes.len(), "sampleRate": rate,
                "channels": channels, "bitsPerSample": bits, "frames": frames,
                "durationSeconds": round(frames as f64 / f64::from(rate)),
            })
        }
        Some((kind, ..)) => return Err(compressed(&path, kind, "audio_info", "WAV and FLAC")),
        None => return Err(unreadable(&path, "it is not a sound file of a known kind")),
    };
    Ok(Reply::json(about))
}

fn round(seconds: f64) -> f64 {
    (seconds * 1000.0).round() / 1000.0
}

fn split(workspace: &Workspace, args: &Value) -> Result<Reply, ToolError> {
    let raw = args.get("path").and_then(Value::as_str).unwrap_or_default();
    let (path, bytes) = media::read(workspace, raw, MAX_AUDIO_BYTES * 4)?;
    match wav::sniff(&bytes) {
        Some(("wav", ..)) => {}
        Some((kind, ..)) => return Err(compressed(&path, kind, "split_audio", "WAV")),
        None => return Err(unreadable(&path, "it is not a sound file of a known kind")),
    }
    let wav = wav::parse(&bytes).map_err(|why| unreadable(&path, &why))?;
    let duration = wav.seconds();
    let points: Vec<f64> = args
        .get("splitPoints")
        .and_then(Value::as_array)
        .map(|p| p.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let mut cuts = vec![0u64];
    for point in &points {
        let frame = (point * f64::from(wav.sample_rate)).round() as u64;
        if !(*point > 0.0 && frame < wav.frames()) || cuts.last().is_some_and(|l| frame <= *l) {
            return Err(ToolError::Args(format!(
                "split point {point} s is not inside the recording after the one before: the \
                 points must increase and lie between 0 and its length, {:.3} s",
                duration
            )));
        }
        cuts.push(frame);
    }
    cuts.push(wav.frames());
    let prefix = args
        .get("outputPrefix")
        .and_then(Value::as_str)
        .map_or_else(
            || {
                let stem = path.rsplit_once('.').map_or(path.as_str(), |(s, _)| s);
                format!("{stem}-part")
            },
            str::to_owned,
        );
    let overwrite = media::overwrite(args);
    // Every part's path is checked before anything is written.
    let targets: Vec<String> = (1..cuts.len())
        .map(|i| format!("{prefix}{i}.wav"))
        .collect();
    for target in &targets {
        let checked = workspace.path(target)?;
        if !overwrite && workspace.stat(&checked).is_ok() {
            return Err(ToolError::Args(format!(
                "'{checked}' already exists: pass overwrite: true to replace it, or another \
                 outputPrefix"
            )));
        }
    }
    let align = u64::from(wav.block_align);
    let mut parts = Vec::new();
    for (i, target) in targets.iter().enumerate() {
        let (from, to) = (
            cuts.get(i).copied().unwrap_or(0),
            cuts.get(i + 1).copied().unwrap_or(0),
        );
        let slice = wav
            .data
            .get(
                usize::try_from(from * align).unwrap_or(usize::MAX)
                    ..usize::try_from(to * align).unwrap_or(usize::MAX),
            )
            .unwrap_or_default();
        let mut file = media::write(workspace, target, &wav.with_data(slice), overwrite)?;
        let rate = f64::from(wav.sample_rate);
        for (key, value) in [
            ("start", json!(round(from as f64 / rate))),
            ("end", json!(round(to as f64 / rate))),
            ("durationSeconds", json!(round((to - from) as f64 / rate))),
        ] {
            toolsmith_core::object::set(&mut file, key, value);
        }
        parts.push(file);
    }
    Ok(Reply::json(json!({
        "path": path,
        "durationSeconds": round(duration),
        "count": parts.len(),
        "parts": parts,
    })))
}
