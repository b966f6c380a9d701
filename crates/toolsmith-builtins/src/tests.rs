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

/// Every enum of every built-in's input schema says what its values mean: each value is named
/// in the property's description (where the meaning is given), unless the whole set is one of
/// the few a model reads without help (issue 35: "about 6 enums are never explained").
#[test]
fn every_enum_of_every_builtin_explains_its_values() {
    /// Value sets whose meaning is the word itself: kept small on purpose.
    const SELF_EVIDENT: &[&[&str]] = &[
        &["GET", "POST", "PUT", "PATCH", "DELETE"],
        &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"],
        &["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
        &["asc", "desc"],
    ];
    fn unexplained(path: &str, schema: &serde_json::Value, out: &mut Vec<String>) {
        let description = schema
            .get("description")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_lowercase();
        if let Some(values) = schema.get("enum").and_then(serde_json::Value::as_array) {
            let values: Vec<String> = values
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            let evident = SELF_EVIDENT.iter().any(|set| {
                set.iter()
                    .map(|s| (*s).to_owned())
                    .eq(values.iter().cloned())
            });
            let missing: Vec<&String> = values
                .iter()
                .filter(|v| !description.contains(&v.to_lowercase()))
                .collect();
            if !evident && !missing.is_empty() {
                out.push(format!(
                    "{path}: {missing:?} not explained in {description:?}"
                ));
            }
        }
        if let Some(props) = schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
        {
            for (name, prop) in props {
                unexplained(&format!("{path}.{name}"), prop, out);
            }
        }
        if let Some(items) = schema.get("items") {
            // An array's enum is described on the array.
            let mut items = items.clone();
            if items.get("description").is_none()
                && let Some(object) = items.as_object_mut()
            {
                object.insert("description".to_owned(), description.clone().into());
            }
            unexplained(&format!("{path}[]"), &items, out);
        }
        for key in ["anyOf", "oneOf"] {
            for (i, branch) in schema
                .get(key)
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let mut branch = branch.clone();
                if branch.get("description").is_none()
                    && let Some(object) = branch.as_object_mut()
                {
                    object.insert("description".to_owned(), description.clone().into());
                }
                unexplained(&format!("{path}.{key}[{i}]"), &branch, out);
            }
        }
    }
    let mut missing = Vec::new();
    for tool in tools(&BuiltinEnv::default()) {
        unexplained(tool.name(), &tool.definition.parameters, &mut missing);
    }
    assert!(
        missing.is_empty(),
        "{} enums not explained: {missing:#?}",
        missing.len()
    );
}
