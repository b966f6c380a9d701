//! The middleware that scrubs credentials out of every tool result before it leaves the
//! server: content, console lines and extra metadata (error text lives in the content).
//!
//! The patterns (vendor tokens, `key=value` credentials, bearer headers, passwords in URLs,
//! private keys) apply to every call. The exact values of the caller's own secrets (Config
//! Center values, tool env) are added per call through [`SecretSource`], so one user's secrets
//! are never matched into another user's output. The scrubbed result is also what usage
//! recording stores, because this middleware's `after` hook runs before the recorder's.

use std::sync::Arc;

use async_trait::async_trait;
use toolsmith_core::{Call, Middleware, ToolResult};
use toolsmith_scrub::Scrubber;

/// The secret values a call's owner has (exact strings to redact).
#[async_trait]
pub trait SecretSource: Send + Sync {
    async fn secrets_of(&self, owner: &str) -> Vec<String>;
}

/// Scrubs every result.
pub struct ScrubMiddleware {
    patterns: Scrubber,
    secrets: Arc<dyn SecretSource>,
}

impl ScrubMiddleware {
    pub fn new(
        secrets: Arc<dyn SecretSource>,
    ) -> Result<ScrubMiddleware, toolsmith_scrub::ScrubError> {
        Ok(ScrubMiddleware {
            patterns: Scrubber::patterns_only()?,
            secrets,
        })
    }

    /// Runs `f` with the scrubber of `owner`: the credential patterns and the owner's known
    /// secrets.
    async fn with_scrubber<R>(&self, owner: &str, f: impl FnOnce(&Scrubber) -> R) -> R {
        let known = self.secrets.secrets_of(owner).await;
        if known.is_empty() {
            return f(&self.patterns);
        }
        match Scrubber::new(known) {
            Ok(per_owner) => f(&per_owner),
            Err(e) => {
                tracing::warn!(error = %e, "cannot build the scrubber of this owner's secrets; patterns only");
                f(&self.patterns)
            }
        }
    }

    /// Redacts a JSON value of `owner`'s in place (arguments shown to a person deciding an
    /// approval); the number of redactions.
    pub async fn scrub_value(&self, owner: &str, value: &mut serde_json::Value) -> usize {
        self.with_scrubber(owner, |scrubber| scrubber.scrub_json(value))
            .await
    }

    /// Redacts `result` in place; the number of redactions.
    pub async fn scrub(&self, owner: &str, result: &mut ToolResult) -> usize {
        let n = self
            .with_scrubber(owner, |scrubber| {
                let mut n = scrubber.scrub_json(&mut result.content);
                for line in &mut result.metadata.console {
                    let (clean, found) = scrubber.scrub_counted(&line.message);
                    if found > 0 {
                        line.message = clean.into_owned();
                        n += found;
                    }
                }
                for value in result.metadata.extra.values_mut() {
                    n += scrubber.scrub_json(value);
                }
                n
            })
            .await;
        if n > 0 {
            result
                .metadata
                .extra
                .insert("redactions".to_owned(), serde_json::json!(n));
        }
        n
    }
}

#[async_trait]
impl Middleware for ScrubMiddleware {
    fn name(&self) -> &'static str {
        "scrub"
    }

    async fn after(&self, call: &Call, result: &mut ToolResult) {
        self.scrub(&call.ctx.user_id, result).await;
    }
}

#[cfg(test)]
mod tests;
