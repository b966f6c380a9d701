//! The JSON Schema the model sees: only the `explicit` parameters.

use serde_json::{Map, Value, json};

use crate::definition::{HttpToolDefinition, ParamSource};

/// JSON Schema (draft 2020-12 compatible) of the explicit parameters of `def`.
///
/// A parameter is listed as required when it is required and has no default; no other
/// properties are accepted, so the model cannot pass context-filled values.
pub fn parameters_schema(def: &HttpToolDefinition) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for param in def
        .parameters
        .iter()
        .filter(|p| p.source == ParamSource::Explicit)
    {
        let mut prop = Map::new();
        prop.insert("type".into(), json!(param.param_type.as_str()));
        if let Some(description) = &param.description {
            prop.insert("description".into(), json!(description));
        }
        if let Some(default) = &param.default {
            prop.insert("default".into(), default.clone());
        }
        properties.insert(param.name.clone(), Value::Object(prop));
        if param.required && param.default.is_none() {
            required.push(json!(param.name));
        }
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}
