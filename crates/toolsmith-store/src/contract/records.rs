//! The records contract (the agent's own data: memory, tasks, notes …): round trips, scopes
//! that never see each other (owner and agent), deduplication, the per-collection limit held
//! under concurrent inserts, full-text search with stems and hostile query text, filters,
//! orders, figures, a person's export and erasure, and the scheduler's due records claimed
//! once across instances.

use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;

use super::{Backend, on_both_backends};
use crate::{DataRecord, PutOutcome, RecordOrder, RecordQuery, RecordScope, Store, StoreError};
use toolsmith_core::data::{FieldMatch, FieldOrder, FieldSort, FieldValue};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

fn record(owner: &str, agent: &str, id: &str, text: &str) -> DataRecord {
    DataRecord {
        collection: "memory".to_owned(),
        id: id.to_owned(),
        owner: owner.to_owned(),
        agent: agent.to_owned(),
        document: json!({ "content": text }),
        search_text: text.to_owned(),
        dedup_key: None,
        kind: Some("fact".to_owned()),
        category: None,
        weight: 0.5,
        at: None,
        tags: Vec::new(),
        created_at: at(0),
        updated_at: at(0),
    }
}

fn query(owner: &str, agent: &str) -> RecordQuery {
    RecordQuery {
        owner: owner.to_owned(),
        agent: agent.to_owned(),
        collection: "memory".to_owned(),
        limit: 50,
        ..RecordQuery::default()
    }
}

async fn put(store: &Arc<dyn Store>, r: DataRecord) -> DataRecord {
    match store.put_record(r, 1000).await.unwrap() {
        PutOutcome::Inserted(r) => r,
        PutOutcome::Duplicate(d) => panic!("unexpected duplicate {d:?}"),
    }
}

async fn ids(store: &Arc<dyn Store>, q: &RecordQuery) -> Vec<String> {
    let hits = store.query_records(q).await.unwrap();
    hits.into_iter().map(|h| h.record.id).collect()
}

async fn a_record_round_trips_and_stays_in_its_scope(backend: &Backend) {
    let store = backend.store();
    let mut r = record("alice", "", "mem_1", "Alice's cat is called Miso");
    r.tags = vec!["pets".to_owned()];
    r.at = Some(at(99));
    let stored = put(&store, r.clone()).await;
    assert_eq!(stored, r);
    let scope = RecordScope::new("alice", None);
    assert_eq!(
        store.get_record(&scope, "memory", "mem_1").await.unwrap(),
        Some(r.clone())
    );
    // Another owner, another agent of the same owner, another collection: not found.
    for (scope, collection) in [
        (RecordScope::new("bob", None), "memory"),
        (RecordScope::new("alice", Some("agent-1")), "memory"),
        (RecordScope::new("alice", None), "note"),
    ] {
        assert_eq!(
            store.get_record(&scope, collection, "mem_1").await.unwrap(),
            None
        );
        assert!(
            !store
                .delete_record(&scope, collection, "mem_1")
                .await
                .unwrap()
        );
        let mut other = r.clone();
        other.owner = scope.owner.clone();
        other.agent = scope.agent.clone();
        other.collection = collection.to_owned();
        other.search_text = "stolen".to_owned();
        assert_eq!(store.update_record(other).await.unwrap(), None);
    }
    assert!(ids(&store, &query("bob", "")).await.is_empty());
    let mut text = query("alice", "agent-1");
    text.text = Some("cat Miso".to_owned());
    assert!(ids(&store, &text).await.is_empty());
    text.agent = String::new();
    assert_eq!(ids(&store, &text).await, ["mem_1"]);

    // An update replaces the fields and the searched text (the old words no longer match).
    let mut changed = r.clone();
    changed.document = json!({ "content": "Alice's dog is called Pico" });
    changed.search_text = "Alice's dog is called Pico".to_owned();
    changed.weight = 0.9;
    changed.updated_at = at(10);
    changed.created_at = at(5); // kept as stored
    let updated = store.update_record(changed).await.unwrap().unwrap();
    assert_eq!(updated.created_at, at(0));
    assert_eq!(updated.updated_at, at(10));
    assert_eq!(updated.weight, 0.9);
    assert!(ids(&store, &text).await.is_empty());
    text.text = Some("pico".to_owned());
    assert_eq!(ids(&store, &text).await, ["mem_1"]);

    assert!(
        store
            .delete_record(&scope, "memory", "mem_1")
            .await
            .unwrap()
    );
    assert_eq!(
        store.get_record(&scope, "memory", "mem_1").await.unwrap(),
        None
    );
    assert!(ids(&store, &text).await.is_empty());
}

async fn a_record_with_the_same_dedup_key_is_found_not_stored_twice(backend: &Backend) {
    let store = backend.store();
    let mut first = record("alice", "", "mem_1", "likes tea");
    first.dedup_key = Some("k1".to_owned());
    put(&store, first.clone()).await;
    let mut again = record("alice", "", "mem_2", "likes tea");
    again.dedup_key = Some("k1".to_owned());
    match store.put_record(again.clone(), 1000).await.unwrap() {
        PutOutcome::Duplicate(found) => assert_eq!(found, first),
        other => panic!("expected the first record, got {other:?}"),
    }
    // The same key in another scope is another record.
    again.agent = "agent-1".to_owned();
    put(&store, again.clone()).await;
    again.id = "mem_3".to_owned();
    again.owner = "bob".to_owned();
    put(&store, again).await;
    assert_eq!(ids(&store, &query("alice", "")).await, ["mem_1"]);
}

async fn the_collection_limit_holds_under_concurrent_inserts(backend: &Backend) {
    let store = backend.store();
    let other: Arc<dyn Store> = match backend.another_instance().await {
        Some(pg) => pg,
        None => store.clone(),
    };
    let tasks: Vec<_> = (0..12)
        .map(|i| {
            let s = if i % 2 == 0 {
                store.clone()
            } else {
                other.clone()
            };
            // Spread over two agents: the limit is the owner's, across agents.
            let r = record(
                "alice",
                if i % 3 == 0 { "a" } else { "" },
                &format!("mem_{i}"),
                "x",
            );
            tokio::spawn(async move { s.put_record(r, 5).await })
        })
        .collect();
    let mut inserted = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(PutOutcome::Inserted(_)) => inserted += 1,
            Err(StoreError::RecordLimit { collection, limit }) => {
                assert_eq!((collection.as_str(), limit), ("memory", 5));
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(inserted, 5);
    // Another collection and another owner have their own counts.
    let mut note = record("alice", "", "note_1", "x");
    note.collection = "note".to_owned();
    put(&store, note).await;
    put(&store, record("bob", "", "mem_b", "x")).await;
}

async fn full_text_search_ranks_matches_with_stems_and_survives_hostile_text(backend: &Backend) {
    let store = backend.store();
    let texts = [
        (
            "m1",
            "The user runs five kilometres every morning before work",
        ),
        ("m2", "The user's favourite programming language is Rust"),
        (
            "m3",
            "Rust stains on the old bicycle; the bicycle needs new brakes",
        ),
        ("m4", "Meeting with the dentist on Tuesday"),
    ];
    for (i, (id, text)) in texts.iter().enumerate() {
        let mut r = record("alice", "", id, text);
        r.created_at = at(i as i64);
        put(&store, r).await;
    }
    let mut q = query("alice", "");
    q.order = RecordOrder::Relevance;
    // Stems: "running" finds "runs"; "bicycles" finds "bicycle".
    q.text = Some("running".to_owned());
    assert_eq!(ids(&store, &q).await, ["m1"]);
    q.text = Some("What do I know about bicycles?".to_owned());
    assert_eq!(ids(&store, &q).await, ["m3"]);
    // Any word matches; the record with more of the query's words ranks first.
    q.text = Some("rust programming language".to_owned());
    let hits = store.query_records(&q).await.unwrap();
    let got: Vec<&str> = hits.iter().map(|h| h.record.id.as_str()).collect();
    assert_eq!(got, ["m2", "m3"]);
    assert_eq!(hits[0].relevance, 1.0);
    assert!(hits[1].relevance > 0.0 && hits[1].relevance < 1.0);
    // Only common words, or nothing searchable: no match, no error.
    for text in ["what is the", "", "?!", "  "] {
        q.text = Some(text.to_owned());
        assert!(ids(&store, &q).await.is_empty(), "{text:?}");
    }
    // Query syntax of either database is plain text here.
    for text in [
        "\"",
        "rust\" OR \"dentist",
        "NEAR(rust dentist)",
        "rust* ^dentist",
        "search_text: rust",
        "rust & !dentist | (",
        "'; DROP TABLE data_records; --",
        "\u{0}rust",
        "rust:*",
    ] {
        q.text = Some(text.to_owned());
        let found = ids(&store, &q).await;
        assert!(
            found
                .iter()
                .all(|id| id == "m2" || id == "m3" || id == "m4"),
            "{text:?}: {found:?}"
        );
    }
    q.text = Some("rust\" OR \"dentist".to_owned());
    assert_eq!(ids(&store, &q).await.len(), 3);
    assert_eq!(backend.count_rows("data_records").await, 4);
}

async fn filters_orders_figures_export_and_erasure(backend: &Backend) {
    let store = backend.store();
    let specs = [
        ("a", "fact", Some("work"), 0.2, Some(30), vec!["x"]),
        ("b", "event", None, 0.9, None, vec!["y", "z"]),
        ("c", "fact", Some("home"), 0.5, Some(10), vec![]),
        ("d", "skill", Some("work"), 0.7, Some(20), vec!["z"]),
    ];
    for (i, (id, kind, category, weight, due, tags)) in specs.into_iter().enumerate() {
        let mut r = record("alice", "", id, "text");
        r.kind = Some(kind.to_owned());
        r.category = category.map(str::to_owned);
        r.weight = weight;
        r.at = due.map(at);
        r.tags = tags.into_iter().map(str::to_owned).collect();
        r.created_at = at(i as i64);
        r.updated_at = at(100 - i as i64);
        put(&store, r).await;
    }
    put(&store, record("alice", "agent-1", "e", "text")).await;
    put(&store, record("bob", "", "f", "text")).await;
    let mut q = query("alice", "");
    assert_eq!(ids(&store, &q).await, ["d", "c", "b", "a"]);
    q.order = RecordOrder::Updated;
    assert_eq!(ids(&store, &q).await, ["a", "b", "c", "d"]);
    q.order = RecordOrder::Weight;
    assert_eq!(ids(&store, &q).await, ["b", "d", "c", "a"]);
    q.order = RecordOrder::At;
    assert_eq!(ids(&store, &q).await, ["c", "d", "a", "b"]);
    q.limit = 2;
    q.offset = 1;
    assert_eq!(ids(&store, &q).await, ["d", "a"]);
    let mut q = query("alice", "");
    q.kind = Some("fact".to_owned());
    assert_eq!(ids(&store, &q).await, ["c", "a"]);
    q.kind = None;
    q.category = Some("work".to_owned());
    assert_eq!(ids(&store, &q).await, ["d", "a"]);
    q.category = None;
    q.tags = vec!["z".to_owned(), "x".to_owned()];
    assert_eq!(ids(&store, &q).await, ["d", "b", "a"]);
    // Time and weight ranges (records without a time are outside every time range).
    let mut q = query("alice", "");
    q.at_from = Some(at(10));
    q.at_before = Some(at(30));
    q.order = RecordOrder::At;
    assert_eq!(ids(&store, &q).await, ["c", "d"]);
    q.at_before = None;
    assert_eq!(ids(&store, &q).await, ["c", "d", "a"]);
    let mut q = query("alice", "");
    q.min_weight = Some(0.5);
    q.max_weight = Some(0.7);
    assert_eq!(ids(&store, &q).await, ["d", "c"]);
    q.min_weight = Some(0.9);
    q.max_weight = Some(0.9);
    assert_eq!(ids(&store, &q).await, ["b"]);

    let stats = store
        .record_stats(&RecordScope::new("alice", None), "memory")
        .await
        .unwrap();
    assert_eq!(stats.total, 4);
    assert_eq!(stats.by_kind.get("fact"), Some(&2));
    assert_eq!(stats.by_kind.get("skill"), Some(&1));
    assert!((stats.mean_weight - 0.575).abs() < 1e-9);
    assert_eq!((stats.oldest, stats.newest), (Some(at(0)), Some(at(3))));
    let empty = store
        .record_stats(&RecordScope::new("carol", None), "memory")
        .await
        .unwrap();
    assert_eq!((empty.total, empty.oldest), (0, None));

    // Export: every agent's records of the owner, page by page, and nobody else's.
    let first = store.export_records("alice", None, 3).await.unwrap();
    let rest = store
        .export_records("alice", Some(&first[2].id), 3)
        .await
        .unwrap();
    let all: Vec<String> = first.iter().chain(&rest).map(|r| r.id.clone()).collect();
    assert_eq!(all, ["a", "b", "c", "d", "e"]);
    assert_eq!(store.delete_owner_records("alice").await.unwrap(), 5);
    assert!(
        store
            .export_records("alice", None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.export_records("bob", None, 10).await.unwrap().len(),
        1
    );
    assert_eq!(backend.count_rows("data_records").await, 1);
}

async fn due_records_are_claimed_once_across_instances(backend: &Backend) {
    let store = backend.store();
    let other = backend.another_process().await;
    let task = |owner: &str, agent: &str, id: &str, when: Option<i64>| {
        let mut r = record(owner, agent, id, "x");
        r.collection = "schedule".to_owned();
        r.at = when.map(at);
        r
    };
    put(&store, task("alice", "", "task_a", Some(10))).await;
    put(&store, task("bob", "helper", "task_b", Some(20))).await;
    put(&store, task("alice", "", "task_later", Some(100))).await;
    put(&store, task("alice", "", "task_paused", None)).await;
    let mut memory = record("alice", "", "mem_due", "x");
    memory.at = Some(at(5));
    put(&store, memory).await;

    // Every owner's due records of the collection, earliest first, within the limit.
    let due = |limit| {
        let store = store.clone();
        async move {
            let found = store.due_records("schedule", at(50), limit).await.unwrap();
            found.into_iter().map(|r| r.id).collect::<Vec<_>>()
        }
    };
    assert_eq!(due(10).await, ["task_a", "task_b"]);
    assert_eq!(due(1).await, ["task_a"]);

    // Sixteen claims of one due time from two instances: exactly one wins.
    let claims: Vec<_> = (0..16)
        .map(|i| {
            let s = if i % 2 == 0 {
                store.clone()
            } else {
                other.clone()
            };
            let mut claimed = task("alice", "", "task_a", Some(70));
            claimed.document = json!({"claimedBy": i});
            claimed.kind = Some("active".to_owned());
            tokio::spawn(async move { s.claim_record(claimed, at(10)).await })
        })
        .collect();
    let mut won = Vec::new();
    for (i, claim) in claims.into_iter().enumerate() {
        if claim.await.unwrap().unwrap() {
            won.push(i);
        }
    }
    assert_eq!(won.len(), 1, "claims that won: {won:?}");
    let scope = RecordScope::new("alice", None);
    let stored = store
        .get_record(&scope, "schedule", "task_a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.at, Some(at(70)));
    assert_eq!(stored.document, json!({"claimedBy": won[0]}));
    assert_eq!(due(10).await, ["task_b"]);

    // A stale expectation changes nothing; a claim may end a record's schedule.
    let mut stale = stored.clone();
    stale.at = Some(at(90));
    assert!(!store.claim_record(stale, at(10)).await.unwrap());
    let mut finished = stored.clone();
    finished.at = None;
    assert!(other.claim_record(finished, at(70)).await.unwrap());
    let later = store.due_records("schedule", at(1000), 10).await.unwrap();
    let ids: Vec<_> = later.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["task_b", "task_later"]);
    // A claim never reaches another collection's record of the same id.
    let mut wrong = record("alice", "", "mem_due", "x");
    wrong.collection = "schedule".to_owned();
    assert!(!store.claim_record(wrong, at(5)).await.unwrap());
}

/// Custom tables' rows: equality on a document field of its own JSON type, an order on a
/// field (missing and other-typed values last), hostile field names refused, and one scope's
/// collection deleted whole.
async fn document_field_filters_orders_and_collection_deletion(backend: &Backend) {
    let store = backend.store();
    let rows = [
        (
            "r1",
            json!({"title": "Dune", "rating": 9, "seen": true, "year": "1965"}),
        ),
        ("r2", json!({"title": "Emma", "rating": 7.5, "seen": false})),
        ("r3", json!({"title": "Zed", "rating": "9", "seen": "true"})),
        ("r4", json!({"title": "alpha", "rating": 10, "seen": true})),
    ];
    for (i, (id, doc)) in rows.into_iter().enumerate() {
        let mut r = record("alice", "", id, "text");
        r.collection = "custom_rows:t1".to_owned();
        r.document = doc;
        r.created_at = at(i as i64);
        put(&store, r).await;
    }
    let mut other = record("alice", "agent-1", "r5", "text");
    other.collection = "custom_rows:t1".to_owned();
    other.document = json!({"title": "Dune", "rating": 9, "seen": true});
    put(&store, other).await;
    let q = |fields: Vec<(&str, FieldValue)>| RecordQuery {
        collection: "custom_rows:t1".to_owned(),
        fields: fields
            .into_iter()
            .map(|(f, value)| FieldMatch {
                field: f.to_owned(),
                value,
            })
            .collect(),
        ..query("alice", "")
    };
    // A value matches only a field of its own JSON type: 9 is not "9", true is not "true".
    assert_eq!(
        ids(&store, &q(vec![("rating", FieldValue::Number(9.0))])).await,
        ["r1"]
    );
    assert_eq!(
        ids(&store, &q(vec![("rating", FieldValue::Number(7.5))])).await,
        ["r2"]
    );
    assert_eq!(
        ids(
            &store,
            &q(vec![("rating", FieldValue::Text("9".to_owned()))])
        )
        .await,
        ["r3"]
    );
    assert_eq!(
        ids(&store, &q(vec![("seen", FieldValue::Bool(true))])).await,
        ["r4", "r1"]
    );
    assert_eq!(
        ids(
            &store,
            &q(vec![
                ("seen", FieldValue::Bool(true)),
                ("title", FieldValue::Text("Dune".to_owned()))
            ])
        )
        .await,
        ["r1"]
    );
    assert!(
        ids(&store, &q(vec![("nothing", FieldValue::Bool(false))]))
            .await
            .is_empty()
    );
    let ordered = |field: &str, sort: FieldSort, descending: bool| RecordQuery {
        field_order: Some(FieldOrder {
            field: field.to_owned(),
            sort,
            descending,
        }),
        ..q(Vec::new())
    };
    // Text in byte order (upper case before lower), numbers by value, missing ones last.
    assert_eq!(
        ids(&store, &ordered("title", FieldSort::Text, false)).await,
        ["r1", "r2", "r3", "r4"]
    );
    assert_eq!(
        ids(&store, &ordered("rating", FieldSort::Number, true)).await,
        ["r4", "r1", "r2", "r3"]
    );
    assert_eq!(
        ids(&store, &ordered("rating", FieldSort::Number, false)).await,
        ["r2", "r1", "r4", "r3"]
    );
    assert_eq!(
        ids(&store, &ordered("seen", FieldSort::Bool, false)).await,
        ["r2", "r4", "r1", "r3"]
    );
    assert_eq!(
        ids(&store, &ordered("year", FieldSort::Text, false)).await,
        ["r1", "r4", "r3", "r2"]
    );
    for hostile in ["a') OR 1=1 --", "$.title", "", "x\"y", &"a".repeat(65)] {
        let err = store
            .query_records(&q(vec![(hostile, FieldValue::Bool(true))]))
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("cannot name a document field"),
            "{err}"
        );
        assert!(
            store
                .query_records(&ordered(hostile, FieldSort::Text, false))
                .await
                .is_err()
        );
    }
    // One scope's collection goes whole; the other agent's rows and other collections stay.
    put(&store, record("alice", "", "m1", "text")).await;
    let scope = RecordScope::new("alice", None);
    assert_eq!(
        store
            .delete_collection_records(&scope, "custom_rows:t1")
            .await
            .unwrap(),
        4
    );
    assert!(ids(&store, &q(Vec::new())).await.is_empty());
    assert_eq!(ids(&store, &query("alice", "")).await, ["m1"]);
    let agent = RecordQuery {
        collection: "custom_rows:t1".to_owned(),
        ..query("alice", "agent-1")
    };
    assert_eq!(ids(&store, &agent).await, ["r5"]);
}

/// The kept counts follow every way a record comes and goes (put, duplicate, delete, a
/// collection's deletion, a person's erasure, concurrent puts from two instances): the tally and
/// the limit agree with the records themselves, and an erased person leaves no counter behind.
async fn counts_follow_every_write_and_erasure_leaves_none(backend: &Backend) {
    let store = backend.store();
    let other: Arc<dyn Store> = match backend.another_instance().await {
        Some(pg) => pg,
        None => store.clone(),
    };
    let alice = RecordScope::new("alice", None);
    let tally = |scope: RecordScope, collection: &'static str| {
        let store = store.clone();
        async move { store.record_tally(&scope, collection).await.unwrap() }
    };
    assert_eq!(tally(alice.clone(), "memory").await, Default::default());
    // Concurrent puts through two instances, two agents: each scope counts its own.
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let s = if i % 2 == 0 {
                store.clone()
            } else {
                other.clone()
            };
            let mut r = record(
                "alice",
                if i < 15 { "" } else { "a" },
                &format!("m{i}"),
                "x",
            );
            r.created_at = at(i);
            tokio::spawn(async move { s.put_record(r, 1000).await.unwrap() })
        })
        .collect();
    for t in tasks {
        assert!(matches!(t.await.unwrap(), PutOutcome::Inserted(_)));
    }
    let t = tally(alice.clone(), "memory").await;
    assert_eq!(
        (t.total, t.oldest, t.newest),
        (15, Some(at(0)), Some(at(14)))
    );
    let agent = RecordScope::new("alice", Some("a"));
    assert_eq!(tally(agent.clone(), "memory").await.total, 5);
    // A duplicate adds nothing; a delete takes one off; a miss takes nothing.
    let mut d1 = record("alice", "", "d1", "y");
    d1.dedup_key = Some("k".to_owned());
    put(&store, d1.clone()).await;
    d1.id = "d2".to_owned();
    assert!(matches!(
        store.put_record(d1, 1000).await.unwrap(),
        PutOutcome::Duplicate(_)
    ));
    assert_eq!(tally(alice.clone(), "memory").await.total, 16);
    assert!(store.delete_record(&alice, "memory", "m0").await.unwrap());
    assert!(!store.delete_record(&alice, "memory", "m0").await.unwrap());
    let t = tally(alice.clone(), "memory").await;
    assert_eq!((t.total, t.oldest), (15, Some(at(0))));
    // The limit is the owner's across agents (15 + 5 = 20): the next put at 20 is refused,
    // and accepted again once one is deleted.
    assert!(matches!(
        store.put_record(record("alice", "", "over", "x"), 20).await,
        Err(StoreError::RecordLimit { limit: 20, .. })
    ));
    assert!(store.delete_record(&agent, "memory", "m15").await.unwrap());
    assert!(matches!(
        store
            .put_record(record("alice", "", "fits", "x"), 20)
            .await
            .unwrap(),
        PutOutcome::Inserted(_)
    ));
    // A collection's deletion and a person's erasure.
    let mut row = record("alice", "", "r1", "x");
    row.collection = "custom_rows:t1".to_owned();
    put(&store, row).await;
    assert_eq!(tally(alice.clone(), "custom_rows:t1").await.total, 1);
    assert_eq!(
        store
            .delete_collection_records(&alice, "custom_rows:t1")
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        tally(alice.clone(), "custom_rows:t1").await,
        Default::default()
    );
    put(&store, record("bob", "", "b1", "x")).await;
    store.delete_owner_records("alice").await.unwrap();
    assert_eq!(tally(alice.clone(), "memory").await, Default::default());
    assert_eq!(tally(agent, "memory").await.total, 0);
    assert_eq!(
        tally(RecordScope::new("bob", None), "memory").await.total,
        1
    );
    // Only bob's counter is left: nothing names alice any more.
    assert_eq!(backend.count_rows("data_record_counts").await, 1);
}

async fn an_owners_collection_lists_every_agents_records_and_nobody_elses(backend: &Backend) {
    let store = backend.store();
    let task = |owner: &str, agent: &str, id: &str, when: Option<i64>| {
        let mut r = record(owner, agent, id, "x");
        r.collection = "schedule".to_owned();
        r.at = when.map(at);
        r
    };
    put(&store, task("alice", "", "t_mine", Some(30))).await;
    put(&store, task("alice", "helper", "t_helper", Some(10))).await;
    put(&store, task("alice", "other", "t_paused", None)).await;
    put(&store, task("bob", "", "t_bob", Some(5))).await;
    put(&store, record("alice", "", "mem", "x")).await;
    let ids = |found: Vec<DataRecord>| -> Vec<(String, String)> {
        found.into_iter().map(|r| (r.id, r.agent)).collect()
    };
    let all = store
        .owner_collection_records("alice", "schedule", 10, 0)
        .await
        .unwrap();
    assert_eq!(
        ids(all),
        [
            ("t_helper".to_owned(), "helper".to_owned()),
            ("t_mine".to_owned(), String::new()),
            ("t_paused".to_owned(), "other".to_owned()),
        ],
        "every agent's, soonest first, none of another owner or collection"
    );
    let page = store
        .owner_collection_records("alice", "schedule", 1, 1)
        .await
        .unwrap();
    assert_eq!(ids(page), [("t_mine".to_owned(), String::new())]);
    assert!(
        store
            .owner_collection_records("carol", "schedule", 10, 0)
            .await
            .unwrap()
            .is_empty()
    );
}

/// `Store::announce_change` (what the record store's users that other instances must hear of
/// call after a write, the user-defined resources): another instance's feed gets it, with its
/// kind, id and owner; SQLite, which pushes nothing, accepts it.
async fn an_announced_change_reaches_another_instance(backend: &Backend) {
    use super::next_change as next;
    use crate::{ChangeKind, FeedEvent};
    let store = backend.store();
    let Some(mut feed) = backend.another_instances_feed().await else {
        store
            .announce_change(ChangeKind::Resource, "res_1", "alice")
            .await
            .unwrap();
        return;
    };
    store
        .announce_change(ChangeKind::Resource, "res_1", "alice")
        .await
        .unwrap();
    let FeedEvent::Changed(change) = next(&mut feed).await else {
        panic!("expected a change");
    };
    assert_eq!(
        (change.kind, change.id.as_str(), change.owner.as_str()),
        (ChangeKind::Resource, "res_1", "alice")
    );
}

on_both_backends!(
    an_announced_change_reaches_another_instance,
    an_owners_collection_lists_every_agents_records_and_nobody_elses,
    counts_follow_every_write_and_erasure_leaves_none,
    document_field_filters_orders_and_collection_deletion,
    a_record_round_trips_and_stays_in_its_scope,
    a_record_with_the_same_dedup_key_is_found_not_stored_twice,
    the_collection_limit_holds_under_concurrent_inserts,
    full_text_search_ranks_matches_with_stems_and_survives_hostile_text,
    filters_orders_figures_export_and_erasure,
    due_records_are_claimed_once_across_instances,
);
