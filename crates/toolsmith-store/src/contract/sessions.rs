//! Sessions' contract: a session is read and listed only by its owner and caller agent; a
//! subagent's spawn is refused past the owner's running subagents or the parent's running
//! children, counted in the insert; an ended session never changes again, except that an ended
//! subagent is archived after its time; messages come back in order, the oldest trimmed past
//! the bounds (the newest always kept), a NUL character included.

use chrono::{DateTime, TimeZone, Utc};

use super::{Backend, on_both_backends};
use crate::{
    SessionKind, SessionMessage, SessionQuery, SessionRecord, SessionStatus, SpawnOutcome,
};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

fn session(id: &str, owner: &str, caller: Option<&str>, kind: SessionKind) -> SessionRecord {
    SessionRecord {
        id: id.to_owned(),
        owner: owner.to_owned(),
        caller_agent: caller.map(str::to_owned),
        agent_id: "agt_1".to_owned(),
        kind,
        label: format!("label of {id}"),
        parent: None,
        depth: 0,
        status: match kind {
            SessionKind::Session => SessionStatus::Idle,
            SessionKind::Subagent => SessionStatus::Running,
        },
        task: (kind == SessionKind::Subagent).then(|| "find out".to_owned()),
        result: None,
        error: None,
        last_run: None,
        message_count: 0,
        message_bytes: 0,
        trimmed: 0,
        created_at: at(0),
        updated_at: at(0),
    }
}

fn child(id: &str, owner: &str, parent: &str) -> SessionRecord {
    SessionRecord {
        parent: Some(parent.to_owned()),
        depth: 1,
        ..session(id, owner, Some("agt_p"), SessionKind::Subagent)
    }
}

fn message(role: &str, content: &str) -> SessionMessage {
    SessionMessage {
        session_id: String::new(),
        seq: -1,
        role: role.to_owned(),
        content: content.to_owned(),
        run_id: Some("run_1".to_owned()),
        at: at(5),
    }
}

fn all() -> SessionQuery {
    SessionQuery {
        limit: 100,
        ..SessionQuery::default()
    }
}

async fn a_session_is_its_owners_and_caller_agents_alone(backend: &Backend) {
    let store = backend.store();
    store
        .insert_session(&session("ses_1", "alice", None, SessionKind::Session))
        .await
        .unwrap();
    store
        .insert_session(&session(
            "ses_2",
            "alice",
            Some("agt_x"),
            SessionKind::Session,
        ))
        .await
        .unwrap();
    let got = store
        .get_session("alice", None, "ses_1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got, session("ses_1", "alice", None, SessionKind::Session));
    assert!(
        store
            .get_session("bob", None, "ses_1")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .get_session("alice", Some("agt_x"), "ses_1")
            .await
            .unwrap()
            .is_none()
    );
    let ids = |list: Vec<SessionRecord>| list.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_sessions("alice", None, &all()).await.unwrap()),
        ["ses_1"]
    );
    assert_eq!(
        ids(store
            .list_sessions("alice", Some("agt_x"), &all())
            .await
            .unwrap()),
        ["ses_2"]
    );
    assert!(
        store
            .list_sessions("bob", None, &all())
            .await
            .unwrap()
            .is_empty()
    );
    // Messages of another's session are never appended through a wrong id.
    assert!(
        store
            .append_session_messages("ses_none", &[message("user", "hi")], 10, 1000)
            .await
            .unwrap()
            .is_none()
    );
}

async fn spawns_are_bounded_by_the_owners_running_subagents_and_the_parents_children(
    backend: &Backend,
) {
    let store = backend.store();
    assert_eq!(
        store
            .spawn_subagent(&child("sub_1", "alice", "run:a"), 3, 2)
            .await
            .unwrap(),
        SpawnOutcome::Inserted
    );
    assert_eq!(
        store
            .spawn_subagent(&child("sub_2", "alice", "run:a"), 3, 2)
            .await
            .unwrap(),
        SpawnOutcome::Inserted
    );
    assert_eq!(
        store
            .spawn_subagent(&child("sub_3", "alice", "run:a"), 3, 2)
            .await
            .unwrap(),
        SpawnOutcome::TooManyChildren(2)
    );
    assert_eq!(
        store
            .spawn_subagent(&child("sub_4", "alice", "run:b"), 3, 2)
            .await
            .unwrap(),
        SpawnOutcome::Inserted
    );
    assert_eq!(
        store
            .spawn_subagent(&child("sub_5", "alice", "run:c"), 3, 2)
            .await
            .unwrap(),
        SpawnOutcome::TooManyRunning(3)
    );
    // Another owner counts apart.
    assert_eq!(
        store
            .spawn_subagent(&child("sub_6", "bob", "run:a"), 3, 2)
            .await
            .unwrap(),
        SpawnOutcome::Inserted
    );
    // An ended child no longer counts.
    let mut done = child("sub_1", "alice", "run:a");
    done.status = SessionStatus::Completed;
    done.result = Some("found".to_owned());
    assert!(store.update_session(&done).await.unwrap());
    assert_eq!(
        store
            .spawn_subagent(&child("sub_7", "alice", "run:a"), 3, 2)
            .await
            .unwrap(),
        SpawnOutcome::Inserted
    );
    let children = store
        .list_sessions(
            "alice",
            Some("agt_p"),
            &SessionQuery {
                parent: Some("run:a".to_owned()),
                kind: Some(SessionKind::Subagent),
                ..all()
            },
        )
        .await
        .unwrap();
    assert_eq!(children.len(), 3);
    assert!(
        children
            .iter()
            .all(|c| c.parent.as_deref() == Some("run:a"))
    );
}

async fn an_ended_session_never_changes_but_is_archived_after_its_time(backend: &Backend) {
    let store = backend.store();
    store
        .spawn_subagent(&child("sub_1", "alice", "run:a"), 8, 5)
        .await
        .unwrap();
    let mut cancelled = child("sub_1", "alice", "run:a");
    cancelled.status = SessionStatus::Cancelled;
    cancelled.error = Some("cancelled by the parent".to_owned());
    cancelled.updated_at = at(10);
    assert!(store.update_session(&cancelled).await.unwrap());
    let mut late = cancelled.clone();
    late.status = SessionStatus::Completed;
    late.result = Some("too late".to_owned());
    assert!(!store.update_session(&late).await.unwrap());
    let stored = store
        .get_session("alice", Some("agt_p"), "sub_1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, SessionStatus::Cancelled);
    assert_eq!(stored.error.as_deref(), Some("cancelled by the parent"));
    // Not yet: changed at 10, archiving what changed before 10.
    assert_eq!(store.archive_sessions("alice", at(10)).await.unwrap(), 0);
    assert_eq!(store.archive_sessions("bob", at(11)).await.unwrap(), 0);
    assert_eq!(store.archive_sessions("alice", at(11)).await.unwrap(), 1);
    let stored = store
        .get_session("alice", Some("agt_p"), "sub_1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.status, SessionStatus::Archived);
    assert!(
        store
            .list_sessions("alice", Some("agt_p"), &all())
            .await
            .unwrap()
            .is_empty()
    );
    let with_archived = SessionQuery {
        archived: true,
        ..all()
    };
    assert_eq!(
        store
            .list_sessions("alice", Some("agt_p"), &with_archived)
            .await
            .unwrap()
            .len(),
        1
    );
    // A conversation is never archived.
    store
        .insert_session(&session("ses_1", "alice", None, SessionKind::Session))
        .await
        .unwrap();
    assert_eq!(store.archive_sessions("alice", at(1000)).await.unwrap(), 0);
}

async fn messages_come_back_in_order_and_the_oldest_are_trimmed(backend: &Backend) {
    let store = backend.store();
    store
        .insert_session(&session("ses_1", "alice", None, SessionKind::Session))
        .await
        .unwrap();
    let after = store
        .append_session_messages(
            "ses_1",
            &[message("user", "one"), message("assistant", "a\u{0}b")],
            4,
            1000,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (after.message_count, after.message_bytes, after.trimmed),
        (2, 6, 0)
    );
    let after = store
        .append_session_messages(
            "ses_1",
            &[
                message("user", "three"),
                message("assistant", "four"),
                message("user", "five"),
            ],
            4,
            1000,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!((after.message_count, after.trimmed), (4, 1));
    let all = store.session_messages("ses_1", 100).await.unwrap();
    let seen: Vec<(i64, &str, &str)> = all
        .iter()
        .map(|m| (m.seq, m.role.as_str(), m.content.as_str()))
        .collect();
    assert_eq!(
        seen,
        [
            (1, "assistant", "a\u{0}b"),
            (2, "user", "three"),
            (3, "assistant", "four"),
            (4, "user", "five")
        ]
    );
    assert_eq!(all[0].run_id.as_deref(), Some("run_1"));
    let last_two = store.session_messages("ses_1", 2).await.unwrap();
    assert_eq!(last_two.iter().map(|m| m.seq).collect::<Vec<_>>(), [3, 4]);
    // By bytes: what is over 10 bytes goes, but never the newest.
    let after = store
        .append_session_messages("ses_1", &[message("assistant", &"x".repeat(50))], 4, 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (after.message_count, after.message_bytes, after.trimmed),
        (1, 50, 5)
    );
    assert!(
        store
            .session_messages("ses_2", 10)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn running_sessions_are_every_running_one_of_the_owner(backend: &Backend) {
    let store = backend.store();
    // Alice's: a running conversation (by an agent of hers), an idle one, a running subagent
    // and a cancelled one; Bob's running conversation.
    let mut talking = session("ses_1", "alice", Some("agt_a"), SessionKind::Session);
    talking.status = SessionStatus::Running;
    talking.last_run = Some("run_1".to_owned());
    store.insert_session(&talking).await.unwrap();
    store
        .insert_session(&session("ses_2", "alice", None, SessionKind::Session))
        .await
        .unwrap();
    store
        .spawn_subagent(&child("sub_1", "alice", "run:a"), 8, 5)
        .await
        .unwrap();
    store
        .spawn_subagent(&child("sub_2", "alice", "run:a"), 8, 5)
        .await
        .unwrap();
    let mut cancelled = child("sub_2", "alice", "run:a");
    cancelled.status = SessionStatus::Cancelled;
    cancelled.updated_at = at(5);
    assert!(store.update_session(&cancelled).await.unwrap());
    let mut bobs = session("ses_3", "bob", None, SessionKind::Session);
    bobs.status = SessionStatus::Running;
    store.insert_session(&bobs).await.unwrap();

    let mut running: Vec<String> = store
        .running_sessions("alice")
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    running.sort();
    assert_eq!(running, ["ses_1", "sub_1"]);
    let found = store.running_sessions("alice").await.unwrap();
    let talking_now = found.iter().find(|s| s.id == "ses_1").unwrap();
    assert_eq!(talking_now.last_run.as_deref(), Some("run_1"));
    assert!(store.running_sessions("carol").await.unwrap().is_empty());
}

on_both_backends!(
    running_sessions_are_every_running_one_of_the_owner,
    a_session_is_its_owners_and_caller_agents_alone,
    spawns_are_bounded_by_the_owners_running_subagents_and_the_parents_children,
    an_ended_session_never_changes_but_is_archived_after_its_time,
    messages_come_back_in_order_and_the_oldest_are_trimmed,
);
