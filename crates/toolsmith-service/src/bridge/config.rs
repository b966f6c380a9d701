//! What the operator configures per upstream MCP server (`[[mcp_servers]]` in the configuration
//! file), and the checks it must pass before anything is launched.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The longest a bridged call may take, whatever the configuration says.
pub const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// A bridged call's limit when the server's configuration gives none.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// One upstream MCP server reached over stdio: a program Toolsmith starts and speaks MCP to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The only environment the program gets, besides `PATH`, `HOME` and `LANG`. A value may
    /// hold `{{config.<service>.<field>}}` references to the Config Center (of the user who
    /// registered the server; `default` for the configuration file's), read at each launch:
    /// only the reference is stored.
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
    /// Whether the server's tools are left out of MCP `tools/list` (found with `search_tools`,
    /// called with `use_tool`); unset: when it offers more than `mcp_deferred_threshold`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred: Option<bool>,
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
        for (name, value) in &self.env {
            env_references(value).map_err(|why| format!("{what}: env {name}: {why}"))?;
        }
        Ok(())
    }
}

/// Opens a Config Center reference in an `env` value.
const REFERENCE_OPEN: &str = "{{config.";

/// The Config Center references (`<service>.<field>`) in an `env` value, in order; an error
/// names a malformed one.
pub fn env_references(value: &str) -> Result<Vec<&str>, String> {
    let mut found = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find(REFERENCE_OPEN) {
        let after = &rest[start + REFERENCE_OPEN.len()..];
        let end = after.find("}}").ok_or_else(|| {
            format!("'{REFERENCE_OPEN}' is not closed with '}}}}' (write {{{{config.<service>.<field>}}}})")
        })?;
        let key = after[..end].trim();
        let well_formed = key.split_once('.').is_some_and(|(service, field)| {
            let part = |p: &str| {
                !p.is_empty()
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            };
            part(service) && part(field)
        });
        if !well_formed {
            return Err(format!(
                "'{{{{config.{key}}}}}' is not a Config Center reference (write {{{{config.<service>.<field>}}}})"
            ));
        }
        found.push(key);
        rest = &after[end + 2..];
    }
    Ok(found)
}

/// `value` with each Config Center reference replaced by what `lookup` gives for it; an error
/// names the first reference `lookup` has no value for.
pub fn resolve_env(value: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find(REFERENCE_OPEN) {
        out.push_str(&rest[..start]);
        let after = &rest[start + REFERENCE_OPEN.len()..];
        let Some(end) = after.find("}}") else {
            return Err("an unclosed Config Center reference".to_owned());
        };
        let key = after[..end].trim();
        let resolved = lookup(key).ok_or_else(|| {
            format!(
                "the Config Center has no value for '{key}' (set it with `toolsmith config set` or PUT /api/v1/config/services/…)"
            )
        })?;
        out.push_str(&resolved);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_references_are_found_and_resolved() {
        assert_eq!(env_references("plain").unwrap(), Vec::<&str>::new());
        assert_eq!(
            env_references("Bearer {{config.github.token}} and {{config.db.url}}").unwrap(),
            ["github.token", "db.url"]
        );
        for bad in [
            "{{config.github}}",
            "{{config.a.b",
            "{{config..x}}",
            "{{config.a b.c}}",
        ] {
            assert!(env_references(bad).is_err(), "{bad}");
        }
        let lookup = |key: &str| (key == "github.token").then(|| "s3cret".to_owned());
        assert_eq!(
            resolve_env("Bearer {{config.github.token}}!", lookup).unwrap(),
            "Bearer s3cret!"
        );
        let err = resolve_env("{{config.github.other}}", lookup).unwrap_err();
        assert!(err.contains("github.other"), "{err}");
    }
}
