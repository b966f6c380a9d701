//! Toolsmith as an OAuth 2.1 protected resource (issue 41): JWTs from a provider the test
//! serves on loopback (OpenID discovery + JWKS, an ES256 key made here), checked through the
//! real router — the metadata, the challenges, and each way a token is refused.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, StatusCode, header};
use axum::routing::get;
use base64::Engine as _;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use toolsmith_server::ServerSettings;
use toolsmith_server::auth::Scope;
use toolsmith_server::auth::oauth::{IssuerSettings, OAuthSettings, UiSignInSettings};

use crate::rest_support::{TestApp, TestResponse, request, serve_loopback, settings_reaching};

const RESOURCE: &str = "https://tools.example.com";

/// An ES256 signing key and its public JWK.
struct SigningKey {
    kid: String,
    encoding: EncodingKey,
    jwk: Value,
}

impl SigningKey {
    fn new(kid: &str) -> SigningKey {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .unwrap();
        // An uncompressed point: 0x04, then x and y.
        let point = pair.public_key().as_ref();
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        SigningKey {
            kid: kid.to_owned(),
            encoding: EncodingKey::from_ec_der(pkcs8.as_ref()),
            jwk: json!({
                "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
                "x": b64(&point[1..33]), "y": b64(&point[33..65]),
            }),
        }
    }

    fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

/// The identity provider: discovery and a key set the test can change (rotation); counts the
/// key-set fetches.
#[derive(Clone, Default)]
struct Provider {
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<Mutex<usize>>,
    issuer: Arc<Mutex<String>>,
    /// What its token endpoint answers next (status, body), and the forms it was sent.
    token_answer: Arc<Mutex<(u16, Value)>>,
    token_forms: Arc<Mutex<Vec<String>>>,
    /// Reads of its metadata, and whether it answers them with a 500.
    metadata_reads: Arc<Mutex<usize>>,
    metadata_fails: Arc<Mutex<bool>>,
}

impl Provider {
    async fn start(first: &SigningKey) -> (Provider, String) {
        let provider = Provider::default();
        provider.keys.lock().unwrap().push(first.jwk.clone());
        let app = Router::new()
            .route(
                "/.well-known/openid-configuration",
                get(|State(p): State<Provider>| async move {
                    *p.metadata_reads.lock().unwrap() += 1;
                    if *p.metadata_fails.lock().unwrap() {
                        return (StatusCode::INTERNAL_SERVER_ERROR, axum::Json(json!({})));
                    }
                    let issuer = p.issuer.lock().unwrap().clone();
                    (
                        StatusCode::OK,
                        axum::Json(json!({
                            "issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
                            "authorization_endpoint": format!("{issuer}/auth"),
                            "token_endpoint": format!("{issuer}/token"),
                        })),
                    )
                }),
            )
            .route(
                "/token",
                axum::routing::post(|State(p): State<Provider>, form: String| async move {
                    p.token_forms.lock().unwrap().push(form);
                    let (status, body) = p.token_answer.lock().unwrap().clone();
                    (StatusCode::from_u16(status).unwrap(), axum::Json(body))
                }),
            )
            .route(
                "/jwks",
                get(|State(p): State<Provider>| async move {
                    *p.fetches.lock().unwrap() += 1;
                    axum::Json(json!({"keys": p.keys.lock().unwrap().clone()}))
                }),
            )
            .with_state(provider.clone());
        let host = serve_loopback(app).await;
        let issuer = format!("http://{host}");
        *provider.issuer.lock().unwrap() = issuer.clone();
        (provider, host)
    }

    fn fetches(&self) -> usize {
        *self.fetches.lock().unwrap()
    }
}

async fn app_trusting(issuer: &str, host: &str) -> TestApp {
    app_with(issuer, host, None).await
}

async fn app_with(issuer: &str, host: &str, ui: Option<UiSignInSettings>) -> TestApp {
    let mut settings = OAuthSettings::new(
        RESOURCE,
        vec![IssuerSettings {
            issuer: issuer.to_owned(),
            jwks_uri: None,
        }],
    );
    settings.ui = ui;
    TestApp::with_configs(
        settings_reaching(host),
        ServerSettings {
            oauth: Some(settings),
            ..ServerSettings::default()
        },
    )
    .await
}

fn claims(issuer: &str, scope: &str) -> Value {
    let now = chrono::Utc::now().timestamp();
    json!({
        "iss": issuer, "sub": "ann", "aud": format!("{RESOURCE}/mcp"),
        "iat": now, "exp": now + 300, "scope": scope,
    })
}

async fn get_as(app: &TestApp, path: &str, token: &str) -> TestResponse {
    app.send(
        request(Method::GET, path)
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .unwrap(),
    )
    .await
}

fn challenge(res: &TestResponse) -> String {
    res.header("www-authenticate")
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn the_metadata_names_the_issuer_and_a_401_points_to_it() {
    let key = SigningKey::new("k1");
    let (_provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    let app = app_trusting(&issuer, &host).await;

    // RFC 9728's document as is, not in the REST envelope.
    let res = app.get("/.well-known/oauth-protected-resource/mcp").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text);
    let meta = res.json;
    assert_eq!(meta["resource"], format!("{RESOURCE}/mcp"));
    assert_eq!(meta["authorization_servers"], json!([issuer]));
    assert_eq!(meta["bearer_methods_supported"], json!(["header"]));
    assert!(
        meta["scopes_supported"]
            .as_array()
            .unwrap()
            .contains(&json!("tools:execute"))
    );
    let root = app.get("/.well-known/oauth-protected-resource").await.json;
    assert_eq!(root["resource"], RESOURCE);

    // No token: 401, and the challenge says where the metadata is (RFC 9728 §5.1).
    let res = app.post("/mcp", &json!({})).await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.text);
    assert_eq!(
        challenge(&res),
        format!("Bearer resource_metadata=\"{RESOURCE}/.well-known/oauth-protected-resource/mcp\"")
    );
    let res = app.get("/api/v1/custom-tools").await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED);
    assert!(
        challenge(&res).ends_with("/.well-known/oauth-protected-resource\""),
        "{}",
        challenge(&res)
    );
}

#[tokio::test]
async fn without_oauth_there_is_no_metadata() {
    let app = TestApp::new().await;
    app.get("/.well-known/oauth-protected-resource")
        .await
        .assert_error(StatusCode::NOT_FOUND, "not_found");
}

#[tokio::test]
async fn a_valid_token_acts_as_its_subject_with_its_scopes() {
    let key = SigningKey::new("k1");
    let (provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    let app = app_trusting(&issuer, &host).await;
    // Toolsmith's own tokens keep working beside OAuth.
    let own = app.token("bob", None, &[Scope::ToolsRead]).await;
    assert_eq!(
        get_as(&app, "/api/v1/custom-tools", &own).await.status,
        StatusCode::OK
    );

    let token = key.sign(&claims(
        &issuer,
        "openid tools:read tools:write tools:execute",
    ));
    let created = app
        .send(
            request(Method::POST, "/api/v1/custom-tools")
                .header(header::AUTHORIZATION, format!("Bearer {token}"))
                .header("content-type", "application/json")
                .body(Body::from(
                    crate::rest_support::tool_body("shout").to_string(),
                ))
                .unwrap(),
        )
        .await
        .assert_ok(StatusCode::CREATED);
    assert_eq!(created["userId"], "ann", "{created}");
    let mine = get_as(&app, "/api/v1/custom-tools", &token)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(mine["tools"].as_array().unwrap().len(), 1, "{mine}");
    // Bob (another user) does not see Ann's tool.
    let his = get_as(&app, "/api/v1/custom-tools", &own)
        .await
        .assert_ok(StatusCode::OK);
    assert!(his["tools"].as_array().unwrap().is_empty(), "{his}");
    // The key set was fetched once and is cached.
    get_as(&app, "/api/v1/custom-tools", &token)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(provider.fetches(), 1);
}

#[tokio::test]
async fn each_bad_token_is_refused_with_invalid_token_and_why() {
    let key = SigningKey::new("k1");
    let (_provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    let app = app_trusting(&issuer, &host).await;
    let now = chrono::Utc::now().timestamp();

    let mut wrong_audience = claims(&issuer, "tools:read");
    wrong_audience["aud"] = json!("https://other.example.com");
    let mut expired = claims(&issuer, "tools:read");
    expired["exp"] = json!(now - 3600);
    let mut early = claims(&issuer, "tools:read");
    early["nbf"] = json!(now + 3600);
    let foreign = claims("https://evil.example.com", "tools:read");
    let mut no_exp = claims(&issuer, "tools:read");
    no_exp.as_object_mut().unwrap().remove("exp");
    let forged = SigningKey::new("k1").sign(&claims(&issuer, "tools:read"));
    let mut hs256 = Header::new(Algorithm::HS256);
    hs256.kid = Some("k1".to_owned());
    let shared_secret = jsonwebtoken::encode(
        &hs256,
        &claims(&issuer, "tools:read"),
        &EncodingKey::from_secret(b"k1"),
    )
    .unwrap();

    let cases = [
        (key.sign(&wrong_audience), "another audience"),
        (key.sign(&expired), "expired"),
        (key.sign(&early), "not valid yet"),
        (
            key.sign(&foreign),
            "issuer 'https://evil.example.com' is not one this server trusts",
        ),
        (key.sign(&no_exp), "no 'exp' claim"),
        (forged, "signature does not verify"),
        (shared_secret, "only asymmetric algorithms"),
    ];
    for (token, why) in cases {
        let res = get_as(&app, "/api/v1/custom-tools", &token).await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{why}: {}", res.text);
        let value = challenge(&res);
        assert!(
            value.starts_with("Bearer error=\"invalid_token\", error_description=\"")
                && value.contains(why)
                && value.contains("resource_metadata=\""),
            "{why}: {value}"
        );
        assert!(
            res.json["error"]["message"].as_str().unwrap().contains(why),
            "{}",
            res.text
        );
    }
}

#[tokio::test]
async fn a_missing_scope_is_a_403_naming_the_scope() {
    let key = SigningKey::new("k1");
    let (_provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    let app = app_trusting(&issuer, &host).await;
    let reader = key.sign(&claims(&issuer, "tools:read"));
    let res = app
        .send(
            request(Method::POST, "/api/v1/custom-tools")
                .header(header::AUTHORIZATION, format!("Bearer {reader}"))
                .header("content-type", "application/json")
                .body(Body::from(
                    crate::rest_support::tool_body("shout").to_string(),
                ))
                .unwrap(),
        )
        .await;
    assert_eq!(res.status, StatusCode::FORBIDDEN, "{}", res.text);
    assert_eq!(
        challenge(&res),
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"tools:write\", resource_metadata=\"{RESOURCE}/.well-known/oauth-protected-resource\""
        )
    );
}

#[tokio::test]
async fn a_rotated_key_is_fetched_and_the_retired_one_refused() {
    let old = SigningKey::new("k1");
    let (provider, host) = Provider::start(&old).await;
    let issuer = format!("http://{host}");
    let mut settings = OAuthSettings::new(
        RESOURCE,
        vec![IssuerSettings {
            issuer: issuer.clone(),
            jwks_uri: Some(format!("{issuer}/jwks")),
        }],
    );
    settings.jwks_refetch_floor = std::time::Duration::ZERO;
    let app = TestApp::with_configs(
        settings_reaching(&host),
        ServerSettings {
            oauth: Some(settings),
            ..ServerSettings::default()
        },
    )
    .await;
    let before = old.sign(&claims(&issuer, "tools:read"));
    get_as(&app, "/api/v1/custom-tools", &before)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(provider.fetches(), 1);

    // The provider rotates: k2 replaces k1. A token naming k2 makes the server fetch again.
    let new = SigningKey::new("k2");
    *provider.keys.lock().unwrap() = vec![new.jwk.clone()];
    let after = new.sign(&claims(&issuer, "tools:read"));
    get_as(&app, "/api/v1/custom-tools", &after)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(provider.fetches(), 2);
    // The retired key no longer signs anything the server accepts.
    let res = get_as(&app, "/api/v1/custom-tools", &before).await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.text);
    assert!(
        challenge(&res).contains("publishes no key 'k1'"),
        "{}",
        challenge(&res)
    );
}

#[tokio::test]
async fn made_up_key_ids_do_not_make_the_server_hammer_the_issuer() {
    let key = SigningKey::new("k1");
    let (provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    let app = app_trusting(&issuer, &host).await;
    get_as(
        &app,
        "/api/v1/custom-tools",
        &key.sign(&claims(&issuer, "tools:read")),
    )
    .await
    .assert_ok(StatusCode::OK);
    for n in 0..5 {
        let stranger = SigningKey::new(&format!("made-up-{n}"));
        let res = get_as(
            &app,
            "/api/v1/custom-tools",
            &stranger.sign(&claims(&issuer, "tools:read")),
        )
        .await;
        assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.text);
    }
    // Within the default 30 s floor: no fetch beyond the first.
    assert_eq!(provider.fetches(), 1);
}

#[tokio::test]
async fn an_unreachable_issuer_is_a_503_not_a_401() {
    let key = SigningKey::new("k1");
    // The issuer's host is not in the egress allowlist: its keys cannot be fetched.
    let (_provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    let app = app_trusting(&issuer, "127.0.0.1:1").await;
    let res = get_as(
        &app,
        "/api/v1/custom-tools",
        &key.sign(&claims(&issuer, "tools:read")),
    )
    .await;
    assert_eq!(res.status, StatusCode::SERVICE_UNAVAILABLE, "{}", res.text);
    assert!(res.header("retry-after").is_some());
}

/// The web UI's sign-in (authorization code with PKCE): the options, and the code redeemed at
/// the provider's token endpoint through the server — each refusal before anything is sent,
/// the provider's own refusal passed on, and a token this server would not accept never handed
/// to the page.
#[tokio::test]
async fn the_ui_signs_in_by_redeeming_its_code_at_the_provider() {
    let key = SigningKey::new("k1");
    let (provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");

    // Not configured: both routes say how to turn it on.
    let plain = app_trusting(&issuer, &host).await;
    let res = plain.get("/api/v1/sign-in").await;
    res.assert_error(StatusCode::NOT_FOUND, "not_found");
    assert!(res.text.contains("ui_client_id"), "{}", res.text);
    assert!(TestApp::new().await.get("/api/v1/sign-in").await.status == StatusCode::NOT_FOUND);

    let app = app_with(
        &issuer,
        &host,
        Some(UiSignInSettings {
            client_id: "toolsmith-ui".into(),
            issuer: issuer.clone(),
            scopes: "openid tools:read".into(),
        }),
    )
    .await;
    // Without a token (the routes are how a person gets one), while the rest needs one.
    assert_eq!(
        app.get("/api/v1/session").await.status,
        StatusCode::UNAUTHORIZED
    );
    let res = app.get("/api/v1/sign-in").await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text);
    let options = &res.json["data"];
    assert_eq!(options["authorizationEndpoint"], format!("{issuer}/auth"));
    assert_eq!(options["clientId"], "toolsmith-ui");
    assert_eq!(options["scopes"], "openid tools:read");
    assert_eq!(options["redirectUri"], format!("{RESOURCE}/"));
    assert_eq!(options["resource"], RESOURCE);

    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let body = |code: &str, verifier: &str, redirect: &str| json!({"code": code, "codeVerifier": verifier, "redirectUri": redirect});
    let redirect = format!("{RESOURCE}/");
    // Malformed or hostile: refused naming the field, nothing sent to the provider.
    for (bad, field) in [
        (body("", verifier, &redirect), "code:"),
        (body(&"c".repeat(5000), verifier, &redirect), "code:"),
        (body("abc", "short", &redirect), "codeVerifier:"),
        (
            body("abc", &format!("{verifier}\n"), &redirect),
            "codeVerifier:",
        ),
        (
            body("abc", verifier, "https://evil.example/"),
            "redirectUri:",
        ),
    ] {
        let res = app.post("/api/v1/sign-in/token", &bad).await;
        res.assert_error(StatusCode::BAD_REQUEST, "validation_error");
        assert!(
            res.json["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with(field),
            "{}",
            res.text
        );
    }
    let res = app
        .post("/api/v1/sign-in/token", &json!({"code": "abc", "extra": 1}))
        .await;
    assert_eq!(res.status, StatusCode::BAD_REQUEST, "{}", res.text);
    assert!(provider.token_forms.lock().unwrap().is_empty());

    // The provider refuses the code: its reason, as a 400.
    *provider.token_answer.lock().unwrap() = (
        400,
        json!({"error": "invalid_grant", "error_description": "grant request is invalid"}),
    );
    let res = app
        .post("/api/v1/sign-in/token", &body("abc", verifier, &redirect))
        .await;
    res.assert_error(StatusCode::BAD_REQUEST, "sign_in_refused");
    assert!(res.text.contains("invalid_grant"), "{}", res.text);

    // A token this server would not accept (opaque, or for another audience) is not handed on.
    *provider.token_answer.lock().unwrap() = (
        200,
        json!({"access_token": "opaque-token", "token_type": "Bearer"}),
    );
    let res = app
        .post("/api/v1/sign-in/token", &body("abc", verifier, &redirect))
        .await;
    res.assert_error(StatusCode::BAD_GATEWAY, "identity_provider_error");
    assert!(
        res.text.contains("JWT access tokens for the resource"),
        "{}",
        res.text
    );
    let mut foreign = claims(&issuer, "tools:read");
    foreign["aud"] = json!("https://other.example.com");
    *provider.token_answer.lock().unwrap() = (
        200,
        json!({"access_token": key.sign(&foreign), "token_type": "Bearer"}),
    );
    let res = app
        .post("/api/v1/sign-in/token", &body("abc", verifier, &redirect))
        .await;
    res.assert_error(StatusCode::BAD_GATEWAY, "identity_provider_error");
    assert!(
        !res.text.contains("eyJ"),
        "the refused token is not echoed: {}",
        res.text
    );

    // Signed in: the token, whom it names; the provider got the code, the verifier, the
    // client and the resource; and the token works.
    let good = key.sign(&claims(&issuer, "tools:read"));
    *provider.token_answer.lock().unwrap() = (
        200,
        json!({"access_token": good, "token_type": "Bearer", "expires_in": 300}),
    );
    let res = app
        .post(
            "/api/v1/sign-in/token",
            &body("the-code", verifier, &redirect),
        )
        .await;
    assert_eq!(res.status, StatusCode::OK, "{}", res.text);
    let signed_in = &res.json["data"];
    assert_eq!(signed_in["userId"], "ann");
    assert_eq!(signed_in["scopes"], json!(["tools:read"]));
    assert_eq!(signed_in["expiresIn"], 300);
    let form = provider.token_forms.lock().unwrap().last().unwrap().clone();
    let sent: std::collections::HashMap<String, String> =
        url::form_urlencoded::parse(form.as_bytes())
            .into_owned()
            .collect();
    assert_eq!(sent["grant_type"], "authorization_code");
    assert_eq!(sent["code"], "the-code");
    assert_eq!(sent["code_verifier"], verifier);
    assert_eq!(sent["client_id"], "toolsmith-ui");
    assert_eq!(sent["redirect_uri"], redirect);
    assert_eq!(sent["resource"], RESOURCE);
    let token = signed_in["accessToken"].as_str().unwrap();
    let res = get_as(&app, "/api/v1/session", token).await;
    assert_eq!(res.json["data"]["userId"], "ann", "{}", res.text);
    // The sign-in is audited, once (the refused ones are not sign-ins).
    let admin = app.token("root", None, &[Scope::Admin]).await;
    let res = get_as(&app, "/api/v1/audit?action=auth.sign_in", &admin).await;
    let entries = res.json["data"]["entries"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", res.text));
    assert_eq!(entries.len(), 1, "{}", res.text);
    assert_eq!(entries[0]["actor"], "ann");
}

fn ui_sign_in(issuer: &str) -> Option<UiSignInSettings> {
    Some(UiSignInSettings {
        client_id: "toolsmith-ui".into(),
        issuer: issuer.to_owned(),
        scopes: "openid tools:read".into(),
    })
}

/// The sign-in routes need no token, so a stranger must not be able to make the server call
/// the provider at will: a failed metadata read is remembered (not retried on every call), and
/// redemptions are capped server-wide with a 429 naming the wait — the provider not contacted.
#[tokio::test]
async fn a_stranger_cannot_make_the_server_call_the_provider_at_will() {
    let key = SigningKey::new("k1");
    let (provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    *provider.metadata_fails.lock().unwrap() = true;
    let app = app_with(&issuer, &host, ui_sign_in(&issuer)).await;
    for _ in 0..5 {
        let res = app.get("/api/v1/sign-in").await;
        res.assert_error(StatusCode::BAD_GATEWAY, "identity_provider_error");
        assert!(res.text.contains("asked again in at most"), "{}", res.text);
    }
    assert_eq!(*provider.metadata_reads.lock().unwrap(), 1);

    // A working provider, refusing every code: the cap counts redemptions, not successes.
    let (provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    *provider.token_answer.lock().unwrap() = (400, json!({"error": "invalid_grant"}));
    let app = app_with(&issuer, &host, ui_sign_in(&issuer)).await;
    let body = json!({
        "code": "abc",
        "codeVerifier": "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk",
        "redirectUri": format!("{RESOURCE}/"),
    });
    for _ in 0..120 {
        let res = app.post("/api/v1/sign-in/token", &body).await;
        res.assert_error(StatusCode::BAD_REQUEST, "sign_in_refused");
    }
    let res = app.post("/api/v1/sign-in/token", &body).await;
    res.assert_error(StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    assert!(res.text.contains("sign in again in"), "{}", res.text);
    let wait: u32 = res.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(provider.token_forms.lock().unwrap().len(), 120);
}

/// A request as `token`, naming `org` in `X-Toolsmith-Organization` when given.
async fn send_as(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    org: Option<&str>,
    body: Option<Value>,
) -> TestResponse {
    let mut builder =
        request(method, path).header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(org) = org {
        builder = builder.header("x-toolsmith-organization", org);
    }
    let body = match body {
        Some(b) => {
            builder = builder.header("content-type", "application/json");
            Body::from(b.to_string())
        }
        None => Body::empty(),
    };
    app.send(builder.body(body).unwrap()).await
}

#[tokio::test]
async fn a_token_with_the_organisation_claim_acts_in_it() {
    let key = SigningKey::new("k1");
    let (_provider, host) = Provider::start(&key).await;
    let issuer = format!("http://{host}");
    let mut settings = OAuthSettings::new(
        RESOURCE,
        vec![IssuerSettings {
            issuer: issuer.clone(),
            jwks_uri: None,
        }],
    );
    settings.org_claim = Some("org".to_owned());
    let app = TestApp::with_configs(
        settings_reaching(&host),
        ServerSettings {
            oauth: Some(settings),
            ..ServerSettings::default()
        },
    )
    .await;
    let acme = app
        .state
        .service
        .create_organization(&toolsmith_service::Actor::user("ann"), "acme", None)
        .await
        .unwrap();
    let all = "tools:read tools:write tools:execute";
    let mut in_acme = claims(&issuer, all);
    in_acme["org"] = json!("acme");
    let token = key.sign(&in_acme);

    // The token acts in the organisation its claim names: what it makes is the organisation's.
    let tool = crate::rest_support::tool_body("shout");
    let made = send_as(
        &app,
        Method::POST,
        "/api/v1/custom-tools",
        &token,
        None,
        Some(tool),
    )
    .await
    .assert_ok(StatusCode::CREATED);
    assert_eq!(made["userId"], acme.id.as_str(), "{made}");
    let session = send_as(&app, Method::GET, "/api/v1/session", &token, None, None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(session["organization"]["name"], "acme", "{session}");
    assert_eq!(session["organization"]["role"], "owner", "{session}");
    assert_eq!(session["organization"]["member"], "ann", "{session}");
    // The header may name the same organisation (by name or id), never another scope.
    for same in ["acme", acme.id.as_str()] {
        send_as(
            &app,
            Method::GET,
            "/api/v1/custom-tools",
            &token,
            Some(same),
            None,
        )
        .await
        .assert_ok(StatusCode::OK);
    }
    let refused = send_as(
        &app,
        Method::GET,
        "/api/v1/custom-tools",
        &token,
        Some("me"),
        None,
    )
    .await
    .assert_error(StatusCode::FORBIDDEN, "forbidden");
    assert!(refused.contains("its organisation claim"), "{refused}");

    // Without the claim the same person acts as themselves: the organisation's tool is not theirs.
    let own = key.sign(&claims(&issuer, all));
    let mine = send_as(&app, Method::GET, "/api/v1/custom-tools", &own, None, None)
        .await
        .assert_ok(StatusCode::OK);
    assert_eq!(mine["tools"], json!([]), "{mine}");
    // A claim naming an organisation the subject is no member of: the same 404 as the header's.
    let mut strangers = claims(&issuer, all);
    strangers["sub"] = json!("bob");
    strangers["org"] = json!("acme");
    send_as(
        &app,
        Method::GET,
        "/api/v1/custom-tools",
        &key.sign(&strangers),
        None,
        None,
    )
    .await
    .assert_error(StatusCode::NOT_FOUND, "not_found");
    // A subject that is an organisation's id is no person; a claim that is no name is refused.
    let mut as_org = claims(&issuer, all);
    as_org["sub"] = json!(acme.id);
    let res = get_as(&app, "/api/v1/custom-tools", &key.sign(&as_org)).await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.text);
    assert!(
        challenge(&res).contains("invalid_token")
            && res.text.contains("a person never is an organisation"),
        "{}",
        res.text
    );
    let mut odd = claims(&issuer, all);
    odd["org"] = json!(["acme"]);
    let res = get_as(&app, "/api/v1/custom-tools", &key.sign(&odd)).await;
    assert_eq!(res.status, StatusCode::UNAUTHORIZED, "{}", res.text);
    assert!(
        res.text
            .contains("'org' claim does not name an organisation"),
        "{}",
        res.text
    );
}
