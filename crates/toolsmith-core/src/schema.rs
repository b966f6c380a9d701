//! Parameter schemas: the shape rule for a tool's schema, and validation of call arguments.
//!
//! Schemas are compiled once, when a tool is registered, with remote `$ref` resolution off
//! (the `jsonschema` crate is built without its network features).

use serde_json::{Map, Value, json};

use crate::model::{ErrorKind, ToolResult};

/// A compiled parameter schema, ready to validate arguments.
pub struct CompiledSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("schema", &self.schema)
            .finish()
    }
}

/// Why a parameter schema was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("parameters must be a JSON Schema object with \"type\": \"object\"")]
    NotObjectType,
    #[error("parameters.properties must be an object mapping names to schemas")]
    BadProperties,
    #[error("parameters.required must be an array of property names")]
    BadRequired,
    #[error("parameters is not a valid JSON Schema: {0}")]
    Invalid(String),
}

/// One way the arguments break the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer into the arguments (`""` is the whole object).
    pub instance_path: String,
    /// JSON pointer into the schema, naming the rule that failed.
    pub schema_path: String,
    pub message: String,
}

/// A compile error, with the fix named when it is a pattern the linear-time engine refuses.
fn pattern_hint(message: String) -> String {
    let lower = message.to_ascii_lowercase();
    if lower.contains("regex") || lower.contains("pattern") || lower.contains("look") {
        format!(
            "{message} (patterns run on a linear-time engine, the `regex` crate's: look-around \
             such as (?=…) or (?<!…) and back-references such as \\1 are not supported; \
             rewrite the pattern without them)"
        )
    } else {
        message
    }
}

impl CompiledSchema {
    /// Checks the shape rule (`type: object`, `properties`, `required`) and compiles the schema.
    pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
        // Not an object schema at all: nothing else is worth reading.
        let shape = check_shape(schema);
        if shape == Err(SchemaError::NotObjectType) {
            return Err(SchemaError::NotObjectType);
        }
        // Every problem at once, a malformed `required` or `properties` among them (the
        // meta-schema names those too, with their pointers), so a model fixes them in one go.
        let problems = meta_violations(schema);
        if !problems.is_empty() {
            return Err(SchemaError::Invalid(problems.join("; ")));
        }
        shape?;
        // Callers' `pattern`s run on the `regex` crate's linear-time engine, never on a
        // backtracking one: look-around and back-references are refused here, naming why.
        let validator = jsonschema::options()
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(schema)
            .map_err(|e| SchemaError::Invalid(pattern_hint(e.to_string())))?;
        Ok(CompiledSchema {
            schema: schema.clone(),
            validator,
        })
    }

    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// `Ok` when `args` conform; otherwise the `invalid_arguments` result every door gives for
    /// them (the one schema-violation summary): its text names each offending path (`/` for the
    /// whole object) with what is wrong there — `hint`'s fix where it has one, the validator's
    /// message otherwise — and its details hold every violation and the schema.
    pub fn check_call(
        &self,
        tool: &str,
        args: &Value,
        hint: impl Fn(&Violation) -> Option<String>,
    ) -> Result<(), ToolResult> {
        let violations = self.violations(args);
        if violations.is_empty() {
            return Ok(());
        }
        let summary: Vec<String> = violations
            .iter()
            .map(|v| {
                let at = if v.instance_path.is_empty() {
                    "/"
                } else {
                    &v.instance_path
                };
                let why = hint(v).unwrap_or_else(|| v.message.clone());
                format!("{at}: {why}")
            })
            .collect();
        Err(ToolResult::error_with(
            ErrorKind::InvalidArguments,
            format!(
                "invalid arguments for tool '{tool}': {}",
                summary.join("; ")
            ),
            violation_details(&violations, &self.schema),
        ))
    }

    /// Every violation of the schema by `args`, in document order.
    ///
    /// A message names the rule and the type of the offending value, never the value itself
    /// (`a string is not of type "integer"`): replies and logs carry these messages, and the
    /// value could be a secret the caller should not have sent (issue 12).
    pub fn violations(&self, args: &Value) -> Vec<Violation> {
        self.validator
            .iter_errors(args)
            .map(|e| Violation {
                instance_path: e.instance_path().to_string(),
                schema_path: e.schema_path().to_string(),
                message: e.masked_with(json_type(e.instance())).to_string(),
            })
            .collect()
    }
}

/// A value's JSON type with its article (`a string`, `an object`, `null`): how replies name
/// a value they do not show.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A deserialization error's message without the values it quotes: serde writes the offending
/// value into its message (`invalid type: string "sk-…", expected a boolean`), and these
/// messages reach replies. Each quoted value becomes its kind (`a string`); names of fields
/// stay, since they are what the caller must fix.
pub fn message_without_values(message: &str) -> String {
    /// What serde writes before a value, and what the value is replaced with.
    const QUOTED: [(&str, &str); 6] = [
        ("string \"", "a string"),
        ("integer `", "an integer"),
        ("floating point `", "a number"),
        ("character `", "a character"),
        ("boolean `", "a boolean"),
        ("unknown variant `", "an unknown variant"),
    ];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    'scan: while !rest.is_empty() {
        for (prefix, kind) in QUOTED {
            if let Some(after) = rest.strip_prefix(prefix) {
                let close = prefix.chars().last().unwrap_or('"');
                out.push_str(kind);
                rest = skip_quoted(after, close);
                continue 'scan;
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

/// `text` after the closing `close` of a quoted value that `text` starts inside (a `\` escapes
/// the next character); nothing when the quote never closes.
fn skip_quoted(text: &str, close: char) -> &str {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' && close == '"' {
            escaped = true;
        } else if c == close {
            return text.get(i + c.len_utf8()..).unwrap_or_default();
        }
    }
    ""
}

/// Most problems reported for one schema (a hostile schema could otherwise make a huge reply).
const MAX_SCHEMA_PROBLEMS: usize = 20;

/// Every way `schema` breaks its draft's meta-schema, each as `<JSON pointer>: <message>`
/// (the pointer is into `parameters`; `""` is the whole schema).
fn meta_violations(schema: &Value) -> Vec<String> {
    let Ok(meta) = jsonschema::meta::validator_for(schema) else {
        // An unknown `$schema`: the compiler below names it.
        return Vec::new();
    };
    let mut problems: Vec<String> = meta
        .iter_errors(schema)
        .map(|e| {
            let pointer = e.instance_path().to_string();
            let shown = if pointer.is_empty() {
                "(root)"
            } else {
                pointer.as_str()
            };
            format!("at {shown}: {e}")
        })
        .take(MAX_SCHEMA_PROBLEMS + 1)
        .collect();
    if problems.len() > MAX_SCHEMA_PROBLEMS {
        problems.truncate(MAX_SCHEMA_PROBLEMS);
        problems.push("(more problems not shown)".to_owned());
    }
    problems
}

/// The shape rule alone: an object schema whose `properties` and `required` are well formed.
pub fn check_shape(schema: &Value) -> Result<(), SchemaError> {
    let Some(obj) = schema.as_object() else {
        return Err(SchemaError::NotObjectType);
    };
    if obj.get("type") != Some(&Value::String("object".to_owned())) {
        return Err(SchemaError::NotObjectType);
    }
    if let Some(props) = obj.get("properties") {
        let Some(props) = props.as_object() else {
            return Err(SchemaError::BadProperties);
        };
        if props.values().any(|p| !(p.is_object() || p.is_boolean())) {
            return Err(SchemaError::BadProperties);
        }
    }
    if let Some(required) = obj.get("required") {
        let ok = required
            .as_array()
            .is_some_and(|r| r.iter().all(Value::is_string));
        if !ok {
            return Err(SchemaError::BadRequired);
        }
    }
    Ok(())
}

/// The details an LLM needs to fix its call: every violation and the schema itself.
pub fn violation_details(violations: &[Violation], schema: &Value) -> Map<String, Value> {
    let list: Vec<Value> = violations
        .iter()
        .map(
            |v| json!({"path": v.instance_path, "schemaPath": v.schema_path, "message": v.message}),
        )
        .collect();
    let mut details = Map::new();
    details.insert("violations".to_owned(), Value::Array(list));
    details.insert("schema".to_owned(), schema.clone());
    details
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word_schema() -> Value {
        json!({
            "type": "object",
            "properties": {"text": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["text"],
            "additionalProperties": false
        })
    }

    /// Issue 32: callers' patterns ran on a backtracking engine (fancy-regex) although no
    /// caller's pattern may; now look-around and back-references are refused at compile with
    /// the reason, and a classic catastrophic pattern is answered by the linear engine.
    #[test]
    fn patterns_run_on_the_linear_engine_and_look_around_is_refused_naming_why() {
        for pattern in ["^(?=.*[0-9]).+$", "(?<!x)y", "^(a)\\1$"] {
            let schema = json!({"type": "object", "properties": {"p": {"type": "string", "pattern": pattern}}});
            let Err(SchemaError::Invalid(message)) = CompiledSchema::compile(&schema) else {
                panic!("{pattern} compiled");
            };
            assert!(
                message.contains("linear-time engine"),
                "{pattern}: {message}"
            );
        }
        let schema = json!({"type": "object", "properties": {"p": {"type": "string", "pattern": "^(a+)+$"}}});
        let compiled = CompiledSchema::compile(&schema).unwrap();
        assert!(compiled.violations(&json!({"p": "aaaa"})).is_empty());
        let hostile = format!("{}!", "a".repeat(100_000));
        assert_eq!(compiled.violations(&json!({"p": hostile})).len(), 1);
    }

    #[test]
    fn shape_rule() {
        assert_eq!(check_shape(&json!({"type": "object"})), Ok(()));
        assert_eq!(
            check_shape(&json!({"type": "string"})),
            Err(SchemaError::NotObjectType)
        );
        assert_eq!(check_shape(&json!([])), Err(SchemaError::NotObjectType));
        assert_eq!(
            check_shape(&json!("{\"type\":\"object\"}")),
            Err(SchemaError::NotObjectType)
        );
        assert_eq!(
            check_shape(&json!({"type": "object", "properties": []})),
            Err(SchemaError::BadProperties)
        );
        assert_eq!(
            check_shape(&json!({"type": "object", "properties": {"a": 3}})),
            Err(SchemaError::BadProperties)
        );
        assert_eq!(
            check_shape(&json!({"type": "object", "required": "a"})),
            Err(SchemaError::BadRequired)
        );
    }

    #[test]
    fn invalid_keywords_are_refused() {
        let bad = json!({"type": "object", "properties": {"a": {"type": "strin"}}});
        assert!(matches!(
            CompiledSchema::compile(&bad),
            Err(SchemaError::Invalid(_))
        ));
    }

    #[test]
    fn every_schema_problem_is_named_with_its_pointer() {
        let bad = json!({"type": "object", "properties": {
            "a": {"type": "strin"},
            "b": {"minLength": -1},
        }});
        let Err(SchemaError::Invalid(message)) = CompiledSchema::compile(&bad) else {
            panic!("an invalid schema compiled");
        };
        assert!(message.contains("at /properties/a/type"), "{message}");
        assert!(message.contains("at /properties/b/minLength"), "{message}");
    }

    #[test]
    fn a_malformed_required_is_named_with_the_other_problems() {
        let bad =
            json!({"type": "object", "properties": {"a": {"type": "strng"}}, "required": "a"});
        let Err(SchemaError::Invalid(message)) = CompiledSchema::compile(&bad) else {
            panic!("an invalid schema compiled");
        };
        assert!(message.contains("at /properties/a/type"), "{message}");
        assert!(message.contains("at /required"), "{message}");
    }

    #[test]
    fn remote_refs_are_not_fetched() {
        let remote =
            json!({"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/x.json"}}});
        assert!(matches!(
            CompiledSchema::compile(&remote),
            Err(SchemaError::Invalid(_))
        ));
    }

    #[test]
    fn every_violation_has_its_pointer() {
        let compiled = CompiledSchema::compile(&word_schema()).unwrap();
        assert!(compiled.violations(&json!({"text": "hi"})).is_empty());
        let v = compiled.violations(&json!({"limit": 0, "txt": "misplaced"}));
        let mut paths: Vec<&str> = v.iter().map(|v| v.instance_path.as_str()).collect();
        paths.sort();
        assert_eq!(paths, ["", "", "/limit"], "{v:?}");
        let details = violation_details(&v, compiled.schema());
        assert_eq!(details["schema"], word_schema());
        assert_eq!(details["violations"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn violation_messages_never_show_the_value() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "code": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 4},
                "pick": {"enum": ["a", "b"]},
                "list": {"type": "array", "uniqueItems": true},
                "k": {"type": "number", "maximum": 10},
            },
        });
        let compiled = CompiledSchema::compile(&schema).unwrap();
        let secret = "sk-live-Zq8xW3secret";
        let v = compiled.violations(&json!({
            "n": secret,
            "code": secret,
            "pick": secret,
            "list": [secret, secret],
            "k": 987654321,
        }));
        assert_eq!(v.len(), 6, "{v:?}");
        for violation in &v {
            assert!(!violation.message.contains("Zq8xW3"), "{violation:?}");
            assert!(!violation.message.contains("987654321"), "{violation:?}");
        }
        let n = v.iter().find(|v| v.instance_path == "/n").unwrap();
        assert_eq!(n.message, r#"a string is not of type "integer""#);
        let k = v.iter().find(|v| v.instance_path == "/k").unwrap();
        assert_eq!(k.message, "a number is greater than the maximum of 10");
    }

    #[test]
    fn deserialization_messages_lose_their_values() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Args {
            enabled: Option<bool>,
            mode: Option<Mode>,
            count: Option<u8>,
            name: Option<String>,
        }
        #[derive(Debug, serde::Deserialize)]
        enum Mode {
            Fast,
        }
        for (args, kept) in [
            (
                json!({"enabled": "sk-live-Zq8xW3\"quoted\" more"}),
                "a string, expected a boolean",
            ),
            (
                json!({"mode": "sk-live-Zq8xW3"}),
                "an unknown variant, expected `Fast`",
            ),
            (json!({"count": 987654321}), "an integer"),
            (json!({"name": 98765.4321}), "a number, expected a string"),
            (
                json!({"enabled": 987654321}),
                "an integer, expected a boolean",
            ),
        ] {
            let e = serde_json::from_value::<Args>(args.clone()).unwrap_err();
            let message = message_without_values(&e.to_string());
            assert!(!message.contains("Zq8xW3"), "{args}: {message}");
            assert!(!message.contains("98765"), "{args}: {message}");
            assert!(message.contains(kept), "{args}: {message}");
        }
        assert_eq!(
            message_without_values("unknown field `nmae`, expected `name`"),
            "unknown field `nmae`, expected `name`"
        );
        assert_eq!(message_without_values(r#"string "unclosed"#), "a string");
    }
}
