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

#[test]
fn each_family_states_one_effect_for_each_of_its_tools() {
    for family in FAMILIES {
        let listed: BTreeSet<&str> = family
            .groups
            .iter()
            .flat_map(|g| g.tools.iter().copied())
            .collect();
        let stated: Vec<&str> = family
            .effects
            .iter()
            .flat_map(|(_, tools)| tools.iter().copied())
            .collect();
        let distinct: BTreeSet<&str> = stated.iter().copied().collect();
        assert_eq!(
            stated.len(),
            distinct.len(),
            "family {}: a tool under two effects in EFFECTS",
            family.name
        );
        assert_eq!(
            distinct, listed,
            "family {}: EFFECTS must name exactly the tools of its GROUPS",
            family.name
        );
    }
}

/// The annotations a client reads are what the tool does: a tool named for a change is never
/// read-only, one that deletes is destructive, and only one that reaches the network is open
/// world.
#[test]
fn every_builtin_carries_annotations_computed_from_what_it_does() {
    const CHANGE_WORDS: &[&str] = &[
        "add",
        "create",
        "write",
        "edit",
        "update",
        "delete",
        "remove",
        "complete",
        "move",
        "copy",
        "forget",
        "remember",
        "boost",
        "trigger",
        "execute",
        "exec",
        "run",
        "commit",
        "checkout",
        "download",
        "decompose",
        "stop",
        "initialize",
        "install",
    ];
    const DELETE_WORDS: &[&str] = &["delete", "remove", "forget", "drop", "stop"];
    let all = tools(&BuiltinEnv::default());
    assert!(all.len() > 100, "every family's tools: {}", all.len());
    for tool in &all {
        let name = tool.name();
        let hints = tool
            .definition
            .annotations
            .as_ref()
            .unwrap_or_else(|| panic!("{name} has no annotations"));
        let flag = |key: &str| {
            hints
                .get(key)
                .and_then(serde_json::Value::as_bool)
                .unwrap_or_else(|| panic!("{name}: {key} is not stated: {hints}"))
        };
        let read_only = flag("readOnlyHint");
        // The verb: the first word, or the one after a prefix (`batch_add_…`, `git_commit`).
        let words: Vec<&str> = name.split('_').collect();
        let verb = match words.as_slice() {
            ["batch" | "git" | "sandbox", verb, ..] | [verb, ..] => *verb,
            [] => "",
        };
        if CHANGE_WORDS.contains(&verb) {
            assert!(!read_only, "{name} changes something: not read-only");
        }
        if DELETE_WORDS.contains(&verb) {
            assert!(flag("destructiveHint"), "{name} deletes: destructive");
        }
        if !read_only {
            flag("destructiveHint");
            flag("idempotentHint");
        }
        assert_eq!(
            flag("openWorldHint"),
            tool.permissions
                .contains(&toolsmith_core::Permission::Network),
            "{name}: open world exactly when it holds network"
        );
        assert!(
            tool.definition
                .title
                .as_deref()
                .is_some_and(|t| !t.is_empty()),
            "{name} has a title"
        );
    }
    let hint = |name: &str, key: &str| {
        all.iter()
            .find(|t| t.name() == name)
            .and_then(|t| t.definition.annotations.as_ref())
            .and_then(|a| a.get(key))
            .cloned()
    };
    assert_eq!(hint("read_file", "readOnlyHint"), Some(true.into()));
    assert_eq!(hint("delete_file", "destructiveHint"), Some(true.into()));
    assert_eq!(hint("fetch_web_page", "openWorldHint"), Some(true.into()));
    assert_eq!(hint("add_task", "idempotentHint"), Some(false.into()));
}

/// Every property of every built-in's input schema, nested ones included, tells a model what
/// it is for (issue 35 counted 29 in 13 tools without one).
#[test]
fn every_parameter_of_every_builtin_is_described() {
    fn undescribed(path: &str, schema: &serde_json::Value, out: &mut Vec<String>) {
        if let Some(props) = schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
        {
            for (name, prop) in props {
                let here = format!("{path}.{name}");
                let described = prop
                    .get("description")
                    .and_then(serde_json::Value::as_str)
                    .is_some_and(|d| !d.trim().is_empty());
                if !described {
                    out.push(here.clone());
                }
                undescribed(&here, prop, out);
            }
        }
        if let Some(items) = schema.get("items") {
            undescribed(&format!("{path}[]"), items, out);
        }
    }
    let mut missing = Vec::new();
    for tool in tools(&BuiltinEnv::default()) {
        undescribed(tool.name(), &tool.definition.parameters, &mut missing);
    }
    assert!(
        missing.is_empty(),
        "{} undescribed: {missing:#?}",
        missing.len()
    );
}
