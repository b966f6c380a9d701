//! The Config Center (the external APIs tools need, and their values) as the service sees it.
//!
//! - [`ops`] — the operations of REST, the CLI and the tools' declarations: services and
//!   entries, sealed on the way in and masked on the way out, every write audited.
//! - [`dependencies`] — what config a tool declares, keeping the Config Center in step with
//!   it, and refusing to run a tool whose config is missing.
//! - this module — the run-time side, below.
//!
//! The Config Center at run time: an owner's services and entries, decrypted, in the three
//! shapes tools need, and the cache that keeps them off the call path.
//!
//! - the JS snapshot (`utils.getApiKey` …), limited to the services a tool declares;
//! - the `store.*` values of HTTP tools (`store.<service>_<field>` or `store.<service>.<field>`,
//!   from the service's default entry);
//! - the secret values the scrubber must redact from this owner's results.
//!
//! [`ConfigCache`] holds one decrypted [`OwnerConfig`] per owner, loaded on first use and
//! dropped on every Config Center write of that owner (this process's writes; another
//! process's writes are seen within [`CACHE_TTL`]). A read that raced a write never puts its
//! older snapshot back: every invalidation bumps a generation, and a snapshot read under an
//! older generation is returned to its caller but not cached. Plaintext lives only in this cache and in
//! the executions that use it; it is never written anywhere.

pub(crate) mod dependencies;
pub mod ops;

pub use ops::{EntryInput, EntryView, ServiceInput, ServicePatch, ServiceView};

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use toolsmith_core::{ConfigServiceRecord, StoredValue};
use toolsmith_secrets::{Cipher, SecretPlace};
use toolsmith_store::{ConfigServiceEntries, Store};

use crate::error::ServiceError;
use crate::execution::http_tool::StoreValues;
use crate::governance::scrubbing::SecretSource;

/// How long a cached owner config is trusted when another process may write.
pub const CACHE_TTL: Duration = Duration::from_secs(5);

/// One entry, decrypted. Its `Debug` shows the field names, never the values.
#[derive(Clone)]
pub struct PlainEntry {
    pub label: String,
    pub is_default: bool,
    pub values: BTreeMap<String, Value>,
}

impl std::fmt::Debug for PlainEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlainEntry")
            .field("label", &self.label)
            .field("is_default", &self.is_default)
            .field("values", &self.values.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// One service and its decrypted entries.
#[derive(Debug, Clone)]
pub struct PlainService {
    pub service: ConfigServiceRecord,
    pub entries: Vec<PlainEntry>,
}

impl PlainService {
    /// The default entry, or the first.
    pub fn default_entry(&self) -> Option<&PlainEntry> {
        self.entries
            .iter()
            .find(|e| e.is_default)
            .or_else(|| self.entries.first())
    }

    /// The required fields the default entry lacks (all of them without an entry).
    pub fn missing(&self) -> Vec<String> {
        let entry = self.default_entry();
        self.service
            .fields
            .iter()
            .filter(|f| f.required)
            .filter(|f| {
                entry.is_none_or(|e| match e.values.get(&f.name) {
                    None | Some(Value::Null) => true,
                    Some(Value::String(s)) => s.is_empty(),
                    Some(_) => false,
                })
            })
            .map(|f| f.name.clone())
            .collect()
    }

    fn snapshot(&self) -> Value {
        let s = &self.service;
        json!({
            "service": {
                "name": s.name,
                "displayName": s.display_name,
                "description": s.description,
                "category": s.category,
                "docsUrl": s.docs_url,
                "multiEntry": s.multi_entry,
            },
            "entries": self.entries.iter().map(|e| json!({
                "label": e.label,
                "isDefault": e.is_default,
                "values": e.values,
            })).collect::<Vec<_>>(),
        })
    }
}

/// Everything one owner has configured, decrypted.
#[derive(Debug, Clone, Default)]
pub struct OwnerConfig {
    pub services: BTreeMap<String, PlainService>,
}

impl OwnerConfig {
    /// Decrypts a store snapshot. A value that cannot be opened (wrong key, tampered row) is
    /// left out with a warning: the tool then sees it as missing, never as garbage.
    pub fn open(owner: &str, snapshot: Vec<ConfigServiceEntries>, cipher: Option<&Cipher>) -> Self {
        let mut services = BTreeMap::new();
        for ConfigServiceEntries { service, entries } in snapshot {
            let entries = entries
                .into_iter()
                .map(|entry| {
                    let mut values = BTreeMap::new();
                    for (field, stored) in &entry.values {
                        let value = match stored {
                            StoredValue::Secret(sealed) => {
                                let place = SecretPlace {
                                    owner,
                                    service_id: &service.id,
                                    entry_id: &entry.id,
                                    field,
                                };
                                match cipher.map(|c| c.open(sealed, &place)) {
                                    Some(Ok(plain)) => Value::String(plain.to_string()),
                                    Some(Err(e)) => {
                                        tracing::warn!(service = %service.name, entry = %entry.label, field, error = %e, "cannot decrypt a config value");
                                        continue;
                                    }
                                    None => continue,
                                }
                            }
                            other => other.plain_json().unwrap_or(Value::Null),
                        };
                        values.insert(field.clone(), value);
                    }
                    PlainEntry {
                        label: entry.label,
                        is_default: entry.is_default,
                        values,
                    }
                })
                .collect();
            services.insert(service.name.clone(), PlainService { service, entries });
        }
        OwnerConfig { services }
    }

    /// The JS snapshot of the services named in `declared` (those that exist).
    pub fn js_snapshot<'a>(&self, declared: impl IntoIterator<Item = &'a str>) -> Value {
        let mut out = Map::new();
        for name in declared {
            if let Some(service) = self.services.get(name) {
                out.insert(name.to_owned(), service.snapshot());
            }
        }
        Value::Object(out)
    }

    /// The value of `store.<key>` for HTTP tools: `<service>.<field>`, or `<service>_<field>`
    /// for a field of the service (`smile_api_key` = field `api_key` of service `smile`).
    pub fn store_value(&self, key: &str) -> Option<String> {
        let (service, field) = match key.split_once('.') {
            Some((service, field)) => (self.services.get(service)?, field.to_owned()),
            None => self.services.values().find_map(|s| {
                let rest = key
                    .strip_prefix(s.service.name.as_str())?
                    .strip_prefix('_')?;
                s.service.field(rest).map(|_| (s, rest.to_owned()))
            })?,
        };
        match service.default_entry()?.values.get(&field)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    /// Every secret value, for the scrubber.
    pub fn secrets(&self) -> Vec<String> {
        let mut out = Vec::new();
        for service in self.services.values() {
            for field in service
                .service
                .fields
                .iter()
                .filter(|f| f.kind == toolsmith_core::FieldKind::Secret)
            {
                for entry in &service.entries {
                    if let Some(Value::String(s)) = entry.values.get(&field.name) {
                        out.push(s.clone());
                    }
                }
            }
        }
        out
    }
}

/// The decrypted configs of the owners seen lately.
pub struct ConfigCache {
    store: Arc<dyn Store>,
    cipher: Option<Arc<Cipher>>,
    cached: Mutex<Cached>,
}

/// What the cache holds, and how many invalidations it has seen.
#[derive(Default)]
struct Cached {
    owners: HashMap<String, (Instant, Arc<OwnerConfig>)>,
    generation: u64,
}

impl std::fmt::Debug for ConfigCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cached = self.lock();
        f.debug_struct("ConfigCache")
            .field("owners", &cached.owners.len())
            .field("generation", &cached.generation)
            .finish_non_exhaustive()
    }
}

impl ConfigCache {
    pub fn new(store: Arc<dyn Store>, cipher: Option<Arc<Cipher>>) -> ConfigCache {
        ConfigCache {
            store,
            cipher,
            cached: Mutex::new(Cached::default()),
        }
    }

    pub fn cipher(&self) -> Option<&Arc<Cipher>> {
        self.cipher.as_ref()
    }

    /// `owner`'s config, from the cache when fresh.
    pub async fn owner(&self, owner: &str) -> Result<Arc<OwnerConfig>, ServiceError> {
        let read_at = {
            let cached = self.lock();
            if let Some((at, config)) = cached.owners.get(owner)
                && at.elapsed() < CACHE_TTL
            {
                return Ok(config.clone());
            }
            cached.generation
        };
        let snapshot = self.store.config_snapshot(owner).await?;
        let config = Arc::new(OwnerConfig::open(owner, snapshot, self.cipher.as_deref()));
        self.fill(owner, read_at, config.clone());
        Ok(config)
    }

    /// The generation a read starts under (see [`ConfigCache::fill`]).
    #[cfg(test)]
    fn generation(&self) -> u64 {
        self.lock().generation
    }

    /// Caches `config`, read from the store under generation `read_at`, unless an invalidation
    /// came since: then a write may have committed after the read, and the snapshot is stale.
    fn fill(&self, owner: &str, read_at: u64, config: Arc<OwnerConfig>) {
        let mut cached = self.lock();
        if cached.generation == read_at {
            cached
                .owners
                .insert(owner.to_owned(), (Instant::now(), config));
        }
    }

    /// Forgets `owner`'s config (after a write), and keeps any read under way from caching
    /// what it read before the write.
    pub fn invalidate(&self, owner: &str) {
        let mut cached = self.lock();
        cached.generation += 1;
        cached.owners.remove(owner);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl StoreValues for ConfigCache {
    async fn for_owner(&self, owner: &str) -> BTreeMap<String, String> {
        let Ok(config) = self.owner(owner).await else {
            return BTreeMap::new();
        };
        let mut out = BTreeMap::new();
        for service in config.services.values() {
            for field in &service.service.fields {
                for key in [
                    format!("{}_{}", service.service.name, field.name),
                    format!("{}.{}", service.service.name, field.name),
                ] {
                    if let Some(value) = config.store_value(&key) {
                        out.insert(key, value);
                    }
                }
            }
        }
        out
    }
}

#[async_trait]
impl SecretSource for ConfigCache {
    async fn secrets_of(&self, owner: &str) -> Result<Vec<String>, String> {
        self.owner(owner)
            .await
            .map(|config| config.secrets())
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
pub(crate) mod tests;
