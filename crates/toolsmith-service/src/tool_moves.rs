//! Moving a custom tool between owners (issue 41): from the person to an organisation, from
//! an organisation to the person, or between two organisations.
//!
//! The rules, for every door: a person moves (never a model or an agent); they must hold the
//! tool — their own, or an organisation's of which they are editor or above — and be editor
//! or above of the organisation it goes to (`me`: their own scope). To someone who is not a
//! member, an organisation (and so its tools) does not exist. Names are unique per owner: a
//! tool whose name is taken at the new owner is refused naming the clash and how to rename.
//! The move is one conditional store write ([`ToolStore::move_tool`]): the tool's versions go
//! with it; its executions stay with the old owner as history (they were that owner's calls,
//! counted in its analytics, made under its policy and services); its `allow_always` grants
//! are revoked (they were the old owner's decisions). The registry follows after the commit,
//! so both owners' MCP sessions hear `list_changed`. Audited `tool.move` with the person as
//! the actor, `from` and `to` in the details.
//!
//! [`ToolStore::move_tool`]: toolsmith_store::ToolStore::move_tool

use chrono::Utc;
use serde_json::{Value, json};
use toolsmith_core::CustomToolRecord;
use toolsmith_core::organization::{OrgRole, is_org_id};
use toolsmith_store::{StoreError, ToolMove};

use crate::error::ServiceError;
use crate::governance::audit::AuditTarget;
use crate::input::{Actor, ToolRef};
use crate::service::ToolService;

#[cfg(test)]
mod tests;

/// Where a tool moves to: `me` (the person's own scope) or an organisation's name or id.
pub const MOVE_TO_ME: &str = "me";

impl ToolService {
    /// Moves the tool `tool` of the actor's scope (`actor.user_id`: the person, or the
    /// organisation they act in) to `to` (`me` or an organisation's name or id), at
    /// `expected_revision` if given. The tool as it is after the move.
    pub async fn move_tool(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        to: &str,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        if actor.is_llm() || actor.agent.is_some() {
            return Err(ServiceError::Forbidden(
                "moving a tool to another owner is a person's decision; a model or an agent \
                 cannot — call without an agent, with a person's token"
                    .to_owned(),
            ));
        }
        let person = actor.person().to_owned();
        let from = actor.user_id.clone();
        let from_label = self
            .owner_label(&person, &from, "move a tool out of it")
            .await?;
        let (to_owner, to_label) = self.move_target(&person, to).await?;
        self.flush_usage().await;
        let _guard = self.write_lock.lock().await;
        let found = match tool {
            ToolRef::Id(id) => self.store.get_tool(&from, id).await?,
            ToolRef::Name(name) => self.store.get_tool_by_name(&from, name).await?,
        };
        let current =
            found.ok_or_else(|| ServiceError::NotFound(format!("no custom tool {tool}")))?;
        if let Some(expected) = expected_revision
            && expected != current.revision
        {
            return Err(ServiceError::RevisionConflict {
                expected,
                actual: current.revision,
            });
        }
        if to_owner == from {
            return Err(ServiceError::InvalidState(format!(
                "tool '{}' already belongs to {to_label}; nothing moved",
                current.name
            )));
        }
        let owners = (from.as_str(), to_owner.as_str());
        let code =
            self.reseal_command_env(current.kind, &current.id, owners, current.code.clone())?;
        let mut version_codes = Vec::new();
        for version in self.store.list_versions(&from, &current.id).await? {
            let resealed =
                self.reseal_command_env(current.kind, &current.id, owners, version.code.clone())?;
            if resealed != version.code {
                version_codes.push((version.version, resealed));
            }
        }
        let change = ToolMove {
            id: current.id.clone(),
            from: from.clone(),
            to: to_owner.clone(),
            expected_revision: current.revision,
            code,
            version_codes,
            at: Utc::now(),
            max_per_owner: self.config.max_tools_per_owner,
        };
        let moved = self.store.move_tool(&change).await.map_err(|e| match e {
            StoreError::NameTaken { name } => ServiceError::NameTaken(format!(
                "{to_label} already has a tool named '{name}': names are unique per owner. \
                 Rename this one first (PATCH /api/v1/custom-tools/{} {{\"newName\": \
                 \"{name}-2\"}}, or `toolsmith tool update`), or rename or delete the other one, \
                 then move it",
                current.id
            )),
            StoreError::ToolLimit { limit } => ServiceError::LimitReached(format!(
                "{to_label} already has {limit} custom tools, the limit; nothing moved"
            )),
            other => other.into(),
        })?;
        self.registry.remove_custom(&current.owner, &current.id);
        self.sync(&moved);
        self.drop_dependencies(&current).await;
        self.sync_dependencies(&moved, None).await;
        self.revoke_grants(&current).await;
        let details = json!({
            "from": {"owner": from, "label": from_label},
            "to": {"owner": to_owner, "label": to_label},
        });
        self.audit_move(actor, &current, &moved, details).await;
        Ok(moved)
    }

    /// How a move names `owner` to `person` ("'alice' (you)" or "organisation 'acme'"),
    /// after checking they may move tools out of or into it (`what`): their own scope, or an
    /// organisation of which they are editor or above. A non-member gets the organisation's
    /// one not-found.
    async fn owner_label(
        &self,
        person: &str,
        owner: &str,
        what: &str,
    ) -> Result<String, ServiceError> {
        if owner == person {
            return Ok(format!("'{person}' (you)"));
        }
        if !is_org_id(owner) {
            return Err(ServiceError::Forbidden(format!(
                "only '{owner}' moves their own tools"
            )));
        }
        let (org, role) = self.organization_of_member(person, owner).await?;
        if role < OrgRole::Editor {
            return Err(ServiceError::Forbidden(format!(
                "you are {role} of '{}': to {what} you need to be editor or above; ask an \
                 admin or owner of '{}' to make you editor",
                org.name, org.name
            )));
        }
        Ok(format!("organisation '{}'", org.name))
    }

    /// The owner `to` names (`me`: the person) and how to name it, checked as
    /// [`Self::owner_label`] checks.
    async fn move_target(&self, person: &str, to: &str) -> Result<(String, String), ServiceError> {
        let to = to.trim();
        if to.is_empty() || to.len() > 128 || to.chars().any(char::is_control) {
            return Err(ServiceError::Validation(
                "'to' is 'me' or an organisation's name or id".to_owned(),
            ));
        }
        if to == MOVE_TO_ME || to == person {
            return Ok((person.to_owned(), format!("'{person}' (you)")));
        }
        let (org, _) = self.organization_of_member(person, to).await?;
        let label = self
            .owner_label(person, &org.id, "move a tool into it")
            .await?;
        Ok((org.id, label))
    }

    async fn audit_move(
        &self,
        actor: &Actor,
        before: &CustomToolRecord,
        after: &CustomToolRecord,
        details: Value,
    ) {
        self.audit
            .record(
                actor,
                "tool.move",
                AuditTarget::new("tool", after.id.clone(), Some(after.name.clone())),
                (Some(before.revision), Some(after.revision)),
                details,
            )
            .await;
    }
}
