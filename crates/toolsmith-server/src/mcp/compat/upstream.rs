//! dynamic-mcp's `upstream.mcp.attach` and `upstream.mcp.detach` (enterprise profile, with
//! `MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH`), mapped onto the MCP bridge: an attachment is a
//! registered MCP server (`ToolService::register_mcp_server`), so every rule of a
//! registration holds — the program among `mcp_allowed_commands`, each `env` name allowed
//! (`mcp_allowed_env`, credential-like values only as Config Center references), an HTTP URL
//! the egress guard accepts, programs started in `/` — and its tools are bridged into the
//! catalogue (`mcp_<name>_<tool>`), callable like any bridged tool.
//!
//! - `attach` `{adminToken, alias, transport: stdio|http, command?, args?, env?, url?, headers?,
//!   replace?}` → `{alias, transport, target, toolCount, toolNames, attachedAt}` once the
//!   upstream answered `tools/list` (`toolNames` are its own names); a failed connection
//!   leaves nothing registered.
//! - `detach` `{adminToken, alias}` → `{alias, detached}` (`false` when nothing was attached).
//!
//! Both need the configured admin token as `adminToken` (the server refuses to start the
//! feature without one). The alias becomes the server's name lower-cased, with every character
//! other than letters, digits, `_` and `-` turned into `_` (`fixture.upstream` →
//! `fixture_upstream`); `MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH_MAX` bounds the servers
//! registered at run time. Unlike dynamic-mcp's in-memory attachments, a registration is kept
//! in the store: it survives a restart and shows in `/api/v1/mcp-servers` until detached.

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolsmith_service::ServiceError;
use toolsmith_service::bridge::{McpServerRegistration, ServerSource, ServerState, ServerStatus};

use super::profile::{Definition, ProfileOp};
use super::system::{DEFAULT_ATTACH_MAX, failed, structured};
use crate::mcp::handler::Caller;

/// How often an attach looks whether the upstream has connected.
const POLL: Duration = Duration::from_millis(25);

fn alias_schema() -> Value {
    json!({
        "type": "string",
        "minLength": 3,
        "maxLength": 64,
        "pattern": "^[a-zA-Z][a-zA-Z0-9._:-]{2,63}$",
        "description": "Local alias used to reference the attached upstream MCP"
    })
}

pub(crate) fn definitions() -> Vec<Definition> {
    let strings = json!({"type": "object", "additionalProperties": {"type": "string"}});
    vec![
        (
            ProfileOp::Attach,
            "upstream.mcp.attach",
            "Experimentally attach to an existing MCP server (stdio/http) and return its current tool list",
            json!({
                "type": "object",
                "properties": {
                    "adminToken": {"type": "string"},
                    "alias": alias_schema(),
                    "transport": {"type": "string", "enum": ["stdio", "http"]},
                    "command": {"type": "string", "minLength": 1, "maxLength": 512, "description": "Required when transport=stdio"},
                    "args": {"type": "array", "items": {"type": "string", "maxLength": 2000}, "maxItems": 64, "default": [], "description": "Stdio process arguments (transport=stdio)"},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}, "default": {}, "description": "Optional stdio process environment overrides (transport=stdio)"},
                    "cwd": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "Optional working directory (transport=stdio); not supported: registered programs start in /"},
                    "url": {"type": "string", "format": "uri", "description": "Required when transport=http"},
                    "headers": strings,
                    "replace": {"type": "boolean", "default": false, "description": "Replace an existing alias when true"}
                },
                "required": ["alias", "transport"]
            }),
            json!({
                "type": "object",
                "properties": {
                    "alias": {"type": "string"},
                    "transport": {"type": "string", "enum": ["stdio", "http"]},
                    "target": {"type": "string"},
                    "toolCount": {"type": "integer", "minimum": 0},
                    "toolNames": {"type": "array", "items": {"type": "string"}},
                    "attachedAt": {"type": "string"}
                },
                "required": ["alias", "transport", "target", "toolCount", "toolNames", "attachedAt"]
            }),
        ),
        (
            ProfileOp::Detach,
            "upstream.mcp.detach",
            "Detach a previously attached upstream MCP alias and release resources",
            json!({
                "type": "object",
                "properties": {"adminToken": {"type": "string"}, "alias": alias_schema()},
                "required": ["alias"]
            }),
            json!({
                "type": "object",
                "properties": {"alias": {"type": "string"}, "detached": {"type": "boolean"}},
                "required": ["alias", "detached"]
            }),
        ),
    ]
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AttachArgs {
    #[serde(default)]
    admin_token: Option<String>,
    alias: String,
    transport: String,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: Map<String, Value>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: Map<String, Value>,
    #[serde(default)]
    replace: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DetachArgs {
    #[serde(default)]
    admin_token: Option<String>,
    alias: String,
}

/// Runs attach or detach on arguments already checked against its schema.
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: ProfileOp,
    args: Value,
) -> Result<CallToolResult, String> {
    Ok(match op {
        ProfileOp::Attach => {
            let args: AttachArgs = serde_json::from_value(args).map_err(|e| e.to_string())?;
            match check_admin(caller, args.admin_token.as_deref()) {
                Err(refused) => refused,
                Ok(()) => attach(caller, args)
                    .await
                    .unwrap_or_else(|why| failed(&why)),
            }
        }
        ProfileOp::Detach => {
            let args: DetachArgs = serde_json::from_value(args).map_err(|e| e.to_string())?;
            match check_admin(caller, args.admin_token.as_deref()) {
                Err(refused) => refused,
                Ok(()) => detach(caller, &args.alias)
                    .await
                    .unwrap_or_else(|why| failed(&why)),
            }
        }
        _ => return Err("not an upstream tool".to_owned()),
    })
}

/// dynamic-mcp's admin check: the feature needs a configured admin token, and every call
/// must carry it (compared in constant time).
fn check_admin(caller: &Caller<'_>, given: Option<&str>) -> Result<(), CallToolResult> {
    let Some(expected) = caller.admin_token() else {
        return Err(failed(
            "Unauthorized: upstream attach feature requires MCP_ADMIN_TOKEN to be configured.",
        ));
    };
    match given {
        Some(given)
            if !given.is_empty()
                && crate::auth::constant_time_eq(expected.as_bytes(), given.as_bytes()) =>
        {
            Ok(())
        }
        _ => Err(failed("Unauthorized: invalid admin token.")),
    }
}

/// The bridge's name for `alias`: lower-cased, other characters than `[a-z0-9_-]` as `_`.
fn server_name(alias: &str) -> Result<String, String> {
    let name: String = alias
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.len() > 32 {
        return Err(format!(
            "Alias \"{alias}\" is too long here: it becomes the MCP server name \"{name}\", and server names have at most 32 characters; choose a shorter alias."
        ));
    }
    Ok(name)
}

fn texts(map: Map<String, Value>, what: &str) -> Result<Map<String, Value>, String> {
    for (key, value) in &map {
        if !value.is_string() {
            return Err(format!("Field \"{what}.{key}\" must be a string."));
        }
    }
    Ok(map)
}

async fn attach(caller: &Caller<'_>, args: AttachArgs) -> Result<CallToolResult, String> {
    let name = server_name(&args.alias)?;
    let (config, target) = match args.transport.as_str() {
        "stdio" => {
            let Some(command) = args.command.clone() else {
                return Err("Field \"command\" is required when transport=stdio.".to_owned());
            };
            if args.cwd.is_some() {
                return Err("Field \"cwd\" is not supported: Toolsmith starts every registered MCP server in / (docs/mcp-bridge.md); leave cwd out and give absolute paths in args.".to_owned());
            }
            let config = json!({
                "name": name,
                "command": command,
                "args": args.args,
                "env": texts(args.env, "env")?
            });
            (config, command)
        }
        _ => {
            let Some(url) = args.url.clone() else {
                return Err("Field \"url\" is required when transport=http.".to_owned());
            };
            let config = json!({
                "name": name,
                "transport": "streamable_http",
                "url": url,
                "headers": texts(args.headers, "headers")?
            });
            (config, url)
        }
    };
    let config: McpServerRegistration =
        serde_json::from_value(config).map_err(|e| format!("Invalid upstream: {e}"))?;
    let service = caller.service();
    let actor = caller.actor();
    let existing = service.mcp_server(&name).ok();
    match &existing {
        Some(status) if status.source == ServerSource::Config => {
            return Err(format!(
                "Alias \"{}\" names the MCP server \"{name}\" of the configuration file, which only the file changes; choose another alias.",
                args.alias
            ));
        }
        Some(_) if !args.replace => {
            return Err(format!(
                "Alias \"{}\" is already attached. Set replace=true to re-attach.",
                args.alias
            ));
        }
        Some(_) => {}
        None => {
            let max = caller
                .shared()
                .state
                .config
                .compat_upstream_attach
                .unwrap_or(DEFAULT_ATTACH_MAX);
            let attached = service
                .mcp_servers()
                .iter()
                .filter(|s| s.source == ServerSource::Api)
                .count();
            if attached >= max {
                return Err(format!(
                    "Upstream attachment limit reached ({max}). Detach an existing alias first."
                ));
            }
        }
    }
    let registered = if existing.is_some() {
        service.update_mcp_server(&actor, config, None).await
    } else {
        service.register_mcp_server(&actor, config).await
    };
    registered.map_err(|e| refusal(&args.alias, e))?;
    let status = match connected(caller, &name).await {
        Ok(status) => status,
        Err(why) => {
            // Nothing half-attached stays behind.
            if let Err(e) = service.remove_mcp_server(&actor, &name).await {
                tracing::warn!(server = %name, error = %e, "could not remove a failed attachment");
            }
            return Err(format!(
                "Could not attach upstream MCP \"{}\": {why}",
                args.alias
            ));
        }
    };
    let prefix = format!("mcp_{}_", name.replace('-', "_"));
    let mut tool_names: Vec<String> = status
        .tools
        .iter()
        .map(|t| t.strip_prefix(&prefix).unwrap_or(t).to_owned())
        .collect();
    tool_names.sort();
    let output = json!({
        "alias": args.alias,
        "transport": args.transport,
        "target": target,
        "toolCount": tool_names.len(),
        "toolNames": tool_names,
        "attachedAt": Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
    });
    Ok(structured(pretty(&output), output))
}

/// A refused registration, in dynamic-mcp's words where it has them.
fn refusal(alias: &str, e: ServiceError) -> String {
    match e {
        ServiceError::NameTaken(_) => {
            format!("Alias \"{alias}\" is already attached. Set replace=true to re-attach.")
        }
        other => format!("Could not attach upstream MCP \"{alias}\": {other}"),
    }
}

/// Waits until the server `name` has connected and listed its tools (its status), or says
/// why it did not within its call timeout.
async fn connected(caller: &Caller<'_>, name: &str) -> Result<ServerStatus, String> {
    let service = caller.service();
    let deadline = tokio::time::Instant::now() + toolsmith_service::bridge::DEFAULT_CALL_TIMEOUT;
    let mut catalogue = service.registry().subscribe();
    loop {
        let status = service.mcp_server(name).map_err(|e| e.to_string())?;
        match status.state {
            ServerState::Connected if status.last_check.is_some() => return Ok(status),
            ServerState::Down | ServerState::Disabled => {
                return Err(status
                    .last_error
                    .unwrap_or_else(|| "the upstream is down".to_owned()));
            }
            _ => {}
        }
        if tokio::time::Instant::now() >= deadline {
            return Err("it did not connect and list its tools in time".to_owned());
        }
        // A new tool bumps the catalogue; the state is set just after, so look again soon.
        let _ = tokio::time::timeout(POLL, catalogue.changed()).await;
    }
}

async fn detach(caller: &Caller<'_>, alias: &str) -> Result<CallToolResult, String> {
    let name = server_name(alias)?;
    let service = caller.service();
    let detached = match service.mcp_server(&name) {
        Ok(status) if status.source == ServerSource::Api => {
            service
                .remove_mcp_server(&caller.actor(), &name)
                .await
                .map_err(|e| format!("Could not detach upstream MCP \"{alias}\": {e}"))?;
            true
        }
        _ => false,
    };
    let output = json!({"alias": alias, "detached": detached});
    Ok(structured(pretty(&output), output))
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}
