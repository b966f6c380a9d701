//! Built-in tools, grouped as the spec's tool groups ([`groups`]). Each family is one module:
//! [`utilities`] holds the pure utilities (the groups `core`, `textUtils`, `dateTime` …), [`files`]
//! the file tools on the caller's [`workspace`], [`web`] the HTTP, page, API and download tools
//! (through the server's egress guard), [`pdf`] the PDF tools (read, create, describe; on the
//! workspace), [`git`] the git tools (in the command sandbox, on the workspace), [`memory`] the
//! agent's persistent memory (on the per-user record store of [`data`]), [`personal`] the tasks,
//! bookmarks, notes, calendar and contacts (on the same store), [`custom`] the user's own tables
//! (on the same store), [`goals`] the goals and their steps and [`finance`] the expenses (personal
//! families too; receipts read through a vision service), [`exec`] the code execution tools and
//! sandbox sessions (in the command and JS sandboxes).
//!
//! A family is one module that declares its `GROUPS` (its tool groups, with their tools' names:
//! [`groups`]) and `pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool>`; the `families!` list
//! below names each family once, and from it come the module, [`FAMILIES`], the group table
//! ([`groups::TOOL_GROUPS`]) and the registration ([`tools`], [`register_all`]). To add a tool:
//! write it in its family's module, add it to that family's `tools()`, and list its name in its
//! group in the family's `GROUPS` (the group is its provider and says how its results are
//! scrubbed).

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

pub mod aliases;
pub mod chat;
pub mod data;
pub mod groups;
pub(crate) mod media;
pub(crate) mod outside;
pub mod placeholder;
pub mod workspace;

/// One family of built-in tools: a module of this crate with its groups and its tools.
#[derive(Debug, Clone, Copy)]
pub struct Family {
    /// The module's name (`utilities`, `files` …).
    pub name: &'static str,
    /// The family's tool groups: `GROUPS` in its module.
    pub groups: &'static [groups::ToolGroup],
    /// Every tool of the family, whether its group is enabled or not: `tools` in its module.
    pub tools: fn(&BuiltinEnv) -> Vec<RegisteredTool>,
    /// What each tool of the family does to the world, one word a tool: `EFFECTS` in its
    /// module, from which its MCP annotations are computed ([`effect_of`]).
    pub effects: Effects,
}

/// A family's tools by what they do to the world: each [`Effect`] with the names of the tools
/// that have it. Every tool of the family is in exactly one entry (`tests.rs` checks; making a
/// tool that is in none panics, as one in no group does).
pub type Effects = &'static [(Effect, &'static [&'static str])];

/// What the built-in `tool` does to the world, as its family's `EFFECTS` says.
#[must_use]
pub fn effect_of(tool: &str) -> Option<Effect> {
    FAMILIES
        .iter()
        .flat_map(|family| family.effects.iter())
        .find(|(_, tools)| tools.contains(&tool))
        .map(|(effect, _)| *effect)
}

/// Declares each family's module (`pub mod <family>;`) and lists it in [`FAMILIES`].
macro_rules! families {
    ($($family:ident),+ $(,)?) => {
        $(pub mod $family;)+

        /// Every family of built-ins, in the order they were added. Their groups make
        /// [`groups::TOOL_GROUPS`]; their tools are what [`tools`] registers.
        pub const FAMILIES: &[Family] = &[$(Family {
            name: stringify!($family),
            groups: $family::GROUPS,
            tools: $family::tools,
            effects: $family::EFFECTS,
        }),+];
    };
}

families! {
    utilities,
    files,
    web,
    messaging,
    email,
    extract,
    weather,
    translate,
    images,
    audio,
    pdf,
    git,
    memory,
    vectors,
    personal,
    finance,
    goals,
    custom,
    exec,
    schedule,
    teams,
    sessions,
    delegation,
    browser,
    cli_tools,
    coding_agents,
}

#[cfg(test)]
mod tests;

use std::sync::Arc;

use toolsmith_core::model::Effect;
use toolsmith_core::{RegisteredTool, RegistryError, ToolRegistry};

/// What the built-ins need from the server that runs them. Families that touch the world
/// (files, processes, the network) take their handles from here.
#[derive(Debug, Clone, Default)]
pub struct BuiltinEnv {
    /// Every user's workspace; `None` when the server has none configured, and then the file
    /// tools answer with the setting to change.
    pub workspaces: Option<Arc<workspace::Workspaces>>,
    /// The way out to the network of the web tools (the egress guard); `None` makes them
    /// answer that the server has none.
    pub web: Option<Arc<dyn web::WebClient>>,
    /// The callers' Config Center values (the web search provider); `None` when the server
    /// has none, and then the tools that need a value say what to configure.
    pub config: Option<Arc<dyn ConfigValues>>,
    /// The callers' configured chat model (translation's fallback, data extraction); `None`
    /// makes those tools say what to configure.
    pub chat: Option<Arc<dyn chat::ChatModel>>,
    /// The command sandbox the git tools run git in; `None` (or a source that has none)
    /// makes them answer why, and nothing runs.
    pub sandbox: Option<Arc<dyn git::SandboxSource>>,
    /// The git tools' settings (the default commit author).
    pub git: git::GitSettings,
    /// Every user's own records (memory …); `None` makes the data tools answer that the
    /// server keeps no data.
    pub data: Option<Arc<dyn data::Records>>,
    /// Every user's vector collections (vector search); `None` makes those tools answer
    /// that the server keeps none.
    pub vectors: Option<Arc<dyn vectors::VectorIndex>>,
    /// The command and JS sandboxes for the code tools; `None` makes them answer that code
    /// cannot run here (nothing ever runs on the host).
    pub code: Option<Arc<dyn exec::CodeHost>>,
    /// The live sandbox sessions; `None` (no workspace) makes the session tools say so.
    pub sessions: Option<Arc<exec::Sessions>>,
    /// Where `package_manager` installs may connect (the registry proxy's hosts and guard);
    /// `None` gives installs no network at all.
    pub registries: Option<exec::PackageRegistries>,
    /// How scheduled tasks call their tools (the server's pipeline); `None` makes the
    /// scheduler tools answer that this server runs no scheduled tasks.
    pub tasks: Option<Arc<dyn schedule::TaskCaller>>,
    /// How a team message wakes the teammate it is for (the server's agent runner); `None`
    /// leaves messages in the mailbox only.
    pub team_wake: Option<Arc<dyn teams::TeamWake>>,
    /// How the sessions tools run agents (the server's agent runner); `None` makes them answer
    /// that this server runs no agents.
    pub agent_sessions: Option<Arc<dyn sessions::SessionHost>>,
    /// Where an agent's `read_file` / `write_file` of its context files and memory go (spec
    /// 001 §3); `None` leaves every path to the workspace.
    pub routed_files: Option<Arc<dyn files::RoutedFiles>>,
    /// The browsers of the `browser` tool (Chromium, through the egress guard); `None` makes
    /// it answer that this server runs none.
    pub browsers: Option<Arc<browser::Browsers>>,
    /// Where the coding agents' programs are and the guard their runs' proxy applies; `None`
    /// makes `run_coding_task` answer that this server runs none.
    pub coding_agents: Option<Arc<coding_agents::CodingAgents>>,
}

/// A caller's Config Center: the default entry's values of one of the owner's services.
#[async_trait::async_trait]
pub trait ConfigValues: Send + Sync + std::fmt::Debug {
    async fn values(
        &self,
        owner: &str,
        service: &str,
    ) -> Option<std::collections::BTreeMap<String, serde_json::Value>>;
}

/// Every built-in tool of every family, whether its group is enabled or not.
#[must_use]
pub fn tools(env: &BuiltinEnv) -> Vec<RegisteredTool> {
    FAMILIES
        .iter()
        .flat_map(|family| (family.tools)(env))
        .map(aliases::defer)
        .collect()
}

/// A built-in tool of a family: `definition` in `category`, its group as provider (so
/// `group:<id>` in a policy names it), holding `permission`, run by `executor`.
pub(crate) fn family_tool(
    definition: toolsmith_core::ToolDefinition,
    category: &str,
    permission: toolsmith_core::Permission,
    executor: Arc<dyn toolsmith_core::ToolExecutor>,
) -> RegisteredTool {
    builtin_tool(
        definition,
        category,
        toolsmith_core::PermissionSet::from([permission]),
        executor,
    )
}

/// Every built-in tool is made here: `definition` in `category`, its group as provider (and
/// the group's [`ResultSource`](toolsmith_core::ResultSource)), holding `permissions`, run by
/// `executor`. Its MCP annotations are computed from its family's `EFFECTS` and whether it
/// holds `network` (`openWorldHint`), and its title from its name.
///
/// # Panics
/// On a schema that does not compile, or a tool in no group or with no effect: all are
/// constants of this crate, and `tests.rs` builds every built-in, so such a bug fails the
/// tests, never a server.
#[allow(clippy::panic)]
pub(crate) fn builtin_tool(
    mut definition: toolsmith_core::ToolDefinition,
    category: &str,
    permissions: toolsmith_core::PermissionSet,
    executor: Arc<dyn toolsmith_core::ToolExecutor>,
) -> RegisteredTool {
    let name = definition.name.clone();
    let Some(group) = groups::group_of(&name) else {
        panic!(
            "built-in tool '{name}' is in no group: list it in its group in its family's GROUPS"
        );
    };
    let Some(effect) = effect_of(&name) else {
        panic!(
            "built-in tool '{name}' states no effect: list it under what it does in its \
             family's EFFECTS"
        );
    };
    let open_world = permissions.contains(&toolsmith_core::Permission::Network);
    definition.annotations = Some(effect.annotations(open_world));
    if definition.title.is_none() {
        definition.title = Some(title_of(&name));
    }
    RegisteredTool::new(
        definition.with_category(category),
        toolsmith_core::ToolOrigin::BuiltIn {
            provider: group.id.to_owned(),
        },
        permissions,
        executor,
    )
    .unwrap_or_else(|e| panic!("built-in tool '{name}' has an invalid schema: {e}"))
    .with_result_source(group.results)
}

/// A built-in's display title (MCP's `title`), from its name: `read_file` is "Read file".
fn title_of(name: &str) -> String {
    let words = name.replace('_', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

/// Registers every built-in family. Fails only if a name is registered twice.
pub fn register_all(registry: &ToolRegistry, env: &BuiltinEnv) -> Result<(), RegistryError> {
    tools(env)
        .into_iter()
        .try_for_each(|tool| registry.register_builtin(tool))
}
