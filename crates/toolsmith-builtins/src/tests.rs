//! Tests of the family layout: every tool is in exactly one group, of the family that makes it,
//! and the group is its provider.

use std::collections::BTreeSet;

use toolsmith_core::ToolOrigin;

use crate::groups::{SPEC_ORDER, TOOL_GROUPS, find, group_of};
use crate::{BuiltinEnv, FAMILIES, tools};

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
    for group in TOOL_GROUPS.iter() {
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
    for group in TOOL_GROUPS.iter() {
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

#[test]
fn each_family_makes_exactly_the_tools_its_groups_list() {
    let env = BuiltinEnv::default();
    for family in FAMILIES {
        let made: BTreeSet<String> = (family.tools)(&env)
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let listed: BTreeSet<String> = family
            .groups
            .iter()
            .flat_map(|g| g.tools.iter().map(|t| (*t).to_owned()))
            .collect();
        assert_eq!(made, listed, "family {}", family.name);
    }
}

#[test]
fn the_group_table_holds_every_familys_groups_in_the_specs_order() {
    let ids: Vec<&str> = TOOL_GROUPS.iter().map(|g| g.id).collect();
    assert!(
        ids.starts_with(SPEC_ORDER),
        "the spec's groups come first, in its order: {ids:?}"
    );
    let declared: usize = FAMILIES.iter().map(|f| f.groups.len()).sum();
    assert_eq!(TOOL_GROUPS.len(), declared);
}
