//! What the file and web test modules both check of a call's result.

use serde_json::Value;
use toolsmith_core::{ErrorKind, ToolResult};

/// The call of `tool` with `args` succeeded; its content.
#[track_caller]
pub fn succeeded(tool: &str, args: &Value, res: ToolResult) -> Value {
    assert!(!res.is_error, "{tool} {args}: {:?}", res.content);
    res.content
}

/// The call of `tool` with `args` failed with `kind`; its message.
#[track_caller]
pub fn failed(tool: &str, args: &Value, res: &ToolResult, kind: ErrorKind) -> String {
    assert!(res.is_error, "{tool} {args}: succeeded: {:?}", res.content);
    assert_eq!(
        res.error_kind(),
        Some(kind),
        "{tool} {args}: {:?}",
        res.content
    );
    res.error_message().unwrap_or_default().to_owned()
}
