//! `execute_shell`: one `/bin/sh -c` command in the command sandbox, in the caller's
//! workspace (mounted read-write at `/tmp/work`), after the deny patterns.

use serde_json::{Value, json};
use toolsmith_command::RunRequest;
use toolsmith_core::{ToolContext, ToolDefinition};

use super::{Deps, ExecError, check_command, code_arg, run_in, timeout_arg, timeout_schema};
use crate::workspace::{EntryKind, Workspace};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "execute_shell",
        "Execute a shell command (/bin/sh) in a sandbox with your workspace as its folder \
         (/tmp/work, read-write) and nothing else of the host: no network, at most 30 seconds, \
         output capped. Host tools in /usr/bin are available (ls, grep, sed, python3, git …). \
         Dangerous commands (rm -rf /, shutdown, fork bombs …) are refused. Returns success, \
         exitCode, stdout, stderr, timedOut, truncated, durationMs.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command line, run as /bin/sh -c COMMAND, e.g. \"ls -la && wc -l *.txt\"."},
                "cwd": {"type": "string", "default": ".", "description": "An existing folder of your workspace to run in (relative, e.g. \"src\")."},
                "timeoutSeconds": timeout_schema()
            },
            "required": ["command"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["shell", "bash", "sh", "command", "terminal", "run", "execute", "script", "cli", "console", "exec", "commandline", "unix", "linux"])
}

pub(crate) async fn run(deps: &Deps, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let command = code_arg(args, "command", "the shell command to run, e.g. \"ls -la\"")?;
    check_command(command)?;
    let timeout = timeout_arg(args, ctx)?;
    let ws = deps.workspace(ctx)?;
    let cwd = working_dir(&ws, args)?;
    let mut request = RunRequest::shell(command);
    request.working_dir = cwd.as_deref();
    request.timeout = timeout;
    run_in(deps, &ws, request).await
}

/// The `cwd` argument as the sandbox's working dir: `None` for the root, else an existing
/// folder of the workspace of plain names.
pub(crate) fn working_dir(ws: &Workspace, args: &Value) -> Result<Option<String>, ExecError> {
    let Some(raw) = args.get("cwd").and_then(Value::as_str) else {
        return Ok(None);
    };
    let path = ws.path(raw)?;
    if path.is_root() {
        return Ok(None);
    }
    if ws.stat(&path)?.kind != EntryKind::Directory {
        return Err(ExecError::Args(format!(
            "'cwd' must be a folder of your workspace; '{path}' is not one (create it with create_folder)"
        )));
    }
    let shown = path.to_string();
    let plain = shown.split('/').all(|part| {
        part.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    });
    if !plain {
        return Err(ExecError::Args(format!(
            "'cwd' '{shown}' has characters the sandbox does not take in a folder name; use \
             letters, digits, '.', '_' and '-', or run `cd 'name' && …` in the command"
        )));
    }
    Ok(Some(shown))
}
