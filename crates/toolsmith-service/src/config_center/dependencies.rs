//! What config a tool needs (`required_api_keys`, and the `store.*` values of an HTTP tool),
//! keeping the Config Center in step with it, and refusing to run a tool whose config is
//! missing.
//!
//! A tool's declaration lives in its `metadata.requiredApiKeys` (the spec keeps it with the
//! tool's extended fields): a list of `{name, displayName?, description?, category?,
//! docsUrl?, multiEntry?, configSchema?}` (or plain names; spec 000's `RequiredConfigService`).
//! Creating or updating the tool registers those services (auto-registered, with the fields of
//! `configSchema`, or the default `api_key` + `base_url` without one); deleting it, or
//! dropping a service from the list, unregisters what no tool needs any more and holds no
//! entries ([`ConfigStore::sync_config_dependencies`](toolsmith_store::ConfigStore::sync_config_dependencies)).

use chrono::Utc;
use serde_json::Value;
use toolsmith_core::{ConfigServiceRecord, CustomToolRecord, ToolKind};

use crate::error::ServiceError;
use crate::service::ToolService;

/// The `store.*` key suffixes that name a field of the service before them
/// (`smile_api_key` = field `api_key` of service `smile`).
const FIELD_SUFFIXES: [&str; 2] = ["_api_key", "_base_url"];

/// The services a tool needs, as templates for auto-registration.
pub(crate) fn declared_services(
    tool: &CustomToolRecord,
) -> Result<Vec<ConfigServiceRecord>, ServiceError> {
    services_of(&tool.owner, tool.kind, &tool.code, &tool.metadata)
}

/// [`declared_services`] of a definition not stored yet.
pub(crate) fn services_of(
    owner: &str,
    kind: ToolKind,
    code: &str,
    metadata: &Value,
) -> Result<Vec<ConfigServiceRecord>, ServiceError> {
    let now = Utc::now();
    let mut out: Vec<ConfigServiceRecord> = Vec::new();
    let mut add = |record: ConfigServiceRecord| {
        if !out.iter().any(|s| s.name == record.name) {
            out.push(record);
        }
    };
    if let Some(list) = metadata.get("requiredApiKeys") {
        let Some(items) = list.as_array() else {
            return Err(ServiceError::Validation(
                "requiredApiKeys must be a list of services".to_owned(),
            ));
        };
        for item in items {
            let mut record = match item {
                Value::String(name) => ConfigServiceRecord::new(owner, name.clone(), now),
                Value::Object(map) => {
                    let name = map.get("name").and_then(Value::as_str).ok_or_else(|| {
                        ServiceError::Validation(
                            "each requiredApiKeys item needs a name".to_owned(),
                        )
                    })?;
                    let mut r = ConfigServiceRecord::new(owner, name, now);
                    let text = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
                    if let Some(v) = text("displayName") {
                        r.display_name = v;
                    }
                    r.description = text("description");
                    r.category = text("category");
                    r.docs_url = text("docsUrl");
                    if let Some(multi) = map.get("multiEntry") {
                        r.multi_entry = multi.as_bool().ok_or_else(|| {
                            ServiceError::Validation(format!(
                                "requiredApiKeys: multiEntry of '{name}' must be true or false"
                            ))
                        })?;
                    }
                    if let Some(schema) = map.get("configSchema").filter(|s| !s.is_null()) {
                        r.fields = serde_json::from_value(schema.clone()).map_err(|e| {
                            ServiceError::Validation(format!(
                                "requiredApiKeys: configSchema of '{name}' must be a list of fields ({{name, label?, type, required?, description?}}): {e}"
                            ))
                        })?;
                    }
                    r
                }
                _ => {
                    return Err(ServiceError::Validation(
                        "each requiredApiKeys item is a name or an object with a name".to_owned(),
                    ));
                }
            };
            record.auto_registered = true;
            record
                .validate()
                .map_err(|e| ServiceError::Validation(format!("requiredApiKeys: {e}")))?;
            add(record);
        }
    }
    if kind == ToolKind::Http
        && let Ok(definition) = toolsmith_httptool::parse_any(code)
    {
        for key in toolsmith_httptool::config_keys(&definition) {
            let service = match key.split_once('.') {
                Some((service, _)) => Some(service.to_owned()),
                None => FIELD_SUFFIXES
                    .iter()
                    .find_map(|suffix| key.strip_suffix(suffix).map(str::to_owned)),
            };
            if let Some(name) = service.filter(|n| !n.is_empty()) {
                let mut record = ConfigServiceRecord::new(owner, name, now);
                record.auto_registered = true;
                if record.validate().is_ok() {
                    add(record);
                }
            }
        }
    }
    Ok(out)
}

/// The names of the services a tool declares.
pub(crate) fn declared_names(tool: &CustomToolRecord) -> Vec<String> {
    declared_services(tool)
        .map(|v| v.into_iter().map(|s| s.name).collect())
        .unwrap_or_default()
}

impl ToolService {
    /// Registers what `tool` declares and unregisters what it no longer does (under
    /// `old_name` too when it was renamed). A failure is logged, never fatal: the tool is
    /// already stored.
    pub(crate) async fn sync_dependencies(&self, tool: &CustomToolRecord, old_name: Option<&str>) {
        let declared = declared_services(tool).unwrap_or_default();
        if let Some(old) = old_name.filter(|old| *old != tool.name)
            && let Err(e) = self
                .store()
                .sync_config_dependencies(&tool.owner, old, Vec::new())
                .await
        {
            tracing::warn!(tool = old, error = %e, "cannot unregister the config services of a renamed tool");
        }
        match self
            .store()
            .sync_config_dependencies(&tool.owner, &tool.name, declared)
            .await
        {
            Ok(changes) => {
                if !changes.created.is_empty() || !changes.removed.is_empty() {
                    tracing::info!(tool = %tool.name, created = ?changes.created, removed = ?changes.removed, "config services registered");
                }
            }
            Err(e) => {
                tracing::warn!(tool = %tool.name, error = %e, "cannot register the tool's config services")
            }
        }
        self.config_cache().invalidate(&tool.owner);
    }

    /// Unregisters everything a deleted tool declared.
    pub(crate) async fn drop_dependencies(&self, tool: &CustomToolRecord) {
        if let Err(e) = self
            .store()
            .sync_config_dependencies(&tool.owner, &tool.name, Vec::new())
            .await
        {
            tracing::warn!(tool = %tool.name, error = %e, "cannot unregister the config services of a deleted tool");
        }
        self.config_cache().invalidate(&tool.owner);
    }

    /// The services `tool` declares that are not configured yet, as `service (field, …)`.
    pub async fn missing_config(
        &self,
        tool: &CustomToolRecord,
    ) -> Result<Vec<String>, ServiceError> {
        let names = declared_names(tool);
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let config = self.config_cache().owner(&tool.owner).await?;
        Ok(names
            .into_iter()
            .filter_map(|name| {
                let missing = match config.services.get(&name) {
                    Some(service) => service.missing(),
                    None => vec!["api_key".to_owned()],
                };
                (!missing.is_empty()).then(|| format!("{name} ({})", missing.join(", ")))
            })
            .collect())
    }
}
