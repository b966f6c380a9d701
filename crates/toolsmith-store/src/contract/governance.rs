//! The governance contract: approvals decided once and only while pending (one winner among
//! concurrent deciders), expiry, one-use `allow_once` that expires, grants from `allow_always`
//! (read back as `granted`), a code change voiding what was asked for the old code, the audit
//! log's filters, and the stored policy's revision check.

use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;

use super::{Backend, on_both_backends};
use crate::{
    ApprovalDecision, ApprovalQuery, ApprovalRecord, ApprovalStatus, AuditQuery, AuditRecord,
};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

fn approval(id: &str, args_hash: &str) -> ApprovalRecord {
    ApprovalRecord {
        id: id.to_owned(),
        owner: "alice".to_owned(),
        tool_name: "send_mail".to_owned(),
        tool_key: "tool_0123456789abcdef".to_owned(),
        caller: "agent-1".to_owned(),
        args_hash: args_hash.to_owned(),
        args_preview: "{\"to\":\"bob\"}".to_owned(),
        status: ApprovalStatus::Pending,
        decision: None,
        decided_by: None,
        created_at: at(0),
        expires_at: at(120),
        decided_at: None,
    }
}

async fn an_approval_is_decided_once_and_only_while_pending(backend: &Backend) {
    let store = backend.store();
    store
        .insert_approval(&approval("apr_1", "h1"))
        .await
        .unwrap();
    assert_eq!(store.count_pending_approvals(at(1)).await.unwrap(), 1);
    let found = store
        .find_pending_approval(&approval("probe", "h1"), at(1))
        .await
        .unwrap();
    assert_eq!(found.map(|a| a.id).as_deref(), Some("apr_1"));
    assert!(
        store
            .find_pending_approval(&approval("probe", "other"), at(1))
            .await
            .unwrap()
            .is_none()
    );

    let decided = store
        .decide_approval("apr_1", ApprovalDecision::AllowOnce, "admin", at(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(decided.status, ApprovalStatus::Allowed);
    assert_eq!(decided.decided_by.as_deref(), Some("admin"));
    // A second decision finds nothing pending.
    assert!(
        store
            .decide_approval("apr_1", ApprovalDecision::Deny, "admin", at(6))
            .await
            .unwrap()
            .is_none()
    );
    assert_eq!(store.count_pending_approvals(at(6)).await.unwrap(), 0);

    // allow_once is used up by exactly one call with the same arguments.
    assert_eq!(
        store
            .consume_allowed_approval(&approval("p", "h2"))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .consume_allowed_approval(&approval("p", "h1"))
            .await
            .unwrap()
            .as_deref(),
        Some("apr_1")
    );
    assert_eq!(
        store
            .consume_allowed_approval(&approval("p", "h1"))
            .await
            .unwrap(),
        None
    );
    assert!(
        !store
            .has_approval_grant("alice", "tool_0123456789abcdef", "agent-1")
            .await
            .unwrap()
    );
}

async fn an_expired_approval_cannot_be_allowed_and_allow_always_leaves_a_grant(backend: &Backend) {
    let store = backend.store();
    store
        .insert_approval(&approval("apr_old", "h"))
        .await
        .unwrap();
    assert!(
        store
            .decide_approval("apr_old", ApprovalDecision::AllowOnce, "admin", at(121))
            .await
            .unwrap()
            .is_none()
    );
    let old = store.get_approval("apr_old").await.unwrap().unwrap();
    assert_eq!(old.state(at(121)), ApprovalStatus::Expired);
    assert_eq!(old.state(at(119)), ApprovalStatus::Pending);

    store
        .insert_approval(&approval("apr_new", "h"))
        .await
        .unwrap();
    store
        .decide_approval("apr_new", ApprovalDecision::AllowAlways, "admin", at(3))
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .has_approval_grant("alice", "tool_0123456789abcdef", "agent-1")
            .await
            .unwrap()
    );
    assert!(
        !store
            .has_approval_grant("alice", "tool_0123456789abcdef", "agent-2")
            .await
            .unwrap()
    );
    assert!(
        !store
            .has_approval_grant("bob", "tool_0123456789abcdef", "agent-1")
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .revoke_approval_grants("alice", "tool_0123456789abcdef")
            .await
            .unwrap(),
        1
    );
    assert!(
        !store
            .has_approval_grant("alice", "tool_0123456789abcdef", "agent-1")
            .await
            .unwrap()
    );

    let listed = store
        .list_approvals(
            &ApprovalQuery {
                owner: Some("alice".to_owned()),
                caller: None,
                pending_only: false,
                limit: 10,
            },
            at(4),
        )
        .await
        .unwrap();
    assert_eq!(listed.len(), 2);
    // One agent's calls only (both approvals here are agent-1's).
    for (caller, pending_only, expected) in [
        ("agent-1", false, 2),
        ("agent-2", false, 0),
        ("", false, 0),
        ("agent-2", true, 0),
    ] {
        let listed = store
            .list_approvals(
                &ApprovalQuery {
                    owner: Some("alice".to_owned()),
                    caller: Some(caller.to_owned()),
                    pending_only,
                    limit: 10,
                },
                at(4),
            )
            .await
            .unwrap();
        assert_eq!(listed.len(), expected, "{caller:?} {pending_only}");
    }
    let pending = store
        .list_approvals(
            &ApprovalQuery {
                owner: None,
                caller: None,
                pending_only: true,
                limit: 10,
            },
            at(200),
        )
        .await
        .unwrap();
    assert!(pending.is_empty());

    // Retention: approvals created before the cut go, grants stay.
    store
        .insert_approval(&approval("apr_grant", "g"))
        .await
        .unwrap();
    store
        .decide_approval("apr_grant", ApprovalDecision::AllowAlways, "admin", at(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.prune_approvals(at(1)).await.unwrap(), 3);
    assert!(store.get_approval("apr_new").await.unwrap().is_none());
    assert!(
        store
            .has_approval_grant("alice", "tool_0123456789abcdef", "agent-1")
            .await
            .unwrap()
    );
}

async fn allow_once_expires_allow_always_reads_granted_and_a_code_change_voids_the_rest(
    backend: &Backend,
) {
    let store = backend.store();
    // allow_once: the call may run within one more approval time (120 s) from the decision.
    store
        .insert_approval(&approval("apr_once", "h1"))
        .await
        .unwrap();
    let decided = store
        .decide_approval("apr_once", ApprovalDecision::AllowOnce, "admin", at(10))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(decided.status, ApprovalStatus::Allowed);
    assert_eq!(decided.expires_at, at(130));
    let mut late = approval("probe", "h1");
    late.created_at = at(131);
    assert_eq!(store.consume_allowed_approval(&late).await.unwrap(), None);
    let stored = store.get_approval("apr_once").await.unwrap().unwrap();
    assert_eq!(stored.state(at(131)), ApprovalStatus::Expired);
    assert_eq!(stored.state(at(129)), ApprovalStatus::Allowed);

    // allow_always reads back as granted, on the decision and from the table.
    store
        .insert_approval(&approval("apr_always", "h2"))
        .await
        .unwrap();
    let granted = store
        .decide_approval("apr_always", ApprovalDecision::AllowAlways, "admin", at(5))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(granted.status, ApprovalStatus::Granted);
    let stored = store.get_approval("apr_always").await.unwrap().unwrap();
    assert_eq!(stored.status, ApprovalStatus::Granted);
    assert_eq!(stored.decision, Some(ApprovalDecision::AllowAlways));

    // A code change (revoking the tool's grants) voids what was asked for the old code.
    store
        .insert_approval(&approval("apr_waiting", "h3"))
        .await
        .unwrap();
    store
        .insert_approval(&approval("apr_unused", "h4"))
        .await
        .unwrap();
    store
        .decide_approval("apr_unused", ApprovalDecision::AllowOnce, "admin", at(6))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store
            .revoke_approval_grants("alice", "tool_0123456789abcdef")
            .await
            .unwrap(),
        1
    );
    for id in ["apr_waiting", "apr_unused"] {
        let voided = store.get_approval(id).await.unwrap().unwrap();
        assert_eq!(voided.status, ApprovalStatus::Expired, "{id}");
    }
    assert_eq!(
        store
            .consume_allowed_approval(&approval("probe", "h4"))
            .await
            .unwrap(),
        None
    );
    assert!(
        store
            .decide_approval("apr_waiting", ApprovalDecision::AllowOnce, "admin", at(7))
            .await
            .unwrap()
            .is_none()
    );
    let kept = store.get_approval("apr_always").await.unwrap().unwrap();
    assert_eq!(kept.status, ApprovalStatus::Granted);
}

async fn concurrent_decisions_on_one_approval_have_one_winner(backend: &Backend) {
    let store = backend.store();
    store
        .insert_approval(&approval("apr_race", "h"))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = store.clone();
        let decision = if i % 2 == 0 {
            ApprovalDecision::AllowOnce
        } else {
            ApprovalDecision::Deny
        };
        tasks.push(tokio::spawn(async move {
            store
                .decide_approval("apr_race", decision, "admin", at(1))
                .await
                .unwrap()
                .is_some()
        }));
    }
    let mut winners = 0;
    for task in tasks {
        winners += usize::from(task.await.unwrap());
    }
    assert_eq!(winners, 1);
}

fn audit(action: &str, actor: &str, target: &str, secs: i64) -> AuditRecord {
    AuditRecord {
        id: 0,
        at: at(secs),
        actor: actor.to_owned(),
        actor_kind: "user".to_owned(),
        action: action.to_owned(),
        target_type: "tool".to_owned(),
        target_id: target.to_owned(),
        target_name: Some("t".to_owned()),
        before_revision: Some(1),
        after_revision: Some(2),
        request_id: Some("req-1".to_owned()),
        details: json!({"fields": ["code"]}),
    }
}

async fn the_audit_log_filters_newest_first(backend: &Backend) {
    let store = backend.store();
    let first = store
        .insert_audit(&audit("tool.create", "alice", "tool_a", 0))
        .await
        .unwrap();
    let second = store
        .insert_audit(&audit("tool.update", "alice", "tool_a", 1))
        .await
        .unwrap();
    store
        .insert_audit(&audit("tool_x.create", "bob", "tool_b", 2))
        .await
        .unwrap();
    store
        .insert_audit(&audit("policy.update", "bob", "policy", 3))
        .await
        .unwrap();
    assert!(second > first);

    let all = store
        .list_audit(&AuditQuery {
            limit: 100,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(all.len(), 4);
    assert_eq!(all[0].action, "policy.update");
    assert_eq!(
        all[3],
        AuditRecord {
            id: first,
            ..audit("tool.create", "alice", "tool_a", 0)
        }
    );

    let tools = store
        .list_audit(&AuditQuery {
            action: Some("tool.".to_owned()),
            limit: 100,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    // The prefix is literal: `tool_x.create` does not match `tool.` (no `_` wildcard).
    assert_eq!(tools.len(), 2, "{tools:?}");
    let by_bob = store
        .list_audit(&AuditQuery {
            actor: Some("bob".to_owned()),
            since: Some(at(3)),
            limit: 100,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(by_bob.len(), 1);
    let of_target = store
        .list_audit(&AuditQuery {
            target_id: Some("tool_a".to_owned()),
            limit: 1,
            offset: 1,
            ..AuditQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(of_target[0].action, "tool.create");
}

async fn the_stored_policy_checks_its_revision(backend: &Backend) {
    let store = backend.store();
    assert!(store.get_policy().await.unwrap().is_none());
    let doc = json!({"profile": "minimal"});
    let first = store
        .put_policy(&doc, Some(0), "admin", at(0))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.revision, 1);
    assert_eq!(
        store
            .put_policy(&doc, Some(0), "admin", at(1))
            .await
            .unwrap(),
        Err(1)
    );
    let second = store
        .put_policy(&json!({"profile": "full"}), Some(1), "bob", at(2))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.revision, 2);
    let stored = store.get_policy().await.unwrap().unwrap();
    assert_eq!(stored.document, json!({"profile": "full"}));
    assert_eq!(stored.updated_by, "bob");
    assert!(store.delete_policy().await.unwrap());
    assert!(!store.delete_policy().await.unwrap());
    assert!(store.get_policy().await.unwrap().is_none());
}

/// Issue 36: a denial is found again for exactly its call (owner, tool, caller, arguments)
/// until the approval's time is up, so a retry is told it was denied.
async fn a_denial_is_found_for_its_call_until_its_time_is_up(backend: &Backend) {
    let store = backend.store();
    store
        .insert_approval(&approval("apr_no", "h"))
        .await
        .unwrap();
    let probe = approval("probe", "h");
    assert!(
        store
            .find_denied_approval(&probe, at(1))
            .await
            .unwrap()
            .is_none(),
        "pending is not denied"
    );
    store
        .decide_approval("apr_no", ApprovalDecision::Deny, "carol", at(5))
        .await
        .unwrap()
        .unwrap();
    let found = store
        .find_denied_approval(&probe, at(6))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, "apr_no");
    assert_eq!(found.decided_by.as_deref(), Some("carol"));
    assert_eq!(found.decided_at, Some(at(5)));
    for other in [
        approval("p", "other-args"),
        ApprovalRecord {
            caller: "agent-2".to_owned(),
            ..approval("p", "h")
        },
        ApprovalRecord {
            owner: "bob".to_owned(),
            ..approval("p", "h")
        },
    ] {
        assert!(
            store
                .find_denied_approval(&other, at(6))
                .await
                .unwrap()
                .is_none()
        );
    }
    assert!(
        store
            .find_denied_approval(&probe, at(120))
            .await
            .unwrap()
            .is_none(),
        "its time is up"
    );
}

on_both_backends!(
    a_denial_is_found_for_its_call_until_its_time_is_up,
    an_approval_is_decided_once_and_only_while_pending,
    an_expired_approval_cannot_be_allowed_and_allow_always_leaves_a_grant,
    allow_once_expires_allow_always_reads_granted_and_a_code_change_voids_the_rest,
    concurrent_decisions_on_one_approval_have_one_winner,
    the_audit_log_filters_newest_first,
    the_stored_policy_checks_its_revision,
);
