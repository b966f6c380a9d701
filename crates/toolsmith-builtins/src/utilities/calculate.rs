//! `calculate`: evaluates an arithmetic expression with the parser in [`super::calc`].

use serde_json::{Value, json};
use toolsmith_core::ToolDefinition;

use super::calc;
use super::{Fail, str_arg};

pub fn definition() -> ToolDefinition {
    ToolDefinition::new(
        "calculate",
        "Evaluate an arithmetic expression exactly as written and return the numeric result. \
         Supports + - * / % (remainder) ^ (power, right-associative), percentages \
         (\"15% of 250\"), unary minus, parentheses, the constants pi and e, and the functions sqrt, abs, sin, cos, tan, asin, acos, atan \
         (radians), ln, log (base 10), log2, exp, floor, ceil, round, min(a, b, ...), max(...).",
        json!({
            "type": "object",
            "properties": {
                "expression": {
                    "type": "string",
                    "description": "The expression, e.g. \"(2 + 3) * sqrt(16) / 2^3\". At most 1000 characters.",
                    "minLength": 1,
                    "maxLength": calc::MAX_LEN
                }
            },
            "required": ["expression"],
            "additionalProperties": false
        }),
    )
    .with_tags(&[
        "math", "arithmetic", "expression", "calculator", "compute", "calculate", "percent",
        "formula", "sqrt", "percentage",
    ])
}

pub fn run(args: &Value) -> Result<Value, Fail> {
    let expression = str_arg(args, "expression")?;
    let result =
        calc::evaluate(expression).map_err(|e| Fail::Run(format!("cannot evaluate: {e}")))?;
    Ok(json!({"expression": expression, "result": result}))
}
