//! Secrets at rest for Toolsmith.
//!
//! - [`SecretKey`] — the 32-byte master key: from `TOOLSMITH_SECRET_KEY` (hex or base64), or
//!   from `secret.key` in the data dir, created on first start with mode `0600`. A key file
//!   that group or others can read is refused.
//! - [`Cipher`] — AES-256-GCM (`aes-gcm` 0.11) with a fresh random 96-bit nonce per value. A
//!   sealed value is text, `v1:` + base64(nonce ‖ ciphertext ‖ tag), and is bound to its place
//!   ([`SecretPlace`]: owner, service, entry, field) through the associated data, so a sealed
//!   value copied to another row or field does not open.
//! - [`mask`] — how a secret is shown to people (`sk-…wxyz`, `…wxyz`, `••••`).
//!
//! What this crate does not do: decide who may read a secret, or store anything but its own
//! key file. The service seals before the store sees a value and opens after it reads one.

// Unit tests may slice strings (a panic is their report; `clippy.toml` already lets them index).
#![cfg_attr(test, allow(clippy::string_slice))]

mod cipher;
mod error;
mod key;
mod mask;
#[cfg(test)]
mod tests;

pub use cipher::{Cipher, SEALED_PREFIX, SecretPlace};
pub use error::SecretError;
pub use key::{KEY_ENV, KEY_FILE, KeyLookup, KeySource, SecretKey};
pub use mask::{MASK, mask};
