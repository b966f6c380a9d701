//! The web UI's sign-in through the identity provider: the authorization code flow with PKCE
//! (OAuth 2.1 §4.1, RFC 7636) for the UI as a public client (`[oauth] ui_client_id`).
//!
//! The browser makes the PKCE verifier and the `state`, keeps them in the tab's session storage
//! and goes to the provider's authorization endpoint ([`SignInOptions`] tells it where, with
//! which client id, scopes, redirect URI and resource indicator). The provider sends the person
//! back to `<resource>/` with a code; the page hands the code and its verifier to this server
//! ([`OAuthVerifier::exchange_code`]), which redeems them at the provider's token endpoint
//! through the egress guard — so the page's Content-Security-Policy keeps `connect-src 'self'`
//! and the provider needs no CORS — checks the access token exactly as every request's token
//! is checked, and gives it back. The page then calls the API with it like any bearer token.
//!
//! Only the configured issuer's endpoints are ever contacted, discovered from its metadata and
//! cached for the key refresh interval, so the public routes cannot be used to reach anything
//! else, nor to make the server fetch the metadata more than once per interval: a failed read
//! is remembered too, for [`FAILED_READ_RETRY`], so a stranger calling the public route cannot
//! make the server retry a failing provider on every call. Redemptions at the token endpoint
//! are capped server-wide ([`RedemptionBudget`], [`MAX_REDEMPTIONS_PER_MINUTE`]): past the cap
//! the route answers 429 with the seconds to wait, and the provider is not contacted.

use std::time::{Duration, Instant};

use serde_json::Value;
use toolsmith_egress::{EgressGuard, OutboundRequest};

use super::{OAuthVerifier, Rejection, UiSignInSettings, clip, jwks};
use crate::auth::Identity;

/// Where and how the UI signs in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInOptions {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub client_id: String,
    pub scopes: String,
    /// `<resource>/`: the UI's only redirect URI.
    pub redirect_uri: String,
    /// The resource indicator to ask for (RFC 8707): this server.
    pub resource: String,
}

/// A person signed in: the access token and whom it names.
#[derive(Debug)]
pub struct SignedIn {
    pub access_token: String,
    /// Seconds until the token expires, when the provider says.
    pub expires_in: Option<u64>,
    pub identity: Identity,
}

/// Why the UI cannot sign in through the provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    /// `[oauth] ui_client_id` is not set (404).
    #[error(
        "signing in through an identity provider is not configured on this server: set `ui_client_id` in [oauth], or sign in with an API token"
    )]
    NotConfigured,
    /// The request is not one the flow can take (400); the text says what is wrong.
    #[error("{0}")]
    BadRequest(String),
    /// The provider refused the code (400): its `error` and description.
    #[error("the identity provider refused the sign-in: {0}")]
    Refused(String),
    /// The provider could not be reached or answered nonsense (502).
    #[error("the identity provider could not be used: {0}")]
    Provider(String),
    /// More sign-ins than [`MAX_REDEMPTIONS_PER_MINUTE`] this minute (429): try again after
    /// the seconds given.
    #[error(
        "too many sign-ins on this server in the last minute (at most {MAX_REDEMPTIONS_PER_MINUTE}); sign in again in {0} s"
    )]
    Busy(u32),
    /// The provider issued a token this server does not accept (502): its configuration and
    /// the provider's disagree.
    #[error(
        "the identity provider issued an access token this server does not accept ({0}); it must issue JWT access tokens for the resource {1}"
    )]
    TokenNotAccepted(String, String),
}

/// The UI's issuer's authorization and token endpoints.
#[derive(Debug, Clone)]
struct Endpoints {
    authorization: String,
    token: String,
}

/// How long a failed read of the provider's metadata is answered from memory before the
/// provider is asked again (at most the refresh interval).
pub const FAILED_READ_RETRY: Duration = Duration::from_secs(15);

/// [`Endpoints`], discovered once per interval; a failure remembered for [`FAILED_READ_RETRY`].
pub(super) struct EndpointCache {
    egress: EgressGuard,
    refresh: Duration,
    cached: tokio::sync::Mutex<Option<(Instant, Result<Endpoints, SignInError>)>>,
}

impl EndpointCache {
    pub(super) fn new(egress: EgressGuard, refresh: Duration) -> EndpointCache {
        EndpointCache {
            egress,
            refresh,
            cached: tokio::sync::Mutex::default(),
        }
    }

    async fn get(&self, issuer: &str) -> Result<Endpoints, SignInError> {
        let mut cached = self.cached.lock().await;
        if let Some((fetched, answer)) = cached.as_ref() {
            let kept_for = match answer {
                Ok(_) => self.refresh,
                Err(_) => FAILED_READ_RETRY.min(self.refresh),
            };
            if fetched.elapsed() < kept_for {
                return answer.clone();
            }
        }
        let answer = self.read(issuer).await;
        *cached = Some((Instant::now(), answer.clone()));
        answer
    }

    /// The issuer's endpoints, read from its metadata now.
    async fn read(&self, issuer: &str) -> Result<Endpoints, SignInError> {
        let document = jwks::provider_metadata(&self.egress, issuer, "authorization_endpoint")
            .await
            .map_err(|why| {
                SignInError::Provider(format!(
                    "its metadata: {why} (asked again in at most {} s)",
                    FAILED_READ_RETRY.as_secs()
                ))
            })?;
        let endpoint = |name: &str| {
            document
                .get(name)
                .and_then(Value::as_str)
                .filter(|url| is_web_url(url))
                .map(str::to_owned)
                .ok_or_else(|| {
                    SignInError::Provider(format!("its metadata names no http(s) {name}"))
                })
        };
        Ok(Endpoints {
            authorization: endpoint("authorization_endpoint")?,
            token: endpoint("token_endpoint")?,
        })
    }
}

/// The most codes redeemed at the provider in a minute, server-wide: the token route needs
/// no token, so without a cap anyone could make the server call the provider at will. Far
/// above a company's people signing in at once (each sign-in lasts hours).
pub const MAX_REDEMPTIONS_PER_MINUTE: u32 = 120;

/// Counts redemptions in the current minute (a fixed window).
#[derive(Debug)]
pub(super) struct RedemptionBudget {
    window: std::sync::Mutex<(Instant, u32)>,
}

impl RedemptionBudget {
    pub(super) fn new() -> RedemptionBudget {
        RedemptionBudget {
            window: std::sync::Mutex::new((Instant::now(), 0)),
        }
    }

    /// Takes one redemption, or says how many seconds until the next minute frees some.
    fn take(&self, now: Instant) -> Result<(), SignInError> {
        const MINUTE: Duration = Duration::from_secs(60);
        let mut window = self
            .window
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let elapsed = now.saturating_duration_since(window.0);
        if elapsed >= MINUTE {
            *window = (now, 0);
        }
        if window.1 >= MAX_REDEMPTIONS_PER_MINUTE {
            let wait = MINUTE.saturating_sub(now.saturating_duration_since(window.0));
            return Err(SignInError::Busy(
                u32::try_from(wait.as_secs()).unwrap_or(60).max(1),
            ));
        }
        window.1 += 1;
        Ok(())
    }
}

fn is_web_url(text: &str) -> bool {
    url::Url::parse(text)
        .is_ok_and(|url| matches!(url.scheme(), "https" | "http") && url.host().is_some())
}

/// The longest authorization code taken (providers' codes are tens of characters).
const MAX_CODE_CHARS: usize = 2048;

impl OAuthVerifier {
    fn ui(&self) -> Result<&UiSignInSettings, SignInError> {
        self.settings.ui.as_ref().ok_or(SignInError::NotConfigured)
    }

    /// `<resource>/`: where the provider sends the person back.
    pub fn ui_redirect_uri(&self) -> String {
        format!("{}/", self.settings.resource)
    }

    /// Where and how the UI signs in.
    pub async fn sign_in_options(&self) -> Result<SignInOptions, SignInError> {
        let ui = self.ui()?;
        let endpoints = self.endpoints.get(&ui.issuer).await?;
        Ok(SignInOptions {
            issuer: ui.issuer.clone(),
            authorization_endpoint: endpoints.authorization,
            client_id: ui.client_id.clone(),
            scopes: ui.scopes.clone(),
            redirect_uri: self.ui_redirect_uri(),
            resource: self.settings.resource.clone(),
        })
    }

    /// Redeems an authorization code and its PKCE verifier at the provider's token endpoint,
    /// and checks the access token it answers as any request's token is checked.
    pub async fn exchange_code(
        &self,
        code: &str,
        code_verifier: &str,
        redirect_uri: &str,
    ) -> Result<SignedIn, SignInError> {
        let ui = self.ui()?;
        check_request(code, code_verifier, redirect_uri, &self.ui_redirect_uri())?;
        self.redemptions.take(Instant::now())?;
        let endpoints = self.endpoints.get(&ui.issuer).await?;
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", code)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("client_id", &ui.client_id)
            .append_pair("code_verifier", code_verifier)
            .append_pair("resource", &self.settings.resource)
            .finish();
        let response = self
            .endpoints
            .egress
            .send(OutboundRequest {
                method: "POST".to_owned(),
                url: endpoints.token.clone(),
                headers: vec![
                    (
                        "content-type".to_owned(),
                        "application/x-www-form-urlencoded".to_owned(),
                    ),
                    ("accept".to_owned(), "application/json".to_owned()),
                ],
                body: Some(form.into_bytes()),
            })
            .await
            .map_err(|e| SignInError::Provider(format!("{}: {e}", endpoints.token)))?;
        let body: Value = serde_json::from_slice(&response.body).map_err(|_| {
            SignInError::Provider(format!(
                "{} answered {} without JSON",
                endpoints.token, response.status
            ))
        })?;
        if response.status != 200 {
            let error = body.get("error").and_then(Value::as_str).unwrap_or("error");
            let description = body
                .get("error_description")
                .and_then(Value::as_str)
                .unwrap_or("");
            return Err(SignInError::Refused(
                clip(&format!("{error} {description}")).trim().to_owned(),
            ));
        }
        let access_token = body
            .get("access_token")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                SignInError::Provider("its token answer holds no access_token".to_owned())
            })?;
        let not_accepted =
            |why: String| SignInError::TokenNotAccepted(why, self.settings.resource.clone());
        if !OAuthVerifier::looks_like_jwt(access_token) {
            return Err(not_accepted("it is not a JWT".to_owned()));
        }
        let identity = self.verify(access_token).await.map_err(|e| match e {
            Rejection::Invalid(why) => not_accepted(why),
            Rejection::KeysUnavailable(why) => SignInError::Provider(why),
        })?;
        Ok(SignedIn {
            access_token: access_token.to_owned(),
            expires_in: body.get("expires_in").and_then(Value::as_u64),
            identity,
        })
    }
}

/// The code, verifier and redirect URI a page sent, checked before anything leaves the server.
fn check_request(
    code: &str,
    code_verifier: &str,
    redirect_uri: &str,
    expected_redirect: &str,
) -> Result<(), SignInError> {
    if code.is_empty()
        || code.chars().count() > MAX_CODE_CHARS
        || code.chars().any(char::is_control)
    {
        return Err(SignInError::BadRequest(format!(
            "code: the authorization code the provider sent back is needed (1 to {MAX_CODE_CHARS} printable characters)"
        )));
    }
    // RFC 7636 §4.1: 43 to 128 characters of [A-Z a-z 0-9 - . _ ~].
    let verifier_ok = (43..=128).contains(&code_verifier.len())
        && code_verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    if !verifier_ok {
        return Err(SignInError::BadRequest(
            "codeVerifier: a PKCE code verifier is 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~' (RFC 7636)".to_owned(),
        ));
    }
    if redirect_uri != expected_redirect {
        return Err(SignInError::BadRequest(format!(
            "redirectUri: this server's UI signs in at {expected_redirect} only (open the UI there)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

    #[test]
    fn a_request_is_checked_before_anything_is_sent() {
        let redirect = "https://tools.example.com/";
        assert!(check_request("abc", VERIFIER, redirect, redirect).is_ok());
        let cases = [
            ("", VERIFIER, redirect, "code:"),
            (
                &*"c".repeat(MAX_CODE_CHARS + 1),
                VERIFIER,
                redirect,
                "code:",
            ),
            ("a\r\nb", VERIFIER, redirect, "code:"),
            ("abc", "short", redirect, "codeVerifier:"),
            ("abc", &*"a".repeat(129), redirect, "codeVerifier:"),
            ("abc", &*format!("{VERIFIER}+"), redirect, "codeVerifier:"),
            ("abc", VERIFIER, "https://evil.example/", "redirectUri:"),
            (
                "abc",
                VERIFIER,
                "https://tools.example.com/x",
                "redirectUri:",
            ),
        ];
        for (code, verifier, uri, field) in cases {
            let error = check_request(code, verifier, uri, redirect)
                .unwrap_err()
                .to_string();
            assert!(
                error.starts_with(field),
                "{code:.20} {verifier:.20} {uri}: {error}"
            );
        }
    }

    #[test]
    fn redemptions_are_capped_per_minute_and_the_wait_is_said() {
        let budget = RedemptionBudget::new();
        let start = Instant::now();
        for _ in 0..MAX_REDEMPTIONS_PER_MINUTE {
            budget.take(start).unwrap();
        }
        let later = start + Duration::from_secs(20);
        match budget.take(later) {
            Err(SignInError::Busy(seconds)) => assert!((39..=40).contains(&seconds), "{seconds}"),
            other => panic!("{other:?}"),
        }
        assert!(
            budget
                .take(later)
                .unwrap_err()
                .to_string()
                .contains("sign in again in")
        );
        budget.take(start + Duration::from_secs(61)).unwrap();
    }

    #[test]
    fn only_web_urls_are_endpoints() {
        assert!(is_web_url("https://idp.example.com/auth"));
        assert!(is_web_url("http://127.0.0.1:9000/token"));
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "data:text/html,x",
            "/relative",
            "",
        ] {
            assert!(!is_web_url(bad), "{bad}");
        }
    }
}
