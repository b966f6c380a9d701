//! Moving a tool between owners (issue 41): one conditional transaction — the tool leaves its
//! owner only at the revision the mover read, only onto a free name and under the new owner's
//! limit; its versions go with it (their code as given), its executions stay as history, and
//! its name is retired at the old owner; two movers at once: exactly one wins.

use toolsmith_core::{CustomToolRecord, ExecutionStatus};

use super::tools::{at, execution, tool};
use super::{Backend, on_both_backends};
use crate::{StoreError, ToolMove};

const ORG: &str = "org_00000000000000a1";

fn move_of(t: &CustomToolRecord, from: &str, to: &str, expected_revision: i64) -> ToolMove {
    ToolMove {
        id: t.id.clone(),
        from: from.to_owned(),
        to: to.to_owned(),
        expected_revision,
        code: format!("{} // moved", t.code),
        version_codes: vec![(1, "return 'v1 moved'".to_owned())],
        at: at(60),
        max_per_owner: 100,
    }
}

async fn a_tool_moves_with_its_versions_and_leaves_its_executions(backend: &Backend) {
    let store = backend.store();
    let t = store.insert_tool(tool("alice", "report")).await.unwrap();
    let v2 = CustomToolRecord {
        version: 2,
        revision: 2,
        code: "return 2".to_owned(),
        ..t.clone()
    };
    store.update_tool(&v2, 1).await.unwrap();
    store
        .record_execution(&execution(&t, ExecutionStatus::Success, 5))
        .await
        .unwrap();

    // A stale revision moves nothing.
    let err = store
        .move_tool(&move_of(&t, "alice", ORG, 1))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::RevisionConflict {
                expected: 1,
                actual: 2
            }
        ),
        "{err}"
    );
    // Not the owner named: not found.
    let err = store
        .move_tool(&move_of(&t, "bob", ORG, 2))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    assert_eq!(
        store
            .get_tool("alice", &t.id)
            .await
            .unwrap()
            .unwrap()
            .revision,
        2
    );

    let mut change = move_of(&t, "alice", ORG, 2);
    change.version_codes = vec![
        (1, "return 'v1 moved'".to_owned()),
        (2, "return 'v2 moved'".to_owned()),
    ];
    let moved = store.move_tool(&change).await.unwrap();
    assert_eq!(moved.owner, ORG);
    assert_eq!(moved.revision, 3);
    assert_eq!(moved.version, 2);
    assert_eq!(moved.code, change.code);
    assert_eq!(moved.updated_at, at(60));
    assert_eq!(
        store.get_tool(ORG, &t.id).await.unwrap(),
        Some(moved.clone())
    );
    assert_eq!(store.get_tool("alice", &t.id).await.unwrap(), None);
    assert_eq!(
        store.get_tool_by_name("alice", "report").await.unwrap(),
        None
    );
    // The versions went with it, with the code given.
    let versions = store.list_versions(ORG, &t.id).await.unwrap();
    let codes: Vec<(i64, String)> = versions
        .iter()
        .map(|v| (v.version, v.code.clone()))
        .collect();
    assert_eq!(
        codes,
        vec![
            (2, "return 'v2 moved'".to_owned()),
            (1, "return 'v1 moved'".to_owned())
        ]
    );
    assert!(
        store
            .list_versions("alice", &t.id)
            .await
            .unwrap()
            .is_empty()
    );
    // The executions stay the old owner's history.
    assert_eq!(
        store
            .list_executions("alice", Some(&t.id), None, None, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        store
            .list_executions(ORG, Some(&t.id), None, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    // The name is free again at the old owner, and a new tool there starts above the revision.
    let again = store.insert_tool(tool("alice", "report")).await.unwrap();
    assert_eq!(again.revision, 4);
    // And back: the revision climbs above any the name had at alice's.
    let back = store
        .move_tool(&ToolMove {
            version_codes: Vec::new(),
            ..move_of(&moved, ORG, "carol", 3)
        })
        .await
        .unwrap();
    assert_eq!((back.owner.as_str(), back.revision), ("carol", 4));
}

async fn a_move_onto_a_taken_name_or_past_the_limit_changes_nothing(backend: &Backend) {
    let store = backend.store();
    let t = store.insert_tool(tool("alice", "report")).await.unwrap();
    store.insert_tool(tool(ORG, "report")).await.unwrap();
    let err = store
        .move_tool(&move_of(&t, "alice", ORG, 1))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::NameTaken { name } if name == "report"),
        "{err}"
    );
    let kept = store.get_tool("alice", &t.id).await.unwrap().unwrap();
    assert_eq!((kept.revision, kept.code.as_str()), (1, "return 1"));
    assert_eq!(
        store.list_versions("alice", &t.id).await.unwrap()[0].code,
        "return 1"
    );

    let other = store.insert_tool(tool("alice", "other")).await.unwrap();
    let err = store
        .move_tool(&ToolMove {
            max_per_owner: 1,
            ..move_of(&other, "alice", ORG, 1)
        })
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::ToolLimit { limit: 1 }), "{err}");
    assert!(store.get_tool("alice", &other.id).await.unwrap().is_some());
}

async fn two_moves_at_once_exactly_one_wins(backend: &Backend) {
    let store = backend.store();
    let t = store.insert_tool(tool("alice", "race")).await.unwrap();
    let (a, b) = (store.clone(), store.clone());
    let (one, two) = (move_of(&t, "alice", ORG, 1), move_of(&t, "alice", "bob", 1));
    let (r1, r2) = tokio::join!(
        tokio::spawn(async move { a.move_tool(&one).await }),
        tokio::spawn(async move { b.move_tool(&two).await })
    );
    let results = [r1.unwrap(), r2.unwrap()];
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    let winner = results.iter().find_map(|r| r.as_ref().ok()).unwrap();
    assert_eq!(
        store
            .get_tool(&winner.owner, &t.id)
            .await
            .unwrap()
            .unwrap()
            .revision,
        2
    );
    assert_eq!(store.get_tool("alice", &t.id).await.unwrap(), None);
}

on_both_backends!(
    a_tool_moves_with_its_versions_and_leaves_its_executions,
    a_move_onto_a_taken_name_or_past_the_limit_changes_nothing,
    two_moves_at_once_exactly_one_wins,
);
