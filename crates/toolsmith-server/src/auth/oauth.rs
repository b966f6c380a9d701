//! Toolsmith as an OAuth 2.1 protected resource (the MCP authorization spec, RFC 9728, RFC 6750).
//!
//! When `[oauth]` is configured ([`OAuthSettings`]), a bearer token that is a JWT is validated
//! here instead of being looked up among the API tokens, which keep working beside it:
//!
//! - the issuer (`iss`) must be one of the configured issuers, compared exactly;
//! - the signature must verify with a key of that issuer's JWKS ([`jwks`]: fetched through the
//!   egress guard, cached, fetched again when a token names a key it does not hold — rotation);
//!   only asymmetric algorithms are accepted (never `none` or a shared secret);
//! - the audience (`aud`) must name this server ([`OAuthSettings::audiences`]), `exp` is
//!   required and `nbf` honoured, with a small leeway for clocks;
//! - the claims map to the caller: the user from `user_claim` (default `sub`), the agent from
//!   `agent_claim` when configured, the organisation the caller acts in from `org_claim` when
//!   configured (its name or id; the membership is checked as for `X-Toolsmith-Organization`),
//!   the scopes from `scope` (space-separated) or `scp`, keeping Toolsmith's own
//!   (`tools:read`, `tools:write`, `tools:execute`, `admin`).
//!
//! A refusal is a 401 whose `WWW-Authenticate` says `error="invalid_token"` with a description,
//! and always names the protected resource metadata (`resource_metadata`), which [`routes`]
//! serves at `/.well-known/oauth-protected-resource` (and `…/mcp` for the MCP endpoint) so a
//! client can find the authorization server. A token without the scope a route needs gets 403
//! with `error="insufficient_scope"` and the scope ([`challenge`]).

mod jwks;
pub mod sign_in;

use std::collections::HashSet;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value, json};

use super::{Identity, Scope};
use crate::AppState;

/// The path of the protected resource metadata (RFC 9728 §3).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The operator's OAuth settings (`[oauth]` in the configuration file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthSettings {
    /// This server's public base URL (`https://tools.example.com`), without a trailing slash:
    /// the resource tokens are issued for, and the origin of the metadata's URLs.
    pub resource: String,
    /// The authorization servers whose tokens are accepted.
    pub issuers: Vec<IssuerSettings>,
    /// Audiences a token may carry; empty means the resource and its MCP endpoint
    /// (`<resource>` and `<resource>/mcp`).
    pub audiences: Vec<String>,
    /// The claim that names the Toolsmith user (default `sub`).
    pub user_claim: String,
    /// The claim that names the agent the caller acts as, if any.
    pub agent_claim: Option<String>,
    /// The claim that names the organisation the caller acts in (its name or id), if any: a
    /// token carrying it acts in that organisation, as with `X-Toolsmith-Organization`; a token
    /// without it acts for its user (and may send the header).
    pub org_claim: Option<String>,
    /// How long a fetched key set is used before it is fetched again (default 10 minutes).
    pub jwks_refresh: Duration,
    /// The shortest time between two fetches caused by a token naming a key the cache does
    /// not hold (default 30 s): rotation is picked up, made-up key ids cannot make the server
    /// hammer the issuer.
    pub jwks_refetch_floor: Duration,
    /// Clock skew allowed on `exp` and `nbf` (default 60 s).
    pub leeway: Duration,
    /// The web UI's sign-in through the provider, when a client id is configured for it.
    pub ui: Option<UiSignInSettings>,
}

/// The web UI as a public OAuth client of one issuer ([`sign_in`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiSignInSettings {
    /// The client id registered at the provider for the UI: a public client (no secret) whose
    /// redirect URI is `<resource>/`.
    pub client_id: String,
    /// The issuer the UI signs in with: one of [`OAuthSettings::issuers`].
    pub issuer: String,
    /// The scopes the UI asks for, space-separated.
    pub scopes: String,
}

/// One trusted authorization server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuerSettings {
    /// The issuer identifier, exactly as tokens carry it in `iss`.
    pub issuer: String,
    /// Where its keys are; `None`: discovered from its metadata (OpenID Connect discovery,
    /// then RFC 8414).
    pub jwks_uri: Option<String>,
}

impl OAuthSettings {
    /// Settings with the defaults for everything but the resource and the issuers.
    pub fn new(resource: &str, issuers: Vec<IssuerSettings>) -> OAuthSettings {
        OAuthSettings {
            resource: resource.trim_end_matches('/').to_owned(),
            issuers,
            audiences: Vec::new(),
            user_claim: "sub".to_owned(),
            agent_claim: None,
            org_claim: None,
            jwks_refresh: Duration::from_secs(600),
            jwks_refetch_floor: Duration::from_secs(30),
            leeway: Duration::from_secs(60),
            ui: None,
        }
    }

    /// The audiences a token may carry.
    pub fn accepted_audiences(&self) -> Vec<String> {
        if self.audiences.is_empty() {
            vec![
                self.resource.clone(),
                format!("{}{}", self.resource, crate::mcp::MCP_PATH),
            ]
        } else {
            self.audiences.clone()
        }
    }

    /// The metadata URL for a request to `path`: the MCP endpoint's own, or the server's.
    pub fn metadata_url(&self, path: &str) -> String {
        if path == crate::mcp::MCP_PATH {
            format!("{}{METADATA_PATH}{}", self.resource, crate::mcp::MCP_PATH)
        } else {
            format!("{}{METADATA_PATH}", self.resource)
        }
    }
}

/// Why a bearer token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// The token is not valid (401, `invalid_token`); the text says why.
    #[error("{0}")]
    Invalid(String),
    /// The issuer's keys could not be fetched, so no token of it can be checked (503).
    #[error("{0}")]
    KeysUnavailable(String),
}

/// Validates JWT bearer tokens against the configured issuers.
pub struct OAuthVerifier {
    settings: OAuthSettings,
    keys: jwks::KeyCache,
    /// The UI's issuer's endpoints, once discovered ([`sign_in`]).
    endpoints: sign_in::EndpointCache,
    /// The server-wide cap on codes redeemed at the provider ([`sign_in`]).
    redemptions: sign_in::RedemptionBudget,
}

impl std::fmt::Debug for OAuthVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthVerifier")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The algorithms accepted: asymmetric only, so a token can never be forged from a key the
/// issuer publishes.
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

impl OAuthVerifier {
    /// A verifier fetching keys through `egress` (the operator's policy: an issuer on a private
    /// network must be listed in `egress.allowed_private_hosts`).
    pub fn new(settings: OAuthSettings, egress: toolsmith_egress::EgressGuard) -> OAuthVerifier {
        let keys = jwks::KeyCache::new(
            egress.clone(),
            settings.jwks_refresh,
            settings.jwks_refetch_floor,
        );
        let endpoints = sign_in::EndpointCache::new(egress, settings.jwks_refresh);
        OAuthVerifier {
            settings,
            keys,
            endpoints,
            redemptions: sign_in::RedemptionBudget::new(),
        }
    }

    pub fn settings(&self) -> &OAuthSettings {
        &self.settings
    }

    /// Whether `token` has a JWT's shape (three base64url parts); API tokens never do.
    pub fn looks_like_jwt(token: &str) -> bool {
        token.split('.').count() == 3 && token.starts_with("eyJ")
    }

    /// The caller a JWT names, or why it is refused.
    pub async fn verify(&self, token: &str) -> Result<Identity, Rejection> {
        Ok(self.verify_claims(token).await?.0)
    }

    /// The caller a JWT names and the organisation its `org_claim` names (not yet checked:
    /// membership is the request's business), or why it is refused.
    pub async fn verify_claims(
        &self,
        token: &str,
    ) -> Result<(Identity, Option<String>), Rejection> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|e| Rejection::Invalid(format!("the token is not a readable JWT: {e}")))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Rejection::Invalid(format!(
                "the token is signed with {:?}; only asymmetric algorithms (RS*, PS*, ES256, ES384, EdDSA) are accepted",
                header.alg
            )));
        }
        let issuer = unverified_issuer(token)?;
        let Some(trusted) = self.settings.issuers.iter().find(|i| i.issuer == issuer) else {
            return Err(Rejection::Invalid(format!(
                "the token's issuer '{}' is not one this server trusts",
                clip(&issuer)
            )));
        };
        let jwk = self.keys.key_for(trusted, header.kid.as_deref()).await?;
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|e| Rejection::Invalid(format!("the issuer's key cannot be used: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[trusted.issuer.as_str()]);
        validation.set_audience(&self.settings.accepted_audiences());
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.settings.leeway.as_secs();
        let data = jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation)
            .map_err(|e| Rejection::Invalid(self.describe(&e)))?;
        let identity = self.identity(&data.claims)?;
        Ok((identity, self.organization(&data.claims)?))
    }

    /// The organisation the verified claims name, when `org_claim` is configured: absent or
    /// null is none; anything but a name of 1 to 128 printable characters is refused.
    fn organization(&self, claims: &Map<String, Value>) -> Result<Option<String>, Rejection> {
        let Some(claim) = &self.settings.org_claim else {
            return Ok(None);
        };
        match claims.get(claim) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(org)) if valid_name(org) => Ok(Some(org.clone())),
            Some(_) => Err(Rejection::Invalid(format!(
                "the token's '{claim}' claim does not name an organisation"
            ))),
        }
    }

    /// What a validation error means, in words a client can act on.
    fn describe(&self, error: &jsonwebtoken::errors::Error) -> String {
        use jsonwebtoken::errors::ErrorKind;
        match error.kind() {
            ErrorKind::ExpiredSignature => "the token has expired".to_owned(),
            ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".to_owned(),
            ErrorKind::InvalidAudience => format!(
                "the token is for another audience; this server accepts {}",
                self.settings.accepted_audiences().join(", ")
            ),
            ErrorKind::InvalidIssuer => "the token's issuer is not trusted".to_owned(),
            ErrorKind::InvalidSignature => "the token's signature does not verify".to_owned(),
            ErrorKind::MissingRequiredClaim(claim) => {
                format!("the token has no '{claim}' claim")
            }
            other => format!("the token is not valid: {other:?}"),
        }
    }

    /// The caller the verified claims name.
    fn identity(&self, claims: &Map<String, Value>) -> Result<Identity, Rejection> {
        let user_claim = &self.settings.user_claim;
        let user_id = claims
            .get(user_claim)
            .and_then(Value::as_str)
            .filter(|v| valid_name(v))
            .ok_or_else(|| {
                Rejection::Invalid(format!(
                    "the token's '{user_claim}' claim does not name a user (a string of 1 to 128 printable characters)"
                ))
            })?;
        let agent_id = match &self.settings.agent_claim {
            Some(claim) => match claims.get(claim) {
                None | Some(Value::Null) => None,
                Some(Value::String(agent)) if valid_name(agent) => Some(agent.clone()),
                Some(_) => {
                    return Err(Rejection::Invalid(format!(
                        "the token's '{claim}' claim does not name an agent"
                    )));
                }
            },
            None => None,
        };
        Ok(Identity {
            user_id: user_id.to_owned(),
            agent_id,
            agent_from_header: false,
            scopes: scopes(claims),
            read_only: false,
            member: None,
            organization: None,
        })
    }
}

/// The scopes a token grants that Toolsmith knows: `scope` (space-separated, RFC 8693/9068) or
/// `scp` (a list or a string, as some providers write it).
fn scopes(claims: &Map<String, Value>) -> Vec<Scope> {
    let mut names: Vec<&str> = Vec::new();
    for claim in ["scope", "scp"] {
        match claims.get(claim) {
            Some(Value::String(text)) => names.extend(text.split_whitespace()),
            Some(Value::Array(items)) => names.extend(items.iter().filter_map(Value::as_str)),
            _ => {}
        }
    }
    let mut seen = HashSet::new();
    names
        .into_iter()
        .filter_map(|name| Scope::parse(name).ok())
        .filter(|scope| seen.insert(*scope))
        .collect()
}

fn valid_name(text: &str) -> bool {
    !text.is_empty() && text.chars().count() <= 128 && !text.chars().any(char::is_control)
}

/// The `iss` of a token before its signature is checked: only to choose whose keys check it.
fn unverified_issuer(token: &str) -> Result<String, Rejection> {
    let unreadable = || Rejection::Invalid("the token's claims are not readable".to_owned());
    let payload = token.split('.').nth(1).ok_or_else(unreadable)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .map_err(|_| unreadable())?;
    let claims: Map<String, Value> = serde_json::from_slice(&bytes).map_err(|_| unreadable())?;
    claims
        .get("iss")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| Rejection::Invalid("the token has no 'iss' claim".to_owned()))
}

/// At most 200 characters of something a caller wrote, for a message.
fn clip(text: &str) -> String {
    text.chars().take(200).collect()
}

/// The `WWW-Authenticate` value of a 401: `error="invalid_token"` with its description when a
/// token was refused, and where the metadata is (RFC 6750 §3, RFC 9728 §5.1).
pub fn challenge(settings: &OAuthSettings, path: &str, error: Option<Challenge<'_>>) -> String {
    let mut parts = Vec::new();
    match error {
        Some(Challenge::InvalidToken(why)) => {
            parts.push("error=\"invalid_token\"".to_owned());
            parts.push(format!("error_description=\"{}\"", quoted(why)));
        }
        None => {}
    }
    parts.push(format!(
        "resource_metadata=\"{}\"",
        quoted(&settings.metadata_url(path))
    ));
    format!("Bearer {}", parts.join(", "))
}

/// What a challenge says beyond where the metadata is (an `insufficient_scope` challenge is
/// made by the route that needs the scope, `ApiError::with_missing_scope`).
#[derive(Debug, Clone, Copy)]
pub enum Challenge<'a> {
    InvalidToken(&'a str),
}

/// A quoted-string's content (RFC 9110 §5.6.4): no quotes, backslashes or control characters.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' | '\\' => '\'',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect()
}

/// `GET /.well-known/oauth-protected-resource` and `…/mcp`: the protected resource metadata
/// (RFC 9728), 404 when OAuth is not configured.
pub fn routes(state: AppState) -> Router {
    Router::new()
        .route(METADATA_PATH, get(server_metadata))
        .route(
            &format!("{METADATA_PATH}{}", crate::mcp::MCP_PATH),
            get(mcp_metadata),
        )
        .with_state(state)
}

async fn server_metadata(State(state): State<AppState>) -> Response {
    metadata(&state, "")
}

async fn mcp_metadata(State(state): State<AppState>) -> Response {
    metadata(&state, crate::mcp::MCP_PATH)
}

fn metadata(state: &AppState, path: &str) -> Response {
    let Some(verifier) = &state.oauth else {
        return crate::rest::error::ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "OAuth is not configured on this server: it accepts its own API tokens only",
        )
        .into_response();
    };
    let settings = verifier.settings();
    let body = json!({
        "resource": format!("{}{path}", settings.resource),
        "authorization_servers": settings.issuers.iter().map(|i| i.issuer.as_str()).collect::<Vec<_>>(),
        "scopes_supported": Scope::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        "bearer_methods_supported": ["header"],
        "resource_name": "Toolsmith",
    });
    let mut response = Json(body).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}

#[cfg(test)]
mod tests;
