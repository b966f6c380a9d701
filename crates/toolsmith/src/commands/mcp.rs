//! `toolsmith mcp`: one MCP session over stdin/stdout, for clients that start Toolsmith as a
//! subprocess. Stdout carries the protocol and nothing else (logs go to stderr, and nothing
//! here prints); the session ends when the client closes stdin, or on SIGINT/SIGTERM.
//!
//! The change feed runs here too, so tools created elsewhere (the CLI, a running `toolsmith
//! serve` on the same store) reach this session's `tools/list` with a `list_changed`.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use toolsmith_server::AppState;
use toolsmith_service::ApprovalDoors;

use crate::exit::SUCCESS;
use crate::settings::Settings;
use crate::{database, feed};

/// Serves MCP over stdio as `user` (the global `--user`), in `organization` if given
/// (`--organization`).
pub async fn run(settings: Settings, user: &str, organization: Option<&str>) -> anyhow::Result<u8> {
    tracing::debug!(database = %settings.database, "opening the store");
    // No web UI or REST API here: replies that ask for a person's approval name the CLI on
    // this very store.
    let mut service_settings = settings.service.clone();
    service_settings.approval_doors = ApprovalDoors::Local {
        store_option: settings.database.cli_option(),
    };
    let service = database::open_service(
        &settings.database,
        service_settings,
        settings.database_startup_timeout,
    )
    .await?;
    let state = AppState::new(service.clone(), Arc::new(settings.server.clone()));
    let stop_feed = CancellationToken::new();
    let feed = feed::spawn(service.clone(), settings.poll_interval, stop_feed.clone());
    let outcome = tokio::select! {
        res = toolsmith_server::mcp::serve_stdio(state, user, organization) => res,
        signal = super::serve::shutdown_signal() => {
            tracing::info!(signal, "MCP stdio session stopped");
            Ok(())
        }
    };
    stop_feed.cancel();
    let _ = feed.await;
    // Running tool tasks fail with a message saying why: nothing resumes them elsewhere.
    service.stop_tool_tasks().await;
    service.end_sandbox_sessions().await;
    service.flush_usage().await;
    outcome?;
    Ok(SUCCESS)
}
