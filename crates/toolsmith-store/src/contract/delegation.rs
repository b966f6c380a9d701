//! Delegation's contract (spec 001 §7, §10): a link is its owner's, one per pair of agents
//! whichever way; a delegation is refused past its link's or its target's running
//! delegations, counted in the insert, and one whose run has ended frees its place; an ended
//! delegation never changes; a handoff route is found by its session and by its target.

use chrono::{DateTime, TimeZone, Utc};

use super::{Backend, on_both_backends};
use crate::{
    AgentLinkRecord, AgentRunRecord, AgentRunStatus, DelegationAdmission, DelegationQuery,
    DelegationRecord, DelegationStatus, HandoffRoute, LinkDirection,
};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

fn link(id: &str, owner: &str, from: &str, to: &str) -> AgentLinkRecord {
    AgentLinkRecord {
        id: id.to_owned(),
        owner: owner.to_owned(),
        source_agent: from.to_owned(),
        target_agent: to.to_owned(),
        direction: LinkDirection::Outbound,
        max_concurrent: 2,
        description: "research".to_owned(),
        created_at: at(0),
    }
}

fn delegation(id: &str, link: &str, target: &str, secs: i64) -> DelegationRecord {
    DelegationRecord {
        id: id.to_owned(),
        owner: "alice".to_owned(),
        source_agent: "agt_a".to_owned(),
        target_agent: target.to_owned(),
        link_id: link.to_owned(),
        mode: "async".to_owned(),
        depth: 1,
        parent_run: None,
        run_id: Some(format!("run_{id}")),
        status: DelegationStatus::Running,
        task: "find out".to_owned(),
        result: None,
        error: None,
        created_at: at(secs),
        updated_at: at(secs),
    }
}

async fn a_link_is_its_owners_and_one_per_pair_of_agents(backend: &Backend) {
    let store = backend.store();
    assert!(
        store
            .insert_agent_link(&link("lnk_1", "alice", "agt_a", "agt_b"))
            .await
            .unwrap()
    );
    // The same pair, either way, is refused; another owner's pair is theirs.
    assert!(
        !store
            .insert_agent_link(&link("lnk_2", "alice", "agt_a", "agt_b"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .insert_agent_link(&link("lnk_3", "alice", "agt_b", "agt_a"))
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_agent_link(&link("lnk_4", "bob", "agt_a", "agt_b"))
            .await
            .unwrap()
    );
    let mine = store.list_agent_links("alice").await.unwrap();
    assert_eq!(mine, vec![link("lnk_1", "alice", "agt_a", "agt_b")]);
    assert!(!store.delete_agent_link("bob", "lnk_1").await.unwrap());
    assert!(store.delete_agent_link("alice", "lnk_1").await.unwrap());
    assert!(store.list_agent_links("alice").await.unwrap().is_empty());
}

async fn delegations_are_bounded_per_link_and_per_target_and_an_ended_run_frees_its_place(
    backend: &Backend,
) {
    let store = backend.store();
    let first = delegation("d1", "lnk_1", "agt_b", 1);
    assert_eq!(
        store.insert_delegation_within(&first, 2, 5).await.unwrap(),
        DelegationAdmission::Started
    );
    assert_eq!(
        store
            .insert_delegation_within(&delegation("d2", "lnk_1", "agt_b", 2), 2, 5)
            .await
            .unwrap(),
        DelegationAdmission::Started
    );
    assert_eq!(
        store
            .insert_delegation_within(&delegation("d3", "lnk_1", "agt_b", 3), 2, 5)
            .await
            .unwrap(),
        DelegationAdmission::LinkAtCap(2)
    );
    // Another link to the same target: the target's own load counts every source.
    assert_eq!(
        store
            .insert_delegation_within(&delegation("d4", "lnk_2", "agt_b", 4), 2, 2)
            .await
            .unwrap(),
        DelegationAdmission::AgentAtCap(2)
    );
    // The first one's run ended (its instance never said so): its place is free.
    // Made from its JSON, so the record's later fields take their defaults.
    let run: AgentRunRecord = serde_json::from_value(serde_json::json!({
        "id": "run_d1", "owner": "alice", "callerAgent": "agt_a", "agentId": "agt_b",
        "agentRevision": 1, "status": "running", "input": "find out", "output": null,
        "error": null, "usage": {}, "iterations": 0, "createdAt": at(1), "updatedAt": at(1),
        "instance": "inst_x"
    }))
    .unwrap();
    assert!(store.insert_agent_run(&run, 10).await.unwrap());
    let mut ended = run.clone();
    ended.status = AgentRunStatus::Failed;
    assert!(store.update_agent_run(&ended).await.unwrap());
    assert_eq!(
        store
            .insert_delegation_within(&delegation("d3", "lnk_1", "agt_b", 5), 2, 5)
            .await
            .unwrap(),
        DelegationAdmission::Started
    );
    // Ended, it never changes; found by id and by its run, listed newest first.
    let mut done = delegation("d2", "lnk_1", "agt_b", 2);
    done.status = DelegationStatus::Completed;
    done.result = Some("found".to_owned());
    assert!(store.update_delegation(&done).await.unwrap());
    let mut again = done.clone();
    again.status = DelegationStatus::Cancelled;
    assert!(!store.update_delegation(&again).await.unwrap());
    assert_eq!(
        store.get_delegation("alice", "d2").await.unwrap(),
        Some(done.clone())
    );
    assert_eq!(store.get_delegation("bob", "d2").await.unwrap(), None);
    assert_eq!(
        store.delegation_of_run("alice", "run_d2").await.unwrap(),
        Some(done)
    );
    let all = store
        .list_delegations(
            "alice",
            &DelegationQuery {
                agent: Some("agt_b".to_owned()),
                active: false,
                limit: 10,
            },
        )
        .await
        .unwrap();
    let ids: Vec<&str> = all.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["d3", "d2", "d1"]);
    let running = store
        .list_delegations(
            "alice",
            &DelegationQuery {
                agent: None,
                active: true,
                limit: 10,
            },
        )
        .await
        .unwrap();
    assert_eq!(running.len(), 2, "{running:?}");
}

async fn a_handoff_route_is_found_by_its_session_and_its_target(backend: &Backend) {
    let store = backend.store();
    let route = HandoffRoute {
        session_id: "ses_1".to_owned(),
        owner: "alice".to_owned(),
        from_agent: "agt_a".to_owned(),
        to_agent: "agt_b".to_owned(),
        target_session: "ses_2".to_owned(),
        reason: "billing question".to_owned(),
        created_at: at(0),
    };
    store.put_handoff_route(&route).await.unwrap();
    assert_eq!(
        store.get_handoff_route("alice", "ses_1").await.unwrap(),
        Some(route.clone())
    );
    assert_eq!(store.get_handoff_route("bob", "ses_1").await.unwrap(), None);
    assert_eq!(
        store.handoff_route_to("alice", "ses_2").await.unwrap(),
        Some(route.clone())
    );
    // Handed off again: replaced.
    let again = HandoffRoute {
        to_agent: "agt_c".to_owned(),
        target_session: "ses_3".to_owned(),
        ..route
    };
    store.put_handoff_route(&again).await.unwrap();
    assert_eq!(
        store.handoff_route_to("alice", "ses_2").await.unwrap(),
        None
    );
    assert!(store.delete_handoff_route("alice", "ses_1").await.unwrap());
    assert!(!store.delete_handoff_route("alice", "ses_1").await.unwrap());
}

on_both_backends!(
    a_link_is_its_owners_and_one_per_pair_of_agents,
    delegations_are_bounded_per_link_and_per_target_and_an_ended_run_frees_its_place,
    a_handoff_route_is_found_by_its_session_and_its_target,
);
