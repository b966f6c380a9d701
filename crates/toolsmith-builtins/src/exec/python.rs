//! `execute_python`: Python code run by the host's `python3` (`/usr/bin/python3`, seen
//! read-only) inside the command sandbox, in the caller's workspace. Python is not bundled:
//! it is whatever the host has (`scripts/install-test-deps.sh` installs it when absent).

use serde_json::{Value, json};
use toolsmith_command::RunRequest;
use toolsmith_core::{ToolContext, ToolDefinition};

use super::shell::working_dir;
use super::{Deps, ExecError, code_arg, program_missing, run_in, timeout_arg, timeout_schema};

/// Most command-line arguments passed to the script.
pub const MAX_ARGS: usize = 64;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "execute_python",
        "Execute Python 3 code in a sandbox with your workspace as its folder (/tmp/work, \
         read-write): the host's python3 and its standard library, packages installed with \
         package_manager (pip), no network, at most 30 seconds. Print what you want back. \
         Returns success, exitCode, stdout, stderr, timedOut, truncated, durationMs.",
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The Python source, e.g. \"import math\\nprint(math.pi)\"."},
                "args": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_ARGS, "description": "Command-line arguments (sys.argv[1:])."},
                "cwd": {"type": "string", "default": ".", "description": "An existing folder of your workspace to run in."},
                "timeoutSeconds": timeout_schema()
            },
            "required": ["code"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["python", "py", "python3", "script", "run", "execute", "code", "program", "pandas", "numpy", "calculate", "data", "analysis", "snippet"])
}

pub(crate) async fn run(deps: &Deps, args: &Value, ctx: &ToolContext) -> Result<Value, ExecError> {
    let code = code_arg(args, "code", "the Python source to run")?;
    let extra: Vec<&str> = match args.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.len() <= MAX_ARGS => items
            .iter()
            .map(|item| {
                item.as_str().filter(|s| !s.contains('\0')).ok_or_else(|| {
                    ExecError::Args("'args' must be a list of strings without NUL bytes".into())
                })
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return Err(ExecError::Args(format!(
                "'args' must be a list of at most {MAX_ARGS} strings"
            )));
        }
    };
    let timeout = timeout_arg(args, ctx)?;
    let ws = deps.workspace(ctx)?;
    let cwd = working_dir(&ws, args)?;
    let mut argv = vec!["python3", "-c", code];
    argv.extend(extra);
    let mut request = RunRequest::argv(&argv);
    request.working_dir = cwd.as_deref();
    request.timeout = timeout;
    let out = run_in(deps, &ws, request).await?;
    if program_missing(&out) {
        return Err(ExecError::Unavailable(
            "python3 is not installed on this host (Python comes from the host's /usr/bin); \
             install it (apt-get install python3, or scripts/install-test-deps.sh)"
                .into(),
        ));
    }
    Ok(out)
}
