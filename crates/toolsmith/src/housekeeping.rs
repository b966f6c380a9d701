//! Housekeeping of a running server: once at start and then every hour, execution history and
//! execution approvals past their retention are deleted ([`ToolService::prune_executions`]). A failure is logged and retried
//! at the next round; it never stops the server.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolsmith_service::ToolService;

const EVERY: Duration = Duration::from_secs(3600);

/// Runs until `stop` is cancelled.
pub fn spawn(service: Arc<ToolService>, stop: CancellationToken) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(EVERY);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticker.tick() => {}
            }
            if let Err(e) = service.prune_executions().await {
                tracing::warn!(error = %e, "cannot prune execution history; retrying in an hour");
            }
        }
    })
}
