//! dynamic-mcp's feature profiles under `--compat dynamic-mcp`, chosen as dynamic-mcp chooses
//! them (`--compat-profile`, or its own `MCP_PROFILE`; default `mvp`):
//!
//! - `mvp`: `system.health`, the `dynamic.tool.*` control plane, `run_js_ephemeral` and the
//!   dynamic tools (besides Toolsmith's own tools, which every mode lists);
//! - `enterprise`: also `dev.echo`, `time.now`, `system.guard_metrics`,
//!   `system.runtime_config` ([`super::system`]), the `sandbox.*` session names
//!   ([`super::sandbox`]), its 3 resources and 1 prompt ([`super::resources`]), and — with
//!   `MCP_EXPERIMENTAL_UPSTREAM_MCP_ATTACH` — `upstream.mcp.attach` / `detach`
//!   ([`super::upstream`]).
//!
//! A name the profile does not serve is neither listed nor callable ("Unknown tool"), and the
//! mvp profile advertises no resources or prompts (their methods answer "Method not found").
//! These tools answer in dynamic-mcp's own shapes (its `structuredContent` and text), not in
//! the `{ok, result}` shape of its dynamic tools.

use std::time::Instant;

use rmcp::model::{CallToolResult, ToolAnnotations};
use serde_json::Value;

use super::system::Guard;
use crate::mcp::catalog::ServerOp;
use crate::mcp::handler::Caller;

/// dynamic-mcp's feature profile (`MCP_PROFILE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompatProfile {
    /// dynamic-mcp's default: the control plane, `run_js_ephemeral` and `system.health`.
    #[default]
    Mvp,
    /// Everything of `mvp`, plus the operator tools, sandbox sessions, resources and prompt.
    Enterprise,
}

impl CompatProfile {
    pub fn as_str(self) -> &'static str {
        match self {
            CompatProfile::Mvp => "mvp",
            CompatProfile::Enterprise => "enterprise",
        }
    }
}

impl std::str::FromStr for CompatProfile {
    type Err = String;

    /// dynamic-mcp's parse: trimmed, any case.
    fn from_str(value: &str) -> Result<Self, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "mvp" => Ok(CompatProfile::Mvp),
            "enterprise" => Ok(CompatProfile::Enterprise),
            _ => Err(format!(
                "Invalid MCP profile \"{value}\". Expected \"mvp\" or \"enterprise\"."
            )),
        }
    }
}

/// What the compat mode of one server serves: its profile, and whether upstream attach is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Surface {
    pub profile: CompatProfile,
    pub upstream_attach: bool,
}

impl Surface {
    pub fn of(config: &crate::ServerSettings) -> Surface {
        Surface {
            profile: config.compat_profile,
            upstream_attach: config.compat_upstream_attach.is_some(),
        }
    }

    pub fn enterprise(self) -> bool {
        self.profile == CompatProfile::Enterprise
    }
}

/// Whether a compat mode with `surface` serves the server tool `op`.
pub(crate) fn serves(op: ServerOp, surface: Surface) -> bool {
    match op {
        ServerOp::Compat(super::Op::Sandbox(_)) => surface.enterprise(),
        ServerOp::Profile(op) => match op {
            ProfileOp::Health => true,
            ProfileOp::Attach | ProfileOp::Detach => {
                surface.enterprise() && surface.upstream_attach
            }
            _ => surface.enterprise(),
        },
        _ => true,
    }
}

/// Whether dynamic-mcp's execution guard counts calls of the server tool `op`
/// (`run_js_ephemeral`, the sandbox sessions, upstream attach and detach; its dynamic tools
/// are counted too, by the handler).
pub(crate) fn guarded(op: ServerOp) -> bool {
    matches!(
        op,
        ServerOp::Compat(super::Op::RunEphemeral | super::Op::Sandbox(_))
            | ServerOp::Profile(ProfileOp::Attach | ProfileOp::Detach)
    )
}

/// A tool of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProfileOp {
    Health,
    Echo,
    TimeNow,
    GuardMetrics,
    RuntimeConfig,
    Attach,
    Detach,
}

impl ProfileOp {
    /// The scope a caller needs (attach and detach also need the admin token as an argument).
    pub fn scope(self) -> crate::auth::Scope {
        match self {
            ProfileOp::Attach | ProfileOp::Detach => crate::auth::Scope::ToolsWrite,
            _ => crate::auth::Scope::ToolsRead,
        }
    }

    /// dynamic-mcp's title of the tool.
    pub fn title(self) -> &'static str {
        match self {
            ProfileOp::Health => "System Health",
            ProfileOp::Echo => "Developer Echo",
            ProfileOp::TimeNow => "Current Time",
            ProfileOp::GuardMetrics => "Guard Metrics",
            ProfileOp::RuntimeConfig => "Runtime Config Snapshot",
            ProfileOp::Attach => "Attach Upstream MCP",
            ProfileOp::Detach => "Detach Upstream MCP",
        }
    }

    pub fn annotations(self) -> Option<ToolAnnotations> {
        match self {
            ProfileOp::Attach | ProfileOp::Detach => None,
            _ => Some(ToolAnnotations::new().read_only(true).open_world(false)),
        }
    }
}

/// A profile tool: `(op, name, description, input schema, output schema)`.
pub(crate) type Definition = (ProfileOp, &'static str, &'static str, Value, Value);

/// Every profile tool, in dynamic-mcp's order.
pub(crate) fn definitions() -> Vec<Definition> {
    super::system::definitions()
        .into_iter()
        .chain(super::upstream::definitions())
        .collect()
}

/// What every session of one server shares for the profiles: when it started, and the
/// execution counters of `system.guard_metrics`.
pub(crate) struct ProfileState {
    pub started: Instant,
    pub guard: Guard,
}

impl Default for ProfileState {
    fn default() -> Self {
        ProfileState {
            started: Instant::now(),
            guard: Guard::default(),
        }
    }
}

/// Runs a profile tool on arguments already checked against its schema.
pub(crate) async fn call(
    caller: &Caller<'_>,
    op: ProfileOp,
    args: Value,
) -> Result<CallToolResult, String> {
    match op {
        ProfileOp::Attach | ProfileOp::Detach => super::upstream::call(caller, op, args).await,
        _ => super::system::call(caller, op, args).await,
    }
}
