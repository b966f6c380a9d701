//! Sealing and opening secret values with AES-256-GCM, each bound to its place.
//!
//! Format: `v1:` + base64 (standard, padded) of nonce (12 bytes) ‖ ciphertext ‖ tag (16 bytes).
//! The `v1:` prefix leaves room for another algorithm or key scheme; any other prefix is
//! refused. The associated data is the [`SecretPlace`], length-prefixed, so no two different
//! places encode to the same bytes.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::TryRng;
use rand::rngs::SysRng;
use zeroize::Zeroizing;

use crate::{SecretError, SecretKey};

/// What every sealed value starts with.
pub const SEALED_PREFIX: &str = "v1:";

const NONCE_LEN: usize = 12;
const TAG_LEN: usize = 16;

/// Largest plaintext [`Cipher::seal`] accepts (1 MiB; config values are far smaller).
const MAX_PLAINTEXT: usize = 1024 * 1024;

/// Where a secret lives. Sealed under one place, a value opens only under the same place.
///
/// Ids rather than names are used so that renaming a service or an entry keeps its secrets
/// readable, while copying a sealed value into another owner's, service's, entry's or field's
/// row makes it unreadable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretPlace<'a> {
    pub owner: &'a str,
    pub service_id: &'a str,
    pub entry_id: &'a str,
    pub field: &'a str,
}

impl SecretPlace<'_> {
    /// The associated data: a tag, then each part as its byte length (u32, big-endian) and
    /// its bytes.
    fn aad(&self) -> Vec<u8> {
        let parts = [self.owner, self.service_id, self.entry_id, self.field];
        let mut out = Vec::with_capacity(16 + parts.iter().map(|p| p.len() + 4).sum::<usize>());
        out.extend_from_slice(b"toolsmith-config-v1");
        for part in parts {
            // Parts are ids and names of at most a few hundred bytes; saturate to stay total.
            let len = u32::try_from(part.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&len.to_be_bytes());
            out.extend_from_slice(part.as_bytes());
        }
        out
    }
}

/// AES-256-GCM under the master key. Cheap to clone and share.
#[derive(Clone)]
pub struct Cipher {
    aead: Aes256Gcm,
}

impl std::fmt::Debug for Cipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cipher(AES-256-GCM, <key redacted>)")
    }
}

impl Cipher {
    pub fn new(key: &SecretKey) -> Cipher {
        Cipher {
            aead: Aes256Gcm::new(key.bytes().into()),
        }
    }

    /// Encrypts `plaintext` for `place` with a fresh random nonce.
    pub fn seal(&self, plaintext: &str, place: &SecretPlace<'_>) -> Result<String, SecretError> {
        if plaintext.len() > MAX_PLAINTEXT {
            return Err(SecretError::TooLarge {
                len: plaintext.len(),
                max: MAX_PLAINTEXT,
            });
        }
        let mut nonce_bytes = [0u8; NONCE_LEN];
        SysRng
            .try_fill_bytes(&mut nonce_bytes)
            .map_err(|e| SecretError::Random(e.to_string()))?;
        let nonce = Nonce::from(nonce_bytes);
        let aad = place.aad();
        let ciphertext = self
            .aead
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: &aad,
                },
            )
            .map_err(|_| SecretError::TooLarge {
                len: plaintext.len(),
                max: MAX_PLAINTEXT,
            })?;
        let mut raw = Vec::with_capacity(NONCE_LEN + ciphertext.len());
        raw.extend_from_slice(&nonce_bytes);
        raw.extend_from_slice(&ciphertext);
        Ok(format!("{SEALED_PREFIX}{}", STANDARD.encode(raw)))
    }

    /// Decrypts a value sealed for `place`. The plaintext is wiped from memory when dropped.
    pub fn open(
        &self,
        sealed: &str,
        place: &SecretPlace<'_>,
    ) -> Result<Zeroizing<String>, SecretError> {
        let body = sealed.strip_prefix(SEALED_PREFIX).ok_or_else(|| {
            SecretError::Malformed(format!(
                "it does not start with '{SEALED_PREFIX}' (an unknown format, or a plaintext value)"
            ))
        })?;
        let raw = STANDARD
            .decode(body)
            .map_err(|e| SecretError::Malformed(format!("bad base64: {e}")))?;
        if raw.len() < NONCE_LEN + TAG_LEN {
            return Err(SecretError::Malformed(format!(
                "{} bytes is shorter than a nonce and a tag ({} bytes)",
                raw.len(),
                NONCE_LEN + TAG_LEN
            )));
        }
        let (nonce_bytes, ciphertext) = raw.split_at(NONCE_LEN);
        let nonce_array: [u8; NONCE_LEN] = nonce_bytes
            .try_into()
            .map_err(|_| SecretError::Malformed("bad nonce".to_owned()))?;
        let aad = place.aad();
        let decrypt_failed = || SecretError::Decrypt {
            field: place.field.to_owned(),
        };
        let plain = self
            .aead
            .decrypt(
                &Nonce::from(nonce_array),
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| decrypt_failed())?;
        let plain = Zeroizing::new(plain);
        let text = std::str::from_utf8(&plain).map_err(|_| decrypt_failed())?;
        Ok(Zeroizing::new(text.to_owned()))
    }
}
