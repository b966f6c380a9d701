//! Reading a definition from YAML or JSON text, with the input-size limit.
//!
//! YAML alias expansion ("billion laughs") is bounded by `serde_norway`, which stops a document
//! whose aliases replay more than a fixed multiple of its own events; the size limit here bounds
//! everything else. Meaning is checked afterwards by `validate`.

use crate::definition::HttpToolDefinition;

/// Largest definition accepted, in bytes.
pub const MAX_DEFINITION_BYTES: usize = 256 * 1024;

/// Why a definition could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    #[error("definition is {len} bytes, over the limit of {max}")]
    TooLarge { len: usize, max: usize },
    #[error("invalid YAML definition: {0}")]
    Yaml(String),
    #[error("invalid JSON definition: {0}")]
    Json(String),
}

impl ParseError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::TooLarge { .. } => "definition_too_large",
            Self::Yaml(_) => "invalid_yaml",
            Self::Json(_) => "invalid_json",
        }
    }
}

/// Parses a YAML definition.
pub fn parse_yaml(src: &str) -> Result<HttpToolDefinition, ParseError> {
    check_size(src)?;
    serde_norway::from_str(src).map_err(|e| ParseError::Yaml(e.to_string()))
}

/// Parses a JSON definition (the same structure as the YAML).
pub fn parse_json(src: &str) -> Result<HttpToolDefinition, ParseError> {
    check_size(src)?;
    serde_json::from_str(src).map_err(|e| ParseError::Json(e.to_string()))
}

/// Parses YAML or JSON: text whose first non-blank character is `{` is read as JSON.
pub fn parse_any(src: &str) -> Result<HttpToolDefinition, ParseError> {
    if src.trim_start().starts_with('{') {
        parse_json(src)
    } else {
        parse_yaml(src)
    }
}

fn check_size(src: &str) -> Result<(), ParseError> {
    if src.len() > MAX_DEFINITION_BYTES {
        return Err(ParseError::TooLarge {
            len: src.len(),
            max: MAX_DEFINITION_BYTES,
        });
    }
    Ok(())
}
