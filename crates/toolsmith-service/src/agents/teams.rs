//! Agent teams (spec 001 §8) in the service: a person's teams (made, listed, read, deleted;
//! the lead and members are the person's agent definitions), the board a person reads, the
//! lead's `TEAM.md`, and the routing of team messages — a message wakes the teammate it is for
//! (a run of that agent on "[Team message from <sender>]: …"), and the teammate's answer comes
//! back to the sender as `[teammate:<name>]`: into the sender's next model turn when the
//! sender is a run of this instance (which then waits for it before it answers, as it waits
//! for its subagents), and into its mailbox otherwise.
//!
//! The board and mailbox themselves are the `teams` built-ins' (`toolsmith_builtins::teams`),
//! on the record store.

use std::sync::{Arc, OnceLock, Weak};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith_builtins::teams::{self, Member, Team, ops};
use toolsmith_core::ToolContext;
use toolsmith_core::agent::ContextFile;

use super::runner::Extras;
use crate::governance::audit::AuditTarget;
use crate::input::Actor;
use crate::service::data_api::service_error;
use crate::{ServiceError, ToolService};

/// Messages a board read returns.
pub const BOARD_MESSAGES: u32 = 200;

/// A new team as a person writes it: agents by name or id.
#[derive(Debug, Clone)]
pub struct TeamInput {
    pub name: String,
    pub description: String,
    pub lead: String,
    pub members: Vec<String>,
}

fn team_not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!(
        "no team '{id}' of yours; list yours with GET /api/v1/teams or `toolsmith team list`"
    ))
}

impl ToolService {
    /// Makes a team of `actor`'s user from `input`, its agents resolved among theirs;
    /// audited (`team.create`).
    pub async fn create_team(&self, actor: &Actor, input: TeamInput) -> Result<Team, ServiceError> {
        let ctx = &ToolContext::new(actor.user_id.clone());
        let member = |agent: toolsmith_core::agent::AgentRecord| Member {
            id: agent.id,
            name: agent.name,
        };
        let lead = member(self.get_agent(ctx, &input.lead).await?);
        let mut members = Vec::new();
        for name in &input.members {
            members.push(member(self.get_agent(ctx, name).await?));
        }
        let taken = ops::find_team(&self.records(), &ctx.user_id, &input.name)
            .await
            .map_err(service_error)?;
        if taken.is_some_and(|t| t.name == input.name) {
            return Err(ServiceError::NameTaken(format!(
                "you already have a team named '{}': pick another name, or delete that one \
                 (DELETE /api/v1/teams/{{team}})",
                input.name
            )));
        }
        let team = ops::create_team(
            &self.records(),
            &ctx.user_id,
            &input.name,
            &input.description,
            lead,
            members,
        )
        .await
        .map_err(service_error)?;
        self.audit_team(actor, "team.create", &team).await;
        Ok(team)
    }

    async fn audit_team(&self, actor: &Actor, action: &str, team: &Team) {
        let details = json!({
            "lead": team.lead.id,
            "members": team.members.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        });
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("team", team.id.clone(), Some(team.name.clone())),
                (None, None),
                details,
            )
            .await;
    }

    /// The caller's teams, by name.
    pub async fn list_teams(&self, ctx: &ToolContext) -> Result<Vec<Team>, ServiceError> {
        teams::teams_of(&self.records(), &ctx.user_id)
            .await
            .map_err(service_error)
    }

    /// The caller's team `id_or_name`.
    pub async fn get_team(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
    ) -> Result<Team, ServiceError> {
        ops::find_team(&self.records(), &ctx.user_id, id_or_name)
            .await
            .map_err(service_error)?
            .ok_or_else(|| team_not_found(id_or_name))
    }

    /// Deletes `actor`'s team `id_or_name`, its board and its mailbox; audited
    /// (`team.delete`). The team as it was.
    pub async fn delete_team(&self, actor: &Actor, id_or_name: &str) -> Result<Team, ServiceError> {
        let team = self
            .get_team(&ToolContext::new(actor.user_id.clone()), id_or_name)
            .await?;
        ops::delete_team(&self.records(), &team)
            .await
            .map_err(service_error)?;
        self.audit_team(actor, "team.delete", &team).await;
        Ok(team)
    }

    /// The board of the caller's team `id_or_name`: its tasks and latest messages.
    pub async fn team_board(
        &self,
        ctx: &ToolContext,
        id_or_name: &str,
    ) -> Result<Value, ServiceError> {
        let team = self.get_team(ctx, id_or_name).await?;
        ops::board(&self.records(), &team, BOARD_MESSAGES)
            .await
            .map_err(service_error)
    }

    /// `TEAM.md` for a run of `agent` of `owner`, when it leads a team (§8: only the lead
    /// gets it). A store failure leaves it out (the run goes on, logged).
    pub(crate) async fn team_context(&self, owner: &str, agent: &str) -> Option<ContextFile> {
        match ops::team_md(&self.records(), owner, agent).await {
            Ok(text) => text.map(|text| ContextFile {
                name: "TEAM.md".to_owned(),
                text,
            }),
            Err(e) => {
                tracing::warn!(
                    agent,
                    "reading the teams of an agent failed: {}",
                    e.message()
                );
                None
            }
        }
    }
}

/// How team messages wake teammates; built before the service, bound after.
#[derive(Default)]
pub(crate) struct ServiceTeams {
    service: OnceLock<Weak<ToolService>>,
}

impl std::fmt::Debug for ServiceTeams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ServiceTeams")
    }
}

impl ServiceTeams {
    pub(crate) fn bind(&self, service: &Arc<ToolService>) {
        let _ = self.service.set(Arc::downgrade(service));
    }
}

#[async_trait]
impl teams::TeamWake for ServiceTeams {
    async fn wake(
        &self,
        ctx: &ToolContext,
        team: &Team,
        from: &Member,
        to: &Member,
        text: &str,
    ) -> Result<String, String> {
        let Some(service) = self.service.get().and_then(Weak::upgrade) else {
            return Err("the server is shutting down".to_owned());
        };
        service
            .wake_teammate(ctx, team, from, to, text)
            .await
            .map_err(|e| e.to_string())
    }
}

impl ToolService {
    /// Starts a run of teammate `to` on `text`; its answer goes back to `from` (§8 "Message
    /// Routing"). The run's id.
    async fn wake_teammate(
        self: &Arc<Self>,
        ctx: &ToolContext,
        team: &Team,
        from: &Member,
        to: &Member,
        text: &str,
    ) -> Result<String, ServiceError> {
        let agent = self
            .store
            .get_agent(&team.owner, &to.id)
            .await?
            .ok_or_else(|| {
                ServiceError::NotFound(format!(
                    "teammate '{}' was deleted: the message waits in the mailbox; a person can \
                     remake the team without it",
                    to.name
                ))
            })?;
        // The sender's next turn, when it is a run of this instance: it waits for the answer.
        let inbox = ctx
            .conversation_id
            .as_deref()
            .and_then(|run| self.subagents.inbox_of(run, &ctx.user_id));
        let (run, handle) = self
            .launch_agent_run(ctx, agent, text.to_owned(), Extras::default())
            .await?;
        if let Some(inbox) = &inbox {
            inbox.expect();
        }
        let service = Arc::clone(self);
        let (team, from, to) = (team.clone(), from.clone(), to.clone());
        tokio::spawn(async move {
            let answer = match handle.await {
                Ok(ended) => match (ended.output, ended.error) {
                    (Some(output), _) => output,
                    (None, Some(error)) => format!("(no answer: {error})"),
                    (None, None) => "(no answer)".to_owned(),
                },
                Err(e) => format!("(no answer: the run stopped unexpectedly: {e})"),
            };
            let note = format!("[teammate:{}] {answer}", to.name);
            let delivered = inbox.is_some();
            if let Some(inbox) = inbox {
                inbox.leave(note.clone(), true);
            }
            let records = service.records();
            if let Err(e) = teams::deliver(&records, &team, &to, &from, &note, delivered).await {
                tracing::warn!(team = %team.id, "recording a teammate's answer failed: {}", e.message());
            }
        });
        Ok(run.id)
    }
}
