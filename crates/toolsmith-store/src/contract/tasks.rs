//! Tool tasks' contract: a task is read, listed and cancelled only by its owner and agent; the
//! running-task cap is counted in the insert (and holds between instances); a status change
//! never overwrites an ended task (a cancelled one stays cancelled when its run finishes);
//! expired tasks are invisible at once and deleted by the sweep; an instance that stops fails
//! its own running tasks and no one else's.

use std::sync::Arc;

use chrono::{DateTime, Duration, TimeZone, Utc};
use serde_json::json;

use super::{Backend, on_both_backends};
use crate::{Store, ToolTaskRecord, ToolTaskStatus};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

fn task(id: &str, owner: &str, agent: Option<&str>, created: i64) -> ToolTaskRecord {
    ToolTaskRecord {
        id: id.to_owned(),
        owner: owner.to_owned(),
        agent: agent.map(str::to_owned),
        tool: "slow".to_owned(),
        status: ToolTaskStatus::Working,
        status_message: None,
        created_at: at(created),
        updated_at: at(created),
        ttl_ms: 3_600_000,
        expires_at: at(created) + Duration::hours(1),
        result: None,
        instance: "one".to_owned(),
    }
}

async fn a_task_is_its_owners_and_agents_alone(backend: &Backend) {
    let store = backend.store();
    assert!(
        store
            .insert_tool_task(&task("t1", "alice", None, 0), 10)
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_tool_task(&task("t2", "alice", Some("bot"), 1), 10)
            .await
            .unwrap()
    );
    let now = at(2);
    let mine = store
        .get_tool_task("alice", None, "t1", now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(mine, task("t1", "alice", None, 0));
    // Another user, the user's agent, another agent: not found.
    for (owner, agent) in [("bob", None), ("alice", Some("bot")), ("alice", Some("x"))] {
        assert_eq!(
            store.get_tool_task(owner, agent, "t1", now).await.unwrap(),
            None
        );
        assert_eq!(
            store
                .cancel_tool_task(owner, agent, "t1", "no", now)
                .await
                .unwrap(),
            None
        );
    }
    assert_eq!(
        store.get_tool_task("alice", None, "t2", now).await.unwrap(),
        None
    );
    let listed = store
        .list_tool_tasks("alice", Some("bot"), now, 10, 0)
        .await
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, "t2");
    assert_eq!(listed[0].agent.as_deref(), Some("bot"));
    assert!(
        store
            .list_tool_tasks("bob", None, now, 10, 0)
            .await
            .unwrap()
            .is_empty()
    );
}

async fn tasks_list_newest_first_in_pages(backend: &Backend) {
    let store = backend.store();
    for i in 0..5 {
        store
            .insert_tool_task(&task(&format!("t{i}"), "alice", None, i), 10)
            .await
            .unwrap();
    }
    let ids = |page: Vec<ToolTaskRecord>| page.into_iter().map(|t| t.id).collect::<Vec<_>>();
    let now = at(10);
    assert_eq!(
        ids(store
            .list_tool_tasks("alice", None, now, 2, 0)
            .await
            .unwrap()),
        ["t4", "t3"]
    );
    assert_eq!(
        ids(store
            .list_tool_tasks("alice", None, now, 2, 4)
            .await
            .unwrap()),
        ["t0"]
    );
}

async fn the_running_cap_counts_running_unexpired_tasks(backend: &Backend) {
    let store = backend.store();
    assert!(
        store
            .insert_tool_task(&task("t1", "alice", None, 0), 2)
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_tool_task(&task("t2", "alice", Some("bot"), 1), 2)
            .await
            .unwrap()
    );
    // The cap is per user, whatever the agent.
    assert!(
        !store
            .insert_tool_task(&task("t3", "alice", None, 2), 2)
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .get_tool_task("alice", None, "t3", at(3))
            .await
            .unwrap(),
        None
    );
    // Another user has a cap of their own.
    assert!(
        store
            .insert_tool_task(&task("b1", "bob", None, 2), 2)
            .await
            .unwrap()
    );
    // An ended task no longer counts.
    store
        .update_tool_task(
            "t1",
            ToolTaskStatus::Completed,
            None,
            Some(&json!({"content": 1})),
            at(3),
        )
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .insert_tool_task(&task("t3", "alice", None, 4), 2)
            .await
            .unwrap()
    );
    // Nor does one that expired (its instance died and nobody ended it).
    let mut late = task("t4", "alice", None, 3 * 3600);
    late.created_at = at(3 * 3600);
    assert!(store.insert_tool_task(&late, 2).await.unwrap());
}

async fn the_cap_holds_between_instances(backend: &Backend) {
    let first = backend.store();
    let second = backend.another_process().await;
    let mut attempts = Vec::new();
    for i in 0..8 {
        let store: Arc<dyn Store> = if i % 2 == 0 {
            Arc::clone(&first)
        } else {
            Arc::clone(&second)
        };
        attempts.push(tokio::spawn(async move {
            store
                .insert_tool_task(&task(&format!("t{i}"), "alice", None, i), 3)
                .await
                .unwrap()
        }));
    }
    let mut inserted = 0;
    for attempt in attempts {
        inserted += usize::from(attempt.await.unwrap());
    }
    assert_eq!(inserted, 3);
    assert_eq!(backend.count_rows("tool_tasks").await, 3);
}

async fn an_ended_task_never_changes_again(backend: &Backend) {
    let store = backend.store();
    store
        .insert_tool_task(&task("t1", "alice", None, 0), 10)
        .await
        .unwrap();
    let waiting = store
        .update_tool_task(
            "t1",
            ToolTaskStatus::InputRequired,
            Some("waits for approval"),
            None,
            at(1),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(waiting.status, ToolTaskStatus::InputRequired);
    assert_eq!(waiting.updated_at, at(1));
    let cancelled = store
        .cancel_tool_task("alice", None, "t1", "cancelled by its caller", at(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cancelled.status, ToolTaskStatus::Cancelled);
    assert_eq!(
        cancelled.status_message.as_deref(),
        Some("cancelled by its caller")
    );
    // The run finishes later: the cancellation stands.
    assert_eq!(
        store
            .update_tool_task(
                "t1",
                ToolTaskStatus::Completed,
                None,
                Some(&json!(1)),
                at(3)
            )
            .await
            .unwrap(),
        None
    );
    // Cancelling twice answers the task as it is.
    let again = store
        .cancel_tool_task("alice", None, "t1", "again", at(4))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again, cancelled);
    assert_eq!(
        store.ended_tool_tasks(&["t1".to_owned()]).await.unwrap(),
        ["t1"]
    );
}

async fn a_result_is_kept_as_written(backend: &Backend) {
    let store = backend.store();
    store
        .insert_tool_task(&task("t1", "alice", None, 0), 10)
        .await
        .unwrap();
    let result = json!({"content": {"text": "é\u{0}ok", "n": [1, 2.5, null]}, "isError": false});
    let done = store
        .update_tool_task("t1", ToolTaskStatus::Completed, None, Some(&result), at(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.result.as_ref(), Some(&result));
    let read = store
        .get_tool_task("alice", None, "t1", at(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, done);
}

async fn expired_tasks_are_gone_and_swept(backend: &Backend) {
    let store = backend.store();
    store
        .insert_tool_task(&task("old", "alice", None, 0), 10)
        .await
        .unwrap();
    store
        .insert_tool_task(&task("new", "alice", None, 1800), 10)
        .await
        .unwrap();
    let later = at(3600);
    assert_eq!(
        store
            .get_tool_task("alice", None, "old", later)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .cancel_tool_task("alice", None, "old", "late", later)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .list_tool_tasks("alice", None, later, 10, 0)
            .await
            .unwrap()
            .len(),
        1
    );
    assert_eq!(store.sweep_tool_tasks(later).await.unwrap(), 1);
    assert_eq!(backend.count_rows("tool_tasks").await, 1);
    assert_eq!(
        store
            .ended_tool_tasks(&["old".to_owned(), "new".to_owned()])
            .await
            .unwrap(),
        ["old"]
    );
}

async fn a_stopping_instance_fails_its_own_running_tasks(backend: &Backend) {
    let store = backend.store();
    store
        .insert_tool_task(&task("mine", "alice", None, 0), 10)
        .await
        .unwrap();
    let mut other = task("theirs", "alice", None, 1);
    other.instance = "two".to_owned();
    store.insert_tool_task(&other, 10).await.unwrap();
    store
        .insert_tool_task(&task("done", "alice", None, 2), 10)
        .await
        .unwrap();
    store
        .update_tool_task(
            "done",
            ToolTaskStatus::Completed,
            None,
            Some(&json!(1)),
            at(3),
        )
        .await
        .unwrap();
    assert_eq!(
        store
            .fail_instance_tool_tasks("one", "the instance stopped", at(4))
            .await
            .unwrap(),
        1
    );
    let now = at(5);
    let mine = store
        .get_tool_task("alice", None, "mine", now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(mine.status, ToolTaskStatus::Failed);
    assert_eq!(mine.status_message.as_deref(), Some("the instance stopped"));
    let theirs = store
        .get_tool_task("alice", None, "theirs", now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(theirs.status, ToolTaskStatus::Working);
    let done = store
        .get_tool_task("alice", None, "done", now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(done.status, ToolTaskStatus::Completed);
}

on_both_backends!(
    a_task_is_its_owners_and_agents_alone,
    tasks_list_newest_first_in_pages,
    the_running_cap_counts_running_unexpired_tasks,
    the_cap_holds_between_instances,
    an_ended_task_never_changes_again,
    a_result_is_kept_as_written,
    expired_tasks_are_gone_and_swept,
    a_stopping_instance_fails_its_own_running_tasks,
);
