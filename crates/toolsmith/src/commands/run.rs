//! `toolsmith run` (a tool through the whole pipeline) and `toolsmith run-code` (code once in
//! the sandbox, stored nowhere).
//!
//! Arguments and code come from files or stdin as well as the command line, so their size is
//! never bounded by the operating system's argument limit.
//!
//! `toolsmith run` is a person at a terminal naming the tool and its arguments: a call that
//! needs a human's approval is approved by that person, once (recorded like any decision).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{
    ApprovalAnswer, ApprovalPrompt, ApprovalQuestion, Approver, ErrorKind, ToolContext, ToolResult,
    ToolStatus,
};
use toolsmith_service::{RunCode, RunRights, ToolRef};

use super::Ctx;
use crate::cli::{RunArgs, RunCodeArgs};
use crate::exit::{self, CliError, SUCCESS};
use crate::{input, output};

/// How long `run` of a bridged tool waits for its server to connect and list its tools (the
/// bridge's own handshake limit is 30 s).
const MCP_CONNECT_WAIT_SECONDS: u64 = 35;

pub async fn run_tool(ctx: &Ctx, args: RunArgs) -> anyhow::Result<u8> {
    let call_args = input::read_args(args.call.args.as_deref(), args.call.args_file.as_deref())?;
    let mut tool_ctx = ToolContext::new(ctx.actor.user_id.clone());
    tool_ctx.approver = Some(Approver(Arc::new(PersonAtTheTerminal)));
    // The CLI is the local operator: MCP grants do not bind it.
    tool_ctx.admin = true;
    // No MCP client to log to or ask: sampling and elicitation say where they work.
    tool_ctx.client = Some(toolsmith_core::Client::absent(toolsmith_core::Door::Cli));
    // A bridged tool: connect only its server, and wait (bounded) until it is connected and
    // its tools listed, or down with the reason.
    let servers = ctx.service.mcp_servers_of_tool(&args.name);
    if !servers.is_empty() {
        ctx.service.connect_mcp_servers(Some(&servers));
        super::mcp_servers::settle_servers(ctx, Some(&servers), MCP_CONNECT_WAIT_SECONDS).await;
    }
    let result = ctx.service.execute(&args.name, call_args, tool_ctx).await;
    let hint = if result.error_kind() == Some(ErrorKind::NotFound) {
        match bridged_hint(ctx, &servers) {
            Some(hint) => Some(hint),
            None => not_active_hint(ctx, &args.name).await,
        }
    } else {
        None
    };
    report(ctx, &result, hint.as_deref())
}

pub async fn run_code(ctx: &Ctx, args: RunCodeArgs) -> anyhow::Result<u8> {
    let (inline, file) = (args.call.args.as_deref(), args.call.args_file.as_deref());
    if input::is_stdin(&args.file) && input::args_use_stdin(inline, file) {
        return Err(CliError::Input(
            "the code and the arguments cannot both come from stdin; put one of them in a file"
                .to_owned(),
        )
        .into());
    }
    let code = input::read_text(&args.file, "code file")?;
    let call_args = input::read_args(inline, file)?;
    let run = RunCode {
        code,
        args: Some(call_args),
        permissions: args.permissions,
        timeout_ms: None,
        dependencies: Vec::new(),
    };
    // The local operator: may read the Config Center and create tools, so asks no one; the
    // code still runs as a call through the pipeline (policy, limits, usage, audit).
    let rights = RunRights {
        read_secrets: true,
        create_tools: true,
    };
    let mut tool_ctx = ToolContext::new(ctx.actor.user_id.clone());
    tool_ctx.approver = Some(Approver(Arc::new(PersonAtTheTerminal)));
    // The CLI is the local operator: MCP grants do not bind it.
    tool_ctx.admin = true;
    // No MCP client to log to or ask: sampling and elicitation say where they work.
    tool_ctx.client = Some(toolsmith_core::Client::absent(toolsmith_core::Door::Cli));
    let result = ctx
        .service
        .run_ephemeral(&ctx.actor, run, tool_ctx, rights)
        .await;
    report(ctx, &result, None)
}

/// Why a bridged tool is not there: its server is not connected (with the reason), or it is
/// and does not offer the tool.
fn bridged_hint(ctx: &Ctx, servers: &[String]) -> Option<String> {
    let hints: Vec<String> = servers
        .iter()
        .filter_map(|name| ctx.service.mcp_server(name).ok())
        .map(|s| match (&s.state, &s.last_error) {
            (toolsmith_service::bridge::ServerState::Connected, _) => format!(
                "MCP server '{}' is connected but does not offer this tool (`toolsmith mcp-servers show {}` lists its tools and the ones skipped)",
                s.name, s.name
            ),
            (state, error) => format!(
                "MCP server '{}' is not connected ({}){}",
                s.name,
                serde_json::to_value(state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                error.as_deref().map(|e| format!(": {e}")).unwrap_or_default()
            ),
        })
        .collect();
    (!hints.is_empty()).then(|| hints.join("; "))
}

/// Why a tool the registry does not know may still exist: it is stored but not active.
async fn not_active_hint(ctx: &Ctx, name: &str) -> Option<String> {
    let tool = ctx
        .service
        .get(&ctx.actor, &ToolRef::Name(name.to_owned()))
        .await
        .ok()?;
    let hint = match tool.status {
        ToolStatus::Active => return None,
        ToolStatus::Disabled => {
            format!(
                "tool '{name}' is disabled; enable it with `toolsmith {} tool enable {name}`",
                ctx.store_option
            )
        }
        ToolStatus::PendingApproval => format!(
            "tool '{name}' is waiting for approval; approve it with `toolsmith {} tool approve {name}`",
            ctx.store_option
        ),
        ToolStatus::Rejected => format!("tool '{name}' was rejected"),
    };
    Some(hint)
}

/// Prints a result and returns its exit code.
///
/// `--json`: the whole result on stdout. Otherwise: the content on stdout (strings raw, other
/// values as pretty JSON), console lines on stderr, and for a failure one `error: …` line on
/// stderr instead of the content.
fn report(ctx: &Ctx, result: &ToolResult, hint: Option<&str>) -> anyhow::Result<u8> {
    let console =
        output::console_lines(&result.metadata.console, result.metadata.console_truncated);
    if !ctx.json {
        output::stderr(&console);
    }
    if result.is_error {
        let line = match hint {
            Some(hint) => format!("{} ({hint})", error_line(result)),
            None => error_line(result),
        };
        output::stderr(&format!("error: {line}\n"));
    }
    if ctx.json {
        output::json(result)?;
    } else if !result.is_error {
        let mut text = match &result.content {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => output::pretty(other),
        };
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        output::stdout(&text)?;
    }
    Ok(if result.is_error {
        exit::of_tool_error(result.error_kind())
    } else {
        SUCCESS
    })
}

/// The error message on one line (schema violations are already part of it).
fn error_line(result: &ToolResult) -> String {
    let line = result
        .error_message()
        .map_or_else(|| result.content_text(), str::to_owned);
    // A withheld result: the run to check instead of running the tool again.
    let line = match result.content.get("executionId").and_then(Value::as_str) {
        Some(id) => format!("{line} (execution {id})"),
        None => line,
    };
    line.replace('\n', " ")
}

/// The person who typed `toolsmith run`: they asked for exactly this call, so they allow it once.
struct PersonAtTheTerminal;

#[async_trait]
impl ApprovalPrompt for PersonAtTheTerminal {
    async fn ask(&self, _question: &ApprovalQuestion) -> Option<ApprovalAnswer> {
        Some(ApprovalAnswer::AllowOnce)
    }
}
