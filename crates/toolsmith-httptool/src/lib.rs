//! Declarative HTTP tools (spec 004): a YAML or JSON file describes one HTTP call, and this
//! crate parses it, validates it, renders it safely, sends it through a sender the host
//! supplies, and turns the answer into text for the model.
//!
//! The crate depends on no other Toolsmith crate and does no network I/O of its own: the host
//! passes an [`HttpSender`] (in Toolsmith, one backed by the egress guard) and a
//! [`ConfigLookup`] for `store.*` values (the Config Center).
//!
//! Flow of a call: [`resolve_arguments`] (explicit arguments from the model, everything else
//! from the [`CallContext`]) → [`prepare_request`] (encoding per position, credentials only in
//! headers) → [`HttpSender::send`] → status mapped to the definition's `error_handling` → the
//! JSON response mapped by [`path`]s (the JSON-path grammar `format_json` shares) → the Jinja
//! `response_template` rendered with a fuel limit.
//! [`execute`] does all of it.
//!
//! Registration: [`load_definition`] (or [`parse_yaml`]/[`parse_json`] +
//! [`validate_definition`]), then [`validate_security`], and [`parameters_schema`] for the schema
//! the model sees.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod context;
mod definition;
mod error;
mod execute;
mod parse;
pub mod path;
mod placeholder;
mod render;
mod schema;
mod sender;
mod template;
mod triggers;
mod validate;

pub use context::{CallContext, ConfigLookup, ResolvedArgs, resolve_arguments};
pub use definition::{
    DEFAULT_TIMEOUT_SECS, Endpoint, ErrorHandling, HttpParam, HttpToolDefinition, MAX_TIMEOUT_SECS,
    Method, ParamSource, ParamType,
};
pub use error::{HttpErrorKind, HttpToolError};
pub use execute::{HttpToolOutput, SecurityRules, execute};
pub use parse::{MAX_DEFINITION_BYTES, ParseError, parse_any, parse_json, parse_yaml};
pub use render::{MAX_BODY_BYTES, MAX_RESPONSE_BYTES, MAX_URL_LEN, prepare_request};
pub use schema::parameters_schema;
pub use sender::{HttpSender, PreparedRequest, SendError, SenderResponse};
pub use template::{
    MAX_TEMPLATE_OUTPUT, MAX_TEMPLATE_SOURCE, TEMPLATE_FUEL, TemplateError, compile_template,
    render_template,
};
pub use triggers::{TriggerMatch, matches_triggers, rank_by_triggers};
pub use validate::{
    EndpointReport, LoadError, Violation, config_keys, load_definition, validate_definition,
    validate_endpoint, validate_security,
};

#[cfg(test)]
mod tests;
