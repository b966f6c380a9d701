//! What a model may do to agent definitions (MCP's `manage_agents`, issues 37 and 40): the
//! rules a definition a model writes is held to, beyond a person's.
//!
//! - **It reaches no more than its author.** Its `toolPolicy` may not name (by name or by
//!   group) a tool its author may not call: refused when written, naming the tools. And every
//!   call of its runs is held to what the author may call ([`AuthorBound`], part of the run's
//!   narrowing), so a tool reached through `*` or a profile, or registered later, is bounded
//!   too. The author is the agent the model called as (or its user's own client), as the
//!   policy reads it.
//! - **Its limits are at most the defaults** (`maxIterations` 20, `wallTimeSecs` 600,
//!   `maxConcurrentRuns` 4): how much of its owner's model key one run may spend is a person's
//!   decision, who raises them over REST or the CLI (the revision is then theirs).
//! - **It changes and deletes only what a model wrote.** A person's definition is what their
//!   runs trust; a model rewriting its instructions or widening its policy would act in the
//!   person's name.
//!
//! No model-written definition waits for an approval: a definition runs nothing by itself,
//! each run is bounded as above and by the per-user caps (`agent_max_definitions`,
//! `agent_max_running`), and every tool call of a run meets approvals as any call does.

use std::sync::Arc;

use toolsmith_core::agent::{AgentLimits, AgentRecord, ModelAuthor};
use toolsmith_core::{Narrowing, Narrows, RegisteredTool, ToolContext, ToolOrigin};

use super::AgentInput;
use crate::governance::policy::PolicyGate;
use crate::input::Actor;
use crate::{ServiceError, ToolService};

/// The author a model's context makes.
fn author_of(ctx: &ToolContext) -> ModelAuthor {
    ModelAuthor {
        agent: ctx.agent_id.clone(),
        agent_chosen_by_caller: ctx.agent_chosen_by_caller && ctx.agent_id.is_some(),
    }
}

/// The context of a definition's author, as the policy decides on it.
fn author_context(user: &str, author: &ModelAuthor) -> ToolContext {
    let mut ctx = ToolContext::new(user.to_owned());
    ctx.agent_id = author.agent.clone();
    ctx.agent_chosen_by_caller = author.agent_chosen_by_caller;
    ctx.model_caller = true;
    ctx
}

/// Refuses a change of `agent` by a model when a person wrote its current revision.
fn written_by_a_model(agent: &AgentRecord, what: &str) -> Result<(), ServiceError> {
    if agent.definition.written_by_model.is_some() {
        return Ok(());
    }
    Err(ServiceError::Forbidden(format!(
        "agent '{}' was written by a person: a model may not {what} it; ask the person to do \
         it (PUT or DELETE /api/v1/agents/{}, `toolsmith agent`), or create an agent of your \
         own with manage_agents",
        agent.name, agent.name
    )))
}

/// Refuses limits above the defaults.
fn check_limits(limits: &AgentLimits) -> Result<(), ServiceError> {
    let defaults = AgentLimits::default();
    let over: Vec<String> = [
        (
            "maxIterations",
            u64::from(limits.max_iterations),
            u64::from(defaults.max_iterations),
        ),
        (
            "wallTimeSecs",
            limits.wall_time_secs,
            defaults.wall_time_secs,
        ),
        (
            "maxConcurrentRuns",
            u64::from(limits.max_concurrent_runs),
            u64::from(defaults.max_concurrent_runs),
        ),
    ]
    .into_iter()
    .filter(|(_, value, max)| value > max)
    .map(|(field, value, max)| format!("{field} {value} (at most {max})"))
    .collect();
    if over.is_empty() {
        return Ok(());
    }
    Err(ServiceError::Forbidden(format!(
        "limits: {}: a definition a model writes keeps the default limits or lower, since each \
         run spends its owner's model key; leave them out, or ask a person to raise them (PUT \
         /api/v1/agents/{{id}})",
        over.join(", ")
    )))
}

/// Whether `entry` of a tool policy names `tool` itself: its name, or its group (a built-in's
/// provider, `mcp:<server>` for a bridged tool).
fn names_tool(entry: &str, tool: &RegisteredTool) -> bool {
    if entry == tool.name() {
        return true;
    }
    let Some(group) = entry.strip_prefix("group:") else {
        return false;
    };
    match &tool.origin {
        ToolOrigin::BuiltIn { provider } => group == provider,
        ToolOrigin::Mcp { server, .. } => group.strip_prefix("mcp:") == Some(server.as_str()),
        ToolOrigin::Custom { .. } => false,
    }
}

/// Every call of a run of a model-written definition, held to what the model that wrote it may
/// call, after the definition's own scope.
struct AuthorBound {
    scope: Narrowing,
    gate: Arc<PolicyGate>,
    author: ToolContext,
    agent_name: String,
}

impl Narrows for AuthorBound {
    fn check(&self, ctx: &ToolContext, tool: &RegisteredTool) -> Result<(), String> {
        self.scope.check(ctx, tool)?;
        let reach = if tool.is_visible_to(self.author.agent_id.as_deref()) {
            self.gate.check(&self.author, tool)
        } else {
            Err("not visible to it".to_owned())
        };
        reach.map_err(|reason| {
            format!(
                "'{}' may not be called by the model that wrote agent '{}' ({reason}), and a \
                 definition a model writes reaches no more than its author; a person may take \
                 the definition over and widen it (PUT /api/v1/agents/{})",
                tool.name(),
                self.agent_name,
                self.agent_name
            )
        })
    }
}

impl ToolService {
    /// `scope` (a run's narrowing by `agent`'s definition), bounded by the reach of the model
    /// that wrote the definition when a model did.
    pub(crate) fn bounded_by_author(&self, agent: &AgentRecord, scope: Narrowing) -> Narrowing {
        match &agent.definition.written_by_model {
            None => scope,
            Some(author) => Narrowing(Arc::new(AuthorBound {
                scope,
                gate: Arc::clone(&self.policy),
                author: author_context(&agent.owner, author),
                agent_name: agent.name.clone(),
            })),
        }
    }

    /// Checks what a model wrote (limits, and the tools its policy names against the
    /// author's reach) and marks it as the model's.
    fn model_input(
        &self,
        author: &ToolContext,
        mut input: AgentInput,
    ) -> Result<AgentInput, ServiceError> {
        check_limits(&input.definition.limits)?;
        super::quality_gates::check_gates_by_model(&input.definition.quality_gates)?;
        input.definition.written_by_model = None;
        let probe = AgentRecord {
            id: format!("agt_{}", uuid::Uuid::new_v4().simple()),
            owner: author.user_id.clone(),
            name: input.name.clone(),
            revision: 1,
            definition: input.definition.clone(),
            created_at: chrono::Utc::now(),
            updated_at: chrono::Utc::now(),
        };
        // What the definition alone reaches, as its runs' calls are checked.
        let scope = self.agent_scope(&probe, &ToolContext::new(author.user_id.clone()))?;
        let mut run = ToolContext::new(author.user_id.clone());
        run.agent_id = Some(probe.id.clone());
        run.agent_chosen_by_caller = true;
        let policy = &input.definition.tool_policy;
        let named: Vec<&String> = policy
            .allow
            .iter()
            .chain(&policy.also_allow)
            .filter(|entry| entry.as_str() != "*")
            .collect();
        let mut beyond: Vec<String> = self
            .registry
            .tools(&author.user_id)
            .into_iter()
            .filter(|tool| named.iter().any(|entry| names_tool(entry, tool)))
            .filter(|tool| scope.check(&run, tool).is_ok() && !self.may_call(author, tool))
            .map(|tool| tool.name().to_owned())
            .collect();
        if !beyond.is_empty() {
            beyond.sort();
            beyond.dedup();
            return Err(ServiceError::Forbidden(format!(
                "toolPolicy names {}, which you may not call yourself: a definition a model \
                 writes reaches no more than its author; leave them out (its runs are held to \
                 what you may call in any case)",
                beyond
                    .iter()
                    .map(|name| format!("'{name}'"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        input.definition.written_by_model = Some(author_of(author));
        Ok(input)
    }

    /// Creates an agent written by a model calling as `author` (MCP's `manage_agents`):
    /// the rules of this module, then `create_agent_as`'s (the owner, `agent_max_definitions`,
    /// the audit).
    pub async fn create_agent_by_model(
        &self,
        actor: &Actor,
        author: &ToolContext,
        input: AgentInput,
    ) -> Result<AgentRecord, ServiceError> {
        let input = self.model_input(author, input)?;
        self.create_agent_as(actor, input).await
    }

    /// Replaces a model-written definition by a model's (a new revision), as
    /// `update_agent_as`; without `expected_revision`, the one read here is expected, so a
    /// person's change made meanwhile is never overwritten.
    pub async fn update_agent_by_model(
        &self,
        actor: &Actor,
        author: &ToolContext,
        id_or_name: &str,
        input: AgentInput,
        expected_revision: Option<i64>,
    ) -> Result<AgentRecord, ServiceError> {
        let stored = self.get_agent(author, id_or_name).await?;
        written_by_a_model(&stored, "change")?;
        let input = self.model_input(author, input)?;
        let expected = expected_revision.or(Some(stored.revision));
        self.update_agent_as(actor, &stored.id, input, expected)
            .await
    }

    /// Deletes a model-written definition, as `delete_agent_as`: only at the revision read
    /// here, which a model wrote (one conditional write), so a person's change made between
    /// the read and the delete is never lost with it.
    pub async fn delete_agent_by_model(
        &self,
        actor: &Actor,
        author: &ToolContext,
        id_or_name: &str,
    ) -> Result<AgentRecord, ServiceError> {
        let stored = self.agent_a_model_may_delete(author, id_or_name).await?;
        let revision = stored.revision;
        self.delete_read_agent_as(actor, stored, Some(revision))
            .await
    }

    /// The definition `id_or_name` as read for a model's delete: refused when a person wrote
    /// its current revision.
    async fn agent_a_model_may_delete(
        &self,
        author: &ToolContext,
        id_or_name: &str,
    ) -> Result<AgentRecord, ServiceError> {
        let stored = self.get_agent(author, id_or_name).await?;
        written_by_a_model(&stored, "delete")?;
        Ok(stored)
    }
}

#[cfg(test)]
mod tests;
