//! `generate_uuid`: random (version 4) UUIDs, in the standard form, without dashes or in
//! upper case.

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::{Fail, choice, opt_int};

const FORMATS: &[&str] = &["standard", "no-dashes", "uppercase"];

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
                },
                "format": {
                    "type": "string",
                    "description": "\"standard\" (default, lowercase with dashes), \"no-dashes\" or \"uppercase\".",
                    "enum": FORMATS,
                    "default": "standard"
                }
            },
            "required": [],
            "additionalProperties": false
        }),
    )
    .with_tags(&["uuid", "guid", "random", "identifier", "id", "unique", "generate"])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let count = opt_int(args, "count", 1, 1, i64::try_from(MAX_COUNT).unwrap_or(100))?;
    let format = choice(args, "format", "standard", FORMATS)?;
    let uuids: Vec<String> = (0..count)
        .map(|_| {
            let id = ::uuid::Uuid::new_v4();
            match format {
                "no-dashes" => id.simple().to_string(),
                "uppercase" => id.to_string().to_uppercase(),
                _ => id.to_string(),
            }
        })
        .collect();
    Ok(json!({ "uuids": uuids }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        let plain = run(&json!({"format": "no-dashes", "count": 3})).unwrap();
        for id in plain["uuids"].as_array().unwrap() {
            let id = id.as_str().unwrap();
            assert_eq!(id.len(), 32);
            assert_eq!(::uuid::Uuid::parse_str(id).unwrap().get_version_num(), 4);
        }
        let upper = run(&json!({"format": "uppercase"})).unwrap();
        let id = upper["uuids"][0].as_str().unwrap();
        assert_eq!(id, id.to_uppercase());
        assert_eq!(id.len(), 36);
        let err = run(&json!({"format": "braces"})).unwrap_err();
        assert_eq!(
            err.message(),
            "'format' must be one of: standard, no-dashes, uppercase"
        );
        assert_eq!(
            run(&json!({"count": 101})).unwrap_err().message(),
            "'count' must be an integer from 1 to 100"
        );
    }
}
