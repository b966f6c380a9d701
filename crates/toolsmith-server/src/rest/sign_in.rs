//! `/api/v1/sign-in…`: the web UI signing a person in through the identity provider
//! (authorization code with PKCE; the flow is in [`crate::auth::oauth::sign_in`]). Both routes
//! answer without a token — they are how a person gets one — and 404 when `[oauth]
//! ui_client_id` is not set.

use axum::extract::State;
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolsmith_service::AuditTarget;
use utoipa::ToSchema;

use super::envelope::{ApiOk, Envelope};
use super::error::ApiError;
use super::extract::{ApiJson, QueryPairs};
use crate::AppState;
use crate::auth::oauth::OAuthVerifier;
use crate::auth::oauth::sign_in::SignInError;

/// The paths of these routes (public: [`crate::auth::authenticate`] lets them through).
pub const PATHS: [&str; 2] = ["/api/v1/sign-in", "/api/v1/sign-in/token"];

/// Where and how the UI signs in.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignInOptions {
    /// The identity provider (its issuer identifier).
    pub issuer: String,
    /// Where the browser goes to sign the person in.
    pub authorization_endpoint: String,
    /// The UI's client id at the provider.
    pub client_id: String,
    /// The scopes to ask for, space-separated.
    pub scopes: String,
    /// Where the provider sends the person back: this server's `/`.
    pub redirect_uri: String,
    /// The resource indicator to ask for (RFC 8707).
    pub resource: String,
}

/// The code the provider sent back, with the verifier of its PKCE challenge.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SignInTokenBody {
    /// The authorization code.
    #[schema(min_length = 1, max_length = 2048)]
    pub code: String,
    /// The PKCE code verifier (RFC 7636: 43 to 128 characters).
    #[schema(min_length = 43, max_length = 128)]
    pub code_verifier: String,
    /// The redirect URI the authorization request named (`redirectUri` of the options).
    pub redirect_uri: String,
}

/// A person signed in.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignedIn {
    /// The bearer token to send in `Authorization` (the provider's access token).
    pub access_token: String,
    /// Always `Bearer`.
    pub token_type: String,
    /// Seconds until it expires, when the provider says; sign in again then.
    pub expires_in: Option<u64>,
    /// Whom it names.
    pub user_id: String,
    pub agent_id: Option<String>,
    /// The Toolsmith scopes it grants.
    pub scopes: Vec<String>,
}

pub type SignInOptionsEnvelope = Envelope<SignInOptions>;
pub type SignedInEnvelope = Envelope<SignedIn>;

fn configured(state: &AppState) -> Result<&OAuthVerifier, ApiError> {
    state
        .oauth
        .as_deref()
        .ok_or_else(|| refusal(&SignInError::NotConfigured))
}

fn refusal(error: &SignInError) -> ApiError {
    let (status, code) = match error {
        SignInError::NotConfigured => (StatusCode::NOT_FOUND, "not_found"),
        SignInError::BadRequest(_) => (StatusCode::BAD_REQUEST, "validation_error"),
        SignInError::Refused(_) => (StatusCode::BAD_REQUEST, "sign_in_refused"),
        SignInError::Provider(_) | SignInError::TokenNotAccepted(..) => {
            (StatusCode::BAD_GATEWAY, "identity_provider_error")
        }
        SignInError::Busy(seconds) => {
            return ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limited",
                error.to_string(),
            )
            .with_retry_after(*seconds);
        }
    };
    ApiError::new(status, code, error.to_string())
}

/// How to sign in
///
/// Where the web UI sends a person to sign in through the identity provider (authorization
/// code with PKCE), when `[oauth] ui_client_id` is set. Needs no token.
#[utoipa::path(
    get, path = "/api/v1/sign-in", tag = "sign-in", operation_id = "getSignInOptions",
    responses(
        (status = 200, description = "The provider's authorization endpoint and what to ask it", body = inline(SignInOptionsEnvelope)),
        (status = 404, description = "Signing in through a provider is not configured", body = super::error::ErrorEnvelope),
        (status = 502, description = "The provider's metadata could not be read", body = super::error::ErrorEnvelope)
    )
)]
pub async fn options(
    State(state): State<AppState>,
    query: QueryPairs,
) -> Result<ApiOk<SignInOptions>, ApiError> {
    query.check(&[])?;
    let options = configured(&state)?
        .sign_in_options()
        .await
        .map_err(|e| refusal(&e))?;
    Ok(ApiOk::ok(SignInOptions {
        issuer: options.issuer,
        authorization_endpoint: options.authorization_endpoint,
        client_id: options.client_id,
        scopes: options.scopes,
        redirect_uri: options.redirect_uri,
        resource: options.resource,
    }))
}

/// Finish signing in
///
/// Redeems the code the provider sent back, with the PKCE verifier, at the provider's token
/// endpoint, and answers the access token once this server has checked it as it checks every
/// request's token. Needs no token.
#[utoipa::path(
    post, path = "/api/v1/sign-in/token", tag = "sign-in", operation_id = "finishSignIn",
    request_body = SignInTokenBody,
    responses(
        (status = 200, description = "Signed in", body = inline(SignedInEnvelope)),
        (status = 400, description = "A malformed request, or the provider refused the code (its reason)", body = super::error::ErrorEnvelope),
        (status = 404, description = "Signing in through a provider is not configured", body = super::error::ErrorEnvelope),
        (status = 429, description = "More sign-ins than the server takes in a minute (`Retry-After`)", body = super::error::ErrorEnvelope),
        (status = 502, description = "The provider could not be used, or issued a token this server does not accept", body = super::error::ErrorEnvelope)
    )
)]
pub async fn token(
    State(state): State<AppState>,
    query: QueryPairs,
    ApiJson(body): ApiJson<SignInTokenBody>,
) -> Result<ApiOk<SignedIn>, ApiError> {
    query.check(&[])?;
    let signed_in = configured(&state)?
        .exchange_code(&body.code, &body.code_verifier, &body.redirect_uri)
        .await
        .map_err(|e| refusal(&e))?;
    tracing::info!(user = %signed_in.identity.user_id, "signed in to the web UI through the identity provider");
    let ui = state
        .oauth
        .as_deref()
        .and_then(|v| v.settings().ui.as_ref());
    state
        .service
        .audit()
        .record(
            &super::actor(&signed_in.identity),
            "auth.sign_in",
            AuditTarget::new("user", signed_in.identity.user_id.clone(), None),
            (None, None),
            json!({"via": "web UI", "issuer": ui.map(|ui| ui.issuer.as_str())}),
        )
        .await;
    Ok(ApiOk::ok(SignedIn {
        access_token: signed_in.access_token,
        token_type: "Bearer".to_owned(),
        expires_in: signed_in.expires_in,
        scopes: signed_in
            .identity
            .scopes
            .iter()
            .map(|s| s.as_str().to_owned())
            .collect(),
        user_id: signed_in.identity.user_id,
        agent_id: signed_in.identity.agent_id,
    }))
}
