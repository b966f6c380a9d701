//! The tool groups of the spec (003 "Tool Groups and Configuration"): which built-in tool
//! belongs to which group, which groups are on out of the box, and what a group needs.
//!
//! Each family declares its own groups (`GROUPS` in its module, made with [`on`] or [`off`]);
//! [`TOOL_GROUPS`] gathers them from [`crate::FAMILIES`], in the spec's order ([`SPEC_ORDER`]).
//! A built-in tool's provider (`ToolOrigin::BuiltIn { provider }`) is the id of its group, so
//! the policy's `group:<id>` names the same tools. GoClaw's groups (001 §5: `fs`, `runtime`,
//! `web`) are aliases of the groups they match.
//!
//! To add a tool: implement it in its family's module, then list its name in its group in the
//! family's `GROUPS`; `every_builtin_belongs_to_the_group_its_provider_names` fails until both
//! agree.

use std::sync::LazyLock;

use serde::Serialize;
use toolsmith_core::ResultSource;

/// One group, in the spec's `ToolGroupConfig` shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolGroup {
    pub id: &'static str,
    pub name: &'static str,
    pub description: &'static str,
    /// Whether the group is on when the configuration says nothing about it.
    pub default_enabled: bool,
    pub tools: &'static [&'static str],
    /// Groups that must be on for this one to be enabled.
    pub depends_on: &'static [&'static str],
    /// Other names of this group (GoClaw's), accepted wherever a group id is.
    pub aliases: &'static [&'static str],
    /// Why the group is off by default; `None` for the default-enabled ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_reason: Option<&'static str>,
    /// Where its tools' results come from, which decides how they are scrubbed:
    /// [`ResultSource::UserData`] only if they answer with the user's own data or with values
    /// made from the call's own arguments (then only the exact platform secrets are scrubbed, so
    /// a note, a file or a generated password round-trips unchanged); [`ResultSource::External`]
    /// for anything that brings back text from outside (code, the web, git, a run's history),
    /// where the credential patterns apply too. Not part of the spec's shape.
    #[serde(skip)]
    pub results: ResultSource,
}

/// A group that is on by default: `id`, its display `name`, its `description`, where its
/// results come from, and its `tools`. Add `depends_on` or `aliases` with
/// `ToolGroup { aliases: &["fs"], ..on(…) }`.
#[must_use]
pub const fn on(
    id: &'static str,
    name: &'static str,
    description: &'static str,
    results: ResultSource,
    tools: &'static [&'static str],
) -> ToolGroup {
    ToolGroup {
        id,
        name,
        description,
        default_enabled: true,
        tools,
        depends_on: &[],
        aliases: &[],
        disabled_reason: None,
        results,
    }
}

/// A group that is off until an admin enables it, with the `reason` it is off (shown to
/// callers and admins); otherwise as [`on`].
#[must_use]
pub const fn off(
    id: &'static str,
    name: &'static str,
    description: &'static str,
    reason: &'static str,
    results: ResultSource,
    tools: &'static [&'static str],
) -> ToolGroup {
    ToolGroup {
        default_enabled: false,
        disabled_reason: Some(reason),
        ..on(id, name, description, results, tools)
    }
}

/// The order in which the spec (003) lists its groups, which is the order every face lists
/// them in. A group not named here (one the spec does not have) comes after these, in the
/// order of [`crate::FAMILIES`].
pub const SPEC_ORDER: &[&str] = &[
    "core",
    "filesystem",
    "tasks",
    "bookmarks",
    "notes",
    "calendar",
    "contacts",
    "customData",
    "memory",
    "finance",
    "goals",
    "textUtils",
    "dateTime",
    "conversion",
    "generation",
    "validation",
    "listOps",
    "mathStats",
    "codeExecution",
    "webFetch",
    "email",
    "weather",
    "git",
    "pdf",
    "image",
    "audio",
    "dataExtraction",
    "translation",
    "vectorSearch",
    "scheduler",
];

/// Every group of every family, in the spec's order ([`SPEC_ORDER`]).
pub static TOOL_GROUPS: LazyLock<Vec<ToolGroup>> = LazyLock::new(|| {
    let mut groups: Vec<ToolGroup> = crate::FAMILIES
        .iter()
        .flat_map(|family| family.groups.iter().copied())
        .collect();
    // A stable sort: groups outside the spec keep their families' order, after the spec's.
    groups.sort_by_key(|g| {
        SPEC_ORDER
            .iter()
            .position(|id| *id == g.id)
            .unwrap_or(usize::MAX)
    });
    groups
});

/// The group with this id or alias (`fs` is `filesystem`).
#[must_use]
pub fn find(id_or_alias: &str) -> Option<&'static ToolGroup> {
    TOOL_GROUPS
        .iter()
        .find(|g| g.id == id_or_alias || g.aliases.contains(&id_or_alias))
}

/// The group a built-in tool belongs to.
#[must_use]
pub fn group_of(tool: &str) -> Option<&'static ToolGroup> {
    TOOL_GROUPS.iter().find(|g| g.tools.contains(&tool))
}

/// What a caller of the built-in `tool` is told while its group is disabled: which group, and
/// how an admin enables it.
#[must_use]
pub fn disabled_message(tool: &str) -> String {
    let group = group_of(tool).map_or("its", |g| g.id);
    format!(
        "tool '{tool}' is in the tool group '{group}', which is disabled on this server; an admin enables it with `toolsmith groups enable {group}` (or PUT /api/v1/tool-groups/{group})"
    )
}
