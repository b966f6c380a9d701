//! End to end with the real cipher: a secret sealed above the store is stored only as sealed
//! text (the plaintext is nowhere in the database files), reads back and opens, and a sealed
//! value copied into another entry does not open there.

use std::collections::BTreeMap;

use chrono::Utc;
use toolsmith_core::config::check_entry_values;
use toolsmith_core::{ConfigEntryRecord, ConfigServiceRecord, StoredValue};
use toolsmith_secrets::{Cipher, SecretKey, SecretPlace};
use toolsmith_store::{ConfigStore, SqliteStore};

pub(crate) const SECRET: &str = "sk-live-THIS-IS-THE-PLAINTEXT-4242";

pub(crate) fn sealed_entry(
    cipher: &Cipher,
    service: &ConfigServiceRecord,
    label: &str,
    secret: &str,
) -> ConfigEntryRecord {
    let input: BTreeMap<String, serde_json::Value> = serde_json::from_value(
        serde_json::json!({"api_key": secret, "base_url": "https://api.example.test"}),
    )
    .unwrap();
    check_entry_values(&service.fields, &input).unwrap();
    let id = ConfigEntryRecord::new_id();
    let mut values = BTreeMap::new();
    for field in &service.fields {
        let value = &input[&field.name];
        let stored = match field.kind {
            toolsmith_core::FieldKind::Secret => {
                let place = SecretPlace {
                    owner: &service.owner,
                    service_id: &service.id,
                    entry_id: &id,
                    field: &field.name,
                };
                StoredValue::Secret(cipher.seal(value.as_str().unwrap(), &place).unwrap())
            }
            kind => StoredValue::plain(kind, value).unwrap(),
        };
        values.insert(field.name.clone(), stored);
    }
    let now = Utc::now();
    let entry = ConfigEntryRecord {
        id,
        service_id: service.id.clone(),
        label: label.to_owned(),
        is_default: false,
        values,
        revision: 1,
        created_at: now,
        updated_at: now,
    };
    entry.validate(service).unwrap();
    entry
}

pub(crate) fn open_secret(
    cipher: &Cipher,
    service: &ConfigServiceRecord,
    entry: &ConfigEntryRecord,
) -> Result<String, toolsmith_secrets::SecretError> {
    let StoredValue::Secret(sealed) = &entry.values["api_key"] else {
        panic!("api_key is not stored sealed");
    };
    let place = SecretPlace {
        owner: &service.owner,
        service_id: &entry.service_id,
        entry_id: &entry.id,
        field: "api_key",
    };
    cipher.open(sealed, &place).map(|s| s.to_string())
}

#[tokio::test]
async fn plaintext_secrets_never_reach_the_database_files() {
    let dir = tempfile::tempdir().unwrap();
    let (key, _) = SecretKey::load_or_create_file(&dir.path().join("secret.key")).unwrap();
    let cipher = Cipher::new(&key);
    let db = dir.path().join("toolsmith.db");
    let store = SqliteStore::open(&db).await.unwrap();

    let mut service = ConfigServiceRecord::new("alice", "smtp", Utc::now());
    service.multi_entry = true;
    service.validate().unwrap();
    let service = store.create_config_service(service).await.unwrap();
    let work = store
        .create_config_entry("alice", sealed_entry(&cipher, &service, "work", SECRET))
        .await
        .unwrap();
    let home = store
        .create_config_entry(
            "alice",
            sealed_entry(&cipher, &service, "home", "other-secret-value"),
        )
        .await
        .unwrap();

    // Reads back and opens under its own place.
    let back = store
        .get_config_entry("alice", &work.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(open_secret(&cipher, &service, &back).unwrap(), SECRET);

    // Every file of the database (main file, WAL, shared memory) lacks the plaintext.
    // (The plain base_url is found, so the scan does see stored values.)
    let plain = b"https://api.example.test";
    let mut files = 0;
    let mut plain_seen = false;
    for file in std::fs::read_dir(dir.path()).unwrap() {
        let path = file.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("toolsmith.db") {
            continue;
        }
        files += 1;
        let bytes = std::fs::read(&path).unwrap();
        plain_seen |= bytes.windows(plain.len()).any(|w| w == plain);
        assert!(
            !bytes.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()),
            "{name} holds the plaintext secret"
        );
    }
    assert!(files >= 1 && plain_seen);

    // Copying work's sealed key into home's row (a tampered database) does not open there.
    let mut swapped = home.clone();
    swapped
        .values
        .insert("api_key".to_owned(), work.values["api_key"].clone());
    let swapped = store
        .update_config_entry("alice", &swapped, 1)
        .await
        .unwrap();
    let err = open_secret(&cipher, &service, &swapped).unwrap_err();
    assert_eq!(err.code(), "secret_decrypt_failed");
}
