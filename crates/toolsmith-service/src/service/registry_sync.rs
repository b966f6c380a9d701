//! Keeping the registry in step with the store: after each committed write of this process,
//! and after writes of other processes sharing the store (`resync_from_store`).

use toolsmith_core::{CustomToolRecord, RegisteredTool, ToolOrigin, ToolStatus};

use super::ToolService;
use crate::config_center::dependencies;
use crate::error::ServiceError;
use crate::execution::kinds::ExecutorSource;

impl ToolService {
    /// Forgets the cached Config Center of `owner`: another process changed it (the change
    /// feed calls this), so the next call reads it again.
    pub fn forget_config(&self, owner: &str) {
        self.config_cache.invalidate(owner);
    }

    /// Brings the registry in line with the store after writes by other processes sharing it
    /// (the CLI while a server runs, another server): registers new and changed active tools
    /// and removes the ones that are no longer active. Tools that already match are left
    /// alone, so catalogue versions move only for real changes. Returns how many tools were
    /// added, replaced or removed.
    pub async fn resync_from_store(&self) -> Result<usize, ServiceError> {
        let _guard = self.write_lock.lock().await;
        let active = self.store.active_tools().await?;
        let wanted: std::collections::HashSet<(&str, &str)> = active
            .iter()
            .map(|t| (t.owner.as_str(), t.id.as_str()))
            .collect();
        let mut changed = 0;
        for (owner, id) in self.registry.custom_ids() {
            if !wanted.contains(&(owner.as_str(), id.as_str()))
                && self.registry.remove_custom(&owner, &id)
            {
                changed += 1;
            }
        }
        for record in &active {
            let current = self.registry.get(&record.owner, &record.name);
            if let Some(tool) = &current
                && tool.custom_id() == Some(record.id.as_str())
                && tool.version == Some(record.version)
                && tool.permissions == record.permissions
                && tool.definition == crate::execution::kinds::definition(record)
            {
                continue;
            }
            // Another tool may still hold this name (a rename or swap made elsewhere).
            if let Some(other) = current.as_ref().and_then(|t| t.custom_id())
                && other != record.id
            {
                self.registry.remove_custom(&record.owner, other);
            }
            match self.register(record) {
                Ok(()) => changed += 1,
                Err(why) => {
                    tracing::warn!(tool = %record.name, id = %record.id, owner = %record.owner, error = %why, "stored tool could not be registered");
                    if self.registry.remove_custom(&record.owner, &record.id) {
                        changed += 1;
                    }
                }
            }
        }
        Ok(changed)
    }

    /// Brings the registry in line with a committed record.
    pub(crate) fn sync(&self, record: &CustomToolRecord) {
        if record.status != ToolStatus::Active {
            self.registry.remove_custom(&record.owner, &record.id);
            return;
        }
        if let Err(why) = self.register(record) {
            // The checks before the write make this unreachable; if it happens anyway the tool
            // stays out of the registry rather than half in it.
            tracing::error!(tool = %record.name, error = %why, "committed tool could not be registered");
            self.registry.remove_custom(&record.owner, &record.id);
        }
    }

    pub(crate) fn register(&self, record: &CustomToolRecord) -> Result<(), String> {
        let executor = self
            .executor_for(ExecutorSource {
                kind: record.kind,
                tool_id: &record.id,
                name: &record.name,
                owner: &record.owner,
                code: &record.code,
                permissions: record.permissions.clone(),
                declared: dependencies::declared_names(record),
                config_values: true,
                timeout: crate::tool_settings::timeout(&record.metadata),
                packages: super::npm::package_lock(&record.metadata).map(std::sync::Arc::new),
            })
            .map_err(|e| e.to_string())?;
        let tool = RegisteredTool::new(
            crate::execution::kinds::definition(record),
            ToolOrigin::Custom {
                id: record.id.clone(),
                owner: record.owner.clone(),
            },
            record.permissions.clone(),
            executor,
        )
        .map_err(|e| e.to_string())?
        .with_version(record.version)
        .with_requires_approval(record.requires_approval)
        .with_agent_scope(crate::execution::kinds::agent_scope(
            record.kind,
            &record.code,
        ));
        self.registry.upsert_custom(tool).map_err(|e| e.to_string())
    }
}
