//! Credential scrubbing of tool output.
//!
//! A [`Scrubber`] is built per request from that request's known secrets (Config Center values,
//! tool env) and redacts, in one linear pass each:
//!
//! - credential patterns: vendor tokens (OpenAI, Anthropic, GitHub, AWS, Slack, Google, Stripe …),
//!   JWTs, `Authorization` credentials, passwords in connection URLs, PEM private key bodies, and
//!   the value after a credential-like key (`api_key=…`, `"password": "…"`);
//! - the exact known secrets, and their JSON-escaped, URL-encoded and base64 forms.
//!
//! A result of content blocks ([`Scrubber::scrub_blocks`]) has its text scrubbed the same way;
//! its base64 fields are never rewritten, and a block whose bytes hold a known secret is
//! withheld whole.
//!
//! Key names, URL schemes, users and hosts, and PEM armour lines stay; only the secret becomes
//! `[REDACTED]`.
//! Ordinary text (hex digests, UUIDs, `monkey=bananas123`, URLs without passwords) is never touched.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod blocks;
mod error;
mod json;
mod patterns;
mod scrubber;
mod secrets;

pub use error::ScrubError;
pub use scrubber::Scrubber;
pub use secrets::{MAX_SECRET_LEN, MIN_SECRET_LEN};

/// What every redacted secret becomes.
pub const REDACTED: &str = "[REDACTED]";

/// Whether a key name is credential-like (`api_key`, `clientSecret`, `DB_PASSWORD`,
/// `access_token` …): the value under such a key is always redacted.
#[must_use]
pub fn is_credential_key(key: &str) -> bool {
    patterns::is_credential_key(key)
}

#[cfg(test)]
mod tests;
