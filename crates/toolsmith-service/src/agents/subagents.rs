//! Subagents (spec 001 §6): anonymous child runs of the calling agent, given a task and a
//! label; `sessions_spawn` and the `subagents` tool's actions `spawn` (async), `run` (sync),
//! `list`, `cancel` (an id, `all` or `last`) and `steer` (a message the running child reads
//! at its next turn, or with `restart` spec 001's cancel and respawn with the message as its
//! task, keeping the label).
//!
//! A subagent is a session of kind `subagent` (`SessionStore`), so it is its starter's alone
//! and its task and result are its messages. Its life is §6's: *spawning* (the limits are
//! checked in the store's insert: MaxConcurrent running subagents per user, MaxChildrenPerAgent
//! running children per parent; and here MaxSpawnDepth) → *rejected* (the call's error, nothing
//! stored) or *running* → *completed* | *failed* | *cancelled* → *archived* once ended for
//! `archive_after` (done when the caller lists).
//!
//! A child runs at its parent's subagent depth + 1, with at most `max_iterations` model turns.
//! What it may call is its agent's, narrowed by its parent's, minus §6's deny lists by depth
//! ([`deny_lists`], compiled into every agent's own policy: `ToolService::agent_policy`).
//!
//! Results reach the parent: a parent that is a Toolsmith run gets them in its next model
//! turn — every result that arrived meanwhile in one message (the AnnounceQueue's batching),
//! and a parent that answers while children still run waits for them first; a parent outside
//! (an MCP client, REST) finds them in the subagent's record (`subagents` list,
//! `sessions_history`) and, over MCP, as a `notifications/message` on its session (logger
//! `toolsmith/subagents`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::Utc;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use toolsmith_core::agent_session::{
    SessionKind, SessionQuery, SessionRecord, SessionStatus, SpawnOutcome,
};
use toolsmith_core::{Client, LogLevel, ToolContext};

use super::runner::Extras;
use super::sessions::{Args, check_text, label_of, session_json};
use crate::input::Actor;
use crate::{ServiceError, ToolService};

/// Spec 001 §6's limits, as server configuration.
#[derive(Debug, Clone)]
pub struct SubagentLimits {
    /// Running subagents of one user, across all parents (MaxConcurrent, default 8).
    pub max_concurrent: u32,
    /// The deepest a subagent may be (MaxSpawnDepth, default 1: a subagent spawns none).
    pub max_spawn_depth: u32,
    /// Running children of one parent (MaxChildrenPerAgent, default 5).
    pub max_children_per_agent: u32,
    /// Model turns of a subagent's run (default 20; its agent's own limit when lower).
    pub max_iterations: u32,
    /// How long an ended subagent stays listed before it is archived (default 60 minutes).
    pub archive_after: Duration,
}

impl Default for SubagentLimits {
    fn default() -> Self {
        SubagentLimits {
            max_concurrent: 8,
            max_spawn_depth: 1,
            max_children_per_agent: 5,
            max_iterations: 20,
            archive_after: Duration::from_secs(60 * 60),
        }
    }
}

/// Spec 001 §6's "always denied" list: no subagent, at any depth, calls these (the ones this
/// server has: `session_status`, `sessions_send`, `cron`, `memory_search`, `memory_get`).
pub const ALWAYS_DENIED: &[&str] = &[
    "gateway",
    "agents_list",
    "whatsapp_login",
    "session_status",
    "cron",
    "memory_search",
    "memory_get",
    "sessions_send",
];

/// Spec 001 §6's "leaf denied" list: a subagent at the deepest allowed depth spawns and reads
/// no sessions (its `subagent` is this server's `subagents`).
pub const LEAF_DENIED: &[&str] = &[
    "sessions_list",
    "sessions_history",
    "sessions_spawn",
    "spawn",
    "subagent",
    "subagents",
];

/// §6's deny lists by depth, for the policy engine, with `max_depth` the deepest subagent.
pub fn deny_lists(max_depth: u32) -> toolsmith_policy::SubagentPolicy {
    toolsmith_policy::SubagentPolicy {
        always_deny: ALWAYS_DENIED.iter().map(|s| (*s).to_owned()).collect(),
        leaf_deny: LEAF_DENIED.iter().map(|s| (*s).to_owned()).collect(),
        max_depth,
    }
}

/// What a run is told between its model turns: its subagents' results and steering messages.
#[derive(Default)]
pub(crate) struct Inbox {
    state: Mutex<InboxState>,
    arrived: Notify,
}

#[derive(Default)]
struct InboxState {
    notes: Vec<String>,
    /// Children spawned whose result has not arrived.
    awaited: u32,
}

impl Inbox {
    fn state(&self) -> std::sync::MutexGuard<'_, InboxState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Everything that arrived since the last turn, as one message; `None` when nothing did.
    pub(crate) fn take(&self) -> Option<String> {
        let notes = std::mem::take(&mut self.state().notes);
        (!notes.is_empty()).then(|| notes.join("\n\n"))
    }

    /// Whether something is on its way: a child still running, or a note not read.
    pub(crate) fn awaiting(&self) -> bool {
        let state = self.state();
        state.awaited > 0 || !state.notes.is_empty()
    }

    /// Waits until a note is there to read.
    pub(crate) async fn arrived(&self) {
        loop {
            let arrived = self.arrived.notified();
            if !self.state().notes.is_empty() {
                return;
            }
            arrived.await;
        }
    }

    pub(crate) fn expect(&self) {
        self.state().awaited += 1;
    }

    /// Leaves `note` for the next turn; `result` marks an awaited child's end.
    pub(crate) fn leave(&self, note: String, result: bool) {
        {
            let mut state = self.state();
            state.notes.push(note);
            if result {
                state.awaited = state.awaited.saturating_sub(1);
            }
        }
        self.arrived.notify_waiters();
    }
}

/// The inboxes of the runs this instance drives, by run id (with the run's owner).
#[derive(Default)]
pub(crate) struct Subagents {
    runs: Mutex<HashMap<String, (String, Arc<Inbox>)>>,
}

impl Subagents {
    fn runs(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, Arc<Inbox>)>> {
        self.runs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn register(&self, run: &str, owner: &str, inbox: Arc<Inbox>) {
        self.runs()
            .insert(run.to_owned(), (owner.to_owned(), inbox));
    }

    pub(crate) fn forget(&self, run: &str) {
        self.runs().remove(run);
    }

    /// The inbox of `run`, a run of `owner` this instance drives.
    pub(crate) fn inbox_of(&self, run: &str, owner: &str) -> Option<Arc<Inbox>> {
        self.runs()
            .get(run)
            .filter(|(o, _)| o == owner)
            .map(|(_, inbox)| Arc::clone(inbox))
    }

    /// Whether `run` is a run of `owner` this instance drives.
    pub(crate) fn is_run_of(&self, run: &str, owner: &str) -> bool {
        self.inbox_of(run, owner).is_some()
    }
}

/// When a spawn answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpawnWait {
    /// At once, the subagent running (`sessions_spawn`, the action `spawn`).
    Started,
    /// When the subagent has ended (the action `run`): the caller's client lends its model
    /// to an agent on `sampling`.
    Ended,
    /// When the subagent has ended, for an MCP task (`sessions_spawn` called as a task): the
    /// task's cancel cancels the subagent, and a subagent cancelled by other means ends the
    /// call `cancelled`. No model is lent: the call was answered with the task already.
    EndedAsTask,
}

/// Where a subagent's end is announced.
pub(crate) enum Announce {
    /// The parent is a run: its next model turn.
    Run(Arc<Inbox>),
    /// The parent is a client: a log notification on its MCP session (nothing on REST).
    Client(Option<Client>),
}

impl Announce {
    pub(crate) async fn deliver(&self, s: &SessionRecord) {
        match self {
            Announce::Run(inbox) => {
                let outcome = match (&s.result, &s.error) {
                    (Some(result), _) => result.clone(),
                    (None, Some(error)) => format!("error: {error}"),
                    (None, None) => "(no answer)".to_owned(),
                };
                inbox.leave(
                    format!(
                        "[subagent '{}' ({}) {}]\n{outcome}",
                        s.label,
                        s.id,
                        s.status.as_str()
                    ),
                    true,
                );
            }
            Announce::Client(Some(client)) => {
                let data = json!({
                    "event": "subagent_ended",
                    "sessionKey": s.id,
                    "label": s.label,
                    "status": s.status.as_str(),
                    "result": s.result,
                    "error": s.error,
                });
                if let Err(e) = client
                    .log(LogLevel::Info, Some("toolsmith/subagents".to_owned()), data)
                    .await
                {
                    tracing::debug!(session = %s.id, "announcing a subagent's end failed: {e}");
                }
            }
            Announce::Client(None) => {}
        }
    }
}

impl ToolService {
    /// The caller's parent key (`run:<id>` inside a run of this instance, else
    /// `client:<agent>`), and the run's inbox when it is one.
    fn parent_of(&self, ctx: &ToolContext) -> (String, Option<Arc<Inbox>>) {
        if let Some(run) = ctx.conversation_id.as_deref()
            && let Some(inbox) = self.subagents.inbox_of(run, &ctx.user_id)
        {
            return (format!("run:{run}"), Some(inbox));
        }
        (
            format!("client:{}", ctx.agent_id.as_deref().unwrap_or("")),
            None,
        )
    }

    /// Archives the caller's subagents that ended more than `archive_after` ago.
    pub(crate) async fn archive_subagents(&self, ctx: &ToolContext) -> Result<(), ServiceError> {
        let after = self.config.sessions.subagents.archive_after;
        let after = chrono::Duration::from_std(after).unwrap_or(chrono::Duration::MAX);
        let before = Utc::now()
            .checked_sub_signed(after)
            .unwrap_or(chrono::DateTime::<Utc>::MIN_UTC);
        self.store.archive_sessions(&ctx.user_id, before).await?;
        Ok(())
    }

    /// Spawns a subagent of the caller on `task`, answering when `wait` says: at once (the
    /// subagent running) or when it has ended.
    ///
    /// Errors: `LimitReached` naming §6's limit it would pass (rejected: nothing stored),
    /// `NotFound` / `Validation` (the agent), and what starting its run refuses.
    pub async fn spawn_subagent(
        self: &Arc<Self>,
        ctx: &ToolContext,
        task: String,
        label: Option<String>,
        agent: Option<&str>,
        wait: SpawnWait,
    ) -> Result<SessionRecord, ServiceError> {
        check_text("task", &task)?;
        let limits = self.config.sessions.subagents.clone();
        if ctx.subagent_depth >= limits.max_spawn_depth {
            return Err(ServiceError::LimitReached(format!(
                "rejected: a caller at subagent depth {} may not spawn subagents (MaxSpawnDepth \
                 is {}); do the task yourself",
                ctx.subagent_depth, limits.max_spawn_depth
            )));
        }
        let mut agent = self.session_agent(ctx, agent).await?;
        let turns = &mut agent.definition.limits.max_iterations;
        *turns = (*turns).min(limits.max_iterations);
        let (parent, inbox) = self.parent_of(ctx);
        let now = Utc::now();
        let session = SessionRecord {
            id: format!("sub_{}", uuid::Uuid::new_v4().simple()),
            owner: ctx.user_id.clone(),
            caller_agent: ctx.agent_id.clone(),
            agent_id: agent.id.clone(),
            kind: SessionKind::Subagent,
            label: label_of(label, &task)?,
            parent: Some(parent),
            depth: ctx.subagent_depth + 1,
            status: SessionStatus::Running,
            task: Some(task.clone()),
            result: None,
            error: None,
            last_run: None,
            message_count: 0,
            message_bytes: 0,
            trimmed: 0,
            created_at: now,
            updated_at: now,
        };
        let spawned = self
            .store
            .spawn_subagent(
                &session,
                limits.max_concurrent,
                limits.max_children_per_agent,
            )
            .await?;
        match spawned {
            SpawnOutcome::Inserted => {}
            SpawnOutcome::TooManyRunning(n) => {
                return Err(ServiceError::LimitReached(format!(
                    "rejected: {n} subagents of yours are running already (MaxConcurrent {n}); \
                     wait for one to end or cancel one (subagents, action cancel)"
                )));
            }
            SpawnOutcome::TooManyChildren(n) => {
                return Err(ServiceError::LimitReached(format!(
                    "rejected: this parent has {n} subagents running already \
                     (MaxChildrenPerAgent {n}); wait for one to end or cancel one (subagents, \
                     action cancel)"
                )));
            }
        }
        let mut child = ctx.clone();
        child.call_id = toolsmith_core::model::new_call_id();
        child.subagent_depth = session.depth;
        child.cancellation = CancellationToken::new();
        child.depth = 0;
        child.granted_permissions = None;
        child.deadline = None;
        child.approver = None;
        // The caller's client stays on the child's context only so that an agent on the
        // client's model (`sampling`) is told why a spawn cannot borrow it; the run's own tool
        // calls carry at most the model of a client its starter waits on (`runner.rs`'s
        // `tool_context`).
        let announce = match inbox {
            Some(inbox) => {
                inbox.expect();
                Announce::Run(inbox)
            }
            None => Announce::Client(ctx.client.clone()),
        };
        let extras = Extras {
            // A caller that waits (action `run`) lends its client's model to an agent on
            // `sampling` (and its model to the child's own calls, as `runner.rs` says).
            sampling: ctx.client.clone().filter(|_| wait == SpawnWait::Ended),
            ..Extras::default()
        };
        let launched = self
            .launch_agent_run(&child, agent, task.clone(), extras)
            .await;
        let (run, handle) = match launched {
            Ok(launched) => launched,
            Err(e) => {
                let mut failed = session;
                failed.status = SessionStatus::Failed;
                failed.error = Some(e.to_string());
                failed.updated_at = Utc::now();
                self.store.update_session(&failed).await?;
                if let Announce::Run(inbox) = &announce {
                    inbox.leave(
                        format!("[subagent '{}' ({}) failed]\n{e}", failed.label, failed.id),
                        true,
                    );
                }
                return Err(e);
            }
        };
        let session = self
            .session_run_started(session, &run, "user", task)
            .await?;
        let started = session.clone();
        let service = Arc::clone(self);
        let watcher = tokio::spawn(async move {
            let ended = handle.await;
            service
                .session_run_ended(session, ended, Some(announce))
                .await
        });
        let ended = match wait {
            SpawnWait::Started => return Ok(started),
            SpawnWait::Ended => watcher.await,
            SpawnWait::EndedAsTask => {
                // The task's cancel (on any instance: its runner stops the call within a
                // second) cancels its subagent, through the store. The pipeline drops this
                // call when it is cancelled, so the cancel is a task of its own, which ends
                // with the call.
                let call_over = CancellationToken::new();
                let _ended_with_the_call = call_over.clone().drop_guard();
                let service = Arc::clone(self);
                let (task_ctx, key) = (ctx.clone(), started.id.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        biased;
                        () = task_ctx.cancellation.cancelled() => {
                            if let Err(e) = service.cancel_subagents(&task_ctx, &key).await {
                                tracing::warn!(session = %key, "cancelling a task's subagent failed: {e}");
                            }
                        }
                        () = call_over.cancelled() => {}
                    }
                });
                watcher.await
            }
        };
        ended.map_err(|e| {
            ServiceError::Validation(format!("the subagent's run stopped unexpectedly ({e})"))
        })
    }

    /// The caller's subagents (of this parent), newest change first.
    pub async fn list_subagents(
        &self,
        ctx: &ToolContext,
    ) -> Result<Vec<SessionRecord>, ServiceError> {
        let (parent, _) = self.parent_of(ctx);
        self.list_sessions(
            ctx,
            SessionQuery {
                kind: Some(SessionKind::Subagent),
                parent: Some(parent),
                archived: false,
                limit: super::sessions::MAX_SESSIONS_LISTED,
            },
        )
        .await
    }

    /// Cancels the caller's subagent `which` (its key), or every running one of this parent
    /// (`all`), or the newest running one (`last`). The subagents as they are after.
    pub async fn cancel_subagents(
        &self,
        ctx: &ToolContext,
        which: &str,
    ) -> Result<Vec<SessionRecord>, ServiceError> {
        let targets = match which {
            "all" | "last" => {
                let mut running: Vec<SessionRecord> = self
                    .list_subagents(ctx)
                    .await?
                    .into_iter()
                    .filter(|s| s.status == SessionStatus::Running)
                    .collect();
                running.sort_by_key(|s| s.created_at);
                if which == "last" {
                    running.split_off(running.len().saturating_sub(1))
                } else {
                    running
                }
            }
            key => {
                let session = self.get_session(ctx, key).await?;
                if session.kind != SessionKind::Subagent {
                    return Err(ServiceError::InvalidState(format!(
                        "'{key}' is a conversation, not a subagent: nothing to cancel"
                    )));
                }
                vec![session]
            }
        };
        let who = ctx.agent_id.as_deref().map_or_else(
            || format!("user {}", ctx.user_id),
            |agent| format!("agent {agent} of user {}", ctx.user_id),
        );
        let mut after = Vec::new();
        for mut session in targets {
            if session.status == SessionStatus::Running {
                session.status = SessionStatus::Cancelled;
                session.error = Some(format!("cancelled by {who}"));
                session.updated_at = Utc::now();
                self.store.update_session(&session).await?;
                if let Some(run) = &session.last_run {
                    // Audited as every other cancel of a run: by the model when a model asked.
                    let actor = if ctx.by_model() {
                        Actor::llm(ctx.user_id.clone())
                            .with_agent(ctx.agent_id.clone())
                            .with_member(ctx.member.clone())
                    } else {
                        Actor::for_caller(ctx.user_id.clone(), ctx.agent_id.clone())
                            .with_member(ctx.member.clone())
                    };
                    self.cancel_agent_run_as(&actor, ctx, run).await?;
                }
            }
            after.push(self.get_session(ctx, &session.id).await?);
        }
        Ok(after)
    }

    /// Leaves `message` for the caller's running subagent `key`, read at its next model turn.
    pub async fn steer_subagent(
        &self,
        ctx: &ToolContext,
        key: &str,
        message: String,
    ) -> Result<SessionRecord, ServiceError> {
        check_text("message", &message)?;
        let session = self.get_session(ctx, key).await?;
        if session.kind != SessionKind::Subagent || session.status != SessionStatus::Running {
            return Err(ServiceError::InvalidState(format!(
                "'{key}' is not a running subagent ({} {}): spawn a new one with the task",
                session.kind.as_str(),
                session.status.as_str()
            )));
        }
        let inbox = session
            .last_run
            .as_deref()
            .and_then(|run| self.subagents.inbox_of(run, &ctx.user_id))
            .ok_or_else(|| {
                ServiceError::InvalidState(format!(
                    "subagent '{key}' runs on another instance of this server: steer it there, \
                     or steer with restart: true (cancels it and spawns it again with your \
                     message as its task)"
                ))
            })?;
        inbox.leave(format!("[a message from your parent]\n{message}"), false);
        Ok(session)
    }

    /// Steers the caller's running subagent `key` as spec 001 §6 does: cancels it and spawns
    /// it again with `message` as its task, keeping its label and agent (asynchronously, as
    /// `spawn`). The cancel is the store's, so this works whichever instance runs it; the
    /// cancelled subagent no longer counts against §6's limits, so no settling wait is
    /// needed. The subagent as cancelled, and the new one.
    pub async fn restart_subagent(
        self: &Arc<Self>,
        ctx: &ToolContext,
        key: &str,
        message: String,
    ) -> Result<(SessionRecord, SessionRecord), ServiceError> {
        check_text("message", &message)?;
        let session = self.get_session(ctx, key).await?;
        if session.kind != SessionKind::Subagent || session.status != SessionStatus::Running {
            return Err(ServiceError::InvalidState(format!(
                "'{key}' is not a running subagent ({} {}): spawn a new one with the task",
                session.kind.as_str(),
                session.status.as_str()
            )));
        }
        let cancelled = self
            .cancel_subagents(ctx, key)
            .await?
            .into_iter()
            .next()
            .unwrap_or(session);
        let respawned = self
            .spawn_subagent(
                ctx,
                message,
                Some(cancelled.label.clone()),
                Some(&cancelled.agent_id),
                SpawnWait::Started,
            )
            .await?;
        Ok((cancelled, respawned))
    }

    /// Runs the `subagents` tool's `action` (and `sessions_spawn`, which is `spawn`).
    pub(crate) async fn subagent_action(
        self: &Arc<Self>,
        action: &str,
        args: &Args,
        ctx: &ToolContext,
    ) -> Result<Value, ServiceError> {
        match action {
            "spawn" | "run" => {
                let session = self
                    .spawn_subagent(
                        ctx,
                        args.required("task")?,
                        args.str("label")?,
                        args.str("agent")?.as_deref(),
                        if action == "run" {
                            SpawnWait::Ended
                        } else {
                            SpawnWait::Started
                        },
                    )
                    .await?;
                Ok(session_json(&session))
            }
            "list" => {
                let subagents = self.list_subagents(ctx).await?;
                Ok(json!({
                    "subagents": subagents.iter().map(session_json).collect::<Vec<_>>(),
                }))
            }
            "cancel" => {
                let which = args.required("id")?;
                let cancelled = self.cancel_subagents(ctx, &which).await?;
                Ok(json!({
                    "subagents": cancelled.iter().map(session_json).collect::<Vec<_>>(),
                }))
            }
            "steer" if args.0.get("restart").and_then(Value::as_bool) == Some(true) => {
                let (cancelled, respawned) = self
                    .restart_subagent(ctx, &args.required("id")?, args.required("message")?)
                    .await?;
                Ok(json!({
                    "steered": session_json(&respawned),
                    "cancelled": session_json(&cancelled),
                }))
            }
            "steer" => {
                let session = self
                    .steer_subagent(ctx, &args.required("id")?, args.required("message")?)
                    .await?;
                Ok(json!({"steered": session_json(&session)}))
            }
            other => Err(ServiceError::Validation(format!(
                "action: one of spawn, run, list, cancel, steer, not '{other}'"
            ))),
        }
    }
}
