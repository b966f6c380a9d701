//! `execute_javascript`: JavaScript run once in the QuickJS sandbox, through the server
//! ([`super::CodeHost::run_js`]): the same engine, limits, checks and scrubbing as any JS tool,
//! with no permissions (no `fetch`, no files). No Node.js APIs: `require` and `process` do not
//! exist; the code is the body of an async function whose `return` value is the result.

use serde_json::{Map, Value, json};
use toolsmith_core::{ErrorKind, ToolContext, ToolDefinition, ToolResult};

use super::{Deps, ExecError, code_arg, timeout_arg, timeout_schema, unavailable};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "execute_javascript",
        "Execute JavaScript code in the QuickJS sandbox (ES2023, no Node.js APIs, no network, \
         no files): the code is the body of an async function; `return` a JSON value and it \
         is the result. `args` is available as the variable args; console.log output is kept. \
         At most 30 seconds.",
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "The function body, e.g. \"return args.items.map(x => x * 2)\"."},
                "args": {"type": "object", "description": "A JSON object the code sees as `args`."},
                "timeoutSeconds": timeout_schema()
            },
            "required": ["code"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["javascript", "js", "node", "nodejs", "ecmascript", "script", "run", "execute", "code", "evaluate", "eval", "snippet", "function"])
}

pub(crate) async fn run(deps: &Deps, args: Value, ctx: &ToolContext) -> ToolResult {
    let fail = |e: ExecError| ToolResult::error(ErrorKind::InvalidArguments, e.to_string());
    let code = match code_arg(&args, "code", "the JavaScript function body to run") {
        Ok(code) => code,
        Err(e) => return fail(e),
    };
    let js_args = match args.get("args") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(value @ Value::Object(_)) => value.clone(),
        Some(_) => {
            return fail(ExecError::Args(
                "'args' must be a JSON object, e.g. {\"n\": 3}".into(),
            ));
        }
    };
    let timeout = match timeout_arg(&args, ctx) {
        Ok(timeout) => timeout,
        Err(e) => return fail(e),
    };
    let Some(host) = deps.host.as_ref() else {
        let e = unavailable("this server has no JavaScript sandbox configured");
        return ToolResult::error(ErrorKind::ExecutionError, e.to_string());
    };
    host.run_js(code, js_args, ctx, timeout).await
}
