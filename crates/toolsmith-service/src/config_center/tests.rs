//! The run-time cache: a read that raced a write never caches what it read before the write,
//! and `Debug` of decrypted values shows names only.

use std::sync::Arc;

use serde_json::json;
use toolsmith_store::{SqliteStore, Store};

use super::OwnerConfig;
use crate::{Actor, Connectors, EntryInput, ServiceInput, ToolService, ToolServiceSettings};

/// A service on a fresh SQLite store with a Config Center key (also the scrubbing tests').
pub(crate) async fn service() -> (tempfile::TempDir, Arc<dyn Store>, Arc<ToolService>) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
    let key = toolsmith_secrets::SecretKey::generate().unwrap();
    let connectors = Connectors {
        cipher: Some(Arc::new(toolsmith_secrets::Cipher::new(&key))),
        ..Connectors::default()
    };
    let service = ToolService::open_with(ToolServiceSettings::default(), store.clone(), connectors)
        .await
        .unwrap();
    (dir, store, service)
}

/// Gives ada a `vault` service whose default entry holds `api_key = value`.
async fn set_key(service: &ToolService, ada: &Actor, value: &str) {
    service
        .create_config_service(
            ada,
            ServiceInput {
                name: "vault".to_owned(),
                ..ServiceInput::default()
            },
        )
        .await
        .unwrap();
    service
        .create_config_entry(
            ada,
            "vault",
            EntryInput {
                values: [("api_key".to_owned(), json!(value))].into(),
                ..EntryInput::default()
            },
        )
        .await
        .unwrap();
}

/// The interleaving of the race, step by step: a read takes its snapshot, a write commits and
/// invalidates, and only then does the read try to cache what it took.
#[tokio::test]
async fn a_read_that_raced_an_invalidation_does_not_cache_its_snapshot() {
    let (_dir, store, service) = service().await;
    let ada = Actor::user("ada");
    let cache = service.config_cache();

    let read_at = cache.generation();
    let stale = store.config_snapshot("ada").await.unwrap();
    set_key(&service, &ada, "fresh-secret-value").await;
    cache.fill(
        "ada",
        read_at,
        Arc::new(OwnerConfig::open(
            "ada",
            stale,
            cache.cipher().map(|c| &**c),
        )),
    );

    let config = cache.owner("ada").await.unwrap();
    assert!(
        config.services.contains_key("vault"),
        "the cache kept the snapshot read before the write: {config:?}"
    );
    assert_eq!(config.secrets(), ["fresh-secret-value"]);

    // Without a write in between, a read is cached (the next one is served from memory).
    let read_at = cache.generation();
    let empty = Arc::new(OwnerConfig::default());
    cache.fill("ada", read_at, empty);
    assert!(cache.owner("ada").await.unwrap().services.is_empty());
}

#[tokio::test]
async fn debug_of_decrypted_config_shows_names_never_values() {
    let (_dir, _store, service) = service().await;
    let ada = Actor::user("ada");
    set_key(&service, &ada, "sk-live-Zq8xW3-debug").await;
    let config = service.config_cache().owner("ada").await.unwrap();
    let shown = format!("{config:?}");
    assert!(shown.contains("api_key"), "{shown}");
    assert!(!shown.contains("Zq8xW3"), "{shown}");
}
