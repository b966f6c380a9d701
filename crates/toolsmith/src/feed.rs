//! The change feed: keeps this process's registry in step with writes other processes make to
//! the same store (`toolsmith tool create` while `toolsmith serve` runs, a second server, a
//! `toolsmith mcp` session).
//!
//! Two sources, one loop:
//! - **Polling** (every backend): every poll interval it reads the store's tools fingerprint
//!   ([`ToolStore::tools_fingerprint`], one cheap query); only when that moved does it reload the
//!   active tools and bring the registry in line ([`ToolService::resync_from_store`]), which
//!   bumps the catalogue versions of the owners whose tools really changed — and so sends MCP
//!   `list_changed` to their sessions. Each poll also checks the stored policy's revision and
//!   the registered MCP servers (started, restarted or stopped as the store says) and grants.
//! - **Pushed notices** (PostgreSQL's `LISTEN`/`NOTIFY`, [`Store::subscribe_changes`]): a
//!   change another instance commits arrives at once and reloads just its kind — the tools
//!   for a tool, the policy for a policy, that owner's cached Config Center for a config
//!   change, a prompt's or a user-defined resource's change tells that owner's MCP sessions,
//!   and an approval's decision wakes the calls waiting here for one
//!   ([`ApprovalGate::note_decided`]); a (re)connection of the listener reloads everything once. Notices that arrive
//!   together are handled together. Polling stays on as the safety net for a lost notice.
//!
//! This process's own writes are not announced to it, and move the fingerprint without
//! anything to do.
//!
//! [`ToolStore::tools_fingerprint`]: toolsmith_store::ToolStore::tools_fingerprint
//! [`Store::subscribe_changes`]: toolsmith_store::Store::subscribe_changes
//! [`ApprovalGate::note_decided`]: toolsmith_service::governance::approvals::ApprovalGate::note_decided

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::Receiver;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use toolsmith_service::ToolService;
use toolsmith_store::{ChangeKind, FeedEvent};

/// What the notices received together ask for.
#[derive(Debug, Default)]
struct Wanted {
    tools: bool,
    policy: bool,
    config_owners: Vec<String>,
    /// An approval was decided elsewhere: wake the calls waiting here.
    approvals: bool,
    /// Owners whose prompts another instance changed: their MCP sessions hear `list_changed`.
    prompt_owners: Vec<String>,
    /// Notices may have been lost: every session may hear that its prompts moved.
    all_prompts: bool,
    /// Owners whose user-defined resources another instance changed.
    resource_owners: Vec<String>,
}

impl Wanted {
    fn add(&mut self, event: FeedEvent) {
        match event {
            FeedEvent::Resync => {
                self.tools = true;
                self.policy = true;
                self.approvals = true;
                self.all_prompts = true;
            }
            FeedEvent::Changed(change) => match change.kind {
                ChangeKind::Tool => self.tools = true,
                ChangeKind::Policy => self.policy = true,
                ChangeKind::Config => {
                    if !self.config_owners.contains(&change.owner) {
                        self.config_owners.push(change.owner);
                    }
                }
                // Approvals: a call waiting here reads its approval again at once.
                ChangeKind::Approval => self.approvals = true,
                // Tokens: the auth cache holds them for one second.
                ChangeKind::Token => {}
                ChangeKind::Prompt => {
                    if !self.prompt_owners.contains(&change.owner) {
                        self.prompt_owners.push(change.owner);
                    }
                }
                ChangeKind::Resource => {
                    if !self.resource_owners.contains(&change.owner) {
                        self.resource_owners.push(change.owner);
                    }
                }
            },
        }
    }
}

/// Runs until `stop` is cancelled. The first poll happens at once, so changes made between
/// opening the service and starting the feed are not missed.
pub fn spawn(
    service: Arc<ToolService>,
    interval: Duration,
    stop: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut notices = service.subscribe_changes();
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut poller = Poller::default();
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticker.tick() => poller.poll(&service).await,
                event = next_notice(&mut notices) => match event {
                    Some(event) => {
                        let mut wanted = Wanted::default();
                        wanted.add(event);
                        if let Some(rx) = notices.as_mut() {
                            while let Ok(more) = rx.try_recv() {
                                wanted.add(more);
                            }
                        }
                        apply(&service, wanted).await;
                    }
                    None => {
                        tracing::warn!("change feed: the notice subscription ended; polling only");
                        notices = None;
                    }
                },
            }
        }
    })
}

/// The next pushed notice; never resolves when there is no subscription.
async fn next_notice(notices: &mut Option<Receiver<FeedEvent>>) -> Option<FeedEvent> {
    match notices {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn apply(service: &ToolService, wanted: Wanted) {
    if wanted.approvals {
        service.approvals().note_decided();
    }
    for owner in &wanted.config_owners {
        service.forget_config(owner);
    }
    if wanted.all_prompts {
        service.prompt_catalog().note_all_changed();
        service.resource_catalog().note_all_changed();
    }
    for owner in &wanted.prompt_owners {
        service.prompt_catalog().note_changed(owner);
    }
    for owner in &wanted.resource_owners {
        service.resource_catalog().note_changed(owner);
    }
    if wanted.policy {
        refresh_policy(service).await;
    }
    if wanted.tools {
        match service.resync_from_store().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(changed = n, "change feed: another instance changed tools"),
            Err(e) => {
                tracing::warn!(error = %e, "change feed: cannot reload tools; the next poll retries")
            }
        }
    }
}

async fn refresh_policy(service: &ToolService) {
    match service.refresh_policy_from_store().await {
        Ok(true) => tracing::info!("change feed: the stored policy changed"),
        Ok(false) => {}
        Err(e) => {
            tracing::warn!(error = %e, "change feed: cannot apply the stored policy; the one in force stays")
        }
    }
}

/// The polling side: the last fingerprint seen, and whether the store is failing.
#[derive(Default)]
struct Poller {
    last: Option<String>,
    failing: bool,
}

impl Poller {
    async fn poll(&mut self, service: &ToolService) {
        refresh_policy(service).await;
        match service.refresh_mcp_servers_from_store().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(changed = n, "change feed: registered MCP servers changed"),
            Err(e) => tracing::warn!(error = %e, "change feed: cannot read the MCP servers"),
        }
        if let Err(e) = service.refresh_mcp_grants().await {
            tracing::warn!(error = %e, "change feed: cannot read the MCP grants");
        }
        match service.refresh_prompts_from_store().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(owners = n, "change feed: prompts changed in the store"),
            Err(e) => tracing::warn!(error = %e, "change feed: cannot read the prompts"),
        }
        let fingerprint = match service.tools_fingerprint().await {
            Ok(f) => f,
            Err(e) => {
                if !self.failing {
                    tracing::warn!(error = %e, "change feed: cannot read the store; retrying");
                    self.failing = true;
                }
                return;
            }
        };
        if self.last.as_ref() == Some(&fingerprint) {
            return;
        }
        match service.resync_from_store().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(changed = n, "change feed: tools changed in the store"),
            Err(e) => {
                if !self.failing {
                    tracing::warn!(error = %e, "change feed: cannot reload tools; retrying");
                    self.failing = true;
                }
                return;
            }
        }
        self.failing = false;
        self.last = Some(fingerprint);
    }
}
