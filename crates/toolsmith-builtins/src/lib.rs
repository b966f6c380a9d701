//! Built-in tools, grouped in families (providers). The seed family `core` proves the two-tier
//! design: `get_current_datetime`, `calculate`, `generate_uuid`, `hash_text`, `encode_decode`.

pub mod core;

use toolsmith_core::{RegistryError, ToolRegistry};

/// Registers every built-in family. Fails only if a name is registered twice.
pub fn register_all(registry: &ToolRegistry) -> Result<(), RegistryError> {
    core::register(registry)
}
