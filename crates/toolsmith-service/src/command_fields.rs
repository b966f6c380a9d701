//! Spec 001 §13's command-tool JSON as it is: `command`, `timeout_seconds`, `working_dir`,
//! `env`, `network`, `scope` and `enabled` at the top level of a tool definition, beside
//! `name`, `description` and `parameters`.
//!
//! Every face (REST create and dry run, MCP `create_tool`, `toolsmith tool create`) reads a
//! definition into one shape (`toolsmith_server::definition::CreateToolBody`), which folds
//! those fields with [`CommandFields::fold`] into Toolsmith's own form — kind `command`, with
//! the command's fields as JSON in `code` — before the definition reaches
//! [`ToolService::create`](crate::ToolService::create), so the rules are the same whichever
//! form was written. The `code` form stays valid; giving both is an error.

use std::collections::BTreeMap;

use serde::Serialize;
use toolsmith_core::ToolKind;

use crate::ServiceError;

/// The command's own fields, as the top level of a definition holds them, written into `code`
/// as the command kind's JSON. Its `Debug` names the env variables, never their values.
#[derive(Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandFields {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
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
            // `network: true` on a JavaScript tool is a permission written as a field.
            let network = if self.network.is_some() {
                " A JavaScript tool asks for the network with permissions: [\"network\"] (then calls fetch()), not with network: drop network and add that permission."
            } else {
                ""
            };
            return Err(ServiceError::Validation(format!(
                "timeout_seconds, working_dir, env, network and scope belong to a command tool: give its command too (or put them all in code).{network}"
            )));
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
