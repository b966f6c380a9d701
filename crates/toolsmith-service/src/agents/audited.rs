//! The doors' operations on agents, each recorded in the audit log as a tool's are: a
//! definition created (`agent.create`), changed (`agent.update`, with the names of the fields
//! that changed, never their text), deleted (`agent.delete`); a run started
//! (`agent.run.start`) or cancelled (`agent.run.cancel`). REST, the CLI and the MCP control
//! plane call these, with the actor of their request (a person, or a model); the unaudited
//! operations of `agents.rs` are the crate's own.

use serde_json::{Value, json};
use std::sync::Arc;
use toolsmith_core::ToolContext;
use toolsmith_core::agent::{AgentDefinition, AgentRecord, AgentRunRecord};

use super::AgentInput;
use crate::governance::audit::AuditTarget;
use crate::input::Actor;
use crate::{ServiceError, ToolService};

/// The context of an actor's operation on their definitions (only the user counts).
fn owner_context(actor: &Actor) -> ToolContext {
    let mut ctx = ToolContext::new(actor.user_id.clone());
    ctx.agent_id = actor.agent.clone();
    ctx
}

/// The names of the fields a change touched (never their values: instructions and context
/// files are a person's text).
fn changed_fields(before: &AgentRecord, after: &AgentRecord) -> Vec<&'static str> {
    let (b, a): (&AgentDefinition, &AgentDefinition) = (&before.definition, &after.definition);
    [
        ("name", before.name != after.name),
        ("displayName", b.display_name != a.display_name),
        ("instructions", b.instructions != a.instructions),
        ("model", b.model != a.model),
        ("toolPolicy", b.tool_policy != a.tool_policy),
        ("contextFiles", b.context_files != a.context_files),
        ("agentType", b.agent_type != a.agent_type),
        ("limits", b.limits != a.limits),
        ("qualityGates", b.quality_gates != a.quality_gates),
    ]
    .into_iter()
    .filter_map(|(field, changed)| changed.then_some(field))
    .collect()
}

impl ToolService {
    async fn audit_agent(
        &self,
        actor: &Actor,
        action: &str,
        revisions: (Option<i64>, Option<i64>),
        agent: &AgentRecord,
        details: Value,
    ) {
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("agent", agent.id.clone(), Some(agent.name.clone())),
                revisions,
                details,
            )
            .await;
    }

    async fn audit_run(&self, actor: &Actor, action: &str, run: &AgentRunRecord, name: &str) {
        let mut details = json!({"agentId": run.agent_id, "agentRevision": run.agent_revision});
        if action == "agent.run.cancel" {
            // How the run stands after: cancelled now, or as it had ended.
            toolsmith_core::object::set(&mut details, "status", json!(run.status.as_str()));
        }
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("agent_run", run.id.clone(), Some(name.to_owned())),
                (None, None),
                details,
            )
            .await;
    }

    /// Creates an agent of `actor`'s user, audited.
    pub async fn create_agent_as(
        &self,
        actor: &Actor,
        input: AgentInput,
    ) -> Result<AgentRecord, ServiceError> {
        let agent = self.create_agent(&owner_context(actor), input).await?;
        let model = &agent.definition.model;
        self.audit_agent(
            actor,
            "agent.create",
            (None, Some(agent.revision)),
            &agent,
            json!({"model": {"service": model.service, "model": model.model}}),
        )
        .await;
        Ok(agent)
    }

    /// Replaces the definition of `actor`'s agent `id_or_name` (a new revision), audited.
    pub async fn update_agent_as(
        &self,
        actor: &Actor,
        id_or_name: &str,
        input: AgentInput,
        expected_revision: Option<i64>,
    ) -> Result<AgentRecord, ServiceError> {
        let ctx = owner_context(actor);
        let before = self.get_agent(&ctx, id_or_name).await?;
        let after = self
            .update_agent(&ctx, &before.id, input, expected_revision)
            .await?;
        self.audit_agent(
            actor,
            "agent.update",
            (Some(after.revision - 1), Some(after.revision)),
            &after,
            json!({"changed": changed_fields(&before, &after)}),
        )
        .await;
        Ok(after)
    }

    /// Deletes `actor`'s agent `id_or_name`, audited; the agent as it was.
    pub async fn delete_agent_as(
        &self,
        actor: &Actor,
        id_or_name: &str,
    ) -> Result<AgentRecord, ServiceError> {
        let agent = self.get_agent(&owner_context(actor), id_or_name).await?;
        self.delete_read_agent_as(actor, agent, None).await
    }

    /// Deletes `actor`'s agent `agent` as it was read, audited — with `revision`, only while
    /// it is at that revision (see `delete_agent`); the agent as it was.
    pub(crate) async fn delete_read_agent_as(
        &self,
        actor: &Actor,
        agent: AgentRecord,
        revision: Option<i64>,
    ) -> Result<AgentRecord, ServiceError> {
        let ctx = owner_context(actor);
        self.delete_agent(&ctx, &agent, revision).await?;
        self.audit_agent(
            actor,
            "agent.delete",
            (Some(agent.revision), None),
            &agent,
            json!({}),
        )
        .await;
        Ok(agent)
    }

    /// Starts a run of the caller's agent `id_or_name` (see `start_agent_run`), audited.
    pub async fn start_agent_run_as(
        self: &Arc<Self>,
        actor: &Actor,
        ctx: &ToolContext,
        id_or_name: &str,
        input: String,
        wait: bool,
    ) -> Result<AgentRunRecord, ServiceError> {
        let agent = self.get_agent(ctx, id_or_name).await?;
        let run = self.start_agent_run(ctx, &agent.id, input, wait).await?;
        self.audit_run(actor, "agent.run.start", &run, &agent.name)
            .await;
        Ok(run)
    }

    /// Cancels the caller's run `run_id` (see `cancel_agent_run`), audited.
    pub async fn cancel_agent_run_as(
        &self,
        actor: &Actor,
        ctx: &ToolContext,
        run_id: &str,
    ) -> Result<AgentRunRecord, ServiceError> {
        let run = self.cancel_agent_run(ctx, run_id).await?;
        let name = match self.get_agent(ctx, &run.agent_id).await {
            Ok(agent) => agent.name,
            Err(_) => String::new(),
        };
        self.audit_run(actor, "agent.run.cancel", &run, &name).await;
        Ok(run)
    }
}
