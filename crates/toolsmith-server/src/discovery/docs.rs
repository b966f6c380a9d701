//! A tool's parameters as text a model can read, for `get_tool_help` and for the errors of a
//! call whose arguments are wrong.
//!
//! - [`parameter_docs`] — one line per parameter (`- text (string, required): …`).
//! - [`expected_shape`] — the arguments object in one line, required names and their types
//!   (`{"text": string, "limit"?: integer}`), to show in an error.

use serde_json::Value;

/// A tool's parameters as lines a model can read:
/// `- text (string, required): The text to analyse. Default: "x".`
pub fn parameter_docs(schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "This tool takes no parameters.".to_owned();
    };
    if props.is_empty() {
        return "This tool takes no parameters.".to_owned();
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut lines = Vec::with_capacity(props.len());
    // Required parameters first, then the rest, each group in schema order.
    let ordered = props
        .iter()
        .filter(|(name, _)| required.contains(&name.as_str()))
        .chain(
            props
                .iter()
                .filter(|(name, _)| !required.contains(&name.as_str())),
        );
    for (name, prop) in ordered {
        let need = if required.contains(&name.as_str()) {
            "required"
        } else {
            "optional"
        };
        let mut line = format!("- {name} ({}, {need})", type_label(prop));
        if let Some(description) = prop.get("description").and_then(Value::as_str) {
            line.push_str(": ");
            line.push_str(description.trim());
        }
        if let Some(options) = prop.get("enum").and_then(Value::as_array) {
            let shown: Vec<String> = options.iter().map(Value::to_string).collect();
            line.push_str(&format!(" One of: {}.", shown.join(", ")));
        }
        if let Some(default) = prop.get("default") {
            line.push_str(&format!(" Default: {default}."));
        }
        let bounds: Vec<String> = [
            ("minimum", "min"),
            ("maximum", "max"),
            ("minLength", "min length"),
            ("maxLength", "max length"),
            ("minItems", "min items"),
            ("maxItems", "max items"),
        ]
        .iter()
        .filter_map(|(key, label)| prop.get(*key).map(|v| format!("{label} {v}")))
        .collect();
        if !bounds.is_empty() {
            line.push_str(&format!(" ({}).", bounds.join(", ")));
        }
        lines.push(line);
    }
    lines.join("\n")
}

fn type_label(prop: &Value) -> String {
    match prop.get("type") {
        Some(Value::String(t)) if t == "array" => match prop.get("items") {
            Some(items) if items.get("type").is_some() => format!("array of {}", type_label(items)),
            _ => "array".to_owned(),
        },
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        _ if prop.get("enum").is_some() => "enum".to_owned(),
        // `anyOf` / `oneOf` of typed schemas: each alternative (an amount is `number or string`).
        _ => match prop
            .get("anyOf")
            .or_else(|| prop.get("oneOf"))
            .and_then(Value::as_array)
        {
            Some(options) if !options.is_empty() => {
                let labels: Vec<String> = options.iter().map(type_label).collect();
                labels.join(" or ")
            }
            _ => "any".to_owned(),
        },
    }
}

/// Most characters of an [`expected_shape`]; a longer shape ends with `…`.
const MAX_SHAPE_CHARS: usize = 600;

/// The arguments object a tool expects, in one line: required names first, then optional ones
/// marked `?`, each with its type (`{"text": string, "limit"?: integer, "mode"?: "fast"|"slow"}`).
/// A schema without properties gives `{}`.
pub fn expected_shape(schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return "{}".to_owned();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let is_required = |name: &str| required.contains(&name);
    let fields: Vec<String> = props
        .iter()
        .filter(|(name, _)| is_required(name))
        .chain(props.iter().filter(|(name, _)| !is_required(name)))
        .map(|(name, prop)| {
            let mark = if is_required(name) { "" } else { "?" };
            format!("{}{mark}: {}", Value::from(name.as_str()), shape_type(prop))
        })
        .collect();
    let shape = format!("{{{}}}", fields.join(", "));
    if shape.chars().count() <= MAX_SHAPE_CHARS {
        return shape;
    }
    let cut: String = shape.chars().take(MAX_SHAPE_CHARS).collect();
    format!("{cut}…}}")
}

/// Most values of one enum a shape lists; a longer enum says how many values it has and where
/// they are all listed (every built-in's enums fit).
const MAX_SHAPE_ENUM_VALUES: usize = 40;

/// A property's type as a shape shows it: enums as all their values (a model must not guess
/// the ninth), the rest as [`type_label`].
fn shape_type(prop: &Value) -> String {
    if let Some(options) = prop.get("enum").and_then(Value::as_array) {
        let shown: Vec<String> = options
            .iter()
            .take(MAX_SHAPE_ENUM_VALUES)
            .map(Value::to_string)
            .collect();
        if options.len() > MAX_SHAPE_ENUM_VALUES {
            return format!(
                "{}|… ({} values: get_tool_help lists them all)",
                shown.join("|"),
                options.len()
            );
        }
        return shown.join("|");
    }
    type_label(prop)
}
