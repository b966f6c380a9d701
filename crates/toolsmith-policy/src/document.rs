//! The policy document as the operator writes it: plain serde data, read from TOML or JSON,
//! checked only by [`PolicyDocument::compile`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The whole policy document.
///
/// Entries in every list are a tool name, `group:<name>`, or `*` (every tool).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyDocument {
    /// The global profile; `full` when no scope names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Global allow list: when non-empty, only these tools (within the profile).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Global deny list.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// Tools allowed in addition to the profile and allow lists (never over a deny).
    #[serde(alias = "alsoAllow", skip_serializing_if = "Vec::is_empty")]
    pub also_allow: Vec<String>,
    /// Per-agent scopes, by agent id.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, ScopePolicy>,
    /// Per-user scopes, by user id.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub users: BTreeMap<String, ScopePolicy>,
    /// User-defined groups, referenced as `group:<name>`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, Vec<String>>,
    /// User-defined profiles.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub profiles: BTreeMap<String, Vec<String>>,
    /// Restrictions for subagents.
    pub subagents: SubagentPolicy,
    /// Built-in tool groups switched on or off against their defaults. A disabled group's
    /// tools do not exist for any caller; the integrator checks the ids.
    #[serde(
        alias = "toolGroups",
        skip_serializing_if = "ToolGroupSwitches::is_empty"
    )]
    pub tool_groups: ToolGroupSwitches,
}

/// Which built-in tool groups differ from their defaults (003 `defaultEnabled`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolGroupSwitches {
    /// Groups switched on (the disabled-by-default ones: `codeExecution`, `webFetch` …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enable: Vec<String>,
    /// Groups switched off. A group in both lists is off.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub disable: Vec<String>,
}

impl ToolGroupSwitches {
    /// Whether every group is at its default.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.enable.is_empty() && self.disable.is_empty()
    }
}

/// The policy of one user or agent; it narrows and extends the global one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScopePolicy {
    /// Replaces the profile of the wider scopes (agent over user over global).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    #[serde(alias = "alsoAllow", skip_serializing_if = "Vec::is_empty")]
    pub also_allow: Vec<String>,
}

/// The brief's name for a scope policy; users and agents share one shape.
pub type AgentPolicy = ScopePolicy;

/// Tools denied to subagents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubagentPolicy {
    /// Denied at every depth ≥ 1.
    #[serde(alias = "alwaysDeny")]
    pub always_deny: Vec<String>,
    /// Denied at the deepest allowed level (depth ≥ 1 and depth = `max_depth`).
    #[serde(alias = "leafDeny")]
    pub leaf_deny: Vec<String>,
    /// The deepest allowed subagent level; a caller deeper than this is denied everything.
    #[serde(alias = "maxDepth")]
    pub max_depth: u32,
}

impl Default for SubagentPolicy {
    fn default() -> Self {
        Self {
            always_deny: Vec::new(),
            leaf_deny: Vec::new(),
            max_depth: 1,
        }
    }
}
