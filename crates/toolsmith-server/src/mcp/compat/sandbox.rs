//! dynamic-mcp's sandbox sessions under `--compat dynamic-mcp` (its `enterprise` profile), as
//! dynamic-mcp v0.4.1's `src/sandbox/register-session-tools.ts` answers them:
//!
//! - `sandbox.session.list` `{adminToken?}` → `structuredContent: {sessions: [{id, image,
//!   createdAt, lastUsedAt}]}` (oldest first), the text the same array as pretty JSON;
//! - `sandbox.initialize` `{adminToken?, image?, timeoutMs?}` → text `Sandbox session ready:
//!   ID`, `structuredContent: {sessionId, image, timeoutMs}` (`timeoutMs` the idle timeout);
//! - `sandbox.exec` `{adminToken?, sessionId, commands: [1–20], timeoutMs?}` → text only: for
//!   each command `$ cmd`, its stdout and its stderr (each trimmed, empty ones left out), one
//!   blank line between commands; a command with a backtick or `$(` (or blank) is `Command
//!   rejected by policy.` (the commands before it have run); a failing command ends the call
//!   with `isError` and `Command failed: …` and its stderr;
//! - `sandbox.run_js` `{adminToken?, sessionId, code, dependencies?, timeoutMs?}` → the code
//!   saved as the session's `index.mjs` and run with `node index.mjs`; text: stdout, then
//!   stderr, trimmed, or `JavaScript execution completed with no output.`;
//! - `sandbox.stop` `{adminToken?, sessionId}` → text `Stopped sandbox session: ID` (also for a
//!   session that is not running, as `docker rm -f` answers).
//!
//! Failures are `isError` with the message as text, in dynamic-mcp's words: `Invalid sandbox
//! session id: ID`, `Sandbox session not found: ID`, `Invalid Docker image: X`, `Docker image
//! not allowed: X`, `Sandbox session limit reached (N).`, `Dependency count exceeds limit
//! (N).`, `Blocked npm package requested: NAME`; input outside the schemas is the TypeScript
//! SDK's `Input validation error` ([`super::invalid_arguments`]); unknown fields are ignored,
//! as zod's objects strip them.
//!
//! Each name stands for a built-in of the `codeExecution` group (`sandbox_list`,
//! `sandbox_initialize`, `sandbox_exec`, `sandbox_run_js`, `sandbox_stop`): this module only
//! translates the arguments in ([`builtin_args`]) and the result out ([`answer`]); the call
//! itself goes through the same door as a call of the built-in by its own name
//! (`ToolsmithMcp::call_registered`), so tool groups, policy, approvals, rate limits,
//! scrubbing and usage apply to both alike, and a name is listed only to a caller who may call
//! its built-in. A session is a folder run in bubblewrap, not a container: `image` is checked
//! against dynamic-mcp's rules and `MCP_SANDBOX_ALLOWED_IMAGES`, kept as the session's label
//! and shown, never pulled; `sandbox.run_js`'s npm `dependencies` are not installed in a
//! session (no network there), so a call naming any is refused with the reason.

use serde_json::{Map, Value, json};
use toolsmith_core::ToolResult;

use super::dependencies_schema;
use crate::mcp::handler::Caller;
use rmcp::model::{CallToolResult, ContentBlock};

/// A sandbox-session name of the compat mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SandboxOp {
    List,
    Initialize,
    Exec,
    RunJs,
    Stop,
}

impl SandboxOp {
    /// The built-in this name stands for.
    pub(crate) fn builtin(self) -> &'static str {
        match self {
            SandboxOp::List => "sandbox_list",
            SandboxOp::Initialize => "sandbox_initialize",
            SandboxOp::Exec => "sandbox_exec",
            SandboxOp::RunJs => "sandbox_run_js",
            SandboxOp::Stop => "sandbox_stop",
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            SandboxOp::List => "sandbox.session.list",
            SandboxOp::Initialize => "sandbox.initialize",
            SandboxOp::Exec => "sandbox.exec",
            SandboxOp::RunJs => "sandbox.run_js",
            SandboxOp::Stop => "sandbox.stop",
        }
    }

    /// dynamic-mcp's title of the tool.
    pub(crate) fn title(self) -> &'static str {
        match self {
            SandboxOp::List => "List Sandbox Sessions",
            SandboxOp::Initialize => "Initialize Sandbox Session",
            SandboxOp::Exec => "Execute Shell Commands In Session",
            SandboxOp::RunJs => "Run JavaScript In Session",
            SandboxOp::Stop => "Stop Sandbox Session",
        }
    }
}

/// dynamic-mcp's default image (`node:lts-slim`), used when no allowed image is configured.
const DEFAULT_IMAGE: &str = "node:lts-slim";
/// The file `sandbox.run_js` saves the code as, and runs.
const RUN_JS_FILE: &str = "index.mjs";
/// The longest run the command sandbox allows, in ms.
const SANDBOX_MAX_MS: u64 = toolsmith_builtins::exec::MAX_TIMEOUT.as_millis() as u64;
/// dynamic-mcp's limits of `timeoutMs`, `commands` and `code`.
const MIN_TIMEOUT_MS: u64 = 1_000;
const MAX_TIMEOUT_MS: u64 = 120_000;
const MAX_COMMANDS: u64 = 20;
const MAX_CODE_CHARS: u64 = 200_000;

fn admin_token_schema() -> Value {
    json!({"type": "string", "description": "The server's admin token; required when one is configured."})
}

fn session_id_schema() -> Value {
    json!({"type": "string", "description": "The sessionId sandbox.initialize returned."})
}

fn timeout_ms_schema() -> Value {
    json!({"type": "integer", "minimum": MIN_TIMEOUT_MS, "maximum": MAX_TIMEOUT_MS, "description": "Wall-clock limit of each run in ms; applied in whole seconds, at most 30,000 (the sandbox's limit)."})
}

/// An input schema as the TypeScript SDK lists a zod object: its properties and required
/// ones, other fields ignored (zod strips them), so no `additionalProperties: false`.
fn object(properties: Value, required: &[&str]) -> Value {
    let mut schema = Map::new();
    schema.insert("type".to_owned(), json!("object"));
    schema.insert("properties".to_owned(), properties);
    if !required.is_empty() {
        schema.insert("required".to_owned(), json!(required));
    }
    Value::Object(schema)
}

/// `(op, name, description, input schema)` of every sandbox-session name, with dynamic-mcp's
/// descriptions.
pub(crate) fn definitions() -> Vec<(SandboxOp, &'static str, &'static str, Value)> {
    vec![
        (
            SandboxOp::List,
            SandboxOp::List.name(),
            "List active long-lived sandbox sessions",
            object(json!({"adminToken": admin_token_schema()}), &[]),
        ),
        (
            SandboxOp::Initialize,
            SandboxOp::Initialize.name(),
            "Create a reusable container session for iterative commands and scripts",
            object(
                json!({
                    "adminToken": admin_token_schema(),
                    "image": {"type": "string", "description": "Container image (default: the first allowed image, node:lts-slim): checked and kept as the session's label; Toolsmith's sessions are folders run in bubblewrap, so it is never pulled."},
                    "timeoutMs": timeout_ms_schema()
                }),
                &[],
            ),
        ),
        (
            SandboxOp::Exec,
            SandboxOp::Exec.name(),
            "Run one or more shell commands in an active sandbox session",
            object(
                json!({
                    "adminToken": admin_token_schema(),
                    "sessionId": session_id_schema(),
                    "commands": {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1},
                        "minItems": 1,
                        "maxItems": MAX_COMMANDS,
                        "description": "Shell commands, run one after another in the session's folder."
                    },
                    "timeoutMs": timeout_ms_schema()
                }),
                &["sessionId", "commands"],
            ),
        ),
        (
            SandboxOp::RunJs,
            SandboxOp::RunJs.name(),
            "Install dependencies and run JavaScript in an existing sandbox session",
            object(
                json!({
                    "adminToken": admin_token_schema(),
                    "sessionId": session_id_schema(),
                    "code": {"type": "string", "minLength": 1, "maxLength": MAX_CODE_CHARS, "description": "An ES module, saved as the session's index.mjs and run with node."},
                    "dependencies": dependencies_schema(),
                    "timeoutMs": timeout_ms_schema()
                }),
                &["sessionId", "code"],
            ),
        ),
        (
            SandboxOp::Stop,
            SandboxOp::Stop.name(),
            "Stop and remove a sandbox session container",
            object(
                json!({"adminToken": admin_token_schema(), "sessionId": session_id_schema()}),
                &["sessionId"],
            ),
        ),
    ]
}

/// A call's arguments translated for the built-in, and what its answer needs.
pub(crate) struct Translated {
    pub args: Value,
    /// The session the call names.
    session_id: String,
    /// `sandbox.exec`: a command after the ones run was rejected by dynamic-mcp's policy.
    rejected_after: bool,
    /// `sandbox.initialize`: the image the session is for.
    image: String,
    /// The largest text answered (`MCP_SANDBOX_MAX_OUTPUT_BYTES`).
    max_output_bytes: usize,
}

/// A failure as dynamic-mcp answers one: `isError` and the message as text.
fn refusal(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

fn text(message: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(message.into())])
}

/// dynamic-mcp's `sanitizeContainerId`: `^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`.
fn valid_session_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// dynamic-mcp's `sanitizeDockerImage`: `^[a-zA-Z0-9][a-zA-Z0-9_.:/-]{0,199}$`.
fn valid_image(image: &str) -> bool {
    let mut chars = image.chars();
    image.chars().count() <= 200
        && chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-'))
}

/// dynamic-mcp's `sanitizeShellCommand`: no command substitution (a backtick or `$(`), not
/// blank.
fn allowed_command(command: &str) -> bool {
    !command.trim().is_empty() && !command.contains('`') && !command.contains("$(")
}

/// The built-in's arguments for `op`'s (already checked against the schema above), or the
/// answer refusing them.
pub(crate) fn builtin_args(
    caller: &Caller<'_>,
    op: SandboxOp,
    args: &Value,
) -> Result<Translated, CallToolResult> {
    let service = caller.service().config();
    let mut out = Map::new();
    let session_id = args
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut translated = Translated {
        args: Value::Null,
        session_id: session_id.clone(),
        rejected_after: false,
        image: String::new(),
        max_output_bytes: service.js_limits.max_output_bytes,
    };
    if matches!(op, SandboxOp::Exec | SandboxOp::RunJs | SandboxOp::Stop) {
        if !valid_session_id(&session_id) {
            return Err(refusal(format!("Invalid sandbox session id: {session_id}")));
        }
        out.insert("sessionId".to_owned(), json!(session_id));
    }
    if let Some(ms) = args.get("timeoutMs").and_then(Value::as_u64)
        && op != SandboxOp::Initialize
    {
        let applied = ms.min(SANDBOX_MAX_MS);
        out.insert(
            "timeoutSeconds".to_owned(),
            json!(applied.div_ceil(1000).max(1)),
        );
    }
    match op {
        SandboxOp::List | SandboxOp::Stop => {}
        SandboxOp::Initialize => {
            let allowed = &caller.shared().state.config.compat_sandbox_images;
            let image = match args.get("image").and_then(Value::as_str) {
                Some(image) => image.to_owned(),
                None => allowed
                    .first()
                    .cloned()
                    .unwrap_or_else(|| DEFAULT_IMAGE.to_owned()),
            };
            if !valid_image(&image) {
                return Err(refusal(format!("Invalid Docker image: {image}")));
            }
            if !allowed.is_empty() && !allowed.contains(&image) {
                return Err(refusal(format!(
                    "Docker image not allowed: {image} (the allowed images are MCP_SANDBOX_ALLOWED_IMAGES: {})",
                    allowed.join(", ")
                )));
            }
            out.insert("label".to_owned(), json!(image));
            translated.image = image;
        }
        SandboxOp::Exec => {
            let commands: Vec<&str> = args
                .get("commands")
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            // dynamic-mcp checks each command as its turn comes: the ones before a rejected
            // command run, then the call ends rejected.
            let allowed = commands.iter().take_while(|c| allowed_command(c)).count();
            if allowed == 0 {
                return Err(refusal("Command rejected by policy."));
            }
            translated.rejected_after = allowed < commands.len();
            let run: Vec<&str> = commands.into_iter().take(allowed).collect();
            out.insert("commands".to_owned(), json!(run));
        }
        SandboxOp::RunJs => {
            let dependencies = args
                .get("dependencies")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            if let Some(refused) = refuse_dependencies(caller, &dependencies) {
                return Err(refused);
            }
            let code = args.get("code").and_then(Value::as_str).unwrap_or("");
            out.insert("code".to_owned(), json!(code));
            out.insert("saveAs".to_owned(), json!(RUN_JS_FILE));
        }
    }
    translated.args = Value::Object(out);
    Ok(translated)
}

/// dynamic-mcp's checks of `sandbox.run_js`'s dependencies (count, blocked names), then
/// Toolsmith's refusal of any: a session has no network to install them from.
fn refuse_dependencies(caller: &Caller<'_>, dependencies: &[Value]) -> Option<CallToolResult> {
    if dependencies.is_empty() {
        return None;
    }
    let npm = &caller.service().config().npm;
    if dependencies.len() > npm.max_dependencies {
        return Some(refusal(format!(
            "Dependency count exceeds limit ({}).",
            npm.max_dependencies
        )));
    }
    if let Some(blocked) = dependencies
        .iter()
        .filter_map(|d| d.get("name").and_then(Value::as_str))
        .find(|name| npm.block.iter().any(|b| b == name))
    {
        return Some(refusal(format!("Blocked npm package requested: {blocked}")));
    }
    Some(refusal(
        "sandbox.run_js cannot install npm dependencies here: a Toolsmith sandbox session has no network to install them from (it is a folder run in bubblewrap, not a container). Call it without dependencies, or run code that imports npm packages with run_js_ephemeral or a dynamic tool, whose dependencies are installed when they are declared (docs/js-tools.md, \"Dependencies\").",
    ))
}

/// The answer to a call of `op` while its built-in is out of the caller's reach (its tool
/// group is disabled).
pub(crate) fn unavailable(op: SandboxOp) -> CallToolResult {
    refusal(format!(
        "{} is not available: {}",
        op.name(),
        toolsmith_builtins::groups::disabled_message(op.builtin())
    ))
}

/// The built-in's result `res` as dynamic-mcp answers `op`.
pub(crate) fn answer(op: SandboxOp, res: ToolResult, translated: Translated) -> CallToolResult {
    if res.is_error {
        return failed(op, &res, &translated);
    }
    let out = &res.content;
    match op {
        SandboxOp::List => {
            let sessions: Vec<Value> = out
                .get("sessions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|s| {
                    json!({
                        "id": s.get("sessionId").cloned().unwrap_or(Value::Null),
                        "image": s.get("label").and_then(Value::as_str).unwrap_or(DEFAULT_IMAGE),
                        "createdAt": s.get("createdAt").cloned().unwrap_or(Value::Null),
                        "lastUsedAt": s.get("lastUsedAt").cloned().unwrap_or(Value::Null),
                    })
                })
                .collect();
            let mut result = text(serde_json::to_string_pretty(&sessions).unwrap_or_default());
            result.structured_content = Some(json!({"sessions": sessions}));
            result
        }
        SandboxOp::Initialize => {
            let id = out.get("sessionId").and_then(Value::as_str).unwrap_or("");
            let idle = out
                .get("idleTimeoutSeconds")
                .and_then(Value::as_u64)
                .unwrap_or(0);
            let mut result = text(format!("Sandbox session ready: {id}"));
            result.structured_content = Some(json!({
                "sessionId": id,
                "image": translated.image,
                "timeoutMs": idle.saturating_mul(1000),
            }));
            result
        }
        SandboxOp::Exec => exec_answer(out, &translated),
        SandboxOp::RunJs => {
            let stdout = field(out, "stdout");
            let stderr = field(out, "stderr");
            if out.get("success").and_then(Value::as_bool) != Some(true) {
                return refusal(command_failed(&format!("node {RUN_JS_FILE}"), out));
            }
            let joined = if stderr.is_empty() {
                stdout.to_owned()
            } else {
                format!("{stdout}\n{stderr}")
            };
            let output = clip(joined.trim(), translated.max_output_bytes);
            if output.is_empty() {
                text("JavaScript execution completed with no output.")
            } else {
                text(output)
            }
        }
        SandboxOp::Stop => text(format!(
            "Stopped sandbox session: {}",
            translated.session_id
        )),
    }
}

fn field<'a>(out: &'a Value, key: &str) -> &'a str {
    out.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `sandbox.exec`'s text from the built-in's `results`, one entry per command run.
fn exec_answer(out: &Value, translated: &Translated) -> CallToolResult {
    let mut sections = Vec::new();
    for run in out
        .get("results")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let command = field(run, "command");
        if run.get("success").and_then(Value::as_bool) != Some(true) {
            return refusal(command_failed(&format!("/bin/sh -c {command}"), run));
        }
        let parts: Vec<&str> = [field(run, "stdout").trim(), field(run, "stderr").trim()]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect();
        let mut section = format!("$ {command}");
        for part in parts {
            section.push('\n');
            section.push_str(part);
        }
        sections.push(section);
    }
    if translated.rejected_after {
        return refusal("Command rejected by policy.");
    }
    text(clip(&sections.join("\n\n"), translated.max_output_bytes))
}

/// A failed run in the words of Node's `execFile`, which dynamic-mcp answers with:
/// `Command failed: CMD` and the run's stderr; a run killed at its time limit says so.
fn command_failed(command: &str, run: &Value) -> String {
    let mut message = format!("Command failed: {command}\n{}", field(run, "stderr"));
    if run.get("timedOut").and_then(Value::as_bool) == Some(true) {
        message.push_str(
            "\n(killed at its time limit: timeoutMs applies in whole seconds, at most 30,000 ms in a Toolsmith sandbox session; make the command faster or split it)",
        );
    }
    message
}

/// dynamic-mcp's `clipText`: at most `max` bytes of `text` (cut on a character boundary),
/// then `\n...<truncated>`.
fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let kept = text.get(..end).unwrap_or("");
    format!("{kept}\n...<truncated>")
}

/// A failure of the built-in in dynamic-mcp's words where it has words for it, else the
/// message.
fn failed(op: SandboxOp, res: &ToolResult, translated: &Translated) -> CallToolResult {
    let reason = res.content.get("reason").and_then(Value::as_str);
    match reason {
        // `docker rm -f` of a container that is not there succeeds.
        Some("session_not_found") if op == SandboxOp::Stop => text(format!(
            "Stopped sandbox session: {}",
            translated.session_id
        )),
        Some("session_not_found") => refusal(format!(
            "Sandbox session not found: {}",
            translated.session_id
        )),
        Some("session_limit") => {
            let max = res.content.get("max").and_then(Value::as_u64).unwrap_or(0);
            refusal(format!(
                "Sandbox session limit reached ({max}). (Stop one with sandbox.stop, or wait until an idle one times out: MCP_SANDBOX_SESSION_TIMEOUT_SECONDS.)"
            ))
        }
        _ => refusal(
            res.error_message()
                .map(str::to_owned)
                .unwrap_or_else(|| res.content_text()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_mcps_sanitizers() {
        for id in ["abc123", "mcp-sbx-abcdef", "my_container.name-1", "a", "1"] {
            assert!(valid_session_id(id), "{id}");
        }
        for id in [
            ".invalid",
            "-invalid",
            "_invalid",
            "abc/def",
            "abc:def",
            "abc def",
            "abc$def",
            "abc;rm -rf /",
            "",
        ] {
            assert!(!valid_session_id(id), "{id}");
        }
        for image in [
            "node:lts-slim",
            "node:22-alpine",
            "ubuntu",
            "registry.example.com/my-image:v1.0",
            "ghcr.io/org/image:latest",
        ] {
            assert!(valid_image(image), "{image}");
        }
        let long = format!("a{}", "b".repeat(200));
        assert!(!valid_image(&long));
        assert!(valid_image(&format!("a{}", "b".repeat(199))));
        for image in [
            ".invalid",
            "-invalid",
            ":invalid",
            "",
            "image name",
            "image;echo",
            "image$var",
        ] {
            assert!(!valid_image(image), "{image}");
        }
        for command in ["ls -la", "echo hello | grep h", "echo hello > output.txt"] {
            assert!(allowed_command(command), "{command}");
        }
        for command in [
            "echo `whoami`",
            "`rm -rf /`",
            "echo $(whoami)",
            "$(rm -rf /)",
            "",
            "   ",
            "\t",
        ] {
            assert!(!allowed_command(command), "{command:?}");
        }
    }

    #[test]
    fn clip_keeps_whole_characters_and_marks_the_cut() {
        assert_eq!(clip("hello", 10), "hello");
        assert_eq!(clip("héllo", 2), "h\n...<truncated>");
        assert_eq!(clip("hello", 3), "hel\n...<truncated>");
    }
}
