//! Tests of the Config Center tables against real SQLite files: uniqueness, owner isolation,
//! defaults, cascades, revisions under concurrency, dependency sync, huge values, migration.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::TimeZone;
use rusqlite::Connection;
use toolsmith_core::{ConfigField, FieldKind, StoredValue};

use super::*;

struct Fixture {
    dir: tempfile::TempDir,
    store: SqliteStore,
}

async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("toolsmith.db"))
        .await
        .unwrap();
    Fixture { dir, store }
}

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 123_456_789)
        .unwrap()
}

fn service(owner: &str, name: &str) -> ConfigServiceRecord {
    let mut s = ConfigServiceRecord::new(owner, name, at(0));
    s.display_name = format!("The {name} API");
    s.description = Some("weather data".to_owned());
    s.category = Some("weather".to_owned());
    s.docs_url = Some("https://example.test/docs".to_owned());
    s
}

fn multi(owner: &str, name: &str) -> ConfigServiceRecord {
    let mut s = service(owner, name);
    s.multi_entry = true;
    s
}

fn entry(service: &ConfigServiceRecord, label: &str, secs: i64) -> ConfigEntryRecord {
    ConfigEntryRecord {
        id: ConfigEntryRecord::new_id(),
        service_id: service.id.clone(),
        label: label.to_owned(),
        is_default: false,
        values: BTreeMap::from([
            (
                "api_key".to_owned(),
                StoredValue::Secret(format!("v1:c2VhbGVk{label}")),
            ),
            (
                "base_url".to_owned(),
                StoredValue::Url("https://api.example.test".to_owned()),
            ),
        ]),
        revision: 1,
        created_at: at(secs),
        updated_at: at(secs),
    }
}

fn truncated(t: DateTime<Utc>) -> DateTime<Utc> {
    chrono::SubsecRound::trunc_subsecs(t, 6)
}

#[tokio::test]
async fn services_round_trip_and_list_by_name() {
    let f = fixture().await;
    let mut s = service("alice", "weatherapi");
    s.fields.push(ConfigField {
        name: "region".to_owned(),
        label: "Region".to_owned(),
        kind: FieldKind::Text,
        required: false,
        description: Some("eu or us".to_owned()),
    });
    s.registered_by = vec!["fetch_weather".to_owned()];
    let stored = f.store.create_config_service(s.clone()).await.unwrap();
    let mut expected = s.clone();
    expected.created_at = truncated(s.created_at);
    expected.updated_at = truncated(s.updated_at);
    assert_eq!(stored, expected);
    assert_eq!(
        f.store.get_config_service("alice", &s.id).await.unwrap(),
        Some(expected.clone())
    );
    assert_eq!(
        f.store
            .get_config_service_by_name("alice", "weatherapi")
            .await
            .unwrap(),
        Some(expected.clone())
    );
    f.store
        .create_config_service(service("alice", "anthropic"))
        .await
        .unwrap();
    let names: Vec<String> = f
        .store
        .list_config_services("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["anthropic", "weatherapi"]);
}

#[tokio::test]
async fn service_names_are_unique_per_owner_only() {
    let f = fixture().await;
    f.store
        .create_config_service(service("alice", "smtp"))
        .await
        .unwrap();
    let err = f
        .store
        .create_config_service(service("alice", "smtp"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::ConfigServiceNameTaken { name } if name == "smtp"),
        "{err}"
    );
    assert_eq!(err.code(), "config_service_name_taken");
    f.store
        .create_config_service(service("bob", "smtp"))
        .await
        .unwrap();

    // Renaming onto a taken name is refused too, and changes nothing.
    let other = f
        .store
        .create_config_service(service("alice", "other"))
        .await
        .unwrap();
    let mut renamed = other.clone();
    renamed.name = "smtp".to_owned();
    let err = f
        .store
        .update_config_service(&renamed, 1)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigServiceNameTaken { .. }),
        "{err}"
    );
    assert_eq!(
        f.store
            .get_config_service("alice", &other.id)
            .await
            .unwrap(),
        Some(other)
    );
}

#[tokio::test]
async fn owners_never_see_or_touch_each_others_config() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    let e = f
        .store
        .create_config_entry("alice", entry(&s, "default", 1))
        .await
        .unwrap();
    let bob = "bob";
    assert_eq!(f.store.get_config_service(bob, &s.id).await.unwrap(), None);
    assert_eq!(
        f.store
            .get_config_service_by_name(bob, "weatherapi")
            .await
            .unwrap(),
        None
    );
    assert!(f.store.list_config_services(bob).await.unwrap().is_empty());
    assert!(f.store.config_snapshot(bob).await.unwrap().is_empty());
    assert_eq!(f.store.get_config_entry(bob, &e.id).await.unwrap(), None);
    let not_found_service = |err: StoreError| {
        assert!(
            matches!(err, StoreError::ConfigServiceNotFound { .. }),
            "{err}"
        );
    };
    let not_found_entry = |err: StoreError| {
        assert!(
            matches!(err, StoreError::ConfigEntryNotFound { .. }),
            "{err}"
        );
    };
    not_found_service(f.store.list_config_entries(bob, &s.id).await.unwrap_err());
    let mut stolen = s.clone();
    stolen.owner = bob.to_owned();
    not_found_service(f.store.update_config_service(&stolen, 1).await.unwrap_err());
    not_found_service(
        f.store
            .delete_config_service(bob, &s.id, None)
            .await
            .unwrap_err(),
    );
    not_found_service(
        f.store
            .create_config_entry(bob, entry(&s, "mine", 2))
            .await
            .unwrap_err(),
    );
    not_found_entry(f.store.update_config_entry(bob, &e, 1).await.unwrap_err());
    not_found_entry(
        f.store
            .delete_config_entry(bob, &e.id, None)
            .await
            .unwrap_err(),
    );
    not_found_entry(
        f.store
            .set_default_config_entry(bob, &e.id)
            .await
            .unwrap_err(),
    );
    // Alice's data is intact.
    assert_eq!(
        f.store.list_config_entries("alice", &s.id).await.unwrap(),
        vec![e]
    );
}

#[tokio::test]
async fn updates_are_compare_and_swap_on_the_revision() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    let mut changed = s.clone();
    changed.display_name = "WeatherAPI.com".to_owned();
    changed.multi_entry = true;
    changed.updated_at = at(10);
    changed.created_at = at(999); // ignored: creation time is kept
    let stored = f.store.update_config_service(&changed, 1).await.unwrap();
    assert_eq!(stored.revision, 2);
    assert_eq!(stored.created_at, s.created_at);
    assert_eq!(stored.updated_at, truncated(at(10)));
    assert_eq!(
        f.store.get_config_service("alice", &s.id).await.unwrap(),
        Some(stored.clone())
    );
    let err = f
        .store
        .update_config_service(&changed, 1)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::ConfigRevisionConflict {
                expected: 1,
                actual: 2,
                ..
            }
        ),
        "{err}"
    );
    let err = f
        .store
        .delete_config_service("alice", &s.id, Some(1))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "config_revision_conflict");
    f.store
        .delete_config_service("alice", &s.id, Some(2))
        .await
        .unwrap();
    assert_eq!(
        f.store.get_config_service("alice", &s.id).await.unwrap(),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_updates_of_one_revision_let_exactly_one_win() {
    let f = fixture().await;
    let store = Arc::new(f.store);
    let s = store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let e = store
        .create_config_entry("alice", entry(&s, "work", 1))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let (store, s, e) = (Arc::clone(&store), s.clone(), e.clone());
        tasks.push(tokio::spawn(async move {
            let mut svc = s;
            svc.display_name = format!("writer {i}");
            let a = store.update_config_service(&svc, 1).await;
            let mut ent = e;
            ent.values.insert(
                "base_url".to_owned(),
                StoredValue::Url(format!("https://{i}.test")),
            );
            let b = store.update_config_entry("alice", &ent, 1).await;
            (a.is_ok(), b.is_ok())
        }));
    }
    let mut services_won = 0;
    let mut entries_won = 0;
    for t in tasks {
        let (a, b) = t.await.unwrap();
        services_won += usize::from(a);
        entries_won += usize::from(b);
    }
    assert_eq!((services_won, entries_won), (1, 1));
    assert_eq!(
        store
            .get_config_service("alice", &s.id)
            .await
            .unwrap()
            .unwrap()
            .revision,
        2
    );
    assert_eq!(
        store
            .get_config_entry("alice", &e.id)
            .await
            .unwrap()
            .unwrap()
            .revision,
        2
    );
}

#[tokio::test]
async fn the_first_entry_is_the_default_and_single_entry_services_take_one() {
    let f = fixture().await;
    let single = f
        .store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    let first = f
        .store
        .create_config_entry("alice", entry(&single, "default", 1))
        .await
        .unwrap();
    assert!(first.is_default);
    let err = f
        .store
        .create_config_entry("alice", entry(&single, "second", 2))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::ConfigSingleEntry { name } if name == "weatherapi"),
        "{err}"
    );
    let err = f
        .store
        .create_config_entry(
            "alice",
            ConfigEntryRecord {
                service_id: "svc_missing".to_owned(),
                ..entry(&single, "x", 3)
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigServiceNotFound { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn labels_are_unique_per_service() {
    let f = fixture().await;
    let a = f
        .store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let b = f
        .store
        .create_config_service(multi("alice", "imap"))
        .await
        .unwrap();
    f.store
        .create_config_entry("alice", entry(&a, "work", 1))
        .await
        .unwrap();
    let err = f
        .store
        .create_config_entry("alice", entry(&a, "work", 2))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::ConfigEntryLabelTaken { label } if label == "work"),
        "{err}"
    );
    // The same label in another service is fine.
    f.store
        .create_config_entry("alice", entry(&b, "work", 3))
        .await
        .unwrap();
    // Renaming onto a taken label is refused.
    let home = f
        .store
        .create_config_entry("alice", entry(&a, "home", 4))
        .await
        .unwrap();
    let mut clash = home.clone();
    clash.label = "work".to_owned();
    let err = f
        .store
        .update_config_entry("alice", &clash, 1)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigEntryLabelTaken { .. }),
        "{err}"
    );
    assert_eq!(
        f.store.get_config_entry("alice", &home.id).await.unwrap(),
        Some(home)
    );
}

#[tokio::test]
async fn exactly_one_default_moves_with_set_default_create_and_delete() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let one = f
        .store
        .create_config_entry("alice", entry(&s, "one", 1))
        .await
        .unwrap();
    let two = f
        .store
        .create_config_entry("alice", entry(&s, "two", 2))
        .await
        .unwrap();
    assert!(one.is_default && !two.is_default);
    let defaults = |list: &[ConfigEntryRecord]| -> Vec<String> {
        list.iter()
            .filter(|e| e.is_default)
            .map(|e| e.label.clone())
            .collect()
    };

    let made = f
        .store
        .set_default_config_entry("alice", &two.id)
        .await
        .unwrap();
    assert!(made.is_default);
    assert_eq!(made.revision, 2);
    let list = f.store.list_config_entries("alice", &s.id).await.unwrap();
    assert_eq!(defaults(&list), ["two"]);
    assert_eq!(list[0].label, "two", "the default is listed first");
    assert_eq!(list[1].revision, 2, "losing the default is a change too");
    // Setting it again changes nothing.
    assert_eq!(
        f.store
            .set_default_config_entry("alice", &two.id)
            .await
            .unwrap()
            .revision,
        2
    );

    // A new entry asking to be the default takes it over.
    let mut three = entry(&s, "three", 3);
    three.is_default = true;
    f.store.create_config_entry("alice", three).await.unwrap();
    let list = f.store.list_config_entries("alice", &s.id).await.unwrap();
    assert_eq!(defaults(&list), ["three"]);

    // Deleting the default promotes the oldest remaining entry.
    let three_id = list[0].id.clone();
    f.store
        .delete_config_entry("alice", &three_id, None)
        .await
        .unwrap();
    let list = f.store.list_config_entries("alice", &s.id).await.unwrap();
    assert_eq!(defaults(&list), ["one"]);
    // Deleting a non-default leaves the default alone; the last one can go too.
    f.store
        .delete_config_entry("alice", &two.id, None)
        .await
        .unwrap();
    f.store
        .delete_config_entry("alice", &one.id, Some(3))
        .await
        .unwrap();
    assert!(
        f.store
            .list_config_entries("alice", &s.id)
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn the_database_itself_refuses_a_second_default() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    f.store
        .create_config_entry("alice", entry(&s, "one", 1))
        .await
        .unwrap();
    let two = f
        .store
        .create_config_entry("alice", entry(&s, "two", 2))
        .await
        .unwrap();
    let id = two.id.clone();
    let err = f
        .store
        .write(move |conn| {
            conn.execute(
                "UPDATE config_entries SET is_default = 1 WHERE id = ?1",
                [&id],
            )
            .map_err(rows::backend)
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("UNIQUE"), "{err}");
}

#[tokio::test]
async fn entry_updates_keep_the_default_flag_and_cannot_move_services() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let other = f
        .store
        .create_config_service(multi("alice", "imap"))
        .await
        .unwrap();
    let e = f
        .store
        .create_config_entry("alice", entry(&s, "work", 1))
        .await
        .unwrap();
    let mut changed = e.clone();
    changed.label = "office".to_owned();
    changed.is_default = false; // ignored
    changed.values.remove("base_url");
    changed.updated_at = at(20);
    let stored = f
        .store
        .update_config_entry("alice", &changed, 1)
        .await
        .unwrap();
    assert!(stored.is_default);
    assert_eq!(stored.label, "office");
    assert_eq!(stored.revision, 2);
    assert!(!stored.values.contains_key("base_url"));
    assert_eq!(
        f.store.get_config_entry("alice", &e.id).await.unwrap(),
        Some(stored.clone())
    );
    let mut moved = stored.clone();
    moved.service_id = other.id.clone();
    let err = f
        .store
        .update_config_entry("alice", &moved, 2)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigEntryNotFound { .. }),
        "{err}"
    );
    let err = f
        .store
        .delete_config_entry("alice", &e.id, Some(1))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigRevisionConflict { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn deleting_a_service_deletes_its_entries() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let keep = f
        .store
        .create_config_service(service("alice", "keep"))
        .await
        .unwrap();
    let e1 = f
        .store
        .create_config_entry("alice", entry(&s, "a", 1))
        .await
        .unwrap();
    f.store
        .create_config_entry("alice", entry(&s, "b", 2))
        .await
        .unwrap();
    let kept = f
        .store
        .create_config_entry("alice", entry(&keep, "k", 3))
        .await
        .unwrap();
    f.store
        .delete_config_service("alice", &s.id, None)
        .await
        .unwrap();
    assert_eq!(
        f.store.get_config_entry("alice", &e1.id).await.unwrap(),
        None
    );
    let left: i64 = f
        .store
        .read(|conn| {
            conn.query_row("SELECT count(*) FROM config_entries", [], |r| r.get(0))
                .map_err(rows::backend)
        })
        .await
        .unwrap();
    assert_eq!(left, 1);
    assert_eq!(
        f.store.get_config_entry("alice", &kept.id).await.unwrap(),
        Some(kept)
    );
    let err = f
        .store
        .delete_config_service("alice", &s.id, None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigServiceNotFound { .. }),
        "{err}"
    );
}

#[tokio::test]
async fn huge_and_hostile_values_are_stored_as_data() {
    let f = fixture().await;
    let mut s = multi("alice", "hostile");
    s.fields.push(ConfigField {
        name: "notes".to_owned(),
        label: String::new(),
        kind: FieldKind::Text,
        required: false,
        description: None,
    });
    s.description = Some("'; DROP TABLE config_services; --".to_owned());
    let s = f.store.create_config_service(s).await.unwrap();
    let mut e = entry(&s, "Robert'); DROP TABLE config_entries;--", 1);
    let huge = "x".repeat(2 * 1024 * 1024);
    e.values
        .insert("notes".to_owned(), StoredValue::Text(huge.clone()));
    e.values.insert(
        "api_key".to_owned(),
        StoredValue::Secret(format!("v1:{}", "A".repeat(100_000))),
    );
    let stored = f
        .store
        .create_config_entry("alice", e.clone())
        .await
        .unwrap();
    let back = f
        .store
        .get_config_entry("alice", &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(back.values["notes"], StoredValue::Text(huge));
    assert_eq!(back.label, e.label);
    assert_eq!(
        f.store.list_config_services("alice").await.unwrap().len(),
        1
    );
    // Unicode and control characters in labels round-trip byte for byte.
    let odd = entry(&s, "ключ 🔑 \u{202e}evil", 2);
    let odd = f.store.create_config_entry("alice", odd).await.unwrap();
    assert_eq!(
        f.store
            .get_config_entry("alice", &odd.id)
            .await
            .unwrap()
            .unwrap()
            .label,
        "ключ 🔑 \u{202e}evil"
    );
}

#[tokio::test]
async fn the_snapshot_holds_every_service_with_its_entries() {
    let f = fixture().await;
    let a = f
        .store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let b = f
        .store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    f.store
        .create_config_entry("alice", entry(&a, "work", 1))
        .await
        .unwrap();
    f.store
        .create_config_entry("alice", entry(&a, "home", 2))
        .await
        .unwrap();
    let snap = f.store.config_snapshot("alice").await.unwrap();
    assert_eq!(snap.len(), 2);
    assert_eq!(snap[0].service.id, a.id);
    assert_eq!(
        snap[0]
            .entries
            .iter()
            .map(|e| e.label.as_str())
            .collect::<Vec<_>>(),
        ["work", "home"]
    );
    assert_eq!(snap[1].service.id, b.id);
    assert!(snap[1].entries.is_empty());
}

#[tokio::test]
async fn dependency_sync_registers_attaches_detaches_and_cleans_up() {
    let f = fixture().await;
    // A service a person created: it stays even when no tool needs it.
    let manual = f
        .store
        .create_config_service(service("alice", "manual"))
        .await
        .unwrap();

    let changes = f
        .store
        .sync_config_dependencies(
            "alice",
            "fetch_weather",
            vec![
                service("alice", "weatherapi"),
                service("alice", "manual"),
                service("alice", "weatherapi"),
            ],
        )
        .await
        .unwrap();
    assert_eq!(changes.created, ["weatherapi"]);
    assert_eq!(changes.attached, ["manual"]);
    assert!(changes.detached.is_empty() && changes.removed.is_empty());
    let weather = f
        .store
        .get_config_service_by_name("alice", "weatherapi")
        .await
        .unwrap()
        .unwrap();
    assert!(weather.auto_registered);
    assert_eq!(weather.registered_by, ["fetch_weather"]);
    let m = f
        .store
        .get_config_service("alice", &manual.id)
        .await
        .unwrap()
        .unwrap();
    assert!(!m.auto_registered);
    assert_eq!(m.registered_by, ["fetch_weather"]);
    assert_eq!(m.revision, 2);
    assert_eq!(m.display_name, manual.display_name);

    // A second tool needs weatherapi too; syncing again is a no-op.
    let changes = f
        .store
        .sync_config_dependencies("alice", "forecast", vec![service("alice", "weatherapi")])
        .await
        .unwrap();
    assert_eq!(changes.attached, ["weatherapi"]);
    let again = f
        .store
        .sync_config_dependencies("alice", "forecast", vec![service("alice", "weatherapi")])
        .await
        .unwrap();
    assert_eq!(again, ConfigDependencyChanges::default());

    // fetch_weather is deleted: weatherapi is still needed by forecast; manual stays.
    let changes = f
        .store
        .sync_config_dependencies("alice", "fetch_weather", vec![])
        .await
        .unwrap();
    assert_eq!(changes.detached, ["manual", "weatherapi"]);
    assert!(changes.removed.is_empty());

    // A service with an entry stays even when no tool needs it any more.
    let kept = f
        .store
        .create_config_service(service("alice", "kept"))
        .await
        .unwrap();
    f.store
        .sync_config_dependencies(
            "alice",
            "mailer",
            vec![service("alice", "smtp"), kept.clone()],
        )
        .await
        .unwrap();
    f.store
        .create_config_entry("alice", entry(&kept, "default", 1))
        .await
        .unwrap();

    // forecast and mailer go: weatherapi and smtp (auto, empty) are removed.
    let changes = f
        .store
        .sync_config_dependencies("alice", "forecast", vec![])
        .await
        .unwrap();
    assert_eq!(changes.removed, ["weatherapi"]);
    let changes = f
        .store
        .sync_config_dependencies("alice", "mailer", vec![])
        .await
        .unwrap();
    assert_eq!(changes.removed, ["smtp"]);
    assert_eq!(changes.detached, ["kept"]);
    let names: Vec<String> = f
        .store
        .list_config_services("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["kept", "manual"]);

    // Bob's services are untouched by Alice's syncs, and templates must be the owner's.
    let err = f
        .store
        .sync_config_dependencies("alice", "t", vec![service("bob", "x")])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bob"), "{err}");
    assert!(
        f.store
            .list_config_services("bob")
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_version_2_store_is_migrated_to_the_config_and_governance_tables() {
    let f = fixture().await;
    let path = f.dir.path().join("toolsmith.db");
    drop(f.store);
    {
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE execution_approvals; DROP TABLE approval_grants; DROP TABLE audit_log; \
             DROP TABLE policies; ALTER TABLE api_tokens DROP COLUMN agent_id; \
             DROP INDEX idx_config_entries_one_default; DROP TABLE config_entries; \
             DROP TABLE config_services; PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    let s = store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    store
        .create_config_entry("alice", entry(&s, "default", 1))
        .await
        .unwrap();
    let version: i64 = store
        .read(|conn| {
            conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                .map_err(rows::backend)
        })
        .await
        .unwrap();
    assert_eq!(version, schema::SCHEMA_VERSION);
    assert!(store.get_policy().await.unwrap().is_none());
    assert_eq!(store.count_pending_approvals(Utc::now()).await.unwrap(), 0);
}

#[tokio::test]
async fn unreadable_rows_are_reported_as_corrupt_not_panics() {
    let f = fixture().await;
    let s = f
        .store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    let e = f
        .store
        .create_config_entry("alice", entry(&s, "default", 1))
        .await
        .unwrap();
    let id = e.id.clone();
    f.store
        .write(move |conn| {
            conn.execute(
                "UPDATE config_entries SET field_values = '{\"api_key\": {\"plain\": 1}}' WHERE id = ?1",
                [&id],
            )
            .map_err(rows::backend)
        })
        .await
        .unwrap();
    let err = f.store.get_config_entry("alice", &e.id).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { path, reason } if path.ends_with("toolsmith.db") && reason.contains("config_entries")),
        "{err}"
    );
}
