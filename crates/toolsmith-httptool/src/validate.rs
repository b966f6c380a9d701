//! The validation service (spec 004 §3.1): structure, security, and an optional live probe.
//!
//! Checks return every violation found, each with a path into the definition
//! (`parameters[1].name`, `endpoint.headers.Authorization`) and a stable code, so an editor or
//! an import command can show them all at once.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::context::{CallContext, ConfigLookup};
use crate::definition::{HttpToolDefinition, MAX_TIMEOUT_SECS, Method, ParamType};
use crate::error::HttpToolError;
use crate::execute::{HttpToolOutput, SecurityRules, execute_inner};
use crate::parse::{ParseError, parse_any};
use crate::placeholder::{self, Piece, Ref, is_identifier, is_secret_like};
use crate::render::{FORBIDDEN_HEADERS, is_header_name, prepare_request, ref_is_secret};
use crate::sender::HttpSender;
use crate::template::compile_template;

const MAX_DESCRIPTION: usize = 2000;
const MAX_TRIGGERS: usize = 50;
const MAX_TRIGGER_LEN: usize = 200;
const MAX_PARAMS: usize = 50;
const MAX_URL_TEMPLATE: usize = 2048;
const MAX_MAPPINGS: usize = 100;
const MAX_MESSAGE: usize = 1000;
const MAX_NAME_LEN: usize = 64;

/// One problem with a definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// Where in the definition (`endpoint.url`, `parameters[0].default`).
    pub path: String,
    /// Stable machine code.
    pub code: &'static str,
    pub message: String,
}

/// A definition that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error("invalid HTTP tool definition: {}", summary(.0))]
    Invalid(Vec<Violation>),
}

impl LoadError {
    /// Stable machine code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Parse(e) => e.code(),
            Self::Invalid(_) => "invalid_definition",
        }
    }
}

/// Parses YAML or JSON and checks the structure; the usual entry point for an import.
pub fn load_definition(src: &str) -> Result<HttpToolDefinition, LoadError> {
    let def = parse_any(src)?;
    let violations = validate_definition(&def);
    if !violations.is_empty() {
        return Err(LoadError::Invalid(violations));
    }
    Ok(def)
}

/// Structural checks: names, limits, every placeholder resolvable, the template compiles, the
/// mapping paths parse, and the endpoint renders with sample values.
pub fn validate_definition(def: &HttpToolDefinition) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut add = |path: String, code: &'static str, message: String| {
        out.push(Violation {
            path,
            code,
            message,
        });
    };
    check_tool_name(&def.name, &mut add);
    if def.description.trim().is_empty() {
        add(
            "description".into(),
            "missing_description",
            "description is empty".into(),
        );
    } else if def.description.chars().count() > MAX_DESCRIPTION {
        add(
            "description".into(),
            "too_long",
            format!("description is over {MAX_DESCRIPTION} characters"),
        );
    }
    if let Some(version) = &def.version
        && (version.trim().is_empty() || version.len() > 32)
    {
        add(
            "version".into(),
            "invalid_version",
            "version must be 1 to 32 characters".into(),
        );
    }
    if def.triggers.len() > MAX_TRIGGERS {
        add(
            "triggers".into(),
            "too_many",
            format!("more than {MAX_TRIGGERS} triggers"),
        );
    }
    for (idx, trigger) in def.triggers.iter().enumerate() {
        if trigger.trim().is_empty() || trigger.chars().count() > MAX_TRIGGER_LEN {
            add(
                format!("triggers[{idx}]"),
                "invalid_trigger",
                format!("a trigger must be 1 to {MAX_TRIGGER_LEN} non-blank characters"),
            );
        }
    }
    check_parameters(def, &mut add);
    check_endpoint(def, &mut add);
    if def.response_mapping.len() > MAX_MAPPINGS {
        add(
            "response_mapping".into(),
            "too_many",
            format!("more than {MAX_MAPPINGS} mapped fields"),
        );
    }
    for (name, path) in &def.response_mapping {
        let at = format!("response_mapping.{name}");
        if !is_identifier(name) {
            add(
                at.clone(),
                "invalid_name",
                format!(
                    "'{}' is not a valid field name (letters, digits, _)",
                    short(name)
                ),
            );
        }
        if let Err(e) = crate::path::parse(path) {
            add(at, "invalid_path", e.to_string());
        }
    }
    if let Some(template) = &def.response_template
        && let Err(e) = compile_template(template)
    {
        add("response_template".into(), "template_error", e.to_string());
    }
    let handling = &def.error_handling;
    for (key, message) in [
        ("not_found", &handling.not_found),
        ("api_error", &handling.api_error),
        ("timeout", &handling.timeout),
        ("unauthorized", &handling.unauthorized),
        ("rate_limited", &handling.rate_limited),
        ("invalid_response", &handling.invalid_response),
    ] {
        if message
            .as_ref()
            .is_some_and(|m| m.chars().count() > MAX_MESSAGE)
        {
            add(
                format!("error_handling.{key}"),
                "too_long",
                format!("message is over {MAX_MESSAGE} characters"),
            );
        }
    }
    out
}

/// Security checks: https unless allowed, the literal host passes `url_check` (the host passes
/// the egress guard's check), no credentials outside headers, no hard-coded credentials.
///
/// A host that comes from a `store.*` value is unknown until a call; the egress guard checks it
/// then, and `execute` re-applies the https rule to the rendered URL.
pub fn validate_security(
    def: &HttpToolDefinition,
    rules: &SecurityRules,
    url_check: &dyn Fn(&str) -> Result<(), String>,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let url = def.endpoint.url.trim();
    let lower = url.to_ascii_lowercase();
    if lower.starts_with("http://") && !rules.allow_plain_http {
        out.push(violation(
            "endpoint.url",
            "plain_http",
            "the endpoint must use https".into(),
        ));
    }
    if let Some((scheme, after)) = url.split_once("://") {
        let authority = after.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            out.push(violation(
                "endpoint.url",
                "credentials_in_url",
                "the URL carries user info; send credentials in a header".into(),
            ));
        } else if !authority.contains("{{") && !authority.is_empty() {
            let origin = format!("{scheme}://{authority}/");
            if let Err(why) = url_check(&origin) {
                out.push(violation(
                    "endpoint.url",
                    "url_refused",
                    format!("the endpoint host is not allowed: {why}"),
                ));
            }
        }
        if let Some((_, after_mark)) = after.split_once('?') {
            let query = after_mark.split('#').next().unwrap_or("");
            for pair in query.split('&') {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                if is_secret_like(key) && !value.is_empty() && !value.contains("{{") {
                    out.push(violation(
                        "endpoint.url",
                        "hardcoded_secret",
                        format!(
                            "query parameter '{}' holds a literal credential",
                            short(key)
                        ),
                    ));
                }
            }
        }
    }
    for (path, template) in body_and_url_templates(def) {
        for r in placeholder::refs(template).unwrap_or_default() {
            if ref_is_secret(def, r) {
                out.push(violation(
                    &path,
                    "secret_outside_headers",
                    format!(
                        "{} looks like a credential; credentials may only be sent in headers",
                        r.display()
                    ),
                ));
            }
        }
    }
    for (name, value) in &def.endpoint.headers {
        if is_secret_like(name) && !value.contains("{{") && !value.trim().is_empty() {
            out.push(violation(
                &format!("endpoint.headers.{name}"),
                "hardcoded_secret",
                "a credential is written into the definition; use a {{store.key}} config value"
                    .into(),
            ));
        }
    }
    out
}

/// The result of a live probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EndpointReport {
    pub ok: bool,
    /// Upstream status, when a response arrived.
    pub status: Option<u16>,
    pub output: Option<HttpToolOutput>,
    pub error: Option<HttpToolError>,
    /// Mapped fields whose path found nothing in the response.
    pub missing_paths: Vec<String>,
}

/// Calls the endpoint once through `sender` (the egress guard) with sample arguments and reports
/// whether it answered and whether the mapping paths found their fields.
pub async fn validate_endpoint(
    def: &HttpToolDefinition,
    args: &Map<String, Value>,
    ctx: &CallContext<'_>,
    sender: &dyn HttpSender,
    rules: &SecurityRules,
) -> EndpointReport {
    match execute_inner(def, args, ctx, sender, rules).await {
        Ok((output, missing_paths)) => EndpointReport {
            ok: true,
            status: Some(output.status),
            output: Some(output),
            error: None,
            missing_paths,
        },
        Err(error) => EndpointReport {
            ok: false,
            status: error.status,
            output: None,
            error: Some(error),
            missing_paths: Vec::new(),
        },
    }
}

/// The `store.*` config keys a tool needs: every `{{store.key}}` in its endpoint and every
/// parameter filled from the store. The host registers them with its Config Center and can
/// report a tool whose keys have no value yet.
pub fn config_keys(def: &HttpToolDefinition) -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = all_templates(def)
        .iter()
        .flat_map(|(_, t)| placeholder::refs(t).unwrap_or_default())
        .filter_map(|r| match r {
            Ref::Store(key) => Some(key.to_owned()),
            Ref::Param(_) => None,
        })
        .collect();
    keys.extend(
        def.parameters
            .iter()
            .filter(|p| p.source == crate::definition::ParamSource::Store)
            .map(|p| p.name.clone()),
    );
    keys
}

fn check_tool_name(name: &str, add: &mut impl FnMut(String, &'static str, String)) {
    let ok = name.len() <= MAX_NAME_LEN
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        add(
            "name".into(),
            "invalid_name",
            format!(
                "tool name '{}' must match ^[a-z][a-z0-9_]*$ and be at most {MAX_NAME_LEN} characters",
                short(name)
            ),
        );
    }
}

fn check_parameters(def: &HttpToolDefinition, add: &mut impl FnMut(String, &'static str, String)) {
    if def.parameters.len() > MAX_PARAMS {
        add(
            "parameters".into(),
            "too_many",
            format!("more than {MAX_PARAMS} parameters"),
        );
    }
    let mut seen = BTreeSet::new();
    for (idx, param) in def.parameters.iter().enumerate() {
        let at = format!("parameters[{idx}]");
        if !is_identifier(&param.name) || param.name == "store" {
            add(
                format!("{at}.name"),
                "invalid_name",
                format!(
                    "'{}' is not a valid parameter name (letters, digits, _; not 'store')",
                    short(&param.name)
                ),
            );
        } else if !seen.insert(param.name.as_str()) {
            add(
                format!("{at}.name"),
                "duplicate_name",
                format!("parameter '{}' is declared twice", param.name),
            );
        }
        if let Some(default) = &param.default
            && !param.param_type.accepts(default)
        {
            add(
                format!("{at}.default"),
                "type_mismatch",
                format!("default is not of type {}", param.param_type.as_str()),
            );
        }
        if param
            .description
            .as_ref()
            .is_some_and(|d| d.chars().count() > MAX_MESSAGE)
        {
            add(
                format!("{at}.description"),
                "too_long",
                format!("description is over {MAX_MESSAGE} characters"),
            );
        }
    }
}

fn check_endpoint(def: &HttpToolDefinition, add: &mut impl FnMut(String, &'static str, String)) {
    let endpoint = &def.endpoint;
    if endpoint.url.trim().is_empty() {
        add(
            "endpoint.url".into(),
            "missing_url",
            "endpoint.url is empty".into(),
        );
        return;
    }
    if endpoint.url.len() > MAX_URL_TEMPLATE {
        add(
            "endpoint.url".into(),
            "too_long",
            format!("endpoint.url is over {MAX_URL_TEMPLATE} bytes"),
        );
        return;
    }
    let timeout = endpoint.timeout_secs();
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= MAX_TIMEOUT_SECS) {
        add(
            "endpoint.timeout".into(),
            "invalid_timeout",
            format!("timeout must be more than 0 and at most {MAX_TIMEOUT_SECS} seconds"),
        );
    }
    if endpoint.body.is_some() && matches!(endpoint.method, Method::Get | Method::Delete) {
        add(
            "endpoint.body".into(),
            "body_not_allowed",
            format!("a {} request takes no body", endpoint.method.as_str()),
        );
    }
    let mut header_names = BTreeSet::new();
    for name in endpoint.headers.keys() {
        if !header_names.insert(name.to_ascii_lowercase()) {
            add(
                format!("endpoint.headers.{}", short(name)),
                "duplicate_header",
                format!(
                    "header '{}' is set twice (names are case-insensitive)",
                    short(name)
                ),
            );
        } else if !is_header_name(name) {
            add(
                format!("endpoint.headers.{}", short(name)),
                "invalid_header",
                "header names are tokens without placeholders".into(),
            );
        } else if FORBIDDEN_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            add(
                format!("endpoint.headers.{name}"),
                "forbidden_header",
                format!("header '{name}' is set by the transport, not the tool"),
            );
        }
    }
    let mut templates_ok = true;
    for (path, template) in all_templates(def) {
        match placeholder::parse(template) {
            Err(e) => {
                templates_ok = false;
                add(path, "invalid_placeholder", e.to_string());
            }
            Ok(pieces) => {
                for piece in pieces {
                    if let Piece::Ref(Ref::Param(name)) = piece
                        && !def.parameters.iter().any(|p| p.name == name)
                    {
                        templates_ok = false;
                        add(
                            path.clone(),
                            "unknown_placeholder",
                            format!("{} names no parameter", Ref::Param(name).display()),
                        );
                    }
                }
            }
        }
    }
    let has_secret_outside_headers = body_and_url_templates(def)
        .iter()
        .flat_map(|(_, t)| placeholder::refs(t).unwrap_or_default())
        .any(|r| ref_is_secret(def, r));
    if templates_ok && !has_secret_outside_headers {
        let sample = SampleStore {
            base_keys: base_keys(&endpoint.url),
        };
        if let Err(e) = prepare_request(def, &sample_args(def), &sample) {
            add("endpoint".into(), "endpoint_render", e.message);
        }
    }
}

/// Every endpoint template with its path.
fn all_templates(def: &HttpToolDefinition) -> Vec<(String, &str)> {
    let mut res = body_and_url_templates(def);
    for (name, value) in &def.endpoint.headers {
        res.push((format!("endpoint.headers.{name}"), value.as_str()));
    }
    res
}

/// The URL and the body's string leaves: the places where credentials may not go.
fn body_and_url_templates(def: &HttpToolDefinition) -> Vec<(String, &str)> {
    let mut res = vec![("endpoint.url".to_owned(), def.endpoint.url.as_str())];
    if let Some(body) = &def.endpoint.body {
        collect_strings(body, "endpoint.body".to_owned(), &mut res);
    }
    res
}

fn collect_strings<'v>(node: &'v Value, path: String, out: &mut Vec<(String, &'v str)>) {
    match node {
        Value::String(s) => out.push((path, s.as_str())),
        Value::Array(items) => {
            for (idx, it) in items.iter().enumerate() {
                collect_strings(it, format!("{path}[{idx}]"), out);
            }
        }
        Value::Object(map) => {
            for (key, it) in map {
                collect_strings(it, format!("{path}.{key}"), out);
            }
        }
        _ => {}
    }
}

/// A value of each parameter's type, for the sample render.
fn sample_args(def: &HttpToolDefinition) -> Map<String, Value> {
    def.parameters
        .iter()
        .map(|p| {
            let value = match p.param_type {
                ParamType::String => Value::String("sample".into()),
                ParamType::Integer | ParamType::Number => Value::from(1),
                ParamType::Boolean => Value::Bool(true),
                ParamType::Object => Value::Object(Map::new()),
                ParamType::Array => Value::Array(Vec::new()),
            };
            (p.name.clone(), value)
        })
        .collect()
}

/// Config keys used at the very start of the URL: they stand for a whole base URL.
fn base_keys(url: &str) -> BTreeSet<String> {
    match placeholder::parse(url)
        .ok()
        .and_then(|p| p.first().copied())
    {
        Some(Piece::Ref(Ref::Store(key))) => BTreeSet::from([key.to_owned()]),
        _ => BTreeSet::new(),
    }
}

/// Config values for the sample render: a base URL for leading keys, a host otherwise.
struct SampleStore {
    base_keys: BTreeSet<String>,
}

impl ConfigLookup for SampleStore {
    fn get(&self, key: &str) -> Option<String> {
        Some(if self.base_keys.contains(key) {
            "https://example.invalid".to_owned()
        } else {
            "example.invalid".to_owned()
        })
    }
}

fn violation(path: &str, code: &'static str, message: String) -> Violation {
    Violation {
        path: path.to_owned(),
        code,
        message,
    }
}

fn summary(violations: &[Violation]) -> String {
    let shown: Vec<String> = violations
        .iter()
        .take(5)
        .map(|v| format!("{}: {}", v.path, v.message))
        .collect();
    let more = violations.len().saturating_sub(5);
    if more > 0 {
        format!("{} (and {more} more)", shown.join("; "))
    } else {
        shown.join("; ")
    }
}

fn short(text: &str) -> String {
    text.chars().take(64).collect()
}
