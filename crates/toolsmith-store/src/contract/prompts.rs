//! Prompts' contract: a prompt is its owner's alone (by id and by name), unique by name per
//! owner, changed only at the next revision, with every version of its definition kept (a
//! switch on or off is no version); deleting it deletes its versions. On PostgreSQL every
//! committed write is announced to the other instances as a `Prompt` change of its owner.

use chrono::{DateTime, TimeZone, Utc};

use super::{Backend, on_both_backends};
use crate::{PromptRecord, PromptUpdate};
use toolsmith_core::CreatedBy;
use toolsmith_core::prompt::{
    PromptArgumentSpec, PromptContent, PromptDefinition, PromptMessageSpec, PromptResource,
    PromptRole,
};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

pub(crate) fn prompt(id: &str, owner: &str, name: &str) -> PromptRecord {
    PromptRecord {
        id: id.to_owned(),
        owner: owner.to_owned(),
        agent: None,
        name: name.to_owned(),
        revision: 1,
        enabled: true,
        created_by: CreatedBy::User,
        definition: PromptDefinition {
            title: Some("Review".to_owned()),
            description: "Reviews code".to_owned(),
            arguments: vec![PromptArgumentSpec {
                name: "language".to_owned(),
                title: None,
                description: "The language".to_owned(),
                required: true,
                values: vec!["rust".to_owned(), "python".to_owned()],
            }],
            messages: vec![
                PromptMessageSpec {
                    role: PromptRole::User,
                    content: PromptContent::Text {
                        text: "Review this {{ language }} code.\u{0}".to_owned(),
                    },
                },
                PromptMessageSpec {
                    role: PromptRole::Assistant,
                    content: PromptContent::Resource {
                        resource: PromptResource {
                            uri: "file:///x".to_owned(),
                            mime_type: Some("text/plain".to_owned()),
                            text: Some("é".to_owned()),
                            blob: None,
                        },
                    },
                },
            ],
        },
        created_at: at(0),
        updated_at: at(0),
    }
}

async fn a_prompt_is_its_owners_alone_and_keeps_every_version(backend: &Backend) {
    let store = backend.store();
    let first = prompt("p1", "alice", "review");
    assert!(store.insert_prompt(&first).await.unwrap());
    // The name is taken for alice, free for bob.
    assert!(
        !store
            .insert_prompt(&prompt("p2", "alice", "review"))
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_prompt(&prompt("p3", "bob", "review"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.get_prompt("alice", "p1").await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        store.get_prompt("alice", "review").await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(store.get_prompt("bob", "p1").await.unwrap(), None);
    assert_eq!(store.prompt_versions("bob", "p1").await.unwrap(), vec![]);

    // A change by a model, at the next revision, is a version; a stale one is a conflict.
    let mut second = first.clone();
    second.revision = 2;
    second.created_by = CreatedBy::Llm;
    second.agent = Some("helper".to_owned());
    second.definition.description = "Reviews code, kindly".to_owned();
    second.updated_at = at(10);
    assert_eq!(
        store.update_prompt(&second, true).await.unwrap(),
        PromptUpdate::Updated
    );
    assert_eq!(
        store.update_prompt(&second, true).await.unwrap(),
        PromptUpdate::Conflict { actual: 2 }
    );
    // Switched off: a new revision, no new version.
    let mut third = second.clone();
    third.revision = 3;
    third.enabled = false;
    assert_eq!(
        store.update_prompt(&third, false).await.unwrap(),
        PromptUpdate::Updated
    );
    assert_eq!(
        store.get_prompt("alice", "p1").await.unwrap(),
        Some(third.clone())
    );
    let versions = store.prompt_versions("alice", "p1").await.unwrap();
    assert_eq!(
        versions
            .iter()
            .map(|v| (v.revision, v.created_by, v.definition.description.as_str()))
            .collect::<Vec<_>>(),
        vec![
            (1, CreatedBy::User, "Reviews code"),
            (2, CreatedBy::Llm, "Reviews code, kindly"),
        ]
    );
    assert_eq!(versions[0].definition, first.definition);

    // Another owner's id changes nothing; a taken name is refused.
    let mut foreign = third.clone();
    foreign.owner = "bob".to_owned();
    foreign.revision = 4;
    assert_eq!(
        store.update_prompt(&foreign, true).await.unwrap(),
        PromptUpdate::NotFound
    );
    let mut renamed = third.clone();
    renamed.revision = 4;
    assert!(
        store
            .insert_prompt(&prompt("p4", "alice", "summary"))
            .await
            .unwrap()
    );
    renamed.name = "summary".to_owned();
    assert_eq!(
        store.update_prompt(&renamed, true).await.unwrap(),
        PromptUpdate::NameTaken
    );

    let listed = store.list_prompts("alice").await.unwrap();
    assert_eq!(
        listed.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
        vec!["p1", "p4"]
    );

    // Each owner's fingerprint moves with each of their writes, and only theirs.
    let before = store.prompt_fingerprints().await.unwrap();
    let owners: Vec<&str> = before.iter().map(|(o, _)| o.as_str()).collect();
    assert_eq!(owners, vec!["alice", "bob"]);
    let mut fourth = third.clone();
    fourth.revision = 4;
    store.update_prompt(&fourth, false).await.unwrap();
    let after = store.prompt_fingerprints().await.unwrap();
    assert_ne!(after[0], before[0]);
    assert_eq!(after[1], before[1]);

    // Only the owner deletes, and the versions go with it.
    assert!(!store.delete_prompt("bob", "p1").await.unwrap());
    assert!(store.delete_prompt("alice", "p1").await.unwrap());
    assert_eq!(store.get_prompt("alice", "p1").await.unwrap(), None);
    assert_eq!(backend.count_rows("prompt_versions").await, 2);
}

async fn another_instance_hears_of_each_committed_prompt_write(backend: &Backend) {
    use super::next_change as next;
    use crate::{ChangeKind, FeedEvent};
    let Some(mut feed) = backend.another_instances_feed().await else {
        return;
    };
    let store = backend.store();
    let first = prompt("p1", "alice", "review");
    assert!(store.insert_prompt(&first).await.unwrap());
    // A refused insert (the name is taken) announces nothing.
    assert!(
        !store
            .insert_prompt(&prompt("p2", "alice", "review"))
            .await
            .unwrap()
    );
    let mut second = first.clone();
    second.revision = 2;
    assert_eq!(
        store.update_prompt(&second, false).await.unwrap(),
        PromptUpdate::Updated
    );
    assert!(store.delete_prompt("alice", "p1").await.unwrap());
    let mut seen = Vec::new();
    for _ in 0..3 {
        let FeedEvent::Changed(change) = next(&mut feed).await else {
            panic!("expected a change");
        };
        seen.push((change.kind, change.id, change.owner, change.revision));
    }
    let change = |revision| {
        (
            ChangeKind::Prompt,
            "p1".to_owned(),
            "alice".to_owned(),
            revision,
        )
    };
    assert_eq!(seen, vec![change(Some(1)), change(Some(2)), change(None)]);
}

on_both_backends!(
    a_prompt_is_its_owners_alone_and_keeps_every_version,
    another_instance_hears_of_each_committed_prompt_write,
);
