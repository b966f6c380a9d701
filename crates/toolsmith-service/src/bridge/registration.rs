//! What the operator configures per upstream MCP server (`[[mcp_servers]]` in the configuration
//! file, or registered through REST and the CLI): a program started over stdio, or a URL spoken
//! to over streamable HTTP or the legacy HTTP+SSE transport; and the checks it must pass before
//! anything is launched or sent.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The longest a bridged call may take, whatever the configuration says.
pub const MAX_CALL_TIMEOUT: Duration = Duration::from_secs(300);
/// A bridged call's limit when the server's configuration gives none.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// How Toolsmith reaches an upstream server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// A program Toolsmith starts, spoken to over its stdin and stdout.
    #[default]
    Stdio,
    /// An MCP endpoint over streamable HTTP (MCP 2025-03-26 and later), through the egress
    /// guard.
    StreamableHttp,
    /// The legacy HTTP+SSE transport (MCP 2024-11-05): an SSE stream opened with `GET url`
    /// carries the server's messages, and the client's go by `POST` to the endpoint the stream
    /// names first (`sse.rs`), through the egress guard.
    Sse,
}

impl Transport {
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Stdio => "stdio",
            Transport::StreamableHttp => "streamable_http",
            Transport::Sse => "sse",
        }
    }
}

/// One upstream MCP server: a program Toolsmith starts and speaks MCP to over stdio, or a URL
/// it speaks MCP to over streamable HTTP or legacy HTTP+SSE.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerRegistration {
    /// Lower-case letters, digits, `_` and `-` (1–32): the `mcp:<name>` policy group and, by
    /// default, the prefix of its tools' names.
    pub name: String,
    /// `stdio` (default), `streamable_http`, or `sse` (the legacy HTTP+SSE transport).
    #[serde(default, skip_serializing_if = "is_stdio")]
    pub transport: Transport,
    /// stdio: the program, as an absolute path or a name looked up in `PATH`. Started directly
    /// with `args` as a vector, never through a shell. Empty for HTTP servers.
    #[serde(default)]
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// The only environment the program gets, besides `PATH`, `HOME` and `LANG`. A value may
    /// hold `{{config.<service>.<field>}}` references to the Config Center (of the user who
    /// registered the server; `default` for the configuration file's), read at each launch:
    /// only the reference is stored.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// streamable_http: the MCP endpoint (`https://host/mcp`); sse: the SSE stream's URL
    /// (`https://host/sse`), whose `endpoint` event must name a URL on the same origin. Checked
    /// by the egress guard: a host on a private or loopback address must be in
    /// `allowed_private_hosts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// streamable_http, sse: headers sent with every request; a value may hold Config Center
    /// references, read at each connection.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// streamable_http, sse: the bearer token, as Config Center references only
    /// (`{{config.<service>.<field>}}`): a token is never written here in clear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token: Option<String>,
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

fn is_stdio(transport: &Transport) -> bool {
    *transport == Transport::Stdio
}

/// Headers an HTTP server's configuration may not set: the HTTP layer's, the MCP transport's
/// own, and `authorization` (written as `bearer_token`, so it is a reference, never clear).
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "authorization",
    "connection",
    "content-length",
    "content-type",
    "cookie",
    "host",
    "keep-alive",
    "last-event-id",
    "mcp-protocol-version",
    "mcp-session-id",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

impl McpServerRegistration {
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
        match self.transport {
            Transport::Stdio => self.validate_stdio(&what)?,
            Transport::StreamableHttp | Transport::Sse => self.validate_http(&what)?,
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

    /// What a server registered through REST or the CLI must hold besides [`Self::validate`]:
    /// no secret in clear. A credential-like `env` or header name (`GITHUB_TOKEN`,
    /// `X-Api-Key`: `toolsmith_scrub::is_credential_key`) must have a value made only of Config
    /// Center references, as `bearer_token` must, so the store never keeps the secret itself.
    /// (The configuration file's entries are the operator's own file and are not checked.)
    pub fn check_no_clear_secrets(&self) -> Result<(), String> {
        let what = format!("mcp_servers '{}'", self.name);
        for (kind, values) in [("env", &self.env), ("header", &self.headers)] {
            for (name, value) in values {
                if toolsmith_scrub::is_credential_key(name)
                    && !value.trim().is_empty()
                    && !(only_references(value)
                        && env_references(value).is_ok_and(|r| !r.is_empty()))
                {
                    return Err(format!(
                        "{what}: {kind} {name} looks like a credential and must be a Config Center \
                         reference, never the secret itself: store it as a secret (`toolsmith \
                         config set <service> <field> …` or PUT /api/v1/config/services/…) and \
                         write \"{{{{config.<service>.<field>}}}}\""
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate_stdio(&self, what: &str) -> Result<(), String> {
        if self.command.trim().is_empty() {
            return Err(format!(
                "{what}: command is empty; give the program to start (e.g. \"npx\" or \"/usr/local/bin/my-server\"), or a url with transport = \"streamable_http\" (or \"sse\")"
            ));
        }
        if self.command.contains(char::is_whitespace) && !self.command.starts_with('/') {
            return Err(format!(
                "{what}: command '{}' holds spaces; put the program in command and each argument in args (no shell is used)",
                self.command
            ));
        }
        if self.url.is_some() || !self.headers.is_empty() || self.bearer_token.is_some() {
            return Err(format!(
                "{what}: url, headers and bearer_token belong to transport = \"streamable_http\" or \"sse\"; a stdio server has command, args and env"
            ));
        }
        Ok(())
    }

    fn validate_http(&self, what: &str) -> Result<(), String> {
        let Some(url) = self.url.as_deref() else {
            let example = match self.transport {
                Transport::Sse => {
                    "the URL of its SSE stream (e.g. \"https://mcp.example.com/sse\")"
                }
                _ => "the server's MCP endpoint (e.g. \"https://mcp.example.com/mcp\")",
            };
            return Err(format!(
                "{what}: transport \"{}\" needs url, {example}",
                self.transport.as_str()
            ));
        };
        if !self.command.is_empty() || !self.args.is_empty() || !self.env.is_empty() {
            return Err(format!(
                "{what}: command, args and env belong to transport = \"stdio\"; an HTTP server has url, headers and bearer_token"
            ));
        }
        let parsed = url::Url::parse(url).map_err(|e| format!("{what}: url '{url}': {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
            return Err(format!(
                "{what}: url '{url}' must be an http or https URL with a host"
            ));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(format!(
                "{what}: url '{url}' holds credentials; put the token in the Config Center and reference it in bearer_token"
            ));
        }
        for (name, value) in &self.headers {
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !valid {
                return Err(format!(
                    "{what}: header name '{name}' must be letters, digits, '-' and '_'"
                ));
            }
            if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
                return Err(format!(
                    "{what}: header '{name}' may not be set{}",
                    if name.eq_ignore_ascii_case("authorization") {
                        "; give the token as bearer_token (a Config Center reference)"
                    } else {
                        ""
                    }
                ));
            }
            if value.chars().any(char::is_control) {
                return Err(format!("{what}: header '{name}' holds a control character"));
            }
            env_references(value).map_err(|why| format!("{what}: header {name}: {why}"))?;
        }
        if let Some(token) = &self.bearer_token {
            let references =
                env_references(token).map_err(|why| format!("{what}: bearer_token: {why}"))?;
            if references.is_empty() || !only_references(token) {
                return Err(format!(
                    "{what}: bearer_token must be a Config Center reference, never the token itself: \
                     store the token as a secret (`toolsmith config set <service> <field> …`) and write \
                     \"{{{{config.<service>.<field>}}}}\""
                ));
            }
        }
        Ok(())
    }
}

/// Whether `value` is nothing but Config Center references (and white space).
fn only_references(value: &str) -> bool {
    let mut rest = value;
    while let Some((before, after)) = rest.split_once(REFERENCE_OPEN) {
        if !before.trim().is_empty() {
            return false;
        }
        let Some((_, tail)) = after.split_once("}}") else {
            return false;
        };
        rest = tail;
    }
    rest.trim().is_empty()
}

/// Opens a Config Center reference in an `env` value.
const REFERENCE_OPEN: &str = "{{config.";

/// The Config Center references (`<service>.<field>`) in an `env` value, in order; an error
/// names a malformed one.
pub fn env_references(value: &str) -> Result<Vec<&str>, String> {
    let mut found = Vec::new();
    let mut rest = value;
    while let Some((_, after)) = rest.split_once(REFERENCE_OPEN) {
        let (key, tail) = after.split_once("}}").ok_or_else(|| {
            format!("'{REFERENCE_OPEN}' is not closed with '}}}}' (write {{{{config.<service>.<field>}}}})")
        })?;
        let key = key.trim();
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
        rest = tail;
    }
    Ok(found)
}

/// `value` with each Config Center reference replaced by what `lookup` gives for it; an error
/// names the first reference `lookup` has no value for.
pub fn resolve_env(value: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some((before, after)) = rest.split_once(REFERENCE_OPEN) {
        out.push_str(before);
        let Some((key, tail)) = after.split_once("}}") else {
            return Err("an unclosed Config Center reference".to_owned());
        };
        let key = key.trim();
        let resolved = lookup(key).ok_or_else(|| {
            format!(
                "the Config Center has no value for '{key}' (set it with `toolsmith config set` or PUT /api/v1/config/services/…)"
            )
        })?;
        out.push_str(&resolved);
        rest = tail;
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
