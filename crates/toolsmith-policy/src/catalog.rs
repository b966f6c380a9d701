//! What the caller of the engine supplies: the tool families and MCP servers that exist
//! ([`GroupCatalog`]), the tool being decided ([`ToolInfo`]) and who is asking ([`Caller`]).

use std::collections::{BTreeMap, BTreeSet};

/// The groups that exist beyond the user-defined ones, built by the integrator from the registry.
///
/// Every built-in family `f` is `group:f`; every MCP server `s` is `group:mcp:s`.
/// `group:builtin`, `group:custom` and `group:mcp` always exist.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupCatalog {
    /// Built-in family names (`core`, `fs`, `web` …).
    pub families: BTreeSet<String>,
    /// Configured MCP server names (whether connected or not).
    pub mcp_servers: BTreeSet<String>,
    /// Other names of families (GoClaw's `fs` for `filesystem`): `group:fs` is
    /// `group:filesystem`.
    pub aliases: BTreeMap<String, String>,
}

impl GroupCatalog {
    /// A catalog of the given families and MCP servers.
    #[must_use]
    pub fn new<F, S>(families: F, mcp_servers: S) -> Self
    where
        F: IntoIterator,
        F::Item: Into<String>,
        S: IntoIterator,
        S::Item: Into<String>,
    {
        Self {
            families: families.into_iter().map(Into::into).collect(),
            mcp_servers: mcp_servers.into_iter().map(Into::into).collect(),
            aliases: BTreeMap::new(),
        }
    }

    /// This catalog with `alias` naming the family `family` too.
    #[must_use]
    pub fn with_alias(mut self, alias: impl Into<String>, family: impl Into<String>) -> Self {
        self.aliases.insert(alias.into(), family.into());
        self
    }

    /// The family a group name means: itself, or the family it is an alias of.
    #[must_use]
    pub fn family<'a>(&'a self, name: &'a str) -> &'a str {
        self.aliases.get(name).map_or(name, String::as_str)
    }
}

/// What kind of tool is being decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind<'a> {
    /// A built-in tool of a family (`group:<family>`, `group:builtin`).
    Builtin { family: &'a str },
    /// A custom tool (`group:custom`).
    Custom,
    /// A tool bridged from an MCP server (`group:mcp`, `group:mcp:<server>`).
    Mcp { server: &'a str },
}

/// The tool being decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolInfo<'a> {
    /// The name the caller sees and calls.
    pub name: &'a str,
    pub kind: ToolKind<'a>,
}

/// Who is asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller<'a> {
    /// The user id (selects `users.<user>`).
    pub user: &'a str,
    /// The agent id, if known (selects `agents.<agent>`).
    pub agent: Option<&'a str>,
    /// Subagent depth: 0 for a top-level agent, 1 for its subagent, and so on.
    pub depth: u32,
}
