//! 2025-11-25's tasks (that revision's experimental form), served beside the extension of
//! [`super::tasks`] on the same tool tasks. A client of that generation (the TypeScript SDK
//! 1.x's `client.experimental.tasks`) reads the server's `capabilities.tasks`, a tool's
//! `execution.taskSupport`, asks with a `task` field in the `tools/call` params
//! (`{"task": {"ttl": ms}}`), and reads tasks in that revision's shape (`ttl`, `pollInterval`,
//! a `CreateTaskResult` of `{task}`, `tasks/cancel` answering the task,
//! `notifications/tasks/status`).
//!
//! rmcp 3.11 carries none of these (its types drop the `task` field and have no
//! `capabilities.tasks` nor `execution`), so they are handled at the edges of a 2025-11-25
//! session, both transports alike:
//! - **in**: [`rename`] gives `tools/list`, `tasks/get`, `tasks/cancel` and a `tools/call` with
//!   a `task` field a method of Toolsmith's own ([`PREFIX`] + the method), which rmcp hands to
//!   the handler's `on_custom_request` with the params as sent; [`answer`] serves them there;
//! - **out**: [`declare_tasks`] adds `capabilities.tasks` to the `initialize` answer.
//!
//! A session of protocol 2026-07-28 is left alone (no rename, no capability): it has the
//! extension only. Compat mode declares nothing (its calls never become tasks).

use std::sync::Arc;

use axum::body::Bytes;
use rmcp::RoleServer;
use rmcp::model::{ErrorData, GetTaskResult};
use rmcp::service::RequestContext;
use serde_json::{Map, Value, json};

/// The prefix of the methods [`rename`] gives: `toolsmith/2025-11-25/tools/list` …
pub(crate) const PREFIX: &str = "toolsmith/2025-11-25/";

/// The newest protocol whose sessions get 2025-11-25's tasks.
const LAST_VERSION: &str = "2025-11-25";

/// Whether a session of `version` (absent: the oldest, as streamable HTTP says) takes
/// 2025-11-25's tasks. ISO dates compare as text.
pub(crate) fn takes(version: Option<&str>) -> bool {
    version.is_none_or(|v| v <= LAST_VERSION)
}

/// `body` with its method renamed when it is one 2025-11-25 serves differently (see the
/// module); `None` leaves it as it is. `method` is the body's, already read
/// ([`super::body::method`]). Costs a plain call only a scan of its bytes for `"task"`.
pub(crate) fn rename(method: Option<&str>, body: &[u8]) -> Option<Vec<u8>> {
    let method = method?;
    let renamed = match method {
        "tools/list" | "tasks/get" | "tasks/cancel" => true,
        "tools/call" => contains(body, b"\"task\""),
        _ => false,
    };
    if !renamed {
        return None;
    }
    let mut message: Map<String, Value> = serde_json::from_slice(body).ok()?;
    if method == "tools/call"
        && !message
            .get("params")
            .and_then(|p| p.get("task"))
            .is_some_and(Value::is_object)
    {
        return None;
    }
    message.insert(
        "method".to_owned(),
        Value::String(format!("{PREFIX}{method}")),
    );
    serde_json::to_vec(&message).ok()
}

/// Whether `needle` occurs in `haystack`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// The server's `capabilities.tasks` of 2025-11-25: tasks listed, cancelled, and made of
/// `tools/call`.
fn capability() -> Value {
    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
}

/// Adds `capabilities.tasks` to an `initialize` answer (a JSON-RPC message) whose protocol
/// takes 2025-11-25's tasks; whether it changed anything.
pub(crate) fn declare_tasks(message: &mut Value) -> bool {
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return false;
    };
    if !takes(result.get("protocolVersion").and_then(Value::as_str)) {
        return false;
    }
    let Some(capabilities) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    else {
        return false;
    };
    capabilities.insert("tasks".to_owned(), capability());
    true
}

/// An `initialize` answer as streamable HTTP sent it (`application/json`, or an SSE stream
/// of `data:` lines), with `capabilities.tasks` added; `None` when nothing changed.
pub(crate) fn declare_tasks_in_body(body: &[u8]) -> Option<Bytes> {
    if let Ok(mut message) = serde_json::from_slice::<Value>(body) {
        return declare_tasks(&mut message)
            .then(|| serde_json::to_vec(&message).ok().map(Bytes::from))
            .flatten();
    }
    let text = std::str::from_utf8(body).ok()?;
    let mut changed = false;
    let mut out = String::with_capacity(text.len() + 96);
    for line in text.split_inclusive('\n') {
        let (content, end) = match line.strip_suffix('\n') {
            Some(content) => (content, "\n"),
            None => (line, ""),
        };
        if let Some(data) = content.strip_prefix("data:")
            && let Ok(mut message) = serde_json::from_str::<Value>(data.trim_start())
            && declare_tasks(&mut message)
        {
            changed = true;
            out.push_str("data: ");
            out.push_str(&message.to_string());
            out.push_str(end);
            continue;
        }
        out.push_str(line);
    }
    changed.then(|| Bytes::from(out))
}

/// A tool of `tools/list` as 2025-11-25 lists a tool that may run as a task.
pub(crate) fn with_task_support(tool: &mut Value) {
    if let Some(tool) = tool.as_object_mut() {
        tool.insert("execution".to_owned(), json!({"taskSupport": "optional"}));
    }
}

/// The `ttl` a 2025-11-25 `tools/call` asks for (`params.task.ttl`, milliseconds).
pub(crate) fn asked_ttl(params: Option<&Value>) -> Result<Option<u64>, ErrorData> {
    match params
        .and_then(|p| p.get("task"))
        .and_then(|t| t.get("ttl"))
    {
        None | Some(Value::Null) => Ok(None),
        Some(ttl) => ttl.as_u64().map(Some).ok_or_else(|| {
            ErrorData::invalid_params(
                format!("task.ttl must be a whole number of milliseconds, not {ttl}"),
                None,
            )
        }),
    }
}

/// A `GetTaskResult` of the extension as JSON, for a session that declared the extension but
/// had its `tasks/get` renamed (its protocol is 2025-11-25).
pub(crate) fn extension_answer(result: GetTaskResult) -> Result<Value, ErrorData> {
    serde_json::to_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// Whether the client of `context` declared the tasks extension (then it reads the
/// extension's shapes even on a 2025-11-25 session).
pub(crate) fn takes_extension(context: &RequestContext<RoleServer>) -> bool {
    super::tasks::client_takes_tasks(context)
}

/// The standard-input side of a stdio session: a copy of stdin whose lines [`rename`] has
/// seen, and a copy of stdout whose `initialize` answer [`declare_tasks`] has seen. Returns
/// what the server reads and writes, and the task that copies its output to stdout (await it
/// after the session ended, so its last answers are written).
pub(crate) fn stdio(
    compat: bool,
) -> (
    tokio::io::DuplexStream,
    tokio::io::DuplexStream,
    tokio::task::JoinHandle<()>,
) {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    const BUFFER: usize = 1 << 16;
    let (server_in, mut to_server) = tokio::io::duplex(BUFFER);
    let (server_out, from_server) = tokio::io::duplex(BUFFER);
    // Whether the session's protocol takes 2025-11-25's tasks, once `initialize` said so.
    let legacy = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let legacy_in = legacy.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let method = super::body::method(&line);
            if !compat && method.as_deref() == Some("initialize") {
                let version = serde_json::from_slice::<Value>(&line).ok().and_then(|m| {
                    m.get("params")?
                        .get("protocolVersion")?
                        .as_str()
                        .map(str::to_owned)
                });
                legacy_in.store(
                    takes(Some(version.as_deref().unwrap_or(LAST_VERSION))),
                    std::sync::atomic::Ordering::SeqCst,
                );
            }
            let renamed = if legacy_in.load(std::sync::atomic::Ordering::SeqCst) {
                rename(method.as_deref(), &line).map(|mut renamed| {
                    renamed.push(b'\n');
                    renamed
                })
            } else {
                None
            };
            let written = to_server
                .write_all(renamed.as_deref().unwrap_or(&line))
                .await;
            if written.is_err() {
                break;
            }
        }
        let _ = to_server.shutdown().await;
    });
    let output = tokio::spawn(async move {
        let mut lines = BufReader::new(from_server);
        let mut stdout = tokio::io::stdout();
        let mut line = Vec::new();
        // Only the first answer can be `initialize`'s.
        let mut initialized = compat;
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let mut declared = None;
            if !initialized && contains(&line, b"\"serverInfo\"") {
                initialized = true;
                if legacy.load(std::sync::atomic::Ordering::SeqCst)
                    && let Ok(mut message) = serde_json::from_slice::<Value>(&line)
                    && declare_tasks(&mut message)
                    && let Ok(mut bytes) = serde_json::to_vec(&message)
                {
                    bytes.push(b'\n');
                    declared = Some(bytes);
                }
            }
            if stdout
                .write_all(declared.as_deref().unwrap_or(&line))
                .await
                .is_err()
                || stdout.flush().await.is_err()
            {
                break;
            }
        }
    });
    (server_in, server_out, output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_methods_2025_serves_differently_are_renamed() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"task":1}}}"#;
        assert_eq!(rename(Some("tools/call"), call), None);
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{"ttl":5}}}"#;
        let renamed: Value =
            serde_json::from_slice(&rename(Some("tools/call"), call).unwrap()).unwrap();
        assert_eq!(renamed["method"], "toolsmith/2025-11-25/tools/call");
        assert_eq!(renamed["params"]["task"]["ttl"], 5);
        let list = br#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        assert!(rename(Some("tools/list"), list).is_some());
        assert_eq!(rename(Some("ping"), br#"{"method":"ping"}"#), None);
    }

    #[test]
    fn the_capability_is_declared_to_a_2025_11_25_session_only() {
        let mut old =
            json!({"id": 0, "result": {"protocolVersion": "2025-06-18", "capabilities": {}}});
        assert!(declare_tasks(&mut old));
        assert_eq!(old["result"]["capabilities"]["tasks"], capability());
        let mut new =
            json!({"id": 0, "result": {"protocolVersion": "2026-07-28", "capabilities": {}}});
        assert!(!declare_tasks(&mut new));
        let sse = b"event: message\ndata: {\"id\":0,\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}\n\n";
        let out = declare_tasks_in_body(sse).unwrap();
        let text = std::str::from_utf8(&out).unwrap();
        assert!(text.starts_with("event: message\ndata: {"), "{text}");
        assert!(text.contains("\"tasks\""), "{text}");
        assert!(text.ends_with("\n\n"), "{text}");
    }
}
