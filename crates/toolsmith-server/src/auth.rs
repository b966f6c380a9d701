//! Who is calling, and what they may do.
//!
//! [`authenticate`] is a middleware on the whole router (REST and MCP alike): it resolves the
//! caller from `Authorization: Bearer …` and puts an [`Identity`] into the request extensions,
//! where the [`Identity`] extractor finds it.
//!
//! - Without auth configured (no API tokens in the store, no admin token), every request acts
//!   as user `default` with every scope. `toolsmith serve` only binds loopback addresses then.
//! - Once auth is configured, a request without a valid token gets 401 (health probes and the
//!   web UI's static files excepted: they hold no data).
//! - When the store cannot be read to decide (the database is down), no one is let in: the
//!   answer is 503 with `Retry-After` (500 for any other store failure), never a 401 that
//!   would send a client looking for a token it does not need.
//!   API tokens are stored as SHA-256 hashes and carry scopes (`tools:read`, `tools:write`,
//!   `tools:execute`, `admin`) and a user id; every query is scoped to that user.
//! - The admin token (spec 002) is compared in constant time and grants every scope as user
//!   `default`; when it is set, every control-plane write needs the `admin` scope.
//! - Read-only mode refuses every write, whoever asks; reads and executions keep working.
//! - What was read of the tokens is kept for a second ([`cache`]): a token created or revoked
//!   by `toolsmith token` while the server runs takes effect within that time.

pub mod cache;
pub mod oauth;

use std::convert::Infallible;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use sha2::{Digest, Sha256};
use toolsmith_core::ApiTokenRecord;
use toolsmith_service::ServiceError;

use crate::AppState;

/// A permission a token can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    ToolsRead,
    ToolsWrite,
    ToolsExecute,
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 4] = [
        Scope::ToolsRead,
        Scope::ToolsWrite,
        Scope::ToolsExecute,
        Scope::Admin,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::ToolsRead => "tools:read",
            Scope::ToolsWrite => "tools:write",
            Scope::ToolsExecute => "tools:execute",
            Scope::Admin => "admin",
        }
    }

    /// Parses `tools:read` etc.; the error names the valid scopes.
    pub fn parse(text: &str) -> Result<Scope, String> {
        Scope::ALL
            .into_iter()
            .find(|s| s.as_str() == text)
            .ok_or_else(|| {
                format!("unknown scope '{text}' (expected: tools:read, tools:write, tools:execute, admin)")
            })
    }

    fn is_write(self) -> bool {
        matches!(self, Scope::ToolsWrite | Scope::Admin)
    }
}

/// The caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub user_id: String,
    pub agent_id: Option<String>,
    /// `agent_id` came from the `X-Toolsmith-Agent` header (a token bound to no agent, or no
    /// auth), not from the token: it may narrow what the user may do, never widen it.
    pub agent_from_header: bool,
    pub scopes: Vec<Scope>,
    /// Set in read-only mode: writes are refused whatever the scopes say.
    pub read_only: bool,
}

impl Identity {
    /// The caller when no auth is configured: user `default`, every scope.
    pub fn local_default() -> Identity {
        Identity {
            user_id: "default".to_owned(),
            agent_id: None,
            agent_from_header: false,
            scopes: Scope::ALL.to_vec(),
            read_only: false,
        }
    }

    /// Whether the caller may do what `scope` covers (`admin` covers everything).
    pub fn has(&self, scope: Scope) -> bool {
        self.denial(scope).is_none()
    }

    /// Why the caller may not do what `scope` covers, or `None` if it may.
    pub fn denial(&self, scope: Scope) -> Option<String> {
        if self.read_only && scope.is_write() {
            return Some("the server is in read-only mode: writes are refused".to_owned());
        }
        if self.scopes.contains(&scope) || self.scopes.contains(&Scope::Admin) {
            return None;
        }
        Some(format!(
            "this operation needs the '{}' scope",
            scope.as_str()
        ))
    }

    /// Whether a refusal of `scope` is for want of that scope (a token granting it would
    /// pass), not read-only mode (which refuses whatever the token says).
    pub fn lacks_scope(&self, scope: Scope) -> bool {
        let refused_by_mode = self.read_only && scope.is_write();
        let held = self.scopes.contains(&scope) || self.scopes.contains(&Scope::Admin);
        !refused_by_mode && !held
    }
}

impl Identity {
    /// The context of a tool call made by this caller (user, agent, and whether the caller chose
    /// the agent itself).
    pub fn tool_context(&self) -> toolsmith_core::ToolContext {
        let mut ctx = toolsmith_core::ToolContext::new(self.user_id.clone());
        ctx.agent_id = self.agent_id.clone();
        ctx.agent_chosen_by_caller = self.agent_from_header;
        ctx.admin = self.is_admin_person();
        // A REST call (the web UI's too) has no MCP client to ask; the MCP handler puts its
        // own client on the contexts of its calls (mcp/client.rs).
        ctx.client = Some(toolsmith_core::Client::absent(toolsmith_core::Door::Rest));
        ctx
    }

    /// An admin acting as a person (`admin` scope, no agent): not bound by MCP grants.
    pub fn is_admin_person(&self) -> bool {
        self.has(Scope::Admin) && self.agent_id.is_none()
    }

    /// What this caller may do beyond running code once or dry-running a definition: read the
    /// Config Center's secrets (`admin`, not as an agent) and create tools as a person
    /// (`tools:write`, not as an agent).
    pub fn run_rights(&self) -> toolsmith_service::RunRights {
        let person = self.agent_id.is_none();
        toolsmith_service::RunRights {
            read_secrets: person && self.has(Scope::Admin),
            create_tools: person && self.has(Scope::ToolsWrite),
        }
    }

    /// Why the caller may not decide approvals, or `None` if it may: deciding needs
    /// `tools:write` (so never in read-only mode) and a caller not acting as an agent — an
    /// agent never approves its own calls; a person must. The same rule for every door (REST,
    /// the MCP client's approval form).
    pub fn approval_denial(&self) -> Option<String> {
        if let Some(why) = self.denial(Scope::ToolsWrite) {
            return Some(why);
        }
        self.agent_id.as_ref().map(|agent| {
            format!(
                "the caller acts as agent '{agent}'; an agent cannot decide approvals — a person must"
            )
        })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Identity {
    type Rejection = Infallible;

    /// The identity [`authenticate`] resolved; a router without that middleware (unit tests of
    /// single routes) acts as the local default user.
    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let mut identity = parts
            .extensions
            .get::<Identity>()
            .cloned()
            .unwrap_or_else(Identity::local_default);
        // A token bound to an agent keeps it: the header names the agent only for tokens (or
        // local use) that do not, so it can never escape an agent's policy. An agent named this
        // way only narrows what the user may do (`agent_from_header`).
        if identity.agent_id.is_none()
            && let Some(agent) = parts
                .headers
                .get("x-toolsmith-agent")
                .and_then(|v| v.to_str().ok())
                .filter(|v| !v.is_empty() && v.len() <= 128)
        {
            identity.agent_id = Some(agent.to_owned());
            identity.agent_from_header = true;
        }
        Ok(identity)
    }
}

/// Whether callers must authenticate: true once API tokens exist or an admin token is set.
/// `toolsmith serve` refuses to bind a non-loopback address while this is false. When the
/// tokens cannot be read it answers true (fail closed).
pub async fn auth_configured(state: &AppState) -> bool {
    auth_required(state).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "could not read API tokens; treating auth as configured");
        true
    })
}

/// [`auth_configured`], or the store's error when whether tokens exist cannot be known.
async fn auth_required(state: &AppState) -> Result<bool, ServiceError> {
    if state.config.admin_token.is_some() || state.oauth.is_some() {
        return Ok(true);
    }
    let now = Instant::now();
    if let Some(exist) = state.tokens.tokens_exist(now) {
        return Ok(exist);
    }
    let tokens = state.service.list_tokens().await?;
    state.tokens.set_tokens_exist(now, !tokens.is_empty());
    Ok(!tokens.is_empty())
}

/// Resolves the caller of every request (see the module docs).
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let bearer = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().map(str::trim).unwrap_or(""));
    let identity = match bearer {
        None => {
            let path = request.uri().path();
            let public = path == "/livez"
                || path == "/readyz"
                || path.starts_with(oauth::METADATA_PATH)
                || crate::rest::sign_in::PATHS.contains(&path)
                || crate::ui::is_public(path);
            // A store that cannot say whether tokens exist lets no one in, and says it is the
            // store (503, retry), not the caller (401).
            if public {
                Some(Identity::local_default())
            } else {
                match auth_required(&state).await {
                    Ok(false) => Some(Identity::local_default()),
                    Ok(true) => None,
                    Err(e) => return store_failure(e),
                }
            }
        }
        Some(value) => match value.strip_prefix("Bearer ").map(str::trim) {
            Some(token) if !token.is_empty() => {
                if let Some(verifier) = &state.oauth
                    && oauth::OAuthVerifier::looks_like_jwt(token)
                {
                    match verifier.verify(token).await {
                        Ok(identity) => Some(identity),
                        Err(oauth::Rejection::Invalid(why)) => {
                            if request.uri().path() == crate::mcp::MCP_PATH {
                                state.mcp_sessions.auth_denied.fetch_add(1, Relaxed);
                            }
                            return state.unauthorized(
                                request.uri().path(),
                                &format!("the token is not valid: {why}"),
                                Some(&why),
                            );
                        }
                        Err(oauth::Rejection::KeysUnavailable(why)) => {
                            tracing::warn!(error = %why, "cannot check an OAuth token: the issuer's keys are unavailable");
                            return crate::rest::error::ApiError::unavailable(
                                "unavailable",
                                "the identity provider's keys could not be fetched; try again shortly",
                                5,
                            )
                            .into_response();
                        }
                    }
                } else {
                    match resolve_token(&state, token).await {
                        Ok(found) => found,
                        Err(e) => return store_failure(e),
                    }
                }
            }
            _ => None,
        },
    };
    let mcp = request.uri().path() == crate::mcp::MCP_PATH;
    let Some(mut identity) = identity else {
        if mcp {
            state.mcp_sessions.auth_denied.fetch_add(1, Relaxed);
        }
        let message = match bearer {
            None => "authentication required: send Authorization: Bearer <token>",
            Some(_) => "the token is not valid",
        };
        return state.unauthorized(request.uri().path(), message, None);
    };
    if mcp && bearer.is_some() {
        state.mcp_sessions.auth_success.fetch_add(1, Relaxed);
    }
    identity.read_only = state.config.read_only;
    if state.config.admin_token.is_some() && !identity.scopes.contains(&Scope::Admin) {
        // With an admin token set, control-plane writes are the admin's alone.
        identity.scopes.retain(|s| *s != Scope::ToolsWrite);
    }
    request.extensions_mut().insert(identity);
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    if let Some(verifier) = &state.oauth {
        name_the_metadata(&mut response, verifier.settings(), &path);
    }
    response
}

/// Adds `resource_metadata` to an `insufficient_scope` challenge, so the client knows where
/// to ask for the scope.
fn name_the_metadata(response: &mut Response, settings: &oauth::OAuthSettings, path: &str) {
    let Some(challenge) = response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            v.starts_with("Bearer error=\"insufficient_scope\"") && !v.contains("resource_metadata")
        })
    else {
        return;
    };
    let value = format!(
        "{challenge}, resource_metadata=\"{}\"",
        settings.metadata_url(path)
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
}

async fn resolve_token(state: &AppState, token: &str) -> Result<Option<Identity>, ServiceError> {
    if let Some(admin) = &state.config.admin_token
        && constant_time_eq(admin.as_bytes(), token.as_bytes())
    {
        return Ok(Some(Identity::local_default()));
    }
    let hash = hash_token(token);
    let now = Instant::now();
    if let Some(cached) = state.tokens.get(&hash, now) {
        if let Some(id) = cached.touch {
            touch(state, id);
        }
        return Ok(Some(cached.identity));
    }
    let Some(record) = state.service.find_token(&hash).await? else {
        state.tokens.remove(&hash);
        return Ok(None);
    };
    let identity = Identity {
        user_id: record.user_id,
        agent_id: record.agent_id,
        agent_from_header: false,
        scopes: record
            .scopes
            .iter()
            .filter_map(|s| Scope::parse(s).ok())
            .collect(),
        read_only: false,
    };
    if state
        .tokens
        .insert(hash, record.id.clone(), identity.clone(), now)
    {
        touch(state, record.id);
    }
    Ok(Some(identity))
}

/// Records that the token `id` was used (in the background; a failure only loses the time).
fn touch(state: &AppState, id: String) {
    let service = state.service.clone();
    tokio::spawn(async move {
        if let Err(e) = service.touch_token(&id, Utc::now()).await {
            tracing::debug!(error = %e, "could not record token use");
        }
    });
}

impl AppState {
    /// 401 with the `WWW-Authenticate` challenge: `Bearer`, and with OAuth configured the
    /// metadata's URL and, for a token refused, `invalid_token` and why.
    fn unauthorized(&self, path: &str, message: &str, invalid: Option<&str>) -> Response {
        let mut response =
            crate::rest::error::ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
                .into_response();
        let challenge = match &self.oauth {
            Some(verifier) => HeaderValue::from_str(&oauth::challenge(
                verifier.settings(),
                path,
                invalid.map(oauth::Challenge::InvalidToken),
            ))
            .unwrap_or(HeaderValue::from_static("Bearer")),
            None => HeaderValue::from_static("Bearer"),
        };
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, challenge);
        response
    }
}

/// The caller could not be checked because the store failed: 503 with `Retry-After` when it is
/// unavailable (the database is down or full), 500 otherwise; never let in.
fn store_failure(e: ServiceError) -> Response {
    tracing::warn!(error = %e, "cannot check the caller: the store failed");
    crate::rest::error::ApiError::from(e).into_response()
}

/// Lowercase hex SHA-256 of a token: what the store keeps.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// A new API token for `user_id` (acting as `agent`, if given): the record to store and the
/// secret, shown once.
pub fn new_token(
    user_id: &str,
    name: &str,
    scopes: &[Scope],
    agent: Option<&str>,
) -> (ApiTokenRecord, String) {
    let secret = format!(
        "tsk_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    // The first 48 bits of a random UUID: 12 hex digits.
    let id = format!("tok_{:012x}", uuid::Uuid::new_v4().as_u64_pair().0 >> 16);
    let record = ApiTokenRecord {
        id,
        user_id: user_id.to_owned(),
        name: name.to_owned(),
        scopes: scopes.iter().map(|s| s.as_str().to_owned()).collect(),
        token_hash: hash_token(&secret),
        created_at: Utc::now(),
        last_used_at: None,
        agent_id: agent.map(str::to_owned),
    };
    (record, secret)
}

/// Whether two secrets are equal, in time independent of where they differ (`subtle`; a
/// length difference is not hidden, and tokens' lengths are not secret).
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.ct_eq(b).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_and_read_only() {
        let mut reader = Identity {
            scopes: vec![Scope::ToolsRead],
            ..Identity::local_default()
        };
        assert!(reader.has(Scope::ToolsRead));
        assert_eq!(
            reader.denial(Scope::ToolsWrite).as_deref(),
            Some("this operation needs the 'tools:write' scope")
        );
        reader.scopes = vec![Scope::Admin];
        assert!(reader.has(Scope::ToolsExecute), "admin covers everything");
        reader.read_only = true;
        assert!(
            reader
                .denial(Scope::ToolsWrite)
                .unwrap()
                .contains("read-only")
        );
        assert!(reader.has(Scope::ToolsRead) && reader.has(Scope::ToolsExecute));
        assert_eq!(Scope::parse("tools:write"), Ok(Scope::ToolsWrite));
        assert!(
            Scope::parse("root")
                .unwrap_err()
                .contains("unknown scope 'root'")
        );
    }

    #[test]
    fn tokens_are_random_and_hashed() {
        let (record, secret) = new_token("alice", "laptop", &[Scope::ToolsRead], None);
        let (_, other) = new_token("alice", "laptop", &[Scope::ToolsRead], None);
        assert_ne!(secret, other);
        assert!(secret.starts_with("tsk_") && secret.len() == 68, "{secret}");
        assert_eq!(record.token_hash, hash_token(&secret));
        assert!(!record.token_hash.contains(&secret[4..]));
        assert_eq!(record.scopes, ["tools:read"]);
    }

    #[test]
    fn constant_time_comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
        assert!(!constant_time_eq(b"", b"a"));
    }
}
