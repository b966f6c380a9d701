//! [`PolicyDocument::compile`]: checks a policy document against the catalog and resolves every entry,
//! profile and group, so deciding needs no lookups that can fail.
//! Also defines what the built-in profiles contain.

use std::collections::BTreeMap;

use crate::entry::{Resolver, ToolSet};
use crate::policy::{Profile, Rules, Scope};
use crate::{BUILTIN_PROFILES, GroupCatalog, Policy, PolicyDocument, PolicyError, ScopePolicy};

impl PolicyDocument {
    /// Checks this document and resolves it into a [`Policy`].
    ///
    /// # Errors
    /// An unknown profile or group, an invalid entry, a user-defined group or profile that takes a
    /// built-in name, or a group that contains itself. Nothing falls back to "allow everything".
    pub fn compile(&self, catalog: &GroupCatalog) -> Result<Policy, PolicyError> {
        let resolver = Resolver::new(catalog, &self.groups);
        for name in self.groups.keys() {
            if resolver.is_builtin_group(name) {
                return Err(PolicyError::ShadowsBuiltin {
                    what: "group",
                    name: name.clone(),
                });
            }
            // Resolve every group, used or not, so a broken one is reported now.
            resolver.union(&[format!("group:{name}")], "groups")?;
        }
        let mut profiles: BTreeMap<String, ToolSet> = BUILTIN_PROFILES
            .iter()
            .map(|name| ((*name).to_owned(), builtin_profile(name, catalog)))
            .collect();
        for (name, entries) in &self.profiles {
            if BUILTIN_PROFILES.contains(&name.as_str()) {
                return Err(PolicyError::ShadowsBuiltin {
                    what: "profile",
                    name: name.clone(),
                });
            }
            profiles.insert(
                name.clone(),
                resolver.union(entries, &format!("profile '{name}'"))?,
            );
        }
        let global_policy = ScopePolicy {
            profile: self.profile.clone(),
            allow: self.allow.clone(),
            deny: self.deny.clone(),
            also_allow: self.also_allow.clone(),
        };
        let global = scope(
            "the global policy".to_owned(),
            &global_policy,
            &resolver,
            &profiles,
        )?;
        let mut users = BTreeMap::new();
        for (user, policy) in &self.users {
            users.insert(
                user.clone(),
                scope(format!("user '{user}'"), policy, &resolver, &profiles)?,
            );
        }
        let mut agents = BTreeMap::new();
        for (agent, policy) in &self.agents {
            agents.insert(
                agent.clone(),
                scope(format!("agent '{agent}'"), policy, &resolver, &profiles)?,
            );
        }
        Ok(Policy::from_rules(Rules {
            global,
            users,
            agents,
            always_deny: resolver.entries(&self.subagents.always_deny, "subagents.always_deny")?,
            leaf_deny: resolver.entries(&self.subagents.leaf_deny, "subagents.leaf_deny")?,
            max_depth: self.subagents.max_depth,
        }))
    }
}

fn scope(
    label: String,
    policy: &ScopePolicy,
    resolver: &Resolver<'_>,
    profiles: &BTreeMap<String, ToolSet>,
) -> Result<Scope, PolicyError> {
    let profile = match &policy.profile {
        None => None,
        Some(name) => {
            let Some(set) = profiles.get(name) else {
                return Err(PolicyError::UnknownProfile {
                    name: name.clone(),
                    scope: label,
                });
            };
            Some(Profile {
                name: name.clone(),
                set: set.clone(),
            })
        }
    };
    Ok(Scope {
        allow: resolver.entries(&policy.allow, &format!("allow of {label}"))?,
        deny: resolver.entries(&policy.deny, &format!("deny of {label}"))?,
        also_allow: resolver.entries(&policy.also_allow, &format!("also_allow of {label}"))?,
        profile,
        label,
    })
}

/// What a built-in profile contains. Families the catalog lacks are left out, so every built-in
/// profile compiles against any catalog; aliases (`fs`, `runtime`) name their families.
///
/// - `full`: every tool.
/// - `minimal`: the `core` family (pure utilities: time, arithmetic, ids, hashes, encodings).
/// - `coding`: the utilities, files (`fs`), code execution (`runtime`), `git`, `memory`,
///   `data` and every custom tool — GoClaw's `coding` with what Toolsmith has.
/// - `messaging`: `core` and `messaging`.
fn builtin_profile(name: &str, catalog: &GroupCatalog) -> ToolSet {
    let (families, custom): (&[&str], bool) = match name {
        "full" => return ToolSet::all(),
        "minimal" => (&["core"], false),
        "coding" => (CODING, true),
        "messaging" => (&["core", "messaging"], false),
        _ => (&[], false),
    };
    ToolSet::of_families(
        families
            .iter()
            .map(|f| catalog.family(f))
            .filter(|f| catalog.families.contains(*f)),
        custom,
    )
}

/// The families of the `coding` profile.
const CODING: &[&str] = &[
    "core",
    "textUtils",
    "dateTime",
    "conversion",
    "generation",
    "validation",
    "listOps",
    "mathStats",
    "fs",
    "runtime",
    "git",
    "memory",
    "data",
];
