//! `generate_uuid`: random (version 4) UUIDs.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

/// Most UUIDs one call may ask for.
pub const MAX_COUNT: u64 = 100;

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "generate_uuid",
        "Generate random version-4 UUIDs.",
        json!({
            "type": "object",
            "properties": {
                "count": {
                    "type": "integer",
                    "description": "How many UUIDs to generate (1 to 100, default 1).",
                    "minimum": 1,
                    "maximum": MAX_COUNT,
                    "default": 1
                }
            },
            "required": [],
            "additionalProperties": false
        }),
    )
    .with_tags(&["uuid", "guid", "random", "identifier", "id"])
}

pub fn run(args: &Value) -> Result<Value, String> {
    let count = match args.get("count") {
        None => 1,
        Some(v) => v
            .as_u64()
            .filter(|n| (1..=MAX_COUNT).contains(n))
            .ok_or_else(|| format!("'count' must be an integer from 1 to {MAX_COUNT}"))?,
    };
    let uuids: Vec<String> = (0..count)
        .map(|_| ::uuid::Uuid::new_v4().to_string())
        .collect();
    Ok(json!({ "uuids": uuids }))
}
