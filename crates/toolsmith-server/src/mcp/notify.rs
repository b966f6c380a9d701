//! `notifications/tools/list_changed`: sent to a client exactly once per change of the
//! catalogue it can see, whatever made the change (REST, the CLI against a running server,
//! another MCP session, this session).
//!
//! The registry is the source of truth: `catalog_version(owner)` moves exactly when that
//! owner's visible catalogue changes, and `subscribe()` wakes on any change. Each watcher keeps
//! the version its client last saw and notifies only when the owner's version moved past it —
//! so another user's change wakes it but sends nothing.
//!
//! - Sessions (2025-11-25 and older, stdio or HTTP with `Mcp-Session-Id`): [`watch_session`]
//!   runs for the life of the session from `notifications/initialized`; `tools/list` also
//!   records the version it listed, so a client that already re-listed is not told again.
//! - 2026-07-28 (no sessions): each `subscriptions/listen` runs [`listen`]. rmcp sends the
//!   acknowledgment before it hands the subscription to the handler, so the version is recorded
//!   earlier (when rmcp asks which notifications are accepted); a change in that window is sent
//!   right after the acknowledgment as a catch-up event.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::Peer;
use rmcp::RoleServer;
use rmcp::service::SubscriptionContext;
use tokio_util::sync::CancellationToken;
use toolsmith_core::ToolRegistry;

/// Pushes a notification on the session whenever `owner`'s catalogue version moves past
/// `seen`, until `stop` is cancelled or the session's transport closes.
pub(crate) async fn watch_session(
    registry: Arc<ToolRegistry>,
    owner: String,
    seen: Arc<AtomicU64>,
    peer: Peer<RoleServer>,
    stop: CancellationToken,
) {
    let mut changes = registry.subscribe();
    changes.borrow_and_update();
    loop {
        // A change between the session's start (when `seen` was recorded) and this check is
        // caught here, before the first wait.
        let now = registry.catalog_version(&owner);
        if seen.swap(now, Ordering::SeqCst) != now
            && let Err(e) = peer.notify_tool_list_changed().await
        {
            if peer.is_transport_closed() {
                return;
            }
            tracing::debug!(error = %e, "could not send tools/list_changed");
        }
        tokio::select! {
            () = stop.cancelled() => return,
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}

/// Runs one `subscriptions/listen` for `owner`: a catch-up event if the catalogue moved since
/// `baseline` (recorded before the acknowledgment), then one event per change, until the
/// subscription is cancelled or `stop` fires.
pub(crate) async fn listen(
    registry: Arc<ToolRegistry>,
    owner: String,
    baseline: u64,
    subscription: &SubscriptionContext,
    stop: CancellationToken,
) {
    if subscription.accepted().tools_list_changed != Some(true) {
        // Nothing we send was asked for: hold the stream open until the client lets go.
        tokio::select! {
            () = subscription.cancelled() => {}
            () = stop.cancelled() => {}
        }
        return;
    }
    let mut changes = registry.subscribe();
    changes.borrow_and_update();
    let mut seen = baseline;
    loop {
        let now = registry.catalog_version(&owner);
        if now != seen {
            seen = now;
            if let Err(e) = subscription.sink().notify_tool_list_changed().await {
                tracing::debug!(error = %e, "subscription closed while sending tools/list_changed");
                return;
            }
        }
        tokio::select! {
            () = subscription.cancelled() => return,
            () = stop.cancelled() => return,
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
    }
}
