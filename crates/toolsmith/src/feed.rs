//! The change feed: keeps this process's registry in step with writes other processes make to
//! the same store (`toolsmith tool create` while `toolsmith serve` runs, a second server, a
//! `toolsmith mcp` session).
//!
//! Every poll interval it reads the store's tools fingerprint ([`Store::tools_fingerprint`],
//! one cheap query); only when that moved does it reload the active tools and bring the
//! registry in line ([`ToolService::resync_from_store`]), which bumps the catalogue versions of
//! the owners whose tools really changed — and so sends MCP `list_changed` to their sessions.
//! This process's own writes move the fingerprint too; their resync finds nothing to do.
//! Each poll also checks the stored policy's revision and puts a changed one in force.
//!
//! [`Store::tools_fingerprint`]: toolsmith_store::Store::tools_fingerprint

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolsmith_service::ToolService;

/// Polls until `stop` is cancelled. The first poll happens at once, so changes made between
/// opening the service and starting the feed are not missed.
pub fn spawn(
    service: Arc<ToolService>,
    interval: Duration,
    stop: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut last: Option<String> = None;
        let mut failing = false;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticker.tick() => {}
            }
            match service.refresh_policy_from_store().await {
                Ok(true) => tracing::info!("change feed: the stored policy changed"),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "change feed: cannot apply the stored policy; the one in force stays")
                }
            }
            let fingerprint = match service.store().tools_fingerprint().await {
                Ok(f) => f,
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "change feed: cannot read the store; retrying");
                        failing = true;
                    }
                    continue;
                }
            };
            if last.as_ref() == Some(&fingerprint) {
                continue;
            }
            match service.resync_from_store().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(changed = n, "change feed: tools changed in the store"),
                Err(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "change feed: cannot reload tools; retrying");
                        failing = true;
                    }
                    continue;
                }
            }
            failing = false;
            last = Some(fingerprint);
        }
    })
}
