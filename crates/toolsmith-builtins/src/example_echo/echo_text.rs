//! `echo_text`: answers with the text it was given.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use crate::utilities::{Fail, MAX_TEXT_BYTES, text_arg};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "echo_text",
        "Answer with the text given, unchanged.",
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "The text to answer with (at most 1 MB)."}
            },
            "required": ["text"],
            "additionalProperties": false
        }),
    )
    .with_tags(&["echo", "repeat", "example"])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let text = text_arg(args, "text", MAX_TEXT_BYTES)?;
    Ok(json!({ "echo": text }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_and_names_a_missing_argument() {
        assert_eq!(run(&json!({"text": "hi"})), Ok(json!({"echo": "hi"})));
        assert!(matches!(run(&json!({})), Err(Fail::Args(_))));
    }
}
