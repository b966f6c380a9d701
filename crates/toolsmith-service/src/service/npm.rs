//! A JS tool's npm dependencies in its lifecycle: `metadata.dependencies` (what the tool
//! declares: `[{name, version}]`) is resolved and installed when the tool is created or its
//! dependencies change, and what it resolved to is kept as `metadata.packageLock`, which only
//! the service writes: a lock given by a caller is replaced, never trusted. A run finds its
//! packages from the lock (`packages::Installer::packages`), offline when the cache has them.

use std::sync::Arc;

use serde_json::Value;
use toolsmith_core::ToolKind;

use super::ToolService;
use crate::error::ServiceError;
use crate::packages::{Dependency, PackageError, PackageLock};

/// The key of the declared dependencies in a tool's metadata.
pub(crate) const DEPENDENCIES: &str = "dependencies";
/// The key of the resolved tree in a tool's metadata (written by the service alone).
pub(crate) const PACKAGE_LOCK: &str = "packageLock";

/// The dependencies `metadata` declares (none when absent).
pub(crate) fn declared(metadata: &Value) -> Result<Vec<Dependency>, ServiceError> {
    match metadata.get(DEPENDENCIES) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(value) => serde_json::from_value(value.clone()).map_err(|e| {
            ServiceError::Validation(format!(
                "dependencies must be a list of {{\"name\": \"<npm package>\", \"version\": \"<semver range>\"}}: {e}"
            ))
        }),
    }
}

/// Puts `version`'s dependencies and lock into `metadata` (removing them where `version` has
/// none): what a rollback to that version restores.
pub(crate) fn restore(metadata: &mut Value, version: &Value) {
    let Some(object) = metadata.as_object_mut() else {
        return;
    };
    for key in [DEPENDENCIES, PACKAGE_LOCK] {
        match version.get(key) {
            Some(value) => object.insert(key.to_owned(), value.clone()),
            None => object.remove(key),
        };
    }
}

/// The resolved tree a stored tool runs with.
pub fn package_lock(metadata: &Value) -> Option<PackageLock> {
    metadata
        .get(PACKAGE_LOCK)
        .and_then(|lock| serde_json::from_value(lock.clone()).ok())
        .filter(|lock: &PackageLock| !lock.packages.is_empty())
}

impl ToolService {
    /// Settles `metadata`'s dependencies for a tool of `kind`: keeps `current`'s lock when
    /// the declaration did not change, resolves and installs it otherwise (network), and drops
    /// the lock when nothing is declared.
    pub(crate) async fn settle_packages(
        &self,
        kind: ToolKind,
        metadata: &mut Value,
        current: Option<&Value>,
    ) -> Result<(), ServiceError> {
        let declared = declared(metadata)?;
        let Some(object) = metadata.as_object_mut() else {
            return Ok(());
        };
        object.remove(PACKAGE_LOCK);
        if declared.is_empty() {
            return Ok(());
        }
        if kind != ToolKind::Js {
            return Err(ServiceError::Validation(format!(
                "dependencies are for JS tools: a {kind} tool cannot import npm packages; remove dependencies"
            )));
        }
        self.installer.check(&declared).map_err(package_error)?;
        if let Some(current) = current
            && self::declared(current).ok().as_ref() == Some(&declared)
            && let Some(lock) = current.get(PACKAGE_LOCK)
        {
            object.insert(PACKAGE_LOCK.to_owned(), lock.clone());
            return Ok(());
        }
        let lock = self
            .installer
            .install(&declared)
            .await
            .map_err(package_error)?;
        let lock = serde_json::to_value(lock)
            .map_err(|e| ServiceError::Validation(format!("the package lock: {e}")))?;
        object.insert(PACKAGE_LOCK.to_owned(), lock);
        Ok(())
    }

    /// The packages a one-off run of a `kind` definition with `metadata` runs with (a dry
    /// run, code run once): its `dependencies` resolved and installed with the same checks
    /// as a tool's create, stored nowhere but the package cache.
    pub(crate) async fn one_off_packages(
        &self,
        kind: ToolKind,
        metadata: Option<&Value>,
    ) -> Result<Option<Arc<PackageLock>>, ServiceError> {
        let Some(metadata) = metadata else {
            return Ok(None);
        };
        let mut metadata = metadata.clone();
        self.settle_packages(kind, &mut metadata, None).await?;
        Ok(package_lock(&metadata).map(Arc::new))
    }
}

fn package_error(e: PackageError) -> ServiceError {
    ServiceError::Validation(format!("dependencies: {e}"))
}
