//! The policy engine in the pipeline: who may see and call which tool (`toolsmith-policy`).
//!
//! [`PolicyGate`] holds the compiled policy (swappable at run time) and answers two questions
//! for every face: *may this caller call this tool* (the middleware, before anything runs) and
//! *which of these tools may this caller see* (`tools/list`, `search_tools`, the REST
//! catalogue). Without a configured policy everything is allowed, and the checks cost nothing.

use std::collections::BTreeSet;
use std::sync::{Arc, RwLock};

use toolsmith_builtins::groups::TOOL_GROUPS;

use crate::governance::tool_groups;
use async_trait::async_trait;
use toolsmith_core::{
    Call, ErrorKind, Middleware, Narrows, RegisteredTool, ToolContext, ToolOrigin, ToolRegistry,
    ToolResult,
};
use toolsmith_policy::{
    Caller, GroupCatalog, Policy, PolicyDocument, PolicyError, ToolInfo, ToolKind,
};

/// The compiled policy of this process.
pub struct PolicyGate {
    policy: RwLock<Arc<Policy>>,
    /// Whether a policy is configured at all (so unrestricted callers skip filtering).
    configured: RwLock<bool>,
    /// The enabled tool groups (the defaults when no policy switches any).
    groups: RwLock<BTreeSet<&'static str>>,
    /// The configured and registered MCP servers, so `group:mcp:<server>` names one even
    /// while it is down.
    mcp_servers: RwLock<BTreeSet<String>>,
    /// Who may use which bridged server's tools, when grants are on.
    grants: crate::bridge::Grants,
}

impl PolicyGate {
    /// Compiles `config` against the registry's built-in families and the configured MCP
    /// servers; `None` allows everything. An unknown profile or group is an error (fail closed).
    pub fn new(
        config: Option<&PolicyDocument>,
        registry: &ToolRegistry,
        mcp_servers: BTreeSet<String>,
    ) -> Result<PolicyGate, PolicyError> {
        let gate = PolicyGate {
            policy: RwLock::new(Arc::new(Policy::allow_all())),
            configured: RwLock::new(false),
            groups: RwLock::new(BTreeSet::new()),
            mcp_servers: RwLock::new(mcp_servers),
            grants: crate::bridge::Grants::default(),
        };
        gate.replace(config, registry)?;
        Ok(gate)
    }

    /// Installs a new policy (or none); the old one stays if the new one does not compile.
    pub fn replace(
        &self,
        config: Option<&PolicyDocument>,
        registry: &ToolRegistry,
    ) -> Result<(), PolicyError> {
        let compiled = match config {
            None => Policy::allow_all(),
            Some(config) => self.compile_in_force(config, registry)?,
        };
        let groups = enabled_groups(config)?;
        registry.set_hidden_builtins(tool_groups::hidden_tools(&groups));
        *self
            .groups
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = groups;
        *self
            .policy
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(compiled);
        *self
            .configured
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = config.is_some();
        Ok(())
    }

    /// Compiles a policy that is in force already (stored, or the configuration file's). A
    /// `group:mcp:<server>` naming no configured or registered server — one that left the
    /// configuration file, or was removed on another instance — is logged as a warning and
    /// compiles as a group with no tools, so the process still starts and the policy can be
    /// shown, changed and cleared (it used to stop `serve` and every CLI command). Every other
    /// unknown name still fails (fail closed), and a new policy naming an unknown server is
    /// still refused ([`PolicyGate::validate`]).
    fn compile_in_force(
        &self,
        config: &PolicyDocument,
        registry: &ToolRegistry,
    ) -> Result<Policy, PolicyError> {
        loop {
            let known = self.mcp_server_names();
            let error = match config.compile(&catalog(registry, &known)) {
                Ok(policy) => return Ok(policy),
                Err(error) => error,
            };
            let gone = match &error {
                PolicyError::UnknownGroup { name, place } => name
                    .strip_prefix("group:mcp:")
                    .filter(|server| !server.is_empty() && !known.contains(*server))
                    .map(|server| (name.clone(), place.clone(), server.to_owned())),
                _ => None,
            };
            let Some((name, place, server)) = gone else {
                return Err(error);
            };
            tracing::warn!(
                "the policy in force names {name} (in {place}), but no MCP server '{server}' is \
                 configured or registered: the group holds no tools. Take it out of the policy \
                 (`toolsmith policy set`, PUT /api/v1/policies, or `toolsmith policy clear`) or \
                 configure the server again"
            );
            // Each pass adds one server the catalogue lacked, so this ends.
            self.add_mcp_server(&server);
        }
    }

    /// Compiles `config` against the registry's families without installing it.
    pub fn validate(
        &self,
        config: &PolicyDocument,
        registry: &ToolRegistry,
    ) -> Result<(), PolicyError> {
        config.compile(&catalog(registry, &self.mcp_server_names()))?;
        enabled_groups(Some(config)).map(|_| ())
    }

    /// The MCP servers `group:mcp:<server>` may name.
    pub fn mcp_server_names(&self) -> BTreeSet<String> {
        self.mcp_servers
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Lets policies name `group:mcp:<server>` (a server registered at run time).
    pub fn add_mcp_server(&self, server: &str) {
        self.mcp_servers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(server.to_owned());
    }

    /// Forgets a removed server's group. The caller checked first that the policy in force
    /// does not name it ([`PolicyGate::names_mcp_server`]).
    pub fn remove_mcp_server(&self, server: &str) {
        self.mcp_servers
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(server);
    }

    /// Whether `config` needs `group:mcp:<server>` to compile (it names the server).
    pub fn names_mcp_server(
        &self,
        config: &PolicyDocument,
        registry: &ToolRegistry,
        server: &str,
    ) -> bool {
        let mut without = self.mcp_server_names();
        without.remove(server);
        config.compile(&catalog(registry, &without)).is_err()
    }

    /// The ids of the enabled tool groups.
    pub fn enabled_groups(&self) -> BTreeSet<&'static str> {
        self.groups
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Switches grants of bridged MCP servers on (`mcp_grants`).
    #[must_use]
    pub fn with_grants(mut self, on: bool) -> Self {
        self.grants = crate::bridge::Grants::new(on);
        self
    }

    /// The grants of bridged MCP servers in force.
    pub fn grants(&self) -> &crate::bridge::Grants {
        &self.grants
    }

    /// Whether anything filters what callers see (a policy, or grants): if not, everything is
    /// visible and callable, and listings may skip the checks.
    pub fn filters(&self) -> bool {
        self.is_configured() || self.grants.is_on()
    }

    /// Whether a policy is configured (if not, everything is visible and callable).
    pub fn is_configured(&self) -> bool {
        *self
            .configured
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn current(&self) -> Option<Arc<Policy>> {
        let configured = *self
            .configured
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        configured.then(|| {
            self.policy
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
        })
    }

    /// `Err(reason)` if the caller of `ctx` may not call `tool`. An agent the caller named
    /// itself ([`ToolContext::agent_chosen_by_caller`]) only narrows: the user without the
    /// agent must be allowed too.
    /// A call carrying a [`Narrowing`](toolsmith_core::Narrowing) (an agent run's `toolPolicy`, kept by nested calls) is
    /// held to it as well.
    pub fn check(&self, ctx: &ToolContext, tool: &RegisteredTool) -> Result<(), String> {
        self.check_info(ctx, &info(tool))?;
        self.check_grant(ctx, tool)?;
        ctx.narrowing
            .as_ref()
            .map_or(Ok(()), |narrowing| narrowing.check(ctx, tool))
    }

    /// The grants' answer for a bridged tool (nothing to say about the others).
    fn check_grant(&self, ctx: &ToolContext, tool: &RegisteredTool) -> Result<(), String> {
        match &tool.origin {
            ToolOrigin::Mcp { server, tool } => self.grants.check(ctx, server, tool),
            _ => Ok(()),
        }
    }

    /// `Err(reason)` if the caller of `ctx` may not see what the bridged server `server`
    /// offers besides its tools (prompts, resources, completions, `instructions`): the policy
    /// as for the server's tools (`group:mcp`, `group:mcp:<server>`; with `name`, the item's
    /// catalogue name too) and, with grants on, an enabled grant of the server.
    pub fn check_bridged(
        &self,
        ctx: &ToolContext,
        server: &str,
        name: Option<&str>,
    ) -> Result<(), String> {
        let name = name.map_or_else(|| format!("mcp:{server}"), str::to_owned);
        let item = ToolInfo {
            name: &name,
            kind: ToolKind::Mcp { server },
        };
        self.check_info(ctx, &item)?;
        self.grants.check_server(ctx, server)
    }

    /// Whether the caller of `ctx` may call its custom tool `name`, stored in any status (what
    /// `list_custom_tools` and `get_custom_tool` may show it).
    pub fn allows_custom(&self, ctx: &ToolContext, name: &str) -> bool {
        let tool = ToolInfo {
            name,
            kind: ToolKind::Custom,
        };
        self.check_info(ctx, &tool).is_ok()
    }

    /// Why the caller of `ctx` may not use `name`, a capability a running tool asks for
    /// (`mcp:sampling`, `mcp:elicitation`): a deny entry naming it (`Policy::denies_by_name`),
    /// for the caller or, when it named its agent itself, for the user behind it. `None`
    /// when nothing denies it.
    pub fn denies_capability(&self, ctx: &ToolContext, name: &str) -> Option<String> {
        let policy = self.current()?;
        policy
            .denies_by_name(&caller(ctx), name)
            .or_else(|| user_behind(ctx).and_then(|user| policy.denies_by_name(&user, name)))
            .or_else(|| person_behind(ctx).and_then(|person| policy.denies_by_name(&person, name)))
    }

    fn check_info(&self, ctx: &ToolContext, tool: &ToolInfo<'_>) -> Result<(), String> {
        let Some(policy) = self.current() else {
            return Ok(());
        };
        let decision = policy.decide(&caller(ctx), tool);
        if !decision.allowed {
            return Err(decision.reason);
        }
        if let Some(as_user) = user_behind(ctx) {
            let decision = policy.decide(&as_user, tool);
            if !decision.allowed {
                return Err(format!(
                    "{} (an agent named by the caller rather than by its token only narrows what user '{}' may do)",
                    decision.reason, ctx.user_id
                ));
            }
        }
        if let Some(person) = person_behind(ctx) {
            let decision = policy.decide(&person, tool);
            if !decision.allowed {
                return Err(format!(
                    "{} (user '{}' acting in organisation '{}' is held to their own rules too)",
                    decision.reason, person.user, ctx.user_id
                ));
            }
        }
        Ok(())
    }

    /// The tools of `tools` the caller of `ctx` may see, in their order.
    pub fn visible(
        &self,
        ctx: &ToolContext,
        tools: Vec<Arc<RegisteredTool>>,
    ) -> Vec<Arc<RegisteredTool>> {
        let tools = if self.grants.is_on() {
            tools
                .into_iter()
                .filter(|tool| self.check_grant(ctx, tool).is_ok())
                .collect()
        } else {
            tools
        };
        match self.current() {
            None => tools,
            Some(policy) => {
                let caller = caller(ctx);
                let as_user = user_behind(ctx);
                let person = person_behind(ctx);
                tools
                    .into_iter()
                    .filter(|tool| {
                        let tool = info(tool);
                        policy.allows(&caller, &tool)
                            && as_user
                                .as_ref()
                                .is_none_or(|user| policy.allows(user, &tool))
                            && person
                                .as_ref()
                                .is_none_or(|person| policy.allows(person, &tool))
                    })
                    .collect()
            }
        }
    }
}

impl PolicyGate {
    /// Compiles an agent definition's own tool policy (`scope`, the policy engine's scope
    /// shape) as the policy of agent `agent` alone, against the same families and MCP servers
    /// as the policy in force: built-in profiles and groups only (the operator's own `groups`
    /// and `profiles` are not in it). An unknown name fails, as in any policy. `subagents` are
    /// the deny lists by depth its runs are held to (spec 001 §6's).
    pub(crate) fn compile_agent_scope(
        &self,
        agent: &str,
        scope: toolsmith_policy::ScopePolicy,
        subagents: toolsmith_policy::SubagentPolicy,
        registry: &ToolRegistry,
    ) -> Result<Policy, PolicyError> {
        let mut document = PolicyDocument {
            subagents,
            ..PolicyDocument::default()
        };
        document.agents.insert(agent.to_owned(), scope);
        document.compile(&catalog(registry, &self.mcp_server_names()))
    }
}

/// What a run of an agent definition may reach ([`Narrows`], set on every call of the run and
/// kept by the calls nested in them): the definition's own tool policy
/// ([`PolicyGate::compile_agent_scope`]) and, when the run was started by an agent (a token
/// bound to one, or another run), what that starter may call — so a stored agent never widens
/// its starter, and no tool of the run reaches past either through `callTool`.
pub(crate) struct AgentScope {
    pub agent_id: String,
    pub agent_name: String,
    pub policy: Policy,
    /// The policy in force and who started the run, when that bounds it.
    pub starter: Option<(Arc<PolicyGate>, ToolContext)>,
}

impl AgentScope {
    /// The context of a starter as the scope keeps it: who it is and what bounds it, without
    /// its call's cancellation, approver or client.
    pub(crate) fn starter_of(ctx: &ToolContext) -> Option<ToolContext> {
        (ctx.agent_id.is_some() || ctx.narrowing.is_some()).then(|| {
            let mut starter = ToolContext::new(ctx.user_id.clone());
            starter.agent_id = ctx.agent_id.clone();
            starter.agent_chosen_by_caller = ctx.agent_chosen_by_caller;
            starter.subagent_depth = ctx.subagent_depth;
            starter.admin = ctx.admin;
            starter.scheduled_run = ctx.scheduled_run;
            starter.narrowing = ctx.narrowing.clone();
            starter.member = ctx.member.clone();
            starter
        })
    }
}

impl Narrows for AgentScope {
    fn check(&self, ctx: &ToolContext, tool: &RegisteredTool) -> Result<(), String> {
        let agent = Caller {
            user: &ctx.user_id,
            agent: Some(&self.agent_id),
            depth: ctx.subagent_depth,
        };
        let decision = self.policy.decide(&agent, &info(tool));
        if !decision.allowed {
            return Err(format!(
                "'{}' is outside the toolPolicy of agent '{}' ({}), which every call of its \
                 runs is held to, tools' nested calls included ({}); add it to the agent's \
                 toolPolicy (PUT /api/v1/agents/{}) if its runs should call it",
                tool.name(),
                self.agent_name,
                self.agent_id,
                decision.reason,
                self.agent_id
            ));
        }
        if let Some((gate, starter)) = &self.starter
            && let Err(reason) = tool
                .is_visible_to(starter.agent_id.as_deref())
                .then_some(())
                .ok_or_else(|| "not visible to it".to_owned())
                .and_then(|()| gate.check(starter, tool))
        {
            return Err(format!(
                "'{}' may not be called by whoever started this run of agent '{}' ({reason}), \
                 so the run may not call it either",
                tool.name(),
                self.agent_name
            ));
        }
        Ok(())
    }
}

/// The enabled groups under `config`'s switches (the defaults without a policy).
fn enabled_groups(config: Option<&PolicyDocument>) -> Result<BTreeSet<&'static str>, PolicyError> {
    let switches = config.map(|c| c.tool_groups.clone()).unwrap_or_default();
    tool_groups::enabled_groups(&switches).map_err(PolicyError::ToolGroups)
}

/// The families a policy may name: every tool group (enabled or not, so a policy naming a
/// disabled one still compiles), their aliases, any other provider registered, and the
/// configured MCP servers (`group:mcp:<server>`).
fn catalog(registry: &ToolRegistry, mcp_servers: &BTreeSet<String>) -> GroupCatalog {
    let mut families: BTreeSet<String> = registry
        .tools("")
        .iter()
        .filter_map(|t| match &t.origin {
            ToolOrigin::BuiltIn { provider } => Some(provider.clone()),
            ToolOrigin::Custom { .. } | ToolOrigin::Mcp { .. } => None,
        })
        .collect();
    families.extend(TOOL_GROUPS.iter().map(|g| g.id.to_owned()));
    TOOL_GROUPS.iter().fold(
        GroupCatalog::new(families, mcp_servers.iter().cloned()),
        |catalog, group| {
            group.aliases.iter().fold(catalog, |catalog, alias| {
                catalog.with_alias(*alias, group.id)
            })
        },
    )
}

/// The policy's caller. Its depth is the subagent depth the agent runner declared
/// (`ToolContext::subagent_depth`), which nested `callTool` calls inherit: a nested call is the
/// same agent calling through a tool, so it is neither deeper nor shallower.
fn caller(ctx: &ToolContext) -> Caller<'_> {
    Caller {
        user: &ctx.user_id,
        agent: ctx.agent_id.as_deref(),
        depth: ctx.subagent_depth,
    }
}

/// The user without the agent, when the caller chose the agent itself: what it may do bounds
/// what the agent may.
fn user_behind(ctx: &ToolContext) -> Option<Caller<'_>> {
    (ctx.agent_chosen_by_caller && ctx.agent_id.is_some()).then(|| Caller {
        user: &ctx.user_id,
        agent: None,
        depth: 0,
    })
}

/// The person behind a call made in an organisation's scope (`user_id` is the organisation's
/// id, [`ToolContext::member`] the person): the organisation's rules are its `users.<org id>`
/// scope, and the person's own (`users.<person>`, without an agent) bound them too, so acting
/// in an organisation never escapes what the operator denied the person.
fn person_behind(ctx: &ToolContext) -> Option<Caller<'_>> {
    ctx.member.as_deref().map(|member| Caller {
        user: member,
        agent: None,
        depth: 0,
    })
}

fn info(tool: &RegisteredTool) -> ToolInfo<'_> {
    ToolInfo {
        name: tool.name(),
        kind: match &tool.origin {
            ToolOrigin::BuiltIn { provider } => ToolKind::Builtin { family: provider },
            ToolOrigin::Custom { .. } => ToolKind::Custom,
            ToolOrigin::Mcp { server, .. } => ToolKind::Mcp { server },
        },
    }
}

/// Refuses calls the policy does not allow, before the arguments reach the tool.
pub struct PolicyMiddleware(pub Arc<PolicyGate>);

#[async_trait]
impl Middleware for PolicyMiddleware {
    fn name(&self) -> &'static str {
        "policy"
    }

    async fn before(&self, call: &mut Call) -> Result<(), ToolResult> {
        self.0.check(&call.ctx, &call.tool).map_err(|reason| {
            ToolResult::error(
                ErrorKind::Denied,
                format!(
                    "tool '{}' is not allowed for this caller: {reason}",
                    call.tool.name()
                ),
            )
        })
    }
}

#[cfg(test)]
mod tests;
