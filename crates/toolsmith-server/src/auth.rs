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
//! - **Organisations:** a request with `X-Toolsmith-Organization: <name or id>` (or an OAuth
//!   token whose configured organisation claim names one) acts in that organisation
//!   ([`enter_organization`]): membership is read once per request, a non-member (or an
//!   unknown organisation) gets 404 with the same words either way, and a member acts with
//!   `user_id` = the organisation's id, [`Identity::member`] = the person, and the token's
//!   scopes narrowed by the role ([`Scope::of_role`]: a viewer reads and calls, an editor, admin
//!   or owner writes too; `admin` never). A token whose own user looks like an organisation's
//!   id (`org_…`) or is the reserved `me` is refused: a person never *is* an organisation.

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
use toolsmith_core::organization::{OrgRole, OrganizationRecord, is_org_id};
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

    /// The most a member of an organisation may do in it, by role: a viewer reads and calls
    /// (`tools:read`, `tools:execute`), an editor, admin or owner writes too (`tools:write`).
    /// `admin` is never held through an organisation (managing members is the organisation's
    /// own routes' business, done as the person).
    pub fn of_role(role: OrgRole) -> &'static [Scope] {
        match role {
            OrgRole::Viewer => &[Scope::ToolsRead, Scope::ToolsExecute],
            OrgRole::Editor | OrgRole::Admin | OrgRole::Owner => {
                &[Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute]
            }
        }
    }
}

/// The request header naming the organisation a request acts in (its name or id; `me`: the
/// caller's own scope, as without the header).
pub const ORGANIZATION_HEADER: &str = "x-toolsmith-organization";

/// The organisation a caller acts in ([`Identity::organization`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActingOrganization {
    /// Its handle (`acme-support`); its id is the identity's `user_id`.
    pub name: String,
    pub display_name: String,
    /// The person's role in it.
    pub role: OrgRole,
    /// The scopes the token itself grants, before the role narrowed them (what the person
    /// holds outside the organisation: [`Identity::as_person`]).
    pub token_scopes: Vec<Scope>,
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
    /// The person acting, when the caller acts in an organisation (`X-Toolsmith-Organization`
    /// or the OAuth organisation claim): `user_id` is then the organisation's id — the owner of
    /// everything the request reads and writes — and this the person's own user id, whom the
    /// audit log names. `None` otherwise.
    pub member: Option<String>,
    /// The organisation acted in (set with `member`): its name and the person's role.
    pub organization: Option<ActingOrganization>,
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
            member: None,
            organization: None,
        }
    }

    /// The person behind the caller: the member acting in an organisation, the user otherwise.
    pub fn person(&self) -> &str {
        self.member.as_deref().unwrap_or(&self.user_id)
    }

    /// The caller as the person outside any organisation: their own user id and the token's
    /// own scopes (what the organisation routes, which manage memberships, act as).
    pub fn as_person(&self) -> Identity {
        let mut person = self.clone();
        if let (Some(member), Some(org)) = (person.member.take(), person.organization.take()) {
            person.user_id = member;
            person.scopes = org.token_scopes;
        }
        person
    }

    /// This caller acting in `org` as `role`: the organisation's id as the user, the person as
    /// the member, and the token's scopes narrowed to what the role allows.
    pub fn enter(&mut self, org: OrganizationRecord, role: OrgRole) {
        let token_scopes = std::mem::take(&mut self.scopes);
        let held =
            |scope: &Scope| token_scopes.contains(scope) || token_scopes.contains(&Scope::Admin);
        self.scopes = Scope::of_role(role).iter().copied().filter(held).collect();
        self.member = Some(std::mem::replace(&mut self.user_id, org.id));
        self.organization = Some(ActingOrganization {
            name: org.name,
            display_name: org.display_name,
            role,
            token_scopes,
        });
    }

    /// Why the role held in the organisation acted in does not allow `scope`, if it does not.
    fn role_denial(&self, scope: Scope) -> Option<String> {
        let org = self.organization.as_ref()?;
        if Scope::of_role(org.role).contains(&scope) {
            return None;
        }
        let (name, role) = (&org.name, org.role);
        Some(match scope {
            Scope::Admin => format!(
                "you act in organisation '{name}' (as {role}): the 'admin' scope is never held \
                 through an organisation; call as yourself, without {ORGANIZATION_HEADER}"
            ),
            _ => format!(
                "you act in organisation '{name}' as {role}: this needs the '{}' scope, which \
                 its editors, admins and owners hold; ask an admin or owner of '{name}' to make \
                 you editor",
                scope.as_str()
            ),
        })
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
        if let Some(why) = self.role_denial(scope) {
            return Some(why);
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
    /// pass), not read-only mode (which refuses whatever the token says) nor the role held in
    /// an organisation (which no token widens).
    pub fn lacks_scope(&self, scope: Scope) -> bool {
        let refused_by_mode =
            (self.read_only && scope.is_write()) || self.role_denial(scope).is_some();
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
        ctx.member = self.member.clone();
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
    let public = {
        let path = request.uri().path();
        path == "/livez"
            || path == "/readyz"
            || path.starts_with(oauth::METADATA_PATH)
            || crate::rest::sign_in::PATHS.contains(&path)
            || crate::ui::is_public(path)
    };
    // The organisation an OAuth token's claim names (`oauth.org_claim`), if any.
    let mut org_claim = None;
    let identity = match bearer {
        None => {
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
                    match verifier.verify_claims(token).await {
                        Ok((identity, claimed)) => {
                            org_claim = claimed;
                            Some(identity)
                        }
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
    if is_org_id(&identity.user_id) || identity.user_id == "me" {
        // A person never *is* an organisation: a token for `org_…` (made by hand in the store,
        // or an identity provider's claim) would act as one with no member to answer for it.
        if mcp {
            state.mcp_sessions.auth_denied.fetch_add(1, Relaxed);
        }
        let why = format!(
            "the token names user '{}', which is an organisation's id or the reserved 'me': a \
             person never is an organisation; use a person's token and act in the \
             organisation with {ORGANIZATION_HEADER}",
            identity.user_id
        );
        return state.unauthorized(request.uri().path(), &why, Some(&why));
    }
    if mcp && bearer.is_some() {
        state.mcp_sessions.auth_success.fetch_add(1, Relaxed);
    }
    identity.read_only = state.config.read_only;
    if state.config.admin_token.is_some() && !identity.scopes.contains(&Scope::Admin) {
        // With an admin token set, control-plane writes are the admin's alone.
        identity.scopes.retain(|s| *s != Scope::ToolsWrite);
    }
    // What holds no data (health, the UI's files, the sign-in routes) is served whoever asks,
    // in whichever scope.
    if !(public && bearer.is_none())
        && let Err(refused) =
            enter_organization(&state, &mut identity, request.headers(), org_claim).await
    {
        return refused;
    }
    request.extensions_mut().insert(identity);
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    if let Some(verifier) = &state.oauth {
        name_the_metadata(&mut response, verifier.settings(), &path);
    }
    response
}

/// Puts the caller in the organisation the request names, if it names one: the
/// `X-Toolsmith-Organization` header (a name or an id; `me` or nothing: the caller's own scope)
/// or, for an OAuth token, the configured organisation claim (`claim`), which binds the token
/// to that organisation as an agent claim binds it to an agent — a header naming another scope
/// is refused. Membership is read here, once per request: a non-member, or an organisation
/// that does not exist, gets the same 404; a member acts in it ([`Identity::enter`]).
///
/// A token bound to an agent (an API token made for one, an OAuth agent claim without an
/// organisation claim) acts for its own user only: an agent belongs to its owner, so such a
/// token with the header is refused (403). To act as an organisation's agent, a person's token
/// names the organisation and the agent (`X-Toolsmith-Agent`), whose role then applies.
async fn enter_organization(
    state: &AppState,
    identity: &mut Identity,
    headers: &axum::http::HeaderMap,
    claim: Option<String>,
) -> Result<(), Response> {
    let forbidden = |why: String| {
        crate::rest::error::ApiError::new(StatusCode::FORBIDDEN, "forbidden", why).into_response()
    };
    let header = match headers.get(ORGANIZATION_HEADER) {
        None => None,
        Some(value) => match value.to_str().map(str::trim) {
            Ok("") => None,
            Ok(text) if text.len() <= 128 && !text.chars().any(char::is_control) => Some(text),
            _ => {
                return Err(crate::rest::error::ApiError::bad_request(
                    "invalid_header",
                    format!(
                        "{ORGANIZATION_HEADER} must name an organisation (its name or id, at \
                         most 128 characters) or be 'me'"
                    ),
                )
                .into_response());
            }
        },
    };
    let org_ref = match (&claim, header) {
        (Some(claimed), _) => claimed.as_str(),
        (None, None | Some("me")) => return Ok(()),
        (None, Some(named)) => {
            if let Some(agent) = &identity.agent_id {
                return Err(forbidden(format!(
                    "this token is bound to agent '{agent}' of user '{}', and an agent acts for \
                     its own owner only: it cannot act in organisation '{named}'. Use a person's \
                     token with {ORGANIZATION_HEADER} (and X-Toolsmith-Agent to act as one of \
                     the organisation's agents)",
                    identity.user_id
                )));
            }
            named
        }
    };
    let (org, role) = match state
        .service
        .organization_of_member(&identity.user_id, org_ref)
        .await
    {
        Ok(found) => found,
        Err(e) => return Err(crate::rest::error::ApiError::from(e).into_response()),
    };
    if let (Some(_), Some(named)) = (&claim, header)
        && named != org.id
        && named != org.name
    {
        return Err(forbidden(format!(
            "this token acts in organisation '{}' (its organisation claim): it cannot act in \
             '{named}'; send no {ORGANIZATION_HEADER}, or '{}'",
            org.name, org.name
        )));
    }
    identity.enter(org, role);
    Ok(())
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
        member: None,
        organization: None,
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

    fn acme() -> OrganizationRecord {
        OrganizationRecord {
            id: "org_00000000000000aa".to_owned(),
            name: "acme".to_owned(),
            display_name: "Acme".to_owned(),
            created_at: Utc::now(),
            created_by: "alice".to_owned(),
        }
    }

    #[test]
    fn a_member_acts_as_the_organisation_with_the_roles_scopes_never_more_than_the_tokens() {
        let mut viewer = Identity {
            user_id: "alice".to_owned(),
            ..Identity::local_default()
        };
        viewer.enter(acme(), OrgRole::Viewer);
        assert_eq!(viewer.user_id, "org_00000000000000aa");
        assert_eq!(viewer.person(), "alice");
        assert_eq!(viewer.scopes, [Scope::ToolsRead, Scope::ToolsExecute]);
        let why = viewer.denial(Scope::ToolsWrite).unwrap();
        assert!(
            why.contains("organisation 'acme' as viewer") && why.contains("editor"),
            "{why}"
        );
        assert!(
            !viewer.lacks_scope(Scope::ToolsWrite),
            "no token widens a role"
        );
        assert!(viewer.denial(Scope::Admin).unwrap().contains("never held"));
        assert!(viewer.tool_context().member.as_deref() == Some("alice"));

        // An owner with an admin token writes, but is no admin there.
        let mut owner = Identity::local_default();
        owner.enter(acme(), OrgRole::Owner);
        assert_eq!(
            owner.scopes,
            [Scope::ToolsRead, Scope::ToolsWrite, Scope::ToolsExecute]
        );
        assert!(!owner.is_admin_person() && !owner.run_rights().read_secrets);
        // An editor whose token only reads still only reads, for want of the token's scope.
        let mut reader = Identity {
            scopes: vec![Scope::ToolsRead],
            ..Identity::local_default()
        };
        reader.enter(acme(), OrgRole::Editor);
        assert_eq!(reader.scopes, [Scope::ToolsRead]);
        assert!(reader.lacks_scope(Scope::ToolsWrite));
        assert_eq!(
            reader.denial(Scope::ToolsWrite).as_deref(),
            Some("this operation needs the 'tools:write' scope")
        );
        // Outside the organisation the person has the token's own scopes again.
        let person = reader.as_person();
        assert_eq!((person.user_id.as_str(), person.member), ("default", None));
        assert_eq!(person.scopes, [Scope::ToolsRead]);
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
