//! The agent loop: the model is asked (with the tools the agent may call), each tool call it
//! makes runs through the one pipeline as the agent ([`ToolService::execute`], so policy,
//! approvals, limits, scrubbing, usage and audit apply unchanged), the results go back to the
//! model, and so on until it answers without a tool call — or a limit ends the run:
//! `maxIterations` model turns, `maxTokens`, `wallTimeSecs`. A cancel (this instance's token,
//! or the store's status, seen at each step) stops it. Every step is recorded
//! (`agent_run_steps`): each model turn with its tool calls and token counts, each tool call and
//! its result (as the pipeline returned it, scrubbed), each approval waited for, each retry
//! and error.
//!
//! A tool call that needs a person's approval waits in the pipeline's approval gate with an
//! approver that asks no one (the run has no client): the run shows `waiting_approval` and
//! goes on when a person decides through REST, the web UI or the CLI, or the approval expires
//! (the model then reads why the call did not run). Never longer than the run's wall time.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use chrono::Utc;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolsmith_core::agent::{AgentRecord, AgentRunRecord, AgentRunStatus, AgentRunStep};
use toolsmith_core::{ApprovalAnswer, ApprovalPrompt, ApprovalQuestion, Approver, ToolContext};
use toolsmith_store::Store;

use super::providers::{Message, Model, ModelRequest, ToolCall, ToolSpec};
use crate::ToolService;

/// The most tokens one model answer may have.
const ANSWER_TOKENS: u32 = 4096;
/// The most characters of a tool's result the model reads (the step keeps it whole).
const MAX_RESULT_CHARS: usize = 64 * 1024;
/// The most characters of a tool's description offered to the model.
const MAX_DESCRIPTION_CHARS: usize = 1024;

/// How often a run asks the store whether it was cancelled through another instance.
const WATCH_EVERY: Duration = Duration::from_secs(1);

/// One run to drive, with everything it needs.
pub(super) struct Job {
    pub service: Arc<ToolService>,
    pub agent: AgentRecord,
    /// A Config Center provider, or the client's model (`providers/sampling.rs`).
    pub provider: Model,
    /// What the run may reach (`ToolService::agent_scope`): set on every call it makes, kept
    /// by the calls nested in them.
    pub scope: toolsmith_core::Narrowing,
    /// Who started the run (its user, and its agent when a token bound to one did).
    pub caller: ToolContext,
    pub run: AgentRunRecord,
    pub cancel: CancellationToken,
    /// What a session or a subagent adds (`agents/sessions.rs`, `agents/subagents.rs`).
    pub extras: Extras,
}

/// What a run of a session or a subagent starts from and is told on the way.
#[derive(Default)]
pub(crate) struct Extras {
    /// The session's conversation so far: the model's history before the run's input.
    pub history: Vec<Message>,
    /// Messages for the model's next turn (subagents' results announced, a steer), read at
    /// each turn and given to it as one user message.
    pub inbox: Option<Arc<super::subagents::Inbox>>,
    /// The client whose model answers an agent on `sampling` (`providers/sampling.rs`): the
    /// starting call's, set only by a call that waits for the run's end (its requests go on
    /// that call's stream).
    pub sampling: Option<toolsmith_core::Client>,
    /// Held until the starter has recorded what the run answers (a session's `last_run`, so a
    /// `handoff` in the run's first turn finds its session); a dropped sender starts it too.
    pub start_after: Option<tokio::sync::oneshot::Receiver<()>>,
}

/// How a run ended.
enum Outcome {
    Completed(String),
    Failed(String),
    Cancelled,
}

/// What the loop changes as it goes.
struct State {
    run: AgentRunRecord,
    seq: Arc<AtomicI64>,
}

impl Job {
    /// Drives the run to its end and records it; the run as stored at the end.
    pub(super) async fn run(self) -> AgentRunRecord {
        let mut state = State {
            run: self.run.clone(),
            seq: Arc::new(AtomicI64::new(0)),
        };
        let wall = Duration::from_secs(self.agent.definition.limits.wall_time_secs);
        let run_id = state.run.id.clone();
        let driven = tokio::time::timeout(wall, self.drive(&mut state));
        let outcome = tokio::select! {
            driven = driven => match driven {
                Ok(outcome) => outcome,
                Err(_) => {
                    self.cancel.cancel();
                    Outcome::Failed(format!(
                        "the run reached its wall-time limit of {} s (limits.wallTimeSecs) \
                         before the model's final answer; raise the limit or give the agent a \
                         narrower task",
                        wall.as_secs()
                    ))
                }
            },
            // Ended through another instance (cancelled there, or failed there because its
            // lease ran out): stop now, whatever the run waits for. Renews the lease meanwhile.
            () = self.held(&run_id) => {
                self.cancel.cancel();
                Outcome::Cancelled
            }
        };
        let ended = self.finish(state, outcome).await;
        self.service.agent_runs.running().remove(&ended.id);
        let metrics = &self.service.telemetry.agents;
        metrics.run_finished(ended.status.as_str());
        ended
    }

    fn store(&self) -> &Arc<dyn Store> {
        &self.service.store
    }

    async fn finish(&self, mut state: State, outcome: Outcome) -> AgentRunRecord {
        let run = &mut state.run;
        match outcome {
            Outcome::Completed(text) => {
                run.status = AgentRunStatus::Completed;
                run.output = Some(text);
            }
            Outcome::Failed(message) => {
                run.status = AgentRunStatus::Failed;
                run.error = Some(message);
            }
            Outcome::Cancelled => {
                run.status = AgentRunStatus::Cancelled;
                run.error.get_or_insert_with(|| "cancelled".to_owned());
            }
        }
        run.updated_at = Utc::now();
        let stored = match self.store().update_agent_run(run).await {
            // Written: this is how it ended.
            Ok(true) => None,
            // It ended meanwhile (cancelled through the store): that stands.
            Ok(false) => self
                .store()
                .get_agent_run(&run.owner, run.caller_agent.as_deref(), &run.id)
                .await
                .ok()
                .flatten(),
            Err(e) => {
                tracing::warn!(run = %run.id, "recording the end of an agent run failed: {e}");
                None
            }
        };
        stored.unwrap_or_else(|| state.run.clone())
    }

    async fn step(&self, state: &State, kind: &str, detail: Value) {
        let step = AgentRunStep {
            run_id: state.run.id.clone(),
            seq: state.seq.fetch_add(1, Ordering::SeqCst),
            kind: kind.to_owned(),
            detail,
            at: Utc::now(),
        };
        self.service.telemetry.agents.step(kind);
        if let Err(e) = self.store().add_agent_run_step(&step).await {
            tracing::warn!(run = %step.run_id, "recording a step of an agent run failed: {e}");
        }
    }

    /// Holds the run's lease (`agents/leases.rs`), renewing it every third of
    /// `agent_run_lease`, and ends when the store says the run ended through another instance
    /// sharing the store (cancelled, or failed because its lease ran out), asking every
    /// [`WATCH_EVERY`] (or more often, for a short lease); a cancel made here ends the run
    /// through its token.
    async fn held(&self, run_id: &str) {
        let renew_every = super::leases::every(self.service.config.agents.run_lease);
        let tick = WATCH_EVERY.min(renew_every);
        let mut renewed = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(tick).await;
            if renewed.elapsed() >= renew_every {
                renewed = tokio::time::Instant::now();
                let until = super::leases::until(Utc::now(), self.service.config.agents.run_lease);
                let instance = &self.run.instance;
                match self
                    .store()
                    .renew_agent_run_lease(run_id, instance, until)
                    .await
                {
                    Ok(true) => {}
                    // Ended through another instance.
                    Ok(false) => return,
                    Err(e) => {
                        tracing::warn!(run = %run_id, "renewing an agent run's lease failed: {e}")
                    }
                }
            }
            if let Ok(Some(status)) = self.store().agent_run_status(run_id).await
                && status.is_terminal()
            {
                return;
            }
        }
    }

    /// Whether the run was cancelled, here or through the store (another instance).
    async fn cancelled(&self, state: &State) -> bool {
        if self.cancel.is_cancelled() {
            return true;
        }
        matches!(
            self.store().agent_run_status(&state.run.id).await,
            Ok(Some(AgentRunStatus::Cancelled))
        )
    }

    /// The context of the run's tool calls: its user, as the agent, marked as an agent the
    /// caller chose (so the user's own policy bounds it), cancelled with the run. A run started
    /// in an organisation keeps the person who started it (`member`): the policy holds its
    /// calls to that person's own rules too.
    fn tool_context(&self, approver: Option<Approver>) -> ToolContext {
        let mut ctx = ToolContext::new(self.run.owner.clone());
        ctx.member = self.caller.member.clone();
        ctx.agent_id = Some(self.agent.id.clone());
        ctx.agent_chosen_by_caller = true;
        ctx.subagent_depth = self.caller.subagent_depth;
        ctx.conversation_id = Some(self.run.id.clone());
        ctx.cancellation = self.cancel.child_token();
        ctx.approver = approver;
        ctx.narrowing = Some(self.scope.clone());
        // The model of the client the run's starter waits on, lent to its tools.
        ctx.client = self
            .extras
            .sampling
            .clone()
            .map(super::providers::sampling::model_only);
        ctx
    }

    /// Whether the run may call `tool`: the pipeline's own rule for the agent
    /// ([`ToolService::may_call`]), which asks the run's scope on the context (the
    /// definition's tool policy and, for a run an agent started, that agent's rule too, so a
    /// stored agent never widens its starter).
    fn may_call(&self, ctx: &ToolContext, tool: &toolsmith_core::RegisteredTool) -> bool {
        self.service.may_call(ctx, tool)
    }

    /// The tools offered to the model, and the real name behind each function name.
    fn offered(&self) -> (Vec<ToolSpec>, HashMap<String, String>) {
        let ctx = self.tool_context(None);
        let mut specs = Vec::new();
        let mut names = HashMap::new();
        for tool in self.service.registry.tools(&ctx.user_id) {
            if tool.deferred || !self.may_call(&ctx, &tool) {
                continue;
            }
            let function = toolsmith_core::name::function_name(tool.name());
            names.insert(function.clone(), tool.name().to_owned());
            specs.push(ToolSpec {
                name: function,
                description: tool
                    .definition
                    .description
                    .chars()
                    .take(MAX_DESCRIPTION_CHARS)
                    .collect(),
                parameters: tool.definition.parameters.clone(),
            });
        }
        (specs, names)
    }

    fn system_prompt(&self) -> String {
        let d = &self.agent.definition;
        let mut system = d.instructions.clone();
        for file in &d.context_files {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(&format!("## {}\n\n{}", file.name, file.text));
        }
        system
    }

    async fn drive(&self, state: &mut State) -> Outcome {
        let limits = &self.agent.definition.limits;
        let (tools, names) = self.offered();
        let system = self.system_prompt();
        let mut messages = self.extras.history.clone();
        messages.push(Message::User(state.run.input.clone()));
        for iteration in 1..=limits.max_iterations {
            if self.cancelled(state).await {
                return Outcome::Cancelled;
            }
            if let Some(note) = self.extras.inbox.as_ref().and_then(|inbox| inbox.take()) {
                self.step(state, "announce", json!({"text": note})).await;
                messages.push(Message::User(note));
            }
            let request = ModelRequest {
                model: self.agent.definition.model.model.clone(),
                system: system.clone(),
                messages: messages.clone(),
                tools: tools.clone(),
                max_tokens: ANSWER_TOKENS,
            };
            let mut retries = Vec::new();
            let asked = self.provider.complete(&request, |attempt, e| {
                retries.push(json!({"attempt": attempt, "error": e.message}));
            });
            let reply = tokio::select! {
                reply = asked => reply,
                () = self.cancel.cancelled() => return Outcome::Cancelled,
            };
            for retry in retries {
                self.step(state, "retry", retry).await;
            }
            let reply = match reply {
                Ok(reply) => reply,
                Err(e) => {
                    let message = format!(
                        "{} failed: {}",
                        self.provider.describe(&self.agent.definition.model.service),
                        e.message
                    );
                    self.step(state, "error", json!({"message": message})).await;
                    return Outcome::Failed(message);
                }
            };
            let usage = &mut state.run.usage;
            usage.model_calls += 1;
            usage.input_tokens = usage.input_tokens.saturating_add(reply.input_tokens);
            usage.output_tokens = usage.output_tokens.saturating_add(reply.output_tokens);
            let price = self.agent.definition.model.price.as_ref();
            usage.charge(price, reply.input_tokens, reply.output_tokens);
            let metrics = &self.service.telemetry.agents;
            metrics.tokens(reply.input_tokens, reply.output_tokens);
            state.run.iterations = iteration;
            let calls: Vec<Value> = reply
                .tool_calls
                .iter()
                .map(|c| {
                    json!({
                        "id": c.id,
                        "name": names.get(&c.name).unwrap_or(&c.name),
                        "arguments": c.arguments,
                    })
                })
                .collect();
            self.step(
                state,
                "model",
                json!({
                    "iteration": iteration,
                    "text": reply.text,
                    "toolCalls": calls,
                    "inputTokens": reply.input_tokens,
                    "outputTokens": reply.output_tokens,
                    "stopReason": reply.stop_reason,
                }),
            )
            .await;
            if let Some(max) = limits.max_tokens
                && state.run.usage.total_tokens() > max
            {
                return Outcome::Failed(format!(
                    "the run used {} tokens, over its limit of {max} (limits.maxTokens); raise \
                     the limit or give the agent a narrower task",
                    state.run.usage.total_tokens()
                ));
            }
            if reply.tool_calls.is_empty() {
                let Some(inbox) = self.extras.inbox.as_ref().filter(|inbox| inbox.awaiting())
                else {
                    return Outcome::Completed(reply.text);
                };
                // Its subagents still work: their results are its next turn.
                messages.push(Message::Assistant {
                    text: reply.text.clone(),
                    tool_calls: Vec::new(),
                });
                tokio::select! {
                    () = inbox.arrived() => continue,
                    () = self.cancel.cancelled() => return Outcome::Cancelled,
                }
            }
            messages.push(Message::Assistant {
                text: reply.text.clone(),
                tool_calls: reply.tool_calls.clone(),
            });
            for call in &reply.tool_calls {
                let (content, is_error) = self.call_tool(state, call, &names).await;
                if self.cancel.is_cancelled() {
                    return Outcome::Cancelled;
                }
                messages.push(Message::ToolResult {
                    call_id: call.id.clone(),
                    content,
                    is_error,
                });
            }
            state.run.updated_at = Utc::now();
            match self.store().update_agent_run(&state.run).await {
                Ok(true) => {}
                // Ended meanwhile: cancelled through the store.
                Ok(false) => return Outcome::Cancelled,
                Err(e) => tracing::warn!(run = %state.run.id, "recording an agent run failed: {e}"),
            }
        }
        Outcome::Failed(format!(
            "the run reached its iteration limit of {} model turns (limits.maxIterations) \
             without a final answer; raise the limit or give the agent a narrower task",
            limits.max_iterations
        ))
    }

    /// Runs one tool call through the pipeline as the agent; what the model reads of it.
    async fn call_tool(
        &self,
        state: &mut State,
        call: &ToolCall,
        names: &HashMap<String, String>,
    ) -> (String, bool) {
        state.run.usage.tool_calls += 1;
        let name = names.get(&call.name).cloned();
        self.step(
            state,
            "tool_call",
            json!({
                "id": call.id,
                "name": name.as_deref().unwrap_or(&call.name),
                "arguments": call.arguments,
            }),
        )
        .await;
        let Some(name) = name else {
            let message = format!(
                "no tool named '{}' is offered to this agent; call one of the tools you were \
                 given",
                call.name
            );
            self.step(
                state,
                "tool_result",
                json!({"id": call.id, "isError": true, "content": {"error": message}}),
            )
            .await;
            return (json!({"error": message}).to_string(), true);
        };
        let asked = Arc::new(AtomicBool::new(false));
        let approver = Approver(Arc::new(RunApprover {
            store: Arc::clone(self.store()),
            run: state.run.clone(),
            seq: Arc::clone(&state.seq),
            asked: Arc::clone(&asked),
        }));
        let ctx = self.tool_context(Some(approver));
        // The definition's policy and the starter's rule, checked again at the call (the
        // pipeline checks the operator's policy itself).
        let refused = self
            .service
            .registry
            .get(&ctx.user_id, &name)
            .filter(|tool| !self.may_call(&ctx, tool))
            .map(|_| {
                json!({
                    "error": format!(
                        "'{name}' is not among the tools this agent may call (its toolPolicy, \
                         or the policy of who started the run, leaves it out)"
                    ),
                    "kind": "denied",
                })
            });
        let (content, is_error) = match refused {
            Some(content) => (content, true),
            None => {
                let result = self
                    .service
                    .execute(&name, call.arguments.clone(), ctx)
                    .await;
                (result.content, result.is_error)
            }
        };
        if asked.load(Ordering::SeqCst) {
            // The approval step the approver wrote, counted here (it holds no telemetry).
            self.service.telemetry.agents.step("approval");
        }
        if asked.load(Ordering::SeqCst) && !self.cancel.is_cancelled() {
            state.run.status = AgentRunStatus::Running;
            state.run.updated_at = Utc::now();
            if let Err(e) = self.store().update_agent_run(&state.run).await {
                tracing::warn!(run = %state.run.id, "recording an agent run failed: {e}");
            }
        }
        self.step(
            state,
            "tool_result",
            json!({"id": call.id, "name": name, "isError": is_error, "content": content}),
        )
        .await;
        let mut text = match &content {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if text.chars().count() > MAX_RESULT_CHARS {
            text = text.chars().take(MAX_RESULT_CHARS).collect::<String>()
                + "… (the result was cut here)";
        }
        (text, is_error)
    }
}

/// The approver of a run's tool calls: it asks no one (a run has no client), and marks the
/// run as waiting while the pipeline's approval gate waits for a decision made elsewhere.
struct RunApprover {
    store: Arc<dyn Store>,
    run: AgentRunRecord,
    seq: Arc<AtomicI64>,
    asked: Arc<AtomicBool>,
}

#[async_trait]
impl ApprovalPrompt for RunApprover {
    async fn ask(&self, question: &ApprovalQuestion) -> Option<ApprovalAnswer> {
        self.asked.store(true, Ordering::SeqCst);
        // The step first, so a reader who sees the run waiting finds what it waits for.
        let step = AgentRunStep {
            run_id: self.run.id.clone(),
            seq: self.seq.fetch_add(1, Ordering::SeqCst),
            kind: "approval".to_owned(),
            detail: json!({
                "approvalId": question.approval_id,
                "tool": question.tool_name,
                "expiresInSecs": question.expires_in.as_secs(),
            }),
            at: Utc::now(),
        };
        if let Err(e) = self.store.add_agent_run_step(&step).await {
            tracing::warn!(run = %step.run_id, "recording a step of an agent run failed: {e}");
        }
        let mut run = self.run.clone();
        run.status = AgentRunStatus::WaitingApproval;
        run.updated_at = Utc::now();
        if let Err(e) = self.store.update_agent_run(&run).await {
            tracing::warn!(run = %run.id, "recording an agent run failed: {e}");
        }
        // No one to ask here: the gate waits for a decision made elsewhere, or the expiry.
        std::future::pending().await
    }
}
