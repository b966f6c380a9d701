//! Sessions (spec 001 §2 "Sessions"): a conversation with one of the caller's agents, its
//! messages kept in the store (`SessionStore`) and given to the model as its history on each
//! run, so a run continues the session. Owner-only, like runs: a session is read, listed and
//! used only by the user and the agent identity that began it.
//!
//! Bounded in size: a session keeps at most `max_messages` messages of at most `max_bytes` in
//! all; past either, the **oldest are trimmed** (the newest always stays), and the session
//! counts how many were (`trimmed`), so a long conversation goes on with its recent history.
//!
//! [`ServiceSessions`] is how the `sessions` family of built-ins (`toolsmith-builtins`'s
//! `sessions.rs`) reaches this: the six tools, dispatched by name. Subagents are sessions too
//! (`subagents.rs`).

use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_core::agent::{AgentRecord, AgentRunRecord, AgentRunStatus};
use toolsmith_core::agent_session::{
    SessionKind, SessionMessage, SessionQuery, SessionRecord, SessionStatus,
};
use toolsmith_core::{ErrorKind, ToolContext};

use super::providers::Message;
use super::runner::Extras;
use super::subagents::{Announce, SpawnWait, SubagentLimits};
use crate::{ServiceError, ToolService};

/// The most sessions a listing returns.
pub const MAX_SESSIONS_LISTED: u32 = 200;
/// The most messages a history read returns.
pub const MAX_HISTORY_READ: u32 = 500;
/// The longest message (or subagent task) accepted.
const MAX_MESSAGE_CHARS: usize = 100_000;
/// The longest label accepted.
const MAX_LABEL_CHARS: usize = 200;

/// How large a session grows, and the subagents' limits.
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// Messages a session keeps (the oldest trimmed past it; default 200).
    pub max_messages: u32,
    /// Bytes of message text a session keeps (the oldest trimmed past it; default 1 MiB).
    pub max_bytes: u64,
    /// Spec 001 §6's limits.
    pub subagents: SubagentLimits,
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings {
            max_messages: 200,
            max_bytes: 1024 * 1024,
            subagents: SubagentLimits::default(),
        }
    }
}

fn session_not_found(key: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no session '{key}' of yours (only the user and agent that began a session see it); \
         list yours with sessions_list or GET /api/v1/sessions"
    ))
}

/// A session as the tools and REST show it.
pub fn session_json(s: &SessionRecord) -> Value {
    json!({
        "sessionKey": s.id,
        "kind": s.kind.as_str(),
        "label": s.label,
        "agent": s.agent_id,
        "status": s.status.as_str(),
        "parent": s.parent,
        "depth": s.depth,
        "task": s.task,
        "result": s.result,
        "error": s.error,
        "lastRun": s.last_run,
        "messages": s.message_count,
        "bytes": s.message_bytes,
        "trimmed": s.trimmed,
        "createdAt": s.created_at,
        "updatedAt": s.updated_at,
    })
}

/// A message as the tools and REST show it.
pub fn message_json(m: &SessionMessage) -> Value {
    json!({"seq": m.seq, "role": m.role, "content": m.content, "run": m.run_id, "at": m.at})
}

/// Checks a message or task: not empty, not too long.
pub(crate) fn check_text(what: &str, text: &str) -> Result<(), ServiceError> {
    if text.trim().is_empty() || text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ServiceError::Validation(format!(
            "{what}: 1 to {MAX_MESSAGE_CHARS} characters"
        )));
    }
    Ok(())
}

/// A label as given, or made from `text` (its first words).
pub(crate) fn label_of(label: Option<String>, text: &str) -> Result<String, ServiceError> {
    match label {
        Some(label) if label.chars().count() > MAX_LABEL_CHARS => Err(ServiceError::Validation(
            format!("label: at most {MAX_LABEL_CHARS} characters"),
        )),
        Some(label) if !label.trim().is_empty() => Ok(label),
        _ => Ok(text
            .split_whitespace()
            .take(8)
            .collect::<Vec<_>>()
            .join(" ")),
    }
}

impl ToolService {
    /// The agent a session or subagent of the caller runs: `agent` (one of the caller's, by
    /// name or id), or else the agent whose run is calling.
    pub(crate) async fn session_agent(
        &self,
        ctx: &ToolContext,
        agent: Option<&str>,
    ) -> Result<AgentRecord, ServiceError> {
        if let Some(agent) = agent {
            return self.get_agent(ctx, agent).await;
        }
        if let Some(own) = ctx
            .agent_id
            .as_deref()
            .filter(|a| super::is_definition_id(a))
            && let Some(record) = self.store.get_agent(&ctx.user_id, own).await?
        {
            return Ok(record);
        }
        Err(ServiceError::Validation(
            "agent: name the agent that answers (one of your agent definitions, by name or \
             id: GET /api/v1/agents or `toolsmith agent list`); only inside an agent's run is \
             it that agent by default"
                .to_owned(),
        ))
    }

    /// The caller's sessions that `query` asks for, newest change first; ended subagents past
    /// their archive time are archived first.
    pub async fn list_sessions(
        &self,
        ctx: &ToolContext,
        mut query: SessionQuery,
    ) -> Result<Vec<SessionRecord>, ServiceError> {
        self.archive_subagents(ctx).await?;
        query.limit = query.limit.clamp(1, MAX_SESSIONS_LISTED);
        Ok(self
            .store
            .list_sessions(&ctx.user_id, ctx.agent_id.as_deref(), &query)
            .await?)
    }

    /// The caller's session `key`.
    pub async fn get_session(
        &self,
        ctx: &ToolContext,
        key: &str,
    ) -> Result<SessionRecord, ServiceError> {
        self.store
            .get_session(&ctx.user_id, ctx.agent_id.as_deref(), key)
            .await?
            .ok_or_else(|| session_not_found(key))
    }

    /// The caller's session `key` with its last `limit` messages, oldest first.
    pub async fn session_history(
        &self,
        ctx: &ToolContext,
        key: &str,
        limit: u32,
    ) -> Result<(SessionRecord, Vec<SessionMessage>), ServiceError> {
        let session = self.get_session(ctx, key).await?;
        let messages = self
            .store
            .session_messages(&session.id, limit.clamp(1, MAX_HISTORY_READ))
            .await?;
        Ok((session, messages))
    }

    /// Sends `message` to the caller's session `key`, or to a new session with `agent` when
    /// `key` is `None`: a run of the session's agent answers, with the session's messages as
    /// its history. With `wait`, answers when the run has ended (the session then holds the
    /// answer as `result`); without, at once, the session `running`.
    ///
    /// Errors: `NotFound` (no such session or agent of the caller's), `InvalidState` (the
    /// session is answering another message, or is a subagent's), `Validation`, and what
    /// starting the run refuses (`LimitReached` past the agent's concurrent runs …).
    pub async fn send_to_session(
        self: &Arc<Self>,
        ctx: &ToolContext,
        key: Option<&str>,
        agent: Option<&str>,
        label: Option<String>,
        message: String,
        wait: bool,
    ) -> Result<SessionRecord, ServiceError> {
        check_text("message", &message)?;
        // A session handed off goes to the agent it was handed to (`handoff.rs`).
        let routed = match key {
            Some(key) => Some(self.routed_session(ctx, key).await?),
            None => None,
        };
        let (mut session, agent) = match routed.as_deref() {
            Some(key) => {
                let session = self.get_session(ctx, key).await?;
                if session.kind == SessionKind::Subagent {
                    return Err(ServiceError::InvalidState(format!(
                        "'{key}' is a subagent, which takes no messages: steer it with the \
                         subagents tool (action steer) while it runs"
                    )));
                }
                if session.status == SessionStatus::Running {
                    return Err(ServiceError::InvalidState(format!(
                        "session '{key}' is still answering its last message (run {}): wait \
                         for it (session_status) and send again",
                        session.last_run.as_deref().unwrap_or("?")
                    )));
                }
                let agent = self
                    .store
                    .get_agent(&ctx.user_id, &session.agent_id)
                    .await?
                    .ok_or_else(|| {
                        ServiceError::NotFound(format!(
                            "the agent of session '{key}' ({}) was deleted: begin a new session \
                             with another agent",
                            session.agent_id
                        ))
                    })?;
                (session, agent)
            }
            None => {
                let agent = self.session_agent(ctx, agent).await?;
                let now = Utc::now();
                let session = SessionRecord {
                    id: format!("ses_{}", uuid::Uuid::new_v4().simple()),
                    owner: ctx.user_id.clone(),
                    caller_agent: ctx.agent_id.clone(),
                    agent_id: agent.id.clone(),
                    kind: SessionKind::Session,
                    label: label_of(label, &message)?,
                    parent: None,
                    depth: ctx.subagent_depth,
                    status: SessionStatus::Idle,
                    task: None,
                    result: None,
                    error: None,
                    last_run: None,
                    message_count: 0,
                    message_bytes: 0,
                    trimmed: 0,
                    created_at: now,
                    updated_at: now,
                };
                self.store.insert_session(&session).await?;
                (session, agent)
            }
        };
        let history = self
            .store
            .session_messages(&session.id, self.config.sessions.max_messages)
            .await?
            .into_iter()
            .map(|m| match m.role.as_str() {
                "assistant" => Message::Assistant {
                    text: m.content,
                    tool_calls: Vec::new(),
                },
                _ => Message::User(m.content),
            })
            .collect();
        // The run starts once the session names it: a `handoff` in its first turn finds the
        // session through its `last_run` (it could look before, and fail, under load).
        let (recorded, start_after) = tokio::sync::oneshot::channel();
        let extras = Extras {
            history,
            inbox: None,
            // A caller that waits lends its client's model to an agent on `sampling`.
            sampling: ctx.client.clone().filter(|_| wait),
            start_after: Some(start_after),
        };
        let (run, handle) = self
            .launch_agent_run(ctx, agent, message.clone(), extras)
            .await?;
        session = self
            .session_run_started(session, &run, "user", message)
            .await?;
        let _ = recorded.send(());
        let started = session.clone();
        let service = Arc::clone(self);
        let watcher = tokio::spawn(async move {
            let ended = handle.await;
            service.session_run_ended(session, ended, None).await
        });
        if !wait {
            return Ok(started);
        }
        watcher.await.map_err(|e| {
            ServiceError::Validation(format!("the session's run stopped unexpectedly ({e})"))
        })
    }

    /// Marks `session` running `run`, with `text` (the message sent, or a subagent's task) as
    /// its newest message.
    pub(crate) async fn session_run_started(
        &self,
        mut session: SessionRecord,
        run: &AgentRunRecord,
        role: &str,
        text: String,
    ) -> Result<SessionRecord, ServiceError> {
        session.status = SessionStatus::Running;
        session.last_run = Some(run.id.clone());
        session.updated_at = Utc::now();
        self.store.update_session(&session).await?;
        self.append_messages(&session.id, &[(role, text, &run.id)])
            .await?;
        Ok(session)
    }

    async fn append_messages(
        &self,
        session_id: &str,
        messages: &[(&str, String, &str)],
    ) -> Result<(), ServiceError> {
        let now = Utc::now();
        let messages: Vec<SessionMessage> = messages
            .iter()
            .map(|(role, content, run)| SessionMessage {
                session_id: session_id.to_owned(),
                seq: 0,
                role: (*role).to_owned(),
                content: content.clone(),
                run_id: Some((*run).to_owned()),
                at: now,
            })
            .collect();
        let settings = &self.config.sessions;
        self.store
            .append_session_messages(
                session_id,
                &messages,
                settings.max_messages,
                settings.max_bytes,
            )
            .await?;
        Ok(())
    }

    /// Records how the run of `session` ended: the answer as its newest message and its
    /// `result`, the error, and its status (a conversation is `idle` again, a subagent ends as
    /// its run did); then announces a subagent's end to its parent. The session as stored.
    pub(crate) async fn session_run_ended(
        self: &Arc<Self>,
        mut session: SessionRecord,
        ended: Result<AgentRunRecord, tokio::task::JoinError>,
        announce: Option<Announce>,
    ) -> SessionRecord {
        let (status, output, error) = match ended {
            Ok(run) => (run.status, run.output, run.error),
            Err(e) => (
                AgentRunStatus::Failed,
                None,
                Some(format!("the run stopped unexpectedly ({e})")),
            ),
        };
        if let (Some(output), Some(run)) = (&output, session.last_run.clone())
            && let Err(e) = self
                .append_messages(&session.id, &[("assistant", output.clone(), &run)])
                .await
        {
            tracing::warn!(session = %session.id, "recording a session's answer failed: {e}");
        }
        session.status = match (session.kind, status) {
            (SessionKind::Session, _) => SessionStatus::Idle,
            (SessionKind::Subagent, AgentRunStatus::Completed) => SessionStatus::Completed,
            (SessionKind::Subagent, AgentRunStatus::Cancelled) => SessionStatus::Cancelled,
            (SessionKind::Subagent, _) => SessionStatus::Failed,
        };
        session.result = output;
        session.error = error;
        session.updated_at = Utc::now();
        if let Err(e) = self.store.update_session(&session).await {
            tracing::warn!(session = %session.id, "recording a session's end failed: {e}");
        }
        let stored = self
            .store
            .get_session(&session.owner, session.caller_agent.as_deref(), &session.id)
            .await
            .ok()
            .flatten()
            .unwrap_or(session);
        if let Some(announce) = announce {
            announce.deliver(&stored).await;
        }
        stored
    }

    /// What a session tool answers for the caller of `ctx`: `session_status` without a key.
    async fn status_summary(&self, ctx: &ToolContext) -> Result<Value, ServiceError> {
        let current = match ctx.conversation_id.as_deref() {
            Some(run) if self.subagents.is_run_of(run, &ctx.user_id) => self
                .store
                .agent_run_status(run)
                .await?
                .map(|status| json!({"run": run, "status": status.as_str()})),
            _ => None,
        };
        let sessions = self
            .list_sessions(
                ctx,
                SessionQuery {
                    limit: MAX_SESSIONS_LISTED,
                    ..SessionQuery::default()
                },
            )
            .await?;
        let count = |status: SessionStatus| sessions.iter().filter(|s| s.status == status).count();
        Ok(json!({
            "currentRun": current,
            "subagentDepth": ctx.subagent_depth,
            "sessions": {
                "running": count(SessionStatus::Running),
                "idle": count(SessionStatus::Idle),
                "completed": count(SessionStatus::Completed),
                "failed": count(SessionStatus::Failed),
                "cancelled": count(SessionStatus::Cancelled),
            },
        }))
    }
}

/// How the `sessions` built-ins reach the service; built before the service, bound after.
#[derive(Default)]
pub(crate) struct ServiceSessions {
    service: OnceLock<Weak<ToolService>>,
}

impl std::fmt::Debug for ServiceSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceSessions")
    }
}

impl ServiceSessions {
    pub(crate) fn bind(&self, service: &Arc<ToolService>) {
        let _ = self.service.set(Arc::downgrade(service));
    }
}

/// The arguments of a sessions tool, read with the fix named.
pub(crate) struct Args(pub Value);

impl Args {
    pub(crate) fn str(&self, name: &str) -> Result<Option<String>, ServiceError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(ServiceError::Validation(format!(
                "{name}: a string, not {other}"
            ))),
        }
    }

    pub(crate) fn required(&self, name: &str) -> Result<String, ServiceError> {
        self.str(name)?
            .ok_or_else(|| ServiceError::Validation(format!("{name}: required")))
    }

    fn flag(&self, name: &str, default: bool) -> bool {
        self.0.get(name).and_then(Value::as_bool).unwrap_or(default)
    }

    fn limit(&self, default: u32) -> u32 {
        self.0
            .get("limit")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(default)
    }
}

fn kind_of(error: &ServiceError) -> ErrorKind {
    match error {
        ServiceError::Validation(_) => ErrorKind::InvalidArguments,
        ServiceError::NotFound(_) => ErrorKind::NotFound,
        ServiceError::Forbidden(_) => ErrorKind::Denied,
        // A spawn past a limit of §6 is rejected: a refusal the model reads, not a rate limit.
        ServiceError::LimitReached(_) => ErrorKind::Denied,
        _ => ErrorKind::ExecutionError,
    }
}

#[async_trait]
impl toolsmith_builtins::sessions::SessionHost for ServiceSessions {
    async fn call(
        &self,
        tool: &str,
        args: Value,
        ctx: &ToolContext,
    ) -> Result<Value, (ErrorKind, String)> {
        let Some(service) = self.service.get().and_then(Weak::upgrade) else {
            return Err((
                ErrorKind::ExecutionError,
                "the server is shutting down; try again".to_owned(),
            ));
        };
        if tool == "sessions_spawn" && service.runs_as_task(ctx) {
            return service.spawn_as_task(&Args(args), ctx).await;
        }
        service
            .session_tool(tool, Args(args), ctx)
            .await
            .map_err(|e| (kind_of(&e), e.to_string()))
    }
}

impl ToolService {
    /// `sessions_spawn` called as an MCP task (issue 37: the result reaches the client "as an
    /// MCP task where the client asked for one"): the call lasts as long as the subagent, so
    /// the task is `working` while it runs and ends with it — `completed` with the subagent
    /// as it ended (its `result`, or its `error` when it failed), `cancelled` when the
    /// subagent was cancelled (`subagents` cancel, on any instance); the task's cancel
    /// cancels the subagent.
    async fn spawn_as_task(
        self: &Arc<Self>,
        args: &Args,
        ctx: &ToolContext,
    ) -> Result<Value, (ErrorKind, String)> {
        let refused = |e: ServiceError| (kind_of(&e), e.to_string());
        let session = self
            .spawn_subagent(
                ctx,
                args.required("task").map_err(refused)?,
                args.str("label").map_err(refused)?,
                args.str("agent").map_err(refused)?.as_deref(),
                SpawnWait::EndedAsTask,
            )
            .await
            .map_err(refused)?;
        if session.status == SessionStatus::Cancelled {
            return Err((
                ErrorKind::Cancelled,
                format!(
                    "subagent '{}' ({}) was cancelled{}",
                    session.label,
                    session.id,
                    session
                        .error
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                ),
            ));
        }
        Ok(session_json(&session))
    }

    /// Runs the sessions tool `tool` for the caller of `ctx`.
    async fn session_tool(
        self: &Arc<Self>,
        tool: &str,
        args: Args,
        ctx: &ToolContext,
    ) -> Result<Value, ServiceError> {
        match tool {
            "sessions_list" => {
                let kind = match args.str("kind")?.as_deref() {
                    None => None,
                    Some(kind) => Some(SessionKind::parse(kind).ok_or_else(|| {
                        ServiceError::Validation(format!(
                            "kind: 'session' or 'subagent', not '{kind}'"
                        ))
                    })?),
                };
                let query = SessionQuery {
                    kind,
                    parent: None,
                    archived: args.flag("includeArchived", false),
                    limit: args.limit(50),
                };
                let sessions = self.list_sessions(ctx, query).await?;
                Ok(json!({
                    "sessions": sessions.iter().map(session_json).collect::<Vec<_>>(),
                }))
            }
            "sessions_history" => {
                let key = args.required("sessionKey")?;
                let (session, messages) = self.session_history(ctx, &key, args.limit(50)).await?;
                Ok(json!({
                    "session": session_json(&session),
                    "messages": messages.iter().map(message_json).collect::<Vec<_>>(),
                }))
            }
            "sessions_send" => {
                let session = self
                    .send_to_session(
                        ctx,
                        args.str("sessionKey")?.as_deref(),
                        args.str("agent")?.as_deref(),
                        args.str("label")?,
                        args.required("message")?,
                        args.flag("wait", true),
                    )
                    .await?;
                Ok(session_json(&session))
            }
            "session_status" => match args.str("sessionKey")? {
                Some(key) => Ok(session_json(&self.get_session(ctx, &key).await?)),
                None => self.status_summary(ctx).await,
            },
            "sessions_spawn" => self.subagent_action("spawn", &args, ctx).await,
            "subagents" => {
                let action = args.required("action")?;
                self.subagent_action(&action, &args, ctx).await
            }
            // The delegation group's tools (spec 001 §7, §9, §10: `delegation.rs`).
            t if super::delegation::DELEGATION_TOOLS.contains(&t) => {
                self.delegation_tool(t, &args, ctx).await
            }
            other => Err(ServiceError::NotFound(format!(
                "no sessions tool '{other}'"
            ))),
        }
    }
}
