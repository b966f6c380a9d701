//! Organisations (issue 41): made by a person, who becomes their first owner; members with
//! roles (`owner`, `admin`, `editor`, `viewer`, core's `OrgRole`). An organisation owns things
//! as a user does: its id (`org_<16 hex>`) is the owner of its tools, prompts, services and
//! agents, so the owner scope a request acts in decides what it sees.
//!
//! The rules, for every door: only a person (never a model or an agent) makes an organisation
//! or changes its members; members are managed by admins and owners, and owners (granting,
//! changing or removing the owner role) by owners only; nothing leaves an organisation without
//! an owner; an organisation is found only by its members — to anyone else it does not exist,
//! so its name is never confirmed to a stranger. Every change is audited (`org.create`,
//! `org.update`, `org.delete`, `org.member.add`, `org.member.role`, `org.member.remove`) with
//! the person who made it as the actor.

use chrono::Utc;
use serde_json::json;
use toolsmith_core::organization::{
    MemberWrite, OrgMemberRecord, OrgRole, OrganizationRecord, check_org_name, is_org_id,
    is_reserved_org_name,
};

use crate::error::ServiceError;
use crate::governance::audit::AuditTarget;
use crate::input::Actor;
use crate::service::ToolService;

#[cfg(test)]
mod owned_tests;
#[cfg(test)]
mod tests;

/// Something an organisation still owns, and how to empty it
/// ([`ToolService::organization_holdings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holding {
    /// What and how many, e.g. `2 prompt(s)`.
    pub what: String,
    /// How to move or delete them.
    pub how: &'static str,
}

/// The longest display name.
const MAX_DISPLAY_NAME: usize = 200;

impl ToolService {
    /// The refusal for anyone who is not a person acting as themselves.
    fn person_only(actor: &Actor, what: &str) -> Result<(), ServiceError> {
        if actor.is_llm() || actor.agent.is_some() {
            return Err(ServiceError::Forbidden(format!(
                "{what} is a person's decision; a model or an agent cannot — call without an \
                 agent, with a person's token"
            )));
        }
        if is_org_id(&actor.user_id) {
            return Err(ServiceError::Forbidden(format!(
                "{what}: you act in an organisation's scope; call as yourself (without \
                 X-Toolsmith-Organization)"
            )));
        }
        Ok(())
    }

    /// The organisation `org_ref` (id or name) of which `user_id` is a member, with their role;
    /// `NotFound` naming how to be added otherwise (the same answer whether or not it exists).
    pub async fn organization_of_member(
        &self,
        user_id: &str,
        org_ref: &str,
    ) -> Result<(OrganizationRecord, OrgRole), ServiceError> {
        let not_found = || {
            ServiceError::NotFound(format!(
                "no organisation '{org_ref}' of which you ('{user_id}') are a member; an owner \
                 or admin of it adds you: PUT /api/v1/organizations/{org_ref}/members/{user_id}"
            ))
        };
        let Some(org) = self.store.get_organization(org_ref).await? else {
            return Err(not_found());
        };
        match self.store.org_role(&org.id, user_id).await? {
            Some(role) => Ok((org, role)),
            None => Err(not_found()),
        }
    }

    /// Makes an organisation with the actor as its first owner.
    pub async fn create_organization(
        &self,
        actor: &Actor,
        name: &str,
        display_name: Option<&str>,
    ) -> Result<OrganizationRecord, ServiceError> {
        Self::person_only(actor, "making an organisation")?;
        check_org_name(name).map_err(|why| {
            if is_reserved_org_name(name) {
                ServiceError::NameTaken(why)
            } else {
                ServiceError::Validation(why)
            }
        })?;
        let display_name = checked_display_name(display_name.unwrap_or(name))?;
        let now = Utc::now();
        let org = OrganizationRecord {
            id: format!("org_{:016x}", uuid::Uuid::new_v4().as_u64_pair().0),
            name: name.to_owned(),
            display_name,
            created_at: now,
            created_by: actor.user_id.clone(),
        };
        let creator = OrgMemberRecord {
            org_id: org.id.clone(),
            user_id: actor.user_id.clone(),
            role: OrgRole::Owner,
            added_at: now,
        };
        if !self.store.insert_organization(&org, &creator).await? {
            return Err(ServiceError::NameTaken(format!(
                "an organisation named '{name}' exists; choose another name"
            )));
        }
        self.audit_org(
            actor,
            "org.create",
            &org,
            json!({"displayName": org.display_name}),
        )
        .await;
        Ok(org)
    }

    /// The organisations the actor is a member of, with their role.
    pub async fn my_organizations(
        &self,
        actor: &Actor,
    ) -> Result<Vec<(OrganizationRecord, OrgRole)>, ServiceError> {
        Ok(self.store.user_organizations(&actor.user_id).await?)
    }

    /// The members of an organisation the actor is a member of.
    pub async fn organization_members(
        &self,
        actor: &Actor,
        org_ref: &str,
    ) -> Result<(OrganizationRecord, Vec<OrgMemberRecord>), ServiceError> {
        let (org, _) = self.organization_of_member(&actor.user_id, org_ref).await?;
        let members = self.store.org_members(&org.id).await?;
        Ok((org, members))
    }

    /// Sets an organisation's display name (owners and admins).
    pub async fn rename_organization(
        &self,
        actor: &Actor,
        org_ref: &str,
        display_name: &str,
    ) -> Result<OrganizationRecord, ServiceError> {
        Self::person_only(actor, "renaming an organisation")?;
        let (org, role) = self.organization_of_member(&actor.user_id, org_ref).await?;
        require_role(&org, role, OrgRole::Admin, "rename it")?;
        let display_name = checked_display_name(display_name)?;
        let renamed = self
            .store
            .rename_organization(&org.id, &display_name)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("organisation '{org_ref}' is gone")))?;
        self.audit_org(
            actor,
            "org.update",
            &renamed,
            json!({"displayName": {"from": org.display_name, "to": renamed.display_name}}),
        )
        .await;
        Ok(renamed)
    }

    /// Deletes an organisation (owners), refused while it still owns anything someone set up
    /// or that could still act ([`ToolService::organization_holdings`]): nothing a team made is
    /// lost with one click, and nothing is left acting for an owner no one can act as. What it
    /// did (executions, the audit log, finished agent runs and sessions) stays as history.
    pub async fn delete_organization(
        &self,
        actor: &Actor,
        org_ref: &str,
    ) -> Result<(), ServiceError> {
        Self::person_only(actor, "deleting an organisation")?;
        let (org, role) = self.organization_of_member(&actor.user_id, org_ref).await?;
        require_role(&org, role, OrgRole::Owner, "delete it")?;
        let holdings = self.organization_holdings(&org.id).await?;
        if !holdings.is_empty() {
            let list: Vec<String> = holdings
                .iter()
                .map(|h| format!("{} ({})", h.what, h.how))
                .collect();
            return Err(ServiceError::InvalidState(format!(
                "organisation '{}' still owns {}. Empty it first, acting in it \
                 (X-Toolsmith-Organization: {}); nothing is deleted with an organisation",
                org.name,
                list.join("; "),
                org.name
            )));
        }
        if self.store.delete_organization(&org.id).await? {
            self.audit_org(actor, "org.delete", &org, json!({})).await;
        }
        Ok(())
    }

    /// What `owner` (an organisation) still owns that deleting it would strand: its custom
    /// tools, prompts, Config Center services, agent definitions, agent sessions still running
    /// and data records (memories, scheduled tasks, custom tables, its own resources), each
    /// with how to empty it. Empty when nothing is left. (Vector collections have no delete
    /// yet; they stay behind with the history.)
    pub async fn organization_holdings(&self, owner: &str) -> Result<Vec<Holding>, ServiceError> {
        let store = &self.store;
        let counts = [
            (
                store.count_tools(owner).await?,
                "custom tool(s)",
                "move them out: POST /api/v1/custom-tools/{id}/move, or delete them",
            ),
            (
                store.list_prompts(owner).await?.len() as u64,
                "prompt(s)",
                "DELETE /api/v1/prompts/{id}",
            ),
            (
                store.list_config_services(owner).await?.len() as u64,
                "Config Center service(s)",
                "DELETE /api/v1/config/services/{service}",
            ),
            (
                store.list_agents(owner).await?.len() as u64,
                "agent definition(s)",
                "DELETE /api/v1/agents/{id}",
            ),
            (
                store.running_sessions(owner).await?.len() as u64,
                "running agent session(s)",
                "cancel their runs: POST /api/v1/agents/{id}/runs/{run}/cancel",
            ),
        ];
        let mut held: Vec<Holding> = counts
            .into_iter()
            .filter(|(count, _, _)| *count > 0)
            .map(|(count, what, how)| Holding {
                what: format!("{count} {what}"),
                how,
            })
            .collect();
        if !store.export_records(owner, None, 1).await?.is_empty() {
            held.push(Holding {
                what: "data records (memories, scheduled tasks, tables or resources)".to_owned(),
                how: "DELETE /api/v1/data?confirm=true erases them all",
            });
        }
        Ok(held)
    }

    /// Adds `user_id` to an organisation as `role`, or sets their role. Admins and owners
    /// manage members; only owners grant, change or take away the owner role.
    pub async fn put_organization_member(
        &self,
        actor: &Actor,
        org_ref: &str,
        user_id: &str,
        role: OrgRole,
    ) -> Result<(OrgMemberRecord, MemberWrite), ServiceError> {
        Self::person_only(actor, "changing an organisation's members")?;
        check_member_id(user_id)?;
        let (org, mine) = self.organization_of_member(&actor.user_id, org_ref).await?;
        require_role(&org, mine, OrgRole::Admin, "manage its members")?;
        let current = self.store.org_role(&org.id, user_id).await?;
        if (role == OrgRole::Owner || current == Some(OrgRole::Owner)) && mine != OrgRole::Owner {
            return Err(ServiceError::Forbidden(format!(
                "only an owner of '{}' grants, changes or takes away the owner role; you are \
                 {mine}",
                org.name
            )));
        }
        let member = OrgMemberRecord {
            org_id: org.id.clone(),
            user_id: user_id.to_owned(),
            role,
            added_at: Utc::now(),
        };
        let outcome = self.store.put_org_member(&member).await?;
        let action = match outcome {
            MemberWrite::Added => "org.member.add",
            MemberWrite::Changed => "org.member.role",
            MemberWrite::LastOwner => return Err(last_owner(&org, user_id)),
            MemberWrite::Removed | MemberWrite::NotMember => {
                return Err(ServiceError::NotFound(format!(
                    "organisation '{org_ref}' is gone"
                )));
            }
        };
        self.audit_org(
            actor,
            action,
            &org,
            json!({"member": user_id, "role": role.as_str(),
                   "previousRole": current.map(OrgRole::as_str)}),
        )
        .await;
        Ok((member, outcome))
    }

    /// Removes `user_id` from an organisation: admins and owners remove members, owners
    /// remove owners, and any member may leave.
    pub async fn remove_organization_member(
        &self,
        actor: &Actor,
        org_ref: &str,
        user_id: &str,
    ) -> Result<(), ServiceError> {
        Self::person_only(actor, "changing an organisation's members")?;
        let (org, mine) = self.organization_of_member(&actor.user_id, org_ref).await?;
        let leaving = user_id == actor.user_id;
        if !leaving {
            require_role(&org, mine, OrgRole::Admin, "remove members")?;
        }
        let current = self.store.org_role(&org.id, user_id).await?;
        if current == Some(OrgRole::Owner) && mine != OrgRole::Owner {
            return Err(ServiceError::Forbidden(format!(
                "only an owner of '{}' removes an owner; you are {mine}",
                org.name
            )));
        }
        match self.store.remove_org_member(&org.id, user_id).await? {
            MemberWrite::Removed => {}
            MemberWrite::LastOwner => return Err(last_owner(&org, user_id)),
            _ => {
                return Err(ServiceError::NotFound(format!(
                    "'{user_id}' is no member of '{}'",
                    org.name
                )));
            }
        }
        self.audit_org(
            actor,
            "org.member.remove",
            &org,
            json!({"member": user_id, "role": current.map(OrgRole::as_str)}),
        )
        .await;
        Ok(())
    }

    async fn audit_org(
        &self,
        actor: &Actor,
        action: &str,
        org: &OrganizationRecord,
        details: serde_json::Value,
    ) {
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("organization", org.id.clone(), Some(org.name.clone())),
                (None, None),
                details,
            )
            .await;
    }
}

fn require_role(
    org: &OrganizationRecord,
    role: OrgRole,
    needed: OrgRole,
    what: &str,
) -> Result<(), ServiceError> {
    if role >= needed {
        return Ok(());
    }
    Err(ServiceError::Forbidden(format!(
        "you are {role} of '{}': to {what} you need to be {needed} or above; ask one of its \
         owners",
        org.name
    )))
}

fn last_owner(org: &OrganizationRecord, user_id: &str) -> ServiceError {
    ServiceError::InvalidState(format!(
        "'{user_id}' is the last owner of '{}'; make another member owner first \
         (PUT /api/v1/organizations/{}/members/<user> {{\"role\": \"owner\"}})",
        org.name, org.name
    ))
}

fn checked_display_name(text: &str) -> Result<String, ServiceError> {
    let text = text.trim();
    if text.is_empty()
        || text.chars().count() > MAX_DISPLAY_NAME
        || text.chars().any(char::is_control)
    {
        return Err(ServiceError::Validation(format!(
            "displayName must be 1-{MAX_DISPLAY_NAME} characters without control characters"
        )));
    }
    Ok(text.to_owned())
}

fn check_member_id(user_id: &str) -> Result<(), ServiceError> {
    if user_id.is_empty() || user_id.len() > 128 || user_id.chars().any(char::is_control) {
        return Err(ServiceError::Validation(
            "a member is a user id of 1-128 characters without control characters".to_owned(),
        ));
    }
    if is_org_id(user_id) {
        return Err(ServiceError::Validation(format!(
            "'{user_id}' is an organisation, not a user; members are users"
        )));
    }
    Ok(())
}
