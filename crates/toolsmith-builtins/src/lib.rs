//! Built-in tools, grouped as the spec's tool groups ([`groups`]). Each family is one module:
//! [`core`] holds the pure utilities, [`files`] the file tools on the caller's [`workspace`].
//!
//! To add a tool: write it in its family's module, add it to that family's `tools()`, and list
//! its name in its group in [`groups::TOOL_GROUPS`] (the group is its provider).

pub mod core;
pub mod files;
pub mod groups;
pub mod workspace;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use toolsmith_core::{RegisteredTool, RegistryError, ToolRegistry};

/// What the built-ins need from the server that runs them. Families that touch the world
/// (files, processes, the network) take their handles from here.
#[derive(Debug, Clone, Default)]
pub struct BuiltinEnv {
    /// Every user's workspace; `None` when the server has none configured, and then the file
    /// tools answer with the setting to change.
    pub workspaces: Option<Arc<workspace::Workspaces>>,
}

/// Every built-in tool of every family, whether its group is enabled or not.
#[must_use]
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    let mut tools = core::tools();
    tools.extend(files::tools(env));
    tools
}

/// Registers every built-in family. Fails only if a name is registered twice.
pub fn register_all(registry: &ToolRegistry, env: &BuiltinEnv) -> Result<(), RegistryError> {
    tools(env)
        .into_iter()
        .try_for_each(|tool| registry.register_builtin(tool))
}
