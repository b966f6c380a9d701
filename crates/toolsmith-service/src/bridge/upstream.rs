//! The connection task of one upstream server: start it (stdio) or reach it (streamable HTTP,
//! or legacy HTTP+SSE with `sse.rs`, through the egress guard), list and register its tools,
//! follow its `list_changed` and a 30 s health check, and reconnect with backoff when it goes
//! away.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::Utc;
use rmcp::model::{
    ClientConfig, ElicitRequestParams, ElicitResult, ErrorData, Implementation,
    ProgressNotificationParam,
};
#[allow(
    deprecated,
    reason = "sampling, roots and logging are MCP 2025-11-25's; rmcp marks them for SEP-2577"
)]
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ListRootsResult,
    LoggingMessageNotificationParam,
};
use rmcp::service::{NotificationContext, Peer, RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::io::AsyncBufReadExt;
use tokio::sync::Notify;
use toolsmith_core::ToolRegistry;

use super::registration::{McpServerRegistration, Transport, env_references, resolve_env};
use super::relay::Relay;
use super::status::{Counters, RegistrationView, ServerSource, ServerState, ServerStatus};
use super::subscriptions::Subscribed;
use super::surface::{self, Kind, Surface, SurfaceChanges};
use super::{Launcher, Origin, http, sse, tool};
use crate::governance::client_requests::ClientRequest;

/// Time between health checks of a connected server.
const HEALTH_INTERVAL: Duration = Duration::from_secs(30);
/// The first wait before a reconnect; doubled each failed attempt up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(2);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Failed attempts in a row before the server waits for [`super::Bridge::retry`].
const MAX_ATTEMPTS: u32 = 10;
/// How long starting the program and the MCP handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The last lines of a program's stderr kept for its status, and the length of each.
const STDERR_TAIL_LINES: usize = 5;
const STDERR_LINE_CHARS: usize = 300;
/// How long a failed start waits for the program's stderr to end (it is being killed).
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// One server: its configuration, its status, and the wake-ups of its task.
pub(crate) struct Upstream {
    pub(crate) config: McpServerRegistration,
    pub(crate) origin: Origin,
    status: Mutex<ServerStatus>,
    counters: Arc<Counters>,
    /// The upstream said its tools changed.
    tools_changed: Arc<Notify>,
    /// Someone asked for a reconnect now.
    pub(crate) retry_now: Notify,
    /// The values this connection's Config Center references resolved to (env, headers, the
    /// bearer token): secrets of whoever registered the server, which the pipeline's scrubber
    /// (the caller's secrets and the patterns) would not know when someone else calls.
    resolved: Mutex<Vec<String>>,
    /// Why the current connection's transport ended on its own (the legacy SSE transport
    /// says; rmcp only sees that it ended).
    ended: sse::Ended,
    /// The last lines the program wrote to stderr (stdio), for the status of a failed start.
    stderr_tail: Arc<Mutex<std::collections::VecDeque<String>>>,
    /// What the server offers besides its tools (prompts, resources …: `surface.rs`).
    pub(crate) surface: Surface,
    /// The upstream said its prompts or resources changed.
    surface_changed: Arc<Notify>,
    /// Where changes of every server's offer are announced.
    changes: SurfaceChanges,
    /// The resource subscriptions Toolsmith's callers hold at this server.
    subscribed: Arc<Subscribed>,
}

impl Upstream {
    pub(crate) fn new(
        config: McpServerRegistration,
        origin: Origin,
        changes: SurfaceChanges,
        subscribed: Arc<Subscribed>,
    ) -> Upstream {
        let state = if config.enabled {
            ServerState::Connecting
        } else {
            ServerState::Disabled
        };
        let (source, owner, revision) = match &origin {
            Origin::Config => (ServerSource::Config, None, None),
            Origin::Registered { owner, revision } => {
                (ServerSource::Api, Some(owner.clone()), Some(*revision))
            }
        };
        Upstream {
            status: Mutex::new(ServerStatus {
                name: config.name.clone(),
                source,
                owner,
                revision,
                config: RegistrationView::of(&config),
                state,
                last_error: None,
                tool_count: 0,
                deferred: false,
                tools: Vec::new(),
                skipped: Vec::new(),
                last_check: None,
                connections: 0,
                calls: 0,
                errors: 0,
            }),
            config,
            origin,
            counters: Arc::new(Counters::default()),
            tools_changed: Arc::new(Notify::new()),
            retry_now: Notify::new(),
            resolved: Mutex::new(Vec::new()),
            ended: sse::Ended::default(),
            stderr_tail: Arc::default(),
            surface: Surface::default(),
            surface_changed: Arc::new(Notify::new()),
            changes,
            subscribed,
        }
    }

    pub(crate) fn status(&self) -> ServerStatus {
        let mut status = self.lock().clone();
        status.tool_count = status.tools.len();
        status.calls = self.counters.calls.load(Ordering::Relaxed);
        status.errors = self.counters.errors.load(Ordering::Relaxed);
        status
    }

    pub(crate) fn set_state(&self, state: ServerState) {
        self.lock().state = state;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ServerStatus> {
        self.status.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A scrubber of this connection's resolved secrets (`None` when it has none).
    fn scrubber(&self) -> Result<Option<Arc<toolsmith_scrub::Scrubber>>, String> {
        let resolved = self.resolved.lock().unwrap_or_else(PoisonError::into_inner);
        let secrets: Vec<String> = resolved.iter().filter(|s| !s.is_empty()).cloned().collect();
        if secrets.is_empty() {
            return Ok(None);
        }
        toolsmith_scrub::Scrubber::new(secrets)
            .map(|s| Some(Arc::new(s)))
            .map_err(|e| format!("cannot scrub the server's own secrets: {e}"))
    }

    /// A scrubber of what the server offers besides its tools (prompts, resources), which
    /// passes no pipeline: its resolved secrets and the credential patterns.
    fn surface_scrubber(&self) -> Option<Arc<toolsmith_scrub::Scrubber>> {
        let resolved = self.resolved.lock().unwrap_or_else(PoisonError::into_inner);
        let secrets: Vec<String> = resolved.iter().filter(|s| !s.is_empty()).cloned().collect();
        match toolsmith_scrub::Scrubber::new(secrets) {
            Ok(s) => Some(Arc::new(s)),
            Err(e) => {
                tracing::warn!(server = %self.config.name, error = %e, "cannot scrub the server's prompts and resources");
                None
            }
        }
    }

    /// The tail of the program's stderr, for a status: redacted of the server's own secrets
    /// and of credential patterns; empty when it wrote nothing.
    fn stderr_note(&self, ended: bool) -> String {
        let lines: Vec<String> = self
            .stderr_tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        if lines.is_empty() {
            return if ended {
                "; the program exited without writing to stderr".to_owned()
            } else {
                String::new()
            };
        }
        let secrets: Vec<String> = self
            .resolved
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|s| !s.is_empty())
            .cloned()
            .collect();
        let text = lines.join(" | ");
        let scrubbed = match toolsmith_scrub::Scrubber::new(secrets) {
            Ok(scrubber) => scrubber.scrub_str(&text).into_owned(),
            Err(_) => "(its stderr could not be scrubbed, so it is not shown)".to_owned(),
        };
        format!(
            "; {} stderr ended with: {scrubbed}",
            if ended {
                "the program exited; its"
            } else {
                "its"
            }
        )
    }

    fn set_down(&self, error: String) {
        tracing::warn!(server = %self.config.name, error = %error, "MCP server is down");
        let mut status = self.lock();
        status.state = ServerState::Down;
        status.last_error = Some(error);
        status.tools.clear();
    }
}

/// Receives the upstream's notifications, and its requests to the client, which the calling
/// client answers ([`super::relay`]).
struct Handler {
    tools_changed: Arc<Notify>,
    /// The upstream's prompts or resources changed.
    surface_changed: Arc<Notify>,
    /// Where its `resources/updated` is passed on, with its name.
    changes: SurfaceChanges,
    server: String,
    relay: Arc<Relay>,
}

/// A relayed answer read back as rmcp's type.
fn answer_as<T: serde::de::DeserializeOwned>(
    what: &str,
    answer: Result<serde_json::Value, ErrorData>,
) -> Result<T, ErrorData> {
    serde_json::from_value(answer?).map_err(|e| {
        ErrorData::internal_error(
            format!("the caller's answer to {what} cannot be read: {e}"),
            None,
        )
    })
}

#[allow(
    deprecated,
    reason = "sampling, roots and logging are MCP 2025-11-25's; rmcp marks them for SEP-2577"
)]
impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.surface_changed.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.surface_changed.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.changes.send(&self.server, Kind::Updated(params.uri));
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            super::relay::client_capabilities(),
            Implementation::new("toolsmith-bridge", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let params = serde_json::to_value(params)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let answer = self
            .relay
            .ask(ClientRequest::Sampling, params, &context.extensions)
            .await;
        answer_as("sampling/createMessage", answer)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let params = serde_json::to_value(request)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        let answer = self
            .relay
            .ask(ClientRequest::Elicitation, params, &context.extensions)
            .await;
        answer_as("elicitation/create", answer)
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let answer = self.relay.list_roots(&context.extensions).await;
        answer_as("roots/list", answer)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.relay
            .progress(
                &params.progress_token,
                params.progress,
                params.total,
                params.message,
            )
            .await;
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| {
                v.as_str()
                    .and_then(|name| toolsmith_core::LogLevel::parse(name).ok())
            })
            .unwrap_or(toolsmith_core::LogLevel::Info);
        self.relay.log(level, params.logger, params.data).await;
    }
}

/// The task: connect, serve, reconnect — until the bridge is dropped.
pub(crate) async fn run(
    upstream: Arc<Upstream>,
    registry: Arc<ToolRegistry>,
    launcher: Arc<Launcher>,
) {
    let mut failures = 0u32;
    loop {
        upstream.lock().state = ServerState::Connecting;
        match connect(&upstream, &launcher).await {
            Ok(service) => {
                failures = 0;
                upstream.lock().connections += 1;
                let reason = serve(&upstream, service, &registry, &launcher).await;
                upstream.subscribed.disconnected().await;
                registry.unregister_mcp_server(&upstream.config.name);
                upstream
                    .surface
                    .clear(&upstream.config.name, &upstream.changes);
                upstream.set_down(reason);
            }
            Err(e) => {
                failures += 1;
                upstream.set_down(e);
            }
        }
        if failures >= MAX_ATTEMPTS {
            let note = format!(" (gave up after {MAX_ATTEMPTS} attempts; retried on demand)");
            if let Some(error) = upstream.lock().last_error.as_mut() {
                error.push_str(&note);
            }
            upstream.retry_now.notified().await;
            failures = 0;
            continue;
        }
        let backoff = FIRST_BACKOFF
            .saturating_mul(1 << failures.min(6))
            .min(MAX_BACKOFF);
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = upstream.retry_now.notified() => {}
        }
    }
}

/// The program to start: for a server registered at run time, the allowed program its command
/// resolves to (checked at every launch, so a narrowed allowlist takes effect); the
/// configuration file's command as written.
fn program(upstream: &Upstream, launcher: &Launcher) -> Result<std::path::PathBuf, String> {
    match &upstream.origin {
        Origin::Config => Ok(upstream.config.command.clone().into()),
        Origin::Registered { .. } => launcher.launch.check(&upstream.config.command),
    }
}

/// `values` (the env, or the headers) with their Config Center references read now, from the
/// Config Center of whoever registered the server; `what` names them in an error. Each value a
/// reference gave is kept in `upstream.resolved` for the server's answers to be scrubbed of.
async fn resolve(
    upstream: &Upstream,
    launcher: &Launcher,
    values: &BTreeMap<String, String>,
    what: &str,
) -> Result<Vec<(String, String)>, String> {
    let needs_config = values
        .values()
        .any(|v| env_references(v).is_ok_and(|r| !r.is_empty()));
    let owner_config = if needs_config {
        Some(
            launcher
                .config
                .owner(upstream.origin.owner())
                .await
                .map_err(|e| format!("cannot read the Config Center: {e}"))?,
        )
    } else {
        None
    };
    if let Some(oc) = &owner_config {
        let mut resolved = upstream
            .resolved
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for value in values.values() {
            let keys = env_references(value).unwrap_or_default();
            resolved.extend(keys.into_iter().filter_map(|key| oc.store_value(key)));
        }
    }
    values
        .iter()
        .map(|(name, value)| {
            let resolved = match &owner_config {
                Some(oc) => resolve_env(value, |key| oc.store_value(key)),
                None => Ok(value.clone()),
            };
            resolved
                .map(|v| (name.clone(), v))
                .map_err(|why| format!("{what} {name}: {why}"))
        })
        .collect()
}

/// Reaches the server and completes the MCP handshake.
async fn connect(
    upstream: &Upstream,
    launcher: &Launcher,
) -> Result<RunningService<RoleClient, Handler>, String> {
    let handler = Handler {
        tools_changed: upstream.tools_changed.clone(),
        surface_changed: upstream.surface_changed.clone(),
        changes: upstream.changes.clone(),
        server: upstream.config.name.clone(),
        relay: Arc::new(Relay::new(
            upstream.config.name.clone(),
            launcher.asks.clone(),
        )),
    };
    upstream
        .resolved
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    upstream.ended.take();
    let mut stderr_reader = None;
    let serving = match upstream.config.transport {
        Transport::Stdio => {
            let (transport, reader) = start_program(upstream, launcher).await?;
            stderr_reader = reader;
            tokio::time::timeout(CONNECT_TIMEOUT, handler.serve(transport)).await
        }
        Transport::StreamableHttp => {
            let transport = http_transport(upstream, launcher).await?;
            tokio::time::timeout(CONNECT_TIMEOUT, handler.serve(transport)).await
        }
        Transport::Sse => {
            let transport = sse_transport(upstream, launcher).await?;
            tokio::time::timeout(CONNECT_TIMEOUT, handler.serve(transport)).await
        }
    };
    let error = match serving {
        Ok(Ok(service)) => return Ok(service),
        Ok(Err(e)) => match upstream.ended.take() {
            Some(why) => format!("the MCP handshake failed: {why}"),
            None => format!("the MCP handshake failed: {e}"),
        },
        Err(_) => format!(
            "the MCP handshake did not finish within {} s",
            CONNECT_TIMEOUT.as_secs()
        ),
    };
    Err(match stderr_reader {
        Some(reader) => {
            // The program is being killed (its transport is gone): what it said last is
            // usually why (a missing module, a bad flag, a refused key).
            let ended = tokio::time::timeout(STDERR_DRAIN, reader).await.is_ok();
            format!("{error}{}", upstream.stderr_note(ended))
        }
        None => error,
    })
}

/// The streamable HTTP transport to the server's URL, on a client the egress guard built: the
/// URL checked now, the host checked by the guard's DNS hook at every connection, redirects
/// only within the origin, answers capped at the guard's response limit. Headers and the
/// bearer token have their Config Center references read now.
async fn http_transport(
    upstream: &Upstream,
    launcher: &Launcher,
) -> Result<StreamableHttpClientTransport<http::SessionAware>, String> {
    let (origin, headers, token) = http_client(upstream, launcher).await?;
    let max = launcher.egress.policy().max_response_bytes;
    let mut transport_config = StreamableHttpClientTransportConfig::with_uri(origin.url.as_str())
        .custom_headers(
            headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
        .max_json_response_size(max)
        .max_sse_event_size(max)
        // A restarted upstream has forgotten the session: end the connection, so the task
        // reconnects and re-lists (a silent re-initialization would keep a stale listing).
        .reinit_on_expired_session(false);
    if let Some(token) = token {
        transport_config = transport_config.auth_header(token);
    }
    Ok(StreamableHttpClientTransport::with_client(
        http::SessionAware(origin.client),
        transport_config,
    ))
}

/// The legacy HTTP+SSE transport to the server's URL, on a client the egress guard built as
/// for [`http_transport`]; connected once the stream has named its endpoint (within the
/// server's call timeout, at most [`CONNECT_TIMEOUT`]).
async fn sse_transport(
    upstream: &Upstream,
    launcher: &Launcher,
) -> Result<sse::SseTransport, String> {
    let (origin, mut headers, token) = http_client(upstream, launcher).await?;
    if let Some(token) = token {
        let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| "the bearer token is not a valid header value".to_owned())?;
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    let settings = sse::Settings {
        client: origin.client,
        url: origin.url,
        headers,
        max_event_bytes: launcher.egress.policy().max_response_bytes,
        wait: upstream.config.call_timeout().min(CONNECT_TIMEOUT),
    };
    sse::connect(settings, upstream.ended.clone()).await
}

/// The egress guard's client for an HTTP server's URL (checked now), its headers and its
/// bearer token with their Config Center references read now.
async fn http_client(
    upstream: &Upstream,
    launcher: &Launcher,
) -> Result<
    (
        toolsmith_egress::OriginClient,
        reqwest::header::HeaderMap,
        Option<String>,
    ),
    String,
> {
    let config = &upstream.config;
    let url = config.url.as_deref().unwrap_or_default();
    let origin = launcher
        .egress
        .origin_client(url)
        .map_err(|e| format!("the egress guard refused '{url}': {e}"))?;
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in resolve(upstream, launcher, &config.headers, "header").await? {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header '{name}' is not a valid header name"))?;
        let value = reqwest::header::HeaderValue::from_str(&value)
            .map_err(|_| format!("header '{name}': its value is not a valid header value"))?;
        headers.insert(name, value);
    }
    let mut token = None;
    if let Some(reference) = &config.bearer_token {
        let reference = BTreeMap::from([("bearer_token".to_owned(), reference.clone())]);
        let resolved = resolve(upstream, launcher, &reference, "the").await?;
        token = resolved.into_iter().next().map(|(_, token)| token);
    }
    Ok((origin, headers, token))
}

/// Starts the server's program with its environment; the stdio transport to it.
async fn start_program(
    upstream: &Upstream,
    launcher: &Launcher,
) -> Result<(TokioChildProcess, Option<tokio::task::JoinHandle<()>>), String> {
    let config = &upstream.config;
    let program = program(upstream, launcher)?;
    let registered = matches!(upstream.origin, Origin::Registered { .. });
    if registered {
        // Checked again at every launch, like the program: a row stored before the rule, or
        // a narrowed `mcp_allowed_env`, starts nothing.
        for name in config.env.keys() {
            launcher.launch.check_env(name)?;
        }
    }
    let env = resolve(upstream, launcher, &config.env, "env").await?;
    let mut command = tokio::process::Command::new(&program);
    command.args(&config.args).env_clear();
    if registered {
        // Not the server's working directory (often where its data directory is, or a folder
        // a tool can write to: Python puts it first on `sys.path` for `-m`): `/`, which no
        // Toolsmith tool writes to. Registered servers have no `cwd` of their own.
        command.current_dir("/");
    }
    for name in ["PATH", "HOME", "LANG"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command.envs(env).kill_on_drop(true);
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start '{}': {e}", config.command))?;
    upstream
        .stderr_tail
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    let reader = stderr.map(|stderr| {
        let name = config.name.clone();
        let tail = upstream.stderr_tail.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(server = %name, "{line}");
                let kept: String = line.chars().take(STDERR_LINE_CHARS).collect();
                let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
                if tail.len() == STDERR_TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(kept);
            }
        })
    });
    Ok((transport, reader))
}

/// Lists and registers the tools, then follows the connection until it ends; the reason. What
/// the transport said of its own end (the legacy SSE one says why its stream ended) is the
/// cause; a re-list that failed after it is only its consequence.
async fn serve(
    upstream: &Upstream,
    service: RunningService<RoleClient, Handler>,
    registry: &ToolRegistry,
    launcher: &Launcher,
) -> String {
    let reason = follow(upstream, service, registry, launcher).await;
    match upstream.ended.take() {
        Some(why) => format!("the connection ended: {why}"),
        None => reason,
    }
}

async fn follow(
    upstream: &Upstream,
    service: RunningService<RoleClient, Handler>,
    registry: &ToolRegistry,
    launcher: &Launcher,
) -> String {
    let threshold = launcher.deferred_threshold;
    let peer = service.peer().clone();
    let relay = service.service().relay.clone();
    let link = (&peer, &relay);
    let mut listed = None;
    if let Err(e) = relist(upstream, link, registry, threshold, &mut listed).await {
        return e;
    }
    // The resources Toolsmith's callers subscribed to before (a reconnect, a changed
    // registration) are subscribed to on this connection, which takes new subscriptions from
    // before its resources are listed.
    upstream
        .subscribed
        .connected(&peer, upstream.config.call_timeout())
        .await;
    refresh_surface(upstream, &peer).await;
    let ended = service.waiting();
    tokio::pin!(ended);
    let mut health = tokio::time::interval(HEALTH_INTERVAL);
    health.tick().await;
    loop {
        tokio::select! {
            reason = &mut ended => {
                return match reason {
                    Ok(reason) => format!("the connection ended: {reason:?}"),
                    Err(e) => format!("the connection task failed: {e}"),
                };
            }
            () = upstream.tools_changed.notified() => {
                if let Err(e) = relist(upstream, link, registry, threshold, &mut listed).await {
                    return e;
                }
            }
            () = upstream.surface_changed.notified() => refresh_surface(upstream, &peer).await,
            _ = health.tick() => {
                if let Err(e) = relist(upstream, link, registry, threshold, &mut listed).await {
                    return format!("health check failed: {e}");
                }
                refresh_surface(upstream, &peer).await;
            }
        }
    }
}

/// Lists what the upstream offers besides its tools (`surface.rs`).
async fn refresh_surface(upstream: &Upstream, peer: &Peer<RoleClient>) {
    surface::refresh(
        &upstream.surface,
        surface::Listing {
            server: &upstream.config.name,
            peer,
            timeout: upstream.config.call_timeout(),
            scrubber: upstream.surface_scrubber(),
            changes: &upstream.changes,
        },
    )
    .await;
}

/// Lists the upstream's tools and makes the registry hold exactly the bridged ones. `listed`
/// is what this connection registered last: an unchanged listing changes nothing (so a health
/// check does not make every client re-list).
async fn relist(
    upstream: &Upstream,
    (peer, relay): (&Peer<RoleClient>, &Arc<Relay>),
    registry: &ToolRegistry,
    deferred_threshold: usize,
    listed: &mut Option<String>,
) -> Result<(), String> {
    let config = &upstream.config;
    let tools = tokio::time::timeout(config.call_timeout(), peer.list_all_tools())
        .await
        .map_err(|_| "tools/list did not answer in time".to_owned())?
        .map_err(|e| format!("tools/list failed: {e}"))?;
    let fingerprint = serde_json::to_string(&tools).unwrap_or_default();
    if listed.as_deref() == Some(fingerprint.as_str()) {
        upstream.lock().last_check = Some(Utc::now());
        return Ok(());
    }
    *listed = Some(fingerprint);
    registry.unregister_mcp_server(&config.name);
    let prefix = config.prefix();
    let mut bridged = Vec::new();
    let mut skipped = Vec::new();
    let offered: Vec<_> = tools.iter().filter(|t| config.bridges(&t.name)).collect();
    let link = tool::Link {
        server: config.name.clone(),
        peer: peer.clone(),
        timeout: config.call_timeout(),
        counters: upstream.counters.clone(),
        recheck: upstream.tools_changed.clone(),
        scrubber: upstream.scrubber()?,
        relay: relay.clone(),
    };
    let deferred = config
        .deferred
        .unwrap_or(offered.len() > deferred_threshold);
    for upstream_tool in offered {
        let registered = tool::registered(&prefix, upstream_tool, &link)
            .map(|t| t.with_deferred(deferred))
            .and_then(|t| {
                let name = t.name().to_owned();
                registry
                    .register_builtin(t)
                    .map(|()| name)
                    .map_err(|e| format!("the name is taken ({e})"))
            });
        match registered {
            Ok(name) => bridged.push(name),
            Err(why) => {
                tracing::warn!(server = %config.name, tool = %upstream_tool.name, "not bridged: {why}");
                // Escaped: the name is the upstream's (a newline, markup).
                skipped.push(format!("{}: {why}", upstream_tool.name.escape_debug()));
            }
        }
    }
    let mut status = upstream.lock();
    status.state = ServerState::Connected;
    status.last_error = None;
    status.tools = bridged;
    status.skipped = skipped;
    status.deferred = deferred;
    status.last_check = Some(Utc::now());
    Ok(())
}
