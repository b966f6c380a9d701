//! Built-in tools, grouped as the spec's tool groups ([`groups`]). Each family is one module:
//! [`core`] holds the pure utilities.
//!
//! To add a tool: write it in its family's module, add it to that family's `tools()`, and list
//! its name in its group in [`groups::TOOL_GROUPS`] (the group is its provider).

pub mod core;
pub mod groups;

#[cfg(test)]
mod tests;

use toolsmith_core::{RegisteredTool, RegistryError, ToolRegistry};

/// What the built-ins need from the server that runs them. Families that touch the world
/// (files, processes, the network) take their handles from here.
#[derive(Debug, Clone, Default)]
pub struct BuiltinEnv {}

/// Every built-in tool of every family, whether its group is enabled or not.
#[must_use]
pub fn tools(_env: &BuiltinEnv) -> Vec<RegisteredTool> {
    core::tools()
}

/// Registers every built-in family. Fails only if a name is registered twice.
pub fn register_all(registry: &ToolRegistry) -> Result<(), RegistryError> {
    tools(&BuiltinEnv::default())
        .into_iter()
        .try_for_each(|tool| registry.register_builtin(tool))
}
