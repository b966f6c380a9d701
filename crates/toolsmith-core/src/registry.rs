//! The registry: every tool a call can reach right now.
//!
//! Two tiers share one namespace per owner. Built-in tools (and, later, meta-tools and bridged
//! tools) are global and grouped by the provider that registered them; custom tools belong to
//! one owner. A custom tool may never take the name of a built-in or of another of its owner's
//! tools. The registry holds only *active* custom tools; the service keeps it in step with the
//! store. Every change bumps a catalogue version that watchers (MCP sessions) can follow.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, RwLock};

use tokio::sync::watch;

use crate::model::{PermissionSet, ToolDefinition, ToolExecutor};
use crate::schema::{CompiledSchema, SchemaError};

/// Where a registered tool came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolOrigin {
    /// Compiled into the binary, registered by a provider (a tool family).
    BuiltIn { provider: String },
    /// A stored custom tool.
    Custom { id: String, owner: String },
    /// A tool of an external MCP server, bridged into the catalogue (policy groups `mcp` and
    /// `mcp:<server>`). Held with the built-ins: one name for every caller. `tool` is its
    /// upstream name (what grants and the server's allow and deny lists name).
    Mcp { server: String, tool: String },
}

/// Where the text of a tool's results comes from, which decides how they are scrubbed.
///
/// The exact platform secrets (the caller's Config Center values) are redacted from every
/// result; the credential *patterns* (`password: …`, vendor tokens) only from results that
/// carry text from outside the user's own data, where an unknown credential may hide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResultSource {
    /// Code, pages, commands, upstream servers: anything may come back, credential patterns
    /// apply. The default, and every custom and bridged tool's.
    #[default]
    External,
    /// The user's own stored data, or a value made from the call's own arguments (a note, a
    /// file of their workspace, a table row, a generated password): it must round-trip
    /// unchanged, so only exact platform secrets are redacted.
    UserData,
}

/// A tool ready to run: its definition, compiled schema, permissions and executor.
pub struct RegisteredTool {
    pub definition: ToolDefinition,
    pub schema: CompiledSchema,
    /// The compiled `definition.output_schema`: every successful result's structured content
    /// is checked against it (`crate::content`).
    pub output_schema: Option<Arc<CompiledSchema>>,
    pub origin: ToolOrigin,
    /// What the tool may do. A nested `callTool` may reach it only if the caller holds all of them.
    pub permissions: PermissionSet,
    pub executor: Arc<dyn ToolExecutor>,
    /// The stored version of a custom tool (for execution records); `None` for built-ins.
    pub version: Option<i64>,
    /// The one agent this tool exists for (a per-agent custom tool); `None` for every agent.
    pub agent_scope: Option<String>,
    /// Whether the tool is marked as needing a human's approval of each execution
    /// (`requires_approval`; every LLM-created tool).
    pub requires_approval: bool,
    /// Left out of MCP `tools/list` (a bridged tool of a large upstream catalogue): found with
    /// `search_tools`, called with `use_tool` or by its name.
    pub deferred: bool,
    /// Where its results' text comes from ([`ResultSource`]): how they are scrubbed.
    pub result_source: ResultSource,
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.definition.name)
            .field("origin", &self.origin)
            .field("permissions", &self.permissions)
            .finish_non_exhaustive()
    }
}

impl RegisteredTool {
    /// Compiles the definition's schema; fails if it is not a valid object schema.
    pub fn new(
        definition: ToolDefinition,
        origin: ToolOrigin,
        permissions: PermissionSet,
        executor: Arc<dyn ToolExecutor>,
    ) -> Result<RegisteredTool, SchemaError> {
        let schema = CompiledSchema::compile(&definition.parameters)?;
        let output_schema = match &definition.output_schema {
            Some(output) => Some(Arc::new(CompiledSchema::compile(output)?)),
            None => None,
        };
        Ok(RegisteredTool {
            definition,
            schema,
            output_schema,
            origin,
            permissions,
            executor,
            version: None,
            agent_scope: None,
            requires_approval: false,
            deferred: false,
            result_source: ResultSource::External,
        })
    }

    /// Records the stored version this registration runs.
    #[must_use]
    pub fn with_version(mut self, version: i64) -> Self {
        self.version = Some(version);
        self
    }

    /// Makes this a per-agent tool: only calls from `agent` see or reach it.
    #[must_use]
    pub fn with_agent_scope(mut self, agent: Option<String>) -> Self {
        self.agent_scope = agent;
        self
    }

    /// Marks the tool as needing approval of each execution.
    #[must_use]
    pub fn with_requires_approval(mut self, requires_approval: bool) -> Self {
        self.requires_approval = requires_approval;
        self
    }

    /// Says where the tool's results come from ([`RegisteredTool::result_source`]).
    #[must_use]
    pub fn with_result_source(mut self, source: ResultSource) -> Self {
        self.result_source = source;
        self
    }

    /// Marks the tool as left out of MCP `tools/list` ([`RegisteredTool::deferred`]).
    #[must_use]
    pub fn with_deferred(mut self, deferred: bool) -> Self {
        self.deferred = deferred;
        self
    }

    /// Whether a caller acting as `agent` may see this tool (always, unless it is per-agent).
    pub fn is_visible_to(&self, agent: Option<&str>) -> bool {
        self.agent_scope
            .as_deref()
            .is_none_or(|scope| agent == Some(scope))
    }

    pub fn name(&self) -> &str {
        &self.definition.name
    }

    pub fn is_builtin(&self) -> bool {
        matches!(self.origin, ToolOrigin::BuiltIn { .. })
    }

    /// The custom tool id, for custom tools.
    pub fn custom_id(&self) -> Option<&str> {
        match &self.origin {
            ToolOrigin::Custom { id, .. } => Some(id),
            ToolOrigin::BuiltIn { .. } | ToolOrigin::Mcp { .. } => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("a built-in tool is already named '{name}'")]
    BuiltInName { name: String },
    #[error("another tool of this owner is already named '{name}'")]
    Duplicate { name: String },
    #[error("'{name}' is not a custom tool")]
    NotCustom { name: String },
}

/// Counts for the registry as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RegistryStats {
    pub total: usize,
    pub builtin: usize,
    /// Tools bridged from upstream MCP servers (not counted in `builtin`).
    pub mcp: usize,
    pub custom: usize,
    pub owners: usize,
    pub providers: usize,
}

#[derive(Default)]
struct Tables {
    /// Sorted maps: listing a catalogue of 10,000 tools walks them in order instead of sorting.
    builtins: BTreeMap<String, Arc<RegisteredTool>>,
    /// owner → name → tool.
    custom: HashMap<String, BTreeMap<String, Arc<RegisteredTool>>>,
    /// Moves whenever a built-in comes or goes (every owner sees built-ins).
    builtin_version: u64,
    /// owner → how often that owner's custom tools changed.
    owner_versions: HashMap<String, u64>,
    /// Built-ins whose group is disabled: registered (their names stay reserved) but invisible
    /// to every lookup and list, so a call to one answers `not_found`.
    hidden: HashSet<String>,
}

/// All tools a call can reach. Cheap to read from many threads at once.
pub struct ToolRegistry {
    tables: RwLock<Tables>,
    version: watch::Sender<u64>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        ToolRegistry {
            tables: RwLock::default(),
            version: watch::Sender::new(0),
        }
    }
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("stats", &self.stats())
            .finish()
    }
}

impl ToolRegistry {
    /// Adds a built-in tool, or a bridged one (`ToolOrigin::Mcp`). Its name must be free
    /// everywhere: nothing is ever shadowed.
    pub fn register_builtin(&self, tool: RegisteredTool) -> Result<(), RegistryError> {
        let name = tool.name().to_owned();
        {
            let mut tables = self.write();
            if tables.builtins.contains_key(&name) {
                return Err(RegistryError::BuiltInName { name });
            }
            if tables
                .custom
                .values()
                .any(|tools| tools.contains_key(&name))
            {
                return Err(RegistryError::Duplicate { name });
            }
            tables.builtins.insert(name, Arc::new(tool));
            tables.builtin_version += 1;
        }
        self.bump();
        Ok(())
    }

    /// Adds or replaces an owner's custom tool. A tool with the same id is replaced (an update or
    /// a rename); a different tool with the same name is an error, as is a built-in's name.
    pub fn upsert_custom(&self, tool: RegisteredTool) -> Result<(), RegistryError> {
        let ToolOrigin::Custom { id, owner } = tool.origin.clone() else {
            return Err(RegistryError::NotCustom {
                name: tool.name().to_owned(),
            });
        };
        let name = tool.name().to_owned();
        {
            let mut tables = self.write();
            if tables.builtins.contains_key(&name) {
                return Err(RegistryError::BuiltInName { name });
            }
            let owned = tables.custom.entry(owner.clone()).or_default();
            if let Some(existing) = owned.get(&name)
                && existing.custom_id() != Some(id.as_str())
            {
                return Err(RegistryError::Duplicate { name });
            }
            owned.retain(|_, t| t.custom_id() != Some(id.as_str()));
            owned.insert(name, Arc::new(tool));
            *tables.owner_versions.entry(owner).or_default() += 1;
        }
        self.bump();
        Ok(())
    }

    /// Removes the custom tool with this id, if it is registered. Returns whether it was.
    pub fn remove_custom(&self, owner: &str, id: &str) -> bool {
        let removed = {
            let mut tables = self.write();
            let Some(owned) = tables.custom.get_mut(owner) else {
                return false;
            };
            let before = owned.len();
            owned.retain(|_, t| t.custom_id() != Some(id));
            let removed = owned.len() != before;
            if owned.is_empty() {
                tables.custom.remove(owner);
            }
            if removed {
                *tables.owner_versions.entry(owner.to_owned()).or_default() += 1;
            }
            removed
        };
        if removed {
            self.bump();
        }
        removed
    }

    /// Removes a built-in tool by name. Returns whether it was there.
    pub fn unregister_builtin(&self, name: &str) -> bool {
        let removed = {
            let mut tables = self.write();
            let removed = tables.builtins.remove(name).is_some();
            if removed {
                tables.builtin_version += 1;
            }
            removed
        };
        if removed {
            self.bump();
        }
        removed
    }

    /// Removes every built-in registered by `provider`. Returns how many went.
    pub fn unregister_provider(&self, provider: &str) -> usize {
        self.unregister_global(
            |origin| matches!(origin, ToolOrigin::BuiltIn { provider: p } if p == provider),
        )
    }

    /// Removes every tool bridged from the MCP server `server`. Returns how many went.
    pub fn unregister_mcp_server(&self, server: &str) -> usize {
        self.unregister_global(
            |origin| matches!(origin, ToolOrigin::Mcp { server: s, .. } if s == server),
        )
    }

    /// Removes every built-in or bridged tool whose origin matches; moves the versions once if
    /// any went. Returns how many went.
    fn unregister_global(&self, matching: impl Fn(&ToolOrigin) -> bool) -> usize {
        let n_removed = {
            let mut tables = self.write();
            let before = tables.builtins.len();
            tables.builtins.retain(|_, t| !matching(&t.origin));
            let n_removed = before - tables.builtins.len();
            if n_removed > 0 {
                tables.builtin_version += 1;
            }
            n_removed
        };
        if n_removed > 0 {
            self.bump();
        }
        n_removed
    }

    /// Hides exactly these built-ins (their groups are disabled) and shows every other one.
    /// Returns whether what callers see changed; if it did, every catalogue version moves.
    pub fn set_hidden_builtins(&self, hidden: HashSet<String>) -> bool {
        let changed = {
            let mut tables = self.write();
            let changed = tables.hidden != hidden;
            if changed {
                tables.hidden = hidden;
                tables.builtin_version += 1;
            }
            changed
        };
        if changed {
            self.bump();
        }
        changed
    }

    /// Whether `name` is a built-in hidden because its group is disabled.
    pub fn is_hidden_builtin(&self, name: &str) -> bool {
        self.read().hidden.contains(name)
    }

    /// The built-ins hidden because their group is disabled, sorted by name (search names them
    /// with the group that would serve a request; nothing calls them).
    pub fn hidden_builtins(&self) -> Vec<Arc<RegisteredTool>> {
        let tables = self.read();
        tables
            .builtins
            .values()
            .filter(|t| tables.hidden.contains(t.name()))
            .cloned()
            .collect()
    }

    /// The tool `name` as `owner` sees it: a visible built-in, or one of the owner's custom
    /// tools.
    pub fn get(&self, owner: &str, name: &str) -> Option<Arc<RegisteredTool>> {
        let tables = self.read();
        if let Some(tool) = tables.builtins.get(name) {
            return (!tables.hidden.contains(name)).then(|| tool.clone());
        }
        tables
            .custom
            .get(owner)
            .and_then(|owned| owned.get(name))
            .cloned()
    }

    /// Is `name` free for a new custom tool of `owner`? Errors say who holds it.
    pub fn check_name_free(&self, owner: &str, name: &str) -> Result<(), RegistryError> {
        let tables = self.read();
        if tables.builtins.contains_key(name) {
            return Err(RegistryError::BuiltInName {
                name: name.to_owned(),
            });
        }
        if tables
            .custom
            .get(owner)
            .is_some_and(|owned| owned.contains_key(name))
        {
            return Err(RegistryError::Duplicate {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    /// Whether a built-in, visible or hidden, holds `name` (so no custom tool may take it).
    pub fn is_builtin_name(&self, name: &str) -> bool {
        self.read().builtins.contains_key(name)
    }

    /// Every tool `owner` can reach, visible built-ins first, each tier sorted by name.
    pub fn tools(&self, owner: &str) -> Vec<Arc<RegisteredTool>> {
        let tables = self.read();
        let custom = tables.custom.get(owner);
        let mut tools = Vec::with_capacity(tables.builtins.len() + custom.map_or(0, BTreeMap::len));
        tools.extend(
            tables
                .builtins
                .values()
                .filter(|t| !tables.hidden.contains(t.name()))
                .cloned(),
        );
        tools.extend(custom.into_iter().flat_map(|owned| owned.values().cloned()));
        tools
    }

    /// Moves every owner's catalogue version without changing a tool: what each caller may see
    /// changed some other way (a new policy), so watchers re-list.
    pub fn touch_all(&self) {
        self.write().builtin_version += 1;
        self.bump();
    }

    /// Whether any of `owner`'s custom tools is per-agent (so lists must be filtered by agent).
    pub fn has_agent_scoped(&self, owner: &str) -> bool {
        self.read()
            .custom
            .get(owner)
            .is_some_and(|owned| owned.values().any(|t| t.agent_scope.is_some()))
    }

    /// The definitions of every tool `owner` can reach.
    pub fn definitions(&self, owner: &str) -> Vec<ToolDefinition> {
        self.tools(owner)
            .iter()
            .map(|t| t.definition.clone())
            .collect()
    }

    /// The names of every tool `owner` can reach.
    pub fn names(&self, owner: &str) -> Vec<String> {
        self.tools(owner)
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    }

    /// `(owner, id)` of every registered custom tool, of every owner (for re-syncing with a
    /// store that other processes write to).
    pub fn custom_ids(&self) -> Vec<(String, String)> {
        let tables = self.read();
        tables
            .custom
            .iter()
            .flat_map(|(owner, tools)| {
                tools
                    .values()
                    .filter_map(|t| t.custom_id().map(|id| (owner.clone(), id.to_owned())))
            })
            .collect()
    }

    pub fn stats(&self) -> RegistryStats {
        let tables = self.read();
        let custom: usize = tables.custom.values().map(BTreeMap::len).sum();
        let visible = || {
            tables
                .builtins
                .values()
                .filter(|t| !tables.hidden.contains(t.name()))
        };
        let mut providers: Vec<&str> = visible()
            .filter_map(|t| match &t.origin {
                ToolOrigin::BuiltIn { provider } => Some(provider.as_str()),
                ToolOrigin::Custom { .. } | ToolOrigin::Mcp { .. } => None,
            })
            .collect();
        providers.sort_unstable();
        providers.dedup();
        let mcp = visible()
            .filter(|t| matches!(t.origin, ToolOrigin::Mcp { .. }))
            .count();
        let builtin = visible().count() - mcp;
        RegistryStats {
            total: builtin + mcp + custom,
            builtin,
            mcp,
            custom,
            owners: tables.custom.len(),
            providers: providers.len(),
        }
    }

    /// The version of the catalogue `owner` sees (built-ins and the owner's custom tools): it
    /// moves whenever that catalogue changes, and only then.
    pub fn catalog_version(&self, owner: &str) -> u64 {
        let tables = self.read();
        tables.builtin_version + tables.owner_versions.get(owner).copied().unwrap_or(0)
    }

    /// The catalogue version of the registry as a whole: it moves on every change.
    pub fn version(&self) -> u64 {
        *self.version.borrow()
    }

    /// Follow catalogue changes (for `list_changed` notifications): wakes on every change of any
    /// owner; compare [`ToolRegistry::catalog_version`] to learn whether one owner's view moved.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    fn bump(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Tables> {
        // A panic while holding the lock cannot leave the maps half-updated (every write is a
        // single insert/retain), so a poisoned lock is still safe to use.
        self.tables.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Tables> {
        self.tables.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests;
