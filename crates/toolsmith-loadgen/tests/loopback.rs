//! The load generator against a real Toolsmith server (in-process, `app::serve` on
//! 127.0.0.1, SQLite in a temp dir): setup creates the tool over MCP, every kind of call
//! succeeds, the call budget is honoured, and failures are counted rather than hidden.

// Tests, benches and examples fail loudly: a panic is their report. The code they exercise
// is held to the workspace's `unwrap_used`, `expect_used`, `panic`, `string_slice` and
// `indexing_slicing` lints.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::string_slice,
    clippy::indexing_slicing
)]

use std::sync::Arc;
use std::time::Duration;

use server::Server;
use toolsmith_loadgen::{Kind, Plan, Target, run, setup};

mod server {
    //! Starts and stops the server under test.
    use super::*;
    use toolsmith_server::{AppState, ServerSettings};
    use toolsmith_service::{ToolService, ToolServiceSettings};
    use toolsmith_store::{SqliteStore, Store};

    pub struct Server {
        pub url: String,
        stop: Option<tokio::sync::oneshot::Sender<()>>,
        task: Option<tokio::task::JoinHandle<()>>,
        _dir: tempfile::TempDir,
    }

    impl Server {
        pub async fn start() -> Server {
            let dir = tempfile::tempdir().unwrap();
            let store: Arc<dyn Store> =
                Arc::new(SqliteStore::open(&dir.path().join("t.db")).await.unwrap());
            // The load generator measures calls, not people: nothing waits for approval (as
            // `bench/mcp-load.sh` starts the server with `--execution-approval off`).
            let config = ToolServiceSettings {
                execution_approval: toolsmith_service::ExecutionApproval::Off,
                ..ToolServiceSettings::default()
            };
            let service = ToolService::open(config, store).await.unwrap();
            let state = AppState::new(service, Arc::new(ServerSettings::default()));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let task = tokio::spawn(async move {
                toolsmith_server::app::serve(listener, state, async move {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
            });
            Server {
                url,
                stop: Some(stop),
                task: Some(task),
                _dir: dir,
            }
        }

        pub async fn stop(mut self) {
            if let Some(stop) = self.stop.take() {
                let _ = stop.send(());
            }
            if let Some(task) = self.task.take() {
                task.await.unwrap();
            }
        }
    }
}

fn plan(url: &str, kind: Kind, clients: usize, calls: u64) -> Plan {
    Plan {
        target: Target::parse(url).unwrap(),
        token: None,
        kind,
        clients,
        warmup: Duration::ZERO,
        // Long enough never to be the limit; the call budget ends the run.
        duration: Duration::from_secs(120),
        max_calls: Some(calls),
        tool: "loadgen_echo".to_owned(),
        arguments: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_call_succeeds_against_a_real_server() {
    let server = Server::start().await;
    let mcp = plan(&server.url, Kind::Mcp, 4, 60);
    setup(&mcp).await.unwrap();
    // Setup twice: the existing tool is kept and still works.
    setup(&mcp).await.unwrap();
    for kind in [Kind::Mcp, Kind::McpStateless, Kind::Rest, Kind::Noop] {
        let summary = run(&plan(&server.url, kind, 4, 60)).await.unwrap();
        assert_eq!(summary.errors, 0, "{kind:?}: {summary:?}");
        assert_eq!(summary.calls, 60, "{kind:?}: the budget ends the run");
        assert_eq!(summary.clients, 4);
        assert!(summary.p50_ms <= summary.p99_ms && summary.p99_ms <= summary.max_ms);
        assert!(summary.calls_per_second > 0.0);
    }
    // An existing tool with fixed arguments: a built-in, over MCP and REST.
    for kind in [Kind::Mcp, Kind::Rest] {
        let mut builtin = plan(&server.url, kind, 2, 20);
        builtin.tool = "calculate".to_owned();
        builtin.arguments = Some(serde_json::json!({"expression": "1 + 1"}));
        setup(&builtin).await.unwrap();
        let summary = run(&builtin).await.unwrap();
        assert_eq!(summary.errors, 0, "{kind:?}: {summary:?}");
        assert_eq!(summary.calls, 20, "{kind:?}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_calls_are_counted_not_hidden() {
    let server = Server::start().await;
    // No setup: the tool does not exist, so every MCP call is a JSON-RPC error and every
    // REST call a 404.
    for kind in [Kind::Mcp, Kind::McpStateless, Kind::Rest] {
        let mut p = plan(&server.url, kind, 2, 10);
        p.tool = "no_such_tool".to_owned();
        p.duration = Duration::from_millis(300);
        let summary = run(&p).await.unwrap();
        assert_eq!(summary.calls, 0, "{kind:?}");
        assert!(summary.errors > 0, "{kind:?}: {summary:?}");
    }
    // A name the server refuses to create: setup says so.
    let mut p = plan(&server.url, Kind::Mcp, 1, 1);
    p.tool = "Not A Valid Name".to_owned();
    let err = setup(&p).await.unwrap_err();
    assert_eq!(err.code(), "setup", "{err}");
    server.stop().await;
}

#[tokio::test]
async fn a_closed_port_is_a_connect_error() {
    // Bind then drop: a loopback port nobody listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = run(&plan(&format!("http://127.0.0.1:{port}"), Kind::Noop, 1, 1))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "connect", "{err}");
}
