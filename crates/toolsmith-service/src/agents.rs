//! Agents Toolsmith runs itself (issue 37): their definitions, the model providers they speak
//! to, and the runner that drives them.
//!
//! - this module — the operations every face calls: an agent's definition created, changed
//!   (each change a new revision, every revision kept), read, listed and deleted, always of the
//!   caller's user alone; a run started, read, listed and cancelled, always of the caller's
//!   user and agent alone.
//! - [`providers`] — OpenAI-compatible Chat Completions and Anthropic Messages, configured as
//!   Config Center services, reached through the egress guard.
//! - `runner` — the loop: model → tool calls through the one pipeline as the agent → results
//!   back to the model …, bounded by the agent's limits, every step recorded.
//!
//! A run calls tools with a `ToolContext` of the run's user whose `agent_id` is the agent's
//! id, marked as an agent the caller chose (`agent_chosen_by_caller`), so the operator's
//! policy for the user bounds it as for any agent named by its caller; the definition's own
//! tool policy narrows it further. Policy, approvals, limits, scrubbing, usage and audit are
//! the pipeline's, unchanged.

mod audited;
mod by_model;
pub mod context_files;
pub mod delegation;
mod delegation_embeddings;
mod evaluate;
mod handoff;
pub(crate) mod leases;
pub mod memory_files;
pub mod providers;
pub(crate) mod quality_gates;
mod runner;
pub(crate) mod sessions;
pub(crate) mod subagents;
pub mod teams;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::Utc;
use tokio_util::sync::CancellationToken;
use toolsmith_core::ToolContext;
use toolsmith_core::agent::{
    AgentDefinition, AgentRecord, AgentRunRecord, AgentRunStatus, AgentRunStep, AgentUpdate,
    AgentUsageQuery, AgentUsageRow, AgentVersionRecord, RunUsage,
};
use toolsmith_core::agent::{AgentInsert, RunAdmission};

use crate::{ServiceError, ToolService};

/// The most runs a listing returns.
pub const MAX_RUNS_LISTED: u32 = 200;

/// Bounds of a definition, checked when it is written.
const MAX_INSTRUCTIONS_CHARS: usize = 100_000;
const MAX_CONTEXT_FILES: usize = 32;
const MAX_CONTEXT_CHARS: usize = 200_000;
const MAX_ITERATIONS: u32 = 200;
const MAX_WALL_TIME_SECS: u64 = 24 * 3600;
const MAX_CONCURRENT_RUNS: u32 = 64;
const MAX_SERVICE_CHARS: usize = 128;
const MAX_MODEL_CHARS: usize = 256;
/// The highest price per million tokens a definition may name (dollars).
const MAX_PRICE_PER_MILLION: f64 = 100_000.0;
/// The longest task a run may be given.
const MAX_INPUT_CHARS: usize = 100_000;

/// The operator's bounds on agents Toolsmith runs (`agent_max_definitions`,
/// `agent_max_running`), each counted by the store so it holds across instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentSettings {
    /// Agent definitions one user may own (default 100).
    pub max_definitions: u32,
    /// Runs one user may have going at once, across all their agents and every instance
    /// (default 16); each agent's own `limits.maxConcurrentRuns` holds as well.
    pub max_running: u32,
    /// How long a run's lease lasts (`agent_run_lease`, default 30 s): the instance running it
    /// renews it every third of this, and any instance fails a run whose lease ran out (its
    /// instance stopped, or lost the store), looking every third of this as well.
    pub run_lease: std::time::Duration,
}

impl Default for AgentSettings {
    fn default() -> Self {
        AgentSettings {
            max_definitions: 100,
            max_running: 16,
            run_lease: leases::DEFAULT_LEASE,
        }
    }
}

/// The runs this instance drives.
pub(crate) struct AgentRuns {
    /// This process's id in `agent_runs.instance`.
    instance: String,
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl AgentRuns {
    pub(crate) fn new() -> AgentRuns {
        AgentRuns {
            instance: format!("inst_{}", uuid::Uuid::new_v4().simple()),
            running: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A new agent, or a changed one: its handle and its definition.
#[derive(Debug, Clone)]
pub struct AgentInput {
    pub name: String,
    pub definition: AgentDefinition,
}

/// A run with its steps, as a reader sees it.
#[derive(Debug, Clone)]
pub struct AgentRunView {
    pub run: AgentRunRecord,
    pub steps: Vec<AgentRunStep>,
}

/// What a caller's agent runs spent: one row per agent, and the sum.
#[derive(Debug, Clone)]
pub struct AgentUsageView {
    /// Each agent's runs (`name` is `None` for an agent deleted since).
    pub agents: Vec<(AgentUsageRow, Option<String>)>,
    pub total: AgentUsageRow,
}

/// Whether `agent` is the id of an agent definition (`agt_` and 32 hex digits, as
/// [`ToolService::create_agent`] makes them): a call as that agent is one of its runs, held to
/// its definition's tool policy wherever it comes from (a scheduled task a run made).
pub(crate) fn is_definition_id(agent: &str) -> bool {
    agent
        .strip_prefix("agt_")
        .is_some_and(|hex| hex.len() == 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn agent_not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no agent '{id}' of yours (by id or name); list yours with GET /api/v1/agents or \
         `toolsmith agent list`"
    ))
}

fn run_not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no run '{id}' of yours (only the user and agent that started a run see it); list \
         yours with GET /api/v1/agents/{{agent}}/runs"
    ))
}

impl ToolService {
    /// Checks a definition before it is written: the name rule of tools, non-empty model,
    /// bounded texts and limits, and a tool policy the policy engine compiles.
    fn check_agent(&self, id: &str, input: &AgentInput) -> Result<(), ServiceError> {
        toolsmith_core::name::validate_custom_name(&input.name).map_err(|e| {
            ServiceError::Validation(format!(
                "agent name '{}': {e} (lowercase letters, digits and _, starting with a letter)",
                input.name
            ))
        })?;
        let d = &input.definition;
        if d.model.service.chars().count() > MAX_SERVICE_CHARS
            || d.model.model.chars().count() > MAX_MODEL_CHARS
        {
            return Err(ServiceError::Validation(format!(
                "model: 'service' has at most {MAX_SERVICE_CHARS} characters and 'model' at \
                 most {MAX_MODEL_CHARS}"
            )));
        }
        if d.model.service.trim().is_empty() || d.model.model.trim().is_empty() {
            return Err(ServiceError::Validation(
                "model: give both 'service' (the name of your Config Center service for the \
                 provider) and 'model' (the model's name at that provider)"
                    .to_owned(),
            ));
        }
        if let Some(price) = &d.model.price {
            let fine = |n: f64| n.is_finite() && (0.0..=MAX_PRICE_PER_MILLION).contains(&n);
            if !fine(price.input_per_million) || !fine(price.output_per_million) {
                return Err(ServiceError::Validation(format!(
                    "model.price: inputPerMillion and outputPerMillion are US dollars per \
                     million tokens, from 0 to {MAX_PRICE_PER_MILLION}; leave price out when \
                     the model costs nothing you count"
                )));
            }
        }
        if d.instructions.chars().count() > MAX_INSTRUCTIONS_CHARS {
            return Err(ServiceError::Validation(format!(
                "instructions: at most {MAX_INSTRUCTIONS_CHARS} characters; move reference text \
                 into contextFiles"
            )));
        }
        if d.context_files.len() > MAX_CONTEXT_FILES {
            return Err(ServiceError::Validation(format!(
                "contextFiles: at most {MAX_CONTEXT_FILES} files"
            )));
        }
        let context: usize = d.context_files.iter().map(|f| f.text.chars().count()).sum();
        if context > MAX_CONTEXT_CHARS {
            return Err(ServiceError::Validation(format!(
                "contextFiles: at most {MAX_CONTEXT_CHARS} characters in all, not {context}"
            )));
        }
        let mut names = std::collections::BTreeSet::new();
        for file in &d.context_files {
            if file.name.trim().is_empty() || !names.insert(file.name.as_str()) {
                return Err(ServiceError::Validation(format!(
                    "contextFiles: each file needs a name of its own ('{}' is empty or repeated)",
                    file.name
                )));
            }
        }
        let l = &d.limits;
        let bounded = |what: &str, value: u64, max: u64| {
            if value == 0 || value > max {
                Err(ServiceError::Validation(format!(
                    "limits.{what}: between 1 and {max}, not {value}"
                )))
            } else {
                Ok(())
            }
        };
        bounded(
            "maxIterations",
            u64::from(l.max_iterations),
            u64::from(MAX_ITERATIONS),
        )?;
        bounded("wallTimeSecs", l.wall_time_secs, MAX_WALL_TIME_SECS)?;
        bounded(
            "maxConcurrentRuns",
            u64::from(l.max_concurrent_runs),
            u64::from(MAX_CONCURRENT_RUNS),
        )?;
        bounded(
            "maxDelegationLoad",
            u64::from(l.max_delegation_load),
            u64::from(MAX_CONCURRENT_RUNS),
        )?;
        quality_gates::check_gates(&d.quality_gates)?;
        if l.max_tokens == Some(0) {
            return Err(ServiceError::Validation(
                "limits.maxTokens: leave it out for no bound, or give at least 1".to_owned(),
            ));
        }
        self.agent_policy(id, d).map(|_| ())
    }

    /// The definition's own tool policy, compiled.
    pub(crate) fn agent_policy(
        &self,
        id: &str,
        definition: &AgentDefinition,
    ) -> Result<toolsmith_policy::Policy, ServiceError> {
        let p = &definition.tool_policy;
        let scope = toolsmith_policy::ScopePolicy {
            profile: p.profile.clone(),
            allow: p.allow.clone(),
            deny: p.deny.clone(),
            also_allow: p.also_allow.clone(),
        };
        self.policy
            .compile_agent_scope(
                id,
                scope,
                subagents::deny_lists(self.config.sessions.subagents.max_spawn_depth),
                &self.registry,
            )
            .map_err(|e| ServiceError::Validation(format!("toolPolicy: {e}")))
    }

    /// What a run of `agent` started by the caller of `starter` may reach: the definition's
    /// tool policy and, when an agent started it (its token, or another run), what that one
    /// may call. Set on every call of the run and kept by the calls nested in them, so the
    /// policy middleware holds a JS tool's `callTool` to it as it holds the model's calls.
    pub(crate) fn agent_scope(
        &self,
        agent: &AgentRecord,
        starter: &ToolContext,
    ) -> Result<toolsmith_core::Narrowing, ServiceError> {
        let policy = self.agent_policy(&agent.id, &agent.definition)?;
        let starter = crate::governance::policy::AgentScope::starter_of(starter)
            .map(|starter| (Arc::clone(&self.policy), starter));
        let scope = toolsmith_core::Narrowing(Arc::new(crate::governance::policy::AgentScope {
            agent_id: agent.id.clone(),
            agent_name: agent.name.clone(),
            policy,
            starter,
        }));
        // A definition a model wrote reaches no more than that model (`by_model.rs`).
        Ok(self.bounded_by_author(agent, scope))
    }

    /// Creates an agent of the caller's user.
    pub(crate) async fn create_agent(
        &self,
        ctx: &ToolContext,
        input: AgentInput,
    ) -> Result<AgentRecord, ServiceError> {
        let id = format!("agt_{}", uuid::Uuid::new_v4().simple());
        self.check_agent(&id, &input)?;
        let now = Utc::now();
        let record = AgentRecord {
            id,
            owner: ctx.user_id.clone(),
            name: input.name,
            revision: 1,
            definition: input.definition,
            created_at: now,
            updated_at: now,
        };
        let max = self.config.agents.max_definitions;
        match self.store.insert_agent_within(&record, max).await? {
            AgentInsert::Inserted => Ok(record),
            AgentInsert::NameTaken => Err(ServiceError::NameTaken(format!(
                "you already have an agent named '{}': pick another name, or change that one \
                 (PUT /api/v1/agents/{{id}})",
                record.name
            ))),
            AgentInsert::AtCap => Err(ServiceError::LimitReached(format!(
                "you already have {max} agents, the most agent_max_definitions allows: delete \
                 one you no longer use (DELETE /api/v1/agents/{{id}}), or ask the operator to \
                 raise agent_max_definitions"
            ))),
        }
    }

    /// Replaces the definition of the caller's agent `id_or_name` (a new revision).
    /// `expected_revision`, when given, must be the stored one.
    pub(crate) async fn update_agent(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
        input: AgentInput,
        expected_revision: Option<i64>,
    ) -> Result<AgentRecord, ServiceError> {
        let stored = self
            .store
            .get_agent(&ctx.user_id, id_or_name)
            .await?
            .ok_or_else(|| agent_not_found(id_or_name))?;
        if let Some(expected) = expected_revision
            && expected != stored.revision
        {
            return Err(ServiceError::RevisionConflict {
                expected,
                actual: stored.revision,
            });
        }
        self.check_agent(&stored.id, &input)?;
        let record = AgentRecord {
            name: input.name,
            revision: stored.revision + 1,
            definition: input.definition,
            updated_at: Utc::now(),
            ..stored
        };
        match self.store.update_agent(&record).await? {
            AgentUpdate::Updated => Ok(record),
            AgentUpdate::NotFound => Err(agent_not_found(id_or_name)),
            AgentUpdate::Conflict { actual } => Err(ServiceError::RevisionConflict {
                expected: record.revision - 1,
                actual,
            }),
            AgentUpdate::NameTaken => Err(ServiceError::NameTaken(format!(
                "you already have an agent named '{}': pick another name",
                record.name
            ))),
        }
    }

    /// The caller's agent `id_or_name`.
    pub async fn get_agent(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
    ) -> Result<AgentRecord, ServiceError> {
        self.store
            .get_agent(&ctx.user_id, id_or_name)
            .await?
            .ok_or_else(|| agent_not_found(id_or_name))
    }

    /// The caller's agents, by name.
    pub async fn list_agents(&self, ctx: &ToolContext) -> Result<Vec<AgentRecord>, ServiceError> {
        Ok(self.store.list_agents(&ctx.user_id).await?)
    }

    /// Every revision of the caller's agent `id_or_name`, oldest first.
    pub async fn agent_versions(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
    ) -> Result<Vec<AgentVersionRecord>, ServiceError> {
        let agent = self.get_agent(ctx, id_or_name).await?;
        Ok(self.store.agent_versions(&ctx.user_id, &agent.id).await?)
    }

    /// Deletes the caller's agent `agent` (its runs stay readable) — with `revision`, only
    /// while it is at that revision, in one conditional write (`InvalidState` naming the
    /// revision it is at when it changed since it was read).
    pub(crate) async fn delete_agent(
        &self,
        ctx: &ToolContext,
        agent: &AgentRecord,
        revision: Option<i64>,
    ) -> Result<(), ServiceError> {
        if self
            .store
            .delete_agent(&ctx.user_id, &agent.id, revision)
            .await?
        {
            return Ok(());
        }
        match (
            revision,
            self.store.get_agent(&ctx.user_id, &agent.id).await?,
        ) {
            (Some(read), Some(now)) => Err(ServiceError::InvalidState(format!(
                "agent '{}' changed since it was read (revision {read}, now {}): nothing was \
                 deleted; read it again and decide",
                agent.name, now.revision
            ))),
            _ => Err(agent_not_found(&agent.name)),
        }
    }

    /// Starts a run of the caller's agent `id_or_name` on `input`. With `wait`, answers when
    /// the run has ended (bounded by its wall time); without, at once, with the run running.
    ///
    /// Errors: `NotFound` (no such agent of the caller's user), `Validation` (the provider's
    /// Config Center service is missing or wrong, or the egress guard refuses its URL: the
    /// message names the fix), `LimitReached` (the agent already runs `maxConcurrentRuns`).
    pub(crate) async fn start_agent_run(
        self: &Arc<Self>,
        ctx: &ToolContext,
        id_or_name: &str,
        input: String,
        wait: bool,
    ) -> Result<AgentRunRecord, ServiceError> {
        if input.trim().is_empty() || input.chars().count() > MAX_INPUT_CHARS {
            return Err(ServiceError::Validation(format!(
                "input: the task for the agent, 1 to {MAX_INPUT_CHARS} characters"
            )));
        }
        let agent = self.get_agent(ctx, id_or_name).await?;
        let extras = runner::Extras {
            // A caller that waits lends its client's model to an agent on `sampling`.
            sampling: ctx.client.clone().filter(|_| wait),
            ..runner::Extras::default()
        };
        let (run, handle) = self.launch_agent_run(ctx, agent, input, extras).await?;
        if !wait {
            return Ok(run);
        }
        match handle.await {
            Ok(ended) => Ok(ended),
            Err(e) => Err(ServiceError::Validation(format!(
                "the run {} stopped unexpectedly ({e}); read it with GET .../runs/{}",
                run.id, run.id
            ))),
        }
    }

    /// Starts a run of `agent` (the caller's) on `input` with `extras` (a session's history, a
    /// subagent's inbox): stored under the agent's concurrent-run cap, then driven on a task of
    /// its own. The run as started, and the task that ends with the run as it ended.
    pub(crate) async fn launch_agent_run(
        self: &Arc<Self>,
        ctx: &ToolContext,
        agent: AgentRecord,
        input: String,
        extras: runner::Extras,
    ) -> Result<(AgentRunRecord, tokio::task::JoinHandle<AgentRunRecord>), ServiceError> {
        let scope = self.agent_scope(&agent, ctx)?;
        self.launch_agent_run_scoped(ctx, agent, input, extras, scope)
            .await
    }

    /// [`ToolService::launch_agent_run`] under `scope` (a delegated run's is its agent's own,
    /// not narrowed by the agent that delegated: `agents/delegation.rs`).
    pub(crate) async fn launch_agent_run_scoped(
        self: &Arc<Self>,
        ctx: &ToolContext,
        mut agent: AgentRecord,
        input: String,
        extras: runner::Extras,
        scope: toolsmith_core::Narrowing,
    ) -> Result<(AgentRunRecord, tokio::task::JoinHandle<AgentRunRecord>), ServiceError> {
        // Its user's own context files over the definition's (spec 001 §3, §7's merging).
        agent = self.with_user_context_files(agent).await;
        // DELEGATION.md: the agents it may delegate to (spec 001 §7).
        agent = self.with_delegation_file(ctx, agent, &scope).await;
        // The lead of a team reads TEAM.md (spec 001 §8), after its own context files.
        if let Some(file) = self.team_context(&agent.owner, &agent.id).await {
            agent.definition.context_files.push(file);
        }
        let run_id = format!("run_{}", uuid::Uuid::new_v4().simple());
        let provider = self.agent_provider(ctx, &agent, &run_id, &extras).await?;
        let now = Utc::now();
        let run = AgentRunRecord {
            id: run_id,
            owner: ctx.user_id.clone(),
            caller_agent: ctx.agent_id.clone(),
            agent_id: agent.id.clone(),
            agent_revision: agent.revision,
            status: AgentRunStatus::Running,
            input,
            output: None,
            error: None,
            usage: RunUsage::default(),
            iterations: 0,
            created_at: now,
            updated_at: now,
            instance: self.agent_runs.instance.clone(),
            lease_until: Some(leases::until(now, self.config.agents.run_lease)),
        };
        let max = agent.definition.limits.max_concurrent_runs;
        let per_user = self.config.agents.max_running;
        match self
            .store
            .insert_agent_run_within(&run, max, per_user)
            .await?
        {
            RunAdmission::Started => {}
            RunAdmission::AgentAtCap => {
                return Err(ServiceError::LimitReached(format!(
                    "agent '{}' already has {max} runs going (limits.maxConcurrentRuns): wait \
                     for one to end, cancel one, or raise the limit",
                    agent.name
                )));
            }
            RunAdmission::OwnerAtCap => {
                return Err(ServiceError::LimitReached(format!(
                    "you already have {per_user} agent runs going across your agents, the most \
                     agent_max_running allows: wait for one to end, cancel one (POST \
                     /api/v1/agents/{{id}}/runs/{{run}}/cancel), or ask the operator to raise \
                     agent_max_running"
                )));
            }
        }
        self.telemetry.agents.run_started();
        let cancel = CancellationToken::new();
        self.agent_runs
            .running()
            .insert(run.id.clone(), cancel.clone());
        let job = runner::Job {
            service: Arc::clone(self),
            agent,
            provider,
            scope,
            caller: ctx.clone(),
            run: run.clone(),
            cancel,
            extras,
        };
        let mut job = job;
        // Its subagents announce their results to it (`agents/subagents.rs`).
        let inbox = Arc::clone(job.extras.inbox.get_or_insert_with(Default::default));
        self.subagents.register(&run.id, &run.owner, inbox);
        let service = Arc::clone(self);
        let ended = async move {
            if let Some(ready) = job.extras.start_after.take() {
                // Sent, or dropped by a starter that gave up: either way the run goes on.
                let _ = ready.await;
            }
            let ended = job.run().await;
            service.subagents.forget(&ended.id);
            ended
        };
        Ok((run, tokio::spawn(ended)))
    }

    /// What answers `agent`'s run `run_id`: the provider of its owner's Config Center, checked
    /// by the egress guard, or, for `model.service` `sampling`, the model of the client that
    /// started the run (`providers/sampling.rs`) — which must be an MCP client that declared
    /// sampling, lent by a call that waits for the run, and not denied `mcp:sampling`.
    async fn agent_provider(
        &self,
        ctx: &ToolContext,
        agent: &AgentRecord,
        run_id: &str,
        extras: &runner::Extras,
    ) -> Result<providers::Model, ServiceError> {
        let name = &agent.definition.model.service;
        if name == providers::sampling::SERVICE {
            return self.sampling_model(ctx, agent, run_id, extras);
        }
        let config = self.config_cache.owner(&ctx.user_id).await?;
        let service = config.services.get(name).ok_or_else(|| {
            ServiceError::Validation(format!(
                "agent '{}' runs on the Config Center service '{name}', which you do not have: \
                 create it (POST /api/v1/config/services, or `toolsmith config`) with an entry \
                 holding protocol ('openai' or 'anthropic'), base_url and api_key, or change \
                 model.service",
                agent.name
            ))
        })?;
        let config = providers::ProviderConfig::from_service(name, service)
            .map_err(ServiceError::Validation)?;
        // The owner's allowlist narrows where their model server may be, as for their tools.
        providers::Provider::new(config, &self.egress_for(&ctx.user_id))
            .map(providers::Model::Provider)
            .map_err(ServiceError::Validation)
    }

    /// The client's model for `agent`'s run, or why it cannot answer (naming the fix).
    fn sampling_model(
        &self,
        ctx: &ToolContext,
        agent: &AgentRecord,
        run_id: &str,
        extras: &runner::Extras,
    ) -> Result<providers::Model, ServiceError> {
        let declared = |client: &toolsmith_core::Client| client.0.capabilities().sampling;
        let otherwise = "or give it a model of its own: set model.service to a Config Center \
                         service of yours holding protocol, base_url and api_key";
        if !extras
            .sampling
            .as_ref()
            .or(ctx.client.as_ref())
            .is_some_and(declared)
        {
            return Err(ServiceError::Validation(format!(
                "agent '{}' runs on the MCP client's own model (model.service 'sampling'), and \
                 this caller has no model to lend: start the run over MCP (protocol \
                 2025-11-25, stdio or streamable HTTP) from a client that declares the \
                 sampling capability, with sampling.tools for the agent's tools (a REST, CLI \
                 or scheduled start has no client to ask; protocol 2026-07-28 has no requests \
                 to the client while a call runs); {otherwise}",
                agent.name
            )));
        }
        let Some(client) = extras.sampling.clone() else {
            return Err(ServiceError::Validation(format!(
                "agent '{}' runs on the MCP client's own model (model.service 'sampling'), \
                 which answers only while the call that started the run waits for its end: \
                 call sessions_send with wait: true, the subagents action 'run' (not spawn), \
                 or manage_agents run with wait: true; {otherwise}",
                agent.name
            )));
        };
        if let Some(reason) = self.policy.denies_capability(ctx, "mcp:sampling") {
            return Err(ServiceError::Forbidden(format!(
                "agent '{}' runs on the MCP client's own model, and asking the client's model \
                 (sampling) is not allowed for this caller: {reason} (the policy entry \
                 'mcp:sampling'); {otherwise}",
                agent.name
            )));
        }
        Ok(providers::Model::Sampling(
            providers::sampling::Sampling::new(
                client,
                Arc::clone(&self.audit),
                crate::input::Actor::for_caller(ctx.user_id.clone(), ctx.agent_id.clone())
                    .with_member(ctx.member.clone()),
                (&agent.id, &agent.name),
                run_id,
            ),
        ))
    }

    /// The caller's run `run_id` with its steps.
    pub async fn get_agent_run(
        &self,
        ctx: &ToolContext,
        run_id: &str,
    ) -> Result<AgentRunView, ServiceError> {
        let run = self
            .store
            .get_agent_run(&ctx.user_id, ctx.agent_id.as_deref(), run_id)
            .await?
            .ok_or_else(|| run_not_found(run_id))?;
        let steps = self.store.agent_run_steps(&run.id).await?;
        Ok(AgentRunView { run, steps })
    }

    /// The caller's runs of the agent `id_or_name`, newest first.
    pub async fn list_agent_runs(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
        limit: u32,
    ) -> Result<Vec<AgentRunRecord>, ServiceError> {
        let agent = self.get_agent(ctx, id_or_name).await?;
        Ok(self
            .store
            .list_agent_runs(
                &ctx.user_id,
                ctx.agent_id.as_deref(),
                Some(&agent.id),
                limit.clamp(1, MAX_RUNS_LISTED),
            )
            .await?)
    }

    /// The caller's runs of every agent, newest first: a person's, those they started; an
    /// agent's (a token bound to it, or a person acting as it), those it started — its
    /// delegations, the teammates its messages woke, its sessions' runs.
    pub async fn list_started_runs(
        &self,
        ctx: &ToolContext,
        limit: u32,
    ) -> Result<Vec<AgentRunRecord>, ServiceError> {
        Ok(self
            .store
            .list_agent_runs(
                &ctx.user_id,
                ctx.agent_id.as_deref(),
                None,
                limit.clamp(1, MAX_RUNS_LISTED),
            )
            .await?)
    }

    /// What the caller's runs spent since `since` (all time without): tokens, model and tool
    /// calls and cost, per agent and in all, summed in the store. A person sees every run of
    /// their user, whoever started it (it is their user's spending); a token bound to an agent
    /// sees only the runs it started, as it reads runs.
    pub async fn agent_usage(
        &self,
        ctx: &ToolContext,
        since: Option<chrono::DateTime<Utc>>,
    ) -> Result<AgentUsageView, ServiceError> {
        let query = AgentUsageQuery {
            owner: ctx.user_id.clone(),
            caller_agent: ctx.agent_id.clone(),
            since,
        };
        let rows = self.store.agent_usage(&query).await?;
        let names: HashMap<String, String> = self
            .store
            .list_agents(&ctx.user_id)
            .await?
            .into_iter()
            .map(|a| (a.id, a.name))
            .collect();
        let mut total = AgentUsageRow {
            agent_id: "*".to_owned(),
            ..AgentUsageRow::default()
        };
        for row in &rows {
            total.runs += row.runs;
            total.input_tokens = total.input_tokens.saturating_add(row.input_tokens);
            total.output_tokens = total.output_tokens.saturating_add(row.output_tokens);
            total.model_calls = total.model_calls.saturating_add(row.model_calls);
            total.tool_calls = total.tool_calls.saturating_add(row.tool_calls);
            total.priced_runs += row.priced_runs;
            if let Some(cost) = row.cost {
                total.cost = Some(total.cost.unwrap_or(0.0) + cost);
            }
        }
        let agents = rows
            .into_iter()
            .map(|row| {
                let name = names.get(&row.agent_id).cloned();
                (row, name)
            })
            .collect();
        Ok(AgentUsageView { agents, total })
    }

    /// Cancels the caller's run `run_id`: through the store (so the instance running it sees
    /// it at its next step) and the local token (a run of this instance stops at once, its
    /// model request or tool call cancelled). The run as it is after; one that had ended is
    /// answered as it ended.
    pub(crate) async fn cancel_agent_run(
        &self,
        ctx: &ToolContext,
        run_id: &str,
    ) -> Result<AgentRunRecord, ServiceError> {
        let who = ctx.agent_id.as_deref().map_or_else(
            || format!("user {}", ctx.user_id),
            |agent| format!("agent {agent} of user {}", ctx.user_id),
        );
        let run = self
            .store
            .cancel_agent_run(
                &ctx.user_id,
                ctx.agent_id.as_deref(),
                run_id,
                &format!("cancelled by {who}"),
                Utc::now(),
            )
            .await?
            .ok_or_else(|| run_not_found(run_id))?;
        if let Some(token) = self.agent_runs.running().get(run_id) {
            token.cancel();
        }
        Ok(run)
    }
}
