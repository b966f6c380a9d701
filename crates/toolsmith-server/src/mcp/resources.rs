//! MCP resources (issue 40) outside the dynamic-mcp compat mode: `resources/list`,
//! `resources/read`, `resources/templates/list`, `resources/subscribe` / `unsubscribe`, and
//! the notifications `resources/updated` and `resources/list_changed`. What a caller may read
//! and how is the service's (`toolsmith_service::resources`); this module speaks MCP.
//!
//! A session's subscriptions ([`Subscriptions`]) are watched by [`watch_session`], started
//! with the session (2025-11-25 and older), and a 2026-07-28 `subscriptions/listen`'s by
//! [`listen`] (its filter's `resourceSubscriptions` are what it subscribes to, its
//! `resourcesListChanged` whether it hears `list_changed`; [`accepted_uris`] says which URIs
//! are acknowledged). Either watcher wakes on a change of a workspace file (the workspace operations'
//! broadcast, compared with the caller's own workspace folder, so another user's or agent's
//! files never wake it to send anything) and on a change of the caller's catalogue (a tool
//! created, updated, deleted — on this instance or, through the change feed, another one on
//! the same PostgreSQL database); it sends `updated` for a subscribed URI that changed and
//! `list_changed` when the listing did.
//!
//! Bridged servers' resources and templates (`toolsmith_service::bridge`, `surface.rs`) are
//! listed after the caller's own; a URI no resource of Toolsmith's or the caller's answers for
//! is read from the bridged server that offers it (or whose template matches it). A bridged
//! server's `resources/list_changed` and `resources/updated` reach the sessions that may see
//! that server (`updated` only for a subscribed URI).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ArgumentInfo, CompletionInfo, ErrorData, ListResourceTemplatesResult, ListResourcesResult,
    PaginatedRequestParams, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::{SubscriptionContext, SubscriptionSendError, SubscriptionSink};
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use toolsmith_builtins::workspace::{ChangeCount, WorkspaceChange};
use toolsmith_core::ToolContext;
use toolsmith_service::bridge::{BridgedNews, BridgedSubscription, BridgedWatch, SurfaceChange};
use toolsmith_service::resources::{ResourceBody, ResourceRef};
use toolsmith_service::{ServiceError, ToolService};

use super::prompts::{ListingSeen, fingerprint};

/// The answer to a refused resource request: not found as MCP's `-32002` (the message names
/// why), a bad cursor as `-32602`.
/// A workspace URI when the caller may not read files (`files` says why): not found, naming
/// the scope a `read_file` call needs.
fn workspace_allowed(uri: &str, files: Result<(), String>) -> Result<(), ErrorData> {
    match (ResourceRef::parse(uri), files) {
        (Some(ResourceRef::WorkspaceFile(_)), Err(why)) => Err(ErrorData::resource_not_found(
            format!("no resource {uri}: reading your workspace is a read_file call, and {why}"),
            None,
        )),
        _ => Ok(()),
    }
}

fn refused(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::NotFound(message) => ErrorData::resource_not_found(message, None),
        ServiceError::Validation(message) | ServiceError::TooLarge(message) => {
            ErrorData::invalid_params(message, None)
        }
        ServiceError::Forbidden(message) | ServiceError::LimitReached(message) => {
            ErrorData::invalid_request(message, None)
        }
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// `resources/list`: one page of what the caller may read.
///
/// `files` is whether the caller may read workspace files at all: a `read_file` call over MCP
/// needs the `tools:execute` scope, so a token without it gets tool sources only.
pub(crate) async fn list(
    service: &ToolService,
    ctx: &ToolContext,
    request: Option<&PaginatedRequestParams>,
    files: bool,
) -> Result<ListResourcesResult, ErrorData> {
    let cursor = request.and_then(|r| r.cursor.as_deref());
    let page = service
        .list_resources(ctx, cursor, files)
        .await
        .map_err(refused)?;
    let resources = page
        .resources
        .into_iter()
        .map(|entry| {
            let mut resource = Resource::new(entry.uri, entry.name).with_mime_type(entry.mime_type);
            if let Some(title) = entry.title {
                resource = resource.with_title(title);
            }
            if let Some(description) = entry.description {
                resource = resource.with_description(description);
            }
            if let Some(size) = entry.size {
                resource = resource.with_size(size);
            }
            resource
        })
        .collect();
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = page.next_cursor;
    Ok(result)
}

/// `resources/templates/list` (`files` as for [`list`]).
pub(crate) async fn templates(
    service: &ToolService,
    ctx: &ToolContext,
    files: bool,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    Ok(ListResourceTemplatesResult::with_all_items(
        service
            .resource_templates(ctx)
            .await
            .map_err(refused)?
            .into_iter()
            .filter(|t| files || t.uri_template != toolsmith_service::resources::WORKSPACE_TEMPLATE)
            .map(|t| {
                let template = ResourceTemplate::new(t.uri_template, t.name)
                    .with_title(t.title)
                    .with_description(t.description);
                match t.mime_type {
                    Some(mime) => template.with_mime_type(mime),
                    None => template,
                }
            })
            .collect(),
    ))
}

/// `resources/read`: `ctx` is the call's context (its cancellation, approver and client),
/// since a workspace file is read through the `read_file` built-in.
pub(crate) async fn read(
    service: &ToolService,
    ctx: ToolContext,
    uri: &str,
    files: Result<(), String>,
) -> Result<ReadResourceResult, ErrorData> {
    workspace_allowed(uri, files)?;
    let bridged_ctx = ctx.clone();
    let content = match service.read_resource(ctx, uri).await {
        Ok(content) => content,
        Err(ServiceError::NotFound(message)) => {
            // Not Toolsmith's, nor one of the caller's own: a bridged server's, if one offers it.
            return match service.read_bridged_resource(&bridged_ctx, uri).await {
                Some(answer) => answer,
                None => Err(ErrorData::resource_not_found(message, None)),
            };
        }
        Err(e) => return Err(refused(e)),
    };
    let blob = content.body.base64();
    let contents = match (content.body, blob) {
        (ResourceBody::Text(text), _) => ResourceContents::TextResourceContents {
            uri: content.uri,
            mime_type: Some(content.mime_type),
            text,
            meta: None,
        },
        (ResourceBody::Blob(_), blob) => ResourceContents::BlobResourceContents {
            uri: content.uri,
            mime_type: Some(content.mime_type),
            blob: blob.unwrap_or_default(),
            meta: None,
        },
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// `completion/complete` for a variable of one of this server's resource templates
/// (`ref/resource`): the values starting with what the client typed, at most 100. `files` as
/// for [`list`]: a caller who may not read workspace files gets none of their paths.
pub(crate) fn complete(
    service: &ToolService,
    ctx: &ToolContext,
    template_uri: &str,
    argument: &ArgumentInfo,
    files: bool,
) -> CompletionInfo {
    let (values, more) =
        service.complete_resource(ctx, template_uri, &argument.name, &argument.value, files);
    let total = if more {
        None
    } else {
        u32::try_from(values.len()).ok()
    };
    // At most MAX_COMPLETIONS (100) values, which is what `with_pagination` checks.
    CompletionInfo::with_pagination(values, total, more).unwrap_or_default()
}

/// The URIs one session subscribed to (`resources/subscribe`), each with what was last seen
/// of it (a tool source's revision; `None` for a workspace file, which is told by its change).
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    uris: Mutex<BTreeMap<String, Option<i64>>>,
    /// The subscriptions of bridged resources held at their servers (released, and the
    /// server's subscription with the last holder, when unsubscribed or when this ends).
    bridged: Mutex<BTreeMap<String, BridgedSubscription>>,
    /// Wakes the watcher when a subscription is added (to record a tool's revision).
    added: tokio::sync::Notify,
}

impl Subscriptions {
    fn uris(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Option<i64>>> {
        self.uris.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn bridged(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, BridgedSubscription>> {
        self.bridged.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Holds the bridged `uri` at its server for this session (once however often it is
    /// subscribed to); the server's refusal, if it refuses.
    async fn hold_bridged(
        &self,
        service: &ToolService,
        ctx: &ToolContext,
        uri: &str,
    ) -> Result<(), ErrorData> {
        if self.bridged().contains_key(uri) {
            return Ok(());
        }
        match service.subscribe_bridged_resource(ctx, uri).await {
            Some(Ok(held)) => {
                // Held twice when two subscribes of one URI raced: the one dropped is released.
                self.bridged().insert(uri.to_owned(), held);
                Ok(())
            }
            Some(Err(refused)) => Err(refused),
            None => Err(ErrorData::resource_not_found(
                format!("no resource {uri}: the bridged server that offered it is gone"),
                None,
            )),
        }
    }

    /// The URIs subscribed to at `server`.
    fn bridged_uris_of(&self, server: &str) -> Vec<String> {
        self.bridged()
            .values()
            .filter(|held| held.server() == server)
            .map(|held| held.uri().to_owned())
            .collect()
    }

    /// Whether an upstream's `resources/updated` of `uri` from `server` is one this session
    /// subscribed to (held at that server, or — a listen's URI whose server takes no
    /// subscriptions — subscribed to here only).
    fn wants_update(&self, server: &str, uri: &str) -> bool {
        match self.bridged().get(uri) {
            Some(held) => held.server() == server,
            None => self.uris().contains_key(uri),
        }
    }

    /// The session or listen ended: every bridged subscription it held is released.
    fn end(&self) {
        let held = std::mem::take(&mut *self.bridged());
        drop(held);
    }

    /// `resources/subscribe`: only a URI of this server's (another scheme is not found, so
    /// a client learns at once that nothing would ever be sent for it).
    pub(crate) async fn subscribe(
        &self,
        service: &ToolService,
        ctx: &ToolContext,
        uri: &str,
        files: Result<(), String>,
    ) -> Result<(), ErrorData> {
        workspace_allowed(uri, files)?;
        let seen = match seen_of(service, ctx, uri).await {
            Seen::Revision(seen) => seen,
            Seen::Bridged => {
                self.hold_bridged(service, ctx, uri).await?;
                None
            }
            Seen::Unknown => {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no resource {uri}: subscribe to a URI resources/list gives (toolsmith://workspace/<path>, toolsmith://tools/<name>/source, or one of the resources you defined), or one a template of yours matches"
                    ),
                    None,
                ));
            }
        };
        self.uris().insert(uri.to_owned(), seen);
        self.added.notify_one();
        Ok(())
    }

    /// `resources/unsubscribe` (a URI not subscribed to is not an error). A bridged one is
    /// released on a task of its own (the server's `resources/unsubscribe` if it was the last).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.uris().remove(uri);
        let held = self.bridged().remove(uri);
        drop(held);
    }
}

/// What a subscription to a URI compares against, as [`seen_of`] found it.
enum Seen {
    /// A tool source's or user resource's revision (`None`: a workspace file, told by its
    /// change, or something that may come to exist).
    Revision(Option<i64>),
    /// A bridged server's: told when its server says it changed.
    Bridged,
    /// Neither ours, nor the caller's, nor a bridged server's.
    Unknown,
}

/// What a subscription to `uri` starts from (see [`Subscriptions`]).
async fn seen_of(service: &ToolService, ctx: &ToolContext, uri: &str) -> Seen {
    match ResourceRef::parse(uri) {
        Some(ResourceRef::ToolSource(name)) => {
            Seen::Revision(service.tool_source_revision(ctx, &name).await)
        }
        Some(ResourceRef::WorkspaceFile(_)) => Seen::Revision(None),
        None => match service.user_resource_revision(&ctx.user_id, uri).await {
            Some(revision) => Seen::Revision(Some(revision)),
            None if service.is_bridged_resource(ctx, uri) => Seen::Bridged,
            None => Seen::Unknown,
        },
    }
}

/// Most URIs one `subscriptions/listen` subscribes to; the rest of a longer list are left out
/// of its acknowledgment.
pub(crate) const MAX_LISTEN_URIS: usize = 256;

/// The revision given to a URI whose thing may have changed between a listen's
/// acknowledgment and its start (so the first comparison tells it): no revision is negative.
const MAYBE_CHANGED: Option<i64> = Some(i64::MIN);

/// The URIs of a `subscriptions/listen` filter this server subscribes its caller to (at most
/// [`MAX_LISTEN_URIS`]): a workspace file's only while the caller may read files (`files`), a
/// tool source's, and any URI of another scheme (one of the caller's resources, one a
/// template of theirs matches, a bridged server's — or one that comes to be: as the MCP
/// reference servers do, a subscription to a resource that does not exist is kept and
/// simply never fires until it does). Another `toolsmith:` URI names nothing and is left out.
///
/// Decided without the store (rmcp asks synchronously, just before it sends the
/// acknowledgment), which is why a URI nothing answers for yet is kept rather than refused as
/// `resources/subscribe` refuses it.
pub(crate) fn accepted_uris(requested: &[String], files: bool) -> Vec<String> {
    let mut accepted: Vec<String> = Vec::new();
    for uri in requested {
        let ours = match ResourceRef::parse(uri) {
            Some(ResourceRef::WorkspaceFile(_)) => files,
            Some(ResourceRef::ToolSource(_)) => true,
            None => !uri.starts_with("toolsmith:"),
        };
        if ours && !accepted.contains(uri) {
            accepted.push(uri.clone());
            if accepted.len() == MAX_LISTEN_URIS {
                break;
            }
        }
    }
    accepted
}

/// What a `subscriptions/listen`'s resource side starts from, recorded just before rmcp
/// sends the acknowledgment (so a change in between is told right after it).
pub(crate) struct ListenStart {
    catalog: u64,
    defined: u64,
    files: WatchedFiles,
    bridged: Option<BridgedWatch>,
}

/// The workspace side of a watcher: every workspace's changes, the caller's workspace folder,
/// and the count of its changes told so far ([`ChangeCount`]), which a watcher that fell
/// behind compares with the workspace's count now.
struct WatchedFiles {
    changes: Option<tokio::sync::broadcast::Receiver<WorkspaceChange>>,
    root: Option<std::path::PathBuf>,
    seen: ChangeCount,
}

impl WatchedFiles {
    /// The count of the caller's workspace now.
    fn count(&self, service: &ToolService) -> ChangeCount {
        match (service.workspaces(), &self.root) {
            (Some(workspaces), Some(root)) => workspaces.change_count(root),
            _ => ChangeCount::default(),
        }
    }
}

impl ListenStart {
    /// Now, for the caller of `ctx`.
    pub(crate) fn now(service: &ToolService, ctx: &ToolContext) -> ListenStart {
        let mut files = WatchedFiles {
            changes: service.workspace_changes(),
            root: service.workspace_root(ctx),
            seen: ChangeCount::default(),
        };
        files.seen = files.count(service);
        ListenStart {
            files,
            bridged: service.bridged_changes(),
            catalog: service.registry().catalog_version(&ctx.user_id),
            defined: service.resource_catalog().version(&ctx.user_id),
        }
    }
}

/// One `subscriptions/listen`'s resource side (2026-07-28): `updated` for each accepted URI
/// and, when asked, `list_changed`, told as to a session (module docs), from `start` until the
/// subscription ends or `stop` fires. Returns at once when the client asked for neither.
pub(crate) async fn listen(
    service: Arc<ToolService>,
    ctx: ToolContext,
    start: ListenStart,
    subscription: &SubscriptionContext,
    stop: CancellationToken,
) {
    let accepted = subscription.accepted();
    let uris = accepted.resource_subscriptions.clone().unwrap_or_default();
    if accepted.resources_list_changed != Some(true) && uris.is_empty() {
        return;
    }
    let subscriptions = Arc::new(Subscriptions::default());
    for uri in uris {
        let seen = match seen_of(&service, &ctx, &uri).await {
            Seen::Revision(seen) => seen,
            Seen::Bridged => {
                // Acknowledged already: a server that refuses it leaves it subscribed to here.
                if let Err(e) = subscriptions.hold_bridged(&service, &ctx, &uri).await {
                    tracing::debug!(uri, error = %e.message, "a listen's bridged URI is not subscribed to upstream");
                }
                None
            }
            Seen::Unknown => None,
        };
        subscriptions.uris().insert(uri, seen);
    }
    // A tool or resource of the caller's changed between the acknowledgment and the
    // revisions just read: the URIs of that kind may have moved unseen, so they are told.
    let registry = service.registry().clone();
    let tools_moved = registry.catalog_version(&ctx.user_id) != start.catalog;
    let defined_moved = service.resource_catalog().version(&ctx.user_id) != start.defined;
    for (uri, seen) in subscriptions.uris().iter_mut() {
        let moved = match ResourceRef::parse(uri) {
            Some(ResourceRef::ToolSource(_)) => tools_moved,
            Some(ResourceRef::WorkspaceFile(_)) => false,
            None => defined_moved,
        };
        if moved {
            *seen = MAYBE_CHANGED;
        }
    }
    let mut catalog = registry.subscribe();
    catalog.borrow_and_update();
    let mut defined = service.resource_catalog().subscribe();
    defined.borrow_and_update();
    let watched = watch(
        Watched {
            service,
            ctx,
            subscriptions: subscriptions.clone(),
            outlet: Outlet::Listen(subscription.sink().clone()),
            stop,
        },
        [(catalog, start.catalog), (defined, start.defined)],
        start.files,
        start.bridged,
    );
    tokio::select! {
        () = subscription.cancelled() => {}
        () = watched => {}
    }
    subscriptions.end();
}

/// Where a watcher's notifications go.
enum Outlet {
    /// A session's stream (2025-11-25 and older).
    Session(Peer<RoleServer>),
    /// One `subscriptions/listen` stream (2026-07-28), which carries only what its client
    /// asked for and the server acknowledged.
    Listen(SubscriptionSink),
}

impl Outlet {
    /// `notifications/resources/updated` for `uri`; `false` once nobody listens.
    async fn updated(&self, uri: String) -> bool {
        match self {
            Outlet::Session(peer) => match peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
            {
                Ok(()) => true,
                Err(e) => {
                    tracing::debug!(error = %e, "could not send resources/updated");
                    !peer.is_transport_closed()
                }
            },
            Outlet::Listen(sink) => still_listening(sink.notify_resource_updated(uri).await),
        }
    }

    /// `notifications/resources/list_changed`; `false` once nobody listens.
    async fn list_changed(&self) -> bool {
        match self {
            Outlet::Session(peer) => match peer.notify_resource_list_changed().await {
                Ok(()) => true,
                Err(e) => {
                    tracing::debug!(error = %e, "could not send resources/list_changed");
                    !peer.is_transport_closed()
                }
            },
            Outlet::Listen(sink) if sink.accepted().resources_list_changed == Some(true) => {
                still_listening(sink.notify_resource_list_changed().await)
            }
            // Not asked for: nothing to send.
            Outlet::Listen(_) => true,
        }
    }
}

/// Whether a listen stream is still open after a send.
fn still_listening(sent: Result<(), SubscriptionSendError>) -> bool {
    match sent {
        Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)) => true,
        Err(e) => {
            tracing::debug!(error = %e, "subscription closed while sending a resource notice");
            false
        }
    }
}

/// Sends `notifications/resources/updated` and `list_changed` to one session until `stop`
/// fires or its transport closes (module docs). The changes are listened to from the moment
/// this is called (not from when the returned future first runs), so a change made right after
/// the session's `notifications/initialized` is not missed.
pub(crate) fn watch_session(
    service: Arc<ToolService>,
    ctx: ToolContext,
    subscriptions: Arc<Subscriptions>,
    peer: Peer<RoleServer>,
    stop: CancellationToken,
) -> impl std::future::Future<Output = ()> + Send + 'static {
    let registry = service.registry().clone();
    let mut catalog = registry.subscribe();
    catalog.borrow_and_update();
    let mut defined = service.resource_catalog().subscribe();
    defined.borrow_and_update();
    let start = ListenStart::now(&service, &ctx);
    async move {
        watch(
            Watched {
                service,
                ctx,
                subscriptions,
                outlet: Outlet::Session(peer),
                stop,
            },
            [(catalog, start.catalog), (defined, start.defined)],
            start.files,
            start.bridged,
        )
        .await;
    }
}

/// One watcher: whose, what it subscribed to, where to send, when to stop.
struct Watched {
    service: Arc<ToolService>,
    ctx: ToolContext,
    subscriptions: Arc<Subscriptions>,
    outlet: Outlet,
    stop: CancellationToken,
}

/// Runs [`watch_until_done`]; then the bridged subscriptions it held are released (the
/// session, or the listen, ended).
async fn watch(
    watched: Watched,
    versions: [(tokio::sync::watch::Receiver<u64>, u64); 2],
    files: WatchedFiles,
    bridged: Option<BridgedWatch>,
) {
    let subscriptions = watched.subscriptions.clone();
    watch_until_done(watched, versions, files, bridged).await;
    subscriptions.end();
}

async fn watch_until_done(
    Watched {
        service,
        ctx,
        subscriptions,
        outlet,
        stop,
    }: Watched,
    [
        (mut catalog, mut seen_version),
        (mut defined, mut defined_seen),
    ]: [(tokio::sync::watch::Receiver<u64>, u64); 2],
    mut files: WatchedFiles,
    mut bridged: Option<BridgedWatch>,
) {
    let registry = service.registry().clone();
    let defined_version = || service.resource_catalog().version(&ctx.user_id);
    let mut defined_listing =
        ListingSeen::start(defined_seen, defined_version, own_resources(&service, &ctx)).await;
    loop {
        // A change since the versions were recorded (or since the last wake) is told first.
        let now = registry.catalog_version(&ctx.user_id);
        if now != seen_version {
            seen_version = now;
            if !tools_changed(&service, &ctx, &subscriptions, &outlet).await {
                return;
            }
        }
        let now = defined_version();
        if now != defined_seen {
            defined_seen = now;
            let listed = defined_listing
                .moved(defined_version, own_resources(&service, &ctx))
                .await;
            if !defined_changed(&service, &ctx, &subscriptions, &outlet, listed).await {
                return;
            }
        }
        tokio::select! {
            news = super::prompts::next_bridged(&mut bridged) => {
                if !bridged_changed(&service, &ctx, &subscriptions, &outlet, news).await {
                    return;
                }
            }
            () = stop.cancelled() => return,
            () = subscriptions.added.notified() => {}
            changed = catalog.changed() => if changed.is_err() { return },
            changed = defined.changed() => if changed.is_err() { return },
            change = next_change(&mut files.changes) => {
                let (path, listed) = match change {
                    // A change the resync after a lag already told is not told again.
                    Ok(change) if Some(&change.root) == files.root.as_ref() => {
                        if change.count.changed <= files.seen.changed {
                            continue;
                        }
                        files.seen = change.count;
                        (Some(change.path), change.listed)
                    }
                    Ok(_) => continue,
                    // Fell behind every workspace's changes: the caller's own count says
                    // whether any of them was its workspace's (and whether the listing moved);
                    // which file, it cannot say, so each subscribed one is told.
                    Err(RecvError::Lagged(_)) => {
                        let now = files.count(&service);
                        let seen = std::mem::replace(&mut files.seen, now);
                        match (now.changed != seen.changed, now.listed != seen.listed) {
                            (true, listed) => (None, listed),
                            (false, _) => continue,
                        }
                    }
                    Err(RecvError::Closed) => {
                        files.changes = None;
                        continue;
                    }
                };
                if !file_changed(&subscriptions, &outlet, path.as_deref(), listed).await {
                    return;
                }
            }
        }
    }
}

async fn next_change(
    files: &mut Option<tokio::sync::broadcast::Receiver<WorkspaceChange>>,
) -> Result<WorkspaceChange, RecvError> {
    match files {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// A workspace file changed (`None`: something did): `updated` for the subscribed URIs it
/// concerns, `list_changed` when the listing moved. `false` once nobody listens.
async fn file_changed(
    subscriptions: &Subscriptions,
    outlet: &Outlet,
    path: Option<&str>,
    listed: bool,
) -> bool {
    let concerned: BTreeSet<String> = subscriptions
        .uris()
        .keys()
        .filter(|uri| match (ResourceRef::parse(uri), path) {
            (Some(ResourceRef::WorkspaceFile(subscribed)), Some(path)) => {
                subscribed == path || path.starts_with(&format!("{subscribed}/"))
            }
            (Some(ResourceRef::WorkspaceFile(_)), None) => true,
            _ => false,
        })
        .cloned()
        .collect();
    for uri in concerned {
        if !outlet.updated(uri).await {
            return false;
        }
    }
    !listed || outlet.list_changed().await
}

/// The caller's catalogue moved: `updated` for each subscribed tool source whose revision
/// changed (or that went away), and `list_changed` (the tool sources listed may differ).
async fn tools_changed(
    service: &ToolService,
    ctx: &ToolContext,
    subscriptions: &Subscriptions,
    outlet: &Outlet,
) -> bool {
    let tools: Vec<(String, String, Option<i64>)> = subscriptions
        .uris()
        .iter()
        .filter_map(|(uri, seen)| match ResourceRef::parse(uri) {
            Some(ResourceRef::ToolSource(name)) => Some((uri.clone(), name, *seen)),
            _ => None,
        })
        .collect();
    for (uri, name, seen) in tools {
        let now = service.tool_source_revision(ctx, &name).await;
        if now == seen {
            continue;
        }
        if let Some(entry) = subscriptions.uris().get_mut(&uri) {
            *entry = now;
        }
        if !outlet.updated(uri).await {
            return false;
        }
    }
    outlet.list_changed().await
}

/// The fingerprint of the resources and templates the caller's user defined, as listed
/// (`None` when they cannot be read).
async fn own_resources(service: &ToolService, ctx: &ToolContext) -> Option<u64> {
    let defined = service.list_user_resources(&ctx.user_id).await.ok()?;
    Some(fingerprint(&defined, |r| {
        (r.id.clone(), r.name.clone(), r.revision)
    }))
}

/// The user's own resources or templates may have changed (the owner's version moved: a
/// change here, a notice from another instance, or the change feed's resync): `updated` for
/// each subscribed URI whose resource (or the template it matches) moved to another revision
/// or went away, and `list_changed` when the listing moved (`listed`).
async fn defined_changed(
    service: &ToolService,
    ctx: &ToolContext,
    subscriptions: &Subscriptions,
    outlet: &Outlet,
    listed: bool,
) -> bool {
    let defined: Vec<(String, Option<i64>)> = subscriptions
        .uris()
        .iter()
        .filter(|(uri, _)| ResourceRef::parse(uri).is_none())
        .map(|(uri, seen)| (uri.clone(), *seen))
        .collect();
    for (uri, seen) in defined {
        let now = service.user_resource_revision(&ctx.user_id, &uri).await;
        if now == seen {
            continue;
        }
        if let Some(entry) = subscriptions.uris().get_mut(&uri) {
            *entry = now;
        }
        if !outlet.updated(uri).await {
            return false;
        }
    }
    !listed || outlet.list_changed().await
}

/// A bridged server's offer changed: `list_changed` when its resources did, `updated` when
/// it said a URI this watcher holds at that server changed — only for a server the caller may
/// (still) see. After the watcher fell behind, the servers whose counts moved meanwhile say
/// what may have: `list_changed` if one of them changed its resources, `updated` for each URI
/// held at one that told of updates; nothing when none the caller sees moved. `false` once
/// nobody listens.
async fn bridged_changed(
    service: &ToolService,
    ctx: &ToolContext,
    subscriptions: &Subscriptions,
    outlet: &Outlet,
    news: BridgedNews,
) -> bool {
    match news {
        BridgedNews::Change(SurfaceChange::Resources { server, .. })
            if service.may_see_bridged_server(ctx, &server) =>
        {
            outlet.list_changed().await
        }
        BridgedNews::Change(SurfaceChange::Updated { server, uri, .. })
            if service.may_see_bridged_server(ctx, &server)
                && subscriptions.wants_update(&server, &uri) =>
        {
            outlet.updated(uri).await
        }
        BridgedNews::Missed(missed) => {
            let mut listed = false;
            for server in missed {
                if !service.may_see_bridged_server(ctx, &server.server) {
                    continue;
                }
                listed |= server.resources;
                if server.updated {
                    for uri in subscriptions.bridged_uris_of(&server.server) {
                        if !outlet.updated(uri).await {
                            return false;
                        }
                    }
                }
            }
            !listed || outlet.list_changed().await
        }
        BridgedNews::Change(_) => true,
    }
}
