//! The Config Center's operations: services (the external APIs tools need) and their entries
//! (the values), for REST, the CLI and the tools' declarations (`required_api_keys`).
//!
//! Secret fields are sealed here, with the entry's id as part of what each value is bound to,
//! before anything reaches the store; what comes back out is always masked
//! ([`EntryView`]). Every write drops the owner's decrypted cache.

use std::collections::BTreeMap;

use chrono::Utc;
use serde::Serialize;
use serde_json::{Value, json};

use crate::governance::audit::AuditTarget;
use toolsmith_core::config::check_entry_values;
use toolsmith_core::{ConfigEntryRecord, ConfigField, ConfigServiceRecord, FieldKind, StoredValue};
use toolsmith_secrets::{SecretPlace, mask};

use crate::error::ServiceError;
use crate::input::Actor;
use crate::service::ToolService;

/// A service to create. The faces read their own wire shapes (REST's `ConfigServiceBody`, the
/// CLI's flags) and build these.
#[derive(Debug, Clone, Default)]
pub struct ServiceInput {
    pub name: String,
    pub display_name: Option<String>,
    pub description: Option<String>,
    pub category: Option<String>,
    pub docs_url: Option<String>,
    pub multi_entry: bool,
    /// The config schema; `api_key` (secret, required) and `base_url` when absent.
    pub fields: Option<Vec<ConfigField>>,
}

/// A change to a service; absent fields stay.
#[derive(Debug, Clone, Default)]
pub struct ServicePatch {
    pub display_name: Option<String>,
    pub description: Option<String>,
    pub category: Option<String>,
    pub docs_url: Option<String>,
    pub multi_entry: Option<bool>,
    pub fields: Option<Vec<ConfigField>>,
}

/// An entry to create, or (with every field optional) a change to one.
#[derive(Debug, Clone, Default)]
pub struct EntryInput {
    /// Default `default`.
    pub label: Option<String>,
    pub is_default: Option<bool>,
    /// Field → plaintext value. In an update, absent fields keep their value and `null`
    /// removes one.
    pub values: BTreeMap<String, Value>,
}

/// An entry as shown: secrets masked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EntryView {
    pub id: String,
    pub label: String,
    pub is_default: bool,
    pub values: BTreeMap<String, Value>,
    /// Required fields without a value.
    pub missing: Vec<String>,
    pub revision: i64,
    pub created_at: chrono::DateTime<Utc>,
    pub updated_at: chrono::DateTime<Utc>,
}

/// A service as shown, with its entries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceView {
    #[serde(flatten)]
    pub service: ConfigServiceRecord,
    pub entries: Vec<EntryView>,
    /// Whether the default entry has every required field (tools needing it can run).
    pub configured: bool,
}

impl ToolService {
    /// The actor's services, by name, with their entries (masked).
    pub async fn config_services(&self, actor: &Actor) -> Result<Vec<ServiceView>, ServiceError> {
        let mut out = Vec::new();
        for service in self.store().list_config_services(&actor.user_id).await? {
            out.push(self.service_view(actor, service).await?);
        }
        Ok(out)
    }

    /// One service (by name or id).
    pub async fn config_service(
        &self,
        actor: &Actor,
        service: &str,
    ) -> Result<ServiceView, ServiceError> {
        let found = self.find_config_service(actor, service).await?;
        self.service_view(actor, found).await
    }

    pub async fn create_config_service(
        &self,
        actor: &Actor,
        input: ServiceInput,
    ) -> Result<ServiceView, ServiceError> {
        let mut record = ConfigServiceRecord::new(actor.user_id.clone(), input.name, Utc::now());
        if let Some(display_name) = input.display_name {
            record.display_name = display_name;
        }
        record.description = input.description;
        record.category = input.category;
        record.docs_url = input.docs_url;
        record.multi_entry = input.multi_entry;
        if let Some(fields) = input.fields {
            record.fields = fields;
        }
        record.validate().map_err(config_error)?;
        let stored = self.store().create_config_service(record).await?;
        self.config_cache().invalidate(&actor.user_id);
        self.audit_config(
            actor,
            "config.service.create",
            AuditTarget::new(
                "config_service",
                stored.id.clone(),
                Some(stored.name.clone()),
            ),
            (None, Some(stored.revision)),
            json!({}),
        )
        .await;
        self.service_view(actor, stored).await
    }

    pub async fn update_config_service(
        &self,
        actor: &Actor,
        service: &str,
        patch: ServicePatch,
        expected_revision: Option<i64>,
    ) -> Result<ServiceView, ServiceError> {
        let current = self.find_config_service(actor, service).await?;
        let expected = expected_revision.unwrap_or(current.revision);
        let mut next = current.clone();
        if let Some(v) = patch.display_name {
            next.display_name = v;
        }
        if let Some(v) = patch.description {
            next.description = Some(v);
        }
        if let Some(v) = patch.category {
            next.category = Some(v);
        }
        if let Some(v) = patch.docs_url {
            next.docs_url = Some(v);
        }
        if let Some(v) = patch.multi_entry {
            next.multi_entry = v;
        }
        if let Some(fields) = patch.fields {
            next.fields = fields;
        }
        next.updated_at = Utc::now();
        next.validate().map_err(config_error)?;
        let stored = self.store().update_config_service(&next, expected).await?;
        self.config_cache().invalidate(&actor.user_id);
        self.audit_config(
            actor,
            "config.service.update",
            AuditTarget::new(
                "config_service",
                stored.id.clone(),
                Some(stored.name.clone()),
            ),
            (Some(current.revision), Some(stored.revision)),
            json!({}),
        )
        .await;
        self.service_view(actor, stored).await
    }

    /// Deletes a service and its entries.
    pub async fn delete_config_service(
        &self,
        actor: &Actor,
        service: &str,
        expected_revision: Option<i64>,
    ) -> Result<(), ServiceError> {
        let found = self.find_config_service(actor, service).await?;
        self.store()
            .delete_config_service(&actor.user_id, &found.id, expected_revision)
            .await?;
        self.config_cache().invalidate(&actor.user_id);
        self.audit_config(
            actor,
            "config.service.delete",
            AuditTarget::new("config_service", found.id.clone(), Some(found.name.clone())),
            (Some(found.revision), None),
            json!({}),
        )
        .await;
        Ok(())
    }

    /// Adds an entry (the first one of a service becomes its default).
    pub async fn create_config_entry(
        &self,
        actor: &Actor,
        service: &str,
        input: EntryInput,
    ) -> Result<EntryView, ServiceError> {
        let found = self.find_config_service(actor, service).await?;
        check_entry_values(&found.fields, &input.values).map_err(config_error)?;
        let now = Utc::now();
        let id = ConfigEntryRecord::new_id();
        let values = self.seal_values(actor, &found, &id, &input.values, BTreeMap::new())?;
        let entry = ConfigEntryRecord {
            id,
            service_id: found.id.clone(),
            label: input.label.unwrap_or_else(|| "default".to_owned()),
            is_default: input.is_default.unwrap_or(false),
            values,
            revision: 1,
            created_at: now,
            updated_at: now,
        };
        entry.validate(&found).map_err(config_error)?;
        let stored = self
            .store()
            .create_config_entry(&actor.user_id, entry)
            .await?;
        let stored = if input.is_default == Some(true) && !stored.is_default {
            self.store()
                .set_default_config_entry(&actor.user_id, &stored.id)
                .await?
        } else {
            stored
        };
        self.config_cache().invalidate(&actor.user_id);
        // Which fields were set, never their values.
        let fields: Vec<&String> = stored.values.keys().collect();
        self.audit_config(
            actor,
            "config.entry.create",
            AuditTarget::new("config_entry", stored.id.clone(), Some(found.name.clone())),
            (None, Some(stored.revision)),
            json!({"label": stored.label, "fields": fields}),
        )
        .await;
        Ok(self.entry_view(actor, &found, &stored))
    }

    /// Changes an entry (by label or id): label, default flag, values.
    pub async fn update_config_entry(
        &self,
        actor: &Actor,
        service: &str,
        entry: &str,
        input: EntryInput,
        expected_revision: Option<i64>,
    ) -> Result<EntryView, ServiceError> {
        let found = self.find_config_service(actor, service).await?;
        let current = self.find_config_entry(actor, &found, entry).await?;
        let mut plain = self.plain_values(actor, &found, &current);
        for (field, value) in input.values {
            if value.is_null() {
                plain.remove(&field);
            } else {
                plain.insert(field, value);
            }
        }
        check_entry_values(&found.fields, &plain).map_err(config_error)?;
        let mut next = current.clone();
        next.values =
            self.seal_values(actor, &found, &current.id, &plain, current.values.clone())?;
        if let Some(label) = input.label {
            next.label = label;
        }
        next.updated_at = Utc::now();
        next.validate(&found).map_err(config_error)?;
        let expected = expected_revision.unwrap_or(current.revision);
        let mut stored = self
            .store()
            .update_config_entry(&actor.user_id, &next, expected)
            .await?;
        if input.is_default == Some(true) && !stored.is_default {
            stored = self
                .store()
                .set_default_config_entry(&actor.user_id, &stored.id)
                .await?;
        }
        self.config_cache().invalidate(&actor.user_id);
        let fields: Vec<&String> = stored.values.keys().collect();
        self.audit_config(
            actor,
            "config.entry.update",
            AuditTarget::new("config_entry", stored.id.clone(), Some(found.name.clone())),
            (Some(current.revision), Some(stored.revision)),
            json!({"label": stored.label, "fields": fields}),
        )
        .await;
        Ok(self.entry_view(actor, &found, &stored))
    }

    pub async fn delete_config_entry(
        &self,
        actor: &Actor,
        service: &str,
        entry: &str,
        expected_revision: Option<i64>,
    ) -> Result<(), ServiceError> {
        let found = self.find_config_service(actor, service).await?;
        let current = self.find_config_entry(actor, &found, entry).await?;
        self.store()
            .delete_config_entry(&actor.user_id, &current.id, expected_revision)
            .await?;
        self.config_cache().invalidate(&actor.user_id);
        self.audit_config(
            actor,
            "config.entry.delete",
            AuditTarget::new("config_entry", current.id.clone(), Some(found.name.clone())),
            (Some(current.revision), None),
            json!({"label": current.label}),
        )
        .await;
        Ok(())
    }

    /// Records a Config Center write in the audit log (names and revisions, never values).
    async fn audit_config(
        &self,
        actor: &Actor,
        action: &str,
        target: AuditTarget,
        revisions: (Option<i64>, Option<i64>),
        details: serde_json::Value,
    ) {
        self.audit()
            .record(actor, action, target, revisions, details)
            .await;
    }

    async fn find_config_service(
        &self,
        actor: &Actor,
        service: &str,
    ) -> Result<ConfigServiceRecord, ServiceError> {
        let found = if service.starts_with("svc_") {
            self.store()
                .get_config_service(&actor.user_id, service)
                .await?
        } else {
            self.store()
                .get_config_service_by_name(&actor.user_id, service)
                .await?
        };
        found.ok_or_else(|| ServiceError::NotFound(format!("no config service '{service}'")))
    }

    async fn find_config_entry(
        &self,
        actor: &Actor,
        service: &ConfigServiceRecord,
        entry: &str,
    ) -> Result<ConfigEntryRecord, ServiceError> {
        self.store()
            .list_config_entries(&actor.user_id, &service.id)
            .await?
            .into_iter()
            .find(|e| e.id == entry || e.label == entry)
            .ok_or_else(|| {
                ServiceError::NotFound(format!(
                    "no entry '{entry}' in config service '{}'",
                    service.name
                ))
            })
    }

    async fn service_view(
        &self,
        actor: &Actor,
        service: ConfigServiceRecord,
    ) -> Result<ServiceView, ServiceError> {
        let entries: Vec<EntryView> = self
            .store()
            .list_config_entries(&actor.user_id, &service.id)
            .await?
            .iter()
            .map(|e| self.entry_view(actor, &service, e))
            .collect();
        let configured = entries
            .iter()
            .find(|e| e.is_default)
            .or(entries.first())
            .is_some_and(|e| e.missing.is_empty());
        Ok(ServiceView {
            service,
            entries,
            configured,
        })
    }

    fn entry_view(
        &self,
        actor: &Actor,
        service: &ConfigServiceRecord,
        entry: &ConfigEntryRecord,
    ) -> EntryView {
        let plain = self.plain_values(actor, service, entry);
        let values = plain
            .into_iter()
            .map(|(field, value)| {
                let secret = service
                    .field(&field)
                    .is_some_and(|f| f.kind == FieldKind::Secret);
                let shown = match (&value, secret) {
                    (Value::String(s), true) => Value::String(mask(s)),
                    _ => value,
                };
                (field, shown)
            })
            .collect();
        EntryView {
            id: entry.id.clone(),
            label: entry.label.clone(),
            is_default: entry.is_default,
            values,
            missing: entry
                .missing_required(service)
                .into_iter()
                .map(str::to_owned)
                .collect(),
            revision: entry.revision,
            created_at: entry.created_at,
            updated_at: entry.updated_at,
        }
    }

    /// An entry's values in plaintext (a secret that cannot be opened is left out).
    fn plain_values(
        &self,
        actor: &Actor,
        service: &ConfigServiceRecord,
        entry: &ConfigEntryRecord,
    ) -> BTreeMap<String, Value> {
        let mut out = BTreeMap::new();
        for (field, stored) in &entry.values {
            let value = match stored {
                StoredValue::Secret(sealed) => {
                    let place = SecretPlace {
                        owner: &actor.user_id,
                        service_id: &service.id,
                        entry_id: &entry.id,
                        field,
                    };
                    match self.config_cache().cipher().map(|c| c.open(sealed, &place)) {
                        Some(Ok(plain)) => Value::String(plain.to_string()),
                        _ => continue,
                    }
                }
                other => other.plain_json().unwrap_or(Value::Null),
            };
            out.insert(field.clone(), value);
        }
        out
    }

    /// Stored values from plaintext ones; a secret equal to what `keep` already seals keeps
    /// its sealed text.
    fn seal_values(
        &self,
        actor: &Actor,
        service: &ConfigServiceRecord,
        entry_id: &str,
        plain: &BTreeMap<String, Value>,
        keep: BTreeMap<String, StoredValue>,
    ) -> Result<BTreeMap<String, StoredValue>, ServiceError> {
        let mut out = BTreeMap::new();
        for (field, value) in plain {
            if value.is_null() {
                continue;
            }
            let Some(spec) = service.field(field) else {
                return Err(ServiceError::Validation(format!(
                    "config service '{}' has no field '{field}'",
                    service.name
                )));
            };
            let stored = if spec.kind == FieldKind::Secret {
                let Some(text) = value.as_str() else {
                    return Err(ServiceError::Validation(format!(
                        "field '{field}' is a secret: give it as a string"
                    )));
                };
                let cipher = self.config_cache().cipher().ok_or_else(|| {
                    ServiceError::InvalidState(
                        "no secret key is configured, so secrets cannot be stored".to_owned(),
                    )
                })?;
                let place = SecretPlace {
                    owner: &actor.user_id,
                    service_id: &service.id,
                    entry_id,
                    field,
                };
                let unchanged = match keep.get(field) {
                    Some(StoredValue::Secret(sealed)) => cipher
                        .open(sealed, &place)
                        .is_ok_and(|old| old.as_str() == text)
                        .then(|| StoredValue::Secret(sealed.clone())),
                    _ => None,
                };
                match unchanged {
                    Some(it) => it,
                    None => StoredValue::Secret(
                        cipher
                            .seal(text, &place)
                            .map_err(|e| ServiceError::Validation(e.to_string()))?,
                    ),
                }
            } else {
                StoredValue::plain(spec.kind, value).ok_or_else(|| {
                    ServiceError::Validation(format!("field '{field}' takes a {} value", spec.kind))
                })?
            };
            out.insert(field.clone(), stored);
        }
        Ok(out)
    }
}

/// Every rule a service or an entry breaks is a validation error (422), sizes included: the
/// request itself was within the body limit.
fn config_error(e: toolsmith_core::ConfigError) -> ServiceError {
    ServiceError::Validation(e.to_string())
}
