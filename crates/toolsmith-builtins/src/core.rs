//! The utilities (003 category 24): small, pure tools with no permissions and no I/O.
//!
//! Each tool is one module exposing `definition()` (what the LLM sees) and `run(args)` (the
//! work, as a plain function); [`builtin`] turns the pair into a [`RegisteredTool`] whose
//! provider is the tool's group in [`crate::groups`].

pub mod calc;
pub mod calculate;
pub mod datetime;
pub mod encode;
pub mod hash;
pub mod uuid;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use toolsmith_core::{
    ErrorKind, PermissionSet, RegisteredTool, ToolContext, ToolDefinition, ToolExecutor,
    ToolOrigin, ToolResult,
};

/// The category every tool of this family carries.
pub const CATEGORY: &str = "Utilities";

/// The work of a pure built-in: validated arguments in, content or an error message out.
pub type ToolFn = fn(&Value) -> Result<Value, String>;

/// Runs a [`ToolFn`]; an `Err` becomes an `execution_error` result.
struct FnExecutor(ToolFn);

#[async_trait]
impl ToolExecutor for FnExecutor {
    async fn execute(&self, args: Value, _ctx: &ToolContext) -> ToolResult {
        match (self.0)(&args) {
            Ok(content) => ToolResult::ok(content),
            Err(message) => ToolResult::error(ErrorKind::ExecutionError, message),
        }
    }
}

/// A built-in tool of this family: category `Utilities`, its group as provider, no permissions.
pub fn builtin(definition: ToolDefinition, run: ToolFn) -> RegisteredTool {
    let name = definition.name.clone();
    RegisteredTool::new(
        definition.with_category(CATEGORY),
        ToolOrigin::BuiltIn {
            provider: crate::groups::provider_of(&name).to_owned(),
        },
        PermissionSet::new(),
        Arc::new(FnExecutor(run)),
    )
    // The schemas are constants of this crate and covered by its tests.
    .unwrap_or_else(|e| panic!("built-in tool '{name}' has an invalid schema: {e}"))
}

/// Every tool of the family, ready to register.
pub fn tools() -> Vec<RegisteredTool> {
    vec![
        builtin(datetime::definition(), datetime::run),
        builtin(calculate::definition(), calculate::run),
        builtin(uuid::definition(), uuid::run),
        builtin(hash::definition(), hash::run),
        builtin(encode::definition(), encode::run),
    ]
}

/// The string argument `key`. The schema has already checked it; a missing one is still an
/// error, never a panic.
pub(crate) fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, String> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("'{key}' must be a string"))
}

/// The optional string argument `key`, or `default`.
pub(crate) fn opt_str_arg<'a>(args: &'a Value, key: &str, default: &'a str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or(default)
}
