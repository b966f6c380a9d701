//! API tokens and the tools fingerprint, against a real SQLite file.

use chrono::{TimeZone, Utc};
use serde_json::json;
use toolsmith_core::{CreatedBy, CustomToolRecord, ToolKind, ToolStatus};
use toolsmith_store::{ApiTokenRecord, GovernanceStore, SqliteStore, ToolStore};

fn token(id: &str, hash: &str) -> ApiTokenRecord {
    ApiTokenRecord {
        id: id.to_owned(),
        user_id: "alice".to_owned(),
        name: "laptop".to_owned(),
        scopes: vec!["tools:read".to_owned(), "tools:execute".to_owned()],
        token_hash: hash.to_owned(),
        created_at: Utc.timestamp_opt(1_700_000_000, 0).unwrap(),
        last_used_at: None,
        agent_id: Some("support".to_owned()),
    }
}

pub(crate) fn tool(name: &str) -> CustomToolRecord {
    let at = Utc.timestamp_opt(1_700_000_000, 0).unwrap();
    CustomToolRecord {
        id: CustomToolRecord::new_id(),
        owner: "default".to_owned(),
        name: name.to_owned(),
        kind: ToolKind::Js,
        description: "d".to_owned(),
        parameters: json!({"type": "object"}),
        code: "return 1".to_owned(),
        category: None,
        tags: Vec::new(),
        permissions: Default::default(),
        status: ToolStatus::Active,
        requires_approval: false,
        created_by: CreatedBy::User,
        version: 1,
        revision: 1,
        usage_count: 0,
        last_used_at: None,
        metadata: json!({}),
        created_at: at,
        updated_at: at,
    }
}

#[tokio::test]
async fn tokens_round_trip_by_hash_and_can_be_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("t.db")).await.unwrap();
    assert!(store.list_tokens().await.unwrap().is_empty());
    let first = token("tok_000000000001", "aa");
    store.insert_token(&first).await.unwrap();
    store
        .insert_token(&token("tok_000000000002", "bb"))
        .await
        .unwrap();
    assert_eq!(store.find_token("aa").await.unwrap(), Some(first.clone()));
    assert_eq!(store.find_token("cc").await.unwrap(), None);
    let err = store.insert_token(&token("tok_000000000003", "aa")).await;
    assert!(err.is_err(), "two tokens may not share a hash");
    let used = Utc.timestamp_opt(1_700_000_100, 0).unwrap();
    store.touch_token("tok_000000000001", used).await.unwrap();
    assert_eq!(
        store.find_token("aa").await.unwrap().unwrap().last_used_at,
        Some(used)
    );
    assert!(store.delete_token("tok_000000000001").await.unwrap());
    assert!(!store.delete_token("tok_000000000001").await.unwrap());
    let ids: Vec<String> = store
        .list_tokens()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    assert_eq!(ids, ["tok_000000000002"]);
}

#[tokio::test]
async fn the_fingerprint_moves_on_every_tool_write_and_only_then() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("t.db")).await.unwrap();
    let mut seen = vec![store.tools_fingerprint().await.unwrap()];
    let t = store.insert_tool(tool("a")).await.unwrap();
    seen.push(store.tools_fingerprint().await.unwrap());
    store
        .record_usage("default", &t.id, Utc::now())
        .await
        .unwrap();
    assert_eq!(
        store.tools_fingerprint().await.unwrap(),
        seen[1],
        "usage is not a tool change"
    );
    let disabled = CustomToolRecord {
        status: ToolStatus::Disabled,
        revision: 2,
        ..t.clone()
    };
    store.update_tool(&disabled, 1).await.unwrap();
    seen.push(store.tools_fingerprint().await.unwrap());
    store.delete_tool("default", &t.id, 2).await.unwrap();
    seen.push(store.tools_fingerprint().await.unwrap());
    store.insert_tool(tool("a")).await.unwrap();
    seen.push(store.tools_fingerprint().await.unwrap());
    for pair in seen.windows(2) {
        assert_ne!(
            pair[0], pair[1],
            "a write left the fingerprint unchanged: {seen:?}"
        );
    }
}
