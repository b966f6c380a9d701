//! A command tool whose env is sealed moves into an organisation and out again and still
//! opens there (each value is sealed to its owner, so the move seals it again — its older
//! versions' too); the registry follows the move.

use std::sync::Arc;

use serde_json::json;
use toolsmith_core::ToolKind;
use toolsmith_core::organization::OrgRole;
use toolsmith_store::{SqliteStore, Store};

use crate::{Actor, CreateTool, ToolPatch, ToolRef, ToolService, ToolServiceSettings};

#[tokio::test]
async fn a_command_tools_sealed_env_moves_with_it_and_opens_at_the_new_owner() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
    let key = toolsmith_secrets::SecretKey::generate().unwrap();
    let connectors = crate::Connectors {
        cipher: Some(Arc::new(toolsmith_secrets::Cipher::new(&key))),
        ..crate::Connectors::default()
    };
    let s = ToolService::open_with(ToolServiceSettings::default(), store.clone(), connectors)
        .await
        .unwrap();
    let ann = Actor::user("ann");
    let acme = s.create_organization(&ann, "acme", None).await.unwrap();
    s.put_organization_member(&ann, "acme", "ed", OrgRole::Editor)
        .await
        .unwrap();
    let spec =
        |word: &str| json!({"command": format!("echo {word} $TOKEN"), "env": {"TOKEN": "s3cret"}});
    let created = s
        .create(
            &ann,
            CreateTool {
                name: "greet".to_owned(),
                kind: ToolKind::Command,
                description: "says hello".to_owned(),
                parameters: json!({"type": "object", "properties": {}}),
                code: spec("hello").to_string(),
                category: None,
                tags: Vec::new(),
                permissions: Vec::new(),
                requires_approval: None,
                metadata: None,
            },
        )
        .await
        .unwrap();
    // A second version, so the move reseals an older one too.
    let patch = ToolPatch {
        code: Some(spec("hi").to_string()),
        ..ToolPatch::default()
    };
    let v2 = s
        .update(&ann, &ToolRef::Id(created.id.clone()), patch, None)
        .await
        .unwrap();
    assert_eq!(v2.version, 2);
    assert!(s.registry().get("ann", "greet").is_some());

    let moved = s
        .move_tool(&ann, &ToolRef::Name("greet".to_owned()), "acme", None)
        .await
        .unwrap();
    assert_eq!(moved.owner, acme.id);
    assert!(!moved.code.contains("s3cret"), "{}", moved.code);
    assert_ne!(moved.code, v2.code, "sealed again for its new owner");
    // Registered under the organisation (its env opens there), gone from ann's.
    assert!(s.registry().get(&acme.id, "greet").is_some());
    assert!(s.registry().get("ann", "greet").is_none());
    // Every version's env opens at the new owner: rolling back to version 1 works.
    let in_acme = Actor::user(acme.id.clone()).with_member(Some("ed".to_owned()));
    let rolled = s
        .rollback(&in_acme, &ToolRef::Id(created.id.clone()), 1, None)
        .await
        .unwrap();
    assert!(s.registry().get(&acme.id, "greet").is_some(), "{rolled:?}");

    // And out again, by an editor acting in the organisation, to themselves.
    let out = s
        .move_tool(&in_acme, &ToolRef::Id(created.id.clone()), "me", None)
        .await
        .unwrap();
    assert_eq!(out.owner, "ed");
    assert!(s.registry().get("ed", "greet").is_some());
    assert!(s.registry().get(&acme.id, "greet").is_none());
}
