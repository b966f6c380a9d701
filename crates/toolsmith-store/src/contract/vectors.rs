//! Vector search's contract: a collection is its owner's alone, unique by name, limited in
//! number; items are upserted by id (a second write replaces the first) and deleted by id; a
//! search answers the `k` nearest by cosine, best first, the same as an exact scan, and with
//! metadata filters only the matching items. On PostgreSQL the first collection creates the
//! pgvector extension: a cluster without pgvector is a missing prerequisite.

use chrono::Utc;
use serde_json::{Value, json};

use super::{Backend, on_both_backends};
use crate::{StoreError, VectorCollectionRecord, VectorItem, VectorQuery};

fn collection(id: &str, owner: &str, name: &str, dimensions: u32) -> VectorCollectionRecord {
    VectorCollectionRecord {
        id: id.to_owned(),
        owner: owner.to_owned(),
        name: name.to_owned(),
        dimensions,
        description: format!("{name} of {owner}"),
        count: 0,
        created_at: Utc::now(),
        updated_at: Utc::now(),
    }
}

fn item(id: &str, embedding: &[f32], metadata: Value) -> VectorItem {
    VectorItem {
        id: id.to_owned(),
        embedding: embedding.to_vec(),
        content: format!("text of {id}"),
        metadata,
    }
}

fn query(owner: &str, name: &str, embedding: &[f32], k: u32) -> VectorQuery {
    VectorQuery {
        owner: owner.to_owned(),
        collection: name.to_owned(),
        embedding: embedding.to_vec(),
        top_k: k,
        filter: Vec::new(),
    }
}

/// Creates the first collection, or reports the missing pgvector as the prerequisite it is.
async fn first_collection(backend: &Backend, c: &VectorCollectionRecord) -> Option<()> {
    match backend.store().create_vector_collection(c, 10).await {
        Ok(created) => {
            assert!(created);
            Some(())
        }
        Err(e @ StoreError::Unavailable { .. }) if e.to_string().contains("pgvector") => {
            toolsmith_core::testkit::missing(
                "pgvector",
                format!("{e} (scripts/install-system-deps.sh builds it)"),
            );
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// The cosine distance, as the exact reference.
fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

async fn a_collection_is_its_owners_alone_and_unique_by_name(backend: &Backend) {
    let store = backend.store();
    let Some(()) = first_collection(backend, &collection("c-1", "alice", "docs", 3)).await else {
        return;
    };
    assert!(
        !store
            .create_vector_collection(&collection("c-2", "alice", "docs", 3), 10)
            .await
            .unwrap(),
        "a second collection of the same name is refused"
    );
    assert!(
        store
            .create_vector_collection(&collection("c-3", "bob", "docs", 4), 10)
            .await
            .unwrap()
    );
    assert!(
        store
            .create_vector_collection(&collection("c-4", "alice", "notes", 2), 2)
            .await
            .unwrap()
    );
    let limited = store
        .create_vector_collection(&collection("c-5", "alice", "more", 2), 2)
        .await
        .unwrap_err();
    assert!(
        matches!(limited, StoreError::RecordLimit { limit: 2, .. }),
        "{limited}"
    );

    let alice: Vec<String> = store
        .list_vector_collections("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(alice, ["docs", "notes"]);
    let bobs = store
        .get_vector_collection("bob", "docs")
        .await
        .unwrap()
        .unwrap();
    assert_eq!((bobs.id.as_str(), bobs.dimensions), ("c-3", 4));
    assert!(
        store
            .get_vector_collection("carol", "docs")
            .await
            .unwrap()
            .is_none()
    );
    // Another owner's collection is not found by any write or search.
    assert_eq!(
        store
            .upsert_vectors(
                "carol",
                "docs",
                &[item("x", &[1.0, 0.0, 0.0], json!({}))],
                100
            )
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .search_vectors(&query("carol", "docs", &[1.0, 0.0, 0.0], 5))
            .await
            .unwrap(),
        None
    );
}

async fn items_are_upserted_searched_by_cosine_filtered_and_deleted(backend: &Backend) {
    let store = backend.store();
    let Some(()) = first_collection(backend, &collection("c-1", "alice", "docs", 4)).await else {
        return;
    };
    // 60 items on a spiral of directions, with a colour every third.
    let colours = ["red", "green", "blue"];
    let items: Vec<VectorItem> = (0..60)
        .map(|i| {
            let t = i as f32 / 10.0;
            item(
                &format!("v{i:02}"),
                &[
                    t.cos(),
                    t.sin(),
                    0.3 * (t * 0.5).cos(),
                    0.1 * i as f32 / 60.0,
                ],
                json!({"colour": colours[i % 3], "n": i}),
            )
        })
        .collect();
    assert_eq!(
        store
            .upsert_vectors("alice", "docs", &items, 1000)
            .await
            .unwrap(),
        Some(60)
    );
    let probe = [0.9_f32, 0.4, 0.2, 0.0];
    let mut exact: Vec<(f64, String)> = items
        .iter()
        .map(|i| (cosine(&i.embedding, &probe), i.id.clone()))
        .collect();
    exact.sort_by(|a, b| b.0.total_cmp(&a.0));

    let hits = store
        .search_vectors(&query("alice", "docs", &probe, 5))
        .await
        .unwrap()
        .unwrap();
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    let expected: Vec<&str> = exact.iter().take(5).map(|(_, id)| id.as_str()).collect();
    assert_eq!(ids, expected, "the index answers the exact top 5");
    for (hit, (score, _)) in hits.iter().zip(&exact) {
        assert!((hit.score - score).abs() < 1e-4, "{} vs {score}", hit.score);
    }
    assert_eq!(hits[0].content, format!("text of {}", hits[0].id));
    assert_eq!(hits[0].metadata["n"].as_u64().map(|n| n < 60), Some(true));

    // A filter: only the blue ones, still by cosine.
    let mut blue = query("alice", "docs", &probe, 3);
    blue.filter = vec![("colour".to_owned(), json!("blue"))];
    let hits = store.search_vectors(&blue).await.unwrap().unwrap();
    let expected: Vec<String> = exact
        .iter()
        .filter(|(_, id)| {
            items
                .iter()
                .any(|i| &i.id == id && i.metadata["colour"] == "blue")
        })
        .take(3)
        .map(|(_, id)| id.clone())
        .collect();
    assert_eq!(
        hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>(),
        expected
    );
    // Any of several values; a number.
    let mut some = query("alice", "docs", &probe, 10);
    some.filter = vec![("n".to_owned(), json!([3, 4, 5]))];
    let mut found: Vec<String> = store
        .search_vectors(&some)
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|h| h.id)
        .collect();
    found.sort();
    assert_eq!(found, ["v03", "v04", "v05"]);

    // An upsert of an existing id replaces it (and its place in the index).
    let best = exact[0].1.clone();
    let moved = item(&best, &[-0.9, -0.4, -0.2, 0.0], json!({"colour": "moved"}));
    assert_eq!(
        store
            .upsert_vectors("alice", "docs", &[moved], 1000)
            .await
            .unwrap(),
        Some(60)
    );
    let hits = store
        .search_vectors(&query("alice", "docs", &probe, 60))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(hits.len(), 60);
    assert_eq!(hits.last().map(|h| h.id.as_str()), Some(best.as_str()));
    assert_eq!(
        hits.last().map(|h| h.metadata.clone()),
        Some(json!({"colour": "moved"}))
    );

    // Deletes by id; unknown ids count nothing.
    let gone = store
        .delete_vectors("alice", "docs", &[best.clone(), "nope".to_owned()])
        .await
        .unwrap();
    assert_eq!(gone, Some(1));
    let hits = store
        .search_vectors(&query("alice", "docs", &probe, 60))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(hits.len(), 59);
    assert!(hits.iter().all(|h| h.id != best));
    assert_eq!(
        store
            .get_vector_collection("alice", "docs")
            .await
            .unwrap()
            .unwrap()
            .count,
        59
    );
    // The per-collection limit counts the items after the write.
    let over = store
        .upsert_vectors(
            "alice",
            "docs",
            &[item("new", &[1.0, 0.0, 0.0, 0.0], json!({}))],
            59,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(over, StoreError::RecordLimit { limit: 59, .. }),
        "{over}"
    );
    assert_eq!(
        store
            .get_vector_collection("alice", "docs")
            .await
            .unwrap()
            .unwrap()
            .count,
        59,
        "a refused write leaves nothing"
    );
}

on_both_backends!(
    a_collection_is_its_owners_alone_and_unique_by_name,
    items_are_upserted_searched_by_cosine_filtered_and_deleted,
);
