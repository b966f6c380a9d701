//! Policy operations: the policy in force, and replacing or clearing the one kept in the
//! store (REST `/api/v1/policies`, CLI `toolsmith policy`).
//!
//! The stored policy, when there is one, wins over the `[policy]` of the configuration file;
//! clearing it brings the file's back. A new policy is compiled against the registry before it
//! is stored (an unknown profile or group is refused: fail closed), takes effect at once, and
//! moves every catalogue version so MCP sessions are sent `list_changed`.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};
use toolsmith_policy::PolicyDocument;

use crate::error::ServiceError;
use crate::governance::audit::AuditTarget;
use crate::input::Actor;
use crate::service::ToolService;

/// The policy in force, as people see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyView {
    /// `store` (set through the API or CLI), `file` (the configuration file) or `none`.
    pub source: &'static str,
    /// The stored policy's revision (0 when none is stored).
    pub revision: i64,
    /// The policy document; `null` when no policy is configured (everything allowed).
    pub policy: Value,
    pub updated_by: Option<String>,
    pub updated_at: Option<DateTime<Utc>>,
}

impl ToolService {
    /// The policy in force.
    pub async fn policy_view(&self) -> Result<PolicyView, ServiceError> {
        if let Some(stored) = self.store().get_policy().await? {
            return Ok(PolicyView {
                source: "store",
                revision: stored.revision,
                policy: stored.document,
                updated_by: Some(stored.updated_by),
                updated_at: Some(stored.updated_at),
            });
        }
        Ok(match &self.config().policy {
            Some(file) => PolicyView {
                source: "file",
                revision: 0,
                policy: serde_json::to_value(file).unwrap_or(Value::Null),
                updated_by: None,
                updated_at: None,
            },
            None => PolicyView {
                source: "none",
                revision: 0,
                policy: Value::Null,
                updated_by: None,
                updated_at: None,
            },
        })
    }

    /// Stores `document` as the policy (if the stored revision is `expected_revision`; 0 when
    /// none is stored) and puts it in force.
    pub async fn set_policy(
        &self,
        actor: &Actor,
        document: Value,
        expected_revision: Option<i64>,
    ) -> Result<PolicyView, ServiceError> {
        server_wide_writer(actor)?;
        let config: PolicyDocument = serde_json::from_value(document)
            .map_err(|e| ServiceError::Validation(format!("invalid policy: {e}")))?;
        // Compiles it (fail closed) without installing it yet.
        self.policy()
            .validate(&config, self.registry())
            .map_err(|e| ServiceError::Validation(format!("invalid policy: {e}")))?;
        let normalized = serde_json::to_value(&config).unwrap_or(Value::Null);
        let _guard = self.write_lock.lock().await;
        let stored = match self
            .store()
            .put_policy(&normalized, expected_revision, &actor.user_id, Utc::now())
            .await?
        {
            Ok(stored) => stored,
            Err(actual) => {
                return Err(ServiceError::RevisionConflict {
                    expected: expected_revision.unwrap_or(0),
                    actual,
                });
            }
        };
        self.install_policy(Some(&config))?;
        *self.policy_marker() = Some((stored.revision, stored.updated_at));
        self.audit()
            .record(
                actor,
                "policy.update",
                AuditTarget::new("policy", "policy", None),
                (Some(stored.revision - 1), Some(stored.revision)),
                json!({}),
            )
            .await;
        self.policy_view().await
    }

    /// Removes the stored policy; the configuration file's (or none) is in force again.
    pub async fn clear_policy(
        &self,
        actor: &Actor,
        expected_revision: Option<i64>,
    ) -> Result<PolicyView, ServiceError> {
        server_wide_writer(actor)?;
        let _guard = self.write_lock.lock().await;
        let current = self.store().get_policy().await?;
        let revision = current.as_ref().map_or(0, |p| p.revision);
        if expected_revision.is_some_and(|e| e != revision) {
            return Err(ServiceError::RevisionConflict {
                expected: expected_revision.unwrap_or(0),
                actual: revision,
            });
        }
        if current.is_none() {
            return Err(ServiceError::NotFound(
                "no policy is stored (the configuration file's policy, if any, is in force)"
                    .to_owned(),
            ));
        }
        self.store().delete_policy().await?;
        let file = self.config().policy.clone();
        self.install_policy(file.as_ref())?;
        *self.policy_marker() = None;
        self.audit()
            .record(
                actor,
                "policy.delete",
                AuditTarget::new("policy", "policy", None),
                (Some(revision), None),
                json!({}),
            )
            .await;
        self.policy_view().await
    }

    /// Brings the policy in force in line with the store, after another process (the CLI,
    /// another server) stored or cleared one. Returns whether it changed.
    pub async fn refresh_policy_from_store(&self) -> Result<bool, ServiceError> {
        let stored = self.store().get_policy().await?;
        let marker = stored.as_ref().map(|p| (p.revision, p.updated_at));
        if *self.policy_marker() == marker {
            return Ok(false);
        }
        let _guard = self.write_lock.lock().await;
        match &stored {
            Some(stored) => {
                let config: PolicyDocument = serde_json::from_value(stored.document.clone())
                    .map_err(|e| ServiceError::Validation(format!("the stored policy: {e}")))?;
                self.install_policy(Some(&config))?;
            }
            None => {
                let file = self.config().policy.clone();
                self.install_policy(file.as_ref())?;
            }
        }
        *self.policy_marker() = marker;
        Ok(true)
    }

    /// Puts `config` in force and tells every watcher that catalogues may have changed.
    pub(crate) fn install_policy(
        &self,
        config: Option<&PolicyDocument>,
    ) -> Result<(), ServiceError> {
        self.policy()
            .replace(config, self.registry())
            .map_err(|e| ServiceError::Validation(format!("invalid policy: {e}")))?;
        self.registry().touch_all();
        Ok(())
    }
}

/// The policy is the server's, one document for every owner (an organisation's rules are its
/// `users.<org id>` scope in it): no one changes it while acting in an organisation's scope,
/// whatever their role there — an organisation's members never reach the server-wide parts
/// through it. The doors ask for `admin` besides, which no organisation's role gives.
fn server_wide_writer(actor: &Actor) -> Result<(), ServiceError> {
    if toolsmith_core::organization::is_org_id(&actor.user_id) {
        return Err(ServiceError::Forbidden(format!(
            "the policy is the server's, not an organisation's: you act in organisation \
             '{}'; an admin changes it as themselves (without X-Toolsmith-Organization), \
             the organisation's rules being its users.\"{}\" scope",
            actor.user_id, actor.user_id
        )));
    }
    Ok(())
}
