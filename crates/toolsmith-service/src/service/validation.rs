//! The checks and normalisations of a tool's fields that do not depend on its kind: name,
//! description, code size, parameters, metadata, category and tags.

use serde_json::{Map, Value};
use toolsmith_core::schema::CompiledSchema;
use toolsmith_sandbox::{CodeError, check_code};

use super::ToolService;
use crate::error::ServiceError;

impl ToolService {
    /// Refuses the names of built-in tools and of Toolsmith's own MCP tools.
    pub(crate) fn check_name_not_taken_by_toolsmith(&self, name: &str) -> Result<(), ServiceError> {
        if self.registry.is_builtin_name(name) {
            return Err(builtin_name_taken(name));
        }
        if toolsmith_core::name::is_reserved(name) {
            return Err(ServiceError::NameTaken(format!(
                "'{name}' is reserved: it is the name of one of Toolsmith's own MCP tools (names starting with '{}' are reserved too); choose another name",
                toolsmith_core::name::RESERVED_PREFIX
            )));
        }
        Ok(())
    }

    pub(crate) fn check_description(&self, description: &str) -> Result<(), ServiceError> {
        if description.trim().is_empty() {
            return Err(ServiceError::Validation(
                "description must not be empty".to_owned(),
            ));
        }
        let n_chars = description.chars().count();
        if n_chars > self.config.max_description_chars {
            return Err(ServiceError::TooLarge(format!(
                "description is {n_chars} characters long, over the limit of {}",
                self.config.max_description_chars
            )));
        }
        Ok(())
    }

    pub(crate) fn check_js_code(&self, code: &str) -> Result<(), ServiceError> {
        check_code(code, self.config.max_code_bytes).map_err(|e| match e {
            CodeError::TooLarge { .. } => ServiceError::TooLarge(e.to_string()),
            _ => ServiceError::Validation(e.to_string()),
        })
    }
}

pub(crate) fn builtin_name_taken(name: &str) -> ServiceError {
    let group = toolsmith_builtins::groups::group_of(name)
        .map(|g| {
            format!(
                " (of tool group '{}', reserved even while the group is disabled)",
                g.id
            )
        })
        .unwrap_or_default();
    ServiceError::NameTaken(format!(
        "'{name}' is the name of a built-in tool{group}; choose another name"
    ))
}

/// Accepts a schema object or a JSON string holding one, and checks the shape rule.
pub(crate) fn normalize_parameters(parameters: Value) -> Result<Value, ServiceError> {
    let parameters = match parameters {
        Value::String(text) => serde_json::from_str::<Value>(&text).map_err(|e| {
            ServiceError::Validation(format!("parameters is a string but not valid JSON: {e}"))
        })?,
        it => it,
    };
    CompiledSchema::compile(&parameters).map_err(|e| ServiceError::Validation(e.to_string()))?;
    Ok(parameters)
}

pub(crate) fn normalize_metadata(metadata: Option<Value>) -> Result<Value, ServiceError> {
    match metadata {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(it @ Value::Object(_)) => {
            crate::tool_settings::check(&it)?;
            check_output_schema(&it)?;
            crate::execution::kinds::check_annotations(&it)?;
            Ok(it)
        }
        Some(_) => Err(ServiceError::Validation(
            "metadata must be a JSON object".to_owned(),
        )),
    }
}

/// The metadata key of a tool's declared output schema.
pub(crate) const OUTPUT_SCHEMA: &str = "outputSchema";

/// A declared `outputSchema` (kept in the metadata) must be a JSON Schema of an object that
/// compiles, as `parameters` must.
pub(crate) fn check_output_schema(metadata: &Value) -> Result<(), ServiceError> {
    let Some(schema) = metadata.get(OUTPUT_SCHEMA) else {
        return Ok(());
    };
    CompiledSchema::compile(schema).map(drop).map_err(|e| {
        ServiceError::Validation(format!(
            "outputSchema is not usable: {}",
            e.to_string().replacen("parameters", "outputSchema", 1)
        ))
    })
}

pub(crate) fn normalize_category(category: Option<String>) -> Option<String> {
    category
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
}

pub(crate) fn normalize_tags(tags: Vec<String>) -> Result<Vec<String>, ServiceError> {
    const MAX_TAGS: usize = 32;
    const MAX_TAG_CHARS: usize = 64;
    if tags.len() > MAX_TAGS {
        return Err(ServiceError::Validation(format!(
            "a tool may have at most {MAX_TAGS} tags, got {}",
            tags.len()
        )));
    }
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let tag = tag.trim().to_owned();
        if tag.is_empty() {
            continue;
        }
        if tag.chars().count() > MAX_TAG_CHARS {
            return Err(ServiceError::Validation(format!(
                "tag '{}…' is longer than {MAX_TAG_CHARS} characters",
                tag.chars().take(16).collect::<String>()
            )));
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    Ok(out)
}
