//! Parameter resolution: explicit arguments from the model, everything else from the call's
//! context (spec 004 §3.5).
//!
//! The model can only set `explicit` parameters; passing a value for a context-filled parameter
//! (say `customer_email`) is refused, so a model cannot look up another customer's account.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::definition::{HttpParam, HttpToolDefinition, ParamSource, ParamType};
use crate::error::{HttpErrorKind, HttpToolError};

/// The owner's configuration values (`store.*`), for example backed by the Config Center.
pub trait ConfigLookup: Send + Sync {
    /// The value of `key` (without the `store.` prefix), if configured.
    fn get(&self, key: &str) -> Option<String>;
}

/// A fixed map of config values (tests, CLI, or a snapshot taken by the host).
impl ConfigLookup for BTreeMap<String, String> {
    fn get(&self, key: &str) -> Option<String> {
        BTreeMap::get(self, key).cloned()
    }
}

/// Where non-explicit parameters are filled from.
pub struct CallContext<'a> {
    pub customer: Map<String, Value>,
    pub conversation: Map<String, Value>,
    pub store: &'a dyn ConfigLookup,
    pub context: Map<String, Value>,
}

impl<'a> CallContext<'a> {
    /// An empty context over the owner's config values.
    pub fn new(store: &'a dyn ConfigLookup) -> Self {
        Self {
            customer: Map::new(),
            conversation: Map::new(),
            store,
            context: Map::new(),
        }
    }

    /// The context object a caller sends with a call (REST body `context`, MCP `_meta`):
    /// `{"customer": {…}, "conversation": {…}, "context": {…}}`, each optional.
    ///
    /// A `store` key from the caller is ignored: config values come only from `store` (the
    /// owner's Config Center), or a caller could point a tool at another host.
    pub fn from_caller(
        caller: Option<&Value>,
        store: &'a dyn ConfigLookup,
    ) -> Result<Self, HttpToolError> {
        let mut res = Self::new(store);
        let Some(caller) = caller.filter(|v| !v.is_null()) else {
            return Ok(res);
        };
        let Value::Object(fields) = caller else {
            return Err(invalid(
                "the call's context must be a JSON object".to_owned(),
            ));
        };
        for (key, slot) in [
            ("customer", &mut res.customer),
            ("conversation", &mut res.conversation),
            ("context", &mut res.context),
        ] {
            match fields.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Object(map)) => slot.clone_from(map),
                Some(_) => {
                    return Err(invalid(format!(
                        "the call's context.{key} must be a JSON object"
                    )));
                }
            }
        }
        Ok(res)
    }
}

/// Parameter values after resolution: every parameter that has a value, by name.
pub type ResolvedArgs = Map<String, Value>;

/// Fills every parameter from its source; applies defaults; checks types.
pub fn resolve_arguments(
    def: &HttpToolDefinition,
    args: &Map<String, Value>,
    ctx: &CallContext<'_>,
) -> Result<ResolvedArgs, HttpToolError> {
    for key in args.keys() {
        match def.parameters.iter().find(|p| &p.name == key) {
            None => {
                return Err(invalid(format!("unknown argument '{}'", short(key))));
            }
            Some(p) if p.source != ParamSource::Explicit => {
                return Err(invalid(format!(
                    "argument '{key}' is filled from the {} context and cannot be passed explicitly",
                    p.source.as_str()
                )));
            }
            Some(_) => {}
        }
    }
    let mut res = Map::new();
    for param in &def.parameters {
        let found = match param.source {
            ParamSource::Explicit => args.get(&param.name).cloned(),
            ParamSource::Conversation => ctx.conversation.get(&param.name).cloned(),
            ParamSource::Context => ctx.context.get(&param.name).cloned(),
            ParamSource::Customer => customer_value(&ctx.customer, &param.name),
            ParamSource::Store => match ctx.store.get(&param.name) {
                Some(text) => Some(coerce_config(param, text)?),
                None => None,
            },
        };
        let value = match found.filter(|v| !v.is_null()) {
            Some(v) => v,
            None => match &param.default {
                Some(default) => default.clone(),
                None if param.required => return Err(missing(param)),
                None => continue,
            },
        };
        if !param.param_type.accepts(&value) {
            return Err(invalid(format!(
                "parameter '{}' must be of type {}, got {}",
                param.name,
                param.param_type.as_str(),
                json_type(&value)
            )));
        }
        res.insert(param.name.clone(), value);
    }
    Ok(res)
}

/// A customer field by the parameter's name, or without a `customer_` prefix
/// (`customer_measurements` reads `customer.measurements` when the former is absent).
fn customer_value(customer: &Map<String, Value>, name: &str) -> Option<Value> {
    customer
        .get(name)
        .or_else(|| name.strip_prefix("customer_").and_then(|n| customer.get(n)))
        .cloned()
}

/// Config values are text; a parameter of another type is parsed from it.
fn coerce_config(param: &HttpParam, text: String) -> Result<Value, HttpToolError> {
    if param.param_type == ParamType::String {
        return Ok(Value::String(text));
    }
    serde_json::from_str(&text).map_err(|_| {
        invalid(format!(
            "config value for parameter '{}' is not a valid {}",
            param.name,
            param.param_type.as_str()
        ))
    })
}

fn missing(param: &HttpParam) -> HttpToolError {
    let name = &param.name;
    let place = match param.source {
        ParamSource::Explicit => format!("the call's arguments have no '{name}'"),
        ParamSource::Store => format!("the owner's configuration has no store.{name}"),
        source => format!("the call's context has no {}.{name}", source.as_str()),
    };
    HttpToolError::new(
        HttpErrorKind::MissingParameter,
        format!(
            "required parameter '{name}' (source: {}) has no value: {place}",
            param.source.as_str()
        ),
    )
}

fn invalid(message: String) -> HttpToolError {
    HttpToolError::new(HttpErrorKind::InvalidArguments, message)
}

fn short(text: &str) -> String {
    text.chars().take(64).collect()
}

pub(crate) fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
