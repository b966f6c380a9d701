//! One upstream tool as a catalogue tool: its definition under the server's prefix, and the
//! executor that forwards a call to the upstream and turns its answer into a [`ToolResult`]:
//! content blocks, structured content, the tool's annotations and output schema pass through
//! unchanged.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::Peer;
use serde_json::Value;
use tokio::sync::Notify;
use toolsmith_core::{
    ContentForm, ErrorKind, Permission, PermissionSet, RegisteredTool, ToolContext, ToolDefinition,
    ToolExecutor, ToolOrigin, ToolResult,
};
use toolsmith_scrub::Scrubber;

use super::status::Counters;

/// The catalogue tool for `tool` of server `server`, named `prefix + tool.name`.
///
/// Bridged tools hold `network` (they reach outside the process), so a JS tool calls one only
/// with that permission, and `execution_approval = "dangerous"` covers them. MCP's annotations
/// decide the rest: a tool not marked read-only and not marked non-destructive (MCP's default
/// is destructive) gets `requires_confirmation`; one marked `destructiveHint: true` also waits
/// for a person under the default approval setting, as a model-written tool does.
///
/// The upstream chooses the name and the description, so both are checked like a custom
/// tool's: the catalogue name must follow the naming rule (`^[a-z][a-z0-9_]*$`, or the wide
/// `^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$`: no empty, newline or HTML names) and may not be one of
/// Toolsmith's own MCP tools (`create_tool`, `search_tools` … — reachable by REST too, where a
/// server with an empty prefix could otherwise answer for them); a description longer than
/// [`MAX_DESCRIPTION_CHARS`] is cut. A refused tool is skipped with the reason in the status.
pub(crate) fn registered(prefix: &str, tool: &Tool, link: &Link) -> Result<RegisteredTool, String> {
    let server = link.server.as_str();
    let name = format!("{prefix}{}", tool.name);
    toolsmith_core::name::validate_name(&name, toolsmith_core::name::NameRule::Wide)
        .map_err(|e| format!("its name is not usable: {e}"))?;
    if toolsmith_core::name::is_reserved(&name) {
        return Err(format!(
            "'{name}' is the name of one of Toolsmith's own MCP tools; give the server a prefix (prefix = \"mcp_{}_\" is the default)",
            server.replace('-', "_")
        ));
    }
    let described = tool
        .description
        .as_deref()
        .unwrap_or("(the upstream server gives no description)");
    let description: String = if described.chars().count() > MAX_DESCRIPTION_CHARS {
        described
            .chars()
            .take(MAX_DESCRIPTION_CHARS)
            .chain("… (cut)".chars())
            .collect()
    } else {
        described.to_owned()
    };
    let mut definition = ToolDefinition::new(
        name.clone(),
        format!("{description} [bridged from MCP server '{server}']"),
        Value::Object((*tool.input_schema).clone()),
    )
    .with_category(format!("mcp:{server}"));
    definition.title = tool.title.clone();
    definition.tags = vec!["mcp".to_owned(), server.to_owned()];
    // Listed as the upstream wrote them: its output schema (whose structured content the
    // upstream answers with) and its annotations.
    definition.output_schema = tool
        .output_schema
        .as_ref()
        .map(|schema| Value::Object((**schema).clone()))
        // One that does not compile is left out (the tool stays usable, its results unchecked).
        .filter(|schema| toolsmith_core::schema::CompiledSchema::compile(schema).is_ok());
    definition.annotations = tool
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok());
    let hints = tool.annotations.as_ref();
    let read_only = hints.and_then(|a| a.read_only_hint) == Some(true);
    let destructive = hints.and_then(|a| a.destructive_hint);
    definition.requires_confirmation = !read_only && destructive != Some(false);
    let executor = BridgedExecutor {
        remote_name: tool.name.to_string(),
        tool_name: name.clone(),
        link: link.clone(),
    };
    RegisteredTool::new(
        definition,
        ToolOrigin::Mcp {
            server: server.to_owned(),
            tool: tool.name.to_string(),
        },
        PermissionSet::from([Permission::Network]),
        Arc::new(executor),
    )
    .map(|t| t.with_requires_approval(!read_only && destructive == Some(true)))
    .map_err(|e| format!("its input schema is not usable: {e}"))
}

/// The longest description kept of an upstream tool, in characters (a custom tool's limit,
/// `max_description_chars`, is 4000 by default).
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 4000;

/// What every tool of one connection shares.
#[derive(Clone)]
pub(crate) struct Link {
    pub(crate) server: String,
    pub(crate) peer: Peer<RoleClient>,
    /// The server's `call_timeout_seconds`.
    pub(crate) timeout: Duration,
    pub(crate) counters: Arc<Counters>,
    /// Woken when a call fails below the tool (the connection, the protocol): the connection
    /// task checks the upstream at once instead of at its next health check, so a dead or
    /// restarted upstream is reconnected and re-listed within seconds.
    pub(crate) recheck: Arc<Notify>,
    /// The secrets the server was given (its Config Center references' values): redacted from
    /// every answer here, whoever calls, before the pipeline scrubs the caller's own.
    pub(crate) scrubber: Option<Arc<Scrubber>>,
    /// The calls in flight, whose callers answer the upstream's requests ([`super::relay`]).
    pub(crate) relay: Arc<super::relay::Relay>,
}

struct BridgedExecutor {
    remote_name: String,
    /// The tool's catalogue name (the server's prefix and the remote name).
    tool_name: String,
    link: Link,
}

#[async_trait]
impl ToolExecutor for BridgedExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let link = &self.link;
        link.counters.calls.fetch_add(1, Ordering::Relaxed);
        let mut params = CallToolRequestParams::new(self.remote_name.clone());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let limit = match ctx.deadline {
            Some(deadline) => link
                .timeout
                .min(deadline.saturating_duration_since(std::time::Instant::now())),
            None => link.timeout,
        };
        let call = link
            .relay
            .call(&link.peer, params, ctx, &self.tool_name, limit);
        let mut result = match tokio::time::timeout(limit, call).await {
            Ok(Ok(result)) => into_tool_result(result),
            Ok(Err(e)) => {
                link.recheck.notify_one();
                ToolResult::error(
                    ErrorKind::ExecutionError,
                    format!(
                        "the MCP server '{}' failed the call of '{}': {e}",
                        link.server, self.remote_name
                    ),
                )
            }
            Err(_) => ToolResult::error(
                ErrorKind::Timeout,
                format!(
                    "the MCP server '{}' did not answer '{}' within {:.0} s (its call_timeout_seconds)",
                    link.server,
                    self.remote_name,
                    limit.as_secs_f64()
                ),
            ),
        };
        if result.is_error {
            link.counters.errors.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(scrubber) = &link.scrubber {
            match result.form {
                ContentForm::Blocks => scrubber.scrub_blocks(&mut result.content),
                ContentForm::Json => scrubber.scrub_json(&mut result.content),
            };
        }
        result
    }
}

/// The upstream's answer as Toolsmith content. An answer of anything but plain text blocks
/// (an image, audio, a resource or a link to one, annotations or `_meta` on a block or on the
/// result) passes through unchanged, as a result of content blocks with its structured content
/// (`toolsmith_core::content`), so an MCP client receives what the upstream sent. A plain-text
/// answer reads as before: its structured content when it gives one; else its text (parsed as
/// JSON when it is JSON), or the list of its texts.
fn into_tool_result(result: CallToolResult) -> ToolResult {
    if !is_plain_text(&result) {
        let failed = result.is_error == Some(true);
        let blocks = result
            .content
            .iter()
            .filter_map(|block| serde_json::to_value(block).ok())
            .collect();
        let meta = result
            .meta
            .as_ref()
            .and_then(|m| serde_json::to_value(m).ok())
            .and_then(|m| match m {
                Value::Object(map) if !map.is_empty() => Some(map),
                _ => None,
            });
        match ToolResult::blocks(blocks, result.structured_content.clone(), meta, failed) {
            Ok(passed) => return passed,
            Err(e) => tracing::warn!(
                error = %e,
                "an upstream's content blocks do not pass the check; sent as JSON"
            ),
        }
    }
    into_json_result(result)
}

/// Whether the answer is text blocks alone, without annotations or `_meta` (on a block or on
/// the result): what reads the same as one JSON value.
fn is_plain_text(result: &CallToolResult) -> bool {
    let result_meta = result.meta.as_ref().is_some_and(|m| !m.0.is_empty());
    !result_meta
        && result.content.iter().all(|block| {
            block
                .as_text()
                .is_some_and(|t| t.meta.is_none() && t.annotations.is_none())
        })
}

fn into_json_result(result: CallToolResult) -> ToolResult {
    let texts: Vec<String> = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.clone()))
        .collect();
    let failed = result.is_error == Some(true);
    if failed {
        let message = if texts.is_empty() {
            "the upstream tool reported an error without a message".to_owned()
        } else {
            texts.join("\n")
        };
        return ToolResult::error(ErrorKind::ExecutionError, message);
    }
    let all_text = texts.len() == result.content.len();
    let content = match (result.structured_content, texts.as_slice()) {
        (Some(structured), _) => structured,
        (None, [text]) if all_text => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
        (None, _) if all_text => Value::Array(texts.into_iter().map(Value::String).collect()),
        (None, _) => serde_json::to_value(&result.content).unwrap_or(Value::Null),
    };
    ToolResult::ok(content)
}
