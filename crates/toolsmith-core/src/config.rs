//! The Config Center's records: services (an external API a tool needs, with the fields it
//! takes) and entries (one filled-in set of values for a service), and the rules they follow.
//!
//! Secret values never appear here in plaintext: an entry holds them as
//! [`StoredValue::Secret`], text sealed by the service above (see `toolsmith-secrets`). This
//! module does no encryption and no I/O; it validates shapes, names and sizes.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::schema::json_type;

/// Longest service, field or tool name.
pub const MAX_CONFIG_NAME_LEN: usize = 64;
/// Longest display name, field label or entry label.
pub const MAX_LABEL_LEN: usize = 128;
/// Longest service or field description.
pub const MAX_DESCRIPTION_LEN: usize = 2000;
/// Longest category.
pub const MAX_CATEGORY_LEN: usize = 64;
/// Longest docs URL or `url` value.
pub const MAX_URL_LEN: usize = 2048;
/// Most fields a service may declare.
pub const MAX_FIELDS: usize = 32;
/// Most tools that may be recorded as needing one service.
pub const MAX_REGISTERED_BY: usize = 1000;
/// Largest value (in bytes of UTF-8) of any field, before sealing.
pub const MAX_VALUE_LEN: usize = 16 * 1024;
/// Longest text a sealed [`MAX_VALUE_LEN`] value can take (`v1:` + base64 of nonce,
/// ciphertext and tag), with room to spare for a future format.
pub const MAX_SEALED_LEN: usize = 2 * MAX_VALUE_LEN + 256;

/// The type of a field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldKind {
    /// A string encrypted at rest and shown masked (API keys, passwords, tokens).
    Secret,
    /// A plain string (also accepted as `string`).
    #[serde(alias = "string")]
    Text,
    /// An `http://` or `https://` URL.
    Url,
    /// A finite JSON number.
    Number,
    Boolean,
}

impl FieldKind {
    pub const ALL: [FieldKind; 5] = [
        FieldKind::Secret,
        FieldKind::Text,
        FieldKind::Url,
        FieldKind::Number,
        FieldKind::Boolean,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Secret => "secret",
            FieldKind::Text => "text",
            FieldKind::Url => "url",
            FieldKind::Number => "number",
            FieldKind::Boolean => "boolean",
        }
    }
}

impl fmt::Display for FieldKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FieldKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FieldKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown field kind '{s}' (expected one of: secret, text, url, number, boolean)"
                )
            })
    }
}

/// One field of a service's config schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigField {
    /// `^[a-z][a-z0-9_]*$`, unique within the service.
    pub name: String,
    /// For people; defaults to the name when empty.
    #[serde(default)]
    pub label: String,
    /// Accepted as `kind` or `type`.
    #[serde(alias = "type")]
    pub kind: FieldKind,
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

impl ConfigField {
    /// The fields a service gets when it declares none: `api_key` (secret, required) and
    /// `base_url` (url, optional).
    pub fn defaults() -> Vec<ConfigField> {
        vec![
            ConfigField {
                name: "api_key".to_owned(),
                label: "API key".to_owned(),
                kind: FieldKind::Secret,
                required: true,
                description: None,
            },
            ConfigField {
                name: "base_url".to_owned(),
                label: "Base URL".to_owned(),
                kind: FieldKind::Url,
                required: false,
                description: None,
            },
        ]
    }
}

/// An external service tools may need, as stored. Unique per owner by `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigServiceRecord {
    /// `svc_<16 hex>`.
    pub id: String,
    pub owner: String,
    /// The lookup key tool code uses (`utils.getApiKey('weatherapi')`): `^[a-z][a-z0-9_]*$`.
    pub name: String,
    pub display_name: String,
    pub description: Option<String>,
    pub category: Option<String>,
    /// `http(s)://` link to the provider's docs or sign-up page.
    pub docs_url: Option<String>,
    /// Whether several entries make sense (several SMTP accounts).
    pub multi_entry: bool,
    /// The config schema: 1 to [`MAX_FIELDS`] fields with unique names.
    pub fields: Vec<ConfigField>,
    /// Names of the tools that declared this service (`required_api_keys`), sorted, unique.
    pub registered_by: Vec<String>,
    /// Created by a tool's declaration rather than by a person: it may be removed again when
    /// no tool needs it and it holds no entries.
    pub auto_registered: bool,
    /// +1 on every change; what compare-and-swap updates check.
    pub revision: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ConfigServiceRecord {
    /// A fresh id: `svc_` and 16 random hex digits.
    pub fn new_id() -> String {
        prefixed_id("svc")
    }

    /// A new service of `owner` named `name` with the default fields, revision 1, created now.
    pub fn new(owner: impl Into<String>, name: impl Into<String>, now: DateTime<Utc>) -> Self {
        let name = name.into();
        ConfigServiceRecord {
            id: ConfigServiceRecord::new_id(),
            owner: owner.into(),
            display_name: name.clone(),
            name,
            description: None,
            category: None,
            docs_url: None,
            multi_entry: false,
            fields: ConfigField::defaults(),
            registered_by: Vec::new(),
            auto_registered: false,
            revision: 1,
            created_at: now,
            updated_at: now,
        }
    }

    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&ConfigField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Checks every rule of a service record.
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_config_name("service name", &self.name)?;
        check_text("displayName", &self.display_name, MAX_LABEL_LEN, false)?;
        if let Some(d) = &self.description {
            check_text("description", d, MAX_DESCRIPTION_LEN, true)?;
        }
        if let Some(c) = &self.category {
            check_text("category", c, MAX_CATEGORY_LEN, false)?;
        }
        if let Some(u) = &self.docs_url {
            check_url("docsUrl", u)?;
        }
        validate_fields(&self.fields)?;
        if self.registered_by.len() > MAX_REGISTERED_BY {
            return Err(ConfigError::TooLarge(format!(
                "registeredBy lists {} tools, over the limit of {MAX_REGISTERED_BY}",
                self.registered_by.len()
            )));
        }
        for tool in &self.registered_by {
            validate_config_name("tool name in registeredBy", tool)?;
        }
        Ok(())
    }
}

/// One set of values for a service, as stored. Unique per service by `label`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigEntryRecord {
    /// `cfg_<16 hex>`.
    pub id: String,
    pub service_id: String,
    /// `default`, `work`, `personal` …: 1 to [`MAX_LABEL_LEN`] characters, no control
    /// characters, no surrounding spaces.
    pub label: String,
    /// Exactly one entry of a service that has entries is the default (the one
    /// `utils.getApiKey` reads). The store keeps this true.
    pub is_default: bool,
    /// Field name → value. Secret fields hold sealed text only.
    pub values: BTreeMap<String, StoredValue>,
    pub revision: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl ConfigEntryRecord {
    /// A fresh id: `cfg_` and 16 random hex digits.
    pub fn new_id() -> String {
        prefixed_id("cfg")
    }

    /// The required fields of `service` this entry has no value for (what `missing_config`
    /// reports).
    pub fn missing_required<'a>(&self, service: &'a ConfigServiceRecord) -> Vec<&'a str> {
        service
            .fields
            .iter()
            .filter(|f| f.required && !self.values.contains_key(&f.name))
            .map(|f| f.name.as_str())
            .collect()
    }

    /// Checks the label and that the stored values fit `service`'s fields.
    pub fn validate(&self, service: &ConfigServiceRecord) -> Result<(), ConfigError> {
        validate_entry_label(&self.label)?;
        check_stored_values(&service.fields, &self.values)
    }
}

/// A field value as stored.
///
/// Serialized with its kind as the key (`{"text": "…"}`, `{"secret": "v1:…"}`), so a stored
/// secret can never be mistaken for a plain string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoredValue {
    /// Sealed text (`v1:…`), never plaintext.
    Secret(String),
    Text(String),
    Url(String),
    Number(serde_json::Number),
    Boolean(bool),
}

impl StoredValue {
    pub fn kind(&self) -> FieldKind {
        match self {
            StoredValue::Secret(_) => FieldKind::Secret,
            StoredValue::Text(_) => FieldKind::Text,
            StoredValue::Url(_) => FieldKind::Url,
            StoredValue::Number(_) => FieldKind::Number,
            StoredValue::Boolean(_) => FieldKind::Boolean,
        }
    }

    /// The stored value of a non-secret field from its checked plaintext JSON (see
    /// [`check_entry_values`]). `None` for a secret field (seal it instead and use
    /// [`StoredValue::Secret`]) or a value of the wrong type.
    pub fn plain(kind: FieldKind, value: &Value) -> Option<StoredValue> {
        match (kind, value) {
            (FieldKind::Text, Value::String(s)) => Some(StoredValue::Text(s.clone())),
            (FieldKind::Url, Value::String(s)) => Some(StoredValue::Url(s.clone())),
            (FieldKind::Number, Value::Number(n)) => Some(StoredValue::Number(n.clone())),
            (FieldKind::Boolean, Value::Bool(b)) => Some(StoredValue::Boolean(*b)),
            _ => None,
        }
    }

    /// The value as JSON, for a non-secret field; `None` for a secret (open it instead).
    pub fn plain_json(&self) -> Option<Value> {
        match self {
            StoredValue::Secret(_) => None,
            StoredValue::Text(s) | StoredValue::Url(s) => Some(Value::String(s.clone())),
            StoredValue::Number(n) => Some(Value::Number(n.clone())),
            StoredValue::Boolean(b) => Some(Value::Bool(*b)),
        }
    }
}

/// Why a service or an entry was refused, phrased for the person or model that sent it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A service, field or tool name breaks the naming rule.
    #[error("{0}")]
    InvalidName(String),
    /// A field definition is wrong (duplicate name, no fields …).
    #[error("{0}")]
    InvalidField(String),
    /// A value does not fit its field (wrong type, bad URL, control characters …).
    #[error("{0}")]
    InvalidValue(String),
    /// A value names a field the service does not have.
    #[error("service has no field '{0}'")]
    UnknownField(String),
    /// A required field has no value.
    #[error("required field '{0}' has no value")]
    MissingField(String),
    /// Something is over its size limit.
    #[error("{0}")]
    TooLarge(String),
}

impl ConfigError {
    /// A stable, machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            ConfigError::InvalidName(_) => "invalid_name",
            ConfigError::InvalidField(_) => "invalid_field",
            ConfigError::InvalidValue(_) => "invalid_value",
            ConfigError::UnknownField(_) => "unknown_field",
            ConfigError::MissingField(_) => "missing_field",
            ConfigError::TooLarge(_) => "too_large",
        }
    }
}

/// The naming rule of services and fields (the same as custom tools'): `^[a-z][a-z0-9_]*$`,
/// at most [`MAX_CONFIG_NAME_LEN`] characters. `what` names the thing in the error.
pub fn validate_config_name(what: &str, name: &str) -> Result<(), ConfigError> {
    if name.is_empty() {
        return Err(ConfigError::InvalidName(format!("{what} is empty")));
    }
    let len = name.chars().count();
    if len > MAX_CONFIG_NAME_LEN {
        return Err(ConfigError::TooLarge(format!(
            "{what} is {len} characters long, over the limit of {MAX_CONFIG_NAME_LEN}"
        )));
    }
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !first_ok || !rest_ok {
        return Err(ConfigError::InvalidName(format!(
            "{what} '{}' is invalid: it must start with a lowercase letter and contain only lowercase letters, digits and underscores (^[a-z][a-z0-9_]*$)",
            name.escape_debug()
        )));
    }
    Ok(())
}

/// Checks a service's fields: 1 to [`MAX_FIELDS`], valid unique names, labels and
/// descriptions within limits.
pub fn validate_fields(fields: &[ConfigField]) -> Result<(), ConfigError> {
    if fields.is_empty() {
        return Err(ConfigError::InvalidField(
            "a service needs at least one field".to_owned(),
        ));
    }
    if fields.len() > MAX_FIELDS {
        return Err(ConfigError::TooLarge(format!(
            "the service declares {} fields, over the limit of {MAX_FIELDS}",
            fields.len()
        )));
    }
    for (i, field) in fields.iter().enumerate() {
        validate_config_name("field name", &field.name)?;
        if fields.iter().take(i).any(|f| f.name == field.name) {
            return Err(ConfigError::InvalidField(format!(
                "field '{}' is declared twice",
                field.name
            )));
        }
        // An empty label is allowed (people see the name instead).
        if !field.label.is_empty() {
            check_text("field label", &field.label, MAX_LABEL_LEN, false)?;
        }
        if let Some(d) = &field.description {
            check_text("field description", d, MAX_DESCRIPTION_LEN, true)?;
        }
    }
    Ok(())
}

/// Checks an entry label: 1 to [`MAX_LABEL_LEN`] characters, no control characters, no
/// leading or trailing whitespace.
pub fn validate_entry_label(label: &str) -> Result<(), ConfigError> {
    check_text("entry label", label, MAX_LABEL_LEN, false)?;
    if label.trim() != label {
        return Err(ConfigError::InvalidValue(
            "entry label has leading or trailing whitespace".to_owned(),
        ));
    }
    Ok(())
}

/// Checks plaintext values sent for an entry (before secrets are sealed): every field known,
/// every required field present and non-empty, every value of its field's type and at most
/// [`MAX_VALUE_LEN`] bytes. `null` counts as absent.
pub fn check_entry_values(
    fields: &[ConfigField],
    values: &BTreeMap<String, Value>,
) -> Result<(), ConfigError> {
    for (name, value) in values {
        let field = known_field(fields, name)?;
        if value.is_null() {
            continue;
        }
        check_plain_value(field, value)?;
    }
    for field in fields.iter().filter(|f| f.required) {
        let present = match values.get(&field.name) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(_) => true,
        };
        if !present {
            return Err(ConfigError::MissingField(field.name.clone()));
        }
    }
    Ok(())
}

/// Checks stored values against the fields: every field known, each value of its field's
/// kind, secrets sealed (`v1:` text, never plaintext), sizes within limits. Required fields
/// are not checked here (see [`ConfigEntryRecord::missing_required`]).
pub fn check_stored_values(
    fields: &[ConfigField],
    values: &BTreeMap<String, StoredValue>,
) -> Result<(), ConfigError> {
    for (name, value) in values {
        let field = known_field(fields, name)?;
        if value.kind() != field.kind {
            return Err(ConfigError::InvalidValue(format!(
                "field '{name}' is of kind {}, but the value is a {}",
                field.kind,
                value.kind()
            )));
        }
        match value {
            StoredValue::Secret(sealed) => {
                if sealed.len() > MAX_SEALED_LEN {
                    return Err(ConfigError::TooLarge(format!(
                        "the sealed value of field '{name}' is {} bytes, over the limit of {MAX_SEALED_LEN}",
                        sealed.len()
                    )));
                }
                let well_formed = sealed.strip_prefix("v1:").is_some_and(|b| {
                    !b.is_empty()
                        && b.bytes()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
                });
                if !well_formed {
                    return Err(ConfigError::InvalidValue(format!(
                        "field '{name}' is secret, but its value is not sealed text; secrets are stored encrypted only"
                    )));
                }
            }
            other => {
                if let Some(json) = other.plain_json() {
                    check_plain_value(field, &json)?;
                }
            }
        }
    }
    Ok(())
}

fn known_field<'a>(fields: &'a [ConfigField], name: &str) -> Result<&'a ConfigField, ConfigError> {
    fields.iter().find(|f| f.name == name).ok_or_else(|| {
        let shown: String = name.chars().take(MAX_CONFIG_NAME_LEN).collect();
        ConfigError::UnknownField(shown.escape_debug().to_string())
    })
}

/// Checks one plaintext value against its field.
fn check_plain_value(field: &ConfigField, value: &Value) -> Result<(), ConfigError> {
    let name = &field.name;
    let wrong = || {
        ConfigError::InvalidValue(format!(
            "field '{name}' expects a {} value, got {}",
            field.kind,
            json_type(value)
        ))
    };
    match field.kind {
        FieldKind::Secret | FieldKind::Text => {
            let s = value.as_str().ok_or_else(wrong)?;
            check_value_len(name, s)?;
            if s.contains('\0') {
                return Err(ConfigError::InvalidValue(format!(
                    "field '{name}' contains a NUL character"
                )));
            }
        }
        FieldKind::Url => {
            let s = value.as_str().ok_or_else(wrong)?;
            check_value_len(name, s)?;
            check_url(&format!("field '{name}'"), s)?;
        }
        FieldKind::Number => {
            let n = value.as_number().ok_or_else(wrong)?;
            if n.as_f64().is_none_or(|f| !f.is_finite()) {
                return Err(ConfigError::InvalidValue(format!(
                    "field '{name}' expects a finite number"
                )));
            }
        }
        FieldKind::Boolean => {
            value.as_bool().ok_or_else(wrong)?;
        }
    }
    Ok(())
}

fn check_value_len(name: &str, s: &str) -> Result<(), ConfigError> {
    if s.len() > MAX_VALUE_LEN {
        return Err(ConfigError::TooLarge(format!(
            "the value of field '{name}' is {} bytes, over the limit of {MAX_VALUE_LEN}",
            s.len()
        )));
    }
    Ok(())
}

/// An `http(s)://` URL with a host, no whitespace or control characters, within
/// [`MAX_URL_LEN`]. (Whether the host may be reached is the egress guard's decision.)
fn check_url(what: &str, url: &str) -> Result<(), ConfigError> {
    if url.len() > MAX_URL_LEN {
        return Err(ConfigError::TooLarge(format!(
            "{what} is {} bytes long, over the limit of {MAX_URL_LEN}",
            url.len()
        )));
    }
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    let host_ok = rest.is_some_and(|r| {
        let authority = r.split(['/', '?', '#']).next().unwrap_or_default();
        let host = authority.rsplit('@').next().unwrap_or_default();
        !host.is_empty() && !host.starts_with(':')
    });
    let chars_ok = !url.chars().any(|c| c.is_whitespace() || c.is_control());
    if !host_ok || !chars_ok {
        return Err(ConfigError::InvalidValue(format!(
            "{what} must be an http:// or https:// URL with a host and no spaces"
        )));
    }
    Ok(())
}

/// Checks a free text: non-empty (unless `may_be_empty`), within `max` characters, and
/// without control characters (newlines and tabs allowed where `multiline`).
fn check_text(what: &str, text: &str, max: usize, multiline: bool) -> Result<(), ConfigError> {
    if text.trim().is_empty() && !multiline {
        return Err(ConfigError::InvalidValue(format!("{what} is empty")));
    }
    let len = text.chars().count();
    if len > max {
        return Err(ConfigError::TooLarge(format!(
            "{what} is {len} characters long, over the limit of {max}"
        )));
    }
    let bad = text
        .chars()
        .any(|c| c.is_control() && !(multiline && matches!(c, '\n' | '\t' | '\r')));
    if bad {
        return Err(ConfigError::InvalidValue(format!(
            "{what} contains control characters"
        )));
    }
    Ok(())
}

fn prefixed_id(prefix: &str) -> String {
    // The first 64 bits of a random UUID: 16 hex digits.
    format!("{prefix}_{:016x}", uuid::Uuid::new_v4().as_u64_pair().0)
}

#[cfg(test)]
mod tests;
