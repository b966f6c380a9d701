//! The Config Center contract: uniqueness, owner isolation, defaults, cascades, revisions
//! under concurrency, dependency sync, huge and hostile values.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use toolsmith_core::{ConfigEntryRecord, ConfigField, ConfigServiceRecord, FieldKind, StoredValue};

use super::{Backend, on_both_backends};
use crate::{ConfigDependencyChanges, StoreError};

pub(crate) fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 123_456_789)
        .unwrap()
}

pub(crate) fn service(owner: &str, name: &str) -> ConfigServiceRecord {
    let mut s = ConfigServiceRecord::new(owner, name, at(0));
    s.display_name = format!("The {name} API");
    s.description = Some("weather data".to_owned());
    s.category = Some("weather".to_owned());
    s.docs_url = Some("https://example.test/docs".to_owned());
    s
}

pub(crate) fn multi(owner: &str, name: &str) -> ConfigServiceRecord {
    let mut s = service(owner, name);
    s.multi_entry = true;
    s
}

pub(crate) fn entry(service: &ConfigServiceRecord, label: &str, secs: i64) -> ConfigEntryRecord {
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

pub(crate) fn truncated(t: DateTime<Utc>) -> DateTime<Utc> {
    chrono::SubsecRound::trunc_subsecs(t, 6)
}

async fn services_round_trip_and_list_by_name(backend: &Backend) {
    let store = backend.store();
    let mut s = service("alice", "weatherapi");
    s.fields.push(ConfigField {
        name: "region".to_owned(),
        label: "Region".to_owned(),
        kind: FieldKind::Text,
        required: false,
        description: Some("eu or us".to_owned()),
    });
    s.registered_by = vec!["fetch_weather".to_owned()];
    let stored = store.create_config_service(s.clone()).await.unwrap();
    let mut expected = s.clone();
    expected.created_at = truncated(s.created_at);
    expected.updated_at = truncated(s.updated_at);
    assert_eq!(stored, expected);
    assert_eq!(
        store.get_config_service("alice", &s.id).await.unwrap(),
        Some(expected.clone())
    );
    assert_eq!(
        store
            .get_config_service_by_name("alice", "weatherapi")
            .await
            .unwrap(),
        Some(expected.clone())
    );
    store
        .create_config_service(service("alice", "anthropic"))
        .await
        .unwrap();
    let names: Vec<String> = store
        .list_config_services("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["anthropic", "weatherapi"]);
}

async fn service_names_are_unique_per_owner_only(backend: &Backend) {
    let store = backend.store();
    store
        .create_config_service(service("alice", "smtp"))
        .await
        .unwrap();
    let err = store
        .create_config_service(service("alice", "smtp"))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::ConfigServiceNameTaken { name } if name == "smtp"),
        "{err}"
    );
    assert_eq!(err.code(), "config_service_name_taken");
    store
        .create_config_service(service("bob", "smtp"))
        .await
        .unwrap();

    // Renaming onto a taken name is refused too, and changes nothing.
    let other = store
        .create_config_service(service("alice", "other"))
        .await
        .unwrap();
    let mut renamed = other.clone();
    renamed.name = "smtp".to_owned();
    let err = store.update_config_service(&renamed, 1).await.unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigServiceNameTaken { .. }),
        "{err}"
    );
    assert_eq!(
        store.get_config_service("alice", &other.id).await.unwrap(),
        Some(other)
    );
}

async fn owners_never_see_or_touch_each_others_config(backend: &Backend) {
    let store = backend.store();
    let s = store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    let e = store
        .create_config_entry("alice", entry(&s, "default", 1))
        .await
        .unwrap();
    let bob = "bob";
    assert_eq!(store.get_config_service(bob, &s.id).await.unwrap(), None);
    assert_eq!(
        store
            .get_config_service_by_name(bob, "weatherapi")
            .await
            .unwrap(),
        None
    );
    assert!(store.list_config_services(bob).await.unwrap().is_empty());
    assert!(store.config_snapshot(bob).await.unwrap().is_empty());
    assert_eq!(store.get_config_entry(bob, &e.id).await.unwrap(), None);
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
    not_found_service(store.list_config_entries(bob, &s.id).await.unwrap_err());
    let mut stolen = s.clone();
    stolen.owner = bob.to_owned();
    not_found_service(store.update_config_service(&stolen, 1).await.unwrap_err());
    not_found_service(
        store
            .delete_config_service(bob, &s.id, None)
            .await
            .unwrap_err(),
    );
    not_found_service(
        store
            .create_config_entry(bob, entry(&s, "mine", 2))
            .await
            .unwrap_err(),
    );
    not_found_entry(store.update_config_entry(bob, &e, 1).await.unwrap_err());
    not_found_entry(
        store
            .delete_config_entry(bob, &e.id, None)
            .await
            .unwrap_err(),
    );
    not_found_entry(
        store
            .set_default_config_entry(bob, &e.id)
            .await
            .unwrap_err(),
    );
    // Alice's data is intact.
    assert_eq!(
        store.list_config_entries("alice", &s.id).await.unwrap(),
        vec![e]
    );
}

async fn updates_are_compare_and_swap_on_the_revision(backend: &Backend) {
    let store = backend.store();
    let s = store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    let mut changed = s.clone();
    changed.display_name = "WeatherAPI.com".to_owned();
    changed.multi_entry = true;
    changed.updated_at = at(10);
    changed.created_at = at(999); // ignored: creation time is kept
    let stored = store.update_config_service(&changed, 1).await.unwrap();
    assert_eq!(stored.revision, 2);
    assert_eq!(stored.created_at, s.created_at);
    assert_eq!(stored.updated_at, truncated(at(10)));
    assert_eq!(
        store.get_config_service("alice", &s.id).await.unwrap(),
        Some(stored.clone())
    );
    let err = store.update_config_service(&changed, 1).await.unwrap_err();
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
    let err = store
        .delete_config_service("alice", &s.id, Some(1))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "config_revision_conflict");
    store
        .delete_config_service("alice", &s.id, Some(2))
        .await
        .unwrap();
    assert_eq!(
        store.get_config_service("alice", &s.id).await.unwrap(),
        None
    );
}

async fn concurrent_updates_of_one_revision_let_exactly_one_win(backend: &Backend) {
    let store = backend.store();
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

async fn the_first_entry_is_the_default_and_single_entry_services_take_one(backend: &Backend) {
    let store = backend.store();
    let single = store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    let first = store
        .create_config_entry("alice", entry(&single, "default", 1))
        .await
        .unwrap();
    assert!(first.is_default);
    let err = store
        .create_config_entry("alice", entry(&single, "second", 2))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::ConfigSingleEntry { name } if name == "weatherapi"),
        "{err}"
    );
    let err = store
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

async fn labels_are_unique_per_service(backend: &Backend) {
    let store = backend.store();
    let a = store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let b = store
        .create_config_service(multi("alice", "imap"))
        .await
        .unwrap();
    store
        .create_config_entry("alice", entry(&a, "work", 1))
        .await
        .unwrap();
    let err = store
        .create_config_entry("alice", entry(&a, "work", 2))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::ConfigEntryLabelTaken { label } if label == "work"),
        "{err}"
    );
    // The same label in another service is fine.
    store
        .create_config_entry("alice", entry(&b, "work", 3))
        .await
        .unwrap();
    // Renaming onto a taken label is refused.
    let home = store
        .create_config_entry("alice", entry(&a, "home", 4))
        .await
        .unwrap();
    let mut clash = home.clone();
    clash.label = "work".to_owned();
    let err = store
        .update_config_entry("alice", &clash, 1)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigEntryLabelTaken { .. }),
        "{err}"
    );
    assert_eq!(
        store.get_config_entry("alice", &home.id).await.unwrap(),
        Some(home)
    );
}

async fn exactly_one_default_moves_with_set_default_create_and_delete(backend: &Backend) {
    let store = backend.store();
    let s = store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let one = store
        .create_config_entry("alice", entry(&s, "one", 1))
        .await
        .unwrap();
    let two = store
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

    let made = store
        .set_default_config_entry("alice", &two.id)
        .await
        .unwrap();
    assert!(made.is_default);
    assert_eq!(made.revision, 2);
    let list = store.list_config_entries("alice", &s.id).await.unwrap();
    assert_eq!(defaults(&list), ["two"]);
    assert_eq!(list[0].label, "two", "the default is listed first");
    assert_eq!(list[1].revision, 2, "losing the default is a change too");
    // Setting it again changes nothing.
    assert_eq!(
        store
            .set_default_config_entry("alice", &two.id)
            .await
            .unwrap()
            .revision,
        2
    );

    // A new entry asking to be the default takes it over.
    let mut three = entry(&s, "three", 3);
    three.is_default = true;
    store.create_config_entry("alice", three).await.unwrap();
    let list = store.list_config_entries("alice", &s.id).await.unwrap();
    assert_eq!(defaults(&list), ["three"]);

    // Deleting the default promotes the oldest remaining entry.
    let three_id = list[0].id.clone();
    store
        .delete_config_entry("alice", &three_id, None)
        .await
        .unwrap();
    let list = store.list_config_entries("alice", &s.id).await.unwrap();
    assert_eq!(defaults(&list), ["one"]);
    // Deleting a non-default leaves the default alone; the last one can go too.
    store
        .delete_config_entry("alice", &two.id, None)
        .await
        .unwrap();
    store
        .delete_config_entry("alice", &one.id, Some(3))
        .await
        .unwrap();
    assert!(
        store
            .list_config_entries("alice", &s.id)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn entry_updates_keep_the_default_flag_and_cannot_move_services(backend: &Backend) {
    let store = backend.store();
    let s = store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let other = store
        .create_config_service(multi("alice", "imap"))
        .await
        .unwrap();
    let e = store
        .create_config_entry("alice", entry(&s, "work", 1))
        .await
        .unwrap();
    let mut changed = e.clone();
    changed.label = "office".to_owned();
    changed.is_default = false; // ignored
    changed.values.remove("base_url");
    changed.updated_at = at(20);
    let stored = store
        .update_config_entry("alice", &changed, 1)
        .await
        .unwrap();
    assert!(stored.is_default);
    assert_eq!(stored.label, "office");
    assert_eq!(stored.revision, 2);
    assert!(!stored.values.contains_key("base_url"));
    assert_eq!(
        store.get_config_entry("alice", &e.id).await.unwrap(),
        Some(stored.clone())
    );
    let mut moved = stored.clone();
    moved.service_id = other.id.clone();
    let err = store
        .update_config_entry("alice", &moved, 2)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigEntryNotFound { .. }),
        "{err}"
    );
    let err = store
        .delete_config_entry("alice", &e.id, Some(1))
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigRevisionConflict { .. }),
        "{err}"
    );
}

async fn deleting_a_service_deletes_its_entries(backend: &Backend) {
    let store = backend.store();
    let s = store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let keep = store
        .create_config_service(service("alice", "keep"))
        .await
        .unwrap();
    let e1 = store
        .create_config_entry("alice", entry(&s, "a", 1))
        .await
        .unwrap();
    store
        .create_config_entry("alice", entry(&s, "b", 2))
        .await
        .unwrap();
    let kept = store
        .create_config_entry("alice", entry(&keep, "k", 3))
        .await
        .unwrap();
    store
        .delete_config_service("alice", &s.id, None)
        .await
        .unwrap();
    assert_eq!(store.get_config_entry("alice", &e1.id).await.unwrap(), None);
    let left = backend.count_rows("config_entries").await;
    assert_eq!(left, 1);
    assert_eq!(
        store.get_config_entry("alice", &kept.id).await.unwrap(),
        Some(kept)
    );
    let err = store
        .delete_config_service("alice", &s.id, None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, StoreError::ConfigServiceNotFound { .. }),
        "{err}"
    );
}

async fn huge_and_hostile_values_are_stored_as_data(backend: &Backend) {
    let store = backend.store();
    let mut s = multi("alice", "hostile");
    s.fields.push(ConfigField {
        name: "notes".to_owned(),
        label: String::new(),
        kind: FieldKind::Text,
        required: false,
        description: None,
    });
    s.description = Some("'; DROP TABLE config_services; --".to_owned());
    let s = store.create_config_service(s).await.unwrap();
    let mut e = entry(&s, "Robert'); DROP TABLE config_entries;--", 1);
    let huge = "x".repeat(2 * 1024 * 1024);
    e.values
        .insert("notes".to_owned(), StoredValue::Text(huge.clone()));
    e.values.insert(
        "api_key".to_owned(),
        StoredValue::Secret(format!("v1:{}", "A".repeat(100_000))),
    );
    let stored = store.create_config_entry("alice", e.clone()).await.unwrap();
    let back = store
        .get_config_entry("alice", &stored.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(back.values["notes"], StoredValue::Text(huge));
    assert_eq!(back.label, e.label);
    assert_eq!(store.list_config_services("alice").await.unwrap().len(), 1);
    // Unicode and control characters in labels round-trip byte for byte.
    let odd = entry(&s, "ключ 🔑 \u{202e}evil", 2);
    let odd = store.create_config_entry("alice", odd).await.unwrap();
    assert_eq!(
        store
            .get_config_entry("alice", &odd.id)
            .await
            .unwrap()
            .unwrap()
            .label,
        "ключ 🔑 \u{202e}evil"
    );
}

async fn the_snapshot_holds_every_service_with_its_entries(backend: &Backend) {
    let store = backend.store();
    let a = store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let b = store
        .create_config_service(service("alice", "weatherapi"))
        .await
        .unwrap();
    store
        .create_config_entry("alice", entry(&a, "work", 1))
        .await
        .unwrap();
    store
        .create_config_entry("alice", entry(&a, "home", 2))
        .await
        .unwrap();
    let snap = store.config_snapshot("alice").await.unwrap();
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

async fn dependency_sync_registers_attaches_detaches_and_cleans_up(backend: &Backend) {
    let store = backend.store();
    // A service a person created: it stays even when no tool needs it.
    let manual = store
        .create_config_service(service("alice", "manual"))
        .await
        .unwrap();

    let changes = store
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
    let weather = store
        .get_config_service_by_name("alice", "weatherapi")
        .await
        .unwrap()
        .unwrap();
    assert!(weather.auto_registered);
    assert_eq!(weather.registered_by, ["fetch_weather"]);
    let m = store
        .get_config_service("alice", &manual.id)
        .await
        .unwrap()
        .unwrap();
    assert!(!m.auto_registered);
    assert_eq!(m.registered_by, ["fetch_weather"]);
    assert_eq!(m.revision, 2);
    assert_eq!(m.display_name, manual.display_name);

    // A second tool needs weatherapi too; syncing again is a no-op.
    let changes = store
        .sync_config_dependencies("alice", "forecast", vec![service("alice", "weatherapi")])
        .await
        .unwrap();
    assert_eq!(changes.attached, ["weatherapi"]);
    let again = store
        .sync_config_dependencies("alice", "forecast", vec![service("alice", "weatherapi")])
        .await
        .unwrap();
    assert_eq!(again, ConfigDependencyChanges::default());

    // fetch_weather is deleted: weatherapi is still needed by forecast; manual stays.
    let changes = store
        .sync_config_dependencies("alice", "fetch_weather", vec![])
        .await
        .unwrap();
    assert_eq!(changes.detached, ["manual", "weatherapi"]);
    assert!(changes.removed.is_empty());

    // A service with an entry stays even when no tool needs it any more.
    let kept = store
        .create_config_service(service("alice", "kept"))
        .await
        .unwrap();
    store
        .sync_config_dependencies(
            "alice",
            "mailer",
            vec![service("alice", "smtp"), kept.clone()],
        )
        .await
        .unwrap();
    store
        .create_config_entry("alice", entry(&kept, "default", 1))
        .await
        .unwrap();

    // forecast and mailer go: weatherapi and smtp (auto, empty) are removed.
    let changes = store
        .sync_config_dependencies("alice", "forecast", vec![])
        .await
        .unwrap();
    assert_eq!(changes.removed, ["weatherapi"]);
    let changes = store
        .sync_config_dependencies("alice", "mailer", vec![])
        .await
        .unwrap();
    assert_eq!(changes.removed, ["smtp"]);
    assert_eq!(changes.detached, ["kept"]);
    let names: Vec<String> = store
        .list_config_services("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, ["kept", "manual"]);

    // Bob's services are untouched by Alice's syncs, and templates must be the owner's.
    let err = store
        .sync_config_dependencies("alice", "t", vec![service("bob", "x")])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bob"), "{err}");
    assert!(store.list_config_services("bob").await.unwrap().is_empty());
}

async fn sealed_values_are_counted_across_owners_with_their_places(backend: &Backend) {
    let store = backend.store();
    // An empty store holds nothing sealed: start-up may create a new key.
    assert_eq!(
        store.sealed_values(16).await.unwrap(),
        crate::SealedSample::default()
    );
    let smtp = store
        .create_config_service(multi("alice", "smtp"))
        .await
        .unwrap();
    let weather = store
        .create_config_service(service("bob", "weatherapi"))
        .await
        .unwrap();
    let mail = store
        .create_config_service(service("bob", "mail"))
        .await
        .unwrap();
    let work = store
        .create_config_entry("alice", entry(&smtp, "work", 2))
        .await
        .unwrap();
    let home = store
        .create_config_entry("alice", entry(&smtp, "home", 3))
        .await
        .unwrap();
    // Only secrets count: text that looks sealed, URLs, numbers are not sealed values.
    let mut plain = entry(&weather, "default", 1);
    plain.values = BTreeMap::from([
        (
            "base_url".to_owned(),
            StoredValue::Url("https://api.example.test".to_owned()),
        ),
        (
            "region".to_owned(),
            StoredValue::Text("v1:not-sealed".to_owned()),
        ),
        ("retries".to_owned(), StoredValue::Number(3.into())),
    ]);
    store.create_config_entry("bob", plain).await.unwrap();
    // Another owner's oldest entry comes first.
    let bob = store
        .create_config_entry("bob", entry(&mail, "bob", 0))
        .await
        .unwrap();

    let place = |owner: &str, entry: &ConfigEntryRecord, label: &str| crate::SealedValue {
        owner: owner.to_owned(),
        service_id: entry.service_id.clone(),
        entry_id: entry.id.clone(),
        field: "api_key".to_owned(),
        sealed: format!("v1:c2VhbGVk{label}"),
    };
    let all = store.sealed_values(16).await.unwrap();
    assert_eq!(all.total, 3, "{all:?}");
    assert_eq!(
        all.values,
        [
            place("bob", &bob, "bob"),
            place("alice", &work, "work"),
            place("alice", &home, "home"),
        ]
    );
    // The sample is bounded; the count is not.
    let one = store.sealed_values(1).await.unwrap();
    assert_eq!(one.total, 3);
    assert_eq!(one.values, [place("bob", &bob, "bob")]);
}

on_both_backends!(
    services_round_trip_and_list_by_name,
    service_names_are_unique_per_owner_only,
    owners_never_see_or_touch_each_others_config,
    updates_are_compare_and_swap_on_the_revision,
    concurrent_updates_of_one_revision_let_exactly_one_win,
    the_first_entry_is_the_default_and_single_entry_services_take_one,
    labels_are_unique_per_service,
    exactly_one_default_moves_with_set_default_create_and_delete,
    entry_updates_keep_the_default_flag_and_cannot_move_services,
    deleting_a_service_deletes_its_entries,
    huge_and_hostile_values_are_stored_as_data,
    the_snapshot_holds_every_service_with_its_entries,
    dependency_sync_registers_attaches_detaches_and_cleans_up,
    sealed_values_are_counted_across_owners_with_their_places,
);
