//! Tool tasks against a real SQLite store and the real sandbox: a task runs on and keeps its
//! result; it is its caller's alone; the per-user cap refuses naming its setting; a result over
//! the cap fails the task; a cancel stops the run, also through another instance; a stopping
//! instance fails its running tasks.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith_core::{ToolContext, ToolTaskStatus};
use toolsmith_store::{SqliteStore, Store};

use super::STOPPED_MESSAGE;
use crate::input::{Actor, CreateTool};
use crate::{ServiceError, ToolService, ToolServiceSettings};

async fn open_at(path: &Path, config: ToolServiceSettings) -> Arc<ToolService> {
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(path).await.unwrap());
    ToolService::open(config, store).await.unwrap()
}

async fn with_tools(config: ToolServiceSettings) -> (tempfile::TempDir, Arc<ToolService>) {
    let dir = tempfile::tempdir().unwrap();
    let service = open_at(&dir.path().join("toolsmith.db"), config).await;
    for (name, code) in [
        ("double", "return args.x * 2;"),
        ("spin", "while (true) {} return 1;"),
        ("big", "return 'x'.repeat(args.x);"),
    ] {
        service
            .create(
                &Actor::user("default"),
                CreateTool {
                    kind: Default::default(),
                    name: name.to_owned(),
                    description: format!("test tool {name}"),
                    parameters: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
                    code: code.to_owned(),
                    category: None,
                    tags: Vec::new(),
                    permissions: Vec::new(),
                    requires_approval: None,
                    metadata: None,
                },
            )
            .await
            .unwrap();
    }
    (dir, service)
}

fn me() -> ToolContext {
    ToolContext::new("default")
}

/// Waits (asking again, as only the store can say) until `tool` has an execution record that
/// ended with error kind `kind`: the run really stopped.
async fn ran_until(service: &ToolService, tool: &str, kind: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        service.flush_usage().await;
        let records = service
            .executions(
                &Actor::user("default"),
                Some(&crate::ToolRef::Name(tool.to_owned())),
                None,
                None,
                None,
                10,
            )
            .await
            .unwrap();
        if records
            .iter()
            .any(|r| r.error_kind.as_deref() == Some(kind))
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no run of {tool} ended {kind}: {records:?}"
        );
        tokio::task::yield_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_runs_on_and_keeps_its_result() {
    let (_dir, service) = with_tools(ToolServiceSettings::default()).await;
    let task = service
        .start_task("double", json!({"x": 21}), me(), None)
        .await
        .unwrap();
    assert_eq!(task.status, ToolTaskStatus::Working);
    assert_eq!(task.ttl_ms, 3_600_000);
    assert!(task.id.starts_with("task_"));
    let done = service.wait_task(&me(), &task.id).await.unwrap();
    assert_eq!(done.status, ToolTaskStatus::Completed);
    let result = done.result.unwrap();
    assert_eq!(result["content"], json!(42));
    assert_eq!(result["isError"], json!(false));
    // Listed for its caller.
    let listed = service.list_tasks(&me(), 10, 0).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, task.id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_its_callers_alone() {
    let (_dir, service) = with_tools(ToolServiceSettings::default()).await;
    let task = service
        .start_task("double", json!({"x": 1}), me(), None)
        .await
        .unwrap();
    service.wait_task(&me(), &task.id).await.unwrap();
    let mut agent = me();
    agent.agent_id = Some("bot".to_owned());
    for other in [ToolContext::new("mallory"), agent] {
        for err in [
            service.get_task(&other, &task.id).await.unwrap_err(),
            service.cancel_task(&other, &task.id).await.unwrap_err(),
            service.wait_task(&other, &task.id).await.unwrap_err(),
        ] {
            assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
        }
        assert!(service.list_tasks(&other, 10, 0).await.unwrap().is_empty());
    }
    let unknown = service.get_task(&me(), "task_nope").await.unwrap_err();
    assert!(unknown.to_string().contains("tasks/list"), "{unknown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_refused_before_a_task_exists() {
    let (_dir, service) = with_tools(ToolServiceSettings::default()).await;
    let err = service
        .start_task("nothing_here", json!({}), me(), None)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    // Another user's tool is unknown too.
    let err = service
        .start_task("double", json!({}), ToolContext::new("mallory"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound(_)), "{err:?}");
    assert!(service.list_tasks(&me(), 10, 0).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_ttl_is_cut_to_the_longest_allowed_and_a_tiny_one_raised_to_ten_polls() {
    let (_dir, service) = with_tools(ToolServiceSettings::default()).await;
    let task = service
        .start_task("double", json!({"x": 1}), me(), Some(u64::MAX))
        .await
        .unwrap();
    assert_eq!(task.ttl_ms, 24 * 3_600_000);
    let brief = service
        .start_task("double", json!({"x": 1}), me(), Some(0))
        .await
        .unwrap();
    // Ten poll intervals at least: a ttl under the 1 s interval expired before the first poll.
    assert_eq!(brief.ttl_ms, 10_000);
    let short = service
        .start_task("double", json!({"x": 1}), me(), Some(500))
        .await
        .unwrap();
    assert_eq!(short.ttl_ms, 10_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_running_cap_refuses_naming_its_setting_and_a_cancel_frees_it() {
    let mut config = ToolServiceSettings::default();
    config.tasks.max_running = 1;
    let (_dir, service) = with_tools(config).await;
    let spinning = service
        .start_task("spin", json!({}), me(), None)
        .await
        .unwrap();
    let refused = service
        .start_task("double", json!({"x": 1}), me(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, ServiceError::LimitReached(_)),
        "{refused:?}"
    );
    assert!(
        refused.to_string().contains("task_max_running"),
        "{refused}"
    );
    let cancelled = service.cancel_task(&me(), &spinning.id).await.unwrap();
    assert_eq!(cancelled.status, ToolTaskStatus::Cancelled);
    ran_until(&service, "spin", "cancelled").await;
    // Cancelling twice: it has ended, and says so.
    let twice = service.cancel_task(&me(), &spinning.id).await.unwrap_err();
    assert!(matches!(twice, ServiceError::InvalidState(_)), "{twice:?}");
    assert!(twice.to_string().contains("cancelled"), "{twice}");
    // The stopped run did not overwrite the cancellation.
    let read = service.get_task(&me(), &spinning.id).await.unwrap();
    assert_eq!(read.status, ToolTaskStatus::Cancelled);
    assert_eq!(read.result, None);
    // The slot is free again.
    let next = service
        .start_task("double", json!({"x": 2}), me(), None)
        .await
        .unwrap();
    let done = service.wait_task(&me(), &next.id).await.unwrap();
    assert_eq!(done.status, ToolTaskStatus::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_over_the_cap_fails_the_task_and_says_why() {
    let mut config = ToolServiceSettings::default();
    config.tasks.max_result_bytes = 1000;
    let (_dir, service) = with_tools(config).await;
    let small = service
        .start_task("big", json!({"x": 10}), me(), None)
        .await
        .unwrap();
    let small = service.wait_task(&me(), &small.id).await.unwrap();
    assert_eq!(small.status, ToolTaskStatus::Completed);
    let task = service
        .start_task("big", json!({"x": 5000}), me(), None)
        .await
        .unwrap();
    let done = service.wait_task(&me(), &task.id).await.unwrap();
    assert_eq!(done.status, ToolTaskStatus::Failed);
    assert_eq!(done.result, None);
    let message = done.status_message.unwrap();
    assert!(
        message.contains("task_max_result_bytes = 1000"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_through_another_instance_stops_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolsmith.db");
    let first = open_at(&path, ToolServiceSettings::default()).await;
    first
        .create(
            &Actor::user("default"),
            CreateTool {
                kind: Default::default(),
                name: "spin".to_owned(),
                description: "spins".to_owned(),
                parameters: json!({"type": "object"}),
                code: "while (true) {} return 1;".to_owned(),
                category: None,
                tags: Vec::new(),
                permissions: Vec::new(),
                requires_approval: None,
                metadata: None,
            },
        )
        .await
        .unwrap();
    let second = open_at(&path, ToolServiceSettings::default()).await;
    let task = first
        .start_task("spin", json!({}), me(), None)
        .await
        .unwrap();
    let cancelled = second.cancel_task(&me(), &task.id).await.unwrap();
    assert_eq!(cancelled.status, ToolTaskStatus::Cancelled);
    // The first instance sees it in the store and stops its run.
    ran_until(&first, "spin", "cancelled").await;
    assert_eq!(
        first.get_task(&me(), &task.id).await.unwrap().status,
        ToolTaskStatus::Cancelled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopping_instance_fails_its_running_tasks() {
    let (_dir, service) = with_tools(ToolServiceSettings::default()).await;
    let task = service
        .start_task("spin", json!({}), me(), None)
        .await
        .unwrap();
    assert_eq!(service.stop_tool_tasks().await, 1);
    let failed = service.get_task(&me(), &task.id).await.unwrap();
    assert_eq!(failed.status, ToolTaskStatus::Failed);
    assert_eq!(failed.status_message.as_deref(), Some(STOPPED_MESSAGE));
    ran_until(&service, "spin", "cancelled").await;
    // The stopped run did not overwrite the failure.
    assert_eq!(
        service.get_task(&me(), &task.id).await.unwrap().status,
        ToolTaskStatus::Failed
    );
}
