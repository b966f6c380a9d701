//! The issuers' signing keys: fetched through the egress guard, cached, fetched again when they
//! are older than the refresh interval or a token names a key the cache does not hold (the
//! issuer rotated its keys) — at most once a `jwks_refetch_floor` for unknown keys, so tokens
//! naming made-up keys cannot make the server hammer the issuer.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde_json::Value;
use toolsmith_egress::{EgressGuard, OutboundRequest};

use super::{IssuerSettings, Rejection};

pub(super) struct KeyCache {
    egress: EgressGuard,
    refresh: Duration,
    refetch_floor: Duration,
    sets: tokio::sync::Mutex<HashMap<String, Cached>>,
}

struct Cached {
    keys: JwkSet,
    fetched: Instant,
    jwks_uri: String,
}

impl KeyCache {
    pub(super) fn new(egress: EgressGuard, refresh: Duration, refetch_floor: Duration) -> KeyCache {
        KeyCache {
            egress,
            refresh,
            refetch_floor,
            sets: tokio::sync::Mutex::default(),
        }
    }

    /// The key of `issuer` that `kid` names (or its only key when the token names none).
    pub(super) async fn key_for(
        &self,
        issuer: &IssuerSettings,
        kid: Option<&str>,
    ) -> Result<Jwk, Rejection> {
        let mut sets = self.sets.lock().await;
        let now = Instant::now();
        let age = sets
            .get(&issuer.issuer)
            .map(|cached| now.saturating_duration_since(cached.fetched));
        if age.is_none_or(|age| age >= self.refresh) {
            match self.fetch(issuer, sets.get(&issuer.issuer)).await {
                Ok(fresh) => {
                    sets.insert(issuer.issuer.clone(), fresh);
                }
                // Keys fetched before keep serving while the issuer is unreachable.
                Err(e) if sets.contains_key(&issuer.issuer) => {
                    tracing::warn!(issuer = %issuer.issuer, error = %e, "could not refresh the issuer's keys; using the ones fetched before");
                }
                Err(e) => return Err(e),
            }
        } else if kid.is_some_and(|kid| {
            sets.get(&issuer.issuer)
                .is_some_and(|cached| cached.keys.find(kid).is_none())
        }) && age.is_some_and(|age| age >= self.refetch_floor)
        {
            // A key id never seen: the issuer may have rotated its keys.
            let fresh = self.fetch(issuer, sets.get(&issuer.issuer)).await?;
            sets.insert(issuer.issuer.clone(), fresh);
        }
        let cached = sets.get(&issuer.issuer).ok_or_else(|| {
            Rejection::KeysUnavailable("the issuer's keys are unknown".to_owned())
        })?;
        let found = match kid {
            Some(kid) => cached.keys.find(kid),
            None => match cached.keys.keys.as_slice() {
                [only] => Some(only),
                _ => None,
            },
        };
        found.cloned().ok_or_else(|| {
            Rejection::Invalid(match kid {
                Some(kid) => format!(
                    "the issuer publishes no key '{}' (at {})",
                    super::clip(kid),
                    cached.jwks_uri
                ),
                None => "the token names no key (kid) and the issuer publishes several".to_owned(),
            })
        })
    }

    /// The issuer's key set, from its configured or discovered `jwks_uri`.
    async fn fetch(
        &self,
        issuer: &IssuerSettings,
        before: Option<&Cached>,
    ) -> Result<Cached, Rejection> {
        let jwks_uri = match (&issuer.jwks_uri, before) {
            (Some(uri), _) => uri.clone(),
            (None, Some(cached)) => cached.jwks_uri.clone(),
            (None, None) => self.discover(&issuer.issuer).await?,
        };
        let body = self.get_json(&jwks_uri).await?;
        let keys: JwkSet = serde_json::from_value(body).map_err(|e| {
            Rejection::KeysUnavailable(format!("the key set at {jwks_uri} is not a JWKS: {e}"))
        })?;
        Ok(Cached {
            keys,
            fetched: Instant::now(),
            jwks_uri,
        })
    }

    /// `jwks_uri` from the issuer's metadata.
    async fn discover(&self, issuer: &str) -> Result<String, Rejection> {
        let document = provider_metadata(&self.egress, issuer, "jwks_uri")
            .await
            .map_err(|why| {
                Rejection::KeysUnavailable(format!(
                    "the keys of issuer {issuer} could not be found ({why}); set `jwks_uri` for it in [oauth]"
                ))
            })?;
        document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| Rejection::KeysUnavailable(format!("issuer {issuer} names no jwks_uri")))
    }

    async fn get_json(&self, url: &str) -> Result<Value, Rejection> {
        get_json(&self.egress, url)
            .await
            .map_err(Rejection::KeysUnavailable)
    }
}

/// The issuer's OpenID Connect discovery document, or its RFC 8414 authorization server
/// metadata: the first of the two that names `field`. The error lists what each answered.
pub(super) async fn provider_metadata(
    egress: &EgressGuard,
    issuer: &str,
    field: &str,
) -> Result<Value, String> {
    let base = issuer.trim_end_matches('/');
    let mut tried = Vec::new();
    let mut candidates = vec![format!("{base}/.well-known/openid-configuration")];
    if let Ok(url) = url::Url::parse(base) {
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        candidates.push(format!(
            "{origin}/.well-known/oauth-authorization-server{path}"
        ));
    }
    for candidate in candidates {
        match get_json(egress, &candidate).await {
            Ok(document) if document.get(field).is_some_and(Value::is_string) => {
                return Ok(document);
            }
            Ok(_) => tried.push(format!("{candidate}: no {field}")),
            Err(e) => tried.push(e),
        }
    }
    Err(tried.join("; "))
}

/// A JSON document fetched through the egress guard; the error names the URL.
pub(super) async fn get_json(egress: &EgressGuard, url: &str) -> Result<Value, String> {
    let response = egress
        .send(OutboundRequest {
            method: "GET".to_owned(),
            url: url.to_owned(),
            headers: vec![("accept".to_owned(), "application/json".to_owned())],
            body: None,
        })
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    if response.status != 200 {
        return Err(format!("{url} answered {}", response.status));
    }
    serde_json::from_slice(&response.body).map_err(|e| format!("{url} is not JSON: {e}"))
}
