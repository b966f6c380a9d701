//! The lifecycle operations on custom tools, with the spec's rules.
//!
//! - Create: user-created tools are `active`; LLM-created tools holding `shell`, `filesystem`
//!   or `email` wait in `pending_approval`; LLM-created tools always `require_approval`.
//! - Update: partial; `version` +1 when code or parameters change; `revision` +1 on every real
//!   change and not at all for an empty or no-op patch; renaming only through `new_name`; an LLM
//!   update that adds a dangerous permission, or changes the code of a tool holding one, sends it
//!   back to `pending_approval`.
//! - Enable only from `disabled`; disable only from `active`; both idempotent. Approve and
//!   reject only from `pending_approval`, and only by a person: the tool's owner, or an admin
//!   whoever owns it (by the tool's id).
//!
//! Who is the model: an [`Actor`] that is `llm` — every MCP caller, and every caller acting as
//! an agent through any face ([`Actor::for_caller`]): the rules above apply to it whatever
//! door it came through.
//! - Delete: the LLM may delete only what the LLM created, and only with `confirm: true`.
//!
//! Writes go to the store first; the registry follows only after the commit
//! ([`registry_sync`](super::registry_sync)). One lock orders the writes of this process so the
//! registry never applies them out of order.

use chrono::Utc;
use serde_json::Value;
use toolsmith_core::name::validate_name;
use toolsmith_core::{CustomToolRecord, ToolStatus, ToolVersionRecord};
use toolsmith_store::{StoreError, ToolPage, ToolQuery, ToolStats};

use super::ToolService;
use super::validation::{
    OUTPUT_SCHEMA, check_output_schema, normalize_category, normalize_metadata,
    normalize_parameters, normalize_tags,
};
use crate::config_center::dependencies;
use crate::error::ServiceError;
use crate::governance::audit::AuditTarget;
use crate::input::{Actor, CreateTool, DeleteOptions, ToolPatch, ToolRef};

impl ToolService {
    /// Creates a custom tool and, for `enabled: Some(false)` (spec 001's switch), disables it
    /// at once.
    pub async fn create_with_enabled(
        &self,
        actor: &Actor,
        input: CreateTool,
        enabled: Option<bool>,
    ) -> Result<CustomToolRecord, ServiceError> {
        let record = self.create(actor, input).await?;
        if enabled == Some(false) {
            return self
                .disable(
                    actor,
                    &ToolRef::Id(record.id.clone()),
                    Some(record.revision),
                )
                .await;
        }
        Ok(record)
    }

    /// Creates a custom tool.
    pub async fn create(
        &self,
        actor: &Actor,
        input: CreateTool,
    ) -> Result<CustomToolRecord, ServiceError> {
        validate_name(&input.name, self.config.name_rule)
            .map_err(|e| ServiceError::Validation(e.to_string()))?;
        self.check_description(&input.description)?;
        let parameters = normalize_parameters(input.parameters)?;
        let checked = self.check_definition(
            input.kind,
            &input.code,
            parameters,
            input.permissions.into_iter().collect(),
        )?;
        let (parameters, permissions) = (checked.parameters, checked.permissions);
        let mut metadata = normalize_metadata(input.metadata)?;
        let tags = normalize_tags(input.tags)?;
        // Resolving and installing reaches the registry: before the write lock.
        self.settle_packages(input.kind, &mut metadata, None)
            .await?;

        let _guard = self.write_lock.lock().await;
        self.check_name_not_taken_by_toolsmith(&input.name)?;
        let n_tools = self.store.count_tools(&actor.user_id).await?;
        if n_tools >= self.config.max_tools_per_owner {
            return Err(ServiceError::LimitReached(format!(
                "owner '{}' already has {n_tools} custom tools, the limit is {}",
                actor.user_id, self.config.max_tools_per_owner
            )));
        }
        let dangerous = permissions.iter().any(|p| p.is_dangerous());
        let status = if actor.is_llm() && dangerous {
            ToolStatus::PendingApproval
        } else {
            ToolStatus::Active
        };
        let requires_approval = actor.is_llm() || input.requires_approval.unwrap_or(false);
        let now = Utc::now();
        let id = CustomToolRecord::new_id();
        let code = self.seal_command_env(input.kind, &actor.user_id, &id, input.code)?;
        let record = CustomToolRecord {
            id,
            owner: actor.user_id.clone(),
            name: input.name,
            kind: input.kind,
            description: input.description,
            parameters,
            code,
            category: normalize_category(input.category),
            tags,
            permissions,
            status,
            requires_approval,
            created_by: actor.kind,
            version: 1,
            revision: 1,
            usage_count: 0,
            last_used_at: None,
            metadata,
            created_at: now,
            updated_at: now,
        };
        dependencies::declared_services(&record)?;
        // The count above gives the clear message; the store checks the limit again in the
        // insert's own transaction, which is what holds across processes sharing the store.
        let stored = self
            .store
            .insert_tool_limited(record, self.config.max_tools_per_owner)
            .await
            .map_err(|e| match e {
                StoreError::ToolLimit { limit } => ServiceError::LimitReached(format!(
                    "owner '{}' already has {limit} custom tools, the limit is {limit}",
                    actor.user_id
                )),
                other => other.into(),
            })?;
        self.sync(&stored);
        self.sync_dependencies(&stored, None).await;
        self.audit_tool(
            actor,
            "tool.create",
            None,
            &stored,
            serde_json::json!({
                "kind": stored.kind, "status": stored.status, "permissions": stored.permissions,
            }),
        )
        .await;
        Ok(stored)
    }

    /// One tool of the actor's.
    pub async fn get(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.flush_usage().await;
        let found = match tool {
            ToolRef::Id(id) => self.store.get_tool(&actor.user_id, id).await?,
            ToolRef::Name(name) => self.store.get_tool_by_name(&actor.user_id, name).await?,
        };
        found.ok_or_else(|| ServiceError::NotFound(format!("no custom tool {tool}")))
    }

    /// The actor's tools matching `query` (whose owner is replaced by the actor's).
    pub async fn list(
        &self,
        actor: &Actor,
        mut query: ToolQuery,
    ) -> Result<ToolPage, ServiceError> {
        query.owner = actor.user_id.clone();
        query.limit = query.limit.clamp(1, 1000);
        self.flush_usage().await;
        Ok(self.store.list_tools(&query).await?)
    }

    pub async fn stats(&self, actor: &Actor) -> Result<ToolStats, ServiceError> {
        self.flush_usage().await;
        Ok(self.store.tool_stats(&actor.user_id).await?)
    }

    /// Applies a partial update. A patch that changes nothing returns the tool as it is.
    pub async fn update(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        patch: ToolPatch,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let current = self.get(actor, tool).await?;
        check_revision(&current, expected_revision)?;
        let mut next = current.clone();

        if let Some(name) = &patch.name
            && name != &current.name
        {
            return Err(ServiceError::Validation(format!(
                "the patch names '{name}' but the tool is '{}'; to rename a tool, set newName",
                current.name
            )));
        }
        if let Some(new_name) = patch.new_name
            && new_name != current.name
        {
            validate_name(&new_name, self.config.name_rule)
                .map_err(|e| ServiceError::Validation(e.to_string()))?;
            self.check_name_not_taken_by_toolsmith(&new_name)?;
            next.name = new_name;
        }
        if let Some(description) = patch.description {
            self.check_description(&description)?;
            next.description = description;
        }
        if let Some(parameters) = patch.parameters {
            next.parameters = normalize_parameters(parameters)?;
        }
        if let Some(code) = patch.code
            && code != current.code
        {
            next.code = self.seal_command_env(next.kind, &current.owner, &current.id, code)?;
        }
        if let Some(category) = patch.category {
            next.category = normalize_category(Some(category));
        }
        if let Some(tags) = patch.tags {
            next.tags = normalize_tags(tags)?;
        }
        if let Some(permissions) = patch.permissions {
            next.permissions = permissions.into_iter().collect();
        }
        if next.code != current.code
            || next.parameters != current.parameters
            || next.permissions != current.permissions
        {
            let checked = self.check_definition(
                next.kind,
                &next.code,
                next.parameters.clone(),
                next.permissions.clone(),
            )?;
            next.parameters = checked.parameters;
            next.permissions = checked.permissions;
        }
        if let Some(requires_approval) = patch.requires_approval {
            if actor.is_llm() && !requires_approval {
                let who = match &actor.agent {
                    Some(agent) => format!(" (the caller acts as agent '{agent}')"),
                    None => String::new(),
                };
                return Err(ServiceError::Forbidden(format!(
                    "tools created or changed by the model always require approval{who}; only a person, not acting as an agent, can clear requiresApproval"
                )));
            }
            next.requires_approval = requires_approval;
        }
        if let Some(metadata) = patch.metadata {
            next.metadata = normalize_metadata(Some(metadata))?;
        }
        if let Some(dependencies) = patch.dependencies
            && let Some(object) = next.metadata.as_object_mut()
        {
            object.insert(
                super::npm::DEPENDENCIES.to_owned(),
                serde_json::to_value(dependencies)
                    .map_err(|e| ServiceError::Validation(format!("dependencies: {e}")))?,
            );
        }
        if let Some(schema) = patch.output_schema
            && let Some(object) = next.metadata.as_object_mut()
        {
            object.insert(OUTPUT_SCHEMA.to_owned(), schema);
            check_output_schema(&next.metadata)?;
        }
        self.settle_packages(next.kind, &mut next.metadata, Some(&current.metadata))
            .await?;
        self.commit_update(actor, current, next).await
    }

    /// Makes an earlier version current again, as a new version.
    pub async fn rollback(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        version: i64,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let current = self.get(actor, tool).await?;
        check_revision(&current, expected_revision)?;
        let Some(old) = self
            .store
            .get_version(&actor.user_id, &current.id, version)
            .await?
        else {
            return Err(ServiceError::NotFound(format!(
                "tool '{}' has no version {version}",
                current.name
            )));
        };
        let mut next = current.clone();
        next.description = old.description;
        next.parameters = old.parameters;
        next.code = old.code;
        next.permissions = old.permissions;
        // The version's npm dependencies and their lock come back with its code (the rest of
        // the metadata is the tool's, not the version's); the lock's packages are fetched again
        // at the first run if the cache lost them.
        super::npm::restore(&mut next.metadata, &old.metadata);
        self.commit_update(actor, current, next).await
    }

    /// The stored versions of a tool, newest first.
    pub async fn versions(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<Vec<ToolVersionRecord>, ServiceError> {
        let current = self.get(actor, tool).await?;
        Ok(self
            .store
            .list_versions(&actor.user_id, &current.id)
            .await?)
    }

    /// `disabled` → `active`. Enabling an active tool changes nothing; a pending or rejected
    /// tool becomes active only through approval.
    pub async fn enable(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.transition(
            actor,
            tool,
            expected_revision,
            false,
            |current| match current.status {
                ToolStatus::Active => Ok(None),
                ToolStatus::Disabled => Ok(Some(ToolStatus::Active)),
                ToolStatus::PendingApproval | ToolStatus::Rejected => {
                    Err(ServiceError::InvalidState(format!(
                        "tool '{}' is {}; it can become active only by approval",
                        current.name, current.status
                    )))
                }
            },
        )
        .await
    }

    /// `active` → `disabled`. Disabling a disabled tool changes nothing.
    pub async fn disable(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        expected_revision: Option<i64>,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.transition(
            actor,
            tool,
            expected_revision,
            false,
            |current| match current.status {
                ToolStatus::Disabled => Ok(None),
                ToolStatus::Active => Ok(Some(ToolStatus::Disabled)),
                ToolStatus::PendingApproval | ToolStatus::Rejected => {
                    Err(ServiceError::InvalidState(format!(
                        "tool '{}' is {}; approve or reject it instead",
                        current.name, current.status
                    )))
                }
            },
        )
        .await
    }

    /// `pending_approval` → `active`, by a person only.
    pub async fn approve(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.decide(actor, tool, ToolStatus::Active).await
    }

    /// `pending_approval` → `rejected`, by a person only.
    pub async fn reject(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<CustomToolRecord, ServiceError> {
        self.decide(actor, tool, ToolStatus::Rejected).await
    }

    /// Deletes a tool and its history. Returns the tool as it was.
    pub async fn delete(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        options: DeleteOptions,
    ) -> Result<CustomToolRecord, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let current = self.get(actor, tool).await?;
        check_revision(&current, options.expected_revision)?;
        if actor.is_llm() {
            if current.created_by != toolsmith_core::CreatedBy::Llm {
                return Err(ServiceError::Forbidden(format!(
                    "tool '{}' was created by a user; the model cannot delete it — ask the user to delete it {}",
                    current.name,
                    self.config()
                        .approval_doors
                        .describe_tool_delete(&current.name, &current.id)
                )));
            }
            if !options.confirm {
                return Err(ServiceError::ConfirmationRequired(format!(
                    "deleting tool '{}' cannot be undone; call again with confirm: true to delete it",
                    current.name
                )));
            }
        }
        self.store
            .delete_tool(&actor.user_id, &current.id, current.revision)
            .await?;
        self.registry.remove_custom(&current.owner, &current.id);
        self.drop_dependencies(&current).await;
        self.revoke_grants(&current).await;
        self.audit_tool(
            actor,
            "tool.delete",
            Some(current.revision),
            &current,
            serde_json::json!({}),
        )
        .await;
        Ok(current)
    }

    /// Changes the status of the actor's tool (with `any_owner`, for an admin, of any owner's
    /// tool named by id).
    async fn transition(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        expected_revision: Option<i64>,
        any_owner: bool,
        next_status: impl FnOnce(&CustomToolRecord) -> Result<Option<ToolStatus>, ServiceError>,
    ) -> Result<CustomToolRecord, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let current = if any_owner {
            self.get_for_admin(actor, tool).await?
        } else {
            self.get(actor, tool).await?
        };
        check_revision(&current, expected_revision)?;
        let Some(status) = next_status(&current)? else {
            return Ok(current);
        };
        let mut next = current.clone();
        next.status = status;
        next.revision += 1;
        next.updated_at = Utc::now();
        dependencies::declared_services(&next)?;
        self.store.update_tool(&next, current.revision).await?;
        self.sync(&next);
        if next.metadata != current.metadata
            || next.code != current.code
            || next.name != current.name
        {
            self.sync_dependencies(&next, Some(&current.name)).await;
        }
        let action = match next.status {
            ToolStatus::Active if current.status == ToolStatus::PendingApproval => "tool.approve",
            ToolStatus::Active => "tool.enable",
            ToolStatus::Disabled => "tool.disable",
            ToolStatus::Rejected => "tool.reject",
            ToolStatus::PendingApproval => "tool.status",
        };
        let mut details = serde_json::Map::new();
        details.insert("from".into(), serde_json::json!(current.status));
        details.insert("to".into(), serde_json::json!(next.status));
        if next.owner != actor.user_id {
            // An admin decided another user's tool.
            details.insert("owner".into(), serde_json::json!(next.owner));
        }
        let details = Value::Object(details);
        self.audit_tool(actor, action, Some(current.revision), &next, details)
            .await;
        Ok(next)
    }

    async fn decide(
        &self,
        actor: &Actor,
        tool: &ToolRef,
        decision: ToolStatus,
    ) -> Result<CustomToolRecord, ServiceError> {
        if actor.is_llm() {
            let who = match &actor.agent {
                Some(agent) => format!("the caller acts as agent '{agent}', and an agent"),
                None => "the model".to_owned(),
            };
            return Err(ServiceError::Forbidden(format!(
                "only a person can approve or reject a tool; {who} cannot decide on tools — the tool's owner or an admin must, without an agent (web UI, REST, CLI)"
            )));
        }
        self.transition(actor, tool, None, actor.admin, |current| {
            if current.status == ToolStatus::PendingApproval {
                Ok(Some(decision))
            } else {
                Err(ServiceError::InvalidState(format!(
                    "tool '{}' is {}; only tools pending approval can be approved or rejected",
                    current.name, current.status
                )))
            }
        })
        .await
    }

    /// A tool of the actor's or, for an admin naming it by id, of any owner's.
    async fn get_for_admin(
        &self,
        actor: &Actor,
        tool: &ToolRef,
    ) -> Result<CustomToolRecord, ServiceError> {
        match self.get(actor, tool).await {
            Err(ServiceError::NotFound(message)) => {
                if let (true, ToolRef::Id(id)) = (actor.admin, tool)
                    && let Some(found) = self.store.get_tool_of_any_owner(id).await?
                {
                    return Ok(found);
                }
                Err(ServiceError::NotFound(message))
            }
            found => found,
        }
    }

    /// Stores `next` (derived from `current`) with the version and revision rules, if it differs.
    async fn commit_update(
        &self,
        actor: &Actor,
        current: CustomToolRecord,
        mut next: CustomToolRecord,
    ) -> Result<CustomToolRecord, ServiceError> {
        // New packages are new code: a version of its own, and approvals asked again.
        let packages_changed = next.metadata.get(super::npm::PACKAGE_LOCK)
            != current.metadata.get(super::npm::PACKAGE_LOCK);
        let definition_changed =
            next.code != current.code || next.parameters != current.parameters || packages_changed;
        let anything_changed = definition_changed
            || next.name != current.name
            || next.description != current.description
            || next.category != current.category
            || next.tags != current.tags
            || next.permissions != current.permissions
            || next.requires_approval != current.requires_approval
            || next.metadata != current.metadata;
        if !anything_changed {
            return Ok(current);
        }
        if definition_changed {
            next.version = current.version + 1;
        }
        if actor.is_llm() {
            next.requires_approval = true;
            let adds_dangerous = next
                .permissions
                .difference(&current.permissions)
                .any(|p| p.is_dangerous());
            let recodes_dangerous =
                (next.code != current.code || packages_changed) && next.has_dangerous_permission();
            if adds_dangerous || recodes_dangerous {
                next.status = ToolStatus::PendingApproval;
            }
        }
        next.revision = current.revision + 1;
        next.updated_at = Utc::now();
        let dependencies_changed = next.metadata != current.metadata
            || next.code != current.code
            || next.name != current.name;
        if dependencies_changed {
            dependencies::declared_services(&next)?;
        }
        self.store.update_tool(&next, current.revision).await?;
        self.sync(&next);
        if dependencies_changed {
            // `requiredApiKeys` (and an HTTP tool's `store.*` keys) follow the update.
            self.sync_dependencies(&next, Some(&current.name)).await;
        }
        self.audit_tool(actor, "tool.update", Some(current.revision), &next, serde_json::json!({
            "changed": changed_fields(&current, &next), "version": next.version, "status": next.status,
        }))
        .await;
        if definition_changed || next.permissions != current.permissions {
            // What a person allowed always was the old code: ask again.
            self.revoke_grants(&next).await;
        }
        Ok(next)
    }

    /// Records an action on a tool in the audit log (`after` is the tool as it is now, or as it
    /// was for a delete).
    async fn audit_tool(
        &self,
        actor: &Actor,
        action: &str,
        before_revision: Option<i64>,
        after: &CustomToolRecord,
        details: Value,
    ) {
        let after_revision = (action != "tool.delete").then_some(after.revision);
        self.audit
            .record(
                actor,
                action,
                AuditTarget::new("tool", after.id.clone(), Some(after.name.clone())),
                (before_revision, after_revision),
                details,
            )
            .await;
    }

    /// Removes the `allow_always` grants of a tool (best effort: the write already committed).
    pub(crate) async fn revoke_grants(&self, tool: &CustomToolRecord) {
        if let Err(e) = self
            .store
            .revoke_approval_grants(&tool.owner, &tool.id)
            .await
        {
            tracing::warn!(tool = %tool.name, error = %e, "could not revoke the tool's approval grants");
        }
    }
}

fn check_revision(current: &CustomToolRecord, expected: Option<i64>) -> Result<(), ServiceError> {
    match expected {
        Some(expected) if expected != current.revision => Err(ServiceError::RevisionConflict {
            expected,
            actual: current.revision,
        }),
        _ => Ok(()),
    }
}

/// The names of the fields an update changed (never their values: code and env may hold
/// secrets).
fn changed_fields(current: &CustomToolRecord, next: &CustomToolRecord) -> Vec<&'static str> {
    let mut changed = Vec::new();
    let pairs: [(&'static str, bool); 9] = [
        ("name", current.name != next.name),
        ("description", current.description != next.description),
        ("parameters", current.parameters != next.parameters),
        ("code", current.code != next.code),
        ("category", current.category != next.category),
        ("tags", current.tags != next.tags),
        ("permissions", current.permissions != next.permissions),
        (
            "requiresApproval",
            current.requires_approval != next.requires_approval,
        ),
        ("metadata", current.metadata != next.metadata),
    ];
    for (name, differs) in pairs {
        if differs {
            changed.push(name);
        }
    }
    changed
}
