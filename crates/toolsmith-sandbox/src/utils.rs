//! The Rust half of `utils`: the helpers that need a cryptographic random source or byte-level
//! work (hashing, UUIDs, passwords, Base64, hex) or a grammar of the host (`getPath`'s JSON
//! paths), and the `host` object through which
//! `prelude.js`, `support.js`, `utils.js` and `io.js` reach them, the running job's host bridge
//! and console ([`JobSlot`]), and the loaders of `support.js`, `utils.js` and `io.js`.
//!
//! Every native function here takes and returns plain strings and numbers: `utils.js` coerces
//! the script's values *before* calling, so no script code ever runs while a native function is
//! on the stack, and nothing of the host is handed back but fresh primitive values. A failure
//! becomes a plain `Error` created inside the sandbox (`Exception::throw_message`).
//!
//! The other helpers are plain JavaScript in `utils.js`.

use std::rc::Rc;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use md5::Md5;
use rand::seq::{IndexedRandom as _, SliceRandom as _};
use rquickjs::function::IntoArgs;
use rquickjs::{Ctx, Exception, FromJs, Function, Object, Value};
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha384, Sha512};
use unicode_normalization::UnicodeNormalization as _;

use crate::compile::{self, CompileError};
use crate::console;
use crate::host::{JobSlot, JobState, NoteOutcome};
use crate::raw::{self, Bytecode, LazyIntrinsic};

/// Longest password `generatePassword` makes.
pub(crate) const MAX_PASSWORD_LENGTH: usize = 1024;

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &[u8] = b"0123456789";
const SYMBOLS: &[u8] = b"!@#$%^&*()-_=+[]{};:,.<>?";

/// The hex digest of `text` (UTF-8) under `algorithm`: sha256, sha384, sha512, sha1 or md5.
pub(crate) fn hash(text: &str, algorithm: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let digest = match algorithm.to_ascii_lowercase().replace('-', "").as_str() {
        "sha256" => hex::encode(Sha256::digest(bytes)),
        "sha384" => hex::encode(Sha384::digest(bytes)),
        "sha512" => hex::encode(Sha512::digest(bytes)),
        "sha1" => hex::encode(Sha1::digest(bytes)),
        "md5" => hex::encode(Md5::digest(bytes)),
        _ => {
            return Err(format!(
                "utils.hash: unsupported algorithm '{algorithm}' (use sha256, sha384, sha512, sha1 or md5)"
            ));
        }
    };
    Ok(digest)
}

/// A random password of `length` characters from letters, digits and symbols, drawn from the
/// thread's cryptographically secure generator; from 4 characters on it has at least one of
/// each class.
pub(crate) fn password(length: usize) -> Result<String, String> {
    if length == 0 || length > MAX_PASSWORD_LENGTH {
        return Err(format!(
            "utils.generatePassword: length must be between 1 and {MAX_PASSWORD_LENGTH}"
        ));
    }
    let classes = [LOWER, UPPER, DIGITS, SYMBOLS];
    let all: Vec<u8> = classes.concat();
    let mut rng = rand::rng();
    let mut chars: Vec<u8> = Vec::with_capacity(length);
    if length >= classes.len() {
        chars.extend(classes.iter().filter_map(|class| class.choose(&mut rng)));
    }
    while chars.len() < length {
        let Some(&c) = all.choose(&mut rng) else {
            break;
        };
        chars.push(c);
    }
    chars.shuffle(&mut rng);
    Ok(chars.into_iter().map(char::from).collect())
}

/// Standard Base64 of the UTF-8 bytes of `text`.
pub(crate) fn base64_encode(text: &str) -> String {
    STANDARD.encode(text.as_bytes())
}

/// The text whose UTF-8 bytes `encoded` holds (standard or URL-safe alphabet, padding
/// optional); bytes that are not UTF-8 become U+FFFD.
pub(crate) fn base64_decode(encoded: &str) -> Result<String, String> {
    let encoded: String = encoded.split_whitespace().collect();
    let url_safe = encoded.contains(['-', '_']);
    let padded = encoded.ends_with('=');
    let engine = match (url_safe, padded) {
        (false, true) => &STANDARD,
        (false, false) => &STANDARD_NO_PAD,
        (true, true) => &URL_SAFE,
        (true, false) => &URL_SAFE_NO_PAD,
    };
    let bytes = engine
        .decode(encoded.as_bytes())
        .map_err(|e| format!("utils.base64Decode: the input is not valid Base64 ({e})"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Lowercase hex of the UTF-8 bytes of `text`.
pub(crate) fn hex_encode(text: &str) -> String {
    hex::encode(text.as_bytes())
}

/// The text whose UTF-8 bytes `encoded` spells in hex; bytes that are not UTF-8 become U+FFFD.
pub(crate) fn hex_decode(encoded: &str) -> Result<String, String> {
    let bytes = hex::decode(encoded.trim())
        .map_err(|e| format!("utils.hexDecode: the input is not valid hex ({e})"))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `text` in Unicode normalization form `form` (`NFC`, `NFD`, `NFKC`, `NFKD`), in linear time
/// (QuickJS's own is quadratic on long runs of combining marks); refused once the result passes
/// `max_bytes` of UTF-8.
pub(crate) fn normalize(text: &str, form: &str, max_bytes: usize) -> Result<String, String> {
    fn collect(chars: impl Iterator<Item = char>, max_bytes: usize) -> Result<String, String> {
        let mut out = String::new();
        for c in chars {
            out.push(c);
            if out.len() > max_bytes {
                return Err(format!(
                    "normalize: the result is larger than the memory limit of {max_bytes} bytes"
                ));
            }
        }
        Ok(out)
    }
    match form {
        "NFC" => collect(text.nfc(), max_bytes),
        "NFD" => collect(text.nfd(), max_bytes),
        "NFKC" => collect(text.nfkc(), max_bytes),
        "NFKD" => collect(text.nfkd(), max_bytes),
        _ => Err("invalid normalization form".to_owned()),
    }
}

/// The steps of `path` in the one JSON-path grammar (`toolsmith_httptool::path`), as the JSON
/// `utils.getPath` walks: one `[member, element]` a step, the member of an object it names (or
/// `null`) and the element of an array it names (or `null`).
pub(crate) fn path_steps(path: &str) -> Result<String, String> {
    let parsed =
        toolsmith_httptool::path::parse(path).map_err(|e| format!("utils.getPath: {e}"))?;
    let steps: Vec<serde_json::Value> = parsed
        .steps()
        .iter()
        .map(|step| serde_json::json!([step.member(), step.element()]))
        .collect();
    Ok(serde_json::Value::Array(steps).to_string())
}

/// `localeCompare` as QuickJS defines it: the NFC forms compared code point by code point
/// (-1, 0 or 1), in linear time.
pub(crate) fn compare_nfc(a: &str, b: &str) -> i32 {
    match a.nfc().cmp(b.nfc()) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }
}

/// The byte offset in `text` of UTF-16 index `index` (the end when past it).
fn byte_offset(text: &str, index: f64) -> usize {
    if index.is_nan() || index <= 0.0 {
        return 0;
    }
    let mut units = 0.0;
    for (at, c) in text.char_indices() {
        if units >= index {
            return at;
        }
        units += c.len_utf16() as f64;
    }
    text.len()
}

/// The UTF-16 index of byte offset `at`, counting on from `(from_byte, from_index)`.
fn utf16_index(text: &str, from: (usize, f64), at: usize) -> f64 {
    from.1
        + text
            .get(from.0..at)
            .unwrap_or_default()
            .encode_utf16()
            .count() as f64
}

/// `text.indexOf(pattern, from)` in linear time (two-way search), UTF-16 indices.
pub(crate) fn find(text: &str, pattern: &str, from: f64) -> f64 {
    let start = byte_offset(text, from);
    match text.get(start..).and_then(|rest| rest.find(pattern)) {
        Some(at) => utf16_index(text, (0, 0.0), start + at),
        None => -1.0,
    }
}

/// `text.lastIndexOf(pattern, from)` in linear time, UTF-16 indices.
pub(crate) fn rfind(text: &str, pattern: &str, from: f64) -> f64 {
    // A match may start at `from` at the latest, so it ends by `from + pattern.len()` bytes;
    // that offset can fall inside a character (the pattern's bytes are not the text's there),
    // and any match ending before it ends on a character boundary at or before it.
    let end = text.floor_char_boundary(
        byte_offset(text, from)
            .saturating_add(pattern.len())
            .min(text.len()),
    );
    match text.get(..end).and_then(|head| head.rfind(pattern)) {
        Some(at) => utf16_index(text, (0, 0.0), at),
        None => -1.0,
    }
}

/// The UTF-16 indices of every non-overlapping occurrence of `pattern`, in one linear pass.
pub(crate) fn find_all(text: &str, pattern: &str) -> Vec<f64> {
    let mut found = Vec::new();
    let mut last = (0, 0.0);
    for (at, _) in text.match_indices(pattern) {
        let index = utf16_index(text, last, at);
        found.push(index);
        last = (at, index);
    }
    found
}

/// The `host` object handed to `prelude.js`'s `install` (and never to the script): the loader
/// of the support module (kept small, so that preparing a context stays cheap).
pub(crate) fn host_object<'js>(ctx: &Ctx<'js>, slot: Rc<JobSlot>) -> rquickjs::Result<Object<'js>> {
    let host = Object::new(ctx.clone())?;
    host.set(
        "loadSupport",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, primordials: Value<'js>| {
                load_support(&ctx, slot.clone(), primordials)
            },
        )?,
    )?;
    Ok(host)
}

/// Loads `support.js` into the context and initializes it with the native functions it uses:
/// `console`, and `loadUtils` and `loadIo`, which load `utils.js` and `io.js` when one of their
/// helpers is first touched.
fn load_support<'js>(
    ctx: &Ctx<'js>,
    slot: Rc<JobSlot>,
    primordials: Value<'js>,
) -> rquickjs::Result<Object<'js>> {
    let natives = Object::new(ctx.clone())?;
    let job = slot.clone();
    natives.set(
        "console",
        Function::new(ctx.clone(), move |level: String, text: String| {
            job.with(|job| job.console.write(console::level(&level), &text))
                .unwrap_or(false)
        })?,
    )?;
    let job = slot.clone();
    natives.set(
        "loadUtils",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, primordials: Value<'js>, shared: Value<'js>| {
                load_utils(&ctx, job.clone(), primordials, shared)
            },
        )?,
    )?;
    let job = slot.clone();
    natives.set(
        "loadIo",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, primordials: Value<'js>, shared: Value<'js>| {
                let natives = Object::new(ctx.clone())?;
                natives.set("callTool", call_tool(&ctx, job.clone())?)?;
                natives.set("fetch", fetch(&ctx, job.clone())?)?;
                load_module::<_, Object<'js>>(
                    &ctx,
                    compile::io(),
                    "io",
                    (natives, primordials, shared),
                )
            },
        )?,
    )?;
    natives.set(
        "loadMcp",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, primordials: Value<'js>, shared: Value<'js>| {
                let natives = mcp_natives(&ctx, slot.clone())?;
                load_module::<_, Object<'js>>(
                    &ctx,
                    compile::mcp(),
                    "mcp",
                    (natives, primordials, shared),
                )
            },
        )?,
    )?;
    load_module(
        ctx,
        compile::support(),
        "the support module",
        (natives, primordials),
    )
}

/// The warning written to the console once, when the first `mcp.log` or `mcp.progress`
/// message over a cap is dropped.
fn notes_dropped_warning() -> String {
    format!(
        "mcp.log / mcp.progress: over the limit of {} messages ({} bytes each, {} in all) per call; this message and the rest were dropped",
        crate::MAX_CLIENT_NOTES,
        crate::MAX_CLIENT_NOTE_BYTES,
        crate::MAX_CLIENT_NOTES_BYTES,
    )
}

/// What happened to a message: `true` when it was passed on; the first dropped one writes a
/// warning to the console.
fn note_sent(job: &JobState, outcome: NoteOutcome) -> bool {
    match outcome {
        NoteOutcome::Sent => true,
        NoteOutcome::Dropped { first } => {
            if first {
                job.console
                    .write(console::level("warn"), &notes_dropped_warning());
            }
            false
        }
    }
}

/// The native functions `mcp.js` calls: `log(level, dataJson, logger)` and
/// `progress(progress, total, message)` → whether the message was passed on;
/// `sample(paramsJson)` and `elicit(paramsJson)` → the id of the host call they started.
fn mcp_natives<'js>(ctx: &Ctx<'js>, slot: Rc<JobSlot>) -> rquickjs::Result<Object<'js>> {
    let natives = Object::new(ctx.clone())?;
    let job = slot.clone();
    natives.set(
        "log",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, level: String, data_json: String, logger: Option<String>| {
                let sent = job
                    .with(|job| {
                        job.bridge
                            .log(&level, &data_json, logger)
                            .map(|outcome| note_sent(job, outcome))
                    })
                    .unwrap_or_else(|| Err("mcp.log: no call is running".to_owned()));
                sent.map_err(|e| Exception::throw_type(&ctx, &e))
            },
        )?,
    )?;
    let job = slot.clone();
    natives.set(
        "progress",
        Function::new(
            ctx.clone(),
            move |progress: f64, total: Option<f64>, message: Option<String>| {
                job.with(|job| note_sent(job, job.bridge.progress(progress, total, message)))
                    .unwrap_or(false)
            },
        )?,
    )?;
    for (name, sample) in [("sample", true), ("elicit", false)] {
        let job = slot.clone();
        natives.set(
            name,
            Function::new(ctx.clone(), move |ctx: Ctx<'js>, params_json: String| {
                let id = job
                    .with(|job| job.bridge.ask_client(sample, &params_json))
                    .unwrap_or_else(|| Err("mcp: no call is running".to_owned()));
                id.map(|id| id as f64)
                    .map_err(|e| Exception::throw_message(&ctx, &e))
            })?,
        )?;
    }
    Ok(natives)
}

/// Loads `utils.js` into the context and initializes it with the native functions it uses and
/// what it shares with `support.js`.
fn load_utils<'js>(
    ctx: &Ctx<'js>,
    slot: Rc<JobSlot>,
    primordials: Value<'js>,
    shared: Value<'js>,
) -> rquickjs::Result<Object<'js>> {
    // `utils.js` uses `Date` and `Set`.
    for intrinsic in [LazyIntrinsic::Date, LazyIntrinsic::MapSet] {
        if !slot.ensure(ctx, intrinsic) {
            return Err(rquickjs::Error::Exception);
        }
    }
    let natives = natives(ctx, slot)?;
    load_module(
        ctx,
        compile::utils(),
        "utils",
        (natives, primordials, shared),
    )
}

/// Loads one of the modules the sandbox loads on first use (`bytecode`, named `what` in an
/// error) into the context and returns what its `init` returns when called with `args`.
pub(crate) fn load_module<'js, A: IntoArgs<'js>, R: FromJs<'js>>(
    ctx: &Ctx<'js>,
    bytecode: Result<Bytecode, CompileError>,
    what: &str,
    args: A,
) -> rquickjs::Result<R> {
    let bytecode = bytecode
        .map_err(|e| Exception::throw_internal(ctx, &format!("{what} could not be loaded: {e}")))?;
    let (module, _evaluated) = raw::load_module(ctx, &bytecode)?.eval()?;
    let init: Function<'js> = module.get("init")?;
    init.call(args)
}

/// Loads `bounds.js` (the rare paths of the string guards) into the context and initializes
/// it with the host's linear normalization and string search and the guards' `kit`.
pub(crate) fn load_bounds<'js>(ctx: &Ctx<'js>, kit: Value<'js>) -> rquickjs::Result<Object<'js>> {
    let natives = Object::new(ctx.clone())?;
    natives.set(
        "normalize",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, text: String, form: String, max_bytes: f64| {
                normalize(&text, &form, max_bytes as usize)
                    .map_err(|e| Exception::throw_range(&ctx, &e))
            },
        )?,
    )?;
    natives.set(
        "find",
        Function::new(ctx.clone(), |text: String, pattern: String, from: f64| {
            find(&text, &pattern, from)
        })?,
    )?;
    natives.set(
        "rfind",
        Function::new(ctx.clone(), |text: String, pattern: String, from: f64| {
            rfind(&text, &pattern, from)
        })?,
    )?;
    natives.set(
        "findAll",
        Function::new(ctx.clone(), |text: String, pattern: String| {
            find_all(&text, &pattern)
        })?,
    )?;
    load_module(
        ctx,
        compile::bounds(),
        "the built-in guards",
        (natives, kit),
    )
}

/// `callTool(name, argsJson)` → the id of the host call it started.
fn call_tool<'js>(ctx: &Ctx<'js>, slot: Rc<JobSlot>) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>, name: String, args_json: String| {
            let id = slot
                .with(|job| job.bridge.call_tool(name, &args_json))
                .unwrap_or_else(|| Err("callTool: no call is running".to_owned()));
            id.map(|id| id as f64)
                .map_err(|e| Exception::throw_message(&ctx, &e))
        },
    )
}

/// `fetch(url, method, headersJson, body)` → the id of the host call it started.
fn fetch<'js>(ctx: &Ctx<'js>, slot: Rc<JobSlot>) -> rquickjs::Result<Function<'js>> {
    Function::new(
        ctx.clone(),
        move |ctx: Ctx<'js>,
              url: String,
              method: String,
              headers_json: String,
              body: Option<String>| {
            let id = slot
                .with(|job| job.bridge.fetch(url, method, &headers_json, body))
                .unwrap_or_else(|| Err("fetch: no call is running".to_owned()));
            id.map(|id| id as f64)
                .map_err(|e| Exception::throw_message(&ctx, &e))
        },
    )
}

/// The native functions `utils.js` calls.
fn natives<'js>(ctx: &Ctx<'js>, slot: Rc<JobSlot>) -> rquickjs::Result<Object<'js>> {
    let natives = Object::new(ctx.clone())?;
    natives.set(
        "hash",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, text: String, algorithm: String| {
                hash(&text, &algorithm).map_err(|e| Exception::throw_message(&ctx, &e))
            },
        )?,
    )?;
    natives.set(
        "pathSteps",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, path: String| {
            path_steps(&path).map_err(|e| Exception::throw_message(&ctx, &e))
        })?,
    )?;
    natives.set(
        "uuid",
        Function::new(ctx.clone(), || uuid::Uuid::new_v4().to_string())?,
    )?;
    natives.set(
        "password",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, length: f64| {
            let length = if length.fract() == 0.0 && length >= 1.0 {
                length as usize
            } else {
                0
            };
            password(length).map_err(|e| Exception::throw_message(&ctx, &e))
        })?,
    )?;
    natives.set(
        "base64Encode",
        Function::new(ctx.clone(), |text: String| base64_encode(&text))?,
    )?;
    natives.set(
        "base64Decode",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, text: String| {
            base64_decode(&text).map_err(|e| Exception::throw_message(&ctx, &e))
        })?,
    )?;
    natives.set(
        "hexEncode",
        Function::new(ctx.clone(), |text: String| hex_encode(&text))?,
    )?;
    natives.set(
        "hexDecode",
        Function::new(ctx.clone(), |ctx: Ctx<'js>, text: String| {
            hex_decode(&text).map_err(|e| Exception::throw_message(&ctx, &e))
        })?,
    )?;
    natives.set("callTool", call_tool(ctx, slot.clone())?)?;
    natives.set(
        "listTools",
        Function::new(ctx.clone(), move || {
            slot.with(|job| job.bridge.list_tools_json())
                .unwrap_or_else(|| "[]".to_owned())
        })?,
    )?;
    Ok(natives)
}

#[cfg(test)]
mod tests;
