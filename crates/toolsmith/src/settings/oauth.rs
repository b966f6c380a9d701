//! The `[oauth]` table: Toolsmith as an OAuth 2.1 protected resource (docs/auth.md), read and
//! checked into the server's [`OAuthSettings`].

use std::time::Duration;

use serde::Deserialize;
use toolsmith_server::auth::oauth::{IssuerSettings, OAuthSettings, UiSignInSettings};

use super::{ConfigError, Value, bad, pick_duration};

/// The `[oauth]` table, as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthFile {
    /// This server's public base URL (`https://tools.example.com`): the audience of its tokens.
    pub resource: Option<String>,
    /// The authorization servers whose tokens are accepted (their `iss`).
    #[serde(default)]
    pub issuers: Vec<String>,
    /// `[[oauth.issuer]]`: an issuer with its key set's URL given, not discovered.
    #[serde(default)]
    pub issuer: Vec<IssuerFile>,
    /// Audiences accepted instead of the resource and its `/mcp`.
    #[serde(default)]
    pub audiences: Vec<String>,
    /// The claim naming the user (default `sub`).
    pub user_claim: Option<String>,
    /// The claim naming the agent the caller acts as.
    pub agent_claim: Option<String>,
    /// The claim naming the organisation the caller acts in (its name or id).
    pub org_claim: Option<String>,
    /// How long fetched keys are used before they are fetched again (default 10 minutes).
    pub jwks_refresh: Option<Value>,
    /// Clock skew allowed on `exp` and `nbf` (default 60 s, at most 5 minutes).
    pub leeway: Option<Value>,
    /// The client id of the web UI at the provider (a public client whose redirect URI is
    /// `<resource>/`): set, the UI offers signing in through the provider.
    pub ui_client_id: Option<String>,
    /// The issuer the UI signs in with (default: the first one).
    pub ui_issuer: Option<String>,
    /// The scopes the UI asks for (default `openid tools:read tools:write tools:execute`).
    pub ui_scopes: Option<String>,
}

/// The scopes the UI asks for unless `ui_scopes` says otherwise.
pub const DEFAULT_UI_SCOPES: &str = "openid tools:read tools:write tools:execute";

/// One `[[oauth.issuer]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IssuerFile {
    pub issuer: String,
    pub jwks_uri: Option<String>,
}

/// The server's settings from the table, every value checked.
pub fn resolve(file: OAuthFile) -> Result<OAuthSettings, ConfigError> {
    let resource = file
        .resource
        .ok_or_else(|| bad("oauth.resource: this server's public URL is needed (e.g. \"https://tools.example.com\")"))?;
    web_url(&resource, "oauth.resource")?;
    let mut issuers: Vec<IssuerSettings> = file
        .issuers
        .into_iter()
        .map(|issuer| IssuerSettings {
            issuer,
            jwks_uri: None,
        })
        .collect();
    issuers.extend(file.issuer.into_iter().map(|i| IssuerSettings {
        issuer: i.issuer,
        jwks_uri: i.jwks_uri,
    }));
    if issuers.is_empty() {
        return Err(bad(
            "oauth: at least one issuer is needed (`issuers = [\"https://idp.example.com\"]`)",
        ));
    }
    for issuer in &issuers {
        web_url(&issuer.issuer, "oauth.issuers")?;
        if let Some(uri) = &issuer.jwks_uri {
            web_url(uri, "oauth.issuer.jwks_uri")?;
        }
    }
    let mut settings = OAuthSettings::new(&resource, issuers);
    settings.audiences = file.audiences;
    if let Some(claim) = file.user_claim {
        settings.user_claim = claim_name(claim, "oauth.user_claim")?;
    }
    settings.agent_claim = file
        .agent_claim
        .map(|claim| claim_name(claim, "oauth.agent_claim"))
        .transpose()?;
    settings.org_claim = file
        .org_claim
        .map(|claim| claim_name(claim, "oauth.org_claim"))
        .transpose()?;
    if let Some(refresh) = pick_duration(None, file.jwks_refresh, "oauth.jwks_refresh")? {
        if refresh < Duration::from_secs(10) {
            return Err(bad("oauth.jwks_refresh: at least 10s"));
        }
        settings.jwks_refresh = refresh;
    }
    if let Some(leeway) = pick_duration(None, file.leeway, "oauth.leeway")? {
        if leeway > Duration::from_secs(300) {
            return Err(bad("oauth.leeway: at most 5m"));
        }
        settings.leeway = leeway;
    }
    settings.ui = ui_sign_in(
        file.ui_client_id,
        file.ui_issuer,
        file.ui_scopes,
        &settings.issuers,
    )?;
    Ok(settings)
}

/// The UI's sign-in, when `ui_client_id` is set: its issuer must be a trusted one.
fn ui_sign_in(
    client_id: Option<String>,
    issuer: Option<String>,
    scopes: Option<String>,
    issuers: &[IssuerSettings],
) -> Result<Option<UiSignInSettings>, ConfigError> {
    let Some(client_id) = client_id else {
        if issuer.is_some() || scopes.is_some() {
            return Err(bad(
                "oauth.ui_issuer / oauth.ui_scopes: set `ui_client_id` too (the UI's client id at the provider)",
            ));
        }
        return Ok(None);
    };
    if client_id.trim().is_empty() || client_id.len() > 256 {
        return Err(bad("oauth.ui_client_id: 1 to 256 characters"));
    }
    let issuer = match issuer {
        Some(issuer) if issuers.iter().any(|i| i.issuer == issuer) => issuer,
        Some(issuer) => {
            return Err(bad(format!(
                "oauth.ui_issuer: '{issuer}' is not one of `issuers`; list it there too"
            )));
        }
        None => issuers
            .first()
            .map(|i| i.issuer.clone())
            .ok_or_else(|| bad("oauth: at least one issuer is needed"))?,
    };
    let scopes = scopes.unwrap_or_else(|| DEFAULT_UI_SCOPES.to_owned());
    if scopes.split_whitespace().next().is_none() || scopes.chars().any(char::is_control) {
        return Err(bad(
            "oauth.ui_scopes: space-separated scope names, e.g. \"openid tools:read\"",
        ));
    }
    Ok(Some(UiSignInSettings {
        client_id,
        issuer,
        scopes,
    }))
}

fn web_url(text: &str, key: &str) -> Result<(), ConfigError> {
    match url::Url::parse(text) {
        Ok(url) if matches!(url.scheme(), "https" | "http") && url.host().is_some() => Ok(()),
        _ => Err(bad(format!("{key}: '{text}' is not an http(s) URL"))),
    }
}

fn claim_name(claim: String, key: &str) -> Result<String, ConfigError> {
    if claim.trim().is_empty() {
        return Err(bad(format!("{key}: a claim name is needed")));
    }
    Ok(claim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<OAuthSettings, ConfigError> {
        resolve(toml::from_str(text).map_err(|e| bad(e.to_string()))?)
    }

    #[test]
    fn issuers_and_claims_come_from_the_table() {
        let settings = read(
            r#"
            resource = "https://tools.example.com/"
            issuers = ["https://idp.example.com"]
            agent_claim = "agent"
            org_claim = "org"
            leeway = "30s"
            [[issuer]]
            issuer = "https://login.example.org/tenant"
            jwks_uri = "https://login.example.org/tenant/keys"
            "#,
        )
        .unwrap();
        assert_eq!(settings.resource, "https://tools.example.com");
        assert_eq!(settings.issuers.len(), 2);
        assert_eq!(
            settings.issuers[1].jwks_uri.as_deref(),
            Some("https://login.example.org/tenant/keys")
        );
        assert_eq!(settings.user_claim, "sub");
        assert_eq!(settings.agent_claim.as_deref(), Some("agent"));
        assert_eq!(settings.org_claim.as_deref(), Some("org"));
        assert_eq!(settings.leeway, Duration::from_secs(30));
    }

    #[test]
    fn bad_tables_are_refused_naming_the_key() {
        let cases = [
            ("issuers = [\"https://idp\"]", "oauth.resource"),
            ("resource = \"https://t\"", "at least one issuer"),
            (
                "resource = \"ftp://t\"\nissuers = [\"https://i\"]",
                "oauth.resource",
            ),
            (
                "resource = \"https://t\"\nissuers = [\"idp\"]",
                "oauth.issuers",
            ),
            (
                "resource = \"https://t\"\nissuers = [\"https://i\"]\nleeway = \"1h\"",
                "oauth.leeway",
            ),
            (
                "resource = \"https://t\"\nissuers = [\"https://i\"]\nuser_claim = \" \"",
                "oauth.user_claim",
            ),
            (
                "resource = \"https://t\"\nissuers = [\"https://i\"]\norg_claim = \"\"",
                "oauth.org_claim",
            ),
        ];
        for (text, key) in cases {
            let error = read(text).unwrap_err().to_string();
            assert!(error.contains(key), "{text}: {error}");
        }
        assert!(toml::from_str::<OAuthFile>("secret = 1").is_err());
    }

    #[test]
    fn the_ui_signs_in_with_a_trusted_issuer() {
        let base = "resource = \"https://t\"\nissuers = [\"https://i\", \"https://j\"]\n";
        assert_eq!(read(base).unwrap().ui, None);
        let ui = read(&format!("{base}ui_client_id = \"toolsmith-ui\""))
            .unwrap()
            .ui
            .unwrap();
        assert_eq!(
            ui,
            UiSignInSettings {
                client_id: "toolsmith-ui".into(),
                issuer: "https://i".into(),
                scopes: DEFAULT_UI_SCOPES.into(),
            }
        );
        let ui = read(&format!(
            "{base}ui_client_id = \"ui\"\nui_issuer = \"https://j\"\nui_scopes = \"openid tools:read\""
        ))
        .unwrap()
        .ui
        .unwrap();
        assert_eq!(
            (ui.issuer.as_str(), ui.scopes.as_str()),
            ("https://j", "openid tools:read")
        );
        for (extra, key) in [
            ("ui_issuer = \"https://j\"", "set `ui_client_id` too"),
            (
                "ui_client_id = \"ui\"\nui_issuer = \"https://k\"",
                "oauth.ui_issuer",
            ),
            ("ui_client_id = \" \"", "oauth.ui_client_id"),
            (
                "ui_client_id = \"ui\"\nui_scopes = \" \"",
                "oauth.ui_scopes",
            ),
        ] {
            let error = read(&format!("{base}{extra}")).unwrap_err().to_string();
            assert!(error.contains(key), "{extra}: {error}");
        }
    }
}
