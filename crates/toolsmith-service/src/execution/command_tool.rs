//! Runs stored command tools (kind `command`): render the template with the call's arguments
//! (each value shell-quoted, in one pass), screen the rendered command with the deny patterns,
//! and run it in the OS sandbox (`toolsmith-command`).
//!
//! The sandbox is probed once per process, on first use ([`CommandRuntime`]); if it cannot be
//! set up on this host, every command tool answers with the probe's reason. There is no
//! fallback to running a command unsandboxed.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use tokio::sync::OnceCell;
use toolsmith_command::{
    CommandOutput, CommandSandbox, CommandToolSpec, RunRequest, Template, check_denied,
};
use toolsmith_core::{ErrorKind, ToolContext, ToolExecutor, ToolResult};

/// The command sandbox of this process, probed on first use.
#[derive(Debug, Default)]
pub struct CommandRuntime {
    sandbox: OnceCell<Result<Arc<CommandSandbox>, String>>,
}

impl CommandRuntime {
    /// The sandbox, or why command tools cannot run on this host.
    pub async fn sandbox(&self) -> Result<Arc<CommandSandbox>, String> {
        self.sandbox
            .get_or_init(|| async {
                match CommandSandbox::probe().await {
                    Ok(sandbox) => Ok(Arc::new(sandbox)),
                    Err(why) => {
                        tracing::warn!(reason = %why, "command tools are unavailable on this host");
                        Err(why.reason)
                    }
                }
            })
            .await
            .clone()
    }
}

/// The git tools run git in the same sandbox, probed once for both.
#[async_trait]
impl toolsmith_builtins::git::SandboxSource for CommandRuntime {
    async fn sandbox(&self) -> Result<Arc<CommandSandbox>, String> {
        CommandRuntime::sandbox(self).await
    }
}

/// Runs one command tool.
pub struct CommandToolExecutor {
    pub(crate) runtime: Arc<CommandRuntime>,
    pub(crate) tool_name: String,
    pub(crate) spec: CommandToolSpec,
    pub(crate) template: Template,
}

#[async_trait]
impl ToolExecutor for CommandToolExecutor {
    async fn execute(&self, args: Value, ctx: &ToolContext) -> ToolResult {
        let empty = Map::new();
        let args = args.as_object().unwrap_or(&empty);
        let rendered = match self.template.render(args) {
            Ok(rendered) => rendered,
            Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e.to_string()),
        };
        if let Err(denied) = check_denied(&rendered) {
            return ToolResult::error(
                ErrorKind::Denied,
                format!("tool '{}' was refused: {denied}", self.tool_name),
            );
        }
        let sandbox = match self.runtime.sandbox().await {
            Ok(sandbox) => sandbox,
            Err(why) => {
                return ToolResult::error(
                    ErrorKind::ExecutionError,
                    format!("command tools are unavailable on this host: {why}"),
                );
            }
        };
        let mut request = RunRequest::for_spec(&self.spec, &rendered);
        if let Some(deadline) = ctx.deadline {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            request.timeout = request
                .timeout
                .min(left.max(std::time::Duration::from_millis(1)));
        }
        let run = sandbox.run(&request);
        let output = tokio::select! {
            output = run => output,
            () = ctx.cancellation.cancelled() => {
                return ToolResult::error(ErrorKind::Cancelled, "the call was cancelled");
            }
        };
        match output {
            Ok(mut output) => {
                // The tool's own env values are secrets: whatever the command prints of them
                // is redacted here (the pipeline's scrubber knows only Config Center values).
                let secrets: Vec<String> = self.spec.env.values().cloned().collect();
                if !secrets.is_empty()
                    && let Ok(scrubber) = toolsmith_scrub::Scrubber::new(secrets)
                {
                    output.stdout = scrubber.scrub_str(&output.stdout).into_owned();
                    output.stderr = scrubber.scrub_str(&output.stderr).into_owned();
                }
                result_of(&self.tool_name, output)
            }
            Err(e) => ToolResult::error(
                ErrorKind::ExecutionError,
                format!("tool '{}' could not run: {e}", self.tool_name),
            ),
        }
    }
}

/// `{exitCode, signal?, stdout, stderr, …}`; an error result when the command timed out or did
/// not exit with 0, with the same fields in its details so nothing the command said is lost.
fn result_of(tool: &str, output: CommandOutput) -> ToolResult {
    let mut details = Map::new();
    details.insert("exitCode".into(), json!(output.exit_code));
    details.insert("stdout".into(), json!(output.stdout));
    details.insert("stderr".into(), json!(output.stderr));
    details.insert("timedOut".into(), json!(output.timed_out));
    details.insert(
        "durationMs".into(),
        json!(output.duration.as_secs_f64() * 1000.0),
    );
    if let Some(signal) = output.signal {
        details.insert("signal".into(), json!(signal));
    }
    if output.stdout_truncated {
        details.insert("stdoutTruncated".into(), json!(true));
    }
    if output.stderr_truncated {
        details.insert("stderrTruncated".into(), json!(true));
    }
    let content = Value::Object(details.clone());
    if output.timed_out {
        return ToolResult::error_with(
            ErrorKind::Timeout,
            format!("tool '{tool}' ran out of time and was killed"),
            details,
        );
    }
    if output.exit_code != Some(0) {
        let code = output
            .exit_code
            .map_or_else(|| "no exit code".to_owned(), |c| format!("exit code {c}"));
        return ToolResult::error_with(
            ErrorKind::ExecutionError,
            format!("tool '{tool}' failed with {code}"),
            details,
        );
    }
    ToolResult::ok(content)
}
