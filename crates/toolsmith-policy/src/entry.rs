//! Entries (`name`, `group:x`, `*`) and their resolution, through the catalog and the user-defined
//! groups, into a [`ToolSet`] that answers membership in constant-ish time.

use std::collections::{BTreeMap, BTreeSet};

use crate::{GroupCatalog, PolicyError, ToolInfo, ToolKind};

/// The built-in group names that are not families.
pub(crate) const RESERVED_GROUPS: &[&str] = &["builtin", "custom", "mcp"];

/// A set of tools, described by what its members are rather than by listing them, so tools
/// created after compilation are covered too.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ToolSet {
    all: bool,
    builtin: bool,
    custom: bool,
    mcp: bool,
    names: BTreeSet<String>,
    families: BTreeSet<String>,
    mcp_servers: BTreeSet<String>,
}

impl ToolSet {
    pub(crate) fn all() -> Self {
        Self {
            all: true,
            ..Self::default()
        }
    }

    /// The built-in families among `families`, plus all custom tools if `custom`.
    pub(crate) fn of_families<'f>(
        families: impl IntoIterator<Item = &'f str>,
        custom: bool,
    ) -> Self {
        Self {
            custom,
            families: families.into_iter().map(str::to_owned).collect(),
            ..Self::default()
        }
    }

    pub(crate) fn contains(&self, tool: &ToolInfo<'_>) -> bool {
        if self.all || self.names.contains(tool.name) {
            return true;
        }
        match tool.kind {
            ToolKind::Builtin { family } => self.builtin || self.families.contains(family),
            ToolKind::Custom => self.custom,
            ToolKind::Mcp { server } => self.mcp || self.mcp_servers.contains(server),
        }
    }

    pub(crate) fn extend(&mut self, other: &ToolSet) {
        self.all |= other.all;
        self.builtin |= other.builtin;
        self.custom |= other.custom;
        self.mcp |= other.mcp;
        self.names.extend(other.names.iter().cloned());
        self.families.extend(other.families.iter().cloned());
        self.mcp_servers.extend(other.mcp_servers.iter().cloned());
    }
}

/// One configured entry, resolved.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) text: String,
    pub(crate) set: ToolSet,
}

/// Resolves entries against the catalog and the user-defined groups.
pub(crate) struct Resolver<'c> {
    catalog: &'c GroupCatalog,
    user_groups: &'c BTreeMap<String, Vec<String>>,
}

impl<'c> Resolver<'c> {
    pub(crate) fn new(
        catalog: &'c GroupCatalog,
        user_groups: &'c BTreeMap<String, Vec<String>>,
    ) -> Self {
        Self {
            catalog,
            user_groups,
        }
    }

    /// Resolves a list; `place` names it in errors ("deny of agent 'x'").
    pub(crate) fn entries(&self, texts: &[String], place: &str) -> Result<Vec<Entry>, PolicyError> {
        texts
            .iter()
            .map(|text| {
                Ok(Entry {
                    text: text.clone(),
                    set: self.entry(text, place, &mut Vec::new())?,
                })
            })
            .collect()
    }

    /// The union of a list, for profiles and groups.
    pub(crate) fn union(&self, texts: &[String], place: &str) -> Result<ToolSet, PolicyError> {
        self.union_inner(texts, place, &mut Vec::new())
    }

    fn union_inner(
        &self,
        texts: &[String],
        place: &str,
        stack: &mut Vec<String>,
    ) -> Result<ToolSet, PolicyError> {
        let mut res = ToolSet::default();
        for text in texts {
            res.extend(&self.entry(text, place, stack)?);
        }
        Ok(res)
    }

    fn entry(
        &self,
        text: &str,
        place: &str,
        stack: &mut Vec<String>,
    ) -> Result<ToolSet, PolicyError> {
        let invalid = |why| PolicyError::InvalidEntry {
            entry: text.to_owned(),
            place: place.to_owned(),
            why,
        };
        if text == "*" {
            return Ok(ToolSet::all());
        }
        if let Some(group) = text.strip_prefix("group:") {
            return self.group(group, place, stack);
        }
        if text.trim().is_empty() {
            return Err(invalid("an entry must not be empty"));
        }
        if text.trim() != text || text.chars().any(char::is_whitespace) {
            return Err(invalid("an entry must not contain whitespace"));
        }
        if text.contains('*') {
            return Err(invalid(
                "only '*' alone is a wildcard; name tools or use a group",
            ));
        }
        Ok(ToolSet {
            names: BTreeSet::from([text.to_owned()]),
            ..ToolSet::default()
        })
    }

    fn group(
        &self,
        name: &str,
        place: &str,
        stack: &mut Vec<String>,
    ) -> Result<ToolSet, PolicyError> {
        let unknown = || PolicyError::UnknownGroup {
            name: format!("group:{name}"),
            place: place.to_owned(),
        };
        match name {
            "builtin" => {
                return Ok(ToolSet {
                    builtin: true,
                    ..ToolSet::default()
                });
            }
            "custom" => {
                return Ok(ToolSet {
                    custom: true,
                    ..ToolSet::default()
                });
            }
            "mcp" => {
                return Ok(ToolSet {
                    mcp: true,
                    ..ToolSet::default()
                });
            }
            _ => {}
        }
        if let Some(server) = name.strip_prefix("mcp:") {
            if !self.catalog.mcp_servers.contains(server) {
                return Err(unknown());
            }
            return Ok(ToolSet {
                mcp_servers: BTreeSet::from([server.to_owned()]),
                ..ToolSet::default()
            });
        }
        let family = self.catalog.family(name);
        if self.catalog.families.contains(family) {
            return Ok(ToolSet {
                families: BTreeSet::from([family.to_owned()]),
                ..ToolSet::default()
            });
        }
        let Some(members) = self.user_groups.get(name) else {
            return Err(unknown());
        };
        if stack.iter().any(|it| it == name) {
            let mut path = stack.clone();
            path.push(name.to_owned());
            return Err(PolicyError::GroupCycle {
                name: name.to_owned(),
                path: path.join(" -> "),
            });
        }
        stack.push(name.to_owned());
        let res = self.union_inner(members, &format!("group '{name}'"), stack);
        stack.pop();
        res
    }

    /// Whether `name` is a built-in group name for this catalog.
    pub(crate) fn is_builtin_group(&self, name: &str) -> bool {
        RESERVED_GROUPS.contains(&name)
            || name.starts_with("mcp:")
            || self.catalog.families.contains(name)
    }
}
