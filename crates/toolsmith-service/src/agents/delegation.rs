//! Delegation (spec 001 §7): one of the caller's agents hands a task to another, fully
//! independent agent of the same user — which runs it *as itself*: its own toolPolicy,
//! provider, model and context files, under the operator's policy for it and every rule of
//! the pipeline.
//!
//! - **Agent links** are the permission, made by a person only (REST, the CLI; never a model):
//!   outbound (A→B: only A delegates to B) or bidirectional (A↔B), each with its
//!   `max_concurrent`. No link, no delegation: the refusal names the link to create.
//! - **Concurrency**, counted in the store's insert (so across instances): per link
//!   (`max_concurrent`) and per target from every source (its `limits.maxDelegationLoad`); past
//!   either, the refusal is written for the model ("Agent at capacity (5/5). Try a different
//!   agent or handle it yourself.").
//! - **The callback pattern**: the built-ins (`toolsmith-builtins`' `delegation.rs`) cannot
//!   reach the agents; they call through `SessionHost`, which the service provides at wiring
//!   time, and the target's run is started here with `launch_agent_run_scoped`.
//! - `delegate` **sync** waits for the target's answer; **async** answers at once and the
//!   result is announced later (`delegate:<id>`): inside a run, in its next model turn (the run
//!   waits for it before it ends, as for subagents); to an MCP client as a
//!   `notifications/message` (logger `toolsmith/delegation`); always in `history`.
//! - **DELEGATION.md** is added to the context of a run whose agent may call `delegate`: its
//!   targets inline (at most 15), or past 15 an instruction to find them with
//!   `delegate_search`.
//! - A delegated agent may delegate again, up to a chain of [`MAX_DELEGATION_DEPTH`].
//!
//! `handoff.rs` (§10) and `evaluate.rs` (§9) build on this.

use std::sync::Arc;

use chrono::Utc;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolsmith_core::agent::{AgentRecord, AgentRunRecord, AgentRunStatus, ContextFile};
use toolsmith_core::delegation::{
    AgentLinkRecord, DelegationAdmission, DelegationQuery, DelegationRecord, DelegationStatus,
    LinkDirection,
};
use toolsmith_core::{LogLevel, ToolContext};

use super::quality_gates::Gating;
use super::runner::Extras;
use super::sessions::{Args, check_text};
use crate::governance::audit::AuditTarget;
use crate::input::Actor;
use crate::{ServiceError, ToolService};

/// The tools of the `delegation` group, run by [`ToolService::delegation_tool`].
pub const DELEGATION_TOOLS: &[&str] = &["delegate", "delegate_search", "evaluate_loop", "handoff"];
/// The longest chain of delegations (A delegates to B, which delegates to C …).
pub const MAX_DELEGATION_DEPTH: u32 = 3;
/// A link's `max_concurrent` when the person names none.
pub const DEFAULT_LINK_CONCURRENCY: u32 = 3;
/// The highest `max_concurrent` a link may have.
pub const MAX_LINK_CONCURRENCY: u32 = 64;
/// Targets listed in DELEGATION.md; past it, the file points to `delegate_search`.
pub const INLINE_TARGETS: usize = 15;
/// The most delegations a listing returns.
pub const MAX_DELEGATIONS_LISTED: u32 = 200;
const MAX_DESCRIPTION_CHARS: usize = 500;

/// How a delegation is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The caller waits for the answer.
    Sync,
    /// The caller goes on; the result is announced.
    Async,
    /// A round of an evaluate loop (the caller waits).
    Evaluate,
    /// A quality gate's reviewer (the gate waits): `agents/quality_gates.rs`.
    Gate,
}

impl Mode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Mode::Sync => "sync",
            Mode::Async => "async",
            Mode::Evaluate => "evaluate",
            Mode::Gate => "gate",
        }
    }
}

/// A new link, as a person writes it (agents by name or id).
#[derive(Debug, Clone)]
pub struct LinkInput {
    pub from: String,
    pub to: String,
    pub direction: LinkDirection,
    pub max_concurrent: Option<u32>,
    pub description: String,
}

/// A link as the doors show it, with its agents' names.
pub fn link_json(link: &AgentLinkRecord, names: &(dyn Fn(&str) -> String + Sync)) -> Value {
    json!({
        "id": link.id,
        "from": names(&link.source_agent),
        "fromId": link.source_agent,
        "to": names(&link.target_agent),
        "toId": link.target_agent,
        "direction": link.direction.as_str(),
        "maxConcurrent": link.max_concurrent,
        "description": link.description,
        "createdAt": link.created_at,
    })
}

/// A delegation as the doors show it (its id also as the announcement's `delegate:<id>`).
pub fn delegation_json(d: &DelegationRecord, names: &(dyn Fn(&str) -> String + Sync)) -> Value {
    json!({
        "id": d.id,
        "from": names(&d.source_agent),
        "to": names(&d.target_agent),
        "mode": d.mode,
        "depth": d.depth,
        "status": d.status.as_str(),
        "task": d.task,
        "result": d.result,
        "error": d.error,
        "run": d.run_id,
        "parentRun": d.parent_run,
        "createdAt": d.created_at,
        "updatedAt": d.updated_at,
    })
}

fn status_of(run: AgentRunStatus) -> DelegationStatus {
    match run {
        AgentRunStatus::Completed => DelegationStatus::Completed,
        AgentRunStatus::Cancelled => DelegationStatus::Cancelled,
        AgentRunStatus::Failed => DelegationStatus::Failed,
        AgentRunStatus::Running | AgentRunStatus::WaitingApproval => DelegationStatus::Running,
    }
}

fn delegation_not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no delegation '{id}' of yours; list them with delegate (action list or history)"
    ))
}

/// Words of a text, lowercased, for the targets' search.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() > 1)
        .map(str::to_lowercase)
        .collect()
}

/// The first line of an agent's instructions, cut short: how DELEGATION.md and the search
/// describe it.
fn summary(agent: &AgentRecord) -> String {
    let first = agent
        .definition
        .instructions
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or_default()
        .trim();
    let mut text: String = first.chars().take(200).collect();
    if first.chars().count() > 200 {
        text.push('…');
    }
    text
}

impl ToolService {
    /// The names of the caller's agents, by id (an id stays as it is when its agent is gone).
    pub(crate) async fn agent_names(
        &self,
        owner: &str,
    ) -> Result<std::collections::HashMap<String, String>, ServiceError> {
        Ok(self
            .store
            .list_agents(owner)
            .await?
            .into_iter()
            .map(|a| (a.id, a.name))
            .collect())
    }

    /// Creates a link between two agents of `actor`'s user (a person: the doors refuse a
    /// model), audited (`agent_link.create`).
    pub async fn create_agent_link_as(
        &self,
        actor: &Actor,
        input: LinkInput,
    ) -> Result<AgentLinkRecord, ServiceError> {
        let ctx = ToolContext::new(actor.user_id.clone());
        let from = self.get_agent(&ctx, &input.from).await?;
        let to = self.get_agent(&ctx, &input.to).await?;
        if from.id == to.id {
            return Err(ServiceError::Validation(format!(
                "a link joins two different agents; '{}' is named on both ends",
                from.name
            )));
        }
        let max = input.max_concurrent.unwrap_or(DEFAULT_LINK_CONCURRENCY);
        if max == 0 || max > MAX_LINK_CONCURRENCY {
            return Err(ServiceError::Validation(format!(
                "maxConcurrent: between 1 and {MAX_LINK_CONCURRENCY}, not {max}"
            )));
        }
        if input.description.chars().count() > MAX_DESCRIPTION_CHARS {
            return Err(ServiceError::Validation(format!(
                "description: at most {MAX_DESCRIPTION_CHARS} characters"
            )));
        }
        let link = AgentLinkRecord {
            id: format!("lnk_{}", uuid::Uuid::new_v4().simple()),
            owner: actor.user_id.clone(),
            source_agent: from.id.clone(),
            target_agent: to.id.clone(),
            direction: input.direction,
            max_concurrent: max,
            description: input.description,
            created_at: Utc::now(),
        };
        if !self.store.insert_agent_link(&link).await? {
            return Err(ServiceError::NameTaken(format!(
                "'{}' and '{}' are linked already: delete that link first to change its \
                 direction (GET /api/v1/agent-links lists yours)",
                from.name, to.name
            )));
        }
        self.audit
            .record(
                actor,
                "agent_link.create",
                AuditTarget::new("agent_link", link.id.clone(), None),
                (None, None),
                json!({"from": from.name, "to": to.name, "direction": link.direction.as_str(),
                    "maxConcurrent": link.max_concurrent}),
            )
            .await;
        Ok(link)
    }

    /// The links of the caller's user, oldest first.
    pub async fn list_agent_links(
        &self,
        ctx: &ToolContext,
    ) -> Result<Vec<AgentLinkRecord>, ServiceError> {
        Ok(self.store.list_agent_links(&ctx.user_id).await?)
    }

    /// Deletes the link `id` of `actor`'s user, audited (`agent_link.delete`); the link as it
    /// was. Running delegations over it go on.
    pub async fn delete_agent_link_as(
        &self,
        actor: &Actor,
        id: &str,
    ) -> Result<AgentLinkRecord, ServiceError> {
        let not_found = || {
            ServiceError::NotFound(format!(
                "no agent link '{id}' of yours; list them with GET /api/v1/agent-links"
            ))
        };
        let link = self
            .store
            .list_agent_links(&actor.user_id)
            .await?
            .into_iter()
            .find(|l| l.id == id)
            .ok_or_else(not_found)?;
        if !self.store.delete_agent_link(&actor.user_id, id).await? {
            return Err(not_found());
        }
        self.audit
            .record(
                actor,
                "agent_link.delete",
                AuditTarget::new("agent_link", id.to_owned(), None),
                (None, None),
                json!({}),
            )
            .await;
        Ok(link)
    }

    /// The caller's delegations, newest first: a person's all (or one agent's, by name or id),
    /// an agent's those it made or was given.
    pub async fn list_delegations(
        &self,
        ctx: &ToolContext,
        agent: Option<&str>,
        active: bool,
        limit: u32,
    ) -> Result<Vec<DelegationRecord>, ServiceError> {
        let agent = match (agent, ctx.agent_id.as_deref()) {
            (Some(agent), _) => Some(self.get_agent(ctx, agent).await?.id),
            (None, Some(own)) => Some(
                self.delegating_agent(ctx)
                    .await
                    .map_or_else(|_| own.to_owned(), |a| a.id),
            ),
            (None, None) => None,
        };
        let query = DelegationQuery {
            agent,
            active,
            limit: limit.clamp(1, MAX_DELEGATIONS_LISTED),
        };
        Ok(self.store.list_delegations(&ctx.user_id, &query).await?)
    }

    /// The agent that delegates: the agent the caller is (a run's agent, or a token or
    /// `X-Toolsmith-Agent` naming one of the user's agent definitions, by id or name).
    pub(crate) async fn delegating_agent(
        &self,
        ctx: &ToolContext,
    ) -> Result<AgentRecord, ServiceError> {
        if let Some(own) = ctx.agent_id.as_deref()
            && let Some(agent) = self.store.get_agent(&ctx.user_id, own).await?
        {
            return Ok(agent);
        }
        Err(ServiceError::Validation(
            "delegation is between your agents: call it inside an agent's run, or as one of \
             your agent definitions (a token bound to it, or X-Toolsmith-Agent naming it by id \
             or name)"
                .to_owned(),
        ))
    }

    /// The link that lets `from` delegate to `to`, or the refusal naming the link to create.
    pub(crate) async fn link_between(
        &self,
        owner: &str,
        from: &AgentRecord,
        to: &AgentRecord,
    ) -> Result<AgentLinkRecord, ServiceError> {
        self.store
            .list_agent_links(owner)
            .await?
            .into_iter()
            .find(|l| l.allows(&from.id, &to.id))
            .ok_or_else(|| {
                ServiceError::Forbidden(format!(
                    "no agent link lets '{}' delegate to '{}': a person creates it (POST \
                     /api/v1/agent-links {{\"from\": \"{}\", \"to\": \"{}\"}}, or `toolsmith \
                     agent link {} {}`); a model cannot. Handle the task yourself meanwhile",
                    from.name, to.name, from.name, to.name, from.name, to.name
                ))
            })
    }

    /// The agents `agent` may delegate to, each with the link that allows it.
    pub(crate) async fn delegation_targets(
        &self,
        agent: &AgentRecord,
    ) -> Result<Vec<(AgentRecord, AgentLinkRecord)>, ServiceError> {
        let links = self.store.list_agent_links(&agent.owner).await?;
        let agents = self.store.list_agents(&agent.owner).await?;
        Ok(agents
            .into_iter()
            .filter(|a| a.id != agent.id)
            .filter_map(|a| {
                let link = links.iter().find(|l| l.allows(&agent.id, &a.id))?.clone();
                Some((a, link))
            })
            .collect())
    }

    /// DELEGATION.md for a run of `agent` that may call `delegate`: its targets inline (at most
    /// [`INLINE_TARGETS`]), else how to find them; `None` without a target.
    pub(crate) async fn delegation_file(&self, agent: &AgentRecord) -> Option<ContextFile> {
        let targets = match self.delegation_targets(agent).await {
            Ok(targets) if !targets.is_empty() => targets,
            Ok(_) => return None,
            Err(e) => {
                tracing::warn!(agent = %agent.id, "reading an agent's links failed: {e}");
                return None;
            }
        };
        let mut text = String::from(
            "You can hand a task to another agent with the `delegate` tool (action \"delegate\", \
             agent: its key, task: everything it needs; mode \"sync\" waits for its answer, \
             \"async\" goes on and the result comes to you later). It works with its own tools \
             and model and sees nothing of your conversation but the task.\n",
        );
        if targets.len() > INLINE_TARGETS {
            text.push_str(&format!(
                "\nYou may delegate to {} agents: find the right one with `delegate_search` \
                 (query: what the task needs), then delegate to it.\n",
                targets.len()
            ));
        } else {
            text.push_str("\nAgents you may delegate to:\n");
            for (target, link) in &targets {
                let name = if target.definition.display_name.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", target.definition.display_name)
                };
                let mut about = summary(target);
                if !link.description.is_empty() {
                    about = format!("{about} — {}", link.description);
                }
                text.push_str(&format!("- `{}`{name}: {about}\n", target.name));
            }
        }
        Some(ContextFile {
            name: "DELEGATION.md".to_owned(),
            text,
        })
    }

    /// Adds DELEGATION.md to the context of a run of `agent` when the run may call `delegate`
    /// (the group is on and its scope allows it) and the agent has targets; a definition's own
    /// DELEGATION.md is kept as written.
    pub(crate) async fn with_delegation_file(
        &self,
        ctx: &ToolContext,
        mut agent: AgentRecord,
        scope: &toolsmith_core::Narrowing,
    ) -> AgentRecord {
        if agent
            .definition
            .context_files
            .iter()
            .any(|f| f.name == "DELEGATION.md")
        {
            return agent;
        }
        let mut probe = ToolContext::new(ctx.user_id.clone());
        probe.agent_id = Some(agent.id.clone());
        probe.agent_chosen_by_caller = true;
        probe.subagent_depth = ctx.subagent_depth;
        probe.narrowing = Some(scope.clone());
        let may_delegate = self
            .registry
            .get(&ctx.user_id, "delegate")
            .is_some_and(|tool| self.may_call(&probe, &tool));
        if may_delegate && let Some(file) = self.delegation_file(&agent).await {
            agent.definition.context_files.push(file);
        }
        agent
    }

    /// Delegates `task` from the caller's agent to `target` (by name or id) in `mode`. Sync
    /// and evaluate answer with the delegation as it ended; async at once, running.
    ///
    /// Errors: `Validation` (no delegating agent, itself, the task), `NotFound` (the target),
    /// `Forbidden` (no link: the message names the link to create), `LimitReached` (the link,
    /// the target or the chain at capacity, in words for the model), and what starting the
    /// target's run refuses.
    pub(crate) async fn delegate(
        self: &Arc<Self>,
        ctx: &ToolContext,
        target: &str,
        task: String,
        context: Option<String>,
        mode: Mode,
    ) -> Result<DelegationRecord, ServiceError> {
        check_text("task", &task)?;
        let source = self.delegating_agent(ctx).await?;
        let target = self.get_agent(ctx, target).await?;
        if target.id == source.id {
            return Err(ServiceError::Validation(format!(
                "'{}' cannot delegate to itself: do the task, or delegate to another agent",
                source.name
            )));
        }
        let link = self.link_between(&ctx.user_id, &source, &target).await?;
        let parent_run = ctx.conversation_id.clone();
        let parent = match parent_run.as_deref() {
            Some(run) => self.store.delegation_of_run(&ctx.user_id, run).await?,
            None => None,
        };
        let depth = parent.as_ref().map_or(1, |p| p.depth + 1);
        if depth > MAX_DELEGATION_DEPTH {
            return Err(ServiceError::LimitReached(format!(
                "this task was delegated {} times already, the longest chain allowed \
                 ({MAX_DELEGATION_DEPTH}): handle it yourself",
                depth - 1
            )));
        }
        let now = Utc::now();
        let mut record = DelegationRecord {
            id: format!("dlg_{}", uuid::Uuid::new_v4().simple()),
            owner: ctx.user_id.clone(),
            source_agent: source.id.clone(),
            target_agent: target.id.clone(),
            link_id: link.id.clone(),
            mode: mode.as_str().to_owned(),
            depth,
            parent_run,
            run_id: None,
            status: DelegationStatus::Running,
            task: task.clone(),
            result: None,
            error: None,
            created_at: now,
            updated_at: now,
        };
        let load = target.definition.limits.max_delegation_load;
        match self
            .store
            .insert_delegation_within(&record, link.max_concurrent, load)
            .await?
        {
            DelegationAdmission::Started => {}
            DelegationAdmission::LinkAtCap(n) => {
                return Err(ServiceError::LimitReached(format!(
                    "Link to '{}' at capacity ({n}/{n}). Try a different agent or handle it \
                     yourself.",
                    target.name
                )));
            }
            DelegationAdmission::AgentAtCap(n) => {
                return Err(ServiceError::LimitReached(format!(
                    "Agent '{}' at capacity ({n}/{n}). Try a different agent or handle it \
                     yourself.",
                    target.name
                )));
            }
        }
        // The target's run: the source's user, started by the source agent (its runs are
        // the source's to read and cancel), under the target's own scope alone — the person's
        // link is the permission, so the source's toolPolicy does not narrow it.
        let mut child = ctx.clone();
        child.call_id = toolsmith_core::model::new_call_id();
        child.agent_id = Some(source.id.clone());
        child.cancellation = CancellationToken::new();
        child.depth = 0;
        child.granted_permissions = None;
        child.deadline = None;
        child.approver = None;
        child.client = None;
        child.narrowing = None;
        let scope = self.own_scope(&target)?;
        let mut input = format!(
            "[a task delegated to you by agent '{}']\n{task}",
            source.name
        );
        if let Some(context) = context.filter(|c| !c.trim().is_empty()) {
            input.push_str(&format!("\n\nContext:\n{context}"));
        }
        // The source's quality gates judge the answer (spec 001 §11), unless skipped.
        let gating = if source.definition.quality_gates.is_empty()
            || self
                .hooks_skipped(&ctx.user_id, mode, parent.as_ref())
                .await
        {
            None
        } else {
            Some(Gating::new(ctx, &child, &source, &target, &input, &scope))
        };
        let launched = self
            .launch_agent_run_scoped(&child, target.clone(), input, Extras::default(), scope)
            .await;
        let (run, handle) = match launched {
            Ok(launched) => launched,
            Err(e) => {
                record.status = DelegationStatus::Failed;
                record.error = Some(e.to_string());
                record.updated_at = Utc::now();
                self.store.update_delegation(&record).await?;
                return Err(e);
            }
        };
        let announce = match mode {
            Mode::Async => self.announcer(ctx),
            Mode::Sync | Mode::Evaluate | Mode::Gate => Announcer::None,
        };
        record.run_id = Some(run.id.clone());
        record.updated_at = Utc::now();
        self.store.update_delegation(&record).await?;
        let started = record.clone();
        let service = Arc::clone(self);
        let target_name = target.name.clone();
        let watcher = tokio::spawn(async move {
            let ended = match (handle.await, gating) {
                (Ok(run), Some(gating)) => Ok(service.gated(gating, &mut record, run).await),
                (ended, _) => ended,
            };
            let ended = service.delegation_ended(record, ended).await;
            announce.deliver(&ended, &target_name).await;
            ended
        });
        if mode == Mode::Async {
            return Ok(started);
        }
        let cancelled = ctx.cancellation.clone();
        tokio::select! {
            ended = watcher => ended.map_err(|e| ServiceError::Validation(format!(
                "the delegated run stopped unexpectedly ({e}); read it with delegate (action \
                 history)"
            ))),
            () = cancelled.cancelled() => {
                // The caller went away (its run cancelled): so does the task it waited for.
                let _ = self.cancel_delegation(ctx, &started.id).await;
                Ok(self.store.get_delegation(&ctx.user_id, &started.id).await?.unwrap_or(started))
            }
        }
    }

    /// The scope of `agent`'s own runs: its toolPolicy (and what bounds its definition), no
    /// starter's.
    fn own_scope(&self, agent: &AgentRecord) -> Result<toolsmith_core::Narrowing, ServiceError> {
        self.agent_scope(agent, &ToolContext::new(agent.owner.clone()))
    }

    /// Records how the target's run of `record` ended; the delegation as stored after.
    async fn delegation_ended(
        &self,
        mut record: DelegationRecord,
        ended: Result<AgentRunRecord, tokio::task::JoinError>,
    ) -> DelegationRecord {
        match ended {
            Ok(run) => {
                record.status = match status_of(run.status) {
                    DelegationStatus::Running => DelegationStatus::Failed,
                    other => other,
                };
                record.result = run.output;
                record.error = run.error;
            }
            Err(e) => {
                record.status = DelegationStatus::Failed;
                record.error = Some(format!("the run stopped unexpectedly ({e})"));
            }
        }
        record.updated_at = Utc::now();
        if let Err(e) = self.store.update_delegation(&record).await {
            tracing::warn!(delegation = %record.id, "recording a delegation's end failed: {e}");
        }
        self.store
            .get_delegation(&record.owner, &record.id)
            .await
            .ok()
            .flatten()
            .unwrap_or(record)
    }

    /// Cancels the caller's running delegation `id` (one its agent made, or any of a
    /// person's) and the target's run, here or on the instance that runs it.
    pub(crate) async fn cancel_delegation(
        &self,
        ctx: &ToolContext,
        id: &str,
    ) -> Result<DelegationRecord, ServiceError> {
        let mut record = self
            .store
            .get_delegation(&ctx.user_id, id)
            .await?
            .ok_or_else(|| delegation_not_found(id))?;
        if ctx.agent_id.is_some() {
            let own = self.delegating_agent(ctx).await?;
            if own.id != record.source_agent {
                return Err(delegation_not_found(id));
            }
        }
        if record.status != DelegationStatus::Running {
            return Ok(record);
        }
        let who = ctx.agent_id.as_deref().map_or_else(
            || format!("user {}", ctx.user_id),
            |agent| format!("agent {agent} of user {}", ctx.user_id),
        );
        record.status = DelegationStatus::Cancelled;
        record.error = Some(format!("cancelled by {who}"));
        record.updated_at = Utc::now();
        self.store.update_delegation(&record).await?;
        if let Some(run) = &record.run_id {
            let mut starter = ToolContext::new(ctx.user_id.clone());
            starter.agent_id = Some(record.source_agent.clone());
            let actor = if ctx.by_model() {
                Actor::llm(ctx.user_id.clone())
                    .with_agent(ctx.agent_id.clone())
                    .with_member(ctx.member.clone())
            } else {
                Actor::for_caller(ctx.user_id.clone(), ctx.agent_id.clone())
                    .with_member(ctx.member.clone())
            };
            self.cancel_agent_run_as(&actor, &starter, run).await?;
        }
        Ok(self
            .store
            .get_delegation(&ctx.user_id, id)
            .await?
            .unwrap_or(record))
    }

    /// Where an async delegation's result goes: the calling run's next turn (a run of this
    /// instance), else the caller's client.
    fn announcer(&self, ctx: &ToolContext) -> Announcer {
        if let Some(run) = ctx.conversation_id.as_deref()
            && let Some(inbox) = self.subagents.inbox_of(run, &ctx.user_id)
        {
            inbox.expect();
            return Announcer::Run(inbox);
        }
        match &ctx.client {
            Some(client) => Announcer::Client(client.clone()),
            None => Announcer::None,
        }
    }

    /// The targets of the caller's agent that match `query`, best first: a full-text match
    /// over each target's name, display name, instructions and link description, plus, with
    /// the user's embeddings service, the similarity of their embeddings
    /// (`delegation_embeddings.rs`): a target is found by either, ranked by both.
    pub(crate) async fn search_delegation_targets(
        &self,
        ctx: &ToolContext,
        query: &str,
        limit: usize,
    ) -> Result<Value, ServiceError> {
        let source = self.delegating_agent(ctx).await?;
        let targets = self.delegation_targets(&source).await?;
        let wanted = words(query);
        if wanted.is_empty() {
            return Err(ServiceError::Validation(
                "query: a few words of what the task needs (e.g. \"invoices refunds\")".to_owned(),
            ));
        }
        let similarity = self.target_similarity(ctx, query, &targets).await;
        let mut hits: Vec<(f64, u32, Option<f64>, &AgentRecord, &AgentLinkRecord)> = targets
            .iter()
            .enumerate()
            .filter_map(|(index, (agent, link))| {
                let fields = [
                    (words(&agent.name.replace('_', " ")), 3),
                    (words(&agent.definition.display_name), 3),
                    (words(&link.description), 2),
                    (words(&agent.definition.instructions), 1),
                ];
                let score: u32 = wanted
                    .iter()
                    .map(|w| {
                        fields
                            .iter()
                            .filter(|(text, _)| {
                                text.iter()
                                    .any(|t| t == w || (w.len() > 3 && t.starts_with(w.as_str())))
                            })
                            .map(|(_, weight)| *weight)
                            .sum::<u32>()
                    })
                    .sum();
                let rank = similarity.rank(index, f64::from(score))?;
                Some((rank, score, similarity.of(index), agent, link))
            })
            .collect();
        hits.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.3.name.cmp(&b.3.name)));
        let found: Vec<Value> = hits
            .iter()
            .take(limit.clamp(1, 20))
            .map(|(_, score, close, agent, link)| {
                let mut hit = json!({
                    "agent": agent.name,
                    "displayName": agent.definition.display_name,
                    "description": summary(agent),
                    "link": link.description,
                    "score": score,
                });
                if let Some(close) = close {
                    let rounded = (close * 1000.0).round() / 1000.0;
                    toolsmith_core::object::set(&mut hit, "similarity", json!(rounded));
                }
                hit
            })
            .collect();
        let next = if found.is_empty() {
            format!(
                "none of the {} agents you may delegate to matches; handle the task yourself, \
                 or try other words",
                targets.len()
            )
        } else {
            "call delegate with one of these agents".to_owned()
        };
        let mut answer = json!({"agents": found, "targets": targets.len(), "next": next});
        similarity.note(&mut answer, false);
        Ok(answer)
    }

    /// Runs the delegation tool `tool` for the caller of `ctx`.
    pub(crate) async fn delegation_tool(
        self: &Arc<Self>,
        tool: &str,
        args: &Args,
        ctx: &ToolContext,
    ) -> Result<Value, ServiceError> {
        let names = self.agent_names(&ctx.user_id).await?;
        let name = |id: &str| names.get(id).cloned().unwrap_or_else(|| id.to_owned());
        match tool {
            "delegate" => {
                let action = args.str("action")?.unwrap_or_else(|| "delegate".to_owned());
                match action.as_str() {
                    "delegate" => {
                        let mode = match args.str("mode")?.as_deref() {
                            None | Some("sync") => Mode::Sync,
                            Some("async") => Mode::Async,
                            Some(other) => {
                                return Err(ServiceError::Validation(format!(
                                    "mode: 'sync' (wait for the answer) or 'async' (go on; the \
                                     result comes later), not '{other}'"
                                )));
                            }
                        };
                        let d = self
                            .delegate(
                                ctx,
                                &args.required("agent")?,
                                args.required("task")?,
                                args.str("context")?,
                                mode,
                            )
                            .await?;
                        Ok(delegation_json(&d, &name))
                    }
                    "cancel" => {
                        let d = self.cancel_delegation(ctx, &args.required("id")?).await?;
                        Ok(delegation_json(&d, &name))
                    }
                    "list" | "history" => {
                        let limit = args
                            .0
                            .get("limit")
                            .and_then(Value::as_u64)
                            .and_then(|n| u32::try_from(n).ok())
                            .unwrap_or(50);
                        let all = self
                            .list_delegations(ctx, None, action == "list", limit)
                            .await?;
                        Ok(json!({
                            "delegations": all.iter().map(|d| delegation_json(d, &name)).collect::<Vec<_>>(),
                        }))
                    }
                    other => Err(ServiceError::Validation(format!(
                        "action: one of delegate, cancel, list, history, not '{other}'"
                    ))),
                }
            }
            "delegate_search" => {
                let limit = args
                    .0
                    .get("limit")
                    .and_then(Value::as_u64)
                    .and_then(|n| usize::try_from(n).ok())
                    .unwrap_or(5);
                self.search_delegation_targets(ctx, &args.required("query")?, limit)
                    .await
            }
            "evaluate_loop" => self.evaluate_loop_tool(args, ctx, &name).await,
            "handoff" => self.handoff_tool(args, ctx, &name).await,
            other => Err(ServiceError::NotFound(format!(
                "no delegation tool '{other}'"
            ))),
        }
    }
}

/// Where an async delegation's end is announced.
enum Announcer {
    /// The delegating run: its next model turn.
    Run(Arc<super::subagents::Inbox>),
    /// The delegating client: a log notification on its MCP session.
    Client(toolsmith_core::Client),
    None,
}

impl Announcer {
    async fn deliver(&self, d: &DelegationRecord, target: &str) {
        match self {
            Announcer::Run(inbox) => {
                let outcome = match (&d.result, &d.error) {
                    (Some(result), _) => result.clone(),
                    (None, Some(error)) => format!("error: {error}"),
                    (None, None) => "(no answer)".to_owned(),
                };
                inbox.leave(
                    format!(
                        "[delegate:{} to '{target}' {}]\n{outcome}",
                        d.id,
                        d.status.as_str()
                    ),
                    true,
                );
            }
            Announcer::Client(client) => {
                let data = json!({
                    "event": "delegation_ended",
                    "id": format!("delegate:{}", d.id),
                    "delegation": d.id,
                    "to": target,
                    "status": d.status.as_str(),
                    "result": d.result,
                    "error": d.error,
                });
                if let Err(e) = client
                    .log(
                        LogLevel::Info,
                        Some("toolsmith/delegation".to_owned()),
                        data,
                    )
                    .await
                {
                    tracing::debug!(delegation = %d.id, "announcing a delegation's end failed: {e}");
                }
            }
            Announcer::None => {}
        }
    }
}
