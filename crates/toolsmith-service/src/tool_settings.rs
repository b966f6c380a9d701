//! Settings a tool keeps in its `metadata` object, checked on every write and read by the
//! executor: `title` (a display name, shown as the MCP tool's `title`), `timeoutMs` (the
//! wall-clock limit of one run of a JS tool, dynamic-mcp's field) and `image` (dynamic-mcp's
//! container image: kept, but not applicable — tools run in the embedded sandbox, never in a
//! container).

use std::time::Duration;

use serde_json::Value;

use crate::ServiceError;

/// The longest `timeoutMs` a tool may ask for (dynamic-mcp's `MCP_SANDBOX_MAX_TIMEOUT_MS`
/// default, 120 s).
pub const MAX_TIMEOUT_MS: u64 = 120_000;
/// The longest `title`, in characters.
const MAX_TITLE_CHARS: usize = 200;
/// The longest `image`, in characters.
const MAX_IMAGE_CHARS: usize = 256;

/// What result metadata says of a tool's `image`.
pub const IMAGE_NOT_APPLICABLE: &str = "not applicable: Toolsmith runs tools in its embedded QuickJS sandbox, not in containers; the image is kept but never pulled or run";

/// Refuses settings that cannot be honoured (a `timeoutMs` out of 1..=120000, a title that is
/// not a short string).
pub(crate) fn check(metadata: &Value) -> Result<(), ServiceError> {
    if let Some(timeout) = metadata.get("timeoutMs") {
        match timeout.as_u64() {
            Some(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => {}
            _ => {
                return Err(ServiceError::Validation(format!(
                    "timeoutMs must be a whole number of milliseconds from 1 to {MAX_TIMEOUT_MS}, got {timeout}"
                )));
            }
        }
    }
    check_short_string(metadata, "title", MAX_TITLE_CHARS)?;
    check_short_string(metadata, "image", MAX_IMAGE_CHARS)
}

fn check_short_string(metadata: &Value, key: &str, max: usize) -> Result<(), ServiceError> {
    match metadata.get(key) {
        None | Some(Value::Null) => Ok(()),
        Some(Value::String(text)) if text.chars().count() <= max => Ok(()),
        Some(_) => Err(ServiceError::Validation(format!(
            "{key} must be a string of at most {max} characters"
        ))),
    }
}

/// The tool's own wall-clock limit (`timeoutMs`), if it set one.
pub fn timeout(metadata: &Value) -> Option<Duration> {
    metadata
        .get("timeoutMs")
        .and_then(Value::as_u64)
        .filter(|ms| (1..=MAX_TIMEOUT_MS).contains(ms))
        .map(Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn timeouts_within_the_bounds_are_kept() {
        assert_eq!(
            timeout(&json!({"timeoutMs": 10000})),
            Some(Duration::from_secs(10))
        );
        assert_eq!(timeout(&json!({})), None);
        assert!(
            check(&json!({"timeoutMs": 120000, "title": "Upper", "image": "node:lts-slim"}))
                .is_ok()
        );
        for bad in [
            json!({"timeoutMs": 0}),
            json!({"timeoutMs": 120001}),
            json!({"timeoutMs": "10s"}),
            json!({"title": 3}),
        ] {
            assert!(check(&bad).is_err(), "{bad}");
        }
    }
}
