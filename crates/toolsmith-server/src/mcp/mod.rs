//! The MCP server: the interface through which models use, discover and grow their tools.
//!
//! Built on the official Rust SDK (`rmcp`, pinned), served two ways:
//! - [`router`] — streamable HTTP at `/mcp`, an axum `Router` the app merges. rmcp's legacy
//!   session mode stays on (2025-11-25 clients get `Mcp-Session-Id` sessions and
//!   `notifications/tools/list_changed` pushed on the session's GET stream), and requests that
//!   negotiate 2026-07-28 are served statelessly, their list changes delivered through
//!   `subscriptions/listen`. The `Host` allowlist (DNS-rebinding protection, from
//!   [`ServerSettings::allowed_hosts`](crate::ServerSettings::allowed_hosts)) and the refusal of
//!   requests sent by other origins' pages are `crate::edge`'s, the same check as REST's (rmcp's
//!   own copy of the Host check is off).
//! - [`serve_stdio`] — one session over stdin/stdout (`toolsmith mcp`); logs go to stderr only.
//!
//! What a caller sees (`tools/list`), in this order:
//! - the control plane ([`control_plane`]): `create_tool`, `list_custom_tools`,
//!   `get_custom_tool`, `update_custom_tool`, `delete_custom_tool`, `toggle_custom_tool`,
//!   `run_js_ephemeral` — every call acts as `Actor::llm`, with all the lifecycle rules;
//! - the discovery meta-tools ([`meta_tools`]): `search_tools`, `get_tool_help`, `use_tool`,
//!   `batch_use_tool`;
//! - the registry's tools for the caller: built-ins, then the caller's active custom tools, each
//!   with its own `inputSchema`;
//! - with `--compat dynamic-mcp`, the `dynamic.tool.*` names of the dynamic-mcp control plane
//!   ([`compat`]).
//!
//! [`handler`] holds the rmcp `ServerHandler`; [`notify`] delivers list changes (exactly once
//! per change of a session's visible catalogue, whatever caused it); [`catalog`] builds and
//! caches the tool list and turns results into MCP results.
//!
//! Identity: over HTTP the [`Identity`] extractor gives each request its caller (the token's
//! user and agent, or for a token bound to no agent the `X-Toolsmith-Agent` header; user
//! `default` without auth; in an organisation with `X-Toolsmith-Organization`), and the handler
//! rmcp creates acts for it. Over stdio the caller is the CLI's `--user` (`default`), in the
//! organisation `--organization` names if given ([`serve_stdio`]).

mod approval;
mod body;
mod catalog;
mod client;
mod compat;
mod control_plane;
mod handler;
mod hints;
mod listens;
mod manage;
mod meta_tools;
mod notify;
mod prompts;
mod resources;
mod search_index;
mod sessions;
mod tasks;
mod tasks_2025;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub(crate) use compat::probes as compat_probes;
pub use compat::profile::CompatProfile;
pub use handler::ToolsmithMcp;
pub use sessions::{SessionError, SessionLimits, SessionStats};

/// The reader of a `POST /mcp` body, for the fuzz targets (`fuzz/`, docs/fuzzing.md): not an
/// API, nothing else calls it.
#[doc(hidden)]
pub mod fuzzing {
    use axum::body::{Body, Bytes};
    use axum::response::Response;
    use serde_json::Value;

    /// [`super::body::read`] with `limit` (the server's is at least 16 MiB; a fuzz target
    /// gives a small one to reach the refusal); a refusal as its answer.
    pub async fn read(body: Body, limit: usize) -> Result<Bytes, Response> {
        super::body::read(body, limit)
            .await
            .map_err(super::body::Refused::into_response)
    }

    /// The JSON-RPC method the body calls, as the listen streams are counted by.
    pub fn method(body: &[u8]) -> Option<String> {
        super::body::method(body)
    }

    /// The request id a refusal carries.
    pub fn request_id(body: &[u8]) -> Value {
        super::body::request_id(body)
    }
}

use crate::AppState;
use crate::auth::Identity;

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// What every MCP session of one server shares.
pub(crate) struct McpShared {
    pub state: AppState,
    pub catalog: catalog::CatalogCache,
    /// The approval rounds opened with 2026-07-28 clients (stateless requests share them).
    pub tickets: approval::ApprovalTickets,
    pub search: search_index::SearchCache,
    /// The compat profiles' uptime and execution counters (`system.health`, guard metrics).
    pub profile: compat::profile::ProfileState,
}

impl McpShared {
    pub(crate) fn new(state: AppState) -> Arc<McpShared> {
        Arc::new(McpShared {
            catalog: catalog::CatalogCache::new(state.config.compat_dynamic_mcp)
                .with_surface(compat::profile::Surface::of(&state.config)),
            tickets: approval::ApprovalTickets::default(),
            search: search_index::SearchCache::new(state.config.compat_dynamic_mcp)
                .with_surface(compat::profile::Surface::of(&state.config)),
            profile: compat::profile::ProfileState::default(),
            state,
        })
    }
}

struct McpHttp {
    shared: Arc<McpShared>,
    sessions: Arc<sessions::SessionBook>,
    listens: Arc<listens::ListenBook>,
    /// The body limit of `/mcp` ([`body::limit`]).
    body_limit: usize,
    config: StreamableHttpServerConfig,
}

/// Streamable HTTP at `/mcp` (POST, GET, DELETE), ready to merge into the app's router.
///
/// Open SSE streams (a session's GET stream, a `subscriptions/listen`) never end on their own;
/// use [`router_with_shutdown`] and cancel its token on shutdown so they close.
pub fn router(state: AppState) -> axum::Router {
    router_with_shutdown(state, CancellationToken::new())
}

/// [`router`], whose sessions and streams all end when `shutdown` is cancelled.
pub fn router_with_shutdown(state: AppState, shutdown: CancellationToken) -> axum::Router {
    let edge = crate::edge::EdgeRules::new(&state.config.allowed_hosts);
    routes_with_shutdown(state, shutdown).layer(axum::middleware::from_fn_with_state(
        edge,
        crate::edge::guard,
    ))
}

/// [`router_with_shutdown`] without the edge's checks, for the app, which puts them around
/// every route at once.
pub(crate) fn routes_with_shutdown(state: AppState, shutdown: CancellationToken) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(true)
        // `crate::edge` checks `Host` on every route, this one included.
        .disable_allowed_hosts()
        // 2026-07-28 requests are stateless: a call whose whole answer is one message gets it
        // as `application/json` rather than a one-event SSE stream (a stream is still used
        // when the handler sends something first).
        .with_json_response(true)
        .with_max_request_body_bytes(body::limit(state.config.body_limit_bytes))
        .with_cancellation_token(shutdown.clone());
    if state.config.compat_dynamic_mcp {
        // dynamic-mcp's process uptime counts from here.
        compat::probes::started();
    }
    let sessions = Arc::new(sessions::SessionBook::new(
        state.config.mcp_sessions,
        state.mcp_sessions.clone(),
    ));
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(sessions::reap(Arc::downgrade(&sessions), shutdown));
    }
    let listens = listens::ListenBook::new(
        &state.config.mcp_sessions,
        state.config.max_connections,
        state.mcp_sessions.clone(),
    );
    let http = Arc::new(McpHttp {
        body_limit: body::limit(state.config.body_limit_bytes),
        shared: McpShared::new(state),
        sessions,
        listens,
        config,
    });
    axum::Router::new()
        .route(MCP_PATH, any(serve_http))
        .with_state(http)
}

/// One HTTP request to `/mcp`. The handler rmcp creates for it (for a new session, or for one
/// stateless request) acts for the identity of this request.
///
/// A `POST`'s body is read here first ([`body`]): one over the limit is answered as a JSON-RPC
/// error without rmcp, and a `subscriptions/listen` takes a place in the [`listens`] book
/// (held by the response, so until its stream ends) or is refused naming the limit.
async fn serve_http(
    State(http): State<Arc<McpHttp>>,
    identity: Identity,
    request: Request,
) -> Response {
    let mut listen_place = None;
    let mut initializing = false;
    let request = if request.method() == axum::http::Method::POST {
        let (mut parts, body) = request.into_parts();
        let mut bytes = match body::read(body, http.body_limit).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused.into_response(),
        };
        let method = body::method(&bytes);
        if method.as_deref() == Some("subscriptions/listen") {
            // Limits count per person: in an organisation, one member cannot crowd out others.
            match http.listens.open(identity.person()) {
                Ok(place) => listen_place = Some(place),
                Err(refused) => return refused.into_response(body::request_id(&bytes)),
            }
        }
        // 2025-11-25's tasks (tasks_2025.rs): its methods renamed for the handler, and the
        // `initialize` answer declaring them.
        if !http.shared.state.config.compat_dynamic_mcp {
            initializing = method.as_deref() == Some("initialize");
            let version = parts
                .headers
                .get("mcp-protocol-version")
                .and_then(|v| v.to_str().ok());
            if tasks_2025::takes(version)
                && let Some(renamed) = tasks_2025::rename(method.as_deref(), &bytes)
            {
                parts.headers.remove(axum::http::header::CONTENT_LENGTH);
                bytes = renamed.into();
            }
        }
        Request::from_parts(parts, axum::body::Body::from(bytes))
    } else {
        request
    };
    let shared = http.shared.clone();
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok());
    if let Some(id) = session
        && !http
            .sessions
            .started_as(id, identity.person(), &identity.user_id)
    {
        // A session acts in the scope it was started in; this request is another person's or
        // another scope's (an organisation named, or no longer named).
        return session_not_found();
    }
    let gate = Arc::new(sessions::Gate::new(
        http.sessions.clone(),
        identity.person(),
        &identity.user_id,
    ));
    let service = StreamableHttpService::new(
        move || Ok(ToolsmithMcp::with_shared(shared.clone(), identity.clone())),
        gate.clone(),
        http.config.clone(),
    );
    let is_delete = request.method() == axum::http::Method::DELETE;
    if is_delete
        && let Some(id) = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        && !http.sessions.knows(id).await
    {
        // rmcp closes an unknown session "successfully"; the spec's answer for a session the
        // server does not have is 404 (it may live on another instance, or be gone).
        return session_not_found();
    }
    let mut response = service
        .handle(request)
        .await
        .map(axum::body::Body::new)
        .into_response();
    if gate.refused.load(std::sync::atomic::Ordering::SeqCst) {
        // rmcp answers a failed session creation with a plain 500; a limit is a 503.
        return session_refused(response).await;
    }
    if initializing && response.status() == StatusCode::OK {
        response = declare_tasks(response).await;
    }
    if is_delete && response.status() == StatusCode::ACCEPTED {
        // rmcp answers a session DELETE with 202; the Python SDK expects 200 or 204 (and logs
        // "Session termination failed: 202"). The session is closed either way: say so plainly.
        *response.status_mut() = StatusCode::NO_CONTENT;
        *response.body_mut() = axum::body::Body::empty();
    }
    match listen_place {
        Some(place) => response.map(|body| {
            use http_body_util::BodyExt as _;
            axum::body::Body::new(body.map_frame(move |frame| {
                let _place = &place;
                frame
            }))
        }),
        None => response,
    }
}

/// An `initialize` answer with 2025-11-25's `capabilities.tasks` added when its protocol takes
/// them ([`tasks_2025::declare_tasks_in_body`]); as it was otherwise.
async fn declare_tasks(response: Response) -> Response {
    /// An `initialize` answer is small; a larger body is passed on as it is.
    const MAX_INITIALIZE_BYTES: usize = 1024 * 1024;
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_INITIALIZE_BYTES).await else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the initialize answer was too large",
        )
            .into_response();
    };
    match tasks_2025::declare_tasks_in_body(&bytes) {
        Some(declared) => {
            parts.headers.remove(axum::http::header::CONTENT_LENGTH);
            Response::from_parts(parts, axum::body::Body::from(declared))
        }
        None => Response::from_parts(parts, axum::body::Body::from(bytes)),
    }
}

/// The 404 for a session this instance does not have, as rmcp answers a POST or GET for one.
fn session_not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        "Not Found: Session not found (it ended, or another server instance holds it); \
         initialize a new session",
    )
        .into_response()
}

/// The 503 for an `initialize` refused by a session limit: rmcp's message (which names the
/// limit and the fix) as a JSON-RPC error, with `Retry-After`.
async fn session_refused(response: Response) -> Response {
    let body = axum::body::to_bytes(response.into_body(), 64 * 1024)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&body);
    let message = text
        .strip_prefix("Encounter an error when create session: ")
        .unwrap_or(&text)
        .to_owned();
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        axum::Json(serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32000, "message": message},
        })),
    )
        .into_response();
    response.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("5"),
    );
    response
}

/// Serves one MCP session over stdin/stdout until the client closes it. Acts as `user` (the
/// CLI's `--user`, `default` unless given), with every scope, as the CLI does; with
/// `organization` (`--organization`, a name or id), in that organisation, of which `user` must
/// be a member, with the scopes of the role (as `X-Toolsmith-Organization` over HTTP).
/// Logs must go to stderr: stdout carries the protocol.
pub async fn serve_stdio(
    state: AppState,
    user: &str,
    organization: Option<&str>,
) -> anyhow::Result<()> {
    // Read-only mode holds here as over HTTP: the session's writes are refused.
    let mut identity = Identity::local_default();
    user.clone_into(&mut identity.user_id);
    identity.read_only = state.config.read_only;
    if toolsmith_core::organization::is_org_id(user) || user == "me" {
        anyhow::bail!(
            "--user '{user}' is an organisation's id or the reserved 'me': a person never is an \
             organisation; give your own user and --organization"
        );
    }
    if let Some(org_ref) = organization.filter(|o| !o.is_empty() && *o != "me") {
        let (org, role) = state
            .service
            .organization_of_member(user, org_ref)
            .await
            .map_err(|e| anyhow::anyhow!("--organization: {e}"))?;
        identity.enter(org, role);
    }
    // stdin and stdout pass through the edge of 2025-11-25's tasks (tasks_2025.rs).
    let (input, output, written) = tasks_2025::stdio(state.config.compat_dynamic_mcp);
    let server = ToolsmithMcp::new(state, identity);
    let running = server
        .serve((input, output))
        .await
        .map_err(|e| anyhow::anyhow!("MCP stdio session failed to start: {e}"))?;
    let ended = running.waiting().await;
    // The session's last answers are on their way to stdout (bounded: the copy ends when the
    // session's side closes).
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), written).await;
    ended.map_err(|e| anyhow::anyhow!("MCP stdio session ended with an error: {e}"))?;
    Ok(())
}
