//! dynamic-mcp's sandbox sessions (spec 002 "Sandbox Sessions") under `--compat dynamic-mcp`:
//! `sandbox.initialize`, `sandbox.exec`, `sandbox.run_js` and `sandbox.stop`, with dynamic-mcp's
//! argument names (`sessionId`, `timeoutMs`, `args`) and answers (`{ok: true, result}` or
//! `{ok: false, error, code}`).
//!
//! Each name stands for a built-in of the `codeExecution` group (`sandbox_initialize`,
//! `sandbox_exec`, `sandbox_run_js`, `sandbox_stop`): this module only translates the
//! arguments in ([`builtin_args`]) and the result out ([`answer`]); the call itself goes through
//! the same door as a call of the built-in by its own name (`ToolsmithMcp::call`), so tool
//! groups, policy, approvals, rate limits, scrubbing and usage apply to both alike, and a name
//! is listed only to a caller who may call its built-in.
//!
//! - `sandbox.initialize` `{image?}` → `{sessionId, workdir, idleTimeoutSeconds, createdAt}`;
//!   `image` is kept and reported as not applicable (sessions are folders, not containers).
//! - `sandbox.exec` `{sessionId, command, timeoutMs?}` → `{exitCode, stdout, stderr, timedOut,
//!   truncated, durationMs}`; `command` is a shell line or an argv array (each word quoted).
//! - `sandbox.run_js` `{sessionId, code, args?, timeoutMs?}` → the value `code` returns: as in
//!   dynamic-mcp, `code` is the body of `async function run(args)`, run with Node.js in the
//!   session's folder; the runner prints [`RESULT_MARKER`] and the JSON outcome, and what the
//!   code printed itself comes back in `meta.stdout`/`meta.stderr`.
//! - `sandbox.stop` `{sessionId}` → `{sessionId, stopped: true}`.
//!
//! `timeoutMs` accepts dynamic-mcp's range (1 to 120,000 ms) and is applied in whole seconds up
//! to the sandbox's 30 s; a longer request is cut to 30 s and `meta.timeoutMs` says so.

use serde_json::{Map, Value, json};
use toolsmith_core::ToolResult;

use super::{envelope, failure, image_schema, success};
use crate::mcp::catalog::arguments;
use rmcp::model::CallToolResult;

/// A sandbox-session name of the compat mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SandboxOp {
    Initialize,
    Exec,
    RunJs,
    Stop,
}

impl SandboxOp {
    /// The built-in this name stands for.
    pub(crate) fn builtin(self) -> &'static str {
        match self {
            SandboxOp::Initialize => "sandbox_initialize",
            SandboxOp::Exec => "sandbox_exec",
            SandboxOp::RunJs => "sandbox_run_js",
            SandboxOp::Stop => "sandbox_stop",
        }
    }

    fn name(self) -> &'static str {
        match self {
            SandboxOp::Initialize => "sandbox.initialize",
            SandboxOp::Exec => "sandbox.exec",
            SandboxOp::RunJs => "sandbox.run_js",
            SandboxOp::Stop => "sandbox.stop",
        }
    }
}

/// What the Node runner prints before the JSON outcome of `sandbox.run_js` (dynamic-mcp's
/// marker). The last one printed counts.
pub(crate) const RESULT_MARKER: &str = "__DYNAMIC_TOOL_RESULT__";

/// Why `sandbox.initialize`'s `image` is kept but not used.
const SESSION_IMAGE_NOT_APPLICABLE: &str = "not applicable: a Toolsmith sandbox session is a folder whose runs each start a fresh command sandbox (bubblewrap) with the host's own programs, not a container; the image is never pulled or run";

/// The longest run the command sandbox allows, in ms.
const SANDBOX_MAX_MS: u64 = toolsmith_builtins::exec::MAX_TIMEOUT.as_millis() as u64;
/// dynamic-mcp's own ceiling of `timeoutMs`.
const SPEC_MAX_MS: u64 = toolsmith_service::tool_settings::MAX_TIMEOUT_MS;

fn session_id_schema() -> Value {
    json!({"type": "string", "description": "The sessionId sandbox.initialize returned."})
}

fn timeout_ms_schema() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": SPEC_MAX_MS, "description": "Wall-clock limit of the run in ms; applied in whole seconds, at most 30,000 (the sandbox's limit)."})
}

/// `(op, name, description, input schema)` of every sandbox-session name.
pub(crate) fn definitions() -> Vec<(SandboxOp, &'static str, &'static str, Value)> {
    vec![
        (
            SandboxOp::Initialize,
            SandboxOp::Initialize.name(),
            "dynamic-mcp compatible: start a sandbox session, a private folder kept between calls (files written by sandbox.exec or sandbox.run_js stay for the next). Answers {ok, result: {sessionId, workdir, idleTimeoutSeconds}}; end it with sandbox.stop. Same as sandbox_initialize.",
            arguments(json!({"image": image_schema()}), &[]),
        ),
        (
            SandboxOp::Exec,
            SandboxOp::Exec.name(),
            "dynamic-mcp compatible: run a shell command in a sandbox session's folder (no network). command is a shell line or an argv array. Answers {ok, result: {exitCode, stdout, stderr, timedOut}}. Same as sandbox_exec.",
            arguments(
                json!({
                    "sessionId": session_id_schema(),
                    "command": {
                        "anyOf": [
                            {"type": "string", "minLength": 1},
                            {"type": "array", "items": {"type": "string"}, "minItems": 1}
                        ],
                        "description": "A shell line (run by /bin/sh -c) or an argv array such as [\"ls\", \"-la\"]."
                    },
                    "timeoutMs": timeout_ms_schema()
                }),
                &["sessionId", "command"],
            ),
        ),
        (
            SandboxOp::RunJs,
            SandboxOp::RunJs.name(),
            "dynamic-mcp compatible: run JavaScript with Node.js in a sandbox session's folder (require('fs') sees the session's files; no network). code is the body of `async function run(args)`; answers {ok, result: <the value it returns>} or {ok: false, error}. Same as sandbox_run_js.",
            arguments(
                json!({
                    "sessionId": session_id_schema(),
                    "code": {"type": "string", "minLength": 1, "description": "Body of an async function receiving `args`; return a JSON value."},
                    "args": {"type": "object", "description": "The `args` the code receives."},
                    "timeoutMs": timeout_ms_schema()
                }),
                &["sessionId", "code"],
            ),
        ),
        (
            SandboxOp::Stop,
            SandboxOp::Stop.name(),
            "dynamic-mcp compatible: stop a sandbox session and delete its files. Same as sandbox_stop.",
            arguments(json!({"sessionId": session_id_schema()}), &["sessionId"]),
        ),
    ]
}

/// A call's arguments translated for the built-in, and the `meta` notes its answer carries
/// (what was requested but does not apply, or applies cut short).
pub(crate) struct Translated {
    pub args: Value,
    meta: Map<String, Value>,
}

/// The built-in's arguments for `op`'s (already checked against the schema above), or the
/// answer refusing them.
pub(crate) fn builtin_args(op: SandboxOp, args: &Value) -> Result<Translated, CallToolResult> {
    let mut meta = Map::new();
    let mut out = Map::new();
    if let Some(id) = args.get("sessionId") {
        out.insert("sessionId".to_owned(), id.clone());
    }
    if let Some(ms) = args.get("timeoutMs").and_then(Value::as_u64) {
        let applied = ms.min(SANDBOX_MAX_MS);
        if applied < ms {
            meta.insert(
                "timeoutMs".to_owned(),
                json!({"requested": ms, "applied": applied, "reason": "the command sandbox ends every run after 30 s"}),
            );
        }
        out.insert(
            "timeoutSeconds".to_owned(),
            json!(applied.div_ceil(1000).max(1)),
        );
    }
    match op {
        SandboxOp::Initialize => {
            if let Some(image) = args.get("image").and_then(Value::as_str) {
                meta.insert(
                    "image".to_owned(),
                    json!({"requested": image, "applicable": false, "reason": SESSION_IMAGE_NOT_APPLICABLE}),
                );
            }
        }
        SandboxOp::Exec => {
            let command = match args.get("command") {
                Some(Value::String(line)) => line.clone(),
                Some(Value::Array(words)) => shell_line(words)?,
                _ => return Err(bad_arguments("command must be a string or an argv array")),
            };
            out.insert("command".to_owned(), json!(command));
        }
        SandboxOp::RunJs => {
            let code = args.get("code").and_then(Value::as_str).unwrap_or("");
            let call_args = args.get("args").cloned().unwrap_or_else(|| json!({}));
            out.insert("code".to_owned(), json!(runner(code, &call_args)));
        }
        SandboxOp::Stop => {}
    }
    Ok(Translated {
        args: Value::Object(out),
        meta,
    })
}

/// The answer to a call of `op` while its built-in is out of the caller's reach (its tool
/// group is disabled).
pub(crate) fn unavailable(op: SandboxOp) -> CallToolResult {
    failure(
        "not_found",
        &format!(
            "{} is not available: {}",
            op.name(),
            toolsmith_builtins::groups::disabled_message(op.builtin())
        ),
        Map::new(),
    )
}

fn bad_arguments(message: &str) -> CallToolResult {
    failure("validation_error", message, Map::new())
}

/// An argv array as one shell line, every word single-quoted (so nothing in a word is
/// interpreted by the shell).
fn shell_line(words: &[Value]) -> Result<String, CallToolResult> {
    let mut line = String::new();
    for word in words {
        let Some(word) = word.as_str() else {
            return Err(bad_arguments("every word of command must be a string"));
        };
        if word.contains('\0') {
            return Err(bad_arguments("a word of command contains a NUL byte"));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push('\'');
        line.push_str(&word.replace('\'', r"'\''"));
        line.push('\'');
    }
    Ok(line)
}

/// The Node.js script that runs `code` as dynamic-mcp's runner does: the body of
/// `async function run(args)`, called with `args`, its outcome printed after [`RESULT_MARKER`].
fn runner(code: &str, args: &Value) -> String {
    // A JSON text is a JavaScript string literal's content once encoded as a JSON string.
    let args_literal = serde_json::to_string(&args.to_string()).unwrap_or_else(|_| "\"{}\"".into());
    format!(
        "async function run(args) {{\n{code}\n}}\n\
         const __emit = (outcome) => {{\n\
         let text;\n\
         try {{ text = JSON.stringify(outcome); }} catch (e) {{ text = JSON.stringify({{ ok: false, error: 'the result is not JSON: ' + String(e && e.message || e) }}); }}\n\
         process.stdout.write('\\n{RESULT_MARKER}' + text + '\\n');\n\
         }};\n\
         run(JSON.parse({args_literal})).then(\n\
         (value) => __emit({{ ok: true, result: value === undefined ? null : value }}),\n\
         (err) => {{ __emit({{ ok: false, error: String(err && err.message || err) }}); process.exitCode = 1; }});\n"
    )
}

/// The built-in's result `res` as dynamic-mcp answers `op`.
pub(crate) fn answer(op: SandboxOp, res: ToolResult, translated: Translated) -> CallToolResult {
    let Translated { meta, .. } = translated;
    if res.is_error {
        return envelope(res, meta);
    }
    match op {
        SandboxOp::Initialize | SandboxOp::Stop => success(res.content, meta),
        SandboxOp::Exec => {
            let mut result = res.content;
            if let Value::Object(map) = &mut result {
                map.remove("sessionId");
                map.remove("success");
            }
            success(result, meta)
        }
        SandboxOp::RunJs => run_js_answer(&res.content, meta),
    }
}

/// `sandbox.run_js`'s answer from the run's output: the outcome after the last marker, or
/// (dynamic-mcp's rule) the raw output as text when there is none.
fn run_js_answer(run: &Value, mut meta: Map<String, Value>) -> CallToolResult {
    let stdout = run.get("stdout").and_then(Value::as_str).unwrap_or("");
    let stderr = run.get("stderr").and_then(Value::as_str).unwrap_or("");
    if !stderr.is_empty() {
        meta.insert("stderr".to_owned(), json!(stderr));
    }
    let outcome = stdout.rfind(RESULT_MARKER).and_then(|at| {
        let (printed, rest) = stdout.split_at(at);
        let text = rest
            .get(RESULT_MARKER.len()..)
            .and_then(|after| after.lines().next())
            .unwrap_or("");
        serde_json::from_str::<Value>(text)
            .ok()
            .map(|outcome| (printed.strip_suffix('\n').unwrap_or(printed), outcome))
    });
    let Some((printed, outcome)) = outcome else {
        if run.get("timedOut").and_then(Value::as_bool) == Some(true) {
            return failure(
                "timeout",
                "the code did not finish within its time limit (timeoutMs, at most 30,000 ms)",
                Map::from_iter([("meta".to_owned(), Value::Object(meta))]),
            );
        }
        if run.get("exitCode").and_then(Value::as_i64) != Some(0) {
            let why = if stderr.is_empty() {
                "the code ended without a result"
            } else {
                stderr
            };
            return failure(
                "execution_error",
                why,
                Map::from_iter([("meta".to_owned(), Value::Object(meta))]),
            );
        }
        return success(json!(stdout), meta);
    };
    if !printed.is_empty() {
        meta.insert("stdout".to_owned(), json!(printed));
    }
    match outcome.get("ok").and_then(Value::as_bool) {
        Some(true) => success(outcome.get("result").cloned().unwrap_or(Value::Null), meta),
        _ => {
            let error = outcome
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("the code failed");
            let mut extra = Map::new();
            if !meta.is_empty() {
                extra.insert("meta".to_owned(), Value::Object(meta));
            }
            failure("execution_error", error, extra)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn structured(result: &CallToolResult) -> Value {
        result.structured_content.clone().unwrap_or(Value::Null)
    }

    #[test]
    fn argv_words_are_quoted_so_the_shell_interprets_none() {
        let words = [json!("printf"), json!("%s|"), json!("it's; rm -rf / $(id)")];
        let line = shell_line(&words).unwrap_or_default();
        assert_eq!(line, r"'printf' '%s|' 'it'\''s; rm -rf / $(id)'");
        let refused = shell_line(&[json!("a\0b")]).err().map(|r| structured(&r));
        assert_eq!(
            refused
                .and_then(|v| v["code"].as_str().map(str::to_owned))
                .as_deref(),
            Some("validation_error")
        );
    }

    #[test]
    fn timeout_ms_is_applied_in_seconds_and_cut_to_the_sandbox_limit() {
        let t = builtin_args(
            SandboxOp::Exec,
            &json!({"sessionId": "sbx_1", "command": "ls", "timeoutMs": 1500}),
        )
        .unwrap_or_else(|_| panic!("translated"));
        assert_eq!(t.args["timeoutSeconds"], 2);
        assert!(t.meta.is_empty());
        let t = builtin_args(
            SandboxOp::Exec,
            &json!({"sessionId": "sbx_1", "command": "ls", "timeoutMs": 120000}),
        )
        .unwrap_or_else(|_| panic!("translated"));
        assert_eq!(t.args["timeoutSeconds"], 30);
        assert_eq!(t.meta["timeoutMs"]["applied"], 30000);
    }

    #[test]
    fn run_js_takes_the_outcome_after_the_last_marker_and_keeps_what_was_printed() {
        let stdout = format!(
            "hello\n{RESULT_MARKER}{{\"ok\":true,\"result\":1}}\n\n{RESULT_MARKER}{{\"ok\":true,\"result\":{{\"n\":2}}}}\n"
        );
        let answer = run_js_answer(
            &json!({"stdout": stdout, "stderr": "", "exitCode": 0}),
            Map::new(),
        );
        let value = structured(&answer);
        assert_eq!(value["ok"], true);
        assert_eq!(value["result"], json!({"n": 2}));
        assert!(
            value["meta"]["stdout"]
                .as_str()
                .is_some_and(|s| s.starts_with("hello"))
        );

        let thrown = run_js_answer(
            &json!({"stdout": format!("\n{RESULT_MARKER}{{\"ok\":false,\"error\":\"boom\"}}\n"), "exitCode": 1}),
            Map::new(),
        );
        let value = structured(&thrown);
        assert_eq!(
            (value["ok"].clone(), value["error"].clone()),
            (json!(false), json!("boom"))
        );

        let raw = run_js_answer(&json!({"stdout": "plain text", "exitCode": 0}), Map::new());
        assert_eq!(structured(&raw)["result"], "plain text");
        let killed = run_js_answer(
            &json!({"stdout": "", "exitCode": 137, "timedOut": true}),
            Map::new(),
        );
        assert_eq!(structured(&killed)["code"], "timeout");
    }
}
