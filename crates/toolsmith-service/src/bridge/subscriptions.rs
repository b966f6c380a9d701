//! Subscriptions to bridged resources, forwarded upstream.
//!
//! A client's `resources/subscribe` on a URI a bridged server answers for becomes one
//! `resources/subscribe` at that server, however many of Toolsmith's sessions (or 2026-07-28
//! listens) subscribe to it: each holds a [`BridgedSubscription`], and the server's
//! [`Subscribed`] counts them per URI. The last one released (`resources/unsubscribe`, or the
//! session's end, which drops it) sends the server's `resources/unsubscribe`. The counts
//! outlive a connection: when the server reconnects (or its registration changes and it is
//! started again) every URI still held is subscribed to again on the new connection.
//!
//! An upstream whose capabilities do not declare `resources.subscribe` is asked nothing: the
//! subscription is refused, saying why. The upstream's `resources/updated` is then relayed by
//! the sessions (`surface.rs`'s [`super::SurfaceChange::Updated`]) to those that hold a
//! subscription of that URI at that server and may still see it.
#![allow(
    deprecated,
    reason = "the bridge speaks MCP 2025-11-25 to its upstreams (initialize), whose resources/subscribe rmcp marks legacy-only"
)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ErrorData, SubscribeRequestParams, UnsubscribeRequestParams};
use rmcp::service::Peer;

/// The URIs Toolsmith's callers hold at one server, counted, and the connection they are
/// subscribed on.
#[derive(Debug, Default)]
pub(crate) struct Subscribed {
    server: String,
    /// Held across the server's subscribe and unsubscribe requests, so that they go out in the
    /// order the counts moved.
    state: tokio::sync::Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// The local holders of each URI (never 0: a URI nobody holds is removed).
    counts: BTreeMap<String, usize>,
    /// The connection the URIs are subscribed on and its call timeout; `None` while the server
    /// is not connected.
    link: Option<(Peer<RoleClient>, Duration)>,
}

/// Whether the server behind `peer` declares `resources.subscribe`.
fn takes_subscriptions(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        info.capabilities
            .resources
            .as_ref()
            .and_then(|r| r.subscribe)
            == Some(true)
    })
}

impl Subscribed {
    pub(crate) fn new(server: &str) -> Subscribed {
        Subscribed {
            server: server.to_owned(),
            state: tokio::sync::Mutex::default(),
        }
    }

    /// A connection is up: every URI still held is subscribed to on it.
    pub(crate) async fn connected(&self, peer: &Peer<RoleClient>, timeout: Duration) {
        let mut state = self.state.lock().await;
        state.link = Some((peer.clone(), timeout));
        if !takes_subscriptions(peer) {
            return;
        }
        for uri in state.counts.keys() {
            let asked = peer.subscribe(SubscribeRequestParams::new(uri.as_str()));
            match tokio::time::timeout(timeout, asked).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::warn!(server = %self.server, uri, error = %e, "cannot subscribe again after the reconnect");
                }
                Err(_) => {
                    tracing::warn!(server = %self.server, uri, "resources/subscribe did not answer in time after the reconnect");
                }
            }
        }
    }

    /// The connection ended: nothing is subscribed until the next one.
    pub(crate) async fn disconnected(&self) {
        self.state.lock().await.link = None;
    }

    /// One more holder of `uri`: the server is asked when it is the first.
    pub(crate) async fn subscribe(
        self: &Arc<Self>,
        uri: &str,
    ) -> Result<BridgedSubscription, ErrorData> {
        let server = self.server.as_str();
        let mut state = self.state.lock().await;
        let Some((peer, timeout)) = state.link.clone() else {
            return Err(ErrorData::resource_not_found(
                format!("no resource {uri}: MCP server '{server}' is not connected"),
                None,
            ));
        };
        if !takes_subscriptions(&peer) {
            return Err(ErrorData::invalid_params(
                format!(
                    "cannot subscribe to {uri}: MCP server '{server}', which offers it, does not \
                     take subscriptions (its capabilities declare no resources.subscribe), so no \
                     notifications/resources/updated would come for it; read it again when you \
                     need it"
                ),
                None,
            ));
        }
        if !state.counts.contains_key(uri) {
            let asked = peer.subscribe(SubscribeRequestParams::new(uri));
            match tokio::time::timeout(timeout, asked).await {
                Ok(Ok(())) => {}
                Ok(Err(rmcp::ServiceError::McpError(error))) => return Err(error),
                Ok(Err(e)) => {
                    return Err(ErrorData::internal_error(
                        format!("MCP server '{server}' failed to answer resources/subscribe: {e}"),
                        None,
                    ));
                }
                Err(_) => {
                    return Err(ErrorData::internal_error(
                        format!(
                            "MCP server '{server}' did not answer resources/subscribe within {} s \
                             (its call_timeout_seconds)",
                            timeout.as_secs()
                        ),
                        None,
                    ));
                }
            }
        }
        *state.counts.entry(uri.to_owned()).or_insert(0) += 1;
        Ok(BridgedSubscription {
            server: self.server.clone(),
            uri: uri.to_owned(),
            held: Some(self.clone()),
        })
    }

    /// One holder of `uri` fewer: the server is told when it was the last.
    async fn release(&self, uri: &str) {
        let mut state = self.state.lock().await;
        let Some(count) = state.counts.get_mut(uri) else {
            return;
        };
        *count -= 1;
        if *count > 0 {
            return;
        }
        state.counts.remove(uri);
        let Some((peer, timeout)) = state.link.clone() else {
            return;
        };
        let asked = peer.unsubscribe(UnsubscribeRequestParams::new(uri));
        match tokio::time::timeout(timeout, asked).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::debug!(server = %self.server, uri, error = %e, "resources/unsubscribe failed");
            }
            Err(_) => {
                tracing::debug!(server = %self.server, uri, "resources/unsubscribe did not answer in time");
            }
        }
    }
}

/// One caller's subscription of a bridged resource, released when dropped (on a task of its
/// own); the server's subscription ends with the last holder.
#[derive(Debug)]
pub struct BridgedSubscription {
    server: String,
    uri: String,
    held: Option<Arc<Subscribed>>,
}

impl BridgedSubscription {
    /// The server the subscription is held at (its `resources/updated` are the ones told).
    #[must_use]
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The URI subscribed to.
    #[must_use]
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

impl Drop for BridgedSubscription {
    fn drop(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        let uri = std::mem::take(&mut self.uri);
        // Without a runtime the process is ending, and its connections with it.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { held.release(&uri).await });
        }
    }
}
