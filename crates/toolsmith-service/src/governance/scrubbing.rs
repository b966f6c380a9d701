//! The middleware that scrubs credentials out of every tool result before it leaves the
//! server: content, console lines and extra metadata (error text lives in the content).
//!
//! The exact values of the caller's own secrets (Config Center values, tool env) are redacted
//! from every result; they are added per call through [`SecretSource`], so one user's secrets
//! are never matched into another user's output. The patterns (vendor tokens, `key=value`
//! credentials, bearer headers, passwords in URLs, private keys) apply only to results of
//! [`ResultSource::External`] tools: a built-in that hands back the user's own data (a note, a
//! workspace file, a generated password) must give it back unchanged, or a model that writes
//! back what it read destroys the user's value (docs/scrubbing.md, "Whose text is scrubbed"). The scrubbed result is also what usage
//! recording stores, because this middleware's `after` hook runs before the recorder's.

use std::sync::Arc;

use async_trait::async_trait;
use toolsmith_core::{Call, ContentForm, ErrorKind, Middleware, ResultSource, ToolResult};
use toolsmith_scrub::Scrubber;

/// The secret values a call's owner has (exact strings to redact), or why they cannot be read.
#[async_trait]
pub trait SecretSource: Send + Sync {
    async fn secrets_of(&self, owner: &str) -> Result<Vec<String>, String>;
}

/// What a result becomes when the owner's secrets cannot be read to scrub it.
const WITHHELD: &str = "the result was withheld: the owner's Config Center secrets could not be \
     read to scrub it, so nothing the tool returned is shown. Try the call again; if it keeps \
     failing, the server log says why";

/// What a result of a tool that ran becomes when it cannot be scrubbed: not the tool's error.
const WITHHELD_RAN: &str = "the tool ran, but its result was withheld: the owner's Config \
     Center secrets could not be read to scrub it, so nothing the tool returned is shown. The \
     call is not undone: do not retry it blindly (that runs the tool again); check what it did \
     first (a custom tool's run is in its executions, with status withheld). The server log \
     says why the secrets could not be read";

/// The result that replaces one that cannot be scrubbed: `result_withheld` with `ran: true`
/// when the tool ran (`kind` is its own outcome), the `internal` [`WITHHELD`] when the call
/// was refused before it ran (a retry is then safe).
fn withheld(kind: Option<ErrorKind>) -> ToolResult {
    let refused = matches!(
        kind,
        Some(
            ErrorKind::InvalidArguments
                | ErrorKind::NotFound
                | ErrorKind::Busy
                | ErrorKind::Denied
                | ErrorKind::RateLimited
                | ErrorKind::ApprovalRequired
        )
    );
    if refused {
        return ToolResult::error(ErrorKind::Internal, WITHHELD);
    }
    let mut details = serde_json::Map::new();
    details.insert("ran".to_owned(), serde_json::Value::Bool(true));
    let mut result = ToolResult::error_with(ErrorKind::ResultWithheld, WITHHELD_RAN, details);
    result
        .metadata
        .extra
        .insert("ran".to_owned(), serde_json::Value::Bool(true));
    result
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

    /// Runs `f` with the scrubber of `owner` for results of `source`: the owner's known
    /// secrets, and the credential patterns for [`ResultSource::External`]. Fails (closed) when
    /// those secrets cannot be read or compiled: patterns alone would let the owner's own
    /// secrets through.
    async fn with_scrubber<R>(
        &self,
        owner: &str,
        source: ResultSource,
        f: impl FnOnce(&Scrubber) -> R,
    ) -> Result<R, String> {
        let known = self.secrets.secrets_of(owner).await?;
        let per_owner = match source {
            ResultSource::External if known.is_empty() => return Ok(f(&self.patterns)),
            ResultSource::External => Scrubber::new(known),
            ResultSource::UserData => Scrubber::secrets_only(known),
        }
        .map_err(|e| e.to_string())?;
        Ok(f(&per_owner))
    }

    /// Redacts a JSON value of `owner`'s in place (arguments shown to a person deciding an
    /// approval); the number of redactions. When the owner's secrets cannot be read the whole
    /// value is replaced by a note that it was withheld.
    pub async fn scrub_value(&self, owner: &str, value: &mut serde_json::Value) -> usize {
        match self
            .with_scrubber(owner, ResultSource::External, |scrubber| {
                scrubber.scrub_json(value)
            })
            .await
        {
            Ok(n) => n,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the owner's secrets to scrub a value; withheld");
                *value = serde_json::Value::String("[withheld: secrets unreadable]".to_owned());
                0
            }
        }
    }

    /// Redacts `result` of a tool of `source` in place; the number of redactions. When the
    /// owner's secrets cannot be read, the result is replaced by a `result_withheld` error
    /// that shows none of it.
    pub async fn scrub(&self, owner: &str, source: ResultSource, result: &mut ToolResult) -> usize {
        let scrubbed = self
            .with_scrubber(owner, source, |scrubber| {
                let mut n = match result.form {
                    // Base64 is never rewritten; a block whose bytes hold a secret is withheld.
                    ContentForm::Blocks => scrubber.scrub_blocks(&mut result.content),
                    ContentForm::Json => scrubber.scrub_json(&mut result.content),
                };
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
        let n = match scrubbed {
            Ok(n) => n,
            Err(e) => {
                tracing::error!(error = %e, "cannot read the owner's secrets to scrub a result; withheld");
                let duration_ms = result.metadata.duration_ms;
                *result = withheld(result.error_kind());
                result.metadata.duration_ms = duration_ms;
                return 0;
            }
        };
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
        self.scrub(&call.ctx.user_id, call.tool.result_source, result)
            .await;
    }
}

#[cfg(test)]
mod tests;
