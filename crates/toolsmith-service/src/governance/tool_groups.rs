//! Tool groups switched on and off (003 "Tool Groups and Configuration"): which groups are
//! enabled given the policy's `tool_groups` switches, the built-ins that are therefore hidden,
//! and the views the faces show (REST `/api/v1/tool-groups`, CLI `toolsmith groups`).
//!
//! The switches live in the policy document, so they are configured, stored, audited and shared
//! between instances exactly as the policy is. A disabled group's tools stay registered (their
//! names stay reserved) but the registry hides them from every lookup and list.

use std::collections::{BTreeSet, HashSet};

use serde::Serialize;
use toolsmith_builtins::groups::{self, TOOL_GROUPS, ToolGroup};
use toolsmith_core::ToolRegistry;
use toolsmith_policy::{PolicyDocument, ToolGroupSwitches};

use crate::error::ServiceError;
use crate::input::Actor;

/// The ids of the enabled groups, after checking the switches: every name is a group id or
/// alias, and every enabled group's dependencies are enabled. Errors name the fix.
pub fn enabled_groups(switches: &ToolGroupSwitches) -> Result<BTreeSet<&'static str>, String> {
    let find = |name: &String, list: &str| {
        groups::find(name).ok_or_else(|| {
            let known: Vec<&str> = TOOL_GROUPS.iter().map(|g| g.id).collect();
            format!(
                "tool_groups.{list}: unknown group '{name}'; the groups are: {}",
                known.join(", ")
            )
        })
    };
    let mut enabled: BTreeSet<&'static str> = TOOL_GROUPS
        .iter()
        .filter(|g| g.default_enabled)
        .map(|g| g.id)
        .collect();
    for name in &switches.enable {
        enabled.insert(find(name, "enable")?.id);
    }
    for name in &switches.disable {
        enabled.remove(find(name, "disable")?.id);
    }
    for id in &enabled {
        let group = groups::find(id).map_or(&[][..], |g| g.depends_on);
        if let Some(missing) = group.iter().find(|dep| !enabled.contains(*dep)) {
            return Err(format!(
                "tool group '{id}' depends on '{missing}', which is disabled: enable \
                 '{missing}' too, or disable '{id}'"
            ));
        }
    }
    Ok(enabled)
}

/// The built-in tools of every group not in `enabled`.
pub fn hidden_tools(enabled: &BTreeSet<&'static str>) -> HashSet<String> {
    TOOL_GROUPS
        .iter()
        .filter(|g| !enabled.contains(g.id))
        .flat_map(|g| g.tools.iter().map(|t| (*t).to_owned()))
        .collect()
}

/// One group as the faces show it: the spec's `ToolGroupConfig` and its state here.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolGroupView {
    #[serde(flatten)]
    pub group: ToolGroup,
    pub enabled: bool,
    /// The group's tools this build implements (the spec's list may name more).
    pub available_tools: Vec<&'static str>,
}

/// The spec's `getToolStats()`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolGroupStats {
    pub total_groups: usize,
    pub total_tools: usize,
    pub enabled_by_default: usize,
    pub disabled_by_default: usize,
    /// Groups enabled here, now.
    pub enabled: usize,
    /// Built-in tools callers can reach now.
    pub enabled_tools: usize,
}

/// Every group with its state, in the spec's order.
pub fn views(enabled: &BTreeSet<&'static str>, registry: &ToolRegistry) -> Vec<ToolGroupView> {
    TOOL_GROUPS
        .iter()
        .map(|g| ToolGroupView {
            group: *g,
            enabled: enabled.contains(g.id),
            available_tools: g
                .tools
                .iter()
                .copied()
                .filter(|t| registry.is_builtin_name(t))
                .collect(),
        })
        .collect()
}

/// The counts of [`ToolGroupStats`].
pub fn stats(enabled: &BTreeSet<&'static str>, registry: &ToolRegistry) -> ToolGroupStats {
    let views = views(enabled, registry);
    ToolGroupStats {
        total_groups: views.len(),
        total_tools: views.iter().map(|v| v.available_tools.len()).sum(),
        enabled_by_default: views.iter().filter(|v| v.group.default_enabled).count(),
        disabled_by_default: views.iter().filter(|v| !v.group.default_enabled).count(),
        enabled: views.iter().filter(|v| v.enabled).count(),
        enabled_tools: views
            .iter()
            .filter(|v| v.enabled)
            .map(|v| v.available_tools.len())
            .sum(),
    }
}

impl crate::ToolService {
    /// Every tool group with its state here.
    pub fn tool_groups(&self) -> Vec<ToolGroupView> {
        views(&self.policy().enabled_groups(), self.registry())
    }

    /// One group by id or alias; `not_found` names the groups.
    pub fn tool_group(&self, id: &str) -> Result<ToolGroupView, ServiceError> {
        let group = groups::find(id).ok_or_else(|| unknown_group(id))?;
        Ok(self
            .tool_groups()
            .into_iter()
            .find(|v| v.group.id == group.id)
            .unwrap_or_else(|| unreachable!("every group has a view")))
    }

    /// The spec's `getToolStats()`, with what is enabled here.
    pub fn tool_group_stats(&self) -> ToolGroupStats {
        stats(&self.policy().enabled_groups(), self.registry())
    }

    /// The spec's `getEnabledTools()`: every built-in a caller can reach now, sorted.
    pub fn enabled_builtin_tools(&self) -> Vec<&'static str> {
        let mut tools: Vec<&'static str> = self
            .tool_groups()
            .into_iter()
            .filter(|v| v.enabled)
            .flat_map(|v| v.available_tools)
            .collect();
        tools.sort_unstable();
        tools
    }

    /// Switches a group on or off by storing the policy in force with the switch changed
    /// (audited as `policy.update`, shared with every instance as the policy is). Refused with
    /// the fix when a dependency would break.
    pub async fn set_tool_group(
        &self,
        actor: &Actor,
        id: &str,
        enabled: bool,
    ) -> Result<ToolGroupView, ServiceError> {
        let group = groups::find(id).ok_or_else(|| unknown_group(id))?;
        let view = self.policy_view().await?;
        let mut config: PolicyDocument = if view.policy.is_null() {
            PolicyDocument::default()
        } else {
            serde_json::from_value(view.policy)
                .map_err(|e| ServiceError::Validation(format!("the policy in force: {e}")))?
        };
        let switches = &mut config.tool_groups;
        let names = |name: &String| groups::find(name).is_some_and(|g| g.id == group.id);
        switches.enable.retain(|g| !names(g));
        switches.disable.retain(|g| !names(g));
        match (enabled, group.default_enabled) {
            (true, false) => switches.enable.push(group.id.to_owned()),
            (false, true) => switches.disable.push(group.id.to_owned()),
            _ => {}
        }
        let document = serde_json::to_value(&config)
            .map_err(|e| ServiceError::Validation(format!("the policy in force: {e}")))?;
        // Not over a policy someone else stored meanwhile (0: none is stored yet).
        let expected = if view.source == "store" {
            view.revision
        } else {
            0
        };
        self.set_policy(actor, document, Some(expected)).await?;
        self.tool_group(group.id)
    }
}

fn unknown_group(id: &str) -> ServiceError {
    let known: Vec<&str> = TOOL_GROUPS.iter().map(|g| g.id).collect();
    ServiceError::NotFound(format!(
        "no tool group '{id}'; the groups are: {}",
        known.join(", ")
    ))
}
