//! Agents' contract: a definition is its owner's alone (by id and by name), unique by name per
//! owner, changed only at the next revision with every revision kept; a run is read, listed
//! and cancelled only by its owner and caller agent; the concurrent-run cap is counted in the
//! insert (and holds between instances); an ended run never changes again; a run whose lease
//! ran out is listed and ended by any instance unless renewed meanwhile; steps come back in
//! order, a NUL character included.

use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;

use super::{Backend, on_both_backends};
use crate::{
    AgentRecord, AgentRunRecord, AgentRunStatus, AgentRunStep, AgentStore as _, AgentUpdate,
};
use toolsmith_core::agent::{AgentDefinition, AgentModel, ContextFile, RunUsage};

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_700_000_000 + secs, 0).unwrap()
}

pub(crate) fn agent(id: &str, owner: &str, name: &str) -> AgentRecord {
    AgentRecord {
        id: id.to_owned(),
        owner: owner.to_owned(),
        name: name.to_owned(),
        revision: 1,
        definition: AgentDefinition {
            display_name: "Researcher".to_owned(),
            instructions: "Find things out.".to_owned(),
            model: AgentModel {
                service: "openai".to_owned(),
                model: "gpt-test".to_owned(),
                price: None,
            },
            tool_policy: toolsmith_core::agent::AgentToolPolicy {
                profile: Some("minimal".to_owned()),
                allow: vec!["group:core".to_owned()],
                deny: vec!["execute_shell".to_owned()],
                also_allow: vec![],
            },
            context_files: vec![ContextFile {
                name: "style.md".to_owned(),
                text: "Be brief.".to_owned(),
            }],
            agent_type: toolsmith_core::agent::AgentType::Predefined,
            limits: toolsmith_core::agent::AgentLimits::default(),
            written_by_model: None,
            quality_gates: Vec::new(),
        },
        created_at: at(0),
        updated_at: at(0),
    }
}

fn run(
    id: &str,
    owner: &str,
    caller: Option<&str>,
    agent_id: &str,
    created: i64,
) -> AgentRunRecord {
    AgentRunRecord {
        id: id.to_owned(),
        owner: owner.to_owned(),
        caller_agent: caller.map(str::to_owned),
        agent_id: agent_id.to_owned(),
        agent_revision: 1,
        status: AgentRunStatus::Running,
        input: "what time is it?".to_owned(),
        output: None,
        error: None,
        usage: RunUsage::default(),
        iterations: 0,
        created_at: at(created),
        updated_at: at(created),
        instance: "one".to_owned(),
        lease_until: None,
    }
}

async fn an_agent_is_its_owners_alone_and_keeps_every_revision(backend: &Backend) {
    let store = backend.store();
    let first = agent("a1", "alice", "researcher");
    assert!(store.insert_agent(&first).await.unwrap());
    // The name is taken for alice, free for bob.
    assert!(
        !store
            .insert_agent(&agent("a2", "alice", "researcher"))
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_agent(&agent("b1", "bob", "researcher"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.get_agent("alice", "a1").await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        store.get_agent("alice", "researcher").await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(store.get_agent("bob", "a1").await.unwrap(), None);
    assert_eq!(
        store.list_agents("alice").await.unwrap(),
        vec![first.clone()]
    );

    let mut second = first.clone();
    second.revision = 2;
    second.definition.instructions = "Find things out, and cite.".to_owned();
    second.updated_at = at(5);
    assert_eq!(
        store.update_agent(&second).await.unwrap(),
        AgentUpdate::Updated
    );
    // The same revision again: a conflict naming the stored one; bob cannot change alice's.
    assert_eq!(
        store.update_agent(&second).await.unwrap(),
        AgentUpdate::Conflict { actual: 2 }
    );
    let mut bobs = second.clone();
    bobs.owner = "bob".to_owned();
    assert_eq!(
        store.update_agent(&bobs).await.unwrap(),
        AgentUpdate::NotFound
    );
    assert!(
        store
            .insert_agent(&agent("a3", "alice", "writer"))
            .await
            .unwrap()
    );
    let mut renamed = second.clone();
    renamed.revision = 3;
    renamed.name = "writer".to_owned();
    assert_eq!(
        store.update_agent(&renamed).await.unwrap(),
        AgentUpdate::NameTaken
    );

    let versions = store.agent_versions("alice", "a1").await.unwrap();
    assert_eq!(
        versions.iter().map(|v| v.revision).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(versions[0].definition, first.definition);
    assert_eq!(versions[1].definition, second.definition);
    assert!(store.agent_versions("bob", "a1").await.unwrap().is_empty());

    assert!(!store.delete_agent("bob", "a1", None).await.unwrap());
    // A delete at a revision the agent has left deletes nothing (a change made since the
    // deleter read it wins); at its revision, it deletes.
    assert!(!store.delete_agent("alice", "a1", Some(1)).await.unwrap());
    assert_eq!(
        store
            .get_agent("alice", "a1")
            .await
            .unwrap()
            .map(|a| a.revision),
        Some(2)
    );
    assert!(store.delete_agent("alice", "a1", Some(2)).await.unwrap());
    assert_eq!(store.get_agent("alice", "a1").await.unwrap(), None);
    assert!(
        store
            .agent_versions("alice", "a1")
            .await
            .unwrap()
            .is_empty()
    );
}

async fn a_run_is_its_owners_and_caller_agents_alone(backend: &Backend) {
    let store = backend.store();
    assert!(
        store
            .insert_agent_run(&run("r1", "alice", None, "a1", 0), 4)
            .await
            .unwrap()
    );
    assert!(
        store
            .insert_agent_run(&run("r2", "alice", Some("bot"), "a1", 1), 4)
            .await
            .unwrap()
    );
    assert_eq!(
        store.get_agent_run("alice", None, "r1").await.unwrap(),
        Some(run("r1", "alice", None, "a1", 0))
    );
    for (owner, caller) in [("bob", None), ("alice", Some("bot")), ("alice", Some("x"))] {
        assert_eq!(
            store.get_agent_run(owner, caller, "r1").await.unwrap(),
            None
        );
        assert!(
            store
                .cancel_agent_run(owner, caller, "r1", "no", at(3))
                .await
                .unwrap()
                .is_none()
        );
    }
    let ids = |runs: Vec<AgentRunRecord>| runs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store
            .list_agent_runs("alice", None, None, 10)
            .await
            .unwrap()),
        vec!["r1"]
    );
    assert_eq!(
        ids(store
            .list_agent_runs("alice", Some("bot"), Some("a1"), 10)
            .await
            .unwrap()),
        vec!["r2"]
    );
    assert!(
        store
            .list_agent_runs("alice", None, Some("other"), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        store.agent_run_status("r2").await.unwrap(),
        Some(AgentRunStatus::Running)
    );
}

async fn the_run_cap_counts_the_agents_runs_not_ended(backend: &Backend) {
    let store = backend.store();
    assert!(
        store
            .insert_agent_run(&run("r1", "alice", None, "a1", 0), 2)
            .await
            .unwrap()
    );
    let mut waiting = run("r2", "alice", None, "a1", 1);
    waiting.status = AgentRunStatus::WaitingApproval;
    assert!(store.insert_agent_run(&waiting, 2).await.unwrap());
    assert!(
        !store
            .insert_agent_run(&run("r3", "alice", None, "a1", 2), 2)
            .await
            .unwrap()
    );
    // Another agent has a cap of its own.
    assert!(
        store
            .insert_agent_run(&run("r4", "alice", None, "a2", 2), 2)
            .await
            .unwrap()
    );
    let mut done = run("r1", "alice", None, "a1", 0);
    done.status = AgentRunStatus::Completed;
    assert!(store.update_agent_run(&done).await.unwrap());
    assert!(
        store
            .insert_agent_run(&run("r3", "alice", None, "a1", 3), 2)
            .await
            .unwrap()
    );
    // Between instances too.
    if let Some(other) = backend.another_instance().await {
        assert!(
            !other
                .insert_agent_run(&run("r5", "alice", None, "a1", 4), 2)
                .await
                .unwrap()
        );
    }
}

async fn an_ended_run_never_changes_again(backend: &Backend) {
    let store = backend.store();
    assert!(
        store
            .insert_agent_run(&run("r1", "alice", None, "a1", 0), 4)
            .await
            .unwrap()
    );
    let cancelled = store
        .cancel_agent_run("alice", None, "r1", "stopped by alice", at(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cancelled.status, AgentRunStatus::Cancelled);
    assert_eq!(cancelled.error.as_deref(), Some("stopped by alice"));
    let mut finished = run("r1", "alice", None, "a1", 0);
    finished.status = AgentRunStatus::Completed;
    finished.output = Some("done".to_owned());
    finished.usage = RunUsage {
        input_tokens: 10,
        output_tokens: 5,
        model_calls: 1,
        tool_calls: 0,
        cost: None,
    };
    assert!(!store.update_agent_run(&finished).await.unwrap());
    assert_eq!(
        store.get_agent_run("alice", None, "r1").await.unwrap(),
        Some(cancelled.clone())
    );
    // Cancelling again answers the run as it ended.
    assert_eq!(
        store
            .cancel_agent_run("alice", None, "r1", "again", at(2))
            .await
            .unwrap(),
        Some(cancelled)
    );
    // A running one keeps what it was written with.
    assert!(
        store
            .insert_agent_run(&run("r2", "alice", None, "a1", 0), 4)
            .await
            .unwrap()
    );
    let mut later = run("r2", "alice", None, "a1", 0);
    later.iterations = 3;
    later.usage.input_tokens = 42;
    later.status = AgentRunStatus::WaitingApproval;
    later.updated_at = at(9);
    assert!(store.update_agent_run(&later).await.unwrap());
    assert_eq!(
        store.get_agent_run("alice", None, "r2").await.unwrap(),
        Some(later)
    );
}

async fn steps_come_back_in_order_as_written(backend: &Backend) {
    let store = backend.store();
    for (seq, kind, detail) in [
        (
            0,
            "model",
            json!({"text": "", "toolCalls": [{"name": "echo"}]}),
        ),
        (
            1,
            "tool_call",
            json!({"name": "echo", "arguments": {"a": 1}}),
        ),
        (
            2,
            "tool_result",
            json!({"content": "a\u{0}b", "isError": false}),
        ),
    ] {
        store
            .add_agent_run_step(&AgentRunStep {
                run_id: "r1".to_owned(),
                seq,
                kind: kind.to_owned(),
                detail,
                at: at(seq),
            })
            .await
            .unwrap();
    }
    let steps = store.agent_run_steps("r1").await.unwrap();
    assert_eq!(
        steps.iter().map(|s| s.kind.as_str()).collect::<Vec<_>>(),
        vec!["model", "tool_call", "tool_result"]
    );
    assert_eq!(steps[2].detail["content"], "a\u{0}b");
    assert!(store.agent_run_steps("r2").await.unwrap().is_empty());
}

async fn usage_is_summed_per_agent_for_the_owner_or_one_caller(backend: &Backend) {
    let store = backend.store();
    let spent = |id: &str, caller: Option<&str>, agent: &str, created: i64, cost: Option<f64>| {
        let mut r = run(id, "alice", caller, agent, created);
        r.usage = RunUsage {
            input_tokens: 100,
            output_tokens: 20,
            model_calls: 2,
            tool_calls: 1,
            cost,
        };
        // A NUL in the output: the document is still read.
        r.output = Some("done \u{0}".to_owned());
        r
    };
    for r in [
        spent("u1", None, "a1", 0, Some(0.5)),
        spent("u2", None, "a1", 10, None),
        spent("u3", Some("agt_x"), "a1", 20, Some(0.25)),
        spent("u4", None, "a2", 30, None),
        spent("u5", None, "a1", 0, Some(9.0)),
    ] {
        let mut r = r;
        if r.id == "u5" {
            r.owner = "bob".to_owned();
        }
        assert!(store.insert_agent_run(&r, 10).await.unwrap());
    }
    let query = |caller: Option<&str>, since: Option<i64>| crate::AgentUsageQuery {
        owner: "alice".to_owned(),
        caller_agent: caller.map(str::to_owned),
        since: since.map(at),
    };
    let all = store.agent_usage(&query(None, None)).await.unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    let a1 = &all[0];
    assert_eq!(a1.agent_id, "a1");
    assert_eq!(
        (
            a1.runs,
            a1.input_tokens,
            a1.output_tokens,
            a1.model_calls,
            a1.tool_calls
        ),
        (3, 300, 60, 6, 3)
    );
    assert_eq!((a1.cost, a1.priced_runs), (Some(0.75), 2));
    let a2 = &all[1];
    assert_eq!(
        (a2.agent_id.as_str(), a2.runs, a2.cost, a2.priced_runs),
        ("a2", 1, None, 0)
    );
    // One caller agent's runs alone; and a window.
    let mine = store
        .agent_usage(&query(Some("agt_x"), None))
        .await
        .unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!((mine[0].runs, mine[0].cost), (1, Some(0.25)));
    let recent = store.agent_usage(&query(None, Some(10))).await.unwrap();
    let runs: Vec<(String, u64)> = recent
        .iter()
        .map(|r| (r.agent_id.clone(), r.runs))
        .collect();
    assert_eq!(runs, vec![("a1".to_owned(), 2), ("a2".to_owned(), 1)]);
    // Nothing of another owner.
    let none = store
        .agent_usage(&crate::AgentUsageQuery {
            owner: "carol".to_owned(),
            caller_agent: None,
            since: None,
        })
        .await
        .unwrap();
    assert!(none.is_empty());
}

/// The operator's per-user caps: definitions one owner may have, and runs going across all of
/// an owner's agents — counted in the insert, between instances too; another owner's count is
/// their own, and a name already taken is named before the cap.
async fn per_owner_caps_count_definitions_and_runs_across_agents(backend: &Backend) {
    use crate::{AgentInsert, RunAdmission};
    let store = backend.store();
    for (id, name) in [("c1", "one"), ("c2", "two")] {
        assert_eq!(
            store
                .insert_agent_within(&agent(id, "carol", name), 2)
                .await
                .unwrap(),
            AgentInsert::Inserted
        );
    }
    assert_eq!(
        store
            .insert_agent_within(&agent("c3", "carol", "three"), 2)
            .await
            .unwrap(),
        AgentInsert::AtCap
    );
    assert_eq!(
        store
            .insert_agent_within(&agent("c4", "carol", "one"), 2)
            .await
            .unwrap(),
        AgentInsert::NameTaken
    );
    assert_eq!(
        store
            .insert_agent_within(&agent("d1", "dave", "one"), 2)
            .await
            .unwrap(),
        AgentInsert::Inserted
    );
    assert!(store.get_agent("carol", "c3").await.unwrap().is_none());

    let start = |id: &str, owner: &str, agent: &str, at: i64| run(id, owner, None, agent, at);
    assert_eq!(
        store
            .insert_agent_run_within(&start("q1", "carol", "c1", 0), 4, 2)
            .await
            .unwrap(),
        RunAdmission::Started
    );
    let mut waiting = start("q2", "carol", "c2", 1);
    waiting.status = AgentRunStatus::WaitingApproval;
    assert_eq!(
        store.insert_agent_run_within(&waiting, 4, 2).await.unwrap(),
        RunAdmission::Started
    );
    // Two going across carol's agents: a third is refused, whichever agent it is of.
    assert_eq!(
        store
            .insert_agent_run_within(&start("q3", "carol", "c1", 2), 4, 2)
            .await
            .unwrap(),
        RunAdmission::OwnerAtCap
    );
    // The agent's own cap is named first when both are reached.
    assert_eq!(
        store
            .insert_agent_run_within(&start("q3", "carol", "c1", 2), 1, 2)
            .await
            .unwrap(),
        RunAdmission::AgentAtCap
    );
    assert_eq!(
        store
            .insert_agent_run_within(&start("q4", "dave", "d1", 2), 4, 2)
            .await
            .unwrap(),
        RunAdmission::Started
    );
    if let Some(other) = backend.another_instance().await {
        assert_eq!(
            other
                .insert_agent_run_within(&start("q5", "carol", "c2", 3), 4, 2)
                .await
                .unwrap(),
            RunAdmission::OwnerAtCap
        );
        assert_eq!(
            other
                .insert_agent_within(&agent("c5", "carol", "five"), 2)
                .await
                .unwrap(),
            AgentInsert::AtCap
        );
    }
    let mut done = start("q1", "carol", "c1", 0);
    done.status = AgentRunStatus::Completed;
    assert!(store.update_agent_run(&done).await.unwrap());
    assert_eq!(
        store
            .insert_agent_run_within(&start("q3", "carol", "c1", 4), 4, 2)
            .await
            .unwrap(),
        RunAdmission::Started
    );
}

async fn a_run_whose_lease_ran_out_is_ended_by_any_instance(backend: &Backend) {
    let store = backend.store();
    let leased = |id: &str, until: Option<i64>| {
        let mut r = run(id, "alice", None, "a1", 0);
        r.lease_until = until.map(at);
        r
    };
    for r in [
        leased("r1", Some(30)),
        leased("r2", Some(100)),
        leased("r3", None),
    ] {
        assert!(store.insert_agent_run(&r, 8).await.unwrap());
    }
    let mut ended = leased("r4", Some(0));
    ended.status = AgentRunStatus::Completed;
    assert!(store.insert_agent_run(&ended, 8).await.unwrap());
    let ids = |runs: Vec<AgentRunRecord>| runs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    // Only a run not ended whose lease ran out; a run without a lease never.
    assert_eq!(ids(store.lapsed_agent_runs(at(50)).await.unwrap()), ["r1"]);
    // Renewed only by its holder, and only while it runs.
    assert!(
        !store
            .renew_agent_run_lease("r1", "two", at(200))
            .await
            .unwrap()
    );
    assert!(
        store
            .renew_agent_run_lease("r1", "one", at(200))
            .await
            .unwrap()
    );
    assert!(
        !store
            .renew_agent_run_lease("r4", "one", at(200))
            .await
            .unwrap()
    );
    assert!(store.lapsed_agent_runs(at(50)).await.unwrap().is_empty());
    let renewed = store.get_agent_run("alice", None, "r1").await.unwrap();
    assert_eq!(renewed.and_then(|r| r.lease_until), Some(at(200)));
    // Oldest lease first.
    assert_eq!(
        ids(store.lapsed_agent_runs(at(250)).await.unwrap()),
        ["r2", "r1"]
    );
    // Ending it holds only while the lease is still out: a renewal meanwhile wins.
    let mut failed = leased("r1", Some(200));
    failed.status = AgentRunStatus::Failed;
    failed.error = Some("instance one stopped".to_owned());
    failed.updated_at = at(250);
    let end = AgentRunStep {
        run_id: "r1".to_owned(),
        seq: 0,
        kind: "error".to_owned(),
        detail: json!({"lostInstance": "one"}),
        at: at(250),
    };
    assert!(
        !store
            .end_lapsed_agent_run(&failed, &end, at(150))
            .await
            .unwrap()
    );
    assert!(store.agent_run_steps("r1").await.unwrap().is_empty());
    assert!(
        store
            .end_lapsed_agent_run(&failed, &end, at(250))
            .await
            .unwrap()
    );
    assert!(
        !store
            .end_lapsed_agent_run(&failed, &end, at(250))
            .await
            .unwrap()
    );
    // The end's step was written with it, once.
    let steps = store.agent_run_steps("r1").await.unwrap();
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0].kind, "error");
    let read = store
        .get_agent_run("alice", None, "r1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.status, AgentRunStatus::Failed);
    assert_eq!(read.error.as_deref(), Some("instance one stopped"));
    // Its instance can no longer renew it, nor write it.
    assert!(
        !store
            .renew_agent_run_lease("r1", "one", at(300))
            .await
            .unwrap()
    );
    assert!(!store.update_agent_run(&leased("r1", None)).await.unwrap());
    assert_eq!(ids(store.lapsed_agent_runs(at(250)).await.unwrap()), ["r2"]);
}

on_both_backends!(
    a_run_whose_lease_ran_out_is_ended_by_any_instance,
    an_agent_is_its_owners_alone_and_keeps_every_revision,
    a_run_is_its_owners_and_caller_agents_alone,
    the_run_cap_counts_the_agents_runs_not_ended,
    an_ended_run_never_changes_again,
    steps_come_back_in_order_as_written,
    usage_is_summed_per_agent_for_the_owner_or_one_caller,
    per_owner_caps_count_definitions_and_runs_across_agents,
);
