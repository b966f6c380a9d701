//! Spec 001 §13's command-tool JSON as it is: `command`, `timeout_seconds`, `working_dir`,
//! `env`, `network`, `scope` and `enabled` at the top level of a tool definition, beside
//! `name`, `description` and `parameters`.
//!
//! Every face (REST create, MCP `create_tool`, `toolsmith tool create`) folds those fields
//! into Toolsmith's own form — kind `command`, with the command's fields as JSON in `code` —
//! before the definition reaches [`ToolService::create`](crate::ToolService::create), so the
//! rules are the same whichever form was written. The `code` form stays valid; giving both is
//! an error.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolsmith_core::ToolKind;

use crate::ServiceError;

/// The command's own fields, as the top level of a definition holds them. Its `Debug` names
/// the env variables, never their values.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CommandFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(
        default,
        alias = "timeout_seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_seconds: Option<u64>,
    #[serde(
        default,
        alias = "working_dir",
        skip_serializing_if = "Option::is_none"
    )]
    pub working_dir: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for CommandFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandFields")
            .field("command", &self.command)
            .field("timeout_seconds", &self.timeout_seconds)
            .field("working_dir", &self.working_dir)
            .field("env", &self.env.as_ref().map(toolsmith_command::EnvNames))
            .field("network", &self.network)
            .field("scope", &self.scope)
            .finish()
    }
}

/// The keys [`CommandFields`] takes from a definition (both spellings).
const KEYS: [&str; 9] = [
    "command",
    "timeoutSeconds",
    "timeout_seconds",
    "workingDir",
    "working_dir",
    "env",
    "network",
    "scope",
    // Not a command field, but spec 001's status switch: taken out with them.
    "enabled",
];

impl CommandFields {
    pub fn is_empty(&self) -> bool {
        *self == CommandFields::default()
    }

    /// Settles `kind` and `code` of a definition that may hold these fields: with none, the
    /// definition is left as it is (and `code` is required); with `command`, the kind becomes
    /// `command` and `code` its spec as JSON.
    pub fn fold(self, kind: &mut ToolKind, code: Option<String>) -> Result<String, ServiceError> {
        if self.is_empty() {
            return code.ok_or_else(|| {
                ServiceError::Validation(
                    "code is required (or, for a command tool, command: spec 001's form)"
                        .to_owned(),
                )
            });
        }
        if self.command.is_none() {
            return Err(ServiceError::Validation(
                "timeout_seconds, working_dir, env, network and scope belong to a command tool: give its command too (or put them all in code)".to_owned(),
            ));
        }
        if code.is_some() {
            return Err(ServiceError::Validation(
                "give the command tool's fields at the top level (command, timeout_seconds …) or as JSON in code, not both".to_owned(),
            ));
        }
        match kind {
            ToolKind::Js | ToolKind::Command => *kind = ToolKind::Command,
            other => {
                return Err(ServiceError::Validation(format!(
                    "command is a command tool's field, but kind is {other}; drop kind or set it to command"
                )));
            }
        }
        serde_json::to_string(&self).map_err(|e| ServiceError::Validation(e.to_string()))
    }
}

/// Folds spec 001's top-level command fields of a raw definition (MCP arguments, a tool file)
/// into `kind` and `code`; returns its `enabled`, if given.
pub fn fold_json(fields: &mut Map<String, Value>) -> Result<Option<bool>, ServiceError> {
    let mut taken = Map::new();
    for key in KEYS {
        if let Some(value) = fields.remove(key) {
            taken.insert(key.to_owned(), value);
        }
    }
    let enabled = match taken.remove("enabled") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(b)) => Some(b),
        Some(other) => {
            return Err(ServiceError::Validation(format!(
                "enabled must be true or false, got {other}"
            )));
        }
    };
    if taken.is_empty() {
        return Ok(enabled);
    }
    let command: CommandFields = serde_json::from_value(Value::Object(taken))
        .map_err(|e| ServiceError::Validation(format!("command tool fields: {e}")))?;
    let mut kind = match fields.get("kind") {
        None | Some(Value::Null) => ToolKind::Js,
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|e| ServiceError::Validation(format!("kind: {e}")))?,
    };
    let code = match fields.remove("code") {
        None | Some(Value::Null) => None,
        Some(Value::String(code)) => Some(code),
        Some(_) => {
            return Err(ServiceError::Validation("code must be a string".to_owned()));
        }
    };
    let code = command.fold(&mut kind, code)?;
    fields.insert("kind".to_owned(), Value::String(kind.as_str().to_owned()));
    fields.insert("code".to_owned(), Value::String(code));
    Ok(enabled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Spec 001 §13 "JSON Config Example", verbatim.
    fn goclaw() -> Map<String, Value> {
        let value = json!({
          "name": "dns_lookup",
          "description": "Look up DNS records for a domain",
          "parameters": {
            "type": "object",
            "properties": {
              "domain": { "type": "string", "description": "Domain name" },
              "record_type": { "type": "string", "enum": ["A", "AAAA", "MX", "CNAME", "TXT"] }
            },
            "required": ["domain"]
          },
          "command": "dig +short {{.record_type}} {{.domain}}",
          "timeout_seconds": 10,
          "enabled": true
        });
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn the_spec_example_becomes_a_command_tool() {
        let mut fields = goclaw();
        assert_eq!(fold_json(&mut fields).ok(), Some(Some(true)));
        assert_eq!(fields["kind"], json!("command"));
        let code: Value =
            serde_json::from_str(fields["code"].as_str().unwrap_or("")).unwrap_or_default();
        assert_eq!(
            code,
            json!({"command": "dig +short {{.record_type}} {{.domain}}", "timeoutSeconds": 10})
        );
        let tool: Result<crate::CreateTool, _> = serde_json::from_value(Value::Object(fields));
        assert!(tool.is_ok(), "{tool:?}");
    }

    #[test]
    fn both_forms_or_stray_fields_are_refused() {
        let mut both = goclaw();
        both.insert("code".to_owned(), json!("{\"command\": \"true\"}"));
        assert!(fold_json(&mut both).is_err());
        let mut http = goclaw();
        http.insert("kind".to_owned(), json!("http"));
        assert!(fold_json(&mut http).is_err());
        let mut stray = goclaw();
        stray.remove("command");
        assert!(fold_json(&mut stray).is_err());
        let mut plain = Map::new();
        plain.insert("code".to_owned(), json!("return 1"));
        assert_eq!(fold_json(&mut plain).ok(), Some(None));
        assert_eq!(plain.get("kind"), None);
    }
}
