//! Handoff (spec 001 §10): a session is transferred to another agent — a routing override.
//! Unlike delegation, the source agent steps away: the session's next messages
//! (`sessions_send` with its key) are answered by the target, in a new session of its own,
//! until the route is cleared (`handoff` with action `clear`, by the target or the person),
//! when they go back to the session's own agent.
//!
//! What carries over: the reason and the conversation so far (the session's last
//! [`CARRIED_MESSAGES`] messages, as the first message of the target's session, so the
//! target's first run reads them). What does not: the source agent's instructions, context
//! files, tools, provider and model, its running subagents and delegations, and the
//! session's own history (the source's session keeps it, unchanged). A handoff needs the same
//! agent link a delegation does (made by a person), from the agent answering now to the
//! target.

use std::sync::Arc;

use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_core::agent_session::{SessionKind, SessionMessage, SessionRecord, SessionStatus};
use toolsmith_core::delegation::HandoffRoute;
use toolsmith_core::{LogLevel, ToolContext};

use super::sessions::Args;
use crate::governance::audit::AuditTarget;
use crate::input::Actor;
use crate::{ServiceError, ToolService};

/// The messages of the session carried to the target.
pub const CARRIED_MESSAGES: u32 = 20;
const MAX_REASON_CHARS: usize = 1_000;

impl ToolService {
    /// The session a handoff names: `key`, or the session whose run is calling.
    async fn handoff_session(
        &self,
        ctx: &ToolContext,
        key: Option<&str>,
    ) -> Result<SessionRecord, ServiceError> {
        if let Some(key) = key {
            return self.get_session(ctx, key).await;
        }
        if let Some(run) = ctx.conversation_id.as_deref()
            && let Some((id, caller)) = self.store.session_of_run(&ctx.user_id, run).await?
            && let Some(session) = self
                .store
                .get_session(&ctx.user_id, caller.as_deref(), &id)
                .await?
        {
            return Ok(session);
        }
        Err(ServiceError::Validation(
            "handoff moves a session: call it inside a run that answers a session \
             (sessions_send), or name sessionKey"
                .to_owned(),
        ))
    }

    /// Where the caller's message to session `key` goes: the target's session when `key` is
    /// handed off, else `key` itself.
    pub(crate) async fn routed_session(
        &self,
        ctx: &ToolContext,
        key: &str,
    ) -> Result<String, ServiceError> {
        Ok(self
            .store
            .get_handoff_route(&ctx.user_id, key)
            .await?
            .map_or_else(|| key.to_owned(), |route| route.target_session))
    }

    /// Hands the session `key` (or the calling run's) to `agent` for `reason`.
    async fn hand_off(
        &self,
        ctx: &ToolContext,
        key: Option<&str>,
        agent: &str,
        reason: String,
    ) -> Result<(HandoffRoute, u32), ServiceError> {
        if reason.chars().count() > MAX_REASON_CHARS {
            return Err(ServiceError::Validation(format!(
                "reason: at most {MAX_REASON_CHARS} characters"
            )));
        }
        let mut session = self.handoff_session(ctx, key).await?;
        if session.kind != SessionKind::Session {
            return Err(ServiceError::InvalidState(format!(
                "'{}' is a subagent: only a conversation (a session) is handed off",
                session.id
            )));
        }
        // A target's session handing off again moves the original session.
        if let Some(route) = self
            .store
            .handoff_route_to(&ctx.user_id, &session.id)
            .await?
            && let Some(original) = self
                .store
                .get_session(
                    &ctx.user_id,
                    session.caller_agent.as_deref(),
                    &route.session_id,
                )
                .await?
        {
            session = original;
        }
        let current = match self
            .store
            .get_handoff_route(&ctx.user_id, &session.id)
            .await?
        {
            Some(route) => route.to_agent,
            None => session.agent_id.clone(),
        };
        let from = self
            .store
            .get_agent(&ctx.user_id, &current)
            .await?
            .ok_or_else(|| {
                ServiceError::NotFound(format!(
                    "the agent answering session '{}' was deleted: send it a message of your own",
                    session.id
                ))
            })?;
        let to = self.get_agent(ctx, agent).await?;
        if to.id == from.id {
            return Err(ServiceError::Validation(format!(
                "'{}' answers this session already",
                to.name
            )));
        }
        self.link_between(&ctx.user_id, &from, &to).await?;
        let carried = self
            .store
            .session_messages(&session.id, CARRIED_MESSAGES)
            .await?;
        let mut note = format!(
            "[this conversation was handed to you by agent '{}'; reason: {}]",
            from.name,
            if reason.trim().is_empty() {
                "none given"
            } else {
                reason.as_str()
            }
        );
        if !carried.is_empty() {
            note.push_str("\nThe conversation so far:");
            for m in &carried {
                note.push_str(&format!("\n{}: {}", m.role, m.content));
            }
        }
        let now = Utc::now();
        let target = SessionRecord {
            id: format!("ses_{}", uuid::Uuid::new_v4().simple()),
            owner: ctx.user_id.clone(),
            caller_agent: session.caller_agent.clone(),
            agent_id: to.id.clone(),
            kind: SessionKind::Session,
            label: format!("handoff of {}", session.label)
                .chars()
                .take(200)
                .collect(),
            parent: None,
            depth: session.depth,
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
        self.store.insert_session(&target).await?;
        let first = SessionMessage {
            session_id: target.id.clone(),
            seq: 0,
            role: "user".to_owned(),
            content: note,
            run_id: None,
            at: now,
        };
        let settings = &self.config.sessions;
        self.store
            .append_session_messages(
                &target.id,
                &[first],
                settings.max_messages,
                settings.max_bytes,
            )
            .await?;
        let route = HandoffRoute {
            session_id: session.id.clone(),
            owner: ctx.user_id.clone(),
            from_agent: from.id.clone(),
            to_agent: to.id.clone(),
            target_session: target.id,
            reason,
            created_at: now,
        };
        self.store.put_handoff_route(&route).await?;
        let carried = u32::try_from(carried.len()).unwrap_or(u32::MAX);
        Ok((route, carried))
    }

    /// Clears the handoff of the session `key`, or of the session whose target's run is
    /// calling; the route as it was.
    async fn clear_handoff(
        &self,
        ctx: &ToolContext,
        key: Option<&str>,
    ) -> Result<HandoffRoute, ServiceError> {
        let route = match key {
            Some(key) => {
                self.get_session(ctx, key).await?;
                self.store.get_handoff_route(&ctx.user_id, key).await?
            }
            None => match ctx.conversation_id.as_deref() {
                Some(run) => match self.store.session_of_run(&ctx.user_id, run).await? {
                    Some((id, _)) => self.store.handoff_route_to(&ctx.user_id, &id).await?,
                    None => None,
                },
                None => None,
            },
        };
        let route = route.ok_or_else(|| {
            ServiceError::NotFound(
                "no handoff to clear: name the handed-off session (sessionKey), or call it \
                 inside the run of the agent it was handed to"
                    .to_owned(),
            )
        })?;
        self.store
            .delete_handoff_route(&ctx.user_id, &route.session_id)
            .await?;
        Ok(route)
    }

    /// Runs the `handoff` tool.
    pub(crate) async fn handoff_tool(
        self: &Arc<Self>,
        args: &Args,
        ctx: &ToolContext,
        name: &(dyn Fn(&str) -> String + Sync),
    ) -> Result<Value, ServiceError> {
        let key = args.str("sessionKey")?;
        let action = args.str("action")?.unwrap_or_else(|| "transfer".to_owned());
        let actor = if ctx.by_model() {
            Actor::llm(ctx.user_id.clone())
                .with_agent(ctx.agent_id.clone())
                .with_member(ctx.member.clone())
        } else {
            Actor::for_caller(ctx.user_id.clone(), ctx.agent_id.clone())
                .with_member(ctx.member.clone())
        };
        let (event, route, carried) = match action.as_str() {
            "transfer" => {
                let (route, carried) = self
                    .hand_off(
                        ctx,
                        key.as_deref(),
                        &args.required("agent")?,
                        args.str("reason")?.unwrap_or_default(),
                    )
                    .await?;
                ("agent.handoff", route, Some(carried))
            }
            "clear" => (
                "agent.handoff.clear",
                self.clear_handoff(ctx, key.as_deref()).await?,
                None,
            ),
            other => {
                return Err(ServiceError::Validation(format!(
                    "action: 'transfer' (the default: give the session to `agent`) or 'clear' \
                     (give it back), not '{other}'"
                )));
            }
        };
        self.audit
            .record(
                &actor,
                event,
                AuditTarget::new("agent_session", route.session_id.clone(), None),
                (None, None),
                json!({"from": name(&route.from_agent), "to": name(&route.to_agent),
                    "targetSession": route.target_session}),
            )
            .await;
        let answer = json!({
            "event": if carried.is_some() { "handoff" } else { "handoff_cleared" },
            "sessionKey": route.session_id,
            "from": name(&route.from_agent),
            "to": name(&route.to_agent),
            "targetSession": route.target_session,
            "reason": route.reason,
            "carriedMessages": carried,
            "answeredBy": if carried.is_some() { name(&route.to_agent) } else { name(&route.from_agent) },
        });
        // The handoff event, for a client watching (the spec's broadcast).
        if let Some(client) = &ctx.client
            && let Err(e) = client
                .log(
                    LogLevel::Info,
                    Some("toolsmith/handoff".to_owned()),
                    answer.clone(),
                )
                .await
        {
            tracing::debug!("announcing a handoff failed: {e}");
        }
        Ok(answer)
    }
}
