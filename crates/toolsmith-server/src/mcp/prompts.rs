//! MCP prompts (issue 40) outside the dynamic-mcp compat mode: `prompts/list` (paginated),
//! `prompts/get` (arguments checked: a missing required one, or one the prompt does not
//! declare, is `-32602` naming it), `completion/complete` (a prompt argument's declared values;
//! a resource template's variables go to [`super::resources::complete`]) and
//! `notifications/prompts/list_changed` — on a session's stream from `notifications/initialized`
//! ([`watch_session`]) and on a 2026-07-28 `subscriptions/listen` ([`listen`]), whenever the
//! caller's user's prompts change here or, through the change feed, on another instance.
//! What a caller sees and how a prompt renders is the service's (`toolsmith_service::prompts`).
//! Bridged servers' prompts (`toolsmith_service::bridge`, `surface.rs`) are listed after the
//! caller's own (a name of the caller's own wins), and their `prompts/get` and completions are
//! forwarded to the server; a change of a bridged server's prompts is a `list_changed` for the
//! sessions that may see that server.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    AudioContent, CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock,
    EmbeddedResource, ErrorData, GetPromptRequestParams, GetPromptResult, ImageContent,
    ListPromptsResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, Reference,
    ResourceContents, Role,
};
use rmcp::service::SubscriptionContext;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;
use toolsmith_core::ToolContext;
use toolsmith_core::prompt::{PromptContent, PromptRecord, PromptRole};
use toolsmith_service::bridge::{BridgedNews, BridgedWatch, SurfaceChange};
use toolsmith_service::prompts::PromptCatalog;
use toolsmith_service::{ServiceError, ToolService};

/// Prompts per page of `prompts/list`.
pub(crate) const PAGE: usize = 100;

/// A refused prompt request as MCP says it: an unknown prompt and bad arguments are `-32602`.
fn refused(e: ServiceError) -> ErrorData {
    match e {
        ServiceError::NotFound(message)
        | ServiceError::Validation(message)
        | ServiceError::TooLarge(message) => ErrorData::invalid_params(message, None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

fn listed(prompt: PromptRecord) -> Prompt {
    let d = prompt.definition;
    let arguments: Vec<PromptArgument> = d
        .arguments
        .into_iter()
        .map(|a| {
            let mut arg = PromptArgument::new(a.name).with_required(a.required);
            if !a.description.is_empty() {
                arg = arg.with_description(a.description);
            }
            if let Some(title) = a.title {
                arg = arg.with_title(title);
            }
            arg
        })
        .collect();
    // Every prompt carries a description (some clients and the conformance suite want one).
    let description = if d.description.is_empty() {
        d.title.clone().unwrap_or_else(|| prompt.name.clone())
    } else {
        d.description
    };
    let mut out = Prompt::new(
        prompt.name,
        Some(description),
        (!arguments.is_empty()).then_some(arguments),
    );
    if let Some(title) = d.title {
        out = out.with_title(title);
    }
    out
}

/// `prompts/list`: one page of the caller's enabled prompts, by name; the cursor is the
/// offset of the next page.
pub(crate) async fn list(
    service: &ToolService,
    ctx: &ToolContext,
    request: Option<&PaginatedRequestParams>,
) -> Result<ListPromptsResult, ErrorData> {
    let start = match request.and_then(|r| r.cursor.as_deref()) {
        None => 0,
        Some(cursor) => cursor.parse::<usize>().map_err(|_| {
            ErrorData::invalid_params(
                format!("cursor '{cursor}' is not one this server gave; list from the start"),
                None,
            )
        })?,
    };
    let mut prompts: Vec<Prompt> = service
        .served_prompts(ctx)
        .await
        .map_err(refused)?
        .into_iter()
        .map(listed)
        .collect();
    // The bridged servers' prompts after the caller's own (a name of the caller's own wins).
    let bridged: Vec<Prompt> = service
        .bridged_prompts(ctx)
        .into_iter()
        .filter(|b| !prompts.iter().any(|p| p.name == b.name))
        .collect();
    prompts.extend(bridged);
    let next = start.saturating_add(PAGE);
    let more = prompts.len() > next;
    let page: Vec<Prompt> = prompts.into_iter().skip(start).take(PAGE).collect();
    let mut result = ListPromptsResult::with_all_items(page);
    result.next_cursor = more.then(|| next.to_string());
    Ok(result)
}

fn content(content: PromptContent) -> ContentBlock {
    match content {
        PromptContent::Text { text } => ContentBlock::text(text),
        PromptContent::Image { data, mime_type } => {
            ContentBlock::Image(ImageContent::new(data, mime_type))
        }
        PromptContent::Audio { data, mime_type } => {
            ContentBlock::Audio(AudioContent::new(data, mime_type))
        }
        PromptContent::Resource { resource } => {
            let contents = match (resource.text, resource.blob) {
                (Some(text), _) => ResourceContents::TextResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    text,
                    meta: None,
                },
                (None, blob) => ResourceContents::BlobResourceContents {
                    uri: resource.uri,
                    mime_type: resource.mime_type,
                    blob: blob.unwrap_or_default(),
                    meta: None,
                },
            };
            ContentBlock::Resource(EmbeddedResource::new(contents))
        }
    }
}

/// `prompts/get`: the caller's enabled prompt rendered from the request's arguments.
pub(crate) async fn get(
    service: &ToolService,
    ctx: &ToolContext,
    request: &GetPromptRequestParams,
) -> Result<GetPromptResult, ErrorData> {
    let served = service.served_prompt(ctx, &request.name).await;
    if let Err(ServiceError::NotFound(_)) = &served
        && let Some(bridged) = service.get_bridged_prompt(ctx, request).await
    {
        return bridged;
    }
    let prompt = served.map_err(|e| match e {
        ServiceError::NotFound(_) => ErrorData::invalid_params(
            format!(
                "Unknown prompt: {} (prompts/list names the prompts you can get)",
                request.name
            ),
            None,
        ),
        other => refused(other),
    })?;
    let mut args: HashMap<String, String> = HashMap::new();
    for (name, value) in request.arguments.iter().flatten() {
        let Some(text) = value.as_str() else {
            return Err(ErrorData::invalid_params(
                format!("argument {name} is not a string: prompt arguments are strings"),
                None,
            ));
        };
        args.insert(name.clone(), text.to_owned());
    }
    let rendered = toolsmith_service::prompts::render(&prompt, &args).map_err(refused)?;
    let messages = rendered
        .messages
        .into_iter()
        .map(|m| {
            let role = match m.role {
                PromptRole::User => Role::User,
                PromptRole::Assistant => Role::Assistant,
            };
            PromptMessage::new(role, content(m.content))
        })
        .collect();
    let mut result = GetPromptResult::new(messages);
    if !rendered.description.is_empty() {
        result.description = Some(rendered.description);
    }
    Ok(result)
}

/// `completion/complete`: a prompt argument's declared values starting with what was typed
/// (an unknown prompt is `-32602`), or a resource template variable's (resources' own; `files`:
/// whether the caller may read workspace files, whose paths complete only then).
pub(crate) async fn complete(
    service: &ToolService,
    ctx: &ToolContext,
    request: &CompleteRequestParams,
    files: bool,
) -> Result<CompleteResult, ErrorData> {
    let name = match &request.r#ref {
        Reference::Prompt(prompt) => &prompt.name,
        Reference::Resource(template) => {
            let own = service
                .resource_templates(ctx)
                .await
                .map_err(refused)?
                .into_iter()
                .find(|t| t.uri_template == template.uri)
                .is_some_and(|t| !service.bridged_templates(ctx).contains(&t));
            if !own && let Some(bridged) = service.complete_bridged(ctx, request).await {
                return bridged;
            }
            return Ok(CompleteResult::new(super::resources::complete(
                service,
                ctx,
                &template.uri,
                &request.argument,
                files,
            )));
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!(
                    "completion/complete completes ref/prompt and ref/resource, not {}",
                    other.reference_type()
                ),
                None,
            ));
        }
    };
    let served = service.served_prompt(ctx, name).await;
    if let Err(ServiceError::NotFound(_)) = &served
        && let Some(bridged) = service.complete_bridged(ctx, request).await
    {
        return bridged;
    }
    let prompt = served.map_err(refused)?;
    let found = toolsmith_service::prompts::complete(
        &prompt,
        &request.argument.name,
        &request.argument.value,
    );
    CompletionInfo::with_pagination(
        found.values,
        u32::try_from(found.total).ok(),
        found.has_more,
    )
    .map(CompleteResult::new)
    .map_err(|e| ErrorData::internal_error(e, None))
}

/// What a watcher last told of a listing of the caller's own (its prompts, or the resources
/// its user defined): the listing's fingerprint, read at a known version of the owner's
/// catalogue. A version moves on every change of the owner's — and of everyone's when the
/// PostgreSQL change feed reconnects (notices may have been lost meanwhile): comparing the
/// fingerprint, only a caller whose listing really moved is told, and a change noticed twice
/// (another instance's notice, then the store's fingerprint poll) is told once.
///
/// Until the watcher has told anything, a change of the owner's own since the client's view
/// (`PromptCatalog::own_changes_of`, not a resync) is told whatever the fingerprint says: the
/// first fingerprint is read when the watcher starts, and another instance's write can already
/// be in the store then, before its notice arrives here — a listing the client never saw. Once
/// told, the client lists again, so later fingerprints stand for what it has seen.
#[derive(Debug, Default)]
pub(crate) struct ListingSeen {
    print: Option<u64>,
    /// The owner's own changes counted at the client's view (`told`).
    own: u64,
    /// Whether the watcher has told a move since it started.
    told: bool,
}

impl ListingSeen {
    /// The listing's fingerprint as `read` gives it now, while the owner's own changes stay as
    /// at `told` (the version of the client's view; `version` reads the version now): otherwise
    /// — or when it cannot be read — nothing is known, and the next move is told. A resync in
    /// between does not matter: the fingerprint says whether it moved anything.
    pub(crate) async fn start(
        told: u64,
        version: impl Fn() -> u64,
        read: impl std::future::Future<Output = Option<u64>>,
    ) -> ListingSeen {
        let own = PromptCatalog::own_changes_of(told);
        let print = read.await;
        ListingSeen {
            print: print.filter(|_| PromptCatalog::own_changes_of(version()) == own),
            own,
            told: false,
        }
    }

    /// The owner's catalogue moved: whether the listing did (read now, compared with what was
    /// told; `true` when either cannot be said, and for the first change of the owner's own).
    pub(crate) async fn moved(
        &mut self,
        version: impl Fn() -> u64,
        read: impl std::future::Future<Output = Option<u64>>,
    ) -> bool {
        let before = version();
        let first_own_change = !self.told && PromptCatalog::own_changes_of(before) != self.own;
        let now = read.await;
        let moved = first_own_change || now.is_none() || now != self.print;
        self.told |= moved;
        // Read while another change came: not trusted (that change wakes the watcher again).
        self.print = now.filter(|_| version() == before);
        moved
    }
}

/// A fingerprint of `items` (what a listing shows of each, as `key` gives it).
pub(crate) fn fingerprint<T, K: Hash>(items: &[T], key: impl Fn(&T) -> K) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for item in items {
        key(item).hash(&mut hasher);
    }
    hasher.finish()
}

/// The fingerprint of the caller's own prompts as `prompts/list` shows them (`None` when they
/// cannot be read).
async fn own_prompts(service: &ToolService, ctx: &ToolContext) -> Option<u64> {
    let prompts = service.served_prompts(ctx).await.ok()?;
    Some(fingerprint(&prompts, |p| {
        (p.id.clone(), p.name.clone(), p.revision)
    }))
}

/// Pushes `notifications/prompts/list_changed` on the session whenever the caller's prompt
/// list moves past `seen` (and the prompts it shows changed: [`ListingSeen`]), or a bridged
/// server the caller may see changes its prompts, until `stop` is cancelled or the transport
/// closes.
pub(crate) async fn watch_session(
    service: Arc<ToolService>,
    ctx: ToolContext,
    seen: Arc<AtomicU64>,
    peer: Peer<RoleServer>,
    stop: CancellationToken,
) {
    let owner = ctx.user_id.clone();
    let catalog = service.prompt_catalog();
    let mut changes = catalog.subscribe();
    changes.borrow_and_update();
    let mut bridged = service.bridged_changes();
    let version = || catalog.version(&owner);
    let mut listing = ListingSeen::start(
        seen.load(Ordering::SeqCst),
        version,
        own_prompts(&service, &ctx),
    )
    .await;
    let mut moved = false;
    loop {
        let now = catalog.version(&owner);
        let moved_own = seen.swap(now, Ordering::SeqCst) != now
            && listing.moved(version, own_prompts(&service, &ctx)).await;
        if (moved_own || std::mem::take(&mut moved))
            && let Err(e) = peer.notify_prompt_list_changed().await
        {
            if peer.is_transport_closed() {
                return;
            }
            tracing::debug!(error = %e, "could not send prompts/list_changed");
        }
        tokio::select! {
            () = stop.cancelled() => return,
            changed = changes.changed() => if changed.is_err() { return },
            news = next_bridged(&mut bridged) => moved = bridged_prompts_moved(&service, &ctx, news),
        }
    }
}

/// The next news of what bridged servers offer; never resolves without a bridge (or once its
/// channel closed).
pub(crate) async fn next_bridged(watch: &mut Option<BridgedWatch>) -> BridgedNews {
    match watch {
        Some(watch) => watch.next().await,
        None => std::future::pending().await,
    }
}

/// Whether bridged news moved the prompts the caller of `ctx` sees: a server it may see
/// changed its prompts (or, for a watcher that fell behind, did meanwhile).
fn bridged_prompts_moved(service: &ToolService, ctx: &ToolContext, news: BridgedNews) -> bool {
    match news {
        BridgedNews::Change(SurfaceChange::Prompts { server, .. }) => {
            service.may_see_bridged_server(ctx, &server)
        }
        BridgedNews::Change(_) => false,
        BridgedNews::Missed(missed) => missed
            .iter()
            .any(|m| m.prompts && service.may_see_bridged_server(ctx, &m.server)),
    }
}

/// One `subscriptions/listen`'s prompt side: an event per change of the caller's prompt list
/// after `baseline` (or of a bridged server's prompts it may see), until the subscription ends
/// or `stop` fires. Returns at once when the client did not ask for prompt changes.
pub(crate) async fn listen(
    service: Arc<ToolService>,
    ctx: ToolContext,
    baseline: u64,
    subscription: &SubscriptionContext,
    stop: CancellationToken,
) {
    if subscription.accepted().prompts_list_changed != Some(true) {
        return;
    }
    let owner = ctx.user_id.clone();
    let catalog = service.prompt_catalog();
    let mut changes = catalog.subscribe();
    changes.borrow_and_update();
    let mut bridged = service.bridged_changes();
    let version = || catalog.version(&owner);
    let mut listing = ListingSeen::start(baseline, version, own_prompts(&service, &ctx)).await;
    let mut moved = false;
    let mut seen = baseline;
    loop {
        let now = catalog.version(&owner);
        let moved_own = now != seen && listing.moved(version, own_prompts(&service, &ctx)).await;
        seen = now;
        if (moved_own || std::mem::take(&mut moved))
            && subscription
                .sink()
                .notify_prompt_list_changed()
                .await
                .is_err()
        {
            return;
        }
        tokio::select! {
            () = subscription.cancelled() => return,
            () = stop.cancelled() => return,
            changed = changes.changed() => if changed.is_err() { return },
            news = next_bridged(&mut bridged) => moved = bridged_prompts_moved(&service, &ctx, news),
        }
    }
}
