//! An upstream's prompts, resources, resource templates, completions and `instructions`,
//! offered through Toolsmith beside its tools (issue 40).
//!
//! Each connection lists what the upstream's capabilities declare (`prompts/list`,
//! `resources/list`, `resources/templates/list`) after its tools, again on the upstream's
//! `notifications/prompts/list_changed` and `notifications/resources/list_changed` and at every
//! health check, and forgets it when the connection ends; each change of what a server offers
//! is announced on [`SurfaceChanges`], which Toolsmith's MCP sessions turn into their own
//! `list_changed` (and the upstream's `resources/updated` into theirs).
//!
//! Named as the server's tools are: a prompt is `<prefix><upstream name>` (checked by the
//! naming rule; a name that fails it is left out), a resource keeps its URI (so the URIs an
//! upstream's tools answer with can be read through Toolsmith) and gets its name prefixed; a
//! URI in Toolsmith's own `toolsmith:` scheme, or one a server listed earlier (by name) already
//! offers, is left out. Granted as its tools are: a caller sees a server's prompts, resources
//! and completions only while the policy lets it reach the server (`group:mcp`,
//! `group:mcp:<server>`, and the item's name) and, with `mcp_grants`, an enabled grant of the
//! server to its user (or to the agent its token names) exists ([`PolicyGate::check_bridged`]).
//!
//! `prompts/get`, `resources/read` and `completion/complete` are forwarded to the upstream that
//! offers the name, URI or template, within the server's `call_timeout_seconds`; the answer is
//! scrubbed of the values the server's Config Center references resolved to and of credential
//! patterns (base64 data is never rewritten; a block holding a known secret is withheld).
//!
//! [`PolicyGate::check_bridged`]: crate::governance::policy::PolicyGate::check_bridged

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorData, GetPromptRequestParams, GetPromptResponse,
    GetPromptResult, Prompt, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, Resource, ResourceTemplate, ServerPeerInfo,
};
use rmcp::service::Peer;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use toolsmith_core::ToolContext;
use toolsmith_scrub::Scrubber;

use super::subscriptions::BridgedSubscription;
use crate::ToolService;
use crate::resources::{ResourceEntry, TemplateEntry};

/// Most prompts, resources and templates kept of one server (each list).
const MAX_ITEMS: usize = 1000;
/// A description longer than this is cut (as a bridged tool's is).
const MAX_DESCRIPTION_CHARS: usize = 4000;
/// One server's `instructions` are cut at this many characters, and all of them together
/// (Toolsmith's own come first) at [`MAX_INSTRUCTIONS_CHARS`].
const MAX_SERVER_INSTRUCTIONS_CHARS: usize = 2000;
pub const MAX_INSTRUCTIONS_CHARS: usize = 8000;

/// What changed in what a server offers. Each carries the server's count of changes of its
/// kind once it is counted ([`ServerCounts`]), which a watcher that fell behind compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SurfaceChange {
    /// Its prompts (a list change, a reconnect, the server gone).
    Prompts { server: String, count: u64 },
    /// Its resources or resource templates.
    Resources { server: String, count: u64 },
    /// The upstream said one of its resources changed (`notifications/resources/updated`).
    Updated {
        server: String,
        uri: String,
        count: u64,
    },
}

impl SurfaceChange {
    /// The server the change is of.
    #[must_use]
    pub fn server(&self) -> &str {
        match self {
            SurfaceChange::Prompts { server, .. }
            | SurfaceChange::Resources { server, .. }
            | SurfaceChange::Updated { server, .. } => server,
        }
    }
}

/// How many changes of each kind one server's offer has announced since Toolsmith started
/// (kept across its reconnects and registration changes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerCounts {
    pub prompts: u64,
    pub resources: u64,
    pub updated: u64,
}

/// Every server's [`ServerCounts`], by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SurfaceCounts(BTreeMap<String, ServerCounts>);

impl SurfaceCounts {
    /// `server`'s counts (all 0 for a server that announced nothing).
    #[must_use]
    pub fn of(&self, server: &str) -> ServerCounts {
        self.0.get(server).copied().unwrap_or_default()
    }

    /// Records `change` as told; `false` when it was already (a resync after a lag covered it).
    fn note(&mut self, change: &SurfaceChange) -> bool {
        let counts = self.0.entry(change.server().to_owned()).or_default();
        let (seen, count) = match change {
            SurfaceChange::Prompts { count, .. } => (&mut counts.prompts, *count),
            SurfaceChange::Resources { count, .. } => (&mut counts.resources, *count),
            SurfaceChange::Updated { count, .. } => (&mut counts.updated, *count),
        };
        if count <= *seen {
            return false;
        }
        *seen = count;
        true
    }

    /// What moved from `self` (told) to `now`, server by server.
    fn missed(&self, now: &SurfaceCounts) -> Vec<Missed> {
        now.0
            .iter()
            .filter_map(|(server, now)| {
                let told = self.0.get(server).copied().unwrap_or_default();
                let missed = Missed {
                    server: server.clone(),
                    prompts: now.prompts != told.prompts,
                    resources: now.resources != told.resources,
                    updated: now.updated != told.updated,
                };
                (missed.prompts || missed.resources || missed.updated).then_some(missed)
            })
            .collect()
    }
}

/// What a watcher that fell behind missed of one server: which kinds of change it announced
/// meanwhile (which resource was updated, the counts cannot say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missed {
    pub server: String,
    pub prompts: bool,
    pub resources: bool,
    pub updated: bool,
}

/// The next thing a [`BridgedWatch`] tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BridgedNews {
    /// One change, in order.
    Change(SurfaceChange),
    /// The watcher fell behind the channel: what moved meanwhile, server by server (only
    /// servers whose counts moved; never empty).
    Missed(Vec<Missed>),
}

/// One watcher of what bridged servers announce (a session's or a listen's): each change after
/// it started, once; after it fell behind the channel (256 held, every server's changes), not
/// "anything may have changed" but the servers whose counts moved since what it was told.
#[derive(Debug)]
pub struct BridgedWatch {
    changes: Option<broadcast::Receiver<SurfaceChange>>,
    told: SurfaceCounts,
    source: SurfaceChanges,
}

impl BridgedWatch {
    /// The next news; never resolves once the channel is closed.
    pub async fn next(&mut self) -> BridgedNews {
        loop {
            let Some(changes) = self.changes.as_mut() else {
                return std::future::pending().await;
            };
            match changes.recv().await {
                Ok(change) => {
                    if self.told.note(&change) {
                        return BridgedNews::Change(change);
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let now = self.source.counts();
                    let missed = self.told.missed(&now);
                    self.told = now;
                    if !missed.is_empty() {
                        return BridgedNews::Missed(missed);
                    }
                }
                Err(broadcast::error::RecvError::Closed) => self.changes = None,
            }
        }
    }
}

/// Where changes of every server's offer are announced, and counted (each sent under the
/// counts' lock, so a watcher's snapshot and the channel agree).
#[derive(Debug, Clone)]
pub(crate) struct SurfaceChanges {
    sender: broadcast::Sender<SurfaceChange>,
    counts: Arc<Mutex<SurfaceCounts>>,
}

/// Changes held for a watcher that has not read them yet.
const CHANNEL_CAPACITY: usize = 256;

impl Default for SurfaceChanges {
    fn default() -> Self {
        SurfaceChanges {
            sender: broadcast::channel(CHANNEL_CAPACITY).0,
            counts: Arc::default(),
        }
    }
}

/// A kind of change, for [`SurfaceChanges::send`].
pub(crate) enum Kind {
    Prompts,
    Resources,
    Updated(String),
}

impl SurfaceChanges {
    fn lock(&self) -> std::sync::MutexGuard<'_, SurfaceCounts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts and announces a change of `server`'s offer.
    pub(crate) fn send(&self, server: &str, kind: Kind) {
        let mut counts = self.lock();
        let of = counts.0.entry(server.to_owned()).or_default();
        let server = server.to_owned();
        let change = match kind {
            Kind::Prompts => {
                of.prompts = of.prompts.wrapping_add(1);
                SurfaceChange::Prompts {
                    server,
                    count: of.prompts,
                }
            }
            Kind::Resources => {
                of.resources = of.resources.wrapping_add(1);
                SurfaceChange::Resources {
                    server,
                    count: of.resources,
                }
            }
            Kind::Updated(uri) => {
                of.updated = of.updated.wrapping_add(1);
                SurfaceChange::Updated {
                    server,
                    uri,
                    count: of.updated,
                }
            }
        };
        // Nobody listening is fine.
        let _ = self.sender.send(change);
    }

    fn counts(&self) -> SurfaceCounts {
        self.lock().clone()
    }

    /// A watcher from now on.
    pub(crate) fn watch(&self) -> BridgedWatch {
        let counts = self.lock();
        BridgedWatch {
            changes: Some(self.sender.subscribe()),
            told: counts.clone(),
            source: self.clone(),
        }
    }
}

/// What one connected server offers besides its tools.
#[derive(Clone, Default)]
pub(crate) struct Offered {
    peer: Option<Peer<RoleClient>>,
    timeout: Duration,
    scrubber: Option<Arc<Scrubber>>,
    instructions: Option<String>,
    completions: bool,
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
}

/// One server's offer, replaced whole at each listing.
#[derive(Default)]
pub(crate) struct Surface(Mutex<Arc<Offered>>);

impl Surface {
    pub(crate) fn get(&self) -> Arc<Offered> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, offered: Offered) -> Arc<Offered> {
        std::mem::replace(
            &mut *self.0.lock().unwrap_or_else(PoisonError::into_inner),
            Arc::new(offered),
        )
    }

    /// The connection ended: nothing is offered; the changes announced.
    pub(crate) fn clear(&self, server: &str, changes: &SurfaceChanges) {
        let before = self.set(Offered::default());
        announce(server, &before, &Offered::default(), changes);
    }
}

fn announce(server: &str, before: &Offered, now: &Offered, changes: &SurfaceChanges) {
    if before.prompts != now.prompts {
        changes.send(server, Kind::Prompts);
    }
    if before.resources != now.resources || before.templates != now.templates {
        changes.send(server, Kind::Resources);
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() > max {
        text.chars().take(max).chain("… (cut)".chars()).collect()
    } else {
        text.to_owned()
    }
}

/// Everything a listing of one server needs.
pub(crate) struct Listing<'a> {
    pub(crate) server: &'a str,
    pub(crate) peer: &'a Peer<RoleClient>,
    pub(crate) timeout: Duration,
    pub(crate) scrubber: Option<Arc<Scrubber>>,
    pub(crate) changes: &'a SurfaceChanges,
}

/// Lists what the upstream's capabilities say it offers and installs it in `surface`,
/// announcing what changed. A listing that fails keeps what was listed before (the tools'
/// listing and the health check decide whether the connection is alive).
pub(crate) async fn refresh(surface: &Surface, listing: Listing<'_>) {
    let info: Option<Arc<ServerPeerInfo>> = listing.peer.peer_info();
    let Some(info) = info else {
        return;
    };
    let caps = &info.capabilities;
    let before = surface.get();
    let timeout = listing.timeout;
    let server = listing.server;
    let mut offered = Offered {
        peer: Some(listing.peer.clone()),
        timeout,
        scrubber: listing.scrubber,
        instructions: info
            .instructions
            .as_deref()
            .map(|text| cut(text.trim(), MAX_SERVER_INSTRUCTIONS_CHARS))
            .filter(|text| !text.is_empty()),
        completions: caps.completions.is_some(),
        prompts: before.prompts.clone(),
        resources: before.resources.clone(),
        templates: before.templates.clone(),
    };
    if caps.prompts.is_some() {
        match tokio::time::timeout(timeout, listing.peer.list_all_prompts()).await {
            Ok(Ok(mut prompts)) => {
                prompts.truncate(MAX_ITEMS);
                for prompt in &mut prompts {
                    if let Some(d) = prompt.description.as_mut() {
                        *d = cut(d, MAX_DESCRIPTION_CHARS);
                    }
                }
                offered.prompts = prompts;
            }
            Ok(Err(e)) => tracing::warn!(server, error = %e, "prompts/list failed"),
            Err(_) => tracing::warn!(server, "prompts/list did not answer in time"),
        }
    }
    if caps.resources.is_some() {
        match tokio::time::timeout(timeout, listing.peer.list_all_resources()).await {
            Ok(Ok(mut resources)) => {
                resources.truncate(MAX_ITEMS);
                for resource in &mut resources {
                    if let Some(d) = resource.description.as_mut() {
                        *d = cut(d, MAX_DESCRIPTION_CHARS);
                    }
                }
                offered.resources = resources;
            }
            Ok(Err(e)) => tracing::warn!(server, error = %e, "resources/list failed"),
            Err(_) => tracing::warn!(server, "resources/list did not answer in time"),
        }
        match tokio::time::timeout(timeout, listing.peer.list_all_resource_templates()).await {
            Ok(Ok(mut templates)) => {
                templates.truncate(MAX_ITEMS);
                for template in &mut templates {
                    if let Some(d) = template.description.as_mut() {
                        *d = cut(d, MAX_DESCRIPTION_CHARS);
                    }
                }
                offered.templates = templates;
            }
            Ok(Err(e)) => tracing::warn!(server, error = %e, "resources/templates/list failed"),
            Err(_) => tracing::warn!(server, "resources/templates/list did not answer in time"),
        }
    }
    announce(server, &before, &offered, listing.changes);
    surface.set(offered);
}

/// One server as a caller may see it: its name, prefix and offer.
struct Seen {
    server: String,
    prefix: String,
    offered: Arc<Offered>,
}

/// Whether `uri` is one Toolsmith answers for itself.
fn ours(uri: &str) -> bool {
    uri.get(..10)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("toolsmith:"))
}

/// The error for an upstream that failed or did not answer in time.
fn upstream_failed(server: &str, what: &str, e: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(
        format!("MCP server '{server}' failed to answer {what}: {e}"),
        None,
    )
}

fn timed_out(server: &str, what: &str, timeout: Duration) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "MCP server '{server}' did not answer {what} within {} s (its call_timeout_seconds)",
            timeout.as_secs()
        ),
        None,
    )
}

/// The upstream's own error, passed on with its code (its message scrubbed).
fn passed_on(server: &str, e: rmcp::ServiceError, scrubber: Option<&Scrubber>) -> ErrorData {
    match e {
        rmcp::ServiceError::McpError(mut error) => {
            if let Some(s) = scrubber {
                error.message = s.scrub_str(&error.message).into_owned().into();
            }
            error
        }
        other => upstream_failed(server, "the request", other),
    }
}

/// `value` scrubbed as content blocks (see the module doc).
fn scrub_block(scrubber: Option<&Scrubber>, block: &mut Value) {
    if let Some(s) = scrubber {
        let mut wrapped = json!({"content": [block.take()]});
        s.scrub_blocks(&mut wrapped);
        if let Some(back) = wrapped
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .and_then(|blocks| blocks.pop())
        {
            *block = back;
        }
    }
}

fn scrubbed<T: serde::Serialize + serde::de::DeserializeOwned>(
    server: &str,
    scrubber: Option<&Scrubber>,
    result: T,
    inside: impl Fn(&mut Value),
) -> Result<T, ErrorData> {
    if scrubber.is_none() {
        return Ok(result);
    }
    let mut value =
        serde_json::to_value(&result).map_err(|e| upstream_failed(server, "the request", e))?;
    inside(&mut value);
    serde_json::from_value(value).map_err(|e| upstream_failed(server, "the request", e))
}

impl ToolService {
    /// The connected servers whose offer the caller of `ctx` may see, by name.
    fn seen_servers(&self, ctx: &ToolContext) -> Vec<Seen> {
        let Some(bridge) = self.bridge.as_ref() else {
            return Vec::new();
        };
        bridge
            .surfaces()
            .into_iter()
            .filter(|(server, _, _)| self.policy.check_bridged(ctx, server, None).is_ok())
            .map(|(server, prefix, offered)| Seen {
                server,
                prefix,
                offered,
            })
            .collect()
    }

    fn may_use(&self, ctx: &ToolContext, server: &str, name: &str) -> bool {
        self.policy.check_bridged(ctx, server, Some(name)).is_ok()
    }

    /// Changes of what bridged servers offer from now on (`None` without a bridge).
    pub fn bridged_changes(&self) -> Option<BridgedWatch> {
        self.bridge.as_ref().map(|b| b.changes().watch())
    }

    /// How many changes each bridged server's offer has announced (empty without a bridge).
    #[must_use]
    pub fn bridged_counts(&self) -> SurfaceCounts {
        self.bridge
            .as_ref()
            .map(|b| b.changes().counts())
            .unwrap_or_default()
    }

    /// Whether the caller of `ctx` may see what the bridged server `server` offers.
    #[must_use]
    pub fn may_see_bridged_server(&self, ctx: &ToolContext, server: &str) -> bool {
        self.policy.check_bridged(ctx, server, None).is_ok()
    }

    /// The bridged servers' prompts the caller may see, named `<prefix><name>`, by name.
    #[must_use]
    pub fn bridged_prompts(&self, ctx: &ToolContext) -> Vec<Prompt> {
        let mut out = Vec::new();
        let mut taken = BTreeSet::new();
        for seen in self.seen_servers(ctx) {
            for prompt in &seen.offered.prompts {
                let name = format!("{}{}", seen.prefix, prompt.name);
                let usable = toolsmith_core::name::validate_name(
                    &name,
                    toolsmith_core::name::NameRule::Wide,
                )
                .is_ok();
                if usable && self.may_use(ctx, &seen.server, &name) && taken.insert(name.clone()) {
                    let mut listed = prompt.clone();
                    listed.name = name;
                    out.push(listed);
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The server and upstream name of the bridged prompt `name` the caller may get.
    fn bridged_prompt(&self, ctx: &ToolContext, name: &str) -> Option<(Seen, String)> {
        if !self.bridged_prompts(ctx).iter().any(|p| p.name == name) {
            return None;
        }
        self.seen_servers(ctx).into_iter().find_map(|seen| {
            let upstream = name.strip_prefix(seen.prefix.as_str())?.to_owned();
            seen.offered
                .prompts
                .iter()
                .any(|p| p.name == upstream)
                .then_some((seen, upstream))
        })
    }

    /// `prompts/get` of a bridged prompt, forwarded to its server; `None` when `name` is no
    /// bridged prompt the caller may get.
    pub async fn get_bridged_prompt(
        &self,
        ctx: &ToolContext,
        request: &GetPromptRequestParams,
    ) -> Option<Result<GetPromptResult, ErrorData>> {
        let (seen, upstream) = self.bridged_prompt(ctx, &request.name)?;
        let peer = seen.offered.peer.clone()?;
        let mut params = GetPromptRequestParams::new(upstream);
        params.arguments = request.arguments.clone();
        let (server, timeout) = (seen.server.as_str(), seen.offered.timeout);
        let scrubber = seen.offered.scrubber.as_deref();
        let answer = match tokio::time::timeout(timeout, peer.get_prompt_once(params)).await {
            Err(_) => Err(timed_out(server, "prompts/get", timeout)),
            Ok(Err(e)) => Err(passed_on(server, e, scrubber)),
            Ok(Ok(GetPromptResponse::Complete(result))) => Ok(result),
            Ok(Ok(_)) => Err(upstream_failed(
                server,
                "prompts/get",
                "it asked for input, which the bridge does not relay for prompts",
            )),
        };
        Some(answer.and_then(|result| {
            scrubbed(server, scrubber, result, |value| {
                if let Some(messages) = value.get_mut("messages").and_then(Value::as_array_mut) {
                    for message in messages {
                        if let Some(content) = message.get_mut("content") {
                            scrub_block(scrubber, content);
                        }
                    }
                }
                if let (Some(s), Some(d)) = (scrubber, value.get_mut("description")) {
                    s.scrub_json(d);
                }
            })
        }))
    }

    /// The bridged resources the caller may see, each URI once (the first server by name),
    /// names prefixed with the server's prefix; Toolsmith's own scheme left out.
    #[must_use]
    pub fn bridged_resources(&self, ctx: &ToolContext) -> Vec<ResourceEntry> {
        let mut out = Vec::new();
        let mut taken = BTreeSet::new();
        for seen in self.seen_servers(ctx) {
            for resource in &seen.offered.resources {
                let raw = resource;
                let name = format!("{}{}", seen.prefix, raw.name);
                if ours(&raw.uri)
                    || !self.may_use(ctx, &seen.server, &name)
                    || !taken.insert(raw.uri.clone())
                {
                    continue;
                }
                out.push(ResourceEntry {
                    uri: raw.uri.clone(),
                    name,
                    title: raw.title.clone(),
                    description: raw.description.clone(),
                    mime_type: raw
                        .mime_type
                        .clone()
                        .unwrap_or_else(|| "text/plain".to_owned()),
                    size: raw.size,
                });
            }
        }
        out
    }

    /// The bridged resource templates the caller may see (each template once, the first
    /// server by name).
    #[must_use]
    pub fn bridged_templates(&self, ctx: &ToolContext) -> Vec<TemplateEntry> {
        let mut out = Vec::new();
        let mut taken = BTreeSet::new();
        for seen in self.seen_servers(ctx) {
            for template in &seen.offered.templates {
                let raw = template;
                let name = format!("{}{}", seen.prefix, raw.name);
                if ours(&raw.uri_template)
                    || !self.may_use(ctx, &seen.server, &name)
                    || !taken.insert(raw.uri_template.clone())
                {
                    continue;
                }
                out.push(TemplateEntry {
                    uri_template: raw.uri_template.clone(),
                    title: raw.title.clone().unwrap_or_else(|| name.clone()),
                    name,
                    description: raw.description.clone().unwrap_or_default(),
                    mime_type: raw.mime_type.clone(),
                });
            }
        }
        out
    }

    /// The server that answers for `uri`: the one listing it, else the one whose template
    /// matches it (`{name}` and `{+name}` templates).
    fn server_of_uri(&self, ctx: &ToolContext, uri: &str) -> Option<Seen> {
        if ours(uri) {
            return None;
        }
        let listed = self.bridged_resources(ctx);
        let templates = self.bridged_templates(ctx);
        let servers = self.seen_servers(ctx);
        if listed.iter().any(|r| r.uri == uri) {
            return servers
                .into_iter()
                .find(|seen| seen.offered.resources.iter().any(|r| r.uri == uri));
        }
        let template = templates
            .iter()
            .find(|t| crate::resources::user::match_template(&t.uri_template, uri).is_some())?;
        servers.into_iter().find(|seen| {
            seen.offered
                .templates
                .iter()
                .any(|t| t.uri_template == template.uri_template)
        })
    }

    /// Whether a bridged server the caller may see answers for `uri`.
    #[must_use]
    pub fn is_bridged_resource(&self, ctx: &ToolContext, uri: &str) -> bool {
        self.server_of_uri(ctx, uri).is_some()
    }

    /// `resources/subscribe` of a bridged resource, forwarded to the server that offers it
    /// (once per URI however many callers hold it: `subscriptions.rs`); `None` when no bridged
    /// server the caller may see answers for `uri`.
    pub async fn subscribe_bridged_resource(
        &self,
        ctx: &ToolContext,
        uri: &str,
    ) -> Option<Result<BridgedSubscription, ErrorData>> {
        let seen = self.server_of_uri(ctx, uri)?;
        let held = self.bridge.as_ref()?.subscribed(&seen.server);
        Some(held.subscribe(uri).await)
    }

    /// `resources/read` of a bridged resource, forwarded to the server that offers it;
    /// `None` when no bridged server the caller may see answers for `uri`.
    pub async fn read_bridged_resource(
        &self,
        ctx: &ToolContext,
        uri: &str,
    ) -> Option<Result<ReadResourceResult, ErrorData>> {
        let seen = self.server_of_uri(ctx, uri)?;
        let peer = seen.offered.peer.clone()?;
        let (server, timeout) = (seen.server.as_str(), seen.offered.timeout);
        let scrubber = seen.offered.scrubber.as_deref();
        let params = ReadResourceRequestParams::new(uri);
        let answer = match tokio::time::timeout(timeout, peer.read_resource_once(params)).await {
            Err(_) => Err(timed_out(server, "resources/read", timeout)),
            Ok(Err(e)) => Err(passed_on(server, e, scrubber)),
            Ok(Ok(ReadResourceResponse::Complete(result))) => Ok(result),
            Ok(Ok(_)) => Err(upstream_failed(
                server,
                "resources/read",
                "it asked for input, which the bridge does not relay for resources",
            )),
        };
        Some(answer.and_then(|result| {
            scrubbed(server, scrubber, result, |value| {
                if let Some(contents) = value.get_mut("contents").and_then(Value::as_array_mut) {
                    for content in contents {
                        let mut block = json!({"type": "resource", "resource": content.take()});
                        scrub_block(scrubber, &mut block);
                        *content = match block {
                            Value::Object(mut fields) if fields.contains_key("resource") => {
                                fields.remove("resource").unwrap_or(Value::Null)
                            }
                            // Withheld whole: a text content saying so, at the same URI.
                            other => json!({
                                "uri": uri,
                                "text": other.get("text").cloned().unwrap_or(Value::Null),
                            }),
                        };
                    }
                }
            })
        }))
    }

    /// `completion/complete` for a bridged prompt's argument or a bridged template's variable,
    /// forwarded to its server; `None` when the reference is no bridged one the caller may see.
    pub async fn complete_bridged(
        &self,
        ctx: &ToolContext,
        request: &CompleteRequestParams,
    ) -> Option<Result<CompleteResult, ErrorData>> {
        let mut forwarded = request.clone();
        forwarded.meta = None;
        let seen = match &request.r#ref {
            Reference::Prompt(prompt) => {
                let (seen, upstream) = self.bridged_prompt(ctx, &prompt.name)?;
                forwarded.r#ref = Reference::for_prompt(upstream);
                seen
            }
            Reference::Resource(template) => {
                if !self
                    .bridged_templates(ctx)
                    .iter()
                    .any(|t| t.uri_template == template.uri)
                {
                    return None;
                }
                self.seen_servers(ctx).into_iter().find(|seen| {
                    seen.offered
                        .templates
                        .iter()
                        .any(|t| t.uri_template == template.uri)
                })?
            }
            _ => return None,
        };
        if !seen.offered.completions {
            // The upstream completes nothing: no values, as MCP answers then.
            return Some(Ok(CompleteResult::default()));
        }
        let peer = seen.offered.peer.clone()?;
        let (server, timeout) = (seen.server.as_str(), seen.offered.timeout);
        let scrubber = seen.offered.scrubber.as_deref();
        let answer = match tokio::time::timeout(timeout, peer.complete(forwarded)).await {
            Err(_) => Err(timed_out(server, "completion/complete", timeout)),
            Ok(Err(e)) => Err(passed_on(server, e, scrubber)),
            Ok(Ok(result)) => Ok(result),
        };
        Some(answer.and_then(|result| {
            scrubbed(server, scrubber, result, |value| {
                if let Some(s) = scrubber {
                    s.scrub_json(value);
                }
            })
        }))
    }

    /// The `instructions` of the bridged servers the caller may see, one paragraph each
    /// (`MCP server '<name>' (prompts <prefix>…): …`), each cut at 2,000 characters; empty
    /// when there are none.
    #[must_use]
    pub fn bridged_instructions(&self, ctx: &ToolContext) -> String {
        self.seen_servers(ctx)
            .into_iter()
            .filter_map(|seen| {
                let text = seen.offered.instructions.as_deref()?;
                let text = seen
                    .offered
                    .scrubber
                    .as_deref()
                    .map_or_else(|| text.to_owned(), |s| s.scrub_str(text).into_owned());
                Some(format!(
                    "MCP server '{}' (its tools and prompts are named {}…): {text}",
                    seen.server, seen.prefix
                ))
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

#[cfg(test)]
mod tests;
