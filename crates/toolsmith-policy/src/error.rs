//! The policy engine's error type: everything that makes a policy document fail to compile.

/// Why a [`crate::PolicyDocument`] does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    #[error("unknown profile '{name}' in {scope}")]
    UnknownProfile { name: String, scope: String },
    #[error("unknown group '{name}' in {place}")]
    UnknownGroup { name: String, place: String },
    #[error("invalid entry '{entry}' in {place}: {why}")]
    InvalidEntry {
        entry: String,
        place: String,
        why: &'static str,
    },
    #[error("user-defined {what} '{name}' takes the name of a built-in one")]
    ShadowsBuiltin { what: &'static str, name: String },
    #[error("group '{name}' contains itself (through {path})")]
    GroupCycle { name: String, path: String },
    /// The `tool_groups` switches name an unknown group or break a dependency (checked by the
    /// integrator, which knows the groups).
    #[error("{0}")]
    ToolGroups(String),
}

impl PolicyError {
    /// A stable machine-readable code.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownProfile { .. } => "unknown_profile",
            Self::UnknownGroup { .. } => "unknown_group",
            Self::InvalidEntry { .. } => "invalid_entry",
            Self::ShadowsBuiltin { .. } => "shadows_builtin",
            Self::GroupCycle { .. } => "group_cycle",
            Self::ToolGroups(_) => "tool_groups",
        }
    }
}
