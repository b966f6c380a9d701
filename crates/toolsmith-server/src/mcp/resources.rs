//! MCP resources (issue 40) outside the dynamic-mcp compat mode: `resources/list`,
//! `resources/read`, `resources/templates/list`, `resources/subscribe` / `unsubscribe`, and
//! the notifications `resources/updated` and `resources/list_changed`. What a caller may read
//! and how is the service's (`toolsmith_service::resources`); this module speaks MCP.
//!
//! A session's subscriptions ([`Subscriptions`]) are watched by [`watch_session`], started
//! with the session: it wakes on a change of a workspace file (the workspace operations'
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
use rmcp::{Peer, RoleServer};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use toolsmith_builtins::workspace::WorkspaceChange;
use toolsmith_core::ToolContext;
use toolsmith_service::bridge::SurfaceChange;
use toolsmith_service::resources::{ResourceBody, ResourceRef};
use toolsmith_service::{ServiceError, ToolService};

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
    /// Wakes the watcher when a subscription is added (to record a tool's revision).
    added: tokio::sync::Notify,
}

impl Subscriptions {
    fn uris(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Option<i64>>> {
        self.uris.lock().unwrap_or_else(PoisonError::into_inner)
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
        let seen = match ResourceRef::parse(uri) {
            Some(ResourceRef::ToolSource(name)) => service.tool_source_revision(ctx, &name).await,
            Some(ResourceRef::WorkspaceFile(_)) => None,
            None => match service.user_resource_revision(&ctx.user_id, uri).await {
                Some(revision) => Some(revision),
                // A bridged server's resource: told when its server says it changed.
                None if service.is_bridged_resource(ctx, uri) => None,
                None => {
                    return Err(ErrorData::resource_not_found(
                        format!(
                            "no resource {uri}: subscribe to a URI resources/list gives (toolsmith://workspace/<path>, toolsmith://tools/<name>/source, or one of the resources you defined), or one a template of yours matches"
                        ),
                        None,
                    ));
                }
            },
        };
        self.uris().insert(uri.to_owned(), seen);
        self.added.notify_one();
        Ok(())
    }

    /// `resources/unsubscribe` (a URI not subscribed to is not an error).
    pub(crate) fn unsubscribe(&self, uri: &str) {
        self.uris().remove(uri);
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
    let seen_version = registry.catalog_version(&ctx.user_id);
    let mut defined = service.resource_catalog().subscribe();
    defined.borrow_and_update();
    let defined_seen = service.resource_catalog().version(&ctx.user_id);
    let files = service.workspace_changes();
    let root = service.workspace_root(&ctx);
    let bridged = service.bridged_changes();
    async move {
        watch(
            Watched {
                service,
                ctx,
                subscriptions,
                peer,
                stop,
            },
            [(catalog, seen_version), (defined, defined_seen)],
            (files, root),
            bridged,
        )
        .await;
    }
}

/// One session's watcher: whose, what it subscribed to, where to send, when to stop.
struct Watched {
    service: Arc<ToolService>,
    ctx: ToolContext,
    subscriptions: Arc<Subscriptions>,
    peer: Peer<RoleServer>,
    stop: CancellationToken,
}

async fn watch(
    Watched {
        service,
        ctx,
        subscriptions,
        peer,
        stop,
    }: Watched,
    [
        (mut catalog, mut seen_version),
        (mut defined, mut defined_seen),
    ]: [(tokio::sync::watch::Receiver<u64>, u64); 2],
    (mut files, root): (
        Option<tokio::sync::broadcast::Receiver<WorkspaceChange>>,
        Option<std::path::PathBuf>,
    ),
    mut bridged: Option<tokio::sync::broadcast::Receiver<SurfaceChange>>,
) {
    let registry = service.registry().clone();
    loop {
        tokio::select! {
            change = super::prompts::next_bridged(&mut bridged) => {
                if !bridged_changed(&service, &ctx, &subscriptions, &peer, change).await {
                    return;
                }
            }
            () = stop.cancelled() => return,
            () = subscriptions.added.notified() => continue,
            changed = catalog.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = registry.catalog_version(&ctx.user_id);
                if now == seen_version {
                    continue;
                }
                seen_version = now;
                if !tools_changed(&service, &ctx, &subscriptions, &peer).await {
                    return;
                }
            }
            changed = defined.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = service.resource_catalog().version(&ctx.user_id);
                if now == defined_seen {
                    continue;
                }
                defined_seen = now;
                if !defined_changed(&service, &ctx, &subscriptions, &peer).await {
                    return;
                }
            }
            change = next_change(&mut files) => {
                let (path, listed) = match change {
                    Ok(change) if Some(&change.root) == root.as_ref() => (Some(change.path), change.listed),
                    Ok(_) => continue,
                    // Fell behind: anything may have changed.
                    Err(RecvError::Lagged(_)) => (None, true),
                    Err(RecvError::Closed) => {
                        files = None;
                        continue;
                    }
                };
                if !file_changed(&subscriptions, &peer, path.as_deref(), listed).await {
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
/// concerns, `list_changed` when the listing moved. `false` once the session is gone.
async fn file_changed(
    subscriptions: &Subscriptions,
    peer: &Peer<RoleServer>,
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
        if !send_updated(peer, uri).await {
            return false;
        }
    }
    !listed || send_list_changed(peer).await
}

/// The caller's catalogue moved: `updated` for each subscribed tool source whose revision
/// changed (or that went away), and `list_changed` (the tool sources listed may differ).
async fn tools_changed(
    service: &ToolService,
    ctx: &ToolContext,
    subscriptions: &Subscriptions,
    peer: &Peer<RoleServer>,
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
        if !send_updated(peer, uri).await {
            return false;
        }
    }
    send_list_changed(peer).await
}

/// The user's own resources or templates changed: `updated` for each subscribed URI whose
/// resource (or the template it matches) moved to another revision or went away, and
/// `list_changed`.
async fn defined_changed(
    service: &ToolService,
    ctx: &ToolContext,
    subscriptions: &Subscriptions,
    peer: &Peer<RoleServer>,
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
        if !send_updated(peer, uri).await {
            return false;
        }
    }
    send_list_changed(peer).await
}

/// A bridged server's offer changed: `list_changed` when its resources did, `updated` when
/// it said a subscribed URI changed — only for a server the caller may see (missed changes:
/// `list_changed`). `false` once the session is gone.
async fn bridged_changed(
    service: &ToolService,
    ctx: &ToolContext,
    subscriptions: &Subscriptions,
    peer: &Peer<RoleServer>,
    change: Result<SurfaceChange, RecvError>,
) -> bool {
    match change {
        Ok(SurfaceChange::Resources { server }) if service.may_see_bridged_server(ctx, &server) => {
            send_list_changed(peer).await
        }
        Ok(SurfaceChange::Updated { server, uri })
            if service.may_see_bridged_server(ctx, &server)
                && subscriptions.uris().contains_key(&uri) =>
        {
            send_updated(peer, uri).await
        }
        Err(RecvError::Lagged(_)) => send_list_changed(peer).await,
        _ => true,
    }
}

async fn send_updated(peer: &Peer<RoleServer>, uri: String) -> bool {
    match peer
        .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
        .await
    {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!(error = %e, "could not send resources/updated");
            !peer.is_transport_closed()
        }
    }
}

async fn send_list_changed(peer: &Peer<RoleServer>) -> bool {
    match peer.notify_resource_list_changed().await {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!(error = %e, "could not send resources/list_changed");
            !peer.is_transport_closed()
        }
    }
}
