use serde_json::json;

use super::*;

fn settings() -> OAuthSettings {
    OAuthSettings::new(
        "https://tools.example.com/",
        vec![IssuerSettings {
            issuer: "https://idp.example.com".to_owned(),
            jwks_uri: None,
        }],
    )
}

#[test]
fn audiences_default_to_the_resource_and_its_mcp_endpoint() {
    let mut settings = settings();
    assert_eq!(
        settings.accepted_audiences(),
        ["https://tools.example.com", "https://tools.example.com/mcp"]
    );
    settings.audiences = vec!["api://toolsmith".to_owned()];
    assert_eq!(settings.accepted_audiences(), ["api://toolsmith"]);
}

#[test]
fn the_metadata_url_is_the_mcp_endpoints_own_for_mcp() {
    let settings = settings();
    assert_eq!(
        settings.metadata_url("/mcp"),
        "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
    );
    assert_eq!(
        settings.metadata_url("/api/v1/tools"),
        "https://tools.example.com/.well-known/oauth-protected-resource"
    );
}

#[test]
fn scopes_come_from_scope_or_scp_and_unknown_ones_are_dropped() {
    let claims = json!({"scope": "openid tools:read  tools:execute tools:read"});
    assert_eq!(
        scopes(claims.as_object().unwrap()),
        [Scope::ToolsRead, Scope::ToolsExecute]
    );
    let claims = json!({"scp": ["admin", "profile"]});
    assert_eq!(scopes(claims.as_object().unwrap()), [Scope::Admin]);
    let claims = json!({"scope": 7});
    assert!(scopes(claims.as_object().unwrap()).is_empty());
}

#[test]
fn the_issuer_is_read_before_the_signature_only_to_choose_keys() {
    let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(br#"{"iss":"https://idp.example.com","sub":"ann"}"#);
    let token = format!("eyJhbGciOiJFUzI1NiJ9.{payload}.sig");
    assert_eq!(
        unverified_issuer(&token).unwrap(),
        "https://idp.example.com"
    );
    assert!(unverified_issuer("eyJ.bad!.x").is_err());
    let no_iss = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(br#"{"sub":"ann"}"#);
    assert_eq!(
        unverified_issuer(&format!("eyJ.{no_iss}.x")),
        Err(Rejection::Invalid(
            "the token has no 'iss' claim".to_owned()
        ))
    );
}

#[test]
fn a_challenge_quotes_safely_and_names_the_metadata() {
    let value = challenge(
        &settings(),
        "/mcp",
        Some(Challenge::InvalidToken("bad \"aud\"\r\nx")),
    );
    assert_eq!(
        value,
        "Bearer error=\"invalid_token\", error_description=\"bad 'aud'  x\", resource_metadata=\"https://tools.example.com/.well-known/oauth-protected-resource/mcp\""
    );
    assert!(HeaderValue::from_str(&value).is_ok());
}

#[test]
fn only_jwt_shaped_tokens_go_to_the_verifier() {
    assert!(OAuthVerifier::looks_like_jwt(
        "eyJhbGciOiJFUzI1NiJ9.e30.c2ln"
    ));
    assert!(!OAuthVerifier::looks_like_jwt(
        "tsk_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    ));
    assert!(!OAuthVerifier::looks_like_jwt("eyJ.only-two"));
}
