//! Tests of the family layout: every tool is in exactly one group, and the group is its provider.

use std::collections::BTreeSet;

use toolsmith_core::ToolOrigin;

use crate::groups::{TOOL_GROUPS, find, group_of};
use crate::{BuiltinEnv, tools};

#[test]
fn every_builtin_belongs_to_the_group_its_provider_names() {
    for tool in tools(&BuiltinEnv::default()) {
        let name = tool.name().to_owned();
        let ToolOrigin::BuiltIn { provider } = &tool.origin else {
            panic!("{name} is not a built-in");
        };
        let group = group_of(&name).unwrap_or_else(|| panic!("{name} is in no group"));
        assert_eq!(&group.id, provider, "{name}");
    }
}

#[test]
fn no_tool_is_in_two_groups_and_ids_and_aliases_are_unique() {
    let mut tools = BTreeSet::new();
    let mut names = BTreeSet::new();
    for group in TOOL_GROUPS {
        for tool in group.tools {
            assert!(tools.insert(*tool), "{tool} is in two groups");
        }
        for name in std::iter::once(&group.id).chain(group.aliases) {
            assert!(names.insert(*name), "group name {name} is used twice");
        }
    }
}

#[test]
fn dependencies_name_groups_that_exist_and_are_on_by_default() {
    for group in TOOL_GROUPS {
        for dep in group.depends_on {
            let dep = find(dep).unwrap_or_else(|| panic!("{}: unknown group {dep}", group.id));
            assert!(dep.default_enabled, "{} depends on {}", group.id, dep.id);
        }
        assert_eq!(
            group.default_enabled,
            group.disabled_reason.is_none(),
            "{}",
            group.id
        );
    }
    assert_eq!(find("fs").map(|g| g.id), Some("filesystem"));
    assert_eq!(find("runtime").map(|g| g.id), Some("codeExecution"));
    assert_eq!(find("web").map(|g| g.id), Some("webFetch"));
}
