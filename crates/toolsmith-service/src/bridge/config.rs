//! What the operator configures per upstream MCP server (`[[mcp_servers]]` in the configuration
//! file), and the checks it must pass before anything is launched.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// The longest a bridged call may take, whatever the configuration says.
pub const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// A bridged call's limit when the server's configuration gives none.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// One upstream MCP server reached over stdio: a program Toolsmith starts and speaks MCP to.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// Lower-case letters, digits, `_` and `-` (1–32): the `mcp:<name>` policy group and, by
    /// default, the prefix of its tools' names.
    pub name: String,
    /// The program, as an absolute path or a name looked up in `PATH`. Started directly with
    /// `args` as a vector, never through a shell.
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// The only environment the program gets, besides `PATH`, `HOME` and `LANG`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Prepended to each upstream tool's name; default `mcp_<name>_` (the spec's).
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Only these upstream tools (their upstream names) are bridged; empty: all.
    #[serde(default)]
    pub tool_allow: Vec<String>,
    /// These upstream tools are never bridged (wins over `tool_allow`).
    #[serde(default)]
    pub tool_deny: Vec<String>,
    /// Seconds one bridged call may take (default 60, at most 300).
    #[serde(default)]
    pub call_timeout_seconds: Option<u64>,
}

fn yes() -> bool {
    true
}

impl McpServerConfig {
    /// The prefix of this server's tools in the catalogue.
    pub fn prefix(&self) -> String {
        self.prefix
            .clone()
            .unwrap_or_else(|| format!("mcp_{}_", self.name.replace('-', "_")))
    }

    pub fn call_timeout(&self) -> Duration {
        self.call_timeout_seconds
            .map_or(DEFAULT_CALL_TIMEOUT, Duration::from_secs)
            .min(MAX_CALL_TIMEOUT)
    }

    /// Whether the upstream tool `name` is bridged under the allow and deny lists.
    pub fn bridges(&self, name: &str) -> bool {
        !self.tool_deny.iter().any(|d| d == name)
            && (self.tool_allow.is_empty() || self.tool_allow.iter().any(|a| a == name))
    }

    /// Checks the entry; the message names the field and the fix.
    pub fn validate(&self) -> Result<(), String> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 32
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(format!(
                "mcp_servers: name '{}' must be 1 to 32 lower-case letters, digits, '_' or '-'",
                self.name
            ));
        }
        let what = format!("mcp_servers '{}'", self.name);
        if self.command.trim().is_empty() {
            return Err(format!(
                "{what}: command is empty; give the program to start (e.g. \"npx\" or \"/usr/local/bin/my-server\")"
            ));
        }
        if self.command.contains(char::is_whitespace) && !self.command.starts_with('/') {
            return Err(format!(
                "{what}: command '{}' holds spaces; put the program in command and each argument in args (no shell is used)",
                self.command
            ));
        }
        if let Some(bad) = self
            .env
            .keys()
            .find(|k| k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            return Err(format!(
                "{what}: env name '{bad}' must be letters, digits and '_'"
            ));
        }
        let prefix = self.prefix();
        if !prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
        {
            return Err(format!(
                "{what}: prefix '{prefix}' may hold only letters, digits, '_', '-' and '.'"
            ));
        }
        if self.call_timeout_seconds == Some(0) {
            return Err(format!("{what}: call_timeout_seconds must be at least 1"));
        }
        Ok(())
    }
}
