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
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use toolsmith_core::ToolContext;
use toolsmith_core::prompt::{PromptContent, PromptRecord, PromptRole};
use toolsmith_service::bridge::SurfaceChange;
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

/// Pushes `notifications/prompts/list_changed` on the session whenever the caller's prompt
/// list moves past `seen`, or a bridged server the caller may see changes its prompts, until
/// `stop` is cancelled or the transport closes.
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
    let mut moved = false;
    loop {
        let now = catalog.version(&owner);
        if (seen.swap(now, Ordering::SeqCst) != now || std::mem::take(&mut moved))
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
            change = next_bridged(&mut bridged) => moved = bridged_prompts_moved(&service, &ctx, change),
        }
    }
}

/// The next change of what bridged servers offer; never resolves without a bridge (or once
/// its channel closed).
pub(crate) async fn next_bridged(
    changes: &mut Option<broadcast::Receiver<SurfaceChange>>,
) -> Result<SurfaceChange, RecvError> {
    let result = match changes {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    };
    if matches!(result, Err(RecvError::Closed)) {
        *changes = None;
    }
    result
}

/// Whether a bridged change moved the prompts the caller of `ctx` sees (a server it may see
/// changed its prompts, or changes were missed).
fn bridged_prompts_moved(
    service: &ToolService,
    ctx: &ToolContext,
    change: Result<SurfaceChange, RecvError>,
) -> bool {
    match change {
        Ok(SurfaceChange::Prompts { server }) => service.may_see_bridged_server(ctx, &server),
        Ok(_) | Err(RecvError::Closed) => false,
        Err(RecvError::Lagged(_)) => true,
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
    let mut moved = false;
    let mut seen = baseline;
    loop {
        let now = catalog.version(&owner);
        if now != seen || std::mem::take(&mut moved) {
            seen = now;
            if subscription
                .sink()
                .notify_prompt_list_changed()
                .await
                .is_err()
            {
                return;
            }
        }
        tokio::select! {
            () = subscription.cancelled() => return,
            () = stop.cancelled() => return,
            changed = changes.changed() => if changed.is_err() { return },
            change = next_bridged(&mut bridged) => moved = bridged_prompts_moved(&service, &ctx, change),
        }
    }
}
