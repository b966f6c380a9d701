//! The HTTP tool definition (spec 004 §3.1): the types a YAML or JSON file deserializes into.
//!
//! Nothing here checks meaning; `validate` does. Unknown fields are refused at parse time so a
//! typo (`respone_template`) is an error rather than a silently ignored key.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Default endpoint timeout when a definition gives none, in seconds.
pub const DEFAULT_TIMEOUT_SECS: f64 = 10.0;
/// Longest endpoint timeout a definition may ask for, in seconds (spec 004 §3.4).
pub const MAX_TIMEOUT_SECS: f64 = 30.0;

/// One declarative HTTP tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpToolDefinition {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Phrases that suggest the tool (case-insensitive substring match on a user message).
    #[serde(default)]
    pub triggers: Vec<String>,
    #[serde(default)]
    pub parameters: Vec<HttpParam>,
    pub endpoint: Endpoint,
    /// Output field name -> dot path into the JSON response (`data.items[0].name`).
    #[serde(default)]
    pub response_mapping: BTreeMap<String, String>,
    /// Jinja template rendered over the mapped fields and the parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_template: Option<String>,
    #[serde(default)]
    pub error_handling: ErrorHandling,
}

/// One parameter of a tool and where its value comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpParam {
    pub name: String,
    #[serde(rename = "type", default)]
    pub param_type: ParamType,
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub source: ParamSource,
}

/// The JSON type of a parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    #[default]
    String,
    Integer,
    Number,
    Boolean,
    Object,
    Array,
}

impl ParamType {
    /// The JSON Schema `type` keyword for this type.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
            Self::Object => "object",
            Self::Array => "array",
        }
    }

    /// Whether `value` is of this type (an integer is also a number).
    pub fn accepts(self, value: &serde_json::Value) -> bool {
        use serde_json::Value as V;
        match self {
            Self::String => value.is_string(),
            Self::Integer => value.is_i64() || value.is_u64(),
            Self::Number => value.is_number(),
            Self::Boolean => value.is_boolean(),
            Self::Object => matches!(value, V::Object(_)),
            Self::Array => matches!(value, V::Array(_)),
        }
    }
}

/// Where a parameter's value comes from (spec 004 §3.5).
///
/// Only `explicit` parameters are shown to the model; the others are filled by the server from
/// the call's context, and the model cannot override them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamSource {
    /// Extracted from the conversation (for example an email the customer typed).
    Conversation,
    /// From the customer profile.
    Customer,
    /// From the owner's configuration (Config Center).
    Store,
    /// Provided by the model or user as a tool argument.
    #[default]
    Explicit,
    /// From the page or product context.
    Context,
}

impl ParamSource {
    /// The source's name as written in definitions.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Conversation => "conversation",
            Self::Customer => "customer",
            Self::Store => "store",
            Self::Explicit => "explicit",
            Self::Context => "context",
        }
    }
}

/// The request a tool makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// URL template: `{{param}}` and `{{store.key}}` placeholders.
    pub url: String,
    #[serde(default)]
    pub method: Method,
    /// Header name -> value template.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A structured body (object or array whose string leaves are templates) or a JSON text
    /// template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
    /// Seconds; default [`DEFAULT_TIMEOUT_SECS`], at most [`MAX_TIMEOUT_SECS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
}

impl Endpoint {
    /// The effective timeout in seconds (the default when none is given).
    pub fn timeout_secs(&self) -> f64 {
        self.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS)
    }
}

/// HTTP methods a tool may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    #[default]
    #[serde(alias = "get")]
    Get,
    #[serde(alias = "post")]
    Post,
    #[serde(alias = "put")]
    Put,
    #[serde(alias = "patch")]
    Patch,
    #[serde(alias = "delete")]
    Delete,
}

impl Method {
    /// The method as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

/// Messages returned to the model when the call fails; each has a generic default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorHandling {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_found: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unauthorized: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limited: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalid_response: Option<String>,
}
