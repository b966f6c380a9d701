//! The sweep of runs whose lease ran out, against a real SQLite store: the session a lapsed
//! run answered for ends with it, however many newer sessions its owner has.

use std::sync::Arc;

use chrono::{Duration, Utc};
use toolsmith_core::agent::{AgentRunRecord, AgentRunStatus, RunUsage};
use toolsmith_core::agent_session::{SessionKind, SessionRecord, SessionStatus};
use toolsmith_store::{SqliteStore, Store};

use crate::{ToolService, ToolServiceSettings};

fn session(
    id: &str,
    status: SessionStatus,
    last_run: Option<&str>,
    age: Duration,
) -> SessionRecord {
    let at = Utc::now() - age;
    SessionRecord {
        id: id.to_owned(),
        owner: "default".to_owned(),
        caller_agent: None,
        agent_id: "agt_helper".to_owned(),
        kind: SessionKind::Session,
        label: id.to_owned(),
        parent: None,
        depth: 0,
        status,
        task: None,
        result: None,
        error: None,
        last_run: last_run.map(str::to_owned),
        message_count: 0,
        message_bytes: 0,
        trimmed: 0,
        created_at: at,
        updated_at: at,
    }
}

#[tokio::test]
async fn a_lapsed_runs_session_beyond_the_owners_newest_200_is_ended() {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
    let service = ToolService::open(ToolServiceSettings::default(), Arc::clone(&store))
        .await
        .unwrap();
    // A conversation answered by a run of an instance that stopped an hour ago …
    let hour = Duration::hours(1);
    let old = session("ses_old", SessionStatus::Running, Some("run_lost"), hour);
    store.insert_session(&old).await.unwrap();
    let run = AgentRunRecord {
        id: "run_lost".to_owned(),
        owner: "default".to_owned(),
        caller_agent: None,
        agent_id: "agt_helper".to_owned(),
        agent_revision: 1,
        status: AgentRunStatus::Running,
        input: "hello".to_owned(),
        output: None,
        error: None,
        usage: RunUsage::default(),
        iterations: 0,
        created_at: Utc::now() - hour,
        updated_at: Utc::now() - hour,
        instance: "inst_gone".to_owned(),
        lease_until: Some(Utc::now() - hour),
    };
    assert!(store.insert_agent_run(&run, 10).await.unwrap());
    // … and 200 newer conversations of the same owner since.
    for i in 0..200 {
        let newer = session(
            &format!("ses_{i}"),
            SessionStatus::Idle,
            None,
            Duration::zero(),
        );
        store.insert_session(&newer).await.unwrap();
    }

    // (The service's own sweep waits a third of the lease first; either ends the run once.)
    service.end_lapsed_agent_runs().await.unwrap();
    let ended = store
        .get_session("default", None, "ses_old")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ended.status, SessionStatus::Idle, "{ended:?}");
    assert!(
        ended
            .error
            .as_deref()
            .is_some_and(|e| e.contains("inst_gone")),
        "{ended:?}"
    );
}
